//! Model checks of the hand-off protocol with loom: every interleaving (up
//! to a preemption bound) of a producer and a consumer on tiny channels.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p hspc --test loom --release`
//! (use a separate `CARGO_TARGET_DIR` to keep the normal build cached), or
//! `bash .ci/steps/loom.sh`, which CI runs. See docs/verification.md.
//!
//! Checked to bite: making the producer's `tail` store `Relaxed` fails every
//! model (loom sees the unsynchronised slot access), and dropping the
//! notifier's SeqCst fence in the eventcount deadlocks (a lost wake-up).
#![cfg(loom)]

use hspc::{channel, Config, PopError, PushError, TryPopError, WaitStrategy};
use loom::thread;

/// Strategies whose waiting code differs: plain spinning, mutex polling,
/// the condition-variable eventcount, and the futex eventcount (modelled).
const STRATEGIES: [WaitStrategy; 4] = [
    WaitStrategy::Spinlock,
    WaitStrategy::Mutex,
    WaitStrategy::Condvar,
    WaitStrategy::SpinThenPark,
];

/// Preemption bound unless `LOOM_MAX_PREEMPTIONS` says otherwise: 3 is the
/// least that finds a lost wake-up when either SeqCst fence of the
/// eventcount (src/signal.rs) is removed; 2 does not.
const PREEMPTIONS: usize = 3;

/// Preemption bound of the models of a spinning strategy, which has none of
/// the eventcount's fences that need the third (see [`PREEMPTIONS`]).
const SPINNING_PREEMPTIONS: usize = 2;

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(PREEMPTIONS, f);
}

/// As [`model`], with `preemptions` unless `LOOM_MAX_PREEMPTIONS` says otherwise.
fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(f);
}

fn send_and_drain(config: Config, n: u64) {
    let (mut tx, mut rx) = channel::<u64>(config).unwrap();
    let producer = thread::spawn(move || {
        for i in 0..n {
            tx.push(i).unwrap();
        }
    });
    for i in 0..n {
        assert_eq!(rx.pop(), Ok(i));
    }
    assert_eq!(rx.pop(), Err(PopError::Disconnected));
    producer.join().unwrap();
}

#[test]
fn ring_of_one_slot_hands_over_in_order() {
    for wait in STRATEGIES {
        model(move || send_and_drain(Config::ring(8).with_wait(wait), 2));
    }
}

/// A ring of a power-of-two slot count finds slots by mask; with a spinning
/// strategy it takes the short per-event path (`plain`). Two slots, one wrap.
#[test]
fn ring_of_two_slots_hands_over_in_order() {
    for wait in STRATEGIES {
        model(move || send_and_drain(Config::ring(16).with_wait(wait), 3));
    }
}

/// A spinning power-of-two ring's consumer gives slots back a line at a time,
/// at most half the ring: four slots, given back two at a time (or when the
/// consumer finds the ring empty), five events, so the producer waits for a
/// pair of slots and the ring wraps. One spinning strategy: under loom the
/// spinning ones differ only in their hint. Two preemptions, not three: the
/// third is there for the eventcount's fences (see [`PREEMPTIONS`]), which a
/// spinning strategy has none of, and it takes this model from about 30 s to
/// about 4 minutes.
#[test]
fn ring_releasing_slots_in_pairs_hands_over_in_order() {
    model_bounded(SPINNING_PREEMPTIONS, || {
        send_and_drain(Config::ring(32).with_wait(WaitStrategy::SpinPause), 5)
    });
}

/// Ring slots are found by mask when their count is a power of two (the
/// tests above) and by a wrapping offset otherwise: three slots, with one
/// wrap.
#[test]
fn ring_of_three_slots_hands_over_in_order() {
    for wait in STRATEGIES {
        model(move || send_and_drain(Config::ring(24).with_wait(wait), 4));
    }
}

#[test]
fn n_buffer_of_two_single_slot_buffers_hands_over_in_order() {
    for wait in STRATEGIES {
        model(move || send_and_drain(Config::n_buffer(2, 8).with_wait(wait), 3));
    }
}

