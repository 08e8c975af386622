//! `pool`'s price of one run for `corescope plan`.

use super::measure::MIN_SAMPLE_S;

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
pub(super) fn cost_run_s(c: &crate::probes::cost::Cost) -> Option<f64> {
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
