//! `loaded-latency`: memory latency as a function of the bandwidth the other CPUs
//! draw (Intel MLC `--loaded_latency`; the Mess benchmark, MICRO 2024).
//!
//! One thread (the chaser) walks a dependent pointer chase — the memory probe's
//! kernel (`kernels::chase`), a random cyclic permutation with one link per cache
//! line — over a buffer of 4× the last-level cache (the memory probe's largest
//! working set), with transparent huge pages requested so the figure is the
//! memory's and not the page walks'. Meanwhile every other CPU of its NUMA node (the
//! injectors) streams over a block of its own, one cache line after another, and
//! between two lines spins a delay of `delay` turns of a one-instruction loop (about
//! a core cycle each, [`delay_loop`]), as MLC and Mess space their traffic. The ladder of delays goes
//! from light traffic to none at all (saturation); its first step is the idle machine.
//! Two kinds of traffic: read-only (a load per line), and a read/write mix (a load
//! and a store to the same line: the line is read, dirtied and written back, 1:1).
//!
//! Both axes are measured: the chaser's ns per step, and the injectors' bandwidth —
//! the lines each touched × bytes per line over its own time, summed (read: 64 B
//! per line; read/write: 128 B, the line read and written back), never the nominal
//! rate of the delay. Each step is one case repeated in the runner's rounds, so both
//! its latency and its bandwidth carry a 95 % interval; `finish` pairs them into the
//! curve (a table per traffic kind) and names its knee and its saturation bandwidth.
//!
//! Cross-check: the idle step is also measured with default pages
//! (`latency/idle-default-pages`), the memory probe's chase at the same size and
//! page advice (`ws-latency/1t` at its largest working set).
//!
//! On a machine of several NUMA nodes each node is measured: chaser, injectors and
//! their memory (first touched by the thread that uses it) on that node.

use super::memory::{team_block_bytes, DEFAULT_LINE_BYTES, WS_FALLBACK_MAX_BYTES, WS_LLC_FACTOR};
use super::{Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::clock::ticks;
use crate::kernels::buffer::{Block, BlockTag, Loan, Pages, HUGE_PAGE_BYTES};
use crate::kernels::chase::{build_chase, chase_from};
use crate::memguard;
use crate::model::{Estimate, Finding, Measurement, Point, ProbeResult, Profile, Table};
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

/// The probe.
pub struct LoadedLatency;

/// Lines an injector touches between two looks at the stop flag.
pub const LINES_PER_CHECK: u64 = 256;

/// A point's latency lies beyond the knee when its whole interval is above idle ×
/// (1 + this): MLC's and Mess's curves stay flat within about 20 % of idle until
/// the bandwidth nears its limit, then bend up.
pub const KNEE_RISE: f64 = 0.2;

/// Bandwidth counts as saturated when the heaviest step's interval overlaps the
/// one before it, or lies within this fraction of it: less traffic delay gave no
/// more bandwidth.
pub const SATURATION_GAIN: f64 = 0.05;

/// Smallest injector block.
pub const MIN_INJECTOR_BYTES: u64 = 4 << 20;

/// The rounds of a step: enough samples for a 95 % interval on both axes, after an
/// untimed run that brings injectors and chaser to speed.
pub const STEP_ROUNDS: Rounds = Rounds::REPEATED;

/// What the injectors do per cache line.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Traffic {
    /// One load per line.
    Read,
    /// A load and a store to the same word: the line is read, dirtied, written back.
    ReadWrite,
}

impl Traffic {
    /// Both kinds, in the order measured.
    pub const ALL: [Traffic; 2] = [Traffic::Read, Traffic::ReadWrite];

    /// Series variant.
    pub fn name(self) -> &'static str {
        match self {
            Traffic::Read => "read",
            Traffic::ReadWrite => "read-write",
        }
    }

    /// Bytes of memory traffic one touched line of `line_bytes` makes.
    pub fn bytes_per_line(self, line_bytes: u64) -> u64 {
        match self {
            Traffic::Read => line_bytes,
            Traffic::ReadWrite => 2 * line_bytes,
        }
    }
}

/// The delays of the ladder, in turns of [`delay_loop`] (about a core cycle each)
/// between two lines, from the lightest traffic to none (saturation); MLC's
/// default ladder runs from 20,000 cycles to 0 over 19 steps, these take every
/// second or third of its decades. The idle machine is step 0, before these.
pub fn ladder(profile: Profile) -> Vec<u32> {
    profile.pick(
        vec![1000, 100, 0],
        vec![10_000, 2000, 1000, 500, 250, 100, 50, 0],
        vec![
            20_000, 10_000, 5000, 2000, 1000, 500, 300, 200, 100, 50, 25, 0,
        ],
    )
}

/// The nominal per-injector rate of a delay at `hz`, in lines per second (the pure
/// arithmetic of the ladder; the run records the measured rate, never this):
/// `None` for a delay of 0, whose rate is what the memory gives.
pub fn nominal_lines_per_s(delay: u32, hz: f64) -> Option<f64> {
    (delay > 0 && hz > 0.0).then(|| hz / delay as f64)
}

