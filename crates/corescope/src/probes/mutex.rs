//! `mutex`: what a lock costs (seed 000 §6.2).
//!
//! - Uncontended: one thread, [`PAIRS_PER_SAMPLE`] lock+unlock pairs per sample, for
//!   `pthread_mutex_t`, Rust's `std::sync::Mutex` and `parking_lot::Mutex`.
//! - Contended hand-off: the holder unlocks while the waiter is blocked in `lock`
//!   (asleep in the kernel) or spinning on `trylock`. Per sample: how long the unlock
//!   takes, and the time from the start of the unlock until the waiter runs with the
//!   lock. By where the waiter sits relative to the holder.

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::ticks;
use crate::model::{Measurement, ProbeResult};
use crate::placement::pairs::{self, PthreadMutex, Relation};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Lock+unlock pairs averaged per uncontended sample (seed 000: 1000).
pub const PAIRS_PER_SAMPLE: u64 = 1000;
/// How long the holder lets a sleeping waiter settle into the kernel before it
/// unlocks, in µs.
pub const SETTLE_US: f64 = 50.0;
/// Longest wait for the partner before the probe gives up on a case.
pub const PARTNER_TIMEOUT_S: f64 = 5.0;

/// The probe.
pub struct MutexProbe;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Impl {
    Pthread,
    Std,
    ParkingLot,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum CaseParams {
    Uncontended {
        imp: Impl,
        cpu: Option<u32>,
        samples: usize,
    },
    Handoff {
        spinning: bool,
        relation: Relation,
        holder: Option<u32>,
        waiter: Option<u32>,
        samples: usize,
    },
}

struct Shared {
    m: Box<PthreadMutex>,
    go: AtomicU64,
    ready: AtomicU64,
    woke: AtomicU64,
    abort: AtomicBool,
}

/// Holder's view of one case: unlock durations, wake latencies (ticks), stop reason.
type Handoff = (Vec<u64>, Vec<u64>, Option<String>);

fn handoff(
    sh: &Shared,
    me: usize,
    spinning: bool,
    samples: usize,
    settle: u64,
    limit: u64,
    deadline: std::time::Instant,
) -> Handoff {
    let (mut unlock, mut wake) = (Vec::new(), Vec::new());
    if me == 1 {
        // The waiter.
        for k in 1..=samples as u64 {
            if !pairs::wait_until(limit, || {
                sh.go.load(Ordering::Acquire) == k || sh.abort.load(Ordering::Acquire)
            }) || sh.abort.load(Ordering::Acquire)
            {
                break;
            }
            sh.ready.store(k, Ordering::Release);
            if spinning {
                while !sh.m.try_lock() {
                    if sh.abort.load(Ordering::Relaxed) {
                        return (unlock, wake, None);
                    }
                    std::hint::spin_loop();
                }
            } else {
                sh.m.lock();
            }
            let t = ticks();
            sh.m.unlock();
            sh.woke.store(t.max(1), Ordering::Release);
        }
        return (unlock, wake, None);
    }
    // The holder.
    let mut stop = None;
    for k in 1..=samples as u64 {
        if k % 64 == 0 && std::time::Instant::now() >= deadline {
            stop = Some(format!("budget reached after {} samples", k - 1));
            break;
        }
        sh.m.lock();
        sh.woke.store(0, Ordering::Release);
        sh.go.store(k, Ordering::Release);
        if !pairs::wait_until(limit, || sh.ready.load(Ordering::Acquire) == k) {
            sh.m.unlock();
            stop = Some(format!(
                "the waiter did not get ready within {PARTNER_TIMEOUT_S} s"
            ));
            break;
        }
        // Let the waiter reach lock() and fall asleep (or start spinning); yielding so a
        // waiter on the same CPU can run.
        let t = ticks();
        while ticks().wrapping_sub(t) < settle {
            std::thread::yield_now();
        }
        let t0 = ticks();
        sh.m.unlock();
        let t1 = ticks();
        if !pairs::wait_until(limit, || sh.woke.load(Ordering::Acquire) != 0) {
            stop = Some(format!(
                "the waiter did not wake within {PARTNER_TIMEOUT_S} s"
            ));
            break;
        }
        unlock.push(t1.wrapping_sub(t0));
        wake.push(sh.woke.load(Ordering::Acquire).wrapping_sub(t0));
    }
    sh.abort.store(true, Ordering::Release);
    (unlock, wake, stop)
}

fn uncontended(imp: Impl, samples: usize) -> Vec<u64> {
    let p = PthreadMutex::new();
    let s = std::sync::Mutex::new(0u64);
    let pl = parking_lot::Mutex::new(0u64);
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t0 = ticks();
        match imp {
            Impl::Pthread => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    black_box(&p).lock();
                    black_box(&p).unlock();
                }
            }
            Impl::Std => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    let g = black_box(&s).lock();
                    drop(black_box(g));
                }
            }
            Impl::ParkingLot => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    let g = black_box(&pl).lock();
                    drop(black_box(g));
                }
            }
        }
        out.push(ticks().wrapping_sub(t0));
    }
    out
}

