//! Every timer corescope uses, and their calibration.
//!
//! Two time bases:
//! - [`now_ns`]: `CLOCK_MONOTONIC` in ns, common to all threads; team start/end stamps.
//! - [`ticks`]: the cheapest cycle counter (TSC on x86_64, `cntvct_el0` on aarch64,
//!   `CLOCK_MONOTONIC` elsewhere), converted to ns with the calibrated [`Clock`].
//!   Short latencies (a mutex hand-off, a CAS round trip) are timed with it.
//!
//! The counter ticks at a fixed rate (the TSC's), not at the core's. The core
//! clock itself is measured by [`measure_core_clock`] (a dependent add chain of
//! known latency, one thread and every allowed CPU busy) and used by per-cycle
//! figures through [`Clock::per_cycle_hz`].

use crate::harness::team::{run_team, TeamError};
use crate::kernels::clock_chain::{self, ADDS_PER_ITER, ADD_LATENCY_CYCLES};
use crate::model::{ClockInfo, Profile};
use std::time::{Duration, Instant};

pub use crate::timestamp::{clock_ns, now_ns, thread_cpu_s, ticks, ticks_ordered, TICKS_SOURCE};

/// A calibrated cycle counter.
#[derive(Debug, Clone)]
pub struct Clock {
    /// Calibration results, as stored in the run file.
    pub info: ClockInfo,
    ns_per_tick: f64,
}

impl Clock {
    /// Calibrate [`ticks`] against `CLOCK_MONOTONIC` over about `span`.
    pub fn calibrate(span: Duration) -> Self {
        // Frequency: two (ticks, ns) pairs `span` apart; take the pair of each end
        // whose monotonic read was bracketed most tightly by the counter.
        let pair = || {
            let mut best = (u64::MAX, 0u64, 0u64);
            for _ in 0..16 {
                let t0 = ticks_ordered();
                let ns = now_ns();
                let t1 = ticks_ordered();
                if t1.wrapping_sub(t0) < best.0 {
                    best = (t1.wrapping_sub(t0), t0 / 2 + t1 / 2, ns);
                }
            }
            (best.1, best.2)
        };
        let (t_a, ns_a) = pair();
        let until = Instant::now() + span;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        let (t_b, ns_b) = pair();
        let ticks_hz = if TICKS_SOURCE == "clock_gettime" || ns_b <= ns_a || t_b <= t_a {
            1e9
        } else {
            (t_b - t_a) as f64 / ((ns_b - ns_a) as f64 * 1e-9)
        };
        let ns_per_tick = 1e9 / ticks_hz;
        let (ticks_overhead, ticks_step) = overhead_and_step(ticks);
        let (mono_overhead, mono_step) = overhead_and_step(now_ns);
        let info = ClockInfo {
            source: TICKS_SOURCE.into(),
            ticks_hz,
            read_overhead_ns: ticks_overhead * ns_per_tick,
            step_ns: ticks_step * ns_per_tick,
            monotonic_step_ns: mono_step,
            monotonic_overhead_ns: mono_overhead,
            invariant: crate::topology::host::invariant_tsc(),
            ..ClockInfo::default()
        };
        Self { info, ns_per_tick }
    }

    /// A clock with a known frequency (tests, re-rendering).
    pub fn from_info(info: ClockInfo) -> Self {
        let ns_per_tick = if info.ticks_hz > 0.0 {
            1e9 / info.ticks_hz
        } else {
            1.0
        };
        Self { info, ns_per_tick }
    }

    /// Convert counter ticks to ns.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }

    /// Convert ns to counter ticks ("cycles" at the counter's rate).
    #[inline]
    pub fn ns_to_ticks(&self, ns: f64) -> f64 {
        ns / self.ns_per_tick
    }

    /// The clock that per-cycle figures of a run with `threads` busy threads
    /// divide by: the measured one-thread core clock for one thread, the
    /// all-CPUs core clock for more, the counter's rate when neither was measured.
    pub fn per_cycle_hz(&self, threads: usize) -> PerCycleClock {
        let i = &self.info;
        match (threads <= 1, i.core_hz_one, i.core_hz_all) {
            (true, Some(hz), _) if hz > 0.0 => PerCycleClock {
                hz,
                source: PER_CYCLE_ONE,
            },
            (false, _, Some(hz)) if hz > 0.0 => PerCycleClock {
                hz,
                source: PER_CYCLE_ALL,
            },
            _ => PerCycleClock {
                hz: i.ticks_hz,
                source: PER_CYCLE_TICKS,
            },
        }
    }
}