/// Spin `turns` turns of a one-instruction dependent loop (`dec` + `jnz` on
/// x86_64, `subs` + `b.ne` on aarch64: one turn per core cycle on cores that take
/// a taken branch per cycle), the injectors' delay between two lines; MLC's delay
/// is such a loop too. Elsewhere a loop the compiler cannot remove.
#[inline(never)]
pub fn delay_loop(turns: u64) {
    if turns == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic on one operand that starts ≥ 1 and counts down to
    // 0; no memory, no stack; `dec` changes flags, which asm! assumes.
    unsafe {
        core::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) turns => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as on x86_64: one register counted down from ≥ 1 to 0.
    unsafe {
        core::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) turns => _, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for k in 0..turns {
        black_box(k);
    }
}

/// The CPUs of one measured node: the chaser and its injectors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeTeam {
    /// NUMA node, `None` on a machine of one node.
    pub node: Option<u32>,
    /// The chaser's CPU.
    pub chaser: u32,
    /// The injectors' CPUs (every other allowed CPU of the node).
    pub injectors: Vec<u32>,
}

/// The teams to measure: one per NUMA node with at least two allowed CPUs, or the
/// whole machine on one node; the skipped nodes as "name: skipped: why".
pub fn node_teams(topo: &crate::topology::Topology) -> (Vec<NodeTeam>, Vec<String>) {
    let allowed = topo.allowed_os_indices();
    let mut by_node: std::collections::BTreeMap<Option<u32>, Vec<u32>> = Default::default();
    for &c in &allowed {
        let node = if topo.numa_nodes > 1 {
            topo.pu(c).and_then(|p| p.numa_node)
        } else {
            None
        };
        by_node.entry(node).or_default().push(c);
    }
    let (mut teams, mut skipped) = (Vec::new(), Vec::new());
    for (node, cpus) in by_node {
        let name = node.map_or("loaded-latency".to_string(), |n| {
            format!("loaded-latency on node {n}")
        });
        match cpus.split_first() {
            Some((&chaser, rest)) if !rest.is_empty() => teams.push(NodeTeam {
                node,
                chaser,
                injectors: rest.to_vec(),
            }),
            _ => skipped.push(format!(
                "{name}: skipped: one allowed CPU, none left to inject traffic"
            )),
        }
    }
    (teams, skipped)
}

/// Node teams a thinned plan measures: the first and the last node (the ends
/// of the firmware's numbering, often the two packages); a coarse plan
/// ([`coarse`]) the first only.
pub const THINNED_NODE_TEAMS: usize = 2;

/// Whether the plan is coarse: thinned ([`PlanCtx::thinned`]) on a machine of
/// more than [`super::POWERS_OF_FOUR_ABOVE_CPUS`] CPUs, where the thread ladders
/// step by four. The loaded probes thin further there, so that the default suite
/// of a 2,048-strand machine keeps within its ten minutes (`tests/plan.rs`).
pub fn coarse(ctx: &PlanCtx) -> bool {
    ctx.thinned() && ctx.cpus() > super::POWERS_OF_FOUR_ABOVE_CPUS
}

/// The ladder of a coarse plan: light traffic, heavy traffic, none (the quick
/// ladder); read/write traffic at its last step (saturation) only.
pub const COARSE_LADDER: [u32; 3] = [1000, 100, 0];

/// Chase steps per run on a coarse plan: half the default's, about 33 ms at the
/// 250 ns a step the plan assumes ([`PLANNED_STEP_NS`]).
pub const COARSE_CHASE_STEPS: u64 = 1 << 17;

/// On a thinned plan, keep the first and the last node team (the first only on a
/// coarse plan); the others, as "name: not measured on a thinned plan" lines, are
/// returned.
fn thin_teams(teams: &mut Vec<NodeTeam>, thinned: bool, coarse: bool) -> Vec<String> {
    let keep_n = if coarse { 1 } else { THINNED_NODE_TEAMS };
    if !thinned || teams.len() <= keep_n {
        return Vec::new();
    }
    let last = teams.len() - 1;
    let stand_in = if coarse {
        "the first node stands for the rest on a machine of this size"
    } else {
        "the first and last nodes stand for the rest"
    };
    let mut dropped = Vec::new();
    let mut k = 0;
    teams.retain(|t| {
        let keep = k == 0 || (k == last && !coarse);
        if !keep {
            dropped.push(format!(
                "loaded-latency on node {}: not measured on a thinned plan ({stand_in})",
                t.node.map_or("?".to_string(), |n| n.to_string())
            ));
        }
        k += 1;
        keep
    });
    dropped
}

/// The ladder's delays a plan measures under each kind of traffic, and what a
/// coarse plan leaves out, as "name: not measured" lines.
pub fn ladders(profile: Profile, coarse: bool) -> (Vec<u32>, Vec<u32>, Vec<String>) {
    if !coarse {
        let all = ladder(profile);
        return (all.clone(), all, Vec::new());
    }
    let full = ladder(profile);
    let read = COARSE_LADDER.to_vec();
    let left: Vec<String> = full
        .iter()
        .filter(|d| !read.contains(d))
        .map(u32::to_string)
        .collect();
    let mut notes = vec![format!(
        "loaded-latency at delays {} turns: not measured on a coarse plan (more than {} CPUs: the ladder is {})",
        left.join(", "),
        super::POWERS_OF_FOUR_ABOVE_CPUS,
        read.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    )];
    notes.push(format!(
        "loaded-latency read-write traffic at delays {} turns: not measured on a coarse plan (at saturation, delay 0, only)",
        read.iter().filter(|&&d| d > 0).map(u32::to_string).collect::<Vec<_>>().join(", ")
    ));
    (read, vec![0], notes)
}