impl Probe for MutexProbe {
    fn id(&self) -> &'static str {
        "mutex"
    }

    fn title(&self) -> &'static str {
        "mutex lock+unlock cost, and contended hand-off: unlock duration and waiter wake-up"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let n = pairs::samples(ctx.profile);
        let first = ctx.topo.allowed_pus().next().map(|p| p.os_index);
        let mut cases = Vec::new();
        for imp in [Impl::Pthread, Impl::Std, Impl::ParkingLot] {
            cases.push(Case::new(
                format!("uncontended {imp:?}"),
                &CaseParams::Uncontended {
                    imp,
                    cpu: first,
                    samples: n,
                },
            ));
        }
        let mut skipped = Vec::new();
        for (relation, pair) in pairs::pairs(&ctx.topo) {
            match pair {
                Ok((holder, waiter)) => {
                    for spinning in [false, true] {
                        if spinning && relation == Relation::SameCpu {
                            skipped.push(
                                "handoff/spinning/same-cpu: skipped: a waiter spinning on the holder's own CPU measures only the scheduler's time slice".to_string(),
                            );
                            continue;
                        }
                        let kind = if spinning { "spinning" } else { "sleeping" };
                        cases.push(Case::new(
                            format!("handoff {kind} {}", relation.name()),
                            &CaseParams::Handoff {
                                spinning,
                                relation,
                                holder,
                                waiter,
                                samples: n,
                            },
                        ));
                    }
                }
                Err(why) => skipped.push(format!("handoff/{}: skipped: {why}", relation.name())),
            }
        }
        Ok(Plan {
            cases,
            ..Plan::default()
        }
        .param("samples", n)
        .param("pairs_per_uncontended_sample", PAIRS_PER_SAMPLE)
        .param("settle_us", SETTLE_US)
        .param("skipped", skipped))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let clock = ctx.plan.clock.clone();
        let mut m = Measurement::default();
        match case.decode()? {
            CaseParams::Uncontended { imp, cpu, samples } => {
                let out = ctx.team(&[cpu], 1, |_| (), |_, _| uncontended(imp, samples))?;
                let t: Vec<u64> = out.results.into_iter().flatten().flatten().collect();
                let ns: Vec<f64> = t
                    .iter()
                    .map(|&x| clock.ticks_to_ns(x) / PAIRS_PER_SAMPLE as f64)
                    .collect();
                let name = match imp {
                    Impl::Pthread => "uncontended/pthread",
                    Impl::Std => "uncontended/std",
                    Impl::ParkingLot => "uncontended/parking_lot",
                };
                m.distributions
                    .push(crate::stats::distribution(name, "ns", &ns));
            }
            CaseParams::Handoff {
                spinning,
                relation,
                holder,
                waiter,
                samples,
            } => {
                let sh = Shared {
                    m: PthreadMutex::new(),
                    go: AtomicU64::new(0),
                    ready: AtomicU64::new(0),
                    woke: AtomicU64::new(0),
                    abort: AtomicBool::new(false),
                };
                let settle = clock.ns_to_ticks(SETTLE_US * 1e3) as u64;
                let limit = clock.ns_to_ticks(PARTNER_TIMEOUT_S * 1e9) as u64;
                let deadline = ctx.deadline;
                let out = ctx.team(
                    &[holder, waiter],
                    1,
                    |_| (),
                    |me, _| handoff(&sh, me, spinning, samples, settle, limit, deadline),
                )?;
                let (unlock, wake, stop) = out
                    .results
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .ok_or_else(|| ProbeError::Failed("the holder did not run".into()))?;
                let kind = if spinning { "spinning" } else { "sleeping" };
                let base = format!("handoff/{kind}/{}", relation.name());
                if let Some(why) = stop {
                    m.warnings.push(format!("{base}: {why}"));
                }
                if unlock.is_empty() {
                    return Err(ProbeError::GaveUp(format!("{base}: no sample")));
                }
                let ds = pairs::paired(
                    &format!("{base}/unlock"),
                    &format!("{base}/wake"),
                    &clock,
                    &unlock,
                    &wake,
                );
                pairs::push_dists(&mut m, &clock, ds);
            }
        }
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, ctx: &PlanCtx) {
        super::skipped_as_findings(result);
        let med = |name: &str| {
            result
                .distributions
                .iter()
                .find(|d| d.name == name)
                .map(|d| d.summary.p50)
        };
        if let Some(p) = med("uncontended/pthread") {
            let mut line = format!(
                "uncontended lock+unlock: pthread {}",
                crate::units::fmt_value("ns", p)
            );
            for (label, name) in [
                ("std", "uncontended/std"),
                ("parking_lot", "uncontended/parking_lot"),
            ] {
                if let Some(v) = med(name) {
                    line.push_str(&format!(", {label} {}", crate::units::fmt_value("ns", v)));
                }
            }
            line.push_str(" (median per pair)");
            result.findings.push(line);
        }
        for rel in ["other-core", "smt-sibling", "other-package"] {
            if let (Some(sl), Some(sp)) = (
                med(&format!("handoff/sleeping/{rel}/wake")),
                med(&format!("handoff/spinning/{rel}/wake")),
            ) {
                if sp > 0.0 {
                    result.findings.push(format!(
                        "waking a sleeping waiter on {rel} costs {} median vs {} for a spinning one ({:.0}×)",
                        crate::units::fmt_value("ns", sl),
                        crate::units::fmt_value("ns", sp),
                        sl / sp
                    ));
                }
            }
        }
        let wakes: Vec<_> = result
            .distributions
            .iter()
            .filter(|d| d.name.starts_with("handoff/sleeping/") && d.name.ends_with("/wake"))
            .cloned()
            .collect();
        result.findings.extend(pairs::relation_findings(
            &wakes,
            "sleeping waiter wake-up",
            "/wake",
        ));
        for d in &wakes {
            if let Some(f) = pairs::mode_finding(d, &ctx.clock) {
                result.findings.push(f);
            }
        }
    }
}
