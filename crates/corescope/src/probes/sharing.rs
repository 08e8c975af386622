//! `sharing`: the empirical sharing map (seed 000 §3.1, which found ALU groups of 4
//! strands the OS did not report). For pairs of CPUs, kernels run on the first alone,
//! then on both at once; what running together costs says whether they share a core
//! or its pipelines. On more than 64 CPUs a representative subset of pairs.
//!
//! Two families of kernels:
//! - the compute probe's **dependent chains** (int and fp): the slowdown of the
//!   team's time together ÷ alone. A dependent chain waits on its own latency, so two
//!   hardware threads of one core run it side by side without slowing each other: it
//!   finds shared pipelines of the seed's T3-4 kind, not SMT siblings;
//! - **throughput-bound kernels** ([`Throughput`]): independent FMA chains (peak's
//!   kernel, AVX2 FMA where the CPU has it, scalar multiply + add otherwise), loads
//!   from an L1-resident block, independent integer ALU chains. Each saturates a
//!   core's ports (or its L1 loads) alone, so two hardware threads of one core each
//!   get about half of it together, while separate cores keep their own. The ratio is
//!   the throughput per thread together ÷ alone (the first CPU's own CPU time alone ÷
//!   its own CPU time together, so other tasks' time slices on a busy machine do not
//!   count), and [`verdict`] turns its interval into *shared*,
//!   *separate* or *not told apart* ([`SHARED_BELOW`], [`SEPARATE_ABOVE`]); the pair's
//!   finding sets it beside what the topology says. This is how a VM whose vCPUs sit
//!   on two hardware threads of one host core is seen when the guest's topology says
//!   "separate cores".
//!
//! Repetition: per pair, rounds each run every kernel alone and together once, in an
//! order alternating round by round (alone first, then together first), so drift hits
//! both alike; the dependent chains take [`ROUNDS`] rounds, the throughput kernels
//! the profile's [`THROUGHPUT_ROUNDS`]. Each ratio is the paired ratio of the rounds
//! (`stats::compare_paired`: Hodges-Lehmann centre, signed-rank 95 % interval); the
//! matrices hold its centre and `…/spread` the width of its interval. Two CPUs are
//! said to share a pipeline (dependent chains) only when the slowdown is at least
//! [`SHARED_SLOWDOWN`] and significant.

use super::c2c::assemble;
use super::peak::{self, Level, Precision};
use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::kernels::chains::{fp_kernel, int_kernel, INPUTS};
use crate::kernels::ports::{self, L1_BLOCK_BYTES, L1_BLOCK_WORDS};
use crate::model::{
    Counted, CpuSubset, Estimate, Finding, Matrix, Measurement, PairsByLevel, ProbeResult, Profile,
    Sensitivity, SubsetChoice, Warning,
};
use crate::placement::subset;
use crate::topology::Topology;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// Rounds of (alone, together) per pair of the dependent chains: 6 is the fewest
/// with which the signed-rank interval can exclude 1 at 95 %.
pub const ROUNDS: usize = 6;
/// Two CPUs "slow each other" when running together takes this much longer.
pub const SHARED_SLOWDOWN: f64 = 1.3;

/// Rounds of (alone, together) per pair of each throughput kernel, by profile
/// (quick, default, full): at least 6 for a 95 % interval at all; with 8 the
/// signed-rank interval drops the 3 most extreme Walsh averages on each side, so
/// one round hit by a preempted vCPU does not set its end.
pub const THROUGHPUT_ROUNDS: [usize; 3] = [6, 8, 12];
/// Time of one run of a throughput kernel, by profile (quick, default, full), ns:
/// hundreds of times the start skew of a team (tens of µs at worst on a VM), so
/// the two threads overlap for the whole run.
pub const THROUGHPUT_RUN_NS: [u64; 3] = [2_000_000, 5_000_000, 40_000_000];

/// A pair shares a core when the 95 % interval of a throughput kernel's ratio
/// (together ÷ alone per thread) lies wholly below this. Two hardware threads of one
/// core running a kernel that saturates its ports get about 0.5× each (a 2-vCPU
/// KVM guest on AMD EPYC whose vCPUs sat on one host core: peak's avx2-fma-f64 gained
/// nothing from the second thread); separate cores lose at most a few percent to a
/// lower all-core clock on two busy cores (this guest's core clock: 3.66 GHz with one
/// thread, 3.65 GHz with 2 CPUs busy). 0.85 lies far from both, so a partial share of
/// the ports (a sibling's kernel that leaves some idle) still counts, and a clock
/// that drops 10 % under load does not.
pub const SHARED_BELOW: f64 = 0.85;
/// A pair runs on separate cores when the interval lies wholly above this: each
/// keeps at least 90 % of its throughput alone, within the reach of a shared clock
/// or power limit, not of a shared core. The interval may reach above 1 (rounds
/// whose run alone was the slower one): a shared core can only lower the ratio, so
/// a high upper end is noise on the alone side, not a sign either way (on this
/// guest one run's `fma` read 1.00×, 95 % CI 0.999–1.136). Between the two
/// thresholds (an interval within 0.85–0.90, or crossing either) the pair is not
/// told apart.
pub const SEPARATE_ABOVE: f64 = 0.90;
/// Fewest paired rounds behind a verdict: with fewer the signed-rank interval does
/// not reach 95 % (`stats::hodges_lehmann`).
pub const MIN_ROUNDS_FOR_VERDICT: usize = 6;