/// [`PerCycleClock::source`] for one thread: `clock.core_hz_one`.
pub const PER_CYCLE_ONE: &str = "core_hz_one (measured core clock, one thread busy)";
/// [`PerCycleClock::source`] for several threads: `clock.core_hz_all`.
pub const PER_CYCLE_ALL: &str = "core_hz_all (measured core clock, every allowed CPU busy)";
/// [`PerCycleClock::source`] when the core clock was not measured.
pub const PER_CYCLE_TICKS: &str = "ticks_hz (counter rate; core clock not measured)";
/// How a probe names the per-cycle rule in its parameters.
pub const PER_CYCLE_RULE: &str =
    "per cycle = per second / clock.core_hz_one for 1 thread, / clock.core_hz_all for more (ticks_hz if not measured)";

/// How `compute` names its per-cycle rule: the clock read in each round.
pub const PER_CYCLE_ROUND_RULE: &str =
    "per cycle = per second / the core clock read in the same round on the \
     team's CPUs (add chain, clock::core_hz_now); clock.core_hz_one / core_hz_all if it cannot run";

/// A frequency to divide by, and which one it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerCycleClock {
    /// Hz.
    pub hz: f64,
    /// Which clock ([`PER_CYCLE_ONE`], [`PER_CYCLE_ALL`] or [`PER_CYCLE_TICKS`]).
    pub source: &'static str,
}

/// How long [`measure_core_clock`] runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreClockPlan {
    /// Chain run by every thread before the first timed repetition, so the
    /// governor and turbo settle.
    pub warmup: Duration,
    /// Length of one timed repetition.
    pub rep: Duration,
    /// Timed repetitions per thread.
    pub reps: usize,
}

impl CoreClockPlan {
    /// The profile's durations: quick ≈ 2 × (20 + 9 × 2) ms, default ≈ 2 ×
    /// (50 + 11 × 5) ms, full ≈ 2 × (100 + 15 × 10) ms. Short repetitions, so
    /// that some of them run between two preemptions on a busy machine.
    pub fn for_profile(p: Profile) -> Self {
        Self {
            warmup: Duration::from_millis(p.pick(20, 50, 100)),
            rep: Duration::from_millis(p.pick(2, 5, 10)),
            reps: p.pick(9, 11, 15),
        }
    }
}

/// Median and range of a few measured frequencies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HzSpread {
    /// Median, Hz.
    pub median_hz: f64,
    /// Smallest, Hz.
    pub min_hz: f64,
    /// Largest, Hz.
    pub max_hz: f64,
    /// Number of values.
    pub n: usize,
}

impl HzSpread {
    /// Spread of `values`; `None` when there is none.
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        let median_hz = if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        };
        Some(Self {
            median_hz,
            min_hz: v[0],
            max_hz: v[v.len() - 1],
            n: v.len(),
        })
    }
}

/// The measured core clock.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreClock {
    /// One pinned thread busy: every repetition's frequency.
    pub one_thread_hz: HzSpread,
    /// Every allowed CPU busy: every thread's frequency in every repetition.
    pub all_cpus_hz: HzSpread,
    /// CPUs busy in the all-CPUs measurement.
    pub all_cpus: usize,
    /// Repetitions left out because their thread was preempted (see
    /// [`PREEMPTED_CPU_SHARE`]); kept when every repetition of a run was.
    pub preempted_reps: usize,
    /// How it was measured ([`clock_chain::METHOD`]).
    pub method: &'static str,
}

