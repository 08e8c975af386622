//! The run file: serde types of everything corescope measures.
//!
//! This is a public, versioned contract (see `DESIGN.md`): users script against it.
//! Adding a field is a minor change (new fields carry `#[serde(default)]` so older
//! files still load); renaming or removing one bumps [`SCHEMA_VERSION`].
//! Units are in field names (`_ns`, `_bytes`, `_hz`). No I/O happens here.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::topology::Topology;

mod counts;
mod crosscheck;
mod doctor;
mod findings;
mod notes;
mod same_quantity;
mod sensitivity;
mod state;
mod summary_shape;
pub mod tuning;
mod view;
pub use crate::stats::{Distribution, Estimate, Histogram, ModeRange, Summary};
pub use counts::{CaseCounters, ProbeCounters, RoundCount};
pub use crosscheck::{Agreement, CrossCheck, CrossRow, RowStatus};
pub use doctor::{Check, CheckId, Checks, TuneWrite, Verdict};
pub use findings::{
    Counted, CpuSubset, Finding, NoiseCause, Outcome, PairsByLevel, SampleStop, SizeStop,
    SubsetChoice, Warning,
};
pub use notes::{FromOldText, Notes, OldText};
pub use same_quantity::{Pick, SameQuantity};
pub use sensitivity::Sensitivity;
pub use state::{round_trip_span, GroupState};
pub use summary_shape::{PairClass, Sides, SummaryShape};
pub use view::View;

/// Version of the run-file layout written by this build.
///
/// 2: series carry `y_lo`, `y_hi`, `n` and the repetitions (`samples`); summaries carry
/// the interval of the median; findings and warnings are typed objects with a `kind`;
/// probes record `aliases` (identical configurations measured once) and the run records
/// `statistics` (how intervals and significance were computed). Version 1 files still load:
/// their findings and warnings become `note`s and their points have no interval.
///
/// 3: repeated points are measured in two epochs of their probe: series carry
/// `epochs` (each point's samples per epoch) and `states` (each epoch's estimate where
/// the epochs disagree: a state-dependent point), and `y_lo`/`y_hi` hold the interval
/// over both levels of spread (`stats::epochs`). A point with `n` = 1 is one
/// measurement, not an exact value. Version 2 files load as measured in one epoch.
pub const SCHEMA_VERSION: u32 = 3;

/// One check of the machine's state (see `drift.rs`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DriftCheck {
    /// When: `start`, `after <probe>` (its first epoch), `after <probe> (epoch N)`
    /// (its share of a later pass of the suite), `end`.
    pub at: String,
    /// Seconds since the run started.
    pub t_s: f64,
    /// Time of the reference kernel (ns per repetition: median, interval, count).
    pub reference_ns: Option<Estimate>,
    /// Steal and total jiffies since boot, from /proc/stat.
    pub cpu_jiffies: Option<(u64, u64)>,
    /// 1-minute load average.
    pub loadavg_1m: Option<f64>,
    /// Median round trip of a cache line between the first two allowed CPUs, ns.
    pub round_trip_ns: Option<f64>,
}

/// How intervals and significance were computed for a run (recorded in the run file
/// so a reader knows what `y_lo`/`y_hi` mean).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatisticsInfo {
    /// Confidence level of every interval (0.95).
    pub confidence: f64,
    /// Central value of a series point and a distribution.
    pub central: String,
    /// How the interval of a central value is computed.
    pub interval: String,
    /// How two variants are compared.
    pub comparison: String,
    /// Smallest relative difference stated as a difference even when significant.
    pub min_effect: f64,
}

impl Default for StatisticsInfo {
    fn default() -> Self {
        Self {
            confidence: crate::stats::CONFIDENCE,
            central: "median of the repetitions".into(),
            interval: "repeated points are measured in two epochs of the run (every probe's \
                       first, then every probe's second): the \
                       interval spans the distribution-free order-statistic interval of the \
                       pooled median (binomial ranks) and the 2.5-97.5 % percentiles of a \
                       two-level bootstrap of the median (epochs, then samples within each); \
                       epochs disjoint by more than min_effect make the point state-dependent, \
                       with each epoch's estimate kept; one epoch: the order-statistic interval, \
                       coverage below 95 % with fewer than 6 samples recorded as such"
                .into(),
            comparison: "variants run interleaved in rotated order within each round; the ratio \
                         of paired rounds is summarised by its Hodges-Lehmann estimate with the \
                         Wilcoxon signed-rank interval; a difference is stated only when that \
                         interval lies entirely beyond 1 ± min_effect"
                .into(),
            min_effect: crate::stats::MIN_EFFECT,
        }
    }
}

