//! Moves N 8-byte events from a producer thread to a consumer thread with one
//! wait strategy, blocking calls, and prints what it moved. Small on purpose, so
//! that `strace -f -c` of it counts the channel's system calls and little else:
//!
//! ```sh
//! cargo build --release -p hspc --example move_events
//! strace -f -c ./target/release/examples/move_events spin_pause 100000000
//! ```
//!
//! Arguments: wait strategy (`condvar`, `mutex`, `spinlock`, `spin_backoff`,
//! `spin_pause`, `spin_then_park`; default `spin_pause`), events (default 10^7),
//! buffer bytes (default 4096; 3 buffers).

use hspc::{channel, Config, WaitStrategy};

fn main() {
    let mut args = std::env::args().skip(1);
    let wait_name = args.next().unwrap_or_else(|| "spin_pause".into());
    let Some(wait) = WaitStrategy::ALL
        .into_iter()
        .find(|w| w.name() == wait_name)
    else {
        eprintln!("unknown wait strategy '{wait_name}'");
        std::process::exit(2);
    };
    let events: u64 = args
        .next()
        .map_or(10_000_000, |a| a.parse().expect("events"));
    let bytes: usize = args
        .next()
        .map_or(4096, |a| a.parse().expect("buffer bytes"));
    let config = Config::n_buffer(3, bytes).with_wait(wait);
    let (mut tx, mut rx) = channel::<u64>(config).expect("valid config");
    let t = std::time::Instant::now();
    let sum = std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..events {
                tx.push(i).expect("consumer alive");
            }
        });
        let mut sum = 0u64;
        let mut next = 0u64;
        while let Ok(e) = rx.pop() {
            assert_eq!(e, next, "out of order");
            next += 1;
            sum = sum.wrapping_add(e);
        }
        assert_eq!(next, events, "events lost");
        sum
    });
    println!(
        "{wait}: {events} events in {:.3} s (checksum {sum})",
        t.elapsed().as_secs_f64()
    );
}
