//! Measuring `spin`: the active thread's benchmarks alone and with the spinners in
//! alternating order (the phases the spinners wait between), and the hand-off
//! latency from a release to the spinner's return; samples out, no analysis.

use super::bench::{Work, BENCHES};
use crate::clock::{ticks, Clock};
use crate::harness::pair;
use crate::kernels::spin_loops::{ChaseBuffer, LockWord, SpinKind, Spinner, Woken};
use crate::probes::{ProbeError, RunCtx};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// How long the active thread waits for a new spinner to start spinning, in µs.
pub const SPINNER_START_US: f64 = 500.0;

/// Ticks (at most 5 s) the active thread waits for the spinners before giving up.
const SPINNER_WAIT_S: f64 = 5.0;

/// Per benchmark, the times with the spinner(s) and alone, one pair per repetition.
pub(super) type Paired = Vec<(Vec<f64>, Vec<f64>)>;

/// Coordination of the slowdown measurement. Phase `p` is one benchmark run with the
/// spinners spinning on `locks[p]`; between phases the spinners block on a condition
/// variable, off the CPU, so the alone run of the same benchmark really runs alone.
pub(super) struct Phases {
    locks: Vec<LockWord>,
    /// Phases released to the spinners (`usize::MAX`: stop).
    go: Mutex<usize>,
    cv: Condvar,
    /// Spinner-phases begun and ended (every spinner counts once per phase).
    started: AtomicU64,
    finished: AtomicU64,
    spinners: u64,
    /// Spin time and lock reads of the timed spinner, over all phases.
    pub(super) spin_ticks: AtomicU64,
    pub(super) reads: AtomicU64,
}

impl Phases {
    pub(super) fn new(phases: usize, spinners: usize) -> Self {
        Self {
            locks: (0..phases).map(|_| LockWord::new()).collect(),
            go: Mutex::new(0),
            cv: Condvar::new(),
            started: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            spinners: spinners as u64,
            spin_ticks: AtomicU64::new(0),
            reads: AtomicU64::new(0),
        }
    }

    /// A spinner's life: for each phase, block until released, spin until stopped.
    pub(super) fn spinner(&self, timed: bool, make: impl Fn() -> Spinner) {
        let mut s = make();
        for p in 0..self.locks.len() {
            {
                let mut g = self.go.lock().unwrap_or_else(|e| e.into_inner());
                while *g <= p {
                    g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                if *g == usize::MAX {
                    return;
                }
            }
            self.started.fetch_add(1, Ordering::AcqRel);
            let t0 = ticks();
            let (_, rep) = s.wait(&self.locks[p]);
            if timed {
                self.spin_ticks
                    .fetch_add(ticks().wrapping_sub(t0), Ordering::AcqRel);
                self.reads.fetch_add(rep.reads, Ordering::AcqRel);
            }
            self.finished.fetch_add(1, Ordering::AcqRel);
        }
    }

    fn set_go(&self, v: usize) {
        *self.go.lock().unwrap_or_else(|e| e.into_inner()) = v;
        self.cv.notify_all();
    }

    /// Stop every spinner: the current phase's and every later one.
    fn abort(&self) {
        for l in &self.locks {
            l.stop();
        }
        self.set_go(usize::MAX);
    }

    /// Wait until `counter` reaches the count of phase `p` done by every spinner.
    fn wait_for(&self, clock: &Clock, counter: &AtomicU64, p: usize) -> bool {
        let target = self.spinners * (p as u64 + 1);
        pair::wait_until(clock.ns_to_ticks(SPINNER_WAIT_S * 1e9) as u64, || {
            counter.load(Ordering::Acquire) >= target
        })
    }

    /// Benchmark `b` once with the spinners of phase `p` spinning; its time in ticks.
    fn with_spinners(
        &self,
        work: &mut Work,
        b: &str,
        p: usize,
        clock: &Clock,
    ) -> Option<(u64, u64)> {
        self.set_go(p + 1);
        if !self.wait_for(clock, &self.started, p) {
            return None;
        }
        let start_ticks = clock.ns_to_ticks(SPINNER_START_US * 1e3) as u64;
        let t = ticks();
        while ticks().wrapping_sub(t) < start_ticks {
            std::hint::spin_loop();
        }
        let t0 = ticks();
        let sum = black_box(work.run(b));
        let dt = ticks().wrapping_sub(t0);
        self.locks[p].stop();
        self.wait_for(clock, &self.finished, p).then_some((dt, sum))
    }

    /// The active thread: every benchmark alone and with the spinners, in alternating
    /// order, `reps` times (fewer if the deadline comes). `None` if a spinner did not
    /// start or stop, or a deterministic benchmark's checksum changed.
    pub(super) fn active(
        &self,
        work: &mut Work,
        clock: &Clock,
        reps: usize,
        deadline: std::time::Instant,
    ) -> Option<Paired> {
        let out = self.measure(work, clock, reps, deadline);
        self.abort();
        out
    }

    fn measure(
        &self,
        work: &mut Work,
        clock: &Clock,
        reps: usize,
        deadline: std::time::Instant,
    ) -> Option<Paired> {
        let n = BENCHES.len();
        let mut out: Paired = vec![(Vec::new(), Vec::new()); n];
        let mut sums: Vec<Option<u64>> = vec![None; n];
        for rep in 0..reps {
            for k in 0..n {
                let (i, p) = ((k + rep) % n, rep * n + k);
                let b = BENCHES[i];
                let alone = |work: &mut Work| {
                    let t0 = ticks();
                    let sum = black_box(work.run(b));
                    (ticks().wrapping_sub(t0), sum)
                };
                let ((w, ws), (a, as_)) = if spinner_first(rep, i) {
                    let w = self.with_spinners(work, b, p, clock)?;
                    (w, alone(work))
                } else {
                    let a = alone(work);
                    (self.with_spinners(work, b, p, clock)?, a)
                };
                // Deterministic benchmarks give the same checksum every time.
                if b != "hash" {
                    let expect = *sums[i].get_or_insert(ws);
                    if ws != expect || as_ != expect {
                        return None;
                    }
                }
                out[i].0.push(w as f64);
                out[i].1.push(a as f64);
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
        }
        Some(out)
    }
}

/// Whether benchmark `bench` runs with the spinner first in repetition `rep`: the
/// order flips from each repetition to the next for every benchmark, so over any
/// number of repetitions each benchmark runs with-first and alone-first equally
/// often (±1). (Flipping on the position in the rotation instead, `(rep + k) % 2`,
/// flipped a benchmark's order only when the rotation wrapped: with 9 benchmarks,
/// `add` ran with-first in 1 or 2 of 11 repetitions.)
pub fn spinner_first(rep: usize, bench: usize) -> bool {
    (rep + bench) % 2 == 0
}

pub(super) fn spinner_for(kind: SpinKind, chase_bytes: usize) -> Spinner {
    if kind.needs_chase_buffer() {
        Spinner::with_chase(kind, ChaseBuffer::new(chase_bytes, 0x5EED))
    } else {
        Spinner::new(kind)
    }
}

/// Median of ticks.
fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2] as f64
}

