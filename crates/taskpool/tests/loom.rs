//! Model checks of the pool with loom: every interleaving (up to a preemption
//! bound) of a family's creator and one or two pooled workers.
//!
//! Run with (a separate target dir keeps the normal build cached):
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p taskpool --test loom --lib`
//! or `bash .ci/steps/loom.sh`. What each test proves: docs/verification.md.
//!
//! Under `cfg(loom)` the pool's atomics, mutexes, condition variables and
//! worker threads are loom's (src/sync.rs), so these tests run the code that
//! ships. The closures track their environment with loom's `UnsafeCell`:
//! loom fails a test when two accesses to one cell are not ordered by
//! happens-before, so a closure called after `run`/`sync` returned, or its
//! owned values dropped while a call may still run, is a reported data race,
//! and an index run twice or a result the creator cannot see yet is one too.
//!
//! Checked to bite (each change fails at least one test at bound 2):
//! - the last worker's `attached.fetch_sub` made `Relaxed`, or the acquire
//!   load of `sync`'s polling made `Relaxed`: a causality violation on the
//!   creator's read of the results;
//! - the last worker reading the creator's "I sleep" flag before its
//!   decrement, or a hirer reading the worker's `sleeping` before it posts
//!   the job: a lost wake-up, reported as a deadlock;
//! - `FamilyHandle::try_sync` or the scope freeing a closure before its
//!   family finished: the worker then calls freed memory, and the test
//!   process dies with SIGSEGV rather than a loom report (Miri reports such
//!   a use after free by name when its schedule hits it; tests/miri.rs).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use taskpool::{Family, FreeList, Pool, PoolConfig};

/// Preemption bound unless `LOOM_MAX_PREEMPTIONS` says otherwise: as in
/// hspc's loom tests. Every change listed above is caught with 2 already;
/// 3 costs about fifteen times as long (half a minute for this file on a
/// 2-CPU machine, most of it `two_workers_and_the_creator_share_a_family`).
const PREEMPTIONS: usize = 3;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(PREEMPTIONS);
    }
    builder.check(f);
}

/// A pool of at most `workers` threads.
fn pool(free_list: FreeList, workers: usize) -> Pool {
    Pool::new(PoolConfig::new(free_list).with_max_threads(workers)).expect("valid config")
}

/// One counter per index, each in a loom-tracked cell.
struct Hits(Vec<UnsafeCell<u32>>);

// SAFETY: every access goes through loom's `UnsafeCell`, which reports any
// two accesses not ordered by happens-before instead of racing.
unsafe impl Sync for Hits {}

impl Hits {
    fn new(n: usize) -> Self {
        Hits((0..n).map(|_| UnsafeCell::new(0)).collect())
    }

    /// The body's write: index `i` ran once more.
    fn hit(&self, i: usize) {
        // SAFETY: loom checks that no other access to this cell overlaps.
        self.0[i].with_mut(|p| unsafe { *p += 1 });
    }

    /// The creator's read after `sync`: every index ran exactly once, and
    /// every write of the body happened before.
    fn assert_each_once(&self) {
        for (i, cell) in self.0.iter().enumerate() {
            // SAFETY: as in `hit`.
            let n = cell.with(|p| unsafe { *p });
            assert_eq!(n, 1, "index {i} ran {n} times");
        }
    }
}

/// A stand-in for what a family's closure borrows or owns: the closure reads
/// it, and whoever ends its lifetime (the creator's stack frame moving on,
/// the pool freeing a boxed closure) writes it.
struct Lifetime(UnsafeCell<bool>);

// SAFETY: as for `Hits`.
unsafe impl Sync for Lifetime {}

impl Lifetime {
    fn new() -> Self {
        Lifetime(UnsafeCell::new(true))
    }

    /// A use by the closure: the value must still be alive.
    fn used(&self) {
        // SAFETY: as in `Hits::hit`.
        assert!(self.0.with(|p| unsafe { *p }), "used after its end");
    }

    /// The end of its lifetime; loom reports any use not ordered before.
    fn end(&self) {
        // SAFETY: as in `Hits::hit`.
        self.0.with_mut(|p| unsafe { *p = false });
    }
}

/// Owned by a `'static` closure: ends the tracked lifetime when the pool
/// frees the closure.
struct EndsOnDrop(Arc<Lifetime>);

