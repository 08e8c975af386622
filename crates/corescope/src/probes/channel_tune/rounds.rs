//! The one loop every measuring step of the tuner runs (the roadmap, Stage One's
//! sweeps, Stage Two's limit lines, container step and grid): rounds over the
//! step's runs, each round in the step's own order, while the step lets them
//! start; and the orders the steps take.

use super::TuneError;

/// Where [`rounds`] stopped before the end: the round (from 0) and how many runs
/// of it ran.
pub(super) type Stopped = Option<(usize, usize)>;

/// Runs `n` runs in at most `most` rounds: round `r` runs `order(r)` (indices
/// of the runs) in turn, while `go(r, i, k)` lets run `k`, the `i`-th of the
/// round, start; `run(r, i, k)` runs it once. Returns what each run returned,
/// by index and in the order run, and where a run was not let start, if one
/// was not.
pub(super) fn rounds<T>(
    n: usize,
    most: usize,
    order: impl Fn(usize) -> Vec<usize>,
    mut go: impl FnMut(usize, usize, usize) -> bool,
    mut run: impl FnMut(usize, usize, usize) -> Result<T, TuneError>,
) -> Result<(Vec<Vec<T>>, Stopped), TuneError> {
    let mut out: Vec<Vec<T>> = (0..n).map(|_| Vec::new()).collect();
    for r in 0..most {
        for (i, k) in order(r).into_iter().enumerate() {
            if !go(r, i, k) {
                return Ok((out, Some((r, i))));
            }
            out[k].push(run(r, i, k)?);
        }
    }
    Ok((out, None))
}

/// The order a sweep runs `n` configurations in: the first (the incumbent)
/// first, then the rest in bit-reversed order of their place in the grid, so
/// that neighbours in the grid run far apart in time. A slow spell of the host
/// during a sweep then slows configurations spread over the whole grid, not a
/// band of neighbours that would look like an effect of the parameter.
pub(super) fn spread_order(n: usize) -> Vec<usize> {
    let bits = usize::BITS - n.saturating_sub(1).leading_zeros();
    (0..1usize << bits)
        .map(|j| {
            if bits == 0 {
                j
            } else {
                j.reverse_bits() >> (usize::BITS - bits)
            }
        })
        .filter(|&i| i < n)
        .collect()
}

/// The order of round `round` over `n` steps: rotated by the round, reversed in
/// odd rounds, so each step runs at every place and after different ones.
pub fn round_order(n: usize, round: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).map(|i| (i + round / 2) % n.max(1)).collect();
    if round % 2 == 1 {
        v.reverse();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_run_each_order_until_a_run_may_not_start() {
        let (out, stopped) = rounds(
            3,
            2,
            |r| round_order(3, r),
            |_, _, _| true,
            |r, _, k| Ok(10 * r + k),
        )
        .unwrap();
        assert_eq!(out, [vec![0, 10], vec![1, 11], vec![2, 12]]);
        assert_eq!(stopped, None);
        let (out, stopped) = rounds(
            3,
            2,
            |_| vec![2, 0, 1],
            |r, i, _| r == 0 || i < 1,
            |_, _, k| Ok(k),
        )
        .unwrap();
        assert_eq!(out, [vec![0], vec![1], vec![2, 2]]);
        assert_eq!(stopped, Some((1, 1)));
    }

    #[test]
    fn sweeps_run_the_grid_spread_out_in_time() {
        assert_eq!(spread_order(0), Vec::<usize>::new());
        assert_eq!(spread_order(1), vec![0]);
        assert_eq!(spread_order(5), vec![0, 4, 2, 1, 3]);
        for n in [7, 25, 60, 61] {
            let order = spread_order(n);
            assert_eq!(order[0], 0, "the incumbent first");
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "each once");
            // The first half of the runs covers both halves of the grid.
            let early = &order[..n / 2];
            assert!(early.iter().any(|&i| i >= n / 2), "{n}: {order:?}");
        }
    }
}
