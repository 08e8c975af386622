//! `channel`: how fast one thread hands events to another through hspc (seed 004),
//! next to every maintained SPSC a Rust user would pick (rtrb, ringbuf, heapless)
//! and crossbeam's `ArrayQueue` and std's `sync_channel`.
//!
//! A producer thread and a consumer thread are pinned on a pair of CPUs: the SMT
//! sibling (`same-core`, where the machine has SMT) and another core (`other-core`);
//! with a single CPU allowed, both share it (`same-cpu`, time-sliced). Every
//! implementation runs the same harness code: non-blocking calls, a spin hint when
//! full or empty and a `yield` after [`YIELD_EVERY`] failed calls in a row (so a
//! partner on the same CPU, or preempted by the OS, gets to run), and the same channel memory
//! ([`CHANNEL_BYTES`]).
//!
//! - Throughput: `events` events of 8 or 64 bytes, sent one at a time (batch 1) or
//!   in batches; events per second from the start gate to the consumer's last
//!   receive, median of the repetitions. Batches are the batch calls where the
//!   implementation has them (hspc slices, rtrb chunks, ringbuf slices) and loops of
//!   single calls otherwise (heapless, crossbeam, std).
//! - Round trip: a ping-pong over two channels (one each way), 8-byte events; one
//!   sample per round trip, in ns. hspc's n-buffer producer flushes after each push.
//!
//! Every event carries its sequence number (and, at 64 bytes, a filler derived from
//! it): the consumer checks count, order and content, so a broken channel fails the
//! case instead of producing a number.

use super::{Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::analysis::pairs as pair_stats;
use crate::clock::{now_ns, ticks, Clock};
use crate::counters::{CountedRun, ThreadCounter};
use crate::harness::pair;
use crate::model::{Finding, Measurement, Point, ProbeResult, Profile, Table};
use crate::placement::pairs::{self, PairCpus, Relation};
use crate::units::fmt_value;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// Events per batch: 1 (per item), then batches.
pub const BATCHES: [usize; 3] = [1, 16, 256];
/// Channel memory of every implementation: 32 KiB (4096 events of 8 bytes, 512 of 64).
pub const CHANNEL_BYTES: usize = 32 << 10;
/// Buffers of hspc's n-buffer configuration (each `CHANNEL_BYTES / NBUFFER_BUFFERS`).
pub const NBUFFER_BUFFERS: usize = 4;
/// hspc's wait strategy here: the harness spins on full/empty itself, so the
/// strategy only decides what a hand-off costs; a spinning one makes it a plain
/// store, as in rtrb.
pub const HSPC_WAIT: hspc::WaitStrategy = hspc::WaitStrategy::SpinPause;
/// Failed calls in a row after which the harness yields (and looks at the stop
/// flag and the deadline). In a row, not in all: counted over the whole run,
/// a wait of a few polls ended in a `yield` every 64 polls, about every third
/// round trip of a ping-pong, more often for an implementation whose empty
/// poll is quicker, and a system call's worth of time went into those round
/// trips (docs/channel.md, "The harness yields only after a long wait").
pub const YIELD_EVERY: u32 = 64;
/// Longest one run (a throughput transfer or a round-trip series) may take before
/// it counts as stalled.
pub const RUN_LIMIT_S: f64 = 30.0;
/// Round trips dropped before sampling (warm-up).
pub const ROUNDTRIP_WARMUP: usize = 32;

/// The probe.
pub struct ChannelProbe;

/// One implementation under test.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Impl {
    /// hspc, n-buffer mode: [`NBUFFER_BUFFERS`] buffers, spin wait.
    Hspc,
    /// hspc, ring mode (per-event hand-off, like rtrb), spin wait.
    HspcRing,
    /// `rtrb::RingBuffer`.
    Rtrb,
    /// `ringbuf::HeapRb` (split into its producer and consumer).
    Ringbuf,
    /// `heapless::spsc::Queue` (fixed capacity; one slot stays empty).
    Heapless,
    /// `crossbeam_queue::ArrayQueue` (an MPMC queue used by one thread each side).
    Crossbeam,
    /// `std::sync::mpsc::sync_channel`.
    Std,
}

impl Impl {
    /// Every implementation, in the order of the series.
    pub const ALL: [Impl; 7] = [
        Impl::Hspc,
        Impl::HspcRing,
        Impl::Rtrb,
        Impl::Ringbuf,
        Impl::Heapless,
        Impl::Crossbeam,
        Impl::Std,
    ];

    /// Name in series and distributions.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Hspc => "hspc",
            Impl::HspcRing => "hspc-ring",
            Impl::Rtrb => "rtrb",
            Impl::Ringbuf => "ringbuf",
            Impl::Heapless => "heapless",
            Impl::Crossbeam => "crossbeam",
            Impl::Std => "std",
        }
    }
}

/// hspc's configuration for `impl_` (`None` for the peers).
pub fn hspc_config(impl_: Impl) -> Option<hspc::Config> {
    match impl_ {
        Impl::Hspc => Some(
            hspc::Config::n_buffer(NBUFFER_BUFFERS, CHANNEL_BYTES / NBUFFER_BUFFERS)
                .with_wait(HSPC_WAIT),
        ),
        Impl::HspcRing => Some(hspc::Config::ring(CHANNEL_BYTES).with_wait(HSPC_WAIT)),
        _ => None,
    }
}

/// An event of the harness: a sequence number, and filler up to its size.
pub trait Event: Copy + Send + 'static {
    /// Size in bytes (in series names: `8B`, `64B`).
    const BYTES: usize;
    /// The event with sequence number `seq`.
    fn new(seq: u64) -> Self;
    /// Its sequence number.
    fn seq(&self) -> u64;
    /// True if the filler matches the sequence number.
    fn intact(&self) -> bool;
}

impl Event for u64 {
    const BYTES: usize = 8;
    #[inline(always)]
    fn new(seq: u64) -> Self {
        seq
    }
    #[inline(always)]
    fn seq(&self) -> u64 {
        *self
    }
    #[inline(always)]
    fn intact(&self) -> bool {
        true
    }
}

