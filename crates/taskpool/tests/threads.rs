//! Thread accounting: the pool joins every thread it started, and the
//! lock-free free list loses no worker under contention.
//!
//! The first test counts the threads of the whole process, so this binary
//! holds tests that must not overlap with other families running: they
//! share one lock.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use taskpool::{Family, FreeList, Pool, PoolConfig};

static SERIAL: Mutex<()> = Mutex::new(());

/// Threads of this process, from /proc/self/task.
fn process_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .expect("read /proc/self/task")
}

/// Makes `n` participants of one family overlap, so the pool must start
/// threads: every index waits (yielding) until `n` indices have started, or
/// until no worker can come (index run by the creator when the rest are done).
fn overlapping_family(pool: &Pool, n: usize) {
    let started = AtomicUsize::new(0);
    pool.run(Family::new(0, n), |_| {
        started.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_millis(50);
        // A bounded wait (never asserted): long enough that the workers overlap.
        while started.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::yield_now();
        }
    })
    .unwrap();
}

#[test]
fn drop_joins_every_thread_including_retired_ones() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = process_threads();
    // max_idle 2: most workers retire after each family; 0: all of them.
    for (free_list, max_idle) in [
        (FreeList::Mutex, 2),
        (FreeList::LockFree, 2),
        (FreeList::LockFree, 0),
    ] {
        let pool = Pool::new(
            PoolConfig::new(free_list)
                .with_max_threads(12)
                .with_max_idle(max_idle),
        )
        .unwrap();
        overlapping_family(&pool, 12);
        let stats = pool.stats();
        assert!(stats.threads_created > 0, "{stats:?}");
        overlapping_family(&pool, 12);
        let stats = pool.stats();
        assert!(stats.threads_created <= 24);
        assert!(process_threads() > before, "the pool's threads are visible");
        drop(pool);
        assert_eq!(
            process_threads(),
            before,
            "{free_list}: threads left after drop"
        );
    }
}

#[test]
fn lock_free_pool_loses_no_worker_under_contention() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
