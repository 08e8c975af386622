//! A run of several probes, epoch by epoch: every probe's first epoch, then every
//! probe's second, so the two measurements of a group lie a whole pass of the
//! suite apart (minutes in a default run), not seconds. A state of the machine
//! that drifts over minutes (the host's other tenants, the clock, where the vCPUs
//! sit) then shows inside the run, as a wider interval or a state-dependent point,
//! instead of only between one run and the next.
//!
//! [`ProbeRun`] is one probe part-way through its schedule: its plan, what it has
//! measured, the budget it has spent. [`run_suite`] drives the passes, checks the
//! machine after every probe's share of a pass, and saves the run file after each:
//! a probe still waiting for a later epoch is saved as interrupted there, so a
//! crash loses nothing measured and never leaves a part-measured probe looking
//! complete.

use super::{
    epoch_schedule, file_plan, groups_of, state_dependent_warning, status_of,
    wide_interval_warnings, GroupRun, TripFn,
};
use crate::model::{DriftCheck, ProbeResult, Profile, RunFile, Status, Warning};
use crate::probes::{AnyProbe, Case, Event, PlanCtx, Planned, Rounds, RunCtx};
use crate::session::Session;
use std::time::{Duration, Instant};

/// The quick profile's rounds: the minimum, never more. Its intervals are those the
/// minimum gives (wider than ±1 % where the machine is noisy, and said so); the
/// default and full profiles add rounds towards ±1 % while the budget lasts.
pub fn quick_rounds(rounds: Rounds) -> Rounds {
    Rounds {
        max: rounds.max.min(rounds.min.max(1)),
        ..rounds
    }
}

/// The order a probe's groups are measured in and the rounds of each: its epochs
/// (`--epochs`, [`epoch_schedule`]), the quick profile held to the minimum of rounds.
/// `corescope plan` prices the same schedule.
pub fn schedule<P>(
    groups: &[Vec<usize>],
    cases: &[Case<P>],
    ctx: &PlanCtx,
) -> Vec<(usize, usize, Rounds)> {
    let epochs = ctx.overrides.epochs.unwrap_or(crate::stats::epochs::EPOCHS);
    let mut schedule = epoch_schedule(groups, cases, epochs);
    if ctx.profile == Profile::Quick {
        for (_, _, rounds) in &mut schedule {
            *rounds = quick_rounds(*rounds);
        }
    }
    schedule
}

/// One probe being run: its plan and schedule, where it stands in them, and what it
/// has measured so far.
pub struct ProbeRun<'p> {
    probe: &'p dyn AnyProbe,
    /// `None` when planning ended the probe (skipped, failed).
    plan: Option<Planned<'p>>,
    result: ProbeResult,
    groups: Vec<Vec<usize>>,
    /// (group, epoch, rounds of that epoch), in the order measured (`epoch_schedule`).
    schedule: Vec<(usize, usize, Rounds)>,
    /// The next entry of `schedule` to measure.
    next: usize,
    rounds_run: Vec<usize>,
    /// Time spent measuring this probe, over every pass so far: its budget is spent
    /// across the passes, the rest carried to the next.
    spent: Duration,
    /// Warnings the probe's runs raised (`RunCtx::warnings`) and the machine's
    /// checks between passes gave, filed at the end.
    warnings: Vec<Warning>,
    /// Set when the schedule stopped early (budget, interrupt, error): no later pass.
    ended: bool,
    trip: TripFn,
}

impl<'p> ProbeRun<'p> {
    /// Plan the probe. A probe whose plan fails is ended at once with that status.
    pub fn start(probe: &'p dyn AnyProbe, ctx: &PlanCtx) -> Self {
        Self::start_with(probe, ctx, crate::drift::round_trip)
    }

    pub(super) fn start_with(probe: &'p dyn AnyProbe, ctx: &PlanCtx, trip: TripFn) -> Self {
        let started = Instant::now();
        let mut result = ProbeResult::new(probe.id(), probe.title(), Status::Completed);
        let (plan, groups, schedule) = match probe.plan(ctx) {
            Ok(plan) => {
                file_plan(&plan, ctx, &mut result);
                result.cases_planned = plan.cases.len();
                let groups = groups_of(&plan.cases);
                let schedule = schedule(&groups, &plan.cases, ctx);
                (Some(plan), groups, schedule)
            }
            Err(e) => {
                let (status, reason) = status_of(&e);
                result.status = status;
                result.reason = Some(reason);
                (None, Vec::new(), Vec::new())
            }
        };
        let ended = plan.is_none();
        Self {
            probe,
            rounds_run: vec![0; groups.len()],
            plan,
            result,
            groups,
            schedule,
            next: 0,
            spent: started.elapsed(),
            warnings: Vec::new(),
            ended,
            trip,
        }
    }

