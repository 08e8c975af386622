//! 2-D decomposed Jacobi iteration (seed 002 §3.4, Figure 29).
//!
//! The Laplace equation on an NX × NX interior grid with a fixed boundary: 1 on
//! the top edge, 0 on the others, 0 inside at the start. Each iteration updates
//! every point to the mean of its four neighbours and measures the residual
//! `sqrt(Σ (u_new − u_old)²)`. Under MPI the grid is cut into a `prow × pcol`
//! process grid; each iteration exchanges halos with `MPI_Sendrecv`, sweeps, and
//! sums the residual with an 8-byte `MPI_Allreduce` — the pattern of Figure 29.
//!
//! The kernel, the decomposition and a single-process reference are pure and
//! compiled without MPI, so the normal `cargo test` checks that a decomposed run
//! gives the same grid (bit for bit) and residuals (to rounding) as one process.

/// Value of the fixed top boundary; the other three edges are 0.
pub const TOP_BOUNDARY: f64 = 1.0;

/// The most square `prow × pcol` factorisation of `p` with `prow <= pcol`
/// (like `MPI_Dims_create` for two dimensions).
pub fn dims(p: usize) -> (usize, usize) {
    assert!(p > 0, "at least one process");
    let mut prow = (p as f64).sqrt() as usize;
    while prow > 1 && p % prow != 0 {
        prow -= 1;
    }
    let prow = prow.max(1);
    (prow, p / prow)
}

/// Start and length of part `i` of `n` items cut into `parts` nearly equal
/// parts (the first `n % parts` parts get one more).
pub fn block_range(n: usize, parts: usize, i: usize) -> (usize, usize) {
    assert!(i < parts, "part {i} of {parts}");
    let base = n / parts;
    let extra = n % parts;
    let len = base + usize::from(i < extra);
    let start = i * base + i.min(extra);
    (start, len)
}

/// Where one rank's block sits in the process grid and the global grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decomposition {
    /// Interior points per side of the whole grid.
    pub nx: usize,
    /// Process rows.
    pub prow: usize,
    /// Process columns.
    pub pcol: usize,
    /// This rank.
    pub rank: usize,
}

/// A grid too small for its processes: one would get no columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--nx {nx} is too small for {p} processes ({prow} × {pcol} grid): give at least {pcol}")]
pub struct GridTooSmall {
    /// Points per side.
    pub nx: usize,
    /// Processes.
    pub p: usize,
    /// Process rows.
    pub prow: usize,
    /// Process columns.
    pub pcol: usize,
}

impl Decomposition {
    /// The block of `rank` among `p` processes on an `nx × nx` grid; an error when
    /// a process would get no rows or columns.
    pub fn new(nx: usize, p: usize, rank: usize) -> Result<Self, GridTooSmall> {
        let (prow, pcol) = dims(p);
        if nx < pcol {
            return Err(GridTooSmall { nx, p, prow, pcol });
        }
        Ok(Self {
            nx,
            prow,
            pcol,
            rank,
        })
    }

    /// (process row, process column) of this rank.
    pub fn coords(&self) -> (usize, usize) {
        (self.rank / self.pcol, self.rank % self.pcol)
    }

    /// Rank of the neighbour on a side, `None` at the grid's edge.
    pub fn neighbour(&self, side: Side) -> Option<usize> {
        let (r, c) = self.coords();
        match side {
            Side::Up => (r > 0).then(|| self.rank - self.pcol),
            Side::Down => (r + 1 < self.prow).then(|| self.rank + self.pcol),
            Side::Left => (c > 0).then(|| self.rank - 1),
            Side::Right => (c + 1 < self.pcol).then(|| self.rank + 1),
        }
    }

    /// A zero-initialised block for this rank, boundary values set.
    pub fn block(&self) -> Block {
        let (r, c) = self.coords();
        let (row0, rows) = block_range(self.nx, self.prow, r);
        let (col0, cols) = block_range(self.nx, self.pcol, c);
        Block::new(row0, rows, col0, cols)
    }
}

/// A side of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Towards global row 0 (the hot edge).
    Up,
    /// Towards the last row.
    Down,
    /// Towards column 0.
    Left,
    /// Towards the last column.
    Right,
}

