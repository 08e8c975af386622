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

use super::{Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::counters::SharedCounters;
use crate::model::{Finding, Measurement, Point, ProbeResult, Table};
use crate::probes::{MIN_COMPARED_ROUNDS, TARGET_REL_HALF_WIDTH};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;
use taskpool::fft::{dft_reference, fft, fft_with_cutoff, max_abs_error, test_signal, Complex};
use taskpool::matmul::{rmatmul, Matrix};
use taskpool::{Executor, FreeList, Pool, PoolConfig, Stop};

/// Sizes up to this are checked against the direct DFT.
pub const CHECK_FFT_MAX_LOG2: u32 = 10;
/// Largest FFT error accepted against the direct DFT.
pub const FFT_TOLERANCE: f64 = 1e-6;
/// Smallest leaf block of the recursive matmul.
pub const MIN_LEAF: usize = 8;
/// A sample of a short transform repeats it until it lasts this long (the time per
/// call is the sample), so timer resolution and wake-up costs stay small.
pub const MIN_SAMPLE_S: f64 = 0.002;
/// Entries of each rmatmul product checked against a dot product, every run.
pub const CHECKED_ENTRIES: usize = 16;
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

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Exec {
    Mutex,
    Lockfree,
    /// The mutex free list without the cap: a new pthread whenever the pool is
    /// empty (seed 000 §7.1), up to the safety bound.
    #[serde(rename = "mutex-uncapped")]
    MutexUncapped,
    /// The lock-free free list without the cap.
    #[serde(rename = "lockfree-uncapped")]
    LockfreeUncapped,
    Rayon,
    Sequential,
}

impl Exec {
    fn name(self) -> &'static str {
        match self {
            Exec::Mutex => "mutex",
            Exec::Lockfree => "lockfree",
            Exec::MutexUncapped => "mutex-uncapped",
            Exec::LockfreeUncapped => "lockfree-uncapped",
            Exec::Rayon => "rayon",
            Exec::Sequential => "sequential",
        }
    }

    /// Name in the cutoff and matmul comparisons (taskpool runs the mutex free list).
    fn runtime(self) -> &'static str {
        match self {
            Exec::Mutex | Exec::Lockfree | Exec::MutexUncapped | Exec::LockfreeUncapped => {
                "taskpool"
            }
            other => other.name(),
        }
    }

    /// The FFT executors: the two free lists capped, rayon, and the two free lists
    /// uncapped (the seed's mode), measured interleaved.
    const FFT: [Exec; 5] = [
        Exec::Mutex,
        Exec::Lockfree,
        Exec::Rayon,
        Exec::MutexUncapped,
        Exec::LockfreeUncapped,
    ];
}

/// The uncapped mode runs the FFT sizes whose transform asks for at most this many
/// times the capped pool's workers (about 2^size with a worker per butterfly): there
/// it already differs from the capped pool, and every call starts the workers beyond
/// the cap again, so larger sizes would cost the default suite its time bound
/// (thousands of thread creations per call).
pub const UNCAPPED_SPAN: usize = 2;

/// The largest FFT size (log2) the uncapped mode runs with a cap of `max_threads`.
pub fn uncapped_max_log2(max_threads: usize) -> u32 {
    UNCAPPED_SPAN.saturating_mul(max_threads).max(1).ilog2()
}

/// How many live workers a taskpool run may have: the capped mode's cap, or the
/// uncapped mode's safety bound with its reason (the seed's pool starts a thread
/// whenever it is empty; only idle workers beyond `max_idle` exit, the seed's
/// "maximum pool size").
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Most live worker threads.
    pub max_threads: usize,
    /// Most idle worker threads kept.
    pub max_idle: usize,
    /// For the uncapped mode: what bounds it (reaching it stops the size).
    pub bound_why: Option<String>,
}

impl Limits {
    /// The capped mode: `max_threads` live workers, every one kept when idle.
    pub fn capped(max_threads: usize) -> Self {
        Self {
            max_threads,
            max_idle: max_threads,
            bound_why: None,
        }
    }
}

/// The uncapped mode's safety bound on live workers: the harness's thread limit
/// (`capacity`, from [`crate::harness::team::thread_capacity`]: the OS limits and
/// available memory for stacks), the memory guard's share of the available memory
/// for every worker's whole stack ([`taskpool::DEFAULT_STACK_SIZE_BYTES`] each, as
/// if fully touched), and taskpool's own slot limit; the smallest wins, with its
/// reason. Unknown available memory keeps the capped mode's default.
pub fn uncapped_bound(
    (capacity, capacity_why): (usize, &str),
    available: Option<&crate::memguard::Available>,
) -> (usize, String) {
    let stack = taskpool::DEFAULT_STACK_SIZE_BYTES as u64;
    let memory = match available {
        Some(a) => (
            ((a.bytes as f64 * crate::memguard::USABLE_FRACTION) as u64 / stack) as usize,
            format!(
                "the memory guard: {:.0} % of {} available ({}) for {} stacks",
                crate::memguard::USABLE_FRACTION * 100.0,
                crate::memguard::human(a.bytes),
                a.source,
                crate::memguard::human(stack)
            ),
        ),
        None => (
            taskpool::DEFAULT_MAX_THREADS,
            "available memory unknown: taskpool's default cap".to_string(),
        ),
    };
    let limits = [
        memory,
        (
            capacity,
            format!("the harness's thread limit ({capacity_why})"),
        ),
        (
            taskpool::MAX_THREADS_LIMIT,
            "taskpool's slot limit".to_string(),
        ),
    ];
    let (n, why) = limits
        .into_iter()
        .min_by_key(|l| l.0)
        .unwrap_or((1, String::new()));
    (n.max(1), why)
}

