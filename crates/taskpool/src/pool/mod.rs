//! The pool of pthreads and its SVP-style families.
//!
//! # How a family runs
//! A family is an index range; every index is one SVP "thread". The pool maps
//! them onto *participants*: pooled workers it hires for the family, plus the
//! creating thread once it calls `sync`. At most `places` participants run
//! indices at once (`places` = `block`, or the family's length when `block`
//! is 0), and participants claim indices in chunks from one shared counter,
//! so every index runs exactly once whatever the number of participants.
//!
//! Hiring a worker pops the free list; when it is empty a new pthread is
//! started (seed 000 §7.1). When the pool already holds `max_threads`
//! threads, or `pthread_create` fails, the family simply gets fewer workers
//! and the creating thread runs what is left in `sync`: the pool never waits
//! for a worker, so nested families cannot deadlock.
//!
//! A worker that finishes its share returns to the free list, unless
//! `max_idle` workers are idle already, in which case its thread exits (and
//! is joined the next time the pool starts a thread, or when it drops).
//!
//! # Where things are
//! - this file: the pool ([`Pool`]), its limits, and a family's handle;
//! - `config.rs`: what a user describes, a [`Family`] and a [`PoolConfig`];
//! - `family.rs`: one family's shared state and how participants claim its
//!   indices;
//! - `worker.rs`: the workers, their mailboxes and the hiring of threads;
//! - `scope.rs`: the scope API, families that borrow from the stack;
//! - `stats.rs`: the pool's counters, [`PoolStats`].

mod config;
mod family;
mod scope;
mod stats;
mod worker;

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::error::PoolError;
use crate::free_list::{FreeList, SlotStack};
use crate::sync::{lock, thread, Arc, AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, Padded};
use family::{erase, FamilyCore, Payload};
use stats::Counters;
use worker::{Inner, Slot, SlotTable};

pub use config::{Family, PoolConfig};
pub use scope::{Scope, ScopedFamily};
pub use stats::PoolStats;
pub use worker::WorkerStartHook;

/// Default stack size of a worker thread: 1 MiB.
///
/// Smaller than glibc's default (8 MiB, from `ulimit -s`) so that hundreds of
/// workers stay cheap in address space, and ample for the kernels of this
/// crate, whose recursion depth is logarithmic. Raise it with
/// [`PoolConfig::with_stack_size_bytes`] for closures with deep stacks.
pub const DEFAULT_STACK_SIZE_BYTES: usize = 1 << 20;

/// Default maximum number of worker threads.
///
/// Families with `block` = 0 (no limit) ask for as many workers as they have
/// indices; this bounds what such a family can start. Seed 000 §7 runs up to
/// thousands of threads on 512 hardware strands; 256 keeps a 2-CPU machine
/// responsive while still showing the cost of oversubscription.
pub const DEFAULT_MAX_THREADS: usize = 256;

/// The largest `max_threads` a pool accepts (slot numbers are `u32`, and each
/// slot costs a few cache lines even when unused).
pub const MAX_THREADS_LIMIT: usize = 1 << 16;

/// The largest number of indices in one family (keeps the claim counter,
/// which may overshoot by one chunk per participant, far from overflow).
pub const MAX_FAMILY_LEN: usize = usize::MAX / 4;

/// Chunks each participant claims on average, when a family has fewer places
/// than indices: more chunks balance load better, fewer cost fewer atomics.
const CHUNKS_PER_PLACE: usize = 4;

/// Polls of a family's completion before `sync` blocks on a condition
/// variable. The first [`SYNC_PAUSES`] use the CPU's pause hint, the others
/// yield the CPU (on a 2-CPU machine the worker may need ours).
#[cfg(not(loom))]
const SYNC_POLLS: u32 = 48;
/// See [`SYNC_POLLS`].
#[cfg(not(loom))]
const SYNC_PAUSES: u32 = 32;

// Under loom every poll is a yield, and a yielded loom thread runs again
// only when the others block or are preempted: `sync` keeps one pause and
// one yield, so both its polling and its sleeping paths are explored.
#[cfg(loom)]
const SYNC_POLLS: u32 = 2;
#[cfg(loom)]
const SYNC_PAUSES: u32 = 1;

/// Polls of its mailbox by an idle worker before it sleeps; the first
/// [`WORKER_PAUSES`] use the CPU's pause hint, the others yield. Kept short:
/// hundreds of idle workers may poll at once on a machine with few CPUs.
///
/// Under loom a worker does not poll: the polls only shorten its way to the
/// mailbox lock (the job itself always moves under the lock), and as loom
/// yields they would keep the worker from racing the creator within a small
/// preemption bound.
#[cfg(not(loom))]
const WORKER_POLLS: u32 = 96;
/// See [`WORKER_POLLS`].
#[cfg(not(loom))]
const WORKER_PAUSES: u32 = 64;

