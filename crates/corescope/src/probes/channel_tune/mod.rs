//! `corescope tune channel`: seed 004's Stage One (the roadmap of Figure 1, then
//! loops 1–3 of Figure 2 and the wait strategies) and Stage Two (a profiled
//! recursive Fibonacci against the Optimal, Achievable and Upper-bound lines, over
//! buffer sizes × wait strategies × affinity), pruned to a time budget, ending in
//! the fastest configuration as JSON that `hspc::Config` reads back. The steps,
//! their shares of the budget and the settling of each choice are described in
//! docs/channel.md (`tune channel`). Every run checks its events.

mod error;
mod result;
pub use error::TuneError;
mod roadmap;
pub use roadmap::{NoSmt, ROADMAP_TITLE};
mod fib;
#[cfg(test)]
mod fixture;
mod grid;
mod rounds;
mod settle;
mod stage_one;
mod stage_two;

use crate::counters::{CountedRun, CounterError, Switches, TeamCount};
use crate::harness::spsc::{gated, SideCounter};
use crate::model::tuning::StepNote;
use crate::model::{Measurement, Sensitivity, Warning};
use crate::placement::pairs::{self, PairCpus, Relation};
use crate::probes::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::topology::Topology;
use hspc::{Config, Mode, WaitStrategy};
use rounds::{round_order, rounds, spread_order};
use settle::{settle, Settled};
use stage_one::stage_one;
use stage_two::stage_two;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Buffer sizes of seed 004 Figure 2, in bytes.
pub const STAGE_ONE_BUFFER_BYTES: [usize; 25] = [
    256, 512, 768, 1024, 1200, 1600, 2000, 2048, 2200, 2500, 3000, 3500, 4096, 4500, 5000, 5500,
    6000, 7000, 8192, 10000, 16384, 32768, 65536, 1_000_000, 1_500_000,
];
/// Padding values of loop 1 (Figure 2), in bytes.
pub const PADDINGS: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/// Numbers of buffers of Figure 2.
pub const BUFFER_COUNTS: [usize; 4] = [2, 3, 4, 5];
/// Event sizes Stage One can move; other sizes round up to the next one.
pub const EVENT_SIZES: [usize; 12] = [1, 2, 4, 8, 16, 24, 32, 64, 128, 256, 512, 1024];
/// Buffer sizes of Stage Two (after the Stage One best, which is tried first).
pub const STAGE_TWO_BUFFER_BYTES: [usize; 6] = [4096, 65536, 16384, 1024, 262_144, 1_048_576];
/// Interpreter-like work per Fibonacci call (dependent multiply-adds), so the
/// producer is not only calls and events.
pub const WORK_STEPS: u32 = 200;
/// The producer looks at the clock every this-many-plus-one events.
const CUT_CHECK_MASK: u64 = 0xfff;
/// Default budget of `tune channel`, in seconds.
pub const DEFAULT_BUDGET_S: f64 = 60.0;
/// Default event size of Stage One, in bytes (the seed's shrunk profiling event).
pub const DEFAULT_EVENT_BYTES: usize = 24;
/// Shares of the budget (from the start) at which each step stops starting
/// configurations: roadmap, padding (loop 1), stack offset (loop 2), the buffer
/// grid (loop 3), wait strategy (Stage One), then 128-byte and 24-byte Stage
/// Two. Every step measures at least its first configuration while the whole
/// budget lasts.
const STEP_ENDS: [f64; 7] = [0.08, 0.13, 0.18, 0.37, 0.45, 0.70, 0.95];

/// Where step `i`'s sweep stops starting configurations: 70 % of the way to its
/// end in [`STEP_ENDS`]; the rest settles the step's choice (see [`settle`]).
fn sweep_end(i: usize) -> f64 {
    let start = if i == 0 { 0.0 } else { STEP_ENDS[i - 1] };
    start + 0.7 * (STEP_ENDS[i] - start)
}

/// The event size Stage One uses for `n` requested bytes.
pub fn event_size_for(n: usize) -> Result<usize, TuneError> {
    if n == 0 {
        return Err(TuneError::NoEventBytes);
    }
    EVENT_SIZES
        .iter()
        .copied()
        .find(|&s| s >= n)
        .ok_or(TuneError::EventBytesOver(n))
}