/// One run of corescope on one machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunFile {
    /// Layout version; see [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The program that wrote the file.
    pub tool: ToolInfo,
    /// Facts about the host that do not change between runs.
    pub host: HostInfo,
    /// CPUs, cores, packages, caches and the allowed cpuset.
    pub topology: Topology,
    /// Calibration of the timer every probe uses.
    pub clock: ClockInfo,
    /// Conditions at the time of the run (governor, load, THP, ...).
    pub env: EnvInfo,
    /// What blurs the figures on this machine, as `corescope doctor` reads it at
    /// the start of the run (absent in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doctor: Option<Checks>,
    /// Which size profile was run.
    pub profile: Profile,
    /// UTC start time, RFC 3339 (`2026-11-22T19:28:00Z`).
    pub started_utc: String,
    /// The command line, for reproducing the run.
    #[serde(default)]
    pub command: Vec<String>,
    /// One entry per probe, in the order run.
    pub probes: Vec<ProbeResult>,
    /// The machine checked at the start, between probes and at the end (reference
    /// kernel, steal, load, the first two CPUs' round trip); absent in version 1 files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<DriftCheck>,
    /// How intervals and significance were computed (absent in version 1 files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<StatisticsInfo>,
    /// `corescope crosscheck`'s rows: corescope beside the established tools
    /// (absent in files of `run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crosscheck: Option<CrossCheck>,
}

/// The program that wrote a run file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    /// Always `corescope`; used to recognise our files.
    pub name: String,
    /// Crate version.
    pub version: String,
}

