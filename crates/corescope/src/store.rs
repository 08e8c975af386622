//! Load and save run files: atomic writes, version checks, clear errors.

use crate::model::{RunFile, SCHEMA_VERSION};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a run file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Not a regular file, too large, or not UTF-8 (see [`crate::input`]).
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// Not JSON, truncated, or not shaped like a run file.
    #[error("{path}: not a valid corescope run file: {detail}")]
    Invalid {
        /// File concerned.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// JSON shaped like a run file whose content is not valid (see [`validate`]).
    #[error("{path}: not a valid corescope run file: {detail}")]
    InvalidContent {
        /// File concerned.
        path: PathBuf,
        /// What is wrong.
        #[source]
        detail: InvalidRun,
    },
    /// Another corescope process is writing this run file.
    #[error(
        "{path} is being written by another corescope run (its lock is held); \
         choose another --out or wait for that run to finish"
    )]
    Locked {
        /// The run file.
        path: PathBuf,
    },
    /// Written by a newer corescope.
    #[error(
        "{path}: written with run-file schema version {found}, but this corescope reads up to \
         version {SCHEMA_VERSION}; upgrade corescope to read it"
    )]
    TooNew {
        /// File concerned.
        path: PathBuf,
        /// Version in the file.
        found: u64,
    },

    /// An output path that is also an input (or another output of the same
    /// command): writing it would destroy what was read.
    #[error(
        "{output_flag} {}: this is {other_what} {} as well; nothing was written \
         (writing it would destroy {other_what_short}): choose another file",
        output.display(),
        other.display()
    )]
    Aliased {
        /// The flag that named the output (`--html`).
        output_flag: String,
        /// The output as named.
        output: PathBuf,
        /// What the other path is (`the input run file`).
        other_what: String,
        /// The same, short (`it`).
        other_what_short: &'static str,
        /// The other path as named.
        other: PathBuf,
    },
}

/// Read and validate a run file (a regular file of at most
/// [`crate::input::MAX_INPUT_BYTES`], UTF-8).
pub fn load(path: &Path) -> Result<RunFile, StoreError> {
    let text = crate::input::read_text(path)?;
    parse(&text, path)
}

/// The fields of a run file read before the rest: which tool wrote it and its
/// schema version (every other field is skipped without being built).
#[derive(serde::Deserialize)]
struct Preamble {
    #[serde(default)]
    tool: Option<serde_json::Value>,
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
}