#[derive(Debug, Clone, Serialize)]
struct CaseParams {
    team: NodeTeam,
    /// `None`: the idle machine.
    traffic: Option<Traffic>,
    delay_iters: u32,
    /// x of the curve: 0 idle, then the ladder's steps.
    load_step: usize,
    /// Huge pages requested for the chase buffer.
    huge: bool,
    chase_bytes: u64,
    injector_bytes: u64,
    line_bytes: u64,
    warm_steps: u64,
    steps: u64,
    /// The plan's guess of one run, for `corescope plan`.
    duration_ns: u64,
    /// Bytes first touched per run (the case's blocks over its runs), for the plan.
    setup_bytes_per_run: u64,
    /// Threads of the run's team (the chaser, and the injectors under traffic).
    team_threads: usize,
}

impl CaseParams {
    /// `latency` / `bandwidth` with the node, for series names.
    fn what(&self, base: &str) -> String {
        match self.team.node {
            Some(n) => format!("{base}-node{n}"),
            None => base.to_string(),
        }
    }

    fn variant(&self) -> &'static str {
        match (self.traffic, self.huge) {
            (Some(t), _) => t.name(),
            (None, true) => "idle",
            (None, false) => "idle-default-pages",
        }
    }
}

/// The sizes every case of the plan shares.
struct Sizes {
    chase_bytes: u64,
    injector_bytes: u64,
    line_bytes: u64,
    steps: u64,
}

/// One team's cases: idle (huge pages, and default pages as the memory probe's
/// chase), then every step of the ladder under each kind of traffic. They form one
/// group, measured in rounds of every case in rotated order (drift hits every step
/// alike) that keep the team's blocks between runs; each case its own configuration.
/// `delays` are the read traffic's; the read/write traffic's `rw_delays` (some of
/// them) take the step of the same delay, so both curves pair by step.
fn team_cases(team: &NodeTeam, sizes: &Sizes, delays: &[u32], rw_delays: &[u32]) -> Vec<Case> {
    let cases_n = (2 + delays.len() + rw_delays.len()) as u64;
    let runs = (STEP_ROUNDS.min + usize::from(STEP_ROUNDS.warmup)) as u64 * cases_n;
    // Blocks made once per epoch of the group: two chase buffers and the injectors'.
    // A chase buffer costs [`CHASE_BUILD_TOUCHES`] first touches (its shuffle).
    let made = 2 * CHASE_BUILD_TOUCHES * sizes.chase_bytes
        + sizes.injector_bytes * team.injectors.len() as u64;
    let base = CaseParams {
        team: team.clone(),
        traffic: None,
        delay_iters: 0,
        load_step: 0,
        huge: true,
        chase_bytes: sizes.chase_bytes,
        injector_bytes: sizes.injector_bytes,
        line_bytes: sizes.line_bytes,
        warm_steps: sizes.steps / 4,
        steps: sizes.steps,
        duration_ns: (sizes.steps + sizes.steps / 4) * PLANNED_STEP_NS,
        setup_bytes_per_run: made * crate::stats::epochs::EPOCHS as u64 / runs.max(1),
        team_threads: 1,
    };
    let mut params = vec![
        base.clone(),
        CaseParams {
            huge: false,
            ..base.clone()
        },
    ];
    for traffic in Traffic::ALL {
        let these = match traffic {
            Traffic::Read => delays,
            Traffic::ReadWrite => rw_delays,
        };
        for (k, &delay) in these.iter().enumerate() {
            let step = delays.iter().position(|&d| d == delay).unwrap_or(k);
            params.push(CaseParams {
                traffic: Some(traffic),
                delay_iters: delay,
                load_step: step + 1,
                team_threads: 1 + team.injectors.len(),
                ..base.clone()
            });
        }
    }
    let group = match team.node {
        Some(n) => format!("loaded-latency on node {n}"),
        None => "loaded-latency".to_string(),
    };
    params
        .into_iter()
        .map(|p| {
            let variant = format!("{} step {}", p.variant(), p.load_step);
            let config = format!("{} delay {}", p.variant(), p.delay_iters);
            Case::new(format!("{} {variant}", p.what("latency")), &p)
                .compared(&group, variant, config)
                .with_rounds(STEP_ROUNDS)
        })
        .collect()
}