/// Unit of the throughput matrices: per-thread throughput together ÷ alone.
pub const THROUGHPUT_UNIT: &str = "x_alone_throughput";

/// Pairs of each level the default profile measures on machines beyond the full
/// matrix (see [`subset::pairs_by_level`]).
pub const PAIRS_PER_LEVEL: usize = 8;

/// The probe.
pub struct Sharing;

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    a: u32,
    b: u32,
    /// Passes of the dependent chains per run.
    passes: u64,
    /// The throughput kernels, in the order of each round.
    throughput_kernels: Vec<Throughput>,
    /// FMA level of the `fma` kernel (found at run time on this CPU).
    fma_level: Level,
    /// Rounds of each throughput kernel.
    throughput_rounds: usize,
    /// Target time of one run of a throughput kernel; its size is calibrated to it
    /// on the first CPU alone before the rounds (which is also its warm-up).
    throughput_run_ns: u64,
}

/// A throughput-bound kernel of the sharing map.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Throughput {
    /// Peak's [`peak::CHAINS`] independent FMA chains (`acc = acc · a + b`) at
    /// [`fma_level`]: the FP pipes.
    Fma,
    /// Wrapping sum of an L1-resident block of [`L1_BLOCK_BYTES`]: the load ports.
    L1Load,
    /// [`ports::INT_CHAINS`] independent `add`/`xor` chains: the integer ALUs.
    IntPorts,
}

impl Throughput {
    /// Every throughput kernel, in the order of each round.
    pub const ALL: [Throughput; 3] = [Throughput::Fma, Throughput::L1Load, Throughput::IntPorts];

    /// In series names and findings.
    pub fn name(self) -> &'static str {
        match self {
            Throughput::Fma => "fma",
            Throughput::L1Load => "l1-load",
            Throughput::IntPorts => "int-ports",
        }
    }

    /// Size of the calibration run (turns or passes): about 1 ms on a 3 GHz core.
    /// FMA: 12 FMAs per turn, 2 pipes: 6 cycles; L1: 256 loads of 32 bytes per pass,
    /// 2 per cycle: 128 cycles; int: 16 ALU operations per turn, 4 ALUs: 4 cycles.
    fn calibration_size(self) -> u64 {
        match self {
            Throughput::Fma => 500_000,
            Throughput::L1Load => 25_000,
            Throughput::IntPorts => 750_000,
        }
    }

    /// Run `size` turns (passes) on thread `t`; `block` is its L1 block.
    fn run(
        self,
        level: Level,
        size: u64,
        t: usize,
        block: &[u64],
    ) -> Result<(), peak::LevelMissing> {
        match self {
            Throughput::Fma => {
                black_box(peak::run_kernel(
                    level,
                    Precision::F64,
                    size,
                    1.0 + t as f64,
                )?);
            }
            Throughput::L1Load => {
                black_box(ports::l1_load_sum(block, size));
            }
            Throughput::IntPorts => {
                black_box(ports::int_ports(size, t as u64));
            }
        }
        Ok(())
    }
}

/// The FMA level of the `fma` kernel: 256-bit FMA where the CPU has it (AVX2 + FMA
/// on x86_64, NEON on aarch64), else scalar multiply + add. Not AVX-512: on some
/// Intel cores it lowers the clock of the whole core, which would read as sharing;
/// on Zen 4 it runs on the same 256-bit pipes.
pub fn fma_level() -> Level {
    [Level::Avx2Fma, Level::NeonFma]
        .into_iter()
        .find(|l| l.of_this_arch() && l.available().is_ok())
        .unwrap_or(Level::Scalar)
}

/// What one run executes.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// The dependent chain, fp or int.
    Dependent { fp: bool, passes: u64 },
    /// A throughput kernel of this size.
    Throughput {
        kind: Throughput,
        level: Level,
        size: u64,
    },
}

/// Whether two CPUs share a core, from one throughput kernel's ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharingVerdict {
    /// The interval lies wholly below [`SHARED_BELOW`].
    Shared,
    /// The interval lies wholly above [`SEPARATE_ABOVE`].
    Separate,
    /// Neither, or fewer than [`MIN_ROUNDS_FOR_VERDICT`] rounds.
    NotToldApart,
}

impl SharingVerdict {
    /// As the run file's `shared`: `Some(true)`, `Some(false)` or `None`.
    pub fn shared(self) -> Option<bool> {
        match self {
            SharingVerdict::Shared => Some(true),
            SharingVerdict::Separate => Some(false),
            SharingVerdict::NotToldApart => None,
        }
    }
}

