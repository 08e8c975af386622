//! The list of idle workers: a mutex-guarded stack or a lock-free Treiber stack.
//!
//! Both hold worker *slot numbers* (`u32` below the pool's `max_threads`), never
//! pointers, so the lock-free version needs no memory reclamation: its nodes are
//! the slots of a fixed array, and its head packs `(tag, top)` into one
//! `AtomicU64` so that a pop that read a stale `next` cannot succeed (ABA).

use crate::sync::{lock, AtomicU32, AtomicU64, Mutex, Ordering, Padded, TryLockError};

/// Which structure guards the pool's list of idle workers.
///
/// Seed 000 §7.1 compares the two: a pthread mutex, which suspends waiting
/// threads, and an atomic compare-and-swap loop, which makes them spin. The
/// pool counts the failed attempts of each (see [`PoolStats`](crate::PoolStats)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FreeList {
    /// A `Vec` of idle workers behind a `std::sync::Mutex` (a futex on Linux).
    #[default]
    Mutex,
    /// A Treiber stack updated with compare-and-swap; ABA-safe through a
    /// 32-bit tag bumped by every successful update.
    LockFree,
}

impl FreeList {
    /// Both variants, in a fixed order (for sweeps).
    pub const ALL: [FreeList; 2] = [FreeList::Mutex, FreeList::LockFree];

    /// A short lowercase name: `"mutex"` or `"lockfree"`.
    pub fn name(self) -> &'static str {
        match self {
            FreeList::Mutex => "mutex",
            FreeList::LockFree => "lockfree",
        }
    }
}

impl std::fmt::Display for FreeList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A stack of slot numbers, in one of the two designs.
#[derive(Debug)]
pub(crate) enum SlotStack {
    Mutex(MutexStack),
    LockFree(TreiberStack),
}

impl SlotStack {
    /// An empty stack able to hold every slot number below `capacity`.
    pub(crate) fn new(kind: FreeList, capacity: u32) -> Self {
        match kind {
            FreeList::Mutex => SlotStack::Mutex(MutexStack::new(capacity)),
            FreeList::LockFree => SlotStack::LockFree(TreiberStack::new(capacity)),
        }
    }

    /// Pushes `slot`, which must not be in the stack already.
    pub(crate) fn push(&self, slot: u32) {
        match self {
            SlotStack::Mutex(s) => s.push(slot),
            SlotStack::LockFree(s) => s.push(slot),
        }
    }

    /// Pops the most recently pushed slot, if any.
    pub(crate) fn pop(&self) -> Option<u32> {
        match self {
            SlotStack::Mutex(s) => s.pop(),
            SlotStack::LockFree(s) => s.pop(),
        }
    }

    /// Failed compare-and-swap attempts so far (always 0 for the mutex).
    pub(crate) fn cas_failures(&self) -> u64 {
        match self {
            SlotStack::Mutex(_) => 0,
            SlotStack::LockFree(s) => s.cas_failures.load(Ordering::Relaxed),
        }
    }

    /// Lock acquisitions that found the mutex held (always 0 for the lock-free stack).
    pub(crate) fn lock_contentions(&self) -> u64 {
        match self {
            SlotStack::Mutex(s) => s.contentions.load(Ordering::Relaxed),
            SlotStack::LockFree(_) => 0,
        }
    }

    /// Sets both counters back to 0.
    pub(crate) fn reset_counters(&self) {
        match self {
            SlotStack::Mutex(s) => s.contentions.store(0, Ordering::Relaxed),
            SlotStack::LockFree(s) => s.cas_failures.store(0, Ordering::Relaxed),
        }
    }
}

/// A stack of slot numbers behind a mutex.
#[derive(Debug)]
pub(crate) struct MutexStack {
    slots: Mutex<Vec<u32>>,
    /// Times `try_lock` found the lock held before a blocking `lock`.
    contentions: Padded<AtomicU64>,
}

impl MutexStack {
    fn new(capacity: u32) -> Self {
        MutexStack {
            slots: Mutex::new(Vec::with_capacity(capacity as usize)),
            contentions: Padded::new(AtomicU64::new(0)),
        }
    }

    fn locked(&self) -> crate::sync::MutexGuard<'_, Vec<u32>> {
        match self.slots.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                self.contentions.fetch_add(1, Ordering::Relaxed);
                lock(&self.slots)
            }
        }
    }

    fn push(&self, slot: u32) {
        let mut slots = self.locked();
        debug_assert!(!slots.contains(&slot), "slot {slot} pushed twice");
        slots.push(slot);
    }

    fn pop(&self) -> Option<u32> {
        self.locked().pop()
    }
}

