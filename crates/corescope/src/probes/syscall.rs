//! `syscall`: what it costs to ask the kernel for nothing much — four calls, each as a
//! distribution of per-call times:
//! - `getpid` through `syscall(SYS_getpid)`, a real kernel entry and exit (glibc may
//!   cache `getpid()`, the raw syscall it cannot);
//! - `clock_gettime(CLOCK_MONOTONIC)`, which glibc serves from the vDSO without entering
//!   the kernel (on a clock source the vDSO cannot read it falls back to a syscall, and
//!   then costs what `getpid` does);
//! - a futex wake (`FUTEX_WAKE_PRIVATE`) on a word nobody waits on: the fast path of
//!   every unlock that found the lock contended, a syscall plus a hash-bucket lookup;
//! - `sched_yield` on a CPU where nothing else is runnable: a syscall plus a pass
//!   through the scheduler (a long tail means something else was runnable there).
//!
//! Cross-checks: lmbench `lat_syscall null` (a loop of `getppid()`) and
//! `perf bench syscall basic` (a loop of `syscall(__NR_getppid)`) time the same kind of
//! empty kernel round trip as the `getpid` figure here; they report a mean, this probe
//! a median with its interval and the tails.
//!
//! How it measures: one case, one worker pinned to one CPU (the first of the compact
//! order). A sample is one batch of [`BASE_CALLS_PER_BATCH`] (or more, see
//! [`calls_per_batch`]) back-to-back calls timed with the calibrated counter
//! ([`crate::clock::ticks`]); the per-call time is (batch time − one counter read) ÷ calls.
//! The four calls are interleaved batch by batch, in an order rotated by one every
//! rotation ([`rotation`]), so drift in the machine (frequency, a noisy neighbour)
//! hits all four alike. The rotations run after [`WARMUP_ROTATIONS`] untimed ones,
//! until the profile's batch count or time cap or the probe's budget is reached.
//! The four are not compared with each other (they do different things), so they are
//! not [`Case::compared`] variants: each gets a typed [`Finding::Value`] with the
//! median's 95 % interval.

use super::{placement_config, Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::{clock_ns, ticks};
use crate::model::{Distribution, Finding, Measurement, ProbeResult};
use crate::placement::Strategy;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

/// Calls per batch when the counter is fine enough (see [`calls_per_batch`]).
pub const BASE_CALLS_PER_BATCH: u32 = 64;
/// A batch lasts at least this many counter steps, so the counter's step costs at
/// most 1 % of a batch's time.
pub const MIN_STEPS_PER_BATCH: f64 = 100.0;
/// A lower bound on any of the four calls, in ns (a vDSO `clock_gettime` on a fast
/// core takes about 15–25 ns), used to size batches against the counter's step.
pub const CHEAPEST_CALL_NS: f64 = 10.0;
/// Most calls per batch, whatever the counter.
pub const MAX_CALLS_PER_BATCH: u32 = 100_000;
/// Untimed rotations before the first timed one (caches, branch predictors, the
/// futex hash bucket, the frequency ramp-up).
pub const WARMUP_ROTATIONS: usize = 50;

/// The probe.
pub struct Syscall;

/// One of the four calls.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// `syscall(SYS_getpid)`.
    Getpid,
    /// `clock_gettime(CLOCK_MONOTONIC)` through the vDSO.
    ClockGettime,
    /// `futex(FUTEX_WAKE_PRIVATE, 1)` with no waiter.
    FutexWake,
    /// `sched_yield()`.
    SchedYield,
    /// `syscall(SYS_getppid)`: not one of the probe's four; the crosscheck times it
    /// with this probe's loop to match `perf bench syscall basic`, which calls it.
    Getppid,
}

impl Call {
    /// All four, in the order of the first rotation.
    pub const ALL: [Call; 4] = [
        Call::Getpid,
        Call::ClockGettime,
        Call::FutexWake,
        Call::SchedYield,
    ];

