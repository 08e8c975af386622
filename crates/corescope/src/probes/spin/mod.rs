//! `spin`: what a spinning thread costs its neighbour, and which wait loop is cheapest
//! (seed 003; the loops are `kernels::spin_loops`).
//!
//! One *active* thread, pinned to the first allowed CPU, runs a benchmark while one
//! *spinner* waits on a lock word that is never released during the measurement.
//! Each benchmark runs alone and with the spinner back to back, in alternating order,
//! `reps` times (the spinner blocks on a condition variable between its spins, so
//! "alone" really is alone and both runs find the same cache state); the slowdown is
//! the Hodges-Lehmann estimate of the paired ratios with its signed-rank interval. Responsiveness of each loop: the spinner's time between two
//! reads of the lock word (spin time ÷ reads), and, in a separate hand-off run, the
//! time from the release to the spinner returning.
//!
//! Spinner placements: `smt-sibling` (where the machine has SMT), `other-core`,
//! `other-package` (where there is one), and `same-cpu` (oversubscribed: the spinner
//! shares the active thread's CPU and the scheduler time-slices them).

mod analysis;
mod bench;
mod measure;
mod table;

pub use analysis::{merge_tables, slowed_everywhere, BenchSlowdown, PARKED_LOOP, SAME_CPU_MEANS};
pub use bench::{ChaseRing, Work, BENCHES, HASH_WORDS, MATVEC_ORDER, SORT_LEN};
pub use measure::{spinner_first, SPINNER_START_US};
pub use table::{
    bench_column, bench_high_column, bench_low_column, slowdown_measurement, table_placement,
    SpinnerCount, SPINNER_COLUMNS, SPINNER_NOT_COUNTED, SUMMARY_COLUMNS,
};

use crate::kernels::spin_loops::SpinKind;
use crate::model::{Measurement, ProbeResult, Sensitivity};
use crate::placement::pairs::{self, Relation};
use crate::probes::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use measure::{handoff_phase, spinner_for, Phases};
use serde::Serialize;
use std::sync::atomic::Ordering;

/// The probe.
pub struct Spin;

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    relation: Relation,
    active: Option<u32>,
    spinner: Option<u32>,
    kind: String,
    reps: usize,
    handoffs: usize,
    l1_bytes: usize,
    l2_bytes: usize,
    chase_bytes: usize,
    /// More spinners on these CPUs, on the same lock (seed 003's k spinners).
    #[serde(default)]
    extra: Vec<u32>,
    /// Placement name when it is not the relation's (`all-others`).
    #[serde(default)]
    label: Option<String>,
}

/// Most spinners of the `all-others` placement (one per other allowed CPU).
pub const MAX_SPINNERS: usize = 63;

/// The `all-others` placement: the active thread on the first allowed CPU and a
/// spinner on every other allowed CPU (at most [`MAX_SPINNERS`]), or why not.
pub fn all_others(topo: &crate::topology::Topology) -> Result<(u32, Vec<u32>), TooFewOthers> {
    let cpus = topo.allowed_os_indices();
    match cpus.split_first() {
        Some((&a, rest)) if rest.len() >= 2 => {
            Ok((a, rest.iter().copied().take(MAX_SPINNERS).collect()))
        }
        _ => Err(TooFewOthers(cpus.len().saturating_sub(1))),
    }
}

/// Fewer than two CPUs besides the active thread's: no `all-others` case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} other CPU(s) allowed: k spinners need at least 2 besides the active thread's")]
pub struct TooFewOthers(pub usize);

/// Id of the probe and of its run-file entry.
pub const ID: &str = "spin";

