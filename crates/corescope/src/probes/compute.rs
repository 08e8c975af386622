//! `compute`: integer and floating-point throughput vs thread count and placement
//! (seed 000 §3–4, Figures 1–4; seed 001 test 1).
//!
//! Per thread: a loop over 128 inputs doing 8 dependent operations (2 add, 2 sub,
//! 4 mul) on the input and the previous result, repeated `passes` times. Every
//! thread waits at the start gate; throughput = all operations / (last end − first
//! start). The seed keeps the best of 3; here the runner repeats each case in
//! rounds, the placements of one thread count interleaved, and reports the median
//! with its interval (placements that give the same CPUs are measured once).
//!
//! Every worker counts its events around the kernel (`counters/`): the tables
//! `int: counters per case` and `fp: …` show MIPS, CPI and efficiency where the
//! machine has a PMU, and task-clock, context switches, migrations and page
//! faults everywhere (docs/counters.md).

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx, SweepConfigs};
use crate::analysis;
use crate::kernels::chains::{
    fp_inputs, fp_kernel, int_inputs, int_kernel, FP_K, INPUTS, INT_K, OPS_PER_INPUT,
};
use crate::model::{Measurement, Point, ProbeResult, Profile};
use crate::placement::arg as placement_arg;
use crate::placement::Strategy;
use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Largest thread count as a multiple of the CPU count (seed: up to 4× the strands).
pub const MAX_THREAD_FACTOR: usize = 4;

/// The probe.
pub struct Compute;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Int,
    Fp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Fp => "fp",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct CaseParams {
    kind: Kind,
    placement: String,
    threads: usize,
    /// Passes over the 128 inputs per thread.
    passes: u64,
}

/// Default placements of the probe.
pub const PLACEMENTS: [Strategy; 4] = [
    Strategy::Linear,
    Strategy::Compact,
    Strategy::Scatter,
    Strategy::Unbound,
];

impl Probe for Compute {
    fn id(&self) -> &'static str {
        "compute"
    }

    fn title(&self) -> &'static str {
        "integer and FP throughput vs threads and placement (8 dependent ops per input)"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        // Elements (inputs processed) per thread when threads ≤ CPUs. Full: the
        // seed's 10^9 per thread. Quick and default shrink the per-thread work when
        // threads exceed CPUs so every case takes about the same wall time, and the
        // probe's time grows only with the number of thread counts.
        let elements: u64 = ctx.profile.pick(2_000_000, 8_000_000, 1_000_000_000);
        let cpus = ctx.cpus();
        let counts = ctx.thread_counts(MAX_THREAD_FACTOR);
        let placements = ctx.placements(&PLACEMENTS);
        let mut configs = SweepConfigs::new(&ctx.topo, &placements);
        let mut cases = Vec::new();
        for kind in [Kind::Int, Kind::Fp] {
            for &threads in &counts {
                let share = if ctx.profile == Profile::Full {
                    elements
                } else {
                    elements * cpus as u64 / threads.max(cpus) as u64
                };
                let passes = (share / INPUTS as u64).max(1);
                let group = format!(
                    "{} with {}",
                    kind.name(),
                    crate::units::threads(threads as f64)
                );
                for (k, p) in placements.iter().enumerate() {
                    let config = configs.config(k, threads)?;
                    let params = CaseParams {
                        kind,
                        placement: placement_arg(p),
                        threads,
                        passes,
                    };
                    cases.push(
                        Case::new(format!("{} {} ×{threads}", kind.name(), p.name()), &params)
                            .compared(&group, p.name(), config),
                    );
                }
            }
        }
        Ok(Plan::new(cases)
            .scaled_down(ctx.thinned_note(""))
            .param("inputs", INPUTS)
            .param("ops_per_input", OPS_PER_INPUT)
            .param("elements_per_thread", elements)
            .param(
                "work_rule",
                if ctx.profile == Profile::Full {
                    "fixed work per thread"
                } else {
                    "work per thread scaled by cpus/max(threads, cpus)"
                },
            )
            .param("repetitions", "runner rounds (see rounds_min / rounds_max)")
            .param("per_cycle_clock", crate::clock::PER_CYCLE_ROUND_RULE)
            .param("thread_counts", &counts)
            .param(
                "placements",
                placements.iter().map(placement_arg).collect::<Vec<_>>(),
            ))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.typed()?;
        let (strategy, cpus) = super::placed(&ctx.plan.topo, &c.placement, c.threads)?;
        let passes = c.passes;
        let out = match c.kind {
            Kind::Int => ctx.team(&cpus, 1, int_inputs, |t, inputs| {
                black_box(int_kernel(inputs, INT_K, passes, t as i64));
            })?,
            Kind::Fp => ctx.team(&cpus, 1, fp_inputs, |t, inputs| {
                black_box(fp_kernel(inputs, FP_K, passes, 1.0 + t as f64));
            })?,
        };
        let ops = c.threads as f64 * passes as f64 * INPUTS as f64 * OPS_PER_INPUT as f64;
        let rates: Vec<f64> = out
            .team_times_ns()
            .iter()
            .map(|ns| ops / (ns.max(1.0) * 1e-9))
            .collect();
        if rates.is_empty() {
            return Err(ProbeError::Failed("no repetition ran".into()));
        }
        let hz = super::round_clock_hz(ctx, &cpus, c.threads);
        let per_cycle = rates.iter().map(|r| r / c.threads as f64 / hz).collect();
        Ok(Measurement::points(vec![
            Point::samples(
                format!("{}/{}", c.kind.name(), strategy.name()),
                "threads",
                c.threads as f64,
                "ops_per_s",
                rates,
            ),
            Point::samples(
                format!("{}-per-cycle/{}", c.kind.name(), strategy.name()),
                "threads",
                c.threads as f64,
                "ops_per_cycle_per_thread",
                per_cycle,
            ),
        ]))
    }

    fn finish(&self, result: &mut ProbeResult, _plan: &Plan, ctx: &PlanCtx) {
        let cpus = ctx.cpus();
        for what in ["int", "fp"] {
            let found = [
                analysis::scaling(result, what, "ops_per_s", cpus),
                analysis::placements(result, what, "ops_per_s", cpus as f64),
            ];
            result.findings.extend(found.into_iter().flatten());
        }
        crate::counters::case_tables(result, &["int", "fp"]);
    }
}