    /// Name of its distribution.
    pub fn name(self) -> &'static str {
        match self {
            Call::Getpid => "getpid",
            Call::ClockGettime => "clock_gettime",
            Call::FutexWake => "futex_wake",
            Call::SchedYield => "sched_yield",
            Call::Getppid => "getppid",
        }
    }

    /// What its finding is about.
    pub fn what(self) -> &'static str {
        match self {
            Call::Getpid => "getpid (an empty syscall: kernel entry and exit)",
            Call::ClockGettime => "clock_gettime(CLOCK_MONOTONIC) through the vDSO",
            Call::FutexWake => "futex wake with no waiter",
            Call::SchedYield => "sched_yield on a CPU of its own (one pinned thread)",
            Call::Getppid => "getppid (an empty syscall that reads the parent under RCU)",
        }
    }

    /// Make the call once; the return value is for `black_box` and for [`check`].
    #[inline(always)]
    fn invoke(self, word: &AtomicU32) -> i64 {
        match self {
            // SAFETY: SYS_getpid takes no arguments and touches no memory of ours.
            Call::Getpid => unsafe { libc::syscall(libc::SYS_getpid) },
            // 0 (an error) is caught by `check` before anything is timed.
            Call::ClockGettime => clock_ns(libc::CLOCK_MONOTONIC) as i64,
            // SAFETY: FUTEX_WAKE only hashes the address of `word`, a live, aligned u32
            // that outlives the call; it reads no other argument than the count (1);
            // the timeout, second address and value are ignored for FUTEX_WAKE.
            Call::FutexWake => unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    word.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    1,
                    std::ptr::null::<libc::timespec>(),
                    std::ptr::null::<u32>(),
                    0,
                )
            },
            // SAFETY: sched_yield takes no arguments and touches no memory of ours.
            Call::SchedYield => i64::from(unsafe { libc::sched_yield() }),
            // SAFETY: SYS_getppid takes no arguments and touches no memory of ours.
            Call::Getppid => unsafe { libc::syscall(libc::SYS_getppid) },
        }
    }
}

/// Make each call once and check that the kernel answered as expected (a seccomp
/// filter may refuse one with ENOSYS or EPERM).
pub fn check(word: &AtomicU32) -> Result<(), ProbeError> {
    for call in Call::ALL {
        let rc = call.invoke(word);
        let ok = match call {
            Call::Getpid => rc > 0,
            // The parent may be pid 0 only outside a pid namespace's init.
            Call::Getppid => rc >= 0,
            Call::ClockGettime => rc != 0,
            // Nobody waits on `word`: the wake must succeed and wake no one.
            Call::FutexWake => rc == 0,
            Call::SchedYield => rc == 0,
        };
        if !ok {
            return Err(ProbeError::Skipped(format!(
                "{} failed here (returned {rc}: {}); a seccomp filter may forbid it",
                call.name(),
                std::io::Error::last_os_error()
            )));
        }
    }
    Ok(())
}

/// The order of the four calls in rotation `round`: `Call::ALL` rotated left by
/// `round`, so over any 4 consecutive rotations each call takes every position once.
pub fn rotation(round: usize) -> [Call; 4] {
    let mut order = Call::ALL;
    order.rotate_left(round % Call::ALL.len());
    order
}

/// Calls per batch for a counter with step `step_ns`: [`BASE_CALLS_PER_BATCH`], or
/// more when even the cheapest call's batch would last fewer than
/// [`MIN_STEPS_PER_BATCH`] steps; at most [`MAX_CALLS_PER_BATCH`].
pub fn calls_per_batch(step_ns: f64) -> u32 {
    let step_ns = if step_ns.is_finite() {
        step_ns.max(0.0)
    } else {
        0.0
    };
    let needed = (MIN_STEPS_PER_BATCH * step_ns / CHEAPEST_CALL_NS).ceil();
    (needed.min(f64::from(MAX_CALLS_PER_BATCH)) as u32)
        .clamp(BASE_CALLS_PER_BATCH, MAX_CALLS_PER_BATCH)
}

/// Per-call time of one batch: (batch time − the one counter read inside it) ÷ calls,
/// never negative; NaN for an empty batch.
pub fn per_call_ns(batch_ns: f64, read_overhead_ns: f64, calls: u32) -> f64 {
    if calls == 0 {
        return f64::NAN;
    }
    (batch_ns - read_overhead_ns.max(0.0)).max(0.0) / f64::from(calls)
}

/// Counter ticks of one batch of `calls` calls.
#[inline(never)]
fn time_batch(call: Call, calls: u32, word: &AtomicU32) -> u64 {
    let t0 = ticks();
    for _ in 0..calls {
        black_box(call.invoke(black_box(word)));
    }
    ticks().wrapping_sub(t0)
}

