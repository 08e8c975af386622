//! Behaviour of families: every index once, block limits, nesting, panics,
//! limits. No timing is asserted anywhere.
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use taskpool::{Family, FreeList, Pool, PoolConfig, PoolError};

fn pools() -> Vec<Pool> {
    FreeList::ALL
        .into_iter()
        .map(|f| Pool::new(PoolConfig::new(f).with_max_threads(16)).unwrap())
        .collect()
}

/// One counter per possible index.
fn counters(len: usize) -> Vec<AtomicU32> {
    (0..len).map(|_| AtomicU32::new(0)).collect()
}

/// Asserts that exactly the family's indices were hit, once each.
fn assert_exactly_once(family: Family, hits: &[AtomicU32]) {
    let expected: Vec<usize> = family.indices().collect();
    for (i, h) in hits.iter().enumerate() {
        let want = u32::from(expected.contains(&i));
        assert_eq!(h.load(Ordering::Relaxed), want, "index {i} of {family:?}");
    }
}

const SHAPES: [Family; 8] = [
    Family {
        start: 0,
        limit: 0,
        step: 1,
        block: 0,
    },
    Family {
        start: 3,
        limit: 4,
        step: 1,
        block: 0,
    },
    Family {
        start: 0,
        limit: 100,
        step: 1,
        block: 0,
    },
    Family {
        start: 5,
        limit: 200,
        step: 3,
        block: 0,
    },
    Family {
        start: 1,
        limit: 150,
        step: 7,
        block: 2,
    },
    Family {
        start: 0,
        limit: 64,
        step: 1,
        block: 1,
    },
    Family {
        start: 10,
        limit: 300,
        step: 2,
        block: 5,
    },
    Family {
        start: 9,
        limit: 3,
        step: 2,
        block: 0,
    },
];

