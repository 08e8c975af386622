//! Exponential backoff with the crossbeam contract.

use core::cell::Cell;

use crate::sync;

/// Steps of [`Backoff::spin`] / [`Backoff::snooze`] that only spin: the
/// longest spin is `2^SPIN_LIMIT` = 64 hints (crossbeam-utils' value; about
/// 64 × 140 cycles = 9 k cycles on Skylake-and-later PAUSE, far less on
/// older cores and on aarch64's ISB).
pub const SPIN_LIMIT: u32 = 6;

/// Steps after which [`Backoff::is_completed`] says "park": snoozing yields
/// the CPU between `SPIN_LIMIT` and `YIELD_LIMIT` (crossbeam-utils' value).
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
    pub const fn new() -> Self {
        Self { step: Cell::new(0) }
    }

    /// Starts again from the shortest wait.
    pub fn reset(&self) {
        self.step.set(0);
    }

    /// Backs off after a lost race: `2^step` spin hints, growing up to
    /// `2^SPIN_LIMIT`; never yields, never blocks, makes no system call.
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
    #[inline]
    pub fn is_completed(&self) -> bool {
        self.step.get() > YIELD_LIMIT
    }
}