/// Why an uncapped run stops: it wanted a worker beyond its safety bound (no idle
/// worker, the bound reached, or `pthread_create` refused), where the seed's pool
/// would have started another pthread. `None` for a capped run (its cap is the
/// mode) or one that stayed within the bound.
pub fn bound_stop(stats: &taskpool::PoolStats, limits: &Limits) -> Option<String> {
    let why = limits.bound_why.as_deref()?;
    (stats.worker_shortfalls > 0 || stats.spawn_failures > 0).then(|| {
        format!(
            "stopped at the safety bound: it wanted more than {} live threads ({why}), \
             where the seed's pool would start another pthread",
            limits.max_threads
        )
    })
}

#[derive(Debug, Clone, Serialize)]
enum CaseParams {
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

/// The pool's thread cap on this machine: taskpool's default, at least one worker per
/// allowed CPU, and no more than the OS lets this process create.
pub fn pool_max_threads(cpus: usize) -> usize {
    let (capacity, _) = crate::harness::team::thread_capacity();
    taskpool::DEFAULT_MAX_THREADS
        .max(cpus)
        .min(capacity.max(1))
        .min(taskpool::MAX_THREADS_LIMIT)
}

/// How far a kernel got before its deadline, in words.
fn progress(stop: &Stop) -> String {
    format!(
        "stopped at its deadline after {} families; {} abandoned",
        stop.families_run(),
        stop.families_abandoned()
    )
}

thread_local! {
    /// Per FFT executor and size, the latest time per call in this run
    /// (`f64::INFINITY` for a size stopped at its deadline or given up): the next
    /// size looks at the one below it, whenever it runs (the epochs of a run
    /// measure every size again, minutes later). `plan` clears it.
    static FFT_TIMES_S: RefCell<Vec<(Exec, u32, f64)>> = const { RefCell::new(Vec::new()) };
}

/// The latest time per call of `exec` at size `log2` (0 before any).
fn fft_time_s(exec: Exec, log2: u32) -> f64 {
    FFT_TIMES_S.with(|l| {
        l.borrow()
            .iter()
            .find(|(e, k, _)| *e == exec && *k == log2)
            .map_or(0.0, |x| x.2)
    })
}

fn set_fft_time_s(exec: Exec, log2: u32, secs: f64) {
    FFT_TIMES_S.with(|l| {
        let mut l = l.borrow_mut();
        l.retain(|(e, k, _)| !(*e == exec && *k == log2));
        l.push((exec, log2, secs));
    });
}

/// Time of one call of `f`, or the mean over as many calls as make the sample last
/// [`MIN_SAMPLE_S`]. The first error stops it.
fn time_per_call<E: ToString>(mut f: impl FnMut() -> Result<(), E>) -> Result<f64, ProbeError> {
    let t0 = Instant::now();
    let mut calls = 0u32;
    loop {
        f().map_err(|e| ProbeError::Failed(e.to_string()))?;
        calls += 1;
        let s = t0.elapsed().as_secs_f64();
        if s >= MIN_SAMPLE_S {
            return Ok(s / calls as f64);
        }
    }
}

/// The FFT cases: every size on every executor (the uncapped ones up to
/// [`uncapped_max_log2`]), a compared group per size.
fn fft_cases(
    ctx: &PlanCtx,
    (max_log2, case_budget_s): (u32, f64),
    max_threads: usize,
    (bound, bound_why): (usize, &str),
) -> Vec<Case> {
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

/// Every new worker joins `counted` first (its software, and where the PMU allows,
/// hardware counters; `counters::SharedCounters`).
fn new_pool(
    free_list: FreeList,
    limits: &Limits,
    counted: &Arc<SharedCounters>,
) -> Result<Pool, ProbeError> {
    let c = Arc::clone(counted);
    let hook: taskpool::WorkerStartHook = Arc::new(move || c.join_this_thread(false));
    Pool::with_worker_start(
        PoolConfig::new(free_list)
            .with_max_threads(limits.max_threads)
            .with_max_idle(limits.max_idle.min(limits.max_threads)),
        hook,
    )
    .map_err(|e| ProbeError::Failed(format!("taskpool: {e}")))
}

/// A pool for the executor (none for rayon and one thread).
fn pool_for(
    exec: Exec,
    limits: &Limits,
    counted: &Arc<SharedCounters>,
) -> Result<Option<Pool>, ProbeError> {
    Ok(match exec {
        Exec::Mutex | Exec::MutexUncapped => Some(new_pool(FreeList::Mutex, limits, counted)?),
        Exec::Lockfree | Exec::LockfreeUncapped => {
            Some(new_pool(FreeList::LockFree, limits, counted)?)
        }
        Exec::Rayon | Exec::Sequential => None,
    })
}

/// Runs `f` with the threads of one run counted: the calling thread (it runs work
/// too) joins at once, taskpool's workers from their start hook, and rayon's from
/// the start handler of a pool of as many threads as the global one, in which `f`
/// runs (the global pool's threads started before anything could count them).
/// `f` starts and stops the counters around its timed part.
/// More threads than the file descriptors left allow are not counted (and the
/// counters say why).
fn counted_run<T: Send>(
    (exec, max_threads): (Exec, usize),
    ctx: &mut RunCtx,
    f: impl FnOnce(&Arc<SharedCounters>) -> Result<T, ProbeError> + Send,
) -> Result<T, ProbeError> {
    let counted = Arc::new(SharedCounters::default());
    let threads = 1 + match exec {
        Exec::Rayon => rayon::current_num_threads(),
        Exec::Mutex | Exec::Lockfree | Exec::MutexUncapped | Exec::LockfreeUncapped => max_threads,
        Exec::Sequential => 0,
    };
    if let Err(why) = crate::counters::descriptors_allow(threads) {
        counted.refuse(why);
    }
    counted.join_this_thread(false);
    let out = if exec == Exec::Rayon {
        let c = Arc::clone(&counted);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .start_handler(move |_| c.join_this_thread(false))
            .build()
            .map_err(|e| ProbeError::Failed(format!("rayon: {e}")))?;
        pool.install(|| f(&counted))
    } else {
        f(&counted)
    };
    let (team, errors) = counted.finish();
    ctx.counted.extend(team);
    for e in errors {
        if !ctx.warnings.contains(&e) {
            ctx.warnings.push(e);
        }
    }
    out
}

fn executor(exec: Exec, pool: Option<&Pool>, block: usize) -> Executor<'_> {
    match (exec, pool) {
        (Exec::Sequential, _) => Executor::Sequential,
        (_, Some(pool)) => Executor::TaskPool { pool, block },
        (_, None) => Executor::Rayon,
    }
}

/// The model's price of one tiny FFT task (`corescope plan`), in dependent integer
/// ops: an FFT of 2^k points as 2^k · k tasks. Fitted on the reference runs.
const COST_OPS_PER_FFT_TASK: f64 = 800.0;
/// The model's price of recursive matmul per n³, in dependent integer ops.
const COST_OPS_PER_RMATMUL_N3: f64 = 1.0;

/// Workers a pool run starts: taskpool starts its pthreads on demand in every run
/// (a new pool per run, its workers counted from their start hook), as many as
/// its families ask for at once up to its cap (a worker per butterfly: about the
/// points of the FFT; `block` = CPUs with a cutoff; 8^k leaf products); rayon
/// builds a counted pool of one thread per CPU; one thread alone starts none.
fn cost_workers(c: &crate::probes::cost::Cost, exec: &str) -> f64 {
    let demand = if let Some(levels) = c.num("levels") {
        8f64.powf(levels)
    } else if c.has("cutoff") {
        c.cpus_f()
    } else {
        2f64.powf(c.num("log2").unwrap_or(1.0))
    };
    match exec {
        "sequential" => 0.0,
        "rayon" => c.cpus_f(),
        _ => demand.min(c.num("max_threads").unwrap_or(demand)),
    }
}

/// Seconds of one run (`corescope plan`): the workers it starts, then the timed
/// product (and its untimed warm-up on a quarter of the order) or the FFT calls
/// until the sample lasts [`MIN_SAMPLE_S`].
fn cost_run_s(c: &crate::probes::cost::Cost) -> Option<f64> {
    let op = c.op_s();
    let cpus = c.cpus_f();
    let exec = c.text("exec");
    // The uncapped mode: the workers it starts on demand. The capped runs keep the
    // model fitted on the reference runs (a worker per CPU): pricing their on-demand
    // workers the same way would be more honest, but puts the default suite of a
    // 2048-strand machine over its ten minutes (pool would then need to scale down
    // there first; see docs/pool.md).
    let workers = if exec.ends_with("-uncapped") {
        cost_workers(c, exec)
    } else {
        cpus.min(256.0)
    };
    let start = c.spawn_s(workers);
    if let Some(order) = c.num("order") {
        return Some(
            (order.powi(3) * (1.0 + 1.0 / 64.0) * COST_OPS_PER_RMATMUL_N3 * op / cpus)
                .max(MIN_SAMPLE_S)
                + start,
        );
    }
    let log2 = c.num("log2")?;
    let tasks = 2f64.powf(log2) * log2;
    let threads = if exec == "sequential" { 1.0 } else { cpus };
    // The uncapped mode keeps only `max_idle` idle workers: the others exit after
    // every call and start again in the next.
    let churn = c.spawn_s((workers - c.num("max_idle").unwrap_or(workers)).max(0.0));
    let call = tasks * COST_OPS_PER_FFT_TASK * op / threads + churn;
    // The untimed warm-up call, then calls until the sample lasts the floor.
    let warm_up = if c.has("cutoff") { 0.0 } else { call };
    Some(warm_up + call.max(MIN_SAMPLE_S) + start)
}

impl Probe for PoolProbe {
    /// [`cost_run_s`].
    /// Summary: taskpool against rayon.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Comparison {
            picks: &[crate::model::Sides::Between("taskpool", "rayon")],
        }
    }
    fn run_cost_s(&self, c: &crate::probes::cost::Cost) -> Option<f64> {
        cost_run_s(c)
    }

    fn id(&self) -> &'static str {
        "pool"
    }

    fn title(&self) -> &'static str {
        "pthread pool with SVP families: FFT of tiny threads and recursive matmul, vs rayon"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        FFT_TIMES_S.with(|l| l.borrow_mut().clear());
        let max_log2: u32 = ctx.profile.pick(10, 14, 16);
        // One order by default: every (runtime, k) pair now runs at least
        // MIN_COMPARED_ROUNDS times, interleaved, where it ran once before.
        let orders: Vec<usize> = ctx.profile.pick(vec![256], vec![512], vec![1024, 2048]);
        let max_levels: u32 = ctx.profile.pick(3, 4, 5);
        let case_budget_s = (ctx.budget_s / 8.0).max(1.0);
        let max_threads = pool_max_threads(ctx.cpus());
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
        for cutoff in FFT_CUTOFFS {
            for exec in [Exec::Mutex, Exec::Rayon] {
                let v = format!("{} cutoff {cutoff}", exec.runtime());
                let params = CaseParams::FftCutoff {
                    exec,
                    log2: cutoff_log2,
                    cutoff,
                    max_threads,
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
            for exec in [Exec::Mutex, Exec::Rayon] {
                for levels in 1..=max_levels {
                    if order % (1 << levels) != 0 || order >> levels < MIN_LEAF {
                        break;
                    }
                    let v = format!("{} k = {levels}", exec.runtime());
                    let params = CaseParams::Rmatmul {
                        exec,
                        order,
                        levels,
                        max_threads,
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

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        match case.typed()? {
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

    fn finish(&self, result: &mut ProbeResult, _plan: &Plan, ctx: &PlanCtx) {
        FFT_TIMES_S.with(|l| l.borrow_mut().clear());
        let mut found = fft_findings(result);
        found.extend(uncapped_findings(result));
        found.extend(cutoff_findings(result));
        found.extend(rmatmul_findings(result, ctx.cpus()));
        found.extend(given_up(result));
        result.findings.extend(found);
    }
}

/// How far each FFT executor got: the sizes it gave up (not started, or stopped at
/// the deadline) into the parameter `fft_gave_up`, and one finding per executor.
fn given_up(result: &mut ProbeResult) -> Vec<Finding> {
    let mut rows: Vec<(u64, String, String)> = Vec::new();
    for t in result.tables.iter().filter(|t| t.name == "fft given up") {
        for r in &t.rows {
            if let (Some(size), Some(exec), Some(how)) = (
                r.first().and_then(|v| v.as_u64()),
                r.get(1).and_then(|v| v.as_str()),
                r.get(2).and_then(|v| v.as_str()),
            ) {
                rows.push((size, exec.to_string(), how.to_string()));
            }
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    rows.sort();
    result.params.insert(
        "fft_gave_up".into(),
        serde_json::json!(rows
            .iter()
            .map(
                |(size, exec, how)| serde_json::json!({"exec": exec, "size_log2": size, "how": how})
            )
            .collect::<Vec<_>>()),
    );
    let mut out = Vec::new();
    for exec in Exec::FFT.map(Exec::name) {
        if let Some((size, _, how)) = rows.iter().find(|r| r.1 == exec) {
            out.push(Finding::Note {
                text: format!(
                    "fft/{exec}: sizes up to 2^{} measured; {} at 2^{size} ({how})",
                    size.saturating_sub(1),
                    if how.contains("deadline") || how.contains("bound") {
                        "stopped"
                    } else {
                        "gave up"
                    }
                ),
            });
        }
    }
    out
}

/// The table row and warning of an FFT size given up (not started, or stopped at its
/// deadline).
fn fft_given_up(m: &mut Measurement, exec: Exec, log2: u32, how: String) {
    m.tables.push(Table {
        name: "fft given up".into(),
        columns: vec!["size_log2".into(), "free list".into(), "time".into()],
        rows: vec![vec![
            serde_json::json!(log2),
            serde_json::json!(exec.name()),
            serde_json::json!(format!("gave up: {how}")),
        ]],
    });
    m.warnings
        .push(format!("fft/{} gave up at size {log2}: {how}", exec.name()));
}

/// One FFT size on one executor (a worker per butterfly), unless the size below
/// took more than a third of the case budget (`below_s`, its latest time per call:
/// 0 when not measured, infinite when it was stopped or given up); stopped at the
/// case's deadline (the case budget or the probe's deadline, whichever comes
/// first). The measurement and this size's time per call, for the size above.
fn run_fft(
    exec: Exec,
    (log2, below_s): (u32, f64),
    case_budget_s: f64,
    (limits, probe_deadline): (&Limits, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<(Measurement, f64), ProbeError> {
    let mut m = Measurement::default();
    if below_s > case_budget_s / 3.0 {
        let how = if below_s.is_finite() {
            format!(
                "size {} took {below_s:.2} s of a {case_budget_s:.0} s case budget",
                log2 - 1
            )
        } else {
            format!(
                "size {} was stopped (at its deadline or its thread bound) or not run",
                log2 - 1
            )
        };
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    let pool = pool_for(exec, limits, counted)?;
    let inner = executor(exec, pool.as_ref(), 0);
    let case_end = Instant::now() + std::time::Duration::from_secs_f64(case_budget_s);
    let stop = Stop::at(probe_deadline.min(case_end));
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    let n = 1usize << log2;
    let input = test_signal(n);
    let mut output = vec![Complex::default(); n];
    // One untimed call: wakes the pool's workers and gives the result to check.
    fft(ex, &input, &mut output).map_err(|e| ProbeError::Failed(format!("fft: {e}")))?;
    // The uncapped mode stops where it would pass its bound (the warm-up call does
    // the same work as a timed one).
    if let Some(how) = pool.as_ref().and_then(|p| bound_stop(&p.stats(), limits)) {
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    let mut calls = 0u32;
    let timed = if stop.stopped() {
        None
    } else {
        if log2 <= CHECK_FFT_MAX_LOG2 {
            let e = max_abs_error(&output, &dft_reference(&input));
            if e > FFT_TOLERANCE {
                return Err(ProbeError::Failed(format!(
                    "fft size {log2}: error {e} against the direct DFT"
                )));
            }
        }
        if let Some(p) = &pool {
            p.reset_stats();
        }
        counted.start();
        let r = time_per_call(|| {
            calls += 1;
            fft(ex, &input, &mut output).map_err(|e| format!("fft: {e}"))?;
            if stop.stopped() {
                return Err("stopped".to_string());
            }
            Ok(())
        });
        counted.stop();
        match r {
            Err(_) if stop.stopped() => None,
            other => Some(other?),
        }
    };
    let Some(secs) = timed else {
        let how = progress(&stop);
        if Instant::now() >= probe_deadline {
            return Err(ProbeError::GaveUp(format!(
                "fft/{} size {log2}: {how}",
                exec.name()
            )));
        }
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    };
    m.points.push(Point::new(
        format!("fft/{}", exec.name()),
        "size_log2",
        log2 as f64,
        "seconds",
        secs,
    ));
    if let Some(how) = pool.as_ref().and_then(|p| bound_stop(&p.stats(), limits)) {
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    if let (Exec::Lockfree | Exec::LockfreeUncapped, Some(p)) = (exec, &pool) {
        m.points.push(Point::new(
            format!("fft-cas-retries/{}", exec.name()),
            "size_log2",
            log2 as f64,
            "failed_cas",
            p.stats().cas_failures as f64 / calls.max(1) as f64,
        ));
    }
    Ok((m, secs))
}

/// One FFT size with a sequential cutoff: below it the calling thread recurses
/// alone; above it taskpool makes families with block = CPUs (no worker per
/// butterfly) and rayon its tasks. The result must equal the sequential transform's
/// bit for bit.
fn run_fft_cutoff(
    exec: Exec,
    log2: u32,
    cutoff: usize,
    cpus: usize,
    (max_threads, deadline): (usize, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<Measurement, ProbeError> {
    let n = 1usize << log2;
    let input = test_signal(n);
    let mut reference = vec![Complex::default(); n];
    fft(Executor::Sequential, &input, &mut reference)
        .map_err(|e| ProbeError::Failed(format!("fft: {e}")))?;
    let (series, x_name, x) = if exec == Exec::Sequential {
        (format!("fft-sequential/{log2}"), "size_log2", log2 as f64)
    } else {
        (
            format!("fft-cutoff/{}", exec.runtime()),
            "cutoff_points",
            cutoff as f64,
        )
    };
    let pool = pool_for(exec, &Limits::capped(max_threads), counted)?;
    let inner = executor(exec, pool.as_ref(), cpus);
    let stop = Stop::at(deadline);
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    let mut output = vec![Complex::default(); n];
    counted.start();
    let secs = time_per_call(|| {
        if exec == Exec::Sequential {
            fft(inner, &input, &mut output)
        } else {
            fft_with_cutoff(ex, &input, &mut output, cutoff)
        }
        .map_err(|e| format!("fft: {e}"))?;
        if stop.stopped() {
            return Err(format!("{series}: {}", progress(&stop)));
        }
        Ok(())
    });
    counted.stop();
    let secs = secs.map_err(|e| match e {
        ProbeError::Failed(m) if stop.stopped() => ProbeError::GaveUp(m),
        other => other,
    })?;
    if output != reference {
        return Err(ProbeError::Failed(format!(
            "{series} cutoff {cutoff}: result differs from the sequential transform"
        )));
    }
    Ok(Measurement::points(vec![Point::new(
        series, x_name, x, "seconds", secs,
    )]))
}

/// One recursive matmul of order `order` with `levels` levels; a few entries of the
/// product are checked against dot products.
fn run_rmatmul(
    exec: Exec,
    order: usize,
    levels: u32,
    (max_threads, deadline): (usize, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<Measurement, ProbeError> {
    let pool = pool_for(exec, &Limits::capped(max_threads), counted)?;
    let inner = executor(exec, pool.as_ref(), 0);
    let stop = Stop::at(deadline);
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    // One untimed product with the same levels on a quarter of the order, as FFT's
    // untimed call: taskpool starts its workers on demand, so without it the timed
    // product would pay for taskpool's thread creation while rayon's threads exist
    // before the clock starts.
    let warm = warmup_order(order, levels);
    let (wa, wb) = (Matrix::test_matrix(warm, 1), Matrix::test_matrix(warm, 2));
    rmatmul(ex, &wa, &wb, &mut Matrix::zeros(warm), levels)
        .map_err(|e| ProbeError::Failed(format!("rmatmul (warm-up): {e}")))?;
    let (a, b) = (Matrix::test_matrix(order, 1), Matrix::test_matrix(order, 2));
    let mut c = Matrix::zeros(order);
    counted.start();
    let t0 = Instant::now();
    let r = rmatmul(ex, &a, &b, &mut c, levels);
    let secs = t0.elapsed().as_secs_f64();
    counted.stop();
    r.map_err(|e| ProbeError::Failed(format!("rmatmul: {e}")))?;
    if stop.stopped() {
        return Err(ProbeError::GaveUp(format!(
            "rmatmul N = {order}, k = {levels} on {}: {}",
            exec.runtime(),
            progress(&stop)
        )));
    }
    for e in 0..CHECKED_ENTRIES {
        let (i, j) = ((e * 7919) % order, (e * 104_729 + 3) % order);
        let want: f64 = (0..order).map(|k| a.get(i, k) * b.get(k, j)).sum();
        let d = (c.get(i, j) - want).abs();
        if d > 1e-6 * order as f64 {
            return Err(ProbeError::Failed(format!(
                "rmatmul N = {order}, k = {levels}: entry ({i}, {j}) differs from its dot product by {d}"
            )));
        }
    }
    Ok(Measurement::points(vec![Point::new(
        format!("rmatmul/{}/{order}", exec.runtime()),
        "levels",
        levels as f64,
        "seconds",
        secs,
    )]))
}

/// The order of rmatmul's untimed warm-up product: a quarter of `order` (1/64 of
/// the work), never below one element per leaf at `levels` levels.
pub fn warmup_order(order: usize, levels: u32) -> usize {
    (order / 4).max(1usize << levels.min(16))
}

/// The x with the smallest central value of a series (times: the best setting).
fn best_x(result: &ProbeResult, series: &str) -> Option<f64> {
    let s = result.series(series)?;
    s.x.iter()
        .zip(&s.y)
        .filter(|(_, y)| y.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(&x, _)| x)
}

/// FFT at the largest size every executor finished: the two free lists, and the
/// faster of them against rayon, paired by round; the lock-free list's failed CAS.
fn fft_findings(result: &ProbeResult) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(size) = ["fft/mutex", "fft/lockfree", "fft/rayon"]
        .iter()
        .map(|n| {
            result
                .series(n)
                .and_then(|s| s.x.iter().copied().reduce(f64::max))
        })
        .try_fold(f64::INFINITY, |m, x| x.map(|x| m.min(x)))
    else {
        return out;
    };
    let what = |s: &str| format!("fft 2^{size} (a worker per butterfly), time, {s}");
    out.extend(analysis::compare(
        result,
        &what("mutex vs lock-free free list"),
        "s",
        ("mutex free list", "fft/mutex", size),
        ("lock-free free list", "fft/lockfree", size),
        None,
    ));
    let faster = ["fft/mutex", "fft/lockfree"]
        .into_iter()
        .filter_map(|n| Some((n, result.estimate(n, size)?.value)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((name, _)) = faster {
        let label = if name == "fft/mutex" {
            "taskpool (mutex free list)"
        } else {
            "taskpool (lock-free free list)"
        };
        out.extend(analysis::compare(
            result,
            &what("taskpool vs rayon"),
            "s",
            (label, name, size),
            ("rayon", "fft/rayon", size),
            None,
        ));
    }
    if let Some(e) = result.estimate("fft-cas-retries/lockfree", size) {
        out.push(Finding::Value {
            what: format!("fft 2^{size}: failed CAS on the lock-free free list per transform"),
            unit: "failed_cas".into(),
            value: e,
            context: None,
        });
    }
    out
}

/// The seed's uncapped pool against the capped one, per free list, at the largest
/// size both measured (paired by round: they ran interleaved).
fn uncapped_findings(result: &ProbeResult) -> Vec<Finding> {
    let param = |k: &str| result.params.get(k).and_then(|v| v.as_u64());
    let (cap, bound) = (param("pool_max_threads"), param("fft_uncapped_bound"));
    let mut out = Vec::new();
    for (list, words) in [("mutex", "mutex"), ("lockfree", "lock-free")] {
        let (capped, uncapped) = (format!("fft/{list}"), format!("fft/{list}-uncapped"));
        let Some(size) = result.series(&uncapped).and_then(|s| {
            s.x.iter()
                .copied()
                .filter(|&x| result.estimate(&capped, x).is_some())
                .reduce(f64::max)
        }) else {
            continue;
        };
        let context = match (cap, bound) {
            (Some(c), Some(b)) => Some(format!(
                "capped: at most {c} live workers; uncapped: a new pthread whenever the pool is \
                 empty, up to the safety bound of {b}"
            )),
            _ => None,
        };
        out.extend(analysis::compare(
            result,
            &format!(
                "fft 2^{size} on the {words} free list, time, the seed's uncapped pool vs capped"
            ),
            "s",
            ("uncapped", &uncapped, size),
            ("capped", &capped, size),
            context,
        ));
    }
    out
}

/// FFT with a sequential cutoff: taskpool at its best cutoff against rayon at its
/// best, and the faster of them against one thread alone.
fn cutoff_findings(result: &ProbeResult) -> Vec<Finding> {
    let mut out = Vec::new();
    let size = result
        .params
        .get("fft_cutoff_log2")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let (Some(ct), Some(cr)) = (
        best_x(result, "fft-cutoff/taskpool"),
        best_x(result, "fft-cutoff/rayon"),
    ) else {
        return out;
    };
    let (lt, lr) = (
        format!("taskpool at cutoff {ct}"),
        format!("rayon at cutoff {cr}"),
    );
    out.extend(analysis::compare(
        result,
        &format!("fft 2^{size} with a sequential cutoff, time, each runtime at its best cutoff"),
        "s",
        (&lt, "fft-cutoff/taskpool", ct),
        (&lr, "fft-cutoff/rayon", cr),
        Some("taskpool: mutex free list, block = CPUs".into()),
    ));
    let faster = [
        ("fft-cutoff/taskpool", ct, &lt),
        ("fft-cutoff/rayon", cr, &lr),
    ]
    .into_iter()
    .filter_map(|(n, x, l)| Some((n, x, l, result.estimate(n, x)?.value)))
    .min_by(|a, b| a.3.total_cmp(&b.3));
    if let Some((name, x, label, _)) = faster {
        let seq = format!("fft-sequential/{size}");
        out.extend(analysis::compare(
            result,
            &format!("fft 2^{size}, time, the faster runtime vs one thread alone"),
            "s",
            ("one thread alone", &seq, size as f64),
            (label, name, x),
            None,
        ));
    }
    out
}

/// Recursive matmul per order: taskpool at its best k against rayon at its best k.
fn rmatmul_findings(result: &ProbeResult, cpus: usize) -> Vec<Finding> {
    let orders: Vec<String> = result
        .series
        .iter()
        .filter_map(|s| s.name.strip_prefix("rmatmul/taskpool/").map(String::from))
        .collect();
    let mut out = Vec::new();
    for order in orders {
        let (st, sr) = (
            format!("rmatmul/taskpool/{order}"),
            format!("rmatmul/rayon/{order}"),
        );
        let (Some(kt), Some(kr)) = (best_x(result, &st), best_x(result, &sr)) else {
            continue;
        };
        out.extend(analysis::compare(
            result,
            &format!("rmatmul N = {order}, time, each runtime at its best k"),
            "s",
            (&format!("taskpool at k = {kt}"), &st, kt),
            (&format!("rayon at k = {kr}"), &sr, kr),
            Some(format!(
                "8^k leaf tasks on {cpus} CPUs; taskpool: mutex free list"
            )),
        ));
        // At equal parameters, where the runtimes' overheads show most: the largest
        // k both ran (the most, smallest tasks).
        let k_max = result.series(&st).and_then(|t| {
            t.x.iter()
                .copied()
                .filter(|&k| result.estimate(&sr, k).is_some())
                .reduce(f64::max)
        });
        if let Some(k) = k_max.filter(|&k| k != kt || k != kr) {
            out.extend(analysis::compare(
                result,
                &format!(
                    "rmatmul N = {order}, time at equal k = {k} ({} leaf tasks)",
                    8f64.powf(k)
                ),
                "s",
                ("taskpool", &st, k),
                ("rayon", &sr, k),
                None,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmatmuls_warm_up_keeps_the_levels_on_a_quarter_of_the_order() {
        assert_eq!(warmup_order(512, 4), 128);
        assert_eq!(warmup_order(2048, 5), 512);
        // Never fewer elements than leaves along a side.
        assert_eq!(warmup_order(64, 5), 32);
        assert_eq!(warmup_order(8, 3), 8);
    }
    use crate::model::{Outcome, Status};

    #[test]
    fn the_workers_of_a_pool_run_are_counted_around_its_timed_part() {
        let c = Arc::new(SharedCounters::default());
        c.join_this_thread(false);
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        run_rmatmul(Exec::Mutex, 64, 2, (4, far), &c).unwrap();
        let (team, errors) = c.finish();
        assert!(errors.is_empty(), "{errors:?}");
        let team = team.expect("the calling thread joined");
        // The caller and the workers the pool started (up to 4).
        assert!(
            (1..=5).contains(&team.threads.len()),
            "{}",
            team.threads.len()
        );
        assert!(team.wall_ns > 0);
        if team.status.software == crate::counters::Availability::Counted {
            let total = team.total().expect("every thread read");
            assert!(total.task_clock_ns.is_some_and(|ns| ns > 0));
        }
    }

    #[test]
    fn a_running_fft_stops_at_its_deadline_and_says_how_far_it_got() {
        let c = Arc::new(SharedCounters::default());
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        // The case budget ends almost at once: the size is abandoned, not overrun.
        let (m, secs) =
            run_fft(Exec::Mutex, (12, 0.0), 1e-9, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.points.is_empty());
        assert!(secs.is_infinite());
        let row = &m.tables[0].rows[0];
        assert!(
            row[2]
                .as_str()
                .unwrap()
                .contains("stopped at its deadline after"),
            "{row:?}"
        );
        // The next size of that executor is not started, nor the one above it.
        let (m, secs) =
            run_fft(Exec::Mutex, (13, secs), 10.0, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.tables[0].rows[0][2]
            .as_str()
            .unwrap()
            .contains("was stopped"));
        assert!(secs.is_infinite());
        // A size below that took over a third of the case budget: given up too.
        let (m, _) = run_fft(Exec::Mutex, (13, 4.0), 10.0, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.tables[0].rows[0][2]
            .as_str()
            .unwrap()
            .contains("size 12 took 4.00 s"));
        // The probe's own deadline: the case gives up, saying how far it got.
        let e = run_fft(
            Exec::Rayon,
            (12, 0.0),
            10.0,
            (&Limits::capped(8), Instant::now()),
            &c,
        )
        .unwrap_err();
        assert!(
            matches!(&e, ProbeError::GaveUp(m) if m.contains("families")),
            "{e}"
        );
        let e = run_rmatmul(Exec::Mutex, 64, 2, (8, Instant::now()), &c).unwrap_err();
        assert!(
            matches!(&e, ProbeError::GaveUp(m) if m.contains("abandoned")),
            "{e}"
        );
        // Given-up sizes become a parameter and a finding.
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        let mut m = Measurement::default();
        fft_given_up(
            &mut m,
            Exec::Lockfree,
            14,
            "stopped at its deadline after 3 families; 9 abandoned".into(),
        );
        r.absorb(m);
        let f = given_up(&mut r);
        assert_eq!(r.params["fft_gave_up"][0]["size_log2"], 14);
        assert!(matches!(&f[..], [Finding::Note { text }] if text.contains("up to 2^13")));
    }

    #[test]
    fn the_uncapped_mode_stops_at_a_low_thread_limit_and_says_why() {
        let plenty = crate::memguard::Available {
            bytes: 64 << 30,
            source: "test".into(),
        };
        // A synthetic low thread limit binds, with its reason.
        let (bound, why) = uncapped_bound((3, "RLIMIT_NPROC (ulimit -u)"), Some(&plenty));
        assert_eq!(bound, 3);
        assert!(why.contains("thread limit (RLIMIT_NPROC"), "{why}");
        // The memory guard binds: half of 1 GiB for 1 MiB stacks.
        let small = crate::memguard::Available {
            bytes: 1 << 30,
            source: "test".into(),
        };
        let (n, why) = uncapped_bound((100_000, "x"), Some(&small));
        assert_eq!(n, 512);
        assert!(why.starts_with("the memory guard"), "{why}");
        assert_eq!(
            uncapped_bound((100_000, "x"), None).0,
            taskpool::DEFAULT_MAX_THREADS
        );
        assert_eq!(uncapped_bound((1 << 30, "x"), Some(&plenty)).0, 32_768);
        // Reaching the bound stops an uncapped size, saying which bound and why.
        let limits = Limits {
            max_threads: bound,
            max_idle: bound,
            bound_why: Some(why_of(&plenty)),
        };
        let mut stats = taskpool::PoolStats::default();
        assert_eq!(bound_stop(&stats, &limits), None);
        stats.worker_shortfalls = 2;
        let how = bound_stop(&stats, &limits).expect("stopped");
        assert!(
            how.contains("more than 3 live threads") && how.contains("RLIMIT_NPROC"),
            "{how}"
        );
        // A refused pthread_create stops it too; a capped run's cap never does.
        let mut refused = taskpool::PoolStats::default();
        refused.spawn_failures = 1;
        assert!(bound_stop(&refused, &limits).is_some());
        assert_eq!(bound_stop(&stats, &Limits::capped(3)), None);
        // The stop becomes the size's given-up row and the executor's finding.
        let mut m = Measurement::default();
        fft_given_up(&mut m, Exec::LockfreeUncapped, 9, how);
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        r.absorb(m);
        let f = given_up(&mut r);
        assert!(
            matches!(&f[..], [Finding::Note { text }]
                if text.starts_with("fft/lockfree-uncapped: sizes up to 2^8 measured; stopped at 2^9")),
            "{f:?}"
        );
    }

    fn why_of(a: &crate::memguard::Available) -> String {
        uncapped_bound((3, "RLIMIT_NPROC (ulimit -u)"), Some(a)).1
    }

    #[test]
    fn an_uncapped_fft_within_its_bound_is_measured_and_checked() {
        let c = Arc::new(SharedCounters::default());
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        let limits = Limits {
            max_threads: 4096,
            max_idle: 2,
            bound_why: Some("test".into()),
        };
        // 2^4 points cannot ask for 4,096 workers at once.
        let (m, secs) =
            run_fft(Exec::LockfreeUncapped, (4, 0.0), 60.0, (&limits, far), &c).unwrap();
        assert!(secs.is_finite() && m.tables.is_empty(), "{:?}", m.tables);
        let names: Vec<&str> = m.points.iter().map(|p| p.series.as_str()).collect();
        assert_eq!(
            names,
            ["fft/lockfree-uncapped", "fft-cas-retries/lockfree-uncapped"]
        );
    }

    #[test]
    fn the_thread_cap_is_at_least_the_default_and_the_cpus_within_the_os_limit() {
        let (capacity, _) = crate::harness::team::thread_capacity();
        let cap = pool_max_threads(2);
        assert!(cap <= capacity.max(1));
        assert!(cap == taskpool::DEFAULT_MAX_THREADS || cap == capacity.max(1));
        assert!(pool_max_threads(1 << 20) <= taskpool::MAX_THREADS_LIMIT);
    }

    /// Deterministic ±1 % wiggle around `base`, one value per round.
    fn rounds(base: f64, n: usize, seed: u64) -> Vec<f64> {
        (0..n)
            .map(|i| base * (1.0 + 0.01 * (((i as u64 * 7 + seed) % 5) as f64 - 2.0) / 2.0))
            .collect()
    }

    fn result_with(points: &[(&str, f64, Vec<f64>)]) -> ProbeResult {
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        for (s, x, v) in points {
            r.push_point(Point::samples(*s, "levels", *x, "seconds", v.clone()));
        }
        r
    }

    #[test]
    fn runtimes_are_compared_best_against_best() {
        // taskpool is best at k = 1 (1.0 s), rayon at k = 2 (0.9 s); at k = 1 rayon is
        // slow (1.6 s). The finding must set 1.0 against 0.9, never 1.0 against 1.6.
        let r = result_with(&[
            ("rmatmul/taskpool/512", 1.0, rounds(1.0, 12, 1)),
            ("rmatmul/taskpool/512", 2.0, rounds(1.3, 12, 2)),
            ("rmatmul/rayon/512", 1.0, rounds(1.6, 12, 3)),
            ("rmatmul/rayon/512", 2.0, rounds(0.9, 12, 4)),
        ]);
        let found = rmatmul_findings(&r, 2);
        let Some(Finding::Comparison {
            a,
            b,
            ratio,
            outcome,
            ..
        }) = found.first()
        else {
            panic!("{found:?}");
        };
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("taskpool at k = 1", "rayon at k = 2")
        );
        assert!((ratio.value - 1.0 / 0.9).abs() < 0.02, "{ratio:?}");
        assert_eq!(*outcome, Outcome::Different);
        // And at equal k (the largest both ran), as a second finding.
        assert!(
            matches!(found.get(1), Some(Finding::Comparison { what, .. }) if what.contains("equal k = 2"))
        );
    }

    #[test]
    fn equal_runtimes_are_not_called_different() {
        let r = result_with(&[
            ("rmatmul/taskpool/256", 1.0, rounds(1.0, 12, 1)),
            ("rmatmul/rayon/256", 1.0, rounds(1.0, 12, 3)),
        ]);
        let found = rmatmul_findings(&r, 2);
        assert_eq!(found.len(), 1, "one k: best vs best only");
        assert!(
            matches!(&found[0], Finding::Comparison { outcome, .. } if *outcome != Outcome::Different),
            "{found:?}"
        );
    }
}