impl ToolInfo {
    /// Info for this build.
    pub fn current() -> Self {
        Self {
            name: "corescope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Facts about the machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model string (e.g. `AMD EPYC 9R45`).
    pub cpu_model: String,
    /// CPU architecture (`x86_64`, `aarch64`).
    pub arch: String,
    /// Operating system name and release (`Debian GNU/Linux 12`).
    pub os: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Hypervisor vendor if the machine is virtualised (`KVM`), else `None`.
    pub virtualized: Option<String>,
    /// Nominal / maximum frequency if the OS reports it.
    pub nominal_hz: Option<f64>,
    /// Total memory.
    pub memory_bytes: Option<u64>,
}

/// Calibration of the cycle counter against `CLOCK_MONOTONIC`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClockInfo {
    /// Which counter is used for cycles: `tsc`, `cntvct`, or `clock_gettime`.
    pub source: String,
    /// Counter frequency in Hz (ticks per second).
    pub ticks_hz: f64,
    /// Mean cost of one counter read, in ns.
    pub read_overhead_ns: f64,
    /// Smallest non-zero difference between two consecutive reads, in ns.
    pub step_ns: f64,
    /// Step of `CLOCK_MONOTONIC` itself, in ns (what team stamps use).
    pub monotonic_step_ns: f64,
    /// Mean cost of one `CLOCK_MONOTONIC` read, in ns.
    pub monotonic_overhead_ns: f64,
    /// Whether the TSC is marked invariant (constant_tsc + nonstop_tsc).
    pub invariant: Option<bool>,
    /// Measured core clock with one pinned thread busy: median over repetitions, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_one: Option<f64>,
    /// `[min, max]` of the one-thread repetitions, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_one_range: Option<[f64; 2]>,
    /// Measured core clock with every allowed CPU busy: median over threads and
    /// repetitions, Hz (lower than `core_hz_one` where turbo drops with load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_all: Option<f64>,
    /// `[min, max]` of the all-CPUs values, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_all_range: Option<[f64; 2]>,
    /// CPUs busy in the all-CPUs measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_all_cpus: Option<usize>,
    /// Undisturbed one-thread repetitions the median is taken over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_reps: Option<usize>,
    /// Repetitions left out because the thread was preempted during them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_preempted_reps: Option<usize>,
    /// How the core clock was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_method: Option<String>,
    /// Why the core clock was not measured, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_hz_skipped: Option<String>,
}

/// Conditions at the time of the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EnvInfo {
    /// cpufreq governor of CPU 0, where readable.
    pub governor: Option<String>,
    /// SMT state (`on`, `off`, `notsupported`, ...), where readable.
    pub smt: Option<String>,
    /// Transparent huge pages mode (`always`, `madvise`, `never`), where readable.
    pub thp: Option<String>,
    /// CPUs this process may run on (OS indices, list syntax `0-3,8`).
    pub cpuset: String,
    /// 1, 5 and 15-minute load averages at the start.
    pub loadavg: Option<[f64; 3]>,
    /// Share of CPU time stolen by the hypervisor during calibration (0..1), if known.
    pub steal_fraction: Option<f64>,
    /// Available memory at the start (MemAvailable).
    pub mem_available_bytes: Option<u64>,
    /// Memory limit of this process's cgroup, if any.
    pub cgroup_memory_limit_bytes: Option<u64>,
    /// Rust compiler target features the binary was built with (e.g. `avx2`).
    #[serde(default)]
    pub target_features: Vec<String>,
    /// CPU bandwidth limit of this process's cgroup (v2 `cpu.max`, v1
    /// `cpu.cfs_quota_us`), the tightest along the path to the root; `None` = unlimited
    /// or unknown.
    #[serde(default)]
    pub cgroup_cpu_max: Option<CpuMax>,
    /// CPUs isolated from the scheduler (`isolcpus`), list syntax; `Some("")` = none.
    #[serde(default)]
    pub isolated_cpus: Option<String>,
    /// CPUs whose scheduler tick stops when they run one task (`nohz_full`), list
    /// syntax; `Some("")` = none.
    #[serde(default)]
    pub nohz_full_cpus: Option<String>,
    /// `/proc/sys/kernel/numa_balancing`: 0 off, 1 automatic NUMA balancing
    /// (pages migrate towards the CPUs touching them), 2 memory tiering, 3 both.
    #[serde(default)]
    pub numa_balancing: Option<u32>,
}

/// A cgroup CPU bandwidth limit: `quota_us` of CPU time per `period_us`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuMax {
    /// CPU time the cgroup may use per period, in microseconds.
    pub quota_us: u64,
    /// The period, in microseconds.
    pub period_us: u64,
}

impl CpuMax {
    /// The limit in CPUs (`quota / period`, e.g. 1.5).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }
}

/// Size profile.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Whole suite in about a minute on 2 CPUs; what tests and CI run.
    Quick,
    /// A few minutes on 2 CPUs; grows with the CPU count.
    #[default]
    Default,
    /// The seeds' sizes (10^5 samples, 256 MiB per thread, counts to 4x CPUs).
    Full,
}

impl Profile {
    /// The profile a command's `--quick` and `--full` flags choose (clap lets
    /// at most one be set): neither gives the default.
    pub fn from_flags(quick: bool, full: bool) -> Self {
        if quick {
            Profile::Quick
        } else if full {
            Profile::Full
        } else {
            Profile::Default
        }
    }

    /// Lower-case name as written in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Default => "default",
            Profile::Full => "full",
        }
    }

    /// Pick one of three values by profile: sizes are data, never literals in kernels.
    pub fn pick<T>(self, quick: T, default: T, full: T) -> T {
        match self {
            Profile::Quick => quick,
            Profile::Default => default,
            Profile::Full => full,
        }
    }
}

/// How a probe ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every planned case was measured.
    Completed,
    /// The time budget ran out; what was measured is kept (the seed's "-give up-").
    GaveUp,
    /// Not measurable here (no SMT, no counters, needs MPI, ...); `reason` says why.
    Skipped,
    /// An error stopped the probe; `reason` says which.
    Failed,
    /// SIGINT or SIGTERM stopped the probe; what was measured is kept.
    Interrupted,
}

