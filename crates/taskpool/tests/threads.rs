//! The pool joins every thread it started.
//!
//! This test counts the threads of the whole process, so it is the only test
//! of this binary (the harness runs tests of one binary in parallel threads).
#![cfg(not(loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use taskpool::{Family, FreeList, Pool, PoolConfig};

/// Threads of this process, from /proc/self/task.
fn process_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .expect("read /proc/self/task")
}

/// Threads of this process once those that were joined have left
/// /proc/self/task. `pthread_join` returns when the kernel clears the thread's
/// id, which happens before the exiting task is removed from the thread group,
/// so a count read right after a join may still include it for a moment: this
/// reads again, for up to 2 s, until the count is `expected` (and returns the
/// last count read either way).
fn process_threads_settled(expected: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let n = process_threads();
        if n == expected || Instant::now() >= deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
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
        if max_idle > 0 {
            // Idle workers stay; retired ones may already be gone from /proc.
            assert!(process_threads() > before, "the pool's threads are visible");
        }
        drop(pool);
        assert_eq!(
            process_threads_settled(before),
            before,
            "{free_list}: threads left after drop"
        );
    }
}
