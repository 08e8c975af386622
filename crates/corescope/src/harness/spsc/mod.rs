//! The SPSC transfer harness: one producer thread and one consumer thread moving
//! numbered events through a channel, the same code for every implementation
//! (`adapters` makes each crate's channel look alike: [`Tx`] and [`Rx`]).
//!
//! Calls never block: a failed call (full or empty) spins, and after
//! [`YIELD_EVERY`] failed calls in a row yields (so a partner on the same CPU, or
//! preempted by the OS, gets to run) and looks at the stop flag and the deadline.
//! The round trip polls without a spin hint and yields after
//! [`ROUNDTRIP_YIELD_EVERY`] failed polls.
//! Every event carries its sequence number (and, at 64 bytes, a filler derived
//! from it): the consumer checks count, order and content, so a broken channel
//! fails the run instead of producing a number.
//!
//! - [`transfer`]: `events` events, one at a time or in batches, timed from the
//!   start gate to the consumer's last receive;
//! - [`roundtrip`]: a ping-pong over two channels (one each way), one sample per
//!   round trip, in ticks;
//! - [`gated`]: a caller's own producer and consumer loops, pinned, counted and
//!   let go from one start gate (the tuner's blocking runs).
//!
//! Each thread pins itself, counts its own events around its measured part
//! ([`SideCounter`]) and leaves its pinning warnings in a [`PairLog`].

pub mod adapters;

use crate::counters::{CountedRun, TeamCount, ThreadCounter};
use crate::model::Warning;
use crate::timestamp::{now_ns, ticks};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// The producer's and the consumer's CPU (`None`: where the OS puts it); the same
/// pair as `placement::pairs::PairCpus`.
pub type Cpus = (Option<u32>, Option<u32>);

