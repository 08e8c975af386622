//! `atomics`: T threads increment one shared 64-bit word for a fixed time (seed 000
//! §7.1, seed 003): a CAS loop, a CAS loop with exponential backoff, `fetch_add`, and
//! a mutex-guarded increment. Successful increments per second, and failed CAS per
//! success. The team has one end time, set by the first thread to start, and one
//! stop flag, raised by the first thread to see the end pass: every thread stops
//! within one operation of it whatever the contention, so the number of contenders
//! holds to the end and a contended 2048-thread run cannot hang the machine (the
//! seed's did for two minutes). Each thread reads the clock every
//! [`CHECK_EVERY`] operations, whatever the team's size.

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx, SweepConfigs};
use crate::analysis;
use crate::clock::now_ns;
use crate::model::{Counted, Measurement, Point, ProbeResult, Sensitivity, Warning};
use crate::placement::arg as placement_arg;
use crate::placement::Strategy;
use crossbeam_utils::CachePadded;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Largest thread count as a multiple of the CPU count.
pub const MAX_THREAD_FACTOR: usize = 4;
/// A thread's increments between two looks at the clock (the stop flag it checks
/// before every one).
pub const CHECK_EVERY: u64 = 64;
/// Longest backoff, in spin-loop hints.
pub const MAX_BACKOFF_SPINS: u32 = 1024;

/// The probe.
pub struct Atomics;

/// How the word is incremented.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// load, then compare_exchange(v, v+1) until it succeeds.
    Cas,
    /// As `Cas`, doubling a spin backoff after each failure.
    CasBackoff,
    /// One `lock xadd`.
    FetchAdd,
    /// `std::sync::Mutex<u64>`.
    Mutex,
}

impl Method {
    /// Series prefix.
    pub fn name(self) -> &'static str {
        match self {
            Method::Cas => "cas",
            Method::CasBackoff => "cas-backoff",
            Method::FetchAdd => "fetch-add",
            Method::Mutex => "mutex",
        }
    }
    /// All methods.
    pub const ALL: [Method; 4] = [
        Method::Cas,
        Method::CasBackoff,
        Method::FetchAdd,
        Method::Mutex,
    ];
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    method: Method,
    placement: String,
    threads: usize,
    duration_ns: u64,
}

/// The shared word and the shared lock, each alone on its padded line(s), and the
/// team's end time and stop flag (read-mostly, on lines of their own).
#[derive(Default)]
pub struct Shared {
    word: CachePadded<AtomicU64>,
    locked: CachePadded<Mutex<u64>>,
    end_ns: CachePadded<AtomicU64>,
    stop: CachePadded<AtomicBool>,
}

impl Shared {
    /// The team's end: `proposed` if this thread is the first to start, else the
    /// end the first one set.
    pub fn end_once(&self, proposed: u64) -> u64 {
        match self
            .end_ns
            .compare_exchange(0, proposed.max(1), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => proposed.max(1),
            Err(set) => set,
        }
    }
}

/// One thread's work until the team's end (`duration_ns` after the first thread
/// started) or the stop flag: (successes, failed CAS).
pub fn hammer(s: &Shared, method: Method, duration_ns: u64) -> (u64, u64) {
    let end_ns = s.end_once(now_ns().saturating_add(duration_ns));
    let (mut ok, mut failed) = (0u64, 0u64);
    loop {
        for _ in 0..CHECK_EVERY {
            if s.stop.load(Ordering::Relaxed) {
                return (ok, failed);
            }
            failed += increment(s, method);
            ok += 1;
        }
        if now_ns() >= end_ns {
            s.stop.store(true, Ordering::Relaxed);
            return (ok, failed);
        }
    }
}

