//! The seed-003 wait loops of the `spin` probe (`kernels::spin_loops`, moved
//! from hspc's `unstable-spin-loops` feature): each stops when asked, each
//! observes a release (and the data written before it). No timings.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use corescope::kernels::spin_loops::{
    spin, ChaseBuffer, LockWord, MissingChaseBuffer, SpinKind, Spinner, Woken,
};

/// Generous deadline for a test body: only a deadlock takes this long.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and returns its result, or panics if it has
/// not finished by `deadline` (a deadlock) or if it panicked.
fn with_deadline<R: Send + 'static>(
    what: &str,
    deadline: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(deadline) {
        Ok(()) => handle.join().expect("test body panicked"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The body panicked before sending: surface its panic.
            match handle.join() {
                Ok(r) => r,
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {deadline:?} (deadlock?)")
        }
    }
}

fn spinner(kind: SpinKind) -> Spinner {
    match kind {
        // Small enough for a test, large enough to be a real chase.
        SpinKind::CacheMiss => Spinner::with_chase(kind, ChaseBuffer::new(1 << 16, 1)),
        _ => Spinner::new(kind),
    }
}

#[test]
fn every_spinner_stops_when_asked() {
    for kind in SpinKind::ALL {
        let lock = Arc::new(LockWord::new());
        let started = Arc::new(AtomicU32::new(0));
        let (l, s) = (lock.clone(), started.clone());
        let (woken, report) = with_deadline(kind.name(), DEADLINE, move || {
            let waiter = std::thread::spawn(move || {
                s.store(1, Ordering::Release);
                spinner(kind).wait(&l)
            });
            while started.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            lock.stop();
            waiter.join().unwrap()
        });
        assert_eq!(woken, Woken::Stopped, "{kind}");
        assert_eq!(report.value, LockWord::STOPPED, "{kind}");
        assert!(report.reads >= 1, "{kind}");
    }
}

#[test]
fn every_spinner_observes_a_release_and_the_data_before_it() {
    for kind in SpinKind::ALL {
        for round in 0..20u64 {
            let lock = Arc::new(LockWord::new());
            let data = Arc::new(AtomicU64::new(0));
            let (l, d) = (lock.clone(), data.clone());
            let (woken, seen) = with_deadline(kind.name(), DEADLINE, move || {
                let waiter = std::thread::spawn(move || {
                    let (woken, _) = spinner(kind).wait(&l);
                    // Relaxed: visibility must come from the loop's Acquire.
                    (woken, d.load(Ordering::Relaxed))
                });
                if round % 2 == 0 {
                    std::thread::yield_now();
                }
                data.store(round + 1, Ordering::Relaxed);
                lock.release();
                waiter.join().unwrap()
            });
            assert_eq!(woken, Woken::Released, "{kind}");
            assert_eq!(seen, round + 1, "{kind}: data written before the release");
        }
    }
}

#[test]
fn an_already_released_word_costs_one_read() {
    let lock = LockWord::new();
    lock.release();
    assert!(!lock.is_locked());
    for kind in SpinKind::ALL {
        let (woken, report) = spinner(kind).wait(&lock);
        assert_eq!((woken, report.reads), (Woken::Released, 1), "{kind}");
    }
    lock.lock();
    assert!(lock.is_locked());
}

#[test]
fn reads_are_counted() {
    // A spinner on a word that another thread releases after observing some
    // reads: the count is at least what the observer saw it reach.
    let word = Arc::new(AtomicU32::new(LockWord::LOCKED));
    let w = word.clone();
    let report = with_deadline("count", DEADLINE, move || {
        let waiter = std::thread::spawn(move || {
            corescope::kernels::spin_loops::spin_yield(&w, LockWord::LOCKED)
        });
        for _ in 0..50 {
            std::thread::yield_now();
        }
        word.store(LockWord::RELEASED, Ordering::Release);
        waiter.join().unwrap()
    });
    assert_eq!(report.value, LockWord::RELEASED);
    assert!(report.reads >= 1);
}

#[test]
fn cachemiss_needs_a_chase_buffer() {
    let word = AtomicU32::new(0);
    assert_eq!(
        spin(SpinKind::CacheMiss, &word, 1, None),
        Err(MissingChaseBuffer)
    );
    let mut chase = ChaseBuffer::new(4096, 7);
    let r = spin(SpinKind::CacheMiss, &word, 1, Some(&mut chase)).unwrap();
    assert_eq!((r.value, r.reads), (0, 1));
    assert_eq!(chase.bytes(), 4096);
    // One entry per cache line: 128-byte lines (crossbeam's CachePadded) on x86_64.
    #[cfg(target_arch = "x86_64")]
    assert_eq!(chase.lines(), 4096 / 128);
    assert!(Spinner::new(SpinKind::CacheMiss)
        .kind()
        .needs_chase_buffer());
}

#[test]
fn spin_kind_names_are_stable_and_parse() {
    let names: Vec<&str> = SpinKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "plain",
            "pause",
            "fpdiv",
            "intdiv",
            "cas",
            "cachemiss",
            "yield",
            "futex"
        ]
    );
    for kind in SpinKind::ALL {
        assert_eq!(kind.name().parse::<SpinKind>(), Ok(kind));
        assert_eq!(kind.to_string(), kind.name());
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, format!("\"{}\"", kind.name()));
        assert_eq!(kind.blocks(), kind == SpinKind::Futex);
    }
    let err = "spin".parse::<SpinKind>().unwrap_err();
    assert!(err.to_string().contains("plain"), "{err}");
}