impl Event for [u64; 8] {
    const BYTES: usize = 64;
    #[inline(always)]
    fn new(seq: u64) -> Self {
        let mut e = [seq; 8];
        e[7] = !seq;
        e
    }
    #[inline(always)]
    fn seq(&self) -> u64 {
        self[0]
    }
    #[inline(always)]
    fn intact(&self) -> bool {
        self[7] == !self[0]
    }
}

/// The producing half, as the harness calls it: never blocks.
pub trait Tx<E: Copy>: Send {
    /// Sends a prefix of `src`; returns its length (0 when full). By default a loop
    /// of single calls (crates without batch calls).
    fn send(&mut self, src: &[E]) -> usize {
        src.iter().take_while(|&&e| self.send_one(e)).count()
    }
    /// Sends one event; false when full.
    fn send_one(&mut self, e: E) -> bool;
    /// Makes everything sent visible (hspc n-buffer); a no-op elsewhere.
    fn flush(&mut self) {}
}

/// The consuming half, as the harness calls it: never blocks.
pub trait Rx<E>: Send {
    /// Receives into a prefix of `dst`; returns its length (0 when empty). By
    /// default a loop of single calls (crates without batch calls).
    fn recv(&mut self, dst: &mut [E]) -> usize {
        let mut n = 0;
        for slot in dst {
            match self.recv_one() {
                Some(e) => *slot = e,
                None => break,
            }
            n += 1;
        }
        n
    }
    /// Receives one event, if there is one.
    fn recv_one(&mut self) -> Option<E>;
}

impl<E: Event> Tx<E> for hspc::Producer<E> {
    #[inline]
    fn send(&mut self, src: &[E]) -> usize {
        self.try_push_slice(src)
    }
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        self.try_push(e).is_ok()
    }
    fn flush(&mut self) {
        hspc::Producer::flush(self)
    }
}

impl<E: Event> Rx<E> for hspc::Consumer<E> {
    #[inline]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        self.try_pop_slice(dst).unwrap_or(0)
    }
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        self.try_pop().ok()
    }
}

impl<E: Event> Tx<E> for rtrb::Producer<E> {
    #[inline]
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
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        self.push(e).is_ok()
    }
}

impl<E: Event> Rx<E> for rtrb::Consumer<E> {
    #[inline]
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
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        self.pop().ok()
    }
}

impl<E: Event> Tx<E> for ringbuf::HeapProd<E> {
    #[inline]
    fn send(&mut self, src: &[E]) -> usize {
        ringbuf::traits::Producer::push_slice(self, src)
    }
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        ringbuf::traits::Producer::try_push(self, e).is_ok()
    }
}

impl<E: Event> Rx<E> for ringbuf::HeapCons<E> {
    #[inline]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        ringbuf::traits::Consumer::pop_slice(self, dst)
    }
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}

/// heapless has no batch calls: batches are loops of single calls.
impl<E: Event> Tx<E> for heapless::spsc::Producer<'_, E> {
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        self.enqueue(e).is_ok()
    }
}

impl<E: Event> Rx<E> for heapless::spsc::Consumer<'_, E> {
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        self.dequeue()
    }
}

/// crossbeam's queue has no batch calls: batches are loops of single calls.
pub struct Cb<E>(Arc<crossbeam_queue::ArrayQueue<E>>);

impl<E: Event> Tx<E> for Cb<E> {
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        self.0.push(e).is_ok()
    }
}

impl<E: Event> Rx<E> for Cb<E> {
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        self.0.pop()
    }
}

/// std's channel has no batch calls either: loops of `try_send` / `try_recv`.
impl<E: Event> Tx<E> for SyncSender<E> {
    #[inline]
    fn send_one(&mut self, e: E) -> bool {
        self.try_send(e).is_ok()
    }
}

impl<E: Event> Rx<E> for Receiver<E> {
    #[inline]
    fn recv_one(&mut self) -> Option<E> {
        self.try_recv().ok()
    }
}

/// Why a run produced no number.
#[derive(Debug, Clone, PartialEq)]
pub enum RunFail {
    /// The deadline passed before every event arrived.
    Deadline {
        /// Events the consumer had received.
        received: u64,
    },
    /// Events arrived out of order, damaged, missing or twice.
    Corrupt(String),
}

/// Waits after a failed call: a spin hint, and after [`YIELD_EVERY`] failures
/// in a row a `yield` and a look at the stop flag and the deadline. False =
/// give up. The measured loops call [`Idle::progressed`] after each call that
/// moved an event.
struct Idle<'a> {
    /// Failed calls since the last one that moved an event.
    fails: u32,
    stop: &'a AtomicBool,
    deadline: Instant,
}

impl<'a> Idle<'a> {
    fn new(stop: &'a AtomicBool, deadline: Instant) -> Self {
        Self {
            fails: 0,
            stop,
            deadline,
        }
    }

    /// A call moved an event: the next failure starts a new streak.
    #[inline(always)]
    fn progressed(&mut self) {
        self.fails = 0;
    }

    #[inline]
    fn wait(&mut self) -> bool {
        self.fails = self.fails.wrapping_add(1);
        if self.fails % YIELD_EVERY != 0 {
            std::hint::spin_loop();
            return true;
        }
        self.check()
    }

    /// Every [`YIELD_EVERY`] failures in a row: the stop flag, the deadline and a
    /// `yield`. Out of line, so that the measured loops around [`Idle::wait`]
    /// hold no clock or yield call of their own.
    #[cold]
    #[inline(never)]
    fn check(&mut self) -> bool {
        if self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline {
            self.stop.store(true, Ordering::Relaxed);
            return false;
        }
        std::thread::yield_now();
        true
    }
}

/// What the threads of one run leave besides their result: pinning warnings and
/// each thread's event counts around its measured part (software counters always,
/// hardware where the PMU exists; `counters::CountedRun`).
#[derive(Default)]
pub struct PairLog {
    /// Pinning refusals and moves, once each.
    pub warnings: Mutex<Vec<String>>,
    /// The counted threads of the run.
    pub counted: CountedRun,
}