/// One successful increment of the shared word by `method`; the failed CAS it took.
#[inline(always)]
fn increment(s: &Shared, method: Method) -> u64 {
    let mut failed = 0;
    match method {
        Method::FetchAdd => {
            s.word.fetch_add(1, Ordering::AcqRel);
        }
        Method::Mutex => {
            *s.locked.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        }
        Method::Cas | Method::CasBackoff => {
            let mut backoff = 1u32;
            let mut v = s.word.load(Ordering::Relaxed);
            loop {
                match s
                    .word
                    .compare_exchange_weak(v, v + 1, Ordering::AcqRel, Ordering::Relaxed)
                {
                    Ok(_) => break,
                    Err(now) => {
                        failed += 1;
                        v = now;
                        if method == Method::CasBackoff {
                            for _ in 0..backoff {
                                std::hint::spin_loop();
                            }
                            backoff = (backoff * 2).min(MAX_BACKOFF_SPINS);
                            // The value seen before backing off is stale by now.
                            v = s.word.load(Ordering::Relaxed);
                        }
                    }
                }
            }
        }
    }
    failed
}

/// The shared counter's final value.
pub fn total(s: &Shared, method: Method) -> u64 {
    match method {
        Method::Mutex => *s.locked.lock().unwrap_or_else(|p| p.into_inner()),
        _ => s.word.load(Ordering::Acquire),
    }
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "atomics";

impl Probe for Atomics {
    type Params = CaseParams;
    type Facts = ();

    /// Its duration and its team's creation.
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(p.duration_ns as f64 * 1e-9 + c.team_spawn_s(p.threads))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "one shared counter: CAS loop, CAS with backoff, fetch_add, mutex vs threads"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let counts = ctx.thread_counts(MAX_THREAD_FACTOR);
        let placements = ctx.placements(&[Strategy::Compact, Strategy::Scatter]);
        // One repetition; the runner repeats every case in rounds, all methods and
        // placements of one thread count interleaved.
        let duration_ns: u64 = ctx.profile.pick(10_000_000, 40_000_000, 200_000_000);
        // The compared rounds, at most 4 beyond the minimum: every thread count up to
        // 4× the CPUs is a group, and 30 rounds of each would dominate a big run.
        let mut rounds = super::pool::rounds_for(ctx.profile, super::Rounds::COMPARED);
        rounds.max = rounds.max.min(rounds.min + 4);
        let mut configs = SweepConfigs::new(&ctx.topo, &placements);
        let mut cases = Vec::new();
        for &threads in &counts {
            let group = format!("atomics with {}", crate::units::threads(threads as f64));
            for method in Method::ALL {
                for (k, p) in placements.iter().enumerate() {
                    let config = configs.config(k, threads)?;
                    cases.push(
                        Case::new(
                            format!("{} {} ×{threads}", method.name(), p.name()),
                            &CaseParams {
                                method,
                                placement: placement_arg(p),
                                threads,
                                duration_ns,
                            },
                        )
                        .compared(&group, p.name(), format!("{} {config}", method.name()))
                        .with_rounds(rounds),
                    );
                }
            }
        }
        Ok(Plan::new(cases)
            .scaled_down(ctx.thinned_note(""))
        .param("thread_counts", &counts)
        .param("duration_ns", duration_ns)
        .param("max_backoff_spins", MAX_BACKOFF_SPINS)
        .param(
            "clock_check_every_ops",
            format!("{CHECK_EVERY} per thread, the stop flag before every operation: the team's one end (its first start + the duration, or the probe's deadline if sooner) stops every thread within one operation"),
        )
        .param(
            "placements",
            placements.iter().map(placement_arg).collect::<Vec<_>>(),
        ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let (strategy, cpus) = super::placed(&ctx.plan.topo, &c.placement, c.threads)?;
        let shared = Box::<Shared>::default();
        let s = &*shared;
        // The case ends after its duration, or at the probe's deadline if that comes
        // first (a big team must not overrun the budget).
        let left_ns = ctx
            .deadline
            .saturating_duration_since(std::time::Instant::now())
            .as_nanos()
            .min(u64::MAX as u128) as u64;
        let dur = c.duration_ns.min(left_ns.max(1));
        let out = ctx.team(&cpus, 1, |_| (), |_, _| hammer(s, c.method, dur))?;
        if dur < c.duration_ns {
            let w = Warning::StoppedAtDeadline {
                what: format!("{ID} {}", case.label),
                done: dur,
                planned: c.duration_ns,
                unit: Counted::Ns,
            };
            if !ctx.warnings.contains(&w) {
                ctx.warnings.push(w);
            }
        }
        let (ok, failed) = out
            .results
            .iter()
            .flatten()
            .fold((0u64, 0u64), |a, r| (a.0 + r.0, a.1 + r.1));
        let fin = total(s, c.method);
        if fin != ok {
            return Err(ProbeError::LostIncrements {
                method: c.method.name(),
                counter: fin,
                successes: ok,
            });
        }
        let secs = out.best().map(|b| b.team_ns()).unwrap_or(dur).max(1) as f64 * 1e-9;
        let x = c.threads as f64;
        let mut pts = vec![Point::new(
            format!("{}/{}", c.method.name(), strategy.name()),
            "threads",
            x,
            "increments_per_s",
            ok as f64 / secs,
        )];
        if matches!(c.method, Method::Cas | Method::CasBackoff) {
            pts.push(Point::new(
                format!("{}-failures/{}", c.method.name(), strategy.name()),
                "threads",
                x,
                "failed_cas_per_success",
                failed as f64 / ok.max(1) as f64,
            ));
        }
        Ok(Measurement::points(pts))
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let cpus = ctx.cpus();
        let unit = "increments_per_s";
        for m in Method::ALL {
            let found = analysis::placements(result, m.name(), unit, cpus as f64);
            out.findings.extend(found);
        }
        // At the largest thread count: the fastest and the slowest method, each at its
        // best placement, compared round by round.
        let Some(x) = result
            .series
            .iter()
            .flat_map(|s| s.x.iter().copied())
            .reduce(f64::max)
        else {
            return out;
        };
        let best_of = |m: Method| -> Option<(String, f64)> {
            result
                .series
                .iter()
                .filter(|s| s.name.starts_with(&format!("{}/", m.name())))
                .filter_map(|s| Some((s.name.clone(), s.estimate_at(x)?.value)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let mut ranked: Vec<(Method, String, f64)> = Method::ALL
            .iter()
            .filter_map(|&m| best_of(m).map(|(s, y)| (m, s, y)))
            .collect();
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2));
        if let (Some(first), Some(last)) = (ranked.first(), ranked.last()) {
            if first.0 != last.0 {
                let what = format!(
                    "with {} ({:.1}× the CPUs), fastest vs slowest method",
                    crate::units::threads(x),
                    x / cpus as f64
                );
                let found = analysis::compare(
                    result,
                    &what,
                    unit,
                    (first.0.name(), &first.1, x),
                    (last.0.name(), &last.1, x),
                    None,
                );
                out.findings.extend(found);
            }
        }
        for m in ["cas", "cas-backoff"] {
            let failures = result
                .series
                .iter()
                .filter(|s| s.name.starts_with(&format!("{m}-failures/")))
                .filter_map(|s| s.estimate_at(x))
                .max_by(|a, b| a.value.total_cmp(&b.value));
            if let Some(e) = failures {
                out.findings.push(crate::model::Finding::Value {
                    what: format!(
                        "{m}: failed CAS per successful increment with {}",
                        crate::units::threads(x)
                    ),
                    unit: "failed_cas_per_success".into(),
                    value: e,
                    context: None,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_team_has_one_end_and_stops_at_the_flag() {
        let s = Shared::default();
        assert_eq!(s.end_once(500), 500);
        assert_eq!(s.end_once(900), 500, "the first thread's end holds");
        // An end in the past: one window of operations, then the flag is up and
        // every later thread stops before its first operation.
        let s = Shared::default();
        s.end_once(1);
        assert_eq!(hammer(&s, Method::Mutex, 0), (CHECK_EVERY, 0));
        assert_eq!(hammer(&s, Method::FetchAdd, 1_000_000_000), (0, 0));
        assert_eq!(total(&s, Method::Mutex), CHECK_EVERY);
    }

    #[test]
    fn no_method_loses_an_increment() {
        for method in Method::ALL {
            let s = Shared::default();
            let (ok, failed) = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..4)
                    .map(|_| sc.spawn(|| hammer(&s, method, 20_000_000)))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap())
                    .fold((0, 0), |a, r| (a.0 + r.0, a.1 + r.1))
            });
            assert_eq!(total(&s, method), ok, "{method:?}");
            assert!(ok >= 4 * CHECK_EVERY);
            if matches!(method, Method::FetchAdd | Method::Mutex) {
                assert_eq!(failed, 0);
            }
        }
    }
}