#[test]
fn run_runs_every_index_exactly_once() {
    for pool in pools() {
        for family in SHAPES {
            let hits = counters(300);
            pool.run(family, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert_exactly_once(family, &hits);
        }
    }
}

#[test]
fn create_runs_every_index_exactly_once() {
    for pool in pools() {
        for family in SHAPES {
            let hits = Arc::new(counters(300));
            let h = Arc::clone(&hits);
            let handle = pool
                .create(family, move |i| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
            assert_eq!(handle.len(), family.len());
            handle.sync();
            assert_exactly_once(family, &hits);
        }
    }
}

#[test]
fn scoped_families_borrow_and_run_every_index_exactly_once() {
    for pool in pools() {
        let hits: Vec<Vec<AtomicU32>> = SHAPES.iter().map(|_| counters(300)).collect();
        pool.scope(|s| {
            // All families in flight at once; half synced explicitly, half by
            // the end of the scope.
            let handles: Vec<_> = SHAPES
                .iter()
                .zip(&hits)
                .map(|(&family, hits)| {
                    s.create(family, move |i| {
                        hits[i].fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap()
                })
                .collect();
            for (n, handle) in handles.into_iter().enumerate() {
                if n % 2 == 0 {
                    handle.sync();
                }
            }
        });
        for (family, hits) in SHAPES.iter().zip(&hits) {
            assert_exactly_once(*family, hits);
        }
    }
}

/// Tracks how many closures run at once.
#[derive(Default)]
struct Concurrency {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Concurrency {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        // Give other participants a chance to overlap with us.
        std::thread::yield_now();
    }
    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn block_bounds_the_indices_running_at_once() {
    for pool in pools() {
        for block in [1, 2, 3] {
            let c = Concurrency::default();
            pool.run(Family::new(0, 200).with_block(block), |_| {
                c.enter();
                c.leave();
            })
            .unwrap();
            assert!(c.max.into_inner() <= block, "block {block}");

            let c = Arc::new(Concurrency::default());
            let c2 = Arc::clone(&c);
            pool.create(Family::new(0, 200).with_block(block), move |_| {
                c2.enter();
                c2.leave();
            })
            .unwrap()
            .sync();
            assert!(c.max.load(Ordering::SeqCst) <= block, "block {block}");
        }
    }
}

/// A tree of nested families, `depth` levels of `width` children; returns leaves.
fn nested(pool: &Pool, depth: u32, width: usize, leaves: &AtomicUsize) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    pool.run(Family::new(0, width), |_| {
        nested(pool, depth - 1, width, leaves)
    })
    .unwrap();
}

#[test]
fn nested_families_complete_even_with_few_threads() {
    for free_list in FreeList::ALL {
        // 0 threads: all inline; 1 and 2: most nested families find no worker.
        for max_threads in [0, 1, 2, 16] {
            let pool = Pool::new(PoolConfig::new(free_list).with_max_threads(max_threads)).unwrap();
            let leaves = AtomicUsize::new(0);
            nested(&pool, 4, 4, &leaves);
            assert_eq!(
                leaves.into_inner(),
                256,
                "{free_list} max_threads={max_threads}"
            );
            let stats = pool.stats();
            assert!(stats.threads_created <= max_threads as u64 + stats.threads_exited);
            assert_eq!(stats.families, 1 + 4 + 16 + 64);
        }
    }
}

#[test]
fn nested_scoped_creates_inside_family_closures() {
    for pool in pools() {
        let total = AtomicUsize::new(0);
        pool.scope(|s| {
            let outer = s
                .create(Family::new(0, 6), |i| {
                    // A family created from a worker, synced there.
                    let inner = s
                        .create(Family::new(0, i + 1), |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                    inner.sync();
                    // And one left for the scope to sync.
                    let _unsynced = s
                        .create(Family::new(0, 2), |_| {
                            total.fetch_add(100, Ordering::Relaxed);
                        })
                        .unwrap();
                })
                .unwrap();
            outer.sync();
        });
        assert_eq!(total.into_inner(), (1..=6).sum::<usize>() + 6 * 200);
    }
}

#[test]
fn nested_create_handles_from_worker_threads() {
    let pool =
        Arc::new(Pool::new(PoolConfig::new(FreeList::LockFree).with_max_threads(8)).unwrap());
    let total = Arc::new(AtomicUsize::new(0));
    let (p, t) = (Arc::clone(&pool), Arc::clone(&total));
    pool.create(Family::new(0, 8), move |_| {
        let t2 = Arc::clone(&t);
        p.create(Family::new(0, 8), move |_| {
            t2.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap()
        .sync();
    })
    .unwrap()
    .sync();
    assert_eq!(total.load(Ordering::Relaxed), 64);
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn a_panic_in_a_closure_reaches_sync_and_the_pool_stays_usable() {
    for pool in pools() {
        // run: resumed in the caller.
        let caught = catch_unwind(AssertUnwindSafe(|| {
            pool.run(Family::new(0, 50), |i| {
                if i == 17 {
                    panic!("index 17 failed");
                }
            })
            .unwrap();
        }))
        .unwrap_err();
        assert_eq!(panic_message(&*caught), "index 17 failed");

        // create + try_sync: returned as an error.
        let handle = pool
            .create(Family::new(0, 50), |i| {
                if i == 3 {
                    panic!("index 3 failed");
                }
            })
            .unwrap();
        let payload = handle.try_sync().unwrap_err();
        assert_eq!(panic_message(&*payload), "index 3 failed");

        // scope: an unsynced family's panic is resumed at the scope's end.
        let caught = catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                let _ = s
                    .create(Family::new(0, 8), |i| assert_ne!(i, 5, "scoped index 5"))
                    .unwrap();
            });
        }))
        .unwrap_err();
        assert!(panic_message(&*caught).contains("scoped index 5"));

        // Still works afterwards.
        let hits = counters(40);
        pool.run(Family::new(0, 40), |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_exactly_once(Family::new(0, 40), &hits);
    }
}

#[test]
fn dropping_a_handle_waits_for_its_family() {
    let pool = Pool::new(PoolConfig::default().with_max_threads(4)).unwrap();
    let hits = Arc::new(counters(100));
    let h = Arc::clone(&hits);
    let handle = pool
        .create(Family::new(0, 100), move |i| {
            h[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    drop(handle);
    assert_exactly_once(Family::new(0, 100), &hits);
}

#[test]
fn zero_threads_run_everything_on_the_creator() {
    let pool = Pool::new(PoolConfig::default().with_max_threads(0)).unwrap();
    let hits = counters(30);
    pool.run(Family::new(0, 30), |i| {
        hits[i].fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert_exactly_once(Family::new(0, 30), &hits);
    let stats = pool.stats();
    assert_eq!(stats.threads_created, 0);
    assert_eq!(stats.indices_on_creators, 30);
    assert_eq!(stats.indices_on_workers, 0);
}

#[test]
fn invalid_families_and_configs_are_errors() {
    let pool = Pool::new(PoolConfig::default()).unwrap();
    let zero = Family::new(0, 10).with_step(0);
    assert_eq!(
        pool.run(zero, |_| {}),
        Err(PoolError::ZeroStep {
            start: 0,
            limit: 10
        })
    );
    assert!(matches!(
        pool.create(zero, |_| {}),
        Err(PoolError::ZeroStep { .. })
    ));
    let msg = PoolError::ZeroStep {
        start: 0,
        limit: 10,
    }
    .to_string();
    assert!(msg.contains("step of at least 1"), "{msg}");

    assert!(matches!(
        Pool::new(PoolConfig::default().with_stack_size_bytes(1024)),
        Err(PoolError::StackTooSmall {
            requested: 1024,
            ..
        })
    ));
    assert!(matches!(
        Pool::new(PoolConfig::default().with_max_threads(4).with_max_idle(5)),
        Err(PoolError::IdleAboveMax {
            max_idle: 5,
            max_threads: 4
        })
    ));
    assert!(matches!(
        Pool::new(PoolConfig::default().with_max_threads(usize::MAX)),
        Err(PoolError::TooManyThreads { .. })
    ));
}

#[test]
fn stats_count_families_and_threads_and_reset() {
    for pool in pools() {
        for _ in 0..5 {
            pool.run(Family::new(0, 64), |_| {
                std::hint::black_box(());
            })
            .unwrap();
        }
        let stats = pool.stats();
        assert_eq!(stats.families, 5);
        assert_eq!(stats.indices_on_workers + stats.indices_on_creators, 5 * 64);
        assert!(stats.live_threads as u64 <= stats.threads_created);
        if pool.free_list() == FreeList::Mutex {
            assert_eq!(stats.cas_failures, 0);
        } else {
            assert_eq!(stats.lock_contentions, 0);
        }
        pool.reset_stats();
        let reset = pool.stats();
        assert_eq!(
            (reset.families, reset.threads_created, reset.cas_failures),
            (0, 0, 0)
        );
        assert_eq!(reset.live_threads, pool.stats().live_threads);
    }
}

/// Makes `n` participants of one family overlap (bounded wait, never asserted).
fn overlapping_family(pool: &Pool, n: usize) {
    let started = AtomicUsize::new(0);
    pool.run(Family::new(0, n), |_| {
        started.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_millis(50);
        while started.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::yield_now();
        }
    })
    .unwrap();
}

#[test]
fn lock_free_pool_loses_no_worker_under_contention() {
    let pool = Pool::new(PoolConfig::new(FreeList::LockFree).with_max_threads(24)).unwrap();
    let done = AtomicUsize::new(0);
    // Several creators hammer the free list at once with tiny families.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..300 {
                    pool.run(Family::new(0, 6), |_| {
                        done.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(done.into_inner(), 4 * 300 * 6);
    // Workers go back to the free list just after their family ends; once
    // quiet, every live worker must be idle (none lost, none counted twice).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stats = pool.stats();
        if stats.idle_threads == stats.live_threads {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "workers never all went idle: {stats:?}"
        );
        std::thread::yield_now();
    }
    // And each idle worker can be hired again: a family that wants all of them.
    let stats = pool.stats();
    let before_created = stats.threads_created;
    overlapping_family(&pool, stats.live_threads + 1);
    assert_eq!(
        pool.stats().threads_created,
        before_created,
        "an idle worker was lost, so a new one was started"
    );
}

#[test]
fn every_worker_runs_the_start_hook_once_and_a_panicking_hook_harms_nothing() {
    let started = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&started);
    let hook: taskpool::WorkerStartHook = Arc::new(move || {
        seen.fetch_add(1, Ordering::Relaxed);
        panic!("hook fails");
    });
    let pool = Pool::with_worker_start(PoolConfig::default().with_max_threads(3), hook).unwrap();
    let sum = AtomicUsize::new(0);
    for _ in 0..5 {
        pool.run(Family::new(0, 10_000), |i| {
            sum.fetch_add(i, Ordering::Relaxed);
        })
        .unwrap();
    }
    assert_eq!(sum.into_inner(), 5 * (10_000 * 9_999 / 2));
    let created = pool.stats().threads_created as usize;
    drop(pool);
    assert!(created <= 3);
    assert_eq!(started.load(Ordering::Relaxed), created);
}