/// Failed calls in a row after which the harness yields (and looks at the stop
/// flag and the deadline). In a row, not in all: counted over the whole run,
/// a wait of a few polls ended in a `yield` every 64 polls, about every third
/// round trip of a ping-pong, more often for an implementation whose empty
/// poll is quicker, and a system call's worth of time went into those round
/// trips (docs/channel.md, "The harness yields only after a long wait").
pub const YIELD_EVERY: u32 = 64;
/// Failed polls in a row after which [`roundtrip`]'s threads yield (and look at
/// the stop flag and the deadline). Its polls carry no spin hint and take a few
/// ns each, so a streak this long is some µs: far longer than any round trip
/// between two running threads, short enough that a partner sharing the CPU
/// runs soon.
pub const ROUNDTRIP_YIELD_EVERY: u32 = 1024;
/// Round trips dropped before sampling (warm-up).
pub const ROUNDTRIP_WARMUP: usize = 32;
/// Round trips per timed block of [`roundtrip`]: the clock is read once per
/// block, never per trip. A clock read on each side of every trip changed
/// what it timed, by crate and in both directions: on a 2-vCPU KVM guest
/// (Intel family 6 model 207) the per-trip median put rtrb 15 % and hspc 20 %
/// below a plain ping-pong without a clock in its loop, and crossbeam and std
/// 15–18 % above it; the same loop timed a block of 64 at a time agreed with
/// the plain one within 5 % for every crate (docs/channel.md, "The round trip
/// timed by the block").
pub const ROUNDTRIP_BLOCK: usize = 64;

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
    /// Zero exactly when this is event `seq`, intact (`seq() == seq &&
    /// intact()`): a few XORs and ORs, without a branch, so a batch's check
    /// compiles to vector code and costs the consumer less than its copy.
    fn mismatch(&self, seq: u64) -> u64;
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
    #[inline(always)]
    fn mismatch(&self, seq: u64) -> u64 {
        *self ^ seq
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
    #[inline(always)]
    fn mismatch(&self, seq: u64) -> u64 {
        (self[0] ^ seq) | (self[7] ^ !seq)
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

/// Waits after a failed call: a spin hint (`HINT`), and after [`YIELD_EVERY`]
/// failures in a row (without the hint: [`ROUNDTRIP_YIELD_EVERY`]) a `yield`
/// and a look at the stop flag and the deadline. False = give up. The measured
/// loops call [`Idle::progressed`] after each call that moved an event.
///
/// [`roundtrip`] polls without the hint, as core-to-core-latency does: on a
/// Zen 5 guest a `pause` lasts about 20 ns, a fifth of a round trip between
/// two cores, and where the hint's rhythm fell against the line's arrival
/// moved ringbuf's round trip between 60 and 120 ns with the same source in
/// two builds; without it, 122–128 ns in both (docs/channel.md, "The round
/// trip polls without a spin hint").
struct Idle<'a, const HINT: bool = true> {
    /// Failed calls since the last one that moved an event.
    fails: u32,
    stop: &'a AtomicBool,
    deadline: Instant,
}

impl<'a, const HINT: bool> Idle<'a, HINT> {
    /// Failed calls in a row before a yield and a look at the stop flag.
    const STREAK: u32 = if HINT {
        YIELD_EVERY
    } else {
        ROUNDTRIP_YIELD_EVERY
    };

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
        if self.fails % Self::STREAK != 0 {
            if HINT {
                std::hint::spin_loop();
            }
            return true;
        }
        self.check()
    }

    /// Every [`Self::STREAK`] failures in a row: the stop flag, the deadline and a
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

/// One thread's counters over its measured part of a run, with the start stamp;
/// nothing when the run is not counted.
pub struct SideCounter(Option<(ThreadCounter, u64)>);

impl SideCounter {
    /// Counters opened for the calling thread (`pinned`: it is pinned to a CPU).
    pub fn open(pinned: bool) -> Self {
        Self(Some((ThreadCounter::open(pinned), 0)))
    }

    /// No counters: the run is not counted.
    pub fn off() -> Self {
        Self(None)
    }

    /// Zero and enable the counters just before the measured part.
    pub fn start(&mut self) {
        if let Some((c, t)) = &mut self.0 {
            c.start();
            *t = now_ns();
        }
    }

    /// Disable them just after it and add the thread to `run`.
    pub fn stop_into(self, run: &CountedRun) {
        if let Some((mut c, start_ns)) = self.0 {
            let end_ns = now_ns();
            c.stop();
            run.add(c.finish(), start_ns, end_ns);
        }
    }
}

/// What the threads of one run leave besides their result: pinning warnings and
/// each thread's event counts around its measured part (software counters always,
/// hardware where the PMU exists; `counters::CountedRun`).
#[derive(Default)]
pub struct PairLog {
    /// Pinning refusals and moves, once each.
    pub warnings: Mutex<Vec<Warning>>,
    /// The counted threads of the run.
    pub counted: CountedRun,
}

impl PairLog {
    /// Pin the calling thread to `cpu` (if any), warn if refused; open its counters.
    fn pin_and_count(&self, cpu: Option<u32>) -> SideCounter {
        let mut pinned = false;
        if let Some(c) = cpu {
            match crate::affinity::pin_checked(c) {
                Ok(()) => pinned = true,
                Err(w) => {
                    let w = super::team::pin_warning(w);
                    let mut ws = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
                    if !ws.contains(&w) {
                        ws.push(w);
                    }
                }
            }
        }
        SideCounter::open(pinned)
    }

    /// The run's counted team, and its warnings: the pinning ones, then the
    /// counters' errors (not yet made unique across the two).
    pub fn finish(self) -> (Option<TeamCount>, Vec<Warning>) {
        let (team, errors) = self.counted.finish();
        let mut warnings = self
            .warnings
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        warnings.extend(errors.into_iter().map(Warning::from));
        (team, warnings)
    }
}

/// Runs `body` in the calling thread pinned to `cpu`, its counters around it.
fn counted<R>(log: &PairLog, cpu: Option<u32>, body: impl FnOnce() -> R) -> R {
    let mut counter = log.pin_and_count(cpu);
    counter.start();
    let r = body();
    counter.stop_into(&log.counted);
    r
}

/// Runs `producer` on `cpus.0` and `consumer` on `cpus.1`, each in its own
/// thread, both let go together from a start gate: `side(cpu)` readies each
/// thread before the gate (pins it, opens its counters) and its counter runs
/// from the gate to the end of its part, into `counted`. What each returned, or
/// its panic. For callers whose two threads run their own loops (the tuner's
/// blocking channel runs); [`transfer`] and [`roundtrip`] run the harness's.
pub fn gated<A: Send, B: Send>(
    cpus: Cpus,
    side: impl Fn(Option<u32>) -> SideCounter + Sync,
    counted: &CountedRun,
    producer: impl FnOnce() -> A + Send,
    consumer: impl FnOnce() -> B + Send,
) -> (std::thread::Result<A>, std::thread::Result<B>) {
    let gate = Barrier::new(2);
    let part = |cpu: Option<u32>| {
        let mut counter = side(cpu);
        gate.wait();
        counter.start();
        counter
    };
    std::thread::scope(|s| {
        let p = s.spawn(|| {
            let counter = part(cpus.0);
            let r = producer();
            counter.stop_into(counted);
            r
        });
        let c = s.spawn(|| {
            let counter = part(cpus.1);
            let r = consumer();
            counter.stop_into(counted);
            r
        });
        let c = c.join();
        (p.join(), c)
    })
}

/// Moves `events` events from a producer on `cpus.0` to a consumer on `cpus.1`, in
/// batches of `batch` (1 = single calls); returns the time from the start gate to
/// the consumer's last receive. Checks count, order and content of every event.
pub fn transfer<E: Event, P: Tx<E>, C: Rx<E>>(
    tx: P,
    rx: C,
    events: u64,
    batch: usize,
    cpus: Cpus,
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
    if batch == 1 {
        send_each(&mut tx, events, &mut idle);
    } else {
        send_batches(&mut tx, events, &mut src, &mut idle);
    }
    tx.flush();
    // Dropping hands over hspc's last partial buffer.
    drop(tx);
    counter.stop_into(&log.counted);
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
    let start = Instant::now();
    let Checked { expected, bad } = if batch == 1 {
        receive_each(rx, events, &mut idle)
    } else {
        receive_batches(rx, events, &mut dst, &mut idle)
    };
    let elapsed = start.elapsed();
    counter.stop_into(&log.counted);
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
        let got = &dst[..n];
        // One OR over the batch; the events are counted one by one only when
        // it shows a bad one (the harness's own cost per event stays well below
        // the copy's; docs/channel.md, "The consumer's check in one OR").
        let mut diff = 0u64;
        for (i, e) in got.iter().enumerate() {
            diff |= e.mismatch(expected + i as u64);
        }
        if diff != 0 {
            bad += count_bad(got, expected);
        }
        expected += n as u64;
    }
    Checked { expected, bad }
}