/// A pool of pthreads that runs [`Family`]s.
///
/// Threads are started on demand, reused across families, and all joined
/// when the pool drops. See the [module docs](crate::pool) for the mapping of
/// a family's indices onto threads.
///
/// # Examples
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use taskpool::{Family, Pool, PoolConfig};
///
/// let pool = Pool::new(PoolConfig::default()).unwrap();
/// let sum = AtomicUsize::new(0);
/// pool.run(Family::new(0, 100), |i| {
///     sum.fetch_add(i, Ordering::Relaxed);
/// })
/// .unwrap();
/// assert_eq!(sum.into_inner(), 4950);
/// ```
pub struct Pool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.inner.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Pool {
    /// Builds a pool; no thread starts until a family needs one.
    pub fn new(config: PoolConfig) -> Result<Pool, PoolError> {
        Pool::build(config, None)
    }

    /// Builds a pool whose every new worker thread runs `hook` first (see
    /// [`WorkerStartHook`]).
    ///
    /// # Examples
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use taskpool::{Family, Pool, PoolConfig};
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let seen = Arc::clone(&started);
    /// let hook = Arc::new(move || {
    ///     seen.fetch_add(1, Ordering::Relaxed);
    /// });
    /// let pool = Pool::with_worker_start(PoolConfig::default().with_max_threads(2), hook).unwrap();
    /// pool.run(Family::new(0, 1000), |_| {}).unwrap();
    /// let created = pool.stats().threads_created;
    /// drop(pool); // joins every worker
    /// assert_eq!(started.load(Ordering::Relaxed) as u64, created);
    /// ```
    pub fn with_worker_start(config: PoolConfig, hook: WorkerStartHook) -> Result<Pool, PoolError> {
        Pool::build(config, Some(hook))
    }

    fn build(
        config: PoolConfig,
        on_worker_start: Option<WorkerStartHook>,
    ) -> Result<Pool, PoolError> {
        let (max_idle, stack_size_bytes) = config.validate()?;
        let max_threads = config.max_threads;
        // `validate` bounds max_threads by MAX_THREADS_LIMIT, far below u32::MAX.
        let capacity = max_threads as u32;
        Ok(Pool {
            inner: Arc::new(Inner {
                config,
                on_worker_start,
                max_idle,
                stack_size_bytes,
                idle_stack: SlotStack::new(config.free_list, capacity),
                slots: (0..max_threads).map(|_| Slot::default()).collect(),
                table: Mutex::new(SlotTable {
                    empty: (0..capacity).rev().collect(),
                    zombies: Vec::new(),
                    handles: (0..max_threads).map(|_| None).collect(),
                }),
                idle: Padded::new(AtomicUsize::new(0)),
                live: AtomicUsize::new(0),
                shutdown: AtomicBool::new(false),
                counters: Counters::default(),
                #[cfg(test)]
                fail_spawns: AtomicBool::new(false),
            }),
        })
    }

    /// A pool with default limits and the given free list.
    pub fn with_free_list(free_list: FreeList) -> Result<Pool, PoolError> {
        Pool::new(PoolConfig::new(free_list))
    }

    /// The configuration the pool was built with.
    pub fn config(&self) -> PoolConfig {
        self.inner.config
    }

    /// The free list design of this pool.
    pub fn free_list(&self) -> FreeList {
        self.inner.config.free_list
    }

    /// Counters and thread counts (see [`PoolStats`]).
    pub fn stats(&self) -> PoolStats {
        let c = &self.inner.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let errno = get(&c.last_spawn_errno);
        PoolStats {
            families: get(&c.families),
            threads_created: get(&c.threads_created),
            threads_exited: get(&c.threads_exited),
            spawn_failures: get(&c.spawn_failures),
            last_spawn_errno: (errno != 0).then(|| i32::try_from(errno).unwrap_or(i32::MAX)),
            worker_shortfalls: get(&c.worker_shortfalls),
            cas_failures: self.inner.idle_stack.cas_failures(),
            lock_contentions: self.inner.idle_stack.lock_contentions(),
            indices_on_workers: get(&c.indices_on_workers),
            indices_on_creators: get(&c.indices_on_creators),
            live_threads: self.inner.live.load(Ordering::Relaxed),
            idle_threads: self.inner.idle.load(Ordering::Relaxed),
        }
    }

