//! The pool's counters: [`PoolStats`], the snapshot users read, and the
//! relaxed atomics behind it.

#[cfg(doc)]
use super::Pool;
use crate::sync::{AtomicU64, Ordering, Padded};

/// Counters of a pool since it was built (or since [`Pool::reset_stats`]),
/// plus a snapshot of its threads.
///
/// Counters are read one by one with relaxed loads, so a snapshot taken while
/// families run is not a single instant; read it between runs for exact sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PoolStats {
    /// Families created (by `create`, `run` or a scope).
    pub families: u64,
    /// pthreads started successfully.
    pub threads_created: u64,
    /// Threads that exited because `max_idle` workers were idle already.
    pub threads_exited: u64,
    /// `pthread_create` calls that failed.
    pub spawn_failures: u64,
    /// The error number of the last failed `pthread_create` (e.g. `EAGAIN`).
    pub last_spawn_errno: Option<i32>,
    /// Times a family wanted one more worker and got none (no idle worker and
    /// `max_threads` reached, or `pthread_create` failed); its creator then
    /// ran the remaining indices itself.
    pub worker_shortfalls: u64,
    /// Failed compare-and-swap attempts on the lock-free free list.
    pub cas_failures: u64,
    /// Acquisitions of the mutex free list that found it held.
    pub lock_contentions: u64,
    /// Indices run by pooled workers.
    pub indices_on_workers: u64,
    /// Indices run by the threads that created their families (in `sync`).
    pub indices_on_creators: u64,
    /// Worker threads alive now.
    pub live_threads: usize,
    /// Worker threads in the free list now.
    pub idle_threads: usize,
}

/// Cumulative counters (relaxed atomics: exact, but not ordered with anything).
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) families: Padded<AtomicU64>,
    pub(super) threads_created: AtomicU64,
    pub(super) threads_exited: AtomicU64,
    pub(super) spawn_failures: AtomicU64,
    /// Last failing error number; 0 = none.
    pub(super) last_spawn_errno: AtomicU64,
    pub(super) worker_shortfalls: AtomicU64,
    pub(super) indices_on_workers: Padded<AtomicU64>,
    pub(super) indices_on_creators: Padded<AtomicU64>,
}

impl Counters {
    pub(super) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn reset(&self) {
        for c in [
            &*self.families,
            &self.threads_created,
            &self.threads_exited,
            &self.spawn_failures,
            &self.last_spawn_errno,
            &self.worker_shortfalls,
            &*self.indices_on_workers,
            &*self.indices_on_creators,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}
