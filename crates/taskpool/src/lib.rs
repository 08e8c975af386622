//! taskpool: a pool of reusable OS threads that runs SVP-style families.
//!
//! The runtime of seed 000 §7 (SVP-ptl) keeps a pool of pthreads and hands
//! them *families*: an index range whose every index is a tiny thread. This
//! crate rebuilds it so its two experiments can run on today's machines:
//!
//! - [`Pool`]: pthreads created with `pthread_create` (stack size
//!   [`DEFAULT_STACK_SIZE_BYTES`] unless configured), reused across families,
//!   joined on drop. [`Pool::create`] starts a [`Family`] and returns a
//!   [`FamilyHandle`] to `sync`; [`Pool::run`] creates and syncs in one call;
//!   [`Pool::scope`] lets families borrow from the caller's stack. Families
//!   may create and sync families themselves.
//! - [`FreeList`]: the idle workers sit in a mutex-guarded stack or in a
//!   lock-free Treiber stack with an ABA tag; [`Pool::stats`] counts failed
//!   compare-and-swaps, threads started, and what happened at the limits.
//! - [`fft`] and [`matmul`]: the seed's recursive radix-2 FFT and recursive
//!   block matrix multiply, on taskpool, sequentially, and (feature `rayon`,
//!   on by default) on rayon's work stealing, all through the same code.
//!
//! # Example
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use taskpool::{Family, FreeList, Pool, PoolConfig};
//!
//! let pool = Pool::new(PoolConfig::new(FreeList::LockFree)).unwrap();
//! let total = AtomicU64::new(0);
//! // Indices 0, 2, 4, …, 98; at most 4 of them at once.
//! pool.run(Family { start: 0, limit: 100, step: 2, block: 4 }, |i| {
//!     // A family may create families of its own.
//!     pool.run(Family::new(0, i), |_| {
//!         total.fetch_add(1, Ordering::Relaxed);
//!     })
//!     .unwrap();
//! })
//! .unwrap();
//! assert_eq!(total.into_inner(), (0..100).step_by(2).sum::<usize>() as u64);
//! ```
//!
//! # Threads and limits
//! Every index runs exactly once. When no idle worker exists the pool starts
//! a pthread; at [`PoolConfig::max_threads`], or when `pthread_create` fails
//! (`EAGAIN`), the family gets fewer workers and its creator runs the rest
//! when it syncs — the pool never waits for a worker, never panics on an OS
//! refusal, and reports both in [`PoolStats`].
#![deny(missing_docs)]

pub mod error;
pub mod fft;
pub mod free_list;
pub mod matmul;
pub mod pool;
mod shared;
mod sync;

pub use error::{KernelError, PoolError};
pub use free_list::FreeList;
pub use pool::{
    Family, FamilyHandle, Pool, PoolConfig, PoolStats, Scope, ScopedFamily, WorkerStartHook,
    DEFAULT_MAX_THREADS, DEFAULT_STACK_SIZE_BYTES, MAX_FAMILY_LEN, MAX_THREADS_LIMIT,
};
pub use shared::{Executor, Stop};
