//! Stage Two of seed 004: a recursive Fibonacci emitting profiling events that the
//! consumer folds into a profile, against the Optimal, Achievable and Upper-bound
//! lines, over buffer sizes × wait strategies × affinity.

use super::fib::{fib, fib_channel, line_run, secs_of, Calls, Nothing, ProfileData};
use super::grid::{
    grid_runs, groups_affordable, raced_runs, run_groups, run_order, stage_two_configs, GRID_ROUNDS,
};
use super::*;

/// "on" (pinned to the pair) or "off" (left to the OS).
pub(super) fn affinity_name(pinned: bool) -> &'static str {
    if pinned {
        "on"
    } else {
        "off"
    }
}

/// Time per event unpinned ÷ pinned, over the configurations run both ways.
fn affinity_note(step: &Step) -> Option<StepNote> {
    let on: Vec<&Row> = step
        .rows
        .iter()
        .filter(|r| r.config.is_some() && r.pinned == Some(true))
        .collect();
    let mut ratios: Vec<f64> = step
        .rows
        .iter()
        .filter(|r| r.pinned == Some(false) && r.events > 0)
        .filter_map(|off| {
            let twin = on.iter().find(|r| r.config == off.config && r.events > 0)?;
            Some(off.per_event() / twin.per_event())
        })
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    Some(StepNote::Affinity {
        configs: ratios.len(),
        median: ratios[ratios.len() / 2],
        least: ratios[0],
        most: ratios[ratios.len() - 1],
    })
}

/// The container step's finding: the tree-map profile against the hash-map
/// one, paired by round (`None` when either did not run).
fn container_note(hash: &Row, tree: &Row) -> Option<StepNote> {
    let c = crate::stats::compare_paired(&tree.per_event_runs(), &hash.per_event_runs())?;
    Some(StepNote::Container {
        ratio: c.ratio,
        significant: Some(c.significant),
        outcome: Some(c.outcome),
        rounds: hash.per_event_runs().len(),
    })
}

/// Seed 004's three limit lines, numbered as [`line_run`] runs them.
const LIMIT_LINES: [&str; 3] = [
    "Optimal: fib, no profiling",
    "Achievable: events into a buffer nobody reads",
    "Upper bound: fib and profiling in one thread",
];

/// Rounds of Stage Two's limit lines and of its container step (6: the fewest
/// that give a 95 % interval of the median).
pub const LINE_ROUNDS: usize = 6;

/// Seed 004's three limit lines for `fib(n)` with `W`-word events on the
/// producer's CPU, [`LINE_ROUNDS`] rounds, each round every line once in a
/// rotated order: Optimal (no profiling), Achievable (events into a buffer of
/// the layout's size nobody reads), Upper bound (one thread computes and
/// profiles). Returns each line's seconds by round, and the single-thread profile
/// every channel run is checked against (every Upper-bound run must build it).
fn limit_lines<const W: usize>(
    n: u64,
    layout: Config,
    cpus: Pair<'_>,
) -> Result<(Vec<Vec<f64>>, ProfileData), TuneError> {
    let mut reference: Option<ProfileData> = None;
    let order = |r| round_order(3, r);
    let (secs, _) = rounds(
        3,
        LINE_ROUNDS,
        order,
        |_, _, _| true,
        |_, _, k| {
            let (t, profile) = line_run::<W>(k, n, layout, cpus);
            match (profile, &reference) {
                (Some(p), Some(r)) if &p != r => return Err(TuneError::ReferenceChanged),
                (Some(p), None) => reference = Some(p),
                _ => {}
            }
            Ok(t)
        },
    )?;
    let reference = reference.unwrap_or_default();
    if reference.bad != 0 || !reference.stack.is_empty() || reference.events == 0 {
        return Err(TuneError::ReferenceInconsistent);
    }
    Ok((secs, reference))
}

