//! Blocking and waking for one direction of the channel (data ready for
//! the consumer, or space ready for the producer), per [`WaitStrategy`].
//!
//! The waiter calls [`Signal::wait_until`] with a condition that reads the
//! other side's published index (and the closed flags); the other side
//! calls [`Signal::notify`] after every publication. For the spinning
//! strategies `notify` does nothing, so the hand-off is a plain store.
//!
//! The sleeping strategies use an *eventcount*: the waiter announces itself
//! in `sleeping`, issues a SeqCst fence, and re-checks its condition before
//! sleeping; the notifier publishes, issues a SeqCst fence, and wakes only
//! if it sees an announced sleeper. The two fences forbid the outcome where
//! the notifier misses the announcement *and* the waiter misses the
//! publication (store-buffering), so a wake-up is never lost, and a busy
//! channel makes no system call.

use crate::config::WaitStrategy;
use crate::pad::CachePadded;
use crate::sync::{
    self,
    atomic::{fence, AtomicU32, Ordering},
    Condvar, Mutex,
};
use crate::wait::Backoff;

/// Value of `sleeping` while a waiter may be asleep.
const SLEEPING: u32 = 1;
/// Value of `sleeping` otherwise.
const AWAKE: u32 = 0;

pub(crate) struct Signal {
    /// The eventcount word (and the futex word of `SpinThenPark`).
    sleeping: CachePadded<AtomicU32>,
    lock: CachePadded<Mutex<()>>,
    cond: Condvar,
}

impl Signal {
    pub(crate) fn new() -> Self {
        Self {
            sleeping: CachePadded::new(AtomicU32::new(AWAKE)),
            lock: CachePadded::new(Mutex::new(())),
            cond: Condvar::new(),
        }
    }

    fn lock(&self) -> sync::MutexGuardAlias<'_> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `ready()` is true. `ready` must include the "other side
    /// closed" condition, so the wait always ends.
    pub(crate) fn wait_until(&self, strategy: WaitStrategy, mut ready: impl FnMut() -> bool) {
        match strategy {
            WaitStrategy::Spinlock => {
                while !ready() {
                    sync::preempt_point();
                }
            }
            WaitStrategy::SpinPause => {
                while !ready() {
                    sync::spin_hint();
                }
            }
            WaitStrategy::SpinBackoff => {
                let backoff = Backoff::new();
                while !ready() {
                    backoff.spin();
                }
            }
            WaitStrategy::Mutex => loop {
                let guard = self.lock();
                let done = ready();
                drop(guard);
                if done {
                    return;
                }
                sync::yield_now();
            },
            WaitStrategy::Condvar => {
                if ready() {
                    return;
                }
                let mut guard = self.lock();
                loop {
                    self.sleeping.store(SLEEPING, Ordering::Relaxed);
                    fence(Ordering::SeqCst);
                    if ready() {
                        self.sleeping.store(AWAKE, Ordering::Relaxed);
                        return;
                    }
                    guard = self.cond.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
            }
            WaitStrategy::SpinThenPark => {
                let backoff = Backoff::new();
                loop {
                    if ready() {
                        return;
                    }
                    if !backoff.is_completed() {
                        backoff.snooze();
                        continue;
                    }
                    self.sleeping.store(SLEEPING, Ordering::Relaxed);
                    fence(Ordering::SeqCst);
                    if ready() {
                        self.sleeping.store(AWAKE, Ordering::Relaxed);
                        return;
                    }
                    self.park();
                }
            }
        }
    }

    /// Called after every publication by the side that does not wait here.
    #[inline(always)]
    pub(crate) fn notify(&self, strategy: WaitStrategy) {
        match strategy {
            WaitStrategy::Spinlock | WaitStrategy::SpinPause | WaitStrategy::SpinBackoff => {}
            WaitStrategy::Mutex => drop(self.lock()),
            WaitStrategy::Condvar => {
                fence(Ordering::SeqCst);
                if self.sleeping.load(Ordering::Relaxed) == SLEEPING {
                    self.wake_condvar();
                }
            }
            WaitStrategy::SpinThenPark => {
                fence(Ordering::SeqCst);
                if self.sleeping.load(Ordering::Relaxed) == SLEEPING {
                    self.unpark();
                }
            }
        }
    }

    #[cold]
    fn wake_condvar(&self) {
        // Taking the lock orders this wake after the waiter's `cond.wait`
        // started (the waiter announced itself while holding the lock).
        let _guard = self.lock();
        self.sleeping.store(AWAKE, Ordering::Relaxed);
        self.cond.notify_one();
    }

    /// Sleeps while `sleeping` is `SLEEPING` (spurious returns allowed).
    #[cfg(not(loom))]
    fn park(&self) {
        crate::wait::futex::park(&self.sleeping, SLEEPING);
    }

    #[cold]
    #[cfg(not(loom))]
    fn unpark(&self) {
        self.sleeping.store(AWAKE, Ordering::Relaxed);
        crate::wait::futex::unpark_all(&self.sleeping);
    }

    /// Under loom: a futex modelled with the mutex and condition variable
    /// (the check of the word and the sleep are atomic w.r.t. the wake).
    #[cfg(loom)]
    fn park(&self) {
        let guard = self.lock();
        if self.sleeping.load(Ordering::Relaxed) == SLEEPING {
            drop(self.cond.wait(guard));
        }
    }

    #[cfg(loom)]
    fn unpark(&self) {
        self.sleeping.store(AWAKE, Ordering::Relaxed);
        let _guard = self.lock();
        self.cond.notify_all();
    }
}
