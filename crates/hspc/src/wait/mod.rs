//! Wait loops: how a thread waits for another.
//!
//! [`Backoff`] is the crossbeam-style building block for wait loops
//! (`spin` = retry, `snooze` = wait, `is_completed` = time to park); the
//! channel's spinning and spin-then-park [`WaitStrategy`](crate::WaitStrategy)s
//! use it, and other code may too. [`SPIN_LIMIT`] and [`YIELD_LIMIT`] are its
//! two thresholds.
//!
//! # The `unstable-spin-loops` feature
//!
//! With the crate feature `unstable-spin-loops` (off by default), this module
//! also holds the spin-loop variants of seed 003 ("Overhead of the spin-lock
//! loop"), the instruments of corescope's `spin` probe: one function per
//! loop (`spin_plain`, `spin_pause`, `spin_fpdiv`, `spin_intdiv`, `spin_cas`,
//! `spin_cachemiss`, `spin_yield`, `park_futex`), each waiting on a 32-bit
//! *lock word* until it no longer holds the `locked` value and counting how
//! many times it read the word, so that *responsiveness* (time between two
//! reads of the lock word) is `elapsed / reads`; `SpinKind` names them,
//! `spin` dispatches, and `LockWord`, `Spinner`, `ChaseBuffer`, `Woken`,
//! `SpinReport`, `MissingChaseBuffer` and `UnknownSpinKind` go with them.
//! They are measuring instruments, not part of the channel: the feature is
//! outside the crate's semver guarantees (its name starts with `unstable-`,
//! which cargo-semver-checks leaves out of its checks), and may change or go
//! in any release.
//!
//! The lock word is 32 bits because the futex variant needs a 32-bit word.
//! There is no separate stop flag to poll (it would add a load to every
//! loop): stopping a spinner is a change of the lock word, as
//! `LockWord::stop` does. Every loop reads the word with a `Relaxed` load and
//! ends with an `Acquire` fence, so whatever the releasing thread wrote
//! before its `Release` store is visible when the loop returns.

mod backoff;
// Under loom the eventcount models the futex with loom's lock and condition
// variable (src/signal.rs), so nothing calls these there.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod futex;
#[cfg(feature = "unstable-spin-loops")]
mod loops;

pub use backoff::{Backoff, SPIN_LIMIT, YIELD_LIMIT};
#[cfg(feature = "unstable-spin-loops")]
pub use loops::{
    park_futex, spin, spin_cachemiss, spin_cas, spin_fpdiv, spin_intdiv, spin_pause, spin_plain,
    spin_yield, ChaseBuffer, LockWord, MissingChaseBuffer, SpinKind, SpinReport, Spinner,
    UnknownSpinKind, Woken,
};
