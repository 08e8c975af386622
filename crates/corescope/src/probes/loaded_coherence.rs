//! `loaded-coherence`: the c2c CAS hand-off and the mutex wake-up of a few
//! representative CPU pairs, idle and under the memory traffic ladder of
//! `loaded-latency`, as curves beside their idle values.
//!
//! Pairs: one per relation the topology has among SMT sibling, other core and
//! other package (`placement::pairs`). Per run the pair measures, one after the
//! other:
//! - `cas/<relation>`: one line bounced with compare-and-swap (as `c2c/cas`): the
//!   first thread moves the word from 2k to 2k+1, the second from 2k+1 to 2k+2;
//!   ns per hand-off = the first thread's time ÷ 2 × round trips;
//! - `wake/<relation>`: a sleeping waiter's wake-up (as `mutex`'s hand-off): the
//!   holder unlocks a `pthread_mutex_t` while the waiter sleeps in `lock`; the time
//!   from the start of the unlock until the waiter runs with the lock, median of the
//!   run's samples.
//!
//! Meanwhile every other allowed CPU (the injectors) runs `loaded-latency`'s read
//! traffic at the step's delay; the injectors' measured bandwidth is the x of the
//! curve (`bandwidth/<relation>`), the step 0 is the idle machine. Traffic is never
//! put on the pair's own CPUs: there it would time the sharing of those CPUs
//! between threads (time slices), not coherence under load. A machine with no CPU
//! beyond the pair measures the idle values and says "skipped: why" for the curve.

use super::loaded_latency::{
    curve, curve_table, inject, ladder, series_points, CurvePoint, Traffic, MIN_INJECTOR_BYTES,
};
use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::clock::ticks;
use crate::harness::pair::PthreadMutex;
use crate::kernels::buffer::{Block, BlockTag, BufferError, Loan, Pages, HUGE_PAGE_BYTES};
use crate::memguard;
use crate::model::{Estimate, Finding, Measurement, Point, ProbeResult};
use crate::placement::pairs::{pairs, Relation};
use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The probe.
pub struct LoadedCoherence;

/// The relations measured, nearest first.
pub const RELATIONS: [Relation; 3] = [
    Relation::SmtSibling,
    Relation::OtherCore,
    Relation::OtherPackage,
];

/// How long the holder lets the waiter fall asleep in `lock` before it unlocks
/// (as `mutex::SETTLE_US`).
pub const SETTLE_NS: u64 = 50_000;

/// Longest wait for the partner at any point before the run gives up.
pub const PARTNER_TIMEOUT_NS: u64 = 2_000_000_000;

/// The rounds of a step: a 95 % interval for each figure.
pub const STEP_ROUNDS: Rounds = Rounds::REPEATED;

/// A measured pair and the CPUs left for traffic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairPlan {
    /// Where the second CPU sits relative to the first.
    pub relation: Relation,
    /// First CPU.
    pub a: u32,
    /// Second CPU.
    pub b: u32,
    /// Every other allowed CPU.
    pub injectors: Vec<u32>,
}

/// The pairs to measure and, for what cannot be, "name: skipped: why" (pure).
pub fn pair_plans(topo: &crate::topology::Topology) -> (Vec<PairPlan>, Vec<String>) {
    let allowed = topo.allowed_os_indices();
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for (relation, found) in pairs(topo) {
        if !RELATIONS.contains(&relation) {
            continue;
        }
        match found {
            Ok((Some(a), Some(b))) => {
                let injectors: Vec<u32> = allowed
                    .iter()
                    .copied()
                    .filter(|&c| c != a && c != b)
                    .collect();
                if injectors.is_empty() {
                    skipped.push(format!(
                        "loaded-coherence {} {a}↔{b} under traffic: skipped: the pair takes all {} allowed CPUs and none is left to make traffic; traffic on the pair's own CPUs would time their sharing (time slices), not coherence under load; the idle values are measured",
                        relation.name(),
                        allowed.len()
                    ));
                }
                out.push(PairPlan {
                    relation,
                    a,
                    b,
                    injectors,
                });
            }
            Ok(_) => {}
            Err(why) => skipped.push(format!(
                "loaded-coherence {}: skipped: {why}",
                relation.name()
            )),
        }
    }
    (out, skipped)
}