/// Events of `got` that are not `first`, `first + 1`, … or not intact.
#[cold]
#[inline(never)]
fn count_bad<E: Event>(got: &[E], first: u64) -> u64 {
    (0u64..)
        .zip(got)
        .filter(|&(i, e)| e.seq() != first + i || !e.intact())
        .count() as u64
}

/// Ping-pong: a thread on `cpus.0` sends event k on `ping` and waits for it to come
/// back on `pong` from an echo thread on `cpus.1`; after [`ROUNDTRIP_WARMUP`]
/// unrecorded round trips, `blocks` blocks of [`ROUNDTRIP_BLOCK`] round trips,
/// each block's ticks (divide by [`ROUNDTRIP_BLOCK`] for one round trip).
pub fn roundtrip<E: Event, P1: Tx<E>, C1: Rx<E>, P2: Tx<E>, C2: Rx<E>>(
    ping: (P1, C1),
    pong: (P2, C2),
    blocks: usize,
    cpus: Cpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Vec<u64>, RunFail> {
    // Each thread owns the two ends it uses (`move`): ends left in this frame
    // and borrowed by both threads would sit side by side on one stack line, and
    // a crate whose ends keep their indices in the handle (rtrb, ringbuf) would
    // then pay a false-sharing miss on every call: 1.5× rtrb's round trip here
    // on a 2-vCPU KVM guest (`docs/channel.md`, the three harnesses).
    let (mut ping_tx, mut ping_rx) = ping;
    let (mut pong_tx, mut pong_rx) = pong;
    let total = (blocks * ROUNDTRIP_BLOCK + ROUNDTRIP_WARMUP) as u64;
    let stop = &AtomicBool::new(false);
    std::thread::scope(|s| {
        let echo = s.spawn(move || {
            counted(log, cpus.1, || -> Result<(), RunFail> {
                let mut idle = Idle::<false>::new(stop, deadline);
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
        let origin = s.spawn(move || {
            counted(log, cpus.0, || -> Result<Vec<u64>, RunFail> {
                let mut idle = Idle::<false>::new(stop, deadline);
                let mut out = Vec::with_capacity(blocks);
                let mut block_start = ticks();
                for k in 0..total {
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
                    idle.progressed();
                    if e.seq() != k || !e.intact() {
                        stop.store(true, Ordering::Relaxed);
                        return Err(RunFail::Corrupt(format!(
                            "round trip {k} returned event {}",
                            e.seq()
                        )));
                    }
                    // The clock starts after the warm-up and is read at the end
                    // of each block, outside the trips it times.
                    let done = k + 1;
                    if done == ROUNDTRIP_WARMUP as u64 {
                        block_start = ticks();
                    } else if done > ROUNDTRIP_WARMUP as u64
                        && (done - ROUNDTRIP_WARMUP as u64) % ROUNDTRIP_BLOCK as u64 == 0
                    {
                        let now = ticks();
                        out.push(now.wrapping_sub(block_start));
                        block_start = now;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(20)
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

    /// The harness looks at the stop flag (and yields) only after
    /// `YIELD_EVERY` failed calls in a row: a call that moves an event starts
    /// the count again.
    #[test]
    fn the_harness_yields_only_after_a_streak_of_failures() {
        let stop = AtomicBool::new(true);
        let mut idle = Idle::<true>::new(&stop, far());
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

    /// The round trip's waiter (no spin hint) keeps polling for a longer
    /// streak before it looks at the stop flag.
    #[test]
    fn the_round_trip_polls_a_longer_streak() {
        let stop = AtomicBool::new(true);
        let mut idle = Idle::<false>::new(&stop, far());
        for _ in 1..ROUNDTRIP_YIELD_EVERY {
            assert!(idle.wait(), "gave up before a whole streak");
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

    /// `mismatch` is zero exactly when the per-event check passes, and
    /// `count_bad` counts what the per-event check counts.
    #[test]
    fn the_batch_check_agrees_with_the_per_event_one() {
        fn check<E: Event>(got: &[E], first: u64) {
            let slow = (0u64..)
                .zip(got)
                .filter(|&(i, e)| e.seq() != first + i || !e.intact())
                .count() as u64;
            let diff = (0u64..)
                .zip(got)
                .fold(0, |d, (i, e)| d | e.mismatch(first + i));
            assert_eq!(diff == 0, slow == 0, "first {first}");
            assert_eq!(count_bad(got, first), slow);
        }
        let good: Vec<u64> = (5..21).collect();
        check(&good, 5);
        let mut gap = good.clone();
        gap[3] = 99;
        check(&gap, 5);
        check(&good, 4);
        let big: Vec<[u64; 8]> = (5..21).map(<[u64; 8] as Event>::new).collect();
        check(&big, 5);
        let mut torn = big.clone();
        torn[7][7] = 0;
        check(&torn, 5);
        let mut moved = big.clone();
        moved[2][0] = 1;
        check(&moved, 5);
    }
}