/// Validated options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes per Stage One event, as asked.
    pub event_bytes: usize,
    /// Seconds the whole tuning may take.
    pub budget_s: f64,
    /// Configurations to race in Stage Two's settling beside the tuner's own
    /// contenders (`tune channel --against`).
    pub against: Vec<Against>,
}

/// A configuration a user asked the tuner to race (an earlier run's choice, or
/// the one in use), and what to call it.
#[derive(Debug, Clone, PartialEq)]
pub struct Against {
    /// Its name in notes: the file it came from.
    pub name: String,
    /// The configuration; run pinned to the tuning pair when it has an affinity.
    pub config: Config,
}

/// One measured configuration (or baseline line) of a step.
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// What was run.
    pub label: String,
    /// The channel configuration, for channel runs.
    pub config: Option<Config>,
    /// Events moved (or produced).
    pub events: u64,
    /// Wall time.
    pub secs: f64,
    /// Stopped at the per-run time limit before all its events were sent.
    pub cut: bool,
    /// Stage Two: the producer and consumer pinned to the pair (affinity on) or
    /// left to the OS (off). `None` in Stage One, which always pins.
    pub pinned: Option<bool>,
    /// Stage One channel runs: context switches of the producer and of the
    /// consumer thread from the start gate to their last event.
    pub switches: Option<[Switches; 2]>,
    /// Seconds per event of the repeated runs that settled the step's choice (see
    /// `settle`), paired by round with the other contenders'.
    pub repeats: Vec<f64>,
    /// Stage Two channel runs: CPU time of the producer and of the consumer thread
    /// (`CLOCK_THREAD_CPUTIME_ID`) from the start gate to their end, as a share of
    /// the run's wall time (seed 004 §4: the producer ~100 %, the consumer ~41 %).
    pub cpu_share: Option<[f64; 2]>,
    /// Seconds per event of the further runs of the step's own rounds (the
    /// roadmap's, Stage Two's grid), interleaved with the other rows' and apart
    /// from `repeats` (which `settle` pairs by its own rounds).
    pub samples: Vec<f64>,
    /// Why the row was not measured (the SMT baseline without SMT): its numbers
    /// are left empty, never invented.
    pub skipped: Option<String>,
}

/// One channel run (or roadmap line run as one).
#[derive(Debug, Default)]
struct Run {
    /// From the start gate to the consumer's last event.
    secs: f64,
    /// Events moved.
    moved: u64,
    /// Stopped at the cut before all its events were sent.
    cut: bool,
    /// Stage One: producer's and consumer's context switches during the run.
    switches: Option<[Switches; 2]>,
    /// Stage Two: producer's and consumer's CPU time as a share of `secs`.
    cpu_share: Option<[f64; 2]>,
}

impl Run {
    /// Seconds per event moved.
    fn per_event_s(&self) -> f64 {
        self.secs / self.moved.max(1) as f64
    }
}

impl Row {
    /// A line run once: `events` in `secs`, not cut, not repeated, with nothing
    /// else recorded (the fields a caller has are set with `..Row::once(…)`).
    pub fn once(label: impl Into<String>, config: Option<Config>, events: u64, secs: f64) -> Self {
        Self {
            label: label.into(),
            config,
            events,
            secs,
            ..Self::default()
        }
    }

    /// The row of one channel run of `config`.
    fn of_run(label: impl Into<String>, config: Config, run: &Run) -> Self {
        Self {
            cut: run.cut,
            switches: run.switches,
            cpu_share: run.cpu_share,
            ..Row::once(label, Some(config), run.moved, run.secs)
        }
    }

    /// A row of per-event samples in the order run (the first is the row's run).
    pub fn sampled(label: impl Into<String>, events: u64, per_event_s: &[f64]) -> Self {
        let first = per_event_s.first().copied().unwrap_or(f64::NAN);
        Self {
            samples: per_event_s.iter().skip(1).copied().collect(),
            ..Row::once(label, None, events, first * events as f64)
        }
    }

    /// The median time per event with its 95 % interval and the number of runs.
    pub fn estimate(&self) -> crate::stats::Estimate {
        crate::stats::estimate(&self.per_event_runs())
    }

    /// Seconds per event: of the run, or the median over it and its repeats.
    pub fn per_event(&self) -> f64 {
        let first = self.secs / self.events.max(1) as f64;
        if self.repeats.is_empty() && self.samples.is_empty() {
            return first;
        }
        crate::stats::median(&self.per_event_runs())
    }

