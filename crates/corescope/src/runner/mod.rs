//! Runs probes: plans, cases, repetitions, interleaving, budgets, statuses, progress
//! events, and the run file written after every probe so a crash or Ctrl-C loses
//! nothing measured.
//!
//! The runner owns repetition. Cases of one comparison group (the placements of one
//! thread count, THP on and off, a spinner on and off) run in rounds: each round runs
//! every variant once, in an order rotated by one each round, so drift in the machine
//! hits all of them alike and round `k` of two variants forms a pair. Rounds continue
//! from a minimum while an interval is wide and the budget's share for the group
//! allows. Variants that would run the same configuration here are measured once.

use crate::model::{ProbeResult, Status};
use crate::probes::{AnyProbe, Case, Event, PlanCtx, Planned, ProbeError};
use std::collections::HashMap;

mod group;
mod merge;
mod steady;
mod suite;
pub use group::REMEASURE_MAX_VALUES;
use group::{GroupRun, TripFn};
use merge::{merge_same_configurations, state_dependent_warning, wide_interval_warnings};
pub use suite::{quick_rounds, run_suite, schedule, ProbeRun};

/// A point whose interval stays wider than ±5 % gets a warning.
pub const WIDE_REL_HALF_WIDTH: f64 = 0.05;

/// Record the plan in the result: its parameters and budget, what it skips here
/// (as a parameter and as findings) and its warnings.
fn file_plan(plan: &Planned, ctx: &PlanCtx, result: &mut ProbeResult) {
    result.params = plan.params.clone();
    result.params.insert("budget_s".into(), ctx.budget_s.into());
    if !plan.skipped.is_empty() {
        result
            .params
            .insert("skipped".into(), plan.skipped.clone().into());
    }
    result.findings.extend(plan.skipped.iter().cloned());
    for w in &plan.warnings {
        result.warnings.push_unique(w.clone());
    }
}

/// Run one probe under its budget, its epochs back to back. Never fails: every
/// outcome is a status. [`run_suite`] spreads the epochs over the whole suite.
pub fn run_probe(
    probe: &dyn AnyProbe,
    ctx: &PlanCtx,
    on_event: &mut dyn FnMut(Event),
) -> ProbeResult {
    run_probe_with(probe, ctx, on_event, crate::drift::round_trip)
}

/// [`run_probe`] with the round trip read by `trip`.
fn run_probe_with(
    probe: &dyn AnyProbe,
    ctx: &PlanCtx,
    on_event: &mut dyn FnMut(Event),
    trip: TripFn,
) -> ProbeResult {
    let mut run = ProbeRun::start_with(probe, ctx, trip);
    let mut epoch = 0;
    while run.has_more() {
        run.run_epoch(ctx, epoch, on_event);
        epoch += 1;
    }
    run.finish(ctx, on_event)
}

/// Cases grouped for interleaving: cases sharing a `group` (in order of first
/// appearance), every other case alone. `corescope plan` walks the same groups.
pub fn groups_of<P>(cases: &[Case<P>]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, c) in cases.iter().enumerate() {
        match c.group.as_deref() {
            Some(g) => match by_name.get(g) {
                Some(&k) => out[k].push(i),
                None => {
                    by_name.insert(g, out.len());
                    out.push(vec![i]);
                }
            },
            None => out.push(vec![i]),
        }
    }
    out
}

/// The order groups are measured in: every group in epoch 0, then every repeated
/// group (more than one round) again in each later epoch, each epoch with its share
/// of the group's rounds (rounded up), so a state of the machine that lasts for
/// part of the probe shows as a difference between epochs (see `stats::epochs`).
/// Entries are (group index, epoch, the rounds of that epoch).
pub fn epoch_schedule<P>(
    groups: &[Vec<usize>],
    cases: &[Case<P>],
    epochs: usize,
) -> Vec<(usize, usize, crate::probes::Rounds)> {
    let epochs = epochs.max(1);
    let mut out = Vec::new();
    for epoch in 0..epochs {
        for (g, members) in groups.iter().enumerate() {
            let rounds = cases[members[0]].rounds;
            if rounds.max <= 1 {
                if epoch == 0 {
                    out.push((g, 0, rounds));
                }
                continue;
            }
            let split = crate::probes::Rounds {
                min: rounds.min.div_ceil(epochs).max(1),
                max: rounds.max.div_ceil(epochs).max(1),
                ..rounds
            };
            out.push((g, epoch, split));
        }
    }
    out
}

