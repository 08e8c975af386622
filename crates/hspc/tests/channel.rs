//! Behaviour of the channel: every event arrives once and in order under
//! every configuration and API mix; closing never deadlocks. No timings.
#![cfg(not(loom))]

mod common;

use common::{with_deadline, Rng, DEADLINE};
use hspc::{
    channel, Config, ConfigError, Mode, PopError, PushError, TryPopError, TryPushError,
    WaitStrategy,
};
use proptest::prelude::*;

/// An event that is not a power of two in size (20 bytes, align 4), to
/// exercise padding and alignment arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Odd([u32; 5]);

trait Event: Copy + Send + PartialEq + std::fmt::Debug + 'static {
    fn make(i: u64) -> Self;
}
impl Event for u64 {
    fn make(i: u64) -> Self {
        i
    }
}
impl Event for Odd {
    fn make(i: u64) -> Self {
        let i = i as u32;
        Odd([i, !i, i ^ 0x5555, i.rotate_left(7), 42])
    }
}
impl Event for u8 {
    fn make(i: u64) -> Self {
        i as u8
    }
}

/// Sends `n` events with a random mix of producer APIs and receives them
/// with a random mix of consumer APIs; returns what was received.
fn transfer<T: Event>(config: Config, n: u64, seed: u64) -> Vec<T> {
    let (mut tx, mut rx) = channel::<T>(config).expect("valid config");
    let producer = std::thread::spawn(move || {
        let mut rng = Rng(seed);
        let mut i = 0u64;
        let mut batch = Vec::new();
        while i < n {
            let k = (1 + rng.below(40) as u64).min(n - i);
            match rng.below(6) {
                0 => {
                    for j in i..i + k {
                        tx.push(T::make(j)).unwrap();
                    }
                }
                1 => {
                    for j in i..i + k {
                        let mut v = T::make(j);
                        loop {
                            match tx.try_push(v) {
                                Ok(()) => break,
                                Err(TryPushError::Full(back)) => {
                                    v = back;
                                    std::thread::yield_now();
                                }
                                Err(TryPushError::Disconnected(_)) => panic!("consumer gone"),
                            }
                        }
                    }
                }
                2 => {
                    batch.clear();
                    batch.extend((i..i + k).map(T::make));
                    tx.push_slice(&batch).unwrap();
                }
                3 => {
                    batch.clear();
                    batch.extend((i..i + k).map(T::make));
                    let mut done = 0;
                    while done < batch.len() {
                        let m = tx.try_push_slice(&batch[done..]);
                        if m == 0 {
                            std::thread::yield_now();
                        }
                        done += m;
                    }
                }
                4 => {
                    batch.clear();
                    batch.extend((i..i + k).map(T::make));
                    let mut done = 0;
                    while done < batch.len() {
                        let chunk = tx.write_chunk(batch.len() - done);
                        if chunk.is_empty() {
                            std::thread::yield_now();
                            continue;
                        }
                        done += chunk.copy_from(&batch[done..]);
                    }
                }
                _ => {
                    tx.push(T::make(i)).unwrap();
                    tx.flush();
                    i += 1;
                    continue;
                }
            }
            i += k;
        }
        // Dropping `tx` hands over the last partial buffer.
    });

    let mut rng = Rng(seed ^ 0xC0FFEE);
    let mut got = Vec::with_capacity(n as usize);
    let mut buf = [T::make(0); 64];
    'outer: loop {
        match rng.below(5) {
            0 => match rx.pop() {
                Ok(v) => got.push(v),
                Err(PopError::Disconnected) => break,
            },
            1 => match rx.try_pop() {
                Ok(v) => got.push(v),
                Err(TryPopError::Empty) => std::thread::yield_now(),
                Err(TryPopError::Disconnected) => break,
            },
            2 => {
                let want = 1 + rng.below(buf.len());
                match rx.pop_slice(&mut buf[..want]) {
                    Ok(m) => {
                        assert!((1..=want).contains(&m));
                        got.extend_from_slice(&buf[..m]);
                    }
                    Err(PopError::Disconnected) => break,
                }
            }
            3 => {
                let want = 1 + rng.below(buf.len());
                match rx.try_pop_slice(&mut buf[..want]) {
                    Ok(m) => got.extend_from_slice(&buf[..m]),
                    Err(TryPopError::Empty) => std::thread::yield_now(),
                    Err(TryPopError::Disconnected) => break 'outer,
                }
            }
            _ => match rx.read_chunk(1 + rng.below(64)) {
                Ok(chunk) => {
                    let take = 1 + rng.below(chunk.len());
                    got.extend_from_slice(&chunk.as_slice()[..take]);
                    chunk.commit(take);
                }
                Err(TryPopError::Empty) => std::thread::yield_now(),
                Err(TryPopError::Disconnected) => break,
            },
        }
    }
    producer.join().expect("producer panicked");
    // The end is sticky.
    assert_eq!(rx.try_pop(), Err(TryPopError::Disconnected));
    got
}

