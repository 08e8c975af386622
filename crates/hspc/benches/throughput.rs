//! Throughput of 8-byte events from one thread to another: hspc (ring and
//! n-buffer) against every maintained SPSC a Rust user would pick (rtrb,
//! ringbuf, heapless) and crossbeam's `ArrayQueue`, per event and in batches, with identical harness code (non-blocking calls, a spin hint
//! when full or empty) and the same buffer memory for every contender.
//!
//! `cargo bench -p hspc -- --quick`. Figures depend on the machine and its
//! load; nothing here is a test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Events per thread round trip of the harness.
const EVENTS: u64 = 1 << 20;
/// Memory for every contender: 4096 events of 8 bytes (32 KiB: fits L1/L2).
const CAPACITY_EVENTS: usize = 4096;
/// hspc's wait strategy here: the harness spins on full/empty itself, so
/// the strategy only decides what a publication costs; a spinning strategy
/// makes it a plain store, as in rtrb.
const SPIN: hspc::WaitStrategy = hspc::WaitStrategy::SpinPause;
/// Events per batch in the batched runs.
const BATCH: usize = 64;

/// One side of a contender, with the harness's non-blocking calls.
trait Tx: Send {
    /// Sends a prefix of `src`; returns its length (0 when full). By default a loop
    /// of single calls (crates without batch calls).
    fn send(&mut self, src: &[u64]) -> usize {
        src.iter().take_while(|&&v| self.send_one(v)).count()
    }
    fn send_one(&mut self, v: u64) -> bool;
}
trait Rx: Send {
    /// Receives into a prefix of `dst`; returns its length (0 when empty). By
    /// default a loop of single calls (crates without batch calls).
    fn recv(&mut self, dst: &mut [u64]) -> usize {
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
    fn recv_one(&mut self) -> Option<u64>;
}

impl Tx for hspc::Producer<u64> {
    fn send(&mut self, src: &[u64]) -> usize {
        self.try_push_slice(src)
    }
    fn send_one(&mut self, v: u64) -> bool {
        self.try_push(v).is_ok()
    }
}
impl Rx for hspc::Consumer<u64> {
    fn recv(&mut self, dst: &mut [u64]) -> usize {
        self.try_pop_slice(dst).unwrap_or(0)
    }
    fn recv_one(&mut self) -> Option<u64> {
        self.try_pop().ok()
    }
}

impl Tx for rtrb::Producer<u64> {
    fn send(&mut self, src: &[u64]) -> usize {
        let n = self.slots().min(src.len());
        if n == 0 {
            return 0;
        }
        match self.write_chunk_uninit(n) {
            Ok(chunk) => chunk.fill_from_iter(src[..n].iter().copied()),
            Err(_) => 0,
        }
    }
    fn send_one(&mut self, v: u64) -> bool {
        self.push(v).is_ok()
    }
}
impl Rx for rtrb::Consumer<u64> {
    fn recv(&mut self, dst: &mut [u64]) -> usize {
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
    fn recv_one(&mut self) -> Option<u64> {
        self.pop().ok()
    }
}

impl Tx for ringbuf::HeapProd<u64> {
    fn send(&mut self, src: &[u64]) -> usize {
        ringbuf::traits::Producer::push_slice(self, src)
    }
    fn send_one(&mut self, v: u64) -> bool {
        ringbuf::traits::Producer::try_push(self, v).is_ok()
    }
}
impl Rx for ringbuf::HeapCons<u64> {
    fn recv(&mut self, dst: &mut [u64]) -> usize {
        ringbuf::traits::Consumer::pop_slice(self, dst)
    }
    fn recv_one(&mut self) -> Option<u64> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}

/// heapless has no batch calls: batches are loops of single calls.
impl Tx for heapless::spsc::Producer<'_, u64> {
    fn send_one(&mut self, v: u64) -> bool {
        self.enqueue(v).is_ok()
    }
}
impl Rx for heapless::spsc::Consumer<'_, u64> {
    fn recv_one(&mut self) -> Option<u64> {
        self.dequeue()
    }
}

/// heapless's queue: `CAPACITY_EVENTS` slots (a power of two, as heapless advises),
/// of which it uses one fewer.
type HeaplessQueue = heapless::spsc::Queue<u64, CAPACITY_EVENTS>;