    /// Whether the probe has measurements due in `epoch` (or left over from an
    /// earlier one).
    pub fn due_in(&self, epoch: usize) -> bool {
        !self.ended
            && self
                .schedule
                .get(self.next)
                .is_some_and(|&(_, e, _)| e <= epoch)
    }

    /// Whether anything is left to measure in a later pass.
    pub fn has_more(&self) -> bool {
        !self.ended && self.next < self.schedule.len()
    }

    /// The status the probe stands at (interrupted once a signal stopped it).
    pub fn status(&self) -> Status {
        self.result.status
    }

    /// The latest epoch in the schedule, counted from 1 (1 for a probe whose cases
    /// all run once).
    fn epochs(&self) -> usize {
        self.schedule
            .iter()
            .map(|&(_, e, _)| e + 1)
            .max()
            .unwrap_or(1)
    }

    /// Measure the groups due in `epoch`, within what is left of the probe's budget.
    /// Every stop (budget, interrupt, a case's error) becomes the probe's status.
    pub fn run_epoch(&mut self, ctx: &PlanCtx, epoch: usize, on_event: &mut dyn FnMut(Event)) {
        let Some(plan) = &self.plan else { return };
        if !self.due_in(epoch) {
            return;
        }
        let started = Instant::now();
        let id = self.probe.id().to_string();
        on_event(Event::ProbeStart {
            id: id.clone(),
            cases: plan.cases.len(),
        });
        let budget = Duration::from_secs_f64(ctx.budget_s);
        let deadline = started + budget.saturating_sub(self.spent);
        let mut run_ctx = RunCtx {
            plan: ctx,
            deadline,
            warnings: Vec::new(),
            counted: Vec::new(),
            blocks: Default::default(),
        };
        while let Some(&(g, e, rounds)) = self.schedule.get(self.next) {
            if e > epoch {
                break;
            }
            let first = &plan.cases[self.groups[g][0]];
            if let Some(sig) = crate::interrupt::requested() {
                self.result.status = Status::Interrupted;
                self.result.reason = Some(format!(
                    "{} after {} of {} cases",
                    crate::interrupt::name(sig),
                    self.result.cases_done,
                    plan.cases.len()
                ));
                self.ended = true;
                break;
            }
            if Instant::now() >= deadline {
                self.result.status = Status::GaveUp;
                self.result.reason = Some(format!(
                    "budget of {:.0} s reached after {} of {} cases; next was '{}'",
                    ctx.budget_s,
                    self.result.cases_done,
                    plan.cases.len(),
                    first.label
                ));
                self.ended = true;
                break;
            }
            // The group's share of what is left, for rounds beyond the minimum.
            let allowance = deadline
                .saturating_duration_since(Instant::now())
                .div_f64((self.schedule.len() - self.next) as f64);
            let mut group = GroupRun {
                plan,
                members: &self.groups[g],
                ctx: &mut run_ctx,
                result: &mut self.result,
                on_event,
                id: &id,
                trip: self.trip,
                epoch: e,
            };
            let outcome = group.run(allowance, rounds);
            self.next += 1;
            match outcome {
                Ok(n) => self.rounds_run[g] += n,
                Err((index, err)) => {
                    let (status, reason) = status_of(&err);
                    self.result.status = status;
                    self.result.reason = Some(match status {
                        Status::Skipped => reason,
                        _ => format!(
                            "case '{}' ({} of {}): {reason}",
                            plan.cases[index].label,
                            index + 1,
                            plan.cases.len()
                        ),
                    });
                    self.ended = true;
                    break;
                }
            }
        }
        self.warnings.append(&mut run_ctx.warnings);
        self.spent += started.elapsed();
    }

    /// Add a warning about the machine while the probe ran (`drift::noise_between`).
    pub fn warn(&mut self, w: Warning) {
        self.warnings.push(w);
    }

    /// What the probe has measured so far, summarised as a finished result would be,
    /// marked interrupted with the epochs still to come: what a run file holds
    /// between passes.
    pub fn provisional(&self) -> ProbeResult {
        let mut r = self.result.clone();
        r.summarise();
        let done = self
            .schedule
            .get(self.next)
            .map_or(self.epochs(), |&(_, e, _)| e);
        r.status = Status::Interrupted;
        r.reason = Some(format!(
            "saved after epoch {done} of {}; the rest of the probe was still to run",
            self.epochs()
        ));
        r.elapsed_s = self.spent.as_secs_f64();
        r
    }