/// Batch times in counter ticks, one vector per call in `Call::ALL` order: rotations
/// of the four until `max_batches` each or `until`.
fn measure_batches(
    calls: u32,
    max_batches: usize,
    until: Instant,
    word: &AtomicU32,
) -> [Vec<u64>; 4] {
    for round in 0..WARMUP_ROTATIONS {
        for call in rotation(round) {
            black_box(time_batch(call, calls, word));
        }
    }
    let mut ticks_of: [Vec<u64>; 4] = Default::default();
    for v in &mut ticks_of {
        v.reserve(max_batches);
    }
    for round in 0..max_batches {
        for call in rotation(round) {
            let t = time_batch(call, calls, word);
            if let Some(i) = Call::ALL.iter().position(|&c| c == call) {
                ticks_of[i].push(t);
            }
        }
        if Instant::now() >= until {
            break;
        }
    }
    ticks_of
}

/// The mean time per call of `call` on the calling thread, in ns: `batches` batches
/// of `calls` calls timed with this probe's loop, after one untimed batch, each less
/// one counter read (the definition `perf bench syscall` uses: a mean per call).
pub fn mean_call_ns(call: Call, calls: u32, batches: usize, clock: &crate::clock::Clock) -> f64 {
    let word = AtomicU32::new(0);
    black_box(time_batch(call, calls, &word));
    let per_call: Vec<f64> = (0..batches.max(1))
        .map(|_| {
            let t = time_batch(call, calls, &word);
            per_call_ns(clock.ticks_to_ns(t), clock.info.read_overhead_ns, calls)
        })
        .collect();
    per_call.iter().sum::<f64>() / per_call.len() as f64
}