/// Stage Two's reference rows for `W`-word events: Optimal, Achievable and Upper
/// bound, [`LINE_ROUNDS`] runs each (the step's reference is Achievable's
/// median). Returns the Fibonacci argument (chosen so that the unprofiled run
/// takes about `run_s` ÷ [`GRID_ROUNDS`], so that the grid's rounds cost what one
/// run a row did) and the single-thread profile every channel run is checked
/// against.
fn reference_rows<const W: usize>(
    step: &mut Step,
    run_s: f64,
    layout: Config,
    cpus: Pair<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(u64, ProfileData), TuneError> {
    let bytes = W * 8;
    let n0 = 18u64;
    let t0 = secs_of(|| fib(n0, 0, &mut Nothing));
    let target_s = run_s / GRID_ROUNDS as f64;
    let grow = (target_s / t0.max(1e-7)).ln() / 1.618f64.ln();
    let n = (n0 as f64 + grow).round().clamp(10.0, 34.0) as u64;
    let (lines, reference) = limit_lines::<W>(n, layout, cpus)?;
    let events = reference.events;
    let per_event =
        |secs: &[f64]| -> Vec<f64> { secs.iter().map(|s| s / events.max(1) as f64).collect() };
    for (label, secs) in LIMIT_LINES.iter().zip(&lines) {
        step.rows.push(Row {
            pinned: Some(cpus.cpus.0.is_some()),
            ..Row::sampled(*label, events, &per_event(secs))
        });
    }
    let median_ms = |k: usize| crate::stats::median(&lines[k]) * 1e3;
    step.reference_s = Some(crate::stats::median(&per_event(&lines[1])));
    step.note(StepNote::Fib {
        n,
        events,
        work_steps: WORK_STEPS,
        line_runs: LINE_ROUNDS,
    });
    progress(&format!(
        "stage two {bytes} B: optimal {:.1} ms, achievable {:.1} ms, upper bound {:.1} ms",
        median_ms(0),
        median_ms(1),
        median_ms(2)
    ));
    Ok((n, reference))
}

/// Seed 004 §4.1's container step on `config`: the consumer's profile in a
/// `HashMap` and in a `BTreeMap`, [`LINE_ROUNDS`] rounds, the order alternating;
/// the two rows and a note comparing them.
fn container_rows<const W: usize>(
    step: &mut Step,
    (config, pair): (Config, Pair<'_>),
    n: u64,
    reference: &ProfileData,
    budget: &Budget,
) -> Result<(), TuneError> {
    let mut events = 0;
    let order = |r: usize| vec![r % 2, 1 - r % 2];
    let (per_event, _) = rounds(
        2,
        LINE_ROUNDS,
        order,
        |_, _, _| true,
        |_, _, k| {
            let map = match k {
                0 => Calls::default(),
                _ => Calls::Tree(Default::default()),
            };
            let run = fib_channel::<W>(config, n, pair, (reference, map), budget.run_cut())?;
            events = run.moved;
            Ok(run.per_event_s())
        },
    )?;
    let desc = describe(&config);
    let labels = ["HashMap profile", "BTreeMap profile (std::map's kind)"];
    let [hash, tree] = [0, 1].map(|k| Row {
        pinned: Some(pair.cpus.0.is_some()),
        ..Row::sampled(
            format!("Container: {}, {desc}", labels[k]),
            events,
            &per_event[k],
        )
    });
    if let Some(note) = container_note(&hash, &tree) {
        step.note(note);
    }
    step.rows.push(hash);
    step.rows.push(tree);
    Ok(())
}

/// Stage Two's runs (configuration, affinity on), their groups (indices of
/// runs compared with each other) and how many leading runs are fixed.
type GridRuns<'a> = (&'a [(Config, bool)], &'a [Vec<usize>], usize);

/// Runs Stage Two's grid in [`GRID_ROUNDS`] rounds (see [`run_order`]) while
/// the budget lets it: the fixed runs (the first `first`) once in any case,
/// again while the whole budget lasts; the grid while the step's `share` does. Returns each run's
/// runs, by index of `runs`.
fn grid_rounds(
    step: &mut Step,
    (runs, groups, first): GridRuns<'_>,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
    run: &mut dyn FnMut(Config, bool) -> Result<Run, TuneError>,
) -> Result<Vec<Vec<Run>>, TuneError> {
    let order = |round| run_order(groups, first, round);
    // The first round's fixed runs always run: the step's choice needs them.
    let go = |round, _, k| {
        budget.left_until(share) || (k < first && (round == 0 || budget.left_until(1.0)))
    };
    let (samples, stopped) = rounds(runs.len(), GRID_ROUNDS, order, go, |round, _, k| {
        let (c, pinned) = runs[k];
        let r = run(c, pinned)?;
        progress(&format!(
            "{}: {}, affinity {} (round {}) {:.1} ms",
            step.title,
            describe(&c),
            affinity_name(pinned),
            round + 1,
            r.secs * 1e3
        ));
        Ok(r)
    })?;
    if let Some((round, i)) = stopped {
        step.note(StepNote::GridCut {
            round: round + 1,
            rounds: GRID_ROUNDS,
            runs: i,
        });
    }
    Ok(samples)
}

/// The grid's rows from its rounds' `samples` (a row per run measured, its first
/// run the row's, the others its samples), and a note saying how much of the
/// grid (`grid`: configurations in all, kept) ran.
fn grid_rows(
    step: &mut Step,
    runs: &[(Config, bool)],
    samples: &[Vec<Run>],
    (all, kept): (usize, usize),
    both_affinities: bool,
) {
    step.note(StepNote::StageTwoGrid {
        kept,
        all,
        both_affinities,
        rounds: GRID_ROUNDS,
    });
    for (k, runs_k) in samples.iter().enumerate() {
        let Some(head) = runs_k.first() else {
            continue;
        };
        let (c, pinned) = runs[k];
        step.rows.push(Row {
            cut: runs_k.iter().any(|r| r.cut),
            pinned: Some(pinned),
            samples: runs_k[1..].iter().map(Run::per_event_s).collect(),
            ..Row::of_run(describe(&c), c, head)
        });
    }
}

/// Stage Two for `W`-word events; returns the step and its fastest configuration
/// with its affinity (true: pinned).
pub(super) fn stage_two<const W: usize>(
    run_s: f64,
    layout: Config,
    against: &[Against],
    cpus: Pair<'_>,
    budget: &Budget,
    step_index: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<(Step, Option<(Config, bool)>), TuneError> {
    let share = sweep_end(step_index);
    let bytes = W * 8;
    let mut step = Step::new(format!("stage two: fib, {bytes}-byte events"));
    let run_s = run_s.max(1e-3);
    let (n, reference) = reference_rows::<W>(&mut step, run_s, layout, cpus, progress)?;
    let configs = stage_two_configs(layout, bytes);
    // Each configuration pinned (affinity on) and unpinned (off), next to each
    // other so that a budget cut leaves pairs; with no pair to pin to, only off.
    let affinities: &[bool] = if cpus.cpus.0.is_some() || cpus.cpus.1.is_some() {
        &[true, false]
    } else {
        &[false]
    };
    // The incumbent, what Stage One chose (pinned where it could be), runs first.
    let incumbent = (
        layout
            .with_mode(Mode::NBuffer)
            .with_buffers(layout.buffers.max(2)),
        affinities[0],
    );
    let pair_of = |pinned: bool| if pinned { cpus } else { cpus.unpinned() };
    let mut run = |c, pinned| {
        let to = (&reference, Calls::default());
        fib_channel::<W>(c, n, pair_of(pinned), to, budget.run_cut())
    };
    container_rows::<W>(
        &mut step,
        (incumbent.0, pair_of(incumbent.1)),
        n,
        &reference,
        budget,
    )?;
    // Configurations a user asked to race run right after the incumbent, as
    // they are (pinned when they name an affinity), if they carry these events.
    let raced = raced_runs::<W>(against, cpus, &mut step);
    let (runs, first) = grid_runs(incumbent, &raced, &configs, affinities);
    let groups = run_groups(&runs, first);
    // As many of the grid's configurations as GRID_ROUNDS runs each fit in the
    // step's share, at about the Upper bound's time a run.
    let run_est_s = step
        .rows
        .get(2)
        .map_or(run_s, |r| r.per_event() * r.events as f64);
    let affordable = budget.left_s_until(share) / run_est_s.max(1e-6);
    let kept = groups_affordable(&groups, first, GRID_ROUNDS, affordable);
    let samples = grid_rounds(
        &mut step,
        (&runs, &groups[..kept], first),
        budget,
        share,
        progress,
        &mut run,
    )?;
    let grid = (
        groups.len().saturating_sub(first),
        kept.saturating_sub(first),
    );
    grid_rows(&mut step, &runs, &samples, grid, affinities.len() == 2);
    let kept = step.row_of(&incumbent.0, Some(incumbent.1));
    let forced: Vec<usize> = raced
        .iter()
        .filter_map(|(c, pinned)| step.row_of(c, Some(*pinned)))
        .collect();
    for a in against {
        if let Some(i) = step.against_row(a) {
            step.rows[i]
                .label
                .push_str(&format!(" (--against {})", a.name));
        }
    }
    settle(
        &mut step,
        kept,
        &forced,
        budget,
        STEP_ENDS[step_index],
        &mut |row| {
            let c = row.config.ok_or(TuneError::Unconfigured)?;
            Ok(run(c, row.pinned == Some(true))?.per_event_s())
        },
    )?;
    if let Some(note) = affinity_note(&step) {
        step.note(note);
    }
    let best = step.best().and_then(|r| r.config.zip(r.pinned));
    Ok((step, best))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::row;
    use super::*;

    #[test]
    fn affinity_off_is_compared_with_on_for_the_same_config() {
        let c = Config::n_buffer(3, 4096);
        let row = |config, secs, pinned| row("", config, secs, Some(pinned));
        let mut step = Step::new("stage two: test");
        step.rows.push(row(None, 1.0, true));
        step.rows.push(row(Some(c), 1.0, true));
        step.rows.push(row(Some(c), 2.0, false));
        step.rows.push(row(Some(c.with_padding(1)), 1.0, false));
        let note = affinity_note(&step).unwrap();
        assert!(
            matches!(note, StepNote::Affinity { configs: 1, median, .. } if median == 2.0),
            "{note:?}"
        );
        assert!(step.best().is_some_and(|b| b.pinned == Some(true)));
    }
}