/// What a thinned plan leaves out, appended to [`PlanCtx::thinned_note`].
fn scaled_down_words(kept: usize, dropped: usize, coarse: bool) -> String {
    let nodes = match (dropped > 0, coarse) {
        (false, _) => String::new(),
        (true, true) => format!(
            "; the first of {} NUMA nodes stands for the rest",
            kept + dropped
        ),
        (true, false) => format!(
            "; the first and last of {} NUMA nodes stand for the rest",
            kept + dropped
        ),
    };
    let ladder = if coarse {
        format!(
            "; above {} CPUs the ladder is {:?} turns, read/write traffic at saturation only, {} chase steps per run",
            super::POWERS_OF_FOUR_ABOVE_CPUS,
            COARSE_LADDER,
            COARSE_CHASE_STEPS
        )
    } else {
        String::new()
    };
    nodes + &ladder
}

/// One run of a loaded probe's case for `corescope plan` (the three probes under
/// load price their runs alike): the duration its plan gives it, its share of its
/// group's first touches (`setup_bytes_per_run`) and its team's creation
/// (`team_threads`).
pub fn loaded_run_cost_s(c: &super::cost::Cost) -> Option<f64> {
    Some(
        c.num("duration_ns")? * 1e-9
            + c.bytes_s(c.num("setup_bytes_per_run").unwrap_or(0.0))
            + c.spawn_s(c.num("team_threads").unwrap_or(2.0).max(1.0)),
    )
}

/// Latency the plan assumes per chase step when it prices a run: DRAM under load
/// (240–260 ns idle on the 2-vCPU KVM guest this was written on).
const PLANNED_STEP_NS: u64 = 250;

/// What building a chase buffer costs the plan, in first touches of it: the
/// shuffle's random reads and writes over 2M slots of a 128 MiB buffer took about
/// 7 times its first touch on the 2-vCPU guest.
const CHASE_BUILD_TOUCHES: u64 = 8;

impl Probe for LoadedLatency {
    /// Its chase's duration, its blocks' first touch, its team ([`loaded_run_cost_s`]).
    fn run_cost_s(&self, c: &super::cost::Cost) -> Option<f64> {
        loaded_run_cost_s(c)
    }

    fn id(&self) -> &'static str {
        "loaded-latency"
    }

    fn title(&self) -> &'static str {
        "memory latency vs the bandwidth the other CPUs draw (read, read/write), knee and saturation"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let (mut teams, mut skipped) = node_teams(&ctx.topo);
        let coarse = coarse(ctx);
        let thinned = thin_teams(&mut teams, ctx.thinned(), coarse);
        skipped.extend(thinned.iter().cloned());
        if teams.is_empty() {
            return Err(ProbeError::Skipped(
                "one allowed CPU: no CPU left to inject traffic beside the chaser".into(),
            ));
        }
        let llc = ctx.topo.llc_bytes().unwrap_or(0);
        let chase_want = if llc > 0 {
            WS_LLC_FACTOR.saturating_mul(llc)
        } else {
            WS_FALLBACK_MAX_BYTES
        };
        let avail = ctx.memory_available();
        let granule = HUGE_PAGE_BYTES as u64;
        let chase = memguard::fit(
            "loaded-latency chase buffer",
            chase_want.next_multiple_of(granule),
            2 * llc.max(MIN_INJECTOR_BYTES),
            2,
            granule,
            false,
            &avail,
        )
        .map_err(|e| ProbeError::Skipped(e.to_string()))?;
        let most_injectors = teams.iter().map(|t| t.injectors.len()).max().unwrap_or(1);
        let requested: u64 = ctx.profile.pick(32 << 20, 64 << 20, 256 << 20);
        let llcs = ctx.topo.llc_count().max(1);
        let inj_want = team_block_bytes(requested, llc, llcs, most_injectors)
            .max(MIN_INJECTOR_BYTES)
            .next_multiple_of(granule);
        let rest = memguard::Available {
            bytes: avail.bytes.saturating_sub(4 * chase.per_thread),
            source: format!("{} less the chase buffer", avail.source),
        };
        let inj = memguard::fit(
            "loaded-latency injector blocks",
            inj_want,
            MIN_INJECTOR_BYTES,
            most_injectors,
            granule,
            false,
            &rest,
        )
        .map_err(|e| ProbeError::Skipped(e.to_string()))?;
        let line_bytes = ctx
            .topo
            .line_bytes()
            .map(u64::from)
            .unwrap_or(DEFAULT_LINE_BYTES as u64)
            .max(8);
        let steps: u64 = if coarse {
            COARSE_CHASE_STEPS
        } else {
            ctx.profile.pick(1 << 15, 1 << 18, 1 << 20)
        };
        let (delays, rw_delays, left_out) = ladders(ctx.profile, coarse);
        skipped.extend(left_out);
        let sizes = Sizes {
            chase_bytes: chase.per_thread,
            injector_bytes: inj.per_thread,
            line_bytes,
            steps,
        };
        let cases: Vec<Case> = teams
            .iter()
            .flat_map(|t| team_cases(t, &sizes, &delays, &rw_delays))
            .collect();
        let mut plan = Plan::new(cases)
            .scaled_down(ctx.thinned_note(&scaled_down_words(
                teams.len(),
                thinned.len(),
                coarse,
            )))
            .param("teams", &teams)
            .param("delays_turns", &delays)
            .param("read_write_delays_turns", &rw_delays)
            .param("delay_unit", "turns of a dec/jnz loop (about one core cycle each) between two cache lines")
            .param("chase_bytes", chase.per_thread)
            .param("chase_pages", "MADV_HUGEPAGE (idle-default-pages: no advice, as the memory probe's chase)")
            .param("injector_bytes_per_thread", inj.per_thread)
            .param("line_bytes", line_bytes)
            .param("chase_steps", steps)
            .param("warm_steps", steps / 4)
            .param("bandwidth", "measured: lines touched x bytes per line (read 1 line, read/write 2: read and written back) over each injector's own time, summed over injectors")
            .param("knee_rise", KNEE_RISE)
            .param("memory_available_bytes", avail.bytes)
            .skipping(skipped)
            .with_facts(teams);
        for w in [chase.warning, inj.warning].into_iter().flatten() {
            plan = plan.warning(w);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.typed()?;
        let (lat_ns, bw) = measure_step(ctx, &c)?;
        let x = c.load_step as f64;
        let mut points = vec![Point::new(
            format!("{}/{}", c.what("latency"), c.variant()),
            "load_step",
            x,
            "ns",
            lat_ns,
        )];
        if let Some(bw) = bw {
            points.push(Point::new(
                format!("{}/{}", c.what("bandwidth"), c.variant()),
                "load_step",
                x,
                "bytes_per_s",
                bw,
            ));
        }
        Ok(Measurement::points(points))
    }

    fn finish(&self, result: &mut ProbeResult, plan: &Plan, _ctx: &PlanCtx) {
        let teams: Vec<NodeTeam> = plan.facts::<Vec<NodeTeam>>().cloned().unwrap_or_default();
        for team in &teams {
            let tag = |base: &str| match team.node {
                Some(n) => format!("{base}-node{n}"),
                None => base.to_string(),
            };
            let (lat, bw) = (tag("latency"), tag("bandwidth"));
            let idle = result.estimate(&format!("{lat}/idle"), 0.0);
            if let (Some(i), Some(d)) = (
                idle,
                result.estimate(&format!("{lat}/idle-default-pages"), 0.0),
            ) {
                result.findings.push(Finding::Value {
                    what: format!("{lat}: idle, default pages (the memory probe's chase)"),
                    unit: "ns".into(),
                    value: d,
                    context: Some(format!(
                        "huge pages requested: {}",
                        crate::units::fmt_value("ns", i.value)
                    )),
                });
            }
            for traffic in Traffic::ALL {
                let l = series_points(result, &format!("{lat}/{}", traffic.name()));
                let b = series_points(result, &format!("{bw}/{}", traffic.name()));
                let c = curve(idle, &l, &b);
                if c.len() < 2 {
                    continue;
                }
                let what = format!("{lat}, {} traffic", traffic.name());
                result.tables.push(curve_table(&what, &c));
                result.findings.extend(curve_findings(&what, &c));
            }
        }
    }
}

