//! hspc: a high-speed single-producer/single-consumer channel whose buffers,
//! padding and wait strategy are tuned per machine.
//!
//! The design follows Saunders, Jeffery and Jones, "A Portable Framework for
//! High-Speed Parallel Producer/Consumers on Real CMP, SMT and SMP
//! Architectures" (seed 004):
//!
//! - one allocation holds every buffer, with configurable padding between
//!   buffers (`p1_singlealloc`, `p6_rmfalsesharing`);
//! - the words the two threads write live on separate
//!   [`CACHE_LINE`](pad::CACHE_LINE)-padded lines (`p3`, `p8`);
//! - in [`Mode::NBuffer`] the threads synchronise once per buffer, not once
//!   per event (`p7`, `p9`); [`Mode::Ring`] hands over every event, with
//!   cached indices, for latency;
//! - the wait strategy is a parameter (§4.2): condition variable, mutex,
//!   spinlocks with and without backoff and PAUSE, or spin-then-park on a
//!   futex.
//!
//! The [`wait`] module holds the wait loops (a crossbeam-style [`wait::Backoff`]
//! and the spin-loop variants of seed 003) for reuse by other code.
//!
//! # Examples
//!
//! ```
//! use hspc::{channel, Config, WaitStrategy};
//!
//! let config = Config::n_buffer(3, 4096).with_wait(WaitStrategy::SpinThenPark);
//! let (mut tx, mut rx) = channel::<[u64; 2]>(config)?;
//! std::thread::scope(|s| {
//!     s.spawn(move || {
//!         tx.push_slice(&[[1, 2], [3, 4]]).unwrap();
//!         tx.push([5, 6]).unwrap();
//!     });
//!     let mut got = Vec::new();
//!     while let Ok(e) = rx.pop() {
//!         got.push(e);
//!     }
//!     assert_eq!(got, [[1, 2], [3, 4], [5, 6]]);
//! });
//! # Ok::<(), hspc::ConfigError>(())
//! ```
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod channel;
mod config;
pub mod pad;
mod prefetch;
mod signal;
pub mod stack;
mod storage;
mod sync;
pub mod wait;

pub use channel::{
    channel, Consumer, PopError, Producer, PushError, SliceError, TryPopError, TryPushError,
};
#[cfg(not(loom))]
pub use channel::{ReadChunk, WriteChunk};
pub use config::{
    Affinity, Config, ConfigError, Geometry, Mode, WaitStrategy, DEFAULT_BUFFERS,
    DEFAULT_BUFFER_BYTES,
};