    /// Seconds per event of every run of this configuration: the rounds'
    /// samples, the settling repeats, the first one last.
    pub fn per_event_runs(&self) -> Vec<f64> {
        let mut all = self.samples.clone();
        all.extend(&self.repeats);
        all.push(self.secs / self.events.max(1) as f64);
        all
    }
}

/// One step (a table).
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// Title.
    pub title: String,
    /// Rows in the order run.
    pub rows: Vec<Row>,
    /// What the step found besides its rows (set-up, budget cuts, what was not
    /// run, the settling), in order.
    pub notes: Vec<Note>,
    /// The reference time the `×` column divides by, if any.
    pub reference_s: Option<f64>,
    /// Show the context-switch columns.
    pub show_switches: bool,
    /// The choice after [`settle`] repeated the step's contenders, and how each
    /// other contender compares with it.
    pub settled: Option<Settled>,
}

/// One of a step's notes: a finding as the run file keeps it, or the place of the
/// settling's, which `result` draws once from [`Step::settled`] when the run file
/// is written (so that it names the rows as the table finally does: the padding
/// step relabels its rows after settling).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A finding of the step.
    Said(StepNote),
    /// The settling's finding, from [`Step::settled`].
    Settled,
}

impl Step {
    /// Add a note.
    fn note(&mut self, n: StepNote) {
        self.notes.push(Note::Said(n));
    }

    /// An empty step titled `title`.
    fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// The row of a configuration a user asked to race, as Stage Two ran it.
    fn against_row(&self, a: &Against) -> Option<usize> {
        let (config, pinned) = a.as_run();
        self.row_of(&config, Some(pinned))
            .or_else(|| self.row_of(&config, Some(false)))
    }

    /// The row of `config` run with `pinned`, if the step ran it.
    fn row_of(&self, config: &Config, pinned: Option<bool>) -> Option<usize> {
        self.rows
            .iter()
            .position(|r| r.config.as_ref() == Some(config) && r.pinned == pinned)
    }

    /// The step's choice: the settled one where [`settle`] repeated the step's
    /// contenders (a configuration measured once must not win by one lucky
    /// run over ones whose medians were taken); otherwise the configuration with
    /// the least time per event.
    pub fn best(&self) -> Option<&Row> {
        if let Some(r) = self.settled.as_ref().and_then(|s| self.rows.get(s.faster)) {
            return Some(r);
        }
        self.rows
            .iter()
            .filter(|r| r.config.is_some() && r.events > 0)
            .min_by(|a, b| a.per_event().total_cmp(&b.per_event()))
    }
}

impl Against {
    /// How Stage Two runs it: the configuration without its affinity, and
    /// whether it is pinned (to the tuning pair, which may differ from the CPUs
    /// the file names).
    fn as_run(&self) -> (Config, bool) {
        (
            self.config.with_affinity(None),
            self.config.affinity.is_some(),
        )
    }
}

/// Everything `tune channel` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The pair's CPUs.
    pub cpus: PairCpus,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// The configuration to write.
    pub best: Config,
    /// Whether it was measured pinned to the pair (affinity on).
    pub best_pinned: bool,
    /// Why that one.
    pub why: Why,
    /// Pins of the producer or consumer the OS refused (those threads ran where the
    /// OS put them).
    pub refused_pins: usize,
}

/// Why the tuner chose its configuration, as data (the run file's
/// `Finding::TunerChoice`, see `result::choice`).
#[derive(Debug, Clone)]
pub struct Why {
    /// The step whose choice it is (an index of `Report::steps`).
    pub step: usize,
    /// Stage Two's step (else Stage One's last).
    pub stage_two: bool,
    /// The step's event size.
    pub event_bytes: usize,
    /// The configurations a user asked to race.
    pub against: Vec<Against>,
}

/// Budget bookkeeping.
struct Budget {
    start: Instant,
    total: f64,
    /// Longest one run may take.
    run_limit_s: f64,
}

impl Budget {
    /// When a run started now must stop: its limit, or the end of the budget.
    fn run_cut(&self) -> Instant {
        let end = self.start + std::time::Duration::from_secs_f64(self.total);
        end.min(Instant::now() + std::time::Duration::from_secs_f64(self.run_limit_s))
    }

