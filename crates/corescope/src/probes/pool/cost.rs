//! `pool`'s price of one run for `corescope plan`.

use super::measure::MIN_SAMPLE_S;
use super::runtime::Exec;
use super::CaseParams;
use crate::probes::cost::Cost;

/// The model's price of one tiny FFT task (`corescope plan`), in dependent integer
/// ops: an FFT of 2^k points as 2^k · k tasks. Fitted on the reference runs.
const COST_OPS_PER_FFT_TASK: f64 = 800.0;
/// The model's price of recursive matmul per n³, in dependent integer ops.
const COST_OPS_PER_RMATMUL_N3: f64 = 1.0;

/// Workers a pool run starts: taskpool starts its pthreads on demand in every run
/// (a new pool per run, its workers counted from their start hook), as many as
/// its families ask for at once (`demand`) up to its cap (`max_threads`): a worker
/// per butterfly (about the points of the FFT; `block` = CPUs with a cutoff; 8^k
/// leaf products); rayon builds a counted pool of one thread per CPU; one thread
/// alone starts none.
fn cost_workers(c: &Cost, exec: Exec, demand: f64, max_threads: usize) -> f64 {
    match exec {
        Exec::Sequential => 0.0,
        Exec::Rayon => c.cpus_f(),
        _ => demand.min(max_threads as f64),
    }
}

/// Seconds of one run of case `p` (`corescope plan`): the workers it starts, then
/// the timed product (and its untimed warm-up on a quarter of the order) or the
/// FFT calls until the sample lasts [`MIN_SAMPLE_S`].
pub(super) fn cost_run_s(c: &Cost, p: &CaseParams) -> f64 {
    let op = c.op_s();
    let cpus = c.cpus_f();
    let (exec, demand, max_threads) = match *p {
        CaseParams::Fft {
            exec,
            log2,
            max_threads,
            ..
        } => (exec, 2f64.powf(f64::from(log2)), max_threads),
        CaseParams::FftCutoff {
            exec, max_threads, ..
        } => (exec, cpus, max_threads),
        CaseParams::Rmatmul {
            exec,
            levels,
            max_threads,
            ..
        } => (exec, 8f64.powf(f64::from(levels)), max_threads),
    };
    // The uncapped mode: the workers it starts on demand. The capped runs keep the
    // model fitted on the reference runs (a worker per CPU): pricing their on-demand
    // workers the same way would be more honest, but puts the default suite of a
    // 2048-strand machine over its ten minutes (pool would then need to scale down
    // there first; see docs/pool.md).
    let workers = match exec {
        Exec::MutexUncapped | Exec::LockfreeUncapped => cost_workers(c, exec, demand, max_threads),
        _ => cpus.min(256.0),
    };
    let start = c.spawn_s(workers);
    // The FFT's size; the idle workers the uncapped mode keeps (the others exit
    // after every call and start again in the next); whether an untimed warm-up
    // call comes first.
    let (log2, kept, warmed_up) = match *p {
        CaseParams::Rmatmul { order, .. } => {
            let order = order as f64;
            return (order.powi(3) * (1.0 + 1.0 / 64.0) * COST_OPS_PER_RMATMUL_N3 * op / cpus)
                .max(MIN_SAMPLE_S)
                + start;
        }
        CaseParams::Fft { log2, max_idle, .. } => (log2, max_idle as f64, true),
        CaseParams::FftCutoff { log2, .. } => (log2, workers, false),
    };
    let log2 = f64::from(log2);
    let tasks = 2f64.powf(log2) * log2;
    let threads = if exec == Exec::Sequential { 1.0 } else { cpus };
    let churn = c.spawn_s((workers - kept).max(0.0));
    let call = tasks * COST_OPS_PER_FFT_TASK * op / threads + churn;
    // The untimed warm-up call, then calls until the sample lasts the floor.
    let warm_up = if warmed_up { call } else { 0.0 };
    warm_up + call.max(MIN_SAMPLE_S) + start
}
