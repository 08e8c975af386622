//! Typed findings and warnings: claims about the machine (and doubts about a
//! figure) as data with numbers and units. Renderers put them into words
//! (`render::words`); analysis (`crate::analysis`) derives them from samples.

use super::notes::{FromOldText, OldText};
use super::tuning::{Against, StepNote, Tuned};
use super::Estimate;
use crate::counters::OsError;
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

impl FromOldText for Finding {
    fn from_old_text(text: OldText) -> Self {
        Finding::Note {
            text: text.as_str().into(),
        }
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
    /// The OS refused to pin a thread to a CPU: it ran where the OS put it.
    Unpinned {
        /// The CPU asked for (OS index).
        cpu: u32,
        /// What the OS said.
        error: OsError,
    },
    /// A thread was pinned to a CPU but runs on another.
    PinnedElsewhere {
        /// The CPU asked for (OS index).
        cpu: u32,
        /// The CPU it runs on (OS index).
        now_cpu: u32,
    },
    /// A counter operation failed after the counters were opened: the counts of
    /// that group are missing or partial.
    CountersFailed {
        /// `enable`, `disable`, `reset` or `read`.
        op: String,
        /// `software` or `hardware`.
        group: String,
        /// What the OS said.
        error: OsError,
    },
    /// A case stopped at the probe's deadline before it completed.
    StoppedAtDeadline {
        /// The case (`c2c 0↔1`, `atomics cas ×4`).
        what: String,
        /// What it completed, in `unit`.
        done: u64,
        /// What it was to do, in `unit`.
        planned: u64,
        /// What `done` and `planned` count.
        unit: Counted,
    },
    /// A comparison group reached the budget before its least number of rounds.
    BudgetReached {
        /// The group.
        group: String,
        /// Rounds it ran.
        rounds_done: usize,
        /// Rounds it was to run at least.
        rounds_min: usize,
    },
    /// A paired measurement (two stamps per sample) stopped before its samples.
    SamplingStopped {
        /// The variant measured when it stopped.
        variant: String,
        /// Why.
        stop: SampleStop,
    },
    /// Threads of a team were preempted (they got less CPU time than wall time):
    /// their results are left out.
    Preempted {
        /// The probe.
        probe: String,
        /// What the threads ran (`avx2`).
        kernel: String,
        /// Threads in the team.
        threads: usize,
        /// Threads whose result came back.
        results: usize,
        /// Of those, the threads preempted.
        preempted: usize,
    },
    /// A growing sweep stopped at a size that took longer than its allowance.
    GaveUp {
        /// The variant.
        variant: String,
        /// Its last size.
        n: usize,
        /// The time of that size, in s.
        time_s: f64,
    },
    /// A timer read on one CPU was later than the next read on another CPU.
    NotMonotonic {
        /// The timer.
        timer: String,
    },
    /// A request for memory did not fit what the machine allows: it was shrunk.
    MemoryShrunk {
        /// What the memory is for.
        what: String,
        /// Bytes per thread asked for.
        asked_bytes_per_thread: u64,
        /// Threads.
        threads: usize,
        /// Bytes usable (the share of `available_bytes` a probe may take).
        usable_bytes: u64,
        /// That share, in %.
        usable_percent: f64,
        /// Bytes available.
        available_bytes: u64,
        /// Where `available_bytes` came from (`MemAvailable`, a cgroup's limit).
        available_source: String,
        /// Bytes per thread used.
        used_bytes_per_thread: u64,
    },
    /// `mbind` was refused: the memory went where first touch put it.
    NotBound {
        /// The probe.
        probe: String,
        /// What `mbind` said.
        mbind: String,
    },
    /// Checked pages of a buffer were on other NUMA nodes than the one asked for.
    PagesElsewhere {
        /// The probe.
        probe: String,
        /// The buffer (`line of 0↔1`, a cell).
        cell: String,
        /// The node asked for.
        node: u32,
        /// Pages checked.
        checked_pages: u64,
        /// Pages not on `node` (nor of unknown node).
        elsewhere_pages: u64,
        /// Of those, pages per node: (node, pages).
        by_node: Vec<(u32, u64)>,
    },
    /// Checked pages of a buffer whose node the OS did not say (not present).
    PagesNodeUnknown {
        /// The probe.
        probe: String,
        /// The buffer.
        cell: String,
        /// Pages checked.
        checked_pages: u64,
        /// Pages of unknown node.
        unknown_pages: u64,
    },
    /// The pages' nodes could not be queried.
    BindingUnchecked {
        /// The probe.
        probe: String,
        /// What the query said.
        error: String,
    },
    /// The OS reports no NUMA node: the machine was measured as one node 0.
    NoNumaNode,
    /// Transparent huge pages are unavailable: a part of the probe was skipped.
    NoHugePages {
        /// The part skipped (`read-thp`).
        part: String,
        /// The THP mode read, if any.
        mode: Option<String>,
    },
    /// The IO units could not run: no file could be made in the directory.
    IoSkipped {
        /// Why.
        error: String,
    },
    /// The IO units' directory is on a file system in memory: they write and fsync
    /// memory, no disk.
    IoInMemory {
        /// The directory.
        dir: String,
        /// Its file system (`tmpfs`).
        filesystem: String,
    },
    /// Only a representative subset of the CPUs is measured.
    CpuSubset {
        /// How the subset was chosen, and what it holds (older run files: in words,
        /// as `description`).
        #[serde(alias = "description")]
        subset: CpuSubset,
    },
    /// A host ran more MPI ranks than it has CPUs.
    Oversubscribed {
        /// The host.
        host: String,
        /// Ranks on it.
        ranks: usize,
        /// Its online CPUs.
        cpus: usize,
    },
    /// An MPI benchmark was left out: the job has fewer ranks than it needs.
    TooFewRanks {
        /// The benchmark (`pingpong`).
        bench: String,
        /// Ranks in the job.
        ranks: usize,
        /// Ranks it needs.
        needed: usize,
    },
    /// The thread that first touches memory for the others could not be pinned.
    FirstTouch {
        /// The pin's own warning ([`Warning::Unpinned`], [`Warning::PinnedElsewhere`]).
        pin: Box<Warning>,
    },
    /// A size of a growing sweep was given up (not started, or stopped at its
    /// deadline or a limit): the sweep ends below it.
    SizeGivenUp {
        /// The series (`fft/lockfree`).
        series: String,
        /// The size given up, as its base-2 logarithm.
        size_log2: u32,
        /// How it stopped.
        how: SizeStop,
    },
    /// A warning in words, as older run files hold it (no code raises one: only
    /// reading a file makes its [`OldText`]).
    Note {
        /// The sentence.
        text: OldText,
    },
}

/// How a size of a growing sweep stopped ([`Warning::SizeGivenUp`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SizeStop {
    /// Not started: the size below took more than a third of the case budget.
    BelowTooLong {
        /// The size below's time per call, in s.
        below_s: f64,
        /// The case budget, in s.
        case_budget_s: f64,
    },
    /// Not started: the size below was stopped (at its deadline or its thread
    /// bound) or not run.
    BelowStopped,
    /// Stopped at its deadline.
    Deadline {
        /// Task families run.
        families_run: u64,
        /// Task families abandoned (not yet started at the deadline).
        families_abandoned: u64,
    },
    /// Stopped at the uncapped pool's safety bound on live threads, where the
    /// seed's pool would start another pthread.
    ThreadBound {
        /// The bound, in live threads.
        max_threads: usize,
        /// What sets the bound (`the harness's thread limit (RLIMIT_NPROC (ulimit -u))`).
        bound: String,
    },
    /// The sentence of an older run file.
    #[serde(untagged)]
    Old(String),
}

