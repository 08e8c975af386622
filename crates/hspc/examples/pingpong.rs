//! The plainest round trip of one 8-byte event over two channels (one each way),
//! for every SPSC crate the `channel` probe races: a thread pinned to one CPU
//! pushes k and spins until k comes back from an echo thread pinned to another.
//! No per-sample clock, no counters, no checks inside the loop: the time of a
//! block of round trips divided by their number. It is the third harness beside
//! the probe's `roundtrip/…` distributions and the criterion bench's
//! `roundtrip_8B` group; `docs/channel.md` sets the three side by side.
//!
//! ```sh
//! cargo run --release -p hspc --example pingpong -- 0 1 31 20000
//! ```
//!
//! Arguments: the origin's CPU and the echo's CPU (default 0 and 1), blocks per
//! crate (default 31) and round trips per block (default 20 000). The crates take
//! turns block by block, in an order rotated each block, so drift hits each alike.
//! Prints, per crate, the median ns per round trip over the blocks with the
//! distribution-free 95 % interval of that median (order statistics).

use std::time::Instant;

/// Memory of every channel, as in the probe and the bench: 32 KiB.
const CHANNEL_BYTES: usize = 32 * 1024;
/// 8-byte slots of that memory.
const SLOTS: usize = CHANNEL_BYTES / 8;
/// Round trips run before a block's clock starts (the probe's `ROUNDTRIP_WARMUP`).
const WARMUP: u64 = 32;

/// One end of a channel, reduced to the two calls a ping-pong makes.
trait Send1: Send {
    fn push(&mut self, v: u64) -> bool;
    /// Makes the pushed event visible at once (hspc's n-buffer); a no-op elsewhere.
    #[inline(always)]
    fn flush(&mut self) {}
}
trait Recv1: Send {
    fn pop(&mut self) -> Option<u64>;
}

impl Send1 for hspc::Producer<u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        self.try_push(v).is_ok()
    }
    #[inline(always)]
    fn flush(&mut self) {
        hspc::Producer::flush(self)
    }
}
impl Recv1 for hspc::Consumer<u64> {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        self.try_pop().ok()
    }
}
impl Send1 for rtrb::Producer<u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        rtrb::Producer::push(self, v).is_ok()
    }
}
impl Recv1 for rtrb::Consumer<u64> {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        rtrb::Consumer::pop(self).ok()
    }
}
impl Send1 for ringbuf::HeapProd<u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        ringbuf::traits::Producer::try_push(self, v).is_ok()
    }
}
impl Recv1 for ringbuf::HeapCons<u64> {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}
impl Send1 for heapless::spsc::Producer<'_, u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        self.enqueue(v).is_ok()
    }
}
impl Recv1 for heapless::spsc::Consumer<'_, u64> {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        self.dequeue()
    }
}
struct Cb(std::sync::Arc<crossbeam_queue::ArrayQueue<u64>>);
impl Send1 for Cb {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        self.0.push(v).is_ok()
    }
}
impl Recv1 for Cb {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        self.0.pop()
    }
}
impl Send1 for std::sync::mpsc::SyncSender<u64> {
    #[inline(always)]
    fn push(&mut self, v: u64) -> bool {
        self.try_send(v).is_ok()
    }
}
impl Recv1 for std::sync::mpsc::Receiver<u64> {
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        self.try_recv().ok()
    }
}

