//! The run file: serde types of everything corescope measures.
//!
//! This is a public, versioned contract (see `DESIGN.md`): users script against it.
//! Adding a field is a minor change (new fields carry `#[serde(default)]` so older
//! files still load); renaming or removing one bumps [`SCHEMA_VERSION`].
//! Units are in field names (`_ns`, `_bytes`, `_hz`). No I/O happens here.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::topology::Topology;

/// Version of the run-file layout written by this build.
pub const SCHEMA_VERSION: u32 = 1;

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
    /// Which size profile was run.
    pub profile: Profile,
    /// UTC start time, RFC 3339 (`2026-11-22T19:28:00Z`).
    pub started_utc: String,
    /// The command line, for reproducing the run.
    #[serde(default)]
    pub command: Vec<String>,
    /// One entry per probe, in the order run.
    pub probes: Vec<ProbeResult>,
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
    pub warnings: Vec<String>,
    /// Conclusions stated in words, derived from the data.
    #[serde(default)]
    pub findings: Vec<String>,
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
            warnings: vec![],
            findings: vec![],
        }
    }

    /// The series with this name, if any.
    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// Add a point to the series `name`, creating it (with the given axis names) if needed.
    pub fn push_point(&mut self, p: Point) {
        if let Some(s) = self.series.iter_mut().find(|s| s.name == p.series) {
            s.x.push(p.x);
            s.y.push(p.y);
        } else {
            self.series.push(Series {
                name: p.series,
                x_name: p.x_name,
                x: vec![p.x],
                y_name: p.y_name,
                y: vec![p.y],
            });
        }
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
        for w in m.warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
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
    /// y values, same length as `x`.
    pub y: Vec<f64>,
}

/// A single (x, y) observation of a named series, produced by one case.
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
    /// y value.
    pub y: f64,
}

impl Point {
    /// Build a point.
    pub fn new(series: impl Into<String>, x_name: &str, x: f64, y_name: &str, y: f64) -> Self {
        Self {
            series: series.into(),
            x_name: x_name.into(),
            x,
            y_name: y_name.into(),
            y,
        }
    }
}

/// A latency distribution with its summary and histogram.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Distribution {
    /// `<what>/<variant>`, e.g. `create/joinable/same-cpu/start`.
    pub name: String,
    /// Unit of the samples (`ns` or `cycles`).
    pub unit: String,
    /// Order statistics.
    pub summary: Summary,
    /// Log-scaled histogram.
    pub histogram: Histogram,
    /// The densest interval holding `fraction` of the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_range: Option<ModeRange>,
    /// Paired samples (A, B), downsampled, for scatter plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<[f64; 2]>,
    /// Name of the distribution paired with this one (the y of `pairs`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_with: Option<String>,
}

/// Order statistics of a sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
}

/// Histogram with explicit bin edges (`edges.len() == counts.len() + 1`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Histogram {
    /// Bin edges, increasing.
    pub edges: Vec<f64>,
    /// Samples per bin; bin i is `[edges[i], edges[i+1])`, the last bin is closed.
    pub counts: Vec<u64>,
    /// Whether edges are log-spaced.
    pub log: bool,
}

/// "x % of samples lie within [low, high]".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModeRange {
    /// Fraction of samples inside, 0..1.
    pub fraction: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
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
    pub warnings: Vec<String>,
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