/// The representative subset of the CPUs a probe measures instead of all of them
/// ([`Warning::CpuSubset`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CpuSubset {
    /// How it was chosen, in numbers.
    Chosen(SubsetChoice),
    /// The sentence of an older run file.
    Old(String),
}

/// How a representative subset of the CPUs was chosen: a pair of every level, the
/// SMT siblings of the first core, cores of the first package spread evenly, and the
/// first CPU of other packages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SubsetChoice {
    /// CPUs allowed.
    pub allowed: usize,
    /// CPUs in the subset.
    pub cpus: usize,
    /// Pairs of those CPUs.
    pub pairs: usize,
    /// The levels it holds a pair of (`SMT siblings`, `same cache`, ...).
    pub levels: Vec<String>,
    /// Cores of the first package in it.
    pub cores: usize,
    /// Other packages whose first CPU is in it.
    pub packages: usize,
    /// Where only some pairs of each level are measured, not every pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_level: Option<PairsByLevel>,
}

/// Some pairs of each level of a subset, not all its pairs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct PairsByLevel {
    /// Most pairs of one level.
    pub per_level: usize,
    /// Pairs measured.
    pub pairs: usize,
}

/// What the figures of [`Warning::StoppedAtDeadline`] count.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Counted {
    /// Repetitions.
    Repetitions,
    /// Rounds.
    Rounds,
    /// Nanoseconds.
    Ns,
}

