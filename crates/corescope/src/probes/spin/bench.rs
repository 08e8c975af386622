//! The active thread's benchmarks of seed 003 (single-behaviour, then
//! multiple-behaviour) and their data, built once per case.

use std::hint::black_box;

/// The active benchmarks of seed 003: single-behaviour, then multiple-behaviour.
pub const BENCHES: [&str; 9] = [
    "add",
    "branch",
    "l1-load",
    "l2-load",
    "mul",
    "matvec-int",
    "matvec-fp",
    "quicksort",
    "hash",
];
/// Matrix order of the matrix-vector benchmarks (8 MiB of i64/f64: memory-bound).
pub const MATVEC_ORDER: usize = 1024;
/// Elements sorted by the quicksort benchmark.
pub const SORT_LEN: usize = 1 << 15;
/// Hash table of the hashing benchmark (4 MiB of u64: random accesses beyond L2).
pub const HASH_WORDS: usize = 1 << 19;

/// Data of the active benchmarks, built once per case.
pub struct Work {
    l1: ChaseRing,
    l2: ChaseRing,
    mat_i: Vec<i64>,
    mat_f: Vec<f64>,
    vec_i: Vec<i64>,
    vec_f: Vec<f64>,
    unsorted: Vec<u32>,
    table: Vec<u64>,
}

/// A random single-cycle pointer chase over `bytes` (one link per 64-byte line).
pub struct ChaseRing(Vec<usize>);

impl ChaseRing {
    /// Over `bytes` bytes.
    pub fn new(bytes: usize, seed: u64) -> Self {
        let lines = (bytes / 64).max(2);
        let mut next = vec![0usize; lines * 8];
        let mut words: Vec<u64> = vec![0; lines * 8];
        crate::kernels::chase::build_chase(&mut words, 8, lines, seed);
        for (n, w) in next.iter_mut().zip(&words) {
            *n = *w as usize;
        }
        Self(next)
    }
    fn walk(&self, steps: usize) -> usize {
        let mut i = 0usize;
        for _ in 0..steps {
            i = self.0[i * 8];
        }
        i
    }
}

impl Work {
    /// Benchmark data for these cache sizes.
    pub fn new(l1_bytes: usize, l2_bytes: usize) -> Self {
        let n = MATVEC_ORDER;
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        Self {
            l1: ChaseRing::new(l1_bytes / 2, 1),
            l2: ChaseRing::new(l2_bytes / 2, 2),
            mat_i: (0..n * n).map(|i| (i % 7) as i64 - 3).collect(),
            mat_f: (0..n * n).map(|i| (i % 7) as f64 * 0.25 - 0.75).collect(),
            vec_i: (0..n).map(|i| (i % 5) as i64).collect(),
            vec_f: (0..n).map(|i| (i % 5) as f64 * 0.5).collect(),
            unsorted: (0..SORT_LEN).map(|_| rnd() as u32).collect(),
            table: vec![0; HASH_WORDS],
        }
    }

    /// Run benchmark `b` once; returns a checksum that depends on all the work.
    pub fn run(&mut self, b: &str) -> u64 {
        const ITERS: u64 = 200_000;
        match b {
            "add" => {
                let mut s = 0u64;
                for i in 0..ITERS * 4 {
                    s = black_box(s.wrapping_add(i));
                }
                s
            }
            "branch" => {
                let (mut s, mut x) = (0u64, 1u64);
                for _ in 0..ITERS {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    if (x >> 33) & 1 == 1 {
                        s = s.wrapping_add(x >> 40);
                    } else {
                        s ^= x >> 20;
                    }
                }
                s
            }
            "l1-load" => self.l1.walk(ITERS as usize) as u64,
            "l2-load" => self.l2.walk(ITERS as usize / 2) as u64,
            "mul" => {
                let mut s = 3u64;
                for _ in 0..ITERS {
                    s = black_box(s.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                }
                s
            }
            "matvec-int" => {
                let n = MATVEC_ORDER;
                let mut s = 0i64;
                for r in 0..n {
                    let row = &self.mat_i[r * n..(r + 1) * n];
                    s = s
                        .wrapping_add(row.iter().zip(&self.vec_i).map(|(a, b)| a * b).sum::<i64>());
                }
                s as u64
            }
            "matvec-fp" => {
                let n = MATVEC_ORDER;
                let mut s = 0.0f64;
                for r in 0..n {
                    let row = &self.mat_f[r * n..(r + 1) * n];
                    s += row.iter().zip(&self.vec_f).map(|(a, b)| a * b).sum::<f64>();
                }
                s.to_bits()
            }
            "quicksort" => {
                let mut v = self.unsorted.clone();
                v.sort_unstable();
                v[0] as u64 ^ v[v.len() / 2] as u64 ^ v[v.len() - 1] as u64
            }
            _ => {
                // "hash": FNV-1a of a counter picks a slot; increment it.
                let mut h = 0xcbf2_9ce4_8422_2325u64;
                for i in 0..ITERS / 2 {
                    h = (h ^ i).wrapping_mul(0x100_0000_01b3);
                    let slot = (h as usize) % self.table.len();
                    self.table[slot] = self.table[slot].wrapping_add(1);
                }
                self.table.iter().step_by(4096).fold(h, |a, &b| a ^ b)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarks_are_deterministic_and_correct() {
        let mut w = Work::new(32 << 10, 256 << 10);
        for b in BENCHES {
            let a = w.run(b);
            if b != "hash" {
                assert_eq!(a, w.run(b), "{b}");
            }
        }
        // matvec-int against a direct sum: row r of M·x, summed over rows.
        let n = MATVEC_ORDER;
        let direct: i64 = (0..n)
            .map(|r| {
                (0..n)
                    .map(|c| ((r * n + c) % 7) as i64 - 3)
                    .zip(0..n)
                    .map(|(m, c)| m * (c % 5) as i64)
                    .sum::<i64>()
            })
            .sum();
        assert_eq!(w.run("matvec-int"), direct as u64);
        // quicksort: min, median and max of the sorted copy.
        let mut v = w.unsorted.clone();
        v.sort();
        assert_eq!(
            w.run("quicksort"),
            v[0] as u64 ^ v[v.len() / 2] as u64 ^ v[v.len() - 1] as u64
        );
    }
}