/// The verdict of one kernel's ratio (throughput per thread together ÷ alone, with
/// its 95 % interval and the number of paired rounds behind it). Pure.
pub fn verdict(ratio: &Estimate) -> SharingVerdict {
    let finite = ratio.lo.is_finite() && ratio.hi.is_finite() && ratio.lo <= ratio.hi;
    if ratio.n < MIN_ROUNDS_FOR_VERDICT || !finite {
        SharingVerdict::NotToldApart
    } else if ratio.hi < SHARED_BELOW {
        SharingVerdict::Shared
    } else if ratio.lo > SEPARATE_ABOVE {
        SharingVerdict::Separate
    } else {
        SharingVerdict::NotToldApart
    }
}

/// The verdict of a pair from its kernels' verdicts: shared when any kernel says so
/// (a core shares its ports or its L1 even if another unit is private), separate
/// only when every kernel says so, otherwise not told apart. Pure.
pub fn pair_verdict(kernels: &[SharingVerdict]) -> SharingVerdict {
    if kernels.contains(&SharingVerdict::Shared) {
        SharingVerdict::Shared
    } else if !kernels.is_empty() && kernels.iter().all(|&v| v == SharingVerdict::Separate) {
        SharingVerdict::Separate
    } else {
        SharingVerdict::NotToldApart
    }
}

/// The finding of one pair: its verdict, stated with the kernel of lowest ratio
/// among those that give it, every kernel's ratio, and what the topology says.
/// `None` when no kernel was measured. Pure.
pub fn pair_finding(
    a: u32,
    b: u32,
    ratios: &[(String, Estimate)],
    topo: &Topology,
) -> Option<Finding> {
    let verdicts: Vec<SharingVerdict> = ratios.iter().map(|r| verdict(&r.1)).collect();
    let v = pair_verdict(&verdicts);
    let lowest = |pick: &dyn Fn(SharingVerdict) -> bool| {
        ratios
            .iter()
            .zip(&verdicts)
            .filter(|(_, &kv)| pick(kv))
            .map(|(r, _)| r)
            .min_by(|x, y| x.1.value.total_cmp(&y.1.value))
    };
    let (kernel, ratio) = lowest(&|kv| kv == v).or_else(|| lowest(&|_| true))?;
    let level = subset::level(topo, a, b);
    Some(Finding::CoreSharing {
        a,
        b,
        shared: v.shared(),
        kernel: kernel.clone(),
        ratio: *ratio,
        ratios: ratios.iter().cloned().collect::<BTreeMap<_, _>>(),
        topology: subset::relation(topo, a, b).into(),
        topology_same_core: level == Some(subset::Level::SameCore),
    })
}

fn kernel(fp: bool, t: usize, passes: u64) {
    if fp {
        let x: [f64; INPUTS] = std::array::from_fn(|i| 0.9 + 0.2 * i as f64 / INPUTS as f64);
        black_box(fp_kernel(
            &x,
            [0.5, 1.25, 0.75, 0.25],
            passes,
            1.0 + t as f64,
        ));
    } else {
        let x: [i64; INPUTS] = std::array::from_fn(|i| (2 * (i + t) + 3) as i64);
        black_box(int_kernel(&x, [3, 5, 7, 11], passes, t as i64));
    }
}

/// Sets of CPUs linked by a slowdown ≥ [`SHARED_SLOWDOWN`] (connected components).
pub fn groups(pairs: &[((u32, u32), f64)]) -> Vec<(Vec<u32>, f64)> {
    let mut sets: Vec<(Vec<u32>, f64)> = Vec::new();
    for &((a, b), v) in pairs.iter().filter(|p| p.1 >= SHARED_SLOWDOWN) {
        let ia = sets.iter().position(|s| s.0.contains(&a));
        let ib = sets.iter().position(|s| s.0.contains(&b));
        match (ia, ib) {
            (Some(i), Some(j)) if i != j => {
                let (hi, lo) = (i.max(j), i.min(j));
                let moved = sets.remove(hi);
                sets[lo].0.extend(moved.0);
                sets[lo].1 = sets[lo].1.max(moved.1).max(v);
            }
            (Some(i), _) | (_, Some(i)) => {
                for c in [a, b] {
                    if !sets[i].0.contains(&c) {
                        sets[i].0.push(c);
                    }
                }
                sets[i].1 = sets[i].1.max(v);
            }
            (None, None) => sets.push((vec![a, b], v)),
        }
    }
    for s in &mut sets {
        s.0.sort_unstable();
    }
    sets
}

/// CPU time of the calling thread so far, in ns; `None` where the OS does not say.
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid `timespec` to write; CLOCK_THREAD_CPUTIME_ID is a
    // clock POSIX defines and Linux has had since 2.6.12.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// One run of `work` on CPU `a` alone or on `a` and `b` at once: the team's time