impl Side {
    /// The side a neighbour sees this one from.
    pub fn opposite(self) -> Side {
        match self {
            Side::Up => Side::Down,
            Side::Down => Side::Up,
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// One rank's part of the grid with a one-point halo on each side.
///
/// Invariant: `u` and `next` hold `(rows + 2) × (cols + 2)` values, row-major;
/// a halo at the global boundary holds the boundary value in both arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// First global interior row of the block.
    pub row0: usize,
    /// Interior rows.
    pub rows: usize,
    /// First global interior column.
    pub col0: usize,
    /// Interior columns.
    pub cols: usize,
    u: Vec<f64>,
    next: Vec<f64>,
}

impl Block {
    /// A block of `rows × cols` interior points starting at (`row0`, `col0`).
    pub fn new(row0: usize, rows: usize, col0: usize, cols: usize) -> Self {
        let mut u = vec![0.0; (rows + 2) * (cols + 2)];
        if row0 == 0 {
            // The halo row above global row 0 is the hot boundary.
            for v in &mut u[1..=cols] {
                *v = TOP_BOUNDARY;
            }
        }
        let next = u.clone();
        Self {
            row0,
            rows,
            col0,
            cols,
            u,
            next,
        }
    }

    fn w(&self) -> usize {
        self.cols + 2
    }

    /// Current value at interior point (`i`, `j`), 0-based within the block.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.u[(i + 1) * self.w() + j + 1]
    }

    /// Length of the edge on `side` (what a halo message carries, in f64).
    pub fn edge_len(&self, side: Side) -> usize {
        match side {
            Side::Up | Side::Down => self.cols,
            Side::Left | Side::Right => self.rows,
        }
    }

    /// Copy the outermost interior row or column on `side` into `out`.
    pub fn pack(&self, side: Side, out: &mut Vec<f64>) {
        out.clear();
        let w = self.w();
        match side {
            Side::Up => out.extend_from_slice(&self.u[w + 1..w + 1 + self.cols]),
            Side::Down => {
                let r = self.rows * w;
                out.extend_from_slice(&self.u[r + 1..r + 1 + self.cols]);
            }
            Side::Left => out.extend((1..=self.rows).map(|i| self.u[i * w + 1])),
            Side::Right => out.extend((1..=self.rows).map(|i| self.u[i * w + self.cols])),
        }
    }

    /// Store a neighbour's edge in the halo on `side`.
    pub fn unpack(&mut self, side: Side, values: &[f64]) {
        assert_eq!(values.len(), self.edge_len(side), "halo length");
        let w = self.w();
        match side {
            Side::Up => self.u[1..=self.cols].copy_from_slice(values),
            Side::Down => {
                let r = (self.rows + 1) * w;
                self.u[r + 1..=r + self.cols].copy_from_slice(values);
            }
            Side::Left => {
                for (i, &v) in values.iter().enumerate() {
                    self.u[(i + 1) * w] = v;
                }
            }
            Side::Right => {
                for (i, &v) in values.iter().enumerate() {
                    self.u[(i + 1) * w + self.cols + 1] = v;
                }
            }
        }
    }

    /// One Jacobi sweep over the interior; returns this block's `Σ (new − old)²`.
    /// Halos must be current. The arithmetic per point is the same in every
    /// decomposition, so decomposed grids equal the single-process grid exactly.
    pub fn sweep(&mut self) -> f64 {
        let w = self.w();
        let mut sum = 0.0;
        for i in 1..=self.rows {
            for j in 1..=self.cols {
                let k = i * w + j;
                let new =
                    0.25 * ((self.u[k - w] + self.u[k + w]) + (self.u[k - 1] + self.u[k + 1]));
                let d = new - self.u[k];
                sum += d * d;
                self.next[k] = new;
            }
        }
        // Halos of `next` are stale; the caller's exchange refreshes them, except
        // at the global boundary where both arrays hold the same fixed values.
        std::mem::swap(&mut self.u, &mut self.next);
        sum
    }
}

/// Single-process reference: the residual after each of `iterations` sweeps of
/// an `nx × nx` grid, computed on one whole array without any decomposition code.
pub fn reference(nx: usize, iterations: usize) -> Vec<f64> {
    let w = nx + 2;
    let mut u = vec![0.0; w * w];
    for v in &mut u[1..=nx] {
        *v = TOP_BOUNDARY;
    }
    let mut next = u.clone();
    let mut out = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let mut sum = 0.0;
        for i in 1..=nx {
            for j in 1..=nx {
                let k = i * w + j;
                let new = 0.25 * ((u[k - w] + u[k + w]) + (u[k - 1] + u[k + 1]));
                sum += (new - u[k]) * (new - u[k]);
                next[k] = new;
            }
        }
        std::mem::swap(&mut u, &mut next);
        out.push(sum.sqrt());
    }
    out
}