/// Relations a coarse plan (`loaded_latency::coarse`: more than 256 CPUs on a
/// thinned plan) measures: the SMT sibling's line stays in the core's own caches,
/// the least touched by memory traffic.
pub const COARSE_RELATIONS: [Relation; 2] = [Relation::OtherCore, Relation::OtherPackage];

/// The CPUs near `cpu`: those of its NUMA node, or of its package where the
/// topology knows no node (pure).
fn domain_of(topo: &crate::topology::Topology, cpu: u32) -> (Option<u32>, u32) {
    let pu = topo.pu(cpu);
    (
        pu.and_then(|p| p.numa_node),
        pu.map_or(u32::MAX, |p| p.package),
    )
}

/// Thin the pairs for a coarse plan: the SMT sibling pair left out, and each
/// pair's injectors only the other CPUs of the pair's own NUMA nodes (packages
/// where the topology has no nodes): the traffic on the memory and caches the
/// pair's line lives near, not the whole machine's. Returns what it left out as
/// "name: not measured" lines (pure).
pub fn thin_pairs(topo: &crate::topology::Topology, pairs: &mut Vec<PairPlan>) -> Vec<String> {
    let mut notes = Vec::new();
    pairs.retain(|p| {
        let keep = COARSE_RELATIONS.contains(&p.relation);
        if !keep {
            notes.push(format!(
                "loaded-coherence {} {}↔{}: not measured on a coarse plan (more than {} CPUs: the other-core and other-package pairs stand for it)",
                p.relation.name(),
                p.a,
                p.b,
                super::POWERS_OF_FOUR_ABOVE_CPUS
            ));
        }
        keep
    });
    for p in pairs.iter_mut() {
        let near = [domain_of(topo, p.a), domain_of(topo, p.b)];
        let all = p.injectors.len();
        p.injectors.retain(|&c| near.contains(&domain_of(topo, c)));
        if p.injectors.len() < all {
            notes.push(format!(
                "loaded-coherence {} {}↔{}: traffic from {} CPUs outside the pair's NUMA nodes (packages) not measured on a coarse plan ({} injectors near the pair)",
                p.relation.name(),
                p.a,
                p.b,
                all - p.injectors.len(),
                p.injectors.len()
            ));
        }
    }
    notes
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    pair: PairPlan,
    /// 0: idle; then the ladder's steps.
    load_step: usize,
    delay_turns: u32,
    loaded: bool,
    injector_bytes: u64,
    line_bytes: u64,
    round_trips: u64,
    wakeups: usize,
    duration_ns: u64,
    setup_bytes_per_run: u64,
    team_threads: usize,
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "loaded-coherence";

impl Probe for LoadedCoherence {
    type Params = CaseParams;
    type Facts = Vec<PairPlan>;

    /// As `loaded-latency`'s runs ([`super::loaded_latency::loaded_run_cost_s`]).
    fn run_cost_s(&self, p: &CaseParams, c: &super::cost::Cost) -> Option<f64> {
        Some(super::loaded_latency::loaded_run_cost_s(
            c,
            p.duration_ns,
            p.setup_bytes_per_run,
            p.team_threads,
        ))
    }

    fn id(&self) -> &'static str {
        ID
    }

    /// Hand-off and wake-up against bandwidth, as MLC draws latency.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::LoadedCurve]
    }

    fn title(&self) -> &'static str {
        "c2c CAS hand-off and mutex wake-up of representative pairs, idle and under memory traffic"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<PairPlan>>, ProbeError> {
        let (mut pairs, mut skipped) = pair_plans(&ctx.topo);
        let coarse = super::loaded_latency::coarse(ctx);
        if coarse {
            skipped.extend(thin_pairs(&ctx.topo, &mut pairs));
        }
        if pairs.is_empty() {
            return Err(ProbeError::Skipped(format!(
                "no pair of CPUs to measure ({})",
                skipped.join("; ")
            )));
        }
        let llc = ctx.topo.llc_bytes().unwrap_or(0);
        let most = pairs.iter().map(|p| p.injectors.len()).max().unwrap_or(0);
        let want = super::memory::team_block_bytes(
            ctx.profile.pick(32 << 20, 64 << 20, 256 << 20),
            llc,
            ctx.topo.llc_count().max(1),
            most.max(1),
        )
        .next_multiple_of(HUGE_PAGE_BYTES as u64);
        let inj = memguard::fit(
            "loaded-coherence injector blocks",
            want,
            MIN_INJECTOR_BYTES,
            most.max(1),
            HUGE_PAGE_BYTES as u64,
            false,
            &ctx.memory_available(),
        )
        .map_err(|e| ProbeError::Skipped(e.to_string()))?;
        let delays: Vec<u32> = ctx
            .profile
            .pick(vec![0], vec![1000, 100, 0], ladder(ctx.profile));
        let round_trips: u64 = ctx.profile.pick(2_000, 10_000, 50_000);
        let wakeups: usize = ctx.profile.pick(40, 150, 1000);
        let line_bytes = u64::from(ctx.topo.line_bytes_or_default());
        let mut cases = Vec::new();
        for p in &pairs {
            let mut steps = vec![(0usize, 0u32, false)];
            if !p.injectors.is_empty() {
                steps.extend(delays.iter().enumerate().map(|(k, &d)| (k + 1, d, true)));
            }
            let runs = (steps.len() * (STEP_ROUNDS.min + 1)) as u64;
            let made = inj.per_thread * p.injectors.len() as u64;
            let group = format!("loaded-coherence {} {}↔{}", p.relation.name(), p.a, p.b);
            for (step, delay, loaded) in steps {
                let params = CaseParams {
                    pair: p.clone(),
                    load_step: step,
                    delay_turns: delay,
                    loaded,
                    injector_bytes: inj.per_thread,
                    line_bytes,
                    round_trips,
                    wakeups,
                    // CAS round trips of ~200 ns, wake-ups of settle + ~20 µs.
                    duration_ns: round_trips * 400 + wakeups as u64 * (SETTLE_NS + 20_000),
                    setup_bytes_per_run: made * crate::stats::epochs::EPOCHS as u64 / runs.max(1),
                    team_threads: 2 + if loaded { p.injectors.len() } else { 0 },
                };
                let variant = format!("step {step}");
                let config = format!("{} delay {delay} loaded {loaded}", p.relation.name());
                cases.push(
                    Case::new(format!("{group} {variant}"), &params)
                        .compared(&group, variant, config)
                        .with_rounds(STEP_ROUNDS),
                );
            }
        }
        let mut plan = Plan::new(cases)
            .scaled_down(coarse.then(|| {
                format!(
                    "above {} CPUs: the other-core and other-package pairs only, each loaded by the other CPUs of its own NUMA nodes (packages)",
                    super::POWERS_OF_FOUR_ABOVE_CPUS
                )
            }))
            .param("pairs", &pairs)
            .param("delays_turns", &delays)
            .param(
                "traffic",
                if coarse {
                    "loaded-latency's read injectors on every allowed CPU of the pair's NUMA nodes (packages) but the pair's"
                } else {
                    "loaded-latency's read injectors on every allowed CPU but the pair's"
                },
            )
            .param("round_trips", round_trips)
            .param("wakeups_per_run", wakeups)
            .param("injector_bytes_per_thread", inj.per_thread)
            .skipping(skipped)
            .with_facts(pairs);
        if let Some(w) = inj.warning {
            plan = plan.warning(w);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let r = measure(ctx, &c)?;
        let rel = c.pair.relation.name();
        let x = c.load_step as f64;
        let mut points = vec![
            Point::new(format!("cas/{rel}"), "load_step", x, "ns", r.cas_ns),
            Point::new(format!("wake/{rel}"), "load_step", x, "ns", r.wake_ns),
        ];
        if let Some(bw) = r.bytes_per_s {
            points.push(Point::new(
                format!("bandwidth/{rel}"),
                "load_step",
                x,
                "bytes_per_s",
                bw,
            ));
        }
        Ok(Measurement::points(points))
    }

    fn analyze(&self, result: &ProbeResult, pairs: &Vec<PairPlan>, _ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        for p in pairs {
            let rel = p.relation.name();
            let bw = series_points(result, &format!("bandwidth/{rel}"));
            for (metric, words) in [("cas", "CAS hand-off"), ("wake", "mutex wake-up")] {
                let all = series_points(result, &format!("{metric}/{rel}"));
                let idle = all.iter().find(|(x, _)| *x == 0.0).map(|p| p.1);
                let loaded: Vec<(f64, Estimate)> =
                    all.iter().copied().filter(|(x, _)| *x > 0.0).collect();
                let c = curve(idle, &loaded, &bw);
                let what = format!("{words}, {rel} {}↔{}", p.a, p.b);
                if c.len() > 1 {
                    out.tables.push(curve_table(&what, &c));
                }
                out.findings.extend(loaded_findings(&what, &c));
            }
        }
        out
    }
}

