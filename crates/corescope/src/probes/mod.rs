//! The probe contract and the registry of probes.
//!
//! A probe owns its kernel and its sweep; the runner owns threads, pinning,
//! budgets and progress. A new probe is one file plus one line in [`registry`].

use crate::clock::Clock;
use crate::harness::team::{run_team_counted, TeamError, TeamOutcome};
use crate::model::Profile;
use crate::placement::{Placer, Strategy};
use crate::topology::Topology;
use std::time::Instant;

mod contract;
pub use contract::{Analysis, AnyProbe, Case, Plan, Planned, Probe};

pub mod atomics;
pub mod c2c;
pub mod channel;
pub mod channel_tune;
pub mod clock_curve;
pub mod compute;
pub mod condvar;
pub mod cost;
pub mod false_sharing;
pub mod loaded_coherence;
pub mod loaded_latency;
pub mod matmul;
pub mod memory;
pub mod mutex;
pub mod numa;
pub mod peak;
pub mod pool;
pub mod sharing;
pub mod spin;
pub mod syscall;
pub mod threads;
pub mod timers;
pub mod workload;

/// Every probe this build knows, in the order `corescope run` runs them.
pub fn registry() -> Vec<Box<dyn AnyProbe>> {
    vec![
        Box::new(compute::Compute),
        Box::new(peak::Peak),
        Box::new(clock_curve::ClockCurve),
        Box::new(memory::Memory),
        Box::new(numa::Numa),
        Box::new(loaded_latency::LoadedLatency),
        Box::new(workload::Workload),
        Box::new(threads::Threads),
        Box::new(mutex::MutexProbe),
        Box::new(condvar::Condvar),
        Box::new(timers::Timers),
        Box::new(syscall::Syscall),
        Box::new(atomics::Atomics),
        Box::new(c2c::C2c),
        Box::new(loaded_coherence::LoadedCoherence),
        Box::new(false_sharing::FalseSharing),
        Box::new(sharing::Sharing),
        Box::new(spin::Spin),
        Box::new(channel::ChannelProbe),
        Box::new(channel_tune::ChannelTune::default()),
        Box::new(pool::PoolProbe),
        Box::new(matmul::Matmul),
    ]
}

/// Look a probe up by id.
pub fn find(id: &str) -> Option<Box<dyn AnyProbe>> {
    registry().into_iter().find(|p| p.id() == id)
}

/// The CPUs a placement gives `threads` threads and the configuration they describe
/// (`CPUs 0,1,0`, or `unbound` when the OS decides): placements with equal
/// configurations are measured once (see [`Case::compared`]).
pub fn placement_config(
    topo: &Topology,
    strategy: &Strategy,
    threads: usize,
) -> Result<(Vec<Option<u32>>, String), ProbeError> {
    placer_config(&Placer::new(topo, strategy), threads)
}

/// [`placement_config`] with the strategy's order computed once ([`Placer`]), for
/// a sweep of thread counts.
pub fn placer_config(
    placer: &Placer,
    threads: usize,
) -> Result<(Vec<Option<u32>>, String), ProbeError> {
    let cpus = placer.assign(threads)?;
    let config = team_config(&cpus, threads);
    Ok((cpus, config))
}

/// The configurations of a sweep's placements at its thread counts, each
/// placement's order computed once ([`Placer`]) and each (placement, thread count)
/// configuration once, however many kernels or methods share it.
pub struct SweepConfigs {
    /// One per placement of the sweep, in its order.
    placers: Vec<Placer>,
    /// (placement index, threads) → configuration.
    done: std::collections::HashMap<(usize, usize), String>,
}

impl SweepConfigs {
    /// The sweep of `placements` on `topo`.
    pub fn new(topo: &Topology, placements: &[Strategy]) -> Self {
        Self {
            placers: placements.iter().map(|p| Placer::new(topo, p)).collect(),
            done: Default::default(),
        }
    }