/// Low half of the head word: `top + 1`, or 0 for an empty stack.
const TOP_MASK: u64 = 0xFFFF_FFFF;
/// The tag lives in the high half of the head word.
const TAG_SHIFT: u32 = 32;

/// A Treiber stack over the slot numbers `0..capacity`.
///
/// # Invariants
/// - `head` = `tag << 32 | (top + 1)`, low half 0 when empty. Every successful
///   compare-and-swap (push or pop) writes `tag + 1` (wrapping), so a head word
///   is never written twice in a row with the same value.
/// - `next[s]` holds `below + 1` (0 = bottom) and is meaningful only while `s`
///   is in the stack; only the thread pushing `s` writes it.
///
/// # ABA
/// A pop reads `head`, then `next[top]`, then swaps `head` for `next[top]`. If
/// meanwhile `top` was popped and pushed again, the tag differs and the swap
/// fails. A false success would need the tag to wrap around exactly, i.e. 2^32
/// updates while one popping thread is stopped between two instructions.
#[derive(Debug)]
pub(crate) struct TreiberStack {
    head: Padded<AtomicU64>,
    next: Box<[AtomicU32]>,
    /// Failed compare-and-swap attempts (a relaxed atomic counter, so exact,
    /// unlike the seed's non-atomic `volatile` increment).
    cas_failures: Padded<AtomicU64>,
}

impl TreiberStack {
    pub(crate) fn new(capacity: u32) -> Self {
        TreiberStack {
            head: Padded::new(AtomicU64::new(0)),
            next: (0..capacity).map(|_| AtomicU32::new(0)).collect(),
            cas_failures: Padded::new(AtomicU64::new(0)),
        }
    }

    fn word(tag: u64, top_plus_one: u64) -> u64 {
        (tag.wrapping_add(1) << TAG_SHIFT) | top_plus_one
    }

