//! hspc: a high-speed single-producer/single-consumer channel whose buffers,
//! padding and wait strategy are tuned per machine.
//!
//! The design follows Saunders, Jeffery and Jones, "A Portable Framework for
//! High-Speed Parallel Producer/Consumers on Real CMP, SMT and SMP
//! Architectures" (seed 004):
//!
//! - one allocation holds every buffer, with configurable padding between
//!   buffers (`p1_singlealloc`, `p6_rmfalsesharing`);
//! - the words the two threads write live on separate cache lines, padded
//!   to the target's false-sharing distance (`p3`, `p8`);
//! - in [`Mode::NBuffer`] the threads synchronise once per buffer, not once
//!   per event (`p7`, `p9`); [`Mode::Ring`] hands over every event, with
//!   cached indices, for latency;
//! - the wait strategy is a parameter (§4.2): condition variable, mutex,
//!   spinlocks with and without backoff and PAUSE, or spin-then-park on a
//!   futex.
//!
//! # The public API
//!
//! - the channel: [`channel`], its halves [`Producer`] and [`Consumer`],
//!   in-place access through [`WriteChunk`] and [`ReadChunk`], and the
//!   errors [`TryPushError`], [`PushError`], [`TryPopError`], [`PopError`]
//!   and [`SliceError`];
//! - its configuration: [`Config`] (with serde support under the default
//!   feature `serde`), [`Mode`], [`WaitStrategy`], [`Affinity`],
//!   [`Geometry`], [`ConfigError`], [`DEFAULT_BUFFERS`] and
//!   [`DEFAULT_BUFFER_BYTES`], and [`l1d_bytes`] for
//!   [`Config::n_buffer_for_cache`];
//! - its backoff: [`wait::Backoff`], a crossbeam-style building block for
//!   wait loops, with its limits [`wait::SPIN_LIMIT`] and
//!   [`wait::YIELD_LIMIT`].
//!
//! # Guarantees
//!
//! - One producer and one consumer: [`Producer`] and [`Consumer`] are `Send`
//!   and not `Sync`, and every call takes `&mut self`.
//! - Every event pushed is popped exactly once, in the order pushed, while
//!   the consumer lives; after the producer is dropped the consumer still
//!   receives everything that was pushed, then the end of the stream.
//! - Events are `Copy` (plain data): the channel copies them in and out and
//!   never runs a destructor.
//! - Progress: with the three spinning strategies ([`WaitStrategy::Spinlock`],
//!   [`WaitStrategy::SpinBackoff`], [`WaitStrategy::SpinPause`]) the calls
//!   that do not wait (`try_push`, `try_push_slice`, `try_pop`,
//!   `try_pop_slice`, the chunks, `flush`) take no lock, make no system call
//!   and finish in a bounded number of steps whatever the other thread does.
//!   With [`WaitStrategy::SpinThenPark`] a publication makes a `futex` wake
//!   call when the other side sleeps; with [`WaitStrategy::Condvar`] it then
//!   also takes a mutex; with [`WaitStrategy::Mutex`] every publication takes
//!   one. The blocking calls (`push`, `push_slice`, `pop`, `pop_slice`) wait
//!   for the other side, so no call that waits is wait-free.
//! - Hand-off: [`Mode::Ring`] makes every push visible at once;
//!   [`Mode::NBuffer`] hands events over at buffer boundaries, on
//!   [`Producer::flush`], before the producer waits, and when it is dropped.
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
#![deny(rustdoc::broken_intra_doc_links)]
#![deny(rustdoc::private_intra_doc_links)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod cache;
mod channel;
mod config;
mod pad;
mod prefetch;
mod signal;
mod storage;
mod sync;
pub mod wait;

pub use cache::l1d_bytes;
pub use channel::{
    channel, Consumer, PopError, Producer, PushError, SliceError, TryPopError, TryPushError,
};
#[cfg(not(loom))]
pub use channel::{ReadChunk, WriteChunk};
pub use config::{
    Affinity, Config, ConfigError, Geometry, Mode, WaitStrategy, DEFAULT_BUFFERS,
    DEFAULT_BUFFER_BYTES,
};

/// The README's examples, run as doc tests (`cargo test --doc -p hspc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