    fn left_until(&self, share: f64) -> bool {
        self.start.elapsed().as_secs_f64() < share * self.total
    }

    /// Seconds from now until the budget reaches `share` (0 when past it).
    fn left_s_until(&self, share: f64) -> f64 {
        (share * self.total - self.start.elapsed().as_secs_f64()).max(0.0)
    }
}

/// The producer's and the consumer's CPUs, and a count of the pins the OS refused:
/// a refused pin leaves the thread where the OS put it, and the result says so.
#[derive(Clone, Copy)]
struct Pair<'a> {
    cpus: PairCpus,
    refused: &'a AtomicUsize,
    /// Where the channel runs' counts go, when counting.
    counts: Option<&'a Mutex<TuneCounts>>,
}

/// What the counted channel runs of a tuning leave: one team (producer and
/// consumer) per run, and the counter errors.
#[derive(Debug, Default)]
pub struct TuneCounts {
    /// One per counted channel run.
    pub teams: Vec<TeamCount>,
    /// Counter failures, once each.
    pub errors: Vec<CounterError>,
}

impl Pair<'_> {
    /// Runs `f` in a thread of its own pinned to `cpu`; `None` if it panicked.
    fn alone<R: Send>(&self, cpu: Option<u32>, f: impl FnOnce() -> R + Send) -> Option<R> {
        std::thread::scope(|s| {
            s.spawn(|| {
                self.pin_to(cpu);
                f()
            })
            .join()
            .ok()
        })
    }

    /// Runs `producer` on the pair's first CPU and `consumer` on its second, each
    /// in its own thread, both let go together from a start gate; with `counted`
    /// (and the pair counting) each thread's counters run from the gate to the
    /// end of its part, and the run's team goes into the counts. What the two
    /// returned; `names` say which thread panicked.
    fn both<A: Send, B: Send>(
        &self,
        counted: bool,
        names: [&'static str; 2],
        producer: impl FnOnce() -> A + Send,
        consumer: impl FnOnce() -> B + Send,
    ) -> Result<(A, B), TuneError> {
        let run = CountedRun::default();
        let count = counted && self.counts.is_some();
        let side = |cpu| match self.pin_to(cpu) {
            pinned if count => SideCounter::open(pinned),
            _ => SideCounter::off(),
        };
        let (p, c) = gated(self.cpus, side, &run, producer, consumer);
        if count {
            self.record(run);
        }
        let c = c.map_err(|_| TuneError::Panicked(names[1]))?;
        Ok((p.map_err(|_| TuneError::Panicked(names[0]))?, c))
    }

    /// The run's team into the counts (when counting).
    fn record(&self, run: CountedRun) {
        let Some(counts) = self.counts else {
            return;
        };
        let (team, errors) = run.finish();
        let mut c = counts.lock().unwrap_or_else(|e| e.into_inner());
        c.teams.extend(team);
        for e in errors {
            if !c.errors.contains(&e) {
                c.errors.push(e);
            }
        }
    }

    /// The same pair left to the OS (affinity off).
    fn unpinned(self) -> Self {
        Self {
            cpus: (None, None),
            ..self
        }
    }

    /// Pin the calling thread to `cpu` (nothing for `None`), counting a refusal;
    /// whether it is pinned.
    fn pin_to(&self, cpu: Option<u32>) -> bool {
        match cpu {
            Some(c) if crate::affinity::pin_checked(c).is_ok() => true,
            Some(_) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                false
            }
            None => false,
        }
    }
}

fn describe(c: &Config) -> String {
    let stack = match c.stack_offset_bytes {
        0 => String::new(),
        b => format!(", stack +{b} B"),
    };
    let what = match c.mode {
        Mode::NBuffer => format!(
            "{} × {} B, pad {} B, {}",
            c.buffers, c.buffer_bytes, c.padding_bytes, c.wait
        ),
        Mode::Ring => format!(
            "ring {} B, pad {} B, {}",
            c.buffers * c.buffer_bytes,
            c.padding_bytes,
            c.wait
        ),
    };
    what + &stack
}

