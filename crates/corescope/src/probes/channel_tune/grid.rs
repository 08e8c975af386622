//! Stage Two's grid, planned (pure): its configurations, the runs a user asked to
//! race, the runs in groups spread over the grid, how many groups the budget
//! affords, and the order of each round.

use super::fib::Prof;
use super::*;

/// Rounds of each row of Stage Two's grid (the grid is as large as the budget
/// lets it be at this many runs a row; see [`grid_share`]).
pub const GRID_ROUNDS: usize = 3;

/// Stage Two's configurations: the Stage One layout's buffer size first, then
/// [`STAGE_TWO_BUFFER_BYTES`] (each at least one event), × every wait strategy.
pub(super) fn stage_two_configs(layout: Config, event_bytes: usize) -> Vec<Config> {
    let mut sizes: Vec<usize> = Vec::new();
    for b in std::iter::once(layout.buffer_bytes).chain(STAGE_TWO_BUFFER_BYTES) {
        if b >= event_bytes && !sizes.contains(&b) {
            sizes.push(b);
        }
    }
    sizes
        .iter()
        .flat_map(|&b| {
            WaitStrategy::ALL.iter().map(move |&w| {
                layout
                    .with_mode(Mode::NBuffer)
                    .with_buffers(layout.buffers.max(2))
                    .with_buffer_bytes(b)
                    .with_wait(w)
            })
        })
        .collect()
}

/// The runs of the configurations a user asked to race that can carry `W`-word
/// events; a note says why any other cannot.
pub(super) fn raced_runs<const W: usize>(
    against: &[Against],
    cpus: Pair<'_>,
    step: &mut Step,
) -> Vec<(Config, bool)> {
    let can_pin = cpus.cpus.0.is_some() || cpus.cpus.1.is_some();
    let mut runs = Vec::new();
    for a in against {
        let (config, pinned) = a.as_run();
        if let Err(e) = config.validate::<Prof<W>>() {
            step.note(StepNote::AgainstNotRun {
                name: a.name.clone(),
                why: e.to_string(),
                event_bytes: W * 8,
            });
            continue;
        }
        if pinned && !can_pin {
            step.note(StepNote::AgainstUnpinned {
                name: a.name.clone(),
            });
        }
        let run = (config, pinned && can_pin);
        if !runs.contains(&run) {
            runs.push(run);
        }
    }
    runs
}

/// Stage Two's runs: the incumbent, the raced configurations, then each of
/// `configs` with each of `affinities`; and how many come before the grid.
pub(super) fn grid_runs(
    incumbent: (Config, bool),
    raced: &[(Config, bool)],
    configs: &[Config],
    affinities: &[bool],
) -> (Vec<(Config, bool)>, usize) {
    let mut runs: Vec<(Config, bool)> = vec![incumbent];
    runs.extend(raced.iter().copied().filter(|&r| r != incumbent));
    let first = runs.len();
    for &c in configs {
        for &a in affinities {
            if !runs[..first].contains(&(c, a)) {
                runs.push((c, a));
            }
        }
    }
    (runs, first)
}

/// Stage Two's `runs` (indices) in groups: the first `fixed` (the incumbent and
/// the raced configurations) one a group, then the grid's configurations (a
/// configuration's runs, affinity on and off, one group) in the order they run,
/// spread over the grid (see [`spread_order`]).
pub(super) fn run_groups(runs: &[(Config, bool)], fixed: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if i >= fixed && g[0] >= fixed && runs[g[0]].0 == run.0 => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let fixed = fixed.min(groups.len());
    let spread = spread_order(groups.len() - fixed)
        .into_iter()
        .map(|g| g + fixed);
    (0..fixed)
        .chain(spread)
        .map(|g| groups[g].clone())
        .collect()
}

/// How many of `groups` (see [`run_groups`]) fit `affordable_runs` runs at
/// `rounds` runs each: the first `fixed` always, then whole groups in order.
pub(super) fn groups_affordable(
    groups: &[Vec<usize>],
    fixed: usize,
    rounds: usize,
    affordable_runs: f64,
) -> usize {
    let mut runs = 0usize;
    let mut kept = 0;
    for (i, g) in groups.iter().enumerate() {
        runs += g.len() * rounds;
        if i >= fixed && runs as f64 > affordable_runs {
            break;
        }
        kept = i + 1;
    }
    kept
}

