//! Small runs meant for Miri (`cargo +nightly miri test -p taskpool --test miri`,
//! or `bash .ci/steps/miri.sh`): a handful of indices and at most three
//! workers, so that Miri checks every `unsafe` part of the crate on real
//! threads in seconds — the pthread calls of `sync::thread`, the worker's
//! start box, the lifetime-erased closures of `run`, `create` and `scope`,
//! and the disjoint writes through `SharedMut` and the matrix views of the
//! kernels. They run in the normal test suite too.
#![cfg(not(loom))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use taskpool::fft::{dft_reference, fft, max_abs_error, test_signal, Complex};
use taskpool::matmul::{matmul_reference, rmatmul, Matrix};
use taskpool::{Executor, Family, FreeList, Pool, PoolConfig};

fn pool(free_list: FreeList, workers: usize) -> Pool {
    Pool::new(PoolConfig::new(free_list).with_max_threads(workers)).expect("valid config")
}

fn counters(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

fn assert_each_once(hits: &[AtomicU32], indices: impl Iterator<Item = usize>) {
    let want: Vec<u32> = {
        let mut w = vec![0; hits.len()];
        indices.for_each(|i| w[i] = 1);
        w
    };
    let got: Vec<u32> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
    assert_eq!(got, want);
}

/// `run` with a borrowing closure, a step and a block, on both free lists;
/// the second family reuses the idle workers.
#[test]
fn run_borrows_the_callers_stack() {
    for free_list in FreeList::ALL {
        let pool = pool(free_list, 3);
        for family in [
            Family::new(0, 6),
            Family::new(1, 12).with_step(3).with_block(2),
        ] {
            let hits = counters(12);
            pool.run(family, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert_each_once(&hits, family.indices());
        }
    }
}

/// `create` boxes a `'static` closure; `sync`, or dropping the handle, frees
/// it after the family finished. A nested family runs inside.
#[test]
fn created_families_own_their_closure() {
    let pool = Arc::new(pool(FreeList::LockFree, 2));
    let total = Arc::new(AtomicUsize::new(0));
    for explicit_sync in [true, false] {
        let (inner_pool, sum) = (Arc::clone(&pool), Arc::clone(&total));
        let handle = pool
            .create(Family::new(0, 3), move |i| {
                inner_pool
                    .run(Family::new(0, i + 1), |_| {
                        sum.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
            })
            .unwrap();
        assert_eq!(handle.len(), 3);
        if explicit_sync {
            handle.sync();
        } else {
            drop(handle);
        }
    }
    assert_eq!(total.load(Ordering::Relaxed), 2 * (1 + 2 + 3));
}

/// Scoped families borrow the environment; one is synced inside the scope,
/// the other by the scope's end.
#[test]
fn scoped_families_borrow_and_are_synced_by_the_scope() {
    let pool = pool(FreeList::Mutex, 2);
    let (a, b) = (counters(4), counters(4));
    pool.scope(|s| {
        s.create(Family::new(0, 4), |i| {
            a[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap()
        .sync();
        assert_each_once(&a, 0..4);
        let _unsynced = s
            .create(Family::new(0, 4), |i| {
                b[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
    });
    assert_each_once(&b, 0..4);
}

/// A panic in a worker's index reaches the creator, and the pool still runs
/// families afterwards.
#[test]
fn a_panic_crosses_to_the_creator() {
    let pool = pool(FreeList::LockFree, 2);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        pool.run(Family::new(0, 3), |i| assert_ne!(i, 1, "index 1 fails"))
            .unwrap();
    }));
    assert!(outcome.is_err());
    let hits = counters(3);
    pool.run(Family::new(0, 3), |i| {
        hits[i].fetch_add(1, Ordering::Relaxed);
    })
    .unwrap();
    assert_each_once(&hits, 0..3);
}

/// With `max_idle` 0 every worker retires after its job: the next spawn
/// joins it (`pthread_join` of a zombie) and reuses its slot.
#[test]
fn retired_workers_are_joined_and_replaced() {
    let pool = Pool::new(
        PoolConfig::new(FreeList::Mutex)
            .with_max_threads(1)
            .with_max_idle(0),
    )
    .unwrap();
    for _ in 0..3 {
        let hits = counters(2);
        pool.run(Family::new(0, 2), |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_each_once(&hits, 0..2);
    }
    assert_eq!(pool.stats().idle_threads, 0);
}

/// The kernels' disjoint writes (`SharedMut` in the FFT, the views of the
/// recursive matrix multiply) on the pool, at the smallest sizes that still
/// make families.
#[test]
fn kernels_write_disjoint_parts() {
    let pool = pool(FreeList::LockFree, 3);
    let exec = Executor::taskpool(&pool);
    let input = test_signal(8);
    let mut output = vec![Complex::default(); 8];
    fft(exec, &input, &mut output).unwrap();
    assert!(max_abs_error(&output, &dft_reference(&input)) < 1e-9);

    let (a, b) = (Matrix::test_matrix(4, 1), Matrix::test_matrix(4, 2));
    let mut c = Matrix::zeros(4);
    rmatmul(exec, &a, &b, &mut c, 1).unwrap();
    assert!(c.max_abs_diff(&matmul_reference(&a, &b).unwrap()) < 1e-12);
}