impl PairLog {
    /// Pin the calling thread to `cpu` (if any), warn if refused; open its counters.
    fn pin_and_count(&self, cpu: Option<u32>) -> ThreadCounter {
        let mut pinned = false;
        if let Some(c) = cpu {
            match crate::affinity::pin_checked(c) {
                Ok(()) => pinned = true,
                Err(w) => {
                    let mut ws = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
                    if !ws.contains(&w) {
                        ws.push(w);
                    }
                }
            }
        }
        ThreadCounter::open(pinned)
    }

    /// Add a thread's counts over `[start_ns, end_ns]`.
    fn add(&self, counter: ThreadCounter, start_ns: u64, end_ns: u64) {
        self.counted.add(counter.finish(), start_ns, end_ns);
    }

    /// Hand the warnings and the run's counts to the probe's context.
    pub fn absorb(self, ctx: &mut RunCtx) {
        let (team, errors) = self.counted.finish();
        ctx.counted.extend(team);
        let warnings = self
            .warnings
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        for w in warnings.into_iter().chain(errors) {
            if !ctx.warnings.contains(&w) {
                ctx.warnings.push(w);
            }
        }
    }
}

/// Runs `body` in the calling thread pinned to `cpu`, its counters around it.
fn counted<R>(log: &PairLog, cpu: Option<u32>, body: impl FnOnce() -> R) -> R {
    let mut counter = log.pin_and_count(cpu);
    counter.start();
    let start_ns = now_ns();
    let r = body();
    let end_ns = now_ns();
    counter.stop();
    log.add(counter, start_ns, end_ns);
    r
}

/// Moves `events` events from a producer on `cpus.0` to a consumer on `cpus.1`, in
/// batches of `batch` (1 = single calls); returns the time from the start gate to
/// the consumer's last receive. Checks count, order and content of every event.
pub fn transfer<E: Event, P: Tx<E>, C: Rx<E>>(
    tx: P,
    rx: C,
    events: u64,
    batch: usize,
    cpus: PairCpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Duration, RunFail> {
    let batch = batch.max(1);
    let gate = Barrier::new(2);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let producer = s.spawn(|| produce(tx, events, batch, cpus.0, &gate, &stop, deadline, log));
        // The consumer runs in its own thread too: the caller (the runner's
        // thread) is never pinned.
        let consumer = s.spawn(|| {
            let mut rx = rx;
            let result = consume(&mut rx, events, batch, cpus.1, &gate, &stop, deadline, log);
            (result, rx)
        });
        let Ok((result, mut rx)) = consumer.join() else {
            stop.store(true, Ordering::Relaxed);
            let _ = producer.join();
            return Err(RunFail::Corrupt("the consumer thread panicked".into()));
        };
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        if producer.join().is_err() {
            return Err(RunFail::Corrupt("the producer thread panicked".into()));
        }
        // The producer is gone (its last buffer handed over): nothing more may come.
        if result.is_ok() && rx.recv_one().is_some() {
            return Err(RunFail::Corrupt(format!(
                "more than the {events} events sent arrived"
            )));
        }
        result
    })
}

/// The producer of [`transfer`]: sends `events` numbered events.
///
/// Never inlined, as [`consume`]: each implementation's loop is compiled on
/// its own, the same way for every one, and does not depend on what else the
/// binary inlines around it. Taking the two loops out of line alone moved
/// rtrb's per-event figure about twofold with its code unchanged; see
/// docs/channel.md, "The ring's per-item gap".
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn produce<E: Event, P: Tx<E>>(
    mut tx: P,
    events: u64,
    batch: usize,
    cpu: Option<u32>,
    gate: &Barrier,
    stop: &AtomicBool,
    deadline: Instant,
    log: &PairLog,
) {
    let mut counter = log.pin_and_count(cpu);
    let mut idle = Idle::new(stop, deadline);
    // Allocated (and touched) before the clock starts.
    let mut src = vec![E::new(0); batch];
    gate.wait();
    counter.start();
    let start_ns = now_ns();
    if batch == 1 {
        send_each(&mut tx, events, &mut idle);
    } else {
        send_batches(&mut tx, events, &mut src, &mut idle);
    }
    tx.flush();
    // Dropping hands over hspc's last partial buffer.
    drop(tx);
    let end_ns = now_ns();
    counter.stop();
    log.add(counter, start_ns, end_ns);
}

/// The producer's measured loop, one event per call. Never inlined, as the
/// other measured loops: the loop alone in its function, compiled alike for
/// every implementation.
#[inline(never)]
fn send_each<E: Event, P: Tx<E>>(tx: &mut P, events: u64, idle: &mut Idle) {
    let mut sent = 0u64;
    while sent < events {
        if tx.send_one(E::new(sent)) {
            sent += 1;
            idle.progressed();
        } else if !idle.wait() {
            return;
        }
    }
}

/// The producer's measured loop in batches of up to `src.len()` events.
#[inline(never)]
fn send_batches<E: Event, P: Tx<E>>(tx: &mut P, events: u64, src: &mut [E], idle: &mut Idle) {
    let batch = src.len();
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut sent = 0u64;
    while sent < events {
        if lo == hi {
            let want = (events - sent).min(batch as u64) as usize;
            for (i, e) in src[..want].iter_mut().enumerate() {
                *e = E::new(sent + i as u64);
            }
            (lo, hi) = (0, want);
        }
        let n = tx.send(&src[lo..hi]);
        if n == 0 {
            if !idle.wait() {
                return;
            }
        } else {
            idle.progressed();
            lo += n;
            sent += n as u64;
        }
    }
}

