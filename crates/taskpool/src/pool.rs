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

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::error::PoolError;
use crate::free_list::{FreeList, SlotStack};
use crate::sync::{
    lock, spin_loop, thread, wait, yield_now, Arc, AtomicBool, AtomicU64, AtomicUsize, Condvar,
    Mutex, Ordering, Padded,
};

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

/// A family of SVP threads: the indices `start, start + step, …` below `limit`.
///
/// `block` bounds how many of its indices run at the same time; 0 means no
/// bound beyond the pool's `max_threads` (every index may get its own worker,
/// as in seed 000's runtime).
///
/// # Examples
/// ```
/// let family = taskpool::Family { start: 2, limit: 11, step: 3, block: 0 };
/// assert_eq!(family.indices().collect::<Vec<_>>(), [2, 5, 8]);
/// assert_eq!(family.len(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family {
    /// First index.
    pub start: usize,
    /// Indices are below `limit` (exclusive).
    pub limit: usize,
    /// Distance between consecutive indices; must be at least 1.
    pub step: usize,
    /// Most indices running at once; 0 = no limit.
    pub block: usize,
}

impl Family {
    /// The indices `start..limit`, step 1, no block limit.
    pub const fn new(start: usize, limit: usize) -> Self {
        Family {
            start,
            limit,
            step: 1,
            block: 0,
        }
    }

    /// The same family with another step.
    pub const fn with_step(self, step: usize) -> Self {
        Family { step, ..self }
    }

    /// The same family with another block (0 = no limit).
    pub const fn with_block(self, block: usize) -> Self {
        Family { block, ..self }
    }

    /// Number of indices; 0 when `limit <= start` or when `step` is 0 (a
    /// family that `create` rejects).
    pub const fn len(&self) -> usize {
        if self.step == 0 || self.limit <= self.start {
            0
        } else {
            (self.limit - self.start - 1) / self.step + 1
        }
    }

    /// Whether the family has no index.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The family's indices in increasing order (the order of a sequential run).
    pub fn indices(&self) -> impl Iterator<Item = usize> {
        (self.start..self.limit)
            .step_by(self.step.max(1))
            .take(self.len())
    }

    /// Checks the family and returns its length.
    fn validate(&self) -> Result<usize, PoolError> {
        if self.step == 0 {
            return Err(PoolError::ZeroStep {
                start: self.start,
                limit: self.limit,
            });
        }
        let count = self.len();
        if count > MAX_FAMILY_LEN {
            return Err(PoolError::FamilyTooLarge {
                count,
                max: MAX_FAMILY_LEN,
            });
        }
        Ok(count)
    }
}

/// How a [`Pool`] is built. Start from [`PoolConfig::new`] or `default()`.
///
/// # Examples
/// ```
/// use taskpool::{FreeList, PoolConfig};
/// let config = PoolConfig::new(FreeList::LockFree).with_max_threads(8).with_max_idle(4);
/// assert_eq!(config.max_threads, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolConfig {
    /// How the list of idle workers is guarded.
    pub free_list: FreeList,
    /// Most worker threads alive at once (0 = run every family on its creator).
    pub max_threads: usize,
    /// Most idle workers kept; a worker finishing while this many are idle
    /// exits (the seed's "maximum pool size"). `None` = `max_threads`.
    pub max_idle: Option<usize>,
    /// Stack size of each worker thread, in bytes (rounded up to whole pages).
    pub stack_size_bytes: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::new(FreeList::Mutex)
    }
}

impl PoolConfig {
    /// Defaults ([`DEFAULT_MAX_THREADS`], [`DEFAULT_STACK_SIZE_BYTES`], no
    /// separate idle limit) with the given free list.
    pub const fn new(free_list: FreeList) -> Self {
        PoolConfig {
            free_list,
            max_threads: DEFAULT_MAX_THREADS,
            max_idle: None,
            stack_size_bytes: DEFAULT_STACK_SIZE_BYTES,
        }
    }

    /// Sets [`max_threads`](Self::max_threads).
    pub const fn with_max_threads(self, max_threads: usize) -> Self {
        PoolConfig {
            max_threads,
            ..self
        }
    }

