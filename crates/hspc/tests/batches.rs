//! The batch property (issue 41): any sequence of producer batch sizes and
//! any sequence of consumer batch sizes, on two threads, delivers every event
//! exactly once, in order, in every mode and with every wait strategy.
//!
//! The producer sends its events in slices whose lengths follow one
//! generated sequence (cycled), the consumer asks for slices whose lengths
//! follow another, each with the blocking or the non-blocking slice calls.
//! How the two threads interleave is the scheduler's; the sizes are
//! proptest's, so a failure shrinks to the shortest sequences that show it.
//! No timings.
#![cfg(not(loom))]

mod common;

use common::{with_deadline, DEADLINE};
use hspc::{channel, Config, Mode, PopError, TryPopError, WaitStrategy};
use proptest::prelude::*;

/// A case: the channel, the events, and how each side batches them.
#[derive(Clone, Debug)]
struct Case {
    config: Config,
    events: u64,
    producer_batches: Vec<usize>,
    consumer_batches: Vec<usize>,
    /// Producer: `try_push_slice` (yielding while full) instead of `push_slice`.
    producer_tries: bool,
    /// Consumer: `try_pop_slice` (yielding while empty) instead of `pop_slice`.
    consumer_tries: bool,
}

/// Events per case for the spinning strategies: a spinner sharing its CPU
/// with the thread it waits for (likely on a loaded 2-CPU machine) waits a
/// time slice per hand-off, so their cases stay short.
const SPINNING_EVENTS: u64 = 200;

/// Largest batch asked for: beyond every capacity the configs below make, so
/// slices that wrap, span buffers and exceed the channel are all covered.
const MAX_BATCH: usize = 80;

fn produce(tx: &mut hspc::Producer<u64>, case: &Case) {
    let mut next = 0u64;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    for &size in case.producer_batches.iter().cycle() {
        if next == case.events {
            break;
        }
        let k = (size as u64).min(case.events - next);
        batch.clear();
        batch.extend(next..next + k);
        if case.producer_tries {
            let mut done = 0;
            while done < batch.len() {
                let sent = tx.try_push_slice(&batch[done..]);
                assert!(sent <= batch.len() - done);
                if sent == 0 {
                    std::thread::yield_now();
                }
                done += sent;
            }
        } else {
            tx.push_slice(&batch).expect("the consumer is alive");
        }
        next += k;
    }
}

fn consume(rx: &mut hspc::Consumer<u64>, case: &Case) -> Vec<u64> {
    let mut got = Vec::with_capacity(case.events as usize);
    let mut buf = [0u64; MAX_BATCH];
    for &size in case.consumer_batches.iter().cycle() {
        let dst = &mut buf[..size];
        let n = if case.consumer_tries {
            match rx.try_pop_slice(dst) {
                Ok(n) => n,
                Err(TryPopError::Empty) => {
                    std::thread::yield_now();
                    continue;
                }
                Err(TryPopError::Disconnected) => break,
            }
        } else {
            match rx.pop_slice(dst) {
                Ok(n) => n,
                Err(PopError::Disconnected) => break,
            }
        };
        assert!((1..=size).contains(&n), "{n} events for a slice of {size}");
        got.extend_from_slice(&buf[..n]);
    }
    got
}

fn run(case: Case) -> Vec<u64> {
    let (mut tx, mut rx) = channel::<u64>(case.config).expect("valid config");
    let sender = case.clone();
    let producer = std::thread::spawn(move || {
        produce(&mut tx, &sender);
        // Dropping `tx` hands over the last partial buffer and ends the stream.
    });
    let got = consume(&mut rx, &case);
    producer.join().expect("producer panicked");
    got
}

fn any_config() -> impl Strategy<Value = Config> {
    (
        any::<bool>(),
        1usize..5,
        // 1 to 32 events of 8 bytes per buffer (a ring: per ring).
        (1usize..=32).prop_map(|events| events * 8),
        proptest::sample::select(WaitStrategy::ALL.to_vec()),
    )
        .prop_map(|(ring, buffers, buffer_bytes, wait)| {
            Config::default()
                .with_wait(wait)
                .with_mode(if ring { Mode::Ring } else { Mode::NBuffer })
                .with_buffers(if ring { buffers } else { buffers + 1 })
                .with_buffer_bytes(buffer_bytes)
        })
}

fn any_case() -> impl Strategy<Value = Case> {
    let batches = || proptest::collection::vec(1usize..=MAX_BATCH, 1..12);
    (
        any_config(),
        0u64..1500,
        batches(),
        batches(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(
                config,
                events,
                producer_batches,
                consumer_batches,
                producer_tries,
                consumer_tries,
            )| {
                let events = if config.wait.spins() {
                    events.min(SPINNING_EVENTS)
                } else {
                    events
                };
                Case {
                    config,
                    events,
                    producer_batches,
                    consumer_batches,
                    producer_tries,
                    consumer_tries,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_batch_sizes_deliver_every_event_once_in_order(case in any_case()) {
        let events = case.events;
        let what = format!("{case:?}");
        let got = with_deadline("batched transfer", DEADLINE, move || run(case));
        prop_assert_eq!(got.len() as u64, events, "count: {}", what);
        prop_assert!(
            got.iter().copied().eq(0..events),
            "events out of order, lost or repeated: {}",
            what
        );
    }
}