    pub(crate) fn push(&self, slot: u32) {
        let link = &self.next[slot as usize];
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // The top fits in 32 bits: it is a slot number + 1 below u32::MAX.
            link.store((head & TOP_MASK) as u32, Ordering::Relaxed);
            let new = Self::word(head >> TAG_SHIFT, u64::from(slot) + 1);
            // Release: a popper that reads this head also sees `link`.
            match self
                .head
                .compare_exchange(head, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => {
                    self.cas_failures.fetch_add(1, Ordering::Relaxed);
                    head = actual;
                }
            }
        }
    }

    pub(crate) fn pop(&self) -> Option<u32> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let top_plus_one = head & TOP_MASK;
            if top_plus_one == 0 {
                return None;
            }
            // May be stale if `top` was popped meanwhile; the tag then makes
            // the compare-and-swap below fail.
            let below = self.next[(top_plus_one - 1) as usize].load(Ordering::Relaxed);
            let new = Self::word(head >> TAG_SHIFT, u64::from(below));
            match self
                .head
                .compare_exchange(head, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some((top_plus_one - 1) as u32),
                Err(actual) => {
                    self.cas_failures.fetch_add(1, Ordering::Relaxed);
                    head = actual;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn both_stacks_are_lifo_and_start_empty() {
        for kind in FreeList::ALL {
            let s = SlotStack::new(kind, 4);
            assert_eq!(s.pop(), None);
            for slot in [2, 0, 3] {
                s.push(slot);
            }
            assert_eq!(s.pop(), Some(3), "{kind}");
            assert_eq!(s.pop(), Some(0), "{kind}");
            s.push(1);
            assert_eq!(s.pop(), Some(1), "{kind}");
            assert_eq!(s.pop(), Some(2), "{kind}");
            assert_eq!(s.pop(), None, "{kind}");
            assert_eq!(s.cas_failures(), 0, "no contention, no failure");
        }
    }

    /// Threads repeatedly pop a slot, hold it briefly, and push it back; at the
    /// end every slot must be in the stack exactly once.
    fn stress(kind: FreeList) -> SlotStack {
        const SLOTS: u32 = 8;
        const THREADS: usize = 4;
        const ROUNDS: usize = 20_000;
        let stack = SlotStack::new(kind, SLOTS);
        for slot in 0..SLOTS {
            stack.push(slot);
        }
        let owned: Vec<AtomicU32> = (0..SLOTS).map(|_| AtomicU32::new(0)).collect();
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    let mut held = Vec::new();
                    for round in 0..ROUNDS {
                        if let Some(slot) = stack.pop() {
                            // Each slot has one owner at a time.
                            let before = owned[slot as usize].fetch_add(1, Ordering::Relaxed);
                            assert_eq!(before, 0, "slot {slot} popped twice");
                            held.push(slot);
                        }
                        if round % 3 == 0 || held.len() > 2 {
                            while let Some(slot) = held.pop() {
                                owned[slot as usize].fetch_sub(1, Ordering::Relaxed);
                                stack.push(slot);
                            }
                        }
                    }
                    for slot in held {
                        owned[slot as usize].fetch_sub(1, Ordering::Relaxed);
                        stack.push(slot);
                    }
                });
            }
        });
        let mut seen = BTreeSet::new();
        while let Some(slot) = stack.pop() {
            assert!(seen.insert(slot), "slot {slot} twice in the stack");
        }
        assert_eq!(seen, (0..SLOTS).collect(), "{kind}: a slot was lost");
        stack
    }

    #[test]
    fn lock_free_stack_loses_no_slot_under_contention() {
        stress(FreeList::LockFree);
    }

    #[test]
    fn mutex_stack_loses_no_slot_under_contention() {
        stress(FreeList::Mutex);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::Arc;
    use loom::thread;

    fn drain(stack: &TreiberStack) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some(slot) = stack.pop() {
            out.push(slot);
        }
        out.sort_unstable();
        out
    }

    /// Two threads each pop a slot and push it back: nothing is lost or doubled.
    #[test]
    fn pop_push_races_lose_nothing() {
        loom::model(|| {
            let stack = Arc::new(TreiberStack::new(2));
            stack.push(0);
            stack.push(1);
            let other = Arc::clone(&stack);
            let t = thread::spawn(move || {
                if let Some(slot) = other.pop() {
                    other.push(slot);
                }
            });
            if let Some(slot) = stack.pop() {
                stack.push(slot);
            }
            t.join().unwrap();
            assert_eq!(drain(&stack), vec![0, 1]);
        });
    }

    /// The ABA pattern: while one thread pops, the other pops two slots and
    /// pushes the first back. The tag must stop the first pop from installing
    /// the stale `next` (which would resurrect the slot the other thread holds).
    #[test]
    fn aba_is_detected() {
        loom::model(|| {
            let stack = Arc::new(TreiberStack::new(3));
            stack.push(2);
            stack.push(1);
            stack.push(0);
            let other = Arc::clone(&stack);
            let t = thread::spawn(move || {
                let a = other.pop();
                let b = other.pop();
                if let Some(a) = a {
                    other.push(a);
                }
                b
            });
            let mine = stack.pop();
            let held_by_other = t.join().unwrap();
            let mut rest = drain(&stack);
            rest.extend(mine);
            rest.extend(held_by_other);
            rest.sort_unstable();
            assert_eq!(rest, vec![0, 1, 2]);
        });
    }

    /// Two threads race to pop the only slot: exactly one gets it.
    #[test]
    fn the_last_slot_is_popped_once() {
        loom::model(|| {
            let stack = Arc::new(TreiberStack::new(1));
            stack.push(0);
            let other = Arc::clone(&stack);
            let t = thread::spawn(move || other.pop());
            let mine = stack.pop();
            let theirs = t.join().unwrap();
            assert_eq!(mine.xor(theirs), Some(0), "{mine:?} / {theirs:?}");
            assert_eq!(stack.pop(), None);
        });
    }

    /// The mutex stack under the same pop/push race, through `SlotStack`:
    /// nothing lost, and a contention is counted only when `try_lock` failed.
    #[test]
    fn mutex_stack_pop_push_races_lose_nothing() {
        loom::model(|| {
            let stack = Arc::new(SlotStack::new(FreeList::Mutex, 2));
            stack.push(0);
            stack.push(1);
            let other = Arc::clone(&stack);
            let t = thread::spawn(move || {
                if let Some(slot) = other.pop() {
                    other.push(slot);
                }
            });
            if let Some(slot) = stack.pop() {
                stack.push(slot);
            }
            t.join().unwrap();
            // At most one per concurrent pop or push.
            assert!(stack.lock_contentions() <= 4);
            let mut rest: Vec<u32> = std::iter::from_fn(|| stack.pop()).collect();
            rest.sort_unstable();
            assert_eq!(rest, vec![0, 1]);
        });
    }

    /// Concurrent pushes of distinct slots all land.
    #[test]
    fn concurrent_pushes_all_land() {
        loom::model(|| {
            let stack = Arc::new(TreiberStack::new(3));
            stack.push(0);
            let other = Arc::clone(&stack);
            let t = thread::spawn(move || other.push(1));
            stack.push(2);
            t.join().unwrap();
            assert_eq!(drain(&stack), vec![0, 1, 2]);
        });
    }
}