/// Phase 2: the hand-off latency, release → the spinner returns; the median in ns.
/// `cpus`: the active thread's and the spinner's; `chase_bytes`: the cache-missing
/// loop's buffer.
pub(super) fn handoff_phase(
    ctx: &mut RunCtx,
    (cpus, handoffs, chase_bytes): ([Option<u32>; 2], usize, usize),
    kind: SpinKind,
    clock: &crate::clock::Clock,
) -> Result<f64, ProbeError> {
    let start_ticks = clock.ns_to_ticks(SPINNER_START_US * 1e3) as u64;
    let woke = AtomicU64::new(0);
    let armed = AtomicU64::new(0);
    let deadline = ctx.deadline;
    let lock2 = LockWord::new();
    let hand = ctx.team(
        &cpus,
        1,
        |_| (),
        |me, _| -> Vec<u64> {
            let mut lat = Vec::new();
            if me == 1 {
                let mut s = spinner_for(kind, chase_bytes);
                for k in 1..=handoffs as u64 {
                    if !pair::wait_until(clock.ns_to_ticks(5e9) as u64, || {
                        armed.load(Ordering::Acquire) >= k
                    }) {
                        return lat;
                    }
                    let (w, _) = s.wait(&lock2);
                    woke.store(ticks().max(1), Ordering::Release);
                    if w == Woken::Stopped {
                        return lat;
                    }
                }
                return lat;
            }
            for k in 1..=handoffs as u64 {
                lock2.lock();
                woke.store(0, Ordering::Release);
                armed.store(k, Ordering::Release);
                let t = ticks();
                while ticks().wrapping_sub(t) < start_ticks / 10 {
                    std::thread::yield_now();
                }
                let t0 = ticks();
                lock2.release();
                if !pair::wait_until(clock.ns_to_ticks(5e9) as u64, || {
                    woke.load(Ordering::Acquire) != 0
                }) {
                    break;
                }
                lat.push(woke.load(Ordering::Acquire).wrapping_sub(t0));
                if std::time::Instant::now() >= deadline {
                    break;
                }
            }
            armed.store(u64::MAX, Ordering::Release);
            lock2.stop();
            lat
        },
    )?;
    let mut lat = hand
        .results
        .first()
        .and_then(|r| r.first())
        .cloned()
        .unwrap_or_default();
    Ok(clock.ticks_to_ns(median(&mut lat) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_benchmark_runs_with_first_and_alone_first_equally_often() {
        for reps in 1..=40 {
            for bench in 0..BENCHES.len() {
                let with_first = (0..reps).filter(|&r| spinner_first(r, bench)).count();
                let alone_first = reps - with_first;
                assert!(
                    with_first.abs_diff(alone_first) <= 1,
                    "bench {bench}, {reps} reps: {with_first} with-first, {alone_first} alone-first"
                );
            }
        }
    }

    #[test]
    fn every_spinner_sees_the_release_and_stops_when_asked() {
        for kind in SpinKind::ALL {
            for stop in [false, true] {
                let lock = LockWord::new();
                let mut s = spinner_for(kind, 1 << 16);
                let (w, r) = std::thread::scope(|sc| {
                    let h = sc.spawn(|| s.wait(&lock));
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    if stop {
                        lock.stop();
                    } else {
                        lock.release();
                    }
                    h.join().unwrap()
                });
                assert_eq!(
                    w,
                    if stop {
                        Woken::Stopped
                    } else {
                        Woken::Released
                    },
                    "{kind}"
                );
                assert!(r.reads >= 1);
            }
        }
    }
}
