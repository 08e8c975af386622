//! `workload`: units of work done in a fixed time as threads double (seed 001 §3, the
//! compute / working-set / IO scalability test), and scalability relative to one
//! thread.
//!
//! - `compute`: one unit = [`COMPUTE_PASSES`] passes of the compute probe's integer
//!   kernel (128 inputs × 8 dependent operations).
//! - `working-set`: one unit = one read pass over the thread's own block of
//!   [`WS_BLOCK_BYTES`] (larger than a private L2, so threads compete for the shared
//!   cache and memory).
//! - `io-open-once` / `io-open-each`: one unit = write [`IO_UNIT_BYTES`] and `fsync`,
//!   to a file opened once per thread, or opened (and closed) for every unit — the
//!   seed's file-open bottleneck. Files are created with `O_TMPFILE` in the temporary
//!   directory: they have no name, so nothing is left behind even when the run is
//!   interrupted.
//!
//! Repetition is the runner's: a case is one fixed-time run of one kind of work at
//! one thread count; the thread counts of one kind (and both IO kinds together) are
//! one group, run interleaved in rotated rounds. Scalability is the ratio of each
//! round's rate to the same round's one-thread rate, so it carries an interval, and
//! the best scalability and the cost of opening the file per unit are typed
//! comparisons, stated as differences only when significant.
//!
//! Every worker counts its events around the fixed-time loop (`counters/`): the
//! table `counters per case` gives MIPS, CPI and efficiency (IPC ÷ issue
//! width) where the machine has a PMU, as seed 001's Tables 2, 4 and 5, and the
//! software counts (task-clock, context switches, migrations, page faults)
//! everywhere; without a PMU a note says "skipped: no PMU (…)" (docs/counters.md).

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::clock::now_ns;
use crate::kernels::chains::{int_kernel, INPUTS};
use crate::model::{Finding, Measurement, Point, ProbeResult, Sensitivity, Warning};
use crate::placement::{self, Strategy};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::hint::black_box;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

/// Passes of the compute kernel per compute unit (about 10 µs on a 3 GHz core).
pub const COMPUTE_PASSES: u64 = 32;
/// Per-thread block of the working-set work.
pub const WS_BLOCK_BYTES: usize = 4 << 20;
/// Bytes written per IO unit (one page).
pub const IO_UNIT_BYTES: usize = 4096;
/// Largest thread count as a multiple of the CPU count (seed 001 doubles threads past
/// the strand count).
pub const MAX_THREAD_FACTOR: usize = 2;

/// Rounds of a group: the compared minimum, and a few more while intervals are wide
/// (capped so the default suite keeps its time).
pub const ROUNDS: Rounds = Rounds {
    min: crate::probes::MIN_COMPARED_ROUNDS,
    max: crate::probes::MIN_COMPARED_ROUNDS + 5,
    warmup: true,
    target_rel_half_width: crate::probes::TARGET_REL_HALF_WIDTH,
};

/// The probe.
pub struct Workload;

/// Kind of work.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Work {
    /// CPU-bound.
    Compute,
    /// Cache/memory-bound.
    WorkingSet,
    /// Write + fsync to a file opened once.
    IoOpenOnce,
    /// Open, write + fsync, close, per unit.
    IoOpenEach,
}

