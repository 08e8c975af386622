//! `corescope plan`: every probe's cases for a machine (this one, an hwloc XML export
//! or a synthetic spec) and how long a run would take, without measuring anything but
//! a short calibration of this machine (see `docs/plan.md`).
//!
//! The model follows the runner (`runner::run_probe`): cases are grouped as the runner
//! groups them; variants of a group with equal configurations run once; each measured
//! variant runs its warm-up and its rounds (the minimum, plus a share of the extra
//! rounds up to the maximum, bounded by the group's share of the budget left); a probe
//! stops at its budget. One run of a case costs what its parameters say it does (work
//! per thread × waves of threads over the CPUs + thread creation), priced with
//! constants measured on this machine by [`Calibration::measure`].

use crate::model::Profile;
use crate::placement::Placer;
use crate::probes::{AnyProbe, Case, PlanCtx, Planned, ProbeError};
use crate::runner::groups_of;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;

/// What the estimate assumes for rounds beyond a group's minimum: this share of the
/// extra rounds up to the maximum runs. Fitted on the default runs of 2026-11-23
/// (2-CPU VM, `/work/runs/final1.json`): compute ran 25.9 of 12–30 rounds on average,
/// peak 22.4, atomics, workload, false-sharing, pool and matmul their maximum.
pub const EXTRA_ROUND_SHARE: f64 = 0.8;

/// What the model assumes for a probe it has no formula for, per case run.
pub const UNKNOWN_RUN_S: f64 = 1.0;

/// Seconds of `corescope run` outside the probes: clock calibration (100 ms default)
/// and the core-clock measurement, the header save.
pub const STARTUP_S: f64 = 1.0;

pub use crate::probes::cost::Calibration;

impl Calibration {
    /// Measure this machine: compute's integer chain (5 × ~3 ms, fastest kept), a
    /// 32 MiB first touch and read, 3 × 16 thread creations, one round trip check.
    pub fn measure(topo: &Topology) -> Self {
        let t0 = Instant::now();
        let op_ns = measure_op_ns();
        let byte_ns = measure_byte_ns();
        let spawn_ns = measure_spawn_ns(topo);
        let cpus = topo.allowed_os_indices();
        let round_trip_ns = match cpus.as_slice() {
            [a, b, ..] => crate::drift::round_trip(*a, *b),
            _ => None,
        }
        .unwrap_or(Self::reference().round_trip_ns);
        Self {
            op_ns,
            byte_ns,
            spawn_ns,
            round_trip_ns,
            calibration_s: t0.elapsed().as_secs_f64(),
            source: "measured here".into(),
        }
    }
}

/// Passes of compute's kernel per calibration repetition (4 M dependent ops).
const CAL_PASSES: u64 = 4_000;

fn measure_op_ns() -> f64 {
    let inputs: [i64; crate::kernels::chains::INPUTS] = std::array::from_fn(|i| 2 * i as i64 + 3);
    let ops = (CAL_PASSES * crate::kernels::chains::INPUTS as u64 * 8) as f64;
    (0..5)
        .map(|k| {
            let t = Instant::now();
            std::hint::black_box(crate::kernels::chains::int_kernel(
                &inputs,
                [3, 5, 7, 11],
                CAL_PASSES,
                k,
            ));
            t.elapsed().as_nanos() as f64 / ops
        })
        .fold(f64::INFINITY, f64::min)
}

/// Bytes of the calibration block.
const CAL_BLOCK_BYTES: usize = 32 << 20;

fn measure_byte_ns() -> f64 {
    let t = Instant::now();
    let mut v = vec![0u64; CAL_BLOCK_BYTES / 8];
    for (i, x) in v.iter_mut().enumerate() {
        *x = i as u64;
    }
    let sum: u64 = std::hint::black_box(&v).iter().fold(0u64, |a, &x| a ^ x);
    std::hint::black_box(sum);
    t.elapsed().as_nanos() as f64 / CAL_BLOCK_BYTES as f64
}