    /// The configuration of placement `index` (of those given to [`SweepConfigs::new`])
    /// with `threads` threads, as [`placement_config`] gives it.
    pub fn config(&mut self, index: usize, threads: usize) -> Result<String, ProbeError> {
        if let Some(c) = self.done.get(&(index, threads)) {
            return Ok(c.clone());
        }
        let placer = self
            .placers
            .get(index)
            .ok_or(ProbeError::NoSuchPlacement { index })?;
        let (_, config) = placer_config(placer, threads)?;
        self.done.insert((index, threads), config.clone());
        Ok(config)
    }
}

/// The configuration a symmetric team runs (every thread the same work, as in
/// compute, peak, memory and atomics): the set of CPUs and how many threads each
/// holds, not their order. Two placements that give the same CPUs the same number
/// of threads (every bound placement at the CPU count: all CPUs once) are one
/// configuration, measured once (`runner`: same configuration).
pub fn team_config(cpus: &[Option<u32>], threads: usize) -> String {
    let mut bound: Vec<u32> = cpus.iter().flatten().copied().collect();
    if bound.is_empty() {
        return format!("unbound ×{threads}");
    }
    // Threads per CPU from the sorted list's runs, CPUs grouped by that count.
    bound.sort_unstable();
    let mut by_count: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for run in bound.chunk_by(|a, b| a == b) {
        by_count.entry(run.len()).or_default().push(run[0]);
    }
    let parts: Vec<String> = by_count
        .iter()
        .map(|(&n, list)| {
            let l = Topology::format_cpu_list(list);
            match (n, by_count.len()) {
                (1, 1) => l,
                (1, _) => format!("{l} (1 thread each)"),
                _ => format!("{l} ({n} threads each)"),
            }
        })
        .collect();
    let unbound = cpus.len() - bound.len();
    let tail = if unbound > 0 {
        format!(" + {unbound} unbound")
    } else {
        String::new()
    };
    format!("CPUs {}{tail}", parts.join(", "))
}

/// The core clock to divide a team's per-second figure by: read in the same round
/// on the CPUs the team used (one per thread, at most one per CPU), so per-cycle
/// figures follow the clock between epochs and runs; the run's header clock when
/// the chain cannot run here or the team is larger than
/// [`crate::clock::ROUND_CLOCK_MAX_CPUS`].
pub fn round_clock_hz(ctx: &RunCtx, team: &[Option<u32>], threads: usize) -> f64 {
    let on = clock_cpus(&ctx.plan.topo, team);
    (on.len() <= crate::clock::ROUND_CLOCK_MAX_CPUS)
        .then(|| crate::clock::core_hz_now(&ctx.plan.clock, &on))
        .flatten()
        .unwrap_or_else(|| ctx.plan.clock.per_cycle_hz(threads).hz)
}

/// The CPUs whose clock a team's per-cycle figure divides by: the distinct CPUs it
/// was pinned to, or, unbound, as many allowed CPUs as it had threads.
fn clock_cpus(topo: &crate::topology::Topology, team: &[Option<u32>]) -> Vec<u32> {
    let mut pinned: Vec<u32> = team.iter().flatten().copied().collect();
    pinned.sort_unstable();
    pinned.dedup();
    if !pinned.is_empty() {
        return pinned;
    }
    topo.allowed_os_indices()
        .into_iter()
        .take(team.len())
        .collect()
}

/// A case's placement as written in its parameters (`scatter`, `0,2,4-7`), parsed
/// again, and the CPUs it gives `threads` threads.
pub fn placed(
    topo: &Topology,
    placement: &str,
    threads: usize,
) -> Result<(Strategy, Vec<Option<u32>>), ProbeError> {
    let strategy = Strategy::parse(placement)?;
    let (cpus, _) = placement_config(topo, &strategy, threads)?;
    Ok((strategy, cpus))
}

/// Smallest number of rounds of a compared variant: the signed-rank test needs 6
/// pairs to reach 5 % at all; 12 give it power against a 20 % difference under the
/// noise of a shared machine (see the tests in `stats`).
pub const MIN_COMPARED_ROUNDS: usize = 12;