impl CoreClock {
    /// Write the medians and ranges into the run file's clock section.
    pub fn record(&self, info: &mut ClockInfo) {
        info.core_hz_one = Some(self.one_thread_hz.median_hz);
        info.core_hz_one_range = Some([self.one_thread_hz.min_hz, self.one_thread_hz.max_hz]);
        info.core_hz_all = Some(self.all_cpus_hz.median_hz);
        info.core_hz_all_range = Some([self.all_cpus_hz.min_hz, self.all_cpus_hz.max_hz]);
        info.core_hz_all_cpus = Some(self.all_cpus);
        info.core_hz_reps = Some(self.one_thread_hz.n);
        info.core_hz_preempted_reps = Some(self.preempted_reps);
        info.core_hz_method = Some(self.method.into());
        info.core_hz_skipped = None;
    }
}

/// Why the core clock could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CoreClockError {
    /// No add-chain kernel for this architecture.
    #[error("no dependent-add chain for {0}")]
    Unsupported(&'static str),
    /// No CPU to run on.
    #[error("no allowed CPU")]
    NoCpu,
    /// The thread team failed.
    #[error("measuring the core clock on CPUs {cpus}: {source}")]
    Team {
        /// CPUs of the team.
        cpus: String,
        /// What failed.
        source: TeamError,
    },
    /// Every repetition gave no usable time (counter did not advance).
    #[error("the counter did not advance during the add chain")]
    NoSample,
}

/// Measure the effective core clock: [`clock_chain::add_chain`] timed with the
/// calibrated counter, once on one pinned thread (`cpus[0]`) and once on every CPU
/// of `cpus` at the same time (the turbo drop with more active cores).
pub fn measure_core_clock(
    clock: &Clock,
    cpus: &[u32],
    plan: CoreClockPlan,
) -> Result<CoreClock, CoreClockError> {
    if !clock_chain::SUPPORTED {
        return Err(CoreClockError::Unsupported(std::env::consts::ARCH));
    }
    let first = *cpus.first().ok_or(CoreClockError::NoCpu)?;
    let (iters, pilot_hz) = chain_iters(clock, plan.rep);
    let warm_iters = ((plan.warmup.as_secs_f64() * pilot_hz) / ADDS_PER_ITER as f64) as u64;
    let one = chain_team(clock, &[Some(first)], plan.reps, iters, warm_iters)?;
    let all_cpus: Vec<Option<u32>> = cpus.iter().map(|&c| Some(c)).collect();
    let all = chain_team(clock, &all_cpus, plan.reps, iters, warm_iters)?;
    let ((one, one_dropped), (all, all_dropped)) = (undisturbed(&one), undisturbed(&all));
    Ok(CoreClock {
        one_thread_hz: HzSpread::of(&one).ok_or(CoreClockError::NoSample)?,
        all_cpus_hz: HzSpread::of(&all).ok_or(CoreClockError::NoSample)?,
        all_cpus: cpus.len(),
        preempted_reps: one_dropped + all_dropped,
        method: clock_chain::METHOD,
    })
}

/// Length of one repetition of [`core_hz_now`]'s chain: long against the counter's
/// step (below 1 ns) and a thread's start, short against a compute round.
pub const ROUND_CLOCK_REP: std::time::Duration = std::time::Duration::from_micros(500);
/// Teams on more CPUs than this keep the clock read at the start of the run: a
/// second team of that size per round would cost as much as the work (40 µs per
/// thread created, 2,048 strands: 80 ms a round).
pub const ROUND_CLOCK_MAX_CPUS: usize = 64;
/// Repetitions of [`core_hz_now`]'s chain per CPU.
pub const ROUND_CLOCK_REPS: usize = 3;

/// The core clock now, with every CPU of `cpus` busy at once (as the team that
/// just ran kept them), in Hz: the median of the undisturbed repetitions of the add
/// chain on each. A probe that divides by the clock reads it in the same round as
/// its work, so a clock that moved between epochs or runs moves both. `None` when
/// the chain cannot run here or no CPU is given.
pub fn core_hz_now(clock: &Clock, cpus: &[u32]) -> Option<f64> {
    if !clock_chain::SUPPORTED || cpus.is_empty() {
        return None;
    }
    let (iters, _) = chain_iters(clock, ROUND_CLOCK_REP);
    let team: Vec<Option<u32>> = cpus.iter().map(|&c| Some(c)).collect();
    let runs = chain_team(clock, &team, ROUND_CLOCK_REPS, iters, 0).ok()?;
    let (hz, _) = undisturbed(&runs);
    let hz: Vec<f64> = hz.into_iter().filter(|h| h.is_finite()).collect();
    (!hz.is_empty()).then(|| crate::stats::median(&hz))
}