/// Every point of series `name` as (x, estimate); none when it is missing.
pub fn series_points(result: &ProbeResult, name: &str) -> Vec<(f64, Estimate)> {
    result.series(name).map_or(Vec::new(), |s| {
        (0..s.x.len())
            .filter_map(|i| Some((s.x[i], s.estimate(i)?)))
            .collect()
    })
}

/// One step of the measured curve: both axes with their intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// The ladder step (0 idle).
    pub step: f64,
    /// The injectors' measured bandwidth (0 at idle).
    pub bandwidth: Estimate,
    /// The chaser's ns per step.
    pub latency: Estimate,
}

/// The curve from the idle latency and the loaded steps' latency and bandwidth,
/// paired by step (a step missing either is left out), in ladder order.
pub fn curve(
    idle: Option<Estimate>,
    latency: &[(f64, Estimate)],
    bandwidth: &[(f64, Estimate)],
) -> Vec<CurvePoint> {
    let mut out: Vec<CurvePoint> = idle
        .map(|l| CurvePoint {
            step: 0.0,
            bandwidth: Estimate::exact(0.0),
            latency: l,
        })
        .into_iter()
        .collect();
    for &(x, l) in latency {
        if let Some(&(_, b)) = bandwidth.iter().find(|(bx, _)| *bx == x) {
            out.push(CurvePoint {
                step: x,
                bandwidth: b,
                latency: l,
            });
        }
    }
    out.sort_by(|a, b| a.step.total_cmp(&b.step));
    out
}

/// The knee: the first step (in ladder order) whose latency interval lies wholly
/// above the idle latency's upper end × (1 + [`KNEE_RISE`]); `None` when no step
/// rose that far or the curve has no idle point.
pub fn knee(curve: &[CurvePoint]) -> Option<CurvePoint> {
    let idle = curve.iter().find(|p| p.step == 0.0)?;
    let limit = idle.latency.hi * (1.0 + KNEE_RISE);
    curve
        .iter()
        .filter(|p| p.step > 0.0)
        .find(|p| p.latency.lo > limit)
        .copied()
}