impl Status {
    /// Name as written in files.
    pub fn name(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::GaveUp => "gave_up",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }
}

/// Everything one probe produced.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeResult {
    /// Probe id (`compute`).
    pub id: String,
    /// One-line title.
    #[serde(default)]
    pub title: String,
    /// How the probe ended.
    pub status: Status,
    /// Why, for every status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Probe-level parameters (sizes, iterations, repetitions).
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Cases planned and cases measured (they differ when the probe gave up).
    #[serde(default)]
    pub cases_planned: usize,
    /// See `cases_planned`.
    #[serde(default)]
    pub cases_done: usize,
    /// Wall time the probe took, in seconds.
    #[serde(default)]
    pub elapsed_s: f64,
    /// x → y curves.
    #[serde(default)]
    pub series: Vec<Series>,
    /// Latency distributions.
    #[serde(default)]
    pub distributions: Vec<Distribution>,
    /// Square or rectangular matrices (CPU × CPU).
    #[serde(default)]
    pub matrices: Vec<Matrix>,
    /// Per-thread timelines.
    #[serde(default)]
    pub timelines: Vec<Timeline>,
    /// Free-form tables.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// Conditions that make a figure less trustworthy.
    #[serde(default)]
    pub warnings: Notes<Warning>,
    /// Conclusions derived from the data, as typed claims the renderers put into words.
    #[serde(default)]
    pub findings: Notes<Finding>,
    /// Configurations that were identical to another variant of the same comparison
    /// here (same CPUs, same parameters) and were measured once; their points are copies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<Alias>,
    /// Event counters of the probe's thread teams (absent in older files and for
    /// probes without teams); see `docs/counters.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<ProbeCounters>,
    /// The machine's state around each measurement of each group (version 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_states: Vec<GroupState>,
}

/// A series point that is a copy of another variant's measurement, because both
/// variants ran the same configuration on this machine ("compact = linear here").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Alias {
    /// Series of the copy (`int/compact`).
    pub series: String,
    /// Its x value.
    pub x: f64,
    /// Series that was measured (`int/linear`).
    pub same_as: String,
    /// The configuration both ran (`CPUs 0,1`).
    pub config: String,
}

impl ProbeResult {
    /// An empty result with a status.
    pub fn new(id: &str, title: &str, status: Status) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            status,
            reason: None,
            params: BTreeMap::new(),
            cases_planned: 0,
            cases_done: 0,
            elapsed_s: 0.0,
            series: vec![],
            distributions: vec![],
            matrices: vec![],
            timelines: vec![],
            tables: vec![],
            warnings: Notes::default(),
            findings: Notes::default(),
            aliases: vec![],
            counters: None,
            machine_states: vec![],
        }
    }

    /// The series with this name, if any.
    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// Add a point's samples to the series `name` at its x (appending to the samples
    /// already there: repetitions of one configuration accumulate), creating the series
    /// (with the given axis names) if needed. The point's central value and interval
    /// are kept up to date.
    pub fn push_point(&mut self, p: Point) {
        let s = match self.series.iter().position(|s| s.name == p.series) {
            Some(i) => &mut self.series[i],
            None => {
                self.series
                    .push(Series::new(&p.series, &p.x_name, &p.y_name));
                self.series.last_mut().expect("just pushed")
            }
        };
        s.push_samples(p.x, p.samples, p.epoch);
    }

    /// About how many numbers the result holds (series samples, distribution pairs
    /// and histogram bins, matrix cells, timeline spans): the cost of a copy.
    pub fn values_held(&self) -> usize {
        let series: usize = self
            .series
            .iter()
            .map(|s| s.samples.iter().map(Vec::len).sum::<usize>() + s.x.len())
            .sum();
        let distributions: usize = self
            .distributions
            .iter()
            .map(|d| 2 * d.pairs.len() + d.histogram.counts.len())
            .sum();
        let matrices: usize = self
            .matrices
            .iter()
            .map(|m| m.values.iter().map(Vec::len).sum::<usize>())
            .sum();
        let timelines: usize = self
            .timelines
            .iter()
            .map(|t| t.lanes.iter().map(|l| 2 * l.spans.len()).sum::<usize>())
            .sum();
        series + distributions + matrices + timelines + self.machine_states.len()
    }

    /// Turn every series' samples into its central value (median) and 95 % interval.
    /// Series without samples (version 1 files) are left as they are.
    pub fn summarise(&mut self) {
        for s in &mut self.series {
            s.summarise();
        }
    }

    /// The estimate of series `name` at `x`, if measured.
    pub fn estimate(&self, name: &str, x: f64) -> Option<Estimate> {
        self.series(name)?.estimate_at(x)
    }

    /// Whether the point (`series`, `x`) is a copy of another variant's measurement.
    pub fn alias_of(&self, series: &str, x: f64) -> Option<&Alias> {
        self.aliases.iter().find(|a| a.series == series && a.x == x)
    }

    /// Merge one case's measurement into this result.
    pub fn absorb(&mut self, m: Measurement) {
        for p in m.points {
            self.push_point(p);
        }
        self.distributions.extend(m.distributions);
        self.matrices.extend(m.matrices);
        self.timelines.extend(m.timelines);
        self.tables.extend(m.tables);
        for w in m.warnings.0 {
            self.warnings.push_unique(w);
        }
        self.findings.0.extend(m.findings.0);
        for (k, v) in m.params {
            self.params.entry(k).or_insert(v);
        }
    }
}