impl Work {
    /// Series prefix.
    pub fn name(self) -> &'static str {
        match self {
            Work::Compute => "compute",
            Work::WorkingSet => "working-set",
            Work::IoOpenOnce => "io-open-once",
            Work::IoOpenEach => "io-open-each",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    work: Work,
    threads: usize,
    duration_ns: u64,
}

/// 1, 2, 4, ... up to `max`, plus `max` itself.
pub fn doubling(max: usize) -> Vec<usize> {
    let mut v = vec![1];
    while v.last().is_some_and(|&l| l * 2 <= max) {
        v.push(v.last().copied().unwrap_or(1) * 2);
    }
    if v.last() != Some(&max) && max > 1 {
        v.push(max);
    }
    v
}

/// What this process may count (each worker around its fixed-time loop): the
/// software and hardware groups, each counted or why not (the plan's `counters`).
pub fn counter_status() -> crate::counters::CounterStatus {
    crate::counters::Counters::open().status().clone()
}

/// Why an I/O unit failed (the OS errors are shared so every worker can report them).
#[derive(Debug, Clone, thiserror::Error)]
pub enum UnitError {
    /// The unnamed file could not be made.
    #[error("O_TMPFILE in {dir}: {source}")]
    Open {
        /// The directory.
        dir: String,
        /// What the OS said.
        source: Arc<std::io::Error>,
    },
    /// The write fell short.
    #[error("write: {0}")]
    Write(#[source] Arc<std::io::Error>),
    /// The fsync failed.
    #[error("fsync: {0}")]
    Fsync(#[source] Arc<std::io::Error>),
}

/// An unnamed file in `dir` (O_TMPFILE): nothing to clean up, ever.
fn open_tmpfile(dir: &CString) -> Result<libc::c_int, UnitError> {
    // SAFETY: dir is a NUL-terminated path; O_TMPFILE needs a mode.
    let fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY, 0o600) };
    if fd < 0 {
        Err(UnitError::Open {
            dir: dir.to_string_lossy().into_owned(),
            source: Arc::new(std::io::Error::last_os_error()),
        })
    } else {
        Ok(fd)
    }
}

/// Write one unit and fsync.
fn write_unit(fd: libc::c_int, buf: &[u8]) -> Result<(), UnitError> {
    // SAFETY: buf is valid for buf.len() bytes; fd is open for writing.
    let n = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        return Err(UnitError::Write(Arc::new(std::io::Error::last_os_error())));
    }
    // SAFETY: fd is open.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(UnitError::Fsync(Arc::new(std::io::Error::last_os_error())));
    }
    Ok(())
}

struct Fd(libc::c_int);
impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor and close it once.
        unsafe { libc::close(self.0) };
    }
}