/// (first start to last end) and CPU `a`'s own time, in ns. Its own time is the CPU
/// time of its thread (`CLOCK_THREAD_CPUTIME_ID`) where the OS gives it, so that
/// time the OS gives other tasks on a busy machine does not count as sharing; else
/// its wall time from start to end.
fn one_run(
    ctx: &mut RunCtx,
    c: &CaseParams,
    work: Work,
    together: bool,
) -> Result<(f64, f64), ProbeError> {
    let cpus: &[Option<u32>] = if together {
        &[Some(c.a), Some(c.b)]
    } else {
        &[Some(c.a)]
    };
    let l1 = matches!(
        work,
        Work::Throughput {
            kind: Throughput::L1Load,
            ..
        }
    );
    let out = ctx.team(
        cpus,
        1,
        // The block is written by its own thread, after pinning: in its L1.
        |t| {
            if l1 {
                (0..L1_BLOCK_WORDS as u64).map(|i| i ^ t as u64).collect()
            } else {
                Vec::new()
            }
        },
        |t, block: &mut Vec<u64>| {
            let before = thread_cpu_ns();
            match work {
                Work::Dependent { fp, passes } => kernel(fp, t, passes),
                Work::Throughput { kind, level, size } => kind.run(level, size, t, block)?,
            }
            Ok::<_, peak::LevelMissing>(
                thread_cpu_ns()
                    .zip(before)
                    .map(|(e, s)| e.saturating_sub(s)),
            )
        },
    )?;
    if let Some(e) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(e.clone().into());
    }
    let rep = out
        .best()
        .ok_or_else(|| ProbeError::GaveUp("no repetition ran".into()))?;
    let wall = rep
        .per_thread
        .first()
        .map_or(0, |&(start, end)| end.saturating_sub(start));
    let cpu = out
        .results
        .first()
        .and_then(|r| r.first())
        .and_then(|r| r.as_ref().ok().copied().flatten());
    Ok((
        rep.team_ns().max(1) as f64,
        cpu.unwrap_or(wall).max(1) as f64,
    ))
}

/// The size of a throughput kernel for a run of about `target_ns` on CPU `a` alone,
/// from one run of its calibration size (which warms it up too).
fn calibrate(ctx: &mut RunCtx, c: &CaseParams, kind: Throughput) -> Result<u64, ProbeError> {
    let base = kind.calibration_size();
    let work = Work::Throughput {
        kind,
        level: c.fma_level,
        size: base,
    };
    let (_, own_ns) = one_run(ctx, c, work, false)?;
    let scaled = base as f64 * c.throughput_run_ns as f64 / own_ns;
    Ok((scaled as u64).clamp(1, base.saturating_mul(1000)))
}

/// The three 1×1 matrices of one pair's slowdown or ratio: centre, lower end and
/// (`upper`) upper end or (`!upper`) spread, plus `…/n`.
fn pair_matrices(name: &str, unit: &str, c: &CaseParams, e: &Estimate, upper: bool) -> Vec<Matrix> {
    let mut parts = vec![("", e.value), ("/lo", e.lo)];
    if upper {
        parts.push(("/hi", e.hi));
        parts.push(("/n", e.n as f64));
    } else {
        parts.push(("/spread", e.hi - e.lo));
    }
    parts
        .into_iter()
        .map(|(suffix, v)| Matrix {
            name: format!("{name}{suffix}"),
            unit: unit.into(),
            rows: vec![c.a.to_string()],
            cols: vec![c.b.to_string()],
            values: vec![vec![Some(v)]],
        })
        .collect()
}