/// One curve: `y[i]` measured at `x[i]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Series {
    /// `<what>/<variant>`, e.g. `int/scatter`.
    pub name: String,
    /// Name of the x axis with its unit (`threads`, `bytes`).
    pub x_name: String,
    /// x values.
    pub x: Vec<f64>,
    /// Name of the y axis with its unit (`ops_per_s`, `bytes_per_s`).
    pub y_name: String,
    /// Central values (medians of `samples`), same length as `x`.
    pub y: Vec<f64>,
    /// Lower ends of the 95 % intervals of `y` (empty in version 1 files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub y_lo: Vec<f64>,
    /// Upper ends of the 95 % intervals of `y` (empty in version 1 files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub y_hi: Vec<f64>,
    /// Number of samples behind each `y` (empty in version 1 files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub n: Vec<usize>,
    /// Every repetition of each point, in the order measured (interleaved rounds line
    /// up: sample k of two variants of one comparison come from the same round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Vec<f64>>,
    /// Per point, how many of its `samples` each epoch of the run gave, in order
    /// (version 3; empty in older files and for points measured in one epoch only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub epochs: Vec<Vec<usize>>,
    /// Per point, each epoch's own estimate when the epochs disagree beyond their
    /// intervals (a state-dependent point); empty for a point whose epochs agree
    /// (version 3; the whole field is empty when no point is state-dependent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<Vec<Estimate>>,
}

impl Series {
    /// An empty series.
    pub fn new(name: &str, x_name: &str, y_name: &str) -> Self {
        Self {
            name: name.into(),
            x_name: x_name.into(),
            x: vec![],
            y_name: y_name.into(),
            y: vec![],
            y_lo: vec![],
            y_hi: vec![],
            n: vec![],
            samples: vec![],
            epochs: vec![],
            states: vec![],
        }
    }

    /// Add samples at `x`, measured in epoch `epoch` of the run, and update that
    /// point's estimate.
    pub fn push_samples(&mut self, x: f64, samples: Vec<f64>, epoch: usize) {
        if self.samples.len() != self.x.len() || self.y.len() != self.x.len() {
            // A series read from a version 1 file: no samples to add to.
            self.summarise();
        }
        self.epochs.resize(self.x.len(), Vec::new());
        let added = samples.len();
        let i = match self.index_of(x) {
            Some(i) => {
                self.samples[i].extend(samples);
                i
            }
            None => {
                self.x.push(x);
                self.samples.push(samples);
                self.epochs.push(Vec::new());
                self.y.push(f64::NAN);
                self.y_lo.push(f64::NAN);
                self.y_hi.push(f64::NAN);
                self.n.push(0);
                self.x.len() - 1
            }
        };
        let counts = &mut self.epochs[i];
        if counts.len() <= epoch {
            counts.resize(epoch + 1, 0);
        }
        counts[epoch] += added;
        let e = crate::stats::estimate(&self.samples[i]);
        (self.y[i], self.y_lo[i], self.y_hi[i], self.n[i]) = (e.value, e.lo, e.hi, e.n);
    }

