//! What a tuner (`tune channel`, seed 004) found besides its step tables, as
//! data: the configuration it chose and why ([`Finding::TunerChoice`]), and each
//! step's set-up, budget cuts and settling ([`Finding::TuneStep`] with a
//! [`StepNote`]). Numbers, labels and outcomes only; `render::tune_words` words them.
//!
//! [`Finding::TunerChoice`]: super::Finding::TunerChoice
//! [`Finding::TuneStep`]: super::Finding::TuneStep

use super::{Estimate, Outcome};
use serde::{Deserialize, Serialize};

/// A configuration as a step's table names it (its `run` column), with the
/// affinity it ran with where the step ran both (Stage Two).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tuned {
    /// The row's label (`3 × 4096 B, pad 128 B, spin_pause`).
    pub label: String,
    /// Pinned to the tuning pair (`true`, affinity on) or left to the OS
    /// (`false`); absent where the step always pins (Stage One).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<bool>,
}

/// One contender against a step's choice, paired by round.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Versus {
    /// The contender.
    pub config: Tuned,
    /// Its time per event ÷ the choice's, with its 95 % interval (`n`: rounds paired).
    pub ratio: Estimate,
    /// Whether the interval excludes 1 at the full confidence level.
    pub significant: bool,
    /// Difference (beyond ±3 %), equivalence (within it), or neither.
    pub outcome: Outcome,
}

/// How a step settled its choice: its contenders repeated in rotated rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settled {
    /// The configuration chosen.
    pub choice: Tuned,
    /// Rounds the choice ran in the settling.
    pub rounds: usize,
    /// Configurations repeated.
    pub contenders: usize,
    /// The choice is the incumbent (the steps before chose it): no contender was
    /// faster beyond the noise.
    pub kept: bool,
    /// The contender with the least median, where the choice is another one
    /// (the fewest buffer bytes of those equivalent to it); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest: Option<Tuned>,
    /// Every other contender against the choice.
    pub others: Vec<Versus>,
    /// Configurations run once whose run lies within `spread` × the choice's
    /// median: one run cannot separate them from it.
    pub run_once_within_spread: Vec<Tuned>,
    /// The largest ratio of one contender's slowest repeat to its median.
    pub spread: f64,
}

/// Where a configuration given with `--against` stands against the choice.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "stands", rename_all = "snake_case")]
pub enum Stands {
    /// The choice is Stage One's, which does not race such configurations.
    StageOne,
    /// The choice's step settled nothing (budget).
    NothingSettled,
    /// It is the choice.
    Choice,
    /// Raced with the choice: its time per event ÷ the choice's, paired by round.
    Compared {
        ratio: Estimate,
        significant: bool,
        outcome: Outcome,
    },
    /// Run in the step, but not repeated with the choice (budget).
    NotRepeated,
    /// Not run in the choice's step (the step's notes say why).
    NotRun,
}

/// A configuration given with `--against` and where it stands.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Against {
    /// Its name: the file it came from.
    pub name: String,
    /// Where it stands.
    pub stands: Stands,
}

/// One finding of a tuning step besides its table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum StepNote {
    /// The step's contenders were repeated and its choice settled.
    Settled(Settled),
    /// The budget ended the settling before two rounds.
    NotRepeated {
        /// Configurations that were to be repeated.
        contenders: usize,
        /// Runs of each the choice rests on.
        runs: usize,
    },
    /// A configuration given with `--against` that cannot move the step's events.
    AgainstNotRun {
        /// Its name (the file it came from).
        name: String,
        /// Why the channel refuses it (its configuration error).
        why: String,
        /// The step's event size.
        event_bytes: usize,
    },
    /// A pinned `--against` configuration run unpinned: no CPU pair here.
    AgainstUnpinned {
        /// Its name.
        name: String,
    },
    /// A sweep the budget's share ended: configurations measured of those planned.
    SweepCut { measured: usize, of: usize },
    /// Stage Two's grid the budget ended: in round `round` (from 1) of `rounds`,
    /// after `runs` runs.
    GridCut {
        round: usize,
        rounds: usize,
        runs: usize,
    },
    /// The roadmap: its rounds of `events` events, its baseline (the slower side
    /// alone) and the hand-tuned padding of its steps.
    Roadmap {
        rounds: usize,
        events: u64,
        consumer_slower: bool,
        baseline_s: f64,
        padding_bytes: usize,
    },
    /// The SMT baseline was not run, and why (as its table row says).
    SmtSkipped { why: String },
    /// Seed 004 §3.4's work offloaded by `what`, at `t_s` per event against the
    /// baseline producer's and consumer's.
    Offloaded {
        what: String,
        t_s: f64,
        producer_s: f64,
        consumer_s: f64,
    },
    /// Loop 1: `p3` with each padding, `events` a run.
    Padding { events: u64 },
    /// Loop 2: what the stack offset moves.
    StackOffset,
    /// Loop 3: of the grid (`buffer_counts` × `buffer_sizes`), the configurations
    /// that hold an event and those measured.
    BufferGrid {
        event_bytes: usize,
        buffer_counts: usize,
        buffer_sizes: usize,
        holding: usize,
        measured: usize,
    },
    /// The wait step's context-switch columns.
    Switches,
    /// Stage Two's workload: `fib(n)`, its events, the work per call and the
    /// limit lines' runs.
    Fib {
        n: u64,
        events: u64,
        work_steps: u32,
        line_runs: usize,
    },
    /// The container step: a BTreeMap profile's time per event ÷ a HashMap one's,
    /// paired over `rounds` rounds, and what the comparison shows.
    Container {
        ratio: Estimate,
        /// Whether the interval excludes 1 at the full confidence level (absent
        /// in older run files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        significant: Option<bool>,
        /// Difference, equivalence, or neither (absent in older run files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        rounds: usize,
    },
    /// Stage Two's grid: configurations kept of all, with both affinities or off
    /// only, in `rounds` rounds.
    StageTwoGrid {
        kept: usize,
        all: usize,
        both_affinities: bool,
        rounds: usize,
    },
    /// Affinity off ÷ on (time per event) over the configurations run both ways:
    /// median, least, most.
    Affinity {
        configs: usize,
        median: f64,
        least: f64,
        most: f64,
    },
    /// The CPU time of the fastest run's producer and consumer threads, each as a
    /// share of the run's wall time.
    CpuShare {
        run: String,
        producer_share: f64,
        consumer_share: f64,
    },
}

impl StepNote {
    /// Seed 004 §3.4's share of the work the consumer took off the producer,
    /// `1 − t / (t_producer + t_consumer)` (50 % is perfect balancing), of an
    /// [`StepNote::Offloaded`].
    pub fn work_offloaded(t_s: f64, producer_s: f64, consumer_s: f64) -> f64 {
        1.0 - t_s / (producer_s + consumer_s)
    }
}