/// Seconds of the throughput kernels on one pair (`corescope plan`): per kernel
/// (`kernels` of them) a calibration run (about 1 ms on a 3 GHz core) and `rounds`
/// × (alone + together) runs of `run_ns`, each spawning its threads (1 + 2).
fn throughput_cost_s(
    c: &crate::probes::cost::Cost,
    kernels: usize,
    rounds: usize,
    run_ns: u64,
) -> f64 {
    const CALIBRATION_RUN_S: f64 = 1e-3;
    let kernels = kernels as f64;
    let rounds = rounds as f64;
    let run_s = run_ns as f64 * 1e-9;
    kernels * (CALIBRATION_RUN_S + c.spawn_s(1.0) + rounds * (2.0 * run_s + c.spawn_s(3.0)))
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "sharing";

impl Probe for Sharing {
    type Params = CaseParams;
    type Facts = Vec<u32>;

    /// Six kernels of `passes` × 1,024 ops, three times, their 18 threads, then
    /// the throughput kernels ([`throughput_cost_s`]).
    /// Summary: whether the CPUs share a core, after the matrices' worst slowdowns.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::CoreSharing
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(
            p.passes as f64 * 1024.0 * c.op_s() * 6.0 * 3.0
                + c.spawn_s(18.0)
                + throughput_cost_s(
                    c,
                    p.throughput_kernels.len(),
                    p.throughput_rounds,
                    p.throughput_run_ns,
                ),
        )
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "empirical sharing map: what two CPUs lose running dependent chains and throughput-bound kernels together"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CoreThroughput, Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<u32>>, ProbeError> {
        // Each pair runs the kernels alone and together in rounds: the default
        // profile measures the full matrix up to 16 CPUs (120 pairs), the
        // representative subset beyond.
        let full_max = ctx.profile.pick(8, 16, subset::FULL_MATRIX_MAX);
        let (cpus, note) = subset::cpus_up_to(&ctx.topo, full_max);
        if cpus.len() < 2 {
            return Err(ProbeError::Skipped("fewer than 2 CPUs allowed".into()));
        }
        // Half the passes of the former 3 + 3 best-of runs: 6 + 6 rounds in about the
        // same time.
        let passes: u64 = ctx.profile.pick(10_000, 50_000, 500_000);
        let pick = |v: [usize; 3]| ctx.profile.pick(v[0], v[1], v[2]);
        let throughput_rounds = pick(THROUGHPUT_ROUNDS);
        let throughput_run_ns = ctx.profile.pick(
            THROUGHPUT_RUN_NS[0],
            THROUGHPUT_RUN_NS[1],
            THROUGHPUT_RUN_NS[2],
        );
        let level = fma_level();
        // Beyond the full matrix the default profile measures up to
        // `PAIRS_PER_LEVEL` pairs of each level of the subset, not all its pairs.
        let by_level = note.is_some() && ctx.profile == Profile::Default;
        let pairs: Vec<(u32, u32)> = if by_level {
            subset::pairs_by_level(&ctx.topo, &cpus, PAIRS_PER_LEVEL)
        } else {
            cpus.iter()
                .enumerate()
                .flat_map(|(i, &a)| cpus[i + 1..].iter().map(move |&b| (a, b)))
                .collect()
        };
        let note = note.map(|n| SubsetChoice {
            by_level: by_level.then_some(PairsByLevel {
                per_level: PAIRS_PER_LEVEL,
                pairs: pairs.len(),
            }),
            ..n
        });
        let cases = pairs
            .iter()
            .map(|&(a, b)| {
                let params = CaseParams {
                    a,
                    b,
                    passes,
                    throughput_kernels: Throughput::ALL.to_vec(),
                    fma_level: level,
                    throughput_rounds,
                    throughput_run_ns,
                };
                Case::new(format!("{a}+{b}"), &params)
            })
            .collect();
        let names: Vec<&str> = Throughput::ALL.iter().map(|k| k.name()).collect();
        let mut plan = Plan::new(cases)
            .scaled_down(by_level.then(|| format!("up to {PAIRS_PER_LEVEL} pairs of each level")))
            .param("cpus", &cpus)
            .with_facts(cpus.clone())
            .param("passes", passes)
            .param("rounds", ROUNDS)
            .param("shared_slowdown", SHARED_SLOWDOWN)
            .param("throughput_kernels", &names)
            .param("fma_level", peak::kernel_name(level, Precision::F64))
            .param("fma_chains", peak::CHAINS)
            .param("l1_block_bytes", L1_BLOCK_BYTES)
            .param("int_chains", ports::INT_CHAINS)
            .param("throughput_rounds", throughput_rounds)
            .param("throughput_run_ns", throughput_run_ns)
            .param("shared_below", SHARED_BELOW)
            .param("separate_above", SEPARATE_ABOVE);
        if let Some(subset) = note {
            plan = plan.warning(Warning::CpuSubset {
                subset: CpuSubset::Chosen(subset),
            });
        }
        Ok(plan)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let mut m = Measurement::default();
        // Sizes of the throughput kernels, calibrated on the first CPU alone.
        let mut sizes = Vec::with_capacity(c.throughput_kernels.len());
        for &kind in &c.throughput_kernels {
            sizes.push((kind, calibrate(ctx, &c, kind)?));
        }
        // (alone, together) per kernel: the dependent chains' team times, the
        // throughput kernels' own times of the first CPU.
        let mut dependent: [(Vec<f64>, Vec<f64>); 2] = Default::default();
        let mut throughput: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); sizes.len()];
        let rounds = ROUNDS.max(c.throughput_rounds);
        for round in 0..rounds {
            if ctx.expired() && round >= 2 {
                let w = Warning::StoppedAtDeadline {
                    what: format!("{ID} {}+{}", c.a, c.b),
                    done: round as u64,
                    planned: rounds as u64,
                    unit: Counted::Rounds,
                };
                if !ctx.warnings.contains(&w) {
                    ctx.warnings.push(w);
                }
                break;
            }
            let order = [round % 2 == 1, round % 2 == 0];
            if round < ROUNDS {
                for (i, fp) in [false, true].into_iter().enumerate() {
                    for together in order {
                        let work = Work::Dependent {
                            fp,
                            passes: c.passes,
                        };
                        let (team_ns, _) = one_run(ctx, &c, work, together)?;
                        let (alone, both) = &mut dependent[i];
                        if together { both } else { alone }.push(team_ns);
                    }
                }
            }
            if round < c.throughput_rounds {
                for (i, &(kind, size)) in sizes.iter().enumerate() {
                    for together in order {
                        let work = Work::Throughput {
                            kind,
                            level: c.fma_level,
                            size,
                        };
                        let (_, own_ns) = one_run(ctx, &c, work, together)?;
                        let (alone, both) = &mut throughput[i];
                        if together { both } else { alone }.push(own_ns);
                    }
                }
            }
        }
        for (name, (alone, both)) in ["sharing/int", "sharing/fp"].iter().zip(&dependent) {
            let slowdown = crate::stats::compare_paired(both, alone)
                .ok_or_else(|| ProbeError::GaveUp(format!("{name}: fewer than 2 rounds ran")))?
                .ratio;
            m.matrices
                .extend(pair_matrices(name, "x_alone", &c, &slowdown, false));
        }
        for ((kind, _), (alone, both)) in sizes.iter().zip(&throughput) {
            let name = format!("sharing/{}", kind.name());
            // Own time alone ÷ together = throughput per thread together ÷ alone.
            let ratio = crate::stats::compare_paired(alone, both)
                .ok_or_else(|| ProbeError::GaveUp(format!("{name}: fewer than 2 rounds ran")))?
                .ratio;
            m.matrices
                .extend(pair_matrices(&name, THROUGHPUT_UNIT, &c, &ratio, true));
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, cpus: &Vec<u32>, ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let mut full = Vec::new();
        for (name, unit) in [
            ("sharing/int", "integer pipeline"),
            ("sharing/fp", "FP unit"),
        ] {
            let (values, pairs) = assemble(&result.matrices, name, "x_alone", cpus);
            let (_, lo) = assemble(&result.matrices, &format!("{name}/lo"), "x_alone", cpus);
            let (spread, _) =
                assemble(&result.matrices, &format!("{name}/spread"), "x_alone", cpus);
            // Only a significant slowdown (interval above 1) links two CPUs.
            let linked: Vec<((u32, u32), f64)> = pairs
                .iter()
                .filter(|p| lo.iter().any(|l| l.0 == p.0 && l.1 > 1.0))
                .copied()
                .collect();
            out.findings
                .extend(share_findings(name, unit, &pairs, &linked, &ctx.topo));
            full.push(values);
            full.push(spread);
        }
        // The throughput kernels: every pair's ratios with their intervals.
        let mut by_pair: BTreeMap<(u32, u32), Vec<(String, Estimate)>> = BTreeMap::new();
        for kind in Throughput::ALL {
            let name = format!("sharing/{}", kind.name());
            let cells = |suffix: &str| {
                assemble(
                    &result.matrices,
                    &format!("{name}{suffix}"),
                    THROUGHPUT_UNIT,
                    cpus,
                )
            };
            let (values, centre) = cells("");
            if centre.is_empty() {
                continue;
            }
            let (_, lo) = cells("/lo");
            let (_, hi) = cells("/hi");
            let (_, n) = cells("/n");
            let at =
                |v: &[((u32, u32), f64)], p: (u32, u32)| v.iter().find(|c| c.0 == p).map(|c| c.1);
            let mut spread = values.clone();
            spread.name = format!("{name}/spread");
            for row in spread.values.iter_mut() {
                for v in row.iter_mut() {
                    *v = None;
                }
            }
            for &(pair, value) in &centre {
                let e = Estimate {
                    value,
                    lo: at(&lo, pair).unwrap_or(value),
                    hi: at(&hi, pair).unwrap_or(value),
                    n: at(&n, pair).unwrap_or(1.0) as usize,
                };
                let idx = |x: u32| cpus.iter().position(|&c| c == x);
                if let (Some(r), Some(k)) = (idx(pair.0), idx(pair.1)) {
                    spread.values[r][k] = Some(e.hi - e.lo);
                    spread.values[k][r] = Some(e.hi - e.lo);
                }
                by_pair
                    .entry(pair)
                    .or_default()
                    .push((kind.name().to_string(), e));
            }
            full.push(values);
            full.push(spread);
        }
        out.findings.extend(
            by_pair
                .iter()
                .filter_map(|(&(a, b), ratios)| pair_finding(a, b, ratios, &ctx.topo)),
        );
        // The per-pair cells become the full matrices.
        out.replace_matrices = Some(full);
        out
    }
}