/// The idle value, and the value at the heaviest traffic beside it (pure).
pub fn loaded_findings(what: &str, c: &[CurvePoint]) -> Vec<Finding> {
    let mut out = Vec::new();
    let idle = c.iter().find(|p| p.step == 0.0);
    if let Some(i) = idle {
        out.push(Finding::Value {
            what: format!("{what}: idle"),
            unit: "ns".into(),
            value: i.latency,
            context: Some("no traffic".into()),
        });
    }
    let heaviest = c
        .iter()
        .filter(|p| p.step > 0.0)
        .max_by(|a, b| a.bandwidth.value.total_cmp(&b.bandwidth.value));
    if let (Some(h), Some(i)) = (heaviest, idle) {
        out.push(Finding::Value {
            what: format!("{what}: under the heaviest traffic"),
            unit: "ns".into(),
            value: h.latency,
            context: Some(format!(
                "{:.2}× idle, with the other CPUs drawing {}",
                h.latency.value / i.latency.value.max(f64::MIN_POSITIVE),
                crate::units::fmt_value("bytes_per_s", h.bandwidth.value)
            )),
        });
    }
    out
}

/// What one run gave.
struct PairRun {
    cas_ns: f64,
    wake_ns: f64,
    bytes_per_s: Option<f64>,
}

