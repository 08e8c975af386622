//! One comparison group being measured: its warm-up and rounds (every variant once
//! per round, in an order rotated each round), the machine's state read around it,
//! and a second measurement when the state changed under the first.

use super::steady::Steadiness;
use crate::model::{GroupState, Measurement, ProbeResult};
use crate::probes::{Event, Planned, ProbeError, RunCtx};
use std::time::{Duration, Instant};

/// One comparison group being measured.
pub(super) struct GroupRun<'a, 'c> {
    /// The probe's plan: its cases and the probe that runs them.
    pub(super) plan: &'a Planned<'a>,
    pub(super) members: &'a [usize],
    pub(super) ctx: &'a mut RunCtx<'c>,
    pub(super) result: &'a mut ProbeResult,
    pub(super) on_event: &'a mut dyn FnMut(Event),
    pub(super) id: &'a str,
    /// Reads the round trip between two CPUs (`drift::round_trip`; a script in tests).
    pub(super) trip: TripFn,
    /// The epoch of the run this measurement of the group belongs to.
    pub(super) epoch: usize,
}

/// A probe's result holding more samples and cells than this is not copied before
/// each group, so a group measured under a changed state is kept (and flagged)
/// rather than measured again: a copy per group would cost more than the group.
pub const REMEASURE_MAX_VALUES: usize = 1 << 20;

/// How the runner reads the round trip between two CPUs, in ns.
pub(super) type TripFn = fn(u32, u32) -> Option<f64>;

impl GroupRun<'_, '_> {
    /// Measure the group; the number of rounds run, or the failing case and its error.
    /// When the watched CPUs changed state during it (on a VM, the vCPUs moved
    /// between host cores) and the group's allowance has room for a second
    /// measurement, what it gave is discarded and the group measured again
    /// ([`GroupState::measured_again`] records the first); otherwise the changed
    /// measurement is kept and its record says so.
    pub(super) fn run(
        &mut self,
        allowance: Duration,
        rounds: crate::probes::Rounds,
    ) -> Result<usize, (usize, ProbeError)> {
        // The watched CPUs' round trip before and after a comparison: a VM whose vCPUs
        // moved between host cores in between gets the group flagged.
        let pair = (rounds.max > 1)
            .then(|| crate::drift::watched_pair(&self.ctx.plan.topo))
            .flatten();
        let started = Instant::now();
        // What the probe held before the group, to go back to; not for results too
        // large to copy once per group.
        let saved = (pair.is_some() && self.result.values_held() <= REMEASURE_MAX_VALUES)
            .then(|| self.result.clone());
        let (mut done, mut state) = self.measure_with_state(allowance, rounds, pair)?;
        if state.round_trip_changed {
            let spent = started.elapsed();
            let room =
                spent.saturating_mul(2) <= allowance && Instant::now() + spent < self.ctx.deadline;
            match saved {
                Some(saved) if room => {
                    *self.result = saved;
                    state.measured_again = true;
                    self.file_state(state);
                    (done, state) = self.measure_with_state(allowance, rounds, pair)?;
                }
                _ => {}
            }
        }
        self.file_state(state);
        // What the group's cases kept between their runs is not the next group's.
        self.ctx.blocks.clear();
        Ok(done)
    }

    /// The group's rounds between two readings of the machine's state.
    fn measure_with_state(
        &mut self,
        allowance: Duration,
        rounds: crate::probes::Rounds,
        pair: Option<(u32, u32)>,
    ) -> Result<(usize, GroupState), (usize, ProbeError)> {
        let read = self.trip;
        let trip = || pair.and_then(|(a, b)| read(a, b));
        let before = trip();
        let snap_before = crate::state::Snapshot::take();
        let done = self.rounds(allowance, rounds)?;
        let snap_after = crate::state::Snapshot::take();
        let after = trip();
        let state = crate::state::between(
            &self.group_name(),
            self.epoch,
            &snap_before,
            &snap_after,
            (before, after),
        );
        Ok((done, state))
    }

    /// Keep a group measurement's state record and its round trips. One warning per
    /// probe says which groups the machine changed under (`state::warnings`).
    fn file_state(&mut self, state: GroupState) {
        for t in [state.round_trip_before_ns, state.round_trip_after_ns]
            .into_iter()
            .flatten()
        {
            let seen = self
                .result
                .params
                .entry("cpu_round_trip_ns_seen".into())
                .or_insert_with(|| serde_json::json!([]));
            if let Some(v) = seen.as_array_mut() {
                v.push(serde_json::json!(t.round()));
            }
        }
        self.result.machine_states.push(state);
    }