/// Iterations of the add chain for a repetition of about `rep`, from a short pilot
/// (the clock may not have ramped up yet, so repetitions come out at most as long
/// as planned, usually shorter), and the pilot's Hz.
fn chain_iters(clock: &Clock, rep: std::time::Duration) -> (u64, f64) {
    let pilot_iters = 2_000;
    let pilot_hz = (0..3)
        .map(|_| timed_chain_hz(clock, pilot_iters).0)
        .fold(0.0, f64::max)
        .max(1e8);
    let iters = ((rep.as_secs_f64() * pilot_hz) / (ADDS_PER_ITER * ADD_LATENCY_CYCLES) as f64)
        .max(1.0) as u64;
    (iters, pilot_hz)
}

/// A repetition counts as preempted when the thread ran for less than this share
/// of its wall time (its CPU time, `CLOCK_THREAD_CPUTIME_ID`, fell behind).
pub const PREEMPTED_CPU_SHARE: f64 = 0.95;

/// One timed run of the chain: Hz (NaN if the counter did not move) and whether
/// the thread was preempted during it.
fn timed_chain_hz(clock: &Clock, iters: u64) -> (f64, bool) {
    let cpu0 = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let t0 = ticks_ordered();
    std::hint::black_box(clock_chain::add_chain(iters, t0, 1));
    let t1 = ticks_ordered();
    let cpu_ns = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(cpu0) as f64;
    let ns = clock.ticks_to_ns(t1.wrapping_sub(t0));
    if ns <= 0.0 || t1 <= t0 {
        return (f64::NAN, false);
    }
    let hz = (iters * ADDS_PER_ITER * ADD_LATENCY_CYCLES) as f64 / (ns * 1e-9);
    (hz, cpu_ns < PREEMPTED_CPU_SHARE * ns)
}

/// Values of the repetitions that ran undisturbed, and how many were dropped; all
/// of them (none dropped) when every repetition was preempted.
fn undisturbed(runs: &[(f64, bool)]) -> (Vec<f64>, usize) {
    let clean: Vec<f64> = runs.iter().filter(|r| !r.1).map(|r| r.0).collect();
    if clean.is_empty() {
        (runs.iter().map(|r| r.0).collect(), 0)
    } else {
        (clean.clone(), runs.len() - clean.len())
    }
}

/// Every team worker warms up, then times `reps` chains; every (Hz, preempted).
fn chain_team(
    clock: &Clock,
    cpus: &[Option<u32>],
    reps: usize,
    iters: u64,
    warm_iters: u64,
) -> Result<Vec<(f64, bool)>, CoreClockError> {
    let out = run_team(
        cpus,
        reps,
        None,
        |_| {
            std::hint::black_box(clock_chain::add_chain(warm_iters, 0, 1));
        },
        |_, _| timed_chain_hz(clock, iters),
    )
    .map_err(|source| CoreClockError::Team {
        cpus: crate::topology::Topology::format_cpu_list(
            &cpus.iter().flatten().copied().collect::<Vec<_>>(),
        ),
        source,
    })?;
    Ok(out.results.into_iter().flatten().collect())
}