/// The pair's shared lines.
#[derive(Default)]
struct Shared {
    cas: CachePadded<AtomicU64>,
    go: CachePadded<AtomicU64>,
    ready: CachePadded<AtomicU64>,
    woke: CachePadded<AtomicU64>,
    abort: AtomicBool,
}

/// What a worker returns.
enum Done {
    /// The pair's first thread: CAS ticks and wake-up ticks per sample.
    Holder(Option<(u64, Vec<u64>)>),
    /// The pair's second thread.
    Waiter,
    /// An injector: lines touched and its ticks.
    Injector(u64, u64),
    /// An injector that could not run: its block failed, or it had none.
    Failed(ProbeError),
}

fn measure(ctx: &mut RunCtx, c: &CaseParams) -> Result<PairRun, ProbeError> {
    let mut cpus = vec![Some(c.pair.a), Some(c.pair.b)];
    if c.loaded {
        cpus.extend(c.pair.injectors.iter().map(|&i| Some(i)));
    }
    let shared = Shared::default();
    let mutex = PthreadMutex::new();
    let stop = AtomicBool::new(false);
    let limit = (PARTNER_TIMEOUT_NS as f64 / ctx.plan.clock.ticks_to_ns(1).max(1e-9)) as u64;
    let settle = (SETTLE_NS as f64 / ctx.plan.clock.ticks_to_ns(1).max(1e-9)) as u64;
    let words = (c.injector_bytes / 8) as usize;
    let tag = BlockTag {
        holds: "injector lines",
        words,
        pages: Pages::Huge,
        node: Some(0),
    };
    let stride = (c.line_bytes / 8).max(1) as usize;
    let cache = std::mem::take(&mut ctx.blocks);
    let setup = |t: usize| -> Option<Result<Loan<'_>, BufferError>> {
        (t >= 2).then(|| {
            Loan::take_or_make(Some(&cache), t, tag, || {
                Block::new(words, Pages::Huge, t as u64)
            })
        })
    };
    let kernel = |t: usize, held: &mut Option<Result<Loan<'_>, BufferError>>| -> Done {
        match (t, held) {
            (0, _) => {
                let r = holder(&shared, &mutex, c, settle, limit);
                stop.store(true, Ordering::Release);
                Done::Holder(r)
            }
            (1, _) => {
                waiter(&shared, &mutex, c, limit);
                Done::Waiter
            }
            (_, Some(Ok(loan))) => {
                let t0 = ticks();
                let n = inject(
                    loan.block_mut().as_mut_slice(),
                    stride,
                    Traffic::Read,
                    c.delay_turns,
                    &stop,
                );
                Done::Injector(n, ticks().wrapping_sub(t0))
            }
            (_, Some(Err(e))) => Done::Failed(ProbeError::step("loaded-coherence", e.clone())),
            (_, None) => Done::Failed(ProbeError::step(
                "loaded-coherence",
                "an injector without a block",
            )),
        }
    };
    let out = ctx.team_uncounted(&cpus, 1, setup, kernel);
    ctx.blocks = cache;
    let out = out?;
    let clock = &ctx.plan.clock;
    let (mut pair, mut bw) = (None, 0.0);
    for r in out.results.into_iter().filter_map(|r| r.into_iter().next()) {
        match r {
            Done::Failed(e) => return Err(e),
            Done::Holder(h) => pair = h,
            Done::Waiter => {}
            Done::Injector(lines, t) => {
                bw += (lines * c.line_bytes) as f64 / (clock.ticks_to_ns(t).max(1.0) * 1e-9)
            }
        }
    }
    let (cas, wakes) = pair.ok_or_else(|| {
        ProbeError::GaveUp(format!(
            "{}↔{}: the partner did not answer within {} s",
            c.pair.a,
            c.pair.b,
            PARTNER_TIMEOUT_NS / 1_000_000_000
        ))
    })?;
    let wake_ns: Vec<f64> = wakes.iter().map(|&w| clock.ticks_to_ns(w)).collect();
    Ok(PairRun {
        cas_ns: clock.ticks_to_ns(cas) / (2 * c.round_trips.max(1)) as f64,
        wake_ns: crate::stats::median(&wake_ns),
        bytes_per_s: c.loaded.then_some(bw),
    })
}