fn measure_spawn_ns(topo: &Topology) -> f64 {
    const THREADS: usize = 16;
    let cpus = topo.allowed_os_indices();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        std::thread::scope(|s| {
            for i in 0..THREADS {
                let cpu = cpus.get(i % cpus.len().max(1)).copied();
                s.spawn(move || {
                    if let Some(c) = cpu {
                        let _ = crate::affinity::pin_checked(c);
                    }
                });
            }
        });
        best = best.min(t.elapsed().as_nanos() as f64 / THREADS as f64);
    }
    best
}

/// One case as the plan shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseEstimate {
    /// The case's label (`int scatter ×8`).
    pub label: String,
    /// Threads it runs (2 for a CPU pair).
    pub threads: usize,
    /// CPUs it runs on (`0,4,8`, `unbound ×8`), when the parameters say.
    pub cpus: String,
    /// Its size parameters (`block_bytes=134217728`, `n=512`).
    pub size: String,
    /// Runs of the case, warm-up included (0 when another variant's copy).
    pub runs: f64,
    /// Estimated seconds of all its runs.
    pub seconds: f64,
}

/// One probe's plan and estimate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeEstimate {
    /// Probe id.
    pub id: String,
    /// `planned` or `skipped`.
    pub status: String,
    /// Why skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its budget, seconds.
    pub budget_s: f64,
    /// Estimated seconds (at most the budget).
    pub seconds: f64,
    /// Whether the budget cuts the probe short (it would record "gave up").
    pub capped: bool,
    /// Whether the model has a formula for this probe (else [`UNKNOWN_RUN_S`]).
    pub modelled: bool,
    /// Comparison groups.
    pub groups: usize,
    /// The probe's recorded parameters.
    pub params: serde_json::Map<String, Value>,
    /// Every case.
    pub cases: Vec<CaseEstimate>,
}

/// A whole plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlanReport {
    /// The machine, one line.
    pub topology: String,
    /// Allowed CPUs.
    pub cpus: usize,
    /// Profile planned.
    pub profile: Profile,
    /// The constants the estimate used.
    pub calibration: Calibration,
    /// Per probe, in run order.
    pub probes: Vec<ProbeEstimate>,
    /// Sum of the probes plus [`STARTUP_S`], seconds.
    pub total_s: f64,
}

/// Plan and estimate `probes` on `ctx`'s machine.
pub fn plan_all(probes: &[Box<dyn AnyProbe>], ctx: &PlanCtx, cal: &Calibration) -> PlanReport {
    let list: Vec<ProbeEstimate> = probes
        .iter()
        .map(|p| estimate_probe(p.as_ref(), ctx, cal))
        .collect();
    let total_s = STARTUP_S + list.iter().map(|p| p.seconds).sum::<f64>();
    PlanReport {
        topology: ctx.topo.summary(),
        cpus: ctx.cpus(),
        profile: ctx.profile,
        calibration: cal.clone(),
        probes: list,
        total_s,
    }
}

/// One probe's plan, priced.
pub fn estimate_probe(probe: &dyn AnyProbe, ctx: &PlanCtx, cal: &Calibration) -> ProbeEstimate {
    let mut est = ProbeEstimate {
        id: probe.id().into(),
        status: "planned".into(),
        reason: None,
        budget_s: ctx.budget_s,
        seconds: 0.0,
        capped: false,
        modelled: true,
        groups: 0,
        params: Default::default(),
        cases: Vec::new(),
    };
    let plan = match probe.plan(ctx) {
        Ok(p) => p,
        Err(e) => {
            est.status = "skipped".into();
            est.reason = Some(match e {
                ProbeError::Skipped(r) | ProbeError::GaveUp(r) => r,
                failed => failed.to_string(),
            });
            return est;
        }
    };
    est.params = plan.params.clone().into_iter().collect();
    est.modelled = plan.cases.is_empty() || case_run_s(&plan, 0, ctx, cal).is_some();
    let per_run: Vec<f64> = (0..plan.cases.len())
        .map(|i| case_run_s(&plan, i, ctx, cal).unwrap_or(UNKNOWN_RUN_S))
        .collect();
    let (runs, seconds, capped) = simulate(&plan.cases, &per_run, ctx, cal);
    est.groups = groups_of(&plan.cases).len();
    est.seconds = seconds + probe_overhead_s(cal);
    est.capped = capped;
    let mut placers = Placers::new();
    est.cases = plan
        .cases
        .iter()
        .zip(runs.iter().zip(&per_run))
        .map(|(c, (&r, &s))| describe(c, ctx, &mut placers, r, r * s))
        .collect();
    est
}

