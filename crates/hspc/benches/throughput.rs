//! Throughput of 8- and 64-byte events from one thread to another: hspc (ring
//! and n-buffer) against every maintained SPSC a Rust user would pick (rtrb,
//! ringbuf, heapless), crossbeam's `ArrayQueue` and std's bounded
//! `sync_channel`, per event and in batches,
//! with identical harness code (non-blocking calls, a spin hint when full or
//! empty) and the same buffer memory (32 KiB) for every contender; and the
//! round trip of one 8-byte event over two such channels (`roundtrip_8B`).
//!
//! `cargo bench -p hspc -- --quick`. Figures depend on the machine and its
//! load; nothing here is a test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Events per thread round trip of the harness.
const EVENTS: u64 = 1 << 20;
/// Memory for every contender: 32 KiB (fits L1/L2): 4096 events of 8
/// bytes, 512 of 64.
const CHANNEL_BYTES: usize = 32 * 1024;
/// hspc's wait strategy here: the harness spins on full/empty itself, so
/// the strategy only decides what a publication costs; a spinning strategy
/// makes it a plain store, as in rtrb.
const SPIN: hspc::WaitStrategy = hspc::WaitStrategy::SpinPause;
/// Events per batch in the batched runs of the single-thread groups.
const BATCH: usize = 64;
/// The race's batches: one call per event, 64, and 256 (the batch of the
/// `channel` probe's batched finding, so the two harnesses can be set side
/// by side at the same size).
const RACE_BATCHES: [(&str, usize); 3] = [("per_item", 1), ("batch64", BATCH), ("batch256", 256)];

/// An event of the bench: 8 or 64 bytes, made from its sequence number.
trait Ev: Copy + Send + Default + 'static {
    /// Bytes, for the group names.
    const BYTES: usize;
    fn new(seq: u64) -> Self;
    /// What the consumer folds into its checksum.
    fn key(&self) -> u64;
}
impl Ev for u64 {
    const BYTES: usize = 8;
    fn new(seq: u64) -> Self {
        seq
    }
    fn key(&self) -> u64 {
        *self
    }
}
/// 64 bytes: a whole cache line per event.
#[derive(Clone, Copy, Default)]
struct Line([u64; 8]);
impl Ev for Line {
    const BYTES: usize = 64;
    fn new(seq: u64) -> Self {
        Line([seq; 8])
    }
    fn key(&self) -> u64 {
        self.0[0] ^ self.0[7]
    }
}

/// One side of a contender, with the harness's non-blocking calls.
trait Tx<E: Copy>: Send {
    /// Sends a prefix of `src`; returns its length (0 when full). By default a loop
    /// of single calls (crates without batch calls).
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        src.iter().take_while(|&&v| self.send_one(v)).count()
    }
    fn send_one(&mut self, v: E) -> bool;
    /// Makes everything sent visible (hspc's n-buffer); a no-op elsewhere.
    #[inline(always)]
    fn flush(&mut self) {}
}
trait Rx<E>: Send {
    /// Receives into a prefix of `dst`; returns its length (0 when empty). By
    /// default a loop of single calls (crates without batch calls).
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        let mut n = 0;
        for slot in dst {
            match self.recv_one() {
                Some(v) => *slot = v,
                None => break,
            }
            n += 1;
        }
        n
    }
    fn recv_one(&mut self) -> Option<E>;
}

impl<E: Ev> Tx<E> for hspc::Producer<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        self.try_push_slice(src)
    }
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        self.try_push(v).is_ok()
    }
    #[inline(always)]
    fn flush(&mut self) {
        hspc::Producer::flush(self)
    }
}
impl<E: Ev> Rx<E> for hspc::Consumer<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        self.try_pop_slice(dst).unwrap_or(0)
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.try_pop().ok()
    }
}

impl<E: Ev> Tx<E> for rtrb::Producer<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        let n = self.slots().min(src.len());
        if n == 0 {
            return 0;
        }
        match self.write_chunk_uninit(n) {
            Ok(chunk) => chunk.fill_from_iter(src[..n].iter().copied()),
            Err(_) => 0,
        }
    }
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        self.push(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for rtrb::Consumer<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        let n = self.slots().min(dst.len());
        if n == 0 {
            return 0;
        }
        match self.read_chunk(n) {
            Ok(chunk) => {
                let (a, b) = chunk.as_slices();
                dst[..a.len()].copy_from_slice(a);
                dst[a.len()..a.len() + b.len()].copy_from_slice(b);
                chunk.commit_all();
                n
            }
            Err(_) => 0,
        }
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.pop().ok()
    }
}

