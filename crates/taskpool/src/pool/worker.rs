//! The workers: their mailboxes, the hiring of a worker for a family (from the
//! free list or a new pthread), and the worker loop.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::family::FamilyCore;
use super::stats::Counters;
use super::PoolConfig;
#[cfg(not(loom))]
use super::{WORKER_PAUSES, WORKER_POLLS};
use crate::free_list::SlotStack;
use crate::sync::{
    lock, thread, wait, Arc, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering, Padded,
};
#[cfg(not(loom))]
use crate::sync::{spin_loop, yield_now};

/// One worker's mailbox.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) state: Mutex<SlotState>,
    pub(super) wake: Condvar,
    /// Set after a job was put in `state`: a worker polls it for a short
    /// while before it sleeps, so that a quick rehire needs no system call.
    pub(super) posted: AtomicBool,
}

#[derive(Default)]
pub(super) struct SlotState {
    /// The family the worker is hired for; taken by the worker.
    pub(super) job: Option<Arc<FamilyCore>>,
    /// The pool is dropping: exit once no job is left.
    pub(super) exit: bool,
    /// The worker sleeps on `wake`: a hirer must notify it.
    pub(super) sleeping: bool,
}

/// Which slots have threads, and their handles.
pub(super) struct SlotTable {
    /// Slots without a thread.
    pub(super) empty: Vec<u32>,
    /// Slots whose thread exited (or is exiting) and awaits `pthread_join`.
    pub(super) zombies: Vec<u32>,
    /// The joinable thread of each slot.
    pub(super) handles: Vec<Option<thread::Handle>>,
}

/// Code every new worker thread runs once, first, before its first job: to pin
/// it, name it, or open per-thread counters. It must not panic (a panic in it is
/// caught, and the worker runs on).
pub type WorkerStartHook = Arc<dyn Fn() + Send + Sync>;

/// What the pool and its workers share.
pub(super) struct Inner {
    pub(super) config: PoolConfig,
    pub(super) on_worker_start: Option<WorkerStartHook>,
    pub(super) max_idle: usize,
    pub(super) stack_size_bytes: usize,
    pub(super) idle_stack: SlotStack,
    pub(super) slots: Box<[Slot]>,
    pub(super) table: Mutex<SlotTable>,
    pub(super) idle: Padded<AtomicUsize>,
    pub(super) live: AtomicUsize,
    pub(super) shutdown: AtomicBool,
    pub(super) counters: Counters,
    /// Makes every `pthread_create` fail as with `EAGAIN` (tests of the limits).
    #[cfg(test)]
    pub(super) fail_spawns: AtomicBool,
}

/// What a new thread receives.
pub(super) struct WorkerStart {
    pub(super) inner: Arc<Inner>,
    pub(super) slot: u32,
}

impl Inner {
    /// Hires `wanted` workers for `core` (fewer if none can be had, or once
    /// its indices are all claimed).
    pub(super) fn dispatch(this: &Arc<Self>, core: &Arc<FamilyCore>, wanted: usize) {
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
    pub(super) fn hire(this: &Arc<Self>, core: &Arc<FamilyCore>) -> bool {
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
    pub(super) fn spawn(this: &Arc<Self>, core: &Arc<FamilyCore>) -> bool {
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
    pub(super) fn reap(table: &mut SlotTable) {
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
    pub(super) fn create_pthread(&self, start: *mut WorkerStart) -> Result<thread::Handle, i32> {
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
    pub(super) fn make_idle(&self, slot: u32) -> bool {
        if self.idle.fetch_add(1, Ordering::Relaxed) >= self.max_idle {
            self.idle.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        self.idle_stack.push(slot);
        true
    }

    /// A worker thread's life: wait for a job, run it, go idle or retire.
    pub(super) fn worker_loop(&self, slot: u32) {
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
pub(super) extern "C" fn worker_main(arg: *mut libc::c_void) -> *mut libc::c_void {
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