    /// Sets every cumulative counter of [`PoolStats`] back to 0 (the thread
    /// counts are a snapshot and stay). Call it between runs.
    pub fn reset_stats(&self) {
        self.inner.counters.reset();
        self.inner.idle_stack.reset_counters();
    }

    /// Creates a family and returns at once; its indices run on pooled
    /// workers (up to `block` at a time) while the caller goes on.
    ///
    /// [`FamilyHandle::sync`] waits for it, running indices that no worker
    /// took. The closure must be `'static`; to borrow from the stack use
    /// [`Pool::scope`] or [`Pool::run`].
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn create<F>(&self, family: Family, body: F) -> Result<FamilyHandle<'_>, PoolError>
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        let count = family.validate()?;
        let body: Box<dyn Fn(usize) + Send + Sync> = Box::new(body);
        let core = Arc::new(FamilyCore::new(&family, count, erase(&*body)));
        Counters::add(&self.inner.counters.families, 1);
        Inner::dispatch(&self.inner, &core, core.places);
        Ok(FamilyHandle {
            core,
            body: Some(body),
            pool: self,
        })
    }

    /// Runs a family to completion: create and sync in one call.
    ///
    /// The calling thread takes part (it fills one of the `block` places),
    /// so `body` may borrow from the caller and a family of 1 place runs
    /// entirely on the caller. A panic in `body` stops the family from
    /// starting further indices and is resumed here once every running
    /// index has returned.
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn run<F>(&self, family: Family, body: F) -> Result<(), PoolError>
    where
        F: Fn(usize) + Sync,
    {
        let count = family.validate()?;
        self.run_checked(&family, count, &body);
        Ok(())
    }

    /// [`Pool::run`] for a family whose length is `count` (already checked).
    pub(crate) fn run_checked(&self, family: &Family, count: usize, body: &(dyn Fn(usize) + Sync)) {
        Counters::add(&self.inner.counters.families, 1);
        if count == 0 {
            return;
        }
        if count == 1 || family.block == 1 || self.inner.config.max_threads == 0 {
            // One place: no worker could help.
            family.indices().for_each(body);
            Counters::add(&self.inner.counters.indices_on_creators, count as u64);
            return;
        }
        let core = Arc::new(FamilyCore::new(family, count, erase(body)));
        Inner::dispatch(&self.inner, &core, core.places - 1);
        if let Err(payload) = self.finish(&core) {
            resume_unwind(payload);
        }
    }

    /// Runs a family of `count` indices `0..count` with the given block
    /// (crate-internal shorthand for the kernels).
    pub(crate) fn run_range(&self, count: usize, block: usize, body: &(dyn Fn(usize) + Sync)) {
        debug_assert!(count <= MAX_FAMILY_LEN);
        self.run_checked(&Family::new(0, count).with_block(block), count, body);
    }

    /// The creator's side of `sync`: take a free place and run indices, then
    /// wait for the hired workers. Returns the family's first panic.
    fn finish(&self, core: &FamilyCore) -> Result<(), Payload> {
        if core.take_place() {
            let ran = core.run_indices();
            core.release_place();
            Counters::add(&self.inner.counters.indices_on_creators, ran);
        }
        core.wait_detached();
        match lock(&core.panic).take() {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }

    /// Runs `f` with a [`Scope`] in which families may borrow anything that
    /// outlives the call; every family created in the scope is synced before
    /// `scope` returns (like [`std::thread::scope`]).
    ///
    /// # Panics
    /// If `f` panics, or a family that was not synced explicitly panicked,
    /// the panic is resumed after every family has finished.
    ///
    /// # Examples
    /// ```
    /// use taskpool::{Family, Pool, PoolConfig};
    /// let pool = Pool::new(PoolConfig::default()).unwrap();
    /// let input = vec![1.0f64; 64];
    /// let sums: Vec<_> = (0..4).map(|_| std::sync::Mutex::new(0.0)).collect();
    /// pool.scope(|s| {
    ///     let family = s
    ///         .create(Family::new(0, 4), |q| {
    ///             *sums[q].lock().unwrap() = input[q * 16..(q + 1) * 16].iter().sum();
    ///         })
    ///         .unwrap();
    ///     family.sync();
    /// });
    /// assert!(sums.iter().all(|s| *s.lock().unwrap() == 16.0));
    /// ```
    pub fn scope<'env, F, T>(&'env self, f: F) -> T
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
    {
        let scope = Scope {
            pool: self,
            families: Mutex::new(Vec::new()),
            scope: PhantomData,
            env: PhantomData,
        };
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        let mut first_panic = None;
        loop {
            // Families may create more families in this scope while we wait.
            let pending = std::mem::take(&mut *lock(&scope.families));
            if pending.is_empty() {
                break;
            }
            for entry in pending {
                if let Err(payload) = self.finish(&entry.core) {
                    first_panic.get_or_insert(payload);
                }
                // `entry._body` drops here, after its family finished.
            }
        }
        match result {
            Err(payload) => resume_unwind(payload),
            Ok(value) => {
                if let Some(payload) = first_panic {
                    resume_unwind(payload);
                }
                value
            }
        }
    }
}