impl<E: Ev> Tx<E> for ringbuf::HeapProd<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        ringbuf::traits::Producer::push_slice(self, src)
    }
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        ringbuf::traits::Producer::try_push(self, v).is_ok()
    }
}
impl<E: Ev> Rx<E> for ringbuf::HeapCons<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        ringbuf::traits::Consumer::pop_slice(self, dst)
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}

/// heapless has no batch calls: batches are loops of single calls.
impl<E: Ev> Tx<E> for heapless::spsc::Producer<'_, E> {
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        self.enqueue(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for heapless::spsc::Consumer<'_, E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.dequeue()
    }
}

/// heapless's queue: its size is in its type, 32 KiB of slots (a power of
/// two, as heapless advises), of which it uses one fewer.
type HeaplessQueue<E, const N: usize> = heapless::spsc::Queue<E, N>;

/// crossbeam's queue has no batch calls: batches are loops of single calls.
struct Cb<E>(std::sync::Arc<crossbeam_queue::ArrayQueue<E>>);
impl<E: Ev> Tx<E> for Cb<E> {
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        self.0.push(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for Cb<E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.0.pop()
    }
}

/// std's bounded channel has no batch calls either: loops of `try_send` /
/// `try_recv`.
impl<E: Ev> Tx<E> for std::sync::mpsc::SyncSender<E> {
    #[inline(always)]
    fn send_one(&mut self, v: E) -> bool {
        self.try_send(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for std::sync::mpsc::Receiver<E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.try_recv().ok()
    }
}

/// Moves `events` events from a producer thread to this thread; returns the
/// time from the start of both to the consumer's last receive.
fn run<E: Ev, P: Tx<E>, C: Rx<E>>(mut tx: P, mut rx: C, events: u64, batch: usize) -> Duration {
    let barrier = std::sync::Barrier::new(2);
    let b = &barrier;
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            let src: Vec<E> = (0..batch as u64).map(E::new).collect();
            b.wait();
            let mut sent = 0u64;
            while sent < events {
                if batch == 1 {
                    if tx.send_one(E::new(sent)) {
                        sent += 1;
                    } else {
                        std::hint::spin_loop();
                    }
                } else {
                    let want = (events - sent).min(batch as u64) as usize;
                    let n = tx.send(&src[..want]);
                    if n == 0 {
                        std::hint::spin_loop();
                    }
                    sent += n as u64;
                }
            }
            drop(tx); // hands over hspc's last partial buffer
        });
        let mut dst = vec![E::default(); batch];
        let mut received = 0u64;
        let mut checksum = 0u64;
        barrier.wait();
        let start = Instant::now();
        while received < events {
            if batch == 1 {
                match rx.recv_one() {
                    Some(v) => {
                        checksum = checksum.wrapping_add(v.key());
                        received += 1;
                    }
                    None => std::hint::spin_loop(),
                }
            } else {
                let n = rx.recv(&mut dst);
                if n == 0 {
                    std::hint::spin_loop();
                }
                for v in &dst[..n] {
                    checksum = checksum.wrapping_add(v.key());
                }
                received += n as u64;
            }
        }
        let elapsed = start.elapsed();
        black_box(checksum);
        producer.join().expect("producer panicked");
        elapsed
    })
}

fn hspc_pair<E: Ev>(config: hspc::Config) -> (hspc::Producer<E>, hspc::Consumer<E>) {
    hspc::channel(config).expect("valid config")
}

/// Times `iters` runs of `make`'s pair (a fresh channel each run).
fn timed<E: Ev, P: Tx<E>, C: Rx<E>>(
    iters: u64,
    batch: usize,
    make: impl Fn() -> (P, C),
) -> Duration {
    (0..iters)
        .map(|_| {
            let (tx, rx) = make();
            run(tx, rx, EVENTS, batch)
        })
        .sum()
}