/// The consumer of [`transfer`]: receives and checks `events` events.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn consume<E: Event, C: Rx<E>>(
    rx: &mut C,
    events: u64,
    batch: usize,
    cpu: Option<u32>,
    gate: &Barrier,
    stop: &AtomicBool,
    deadline: Instant,
    log: &PairLog,
) -> Result<Duration, RunFail> {
    let mut counter = log.pin_and_count(cpu);
    let mut idle = Idle::new(stop, deadline);
    // Allocated (and touched) before the clock starts.
    let mut dst = vec![E::new(0); batch];
    gate.wait();
    counter.start();
    let start_ns = now_ns();
    let start = Instant::now();
    let Checked { expected, bad } = if batch == 1 {
        receive_each(rx, events, &mut idle)
    } else {
        receive_batches(rx, events, &mut dst, &mut idle)
    };
    let elapsed = start.elapsed();
    let end_ns = now_ns();
    counter.stop();
    log.add(counter, start_ns, end_ns);
    if expected < events {
        return Err(RunFail::Deadline { received: expected });
    }
    if bad > 0 {
        return Err(RunFail::Corrupt(format!(
            "{bad} of {events} events arrived out of order or damaged"
        )));
    }
    Ok(elapsed)
}

/// What the consumer's loop received: events in order so far, and how many
/// of them were out of order or damaged.
struct Checked {
    expected: u64,
    bad: u64,
}

/// The consumer's measured loop, one event per call (never inlined, as
/// [`send_each`]).
#[inline(never)]
fn receive_each<E: Event, C: Rx<E>>(rx: &mut C, events: u64, idle: &mut Idle) -> Checked {
    let (mut expected, mut bad) = (0u64, 0u64);
    while expected < events {
        match rx.recv_one() {
            Some(e) => {
                bad += u64::from(e.seq() != expected || !e.intact());
                expected += 1;
                idle.progressed();
            }
            None => {
                if !idle.wait() {
                    break;
                }
            }
        }
    }
    Checked { expected, bad }
}

/// The consumer's measured loop in batches of up to `dst.len()` events.
#[inline(never)]
fn receive_batches<E: Event, C: Rx<E>>(
    rx: &mut C,
    events: u64,
    dst: &mut [E],
    idle: &mut Idle,
) -> Checked {
    let (mut expected, mut bad) = (0u64, 0u64);
    while expected < events {
        let n = rx.recv(dst);
        if n == 0 {
            if !idle.wait() {
                break;
            }
            continue;
        }
        idle.progressed();
        for e in &dst[..n] {
            bad += u64::from(e.seq() != expected || !e.intact());
            expected += 1;
        }
    }
    Checked { expected, bad }
}

/// Ping-pong: a thread on `cpus.0` sends event k on `ping` and waits for it to come
/// back on `pong` from an echo thread on `cpus.1`; `samples` round trips in ticks
/// (after [`ROUNDTRIP_WARMUP`] unrecorded ones).
pub fn roundtrip<E: Event, P1: Tx<E>, C1: Rx<E>, P2: Tx<E>, C2: Rx<E>>(
    ping: (P1, C1),
    pong: (P2, C2),
    samples: usize,
    cpus: PairCpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Vec<u64>, RunFail> {
    let (mut ping_tx, mut ping_rx) = ping;
    let (mut pong_tx, mut pong_rx) = pong;
    let total = (samples + ROUNDTRIP_WARMUP) as u64;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let echo = s.spawn(|| {
            counted(log, cpus.1, || -> Result<(), RunFail> {
                let mut idle = Idle::new(&stop, deadline);
                for k in 0..total {
                    let e = loop {
                        if let Some(e) = ping_rx.recv_one() {
                            break e;
                        }
                        if !idle.wait() {
                            return Err(RunFail::Deadline { received: k });
                        }
                    };
                    idle.progressed();
                    if e.seq() != k || !e.intact() {
                        stop.store(true, Ordering::Relaxed);
                        return Err(RunFail::Corrupt(format!(
                            "echo expected event {k}, got {}",
                            e.seq()
                        )));
                    }
                    while !pong_tx.send_one(e) {
                        if !idle.wait() {
                            return Err(RunFail::Deadline { received: k });
                        }
                    }
                    idle.progressed();
                    pong_tx.flush();
                }
                Ok(())
            })
        });
        let origin = s.spawn(|| {
            counted(log, cpus.0, || -> Result<Vec<u64>, RunFail> {
                let mut idle = Idle::new(&stop, deadline);
                let mut out = Vec::with_capacity(samples);
                for k in 0..total {
                    let t0 = ticks();
                    while !ping_tx.send_one(E::new(k)) {
                        if !idle.wait() {
                            return Err(RunFail::Deadline { received: k });
                        }
                    }
                    idle.progressed();
                    ping_tx.flush();
                    let e = loop {
                        if let Some(e) = pong_rx.recv_one() {
                            break e;
                        }
                        if !idle.wait() {
                            return Err(RunFail::Deadline { received: k });
                        }
                    };
                    let dt = ticks().wrapping_sub(t0);
                    idle.progressed();
                    if e.seq() != k || !e.intact() {
                        stop.store(true, Ordering::Relaxed);
                        return Err(RunFail::Corrupt(format!(
                            "round trip {k} returned event {}",
                            e.seq()
                        )));
                    }
                    if k >= ROUNDTRIP_WARMUP as u64 {
                        out.push(dt);
                    }
                }
                Ok(out)
            })
        });
        let echoed = echo
            .join()
            .unwrap_or_else(|_| Err(RunFail::Corrupt("the echo thread panicked".into())));
        let sampled = origin
            .join()
            .unwrap_or_else(|_| Err(RunFail::Corrupt("the sending thread panicked".into())));
        let out = sampled?;
        echoed?;
        Ok(out)
    })
}

fn hspc_pair<E: Event>(impl_: Impl) -> Result<(hspc::Producer<E>, hspc::Consumer<E>), ProbeError> {
    let config = hspc_config(impl_).expect("an hspc implementation");
    hspc::channel::<E>(config).map_err(|e| ProbeError::Failed(format!("hspc: {e}")))
}