/// Events per case for the spinning strategies: a spinner that shares its
/// CPU with the thread it waits for (likely on a loaded 2-CPU machine)
/// waits a scheduler time slice per hand-off, so keep their cases short.
/// Ordering logic does not depend on the wait strategy.
const SPINNING_EVENTS: u64 = 100;

fn check<T: Event>(config: Config, n: u64, seed: u64) {
    let n = if config.wait.spins() {
        n.min(SPINNING_EVENTS)
    } else {
        n
    };
    let got = with_deadline("transfer", DEADLINE, move || transfer::<T>(config, n, seed));
    let want: Vec<T> = (0..n).map(T::make).collect();
    assert_eq!(got.len(), want.len(), "{config:?}: count");
    assert!(got == want, "{config:?}: events out of order or corrupted");
}

fn any_wait() -> impl Strategy<Value = WaitStrategy> {
    proptest::sample::select(WaitStrategy::ALL.to_vec())
}

fn any_config(min_bytes: usize) -> impl Strategy<Value = Config> {
    (
        any::<bool>(),
        1usize..5,
        min_bytes..200,
        prop_oneof![Just(0usize), Just(128), 0usize..300],
        any_wait(),
    )
        .prop_map(|(ring, buffers, buffer_bytes, padding_bytes, wait)| {
            Config::default()
                .with_mode(if ring { Mode::Ring } else { Mode::NBuffer })
                .with_buffers(if ring { buffers } else { buffers + 1 })
                .with_buffer_bytes(buffer_bytes)
                .with_padding(padding_bytes)
                .with_wait(wait)
                .with_stack_offset(0)
                .with_affinity(None)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_event_once_in_order_u64(config in any_config(8), n in 0u64..1500, seed in any::<u64>()) {
        check::<u64>(config, n, seed);
    }

    #[test]
    fn every_event_once_in_order_odd_size(config in any_config(20), n in 0u64..600, seed in any::<u64>()) {
        check::<Odd>(config, n, seed);
    }
}

/// Every mode × strategy once, with tiny buffers (many hand-offs).
#[test]
fn every_mode_and_strategy_delivers_in_order() {
    for wait in WaitStrategy::ALL {
        for config in [
            Config::n_buffer(2, 8),
            Config::n_buffer(3, 24).with_padding(1),
            // Rings of 1 and 4 slots index by mask, of 5 slots by offset.
            Config::ring(8),
            Config::ring(32),
            Config::ring(40).with_padding(0),
        ] {
            check::<u64>(config.with_wait(wait), 700, wait as u64);
        }
        check::<u8>(Config::n_buffer(2, 3).with_wait(wait), 500, 9);
    }
}

/// A blocked `pop` wakes with `Disconnected` when the producer is dropped.
#[test]
fn dropping_the_producer_ends_a_blocked_pop() {
    for wait in WaitStrategy::ALL {
        for config in [Config::n_buffer(2, 64), Config::ring(64)] {
            let (mut tx, mut rx) = channel::<u64>(config.with_wait(wait)).unwrap();
            with_deadline("blocked pop", DEADLINE, move || {
                let consumer = std::thread::spawn(move || {
                    let first = rx.pop();
                    let second = rx.pop();
                    (first, second, rx.pop())
                });
                tx.push(7).unwrap();
                // In n-buffer mode the 7 is handed over by the drop.
                std::thread::sleep(std::time::Duration::from_millis(5));
                drop(tx);
                let (a, b, c) = consumer.join().unwrap();
                assert_eq!(a, Ok(7));
                assert_eq!(b, Err(PopError::Disconnected));
                assert_eq!(c, Err(PopError::Disconnected));
            });
        }
    }
}

/// A `push` blocked on a full channel fails when the consumer is dropped.
#[test]
fn dropping_the_consumer_ends_a_blocked_push() {
    for wait in WaitStrategy::ALL {
        for config in [Config::n_buffer(2, 16), Config::ring(16)] {
            let (mut tx, rx) = channel::<u64>(config.with_wait(wait)).unwrap();
            let capacity = tx.capacity() as u64;
            with_deadline("blocked push", DEADLINE, move || {
                let producer = std::thread::spawn(move || {
                    let mut i = 0;
                    loop {
                        match tx.push(i) {
                            Ok(()) => i += 1,
                            Err(PushError::Disconnected(v)) => return (i, v, tx.is_abandoned()),
                        }
                    }
                });
                std::thread::sleep(std::time::Duration::from_millis(5));
                drop(rx);
                let (pushed, back, abandoned) = producer.join().unwrap();
                // Everything pushed fit; the next event was refused.
                assert_eq!(pushed, capacity);
                assert_eq!(back, capacity);
                assert!(abandoned);
            });
        }
    }
}

#[test]
fn slice_transfers_report_progress_when_the_other_side_leaves() {
    let (mut tx, rx) = channel::<u64>(Config::ring(32)).unwrap();
    drop(rx);
    let err = with_deadline("push_slice", DEADLINE, move || {
        tx.push_slice(&[1, 2, 3, 4, 5, 6]).unwrap_err()
    });
    assert_eq!(err.transferred, 4);

    let (mut tx, mut rx) = channel::<u64>(Config::n_buffer(2, 32)).unwrap();
    tx.push_slice(&[1, 2, 3]).unwrap();
    drop(tx);
    let mut buf = [0; 8];
    assert_eq!(rx.pop_slice(&mut buf), Ok(3));
    assert_eq!(&buf[..3], &[1, 2, 3]);
    assert_eq!(rx.pop_slice(&mut buf), Err(PopError::Disconnected));
    assert_eq!(rx.try_pop_slice(&mut buf), Err(TryPopError::Disconnected));
}

#[test]
fn try_calls_report_full_empty_and_disconnected() {
    let (mut tx, mut rx) = channel::<u64>(Config::ring(16)).unwrap();
    assert_eq!(tx.capacity(), 2);
    assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
    tx.try_push(1).unwrap();
    tx.try_push(2).unwrap();
    assert!(matches!(tx.try_push(3), Err(TryPushError::Full(3))));
    assert_eq!(tx.free_slots(), 0);
    assert_eq!(rx.len(), 2);
    assert_eq!(rx.try_pop(), Ok(1));
    drop(rx);
    tx.try_push(3).unwrap(); // a free slot remains: accepted, and lost
    assert!(matches!(tx.try_push(4), Err(TryPushError::Disconnected(4))));
    assert_eq!(TryPushError::Full(5).into_inner(), 5);
}

#[test]
fn n_buffer_hands_over_whole_buffers_or_on_flush() {
    let (mut tx, mut rx) = channel::<u64>(Config::n_buffer(2, 32)).unwrap();
    assert_eq!(tx.capacity(), 8);
    for i in 0..3 {
        tx.push(i).unwrap();
    }
    // Not handed over yet: the buffer of 4 is not full.
    assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
    tx.push(3).unwrap();
    assert_eq!(rx.len(), 4);
    tx.push(4).unwrap();
    tx.flush();
    assert_eq!(rx.len(), 5);
    let got: Vec<u64> = (0..5).map(|_| rx.try_pop().unwrap()).collect();
    assert_eq!(got, [0, 1, 2, 3, 4]);
    // The producer goes on filling the flushed buffer.
    for i in 5..12 {
        tx.try_push(i).unwrap();
    }
    drop(tx);
    assert_eq!(rx.collect::<Vec<_>>(), (5..12).collect::<Vec<_>>());
}

#[test]
fn ring_hands_over_every_event() {
    let (mut tx, mut rx) = channel::<u64>(Config::ring(64)).unwrap();
    tx.push(9).unwrap();
    assert_eq!(rx.try_pop(), Ok(9));
    tx.flush(); // nothing pending
    assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
}

/// A spinning ring of a power-of-two slot count gives read slots back a cache
/// line of events at a time (16 of 8 bytes on x86_64's 128-byte line, capped
/// here at half the ring: 8), and at once whenever the consumer
/// finds it empty, so the producer never waits for a slot the consumer has
/// finished with while the consumer waits for data.
#[test]
fn plain_ring_releases_a_line_at_a_time_and_everything_when_empty() {
    let config = Config::ring(128).with_wait(WaitStrategy::SpinPause);
    let (mut tx, mut rx) = channel::<u64>(config).unwrap();
    assert_eq!(tx.capacity(), 16);
    for i in 0..16 {
        tx.try_push(i).unwrap();
    }
    assert!(matches!(tx.try_push(16), Err(TryPushError::Full(16))));
    // Seven events read: their line is not finished, nothing is given back.
    for i in 0..7 {
        assert_eq!(rx.try_pop(), Ok(i));
    }
    assert_eq!(tx.free_slots(), 0);
    assert!(tx.try_push(16).is_err());
    // The eighth finishes the line: its eight slots come back together.
    assert_eq!(rx.try_pop(), Ok(7));
    assert_eq!(tx.free_slots(), 8);
    for i in 16..21 {
        tx.try_push(i).unwrap();
    }
    // The consumer reads all 13: the line of 8..16 comes back when it is
    // finished, the five of the next line not yet.
    for i in 8..21 {
        assert_eq!(rx.try_pop(), Ok(i));
    }
    assert_eq!(tx.free_slots(), 11);
    // Finding the ring empty gives them back, the line unfinished.
    assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
    assert_eq!(tx.free_slots(), 16);
    // So does a blocking pop that finds it empty (here it finds the end).
    tx.push(21).unwrap();
    assert_eq!(rx.pop(), Ok(21));
    drop(tx);
    assert_eq!(rx.pop(), Err(PopError::Disconnected));
}

#[test]
fn chunks_read_and_write_in_place() {
    let (mut tx, mut rx) = channel::<u64>(Config::ring(8 * 5)).unwrap();
    let mut chunk = tx.write_chunk(10);
    assert_eq!(chunk.len(), 5);
    for (i, slot) in chunk.as_mut_uninit().iter_mut().take(3).enumerate() {
        slot.write(i as u64 * 10);
    }
    // SAFETY: three slots were written just above.
    unsafe { chunk.commit(3) };
    let chunk = rx.read_chunk(2).unwrap();
    assert_eq!(chunk.as_slice(), &[0, 10]);
    chunk.commit(1);
    let chunk = rx.read_chunk(8).unwrap();
    assert_eq!(chunk.as_slice(), &[10, 20]);
    chunk.commit_all();
    assert!(matches!(rx.read_chunk(8), Err(TryPopError::Empty)));
    // Contiguous only: 2 slots to the end of the ring.
    assert_eq!(tx.write_chunk(10).len(), 2);
    assert_eq!(tx.write_chunk(10).copy_from(&[30, 40, 50]), 2);
    assert_eq!(tx.write_chunk(10).copy_from(&[50, 60, 70]), 3);
    assert!(tx.write_chunk(1).is_empty());
    drop(tx);
    assert_eq!(rx.collect::<Vec<_>>(), [30, 40, 50, 60, 70]);
}

#[test]
fn config_validation() {
    assert_eq!(
        Config::n_buffer(1, 64).validate::<u64>(),
        Err(ConfigError::TooFewBuffers {
            mode: Mode::NBuffer,
            buffers: 1,
            min: 2
        })
    );
    assert!(matches!(
        Config::ring(64).with_buffers(0).validate::<u64>(),
        Err(ConfigError::TooFewBuffers { min: 1, .. })
    ));
    assert_eq!(
        Config::ring(7).validate::<u64>(),
        Err(ConfigError::BufferTooSmall {
            buffer_bytes: 7,
            event_bytes: 8
        })
    );
    assert!(matches!(
        Config::n_buffer(usize::MAX, 1 << 20).validate::<u64>(),
        Err(ConfigError::TooLarge { .. })
    ));
    assert!(matches!(
        Config::default().with_padding(usize::MAX).validate::<u64>(),
        Err(ConfigError::TooLarge { .. })
    ));
    assert_eq!(
        Config::default().validate::<()>(),
        Err(ConfigError::ZeroSizedEvent)
    );
    assert!(channel::<u64>(Config::ring(0)).is_err());
    // Messages say what to do.
    let msg = Config::n_buffer(1, 64)
        .validate::<u64>()
        .unwrap_err()
        .to_string();
    assert!(msg.contains("at least 2"), "{msg}");
}

#[test]
fn geometry_reports_buffers_slots_and_capacity() {
    let g = Config::n_buffer(3, 100)
        .with_padding(10)
        .validate::<Odd>()
        .unwrap();
    assert_eq!(
        (g.buffers(), g.slots_per_buffer(), g.capacity()),
        (3, 5, 15)
    );
    // 10 bytes of padding before the buffers and after each, every step
    // rounded up to Odd's alignment (4): 12 + 3 × (5 × 20 + 10 → 112).
    assert_eq!(g.total_bytes(), 12 + 3 * 112);
    let g = Config::ring(64).with_buffers(2).validate::<u64>().unwrap();
    assert_eq!(
        (g.buffers(), g.slots_per_buffer(), g.capacity()),
        (1, 16, 16)
    );
}

#[test]
fn config_round_trips_through_json_and_toml() {
    for wait in WaitStrategy::ALL {
        for config in [
            Config::default(),
            Config::ring(1 << 16).with_padding(3),
            Config::n_buffer(4, 2500).with_stack_offset(256),
        ] {
            let config = config.with_wait(wait);
            let json = serde_json::to_string(&config).unwrap();
            assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), config);
            let toml = toml::to_string(&config).unwrap();
            assert_eq!(toml::from_str::<Config>(&toml).unwrap(), config);
            assert!(json.contains(&format!("\"{}\"", wait.name())), "{json}");
        }
    }
    let toml = "mode = \"ring\"\nbuffers = 1\nbuffer_bytes = 4096\npadding_bytes = 128\nwait = \"spin_pause\"\n";
    let config: Config = toml::from_str(toml).unwrap();
    assert_eq!(
        config,
        Config::ring(4096).with_wait(WaitStrategy::SpinPause)
    );
    // Files written before the stack offset existed read as no offset.
    assert_eq!(config.stack_offset_bytes, 0);
    // Missing fields take the defaults; unknown fields are refused.
    let partial: Config = toml::from_str("wait = \"mutex\"").unwrap();
    assert_eq!(partial, Config::default().with_wait(WaitStrategy::Mutex));
    assert!(toml::from_str::<Config>("buffer_size = 4").is_err());
}