/// The two-thread race at one event size; `N` is the heapless queue's slot
/// count (its size is in its type): `CHANNEL_BYTES / E::BYTES`.
fn race<E: Ev, const N: usize>(c: &mut Criterion) {
    assert_eq!(N * E::BYTES, CHANNEL_BYTES);
    let capacity = CHANNEL_BYTES / E::BYTES;
    let ring = hspc::Config::ring(CHANNEL_BYTES).with_wait(SPIN);
    let nbuffer = hspc::Config::n_buffer(4, CHANNEL_BYTES / 4).with_wait(SPIN);
    for (label, batch) in RACE_BATCHES {
        let mut group = c.benchmark_group(format!("throughput_{}B/{label}", E::BYTES));
        group.throughput(Throughput::Elements(EVENTS));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        let id = |name: &str| BenchmarkId::new(name, batch);
        group.bench_function(id("hspc_ring"), |b| {
            b.iter_custom(|iters| timed(iters, batch, || hspc_pair::<E>(ring)))
        });
        group.bench_function(id("hspc_nbuffer4"), |b| {
            b.iter_custom(|iters| timed(iters, batch, || hspc_pair::<E>(nbuffer)))
        });
        group.bench_function(id("rtrb"), |b| {
            b.iter_custom(|iters| timed(iters, batch, || rtrb::RingBuffer::<E>::new(capacity)))
        });
        group.bench_function(id("ringbuf"), |b| {
            b.iter_custom(|iters| {
                timed(iters, batch, || {
                    ringbuf::traits::Split::split(ringbuf::HeapRb::<E>::new(capacity))
                })
            })
        });
        group.bench_function(id("heapless"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut q = Box::new(HeaplessQueue::<E, N>::new());
                        let (tx, rx) = q.split();
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("crossbeam_array_queue"), |b| {
            b.iter_custom(|iters| {
                timed(iters, batch, || {
                    let q = std::sync::Arc::new(crossbeam_queue::ArrayQueue::<E>::new(capacity));
                    (Cb(q.clone()), Cb(q))
                })
            })
        });
        group.bench_function(id("std_sync_channel"), |b| {
            b.iter_custom(|iters| {
                timed(iters, batch, || {
                    std::sync::mpsc::sync_channel::<E>(capacity)
                })
            })
        });
        group.finish();
    }
}

fn bench(c: &mut Criterion) {
    race::<u64, { CHANNEL_BYTES / 8 }>(c);
    race::<Line, { CHANNEL_BYTES / 64 }>(c);
}

/// Round trips run unmeasured before the clock starts, as the `channel`
/// probe's `ROUNDTRIP_WARMUP`: once when a crate's pair starts, and again at
/// the start of every criterion sample, as the `pingpong` example does before
/// each block.
const ROUNDTRIP_WARMUP: u64 = 32;

/// The event that stops the echo thread; the round trips' sequence numbers
/// count up from 0 and never reach it.
const ROUNDTRIP_STOP: u64 = u64::MAX;

/// Failed polls in a row after which a round trip's thread yields (the
/// probe's `ROUNDTRIP_YIELD_EVERY`).
const ROUNDTRIP_YIELD_EVERY: u32 = 1024;

/// After a failed poll of a round trip: poll again at once, without a spin hint
/// (as the probe and the `pingpong` example do; docs/channel.md, "The round
/// trip polls without a spin hint"), and yield after a long streak, so that a
/// partner sharing the CPU runs.
#[inline(always)]
fn poll_again(fails: &mut u32) {
    *fails += 1;
    if *fails % ROUNDTRIP_YIELD_EVERY == 0 {
        std::thread::yield_now();
    }
}

/// Polls until `rx` has an event.
fn recv_spinning<C: Rx<u64>>(rx: &mut C) -> u64 {
    let mut fails = 0;
    loop {
        if let Some(v) = rx.recv_one() {
            return v;
        }
        poll_again(&mut fails);
    }
}

/// Sends `v` on `tx`, polling while it is full, and hands it over at once.
fn send_spinning<P: Tx<u64>>(tx: &mut P, v: u64) {
    let mut fails = 0;
    while !tx.send_one(v) {
        poll_again(&mut fails);
    }
    tx.flush();
}

/// The CPUs of the round trip's two threads (origin, echo), as the `channel`
/// probe's `other-core` pair on a machine whose first two CPUs are two cores
/// and the `pingpong` example's default. Unpinned, the two threads of a short
/// ping-pong may share a CPU or move, and the three harnesses would not be
/// measuring the same thing.
const ROUNDTRIP_CPUS: (usize, usize) = (0, 1);

/// The calling thread's CPUs, to give back with [`set_affinity`]; `None` if
/// the OS does not say.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: `set` is a zeroed `cpu_set_t` (a valid empty set);
    // `sched_getaffinity` writes at most `size_of` bytes into it and reads
    // only the calling thread's affinity (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let got = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (got == 0).then_some(set)
    }
}