fn status_of(e: &ProbeError) -> (Status, String) {
    match e {
        ProbeError::Skipped(r) => (Status::Skipped, r.clone()),
        ProbeError::GaveUp(r) => (Status::GaveUp, r.clone()),
        failed => (Status::Failed, failed.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::model::{ClockInfo, Finding, Measurement, Point, Profile, Warning};
    use crate::probes::{Overrides, Plan, Probe, RunCtx, MIN_COMPARED_ROUNDS};
    use std::time::Duration;

    pub(super) struct Fake {
        pub(super) cases: usize,
        pub(super) fail_at: Option<usize>,
        pub(super) sleep_ms: u64,
    }

    impl Probe for Fake {
        type Params = usize;
        type Facts = ();
        fn id(&self) -> &'static str {
            "fake"
        }
        fn title(&self) -> &'static str {
            "a fake probe"
        }
        fn plan(&self, _: &PlanCtx) -> Result<Plan<usize>, ProbeError> {
            Ok(Plan::new(
                (0..self.cases)
                    .map(|i| Case::new(format!("case {i}"), &i))
                    .collect(),
            )
            .param("n", self.cases))
        }
        fn run(&self, case: &Case<usize>, _: &mut RunCtx) -> Result<Measurement, ProbeError> {
            let i = case.params;
            if Some(i) == self.fail_at {
                return Err(ProbeError::step("case", "boom"));
            }
            std::thread::sleep(Duration::from_millis(self.sleep_ms));
            Ok(Measurement::points(vec![Point::new(
                "y/a",
                "x",
                i as f64,
                "v",
                2.0 * i as f64,
            )]))
        }
    }

    #[test]
    fn the_plan_says_what_it_skips_and_warns_in_the_result() {
        let plan: Plan<u8, Vec<u32>> = Plan::new(Vec::new())
            .param("n", 1)
            .skipping(["spin: skipped: one CPU".to_string()])
            .warning(Warning::NoNumaNode)
            .with_facts(vec![3u32, 5]);
        assert_eq!(plan.facts, vec![3, 5]);
        let probe = Planning(plan);
        let planned = AnyProbe::plan(&probe, &ctx(1.0)).unwrap();
        let mut r = ProbeResult::new("p", "t", Status::Completed);
        file_plan(&planned, &ctx(1.0), &mut r);
        assert_eq!(r.params["n"], 1);
        assert_eq!(r.params["budget_s"], 1.0);
        assert_eq!(r.params["skipped"][0], "spin: skipped: one CPU");
        assert!(r.findings.contains("spin: skipped: one CPU"));
        assert!(r.warnings.contains(&Warning::NoNumaNode));
    }

    /// A probe whose plan is given.
    struct Planning(Plan<u8, Vec<u32>>);

    impl Probe for Planning {
        type Params = u8;
        type Facts = Vec<u32>;
        fn id(&self) -> &'static str {
            "planning"
        }
        fn title(&self) -> &'static str {
            "a given plan"
        }
        fn plan(&self, _: &PlanCtx) -> Result<Plan<u8, Vec<u32>>, ProbeError> {
            Ok(self.0.clone())
        }
        fn run(&self, _: &Case<u8>, _: &mut RunCtx) -> Result<Measurement, ProbeError> {
            Err(ProbeError::Skipped("never run".into()))
        }
    }

    /// A context measuring in one epoch: the tests of rounds, aliases and steadiness
    /// read the rounds of one pass (`two_epochs_*` test the epochs).
    fn ctx(budget_s: f64) -> PlanCtx {
        ctx_epochs(budget_s, 1)
    }

    pub(super) fn ctx_epochs(budget_s: f64, epochs: usize) -> PlanCtx {
        PlanCtx {
            topo: crate::topology::Topology::default(),
            clock: Clock::from_info(ClockInfo {
                ticks_hz: 1e9,
                ..ClockInfo::default()
            }),
            profile: Profile::Default,
            overrides: Overrides {
                epochs: Some(epochs),
                ..Overrides::default()
            },
            budget_s,
        }
    }

    #[test]
    fn two_epochs_measure_each_group_twice_with_its_rounds_split() {
        let probe = Placements::default();
        let r = run_probe(&probe, &ctx_epochs(10.0, 2), &mut |_| {});
        let order = probe.order.lock().unwrap().clone();
        let per_epoch = MIN_COMPARED_ROUNDS.div_ceil(2);
        // Epoch 1: a warm-up of both measured variants, then its rounds; epoch 2: a
        // warm-up of the first variant, then its rounds.
        assert_eq!(order.len(), 2 + 1 + 2 * 2 * per_epoch, "{order:?}");
        assert_eq!(
            &order[2 + 2 * per_epoch..][..3],
            ["linear", "linear", "scatter"]
        );
        let s = r.series("int/scatter").unwrap();
        assert_eq!(s.samples[0].len(), 2 * per_epoch);
        assert_eq!(s.epochs, vec![vec![per_epoch, per_epoch]]);
        // The copy of an identical configuration carries the epochs too.
        assert_eq!(r.series("int/compact").unwrap().epochs, s.epochs);
        // Counted once, not once per epoch; one state record per measurement.
        assert_eq!(r.cases_done, 3);
        assert_eq!(r.aliases.len(), 1);
        let epochs: Vec<usize> = r.machine_states.iter().map(|m| m.epoch).collect();
        assert_eq!(epochs, [0, 1]);
        assert_eq!(r.params["rounds_min"], 2 * per_epoch);
    }

    #[test]
    fn a_lone_case_run_once_is_not_measured_again() {
        let groups = vec![vec![0]];
        let once = vec![Case::new("x", &1u8)];
        assert_eq!(epoch_schedule(&groups, &once, 2).len(), 1);
        let repeated = vec![Case::new("x", &1u8).with_rounds(crate::probes::Rounds::REPEATED)];
        let s = epoch_schedule(&groups, &repeated, 2);
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|(_, _, r)| r.min == 3 && r.max == 3));
        assert_eq!(s[1].1, 1);
    }

    #[test]
    fn completed_probe_merges_points_into_series() {
        let mut events = vec![];
        let r = run_probe(
            &Fake {
                cases: 3,
                fail_at: None,
                sleep_ms: 0,
            },
            &ctx(10.0),
            &mut |e| events.push(e),
        );
        assert_eq!(r.status, Status::Completed);
        assert_eq!(r.cases_done, 3);
        let s = r.series("y/a").unwrap();
        assert_eq!(s.x, vec![0.0, 1.0, 2.0]);
        assert_eq!(s.y, vec![0.0, 2.0, 4.0]);
        assert_eq!(r.params["n"], 3);
        assert_eq!(events.len(), 5);
    }

    #[test]
    fn budget_gives_up_and_keeps_what_was_measured() {
        let r = run_probe(
            &Fake {
                cases: 50,
                fail_at: None,
                sleep_ms: 20,
            },
            &ctx(0.05),
            &mut |_| {},
        );
        assert_eq!(r.status, Status::GaveUp);
        assert!(r.cases_done >= 1 && r.cases_done < 50, "{}", r.cases_done);
        assert_eq!(r.series("y/a").unwrap().x.len(), r.cases_done);
        assert!(r.reason.unwrap().contains("budget"));
    }

    #[test]
    fn failure_is_recorded_not_propagated() {
        let r = run_probe(
            &Fake {
                cases: 3,
                fail_at: Some(1),
                sleep_ms: 0,
            },
            &ctx(10.0),
            &mut |_| {},
        );
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.cases_done, 1);
        assert!(r.reason.unwrap().contains("boom"));
    }

    /// Three placements of one thread count; `linear` and `compact` run the same CPUs.
    /// `watched`: rounds are kept only while the round trip of CPUs 0 and 1 holds.
    #[derive(Default)]
    pub(super) struct Placements {
        pub(super) order: std::sync::Mutex<Vec<String>>,
        pub(super) watched: bool,
    }

    impl Probe for Placements {
        type Params = String;
        type Facts = ();
        fn id(&self) -> &'static str {
            "placements"
        }
        fn title(&self) -> &'static str {
            "a fake comparison"
        }
        fn plan(&self, _: &PlanCtx) -> Result<Plan<String>, ProbeError> {
            let cases = [
                ("linear", "CPUs 0,1"),
                ("compact", "CPUs 0,1"),
                ("scatter", "CPUs 0,2"),
            ]
            .iter()
            .map(|(v, cfg)| {
                let c = Case::new(*v, &v.to_string()).compared("int ×2", *v, *cfg);
                if self.watched {
                    c.kept_when_steady(0, 1)
                } else {
                    c
                }
            })
            .collect();
            Ok(Plan::new(cases))
        }
        fn run(&self, case: &Case<String>, _: &mut RunCtx) -> Result<Measurement, ProbeError> {
            let v = case.params.clone();
            let mut order = self.order.lock().unwrap();
            order.push(v.clone());
            let y = if v == "scatter" { 2.0 } else { 1.0 } + order.len() as f64 * 1e-3;
            Ok(Measurement::points(vec![Point::new(
                format!("int/{v}"),
                "threads",
                2.0,
                "ops_per_s",
                y,
            )]))
        }
    }

    #[test]
    fn identical_configurations_are_measured_once_and_copied() {
        let probe = Placements::default();
        let r = run_probe(&probe, &ctx(10.0), &mut |_| {});
        let order = probe.order.lock().unwrap().clone();
        assert!(!order.iter().any(|v| v == "compact"), "{order:?}");
        let lin = r.series("int/linear").unwrap();
        let com = r.series("int/compact").unwrap();
        assert_eq!(lin.samples, com.samples);
        assert_eq!(lin.y, com.y);
        assert!(lin.n[0] >= MIN_COMPARED_ROUNDS, "{:?}", lin.n);
        assert_eq!(r.aliases.len(), 1);
        assert_eq!(r.aliases[0].same_as, "int/linear");
        assert!(r.findings.iter().any(|f| matches!(
            f,
            Finding::SameConfiguration { variants, .. } if variants == &["linear", "compact"]
        )));
        assert_eq!(r.cases_done, 3);
    }

    #[test]
    fn variants_run_interleaved_in_rotated_order_after_a_warmup() {
        let probe = Placements::default();
        let r = run_probe(&probe, &ctx(10.0), &mut |_| {});
        let order = probe.order.lock().unwrap().clone();
        // Warm-up: each measured variant once; then rounds of both, rotated.
        assert_eq!(&order[..2], ["linear", "scatter"]);
        let rounds: Vec<&[String]> = order[2..].chunks(2).collect();
        assert!(rounds.len() >= MIN_COMPARED_ROUNDS);
        for (k, round) in rounds.iter().enumerate() {
            let first = if k % 2 == 0 { "linear" } else { "scatter" };
            assert_eq!(round[0], first, "round {k}: {round:?}");
            assert_ne!(round[0], round[1]);
        }
        // Each round adds one sample per point: the samples line up by round.
        let n = r.series("int/scatter").unwrap().samples[0].len();
        assert_eq!(n, rounds.len());
        assert_eq!(r.params["rounds_min"], n);
    }

    /// Calls so far, and the reading for each call number.
    type Script = (usize, fn(usize) -> f64);

    thread_local! {
        /// The round trips the scripted reader returns, one per call, by call number.
        static SCRIPT: std::cell::RefCell<Script> =
            std::cell::RefCell::new((0, |_| 60.0));
    }

    /// A round-trip reader that follows [`SCRIPT`] (the runner reads it on the
    /// calling thread).
    fn scripted(_: u32, _: u32) -> Option<f64> {
        SCRIPT.with(|s| {
            let mut s = s.borrow_mut();
            s.0 += 1;
            Some((s.1)(s.0 - 1))
        })
    }

    fn run_scripted(script: fn(usize) -> f64) -> (ProbeResult, Vec<String>) {
        SCRIPT.with(|s| *s.borrow_mut() = (0, script));
        let probe = Placements {
            watched: true,
            ..Default::default()
        };
        let r = run_probe_with(&probe, &ctx(10.0), &mut |_| {}, scripted);
        let order = probe.order.lock().unwrap().clone();
        (r, order)
    }

    #[test]
    fn a_group_during_which_the_cpus_moved_is_measured_again_and_only_the_second_kept() {
        // Two CPUs, so the runner reads the round trip around the group; the pair is
        // not watched per round. Readings: 60 before, 330 after the first measurement
        // (moved), then 330 and 330 around the second (steady).
        SCRIPT.with(|s| *s.borrow_mut() = (0, |k| if k == 0 { 60.0 } else { 330.0 }));
        let probe = Placements::default();
        let mut ctx = ctx(10.0);
        ctx.topo = crate::topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        let r = run_probe_with(&probe, &ctx, &mut |_| {}, scripted);
        let states = &r.machine_states;
        assert_eq!(states.len(), 2, "{states:?}");
        assert!(states[0].round_trip_changed && states[0].measured_again);
        assert!(!states[1].round_trip_changed && !states[1].measured_again);
        // The kept figures are the second measurement's alone: as many samples as
        // rounds in it, each from a run after the first measurement ended.
        let order = probe.order.lock().unwrap().clone();
        let first_runs = order.len() / 2;
        let kept = &r.series("int/scatter").unwrap().samples[0];
        assert_eq!(kept.len(), (first_runs - 2) / 2, "{order:?}");
        assert!(
            kept.iter().all(|y| y.fract() > first_runs as f64 * 1e-3),
            "{kept:?}"
        );
        assert_eq!(r.cases_done, 3);
        let text = format!("{:?}", crate::state::warnings(states));
        assert!(text.contains("each measured again (1)"), "{text}");
    }

    #[test]
    fn a_round_during_which_the_cpus_moved_is_dropped_and_run_again() {
        // Readings: before round 1 and after each of its two runs (0, 1, 2), then
        // two per round; reading 5 falls in round 3, which moved from 60 to 330 ns.
        let (r, order) = run_scripted(|k| if k == 5 { 330.0 } else { 60.0 });
        let rounds_run = (order.len() - 2) / 2;
        let n = r.series("int/scatter").unwrap().samples[0].len();
        assert_eq!(n + 1, rounds_run, "one round measured again");
        assert_eq!(r.series("int/linear").unwrap().samples[0].len(), n);
        assert_eq!(r.params["rounds_dropped_unsteady"], 1);
        assert_eq!(r.params["rounds_min"], n);
        // The dropped round's samples are not among the kept ones: each variant's
        // third run (order index 2 + 2*2 + k) is missing.
        let third: Vec<f64> = (0..2).map(|k| (2 + 4 + k + 1) as f64 * 1e-3).collect();
        for s in ["int/scatter", "int/linear"] {
            let kept = &r.series(s).unwrap().samples[0];
            assert!(
                kept.iter()
                    .all(|y| third.iter().all(|t| (y.fract() - t).abs() > 1e-9)),
                "{s}: {kept:?}"
            );
        }
        let text = r
            .warnings
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<String>();
        assert!(text.contains("CPUs 0 and 1 moved") && text.contains("from 60 to 330 ns"));
        assert!(text.contains("dropped"), "{text}");
        // The kept rounds' readings leave the moved one out.
        assert_eq!(
            r.params["steady_round_trip_ns"]["int ×2"],
            serde_json::json!([60.0, 60.0])
        );
    }

    #[test]
    fn a_steady_pair_drops_nothing_and_says_it_looked() {
        let (r, order) = run_scripted(|k| 60.0 + (k % 3) as f64 * 10.0);
        let n = r.series("int/scatter").unwrap().samples[0].len();
        assert_eq!(n, (order.len() - 2) / 2);
        assert_eq!(r.params["rounds_dropped_unsteady"], 0);
        assert_eq!(
            r.params["steady_round_trip_factor"],
            crate::drift::ROUND_TRIP_MOVED
        );
        assert!(!format!("{:?}", r.warnings).contains("moved"));
        // The state the group's figures belong to: every reading of its rounds.
        assert_eq!(
            r.params["steady_round_trip_ns"]["int ×2"],
            serde_json::json!([60.0, 80.0])
        );
    }

    #[test]
    fn when_too_few_rounds_hold_still_moved_ones_make_up_the_least_asked() {
        // Round 1 is steady (readings 0-2 at 60 ns); every later round moves.
        let (r, _) = run_scripted(|k| if k >= 3 && k % 2 == 1 { 330.0 } else { 60.0 });
        let n = r.series("int/scatter").unwrap().samples[0].len();
        assert_eq!(
            n, MIN_COMPARED_ROUNDS,
            "one steady round, topped up to the least asked"
        );
        assert_eq!(r.series("int/linear").unwrap().samples[0].len(), n);
        let text = format!("{:?}", r.warnings);
        assert!(
            text.contains(&format!("{} of the {n} rounds were kept anyway", n - 1)),
            "{text}"
        );
        // The state the figures belong to takes in the moved rounds kept.
        assert_eq!(
            r.params["steady_round_trip_ns"]["int ×2"],
            serde_json::json!([60.0, 330.0])
        );
    }

    #[test]
    fn when_every_round_moves_they_are_kept_and_flagged() {
        let (r, order) = run_scripted(|k| if k % 2 == 0 { 60.0 } else { 330.0 });
        let n = r.series("int/scatter").unwrap().samples[0].len();
        assert_eq!(n, crate::probes::MAX_ROUNDS, "as many as were asked");
        assert_eq!((order.len() - 2) / 2, 2 * crate::probes::MAX_ROUNDS);
        // The rounds beyond those asked for are the ones left out.
        assert_eq!(
            r.params["rounds_dropped_unsteady"],
            crate::probes::MAX_ROUNDS
        );
        assert!(format!("{:?}", r.warnings).contains("kept anyway"));
        // No round held still, yet the figures name the (mixed) state they come from.
        assert_eq!(
            r.params["steady_round_trip_ns"]["int ×2"],
            serde_json::json!([60.0, 330.0])
        );
    }
}
