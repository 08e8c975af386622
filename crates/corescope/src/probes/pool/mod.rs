//! `pool`: the pthread-pool runtime of seed 000 §7 (crate `taskpool`), its two
//! experiments, with rayon's work stealing as today's reference in the same run.
//!
//! - FFT (Figure 15): recursive radix-2, every butterfly stage a family of tiny
//!   threads (no block limit: a worker per butterfly, as the seed), sizes 2^1 … 2^S,
//!   on the mutex free list, the lock-free free list (with its failed-CAS count) and
//!   rayon. A size whose predecessor took more than a third of the case budget is not
//!   started: "gave up", as the seed's "-give up-". A size that starts is stopped at
//!   its deadline (the case budget, or the probe's, whichever ends first): the
//!   deadline is checked before every family (`taskpool::Executor::Until`), the
//!   families not yet started are abandoned, and the table `fft given up` records how
//!   many ran (seed 000's FFT went from 1.9 s at size 4 to 1,071 s at size 5 on the
//!   T3-4: a size must not be able to overrun).
//! - The pool's thread cap (`pool_max_threads` in the run file): taskpool's default
//!   of 256, raised to the number of allowed CPUs on larger machines, lowered to what
//!   the OS lets this process create.
//! - FFT with a sequential cutoff: one size, taskpool (block = CPUs) and rayon at
//!   every cutoff, and one thread alone.
//! - Recursive block matmul (Figure 16): 8 sub-products + 4 additions per level,
//!   k = 1 … K levels (8^k leaf tasks), on taskpool (mutex free list) and rayon.
//!
//! Repetition is the runner's: every case times one run (short transforms are
//! repeated until a sample lasts [`MIN_SAMPLE_S`] and reported per call). The
//! runtimes of one FFT size, the cutoffs of the cutoff comparison and the (runtime,
//! k) pairs of one matrix order are variants of one group, so they run interleaved
//! in rotated rounds. Two systems are compared best against best (each at its own
//! best cutoff or k), paired by round, and a difference is stated only when its
//! interval excludes 1.

mod analysis;
mod cost;
pub mod error;
mod limits;
mod measure;
mod runtime;

pub use limits::{
    bound_stop, kernel_max_threads, pool_max_threads, uncapped_bound, uncapped_max_log2, Limits,
    UNCAPPED_SPAN,
};
pub use measure::{warmup_order, CHECKED_ENTRIES, CHECK_FFT_MAX_LOG2, FFT_TOLERANCE, MIN_SAMPLE_S};

use crate::model::{Measurement, ProbeResult, Sensitivity};
use crate::probes::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::probes::{MIN_COMPARED_ROUNDS, TARGET_REL_HALF_WIDTH};
use measure::{clear_fft_times, fft_time_s, run_fft, run_fft_cutoff, run_rmatmul, set_fft_time_s};
use runtime::{counted_run, Exec};
use serde::Serialize;

/// Smallest leaf block of the recursive matmul.
pub const MIN_LEAF: usize = 8;
/// Sequential cutoffs (points) of the `fft-cutoff` comparison.
pub const FFT_CUTOFFS: [usize; 5] = [1, 16, 64, 256, 1024];

/// Rounds of the FFT sizes below the largest: the curve of Figure 15, not compared.
const SWEEP_ROUNDS: Rounds = Rounds {
    min: 5,
    max: 5,
    warmup: true,
    target_rel_half_width: TARGET_REL_HALF_WIDTH,
};

/// Rounds of a compared group: enough pairs for the signed-rank test, and a few more
/// while intervals are wide (capped so the default suite keeps its time).
const COMPARED_ROUNDS: Rounds = Rounds {
    min: MIN_COMPARED_ROUNDS,
    max: MIN_COMPARED_ROUNDS + 5,
    warmup: true,
    target_rel_half_width: TARGET_REL_HALF_WIDTH,
};

/// `rounds` for this profile: the quick profile runs the minimum only (its suite must
/// stay under a minute), the others add rounds while intervals are wide. (Shared by
/// pool, matmul, workload and false-sharing; a candidate for `probes::Rounds`.)
pub fn rounds_for(profile: crate::model::Profile, rounds: Rounds) -> Rounds {
    match profile {
        crate::model::Profile::Quick => Rounds {
            max: rounds.min,
            ..rounds
        },
        _ => rounds,
    }
}

/// The probe.
pub struct PoolProbe;