/// Restricts the calling thread to the CPUs of `set`; whether the OS accepted.
fn set_affinity(set: &libc::cpu_set_t) -> bool {
    // SAFETY: `set` is a valid `cpu_set_t`; `sched_setaffinity` reads
    // `size_of` bytes of it and changes only the calling thread's affinity
    // (pid 0).
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) == 0 }
}

/// Pins the calling thread to `cpu`; whether the OS accepted (a machine with
/// one CPU, or a cpuset without it, refuses, and the thread runs where the OS
/// puts it).
fn pin(cpu: usize) -> bool {
    // SAFETY: a zeroed `cpu_set_t` is a valid empty set; CPU_SET sets the
    // bit of `cpu` in it, its index bounds-checked (the CPUs here, 0 and 1,
    // are well inside the set's 1,024).
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    set_affinity(&set)
}

/// One crate's round trip, running for the whole of its bench: an echo thread
/// pinned to `ROUNDTRIP_CPUS.1` sends every event of `ping` back on `pong`
/// until [`ROUNDTRIP_STOP`]; the origin is the bench's own thread, pinned to
/// `ROUNDTRIP_CPUS.0` while the pair runs. Each side owns the ends it uses
/// (`move`), so no two ends of different threads share a line of one stack.
/// Between criterion's samples, and while criterion analyses them, the echo
/// thread keeps spinning on `ping` on its own CPU, as between two trips.
/// Dropping the pair (also when a check panics) stops the echo thread and
/// gives the bench thread its CPUs back.
struct RoundTrip<'scope, P: Tx<u64>, C: Rx<u64>> {
    /// The origin's ends: it sends on `ping` and receives on `pong`.
    ping_tx: P,
    pong_rx: C,
    /// The sequence number of the next round trip's event.
    next: u64,
    echo: std::thread::ScopedJoinHandle<'scope, ()>,
    /// The bench thread's CPUs before the pin.
    cpus_before: Option<libc::cpu_set_t>,
}

impl<'scope, P: Tx<u64>, C: Rx<u64>> RoundTrip<'scope, P, C> {
    /// Starts the echo thread in `s`, pins this thread, and runs
    /// [`ROUNDTRIP_WARMUP`] round trips; the error is the OS's refusal of a
    /// thread. A refused pin is reported and the thread runs unpinned.
    fn start<'env, C1: Rx<u64> + 'scope, P2: Tx<u64> + 'scope>(
        s: &'scope std::thread::Scope<'scope, 'env>,
        ping: (P, C1),
        pong: (P2, C),
    ) -> std::io::Result<Self> {
        let (ping_tx, mut ping_rx) = ping;
        let (mut pong_tx, pong_rx) = pong;
        let echo = std::thread::Builder::new()
            .name("roundtrip-echo".into())
            .spawn_scoped(s, move || {
                if !pin(ROUNDTRIP_CPUS.1) {
                    eprintln!(
                        "round trip: the OS refused CPU {} to the echo thread; it runs unpinned",
                        ROUNDTRIP_CPUS.1
                    );
                }
                loop {
                    let v = recv_spinning(&mut ping_rx);
                    if v == ROUNDTRIP_STOP {
                        break;
                    }
                    send_spinning(&mut pong_tx, v);
                }
            })?;
        let cpus_before = affinity();
        if !pin(ROUNDTRIP_CPUS.0) {
            eprintln!(
                "round trip: the OS refused CPU {} to the origin thread; it runs unpinned",
                ROUNDTRIP_CPUS.0
            );
        }
        let mut pair = RoundTrip {
            ping_tx,
            pong_rx,
            next: 0,
            echo,
            cpus_before,
        };
        pair.trips(ROUNDTRIP_WARMUP);
        Ok(pair)
    }

    /// `n` round trips of one 8-byte event, each checked on its way back.
    fn trips(&mut self, n: u64) {
        let end = self.next + n;
        for k in self.next..end {
            send_spinning(&mut self.ping_tx, k);
            let back = recv_spinning(&mut self.pong_rx);
            assert_eq!(back, k, "round trip {k} came back as {back}");
        }
        self.next = end;
    }

    /// A criterion sample: [`ROUNDTRIP_WARMUP`] round trips, then the time of
    /// `iters` more. The clock is read right before and right after the timed
    /// trips' loop, so the sample holds those trips alone: no thread start,
    /// no pin, no allocation, no warm-up.
    fn timed(&mut self, iters: u64) -> Duration {
        self.trips(ROUNDTRIP_WARMUP);
        let start = Instant::now();
        self.trips(iters);
        start.elapsed()
    }
}