/// Spin until `cond` or `limit` ticks pass (false), yielding now and then so a
/// partner on the same CPU (a refused pin) can run.
fn spin_until(limit: u64, abort: &AtomicBool, mut cond: impl FnMut() -> bool) -> bool {
    let start = ticks();
    let mut n = 0u32;
    while !cond() {
        n = n.wrapping_add(1);
        if n % 4096 == 0 {
            if abort.load(Ordering::Relaxed) || ticks().wrapping_sub(start) > limit {
                return false;
            }
            if n % (1 << 18) == 0 {
                std::thread::yield_now();
            }
        }
        std::hint::spin_loop();
    }
    true
}

/// The pair's first thread: the CAS bounce, then the wake-up samples (it holds the
/// lock and unlocks while the waiter sleeps); `None` when the partner failed.
fn holder(
    sh: &Shared,
    m: &PthreadMutex,
    c: &CaseParams,
    settle: u64,
    limit: u64,
) -> Option<(u64, Vec<u64>)> {
    let t0 = ticks();
    for k in 0..c.round_trips {
        let ok = spin_until(limit, &sh.abort, || {
            sh.cas
                .compare_exchange(2 * k, 2 * k + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        if !ok {
            sh.abort.store(true, Ordering::Release);
            return None;
        }
    }
    let cas = ticks().wrapping_sub(t0);
    let mut wakes = Vec::with_capacity(c.wakeups);
    for k in 1..=c.wakeups as u64 {
        m.lock();
        sh.woke.store(0, Ordering::Release);
        sh.go.store(k, Ordering::Release);
        if !spin_until(limit, &sh.abort, || sh.ready.load(Ordering::Acquire) == k) {
            m.unlock();
            sh.abort.store(true, Ordering::Release);
            return None;
        }
        let t = ticks();
        while ticks().wrapping_sub(t) < settle {
            std::thread::yield_now();
        }
        let t0 = ticks();
        m.unlock();
        if !spin_until(limit, &sh.abort, || sh.woke.load(Ordering::Acquire) != 0) {
            sh.abort.store(true, Ordering::Release);
            return None;
        }
        wakes.push(sh.woke.load(Ordering::Acquire).wrapping_sub(t0));
    }
    Some((cas, wakes))
}

/// The pair's second thread: its side of the bounce, then a sleeping `lock` per
/// sample, stamping when it holds the lock.
fn waiter(sh: &Shared, m: &PthreadMutex, c: &CaseParams, limit: u64) {
    for k in 0..c.round_trips {
        let ok = spin_until(limit, &sh.abort, || {
            sh.cas
                .compare_exchange(2 * k + 1, 2 * k + 2, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        if !ok {
            return;
        }
    }
    for k in 1..=c.wakeups as u64 {
        if !spin_until(limit, &sh.abort, || sh.go.load(Ordering::Acquire) == k) {
            return;
        }
        sh.ready.store(k, Ordering::Release);
        m.lock();
        let t = ticks();
        m.unlock();
        sh.woke.store(t.max(1), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loaded path (pair, injector, bandwidth) runs end to end on any machine
    /// with two CPUs: the pair on the first two and one injector sharing the first
    /// CPU. The plan never does that (the figures time the CPU's sharing, so none is
    /// checked); it is here so the code that a 2-CPU machine always skips still runs
    /// in the tests. Structure only: finite, positive figures and a bandwidth.
    #[test]
    fn the_loaded_path_runs_with_an_injector_sharing_a_cpu() {
        let topo = crate::topology::detect().expect("the test machine's topology");
        let allowed = topo.allowed_os_indices();
        let [a, b, ..] = allowed[..] else {
            eprintln!("one allowed CPU: no pair to run");
            return;
        };
        let plan = PlanCtx {
            topo,
            clock: crate::clock::Clock::calibrate(std::time::Duration::from_millis(10)),
            profile: crate::model::Profile::Quick,
            overrides: Default::default(),
            budget_s: 30.0,
        };
        let mut ctx = RunCtx {
            plan: &plan,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(30),
            warnings: Vec::new(),
            counted: Vec::new(),
            blocks: Default::default(),
        };
        let c = CaseParams {
            pair: PairPlan {
                relation: Relation::OtherCore,
                a,
                b,
                injectors: vec![a],
            },
            load_step: 1,
            delay_turns: 0,
            loaded: true,
            injector_bytes: MIN_INJECTOR_BYTES,
            line_bytes: 64,
            round_trips: 200,
            wakeups: 3,
            duration_ns: 0,
            setup_bytes_per_run: 0,
            team_threads: 3,
        };
        let r = measure(&mut ctx, &c).expect("the loaded run completes");
        assert!(r.cas_ns.is_finite() && r.cas_ns > 0.0, "{}", r.cas_ns);
        assert!(r.wake_ns.is_finite() && r.wake_ns > 0.0, "{}", r.wake_ns);
        assert!(r.bytes_per_s.is_some_and(|bw| bw.is_finite() && bw > 0.0));
    }

    #[test]
    fn a_two_cpu_machine_measures_idle_and_says_why_not_under_traffic() {
        let two = crate::topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        let (pairs, skipped) = pair_plans(&two);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].relation, Relation::OtherCore);
        assert!(pairs[0].injectors.is_empty());
        assert!(
            skipped
                .iter()
                .any(|s| s.contains("under traffic: skipped: the pair takes all 2")),
            "{skipped:?}"
        );
        assert!(skipped.iter().any(|s| s.contains("smt-sibling: skipped")));
        let one = crate::topology::from_synthetic("pack:1 core:1 pu:1").unwrap();
        let (pairs, skipped) = pair_plans(&one);
        assert!(pairs.is_empty());
        assert!(
            skipped.iter().all(|s| s.contains("skipped: ")),
            "{skipped:?}"
        );
    }

    #[test]
    fn a_bigger_machine_loads_every_cpu_but_the_pair() {
        let t = crate::topology::from_synthetic("pack:2 core:2 pu:2").unwrap();
        let (pairs, _) = pair_plans(&t);
        assert_eq!(pairs.len(), 3);
        for p in &pairs {
            assert_eq!(p.injectors.len(), 6);
            assert!(!p.injectors.contains(&p.a) && !p.injectors.contains(&p.b));
        }
    }

    #[test]
    fn findings_put_the_loaded_value_beside_the_idle_one() {
        let e = |v: f64| Estimate {
            value: v,
            lo: v * 0.95,
            hi: v * 1.05,
            n: 6,
        };
        let c = curve(
            Some(e(50.0)),
            &[(1.0, e(60.0)), (2.0, e(120.0))],
            &[(1.0, e(1e9)), (2.0, e(20e9))],
        );
        let f = loaded_findings("CAS hand-off, other-core 0↔1", &c);
        assert_eq!(f.len(), 2);
        assert!(
            matches!(&f[1], Finding::Value { value, context: Some(ctx), .. }
            if value.value == 120.0 && ctx.contains("2.40× idle"))
        );
        // Idle only (2 CPUs): the idle value alone.
        let idle_only = curve(Some(e(50.0)), &[], &[]);
        assert_eq!(loaded_findings("w", &idle_only).len(), 1);
    }
}