/// crossbeam's queue has no batch calls: batches are loops of single calls.
struct Cb(std::sync::Arc<crossbeam_queue::ArrayQueue<u64>>);
impl Tx for Cb {
    fn send_one(&mut self, v: u64) -> bool {
        self.0.push(v).is_ok()
    }
}
impl Rx for Cb {
    fn recv_one(&mut self) -> Option<u64> {
        self.0.pop()
    }
}

/// Moves `events` events from a producer thread to this thread; returns the
/// time from the start of both to the consumer's last receive.
fn run<P: Tx, C: Rx>(mut tx: P, mut rx: C, events: u64, batch: usize) -> Duration {
    let barrier = std::sync::Barrier::new(2);
    let b = &barrier;
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            let src: Vec<u64> = (0..batch as u64).collect();
            b.wait();
            let mut sent = 0u64;
            while sent < events {
                if batch == 1 {
                    if tx.send_one(sent) {
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
        let mut dst = vec![0u64; batch];
        let mut received = 0u64;
        let mut checksum = 0u64;
        barrier.wait();
        let start = Instant::now();
        while received < events {
            if batch == 1 {
                match rx.recv_one() {
                    Some(v) => {
                        checksum = checksum.wrapping_add(v);
                        received += 1;
                    }
                    None => std::hint::spin_loop(),
                }
            } else {
                let n = rx.recv(&mut dst);
                if n == 0 {
                    std::hint::spin_loop();
                }
                for &v in &dst[..n] {
                    checksum = checksum.wrapping_add(v);
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

fn hspc_pair(config: hspc::Config) -> (hspc::Producer<u64>, hspc::Consumer<u64>) {
    hspc::channel(config).expect("valid config")
}

fn bench(c: &mut Criterion) {
    let bytes = CAPACITY_EVENTS * 8;
    for (label, batch) in [("per_item", 1usize), ("batch64", BATCH)] {
        let mut group = c.benchmark_group(format!("throughput_8B/{label}"));
        group.throughput(Throughput::Elements(EVENTS));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        let id = |name: &str| BenchmarkId::new(name, batch);
        group.bench_function(id("hspc_ring"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (tx, rx) = hspc_pair(hspc::Config::ring(bytes).with_wait(SPIN));
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("hspc_nbuffer4"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (tx, rx) =
                            hspc_pair(hspc::Config::n_buffer(4, bytes / 4).with_wait(SPIN));
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("rtrb"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (tx, rx) = rtrb::RingBuffer::new(CAPACITY_EVENTS);
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("ringbuf"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let rb = ringbuf::HeapRb::<u64>::new(CAPACITY_EVENTS);
                        let (tx, rx) = ringbuf::traits::Split::split(rb);
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("heapless"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let mut q = Box::new(HeaplessQueue::new());
                        let (tx, rx) = q.split();
                        run(tx, rx, EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.bench_function(id("crossbeam_array_queue"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let q =
                            std::sync::Arc::new(crossbeam_queue::ArrayQueue::new(CAPACITY_EVENTS));
                        run(Cb(q.clone()), Cb(q), EVENTS, batch)
                    })
                    .sum()
            })
        });
        group.finish();
    }
}

/// One thread fills the channel with `CAPACITY_EVENTS` events, then drains
/// it, again and again: the instruction cost of the calls without any
/// cross-core traffic or scheduling (steadier on a loaded machine than the
/// two-thread runs).
fn single_thread<P: Tx, C: Rx>(tx: &mut P, rx: &mut C, batch: usize, dst: &mut [u64]) -> u64 {
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
        let (mut tx, mut rx) = hspc_pair(hspc::Config::ring(bytes).with_wait(SPIN));
        group.bench_function(id("hspc_ring"), |b| {
            b.iter(|| single_thread(&mut tx, &mut rx, batch, &mut dst))
        });
        let (tx, mut rx) = hspc_pair(hspc::Config::n_buffer(4, bytes / 4).with_wait(SPIN));
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
impl Tx for Flushing {
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

criterion_group!(benches, bench_single_thread, bench);
criterion_main!(benches);