/// Parse run-file text; `path` is only used in messages. The text is read
/// twice: once for the tool and the version (nothing else is built), then
/// straight into the model, never into a `serde_json::Value` tree of the whole
/// file (which took several times the file's size: 460 MB for a 36 MB file).
pub fn parse(text: &str, path: &Path) -> Result<RunFile, StoreError> {
    let invalid = |detail: String| StoreError::Invalid {
        path: path.into(),
        detail,
    };
    let json_error = |e: serde_json::Error| match e.classify() {
        serde_json::error::Category::Data => e.to_string(),
        _ => format!("JSON error: {e}"),
    };
    // A derived struct also reads an array (as its fields in order): the first
    // character says whether the top level is an object.
    let is_object = text.trim_start().starts_with('{');
    let pre: Preamble = match serde_json::from_str(text) {
        Ok(_) if !is_object => return Err(invalid("top level is not an object".into())),
        Err(e) if !is_object && e.classify() == serde_json::error::Category::Data => {
            return Err(invalid("top level is not an object".into()))
        }
        Err(e) => return Err(invalid(json_error(e))),
        Ok(pre) => pre,
    };
    match pre
        .tool
        .as_ref()
        .and_then(|t| t.get("name"))
        .and_then(|n| n.as_str())
    {
        Some("corescope") => {}
        _ => {
            return Err(invalid(
                "no \"tool\": {\"name\": \"corescope\"} entry".into(),
            ))
        }
    }
    let version = pre
        .schema_version
        .as_ref()
        .and_then(|v| v.as_u64())
        .ok_or_else(|| invalid("missing or non-integer \"schema_version\"".into()))?;
    if version == 0 {
        return Err(invalid(
            "schema_version 0 was never written by corescope (the first version is 1)".into(),
        ));
    }
    if version > u64::from(SCHEMA_VERSION) {
        return Err(StoreError::TooNew {
            path: path.into(),
            found: version,
        });
    }
    let run: RunFile = serde_json::from_str(text).map_err(|e| invalid(json_error(e)))?;
    validate(&run).map_err(|detail| StoreError::InvalidContent {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok(run)
}

/// Why a run file's content is not valid, naming the probe and the part.
#[derive(Debug, thiserror::Error)]
pub enum InvalidRun {
    /// The topology says what no machine has.
    #[error("topology: {0}")]
    Topology(#[source] crate::topology::Implausible),
    /// A number that must be finite is not.
    #[error("{what} is {value}, not a finite number")]
    NotFinite {
        /// The number's name.
        what: String,
        /// Its value.
        value: f64,
    },
    /// A series, distribution, matrix, timeline or table of a probe is malformed.
    #[error("probe '{probe}', {kind} '{name}': {shape}")]
    Part {
        /// The probe's id.
        probe: String,
        /// `series`, `distribution`, `matrix`, `timeline` or `table`.
        kind: &'static str,
        /// The part's name.
        name: String,
        /// What is wrong with it (boxed: the error stays small).
        #[source]
        shape: Box<Shape>,
    },
}

/// What is malformed in one part of a probe's result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Shape {
    /// A vector parallel to a series' x has another length.
    #[error("x has {x_values} values but {what} has {values}")]
    Unequal {
        /// The vector (`y`, `y_lo`, `y_hi`, `n`, `samples`, `epochs`, `states`).
        what: &'static str,
        /// The length of x.
        x_values: usize,
        /// Its length.
        values: usize,
    },
    /// An x or y value is not finite.
    #[error("value {index} is not a finite number")]
    NotFiniteValue {
        /// Its position in x, then y.
        index: usize,
    },
    /// An interval bound or a repetition is not finite.
    #[error("interval or repetition {index} is not a finite number")]
    NotFiniteInterval {
        /// Its position in y_lo, then y_hi, then the repetitions.
        index: usize,
    },
    /// An interval whose low bound is above its high bound.
    #[error("point {point}: y_lo {lo} is above y_hi {hi} (an interval runs from low to high)")]
    IntervalReversed {
        /// The point.
        point: usize,
        /// Its low bound.
        lo: f64,
        /// Its high bound.
        hi: f64,
    },
    /// A point's count differs from the number of its repetitions.
    #[error("point {point}: n is {n} but {repetitions} repetitions are recorded")]
    CountMismatch {
        /// The point.
        point: usize,
        /// Its count.
        n: usize,
        /// Its repetitions.
        repetitions: usize,
    },
    /// A point's epoch counts do not add up to its samples.
    #[error("point {point}: the epochs count {counts:?} samples but it has {samples}")]
    EpochsMismatch {
        /// The point.
        point: usize,
        /// Its samples per epoch.
        counts: Vec<usize>,
        /// Its samples.
        samples: usize,
    },
    /// A per-state estimate is not finite.
    #[error("a state's estimate is not a finite number")]
    NotFiniteState,
    /// A summary statistic of a distribution is not finite.
    #[error("summary {stat} is not a finite number")]
    NotFiniteSummary {
        /// The statistic (`min`, `p50`, ..., `stddev`).
        stat: &'static str,
    },
    /// Histogram edges that are not one more than the counts.
    #[error("histogram has {edges} edges for {bins} bins (edges must be one more than counts)")]
    HistogramEdges {
        /// The number of edges.
        edges: usize,
        /// The number of counts.
        bins: usize,
    },
    /// A histogram edge is not finite.
    #[error("histogram edge is not a finite number")]
    NotFiniteEdge,
    /// Histogram edges that do not increase.
    #[error("histogram edges decrease at edge {edge}")]
    EdgesDecrease {
        /// The first edge below its predecessor.
        edge: usize,
    },
    /// The mode range is not finite.
    #[error("mode range is not finite")]
    NotFiniteModeRange,
    /// A pair of a distribution is not finite.
    #[error("a pair is not a finite number")]
    NotFinitePair,
    /// A matrix with other numbers of rows of values and of row labels.
    #[error("{value_rows} rows of values but {labels} row labels")]
    RowLabels {
        /// The rows of values.
        value_rows: usize,
        /// The row labels.
        labels: usize,
    },
    /// A matrix row with another number of values than column labels.
    #[error(
        "row {row} has {values} values but there are {labels} column labels (not rectangular)"
    )]
    NotRectangular {
        /// The row.
        row: usize,
        /// Its values.
        values: usize,
        /// The column labels.
        labels: usize,
    },
    /// A matrix value is not finite.
    #[error("a value is not a finite number")]
    NotFiniteCell,
    /// A timeline span whose start or end is not finite.
    #[error("lane '{lane}' has a span that is not finite")]
    NotFiniteSpan {
        /// The lane's label.
        lane: String,
    },
    /// A table row with more cells than columns.
    #[error("row {row} has {cells} cells but there are {columns} columns")]
    TableRow {
        /// The row.
        row: usize,
        /// Its cells.
        cells: usize,
        /// The columns.
        columns: usize,
    },
}

