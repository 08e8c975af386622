//! The one place the crate imports its synchronisation primitives from.
//!
//! Under `cfg(loom)` every atomic, lock and condition variable comes from
//! [loom](https://docs.rs/loom), so the model checker can explore the
//! interleavings of the same code that ships; otherwise they come from `std`.
//! Code elsewhere in the crate must not name `std::sync` or `core::sync::atomic`.

#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;

#[cfg(not(loom))]
pub(crate) use std::hint::spin_loop;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;

// loom's `Mutex::try_lock` reports with std's error type too.
pub(crate) use std::sync::TryLockError;

/// Locks `mutex`, ignoring poisoning.
///
/// The crate's mutexes guard only its own bookkeeping and user closures never
/// run while one is held, so a poisoned lock still guards consistent data.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits on `condvar`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar
        .wait(guard)
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Bytes between two independently written hot words.
///
/// 128 rather than 64 on x86_64 and aarch64 because the spatial prefetcher
/// pulls cache lines in pairs, so two words 64 bytes apart still share traffic.
/// Sources: Intel 64 and IA-32 Architectures Optimization Reference Manual,
/// §2.5.5.4 (adjacent cache line prefetch); crossbeam-utils `CachePadded`.
pub(crate) const FALSE_SHARING_BYTES: usize = 128;

/// Keeps `T` alone on its [`FALSE_SHARING_BYTES`] block.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct Padded<T>(pub(crate) T);

const _: () = assert!(std::mem::align_of::<Padded<u8>>() == FALSE_SHARING_BYTES);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