    /// The warm-up and the rounds of the group; the number of rounds kept.
    fn rounds(
        &mut self,
        allowance: Duration,
        rounds: crate::probes::Rounds,
    ) -> Result<usize, (usize, ProbeError)> {
        let started = Instant::now();
        let (measured, aliases) = self.split_aliases();
        if rounds.warmup {
            // A later epoch warms up with the first variant only: that brings the
            // clock and the probe's code back up after the other probes of the pass,
            // and the rotation of the rounds spreads what is left of a cold start
            // over the variants.
            let warm = if self.epoch == 0 {
                &measured[..]
            } else {
                &measured[..measured.len().min(1)]
            };
            for &i in warm {
                self.plan.run(i, self.ctx).map_err(|e| (i, e))?;
            }
            self.ctx.counted.clear();
        }
        let watch = self.plan.cases[self.members[0]].steady_pair;
        // A dropped round is measured again, up to as many times as rounds were asked.
        let attempts = rounds.max.max(1) * if watch.is_some() { 2 } else { 1 };
        let mut touched: Vec<(String, f64)> = Vec::new();
        let mut steadiness: Steadiness<Vec<CaseRun>> = Steadiness::default();
        let (mut done, mut ran_out) = (0, false);
        for round in 0..attempts {
            let runs = self.one_round(round, rounds, &measured, watch, &mut steadiness)?;
            if let Some(kept) = steadiness.keep(runs.runs, runs.trips_ns) {
                let first = done == 0 && self.epoch == 0;
                self.keep(kept, first, &aliases, &mut touched);
                done += 1;
                let target = rounds.target_rel_half_width;
                if done >= rounds.max.max(1)
                    || (done >= rounds.min && converged(self.result, &touched, target))
                {
                    break;
                }
            }
            let out_of_time = Instant::now() >= self.ctx.deadline;
            if out_of_time || (done >= rounds.min && started.elapsed() >= allowance) {
                ran_out = true;
                break;
            }
        }
        // Too few rounds held still (every round moved, or all but one or two):
        // keep moved ones too rather than a figure with no interval (as many as
        // were asked when none held, up to the least number asked otherwise),
        // and say so.
        let want = if done == 0 {
            rounds.max.max(1)
        } else {
            rounds.min
        };
        if done < want {
            for runs in steadiness.keep_anyway(want - done) {
                let first = done == 0 && self.epoch == 0;
                self.keep(runs, first, &aliases, &mut touched);
                done += 1;
            }
        }
        let what = self.group_name();
        super::steady::report(self.result, what, &steadiness, watch, done);
        if ran_out && done < rounds.min {
            self.result
                .warnings
                .push_unique(crate::model::Warning::BudgetReached {
                    group: self.group_name(),
                    rounds_done: done,
                    rounds_min: rounds.min,
                });
        }
        Ok(done)
    }

    /// One round: every measured member once, in an order rotated by `round`, with
    /// the watched pair's round trip read before the first run and after each.
    fn one_round(
        &mut self,
        round: usize,
        rounds: crate::probes::Rounds,
        measured: &[usize],
        watch: Option<(u32, u32)>,
        steadiness: &mut Steadiness<Vec<CaseRun>>,
    ) -> Result<RoundRuns, (usize, ProbeError)> {
        let trip = self.trip;
        let read = |last: &mut Option<f64>| {
            *last = watch.and_then(|(a, b)| trip(a, b));
            *last
        };
        let mut out = RoundRuns::default();
        // The reading after the last round is the reading before this one.
        out.trips_ns
            .extend(steadiness.last_ns.or_else(|| read(&mut steadiness.last_ns)));
        for k in crate::harness::race::rotated(measured.len(), round) {
            let i = measured[k];
            (self.on_event)(Event::CaseStart {
                id: self.id.into(),
                index: i,
                label: if rounds.max > 1 {
                    format!(
                        "{} (round {}, epoch {})",
                        self.plan.cases[i].label,
                        round + 1,
                        self.epoch + 1
                    )
                } else {
                    self.plan.cases[i].label.clone()
                },
            });
            let m = self.plan.run(i, self.ctx).map_err(|e| (i, e))?;
            let counted = std::mem::take(&mut self.ctx.counted);
            out.runs.push((i, m, counted));
            out.trips_ns.extend(read(&mut steadiness.last_ns));
        }
        Ok(out)
    }

    /// File a kept round: its counters and points (the first kept round also its
    /// other outputs), and the points it touched.
    fn keep(
        &mut self,
        runs: Vec<CaseRun>,
        first: bool,
        aliases: &[(usize, usize)],
        touched: &mut Vec<(String, f64)>,
    ) {
        for (i, m, counted) in runs {
            crate::counters::record(self.result, &self.plan.cases[i].label, counted);
            for p in &m.points {
                if !touched.iter().any(|(s, x)| *s == p.series && *x == p.x) {
                    touched.push((p.series.clone(), p.x));
                }
            }
            self.absorb(i, m, first, aliases);
        }
        if first {
            self.result.cases_done += self.members.len();
        }
    }

    /// The group's name in warnings (a lone case's label).
    pub(super) fn group_name(&self) -> String {
        let first = &self.plan.cases[self.members[0]];
        first.group.clone().unwrap_or_else(|| first.label.clone())
    }
}

/// One run of a round: the case, its measurement and what its teams counted.
pub(super) type CaseRun = (usize, Measurement, Vec<crate::counters::TeamCount>);

/// What one round produced: each run's case, measurement and counts, and the
/// watched pair's round trips read around the runs.
#[derive(Default)]
struct RoundRuns {
    runs: Vec<CaseRun>,
    trips_ns: Vec<f64>,
}

/// Whether every touched point's interval is within ±`target`.
fn converged(result: &ProbeResult, touched: &[(String, f64)], target: f64) -> bool {
    touched.iter().all(|(s, x)| {
        let samples = result.series(s).map(|s| s.samples_at(*x)).unwrap_or(&[]);
        samples.len() > 1 && crate::stats::estimate(samples).rel_half_width() <= target
    })
}