impl Drop for EndsOnDrop {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// `Pool::run` with a closure that borrows the caller's stack (the lifetime
/// erasure of `run`): one hired worker and the creator share two indices.
#[test]
fn run_syncs_every_index_before_the_borrow_ends() {
    model(|| {
        let pool = pool(FreeList::LockFree, 1);
        let hits = Hits::new(2);
        let frame = Lifetime::new();
        pool.run(Family::new(0, 2), |i| {
            frame.used();
            hits.hit(i);
        })
        .unwrap();
        hits.assert_each_once();
        frame.end();
    });
}

/// A second family hires the idle worker back through the free list and its
/// mailbox (a lost wake-up there is a deadlock loom reports), for both free
/// list designs.
#[test]
fn a_second_family_rehires_the_idle_worker() {
    for free_list in FreeList::ALL {
        model(move || {
            let pool = pool(free_list, 1);
            for _ in 0..2 {
                let hits = Hits::new(2);
                pool.run(Family::new(0, 2), |i| hits.hit(i)).unwrap();
                hits.assert_each_once();
            }
            let stats = pool.stats();
            assert!(stats.threads_created <= 1, "{stats:?}");
        });
    }
}

/// Two hired workers and the creator race for three indices.
#[test]
fn two_workers_and_the_creator_share_a_family() {
    model(|| {
        let pool = pool(FreeList::Mutex, 2);
        let hits = Hits::new(3);
        pool.run(Family::new(0, 3), |i| hits.hit(i)).unwrap();
        hits.assert_each_once();
    });
}

/// Families inside a family: with its only worker busy, each inner family
/// runs on the thread that created it (the pool never waits for a worker, so
/// nesting cannot deadlock), and every inner index still runs once.
#[test]
fn nested_families_run_without_a_free_worker() {
    model(|| {
        let pool = pool(FreeList::LockFree, 1);
        let hits = Hits::new(4);
        pool.run(Family::new(0, 2), |outer| {
            pool.run(Family::new(0, 2), |inner| hits.hit(outer * 2 + inner))
                .unwrap();
        })
        .unwrap();
        hits.assert_each_once();
    });
}

/// `Pool::create` boxes a `'static` closure: `sync` frees it only after the
/// last call; dropping the handle without `sync` waits as well.
#[test]
fn create_frees_the_closure_after_its_last_call() {
    for explicit_sync in [true, false] {
        model(move || {
            let pool = pool(FreeList::LockFree, 1);
            let owned = Arc::new(Lifetime::new());
            let hits = Arc::new(Hits::new(2));
            let guard = EndsOnDrop(Arc::clone(&owned));
            let in_body = Arc::clone(&hits);
            let handle = pool
                .create(Family::new(0, 2), move |i| {
                    guard.0.used();
                    in_body.hit(i);
                })
                .unwrap();
            if explicit_sync {
                handle.sync();
            } else {
                drop(handle);
            }
            hits.assert_each_once();
        });
    }
}

/// `Pool::scope`: a scoped family borrows the environment and owns a value;
/// the scope syncs it (no explicit `sync`) and frees the boxed closure only
/// after the family finished, before the borrow ends.
#[test]
fn scope_frees_each_closure_after_its_family() {
    model(|| {
        let pool = pool(FreeList::Mutex, 1);
        let hits = Hits::new(2);
        let frame = Lifetime::new();
        let owned = Arc::new(Lifetime::new());
        pool.scope(|s| {
            let guard = EndsOnDrop(Arc::clone(&owned));
            let (hits, frame) = (&hits, &frame);
            let _family = s
                .create(Family::new(0, 2), move |i| {
                    frame.used();
                    guard.0.used();
                    hits.hit(i);
                })
                .unwrap();
        });
        hits.assert_each_once();
        frame.end();
    });
}

/// `ScopedFamily::sync` inside the scope: the closure is freed there, and
/// the scope's end has nothing left to wait for.
#[test]
fn scoped_sync_frees_the_closure_early() {
    model(|| {
        let pool = pool(FreeList::LockFree, 1);
        let hits = Hits::new(2);
        let owned = Arc::new(Lifetime::new());
        pool.scope(|s| {
            let guard = EndsOnDrop(Arc::clone(&owned));
            let hits = &hits;
            s.create(Family::new(0, 2), move |i| {
                guard.0.used();
                hits.hit(i);
            })
            .unwrap()
            .sync();
            hits.assert_each_once();
        });
    });
}