#[derive(Debug, Clone, Serialize)]
pub enum CaseParams {
    Fft {
        exec: Exec,
        log2: u32,
        case_budget_s: f64,
        max_threads: usize,
        /// Idle workers kept (the uncapped mode keeps the capped mode's cap).
        max_idle: usize,
        /// The uncapped mode's bound, why it is what it is.
        bound: Option<String>,
    },
    /// One FFT size with a sequential cutoff, taskpool (block = CPUs), rayon, or one
    /// thread alone (cutoff ignored).
    FftCutoff {
        exec: Exec,
        log2: u32,
        cutoff: usize,
        max_threads: usize,
    },
    Rmatmul {
        exec: Exec,
        order: usize,
        levels: u32,
        max_threads: usize,
    },
}

/// The FFT cases: every size on every executor (the uncapped ones up to
/// [`uncapped_max_log2`]), a compared group per size.
fn fft_cases(
    ctx: &PlanCtx,
    (max_log2, case_budget_s): (u32, f64),
    max_threads: usize,
    (bound, bound_why): (usize, &str),
) -> Vec<Case<CaseParams>> {
    let mut cases = Vec::new();
    for log2 in 1..=max_log2 {
        let group = format!("fft 2^{log2}");
        let rounds = if log2 == max_log2 {
            COMPARED_ROUNDS
        } else {
            SWEEP_ROUNDS
        };
        for exec in Exec::FFT {
            let uncapped = matches!(exec, Exec::MutexUncapped | Exec::LockfreeUncapped);
            if uncapped && log2 > uncapped_max_log2(max_threads) {
                continue;
            }
            let params = CaseParams::Fft {
                exec,
                log2,
                case_budget_s,
                max_threads: if uncapped { bound } else { max_threads },
                max_idle: max_threads.min(if uncapped { bound } else { max_threads }),
                bound: uncapped.then(|| bound_why.to_string()),
            };
            cases.push(
                Case::new(format!("fft 2^{log2} {}", exec.name()), &params)
                    .compared(&group, exec.name(), exec.name())
                    .with_rounds(rounds_for(ctx.profile, rounds)),
            );
        }
    }
    cases
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "pool";

impl Probe for PoolProbe {
    type Params = CaseParams;
    type Facts = ();

    /// [`cost_run_s`].
    /// Summary: taskpool against rayon.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Comparison {
            picks: &[crate::model::Sides::Between("taskpool", "rayon")],
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(cost::cost_run_s(c, p))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "pthread pool with SVP families: FFT of tiny threads and recursive matmul, vs rayon"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[
            Sensitivity::CoreThroughput,
            Sensitivity::PageSize,
            Sensitivity::CrossCpu,
        ]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        clear_fft_times();
        let max_log2: u32 = ctx.profile.pick(10, 14, 16);
        // One order by default: every (runtime, k) pair now runs at least
        // MIN_COMPARED_ROUNDS times, interleaved, where it ran once before.
        let orders: Vec<usize> = ctx.profile.pick(vec![256], vec![512], vec![1024, 2048]);
        let max_levels: u32 = ctx.profile.pick(3, 4, 5);
        let case_budget_s = (ctx.budget_s / 8.0).max(1.0);
        let max_threads = pool_max_threads(ctx.cpus());
        let kernel_threads = kernel_max_threads(ctx.cpus());
        let (bound, bound_why) = uncapped_bound(
            crate::harness::team::thread_capacity(),
            crate::memguard::available().as_ref(),
        );
        let cutoff_log2 = max_log2.min(12);
        let mut cases = fft_cases(
            ctx,
            (max_log2, case_budget_s),
            max_threads,
            (bound, &bound_why),
        );
        let group = format!("fft 2^{cutoff_log2} with cutoffs");
        let seq = CaseParams::FftCutoff {
            exec: Exec::Sequential,
            log2: cutoff_log2,
            cutoff: 0,
            max_threads,
        };
        cases.push(
            Case::new(format!("fft 2^{cutoff_log2} one thread"), &seq)
                .compared(&group, "sequential", "sequential")
                .with_rounds(rounds_for(ctx.profile, COMPARED_ROUNDS)),
        );
        let threads_of = |exec: Exec| match exec {
            Exec::MutexPerCpu => kernel_threads,
            _ => max_threads,
        };
        for cutoff in FFT_CUTOFFS {
            for exec in Exec::KERNELS {
                let v = format!("{} cutoff {cutoff}", exec.runtime());
                let params = CaseParams::FftCutoff {
                    exec,
                    log2: cutoff_log2,
                    cutoff,
                    max_threads: threads_of(exec),
                };
                cases.push(
                    Case::new(format!("fft 2^{cutoff_log2} {v}"), &params)
                        .compared(&group, &v, &v)
                        .with_rounds(rounds_for(ctx.profile, COMPARED_ROUNDS)),
                );
            }
        }
        for &order in &orders {
            let group = format!("rmatmul N = {order}");
            for exec in Exec::KERNELS {
                for levels in 1..=max_levels {
                    if order % (1 << levels) != 0 || order >> levels < MIN_LEAF {
                        break;
                    }
                    let v = format!("{} k = {levels}", exec.runtime());
                    let params = CaseParams::Rmatmul {
                        exec,
                        order,
                        levels,
                        max_threads: threads_of(exec),
                    };
                    cases.push(
                        Case::new(format!("rmatmul N = {order} {v}"), &params)
                            .compared(&group, &v, &v)
                            .with_rounds(rounds_for(ctx.profile, COMPARED_ROUNDS)),
                    );
                }
            }
        }
        Ok(Plan::new(cases)
        .param("fft_max_log2", max_log2)
        .param("rmatmul_orders", &orders)
        .param("rmatmul_max_levels", max_levels)
        .param("case_budget_s", case_budget_s)
        .param("pool_max_threads", max_threads)
        .param("kernel_max_threads", kernel_threads)
        .param(
            "kernel_max_threads_rule",
            "taskpool's second setting in the FFT-with-cutoff and rmatmul runs against rayon: one \
             thread per allowed CPU counting the creator (CPUs − 1 workers), as rayon's pool; each \
             comparison takes taskpool's better setting (this or pool_max_threads)",
        )
        .param("fft_uncapped_bound", bound)
        .param("fft_uncapped_max_log2", uncapped_max_log2(max_threads).min(max_log2))
        .param(
            "fft_uncapped_bound_rule",
            format!(
                "the seed's mode (a new pthread whenever the pool is empty; idle workers beyond \
                 pool_max_threads exit), bounded by {bound_why}; a size that reaches the bound stops; sizes up to \
                 {UNCAPPED_SPAN}× pool_max_threads points (the suite's time)"
            ),
        )
        .param(
            "pool_max_threads_rule",
            "taskpool's default (256), at least the allowed CPUs, at most what the OS lets this process create",
        )
        .param(
            "case_deadline",
            "every taskpool and rayon kernel checks its deadline (case budget or probe budget) before each family and abandons the rest",
        )
        .param("fft_block", "0 (a worker per butterfly, as seed 000)")
        .param("fft_cutoff_log2", cutoff_log2)
        .param("fft_cutoff_points", FFT_CUTOFFS)
        .param("fft_cutoff_block", "number of allowed CPUs")
        .param("min_sample_s", MIN_SAMPLE_S)
        .param(
            "repetitions",
            "runner rounds, variants of one size / order interleaved (see rounds_min / rounds_max)",
        )
        .param("rayon_threads", rayon::current_num_threads()))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        match case.params.clone() {
            CaseParams::Fft {
                exec,
                log2,
                case_budget_s,
                max_threads,
                max_idle,
                bound,
            } => {
                let (d, below) = (ctx.deadline, fft_time_s(exec, log2.saturating_sub(1)));
                let limits = Limits {
                    max_threads,
                    max_idle,
                    bound_why: bound,
                };
                let r = counted_run((exec, max_threads), ctx, |c| {
                    run_fft(exec, (log2, below), case_budget_s, (&limits, d), c)
                });
                r.map(|(m, secs)| {
                    set_fft_time_s(exec, log2, secs);
                    m
                })
            }
            CaseParams::FftCutoff {
                exec,
                log2,
                cutoff,
                max_threads,
            } => {
                let (cpus, d) = (ctx.plan.topo.allowed_count().max(1), ctx.deadline);
                counted_run((exec, max_threads), ctx, |c| {
                    run_fft_cutoff(exec, log2, cutoff, cpus, (max_threads, d), c)
                })
            }
            CaseParams::Rmatmul {
                exec,
                order,
                levels,
                max_threads,
            } => {
                let d = ctx.deadline;
                counted_run((exec, max_threads), ctx, |c| {
                    run_rmatmul(exec, order, levels, (max_threads, d), c)
                })
            }
        }
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        // The runtimes each at its best first (what a user of either asks), then
        // seed 000's FFT of a worker per butterfly, whose taskpool-against-rayon
        // ratio is the cost of a thread per butterfly, not of the pool.
        let mut found = analysis::cutoff_findings(result);
        found.extend(analysis::rmatmul_findings(result, ctx.cpus()));
        found.extend(analysis::fft_findings(result));
        found.extend(analysis::uncapped_findings(result));
        let (gave_up, how_far) = analysis::given_up(result);
        found.extend(how_far);
        let mut out = Analysis::findings(found);
        out.params
            .extend(gave_up.map(|v| ("fft_gave_up".to_string(), v)));
        out
    }
}