/// Why a paired measurement stopped before its samples.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SampleStop {
    /// The probe's budget ran out (after this many samples, where counted).
    Budget {
        /// Samples taken.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        samples: Option<u64>,
    },
    /// The partner did not get ready within the timeout.
    PartnerNotReady {
        /// The timeout, in s.
        timeout_s: f64,
    },
    /// The partner did not wake within the timeout.
    PartnerNotWoken {
        /// The timeout, in s.
        timeout_s: f64,
    },
    /// A child thread did not start within the timeout.
    ChildNotStarted {
        /// The timeout, in s.
        timeout_s: f64,
    },
    /// `pthread_create` failed.
    CreateFailed {
        /// Samples taken.
        samples: u64,
        /// What it returned.
        error: OsError,
    },
    /// `pthread_attr_init` failed.
    AttrInit,
    /// `pthread_attr_setaffinity_np` failed.
    AttrAffinity {
        /// The CPU (OS index).
        cpu: u32,
        /// Its return code.
        rc: i32,
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

impl FromOldText for Warning {
    fn from_old_text(text: OldText) -> Self {
        Warning::Note { text }
    }
}

impl PartialEq<String> for Warning {
    fn eq(&self, other: &String) -> bool {
        matches!(self, Warning::Note { text } if text == other.as_str())
    }
}

impl PartialEq<str> for Warning {
    fn eq(&self, other: &str) -> bool {
        matches!(self, Warning::Note { text } if text == other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Notes;

    fn os(errno: i32) -> OsError {
        std::io::Error::from_raw_os_error(errno).into()
    }

    /// One of every warning the probes and the runner raise while measuring.
    pub(crate) fn measuring_warnings() -> Vec<Warning> {
        vec![
            Warning::Unpinned {
                cpu: 7,
                error: os(libc::EINVAL),
            },
            Warning::PinnedElsewhere { cpu: 3, now_cpu: 5 },
            Warning::CountersFailed {
                op: "read".into(),
                group: "hardware".into(),
                error: os(libc::EIO),
            },
            Warning::StoppedAtDeadline {
                what: "c2c 0↔1".into(),
                done: 3,
                planned: 8,
                unit: Counted::Repetitions,
            },
            Warning::BudgetReached {
                group: "int ×2".into(),
                rounds_done: 2,
                rounds_min: 6,
            },
            Warning::SamplingStopped {
                variant: "same-cpu".into(),
                stop: SampleStop::Budget { samples: Some(64) },
            },
            Warning::SamplingStopped {
                variant: "spawn".into(),
                stop: SampleStop::CreateFailed {
                    samples: 10,
                    error: os(libc::EAGAIN),
                },
            },
            Warning::SamplingStopped {
                variant: "x".into(),
                stop: SampleStop::AttrInit,
            },
            Warning::Preempted {
                probe: "p".into(),
                kernel: "avx2".into(),
                threads: 4,
                results: 4,
                preempted: 1,
            },
            Warning::GaveUp {
                variant: "naive".into(),
                n: 1024,
                time_s: 2.5,
            },
            Warning::NotMonotonic {
                timer: "rdtsc".into(),
            },
            Warning::MemoryShrunk {
                what: "blocks".into(),
                asked_bytes_per_thread: 1 << 30,
                threads: 8,
                usable_bytes: 1 << 32,
                usable_percent: 50.0,
                available_bytes: 1 << 33,
                available_source: "MemAvailable".into(),
                used_bytes_per_thread: 1 << 29,
            },
            Warning::NotBound {
                probe: "p".into(),
                mbind: "mbind: Operation not permitted".into(),
            },
            Warning::PagesElsewhere {
                probe: "p".into(),
                cell: "line of 0↔1".into(),
                node: 0,
                checked_pages: 16,
                elsewhere_pages: 3,
                by_node: vec![(1, 2), (2, 1)],
            },
            Warning::PagesNodeUnknown {
                probe: "p".into(),
                cell: "c".into(),
                checked_pages: 16,
                unknown_pages: 2,
            },
            Warning::BindingUnchecked {
                probe: "p".into(),
                error: "move_pages: ENOSYS".into(),
            },
            Warning::NoNumaNode,
            Warning::NoHugePages {
                part: "read-thp".into(),
                mode: None,
            },
            Warning::IoSkipped {
                error: "O_TMPFILE in /tmp: denied".into(),
            },
            Warning::IoInMemory {
                dir: "/tmp".into(),
                filesystem: "tmpfs".into(),
            },
            Warning::CpuSubset {
                subset: CpuSubset::Chosen(SubsetChoice {
                    allowed: 128,
                    cpus: 12,
                    pairs: 66,
                    levels: vec!["SMT siblings".into(), "same cache".into()],
                    cores: 8,
                    packages: 1,
                    by_level: Some(PairsByLevel {
                        per_level: 4,
                        pairs: 8,
                    }),
                }),
            },
            Warning::SizeGivenUp {
                series: "fft/lockfree".into(),
                size_log2: 14,
                how: SizeStop::Deadline {
                    families_run: 3,
                    families_abandoned: 9,
                },
            },
            Warning::SizeGivenUp {
                series: "fft/mutex".into(),
                size_log2: 15,
                how: SizeStop::BelowStopped,
            },
            Warning::Oversubscribed {
                host: "n1".into(),
                ranks: 8,
                cpus: 4,
            },
            Warning::TooFewRanks {
                bench: "pingpong".into(),
                ranks: 1,
                needed: 2,
            },
        ]
    }

    #[test]
    fn every_measuring_warning_round_trips_through_the_run_file() {
        for w in measuring_warnings() {
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(serde_json::from_str::<Warning>(&json).unwrap(), w, "{json}");
            // In a probe's list too (the run file reads lists through `Notes`).
            let list = serde_json::to_string(&vec![w.clone()]).unwrap();
            let back: Notes<Warning> = serde_json::from_str(&list).unwrap();
            assert_eq!(back.0, vec![w], "{list}");
        }
    }

    #[test]
    fn a_measuring_warning_is_tagged_by_its_kind() {
        let w = Warning::Unpinned {
            cpu: 7,
            error: os(libc::EINVAL),
        };
        assert_eq!(
            serde_json::to_string(&w).unwrap(),
            r#"{"kind":"unpinned","cpu":7,"error":{"errno":22}}"#
        );
        assert_eq!(
            serde_json::to_string(&Warning::NoNumaNode).unwrap(),
            r#"{"kind":"no_numa_node"}"#
        );
    }

    #[test]
    fn older_warnings_in_words_still_load() {
        // Run files before these kinds held each as a note; version 1 as a bare sentence.
        let text = "the OS refused to pin a thread to CPU 7 (Invalid argument (os error 22)); \
                    it ran unpinned";
        let json = format!(r#"[{{"kind":"note","text":"{text}"}}, "{text}"]"#);
        let back: Notes<Warning> = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.0,
            vec![
                Warning::Note {
                    text: OldText::for_test(text)
                },
                Warning::Note {
                    text: OldText::for_test(text)
                }
            ]
        );
        // Fields that were words read as the words.
        let json = r#"[{"kind":"cpu_subset","description":"a subset"},
                       {"kind":"size_given_up","series":"fft/mutex","size_log2":9,"how":"odd"}]"#;
        let back: Notes<Warning> = serde_json::from_str(json).unwrap();
        assert_eq!(
            back.0,
            vec![
                Warning::CpuSubset {
                    subset: CpuSubset::Old("a subset".into())
                },
                Warning::SizeGivenUp {
                    series: "fft/mutex".into(),
                    size_log2: 9,
                    how: SizeStop::Old("odd".into())
                }
            ]
        );
        // A kind a later build writes still loads, as its JSON in words.
        let later: Notes<Warning> = serde_json::from_str(r#"[{"kind":"later","x":1}]"#).unwrap();
        assert!(matches!(&later.0[0], Warning::Note { .. }), "{later:?}");
    }

    #[test]
    fn equal_measuring_warnings_are_kept_once() {
        let mut n: Notes<Warning> = Notes::default();
        for w in measuring_warnings().into_iter().chain(measuring_warnings()) {
            n.push_unique(w);
        }
        assert_eq!(n.len(), measuring_warnings().len());
    }
}