    /// Sets [`max_idle`](Self::max_idle).
    pub const fn with_max_idle(self, max_idle: usize) -> Self {
        PoolConfig {
            max_idle: Some(max_idle),
            ..self
        }
    }

    /// Sets [`stack_size_bytes`](Self::stack_size_bytes).
    pub const fn with_stack_size_bytes(self, stack_size_bytes: usize) -> Self {
        PoolConfig {
            stack_size_bytes,
            ..self
        }
    }

    /// Checks the limits; returns `(max_idle, stack size rounded to pages)`.
    fn validate(&self) -> Result<(usize, usize), PoolError> {
        if self.max_threads > MAX_THREADS_LIMIT {
            return Err(PoolError::TooManyThreads {
                requested: self.max_threads,
                limit: MAX_THREADS_LIMIT,
            });
        }
        let max_idle = self.max_idle.unwrap_or(self.max_threads);
        if max_idle > self.max_threads {
            return Err(PoolError::IdleAboveMax {
                max_idle,
                max_threads: self.max_threads,
            });
        }
        if self.stack_size_bytes < libc::PTHREAD_STACK_MIN {
            return Err(PoolError::StackTooSmall {
                requested: self.stack_size_bytes,
                minimum: libc::PTHREAD_STACK_MIN,
            });
        }
        Ok((max_idle, round_to_pages(self.stack_size_bytes)))
    }
}

/// Rounds `bytes` up to a multiple of the page size (some libcs reject other
/// stack sizes with `EINVAL`).
fn round_to_pages(bytes: usize) -> usize {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = usize::try_from(page)
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096);
    bytes.div_ceil(page).saturating_mul(page)
}

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
struct Counters {
    families: Padded<AtomicU64>,
    threads_created: AtomicU64,
    threads_exited: AtomicU64,
    spawn_failures: AtomicU64,
    /// Last failing error number; 0 = none.
    last_spawn_errno: AtomicU64,
    worker_shortfalls: AtomicU64,
    indices_on_workers: Padded<AtomicU64>,
    indices_on_creators: Padded<AtomicU64>,
}