/// The pair tuning runs on: another core, else the SMT sibling, else one CPU.
pub fn tuning_pair(topo: &Topology) -> (String, PairCpus) {
    let all = pairs::pairs(topo);
    for (rel, name) in [
        (Relation::OtherCore, "other-core"),
        (Relation::SmtSibling, "same-core"),
        (Relation::SameCpu, "same-cpu"),
    ] {
        if let Some((_, Ok(cpus))) = all.iter().find(|(r, _)| *r == rel) {
            return (name.into(), *cpus);
        }
    }
    ("unpinned".into(), (None, None))
}

/// Stage One for events of `event_bytes` (one of [`event_size_for`]'s sizes; the
/// channel's event is a type of that size, so each size is its own instance).
fn stage_one_sized(
    event_bytes: usize,
    run_s: f64,
    pair: Pair<'_>,
    smt: Result<Pair<'_>, NoSmt>,
    budget: &Budget,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Step>, Config), TuneError> {
    macro_rules! sized {
        ($($n:literal)*) => {
            match event_bytes {
                $($n => stage_one::<$n>(run_s, pair, smt, budget, progress),)*
                _ => stage_one::<1024>(run_s, pair, smt, budget, progress),
            }
        };
    }
    sized!(1 2 4 8 16 24 32 64 128 256 512)
}

