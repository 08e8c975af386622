//! Exponential backoff with the crossbeam contract.

use core::cell::Cell;

use crate::sync;

/// Steps of [`Backoff::spin`] / [`Backoff::snooze`] that only spin: the
/// longest spin is `2^SPIN_LIMIT` = 64 hints (crossbeam-utils' value; about
/// 64 × 140 cycles = 9 k cycles on Skylake-and-later PAUSE, far less on
/// older cores and on aarch64's ISB).
///
/// ```
/// use hspc::wait::{Backoff, SPIN_LIMIT};
/// let b = Backoff::new();
/// for _ in 0..=SPIN_LIMIT {
///     b.snooze(); // spin hints only, no yield yet
/// }
/// assert!(!b.is_completed());
/// ```
pub const SPIN_LIMIT: u32 = 6;

/// Steps after which [`Backoff::is_completed`] says "park": snoozing yields
/// the CPU between `SPIN_LIMIT` and `YIELD_LIMIT` (crossbeam-utils' value).
///
/// ```
/// use hspc::wait::{Backoff, YIELD_LIMIT};
/// let b = Backoff::new();
/// for _ in 0..=YIELD_LIMIT {
///     b.snooze();
/// }
/// assert!(b.is_completed());
/// ```
pub const YIELD_LIMIT: u32 = 10;

/// Exponential backoff for wait loops.
///
/// Three contracts, as in crossbeam-utils:
/// - [`spin`](Backoff::spin): *retry* — another thread made progress (a
///   failed CAS); back off briefly, never leave the CPU;
/// - [`snooze`](Backoff::snooze): *wait* — we need another thread to act;
///   spin, then yield the CPU;
/// - [`is_completed`](Backoff::is_completed): waiting has gone on long enough
///   that the caller should block (park on a futex, a condition variable).
///
/// # Examples
///
/// ```
/// use hspc::wait::Backoff;
/// let b = Backoff::new();
/// let mut snoozes = 0;
/// while !b.is_completed() {
///     b.snooze();
///     snoozes += 1;
/// }
/// assert_eq!(snoozes, hspc::wait::YIELD_LIMIT + 1);
/// b.reset();
/// assert!(!b.is_completed());
/// ```
#[derive(Debug, Default)]
pub struct Backoff {
    step: Cell<u32>,
}

impl Backoff {
    /// A fresh backoff (shortest wait first).
    ///
    /// ```
    /// assert!(!hspc::wait::Backoff::new().is_completed());
    /// ```
    pub const fn new() -> Self {
        Self { step: Cell::new(0) }
    }

    /// Starts again from the shortest wait.
    ///
    /// ```
    /// let b = hspc::wait::Backoff::new();
    /// while !b.is_completed() {
    ///     b.snooze();
    /// }
    /// b.reset();
    /// assert!(!b.is_completed());
    /// ```
    pub fn reset(&self) {
        self.step.set(0);
    }

    /// Backs off after a lost race: `2^step` spin hints, growing up to
    /// `2^SPIN_LIMIT`; never yields, never blocks, makes no system call.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// // A CAS loop that backs off after each lost race.
    /// fn add(counter: &AtomicU64, n: u64) {
    ///     let backoff = hspc::wait::Backoff::new();
    ///     let mut old = counter.load(Ordering::Relaxed);
    ///     while let Err(now) =
    ///         counter.compare_exchange_weak(old, old + n, Ordering::AcqRel, Ordering::Relaxed)
    ///     {
    ///         old = now;
    ///         backoff.spin();
    ///     }
    /// }
    /// let counter = AtomicU64::new(1);
    /// add(&counter, 2);
    /// assert_eq!(counter.load(Ordering::Relaxed), 3);
    /// ```
    #[inline]
    pub fn spin(&self) {
        let step = self.step.get().min(SPIN_LIMIT);
        for _ in 0..1u32 << step {
            sync::spin_hint();
        }
        if self.step.get() <= SPIN_LIMIT {
            self.step.set(self.step.get() + 1);
        }
    }

    /// Waits for another thread: spins like [`spin`](Backoff::spin) at
    /// first, then yields the CPU (`sched_yield`) on each call.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// let ready = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| ready.store(true, Ordering::Release));
    ///     let backoff = hspc::wait::Backoff::new();
    ///     while !ready.load(Ordering::Acquire) {
    ///         backoff.snooze(); // spins first, then yields the CPU
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn snooze(&self) {
        let step = self.step.get();
        if step <= SPIN_LIMIT {
            for _ in 0..1u32 << step {
                sync::spin_hint();
            }
        } else {
            sync::yield_now();
        }
        if step <= YIELD_LIMIT {
            self.step.set(step + 1);
        }
    }

    /// True once snoozing has run its course: the caller should block.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// // Spin, then yield, then block: here "blocking" is a short sleep.
    /// let ready = AtomicBool::new(false);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| ready.store(true, Ordering::Release));
    ///     let backoff = hspc::wait::Backoff::new();
    ///     while !ready.load(Ordering::Acquire) {
    ///         if backoff.is_completed() {
    ///             std::thread::sleep(std::time::Duration::from_micros(50));
    ///         } else {
    ///             backoff.snooze();
    ///         }
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn is_completed(&self) -> bool {
        self.step.get() > YIELD_LIMIT
    }
}