/// Pins the calling thread to `cpu`; whether the OS accepted.
fn pin(cpu: usize) -> bool {
    // SAFETY: `set` is a zeroed `cpu_set_t` (a valid empty set) that CPU_SET
    // writes one bit of; `sched_setaffinity` reads `size_of` bytes of it and
    // changes only the calling thread's affinity (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Failed polls in a row after which a thread yields (the probe's
/// `ROUNDTRIP_YIELD_EVERY`).
const YIELD_EVERY: u32 = 1024;

/// After a failed poll: poll again at once, without a spin hint, as the probe
/// and core-to-core-latency do (a `pause` is a fifth of a round trip on some
/// hosts, and its rhythm against the line's arrival moves the figure); yield
/// after a long streak, so that a partner sharing the CPU runs.
#[inline(always)]
fn poll_again(fails: &mut u32) {
    *fails += 1;
    if *fails % YIELD_EVERY == 0 {
        std::thread::yield_now();
    }
}

fn send<S: Send1>(tx: &mut S, v: u64) {
    let mut fails = 0;
    while !tx.push(v) {
        poll_again(&mut fails);
    }
    tx.flush();
}

fn recv<R: Recv1>(rx: &mut R) -> u64 {
    let mut fails = 0;
    loop {
        if let Some(v) = rx.pop() {
            return v;
        }
        poll_again(&mut fails);
    }
}

/// `n` round trips after [`WARMUP`], origin on `cpus.0` and echo on `cpus.1`:
/// ns per round trip, or why not.
fn block<S1: Send1, R1: Recv1, S2: Send1, R2: Recv1>(
    ping: (S1, R1),
    pong: (S2, R2),
    n: u64,
    cpus: (usize, usize),
) -> Result<f64, String> {
    let ((mut ping_tx, mut ping_rx), (mut pong_tx, mut pong_rx)) = (ping, pong);
    let total = n + WARMUP;
    std::thread::scope(|s| {
        let echo = s.spawn(move || {
            let pinned = pin(cpus.1);
            for _ in 0..total {
                let v = recv(&mut ping_rx);
                send(&mut pong_tx, v);
            }
            pinned
        });
        let pinned = pin(cpus.0);
        let mut start = Instant::now();
        let mut sum = 0u64;
        for k in 0..total {
            if k == WARMUP {
                start = Instant::now();
            }
            send(&mut ping_tx, k);
            sum = sum.wrapping_add(recv(&mut pong_rx));
        }
        let ns = start.elapsed().as_secs_f64() * 1e9 / n as f64;
        let echo_pinned = echo.join().map_err(|_| "the echo thread panicked")?;
        if !(pinned && echo_pinned) {
            return Err(format!("the OS refused the pin to CPUs {cpus:?}"));
        }
        // Every event came back once: the sum of 0..total.
        if sum != total * (total - 1) / 2 {
            return Err("events were lost or reordered".into());
        }
        Ok(ns)
    })
}

/// The crates, by the names the probe gives them.
const CRATES: [&str; 7] = [
    "hspc",
    "hspc-ring",
    "rtrb",
    "ringbuf",
    "heapless",
    "crossbeam",
    "std",
];

/// One block of crate `name`'s round trips, on fresh channels.
fn crate_block(name: &str, n: u64, cpus: (usize, usize)) -> Result<f64, String> {
    let wait = hspc::WaitStrategy::SpinPause;
    let hspc_pair = |c: hspc::Config| hspc::channel::<u64>(c.with_wait(wait));
    let err = |e: hspc::ConfigError| e.to_string();
    match name {
        "hspc" => {
            let c = hspc::Config::n_buffer(4, CHANNEL_BYTES / 4);
            block(
                hspc_pair(c).map_err(err)?,
                hspc_pair(c).map_err(err)?,
                n,
                cpus,
            )
        }
        "hspc-ring" => {
            let c = hspc::Config::ring(CHANNEL_BYTES);
            block(
                hspc_pair(c).map_err(err)?,
                hspc_pair(c).map_err(err)?,
                n,
                cpus,
            )
        }
        "rtrb" => block(
            rtrb::RingBuffer::new(SLOTS),
            rtrb::RingBuffer::new(SLOTS),
            n,
            cpus,
        ),
        "ringbuf" => {
            let pair = || ringbuf::traits::Split::split(ringbuf::HeapRb::<u64>::new(SLOTS));
            block(pair(), pair(), n, cpus)
        }
        "heapless" => {
            let mut a = Box::new(heapless::spsc::Queue::<u64, SLOTS>::new());
            let mut b = Box::new(heapless::spsc::Queue::<u64, SLOTS>::new());
            block(a.split(), b.split(), n, cpus)
        }
        "crossbeam" => {
            let pair = || {
                let q = std::sync::Arc::new(crossbeam_queue::ArrayQueue::new(SLOTS));
                (Cb(q.clone()), Cb(q))
            };
            block(pair(), pair(), n, cpus)
        }
        _ => {
            let pair = || std::sync::mpsc::sync_channel::<u64>(SLOTS);
            block(pair(), pair(), n, cpus)
        }
    }
}

/// Median of `v` and its distribution-free 95 % interval: the order statistics
/// k and n+1−k with the largest k for which P(Binomial(n, ½) < k) ≤ 2.5 %.
fn median_interval(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mid = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    // P(X ≤ j) for X ~ Binomial(n, ½), accumulated term by term.
    let (mut term, mut below, mut k) = (0.5f64.powi(n as i32), 0.0, 0usize);
    for j in 0..n {
        below += term;
        if below > 0.025 {
            break;
        }
        k = j + 1;
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    match k {
        0 => (mid, v[0], v[n - 1]),
        _ => (mid, v[k - 1], v[n - k]),
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T, what: &str) -> T {
    match args.get(i) {
        None => default,
        Some(a) => a.parse().unwrap_or_else(|_| {
            eprintln!("pingpong: {what} must be a number, not '{a}'");
            std::process::exit(2)
        }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cpus = (
        arg(&args, 0, 0usize, "the origin's CPU"),
        arg(&args, 1, 1usize, "the echo's CPU"),
    );
    let blocks = arg(&args, 2, 31usize, "blocks").max(1);
    let n = arg(&args, 3, 20_000u64, "round trips per block").max(1);
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); CRATES.len()];
    for b in 0..blocks {
        for j in 0..CRATES.len() {
            let i = (b + j) % CRATES.len();
            match crate_block(CRATES[i], n, cpus) {
                Ok(t) => ns[i].push(t),
                Err(e) => {
                    eprintln!("pingpong: {}: {e}", CRATES[i]);
                    std::process::exit(1)
                }
            }
        }
    }
    println!("crate,median_ns,lo_ns,hi_ns,blocks,round_trips_per_block");
    for (name, v) in CRATES.iter().zip(&mut ns) {
        let (m, lo, hi) = median_interval(v);
        println!("{name},{m:.1},{lo:.1},{hi:.1},{blocks},{n}");
    }
}