/// Runs both stages under the budget. `progress` gets one line per measurement.
/// With `counts`, every channel run's two threads are counted into it.
pub fn tune_channel(
    opts: &Options,
    topo: &Topology,
    counts: Option<&Mutex<TuneCounts>>,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, TuneError> {
    let event_bytes = event_size_for(opts.event_bytes)?;
    // Runs of about budget/300 (channel runs take longer than the producer alone);
    // a configuration that is far slower is cut at 10× that and measured on the
    // events it moved.
    let run_s = (opts.budget_s / 300.0).clamp(0.002, 0.1);
    let budget = Budget {
        start: Instant::now(),
        total: opts.budget_s,
        run_limit_s: (10.0 * run_s).max(0.05),
    };
    let (placement, cpus) = tuning_pair(topo);
    let refused = AtomicUsize::new(0);
    let pair = Pair {
        cpus,
        refused: &refused,
        counts,
    };
    progress(&format!(
        "tuning on {placement} {cpus:?}, {event_bytes}-byte events, budget {:.0} s",
        opts.budget_s
    ));
    if event_bytes != opts.event_bytes {
        progress(&format!(
            "{}-byte events were measured as {event_bytes}-byte ones",
            opts.event_bytes
        ));
    }
    let smt = roadmap::smt_pair(topo).map(|cpus| Pair { cpus, ..pair });
    let (mut steps, one_best) = stage_one_sized(event_bytes, run_s, pair, smt, &budget, progress)?;
    // Stage Two: 128-byte events get the first half of what is left, 24-byte the rest.
    let against = &opts.against;
    let (s128, b128) = stage_two::<16>(run_s, one_best, against, pair, &budget, 5, progress)?;
    let (s24, b24) = stage_two::<3>(run_s, one_best, against, pair, &budget, 6, progress)?;
    let n1 = steps.len();
    steps.push(s128);
    steps.push(s24);
    let (best, best_pinned, step, stage_two) = match (event_bytes, b24, b128) {
        (24, Some((b, a)), _) => (b, a, n1 + 1, true),
        (128, _, Some((b, a))) => (b, a, n1, true),
        _ => (one_best, cpus.0.is_some(), n1.saturating_sub(1), false),
    };
    let why = Why {
        step,
        stage_two,
        event_bytes,
        against: against.clone(),
    };
    // The affinity it was measured with goes into the configuration.
    let best = best.with_affinity(match (best_pinned, cpus) {
        (true, (Some(producer_cpu), Some(consumer_cpu))) => Some(hspc::Affinity {
            producer_cpu,
            consumer_cpu,
        }),
        _ => None,
    });
    Ok(Report {
        cpus,
        steps,
        best,
        best_pinned,
        why,
        refused_pins: refused.into_inner(),
    })
}

/// `n` per 10^6 of `events`.
fn per_million(n: u64, events: u64) -> f64 {
    n as f64 * 1e6 / events.max(1) as f64
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "channel-tune";

/// The word `corescope tune` takes for this tuner: what it tunes, the channel.
pub const TUNE_TARGET: &str = "channel";

/// Seconds the tuner takes inside a suite: quick, default and full profile (`tune
/// channel` runs it alone with its own budget).
pub const SUITE_BUDGET_S: [f64; 3] = [8.0, 30.0, 120.0];

/// Seed 004's tuner as a probe: part of the default run (with [`SUITE_BUDGET_S`]),
/// and what `corescope tune channel` runs alone with its own options.
#[derive(Debug, Clone, Default)]
pub struct ChannelTune {
    /// Event size and budget; `None`: the profile's defaults.
    pub options: Option<Options>,
}

/// The one case of the probe.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaseParams {
    event_bytes: usize,
    budget_s: f64,
}

impl Probe for ChannelTune {
    type Params = CaseParams;
    type Facts = ();

    /// Summary: the tuner's pick and what it gained.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::TunerPick {
            first_stage: "stage one",
            last_stage: "stage two",
        }
    }

    /// The tuner runs for its own budget.
    fn run_cost_s(&self, p: &CaseParams, _c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(p.budget_s)
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "channel tuner (seed 004): Stage One layouts, Stage Two against Optimal, Achievable, Upper bound"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }
    /// Seed 004's roadmap and Stage Two figures.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::ChannelRoadmap]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let [quick, default, full] = SUITE_BUDGET_S;
        let opts = self.options.clone().unwrap_or(Options {
            event_bytes: DEFAULT_EVENT_BYTES,
            budget_s: ctx.profile.pick(quick, default, full),
            against: Vec::new(),
        });
        let budget_s = opts.budget_s.min(ctx.budget_s);
        let event_bytes = event_size_for(opts.event_bytes).map_err(ProbeError::from)?;
        let (placement, cpus) = tuning_pair(&ctx.topo);
        let case = Case::new(
            format!("stage one and two, {event_bytes}-byte events"),
            &CaseParams {
                event_bytes,
                budget_s,
            },
        );
        Ok(Plan::new(vec![case])
            .param("event_bytes", event_bytes)
            .param("event_bytes_asked", opts.event_bytes)
            .param("tune_budget_s", budget_s)
            .param("placement", placement)
            .param("cpus", [cpus.0, cpus.1])
            .param("work_steps_per_call", WORK_STEPS)
            .param(
                "against",
                opts.against
                    .iter()
                    .map(|a| (a.name.as_str(), &a.config))
                    .collect::<std::collections::BTreeMap<_, _>>(),
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let p = case.params.clone();
        let left_s = ctx
            .deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let opts = Options {
            event_bytes: p.event_bytes,
            budget_s: p.budget_s.min(left_s),
            against: self
                .options
                .as_ref()
                .map(|o| o.against.clone())
                .unwrap_or_default(),
        };
        let counts = Mutex::new(TuneCounts::default());
        let report = tune_channel(&opts, &ctx.plan.topo, Some(&counts), &mut |_| {});
        let counts = counts.into_inner().unwrap_or_else(|e| e.into_inner());
        ctx.counted.extend(counts.teams);
        for e in counts.errors.into_iter().map(Warning::from) {
            if !ctx.warnings.contains(&e) {
                ctx.warnings.push(e);
            }
        }
        Ok(result::measurement(&report.map_err(ProbeError::from)?))
    }
}

/// The configuration file's text (JSON, as `hspc::Config` deserializes it).
pub fn config_json(c: &Config) -> String {
    let mut s = serde_json::to_string_pretty(c).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_sizes_round_up_and_reject_nonsense() {
        assert_eq!(event_size_for(1).unwrap(), 1);
        assert_eq!(event_size_for(3).unwrap(), 4);
        assert_eq!(event_size_for(24).unwrap(), 24);
        assert_eq!(event_size_for(100).unwrap(), 128);
        assert_eq!(event_size_for(0), Err(TuneError::NoEventBytes));
        let over = event_size_for(5000).unwrap_err();
        assert!(over.to_string().contains("at most 1024"), "{over}");
    }

    #[test]
    fn the_config_file_round_trips() {
        let c = Config::n_buffer(4, 2500)
            .with_padding(32)
            .with_wait(WaitStrategy::SpinBackoff)
            .with_stack_offset(512)
            .with_affinity(Some(hspc::Affinity {
                producer_cpu: 0,
                consumer_cpu: 3,
            }));
        let back: Config = serde_json::from_str(&config_json(&c)).unwrap();
        assert_eq!(back, c);
    }
}
