//! One family's shared state: its lifetime-erased closure, the counter its
//! participants claim indices from, its places, and its completion.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::{Family, CHUNKS_PER_PLACE, SYNC_PAUSES, SYNC_POLLS};
use crate::sync::{
    lock, spin_loop, wait, yield_now, AtomicBool, AtomicUsize, Condvar, Mutex, Ordering, Padded,
};

/// The closure of a family with its lifetime erased.
pub(super) type Body = dyn Fn(usize) + Sync;

/// A pointer to a family's closure.
///
/// # Invariant
/// Whoever creates a [`FamilyCore`] keeps the pointee alive and unmoved until
/// every participant is done with it: until `attached` is 0 and the creator's
/// own participation has returned ([`Pool::finish`]).
pub(super) struct BodyPtr(*const Body);

// SAFETY: the pointee is `Sync`, so calling it through `&` from several threads
// is allowed; its lifetime is guaranteed by the invariant above.
unsafe impl Send for BodyPtr {}
// SAFETY: as for `Send`: only shared references to a `Sync` closure are made.
unsafe impl Sync for BodyPtr {}

/// Erases the lifetime of `body` (see [`BodyPtr`] for who keeps it alive).
pub(super) fn erase<'a>(body: &'a (dyn Fn(usize) + Sync + 'a)) -> BodyPtr {
    let ptr: *const (dyn Fn(usize) + Sync + 'a) = body;
    // SAFETY: both types are the same fat pointer and differ only in the
    // lifetime bound of the trait object; validity is the creator's duty.
    BodyPtr(unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + 'a), *const Body>(ptr) })
}

/// A panic payload carried from a participant to `sync`.
pub(super) type Payload = Box<dyn Any + Send + 'static>;

/// The shared state of one family.
pub(super) struct FamilyCore {
    pub(super) start: usize,
    pub(super) step: usize,
    /// Number of indices.
    pub(super) count: usize,
    /// Indices claimed at once.
    pub(super) chunk: usize,
    /// Most participants running indices at once (`min(block, count)`, or
    /// `count` when block is 0).
    pub(super) places: usize,
    pub(super) body: BodyPtr,
    /// Ordinal of the next unclaimed index; may overshoot `count`.
    pub(super) next: Padded<AtomicUsize>,
    /// Places taken (≤ `places`); a participant claims only while holding one.
    pub(super) active: AtomicUsize,
    /// Hired workers that may still call `body`.
    pub(super) attached: AtomicUsize,
    /// Set after a panic: participants stop claiming.
    pub(super) cancelled: AtomicBool,
    /// The first panic of the family.
    pub(super) panic: Mutex<Option<Payload>>,
    /// Whether the creator sleeps on `done_cv` (so the last worker must
    /// notify; otherwise it saves the system call).
    pub(super) done: Mutex<bool>,
    pub(super) done_cv: Condvar,
}

impl FamilyCore {
    pub(super) fn new(family: &Family, count: usize, body: BodyPtr) -> Self {
        let places = if family.block == 0 {
            count
        } else {
            family.block.min(count)
        };
        let chunk = if places >= count {
            1
        } else {
            (count / (places * CHUNKS_PER_PLACE)).max(1)
        };
        FamilyCore {
            start: family.start,
            step: family.step,
            count,
            chunk,
            places,
            body,
            next: Padded::new(AtomicUsize::new(0)),
            active: AtomicUsize::new(0),
            attached: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            panic: Mutex::new(None),
            done: Mutex::new(false),
            done_cv: Condvar::new(),
        }
    }

    pub(super) fn exhausted(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.count || self.cancelled.load(Ordering::Relaxed)
    }

    /// Claims and runs chunks until none is left; returns how many indices ran.
    /// The caller holds a place and keeps `body` alive (it is attached, or it
    /// is the creator).
    pub(super) fn run_indices(&self) -> u64 {
        // SAFETY: see `BodyPtr`: the caller is attached or is the creator, so
        // the closure is alive; it is `Sync`, so a shared reference is fine.
        let body = unsafe { &*self.body.0 };
        let mut ran = 0u64;
        while !self.cancelled.load(Ordering::Relaxed) {
            let first = self.next.fetch_add(self.chunk, Ordering::Relaxed);
            if first >= self.count {
                break;
            }
            let end = (first + self.chunk).min(self.count);
            let chunk = catch_unwind(AssertUnwindSafe(|| {
                for ordinal in first..end {
                    body(self.start + ordinal * self.step);
                }
            }));
            if let Err(payload) = chunk {
                self.cancelled.store(true, Ordering::Relaxed);
                lock(&self.panic).get_or_insert(payload);
                break;
            }
            ran += (end - first) as u64;
        }
        ran
    }

    /// Takes a place if one is free and indices remain.
    pub(super) fn take_place(&self) -> bool {
        !self.exhausted()
            && self
                .active
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |taken| {
                    (taken < self.places).then_some(taken + 1)
                })
                .is_ok()
    }

    pub(super) fn release_place(&self) {
        self.active.fetch_sub(1, Ordering::Relaxed);
    }

    /// A hired worker's whole participation: run, give back the place, detach.
    pub(super) fn work(&self) -> u64 {
        let ran = self.run_indices();
        self.release_place();
        // AcqRel: the creator's acquire load of 0 sees every write of the body.
        if self.attached.fetch_sub(1, Ordering::AcqRel) == 1 {
            // After this decrement `body` may be freed; only the core (kept
            // by our `Arc`) is touched.
            let creator_waits = lock(&self.done);
            if *creator_waits {
                self.done_cv.notify_all();
            }
        }
        ran
    }

    /// Waits until no hired worker is attached.
    pub(super) fn wait_detached(&self) {
        for poll in 0..SYNC_POLLS {
            if self.attached.load(Ordering::Acquire) == 0 {
                return;
            }
            if poll < SYNC_PAUSES {
                spin_loop();
            } else {
                yield_now();
            }
        }
        let mut creator_waits = lock(&self.done);
        *creator_waits = true;
        // The last worker decrements before taking `done`, so it cannot
        // look at the flag between this check and the wait.
        while self.attached.load(Ordering::Acquire) != 0 {
            creator_waits = wait(&self.done_cv, creator_waits);
        }
    }
}