    /// Stop here: a signal ended the run before the probe's later epochs.
    pub fn interrupt(&mut self, why: &str) {
        if self.has_more() && self.result.status == Status::Completed {
            let plan_cases = self.plan.as_ref().map_or(0, |p| p.cases.len());
            self.result.status = Status::Interrupted;
            self.result.reason = Some(format!(
                "{why} after {} of {} cases, before epoch {} of {}",
                self.result.cases_done,
                plan_cases,
                self.schedule.get(self.next).map_or(1, |&(_, e, _)| e + 1),
                self.epochs()
            ));
        }
        self.ended = true;
    }

    /// The finished result: summaries, warnings, the probe's own findings.
    pub fn finish(mut self, ctx: &PlanCtx, on_event: &mut dyn FnMut(Event)) -> ProbeResult {
        let finishing = Instant::now();
        let result = &mut self.result;
        for w in std::mem::take(&mut self.warnings) {
            result.warnings.push_unique(w);
        }
        if let Some(plan) = &self.plan {
            result.summarise();
            self.rounds_run.retain(|&n| n > 0);
            if let (Some(lo), Some(hi)) =
                (self.rounds_run.iter().min(), self.rounds_run.iter().max())
            {
                result.params.insert("rounds_min".into(), (*lo).into());
                result.params.insert("rounds_max".into(), (*hi).into());
            }
            wide_interval_warnings(result);
            result
                .warnings
                .extend(crate::state::warnings(&result.machine_states));
            state_dependent_warning(result);
            super::merge_same_configurations(result);
            if result.status != Status::Skipped && result.cases_done > 0 {
                plan.analyze(result, ctx).file(result);
            }
            result.tables.extend(
                result
                    .counters
                    .as_ref()
                    .and_then(crate::counters::summary_table),
            );
        }
        result.elapsed_s = (self.spent + finishing.elapsed()).as_secs_f64();
        on_event(Event::ProbeEnd {
            id: self.probe.id().to_string(),
            status: result.status.name().into(),
        });
        self.result
    }
}

/// Run probes epoch by epoch (see the module's text): every probe's share of epoch
/// 1 in order, then every probe's share of epoch 2, and so on. A probe is finished
/// (summarised, its findings drawn) as soon as nothing is left for it, and
/// `after_each` is called with it; the run file is saved after every probe's share
/// of a pass.
///
/// `check` looks at the machine (`drift::check`) before the first probe and after
/// every probe's share of a pass; what changed meanwhile becomes that probe's
/// warnings (`drift::noise_between`), and every check is kept in `run.drift`.
pub fn run_suite<E: From<crate::store::StoreError>>(
    probes: &[Box<dyn AnyProbe>],
    ctx: &PlanCtx,
    session: &mut Session,
    on_event: &mut dyn FnMut(Event),
    check: &mut dyn FnMut(&str) -> DriftCheck,
    after_each: impl FnMut(&RunFile, &ProbeResult) -> Result<(), E>,
) -> Result<(), E> {
    run_suite_with(
        probes,
        ctx,
        session,
        on_event,
        check,
        after_each,
        crate::drift::round_trip,
    )
}

/// A probe of the suite: its run while it lasts, and its place in the run file once
/// something of it was saved.
struct Entry<'p> {
    run: Option<ProbeRun<'p>>,
    slot: Option<usize>,
}