/// Run the decomposed algorithm for `p` processes inside one process (halos are
/// copied instead of sent): residuals per iteration and the final blocks. This is
/// what each MPI rank does, minus MPI; tests compare it with [`reference`].
pub fn simulate(
    nx: usize,
    p: usize,
    iterations: usize,
) -> Result<(Vec<f64>, Vec<Block>), GridTooSmall> {
    let decs: Vec<Decomposition> = (0..p)
        .map(|r| Decomposition::new(nx, p, r))
        .collect::<Result<_, _>>()?;
    let mut blocks: Vec<Block> = decs.iter().map(Decomposition::block).collect();
    let mut residuals = Vec::with_capacity(iterations);
    let mut buf = Vec::new();
    for _ in 0..iterations {
        for (r, d) in decs.iter().enumerate() {
            for side in [Side::Up, Side::Down, Side::Left, Side::Right] {
                if let Some(n) = d.neighbour(side) {
                    blocks[n].pack(side.opposite(), &mut buf);
                    blocks[r].unpack(side, &buf);
                }
            }
        }
        let sum: f64 = blocks.iter_mut().map(Block::sweep).sum();
        residuals.push(sum.sqrt());
    }
    Ok((residuals, blocks))
}

/// What one rank measured in the MPI Jacobi run.
#[cfg(feature = "mpi")]
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RankTimes {
    /// MPI rank.
    pub rank: usize,
    /// Seconds in the sweep (compute), over the counted iterations.
    pub compute_s: f64,
    /// Seconds in the four halo `MPI_Sendrecv` phases.
    pub sendrecv_s: f64,
    /// Seconds in the 8-byte `MPI_Allreduce`.
    pub allreduce_s: f64,
    /// Iterations counted in the sums above (the first few are warm-up).
    pub counted: usize,
    /// Every iteration's spans: (start ns, end ns, kind) since a common barrier.
    pub spans: Vec<(f64, f64, u8)>,
}

/// Names of span kinds in `RankTimes::spans`.
pub const SPAN_KINDS: [&str; 3] = ["sendrecv", "compute", "allreduce"];