/// Check every shape of a run file once, so renderers can trust the model:
/// parallel vectors of equal length, rectangular matrices whose labels match,
/// histogram edges one more than the counts and increasing, finite numbers.
/// The message names the probe and the series (or distribution, matrix, ...).
pub fn validate(run: &RunFile) -> Result<(), InvalidRun> {
    run.topology.check().map_err(InvalidRun::Topology)?;
    for p in &run.probes {
        let at = |kind: &'static str, name: &str, shape: Shape| InvalidRun::Part {
            probe: p.id.clone(),
            kind,
            name: name.to_string(),
            shape: Box::new(shape),
        };
        if !p.elapsed_s.is_finite() {
            return Err(InvalidRun::NotFinite {
                what: format!("probe '{}': elapsed_s", p.id),
                value: p.elapsed_s,
            });
        }
        for s in &p.series {
            validate_series(s)
                .and_then(|()| validate_epochs(s))
                .map_err(|d| at("series", &s.name, d))?;
        }
        for d in &p.distributions {
            validate_distribution(d).map_err(|m| at("distribution", &d.name, m))?;
        }
        for m in &p.matrices {
            validate_matrix(m).map_err(|d| at("matrix", &m.name, d))?;
        }
        for t in &p.timelines {
            validate_timeline(t).map_err(|d| at("timeline", &t.name, d))?;
        }
        for t in &p.tables {
            validate_table(t).map_err(|d| at("table", &t.name, d))?;
        }
    }
    Ok(())
}

/// x and y of equal length and finite; intervals, counts and repetitions
/// (version 2) absent or one per x, finite, intervals from low to high, and a
/// point's count the number of its repetitions.
fn validate_series(s: &crate::model::Series) -> Result<(), Shape> {
    let x_values = s.x.len();
    if s.y.len() != x_values {
        return Err(Shape::Unequal {
            what: "y",
            x_values,
            values: s.y.len(),
        });
    }
    if let Some(index) = s.x.iter().chain(&s.y).position(|v| !v.is_finite()) {
        return Err(Shape::NotFiniteValue { index });
    }
    for (what, values) in [
        ("y_lo", s.y_lo.len()),
        ("y_hi", s.y_hi.len()),
        ("n", s.n.len()),
        ("samples", s.samples.len()),
    ] {
        if values != 0 && values != x_values {
            return Err(Shape::Unequal {
                what,
                x_values,
                values,
            });
        }
    }
    let bounds = s.y_lo.iter().chain(&s.y_hi);
    let reps = s.samples.iter().flatten();
    if let Some(index) = bounds.chain(reps).position(|v| !v.is_finite()) {
        return Err(Shape::NotFiniteInterval { index });
    }
    if let Some(point) = s.y_lo.iter().zip(&s.y_hi).position(|(lo, hi)| lo > hi) {
        return Err(Shape::IntervalReversed {
            point,
            lo: s.y_lo[point],
            hi: s.y_hi[point],
        });
    }
    // The count of a point is the number of its repetitions.
    if !s.samples.is_empty() && !s.n.is_empty() {
        if let Some(point) = s.n.iter().zip(&s.samples).position(|(n, r)| *n != r.len()) {
            return Err(Shape::CountMismatch {
                point,
                n: s.n[point],
                repetitions: s.samples[point].len(),
            });
        }
    }
    Ok(())
}