impl<P: Tx<u64>, C: Rx<u64>> Drop for RoundTrip<'_, P, C> {
    fn drop(&mut self) {
        // At most one event is in flight, so `ping` has room for the stop
        // unless the echo thread is gone; then there is nothing to stop.
        while !self.ping_tx.send_one(ROUNDTRIP_STOP) {
            if self.echo.is_finished() {
                break;
            }
            std::hint::spin_loop();
        }
        self.ping_tx.flush();
        if let Some(cpus) = &self.cpus_before {
            set_affinity(cpus);
        }
    }
}

/// Benches one crate's round trip as `name` in `group`, on the pair of
/// channels `ping` and `pong` and a [`RoundTrip`] started for it; each
/// criterion sample asks the running pair for its round trips. The pair starts
/// (a thread, a pin and [`ROUNDTRIP_WARMUP`] round trips) also when criterion's
/// filter leaves the crate out, since the filter is criterion's own. A crate
/// whose echo thread the OS refuses is reported and left out.
fn bench_pair<P1: Tx<u64>, C1: Rx<u64>, P2: Tx<u64>, C2: Rx<u64>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    ping: (P1, C1),
    pong: (P2, C2),
) {
    std::thread::scope(|s| match RoundTrip::start(s, ping, pong) {
        Ok(mut pair) => {
            group.bench_function(name, |b| b.iter_custom(|iters| pair.timed(iters)));
        }
        Err(e) => eprintln!("round trip: {name} left out, no echo thread: {e}"),
    });
}

/// The latency view of the race: one 8-byte event there and back, per
/// contender, with the same 32 KiB channels (hspc's n-buffer flushes after
/// each send, as the probe's does), the two threads pinned to
/// [`ROUNDTRIP_CPUS`]. Each crate's threads and channels are made once and
/// serve all of its samples, as the probe's and the `pingpong` example's
/// serve all of their blocks.
fn bench_round_trip(c: &mut Criterion) {
    const N: usize = CHANNEL_BYTES / 8;
    let ring = hspc::Config::ring(CHANNEL_BYTES).with_wait(SPIN);
    let nbuffer = hspc::Config::n_buffer(4, CHANNEL_BYTES / 4).with_wait(SPIN);
    let mut group = c.benchmark_group("roundtrip_8B");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    let g = &mut group;
    bench_pair(g, "hspc_ring", hspc_pair(ring), hspc_pair(ring));
    bench_pair(g, "hspc_nbuffer4", hspc_pair(nbuffer), hspc_pair(nbuffer));
    let pair = || rtrb::RingBuffer::<u64>::new(N);
    bench_pair(g, "rtrb", pair(), pair());
    let pair = || ringbuf::traits::Split::split(ringbuf::HeapRb::<u64>::new(N));
    bench_pair(g, "ringbuf", pair(), pair());
    let mut ping = Box::new(HeaplessQueue::<u64, N>::new());
    let mut pong = Box::new(HeaplessQueue::<u64, N>::new());
    bench_pair(g, "heapless", ping.split(), pong.split());
    let pair = || {
        let q = std::sync::Arc::new(crossbeam_queue::ArrayQueue::<u64>::new(N));
        (Cb(q.clone()), Cb(q))
    };
    bench_pair(g, "crossbeam_array_queue", pair(), pair());
    let pair = || std::sync::mpsc::sync_channel::<u64>(N);
    bench_pair(g, "std_sync_channel", pair(), pair());
    group.finish();
}

