//! Wait loops: how a thread waits for another.
//!
//! [`Backoff`] is the crossbeam-style building block for wait loops
//! (`spin` = retry, `snooze` = wait, `is_completed` = time to park); the
//! channel's spinning and spin-then-park [`WaitStrategy`](crate::WaitStrategy)s
//! use it, and other code may too. [`SPIN_LIMIT`] and [`YIELD_LIMIT`] are its
//! two thresholds.
//!
//! ```
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use hspc::wait::Backoff;
//!
//! // Wait for a flag: spin, then yield, then sleep briefly.
//! let ready = AtomicBool::new(false);
//! std::thread::scope(|s| {
//!     s.spawn(|| ready.store(true, Ordering::Release));
//!     let backoff = Backoff::new();
//!     while !ready.load(Ordering::Acquire) {
//!         if backoff.is_completed() {
//!             std::thread::sleep(std::time::Duration::from_micros(50));
//!         } else {
//!             backoff.snooze();
//!         }
//!     }
//! });
//! ```

mod backoff;
// Under loom the eventcount models the futex with loom's lock and condition
// variable (src/signal.rs), so nothing calls these there.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod futex;

pub use backoff::{Backoff, SPIN_LIMIT, YIELD_LIMIT};