impl Counters {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn reset(&self) {
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

/// The closure of a family with its lifetime erased.
type Body = dyn Fn(usize) + Sync;

/// A pointer to a family's closure.
///
/// # Invariant
/// Whoever creates a [`FamilyCore`] keeps the pointee alive and unmoved until
/// every participant is done with it: until `attached` is 0 and the creator's
/// own participation has returned ([`Pool::finish`]).
struct BodyPtr(*const Body);

// SAFETY: the pointee is `Sync`, so calling it through `&` from several threads
// is allowed; its lifetime is guaranteed by the invariant above.
unsafe impl Send for BodyPtr {}
// SAFETY: as for `Send`: only shared references to a `Sync` closure are made.
unsafe impl Sync for BodyPtr {}

/// Erases the lifetime of `body` (see [`BodyPtr`] for who keeps it alive).
fn erase<'a>(body: &'a (dyn Fn(usize) + Sync + 'a)) -> BodyPtr {
    let ptr: *const (dyn Fn(usize) + Sync + 'a) = body;
    // SAFETY: both types are the same fat pointer and differ only in the
    // lifetime bound of the trait object; validity is the creator's duty.
    BodyPtr(unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + 'a), *const Body>(ptr) })
}

/// A panic payload carried from a participant to `sync`.
type Payload = Box<dyn Any + Send + 'static>;

/// The shared state of one family.
struct FamilyCore {
    start: usize,
    step: usize,
    /// Number of indices.
    count: usize,
    /// Indices claimed at once.
    chunk: usize,
    /// Most participants running indices at once (`min(block, count)`, or
    /// `count` when block is 0).
    places: usize,
    body: BodyPtr,
    /// Ordinal of the next unclaimed index; may overshoot `count`.
    next: Padded<AtomicUsize>,
    /// Places taken (≤ `places`); a participant claims only while holding one.
    active: AtomicUsize,
    /// Hired workers that may still call `body`.
    attached: AtomicUsize,
    /// Set after a panic: participants stop claiming.
    cancelled: AtomicBool,
    /// The first panic of the family.
    panic: Mutex<Option<Payload>>,
    /// Whether the creator sleeps on `done_cv` (so the last worker must
    /// notify; otherwise it saves the system call).
    done: Mutex<bool>,
    done_cv: Condvar,
}

impl FamilyCore {
    fn new(family: &Family, count: usize, body: BodyPtr) -> Self {
        let places = if family.block == 0 {
            count
        } else {
            family.block.min(count)
        };
        let chunk = if places >= count {
            1
        } else {
            (count / (places * CHUNKS_PER_PLACE)).max(1)
        };
        FamilyCore {
            start: family.start,
            step: family.step,
            count,
            chunk,
            places,
            body,
            next: Padded::new(AtomicUsize::new(0)),
            active: AtomicUsize::new(0),
            attached: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            panic: Mutex::new(None),
            done: Mutex::new(false),
            done_cv: Condvar::new(),
        }
    }

    fn exhausted(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.count || self.cancelled.load(Ordering::Relaxed)
    }

    /// Claims and runs chunks until none is left; returns how many indices ran.
    /// The caller holds a place and keeps `body` alive (it is attached, or it
    /// is the creator).
    fn run_indices(&self) -> u64 {
        // SAFETY: see `BodyPtr`: the caller is attached or is the creator, so
        // the closure is alive; it is `Sync`, so a shared reference is fine.
        let body = unsafe { &*self.body.0 };
        let mut ran = 0u64;
        while !self.cancelled.load(Ordering::Relaxed) {
            let first = self.next.fetch_add(self.chunk, Ordering::Relaxed);
            if first >= self.count {
                break;
            }
            let end = (first + self.chunk).min(self.count);
            let chunk = catch_unwind(AssertUnwindSafe(|| {
                for ordinal in first..end {
                    body(self.start + ordinal * self.step);
                }
            }));
            if let Err(payload) = chunk {
                self.cancelled.store(true, Ordering::Relaxed);
                lock(&self.panic).get_or_insert(payload);
                break;
            }
            ran += (end - first) as u64;
        }
        ran
    }

    /// Takes a place if one is free and indices remain.
    fn take_place(&self) -> bool {
        !self.exhausted()
            && self
                .active
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |taken| {
                    (taken < self.places).then_some(taken + 1)
                })
                .is_ok()
    }

    fn release_place(&self) {
        self.active.fetch_sub(1, Ordering::Relaxed);
    }

    /// A hired worker's whole participation: run, give back the place, detach.
    fn work(&self) -> u64 {
        let ran = self.run_indices();
        self.release_place();
        // AcqRel: the creator's acquire load of 0 sees every write of the body.
        if self.attached.fetch_sub(1, Ordering::AcqRel) == 1 {
            // After this decrement `body` may be freed; only the core (kept
            // by our `Arc`) is touched.
            let creator_waits = lock(&self.done);
            if *creator_waits {
                self.done_cv.notify_all();
            }
        }
        ran
    }

    /// Waits until no hired worker is attached.
    fn wait_detached(&self) {
        for poll in 0..SYNC_POLLS {
            if self.attached.load(Ordering::Acquire) == 0 {
                return;
            }
            if poll < SYNC_PAUSES {
                spin_loop();
            } else {
                yield_now();
            }
        }
        let mut creator_waits = lock(&self.done);
        *creator_waits = true;
        // The last worker decrements before taking `done`, so it cannot
        // look at the flag between this check and the wait.
        while self.attached.load(Ordering::Acquire) != 0 {
            creator_waits = wait(&self.done_cv, creator_waits);
        }
    }
}

/// One worker's mailbox.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    wake: Condvar,
    /// Set after a job was put in `state`: a worker polls it for a short
    /// while before it sleeps, so that a quick rehire needs no system call.
    posted: AtomicBool,
}

#[derive(Default)]
struct SlotState {
    /// The family the worker is hired for; taken by the worker.
    job: Option<Arc<FamilyCore>>,
    /// The pool is dropping: exit once no job is left.
    exit: bool,
    /// The worker sleeps on `wake`: a hirer must notify it.
    sleeping: bool,
}

/// Which slots have threads, and their handles.
struct SlotTable {
    /// Slots without a thread.
    empty: Vec<u32>,
    /// Slots whose thread exited (or is exiting) and awaits `pthread_join`.
    zombies: Vec<u32>,
    /// The joinable thread of each slot.
    handles: Vec<Option<thread::Handle>>,
}

/// Code every new worker thread runs once, first, before its first job: to pin
/// it, name it, or open per-thread counters. It must not panic (a panic in it is
/// caught, and the worker runs on).
pub type WorkerStartHook = Arc<dyn Fn() + Send + Sync>;

/// What the pool and its workers share.
struct Inner {
    config: PoolConfig,
    on_worker_start: Option<WorkerStartHook>,
    max_idle: usize,
    stack_size_bytes: usize,
    idle_stack: SlotStack,
    slots: Box<[Slot]>,
    table: Mutex<SlotTable>,
    idle: Padded<AtomicUsize>,
    live: AtomicUsize,
    shutdown: AtomicBool,
    counters: Counters,
    /// Makes every `pthread_create` fail as with `EAGAIN` (tests of the limits).
    #[cfg(test)]
    fail_spawns: AtomicBool,
}

/// What a new thread receives.
struct WorkerStart {
    inner: Arc<Inner>,
    slot: u32,
}

impl Inner {
    /// Hires `wanted` workers for `core` (fewer if none can be had, or once
    /// its indices are all claimed).
    fn dispatch(this: &Arc<Self>, core: &Arc<FamilyCore>, wanted: usize) {
        for _ in 0..wanted {
            if core.exhausted() {
                break;
            }
            // Count the worker before it can start, so that it cannot
            // detach below zero.
            core.active.fetch_add(1, Ordering::Relaxed);
            core.attached.fetch_add(1, Ordering::Relaxed);
            if !Self::hire(this, core) {
                core.active.fetch_sub(1, Ordering::Relaxed);
                core.attached.fetch_sub(1, Ordering::Relaxed);
                Counters::add(&this.counters.worker_shortfalls, 1);
                break;
            }
        }
    }

