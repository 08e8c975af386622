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
//! Hardware counters (instructions, cycles → MIPS, CPI) need `perf_event_open`; the
//! probe checks whether the machine gives them and says so. It does not count them
//! yet (see the roadmap in docs/memory.md).

use super::compute::{int_kernel, INPUTS};
use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::now_ns;
use crate::model::{Measurement, Point, ProbeResult};
use crate::placement::{self, Strategy};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::hint::black_box;
use std::os::unix::ffi::OsStrExt;

/// Passes of the compute kernel per compute unit (about 10 µs on a 3 GHz core).
pub const COMPUTE_PASSES: u64 = 32;
/// Per-thread block of the working-set work.
pub const WS_BLOCK_BYTES: usize = 4 << 20;
/// Bytes written per IO unit (one page).
pub const IO_UNIT_BYTES: usize = 4096;
/// Largest thread count as a multiple of the CPU count (seed 001 doubles threads past
/// the strand count).
pub const MAX_THREAD_FACTOR: usize = 2;

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

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CaseParams {
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

/// Whether this process may count hardware instructions: `Ok` or why not
/// ("no PMU (perf_event_open(cycles): …)").
pub fn counters_available() -> Result<(), String> {
    match crate::counters::Counters::open().status().hardware.clone() {
        crate::counters::Availability::Counted => Ok(()),
        crate::counters::Availability::Skipped(why) => Err(why),
    }
}

/// An unnamed file in `dir` (O_TMPFILE): nothing to clean up, ever.
fn open_tmpfile(dir: &CString) -> Result<libc::c_int, String> {
    // SAFETY: dir is a NUL-terminated path; O_TMPFILE needs a mode.
    let fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY, 0o600) };
    if fd < 0 {
        Err(format!(
            "O_TMPFILE in {}: {}",
            dir.to_string_lossy(),
            std::io::Error::last_os_error()
        ))
    } else {
        Ok(fd)
    }
}

/// Write one unit and fsync.
fn write_unit(fd: libc::c_int, buf: &[u8]) -> Result<(), String> {
    // SAFETY: buf is valid for buf.len() bytes; fd is open for writing.
    let n = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        return Err(format!("write: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fd is open.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(format!("fsync: {}", std::io::Error::last_os_error()));
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

fn tmp_dir() -> CString {
    CString::new(std::env::temp_dir().as_os_str().as_bytes())
        .unwrap_or_else(|_| CString::from(c"/tmp"))
}

impl Probe for Workload {
    fn id(&self) -> &'static str {
        "workload"
    }

    fn title(&self) -> &'static str {
        "compute / working-set / IO units of work in fixed time as threads double"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let counts = match &ctx.overrides.threads {
            Some(t) => t.clone(),
            None => doubling(ctx.cpus() * MAX_THREAD_FACTOR),
        };
        let duration_ns: u64 = ctx.profile.pick(100_000_000, 500_000_000, 5_000_000_000);
        let dir = tmp_dir();
        let io_ok = open_tmpfile(&dir).map(|fd| drop(Fd(fd)));
        let mut works = vec![Work::Compute, Work::WorkingSet];
        if io_ok.is_ok() {
            works.extend([Work::IoOpenOnce, Work::IoOpenEach]);
        }
        let mut cases = Vec::new();
        for &work in &works {
            for &threads in &counts {
                cases.push(Case::new(
                    format!("{} ×{threads}", work.name()),
                    &CaseParams {
                        work,
                        threads,
                        duration_ns,
                    },
                ));
            }
        }
        let mut plan = Plan {
            cases,
            ..Plan::default()
        }
        .param("thread_counts", &counts)
        .param("duration_ns", duration_ns)
        .param("compute_unit_ops", COMPUTE_PASSES * INPUTS as u64 * 8)
        .param("working_set_bytes_per_thread", WS_BLOCK_BYTES)
        .param("io_unit_bytes", IO_UNIT_BYTES)
        .param("io_dir", dir.to_string_lossy())
        .param(
            "counters",
            match counters_available() {
                Ok(()) => "available (not counted yet)".to_string(),
                Err(e) => format!("not available here: {e}"),
            },
        );
        if let Err(e) = io_ok {
            plan = plan.param("io_skipped", format!("skipped: {e}"));
        }
        Ok(plan)
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.decode()?;
        let cpus = placement::assign(&ctx.plan.topo, &Strategy::Scatter, c.threads)
            .map_err(|e| ProbeError::Failed(e.to_string()))?;
        let dur = c.duration_ns;
        let dir = tmp_dir();
        let out = ctx.team(
            &cpus,
            1,
            |t| -> Result<State, String> {
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
            |_t, state| -> Result<u64, String> {
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
                            black_box(super::memory::read_sum(black_box(block)));
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
                Err(e) => return Err(ProbeError::Failed(format!("{}: {e}", c.work.name()))),
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

    fn finish(&self, result: &mut ProbeResult, _ctx: &PlanCtx) {
        // Scalability: rate relative to one thread, as the seed's tables.
        let mut extra = Vec::new();
        for s in result.series.iter().filter(|s| s.name.ends_with("/rate")) {
            let Some(i1) = s.x.iter().position(|&x| x == 1.0) else {
                continue;
            };
            let one = s.y[i1];
            if one <= 0.0 {
                continue;
            }
            let what = s.name.trim_end_matches("/rate").to_string();
            let ys: Vec<f64> = s.y.iter().map(|y| y / one).collect();
            let (best_i, best) = ys
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, &v)| (i, v))
                .unwrap_or((0, 1.0));
            extra.push((
                format!("{what}/scalability"),
                s.x.clone(),
                ys,
                format!(
                    "{what}: best scalability {best:.2}× one thread, at {} threads",
                    s.x[best_i]
                ),
            ));
        }
        for (name, x, y, finding) in extra {
            for (&x, &y) in x.iter().zip(&y) {
                result.push_point(Point::new(&name, "threads", x, "x_one_thread", y));
            }
            result.findings.push(finding);
        }
        if let (Some(once), Some(each)) = (
            result.series("io-open-once/rate"),
            result.series("io-open-each/rate"),
        ) {
            if let (Some(&a), Some(&b)) = (once.y.last(), each.y.last()) {
                result.findings.push(format!(
                    "opening the file for every unit: {:.2}× the rate of opening it once, at {} threads",
                    b / a,
                    once.x.last().copied().unwrap_or(0.0)
                ));
            }
        }
        for key in ["counters", "io_skipped"] {
            if let Some(v) = result.params.get(key).and_then(|v| v.as_str()) {
                let line = format!("{key}: {v}");
                if key == "counters" && v.starts_with("not") {
                    result.findings.push(format!(
                        "counters: not available here, so no MIPS / CPI / efficiency ({})",
                        v.trim_start_matches("not available here: ")
                    ));
                } else if key == "io_skipped" {
                    result.warnings.push(format!("io: {v}"));
                } else {
                    result.findings.push(line);
                }
            }
        }
    }
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
            Err(e) => assert!(e.contains("O_TMPFILE"), "{e}"),
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
        match counters_available() {
            Ok(()) => {}
            Err(e) => assert!(e.contains("perf_event_open"), "{e}"),
        }
    }
}