/// The drift check after every probe: compute's chain 7 × 4 M ops, a round trip.
fn probe_overhead_s(cal: &Calibration) -> f64 {
    (7.0 * CAL_PASSES as f64 * 1024.0 * cal.op_ns + 400.0 * cal.round_trip_ns) * 1e-9
}

/// Walk the groups as the runner does: per case the runs it gets; the probe's
/// seconds; whether the budget ends it early.
fn simulate(
    cases: &[Case],
    per_run: &[f64],
    ctx: &PlanCtx,
    cal: &Calibration,
) -> (Vec<f64>, f64, bool) {
    let budget_s = ctx.budget_s;
    let groups = groups_of(cases);
    let schedule = crate::runner::schedule(&groups, cases, ctx);
    let mut runs = vec![0.0; cases.len()];
    let mut elapsed = 0.0;
    for (k, &(g, epoch, rounds)) in schedule.iter().enumerate() {
        let members = &groups[g];
        if elapsed >= budget_s {
            return (runs, budget_s, true);
        }
        // Equal configurations run once (`GroupRun::split_aliases`).
        let mut configs: Vec<&str> = Vec::new();
        let measured: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| match cases[i].config.as_deref() {
                Some(c) if configs.contains(&c) => false,
                Some(c) => {
                    configs.push(c);
                    true
                }
                None => true,
            })
            .collect();
        let one_round: f64 = measured.iter().map(|&i| per_run[i]).sum();
        // A later epoch warms up with the group's first variant only (`GroupRun::rounds`).
        let warm_s = match (rounds.warmup, epoch) {
            (false, _) => 0.0,
            (true, 0) => one_round,
            (true, _) => measured.first().map_or(0.0, |&i| per_run[i]),
        };
        let trips = if rounds.max > 1 {
            2.0 * 400.0 * cal.round_trip_ns * 1e-9
        } else {
            0.0
        };
        let min = rounds.min.max(1) as f64;
        let allowance = (budget_s - elapsed) / (schedule.len() - k) as f64;
        let base = one_round * min + warm_s + trips;
        let extra_wanted = (rounds.max.max(1) as f64 - min) * EXTRA_ROUND_SHARE;
        let extra = if one_round > 0.0 {
            extra_wanted.min(((allowance - base) / one_round).max(0.0).floor())
        } else {
            extra_wanted
        };
        let n = min + extra;
        for (j, &i) in measured.iter().enumerate() {
            let warmed = rounds.warmup && (epoch == 0 || j == 0);
            runs[i] += n + if warmed { 1.0 } else { 0.0 };
        }
        elapsed += base + extra * one_round;
    }
    let capped = elapsed > budget_s;
    (runs, elapsed.min(budget_s), capped)
}