/// 8-byte events in the single-thread bench: 4096 of them fill the channel.
const CAPACITY_EVENTS: usize = CHANNEL_BYTES / 8;

/// One thread fills the channel with `CAPACITY_EVENTS` events, then drains
/// it, again and again: the instruction cost of the calls without any
/// cross-core traffic or scheduling (steadier on a loaded machine than the
/// two-thread runs).
fn single_thread<P: Tx<u64>, C: Rx<u64>>(
    tx: &mut P,
    rx: &mut C,
    batch: usize,
    dst: &mut [u64],
) -> u64 {
    let src: Vec<u64> = (0..batch as u64).collect();
    let mut sum = 0u64;
    let mut sent = 0;
    while sent < CAPACITY_EVENTS {
        sent += if batch == 1 {
            usize::from(tx.send_one(sent as u64))
        } else {
            tx.send(&src)
        };
    }
    let mut got = 0;
    while got < CAPACITY_EVENTS {
        if batch == 1 {
            if let Some(v) = rx.recv_one() {
                sum = sum.wrapping_add(v);
                got += 1;
            }
        } else {
            let n = rx.recv(&mut dst[..batch]);
            sum = dst[..n].iter().fold(sum, |a, &v| a.wrapping_add(v));
            got += n;
        }
    }
    sum
}

fn bench_single_thread(c: &mut Criterion) {
    let bytes = CAPACITY_EVENTS * 8;
    for (label, batch) in [("per_item", 1usize), ("batch64", BATCH)] {
        let mut group = c.benchmark_group(format!("single_thread_8B/{label}"));
        group.throughput(Throughput::Elements(2 * CAPACITY_EVENTS as u64));
        let mut dst = vec![0u64; BATCH];
        let id = |name: &str| BenchmarkId::new(name, batch);
        // n-buffer: flush so the consumer sees the last buffer of each round.
        let (mut tx, mut rx) = hspc_pair::<u64>(hspc::Config::ring(bytes).with_wait(SPIN));
        group.bench_function(id("hspc_ring"), |b| {
            b.iter(|| single_thread(&mut tx, &mut rx, batch, &mut dst))
        });
        let (tx, mut rx) = hspc_pair::<u64>(hspc::Config::n_buffer(4, bytes / 4).with_wait(SPIN));
        let mut tx = Flushing(tx);
        group.bench_function(id("hspc_nbuffer4"), |b| {
            b.iter(|| single_thread(&mut tx, &mut rx, batch, &mut dst))
        });
        let (mut tx, mut rx) = rtrb::RingBuffer::new(CAPACITY_EVENTS);
        group.bench_function(id("rtrb"), |b| {
            b.iter(|| single_thread(&mut tx, &mut rx, batch, &mut dst))
        });
        let q = std::sync::Arc::new(crossbeam_queue::ArrayQueue::new(CAPACITY_EVENTS));
        let (mut tx, mut rx) = (Cb(q.clone()), Cb(q));
        group.bench_function(id("crossbeam_array_queue"), |b| {
            b.iter(|| single_thread(&mut tx, &mut rx, batch, &mut dst))
        });
        group.finish();
    }
}

/// An n-buffer producer that flushes once the channel is full, so a single
/// thread can drain everything it wrote.
struct Flushing(hspc::Producer<u64>);
impl Tx<u64> for Flushing {
    #[inline(always)]
    fn send(&mut self, src: &[u64]) -> usize {
        let n = self.0.try_push_slice(src);
        if n < src.len() {
            self.0.flush();
        }
        n
    }
    #[inline(always)]
    fn send_one(&mut self, v: u64) -> bool {
        let ok = self.0.try_push(v).is_ok();
        if !ok {
            self.0.flush();
        }
        ok
    }
}

criterion_group!(benches, bench_single_thread, bench, bench_round_trip);
criterion_main!(benches);