/// Run `iterations` decomposed Jacobi steps on every rank of `world`: halo
/// exchange with `MPI_Sendrecv`, sweep, 8-byte `MPI_Allreduce` of the residual.
/// Returns this rank's times and the global residual after each iteration.
#[cfg(feature = "mpi")]
pub fn run_mpi(
    world: &::mpi::topology::SimpleCommunicator,
    dec: &Decomposition,
    iterations: usize,
    skip: usize,
) -> (RankTimes, Vec<f64>) {
    use ::mpi::collective::SystemOperation;
    use ::mpi::point_to_point::send_receive_into;
    use ::mpi::traits::*;
    use std::time::Instant;

    let mut block = dec.block();
    let (mut sbuf, mut rbuf) = (Vec::new(), Vec::new());
    let mut residuals = Vec::with_capacity(iterations);
    let mut times = RankTimes {
        rank: dec.rank,
        compute_s: 0.0,
        sendrecv_s: 0.0,
        allreduce_s: 0.0,
        counted: 0,
        spans: Vec::with_capacity(3 * iterations),
    };
    world.barrier();
    let t0 = Instant::now();
    let ns = |t: Instant| t.duration_since(t0).as_nanos() as f64;
    for it in 0..iterations {
        let ta = Instant::now();
        for side in [Side::Up, Side::Down, Side::Left, Side::Right] {
            // Send my edge towards `side`, receive the opposite halo.
            let dest = dec.neighbour(side).map(|r| world.process_at_rank(r as i32));
            let src = dec
                .neighbour(side.opposite())
                .map(|r| world.process_at_rank(r as i32));
            block.pack(side, &mut sbuf);
            rbuf.clear();
            rbuf.resize(block.edge_len(side.opposite()), 0.0);
            match (&dest, &src) {
                (Some(d), Some(s)) => {
                    send_receive_into(&sbuf[..], d, &mut rbuf[..], s);
                }
                (Some(d), None) => d.send(&sbuf[..]),
                (None, Some(s)) => {
                    s.receive_into(&mut rbuf[..]);
                }
                (None, None) => {}
            }
            if src.is_some() {
                block.unpack(side.opposite(), &rbuf);
            }
        }
        let tb = Instant::now();
        let local = block.sweep();
        let tc = Instant::now();
        let mut global = 0.0f64;
        world.all_reduce_into(&local, &mut global, SystemOperation::sum());
        let td = Instant::now();
        residuals.push(global.sqrt());
        times.spans.push((ns(ta), ns(tb), 0));
        times.spans.push((ns(tb), ns(tc), 1));
        times.spans.push((ns(tc), ns(td), 2));
        if it >= skip {
            times.sendrecv_s += (tb - ta).as_secs_f64();
            times.compute_s += (tc - tb).as_secs_f64();
            times.allreduce_s += (td - tc).as_secs_f64();
            times.counted += 1;
        }
    }
    (times, residuals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_are_square_ish() {
        assert_eq!(dims(1), (1, 1));
        assert_eq!(dims(2), (1, 2));
        assert_eq!(dims(4), (2, 2));
        assert_eq!(dims(6), (2, 3));
        assert_eq!(dims(7), (1, 7));
        assert_eq!(dims(50), (5, 10));
        assert_eq!(dims(64), (8, 8));
    }

    #[test]
    fn block_ranges_cover_exactly() {
        for (n, parts) in [(10, 3), (7, 7), (1000, 8), (5, 1)] {
            let mut next = 0;
            for i in 0..parts {
                let (s, l) = block_range(n, parts, i);
                assert_eq!(s, next);
                assert!(l == n / parts || l == n / parts + 1);
                next = s + l;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn neighbours_in_a_2x3_grid() {
        let d = Decomposition::new(12, 6, 4).unwrap(); // row 1, col 1
        assert_eq!(d.coords(), (1, 1));
        assert_eq!(d.neighbour(Side::Up), Some(1));
        assert_eq!(d.neighbour(Side::Down), None);
        assert_eq!(d.neighbour(Side::Left), Some(3));
        assert_eq!(d.neighbour(Side::Right), Some(5));
        assert!(Decomposition::new(2, 6, 0).is_err());
    }

    #[test]
    fn pack_unpack_round_trip() {
        let mut b = Block::new(0, 3, 0, 4);
        for _ in 0..3 {
            b.sweep();
        }
        let mut v = Vec::new();
        for side in [Side::Up, Side::Down, Side::Left, Side::Right] {
            b.pack(side, &mut v);
            assert_eq!(v.len(), b.edge_len(side));
        }
        b.pack(Side::Left, &mut v);
        assert_eq!(v, vec![b.get(0, 0), b.get(1, 0), b.get(2, 0)]);
        let mut c = Block::new(3, 3, 0, 4);
        c.unpack(Side::Right, &[1.0, 2.0, 3.0]);
        c.unpack(Side::Up, &[4.0; 4]);
        // The halo feeds the next sweep: point (0, 3) sees 4 above and 1 to the right.
        c.sweep();
        assert_eq!(c.get(0, 3), 0.25 * (4.0 + 1.0));
    }

    #[test]
    fn residual_decreases_and_heat_flows_in() {
        let r = reference(16, 40);
        assert!(r.windows(2).all(|w| w[1] < w[0]), "{r:?}");
        // First sweep: only the row next to the hot edge changes, by 1/4 each.
        assert!((r[0] - (16.0f64 * 0.0625).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn decomposed_equals_single_process() {
        let (nx, iters) = (23, 30);
        let want = reference(nx, iters);
        let (one, _) = simulate(nx, 1, iters).unwrap();
        assert_eq!(one, want, "p = 1 is the same code path as the reference");
        for p in [2, 3, 4, 6, 9] {
            let (got, blocks) = simulate(nx, p, iters).unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-12 * w.abs(), "p={p}: {g} vs {w}");
            }
            // Grids are identical bit for bit: compare with the 1-process grid.
            let (_, whole) = simulate(nx, 1, iters).unwrap();
            for b in &blocks {
                for i in 0..b.rows {
                    for j in 0..b.cols {
                        assert_eq!(b.get(i, j), whole[0].get(b.row0 + i, b.col0 + j));
                    }
                }
            }
        }
    }
}
