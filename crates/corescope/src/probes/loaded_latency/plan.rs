//! `loaded-latency`'s plan: a team per NUMA node (thinned on large machines), the
//! sizes of the chase buffer and the injectors' blocks, the ladder's cases, and the
//! price of a run for `corescope plan`.

use super::curve::KNEE_RISE;
use super::traffic::{ladder, Traffic};
use crate::kernels::buffer::HUGE_PAGE_BYTES;
use crate::memguard;
use crate::model::Profile;
use crate::probes::memory::{team_block_bytes, WS_FALLBACK_MAX_BYTES, WS_LLC_FACTOR};
use crate::probes::{Case, Plan, PlanCtx, ProbeError, Rounds};
use serde::Serialize;

/// Smallest injector block.
pub const MIN_INJECTOR_BYTES: u64 = 4 << 20;

/// The rounds of a step: enough samples for a 95 % interval on both axes, after an
/// untimed run that brings injectors and chaser to speed.
pub const STEP_ROUNDS: Rounds = Rounds::REPEATED;

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
/// more than [`crate::probes::POWERS_OF_FOUR_ABOVE_CPUS`] CPUs, where the thread ladders
/// step by four. The loaded probes thin further there, so that the default suite
/// of a 2,048-strand machine keeps within its ten minutes (`tests/plan.rs`).
pub fn coarse(ctx: &PlanCtx) -> bool {
    ctx.thinned() && ctx.cpus() > crate::probes::POWERS_OF_FOUR_ABOVE_CPUS
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
        crate::probes::POWERS_OF_FOUR_ABOVE_CPUS,
        read.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    )];
    notes.push(format!(
        "loaded-latency read-write traffic at delays {} turns: not measured on a coarse plan (at saturation, delay 0, only)",
        read.iter().filter(|&&d| d > 0).map(u32::to_string).collect::<Vec<_>>().join(", ")
    ));
    (read, vec![0], notes)
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    pub(super) team: NodeTeam,
    /// `None`: the idle machine.
    pub(super) traffic: Option<Traffic>,
    pub(super) delay_iters: u32,
    /// x of the curve: 0 idle, then the ladder's steps.
    pub(super) load_step: usize,
    /// Huge pages requested for the chase buffer.
    pub(super) huge: bool,
    pub(super) chase_bytes: u64,
    pub(super) injector_bytes: u64,
    pub(super) line_bytes: u64,
    pub(super) warm_steps: u64,
    pub(super) steps: u64,
    /// The plan's guess of one run, for `corescope plan`.
    pub(super) duration_ns: u64,
    /// Bytes first touched per run (the case's blocks over its runs), for the plan.
    pub(super) setup_bytes_per_run: u64,
    /// Threads of the run's team (the chaser, and the injectors under traffic).
    pub(super) team_threads: usize,
}

impl CaseParams {
    /// `latency` / `bandwidth` with the node, for series names.
    pub(super) fn what(&self, base: &str) -> String {
        match self.team.node {
            Some(n) => format!("{base}-node{n}"),
            None => base.to_string(),
        }
    }

    pub(super) fn variant(&self) -> &'static str {
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
fn team_cases(
    team: &NodeTeam,
    sizes: &Sizes,
    delays: &[u32],
    rw_delays: &[u32],
) -> Vec<Case<CaseParams>> {
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
            crate::probes::POWERS_OF_FOUR_ABOVE_CPUS,
            COARSE_LADDER,
            COARSE_CHASE_STEPS
        )
    } else {
        String::new()
    };
    nodes + &ladder
}

/// One run of a loaded probe's case for `corescope plan` (the three probes under
/// load price their runs alike): the duration its plan gives it (`duration_ns`),
/// its share of its group's first touches (`setup_bytes_per_run`) and its team's
/// creation (`team_threads`).
pub fn loaded_run_cost_s(
    c: &crate::probes::cost::Cost,
    duration_ns: u64,
    setup_bytes_per_run: u64,
    team_threads: usize,
) -> f64 {
    duration_ns as f64 * 1e-9 + c.bytes_s(setup_bytes_per_run as f64) + c.team_spawn_s(team_threads)
}

/// Latency the plan assumes per chase step when it prices a run: DRAM under load
/// (240–260 ns idle on the 2-vCPU KVM guest this was written on).
const PLANNED_STEP_NS: u64 = 250;

/// What building a chase buffer costs the plan, in first touches of it: the
/// shuffle's random reads and writes over 2M slots of a 128 MiB buffer took about
/// 7 times its first touch on the 2-vCPU guest.
const CHASE_BUILD_TOUCHES: u64 = 8;

/// The plan: the teams, the buffer and block sizes within the memory available,
/// the ladders, every team's cases and what a thinned plan leaves out.
pub(super) fn plan(ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<NodeTeam>>, ProbeError> {
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
    let line_bytes = u64::from(ctx.topo.line_bytes_or_default());
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
    let cases: Vec<Case<CaseParams>> = teams
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
            .param("chase_pages", "MADV_HUGEPAGE (idle-default-pages: no advice, as the memory probe's ws-latency-default-pages/1t; the huge-page steps as its ws-latency/1t)")
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