/// Epoch counts (version 3) are absent or one list per x, adding up to the point's
/// samples; per-state estimates are absent or one list per x, finite.
fn validate_epochs(s: &crate::model::Series) -> Result<(), Shape> {
    for (what, values) in [("epochs", s.epochs.len()), ("states", s.states.len())] {
        if values != 0 && values != s.x.len() {
            return Err(Shape::Unequal {
                what,
                x_values: s.x.len(),
                values,
            });
        }
    }
    if !s.epochs.is_empty() && s.samples.len() == s.x.len() {
        for (point, (counts, reps)) in s.epochs.iter().zip(&s.samples).enumerate() {
            let total = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c));
            if total != Some(reps.len()) {
                return Err(Shape::EpochsMismatch {
                    point,
                    counts: counts.clone(),
                    samples: reps.len(),
                });
            }
        }
    }
    let states = s.states.iter().flatten();
    if states
        .flat_map(|e| [e.value, e.lo, e.hi])
        .any(|v| !v.is_finite())
    {
        return Err(Shape::NotFiniteState);
    }
    Ok(())
}

fn validate_distribution(d: &crate::model::Distribution) -> Result<(), Shape> {
    let s = &d.summary;
    for (stat, v) in [
        ("min", s.min),
        ("p50", s.p50),
        ("p90", s.p90),
        ("p99", s.p99),
        ("p999", s.p999),
        ("max", s.max),
        ("mean", s.mean),
        ("stddev", s.stddev),
    ] {
        if !v.is_finite() {
            return Err(Shape::NotFiniteSummary { stat });
        }
    }
    let h = &d.histogram;
    if !(h.edges.is_empty() && h.counts.is_empty()) && h.edges.len() != h.counts.len() + 1 {
        return Err(Shape::HistogramEdges {
            edges: h.edges.len(),
            bins: h.counts.len(),
        });
    }
    if h.edges.iter().any(|v| !v.is_finite()) {
        return Err(Shape::NotFiniteEdge);
    }
    // Equal edges occur when every sample is equal (one bin [v, v]).
    if let Some(i) = h.edges.windows(2).position(|w| w[1] < w[0]) {
        return Err(Shape::EdgesDecrease { edge: i + 1 });
    }
    if let Some(m) = &d.mode_range {
        if !(m.fraction.is_finite() && m.low.is_finite() && m.high.is_finite()) {
            return Err(Shape::NotFiniteModeRange);
        }
    }
    if d.pairs.iter().flatten().any(|v| !v.is_finite()) {
        return Err(Shape::NotFinitePair);
    }
    Ok(())
}

fn validate_matrix(m: &crate::model::Matrix) -> Result<(), Shape> {
    if m.values.len() != m.rows.len() {
        return Err(Shape::RowLabels {
            value_rows: m.values.len(),
            labels: m.rows.len(),
        });
    }
    if let Some((row, values)) = m
        .values
        .iter()
        .enumerate()
        .find(|(_, values)| values.len() != m.cols.len())
    {
        return Err(Shape::NotRectangular {
            row,
            values: values.len(),
            labels: m.cols.len(),
        });
    }
    if m.values.iter().flatten().flatten().any(|v| !v.is_finite()) {
        return Err(Shape::NotFiniteCell);
    }
    Ok(())
}

