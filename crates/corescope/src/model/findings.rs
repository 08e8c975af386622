//! Typed findings and warnings: claims about the machine (and doubts about a
//! figure) as data with numbers and units. Renderers put them into words
//! (`render::words`); analysis (`crate::analysis`) derives them from samples.

use super::tuning::{Against, StepNote, Tuned};
use super::Estimate;
pub use crate::stats::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A conclusion derived from the data.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Where a family of curves (one per variant) peaks and saturates.
    Scaling {
        /// The family (`int`, `read`).
        what: String,
        /// Unit of the values (`ops_per_s`).
        unit: String,
        /// The highest central value of any variant.
        peak: Estimate,
        /// Thread count of the peak.
        peak_threads: f64,
        /// Variant of the peak (`scatter`).
        peak_variant: String,
        /// Smallest thread count at which some variant reaches 95 % of the peak.
        saturation_threads: f64,
        /// One thread's value (best variant), if measured.
        one_thread: Option<Estimate>,
        /// CPUs available to the run.
        cpus: usize,
    },
    /// Two variants compared on interleaved rounds.
    Comparison {
        /// What was compared (`write with 2 threads`).
        what: String,
        /// Unit of the values.
        unit: String,
        /// The first variant (the faster or larger one when `outcome` is `different`).
        a: String,
        /// Its central value.
        a_value: Estimate,
        /// The second variant.
        b: String,
        /// Its central value.
        b_value: Estimate,
        /// a ÷ b, with its interval (paired by round when both were interleaved).
        ratio: Estimate,
        /// Whether the interval of the ratio excludes 1.
        significant: bool,
        /// Difference, equivalence, or neither.
        outcome: Outcome,
        /// Context the reader needs (`1 NUMA node: no difference expected`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    /// How much a cause slows a workload: a ratio of paired times (with ÷ without).
    Slowdown {
        /// The workload (`the active thread, spinner on another core`).
        what: String,
        /// The cause (`a plain spin loop`).
        cause: String,
        /// Time with ÷ time without, with its interval.
        ratio: Estimate,
        /// Difference, equivalence or neither.
        outcome: Outcome,
        /// Context the reader needs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    /// Variants that ran the same configuration here and were measured once.
    SameConfiguration {
        /// The comparison (`int with 2 threads`).
        what: String,
        /// The variants (`linear`, `compact`, `scatter`).
        variants: Vec<String>,
        /// What they all ran (`CPUs 0,1`).
        config: String,
    },
    /// Whether two CPUs share a core (its execution ports, its L1 data cache), measured
    /// by co-running throughput-bound kernels, next to what the topology says of them
    /// (`sharing`; the rule is in `docs/coherence.md`).
    CoreSharing {
        /// First CPU (OS index).
        a: u32,
        /// Second CPU (OS index).
        b: u32,
        /// The measured verdict: `true` shared (some kernel's interval lies wholly
        /// below the shared threshold), `false` separate (every kernel's interval lies
        /// wholly above the separate threshold), `null` not told apart.
        shared: Option<bool>,
        /// The kernel the verdict is stated with (of the kernels that give it, the
        /// one with the lowest ratio).
        kernel: String,
        /// That kernel's throughput per thread together ÷ alone, with its interval.
        ratio: Estimate,
        /// Every throughput kernel's ratio on the pair, by kernel.
        ratios: BTreeMap<String, Estimate>,
        /// How the topology relates the two CPUs (`SMT siblings`, `same cache`, ...).
        topology: String,
        /// Whether the topology puts them on one core.
        topology_same_core: bool,
    },
    /// One key figure with its interval (`L1 latency`).
    Value {
        /// What it is.
        what: String,
        /// Unit.
        unit: String,
        /// The figure.
        value: Estimate,
        /// Context.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    /// The configuration a tuner chose (`tune channel`) and why: its step, its
    /// affinity, what the settling could not tell it from, and where each
    /// configuration given with `--against` stands.
    TunerChoice {
        /// The configuration, as the step's table names it.
        config: String,
        /// The title of the step whose choice it is.
        step: String,
        /// Stage Two's choice (else Stage One's).
        stage_two: bool,
        /// The step's event size.
        event_bytes: usize,
        /// Measured pinned to the tuning pair (affinity on).
        affinity: bool,
        /// Kept from the steps before: no contender was faster beyond the noise.
        #[serde(default)]
        kept: bool,
        /// Contenders equivalent to it (within ±3 %).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        equivalent: Vec<Tuned>,
        /// Contenders not told apart from it with the runs the budget allowed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_told_apart: Vec<Tuned>,
        /// Configurations run once within the runs' spread of it.
        #[serde(default)]
        run_once_within_spread: usize,
        /// The configurations given with `--against`, and where each stands.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        against: Vec<Against>,
    },
    /// A tuning step's finding besides its table (`tune channel`): its set-up,
    /// where the budget cut it, how its choice was settled.
    TuneStep {
        /// The step's title (its table's name).
        step: String,
        /// What it found.
        note: StepNote,
    },
    /// A conclusion in words (version 1 files, and probes whose findings are not typed yet).
    Note {
        /// The sentence.
        text: String,
    },
}

impl From<String> for Finding {
    fn from(text: String) -> Self {
        Finding::Note { text }
    }
}

impl From<&str> for Finding {
    fn from(text: &str) -> Self {
        Finding::Note { text: text.into() }
    }
}

impl PartialEq<String> for Finding {
    fn eq(&self, other: &String) -> bool {
        matches!(self, Finding::Note { text } if text == other)
    }
}

impl PartialEq<str> for Finding {
    fn eq(&self, other: &str) -> bool {
        matches!(self, Finding::Note { text } if text == other)
    }
}

/// A condition that makes a figure less trustworthy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The interval of a point stayed wide after every repetition the budget allowed.
    WideInterval {
        /// Series.
        series: String,
        /// x of the point.
        x: f64,
        /// Half the interval's width relative to the value.
        rel_half_width: f64,
        /// Samples behind it.
        n: usize,
        /// Other points whose interval stayed wider than the limit too.
        #[serde(default)]
        others: usize,
    },
    /// The machine changed during a probe (reference kernel drift, steal, load, or the
    /// CPUs' round trip), so its comparisons with other probes are less certain.
    Noisy {
        /// What changed, in numbers (`reference kernel 12 % slower after`).
        detail: String,
        /// Which change it was (older run files: [`NoiseCause::Unknown`]).
        #[serde(default)]
        cause: NoiseCause,
    },
    /// A median only a few timer steps long: known to ± one step.
    TimerStep {
        /// The distribution.
        series: String,
        /// Its median, in ns.
        median_ns: f64,
        /// The timer's step, in ns.
        step_ns: f64,
    },
    /// Threads pinned to one CPU were moved to another while their kernel ran
    /// (the `cpu-migrations` software counter): the figure mixes CPUs.
    Migrated {
        /// The case (`int scatter ×2`).
        case: String,
        /// Migrations counted in its pinned workers, over every round.
        migrations: u64,
        /// Rounds the case ran.
        rounds: usize,
    },
    /// Pins of a tuner's producer or consumer thread the OS refused: those runs
    /// went where the OS put them.
    PinsRefused {
        /// Pins refused.
        pins: usize,
    },
    /// A warning in words.
    Note {
        /// The sentence.
        text: String,
    },
}

/// What changed in the machine while a figure was measured.
#[derive(
    Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "snake_case")]
pub enum NoiseCause {
    /// The round trip between two CPUs changed state (on a VM: vCPUs moved between
    /// host cores).
    RoundTrip,
    /// Points differed between the two epochs of the run beyond their intervals.
    Epochs,
    /// The reference kernel's time drifted between the checks around a probe.
    Drift,
    /// The hypervisor stole CPU time.
    Steal,
    /// Other programs used the CPUs.
    Load,
    /// Not recorded (run files from before the cause was).
    #[default]
    Unknown,
}

impl From<String> for Warning {
    fn from(text: String) -> Self {
        Warning::Note { text }
    }
}

impl From<&str> for Warning {
    fn from(text: &str) -> Self {
        Warning::Note { text: text.into() }
    }
}

impl PartialEq<String> for Warning {
    fn eq(&self, other: &String) -> bool {
        matches!(self, Warning::Note { text } if text == other)
    }
}

impl PartialEq<str> for Warning {
    fn eq(&self, other: &str) -> bool {
        matches!(self, Warning::Note { text } if text == other)
    }
}