/// heapless's queue has its size in its type: one per event size, on the heap. Its
/// `N` is the others' capacity, a power of two as heapless advises for speed; it
/// holds `N − 1` events (one slot stays empty).
enum HeaplessQueue<E> {
    /// 8-byte events.
    Small(Box<heapless::spsc::Queue<E, { CHANNEL_BYTES / 8 }>>),
    /// 64-byte events.
    Large(Box<heapless::spsc::Queue<E, { CHANNEL_BYTES / 64 }>>),
}

impl<E: Event> HeaplessQueue<E> {
    fn new() -> Result<Self, ProbeError> {
        match E::BYTES {
            8 => Ok(Self::Small(Box::new(heapless::spsc::Queue::new()))),
            64 => Ok(Self::Large(Box::new(heapless::spsc::Queue::new()))),
            b => Err(ProbeError::Failed(format!(
                "heapless: no queue type for {b}-byte events"
            ))),
        }
    }

    fn view(&mut self) -> &mut heapless::spsc::QueueView<E> {
        match self {
            Self::Small(q) => q.as_mut_view(),
            Self::Large(q) => q.as_mut_view(),
        }
    }
}

fn ringbuf_pair<E: Event>(cap: usize) -> (ringbuf::HeapProd<E>, ringbuf::HeapCons<E>) {
    ringbuf::traits::Split::split(ringbuf::HeapRb::<E>::new(cap))
}

fn cb_pair<E: Event>() -> (Cb<E>, Cb<E>) {
    let q = Arc::new(crossbeam_queue::ArrayQueue::new(CHANNEL_BYTES / E::BYTES));
    (Cb(q.clone()), Cb(q))
}

