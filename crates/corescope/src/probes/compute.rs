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
//! Every worker counts its events around the kernel (`counters.rs`): the tables
//! `int: counters per case` and `fp: …` show MIPS, CPI and efficiency where the
//! machine has a PMU, and task-clock, context switches, migrations and page
//! faults everywhere (docs/counters.md).

use super::{placement_config, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::analysis;
use crate::model::{Measurement, Point, ProbeResult, Profile};
use crate::placement::Strategy;
use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Inputs per pass, as in the seed.
pub const INPUTS: usize = 128;
/// Dependent operations per input: 2 add, 2 sub, 4 mul.
pub const OPS_PER_INPUT: u64 = 8;
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

// The kernel. One macro so the integer and floating-point versions do exactly the
// same calculation (seed 000: "exactly the same for both").
//
// How it keeps the compiler from folding operations (seed 000 §3.2 tells how a
// compiler removed 2 of 8): every step depends on the previous result, additions
// and subtractions alternate with multiplications so no two additive constants
// meet, and the multipliers come through `black_box` so none is known at compile
// time. For f64 Rust never reassociates or contracts into FMA without explicit
// intrinsics. Checked in the release build (x86_64, rustc 1.95, `objdump -d`):
// LLVM unrolls the inner loop by two; per input `int_kernel` executes 4 `imul`,
// 2 `add`, 2 `sub` on the result register (plus the loop counter's own add), and
// `fp_kernel` 4 `mulsd`, 2 `addsd`, 2 `subsd`: scalar, no packed forms, no FMA.
macro_rules! kernel {
    ($name:ident, $t:ty, $add:ident, $sub:ident, $mul:ident) => {
        /// Run `passes` passes over `inputs`, 8 dependent operations per input.
        #[inline(never)]
        pub fn $name(inputs: &[$t; INPUTS], k: [$t; 4], passes: u64, seed: $t) -> $t {
            let [k0, k1, k2, k3] = black_box(k);
            let mut r = seed;
            for _ in 0..passes {
                for &x in inputs.iter() {
                    r = r.$add(x); // add
                    r = r.$mul(k0); // mul
                    r = r.$sub(x); // sub
                    r = r.$mul(k1); // mul
                    r = r.$add(k2); // add
                    r = r.$mul(x); // mul
                    r = r.$sub(k3); // sub
                    r = r.$mul(k1); // mul
                }
                r = black_box(r);
            }
            r
        }
    };
}

trait Arith: Copy {
    fn fadd(self, o: Self) -> Self;
    fn fsub(self, o: Self) -> Self;
    fn fmul(self, o: Self) -> Self;
}
impl Arith for f64 {
    #[inline(always)]
    fn fadd(self, o: Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn fsub(self, o: Self) -> Self {
        self - o
    }
    #[inline(always)]
    fn fmul(self, o: Self) -> Self {
        self * o
    }
}

kernel!(int_kernel, i64, wrapping_add, wrapping_sub, wrapping_mul);
kernel!(fp_kernel, f64, fadd, fsub, fmul);

/// Integer inputs: odd values so products never collapse to zero.
fn int_inputs(thread: usize) -> [i64; INPUTS] {
    std::array::from_fn(|i| (2 * (i + thread) + 3) as i64)
}

/// Multipliers for the integer kernel.
const INT_K: [i64; 4] = [3, 5, 7, 11];

/// FP inputs in [0.9, 1.1): with multipliers whose product stays below 1 the
/// recurrence contracts to a finite, non-zero fixed point — no overflow, no
/// denormals (which would slow some FPUs by 100×).
fn fp_inputs(thread: usize) -> [f64; INPUTS] {
    std::array::from_fn(|i| 0.9 + 0.2 * (((i + thread) % INPUTS) as f64) / INPUTS as f64)
}

/// Multipliers for the FP kernel: 0.5 · 1.25 · x · 1.25 < 0.86 for x < 1.1.
const FP_K: [f64; 4] = [0.5, 1.25, 0.75, 0.25];

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
                for p in &placements {
                    let (_, config) = placement_config(&ctx.topo, p, threads)?;
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
            .param("per_cycle_clock", crate::clock::PER_CYCLE_RULE)
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
        let hz = ctx.plan.clock.per_cycle_hz(c.threads).hz;
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
        counter_tables(result, &["int", "fp"]);
    }
}

/// Seed 001's MIPS / CPI / efficiency beside the rates: per kind of work (the case
/// labels start with it; no kinds: one table of all cases), a table of every case's
/// counters, and the hardware part's skip reason or the source of the issue width
/// as a note.
pub fn counter_tables(result: &mut ProbeResult, kinds: &[&str]) {
    let Some(pc) = &result.counters else { return };
    let note = crate::counters::hardware_note(pc);
    let all = "counters per case (medians over rounds)";
    let tables: Vec<_> = if kinds.is_empty() {
        crate::counters::case_table(pc, all, |_| true)
            .into_iter()
            .collect()
    } else {
        kinds
            .iter()
            .filter_map(|k| {
                crate::counters::case_table(pc, &format!("{k}: {all}"), |c| {
                    c.strip_prefix(k).is_some_and(|r| r.starts_with(' '))
                })
            })
            .collect()
    };
    result.findings.push(note);
    result.tables.extend(tables);
}

/// Placement as given on the command line (`scatter`, `0,2,4-7`).
pub fn placement_arg(s: &Strategy) -> String {
    match s {
        Strategy::List(cpus) => crate::topology::Topology::format_cpu_list(cpus),
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_deterministic_and_input_dependent() {
        let a = int_kernel(&int_inputs(0), INT_K, 10, 1);
        assert_eq!(a, int_kernel(&int_inputs(0), INT_K, 10, 1));
        assert_ne!(a, int_kernel(&int_inputs(1), INT_K, 10, 1));
        let f = fp_kernel(&fp_inputs(0), FP_K, 1000, 1.0);
        assert!(
            f.is_finite() && f != 0.0 && f.abs() > f64::MIN_POSITIVE,
            "{f}"
        );
    }

    #[test]
    fn fp_kernel_stays_normal_over_long_runs() {
        // Converges to a fixed point: the result after 10^4 passes is finite and normal.
        let f = fp_kernel(&fp_inputs(3), FP_K, 10_000, 1e6);
        assert!(f.is_normal(), "{f}");
    }

    #[test]
    fn one_pass_matches_a_hand_computation() {
        let mut inputs = [0i64; INPUTS];
        inputs[0] = 2;
        let mut r = 1i64;
        for &x in &inputs {
            r = ((((((r + x) * 3 - x) * 5 + 7) * x) - 11) * 5).wrapping_mul(1);
        }
        assert_eq!(int_kernel(&inputs, INT_K, 1, 1), r);
    }
}