    /// Gives `core` to an idle worker, or to a new thread.
    fn hire(this: &Arc<Self>, core: &Arc<FamilyCore>) -> bool {
        let Some(slot) = this.idle_stack.pop() else {
            return Self::spawn(this, core);
        };
        this.idle.fetch_sub(1, Ordering::Relaxed);
        let mailbox = &this.slots[slot as usize];
        let sleeping = {
            let mut state = lock(&mailbox.state);
            debug_assert!(state.job.is_none(), "idle worker {slot} already hired");
            state.job = Some(Arc::clone(core));
            state.sleeping
        };
        mailbox.posted.store(true, Ordering::Release);
        if sleeping {
            mailbox.wake.notify_one();
        }
        true
    }

    /// Starts a thread in a free slot with `core` as its first job.
    fn spawn(this: &Arc<Self>, core: &Arc<FamilyCore>) -> bool {
        let mut table = lock(&this.table);
        if this.shutdown.load(Ordering::Relaxed) {
            return false;
        }
        Self::reap(&mut table);
        let Some(slot) = table.empty.pop() else {
            return false;
        };
        {
            let mut state = lock(&this.slots[slot as usize].state);
            *state = SlotState {
                job: Some(Arc::clone(core)),
                exit: false,
                sleeping: false,
            };
        }
        let start = Box::into_raw(Box::new(WorkerStart {
            inner: Arc::clone(this),
            slot,
        }));
        match this.create_pthread(start) {
            Ok(thread) => {
                // Stored under the table lock, which the new thread needs
                // before it can retire: its handle is here before it exits.
                table.handles[slot as usize] = Some(thread);
                this.live.fetch_add(1, Ordering::Relaxed);
                Counters::add(&this.counters.threads_created, 1);
                true
            }
            Err(errno) => {
                // SAFETY: no thread was created, so `start` from
                // `Box::into_raw` above is still owned here, exactly once.
                drop(unsafe { Box::from_raw(start) });
                lock(&this.slots[slot as usize].state).job = None;
                table.empty.push(slot);
                Counters::add(&this.counters.spawn_failures, 1);
                this.counters
                    .last_spawn_errno
                    .store(u64::from(errno.unsigned_abs()), Ordering::Relaxed);
                false
            }
        }
    }

