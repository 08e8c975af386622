//! What the kernels share: where they run, and disjoint mutable access.

use std::marker::PhantomData;

use crate::pool::Pool;
use crate::sync::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Where a kernel runs its parallel steps.
///
/// The kernels in [`fft`](crate::fft) and [`matmul`](crate::matmul) are
/// written once against this; only the executor changes between variants, so
/// a comparison measures the runtimes, not two different codes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Executor<'a> {
    /// One thread, plain loops: the reference.
    Sequential,
    /// Families on a taskpool. `block` bounds the data-parallel families
    /// (FFT butterflies, matrix additions); 0 = no limit, so every index may
    /// get its own worker as in seed 000. Recursion families (2 halves, 8
    /// products) have no block.
    TaskPool {
        /// The pool to run on.
        pool: &'a Pool,
        /// Block of the data-parallel families (0 = no limit).
        block: usize,
    },
    /// rayon's current thread pool (the global one, unless called inside
    /// `rayon::ThreadPool::install`): work stealing.
    #[cfg(feature = "rayon")]
    Rayon,
    /// `inner`, checking `stop` before every family: once its deadline has
    /// passed, every family not yet started is abandoned (its indices never
    /// run), so a kernel returns soon after the deadline with a wrong result
    /// that the caller discards ([`Stop::stopped`]). Families already running
    /// finish.
    Until {
        /// Where the families that do start run.
        inner: &'a Executor<'a>,
        /// The deadline and the count of families run and abandoned.
        stop: &'a Stop,
    },
}

/// A deadline checked between families (see [`Executor::Until`]), and how far a
/// kernel got before it.
#[derive(Debug)]
pub struct Stop {
    deadline: Option<Instant>,
    stopped: AtomicBool,
    run: AtomicU64,
    abandoned: AtomicU64,
}

impl Stop {
    /// Abandon the families that would start after `deadline`.
    pub fn at(deadline: Instant) -> Self {
        Stop {
            deadline: Some(deadline),
            stopped: AtomicBool::new(false),
            run: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
        }
    }

    /// Never stop (counts families only).
    pub fn never() -> Self {
        Stop {
            deadline: None,
            stopped: AtomicBool::new(false),
            run: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
        }
    }

    /// Whether the deadline passed and families were abandoned.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Families started before the deadline.
    pub fn families_run(&self) -> u64 {
        self.run.load(Ordering::Relaxed)
    }

    /// Families abandoned after it.
    pub fn families_abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// Whether a family may start now (and count it either way).
    fn admit(&self) -> bool {
        let late = self.stopped.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d);
        if late {
            self.stopped.store(true, Ordering::Relaxed);
            self.abandoned.fetch_add(1, Ordering::Relaxed);
        } else {
            self.run.fetch_add(1, Ordering::Relaxed);
        }
        !late
    }
}

impl<'a> Executor<'a> {
    /// A taskpool executor with no block limit.
    pub fn taskpool(pool: &'a Pool) -> Self {
        Executor::TaskPool { pool, block: 0 }
    }

    /// `"sequential"`, `"taskpool"` or `"rayon"`.
    pub fn name(&self) -> &'static str {
        match self {
            Executor::Sequential => "sequential",
            Executor::TaskPool { .. } => "taskpool",
            #[cfg(feature = "rayon")]
            Executor::Rayon => "rayon",
            Executor::Until { inner, .. } => inner.name(),
        }
    }

    /// Runs `body(0..count)` as a recursion family (no block limit).
    pub(crate) fn fork(&self, count: usize, body: &(dyn Fn(usize) + Sync)) {
        match self {
            Executor::Until { inner, stop } => {
                if stop.admit() {
                    inner.fork(count, body);
                }
            }
            _ => self.family(count, 0, body),
        }
    }

    /// Runs `body(0..count)` as a data-parallel family (the executor's block).
    pub(crate) fn for_each(&self, count: usize, body: &(dyn Fn(usize) + Sync)) {
        if let Executor::Until { inner, stop } = self {
            if stop.admit() {
                inner.for_each(count, body);
            }
            return;
        }
        let block = match self {
            Executor::TaskPool { block, .. } => *block,
            _ => 0,
        };
        self.family(count, block, body);
    }

    fn family(&self, count: usize, block: usize, body: &(dyn Fn(usize) + Sync)) {
        match self {
            Executor::Sequential => (0..count).for_each(body),
            Executor::TaskPool { pool, .. } => pool.run_range(count, block, body),
            #[cfg(feature = "rayon")]
            Executor::Rayon => {
                use rayon::prelude::*;
                (0..count).into_par_iter().for_each(body);
            }
            Executor::Until { .. } => {
                if block == 0 {
                    self.fork(count, body);
                } else {
                    self.for_each(count, body);
                }
            }
        }
    }
}

/// A mutable slice that several threads may write, each in its own part.
///
/// The kernels hand index `i` of a family a part of an output that no other
/// index touches; this type carries the slice into a shared (`Fn + Sync`)
/// closure. Creating it borrows the slice mutably for `'a`.
pub(crate) struct SharedMut<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: it hands out `&mut T` to disjoint parts only (the callers' duty), so
// sharing it across threads is like sending those parts, which needs `T: Send`.
unsafe impl<T: Send> Send for SharedMut<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for SharedMut<'_, T> {}

impl<'a, T> SharedMut<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        SharedMut {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// The part `start..start + len`.
    ///
    /// # Safety
    /// While the returned slice lives, no other reference obtained from this
    /// `SharedMut` may overlap it.
    #[allow(clippy::mut_from_ref)] // Disjointness is the caller's contract.
    pub(crate) unsafe fn part(&self, start: usize, len: usize) -> &'a mut [T] {
        assert!(
            start <= self.len && len <= self.len - start,
            "part {start}+{len} out of {}",
            self.len
        );
        // SAFETY: in bounds (checked above) of a slice borrowed mutably for
        // 'a; exclusive because the caller guarantees no overlap.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}