/// Every span of every lane starts and ends at a finite time.
fn validate_timeline(t: &crate::model::Timeline) -> Result<(), Shape> {
    let bad = |sp: &crate::model::Span| !sp.start_ns.is_finite() || !sp.end_ns.is_finite();
    match t.lanes.iter().find(|l| l.spans.iter().any(bad)) {
        Some(l) => Err(Shape::NotFiniteSpan {
            lane: l.label.clone(),
        }),
        None => Ok(()),
    }
}

/// No row has more cells than the table has columns.
fn validate_table(t: &crate::model::Table) -> Result<(), Shape> {
    match t
        .rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() > t.columns.len())
    {
        Some((row, r)) => Err(Shape::TableRow {
            row,
            cells: r.len(),
            columns: t.columns.len(),
        }),
        None => Ok(()),
    }
}

/// Write a run file: atomically where `path` is (or will be) a regular file,
/// written through where it is a device, a FIFO or a symlink (see [`write_output`]).
pub fn save(run: &RunFile, path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.into(),
        source,
    };
    let bytes = serde_json::to_vec_pretty(run).map_err(|e| io(std::io::Error::other(e)))?;
    write_output(path, &bytes).map_err(io)
}

/// How an output path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// No file there yet, or a regular file: temporary file + rename.
    Replace,
    /// A character or block device, a FIFO, a socket or a symlink (`/dev/null`,
    /// `/dev/stdout`, `/proc/self/fd/1`): opened and written as `>` would, so the
    /// device or link stays what it is.
    WriteThrough,
}

/// What kind of output `path` is (no file, a regular file, or something else).
pub fn output_kind(path: &Path) -> OutputKind {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => OutputKind::WriteThrough,
        _ => OutputKind::Replace,
    }
}

/// Write an output file the safe way for what it is: a regular file (or a new
/// path) atomically with [`write_atomic`]; a device, FIFO or symlink opened and
/// written through, never replaced (`corescope report r.json --html /dev/null`
/// leaves `/dev/null` a device).
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match output_kind(path) {
        OutputKind::Replace => write_atomic(path, bytes),
        OutputKind::WriteThrough => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
    }
}

/// Mode of a file corescope creates, before the umask (what `>` gives).
const NEW_FILE_MODE: u32 = 0o666;
/// Random characters in a temporary file's name (62 possible each: a name
/// nobody can plant a link at in advance).
const TEMP_NAME_RANDOM_CHARS: usize = 12;

/// A new file in `dir` named `PREFIX` + random characters + `.tmp`, created
/// exclusively (`O_CREAT|O_EXCL`, so nothing already there is opened, and
/// `O_NOFOLLOW`, so no planted link is followed); removed when dropped unless
/// persisted. The one way corescope makes a temporary or probe file.
fn create_temp_in(dir: &Path, prefix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::OpenOptionsExt;
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".tmp")
        .rand_bytes(TEMP_NAME_RANDOM_CHARS)
        .make_in(dir, |p| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(NEW_FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(p)
        })
}

/// Write bytes to `path` atomically (a temporary file of an unpredictable name,
/// created exclusively beside it, then renamed). Only for regular files: use
/// [`write_output`] for paths the user names.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, &|w| w.write_all(bytes))
}