/// Round `round` of Stage Two's grid over `groups`: the fixed ones first, then
/// the grid's groups rotated by the round; within a configuration, affinity on
/// first and off first in turn from one configuration to the next and from one
/// round to the next (so neither affinity always runs after the other, in the
/// cache state it left).
pub(super) fn run_order(groups: &[Vec<usize>], fixed: usize, round: usize) -> Vec<usize> {
    let fixed = fixed.min(groups.len());
    let grid = &groups[fixed..];
    let turn = if grid.is_empty() {
        0
    } else {
        round * grid.len().div_ceil(GRID_ROUNDS.max(1)) % grid.len()
    };
    let fixed_runs = groups[..fixed].iter().flatten().copied();
    let grid_runs = (0..grid.len()).flat_map(move |position| {
        let mut pair = grid[(position + turn) % grid.len()].clone();
        if (position + round) % 2 == 1 {
            pair.reverse();
        }
        pair
    });
    fixed_runs.chain(grid_runs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn stage_two_repeats_every_row_each_round_with_affinity_orders_alternating() {
        let c = |b: usize| Config::n_buffer(3, b);
        // The incumbent (pinned), one raced configuration, then 4 configurations
        // × affinity on, off.
        let grid = [1024, 4096, 16384, 65536].map(c);
        let (runs, first) = grid_runs(
            (c(4096), true),
            &[(c(1_000_000), true), (c(4096), true)],
            &grid,
            &[true, false],
        );
        assert_eq!(first, 2, "the raced twin of the incumbent runs once");
        assert_eq!(runs.len(), 2 + 4 * 2 - 1);
        let groups = run_groups(&runs, first);
        assert_eq!(&groups[..2], &[vec![0], vec![1]]);
        let mut on_first: HashMap<usize, [usize; 2]> = HashMap::new();
        let rounds = 2 * GRID_ROUNDS;
        for round in 0..rounds {
            let order = run_order(&groups, first, round);
            assert_eq!(&order[..2], &[0, 1], "round {round}");
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..runs.len()).collect::<Vec<_>>(),
                "each run once a round"
            );
            // A configuration's two runs stay next to each other.
            for w in order[2..].windows(2) {
                if runs[w[0]].0 == runs[w[1]].0 {
                    let key = runs[w[0]].0.buffer_bytes;
                    on_first.entry(key).or_default()[usize::from(!runs[w[0]].1)] += 1;
                }
            }
        }
        // (The grid's pinned 4096 is the incumbent: that configuration has its
        // unpinned run alone.) Each of the others ran on first and off first
        // equally often (±1) over the rounds.
        assert_eq!(on_first.len(), 3, "{on_first:?}");
        for (b, [on, off]) in &on_first {
            assert_eq!(on + off, rounds, "{b}");
            assert!(
                on.abs_diff(*off) <= 1,
                "{b}: on first {on}, off first {off}"
            );
        }
        let order = run_order(&groups, first, 0);
        let sizes: Vec<usize> = order[2..].iter().map(|&k| runs[k].0.buffer_bytes).collect();
        assert_ne!(
            &sizes[..3],
            &[1024, 1024, 4096],
            "spread, not in grid order"
        );
    }

    #[test]
    fn the_grid_keeps_the_groups_the_budget_affords_at_its_rounds() {
        let groups = [vec![0], vec![1], vec![2, 3], vec![4, 5], vec![6]];
        // Fixed ones always, even with no budget.
        assert_eq!(groups_affordable(&groups, 2, 3, 0.0), 2);
        // 3 rounds: fixed 6 runs, then 6 for each pair.
        assert_eq!(groups_affordable(&groups, 2, 3, 12.0), 3);
        assert_eq!(groups_affordable(&groups, 2, 3, 17.9), 3);
        assert_eq!(groups_affordable(&groups, 2, 3, 1e9), 5);
    }
}