/// The fewest samples whose median has a distribution-free 95 % interval:
/// `P(Binomial(n, ½) = 0) · 2 = 2^(1−n) ≤ 5 %` first holds at n = 6.
pub const MIN_INTERVAL_SAMPLES: usize = 6;
/// Most rounds of a compared variant.
pub const MAX_ROUNDS: usize = 30;
/// Rounds stop early once every point's interval is within ±1 %.
pub const TARGET_REL_HALF_WIDTH: f64 = 0.01;

/// How the runner repeats a case: each round runs [`Probe::run`] once, which returns
/// one or more samples per point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounds {
    /// Rounds always run (unless the budget ends first).
    pub min: usize,
    /// Rounds at most: further rounds run while an interval is wider than `target`.
    pub max: usize,
    /// Run each case once, untimed, before the first round (caches, page tables,
    /// frequency ramp-up).
    pub warmup: bool,
    /// Stop adding rounds once every point's 95 % interval is within ±this (relative).
    pub target_rel_half_width: f64,
}

impl Rounds {
    /// Run once: the probe repeats internally (distributions of many samples).
    pub const ONCE: Rounds = Rounds {
        min: 1,
        max: 1,
        warmup: false,
        target_rel_half_width: f64::INFINITY,
    };

    /// The rounds of a point measured on its own (no variant to pair it with): the
    /// least number of samples whose median has a 95 % interval
    /// ([`MIN_INTERVAL_SAMPLES`]), after one untimed run.
    pub const REPEATED: Rounds = Rounds {
        min: MIN_INTERVAL_SAMPLES,
        max: MIN_INTERVAL_SAMPLES,
        warmup: true,
        target_rel_half_width: f64::INFINITY,
    };

    /// The rounds of a compared variant: enough for the signed-rank test to be able to
    /// find a difference, more while intervals are wide.
    pub const COMPARED: Rounds = Rounds {
        min: MIN_COMPARED_ROUNDS,
        max: MAX_ROUNDS,
        warmup: true,
        target_rel_half_width: TARGET_REL_HALF_WIDTH,
    };
}

