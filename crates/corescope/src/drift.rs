//! The instrument checks the machine (seed 002 §4, reproducibility): a short
//! reference kernel, steal time and load at the start, between probes and at the
//! end; and the round trip of a cache line between the first two CPUs, before and
//! after each comparison group. On a VM the vCPUs move between host cores, and a
//! bare round trip between CPU 0 and CPU 1 jumps between distinct states (here about
//! 63, 326 and 480 ns within minutes); a group during which it changed is flagged.
//!
//! Measuring functions return numbers; [`noise_between`] and [`round_trip_moved`]
//! are pure and turn two checks into typed warnings.

use crate::affinity;
use crate::clock::now_ns;
use crate::model::{DriftCheck, Estimate, NoiseCause, Warning};
use crate::stats;
use crate::topology::host;
use std::sync::atomic::{AtomicU64, Ordering};

/// Repetitions of the reference kernel per check.
const REFERENCE_REPS: usize = 7;
/// Dependent integer operations per repetition of the reference kernel (≈ 2–5 ms).
const REFERENCE_PASSES: u64 = 4_000;
/// The reference kernel changing by more than this between two checks (with
/// intervals that do not overlap) makes the probe between them "noisy".
pub const REFERENCE_DRIFT: f64 = 0.10;
/// Steal time above this share of CPU time between two checks is noisy.
pub const STEAL_NOISY: f64 = 0.05;
/// A round trip changing by more than this factor means the CPUs moved.
pub const ROUND_TRIP_MOVED: f64 = 1.5;
/// Round trips per check, and the longest a check may take.
const ROUND_TRIPS: usize = 400;
const ROUND_TRIP_BUDGET_NS: u64 = 20_000_000;

/// The reference kernel: compute's dependent integer chain on one thread pinned to
/// `cpu` (or unpinned), timed `REFERENCE_REPS` times; ns per repetition.
pub fn reference_kernel(cpu: Option<u32>) -> Option<Estimate> {
    let inputs: [i64; crate::kernels::chains::INPUTS] = std::array::from_fn(|i| 2 * i as i64 + 3);
    let times = std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(c) = cpu {
                let _ = affinity::pin_checked(c);
            }
            (0..REFERENCE_REPS)
                .map(|k| {
                    let t0 = now_ns();
                    std::hint::black_box(crate::kernels::chains::int_kernel(
                        &inputs,
                        [3, 5, 7, 11],
                        REFERENCE_PASSES,
                        k as i64,
                    ));
                    now_ns().saturating_sub(t0) as f64
                })
                .collect::<Vec<f64>>()
        })
        .join()
        .ok()
    })?;
    Some(stats::estimate(&times))
}

/// Median round trip (ns) of a cache line between two threads pinned to `a` and
/// `b`: a ping-pong through one atomic word. `None` when a pin is refused or the
/// partner did not answer within the check's time limit.
pub fn round_trip(a: u32, b: u32) -> Option<f64> {
    let word = AtomicU64::new(0);
    let deadline = now_ns() + ROUND_TRIP_BUDGET_NS;
    std::thread::scope(|s| {
        let partner = s.spawn(|| {
            affinity::pin_checked(b).ok()?;
            for k in 0..ROUND_TRIPS as u64 {
                let ping = 2 * k + 1;
                while word.load(Ordering::Acquire) != ping {
                    if now_ns() > deadline {
                        return None;
                    }
                    std::hint::spin_loop();
                }
                word.store(ping + 1, Ordering::Release);
            }
            Some(())
        });
        // Both sides run on threads of their own: pinning the caller would leave the
        // main thread (and every unbound thread it creates later) on one CPU.
        let me = s
            .spawn(|| {
                affinity::pin_checked(a).ok()?;
                let mut trips = Vec::with_capacity(ROUND_TRIPS);
                for k in 0..ROUND_TRIPS as u64 {
                    let t0 = now_ns();
                    word.store(2 * k + 1, Ordering::Release);
                    while word.load(Ordering::Acquire) != 2 * k + 2 {
                        if now_ns() > deadline {
                            return None;
                        }
                        std::hint::spin_loop();
                    }
                    trips.push(now_ns().saturating_sub(t0) as f64);
                }
                Some(stats::median(&trips))
            })
            .join()
            .ok()
            .flatten();
        if me.is_none() {
            // Release the partner if it is still waiting: it gives up at the deadline.
            word.store(u64::MAX, Ordering::Release);
        }
        let ok = partner.join().ok().flatten();
        me.filter(|_| ok.is_some())
    })
}

/// The first two CPUs this process may use (the pair whose round trip is watched).
pub fn watched_pair(topo: &crate::topology::Topology) -> Option<(u32, u32)> {
    let mut cpus = topo.allowed_pus().map(|p| p.os_index);
    Some((cpus.next()?, cpus.next()?))
}

/// One check of the machine, labelled `at` (`start`, `after compute`, `end`).
pub fn check(at: &str, topo: &crate::topology::Topology, started_ns: u64) -> DriftCheck {
    let first = topo.allowed_pus().next().map(|p| p.os_index);
    DriftCheck {
        at: at.into(),
        t_s: now_ns().saturating_sub(started_ns) as f64 * 1e-9,
        reference_ns: reference_kernel(first),
        cpu_jiffies: host::cpu_jiffies(),
        loadavg_1m: host::loadavg_now().map(|l| l[0]),
        round_trip_ns: watched_pair(topo).and_then(|(a, b)| round_trip(a, b)),
    }
}