    /// Central values and intervals from the samples (see [`crate::stats::estimate`]).
    pub fn summarise(&mut self) {
        if self.samples.len() != self.x.len() {
            // No samples (version 1): each y is its own single sample.
            self.samples = self.y.iter().map(|&y| vec![y]).collect();
            self.samples.resize(self.x.len(), Vec::new());
        }
        self.epochs.resize(self.x.len(), Vec::new());
        let per_epoch: Vec<crate::stats::epochs::EpochEstimate> = self
            .samples
            .iter()
            .zip(&self.epochs)
            .map(|(s, counts)| crate::stats::epochs::estimate_epochs(s, counts))
            .collect();
        let est: Vec<Estimate> = per_epoch.iter().map(|e| e.pooled).collect();
        self.states = per_epoch
            .iter()
            .map(|e| {
                if e.state_dependent {
                    e.epochs.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        if self.states.iter().all(Vec::is_empty) {
            self.states.clear();
        }
        // Counts of points measured in one epoch say nothing the samples don't.
        if self
            .epochs
            .iter()
            .all(|c| c.iter().filter(|&&k| k > 0).count() < 2)
        {
            self.epochs.clear();
        }
        self.y = est.iter().map(|e| e.value).collect();
        self.y_lo = est.iter().map(|e| e.lo).collect();
        self.y_hi = est.iter().map(|e| e.hi).collect();
        self.n = est.iter().map(|e| e.n).collect();
    }

    /// Index of `x`, if measured.
    pub fn index_of(&self, x: f64) -> Option<usize> {
        self.x.iter().position(|&v| v == x)
    }

    /// The estimate at index `i` (exact when the file holds no interval).
    pub fn estimate(&self, i: usize) -> Option<Estimate> {
        let value = *self.y.get(i)?;
        Some(match (self.y_lo.get(i), self.y_hi.get(i), self.n.get(i)) {
            (Some(&lo), Some(&hi), Some(&n)) => Estimate { value, lo, hi, n },
            _ => Estimate::without_interval(value),
        })
    }

    /// The estimate at `x`, if measured.
    pub fn estimate_at(&self, x: f64) -> Option<Estimate> {
        self.estimate(self.index_of(x)?)
    }

    /// The repetitions at `x` (empty when the file holds none).
    pub fn samples_at(&self, x: f64) -> &[f64] {
        self.index_of(x)
            .and_then(|i| self.samples.get(i))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Observations at one x of a named series, produced by one case: one sample per
/// repetition the case ran (the runner adds the samples of further rounds).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Series name.
    pub series: String,
    /// x axis name.
    pub x_name: String,
    /// x value.
    pub x: f64,
    /// y axis name.
    pub y_name: String,
    /// y values, one per repetition.
    pub samples: Vec<f64>,
    /// The epoch of the run the samples come from (set by the runner).
    pub epoch: usize,
}

impl Point {
    /// A point with one sample.
    pub fn new(series: impl Into<String>, x_name: &str, x: f64, y_name: &str, y: f64) -> Self {
        Self::samples(series, x_name, x, y_name, vec![y])
    }

    /// A point with several samples (repetitions).
    pub fn samples(
        series: impl Into<String>,
        x_name: &str,
        x: f64,
        y_name: &str,
        samples: Vec<f64>,
    ) -> Self {
        Self {
            series: series.into(),
            x_name: x_name.into(),
            x,
            y_name: y_name.into(),
            samples,
            epoch: 0,
        }
    }
}

/// A matrix of values (e.g. CPU × CPU latencies).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Matrix {
    /// Name, e.g. `c2c/cas`.
    pub name: String,
    /// Unit of the values.
    pub unit: String,
    /// Row labels.
    pub rows: Vec<String>,
    /// Column labels.
    pub cols: Vec<String>,
    /// `values[r][c]`; `None` where not measured.
    pub values: Vec<Vec<Option<f64>>>,
}

/// Per-thread spans on a common time axis.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Timeline {
    /// Name, e.g. `false-sharing/packed`.
    pub name: String,
    /// One lane per thread.
    pub lanes: Vec<Lane>,
}

/// One lane of a timeline.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Lane {
    /// Label (e.g. `thread 3 @ cpu 5`).
    pub label: String,
    /// Spans in start order.
    pub spans: Vec<Span>,
}

/// One span of a lane, in ns since the timeline's origin.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Span {
    /// Start.
    pub start_ns: f64,
    /// End.
    pub end_ns: f64,
    /// What happened (`work`, `barrier`, `compute`, `allreduce`).
    pub kind: String,
}

