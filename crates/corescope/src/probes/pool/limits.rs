//! How many workers a `pool` run may have: the capped mode's cap on this machine,
//! and the uncapped mode's safety bound with its reason and where a run reached it.

use crate::model::SizeStop;

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
pub fn bound_stop(stats: &taskpool::PoolStats, limits: &Limits) -> Option<SizeStop> {
    let why = limits.bound_why.as_deref()?;
    (stats.worker_shortfalls > 0 || stats.spawn_failures > 0).then(|| SizeStop::ThreadBound {
        max_threads: limits.max_threads,
        bound: why.to_string(),
    })
}

/// The workers of taskpool's runs against rayon (FFT with a cutoff, recursive
/// matmul): one thread per allowed CPU counting the creator, as rayon's pool of one
/// thread per CPU (`taskpool::PoolConfig::one_per_cpu`). Under
/// [`pool_max_threads`] the recursion families start a worker per index until the
/// cap: rmatmul at k = 4 ran 256 threads on 2 CPUs and took 1.5–2.3× as long.
pub fn kernel_max_threads(cpus: usize) -> usize {
    taskpool::PoolConfig::one_per_cpu(taskpool::FreeList::Mutex, cpus.max(1)).max_threads
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

#[cfg(test)]
mod tests {
    use super::super::analysis::given_up;
    use super::super::measure::fft_given_up;
    use super::super::runtime::Exec;
    use super::*;
    use crate::model::{Finding, Measurement, ProbeResult, Status};

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
            matches!(&how, SizeStop::ThreadBound { max_threads: 3, bound }
                if bound.contains("RLIMIT_NPROC")),
            "{how:?}"
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
        let (_, f) = given_up(&r);
        assert!(
            matches!(&f[..], [Finding::Note { text }]
                if text.starts_with("fft/lockfree-uncapped: sizes up to 2^8 measured; stopped at 2^9")
                    && text.contains("it wanted more than 3 live threads (the harness")),
            "{f:?}"
        );
    }

    fn why_of(a: &crate::memguard::Available) -> String {
        uncapped_bound((3, "RLIMIT_NPROC (ulimit -u)"), Some(a)).1
    }

    #[test]
    fn the_thread_cap_is_at_least_the_default_and_the_cpus_within_the_os_limit() {
        let (capacity, _) = crate::harness::team::thread_capacity();
        let cap = pool_max_threads(2);
        assert!(cap <= capacity.max(1));
        assert!(cap == taskpool::DEFAULT_MAX_THREADS || cap == capacity.max(1));
        assert!(pool_max_threads(1 << 20) <= taskpool::MAX_THREADS_LIMIT);
    }
}