/// How a case or a probe failed to produce a measurement.
///
/// Every variant but [`Skipped`](ProbeError::Skipped) and
/// [`GaveUp`](ProbeError::GaveUp) is a failure: the probe is recorded as failed,
/// its reason the error's words (`runner`).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Not measurable on this machine; the probe is recorded as skipped.
    #[error("skipped: {0}")]
    Skipped(String),
    /// The budget ran out inside the case.
    #[error("gave up: {0}")]
    GaveUp(String),
    /// The thread team failed (a spawn, a pin, a panic).
    #[error(transparent)]
    Team(#[from] TeamError),
    /// A block could not be allocated.
    #[error(transparent)]
    Buffer(#[from] crate::kernels::buffer::BufferError),
    /// A channel could not be made.
    #[error(transparent)]
    Channel(#[from] crate::harness::spsc::adapters::ChannelError),
    /// A step of a case failed on an error of its own (a block, a page, a file, a
    /// channel's stream): the step (`ws-read`, a kernel's name, `0↔1`) and the error.
    #[error("{step}: {source}")]
    Step {
        /// The step, as the failure names it.
        step: String,
        /// Its error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A case index past the sweep's placements.
    #[error("placement {index} is not one of the sweep's")]
    NoSuchPlacement {
        /// The index asked for.
        index: usize,
    },
    /// A case index past the plan's cases.
    #[error("case {index} is not one of the plan's {cases}")]
    NoSuchCase {
        /// The index asked for.
        index: usize,
        /// Cases in the plan.
        cases: usize,
    },
    /// A case names a variant its probe does not have.
    #[error("unknown variant '{0}'")]
    UnknownVariant(String),
    /// A thread's counter did not reach the count its increments make.
    #[error("counter {counter} is {got}, expected {expected}: lost increments")]
    CounterOff {
        /// The thread whose counter it is.
        counter: usize,
        /// The count read.
        got: u64,
        /// The count the increments make.
        expected: u64,
    },
    /// A shared counter differs from the successes its threads counted.
    #[error("{method}: lost increments: counter {counter}, successes {successes}")]
    LostIncrements {
        /// The method of incrementing.
        method: &'static str,
        /// The counter read.
        counter: u64,
        /// Successful increments counted by the threads.
        successes: u64,
    },
    /// A spin benchmark's checksum changed between runs, or a spinner did not start.
    #[error("{kind}: a benchmark's checksum changed between runs, or a spinner did not start")]
    Unpaired {
        /// The spin kind.
        kind: &'static str,
    },
    /// A run of events stalled before its limit passed.
    #[error("{run}: stalled after {received} events ({limit_s} s without finishing)")]
    Stalled {
        /// The run: the implementation and what it ran.
        run: String,
        /// Events received.
        received: u64,
        /// The run's limit, in seconds.
        limit_s: f64,
    },
    /// A `pool` case failed (a runtime, a kernel, a check).
    #[error(transparent)]
    Pool(#[from] crate::probes::pool::error::PoolFailure),
    /// A case's placement does not parse or cannot place its threads here.
    #[error(transparent)]
    Placement(#[from] crate::placement::PlacementError),
    /// A level's kernel cannot run here.
    #[error(transparent)]
    Level(#[from] peak::LevelMissing),
    /// A case names a spin loop that does not exist.
    #[error(transparent)]
    SpinKind(#[from] crate::kernels::spin_loops::UnknownSpinKind),
    /// A channel tuning stopped.
    #[error(transparent)]
    Tune(#[from] channel_tune::TuneError),
    /// A part of the measurement produced nothing.
    #[error(transparent)]
    NotRun(#[from] NotRun),
}

/// The part of a measurement that produced nothing ([`ProbeError::NotRun`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotRun {
    /// The team returned no repetition.
    #[error("no repetition ran")]
    Repetition,
    /// No clock chain ran.
    #[error("no chain ran")]
    Chain,
    /// The latency chaser returned nothing.
    #[error("the chaser did not run")]
    Chaser,
    /// The lock holder returned nothing.
    #[error("the holder did not run")]
    Holder,
    /// The signaller returned nothing.
    #[error("the signaller did not run")]
    Signaller,
    /// The parent thread of a spawn returned nothing.
    #[error("the parent thread did not run")]
    ParentThread,
    /// The kernel returned no time.
    #[error("the kernel did not run")]
    Kernel,
    /// No benchmark gave a time to compare.
    #[error("no benchmark time was measured")]
    BenchmarkTime,
    /// The thread that touches a block first panicked.
    #[error("the first-touch thread panicked")]
    FirstTouch,
}

impl ProbeError {
    /// [`ProbeError::Step`]: `step` failed on `source`.
    pub fn step(
        step: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        ProbeError::Step {
            step: step.into(),
            source: source.into(),
        }
    }
}

/// User overrides of the sweep.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--threads`: thread counts to measure instead of the profile's.
    pub threads: Option<Vec<usize>>,
    /// `--placement`: strategies to measure instead of the probe's.
    pub placements: Option<Vec<Strategy>>,
    /// `--epochs`: passes over each probe's repeated groups (default
    /// `stats::epochs::EPOCHS`).
    pub epochs: Option<usize>,
}

/// What a probe may read while planning.
#[derive(Debug, Clone)]
pub struct PlanCtx {
    /// The machine.
    pub topo: Topology,
    /// The calibrated counter.
    pub clock: Clock,
    /// Size profile.
    pub profile: Profile,
    /// User overrides.
    pub overrides: Overrides,
    /// Seconds the probe may take.
    pub budget_s: f64,
}

impl PlanCtx {
    /// CPUs this process may use.
    pub fn cpus(&self) -> usize {
        self.topo.allowed_count()
    }

    /// Thread counts of the seeds, 2^n and 2^n + 2^(n−1) (1, 2, 3, 4, 6, 8, 12, ...),
    /// plus the CPU count and its multiples, up to `factor` × CPUs; or the user's list.
    /// The default profile on more than [`THIN_ABOVE_CPUS`] CPUs thins the list
    /// ([`thinned_thread_counts`]) so a default run keeps within 10 minutes.
    pub fn thread_counts(&self, factor: usize) -> Vec<usize> {
        if let Some(t) = &self.overrides.threads {
            return t.clone();
        }
        if self.thinned() {
            return thinned_thread_counts(self.cpus(), factor);
        }
        default_thread_counts(self.cpus(), factor)
    }

    /// Whether this plan thins its thread-count sweeps (the default profile on more
    /// than [`THIN_ABOVE_CPUS`] CPUs, without `--threads`).
    pub fn thinned(&self) -> bool {
        self.profile == Profile::Default
            && self.cpus() > THIN_ABOVE_CPUS
            && self.overrides.threads.is_none()
    }

    /// [`PlanCtx::thinned`] in words for a plan's `scaled_down`, `extra` appended.
    pub fn thinned_note(&self, extra: &str) -> Option<String> {
        self.thinned()
            .then(|| format!("thinned thread counts{extra}"))
    }

    /// Whether a side variant (one beside a probe's main kernels: first touch, huge
    /// pages, the narrower vector units) is measured at `threads`: at every count,
    /// except on a thinned plan ([`PlanCtx::thinned`]), where only at one thread and
    /// at the CPU count — the two ends its finding speaks of.
    pub fn side_count(&self, threads: usize) -> bool {
        !self.thinned() || threads == 1 || threads == self.cpus()
    }

    /// Placements to sweep: the user's; on a thinned plan ([`PlanCtx::thinned`])
    /// `thinned`; else `default`.
    pub fn placements_or_thinned(
        &self,
        default: &[Strategy],
        thinned: &[Strategy],
    ) -> Vec<Strategy> {
        if self.thinned() {
            self.placements(thinned)
        } else {
            self.placements(default)
        }
    }

    /// Memory the plan may size its blocks by. On this machine: what the memory guard
    /// finds free now (`memguard::available`). For an XML export or a synthetic
    /// topology: the memory of its NUMA nodes as hwloc reports it, so that a plan made
    /// elsewhere does not depend on the planning host; where the topology reports no
    /// memory, none is assumed short (blocks as requested).
    pub fn memory_available(&self) -> crate::memguard::Available {
        use crate::memguard::Available;
        if self.topo.is_this_machine() {
            return crate::memguard::available().unwrap_or(Available {
                bytes: 1 << 30,
                source: "nothing readable; assumed 1 GiB".into(),
            });
        }
        match self.topo.memory_bytes {
            Some(bytes) => Available {
                bytes,
                source: format!("the NUMA nodes' memory of {}", self.topo.source),
            },
            None => Available {
                bytes: u64::MAX / 2,
                source: format!("{} reports no memory; none assumed short", self.topo.source),
            },
        }
    }

    /// Placements to sweep: the user's, or the given default.
    pub fn placements(&self, default: &[Strategy]) -> Vec<Strategy> {
        self.overrides
            .placements
            .clone()
            .unwrap_or_else(|| default.to_vec())
    }
}

/// Above this many allowed CPUs the default profile measures fewer thread counts
/// ([`thinned_thread_counts`]): with the seeds' full list (1, 2, 3, 4, 6, … to 4×
/// CPUs) compute, peak, memory and atomics alone take over 10 minutes on 7 CPUs
/// (`corescope plan --xml 16em64t-4s2c2t-offlines.xml`, see docs/plan.md).
pub const THIN_ABOVE_CPUS: usize = 4;

/// What [`thinned_thread_counts`] keeps, in words (for `corescope plan` and docs).
pub const THINNED_RULE: &str =
    "thread counts thinned: powers of two (of four above 256 CPUs) up to the CPU count, the CPU count, and 2× CPUs where the sweep went to 4×; side variants (memory's first-touch and huge-page reads, peak's narrower vector units) at one thread and the CPU count only";

/// Above this many allowed CPUs the thinned ladder steps by 4 instead of 2 (1, 4,
/// 16, 64, …): seven points still draw the curve on a log axis, and the cases of
/// hundreds of threads are the costly ones (`corescope plan --synthetic "pack:8
/// numa:2 core:32 pu:4"`: 12.5 minutes with powers of two).
pub const POWERS_OF_FOUR_ABOVE_CPUS: usize = 256;

/// The default profile's thread counts on a big machine: powers of two (of four
/// above [`POWERS_OF_FOUR_ABOVE_CPUS`] CPUs) up to the CPU count, the CPU count itself, and twice it when `factor` ≥ 4 (oversubscription
/// is shown once, not at 3× and 4×; memory's sweep to 2× stops at the CPU count).
pub fn thinned_thread_counts(cpus: usize, factor: usize) -> Vec<usize> {
    let cpus = cpus.max(1);
    let step = if cpus > POWERS_OF_FOUR_ABOVE_CPUS {
        4
    } else {
        2
    };
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |p| Some(p * step))
        .take_while(|&p| p <= cpus)
        .collect();
    v.push(cpus);
    if factor >= 4 {
        v.push(2 * cpus);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// 1, 2, 3, 4, 6, 8, 12, 16, ... up to `factor × cpus`, with `cpus`, `2·cpus`, ...
/// included so the saturation point and full occupancy are always measured.
pub fn default_thread_counts(cpus: usize, factor: usize) -> Vec<usize> {
    let max = cpus.max(1) * factor.max(1);
    let mut v = vec![1];
    let mut p = 2;
    while p <= max {
        v.push(p);
        if p + p / 2 <= max {
            v.push(p + p / 2);
        }
        p *= 2;
    }
    let mut m = cpus.max(1);
    while m <= max {
        v.push(m);
        m += cpus.max(1);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Progress reported while a suite runs; the CLI turns these into a progress bar.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A probe begins with this many cases.
    ProbeStart {
        /// Probe id.
        id: String,
        /// Number of cases planned.
        cases: usize,
    },
    /// A case begins.
    CaseStart {
        /// Probe id.
        id: String,
        /// 0-based case index.
        index: usize,
        /// Case label.
        label: String,
    },
    /// A probe ended.
    ProbeEnd {
        /// Probe id.
        id: String,
        /// Final status name.
        status: String,
    },
}

/// What a probe may use while measuring.
pub struct RunCtx<'a> {
    /// Everything available while planning.
    pub plan: &'a PlanCtx,
    /// The probe's deadline: after it the runner stops starting cases.
    pub deadline: Instant,
    /// Warnings the probe wants stored with its result.
    pub warnings: Vec<crate::model::Warning>,
    /// What the teams of the running case counted; the runner files them under
    /// the case (`counters::record`) after every run and drops the warm-up's.
    pub counted: Vec<crate::counters::TeamCount>,
    /// Memory blocks a probe keeps between the runs of one group (the memory
    /// probe's bandwidth arrays); the runner frees them when the group ends.
    pub blocks: crate::kernels::buffer::BlockCache,
}

impl RunCtx<'_> {
    /// Whether the budget is spent.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Run a team under this probe's deadline; pinning warnings go to the result,
    /// and every worker's event counters (software always, hardware where the PMU
    /// exists) around the kernel go to [`RunCtx::counted`].
    pub fn team<S, R, FS, FK>(
        &mut self,
        cpus: &[Option<u32>],
        reps: usize,
        setup: FS,
        kernel: FK,
    ) -> Result<TeamOutcome<R>, ProbeError>
    where
        R: Send,
        FS: Fn(usize) -> S + Sync,
        FK: Fn(usize, &mut S) -> R + Sync,
    {
        self.team_with(cpus, reps, true, setup, kernel)
    }

    /// [`RunCtx::team`] without event counters, for kernels whose figure is a
    /// context switch (a sleeping waiter's wake-up, a new thread's start): the
    /// software counters' switch-in and switch-out hooks cost about 2 µs per switch
    /// on a KVM guest (a same-CPU mutex wake-up: median 4.2–4.6 µs counted, 2.4–2.5
    /// µs not), which such a figure would include.
    pub fn team_uncounted<S, R, FS, FK>(
        &mut self,
        cpus: &[Option<u32>],
        reps: usize,
        setup: FS,
        kernel: FK,
    ) -> Result<TeamOutcome<R>, ProbeError>
    where
        R: Send,
        FS: Fn(usize) -> S + Sync,
        FK: Fn(usize, &mut S) -> R + Sync,
    {
        self.team_with(cpus, reps, false, setup, kernel)
    }

    fn team_with<S, R, FS, FK>(
        &mut self,
        cpus: &[Option<u32>],
        reps: usize,
        count: bool,
        setup: FS,
        kernel: FK,
    ) -> Result<TeamOutcome<R>, ProbeError>
    where
        R: Send,
        FS: Fn(usize) -> S + Sync,
        FK: Fn(usize, &mut S) -> R + Sync,
    {
        let mut out = run_team_counted(cpus, reps, Some(self.deadline), count, setup, kernel)?;
        self.counted.extend(out.counts.take());
        for w in &out.warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_configuration_is_its_cpus_and_threads_per_cpu_not_their_order() {
        let c = |v: &[u32]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(team_config(&c(&[0, 192, 1, 193]), 4), "CPUs 0-1,192-193");
        assert_eq!(
            team_config(&c(&[0, 192, 1, 193]), 4),
            team_config(&c(&[0, 1, 192, 193]), 4)
        );
        assert_eq!(
            team_config(&c(&[0, 1, 0, 1]), 4),
            "CPUs 0-1 (2 threads each)"
        );
        assert_eq!(
            team_config(&c(&[0, 1, 0]), 3),
            "CPUs 1 (1 thread each), 0 (2 threads each)"
        );
        assert_ne!(team_config(&c(&[0, 1]), 2), team_config(&c(&[0, 2]), 2));
        assert_eq!(team_config(&[None, None], 2), "unbound ×2");
        assert_eq!(team_config(&[Some(3), None], 2), "CPUs 3 + 1 unbound");
    }

    #[test]
    fn thread_counts_follow_the_seed() {
        assert_eq!(default_thread_counts(2, 4), vec![1, 2, 3, 4, 6, 8]);
        assert_eq!(default_thread_counts(1, 4), vec![1, 2, 3, 4]);
        assert_eq!(default_thread_counts(12, 1), vec![1, 2, 3, 4, 6, 8, 12]);
        let big = default_thread_counts(512, 4);
        assert_eq!(big.first(), Some(&1));
        assert_eq!(big.last(), Some(&2048));
        assert!(big.contains(&512) && big.contains(&768) && big.contains(&1536));
        assert!(big.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn thinned_counts_keep_powers_of_two_the_cpu_count_and_twice_it() {
        assert_eq!(thinned_thread_counts(16, 4), vec![1, 2, 4, 8, 16, 32]);
        assert_eq!(thinned_thread_counts(48, 1), vec![1, 2, 4, 8, 16, 32, 48]);
        assert_eq!(thinned_thread_counts(1, 4), vec![1, 2]);
        assert_eq!(thinned_thread_counts(16, 2), vec![1, 2, 4, 8, 16]);
        let big = thinned_thread_counts(2048, 4);
        assert_eq!(big, vec![1, 4, 16, 64, 256, 1024, 2048, 4096]);
        assert_eq!(
            thinned_thread_counts(256, 4),
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        );
        assert_eq!(thinned_thread_counts(384, 1), vec![1, 4, 16, 64, 256, 384]);
    }

    #[test]
    fn registry_ids_are_unique() {
        let ids: Vec<&str> = registry().iter().map(|p| p.id()).collect();
        let mut dedup = ids.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(ids.len(), dedup.len());
    }

    #[test]
    fn a_part_that_did_not_run_is_worded_as_before() {
        let said = |p: NotRun| ProbeError::from(p).to_string();
        assert_eq!(said(NotRun::Repetition), "no repetition ran");
        assert_eq!(said(NotRun::Chain), "no chain ran");
        assert_eq!(said(NotRun::Chaser), "the chaser did not run");
        assert_eq!(said(NotRun::Holder), "the holder did not run");
        assert_eq!(said(NotRun::Signaller), "the signaller did not run");
        assert_eq!(said(NotRun::ParentThread), "the parent thread did not run");
        assert_eq!(said(NotRun::Kernel), "the kernel did not run");
        assert_eq!(
            said(NotRun::BenchmarkTime),
            "no benchmark time was measured"
        );
        assert_eq!(said(NotRun::FirstTouch), "the first-touch thread panicked");
    }
}
