//! The runtimes a `pool` case runs on (taskpool's two free lists, capped or not,
//! rayon, one thread alone), built for one run with every worker counted.

use super::error::PoolFailure;
use super::limits::Limits;
use crate::counters::SharedCounters;
use crate::probes::{ProbeError, RunCtx};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use taskpool::{Executor, FreeList, Pool, PoolConfig};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Exec {
    Mutex,
    Lockfree,
    /// The mutex free list without the cap: a new pthread whenever the pool is
    /// empty (seed 000 §7.1), up to the safety bound.
    #[serde(rename = "mutex-uncapped")]
    MutexUncapped,
    /// The lock-free free list without the cap.
    #[serde(rename = "lockfree-uncapped")]
    LockfreeUncapped,
    /// The mutex free list with one thread per CPU, the creator included
    /// (`taskpool::PoolConfig::one_per_cpu`): taskpool's other setting in the runs
    /// against rayon.
    #[serde(rename = "mutex-per-cpu")]
    MutexPerCpu,
    Rayon,
    Sequential,
}

impl Exec {
    pub(super) fn name(self) -> &'static str {
        match self {
            Exec::Mutex => "mutex",
            Exec::Lockfree => "lockfree",
            Exec::MutexUncapped => "mutex-uncapped",
            Exec::LockfreeUncapped => "lockfree-uncapped",
            Exec::MutexPerCpu => "mutex-per-cpu",
            Exec::Rayon => "rayon",
            Exec::Sequential => "sequential",
        }
    }

    /// Name in the cutoff and matmul comparisons (taskpool runs the mutex free list,
    /// under the pool's cap or one thread per CPU).
    pub(super) fn runtime(self) -> &'static str {
        match self {
            Exec::Mutex | Exec::Lockfree | Exec::MutexUncapped | Exec::LockfreeUncapped => {
                "taskpool"
            }
            Exec::MutexPerCpu => "taskpool-per-cpu",
            other => other.name(),
        }
    }

    /// The runtimes and settings of the FFT-with-cutoff and rmatmul comparisons:
    /// taskpool under the pool's cap and one thread per CPU (each comparison takes
    /// taskpool's better setting), and rayon.
    pub(super) const KERNELS: [Exec; 3] = [Exec::Mutex, Exec::MutexPerCpu, Exec::Rayon];

    /// The FFT executors: the two free lists capped, rayon, and the two free lists
    /// uncapped (the seed's mode), measured interleaved.
    pub(super) const FFT: [Exec; 5] = [
        Exec::Mutex,
        Exec::Lockfree,
        Exec::Rayon,
        Exec::MutexUncapped,
        Exec::LockfreeUncapped,
    ];
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
    .map_err(|e| PoolFailure::Taskpool(e).into())
}

/// A pool for the executor (none for rayon and one thread).
pub(super) fn pool_for(
    exec: Exec,
    limits: &Limits,
    counted: &Arc<SharedCounters>,
) -> Result<Option<Pool>, ProbeError> {
    Ok(match exec {
        Exec::Mutex | Exec::MutexUncapped | Exec::MutexPerCpu => {
            Some(new_pool(FreeList::Mutex, limits, counted)?)
        }
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
pub(super) fn counted_run<T: Send>(
    (exec, max_threads): (Exec, usize),
    ctx: &mut RunCtx,
    f: impl FnOnce(&Arc<SharedCounters>) -> Result<T, ProbeError> + Send,
) -> Result<T, ProbeError> {
    let counted = Arc::new(SharedCounters::default());
    let threads = 1 + match exec {
        Exec::Rayon => rayon::current_num_threads(),
        Exec::Mutex
        | Exec::Lockfree
        | Exec::MutexUncapped
        | Exec::LockfreeUncapped
        | Exec::MutexPerCpu => max_threads,
        Exec::Sequential => 0,
    };
    if let Err(why) = crate::counters::descriptors_allow(threads) {
        counted.refuse(why.into());
    }
    counted.join_this_thread(false);
    let out = if exec == Exec::Rayon {
        let c = Arc::clone(&counted);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .start_handler(move |_| c.join_this_thread(false))
            .build()
            .map_err(PoolFailure::Rayon)?;
        pool.install(|| f(&counted))
    } else {
        f(&counted)
    };
    let (team, errors) = counted.finish();
    ctx.counted.extend(team);
    for e in errors.into_iter().map(crate::model::Warning::from) {
        if !ctx.warnings.contains(&e) {
            ctx.warnings.push(e);
        }
    }
    out
}

pub(super) fn executor(exec: Exec, pool: Option<&Pool>, block: usize) -> Executor<'_> {
    match (exec, pool) {
        (Exec::Sequential, _) => Executor::Sequential,
        (_, Some(pool)) => Executor::TaskPool { pool, block },
        (_, None) => Executor::Rayon,
    }
}