/// The typed findings of the distributions: the median of each call with its interval.
pub fn findings(distributions: &[Distribution], calls_per_batch: Option<u64>) -> Vec<Finding> {
    Call::ALL
        .iter()
        .filter_map(|&call| {
            let d = distributions.iter().find(|d| d.name == call.name())?;
            (d.summary.count > 0).then(|| Finding::Value {
                what: call.what().into(),
                unit: d.unit.clone(),
                value: d.summary.median(),
                context: Some(match calls_per_batch {
                    Some(k) => format!(
                        "per call: median of {} batches of {k} calls, one pinned CPU",
                        d.summary.count
                    ),
                    None => format!("per call: median of {} batches", d.summary.count),
                }),
            })
        })
        .collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    cpu: Option<u32>,
    calls_per_batch: u32,
    max_batches: usize,
    max_duration_ns: u64,
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "syscall";

impl Probe for Syscall {
    type Params = CaseParams;
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Summary: each call's median.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Medians
    }
    fn run_cost_s(&self, _params: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.23, 0.9, 4.5]))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "cost of getpid, vDSO clock_gettime, futex wake (no waiter), sched_yield"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let (cpus, config) = placement_config(&ctx.topo, &Strategy::Compact, 1)?;
        let params = CaseParams {
            cpu: cpus.first().copied().flatten(),
            calls_per_batch: calls_per_batch(ctx.clock.info.step_ns),
            // Full: the seeds' 10^5 samples per distribution.
            max_batches: ctx.profile.pick(5_000, 20_000, 100_000),
            max_duration_ns: ctx
                .profile
                .pick(1_000_000_000, 5_000_000_000, 30_000_000_000),
        };
        Ok(
            Plan::new(vec![Case::new(format!("4 calls, {config}"), &params)])
                .param("cpu", &config)
                .param("calls_per_batch", params.calls_per_batch)
                .param("max_batches_per_call", params.max_batches)
                .param("max_duration_ns", params.max_duration_ns)
                .param("warmup_rotations", WARMUP_ROTATIONS)
                .param(
                    "calls",
                    Call::ALL.iter().map(|c| c.name()).collect::<Vec<_>>(),
                ),
        )
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        check(&AtomicU32::new(0))?;
        let until = (Instant::now() + Duration::from_nanos(c.max_duration_ns)).min(ctx.deadline);
        let out = ctx.team(
            &[c.cpu],
            1,
            |_| AtomicU32::new(0),
            |_, word| measure_batches(c.calls_per_batch, c.max_batches, until, word),
        )?;
        let ticks_of = out
            .results
            .into_iter()
            .next()
            .and_then(|reps| reps.into_iter().next())
            .ok_or_else(|| ProbeError::GaveUp("the budget ended before the first batch".into()))?;
        let clock = &ctx.plan.clock;
        let overhead_ns = clock.info.read_overhead_ns;
        let distributions = Call::ALL
            .iter()
            .zip(&ticks_of)
            .map(|(call, ticks)| {
                let ns: Vec<f64> = ticks
                    .iter()
                    .map(|&t| per_call_ns(clock.ticks_to_ns(t), overhead_ns, c.calls_per_batch))
                    .collect();
                crate::stats::distribution(call.name(), "ns", &ns)
            })
            .collect();
        Ok(Measurement {
            distributions,
            ..Measurement::default()
        })
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        let k = result
            .params
            .get("calls_per_batch")
            .and_then(|v| v.as_u64());
        Analysis::findings(findings(&result.distributions, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_takes_every_position_once_in_four_rotations() {
        for start in 0..8 {
            for pos in 0..4 {
                let mut seen: Vec<Call> = (start..start + 4).map(|r| rotation(r)[pos]).collect();
                seen.sort_by_key(|c| Call::ALL.iter().position(|a| a == c));
                assert_eq!(seen, Call::ALL.to_vec(), "start {start} position {pos}");
            }
            // Each rotation is a permutation of the four.
            let mut r = rotation(start).to_vec();
            r.sort_by_key(|c| Call::ALL.iter().position(|a| a == c));
            assert_eq!(r, Call::ALL.to_vec());
        }
        assert_eq!(rotation(0), Call::ALL);
        assert_eq!(rotation(1)[0], Call::ClockGettime);
    }

    #[test]
    fn per_call_time_is_the_batch_less_one_read_over_the_calls() {
        assert_eq!(per_call_ns(6_420.0, 20.0, 64), 100.0);
        assert_eq!(per_call_ns(6_400.0, 0.0, 64), 100.0);
        // Never negative, whatever the overhead estimate.
        assert_eq!(per_call_ns(10.0, 20.0, 64), 0.0);
        assert_eq!(per_call_ns(640.0, -5.0, 64), 10.0);
        assert!(per_call_ns(640.0, 0.0, 0).is_nan());
    }

    #[test]
    fn batches_grow_with_a_coarse_counter() {
        // A TSC-like step: the base batch is long enough.
        assert_eq!(calls_per_batch(0.3), BASE_CALLS_PER_BATCH);
        assert_eq!(calls_per_batch(f64::NAN), BASE_CALLS_PER_BATCH);
        // A 1 µs clock: 100 steps = 100 µs ≥ 10 000 calls of 10 ns.
        assert_eq!(calls_per_batch(1_000.0), 10_000);
        assert_eq!(calls_per_batch(1e12), MAX_CALLS_PER_BATCH);
        assert_eq!(calls_per_batch(f64::INFINITY), BASE_CALLS_PER_BATCH);
        for step in [0.0, 1.0, 7.0, 41.0, 1e3, 1e6] {
            let k = calls_per_batch(step);
            assert!((BASE_CALLS_PER_BATCH..=MAX_CALLS_PER_BATCH).contains(&k));
            if k < MAX_CALLS_PER_BATCH {
                assert!(f64::from(k) * CHEAPEST_CALL_NS >= MIN_STEPS_PER_BATCH * step);
            }
        }
    }

    #[test]
    fn the_four_calls_succeed_here() {
        let word = AtomicU32::new(0);
        check(&word).unwrap();
    }

    #[test]
    fn a_short_measurement_has_one_sample_per_batch_and_call() {
        // Structure only: 3 rotations (plus the warm-up), far from any timing claim.
        let word = AtomicU32::new(0);
        let far = Instant::now() + Duration::from_secs(60);
        let t = measure_batches(2, 3, far, &word);
        assert!(t.iter().all(|v| v.len() == 3), "{t:?}");
        // A past deadline still gives one full rotation: all four stay the same length.
        let t = measure_batches(2, 100, Instant::now(), &word);
        assert!(t.iter().all(|v| v.len() == 1), "{t:?}");
    }

    #[test]
    fn findings_carry_each_median_with_its_interval() {
        let mut ds = Vec::new();
        for (i, call) in Call::ALL.iter().enumerate() {
            let samples: Vec<f64> = (0..101).map(|j| (i * 100 + j) as f64).collect();
            ds.push(crate::stats::distribution(call.name(), "ns", &samples));
        }
        let f = findings(&ds, Some(64));
        assert_eq!(f.len(), 4);
        for (finding, call) in f.iter().zip(Call::ALL) {
            match finding {
                Finding::Value {
                    what, unit, value, ..
                } => {
                    assert_eq!(what, call.what());
                    assert_eq!(unit, "ns");
                    assert_eq!(value.n, 101);
                    assert!(
                        value.lo <= value.value && value.value <= value.hi,
                        "{value:?}"
                    );
                    assert!(value.lo < value.hi);
                }
                other => panic!("{other:?}"),
            }
        }
        // A call without samples gets no finding.
        ds[2] = crate::stats::distribution(Call::FutexWake.name(), "ns", &[]);
        assert_eq!(findings(&ds, None).len(), 3);
    }
}