/// A case's parameters as its probe wrote them (`case.params`), serde's enum tag
/// taken off (`{"Bandwidth": {...}}` → `{...}`), for the table.
fn untagged(params: &Value) -> &Value {
    match params.as_object() {
        Some(m) if m.len() == 1 => match m.values().next() {
            Some(inner) if inner.is_object() => inner,
            _ => params,
        },
        _ => params,
    }
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// Seconds of one run of case `index` of `plan` as its probe prices it
/// ([`crate::probes::Probe::run_cost_s`]), or `None` for a probe that states no cost.
pub fn case_run_s(plan: &Planned, index: usize, ctx: &PlanCtx, cal: &Calibration) -> Option<f64> {
    plan.run_cost_s(
        index,
        &crate::probes::cost::Cost {
            topo: &ctx.topo,
            cpus: ctx.cpus().max(1),
            profile: ctx.profile,
            cal,
        },
    )
}

/// The placements of one probe's cases as their parameters write them
/// (`scatter`, `0,2,4-7`), each parsed and ordered once (`None`: does not parse).
type Placers = HashMap<String, Option<Placer>>;

/// A case with its threads, CPUs and sizes for display.
fn describe(
    c: &Case,
    ctx: &PlanCtx,
    placers: &mut Placers,
    runs: f64,
    seconds: f64,
) -> CaseEstimate {
    let p = untagged(&c.params);
    let threads = num(p, "threads").map(|t| t as usize);
    let pair = |a: &str, b: &str| Some(format!("{},{}", num(p, a)? as u32, num(p, b)? as u32));
    let cpus = match (p.get("placement").and_then(Value::as_str), threads) {
        (Some(pl), Some(t)) => placers
            .entry(pl.to_string())
            .or_insert_with(|| {
                crate::placement::Strategy::parse(pl)
                    .ok()
                    .map(|s| Placer::new(&ctx.topo, &s))
            })
            .as_ref()
            .and_then(|placer| placer.assign(t).ok())
            // In the order threads take them (the run file's configuration names
            // only the set).
            .map(|cpus| match cpus.iter().any(Option::is_some) {
                true => crate::placement::format_assignment(&cpus),
                false => crate::probes::team_config(&cpus, t),
            }),
        _ => None,
    }
    .or_else(|| pair("a", "b"))
    .or_else(|| pair("active", "spinner"))
    .unwrap_or_default();
    const SIZE_KEYS: [&str; 12] = [
        "block_bytes",
        "ws_bytes",
        "passes",
        "iters",
        "steps",
        "n",
        "order",
        "log2",
        "duration_ns",
        "round_trips",
        "increments",
        "events",
    ];
    let size = SIZE_KEYS
        .iter()
        .filter_map(|k| p.get(*k).map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(" ");
    let pairlike = p.get("a").is_some() || p.get("active").is_some();
    CaseEstimate {
        label: c.label.clone(),
        threads: threads.unwrap_or(if pairlike { 2 } else { 1 }),
        cpus,
        size,
        runs,
        seconds,
    }
}

/// A plan context for `profile` on `topo` with the default budget (what `run` uses).
pub fn plan_ctx(topo: Topology, profile: Profile, budget_s: f64) -> PlanCtx {
    PlanCtx {
        topo,
        clock: crate::clock::Clock::from_info(crate::model::ClockInfo {
            ticks_hz: 1e9,
            ..Default::default()
        }),
        profile,
        overrides: Default::default(),
        budget_s,
    }
}

/// One probe of a run file beside its estimate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckRow {
    /// Probe id.
    pub id: String,
    /// Estimated seconds.
    pub estimated_s: f64,
    /// Seconds the run file records (`elapsed_s`).
    pub measured_s: f64,
}

/// The estimate of every probe a run file holds, planned on the run's topology with
/// its profile and each probe's recorded budget, beside the recorded durations.
pub fn check(run: &crate::model::RunFile, cal: &Calibration) -> Vec<CheckRow> {
    let mut rows = Vec::new();
    for r in &run.probes {
        let Some(probe) = crate::probes::find(&r.id) else {
            continue;
        };
        let budget = r
            .params
            .get("budget_s")
            .and_then(Value::as_f64)
            .unwrap_or_else(|| crate::cli::default_budget_s(run.profile));
        let ctx = plan_ctx(run.topology.clone(), run.profile, budget);
        let est = estimate_probe(probe.as_ref(), &ctx, cal);
        rows.push(CheckRow {
            id: r.id.clone(),
            estimated_s: est.seconds,
            measured_s: r.elapsed_s,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Measurement;
    use crate::probes::cost::Cost;
    use crate::probes::{Plan, Probe, RunCtx};

    /// A probe that exists only here: its cases say how much work they are, and it
    /// prices them itself (`priced`) or states nothing.
    struct Sketch {
        priced: bool,
    }

    #[derive(serde::Serialize, Clone)]
    struct Work {
        units: u32,
    }

    impl Probe for Sketch {
        type Params = Work;
        type Facts = ();
        fn id(&self) -> &'static str {
            "sketch"
        }
        fn title(&self) -> &'static str {
            "a test probe"
        }
        fn plan(&self, _ctx: &PlanCtx) -> Result<Plan<Work>, ProbeError> {
            Ok(Plan::new(vec![
                Case::new("small", &Work { units: 1 }),
                Case::new("large", &Work { units: 3 }),
            ]))
        }
        fn run(&self, _case: &Case<Work>, _ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
            Err(ProbeError::Skipped("never run here".into()))
        }
        fn run_cost_s(&self, work: &Work, _cost: &Cost) -> Option<f64> {
            self.priced.then(|| f64::from(work.units) * 2.0)
        }
    }

    fn priced(probe: &dyn AnyProbe) -> ProbeEstimate {
        let topo = crate::topology::from_synthetic("core:2 pu:1").expect("topology");
        let ctx = plan_ctx(topo, Profile::Default, 300.0);
        estimate_probe(probe, &ctx, &Calibration::reference())
    }

    #[test]
    fn a_probe_in_one_file_is_priced_by_its_own_cost() {
        let est = priced(&Sketch { priced: true });
        assert!(est.modelled);
        assert_eq!(est.cases.len(), 2);
        // One run each (Rounds::ONCE, no warm-up), at 2 s per unit of work.
        assert_eq!(est.cases[0].seconds, 2.0);
        assert_eq!(est.cases[1].seconds, 6.0);
        assert!(est.seconds >= 8.0, "{}", est.seconds);
    }

    /// FNV-1a (64 bits): a fingerprint of text, recorded in a test.
    fn fnv1a(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// Per probe, one line per case of every machine and profile below: its label
    /// and the seconds of one run at the reference calibration.
    fn priced_runs() -> std::collections::BTreeMap<&'static str, String> {
        let mut out = std::collections::BTreeMap::<&'static str, String>::new();
        for spec in ["core:2 pu:1", "pack:2 numa:2 core:8 pu:2"] {
            for profile in [Profile::Quick, Profile::Default, Profile::Full] {
                let topo = crate::topology::from_synthetic(spec).expect("topology");
                let ctx = plan_ctx(topo, profile, 300.0);
                let cal = Calibration::reference();
                for probe in crate::probes::registry() {
                    let Ok(plan) = probe.plan(&ctx) else { continue };
                    let text = out.entry(probe.id()).or_default();
                    for (i, case) in plan.cases.iter().enumerate() {
                        let s = case_run_s(&plan, i, &ctx, &cal);
                        let s = s.map_or("-".into(), |s| format!("{s:.9e}"));
                        text.push_str(&format!("{spec}\t{profile:?}\t{}\t{s}\n", case.label));
                    }
                }
            }
        }
        out
    }

    /// Every probe prices its cases as recorded, for the probes whose cases depend on
    /// the topology and profile alone (not on this machine's vector units, huge pages
    /// or caches). A change of a cost model shows here: record the new fingerprints
    /// only when the change is meant. `CORESCOPE_PRICED=1` prints every line.
    #[test]
    fn every_probe_prices_its_cases_as_recorded() {
        const RECORDED: [(&str, u64); 13] = [
            ("compute", 0xd8274e9e2b098e59),
            ("workload", 0x58f000bd7e22c742),
            ("atomics", 0x94e12bf41b8bdfc9),
            ("c2c", 0x0c1ffc98c422c6d6),
            ("false-sharing", 0x059137b02990b4cf),
            ("spin", 0x904fdbc265995eda),
            ("matmul", 0xe3155349592efdf8),
            ("threads", 0x7a4e21cda80139df),
            ("mutex", 0xd6314db7e4c072c9),
            ("condvar", 0xd57d0db008ecf375),
            ("timers", 0x3c94380e6fa28a2c),
            ("syscall", 0x2b2d4dcf345859b6),
            ("channel", 0xf4c64a366d4226d9),
        ];
        let runs = priced_runs();
        if std::env::var_os("CORESCOPE_PRICED").is_some() {
            for (id, text) in &runs {
                for line in text.lines() {
                    println!("{id}\t{line}");
                }
            }
        }
        for (id, want) in RECORDED {
            let got = fnv1a(runs.get(id).map_or("", String::as_str));
            assert_eq!(got, want, "{id}: prices changed ({got:#018x})");
        }
    }

    #[test]
    fn a_probe_that_states_no_cost_is_priced_at_the_fallback_and_flagged() {
        let est = priced(&Sketch { priced: false });
        assert!(!est.modelled);
        assert!(est.cases.iter().all(|c| c.seconds == UNKNOWN_RUN_S));
    }
}