impl Probe for Spin {
    type Params = CaseParams;
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// The all-others case also starts a spinner on every other CPU, in every
    /// repetition.
    /// Summary: what each spinner did to the active thread, and the cheapest wait.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Slowdowns {
            notes_with: Some("cheapest"),
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.16, 0.55, 7.7]) + c.spawn_s(p.extra.len() as f64 * p.reps as f64))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "spin-wait interference: a spinner's cost to its neighbour, and each wait loop's responsiveness"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CoreThroughput, Sensitivity::CrossCpu]
    }
    /// Seed 003's slowdown bars.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::SpinBars]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let reps: usize = ctx.profile.pick(5, 11, 31);
        let handoffs: usize = ctx.profile.pick(30, 200, 1000);
        let size = |level: u8, fallback: usize| {
            ctx.topo
                .caches
                .iter()
                .find(|c| c.level == level)
                .map(|c| c.size_bytes as usize)
                .unwrap_or(fallback)
        };
        let (l1_bytes, l2_bytes) = (size(1, 32 << 10), size(2, 512 << 10));
        let chase_bytes = 2 * ctx.topo.llc_bytes().unwrap_or(32 << 20) as usize;
        let mut cases = Vec::new();
        let mut skipped = Vec::new();
        for (relation, pair) in pairs::pairs(&ctx.topo) {
            if relation == Relation::Unpinned {
                continue;
            }
            match pair {
                Ok((active, spinner)) => {
                    for kind in SpinKind::ALL {
                        cases.push(Case::new(
                            format!("{} {}", relation.name(), kind.name()),
                            &CaseParams {
                                relation,
                                active,
                                spinner,
                                kind: kind.name().into(),
                                reps,
                                handoffs,
                                l1_bytes,
                                l2_bytes,
                                chase_bytes,
                                extra: Vec::new(),
                                label: None,
                            },
                        ));
                    }
                }
                Err(why) => skipped.push(format!("{}: skipped: {why}", relation.name())),
            }
        }
        // k spinners: every other allowed CPU spins on the same lock.
        let mut spinner_threads = vec![1usize];
        match all_others(&ctx.topo) {
            Ok((active, others)) => {
                spinner_threads.push(others.len());
                for kind in SpinKind::ALL {
                    cases.push(Case::new(
                        format!("all-others ×{} {}", others.len(), kind.name()),
                        &CaseParams {
                            relation: Relation::OtherCore,
                            active: Some(active),
                            spinner: Some(others[0]),
                            kind: kind.name().into(),
                            reps,
                            handoffs,
                            l1_bytes,
                            l2_bytes,
                            chase_bytes,
                            extra: others[1..].to_vec(),
                            label: Some("all-others".into()),
                        },
                    ));
                }
            }
            Err(why) => skipped.push(format!("all-others: skipped: {why}")),
        }
        Ok(Plan::new(cases)
            .param("benchmarks", BENCHES)
            .param(
                "spinners",
                SpinKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
            )
            .param("spinner_threads", spinner_threads)
            .param("repetitions", reps)
            .param("handoffs", handoffs)
            .param("l1_chase_bytes", l1_bytes / 2)
            .param("l2_chase_bytes", l2_bytes / 2)
            .param("cachemiss_chase_bytes", chase_bytes)
            .skipping(skipped))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let kind: SpinKind = c.kind.parse()?;
        let clock = ctx.plan.clock.clone();
        let deadline = ctx.deadline;

        // Phase 1: slowdown, alone and with the spinner(s) alternating.
        let mut cpus = vec![c.active, c.spinner];
        cpus.extend(c.extra.iter().map(|&e| Some(e)));
        let phases = Phases::new(c.reps * BENCHES.len(), cpus.len() - 1);
        let out = ctx.team(
            &cpus,
            1,
            |me| (me == 0).then(|| Work::new(c.l1_bytes, c.l2_bytes)),
            |me, work| match work.as_mut() {
                Some(work) if me == 0 => phases.active(work, &clock, c.reps, deadline),
                _ => {
                    phases.spinner(me == 1, || spinner_for(kind, c.chase_bytes));
                    None
                }
            },
        )?;
        let paired = out
            .results
            .first()
            .and_then(|r| r.first())
            .cloned()
            .flatten()
            .ok_or(ProbeError::Unpaired { kind: kind.name() })?;

        // The timed spinner (worker 1) as the team's counters saw it.
        let spinner = SpinnerCount::of_team(ctx.counted.last());
        let handoff_ns = handoff_phase(
            ctx,
            ([c.active, c.spinner], c.handoffs, c.chase_bytes),
            kind,
            &clock,
        )?;
        let read_ns = clock.ticks_to_ns(phases.spin_ticks.load(Ordering::Acquire))
            / phases.reads.load(Ordering::Acquire).max(1) as f64;
        let rel = c
            .label
            .clone()
            .unwrap_or_else(|| c.relation.name().to_string());
        slowdown_measurement(kind.name(), (read_ns, handoff_ns), &paired, &rel, &spinner)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        // The per-case tables merged into one per kind.
        let (tables, findings) = merge_tables(result.tables.clone());
        let mut out = Analysis {
            replace_tables: Some(tables),
            ..Analysis::findings(findings)
        };
        if !ctx.topo.has_smt() {
            out.findings.push(
                "no SMT here: spinners were measured on another core and on the same CPU \
                 (time-sliced) instead of a sibling strand",
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_spinners_fill_every_other_cpu() {
        let two = crate::topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        assert!(all_others(&two)
            .unwrap_err()
            .to_string()
            .contains("1 other CPU"));
        let four = crate::topology::from_synthetic("pack:1 core:2 pu:2").unwrap();
        let (a, others) = all_others(&four).unwrap();
        assert!(!others.contains(&a));
        assert_eq!(others.len(), 3);
        let big = crate::topology::from_synthetic("pack:4 core:16 pu:4").unwrap();
        assert_eq!(all_others(&big).unwrap().1.len(), MAX_SPINNERS);
    }
}
