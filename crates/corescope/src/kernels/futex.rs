//! Blocking on a 32-bit word: the Linux `futex(2)` system call.
//!
//! `park(word, expected)` sleeps while `*word == expected`; `unpark_all(word)`
//! wakes every thread parked on `word`. Like the system call, `park` may
//! return spuriously, so callers always re-check their condition in a loop.
//! On other systems `park` is a yield (a legal spurious wake-up), which keeps
//! the callers' loops correct, if busier. (A copy of hspc's private
//! `wait::futex`, for the `spin` probe's parked waiter and its lock word.)

use std::sync::atomic::AtomicU32;

/// Sleeps while `word` holds `expected` (or until a spurious wake-up).
///
/// Returns at once if `word` does not hold `expected` at the time the kernel
/// checks it, so a wake-up between the caller's check and this call is never
/// lost.
#[cfg(target_os = "linux")]
pub fn park(word: &AtomicU32, expected: u32) {
    // SAFETY: `word.as_ptr()` points to a live, aligned 32-bit word for the
    // whole call (we hold a reference to it); FUTEX_WAIT only reads it, and a
    // null timeout means "no timeout". The return value (0, EAGAIN when the
    // word changed, EINTR) needs no handling: every caller re-checks.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            core::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every thread parked on `word` with [`park`].
#[cfg(target_os = "linux")]
pub fn unpark_all(word: &AtomicU32) {
    // SAFETY: as in `park`; FUTEX_WAKE does not access the word's memory,
    // it only uses its address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// Sleeps while `word` holds `expected`: here a yield, a legal spurious
/// wake-up (no futex on this target).
#[cfg(not(target_os = "linux"))]
pub fn park(word: &AtomicU32, expected: u32) {
    let _ = (word, expected);
    std::thread::yield_now();
}

/// Wakes every thread parked on `word`: nothing to do where `park` yields.
#[cfg(not(target_os = "linux"))]
pub fn unpark_all(word: &AtomicU32) {
    let _ = word;
}
