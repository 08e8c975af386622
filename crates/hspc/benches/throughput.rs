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
    fn send(&mut self, src: &[E]) -> usize {
        src.iter().take_while(|&&v| self.send_one(v)).count()
    }
    fn send_one(&mut self, v: E) -> bool;
    /// Makes everything sent visible (hspc's n-buffer); a no-op elsewhere.
    fn flush(&mut self) {}
}
trait Rx<E>: Send {
    /// Receives into a prefix of `dst`; returns its length (0 when empty). By
    /// default a loop of single calls (crates without batch calls).
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
    fn send(&mut self, src: &[E]) -> usize {
        self.try_push_slice(src)
    }
    fn send_one(&mut self, v: E) -> bool {
        self.try_push(v).is_ok()
    }
    fn flush(&mut self) {
        hspc::Producer::flush(self)
    }
}
impl<E: Ev> Rx<E> for hspc::Consumer<E> {
    fn recv(&mut self, dst: &mut [E]) -> usize {
        self.try_pop_slice(dst).unwrap_or(0)
    }
    fn recv_one(&mut self) -> Option<E> {
        self.try_pop().ok()
    }
}

impl<E: Ev> Tx<E> for rtrb::Producer<E> {
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
    fn send_one(&mut self, v: E) -> bool {
        self.push(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for rtrb::Consumer<E> {
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
    fn recv_one(&mut self) -> Option<E> {
        self.pop().ok()
    }
}

impl<E: Ev> Tx<E> for ringbuf::HeapProd<E> {
    fn send(&mut self, src: &[E]) -> usize {
        ringbuf::traits::Producer::push_slice(self, src)
    }
    fn send_one(&mut self, v: E) -> bool {
        ringbuf::traits::Producer::try_push(self, v).is_ok()
    }
}
impl<E: Ev> Rx<E> for ringbuf::HeapCons<E> {
    fn recv(&mut self, dst: &mut [E]) -> usize {
        ringbuf::traits::Consumer::pop_slice(self, dst)
    }
    fn recv_one(&mut self) -> Option<E> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}

/// heapless has no batch calls: batches are loops of single calls.
impl<E: Ev> Tx<E> for heapless::spsc::Producer<'_, E> {
    fn send_one(&mut self, v: E) -> bool {
        self.enqueue(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for heapless::spsc::Consumer<'_, E> {
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
    fn send_one(&mut self, v: E) -> bool {
        self.0.push(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for Cb<E> {
    fn recv_one(&mut self) -> Option<E> {
        self.0.pop()
    }
}

/// std's bounded channel has no batch calls either: loops of `try_send` /
/// `try_recv`.
impl<E: Ev> Tx<E> for std::sync::mpsc::SyncSender<E> {
    fn send_one(&mut self, v: E) -> bool {
        self.try_send(v).is_ok()
    }
}
impl<E: Ev> Rx<E> for std::sync::mpsc::Receiver<E> {
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
/// probe's `ROUNDTRIP_WARMUP`.
const ROUNDTRIP_WARMUP: u64 = 32;

/// Spins until `rx` has an event.
fn recv_spinning<C: Rx<u64>>(rx: &mut C) -> u64 {
    loop {
        if let Some(v) = rx.recv_one() {
            return v;
        }
        std::hint::spin_loop();
    }
}

/// Sends `v` on `tx`, spinning while it is full, and hands it over at once.
fn send_spinning<P: Tx<u64>>(tx: &mut P, v: u64) {
    while !tx.send_one(v) {
        std::hint::spin_loop();
    }
    tx.flush();
}

/// The CPUs of the round trip's two threads (origin, echo), as the `channel`
/// probe's `other-core` pair on a machine whose first two CPUs are two cores
/// and the `pingpong` example's default. Unpinned, the two threads of a short
/// ping-pong may share a CPU or move, and the three harnesses would not be
/// measuring the same thing.
const ROUNDTRIP_CPUS: (usize, usize) = (0, 1);

/// Pins the calling thread to `cpu`; whether the OS accepted (a machine with
/// one CPU, or a cpuset without it, refuses, and the thread runs where the OS
/// puts it).
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

/// `iters` round trips of one 8-byte event: an origin thread on
/// `ROUNDTRIP_CPUS.0` sends event k on `ping`, an echo thread on
/// `ROUNDTRIP_CPUS.1` sends it back on `pong`; the time of the measured round
/// trips (after [`ROUNDTRIP_WARMUP`]). Every event is checked on its way back.
/// Each thread owns the ends it uses (`move`), so no two ends share a line of
/// one stack.
fn round_trips<P1: Tx<u64>, C1: Rx<u64>, P2: Tx<u64>, C2: Rx<u64>>(
    ping: (P1, C1),
    pong: (P2, C2),
    iters: u64,
) -> Duration {
    let (mut ping_tx, mut ping_rx) = ping;
    let (mut pong_tx, mut pong_rx) = pong;
    let total = iters + ROUNDTRIP_WARMUP;
    std::thread::scope(|s| {
        s.spawn(move || {
            pin(ROUNDTRIP_CPUS.1);
            for _ in 0..total {
                let v = recv_spinning(&mut ping_rx);
                send_spinning(&mut pong_tx, v);
            }
        });
        let origin = s.spawn(move || {
            pin(ROUNDTRIP_CPUS.0);
            let mut start = Instant::now();
            for k in 0..total {
                if k == ROUNDTRIP_WARMUP {
                    start = Instant::now();
                }
                send_spinning(&mut ping_tx, k);
                let back = recv_spinning(&mut pong_rx);
                assert_eq!(back, k, "round trip {k} came back as {back}");
            }
            start.elapsed()
        });
        origin.join().expect("the origin thread panicked")
    })
}

/// The latency view of the race: one 8-byte event there and back, per
/// contender, with the same 32 KiB channels (hspc's n-buffer flushes after
/// each send, as the probe's does), the two threads pinned to
/// [`ROUNDTRIP_CPUS`].
fn bench_round_trip(c: &mut Criterion) {
    const N: usize = CHANNEL_BYTES / 8;
    let ring = hspc::Config::ring(CHANNEL_BYTES).with_wait(SPIN);
    let nbuffer = hspc::Config::n_buffer(4, CHANNEL_BYTES / 4).with_wait(SPIN);
    let mut group = c.benchmark_group("roundtrip_8B");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.bench_function("hspc_ring", |b| {
        b.iter_custom(|iters| round_trips(hspc_pair(ring), hspc_pair(ring), iters))
    });
    group.bench_function("hspc_nbuffer4", |b| {
        b.iter_custom(|iters| round_trips(hspc_pair(nbuffer), hspc_pair(nbuffer), iters))
    });
    group.bench_function("rtrb", |b| {
        b.iter_custom(|iters| {
            let pair = || rtrb::RingBuffer::<u64>::new(N);
            round_trips(pair(), pair(), iters)
        })
    });
    group.bench_function("ringbuf", |b| {
        b.iter_custom(|iters| {
            let pair = || ringbuf::traits::Split::split(ringbuf::HeapRb::<u64>::new(N));
            round_trips(pair(), pair(), iters)
        })
    });
    group.bench_function("heapless", |b| {
        b.iter_custom(|iters| {
            let mut ping = Box::new(HeaplessQueue::<u64, N>::new());
            let mut pong = Box::new(HeaplessQueue::<u64, N>::new());
            round_trips(ping.split(), pong.split(), iters)
        })
    });
    group.bench_function("crossbeam_array_queue", |b| {
        b.iter_custom(|iters| {
            let pair = || {
                let q = std::sync::Arc::new(crossbeam_queue::ArrayQueue::<u64>::new(N));
                (Cb(q.clone()), Cb(q))
            };
            round_trips(pair(), pair(), iters)
        })
    });
    group.bench_function("std_sync_channel", |b| {
        b.iter_custom(|iters| {
            let pair = || std::sync::mpsc::sync_channel::<u64>(N);
            round_trips(pair(), pair(), iters)
        })
    });
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
    fn send(&mut self, src: &[u64]) -> usize {
        let n = self.0.try_push_slice(src);
        if n < src.len() {
            self.0.flush();
        }
        n
    }
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