/// One throughput run of `impl_`: see [`transfer`].
pub fn transfer_of<E: Event>(
    impl_: Impl,
    events: u64,
    batch: usize,
    cpus: PairCpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Result<Duration, RunFail>, ProbeError> {
    let cap = CHANNEL_BYTES / E::BYTES;
    let (e, b, c, d, w) = (events, batch, cpus, deadline, log);
    Ok(match impl_ {
        Impl::Hspc | Impl::HspcRing => {
            let (tx, rx) = hspc_pair::<E>(impl_)?;
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Rtrb => {
            let (tx, rx) = rtrb::RingBuffer::<E>::new(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Ringbuf => {
            let (tx, rx) = ringbuf_pair::<E>(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Heapless => {
            let mut q = HeaplessQueue::<E>::new()?;
            let (tx, rx) = q.view().split();
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Crossbeam => {
            let (tx, rx) = cb_pair::<E>();
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Std => {
            let (tx, rx) = mpsc::sync_channel::<E>(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
    })
}

/// One round-trip series of `impl_`: see [`roundtrip`].
pub fn roundtrip_of<E: Event>(
    impl_: Impl,
    samples: usize,
    cpus: PairCpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Result<Vec<u64>, RunFail>, ProbeError> {
    let cap = CHANNEL_BYTES / E::BYTES;
    let (n, c, d, w) = (samples, cpus, deadline, log);
    Ok(match impl_ {
        Impl::Hspc | Impl::HspcRing => {
            roundtrip::<E, _, _, _, _>(hspc_pair(impl_)?, hspc_pair(impl_)?, n, c, d, w)
        }
        Impl::Rtrb => roundtrip::<E, _, _, _, _>(
            rtrb::RingBuffer::new(cap),
            rtrb::RingBuffer::new(cap),
            n,
            c,
            d,
            w,
        ),
        Impl::Ringbuf => {
            roundtrip::<E, _, _, _, _>(ringbuf_pair(cap), ringbuf_pair(cap), n, c, d, w)
        }
        Impl::Heapless => {
            let (mut a, mut b) = (HeaplessQueue::<E>::new()?, HeaplessQueue::<E>::new()?);
            roundtrip::<E, _, _, _, _>(a.view().split(), b.view().split(), n, c, d, w)
        }
        Impl::Crossbeam => roundtrip::<E, _, _, _, _>(cb_pair(), cb_pair(), n, c, d, w),
        Impl::Std => {
            roundtrip::<E, _, _, _, _>(mpsc::sync_channel(cap), mpsc::sync_channel(cap), n, c, d, w)
        }
    })
}

/// Where the pair runs: the relation's name in series (`same-core` for the SMT
/// sibling), and its CPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Placement {
    name: String,
    cpus: PairCpus,
}

#[derive(Debug, Clone, Serialize)]
enum CaseParams {
    Throughput {
        placement: Placement,
        impl_: Impl,
        event_bytes: usize,
        events: u64,
    },
    Roundtrip {
        placement: Placement,
        impl_: Impl,
        samples: usize,
    },
}

/// The placements measured on this machine, and the reasons for those skipped.
fn placements(ctx: &PlanCtx) -> (Vec<Placement>, Vec<String>) {
    let all = pairs::pairs(&ctx.topo);
    let get = |r: Relation| {
        all.iter()
            .find(|(x, _)| *x == r)
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| Err("not found".into()))
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    match get(Relation::SmtSibling) {
        Ok(cpus) => out.push(Placement {
            name: "same-core".into(),
            cpus,
        }),
        Err(why) => skipped.push(format!("same-core: skipped: no SMT ({why})")),
    }
    match get(Relation::OtherCore) {
        Ok(cpus) => out.push(Placement {
            name: "other-core".into(),
            cpus,
        }),
        Err(why) => skipped.push(format!("other-core: skipped: {why}")),
    }
    if out.is_empty() {
        // One CPU: both threads share it, time-sliced (the harness yields).
        if let Ok(cpus) = get(Relation::SameCpu) {
            out.push(Placement {
                name: "same-cpu".into(),
                cpus,
            });
        }
    }
    (out, skipped)
}

fn fail(impl_: Impl, what: &str, f: RunFail, ctx: &RunCtx) -> ProbeError {
    match f {
        RunFail::Deadline { received } if ctx.expired() => ProbeError::GaveUp(format!(
            "{} {what}: the budget ran out after {received} events",
            impl_.name()
        )),
        RunFail::Deadline { received } => ProbeError::Failed(format!(
            "{} {what}: stalled after {received} events ({RUN_LIMIT_S} s without finishing)",
            impl_.name()
        )),
        RunFail::Corrupt(why) => ProbeError::Failed(format!("{} {what}: {why}", impl_.name())),
    }
}

fn run_deadline(ctx: &RunCtx) -> Instant {
    ctx.deadline
        .min(Instant::now() + Duration::from_secs_f64(RUN_LIMIT_S))
}

/// The comparison (and series stem) of a throughput race: `throughput 8B other-core`;
/// its series end in the implementation (`…/rtrb`), x the batch.
pub fn throughput_what(event_bytes: usize, place: &str) -> String {
    format!("throughput {event_bytes}B {place}")
}

/// Rounds of a throughput race: those of a compared variant, fewer in the quick
/// profile (every round runs every batch of every implementation).
fn throughput_rounds(profile: Profile) -> Rounds {
    Rounds {
        min: profile.pick(
            6,
            crate::probes::MIN_COMPARED_ROUNDS,
            crate::probes::MIN_COMPARED_ROUNDS,
        ),
        max: profile.pick(6, 16, crate::probes::MAX_ROUNDS),
        ..Rounds::COMPARED
    }
}

/// `case`, kept only for rounds during which the round trip between its two CPUs
/// stayed the same (the placement check: this VM moves its vCPUs between
/// host cores, and a hand-off's cost follows the host cores it lands on).
fn steady(case: Case, cpus: PairCpus) -> Case {
    match cpus {
        (Some(a), Some(b)) => case.kept_when_steady(a, b),
        _ => case,
    }
}

/// The SPSC crates hspc races (crossbeam's MPMC queue and std's channel are shown,
/// not raced).
const SPSC_PEERS: [Impl; 3] = [Impl::Rtrb, Impl::Ringbuf, Impl::Heapless];

impl Probe for ChannelProbe {
    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Per run since the implementations race in rounds (one transfer per
    /// batch): the old per-case figures ÷ their repetitions (3, 5, 11); not
    /// refitted yet.
    /// Summary: hspc against its strongest rival per group of events.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Race {
            ours: "hspc",
            rates: "throughput/",
            round_trips: "roundtrip/",
        }
    }
    fn run_cost_s(&self, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.007, 0.06, 0.4]))
    }

    fn id(&self) -> &'static str {
        "channel"
    }

    fn title(&self) -> &'static str {
        "producer/consumer channel: hspc raced against rtrb, ringbuf, heapless, crossbeam and std, per item, batched, round trip"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let events: u64 = ctx.profile.pick(1 << 18, 1 << 21, 1 << 24);
        let rounds = throughput_rounds(ctx.profile);
        let samples = pair::samples(ctx.profile);
        let (places, skipped) = placements(ctx);
        if places.is_empty() {
            return Err(ProbeError::Skipped("no allowed CPU".into()));
        }
        let mut cases = Vec::new();
        for p in &places {
            for event_bytes in [8usize, 64] {
                // The implementations race in rounds, in an order rotated each
                // round, so drift hits every one alike; a round runs every batch.
                for impl_ in Impl::ALL {
                    cases.push(steady(
                        Case::new(
                            format!("{} {event_bytes}B {}", impl_.name(), p.name),
                            &CaseParams::Throughput {
                                placement: p.clone(),
                                impl_,
                                event_bytes,
                                events,
                            },
                        )
                        .compared(
                            throughput_what(event_bytes, &p.name),
                            impl_.name(),
                            format!("{} on {:?}", impl_.name(), p.cpus),
                        )
                        .with_rounds(rounds),
                        p.cpus,
                    ));
                }
            }
            for impl_ in Impl::ALL {
                cases.push(steady(
                    Case::new(
                        format!("{} round trip {}", impl_.name(), p.name),
                        &CaseParams::Roundtrip {
                            placement: p.clone(),
                            impl_,
                            samples,
                        },
                    ),
                    p.cpus,
                ));
            }
        }
        let configs: serde_json::Map<String, serde_json::Value> = Impl::ALL
            .iter()
            .filter_map(|&i| {
                hspc_config(i).map(|c| {
                    (
                        i.name().to_string(),
                        serde_json::to_value(c).unwrap_or_default(),
                    )
                })
            })
            .collect();
        Ok(Plan::new(cases)
            .param(
                "implementations",
                Impl::ALL.iter().map(|i| i.name()).collect::<Vec<_>>(),
            )
            .param("hspc_configs", configs)
            .param("channel_bytes", CHANNEL_BYTES)
            .param("batches", BATCHES)
            .param("events_per_run", events)
            .param("rounds_min", rounds.min)
            .param("rounds_max", rounds.max)
            .param("roundtrip_samples", samples)
            .param("roundtrip_event_bytes", 8)
            .param("yield_every_failed_calls", YIELD_EVERY)
            .skipping(skipped))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let mut m = Measurement::default();
        match case.typed()? {
            CaseParams::Throughput {
                placement,
                impl_,
                event_bytes,
                events,
            } => {
                for batch in BATCHES {
                    let d = run_deadline(ctx);
                    let (cpus, log) = (placement.cpus, PairLog::default());
                    let run = match event_bytes {
                        8 => transfer_of::<u64>(impl_, events, batch, cpus, d, &log)?,
                        _ => transfer_of::<[u64; 8]>(impl_, events, batch, cpus, d, &log)?,
                    };
                    log.absorb(ctx);
                    let what = format!("{event_bytes}B batch {batch}");
                    let elapsed = run.map_err(|f| fail(impl_, &what, f, ctx))?;
                    m.points.push(Point::new(
                        format!(
                            "{}/{}",
                            throughput_what(event_bytes, &placement.name),
                            impl_.name()
                        ),
                        "batch",
                        batch as f64,
                        "events_per_s",
                        events as f64 / elapsed.as_secs_f64().max(1e-9),
                    ));
                }
            }
            CaseParams::Roundtrip {
                placement,
                impl_,
                samples,
            } => {
                let (d, log) = (run_deadline(ctx), PairLog::default());
                let ticks = roundtrip_of::<u64>(impl_, samples, placement.cpus, d, &log);
                log.absorb(ctx);
                let ticks = ticks?.map_err(|f| fail(impl_, "round trip", f, ctx))?;
                let clock: &Clock = &ctx.plan.clock;
                let dist = pair_stats::dist_ns(
                    &format!("roundtrip/{}/{}", impl_.name(), placement.name),
                    clock,
                    &ticks,
                );
                pair_stats::push_dists(&mut m, clock, [dist]);
            }
        }
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, _plan: &Plan, _ctx: &PlanCtx) {
        let mut places: Vec<String> = Vec::new();
        for d in &result.distributions {
            if let Some(p) = d.name.rsplit('/').next() {
                if !places.iter().any(|x| x == p) {
                    places.push(p.to_string());
                }
            }
        }
        for place in &places {
            let table = throughput_table(result, place);
            result.tables.push(table);
            for bytes in [8usize, 64] {
                let found = race_findings(result, bytes, place);
                result.findings.extend(found);
            }
            let rt: Vec<String> = Impl::ALL
                .iter()
                .filter_map(|i| {
                    let name = format!("roundtrip/{}/{place}", i.name());
                    let d = result.distributions.iter().find(|d| d.name == name)?;
                    Some(format!("{} {}", i.name(), fmt_value("ns", d.summary.p50)))
                })
                .collect();
            let span = Impl::ALL
                .iter()
                .filter_map(|i| steady_span(result, &format!("{} round trip {place}", i.name())))
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
            if !rt.is_empty() {
                let state = span
                    .map(|(lo, hi)| format!(" (CPUs' round trip {lo:.0}–{hi:.0} ns)"))
                    .unwrap_or_default();
                result.findings.push(format!(
                    "round trip (8B, {place}), median: {}{state}",
                    rt.join(", ")
                ));
            }
        }
    }
}

/// Median events per second of `impl_` at `batch`, if measured.
fn rate(result: &ProbeResult, bytes: usize, place: &str, impl_: Impl, batch: usize) -> Option<f64> {
    let s = result.series(&format!(
        "{}/{}",
        throughput_what(bytes, place),
        impl_.name()
    ))?;
    s.estimate_at(batch as f64).map(|e| e.value)
}

/// One compact table per placement: implementations × (size, batch), medians in
/// M events/s (the series hold every round and the intervals).
fn throughput_table(result: &ProbeResult, place: &str) -> Table {
    let mut columns = vec!["implementation".to_string()];
    for bytes in [8usize, 64] {
        for b in BATCHES {
            columns.push(format!("{bytes}B ×{b} (M events/s)"));
        }
    }
    let rows = Impl::ALL
        .iter()
        .map(|&impl_| {
            let mut row = vec![serde_json::json!(impl_.name())];
            for bytes in [8usize, 64] {
                for b in BATCHES {
                    row.push(match rate(result, bytes, place, impl_, b) {
                        Some(v) => serde_json::json!((v / 1e4).round() / 100.0),
                        None => serde_json::Value::Null,
                    });
                }
            }
            row
        })
        .collect();
    Table {
        name: format!("channel/throughput/{place}"),
        columns,
        rows,
    }
}

/// The span of the CPU pair's round trip over the kept rounds of group `what`
/// (the runner's `steady_round_trip_ns`): the state of the machine the race
/// belongs to (on this VM about 100–140 ns when its vCPUs sit close, 450–490 ns
/// when they do not).
fn steady_span(result: &ProbeResult, what: &str) -> Option<(f64, f64)> {
    let span = result.params.get("steady_round_trip_ns")?.get(what)?;
    Some((span.get(0)?.as_f64()?, span.get(1)?.as_f64()?))
}

/// The race in findings, paired by round: per item, hspc's ring and n-buffer modes
/// against the fastest other SPSC crate; batched, hspc against rtrb and against the
/// fastest other.
fn race_findings(result: &ProbeResult, bytes: usize, place: &str) -> Vec<Finding> {
    let what = throughput_what(bytes, place);
    let series = |i: Impl| format!("{what}/{}", i.name());
    let fastest_peer = |batch: usize| {
        SPSC_PEERS
            .iter()
            .copied()
            .filter_map(|i| rate(result, bytes, place, i, batch).map(|r| (i, r)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    let big = BATCHES[BATCHES.len() - 1];
    let mut races = Vec::new();
    if let Some(peer) = fastest_peer(1) {
        races.push((Impl::HspcRing, peer, 1, "per item, fastest other SPSC"));
        races.push((
            Impl::Hspc,
            peer,
            1,
            "per item (n-buffer: visible per buffer)",
        ));
    }
    races.push((Impl::Hspc, Impl::Rtrb, big, "batched"));
    if let Some(peer) = fastest_peer(big).filter(|&p| p != Impl::Rtrb) {
        races.push((Impl::Hspc, peer, big, "batched, fastest other SPSC"));
    }
    races
        .into_iter()
        .filter_map(|(a, b, batch, how)| {
            let x = batch as f64;
            analysis::compare(
                result,
                &format!("{bytes}B events ×{batch}, {place}"),
                "events_per_s",
                (a.name(), &series(a), x),
                (b.name(), &series(b), x),
                Some(match steady_span(result, &what) {
                    Some((lo, hi)) => format!("{how}; CPUs' round trip {lo:.0}–{hi:.0} ns"),
                    None => how.to_string(),
                }),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(20)
    }

    #[test]
    fn both_threads_of_a_run_are_counted_over_the_run() {
        let log = PairLog::default();
        transfer_of::<u64>(Impl::Rtrb, 20_000, 1, (None, None), far(), &log)
            .unwrap()
            .unwrap();
        let (team, errors) = log.counted.finish();
        assert!(errors.is_empty(), "{errors:?}");
        let team = team.expect("producer and consumer added themselves");
        assert_eq!(team.threads.len(), 2);
        assert!(team.wall_ns > 0);
        assert!(team.threads.iter().all(|t| !t.pinned));
        if team.status.software == crate::counters::Availability::Counted {
            for t in &team.threads {
                let r = t.reading.expect("a software reading");
                assert!(r.task_clock_ns.is_some_and(|ns| ns > 0), "{r:?}");
                assert!(r.enabled_ns > 0);
            }
        }
    }

    #[test]
    fn every_implementation_moves_every_event_in_order() {
        let w = PairLog::default();
        for impl_ in Impl::ALL {
            for batch in BATCHES {
                transfer_of::<u64>(impl_, 5000, batch, (None, None), far(), &w)
                    .unwrap()
                    .unwrap_or_else(|e| panic!("{impl_:?} ×{batch}: {e:?}"));
                transfer_of::<[u64; 8]>(impl_, 3001, batch, (None, None), far(), &w)
                    .unwrap()
                    .unwrap_or_else(|e| panic!("{impl_:?} ×{batch}: {e:?}"));
            }
            let t = roundtrip_of::<u64>(impl_, 50, (None, None), far(), &w)
                .unwrap()
                .unwrap();
            assert_eq!(t.len(), 50);
        }
    }

    /// A channel that drops every 1000th event.
    struct Lossy(rtrb::Producer<u64>, u64);
    impl Tx<u64> for Lossy {
        fn send(&mut self, src: &[u64]) -> usize {
            let mut n = 0;
            for &e in src {
                if !self.send_one(e) {
                    break;
                }
                n += 1;
            }
            n
        }
        fn send_one(&mut self, e: u64) -> bool {
            self.1 += 1;
            if self.1 % 1000 == 0 {
                return true;
            }
            self.0.push(e).is_ok()
        }
    }

    #[test]
    fn a_broken_channel_fails_instead_of_measuring() {
        let w = PairLog::default();
        let (tx, rx) = rtrb::RingBuffer::new(64);
        let short = Instant::now() + Duration::from_millis(300);
        let r = transfer(Lossy(tx, 0), rx, 5000, 1, (None, None), short, &w);
        // The consumer sees a gap (out of order) or waits for the missing events.
        assert!(r.is_err(), "{r:?}");
    }

    fn plan_ctx(spec: &str) -> PlanCtx {
        PlanCtx {
            topo: crate::topology::from_synthetic(spec).unwrap(),
            clock: Clock::from_info(crate::model::ClockInfo {
                ticks_hz: 1e9,
                ..Default::default()
            }),
            profile: crate::model::Profile::Quick,
            overrides: super::super::Overrides::default(),
            budget_s: 10.0,
        }
    }

    #[test]
    fn placements_follow_the_machine() {
        let names = |spec: &str| {
            let (p, skipped) = placements(&plan_ctx(spec));
            (p.into_iter().map(|p| p.name).collect::<Vec<_>>(), skipped)
        };
        let (p, skipped) = names("core:2 pu:2");
        assert_eq!(p, ["same-core", "other-core"]);
        assert!(skipped.is_empty());
        let (p, skipped) = names("core:2 pu:1");
        assert_eq!(p, ["other-core"]);
        assert!(skipped[0].starts_with("same-core: skipped: no SMT"));
        let (p, skipped) = names("core:1 pu:1");
        assert_eq!(p, ["same-cpu"]);
        assert_eq!(skipped.len(), 2);
        // Every planned case names its placement; one CPU still gets every series.
        let plan = ChannelProbe.plan(&plan_ctx("core:1 pu:1")).unwrap();
        assert_eq!(plan.cases.len(), 2 * Impl::ALL.len() + Impl::ALL.len());
        assert!(plan.cases.iter().all(|c| c.label.ends_with("same-cpu")));
        // One CPU has no round trip to watch; a pair's every case watches its own.
        assert!(plan.cases.iter().all(|c| c.steady_pair.is_none()));
        let plan = ChannelProbe.plan(&plan_ctx("core:2 pu:2")).unwrap();
        for c in &plan.cases {
            let want = if c.label.ends_with("same-core") {
                (0, 1)
            } else {
                (0, 2)
            };
            assert_eq!(c.steady_pair, Some(want), "{}", c.label);
        }
    }

    #[test]
    fn both_threads_on_one_cpu_still_finish() {
        // The harness yields, so a producer and a consumer time-sliced on one CPU
        // make progress with every implementation.
        let before = crate::affinity::allowed_current().unwrap();
        let cpu = before[0];
        let w = PairLog::default();
        for impl_ in Impl::ALL {
            transfer_of::<u64>(impl_, 20_000, 16, (Some(cpu), Some(cpu)), far(), &w)
                .unwrap()
                .unwrap_or_else(|e| panic!("{impl_:?}: {e:?}"));
            let t = roundtrip_of::<u64>(impl_, 20, (Some(cpu), Some(cpu)), far(), &w)
                .unwrap()
                .unwrap();
            assert_eq!(t.len(), 20);
        }
        assert!(w.warnings.into_inner().unwrap().is_empty());
        // Pinned threads say so in their counts.
        let (team, _) = w.counted.finish();
        assert!(team.unwrap().threads.iter().all(|t| t.pinned));
        // Only the probe's own threads were pinned, never the caller.
        assert_eq!(crate::affinity::allowed_current().unwrap(), before);
    }

    /// The harness looks at the stop flag (and yields) only after
    /// `YIELD_EVERY` failed calls in a row: a call that moves an event starts
    /// the count again.
    #[test]
    fn the_harness_yields_only_after_a_streak_of_failures() {
        let stop = AtomicBool::new(true);
        let mut idle = Idle::new(&stop, far());
        for _ in 0..3 {
            for _ in 1..YIELD_EVERY {
                assert!(idle.wait(), "gave up before a whole streak");
            }
            idle.progressed();
        }
        for _ in 1..YIELD_EVERY {
            assert!(idle.wait());
        }
        assert!(!idle.wait(), "a whole streak looks at the stop flag");
    }

    #[test]
    fn events_know_when_they_are_damaged() {
        let e = <[u64; 8] as Event>::new(7);
        assert!(e.intact() && e.seq() == 7);
        let mut d = e;
        d[7] = 0;
        assert!(!d.intact());
    }
}