pub(super) fn run_suite_with<E: From<crate::store::StoreError>>(
    probes: &[Box<dyn AnyProbe>],
    ctx: &PlanCtx,
    session: &mut Session,
    on_event: &mut dyn FnMut(Event),
    check: &mut dyn FnMut(&str) -> DriftCheck,
    mut after_each: impl FnMut(&RunFile, &ProbeResult) -> Result<(), E>,
    trip: TripFn,
) -> Result<(), E> {
    session.run.drift.push(check("start"));
    let epochs = ctx
        .overrides
        .epochs
        .unwrap_or(crate::stats::epochs::EPOCHS)
        .max(1);
    let mut entries: Vec<Entry> = Vec::with_capacity(probes.len());
    let mut stopped: Option<String> = None;
    'passes: for epoch in 0..epochs {
        for (i, probe) in probes.iter().enumerate() {
            if epoch == 0 {
                entries.push(Entry {
                    run: Some(ProbeRun::start_with(probe.as_ref(), ctx, trip)),
                    slot: None,
                });
            }
            let entry = &mut entries[i];
            let Some(run) = entry.run.as_mut() else {
                continue;
            };
            if run.due_in(epoch) {
                run.run_epoch(ctx, epoch, on_event);
                let at = match epoch {
                    0 => format!("after {}", probe.id()),
                    e => format!("after {} (epoch {})", probe.id(), e + 1),
                };
                let after = check(&at);
                if let Some(before) = session.run.drift.last() {
                    for w in crate::drift::noise_between(before, &after) {
                        run.warn(w);
                    }
                }
                session.run.drift.push(after);
            }
            if run.status() == Status::Interrupted {
                let sig = crate::interrupt::requested().map_or("a signal", crate::interrupt::name);
                stopped = Some(sig.to_string());
            }
            if run.has_more() && stopped.is_none() {
                // Saved as it stands: a crash before the next pass keeps it.
                entry.slot = Some(session.put(entry.slot, run.provisional())?);
            } else if let Some(run) = entry.run.take() {
                let result = run.finish(ctx, on_event);
                let slot = session.put(entry.slot, result)?;
                entry.slot = Some(slot);
                after_each(&session.run, &session.run.probes[slot])?;
            }
            if stopped.is_some() {
                break 'passes;
            }
        }
    }
    // A signal ended the run: the probes waiting for a later epoch end with what
    // they measured, marked interrupted.
    let why = stopped.unwrap_or_else(|| "the run ended".into());
    for entry in &mut entries {
        if let Some(mut run) = entry.run.take() {
            run.interrupt(&why);
            let result = run.finish(ctx, on_event);
            let slot = session.put(entry.slot, result)?;
            entry.slot = Some(slot);
            after_each(&session.run, &session.run.probes[slot])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::tests::{ctx_epochs, Fake, Placements};

    fn check_at(at: &str) -> DriftCheck {
        DriftCheck {
            at: at.into(),
            t_s: 0.0,
            reference_ns: None,
            cpu_jiffies: None,
            loadavg_1m: None,
            round_trip_ns: None,
        }
    }

    fn steady(_: u32, _: u32) -> Option<f64> {
        Some(100.0)
    }

    fn session() -> Session {
        let topo = crate::topology::Topology::default();
        let clock = crate::clock::Clock::from_info(crate::model::ClockInfo {
            ticks_hz: 1e9,
            ..crate::model::ClockInfo::default()
        });
        Session::in_memory(crate::session::header(
            topo,
            &clock,
            crate::model::Profile::Quick,
        ))
    }

    /// Runs the suite; (events as "probe: label", probes in the order finished).
    fn run(
        probes: &[Box<dyn AnyProbe>],
        epochs: usize,
        session: &mut Session,
    ) -> (Vec<String>, Vec<String>) {
        let mut events = Vec::new();
        let mut finished = Vec::new();
        let ctx = ctx_epochs(10.0, epochs);
        run_suite_with(
            probes,
            &ctx,
            session,
            &mut |e| match e {
                Event::CaseStart { id, label, .. } => events.push(format!("{id}: {label}")),
                Event::ProbeStart { id, .. } => events.push(format!("{id}: start")),
                Event::ProbeEnd { id, .. } => events.push(format!("{id}: end")),
            },
            &mut check_at,
            |_, p| -> Result<(), crate::store::StoreError> {
                finished.push(p.id.clone());
                Ok(())
            },
            steady,
        )
        .unwrap();
        (events, finished)
    }

    #[test]
    fn every_probe_measures_its_first_epoch_before_any_measures_its_second() {
        let probes: Vec<Box<dyn AnyProbe>> = vec![
            Box::new(Placements::default()),
            Box::new(Fake {
                cases: 2,
                fail_at: None,
                sleep_ms: 0,
            }),
            Box::new(Placements::default()),
        ];
        let mut s = session();
        let (events, finished) = run(&probes, 2, &mut s);
        let epoch_of = |e: &str| {
            e.rsplit("epoch ")
                .next()
                .map(|n| n.trim_end_matches(')').to_string())
        };
        let placements: Vec<String> = events
            .iter()
            .filter(|e| e.starts_with("placements: linear (round"))
            .filter_map(|e| epoch_of(e))
            .collect();
        // Both placements probes run epoch 1 before either runs epoch 2.
        let first_two = events.iter().position(|e| e.contains("epoch 2")).unwrap();
        let last_one = events.iter().rposition(|e| e.contains("epoch 1")).unwrap();
        let fake_first = events
            .iter()
            .position(|e| e.starts_with("fake: case"))
            .unwrap();
        assert!(last_one < first_two && fake_first < first_two, "{events:?}");
        let firsts = events[..first_two]
            .iter()
            .filter(|e| e.starts_with("placements: linear (round 1, epoch 1)"))
            .count();
        assert_eq!(firsts, 2, "{events:?}");
        assert!(placements.iter().any(|e| e == "1") && placements.iter().any(|e| e == "2"));
        // The probe whose cases run once is finished after the first pass; the run
        // file keeps the probes in their order.
        assert_eq!(finished, ["fake", "placements", "placements"]);
        let ids: Vec<&str> = s.run.probes.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["placements", "fake", "placements"]);
        for p in &s.run.probes {
            assert_eq!(p.status, Status::Completed, "{}: {:?}", p.id, p.reason);
        }
        let per_epoch = crate::probes::MIN_COMPARED_ROUNDS.div_ceil(2);
        let series = s.run.probes[0].series("int/scatter").unwrap();
        assert_eq!(series.epochs, vec![vec![per_epoch, per_epoch]]);
        // A check of the machine after every probe's share of a pass.
        let at: Vec<&str> = s.run.drift.iter().map(|d| d.at.as_str()).collect();
        assert_eq!(
            at,
            [
                "start",
                "after placements",
                "after fake",
                "after placements",
                "after placements (epoch 2)",
                "after placements (epoch 2)"
            ]
        );
    }

    #[test]
    fn the_quick_profile_runs_the_minimum_of_rounds() {
        let r = quick_rounds(Rounds::COMPARED);
        assert_eq!((r.min, r.max), (Rounds::COMPARED.min, Rounds::COMPARED.min));
        assert_eq!(quick_rounds(Rounds::ONCE), Rounds::ONCE);
        let probe = Placements::default();
        // A quick context: every epoch runs its share of the minimum.
        let ctx = PlanCtx {
            profile: crate::model::Profile::Quick,
            ..ctx_epochs(10.0, 2)
        };
        let mut run = ProbeRun::start_with(&probe, &ctx, steady);
        assert!(run
            .schedule
            .iter()
            .all(|&(_, _, r)| r.max == crate::probes::MIN_COMPARED_ROUNDS.div_ceil(2)));
        run.run_epoch(&ctx, 1, &mut |_| {});
        assert!(!run.has_more());
    }

    #[test]
    fn one_epoch_runs_each_probe_to_its_end_in_turn() {
        let probes: Vec<Box<dyn AnyProbe>> = vec![
            Box::new(Placements::default()),
            Box::new(Placements::default()),
        ];
        let mut s = session();
        let (events, finished) = run(&probes, 1, &mut s);
        let ends: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| *e == "placements: end")
            .map(|(i, _)| i)
            .collect();
        let second_start = events
            .iter()
            .rposition(|e| e == "placements: start")
            .unwrap();
        assert!(ends[0] < second_start, "{events:?}");
        assert_eq!(finished.len(), 2);
        assert!(events.iter().all(|e| !e.contains("epoch 2")));
    }

    #[test]
    fn a_probe_between_passes_is_saved_marked_as_not_yet_complete() {
        let probe = Placements::default();
        let ctx = ctx_epochs(10.0, 2);
        let mut run = ProbeRun::start_with(&probe, &ctx, steady);
        run.run_epoch(&ctx, 0, &mut |_| {});
        assert!(run.has_more() && !run.due_in(0) && run.due_in(1));
        let saved = run.provisional();
        assert_eq!(saved.status, Status::Interrupted);
        assert!(
            saved
                .reason
                .as_deref()
                .unwrap_or("")
                .contains("epoch 1 of 2"),
            "{:?}",
            saved.reason
        );
        // Summarised: the points carry their epoch-1 estimate.
        let s = saved.series("int/scatter").unwrap();
        assert_eq!(s.n[0], crate::probes::MIN_COMPARED_ROUNDS.div_ceil(2));
        // A signal before the second pass ends it with what it has, and says so.
        run.interrupt("SIGINT");
        assert!(!run.has_more());
        let r = run.finish(&ctx, &mut |_| {});
        assert_eq!(r.status, Status::Interrupted);
        let why = r.reason.unwrap_or_default();
        assert!(
            why.contains("SIGINT") && why.contains("before epoch 2 of 2"),
            "{why}"
        );
    }
}
