//! The one place the crate takes its synchronisation primitives from.
//!
//! Under `cfg(loom)` these are loom's model-checked types, so the loom tests
//! (`tests/loom.rs`) explore every interleaving of the very code that ships;
//! otherwise they are the std/core types. No other module imports atomics,
//! locks or `Arc` directly.

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex};

/// Atomic types and orderings (loom's under `cfg(loom)`).
pub mod atomic {
    #[cfg(not(loom))]
    pub use core::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize, Ordering};
    #[cfg(loom)]
    pub use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize, Ordering};
}

/// The CPU's spin-wait hint: PAUSE on x86, ISB on aarch64 (what
/// `core::hint::spin_loop` emits there). Under loom, a scheduling point.
#[inline(always)]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::hint::spin_loop();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// A point where loom may switch threads; nothing at all otherwise.
///
/// Every busy loop calls this once per iteration, so that loom can run the
/// thread that would end the wait (loom rejects loops without one).
#[inline(always)]
pub(crate) fn preempt_point() {
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Give the CPU to another runnable thread (`sched_yield` on Linux).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// The guard of [`Mutex<()>`] (loom's or std's).
#[cfg(loom)]
pub(crate) type MutexGuardAlias<'a> = loom::sync::MutexGuard<'a, ()>;
/// The guard of [`Mutex<()>`] (loom's or std's).
#[cfg(not(loom))]
pub(crate) type MutexGuardAlias<'a> = std::sync::MutexGuard<'a, ()>;