/// [`write_atomic`] of what `fill` writes, streamed through a buffer (a large
/// file is never one string in memory). The temporary file is created
/// exclusively and without following links, then renamed over `path`:
/// whatever is at `path` (a regular file, a symbolic link, a FIFO) is
/// replaced, never written through; a directory there is an error. For
/// files whose names corescope chooses (the CSV export), not for paths a user
/// names ([`write_output`] writes devices and links through).
pub fn write_atomic_with(
    path: &Path,
    fill: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = parent_dir(path);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("run");
    let mut tmp = create_temp_in(dir, &format!(".{}.", short_name(name)))?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    // On failure the temporary file is removed when `tmp` is dropped.
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// A file name cut to a length that leaves room for a prefix and a suffix
/// within the 255 bytes a path component may have.
fn short_name(name: &str) -> &str {
    const KEEP_BYTES: usize = 200;
    if name.len() <= KEEP_BYTES {
        return name;
    }
    let mut end = KEEP_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// An advisory lock (`flock`) held while a run writes its run file, so that a
/// second run with the same `--out` refuses instead of silently overwriting.
/// The lock is on a hidden file next to the run file (`.NAME.lock`), because the
/// run file itself is replaced by every save; it is removed when dropped.
/// Devices, FIFOs and symlinks are written through and not locked.
#[derive(Debug)]
pub struct OutputLock {
    file: Option<(std::fs::File, PathBuf)>,
}

/// Times [`OutputLock::acquire`] opens the lock file again when the name was
/// removed or replaced between its open and its `flock` (a run ending).
const MAX_LOCK_ATTEMPTS: usize = 8;

impl OutputLock {
    /// Take the lock for `path`; fails with a clear message when another
    /// process holds it. A lock file left by a process that died is taken over
    /// (the kernel releases an `flock` with its holder). The lock file is opened
    /// without following a link (`O_NOFOLLOW`) and must be a regular file. A
    /// symlink to a regular file is locked beside the file it names, so runs
    /// writing through different links to one file exclude each other.
    pub fn acquire(path: &Path) -> Result<Self, StoreError> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
                Ok(t) if t.is_file() => t,
                _ => return Ok(Self { file: None }),
            },
            Ok(m) if !m.file_type().is_file() => return Ok(Self { file: None }),
            _ => path.to_path_buf(),
        };
        let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("run");
        let lock_path = parent_dir(&target).join(format!(".{}.lock", short_name(name)));
        let io = |source| StoreError::Io {
            path: lock_path.clone(),
            source,
        };
        for _ in 0..MAX_LOCK_ATTEMPTS {
            // O_NONBLOCK: a FIFO planted at the name fails at once instead of
            // waiting for a reader.
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(NEW_FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(&lock_path)
                .map_err(|e| {
                    if e.raw_os_error() == Some(libc::ELOOP) {
                        io(std::io::Error::other(
                            "the lock file is a symbolic link, which corescope never follows; \
                             remove it",
                        ))
                    } else {
                        io(e)
                    }
                })?;
            let meta = file.metadata().map_err(io)?;
            if !meta.is_file() {
                return Err(io(std::io::Error::other(
                    "the lock file is not a regular file; remove it",
                )));
            }
            // SAFETY: flock on a descriptor this function owns (`file` is open
            // for the whole call); it touches no memory of ours.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    return Err(StoreError::Locked { path: path.into() });
                }
                return Err(io(e));
            }
            // A run that ends removes the name before it lets the lock go: the
            // file locked here may no longer be the one the name gives.
            match std::fs::symlink_metadata(&lock_path) {
                Ok(m) if m.dev() == meta.dev() && m.ino() == meta.ino() => {
                    return Ok(Self {
                        file: Some((file, lock_path)),
                    })
                }
                _ => continue,
            }
        }
        Err(io(std::io::Error::other(
            "the lock file kept being replaced by another process",
        )))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        if let Some((file, lock_path)) = self.file.take() {
            // Remove the name first, then let the lock go with the descriptor.
            let _ = std::fs::remove_file(&lock_path);
            drop(file);
        }
    }
}

/// What identifies a file: its canonical path (for a path that does not exist
/// yet, its directory's canonical path and its name) and, where it exists, its
/// device and inode (a hard link has another path but the same inode).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    canonical: Option<PathBuf>,
    dev_ino: Option<(u64, u64)>,
    /// An existing character device (`/dev/null`, a terminal): writing it
    /// destroys no file, so two outputs may both be one.
    device: bool,
}