/// What changed between two checks (the probe that ran between them is flagged).
pub fn noise_between(before: &DriftCheck, after: &DriftCheck) -> Vec<Warning> {
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (before.reference_ns, after.reference_ns) {
        let change = b.value / a.value - 1.0;
        let separate = b.lo > a.hi || a.lo > b.hi;
        if change.abs() > REFERENCE_DRIFT && separate {
            out.push(Warning::Noisy {
                detail: format!(
                    "the reference kernel took {:+.0} % longer after than before",
                    change * 100.0
                ),
                cause: NoiseCause::Drift,
            });
        }
    }
    if let (Some((s0, t0)), Some((s1, t1))) = (before.cpu_jiffies, after.cpu_jiffies) {
        if t1 > t0 && s1 >= s0 {
            let steal = (s1 - s0) as f64 / (t1 - t0) as f64;
            if steal > STEAL_NOISY {
                out.push(Warning::Noisy {
                    detail: format!("the hypervisor stole {:.0} % of CPU time", steal * 100.0),
                    cause: NoiseCause::Steal,
                });
            }
        }
    }
    out.extend(round_trip_moved(
        before.round_trip_ns,
        after.round_trip_ns,
        "the run of this probe",
    ));
    out
}

/// A warning when the watched round trip changed by more than [`ROUND_TRIP_MOVED`].
pub fn round_trip_moved(before: Option<f64>, after: Option<f64>, during: &str) -> Option<Warning> {
    let (a, b) = (before?, after?);
    moved_within(&[a, b])?;
    Some(Warning::Noisy {
        detail: format!(
            "the round trip between the first two CPUs went from {a:.0} to {b:.0} ns during \
             {during} (on a VM: the vCPUs moved between host cores)"
        ),
        cause: NoiseCause::RoundTrip,
    })
}

/// Whether the round trips read between the runs of one round stayed the same: the
/// (lowest, highest) when they differ by more than [`ROUND_TRIP_MOVED`] (the CPUs
/// moved within the round, so its variants did not all run on the same hardware),
/// `None` when they stayed within it or fewer than two readings exist.
pub fn moved_within(trips_ns: &[f64]) -> Option<(f64, f64)> {
    let lo = trips_ns.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = trips_ns.iter().copied().fold(0.0, f64::max);
    (trips_ns.len() >= 2 && lo > 0.0 && hi / lo > ROUND_TRIP_MOVED).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(reference: f64, steal: u64, load: f64, rt: f64) -> DriftCheck {
        DriftCheck {
            at: "x".into(),
            t_s: 0.0,
            reference_ns: Some(Estimate {
                value: reference,
                lo: reference * 0.99,
                hi: reference * 1.01,
                n: 7,
            }),
            cpu_jiffies: Some((steal, 10_000)),
            loadavg_1m: Some(load),
            round_trip_ns: Some(rt),
        }
    }

    #[test]
    fn a_quiet_machine_gives_no_warning() {
        let a = check(1000.0, 0, 0.5, 60.0);
        let mut b = check(1030.0, 10, 0.7, 70.0);
        b.cpu_jiffies = Some((10, 20_000));
        assert!(noise_between(&a, &b).is_empty());
    }

    #[test]
    fn drift_steal_and_moved_cpus_are_each_named_and_the_load_is_only_kept() {
        let a = check(1000.0, 0, 0.5, 63.0);
        let mut b = check(1200.0, 0, 13.0, 326.0);
        b.cpu_jiffies = Some((1000, 20_000));
        let w = noise_between(&a, &b);
        let text: Vec<String> = w
            .iter()
            .map(|w| match w {
                Warning::Noisy { detail, .. } => detail.clone(),
                _ => String::new(),
            })
            .collect();
        // A load average of 13 on 2 CPUs is corescope's own oversubscribed threads
        // as much as anyone's: kept in the check, never a warning (other programs'
        // CPU time, `state::Snapshot`, names competing load).
        assert_eq!(w.len(), 3, "{text:?}");
        assert!(text[0].contains("+20 %"));
        assert!(text[1].contains("stole 10 %"));
        assert!(text[2].contains("63 to 326 ns"));
        assert_eq!(b.loadavg_1m, Some(13.0));
    }

    #[test]
    fn checking_never_pins_the_calling_thread() {
        let before = affinity::allowed_current().unwrap();
        if before.len() >= 2 {
            let _ = round_trip(before[0], before[1]);
        }
        let _ = reference_kernel(before.first().copied());
        assert_eq!(affinity::allowed_current().unwrap(), before);
    }

    #[test]
    fn the_round_trip_and_reference_are_measured_here() {
        let r = reference_kernel(None).expect("a thread runs");
        assert!(r.value > 0.0 && r.lo <= r.value && r.value <= r.hi);
        // Pins to CPUs that do not exist are refused: no number is invented.
        assert!(round_trip(100_000, 100_001).is_none());
    }

    #[test]
    fn a_round_moved_only_when_its_readings_spread_beyond_the_limit() {
        // This VM's states (about 63, 326 and 480 ns) and its jitter within one.
        assert_eq!(moved_within(&[120.0, 170.0, 131.0, 160.0]), None);
        assert_eq!(
            moved_within(&[63.0, 66.0, 326.0, 70.0]),
            Some((63.0, 326.0))
        );
        assert_eq!(moved_within(&[326.0, 480.0]), None, "within 1.5x");
        // Too few readings, or none that make sense, say nothing.
        assert_eq!(moved_within(&[63.0]), None);
        assert_eq!(moved_within(&[]), None);
        assert_eq!(moved_within(&[0.0, 300.0]), None);
    }
}
