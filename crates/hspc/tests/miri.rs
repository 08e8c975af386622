//! Small transfers meant for Miri (`cargo +nightly miri test -p hspc --test miri`):
//! a few hundred events through the ring and the n-buffer, with the slice APIs
//! and a dropped producer, so Miri checks every `unsafe` copy, index and
//! hand-off on a real interleaving. They run in the normal test suite too;
//! CI runs them under Miri in `.ci/steps/miri.sh` when Miri is installed.
#![cfg(not(loom))]

use hspc::{channel, Config, PopError, WaitStrategy};

fn transfer(config: Config, n: u64) {
    let (mut tx, mut rx) = channel::<u64>(config).expect("valid config");
    let producer = std::thread::spawn(move || {
        let mut i = 0u64;
        while i < n {
            if i % 3 == 0 {
                let chunk: Vec<u64> = (i..(i + 5).min(n)).collect();
                tx.push_slice(&chunk).unwrap();
                i += chunk.len() as u64;
            } else {
                tx.push(i).unwrap();
                i += 1;
            }
        }
        // Dropping the producer flushes and closes.
    });
    let mut got = Vec::new();
    let mut buf = [0u64; 4];
    loop {
        if got.len() % 2 == 0 {
            match rx.pop() {
                Ok(v) => got.push(v),
                Err(PopError::Disconnected) => break,
            }
        } else {
            match rx.pop_slice(&mut buf) {
                Ok(k) => got.extend_from_slice(&buf[..k]),
                Err(PopError::Disconnected) => break,
            }
        }
    }
    producer.join().unwrap();
    assert_eq!(got, (0..n).collect::<Vec<_>>());
}

/// Eight slots with a spinning strategy take the short per-event path (slot by
/// mask); five slots take the general one (slot by wrapping offset).
#[test]
fn ring_moves_every_event_in_order() {
    transfer(Config::ring(64).with_wait(WaitStrategy::SpinPause), 300);
    transfer(Config::ring(40).with_wait(WaitStrategy::SpinPause), 300);
}

#[test]
fn n_buffer_moves_every_event_in_order() {
    transfer(
        Config::n_buffer(3, 32).with_wait(WaitStrategy::SpinBackoff),
        300,
    );
}

#[test]
fn parking_waits_hand_off_too() {
    transfer(Config::ring(64).with_wait(WaitStrategy::SpinThenPark), 200);
    transfer(
        Config::n_buffer(2, 64).with_wait(WaitStrategy::Condvar),
        200,
    );
}