fn identity(path: &Path) -> Identity {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).ok();
    let canonical = std::fs::canonicalize(path)
        .ok()
        .or_else(|| canonical_of_missing(path));
    Identity {
        canonical,
        dev_ino: meta.as_ref().map(|m| (m.dev(), m.ino())),
        device: meta.is_some_and(|m| m.file_type().is_char_device()),
    }
}

/// Symbolic links followed at most while resolving a path that does not exist
/// (the kernel's own limit, `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// The canonical path a file not there yet would have: dangling symbolic links
/// followed (a link `r.html -> r.json` names `r.json`), then the directory's
/// canonical path and the name.
fn canonical_of_missing(path: &Path) -> Option<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match std::fs::read_link(&p) {
            Ok(target) => p = parent_dir(&p).join(target),
            Err(_) => break,
        }
    }
    if let Ok(c) = std::fs::canonicalize(&p) {
        return Some(c);
    }
    let name = p.file_name()?;
    std::fs::canonicalize(parent_dir(&p))
        .ok()
        .map(|d| d.join(name))
}

impl Identity {
    fn same_file(&self, other: &Identity) -> bool {
        (self.dev_ino.is_some() && self.dev_ino == other.dev_ino)
            || (self.canonical.is_some() && self.canonical == other.canonical)
    }
}

/// The directory a path is in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A path a command reads or writes, with the flag or role that named it
/// (`("--html", path)`, `("the run file", path)`).
pub type Named<'a> = (&'a str, &'a Path);

/// Refuse, before anything is written, an output that is one of the inputs
/// (by canonical path, or by device and inode where it exists, so symlinks,
/// `..`, `/proc/self/fd/N` and hard links are seen through), or that is
/// another output of the same command. The one check every command that
/// reads and writes files goes through.
pub fn refuse_aliases(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<(), StoreError> {
    let ins: Vec<Identity> = inputs.iter().map(|(_, p)| identity(p)).collect();
    let outs: Vec<Identity> = outputs.iter().map(|(_, p)| identity(p)).collect();
    for (i, (flag, out)) in outputs.iter().enumerate() {
        let id = &outs[i];
        if let Some(k) = ins.iter().position(|x| x.same_file(id)) {
            return Err(StoreError::Aliased {
                output_flag: (*flag).to_string(),
                output: out.to_path_buf(),
                other_what: inputs[k].0.to_string(),
                other_what_short: "it",
                other: inputs[k].1.to_path_buf(),
            });
        }
        if id.device {
            continue;
        }
        if let Some(k) = outs[..i].iter().position(|x| x.same_file(id)) {
            return Err(StoreError::Aliased {
                output_flag: (*flag).to_string(),
                output: out.to_path_buf(),
                other_what: format!("the output of {}", outputs[k].0),
                other_what_short: "one of them",
                other: outputs[k].1.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Why a file cannot be created at a path.
#[derive(Debug, thiserror::Error)]
pub enum Unwritable {
    /// Opening or creating it failed.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Its directory does not exist.
    #[error("cannot write {}: directory {} does not exist", path.display(), dir.display())]
    NoDirectory {
        /// The path.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// It is a directory.
    #[error("cannot write {}: it is a directory", path.display())]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
}

/// Check that a file can be created at `path` (its directory exists and is
/// writable) without leaving anything behind.
pub fn check_writable(path: &Path) -> Result<(), Unwritable> {
    let io = |source| Unwritable::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Ok(m) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_fifo() {
            // Opening a FIFO for writing waits for a reader: check nothing now.
            return Ok(());
        }
        if !t.is_file() && !t.is_dir() {
            // A device or a symlink: it is written through, so try exactly that
            // (without truncating, and without waiting).
            use std::os::unix::fs::OpenOptionsExt;
            return std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .map(drop)
                .map_err(io);
        }
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(Unwritable::NoDirectory {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        });
    }
    if path.is_dir() {
        return Err(Unwritable::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    // Removed again when dropped.
    create_temp_in(dir, ".corescope-write-test.")
        .map(drop)
        .map_err(io)
}