    /// Joins the threads that retired, making their slots reusable.
    fn reap(table: &mut SlotTable) {
        while let Some(slot) = table.zombies.pop() {
            if let Some(handle) = table.handles[slot as usize].take() {
                // Taken out of the table, so joined once; the thread has
                // pushed itself to `zombies` and needs no lock to finish, so
                // this returns.
                thread::join(handle);
            }
            table.empty.push(slot);
        }
    }

    /// `pthread_create` with the configured stack size.
    fn create_pthread(&self, start: *mut WorkerStart) -> Result<thread::Handle, i32> {
        #[cfg(test)]
        if self.fail_spawns.load(Ordering::Relaxed) {
            return Err(libc::EAGAIN);
        }
        // SAFETY: `worker_main` takes ownership of `start` (a leaked Box,
        // whose `Arc` and slot number may move to another thread) only if
        // the thread is created.
        unsafe { thread::spawn(self.stack_size_bytes, worker_main, start.cast()) }
    }

    /// Puts a worker back in the free list, or returns false if `max_idle`
    /// workers are idle already.
    fn make_idle(&self, slot: u32) -> bool {
        if self.idle.fetch_add(1, Ordering::Relaxed) >= self.max_idle {
            self.idle.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        self.idle_stack.push(slot);
        true
    }

    /// A worker thread's life: wait for a job, run it, go idle or retire.
    fn worker_loop(&self, slot: u32) {
        let mailbox = &self.slots[slot as usize];
        loop {
            #[cfg(not(loom))] // See `WORKER_POLLS`.
            for poll in 0..WORKER_POLLS {
                if mailbox.posted.load(Ordering::Acquire) {
                    break;
                }
                if poll < WORKER_PAUSES {
                    spin_loop();
                } else {
                    yield_now();
                }
            }
            let job = {
                let mut state = lock(&mailbox.state);
                loop {
                    // A job first: one given during shutdown still runs.
                    if let Some(job) = state.job.take() {
                        mailbox.posted.store(false, Ordering::Relaxed);
                        break job;
                    }
                    if state.exit {
                        return;
                    }
                    state.sleeping = true;
                    state = wait(&mailbox.wake, state);
                    state.sleeping = false;
                }
            };
            let ran = job.work();
            drop(job);
            Counters::add(&self.counters.indices_on_workers, ran);
            if self.shutdown.load(Ordering::Relaxed) {
                return;
            }
            if !self.make_idle(slot) {
                let mut table = lock(&self.table);
                table.zombies.push(slot);
                self.live.fetch_sub(1, Ordering::Relaxed);
                Counters::add(&self.counters.threads_exited, 1);
                return;
            }
        }
    }
}

/// The entry point of every worker pthread.
extern "C" fn worker_main(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Box<WorkerStart>` that `Inner::spawn` leaked for
    // this thread alone (the spawner reclaims it only if creation failed).
    let start = unsafe { Box::from_raw(arg.cast::<WorkerStart>()) };
    if let Some(hook) = &start.inner.on_worker_start {
        // The hook's own failure is its business: the worker still serves its job.
        let _ = catch_unwind(AssertUnwindSafe(&**hook));
    }
    // User panics are caught per chunk; one escaping here is a bug of the
    // pool, and unwinding out of an `extern "C"` function is not allowed.
    if catch_unwind(AssertUnwindSafe(|| start.inner.worker_loop(start.slot))).is_err() {
        std::process::abort();
    }
    drop(start);
    std::ptr::null_mut()
}

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

/// A scoped family's closure, boxed, with its lifetime erased so that the
/// [`Scope`] holds no `'scope` data (which would make it outlive itself for
/// the drop checker, as in `std::thread::Scope`).
///
/// # Invariant
/// Built from `Box::into_raw` of a closure that lives for `'scope`; dropped
/// (which frees the box) before [`Pool::scope`] returns, and only after its
/// family finished.
struct OwnedBody(*mut (dyn Fn(usize) + Send + Sync + 'static));

// SAFETY: the pointee is `Send + Sync`; the pointer is an owning box.
unsafe impl Send for OwnedBody {}
// SAFETY: as for `Send`.
unsafe impl Sync for OwnedBody {}

impl OwnedBody {
    fn new<'scope>(body: Box<dyn Fn(usize) + Send + Sync + 'scope>) -> Self {
        let ptr: *mut (dyn Fn(usize) + Send + Sync + 'scope) = Box::into_raw(body);
        // SAFETY: same fat pointer, only the lifetime bound changes; the
        // invariant keeps every use inside 'scope.
        OwnedBody(unsafe {
            std::mem::transmute::<
                *mut (dyn Fn(usize) + Send + Sync + 'scope),
                *mut (dyn Fn(usize) + Send + Sync + 'static),
            >(ptr)
        })
    }

    fn as_body(&self) -> &(dyn Fn(usize) + Sync) {
        // SAFETY: the box is alive until `self` drops.
        unsafe { &*self.0 }
    }
}

impl Drop for OwnedBody {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from `Box::into_raw` and is freed only here;
        // by the invariant we are still inside 'scope and the family is done.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// A family and its closure, owned by the scope until the family finished.
struct ScopeEntry {
    core: Arc<FamilyCore>,
    /// Held only to be dropped after the family finished.
    _body: OwnedBody,
}

/// Families created here may borrow anything that outlives the scope; see
/// [`Pool::scope`].
pub struct Scope<'scope, 'env: 'scope> {
    pool: &'env Pool,
    families: Mutex<Vec<ScopeEntry>>,
    /// Invariance over 'scope, as in `std::thread::Scope`.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Creates a family whose closure may borrow from outside the scope;
    /// returns at once (see [`Pool::create`]).
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn create<F>(
        &'scope self,
        family: Family,
        body: F,
    ) -> Result<ScopedFamily<'scope, 'env>, PoolError>
    where
        F: Fn(usize) + Send + Sync + 'scope,
    {
        let count = family.validate()?;
        let body = OwnedBody::new(Box::new(body));
        let core = Arc::new(FamilyCore::new(&family, count, erase(body.as_body())));
        // Owned by the scope before any worker can call it.
        lock(&self.families).push(ScopeEntry {
            core: Arc::clone(&core),
            _body: body,
        });
        Counters::add(&self.pool.inner.counters.families, 1);
        Inner::dispatch(&self.pool.inner, &core, core.places);
        Ok(ScopedFamily { core, scope: self })
    }

    /// Runs a family to completion (see [`Pool::run`]).
    ///
    /// # Errors
    /// [`PoolError::ZeroStep`] or [`PoolError::FamilyTooLarge`].
    pub fn run<F>(&self, family: Family, body: F) -> Result<(), PoolError>
    where
        F: Fn(usize) + Sync,
    {
        self.pool.run(family, body)
    }

    /// The pool the scope runs on.
    pub fn pool(&self) -> &'env Pool {
        self.pool
    }
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("pending_families", &lock(&self.families).len())
            .finish_non_exhaustive()
    }
}

/// A family created in a [`Scope`]. Dropping it does not wait: the scope
/// syncs it at its end.
#[must_use = "a scoped family is synced at the end of the scope at the latest; call sync() to wait earlier"]
pub struct ScopedFamily<'scope, 'env> {
    core: Arc<FamilyCore>,
    scope: &'scope Scope<'scope, 'env>,
}

impl ScopedFamily<'_, '_> {
    /// Waits for every index of the family, running those no worker took.
    ///
    /// # Panics
    /// Resumes the first panic of the family's closure.
    pub fn sync(self) {
        if let Err(payload) = self.try_sync() {
            resume_unwind(payload);
        }
    }

    /// Like [`sync`](Self::sync) but returns the panic payload instead.
    pub fn try_sync(self) -> Result<(), Box<dyn Any + Send + 'static>> {
        let outcome = self.scope.pool.finish(&self.core);
        let entry = {
            let mut families = lock(&self.scope.families);
            families
                .iter()
                .rposition(|e| Arc::ptr_eq(&e.core, &self.core))
                .map(|at| families.swap_remove(at))
        };
        // Drop the closure outside the lock (its destructor may do anything).
        drop(entry);
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

impl std::fmt::Debug for ScopedFamily<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedFamily")
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