impl Drop for Pool {
    /// Tells every worker to exit and joins every thread the pool started.
    ///
    /// Families still running (a [`FamilyHandle`] leaked with
    /// `mem::forget`) finish first. If the last owner of the pool is one of
    /// its own workers, that thread is detached instead of joined.
    fn drop(&mut self) {
        let inner = &self.inner;
        {
            // Under the table lock: no `spawn` is half done.
            let _table = lock(&inner.table);
            inner.shutdown.store(true, Ordering::Relaxed);
        }
        for mailbox in inner.slots.iter() {
            lock(&mailbox.state).exit = true;
            mailbox.wake.notify_all();
        }
        let threads: Vec<thread::Handle> = lock(&inner.table)
            .handles
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        // Each was taken out of the table, so it is joined or detached once;
        // every worker has been told to exit.
        for handle in threads {
            if thread::is_current(&handle) {
                thread::detach(handle);
            } else {
                thread::join(handle);
            }
        }
    }
}

/// A family created by [`Pool::create`]. Sync it to wait for it.
#[must_use = "dropping a FamilyHandle waits for the family and discards its panic; call sync()"]
pub struct FamilyHandle<'pool> {
    core: Arc<FamilyCore>,
    /// The family's closure, freed only after the family finished.
    body: Option<Box<dyn Fn(usize) + Send + Sync>>,
    pool: &'pool Pool,
}

impl FamilyHandle<'_> {
    /// Waits for every index of the family, running those no worker took.
    ///
    /// # Panics
    /// Resumes the first panic of the family's closure (further indices were
    /// not started after it).
    pub fn sync(self) {
        if let Err(payload) = self.try_sync() {
            resume_unwind(payload);
        }
    }

    /// Like [`sync`](Self::sync) but returns the panic payload instead.
    pub fn try_sync(mut self) -> Result<(), Box<dyn Any + Send + 'static>> {
        let outcome = self.pool.finish(&self.core);
        self.body = None; // The family has finished: nobody calls it now.
        outcome
    }

    /// Number of indices of the family.
    pub fn len(&self) -> usize {
        self.core.count
    }

    /// Whether the family has no index.
    pub fn is_empty(&self) -> bool {
        self.core.count == 0
    }
}

impl Drop for FamilyHandle<'_> {
    fn drop(&mut self) {
        if self.body.is_some() {
            // Not synced: wait anyway (the closure must outlive its runs).
            let _ = self.pool.finish(&self.core);
        }
    }
}

impl std::fmt::Debug for FamilyHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FamilyHandle")
            .field("len", &self.core.count)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn family_len_and_indices() {
        assert_eq!(Family::new(0, 0).len(), 0);
        assert_eq!(Family::new(5, 3).len(), 0);
        assert_eq!(Family::new(0, 10).with_step(3).len(), 4);
        assert_eq!(
            Family::new(1, 10)
                .with_step(3)
                .indices()
                .collect::<Vec<_>>(),
            [1, 4, 7]
        );
        assert_eq!(Family::new(0, 10).with_step(0).len(), 0);
        assert!(matches!(
            Family::new(0, 10).with_step(0).validate(),
            Err(PoolError::ZeroStep {
                start: 0,
                limit: 10
            })
        ));
    }

    #[test]
    fn failed_pthread_create_runs_the_family_on_its_creator() {
        for free_list in FreeList::ALL {
            let pool = Pool::new(PoolConfig::new(free_list).with_max_threads(4)).unwrap();
            pool.inner.fail_spawns.store(true, Ordering::Relaxed);
            let hits: Vec<AtomicU32> = (0..50).map(|_| AtomicU32::new(0)).collect();
            pool.run(Family::new(0, 50), |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            let handle = pool
                .create(Family::new(0, 8), |_| std::hint::black_box(()))
                .unwrap();
            handle.sync();
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            let stats = pool.stats();
            assert_eq!(stats.threads_created, 0);
            assert!(stats.spawn_failures >= 2, "{stats:?}");
            assert_eq!(stats.last_spawn_errno, Some(libc::EAGAIN));
            assert!(stats.worker_shortfalls >= 2);
            assert_eq!(stats.indices_on_creators, 58);
        }
    }
}