/// File systems whose magic number `statfs` gives (`linux/magic.h`).
const FILESYSTEMS: [(i64, &str); 11] = [
    (0x0102_1994, "tmpfs"),
    (0x8584_58f6, "ramfs"),
    (0xEF53, "ext2/3/4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0xF2F5_2010, "f2fs"),
    (0x2FC1_2FC1, "zfs"),
    (0x794C_7630, "overlayfs"),
    (0x6969, "nfs"),
    (0xFF53_4D42, "cifs"),
    (0x6573_5546, "fuse"),
];

/// The file system that holds `dir`, by name where known (else its magic number).
pub fn filesystem_of(dir: &std::ffi::CStr) -> Option<String> {
    // SAFETY: an all-zero statfs is a valid value for the kernel to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is a NUL-terminated path and `st` a writable statfs that
    // outlives the call.
    if unsafe { libc::statfs(dir.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let magic = st.f_type as i64;
    Some(filesystem_name(magic))
}

/// The name of a file system's magic number, or the number in hex.
pub fn filesystem_name(magic: i64) -> String {
    FILESYSTEMS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("0x{magic:x}"))
}

/// File systems held in memory: writing and `fsync` there involve no disk.
pub fn in_memory(fs: &str) -> bool {
    matches!(fs, "tmpfs" | "ramfs")
}

fn tmp_dir() -> CString {
    CString::new(std::env::temp_dir().as_os_str().as_bytes())
        .unwrap_or_else(|_| CString::from(c"/tmp"))
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "workload";

impl Probe for Workload {
    type Params = CaseParams;
    type Facts = ();

    /// Its duration and its team's creation.
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(p.duration_ns as f64 * 1e-9 + c.team_spawn_s(p.threads))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "compute / working-set / IO units of work in fixed time as threads double"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[
            Sensitivity::CoreThroughput,
            Sensitivity::PageSize,
            Sensitivity::PagePlacement,
        ]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let counts = match &ctx.overrides.threads {
            Some(t) => t.clone(),
            // A big machine (default profile): the thinned ladder, which also ends
            // at 2× CPUs (its factor 4 means "one oversubscribed count").
            None if ctx.thinned() => super::thinned_thread_counts(ctx.cpus(), 4),
            None => doubling(ctx.cpus() * MAX_THREAD_FACTOR),
        };
        // One round's run; the runner repeats it (at least 11 times with the warm-up).
        let duration_ns: u64 = ctx.profile.pick(10_000_000, 50_000_000, 500_000_000);
        let dir = tmp_dir();
        let io_ok = open_tmpfile(&dir).map(|fd| drop(Fd(fd)));
        let mut works = vec![Work::Compute, Work::WorkingSet];
        if io_ok.is_ok() {
            works.extend([Work::IoOpenOnce, Work::IoOpenEach]);
        }
        let mut cases = Vec::new();
        for &work in &works {
            // Both IO kinds in one group: open-once vs open-each is paired by round.
            let group = match work {
                Work::IoOpenOnce | Work::IoOpenEach => "workload io".to_string(),
                other => format!("workload {}", other.name()),
            };
            for &threads in &counts {
                let label = format!("{} ×{threads}", work.name());
                let params = CaseParams {
                    work,
                    threads,
                    duration_ns,
                };
                cases.push(
                    Case::new(&label, &params)
                        .compared(&group, &label, &label)
                        .with_rounds(super::pool::rounds_for(ctx.profile, ROUNDS)),
                );
            }
        }
        let mut plan = Plan::new(cases)
            .scaled_down(ctx.thinned_note(""))
        .param("thread_counts", &counts)
        .param("duration_ns", duration_ns)
        .param("compute_unit_ops", COMPUTE_PASSES * INPUTS as u64 * 8)
        .param("working_set_bytes_per_thread", WS_BLOCK_BYTES)
        .param("io_unit_bytes", IO_UNIT_BYTES)
        .param(
            "repetitions",
            "runner rounds, the thread counts of one kind interleaved (see rounds_min / rounds_max)",
        )
        .param("io_dir", dir.to_string_lossy())
        .param("counters", counter_status());
        if let Err(e) = io_ok {
            plan = plan.warning(Warning::IoSkipped {
                error: e.to_string(),
            });
        } else if let Some(fs) = filesystem_of(&dir) {
            if in_memory(&fs) {
                plan = plan.warning(Warning::IoInMemory {
                    dir: dir.to_string_lossy().into_owned(),
                    filesystem: fs.clone(),
                });
            }
            plan = plan.param("io_filesystem", fs);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let cpus = placement::assign(&ctx.plan.topo, &Strategy::Scatter, c.threads)?;
        let dur = c.duration_ns;
        let dir = tmp_dir();
        let out = ctx.team(
            &cpus,
            1,
            |t| -> Result<State, UnitError> {
                Ok(match c.work {
                    Work::Compute => {
                        State::Compute(Box::new(std::array::from_fn(|i| (2 * (i + t) + 3) as i64)))
                    }
                    Work::WorkingSet => State::Ws(vec![t as u64 + 1; WS_BLOCK_BYTES / 8]),
                    Work::IoOpenOnce => {
                        State::Io(Some(Fd(open_tmpfile(&dir)?)), vec![t as u8; IO_UNIT_BYTES])
                    }
                    Work::IoOpenEach => State::Io(None, vec![t as u8; IO_UNIT_BYTES]),
                })
            },
            |_t, state| -> Result<u64, UnitError> {
                let state = state.as_mut().map_err(|e| e.clone())?;
                let end = now_ns() + dur;
                let mut units = 0u64;
                while now_ns() < end {
                    match state {
                        State::Compute(inputs) => {
                            black_box(int_kernel(
                                inputs,
                                [3, 5, 7, 11],
                                COMPUTE_PASSES,
                                units as i64,
                            ));
                        }
                        State::Ws(block) => {
                            black_box(crate::kernels::stream::read_sum(black_box(block)));
                        }
                        State::Io(Some(fd), buf) => write_unit(fd.0, buf)?,
                        State::Io(None, buf) => {
                            let fd = Fd(open_tmpfile(&dir)?);
                            write_unit(fd.0, buf)?;
                        }
                    }
                    units += 1;
                }
                Ok(units)
            },
        )?;
        let mut total = 0u64;
        for r in out.results.iter().flatten() {
            match r {
                Ok(u) => total += u,
                Err(e) => return Err(ProbeError::step(c.work.name(), e.clone())),
            }
        }
        let secs = out.best().map(|b| b.team_ns()).unwrap_or(dur).max(1) as f64 * 1e-9;
        Ok(Measurement::points(vec![Point::new(
            format!("{}/rate", c.work.name()),
            "threads",
            c.threads as f64,
            "units_per_s",
            total as f64 / secs,
        )]))
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let works: Vec<String> = result
            .series
            .iter()
            .filter_map(|s| s.name.strip_suffix("/rate").map(String::from))
            .collect();
        for what in works {
            let (points, found) = scalability(result, &what);
            out.points.extend(points);
            out.findings.extend(found);
        }
        out.findings.extend(open_cost(result));
        if let Some((note, tables)) = crate::counters::case_tables(result, &[]) {
            out.findings.push(note);
            out.tables.extend(tables);
        }
        out
    }
}

/// Scalability of `what`: each round's rate over the same round's one-thread rate
/// (the thread counts ran interleaved, so round `i` of each is a pair), as the series
/// `what/scalability`; and the thread count with the highest scalability compared
/// with one thread, round by round.
fn scalability(result: &ProbeResult, what: &str) -> (Vec<Point>, Option<Finding>) {
    let rate = format!("{what}/rate");
    let Some(s) = result.series(&rate) else {
        return (Vec::new(), None);
    };
    let one = s.samples_at(1.0);
    if one.is_empty() || one.iter().any(|&y| y <= 0.0) {
        return (Vec::new(), None);
    }
    let mut points = Vec::new();
    for &x in &s.x {
        let at = s.samples_at(x);
        let ratios: Vec<f64> = if at.len() == one.len() {
            at.iter().zip(one).map(|(a, o)| a / o).collect()
        } else {
            // Not paired (a round missing): relative to the one-thread median.
            let m = crate::stats::median(one);
            at.iter().map(|a| a / m).collect()
        };
        points.push(Point::samples(
            format!("{what}/scalability"),
            "threads",
            x,
            "x_one_thread",
            ratios,
        ));
    }
    // The best thread count, and the smallest one whose interval reaches the best's:
    // thread counts that tie with the best are not told apart by noise.
    let best = (0..s.x.len())
        .filter(|&i| s.x[i] != 1.0)
        .filter_map(|i| s.estimate(i))
        .filter(|e| e.value.is_finite())
        .max_by(|a, b| a.value.total_cmp(&b.value));
    let best = best.and_then(|b| {
        (0..s.x.len())
            .filter(|&i| s.x[i] != 1.0)
            .filter(|&i| s.estimate(i).is_some_and(|e| e.hi >= b.lo))
            .map(|i| s.x[i])
            .reduce(f64::min)
    });
    let found = best.and_then(|x| {
        analysis::compare(
            result,
            &format!("{what}: the fewest threads that reach the best rate, vs one thread"),
            "units_per_s",
            (&format!("{x} threads"), &rate, x),
            ("1 thread", &rate, 1.0),
            None,
        )
    });
    (points, found)
}

/// Opening the file for every unit vs opening it once, at the largest thread count
/// both measured (paired: both kinds ran in one group).
fn open_cost(result: &ProbeResult) -> Option<Finding> {
    let (once, each) = (
        result.series("io-open-once/rate")?,
        result.series("io-open-each/rate")?,
    );
    let x = once
        .x
        .iter()
        .copied()
        .filter(|x| each.index_of(*x).is_some())
        .reduce(f64::max)?;
    analysis::compare(
        result,
        &format!("io with {x} threads, units per second"),
        "units_per_s",
        ("file opened once", "io-open-once/rate", x),
        ("file opened for every unit", "io-open-each/rate", x),
        None,
    )
}

enum State {
    Compute(Box<[i64; INPUTS]>),
    Ws(Vec<u64>),
    Io(Option<Fd>, Vec<u8>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_systems_are_named_and_memory_ones_told_apart() {
        assert_eq!(filesystem_name(0x0102_1994), "tmpfs");
        assert_eq!(filesystem_name(0xEF53), "ext2/3/4");
        assert_eq!(filesystem_name(0x1234), "0x1234");
        assert!(in_memory("tmpfs") && in_memory("ramfs") && !in_memory("xfs"));
        let here = filesystem_of(c"/");
        assert!(here.as_ref().is_some_and(|f| !f.is_empty()), "{here:?}");
    }

    #[test]
    fn scalability_is_paired_by_round_and_compared_with_one_thread() {
        use crate::model::{Outcome, Status};
        let mut r = ProbeResult::new("workload", "t", Status::Completed);
        // Drift hits both thread counts alike in each round; 2 threads do 1.9× the work.
        let drift: Vec<f64> = (0..12).map(|i| 1.0 + 0.05 * (i % 4) as f64).collect();
        for (x, f) in [(1.0, 1.0), (2.0, 1.9)] {
            let v = drift.iter().map(|d| 100.0 * f * d).collect();
            r.push_point(Point::samples(
                "compute/rate",
                "threads",
                x,
                "units_per_s",
                v,
            ));
        }
        let (points, found) = scalability(&r, "compute");
        assert_eq!(points.len(), 2);
        assert!(points[0].samples.iter().all(|&s| s == 1.0));
        assert!(points[1].samples.iter().all(|&s| (s - 1.9).abs() < 1e-9));
        let Some(Finding::Comparison {
            a,
            b,
            ratio,
            outcome,
            ..
        }) = found
        else {
            panic!("no comparison");
        };
        assert_eq!((a.as_str(), b.as_str()), ("2 threads", "1 thread"));
        assert!((ratio.value - 1.9).abs() < 1e-6, "{ratio:?}");
        assert_eq!(outcome, Outcome::Different);
    }

    #[test]
    fn threads_double_up_to_the_maximum() {
        assert_eq!(doubling(1), vec![1]);
        assert_eq!(doubling(4), vec![1, 2, 4]);
        assert_eq!(doubling(6), vec![1, 2, 4, 6]);
        assert_eq!(doubling(4096).len(), 13);
    }

    #[test]
    fn tmpfiles_leave_nothing_behind() {
        let dir = tempfile_dir();
        let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
        match open_tmpfile(&c) {
            Ok(fd) => {
                let fd = Fd(fd);
                write_unit(fd.0, &[1u8; IO_UNIT_BYTES]).unwrap();
                drop(fd);
                assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
            }
            // Some file systems have no O_TMPFILE: the probe then skips IO.
            Err(e) => assert!(e.to_string().contains("O_TMPFILE"), "{e}"),
        }
        std::fs::remove_dir(&dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("corescope-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_counter_check_answers_either_way() {
        use crate::counters::Availability;
        let status = counter_status();
        if let Availability::Skipped(e) = &status.hardware {
            assert!(e.to_string().contains("perf_event_open"), "{e}");
        }
        // The plan's parameter is the status as data, and reads back.
        let v = serde_json::to_value(&status).unwrap();
        assert!(
            v["hardware"] == "counted" || v["hardware"]["skipped"]["kind"].is_string(),
            "{v}"
        );
        assert_eq!(
            serde_json::from_value::<crate::counters::CounterStatus>(v).unwrap(),
            status
        );
    }
}