/// Findings of one kernel's map: the sets of CPUs whose significant slowdown reaches
/// [`SHARED_SLOWDOWN`], or that none does.
fn share_findings(
    name: &str,
    unit: &str,
    pairs: &[((u32, u32), f64)],
    linked: &[((u32, u32), f64)],
    topo: &crate::topology::Topology,
) -> Vec<Finding> {
    let sets = groups(linked);
    let mut out = Vec::new();
    if sets.is_empty() && !pairs.is_empty() {
        let worst = pairs.iter().map(|p| p.1).fold(0.0, f64::max);
        out.push(Finding::Note {
            text: format!(
                "{name}: no two CPUs significantly slow each other by {:.0} % or more (worst {worst:.2}× among {} pairs): no shared {unit} seen by a dependent chain (two hardware threads of one core run it side by side; the throughput kernels test the core){}",
                (SHARED_SLOWDOWN - 1.0) * 100.0,
                pairs.len(),
                if topo.has_smt() { "" } else { "; the topology reports no SMT either" }
            ),
        });
    }
    for (set, v) in sets {
        let all_siblings = set
            .windows(2)
            .all(|w| subset::relation(topo, w[0], w[1]) == "SMT siblings");
        out.push(Finding::Note {
            text: format!(
                "{name}: CPUs {} slow each other (up to {v:.2}×, significant): they share an {unit}; {}",
                set.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
                if all_siblings {
                    "SMT siblings, as the topology says"
                } else {
                    "not all SMT siblings per the topology: a shared unit the OS does not report"
                }
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::plan_ctx;
    use crate::topology::from_synthetic;

    fn ratio(value: f64, lo: f64, hi: f64, n: usize) -> Estimate {
        Estimate { value, lo, hi, n }
    }

    /// Paired rounds as a co-run produces them: alone times around 10 ms, together
    /// `factor` slower per thread, each with its own noise (fixed, deterministic).
    fn rounds(factor: f64, noise: &[f64]) -> Estimate {
        let alone: Vec<f64> = (0..noise.len())
            .map(|i| 10e6 * (1.0 + 0.002 * i as f64))
            .collect();
        let together: Vec<f64> = alone
            .iter()
            .zip(noise)
            .map(|(a, n)| a / factor * (1.0 + n))
            .collect();
        crate::stats::compare_paired(&alone, &together)
            .unwrap()
            .ratio
    }

    #[test]
    fn half_the_throughput_is_shared_nearly_all_is_not_and_a_wide_interval_is_not_told_apart() {
        let small = [0.01, -0.012, 0.004, -0.006, 0.009, -0.003, 0.0, 0.007];
        // 0.5x co-run throughput: shared.
        let half = rounds(0.5, &small);
        assert!((half.value - 0.5).abs() < 0.01, "{half:?}");
        assert_eq!(verdict(&half), SharingVerdict::Shared);
        // 0.97x: not shared; separate cores.
        let near = rounds(0.97, &small);
        assert!(near.lo > SEPARATE_ABOVE, "{near:?}");
        assert_eq!(verdict(&near), SharingVerdict::Separate);
        // A wide interval (rounds from 0.5 to 1.0 together): not told apart.
        let wide = rounds(0.7, &[-0.3, 0.4, -0.25, 0.3, 0.0, 0.35, -0.2, 0.1]);
        assert!(
            wide.lo < SHARED_BELOW && wide.hi > SEPARATE_ABOVE,
            "{wide:?}"
        );
        assert_eq!(verdict(&wide), SharingVerdict::NotToldApart);
        // The same on bare estimates, at the thresholds.
        assert_eq!(verdict(&ratio(0.52, 0.50, 0.55, 8)), SharingVerdict::Shared);
        assert_eq!(
            verdict(&ratio(0.97, 0.95, 0.99, 8)),
            SharingVerdict::Separate
        );
        assert_eq!(
            verdict(&ratio(0.97, 0.95, 1.02, 8)),
            SharingVerdict::Separate
        );
        assert_eq!(
            verdict(&ratio(0.8, 0.5, 1.0, 8)),
            SharingVerdict::NotToldApart
        );
        // Between the thresholds: neither.
        assert_eq!(
            verdict(&ratio(0.87, 0.86, 0.88, 8)),
            SharingVerdict::NotToldApart
        );
        assert_eq!(
            verdict(&ratio(0.84, 0.83, SHARED_BELOW, 8)),
            SharingVerdict::NotToldApart
        );
        // An upper end above 1 (noise on the alone side) is no sign of sharing.
        assert_eq!(
            verdict(&ratio(1.0, 0.999, 1.136, 8)),
            SharingVerdict::Separate
        );
        // Too few rounds for a 95 % interval, or no interval: no verdict.
        assert_eq!(
            verdict(&ratio(0.5, 0.49, 0.51, 5)),
            SharingVerdict::NotToldApart
        );
        assert_eq!(
            verdict(&ratio(0.5, f64::NAN, 0.51, 8)),
            SharingVerdict::NotToldApart
        );
        assert_eq!(SharingVerdict::Shared.shared(), Some(true));
        assert_eq!(SharingVerdict::Separate.shared(), Some(false));
        assert_eq!(SharingVerdict::NotToldApart.shared(), None);
    }

    #[test]
    fn a_pair_is_shared_if_any_kernel_says_so_and_separate_only_if_all_do() {
        use SharingVerdict::*;
        assert_eq!(pair_verdict(&[Separate, Shared, NotToldApart]), Shared);
        assert_eq!(pair_verdict(&[Separate, Separate, Separate]), Separate);
        assert_eq!(pair_verdict(&[Separate, NotToldApart]), NotToldApart);
        assert_eq!(pair_verdict(&[]), NotToldApart);
    }

    #[test]
    fn a_pair_finding_holds_the_kernels_the_verdict_and_the_topology() {
        // Two cores of one thread each: separate cores per the topology.
        let topo = from_synthetic("pack:1 core:2 pu:1").unwrap();
        let ratios = vec![
            ("fma".to_string(), ratio(0.52, 0.50, 0.55, 8)),
            ("l1-load".to_string(), ratio(0.97, 0.95, 0.99, 8)),
            ("int-ports".to_string(), ratio(0.51, 0.2, 0.99, 8)),
        ];
        let (a, b) = {
            let c = topo.allowed_os_indices();
            (c[0], c[1])
        };
        let Some(Finding::CoreSharing {
            shared,
            kernel,
            ratio: r,
            ratios: all,
            topology,
            topology_same_core,
            ..
        }) = pair_finding(a, b, &ratios, &topo)
        else {
            panic!("no finding");
        };
        assert_eq!(shared, Some(true));
        // Stated with the lowest ratio among the kernels that say "shared": the
        // int-ports interval is wide, so fma.
        assert_eq!(kernel, "fma");
        assert_eq!(r, ratios[0].1);
        assert_eq!(all.len(), 3);
        assert!(!topology_same_core);
        assert_ne!(topology, "SMT siblings");
        // SMT siblings per the topology, all kernels separate.
        let smt = from_synthetic("pack:1 core:1 pu:2").unwrap();
        let c = smt.allowed_os_indices();
        let sep = vec![("fma".to_string(), ratio(0.98, 0.96, 1.0, 8))];
        let Some(Finding::CoreSharing {
            shared,
            topology,
            topology_same_core,
            ..
        }) = pair_finding(c[0], c[1], &sep, &smt)
        else {
            panic!("no finding");
        };
        assert_eq!(shared, Some(false));
        assert!(topology_same_core);
        assert_eq!(topology, "SMT siblings");
        assert!(pair_finding(0, 1, &[], &smt).is_none());
    }

    #[test]
    fn the_plan_runs_every_throughput_kernel_on_the_pairs_it_already_picks() {
        for profile in [Profile::Quick, Profile::Default, Profile::Full] {
            let ctx = plan_ctx(from_synthetic("pack:1 core:2 pu:1").unwrap(), profile, 60.0);
            let plan = Sharing.plan(&ctx).unwrap();
            assert_eq!(plan.cases.len(), 1, "one pair on 2 CPUs");
            let c: CaseParams = plan.cases[0].params.clone();
            assert_eq!(c.throughput_kernels, Throughput::ALL.to_vec());
            assert!(c.throughput_rounds >= MIN_ROUNDS_FOR_VERDICT);
            assert!(c.throughput_run_ns > 0);
            for key in [
                "throughput_kernels",
                "fma_level",
                "shared_below",
                "separate_above",
                "throughput_rounds",
                "l1_block_bytes",
            ] {
                assert!(plan.params.contains_key(key), "{key}");
            }
        }
        // A big machine: the pairs by level, not every pair of the subset.
        let big = plan_ctx(
            from_synthetic("pack:2 core:32 pu:2").unwrap(),
            Profile::Default,
            600.0,
        );
        let plan = Sharing.plan(&big).unwrap();
        assert!(plan.cases.len() <= PAIRS_PER_LEVEL * subset::Level::ALL.len());
        assert!(plan.params.contains_key("scaled_down"));
    }

    #[test]
    fn the_fma_level_is_one_this_cpu_runs_and_never_avx512() {
        let l = fma_level();
        assert!(l.available().is_ok());
        assert_ne!(l, Level::Avx512Fma);
    }

    #[test]
    fn each_throughput_kernel_runs() {
        let block: Vec<u64> = (0..L1_BLOCK_WORDS as u64).collect();
        for k in Throughput::ALL {
            assert!(k.run(fma_level(), 10, 1, &block).is_ok(), "{}", k.name());
        }
    }

    #[test]
    fn groups_join_linked_cpus() {
        let p = vec![((0, 1), 1.9), ((2, 3), 1.8), ((1, 4), 1.5), ((0, 2), 1.05)];
        let g = groups(&p);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, vec![0, 1, 4]);
        assert_eq!(g[1].0, vec![2, 3]);
        assert!(groups(&[((0, 1), 1.0)]).is_empty());
        // Two sets joined by a later pair.
        let g = groups(&[((0, 1), 2.0), ((2, 3), 2.0), ((1, 2), 2.0)]);
        assert_eq!(g, vec![(vec![0, 1, 2, 3], 2.0)]);
    }
}