/// Three single-slot buffers: the producer takes the buffer the consumer
/// released last, so which buffer a segment lands in depends on the
/// interleaving, and the consumer learns it from the `order` entry that
/// `tail` publishes. Five events wrap the buffers; the producer also waits
/// for a buffer with none free. A spinning strategy at two preemptions (see
/// [`ring_releasing_slots_in_pairs_hands_over_in_order`]), and the futex
/// eventcount at three.
#[test]
fn n_buffer_taking_the_buffer_released_last_hands_over_in_order() {
    model_bounded(SPINNING_PREEMPTIONS, || {
        send_and_drain(Config::n_buffer(3, 8).with_wait(WaitStrategy::SpinPause), 5)
    });
    model(|| {
        send_and_drain(
            Config::n_buffer(3, 8).with_wait(WaitStrategy::SpinThenPark),
            4,
        )
    });
}

#[test]
fn n_buffer_partial_buffer_is_handed_over_by_flush_and_drop() {
    for wait in STRATEGIES {
        model(move || {
            let (mut tx, mut rx) = channel::<u64>(Config::n_buffer(2, 16).with_wait(wait)).unwrap();
            let producer = thread::spawn(move || {
                tx.push(1).unwrap();
                tx.flush();
                tx.push(2).unwrap();
                // The drop hands over the second, partial, buffer.
            });
            assert_eq!(rx.pop(), Ok(1));
            assert_eq!(rx.pop(), Ok(2));
            assert_eq!(rx.pop(), Err(PopError::Disconnected));
            producer.join().unwrap();
        });
    }
}

#[test]
fn slices_hand_over_in_order() {
    model(|| {
        let config = Config::ring(16).with_wait(WaitStrategy::SpinThenPark);
        let (mut tx, mut rx) = channel::<u64>(config).unwrap();
        let producer = thread::spawn(move || tx.push_slice(&[1, 2, 3]).unwrap());
        let mut got = Vec::new();
        let mut buf = [0u64; 3];
        while let Ok(n) = rx.pop_slice(&mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, [1, 2, 3]);
        producer.join().unwrap();
    });
}

/// The non-blocking slice calls look at the other side at most once per
/// call: a spinning ring of four slots (slots given back two at a time),
/// five events sent in slices of three and taken in slices of two, so that
/// runs of slots cross the ring's end and calls find part or none of what
/// they ask for. Two preemptions, as for the pairs model above.
#[test]
fn try_slices_look_once_and_hand_over_in_order() {
    model_bounded(SPINNING_PREEMPTIONS, || {
        let config = Config::ring(32).with_wait(WaitStrategy::SpinPause);
        let (mut tx, mut rx) = channel::<u64>(config).unwrap();
        let producer = thread::spawn(move || {
            let events = [1, 2, 3, 4, 5];
            let mut sent = 0;
            while sent < events.len() {
                let end = (sent + 3).min(events.len());
                let n = tx.try_push_slice(&events[sent..end]);
                assert!(n <= end - sent);
                sent += n;
                if n == 0 {
                    thread::yield_now();
                }
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u64; 2];
        loop {
            match rx.try_pop_slice(&mut buf) {
                Ok(n) => {
                    assert!((1..=2).contains(&n));
                    got.extend_from_slice(&buf[..n]);
                }
                Err(TryPopError::Empty) => thread::yield_now(),
                Err(TryPopError::Disconnected) => break,
            }
        }
        assert_eq!(got, [1, 2, 3, 4, 5]);
        producer.join().unwrap();
    });
}

#[test]
fn dropping_the_consumer_releases_a_blocked_producer() {
    for wait in STRATEGIES {
        model(move || {
            let (mut tx, mut rx) = channel::<u64>(Config::ring(8).with_wait(wait)).unwrap();
            let producer = thread::spawn(move || {
                tx.push(1).unwrap();
                // Blocks until the consumer pops or leaves.
                match tx.push(2) {
                    Ok(()) => {}
                    Err(PushError::Disconnected(v)) => assert_eq!(v, 2),
                }
            });
            assert_eq!(rx.pop(), Ok(1));
            drop(rx);
            producer.join().unwrap();
        });
    }
}