/// The saturation bandwidth: the highest measured bandwidth of the curve, and
/// whether the traffic saturated there (the heaviest step's bandwidth did not rise
/// beyond its interval and [`SATURATION_GAIN`] over the step before it).
pub fn saturation(curve: &[CurvePoint]) -> Option<(CurvePoint, bool)> {
    let loaded: Vec<&CurvePoint> = curve.iter().filter(|p| p.step > 0.0).collect();
    let best = loaded
        .iter()
        .max_by(|a, b| a.bandwidth.value.total_cmp(&b.bandwidth.value))?;
    let saturated = match loaded.as_slice() {
        [.., prev, last] => {
            last.bandwidth.lo <= prev.bandwidth.hi
                || last.bandwidth.value <= prev.bandwidth.value * (1.0 + SATURATION_GAIN)
        }
        _ => false,
    };
    Some((**best, saturated))
}

/// The curve as a table: step, bandwidth and latency each with its interval.
pub fn curve_table(what: &str, curve: &[CurvePoint]) -> Table {
    let cols = [
        "load step",
        "bandwidth (B/s)",
        "bandwidth lo",
        "bandwidth hi",
        "latency (ns)",
        "latency lo",
        "latency hi",
        "samples",
    ];
    Table {
        name: format!("{what}: latency vs bandwidth"),
        columns: cols.iter().map(|c| c.to_string()).collect(),
        rows: curve
            .iter()
            .map(|p| {
                vec![
                    p.step.into(),
                    p.bandwidth.value.into(),
                    p.bandwidth.lo.into(),
                    p.bandwidth.hi.into(),
                    p.latency.value.into(),
                    p.latency.lo.into(),
                    p.latency.hi.into(),
                    p.latency.n.into(),
                ]
            })
            .collect(),
    }
}

/// The typed findings of one curve: its idle latency, its knee (or that none was
/// reached), and its saturation bandwidth.
pub fn curve_findings(what: &str, curve: &[CurvePoint]) -> Vec<Finding> {
    let mut out = Vec::new();
    let fmt = crate::units::fmt_value;
    let idle = curve.iter().find(|p| p.step == 0.0);
    if let Some(i) = idle {
        out.push(Finding::Value {
            what: format!("{what}: idle latency"),
            unit: "ns".into(),
            value: i.latency,
            context: Some("no traffic; huge pages requested".into()),
        });
    }
    match (knee(curve), idle) {
        (Some(k), Some(i)) => out.push(Finding::Value {
            what: format!("{what}: knee bandwidth"),
            unit: "bytes_per_s".into(),
            value: k.bandwidth,
            context: Some(format!(
                "first step whose latency interval lies {:.0} % or more above idle: {} at this bandwidth vs {} idle",
                KNEE_RISE * 100.0,
                fmt("ns", k.latency.value),
                fmt("ns", i.latency.value)
            )),
        }),
        (None, Some(_)) => {
            let top = curve
                .iter()
                .map(|p| p.bandwidth.value)
                .fold(0.0, f64::max);
            out.push(Finding::from(format!(
                "{what}: no knee: latency stayed within {:.0} % of idle up to {}",
                KNEE_RISE * 100.0,
                fmt("bytes_per_s", top)
            )));
        }
        _ => {}
    }
    if let Some((s, saturated)) = saturation(curve) {
        out.push(Finding::Value {
            what: format!("{what}: saturation bandwidth"),
            unit: "bytes_per_s".into(),
            value: s.bandwidth,
            context: Some(format!(
                "{}; latency there {}",
                if saturated {
                    "the bandwidth stopped growing at the heaviest steps"
                } else {
                    "still growing at the heaviest step: a lower bound of what the memory gives"
                },
                fmt("ns", s.latency.value)
            )),
        });
    }
    out
}

/// What a worker of a step's team holds: the chaser's chain, or an injector's block.
type Held<'c> = Result<Loan<'c>, String>;

/// What a worker returns: the chaser its timed ticks, an injector its lines and
/// its own start and end ticks.
enum Done {
    Chaser(u64),
    Injector { lines: u64, ticks: u64 },
    Failed(String),
}