/// A free-form table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Table {
    /// Name.
    pub name: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Rows of cells, already formatted or raw JSON values.
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// What one case of a probe produced; the runner merges these into a [`ProbeResult`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    /// Points of series.
    pub points: Vec<Point>,
    /// Distributions.
    pub distributions: Vec<Distribution>,
    /// Matrices.
    pub matrices: Vec<Matrix>,
    /// Timelines.
    pub timelines: Vec<Timeline>,
    /// Tables.
    pub tables: Vec<Table>,
    /// Warnings (deduplicated when merged).
    pub warnings: Notes<Warning>,
    /// Findings the measurement itself makes (a tuner's choice and its notes).
    pub findings: Notes<Finding>,
    /// Values the measurement chose, recorded with the probe's parameters (a tuned
    /// configuration); a key already planned keeps the plan's value.
    pub params: BTreeMap<String, serde_json::Value>,
}

impl Measurement {
    /// A measurement holding these points.
    pub fn points(points: Vec<Point>) -> Self {
        Self {
            points,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_choose_the_profile_and_neither_is_the_default() {
        assert_eq!(Profile::from_flags(true, false), Profile::Quick);
        assert_eq!(Profile::from_flags(false, true), Profile::Full);
        assert_eq!(Profile::from_flags(false, false), Profile::Default);
        assert_eq!(Profile::from_flags(false, false), Profile::default());
    }

    #[test]
    fn version_1_files_load_with_notes_and_exact_points() {
        let v1: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        assert_eq!(v1.schema_version, 1);
        let p = &v1.probes[0];
        assert!(p.findings.iter().all(|f| matches!(f, Finding::Note { .. })));
        let s = &p.series[0];
        let e = s.estimate(0).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (s.y[0], s.y[0], s.y[0]));
        // Written again, it keeps its sentences and gains no invented interval.
        let again: RunFile = serde_json::from_str(&serde_json::to_string(&v1).unwrap()).unwrap();
        assert_eq!(again, v1);
    }

    #[test]
    fn samples_accumulate_and_summaries_follow() {
        let mut r = ProbeResult::new("p", "t", Status::Completed);
        r.push_point(Point::samples(
            "a/x",
            "threads",
            2.0,
            "ops_per_s",
            vec![3.0, 1.0],
        ));
        r.push_point(Point::new("a/x", "threads", 4.0, "ops_per_s", 5.0));
        r.push_point(Point::samples(
            "a/x",
            "threads",
            2.0,
            "ops_per_s",
            vec![2.0],
        ));
        let s = r.series("a/x").unwrap();
        assert_eq!(s.x, vec![2.0, 4.0]);
        assert_eq!(s.samples, vec![vec![3.0, 1.0, 2.0], vec![5.0]]);
        assert_eq!((s.y[0], s.n[0], s.y_lo[0], s.y_hi[0]), (2.0, 3, 1.0, 3.0));
        assert_eq!(r.estimate("a/x", 4.0).unwrap(), Estimate::exact(5.0));
        // Typed findings round-trip with their kind; a sentence is a note.
        r.findings.push("plain words");
        r.findings.push(Finding::Value {
            what: "L1".into(),
            unit: "ns".into(),
            value: Estimate::exact(1.0),
            context: None,
        });
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""kind":"value""#), "{json}");
        let back: ProbeResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