/// Mean cost of one read and the smallest non-zero step, in the reader's own units.
pub fn overhead_and_step(read: impl Fn() -> u64) -> (f64, f64) {
    const READS: u64 = 20_000;
    let mut best_mean = f64::MAX;
    for _ in 0..5 {
        let start = read();
        let mut last = start;
        for _ in 0..READS {
            last = std::hint::black_box(read());
        }
        best_mean = best_mean.min(last.wrapping_sub(start) as f64 / READS as f64);
    }
    let mut step = u64::MAX;
    let mut prev = read();
    for _ in 0..READS {
        let now = read();
        let d = now.wrapping_sub(prev);
        if d > 0 && d < step {
            step = d;
        }
        prev = now;
    }
    if step == u64::MAX {
        // The clock never moved during the loop: its step is at least the loop's span.
        step = (best_mean * READS as f64) as u64;
    }
    (best_mean, step as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_plausible() {
        let c = Clock::calibrate(Duration::from_millis(20));
        // A counter between 1 MHz and 100 GHz; reads cost something and less than 100 µs.
        assert!(
            c.info.ticks_hz > 1e6 && c.info.ticks_hz < 1e11,
            "{:?}",
            c.info
        );
        assert!(c.info.read_overhead_ns > 0.0 && c.info.read_overhead_ns < 1e5);
        assert!(c.info.step_ns > 0.0);
        let ns = c.ticks_to_ns(1_000_000);
        assert!((c.ns_to_ticks(ns) - 1_000_000.0).abs() < 1.0);
    }

    #[test]
    fn spread_is_median_min_max() {
        let s = HzSpread::of(&[3.0, 1.0, 2.0, f64::NAN]).unwrap();
        assert_eq!((s.median_hz, s.min_hz, s.max_hz, s.n), (2.0, 1.0, 3.0, 3));
        let s = HzSpread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median_hz, 2.5);
        assert!(HzSpread::of(&[]).is_none());
    }

    #[test]
    fn preempted_repetitions_are_left_out_unless_all_were() {
        let (v, dropped) = undisturbed(&[(3.0, false), (1.0, true), (2.9, false)]);
        assert_eq!((v, dropped), (vec![3.0, 2.9], 1));
        let (v, dropped) = undisturbed(&[(1.0, true), (2.0, true)]);
        assert_eq!((v, dropped), (vec![1.0, 2.0], 0));
    }

    #[test]
    fn per_cycle_clock_prefers_the_measured_core_clock() {
        let mut info = ClockInfo {
            ticks_hz: 2e9,
            ..ClockInfo::default()
        };
        let c = Clock::from_info(info.clone());
        assert_eq!(c.per_cycle_hz(1).hz, 2e9);
        assert_eq!(c.per_cycle_hz(4).source, PER_CYCLE_TICKS);
        info.core_hz_one = Some(3e9);
        info.core_hz_all = Some(2.5e9);
        let c = Clock::from_info(info);
        assert_eq!(c.per_cycle_hz(1).hz, 3e9);
        assert_eq!(c.per_cycle_hz(1).source, PER_CYCLE_ONE);
        assert_eq!(c.per_cycle_hz(2).hz, 2.5e9);
        assert_eq!(c.per_cycle_hz(2).source, PER_CYCLE_ALL);
    }

    /// Plausibility only (never a timing threshold): the measured clock is within
    /// a factor of 3 of what /proc/cpuinfo says, where it says something.
    #[test]
    fn measured_core_clock_is_plausible() {
        if !clock_chain::SUPPORTED {
            return;
        }
        let clock = Clock::calibrate(Duration::from_millis(10));
        let cpus = crate::affinity::allowed_current().unwrap();
        let plan = CoreClockPlan {
            warmup: Duration::from_millis(5),
            rep: Duration::from_millis(2),
            reps: 3,
        };
        let cc = measure_core_clock(&clock, &cpus, plan).unwrap();
        for s in [cc.one_thread_hz, cc.all_cpus_hz] {
            assert!(s.min_hz <= s.median_hz && s.median_hz <= s.max_hz, "{s:?}");
            assert!(s.median_hz > 1e7 && s.median_hz < 1e11, "{s:?}");
        }
        assert!((1..=3).contains(&cc.one_thread_hz.n));
        assert!(cc.all_cpus_hz.n >= 1 && cc.all_cpus_hz.n <= 3 * cpus.len());
        assert!(cc.preempted_reps <= 3 + 3 * cpus.len());
        let mut info = clock.info.clone();
        cc.record(&mut info);
        assert_eq!(info.core_hz_all_cpus, Some(cpus.len()));
        let mhz = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("cpu MHz"))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok())
        });
        if let Some(mhz) = mhz {
            let ratio = cc.one_thread_hz.median_hz / (mhz * 1e6);
            assert!(
                (1.0 / 3.0..3.0).contains(&ratio),
                "measured {cc:?} vs /proc/cpuinfo {mhz} MHz"
            );
        }
    }

    #[test]
    fn monotonic_advances() {
        let a = now_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(now_ns() > a);
    }
}