/// One run of a step: the chaser's ns per step and the injectors' summed bandwidth
/// (`None` at idle).
fn measure_step(ctx: &mut RunCtx, c: &CaseParams) -> Result<(f64, Option<f64>), ProbeError> {
    let line = c.line_bytes as usize;
    let stride = line / 8;
    let slots = (c.chase_bytes as usize / line).max(2);
    let node = c.team.node.or(Some(0));
    let chase_tag = BlockTag {
        holds: "pointer chase",
        words: slots * stride,
        pages: if c.huge { Pages::Huge } else { Pages::Default },
        node,
    };
    let inj_words = (c.injector_bytes / 8) as usize;
    let inj_tag = BlockTag {
        holds: "injector lines",
        words: inj_words,
        pages: Pages::Huge,
        node,
    };
    let mut cpus = vec![Some(c.team.chaser)];
    if c.traffic.is_some() {
        cpus.extend(c.team.injectors.iter().map(|&i| Some(i)));
    }
    let stop = AtomicBool::new(false);
    let cache = std::mem::take(&mut ctx.blocks);
    let seed = c.chase_bytes ^ 0x5eed;
    // The default-pages chase keeps its own slot, after the injectors', so the two
    // chase buffers of a group are each made once.
    let chase_slot = if c.huge {
        0
    } else {
        c.team.injectors.len() + 1
    };
    let setup = |t: usize| -> Held<'_> {
        if t == 0 {
            Loan::take_or_make(Some(&cache), chase_slot, chase_tag, || {
                Block::new(slots * stride, chase_tag.pages, 0).map(|mut b| {
                    build_chase(b.as_mut_slice(), stride, slots, seed);
                    b
                })
            })
        } else {
            Loan::take_or_make(Some(&cache), t, inj_tag, || {
                Block::new(inj_words, Pages::Huge, t as u64)
            })
        }
    };
    let kernel = |t: usize, held: &mut Held<'_>| -> Done {
        let loan = match held {
            Ok(l) => l,
            Err(e) => {
                stop.store(true, Ordering::Release);
                return Done::Failed(e.clone());
            }
        };
        if t == 0 {
            let next = loan.block().as_slice();
            let warm = chase_from(next, stride, loan.cursor, c.warm_steps);
            let t0 = ticks();
            loan.cursor = black_box(chase_from(next, stride, warm, c.steps));
            let dt = ticks().wrapping_sub(t0);
            stop.store(true, Ordering::Release);
            Done::Chaser(dt)
        } else {
            let traffic = c.traffic.unwrap_or(Traffic::Read);
            let words = loan.block_mut().as_mut_slice();
            let t0 = ticks();
            let lines = inject(words, stride, traffic, c.delay_iters, &stop);
            Done::Injector {
                lines,
                ticks: ticks().wrapping_sub(t0),
            }
        }
    };
    let out = ctx.team(&cpus, 1, setup, kernel);
    ctx.blocks = cache;
    let out = out?;
    let clock = &ctx.plan.clock;
    let (mut lat, mut bw) = (None, 0.0);
    for r in out.results.iter().filter_map(|r| r.first()) {
        match r {
            Done::Failed(e) => return Err(ProbeError::Failed(format!("loaded-latency: {e}"))),
            Done::Chaser(dt) => lat = Some(clock.ticks_to_ns(*dt) / c.steps.max(1) as f64),
            Done::Injector { lines, ticks } => {
                let bytes =
                    *lines as f64 * c.traffic.map_or(0, |t| t.bytes_per_line(c.line_bytes)) as f64;
                bw += bytes / (clock.ticks_to_ns(*ticks).max(1.0) * 1e-9);
            }
        }
    }
    let lat = lat.ok_or_else(|| ProbeError::Failed("the chaser did not run".into()))?;
    Ok((lat, c.traffic.map(|_| bw)))
}

/// Stream over `words` one cache line (`stride` words) at a time until `stop`,
/// with `delay` turns of [`delay_loop`] between two lines (on a register of their
/// own, not on the loaded values); returns the lines touched.
pub fn inject(
    words: &mut [u64],
    stride: usize,
    traffic: Traffic,
    delay: u32,
    stop: &AtomicBool,
) -> u64 {
    let stride = stride.max(1);
    let lines = (words.len() / stride).max(1);
    let (mut i, mut n, mut acc) = (0usize, 0u64, 0u64);
    loop {
        for _ in 0..LINES_PER_CHECK {
            let Some(w) = words.get_mut(i * stride) else {
                break;
            };
            match traffic {
                Traffic::Read => acc = acc.wrapping_add(*w),
                Traffic::ReadWrite => *w = w.wrapping_add(1),
            }
            delay_loop(u64::from(delay));
            i += 1;
            if i == lines {
                i = 0;
            }
        }
        n += LINES_PER_CHECK;
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    black_box(acc);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(v: f64, half: f64) -> Estimate {
        Estimate {
            value: v,
            lo: v - half,
            hi: v + half,
            n: 6,
        }
    }

    /// A synthetic curve: (bandwidth GB/s, latency ns), idle first.
    fn synthetic(points: &[(f64, f64)]) -> Vec<CurvePoint> {
        let idle = e(points[0].1, 2.0);
        let lat: Vec<(f64, Estimate)> = points[1..]
            .iter()
            .enumerate()
            .map(|(k, &(_, l))| ((k + 1) as f64, e(l, 3.0)))
            .collect();
        let bw: Vec<(f64, Estimate)> = points[1..]
            .iter()
            .enumerate()
            .map(|(k, &(b, _))| ((k + 1) as f64, e(b * 1e9, 0.5e9)))
            .collect();
        curve(Some(idle), &lat, &bw)
    }

    #[test]
    fn the_ladder_runs_from_light_traffic_to_none() {
        for p in [Profile::Quick, Profile::Default, Profile::Full] {
            let l = ladder(p);
            assert!(l.len() >= 2, "{p:?}");
            assert!(
                l.windows(2).all(|w| w[0] > w[1]),
                "decreasing delays: {l:?}"
            );
            assert_eq!(l.last(), Some(&0), "ends at saturation");
            assert!(l[0] > 0);
        }
        assert!(ladder(Profile::Quick).len() < ladder(Profile::Default).len());
        // Nominal rates grow along the ladder; the last (no delay) has none.
        let hz = 3e9;
        let rates: Vec<Option<f64>> = ladder(Profile::Default)
            .iter()
            .map(|&d| nominal_lines_per_s(d, hz))
            .collect();
        assert_eq!(rates[0], Some(3e9 / 10_000.0));
        assert!(rates.windows(2).all(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            _ => false,
        }));
        assert_eq!(nominal_lines_per_s(0, hz), None);
        assert_eq!(Traffic::Read.bytes_per_line(64), 64);
        assert_eq!(Traffic::ReadWrite.bytes_per_line(64), 128);
    }

    #[test]
    fn an_mlc_shaped_curve_has_its_knee_where_latency_bends_and_saturates() {
        // MLC's shape on a 2-socket Ice Lake-SP: flat near 91 ns, then up to 264 ns.
        let c = synthetic(&[
            (0.0, 91.0),
            (3.0, 92.0),
            (50.0, 95.0),
            (150.0, 104.0),
            (250.0, 125.0),
            (330.0, 180.0),
            (350.0, 240.0),
            (352.0, 264.0),
        ]);
        assert_eq!(c.len(), 8);
        let k = knee(&c).unwrap();
        // 91 + 2 = 93 × 1.2 = 111.6; 125 − 3 = 122 is the first above.
        assert_eq!(k.step, 4.0);
        assert_eq!(k.bandwidth.value, 250e9);
        let (s, saturated) = saturation(&c).unwrap();
        assert_eq!(s.bandwidth.value, 352e9);
        assert!(saturated, "350 → 352 GB/s: intervals overlap");
        let f = curve_findings("latency, read traffic", &c);
        assert!(
            matches!(&f[0], Finding::Value { unit, value, .. } if unit == "ns" && value.value == 91.0)
        );
        assert!(matches!(&f[1], Finding::Value { what, .. } if what.ends_with("knee bandwidth")));
        assert!(matches!(&f[2], Finding::Value { what, unit, .. }
            if what.ends_with("saturation bandwidth") && unit == "bytes_per_s"));
        let t = curve_table("x", &c);
        assert_eq!(t.rows.len(), 8);
        assert_eq!(t.columns.len(), t.rows[0].len());
    }

    #[test]
    fn a_flat_curve_has_no_knee_and_a_growing_one_no_saturation() {
        let flat = synthetic(&[(0.0, 100.0), (10.0, 101.0), (20.0, 103.0), (40.0, 110.0)]);
        assert!(knee(&flat).is_none());
        let (s, saturated) = saturation(&flat).unwrap();
        assert_eq!(s.bandwidth.value, 40e9);
        assert!(!saturated, "20 → 40 GB/s is still growing");
        let f = curve_findings("w", &flat);
        assert!(f
            .iter()
            .any(|f| matches!(f, Finding::Note { text } if text.contains("no knee"))));
        // No idle point: no knee can be named.
        let no_idle = curve(None, &[(1.0, e(200.0, 1.0))], &[(1.0, e(1e9, 1e8))]);
        assert!(knee(&no_idle).is_none());
        assert_eq!(no_idle.len(), 1);
    }

    #[test]
    fn the_curve_pairs_steps_and_drops_a_step_missing_an_axis() {
        let lat = [
            (2.0, e(120.0, 1.0)),
            (1.0, e(100.0, 1.0)),
            (3.0, e(150.0, 1.0)),
        ];
        let bw = [(1.0, e(1e9, 1e8)), (2.0, e(2e9, 1e8))];
        let c = curve(Some(e(90.0, 1.0)), &lat, &bw);
        let steps: Vec<f64> = c.iter().map(|p| p.step).collect();
        assert_eq!(steps, vec![0.0, 1.0, 2.0]);
        assert_eq!(c[0].bandwidth.value, 0.0);
        assert_eq!(c[2].latency.value, 120.0);
    }

    #[test]
    fn a_one_or_two_cpu_machine_plans_honestly() {
        let one = crate::topology::from_synthetic("pack:1 core:1 pu:1").unwrap();
        let (teams, skipped) = node_teams(&one);
        assert!(teams.is_empty());
        assert!(
            skipped[0].contains("skipped: one allowed CPU"),
            "{skipped:?}"
        );
        let two = crate::topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        let (teams, skipped) = node_teams(&two);
        assert_eq!(teams.len(), 1);
        assert_eq!(teams[0].injectors.len(), 1);
        assert!(skipped.is_empty());
        let numa = crate::topology::from_synthetic("pack:2 numa:1 core:2 pu:1").unwrap();
        let (teams, _) = node_teams(&numa);
        if numa.numa_nodes > 1 {
            assert_eq!(teams.len(), numa.numa_nodes);
            assert!(teams.iter().all(|t| t.node.is_some()));
        }
    }

    #[test]
    fn injectors_count_the_lines_they_touch_and_stop() {
        let mut words = vec![0u64; 64];
        let stop = AtomicBool::new(true);
        let n = inject(&mut words, 8, Traffic::ReadWrite, 1, &stop);
        assert_eq!(n, LINES_PER_CHECK);
        // 8 lines, each written LINES_PER_CHECK / 8 times.
        assert!(words.iter().step_by(8).all(|&w| w == LINES_PER_CHECK / 8));
        assert!(words.iter().skip(1).step_by(8).all(|&w| w == 0));
    }
}
