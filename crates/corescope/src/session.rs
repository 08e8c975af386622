//! One session for every command that measures (`run`, `tune channel`, `mpi`):
//! the run-file header (tool, host, topology, clock, environment) is written here
//! and nowhere else; the session holds the output lock for its file and saves it
//! atomically after every probe, so a run file exists from the first second and
//! an interrupted run keeps what it measured.

use crate::clock::{self, Clock};
use crate::model::{ProbeResult, Profile, RunFile, ToolInfo, SCHEMA_VERSION};
use crate::store::{self, OutputLock, StoreError};
use crate::topology::{self, Topology};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A calibrated clock for `profile`: the timer's cost and step over 20 / 100 /
/// 250 ms, then, when `core_clock` is asked for, the core frequency under load
/// (recorded in the clock, or why it could not be measured).
pub fn calibrated_clock(profile: Profile, topo: &Topology, core_clock: bool) -> Clock {
    let calibration_ms = profile.pick(20, 100, 250);
    let mut clock = Clock::calibrate(Duration::from_millis(calibration_ms));
    if core_clock {
        let plan = clock::CoreClockPlan::for_profile(profile);
        match clock::measure_core_clock(&clock, &topo.allowed_os_indices(), plan) {
            Ok(c) => c.record(&mut clock.info),
            Err(e) => clock.info.core_hz_skipped = Some(e.to_string()),
        }
    }
    clock
}

/// The header of a run file made now on this host: everything but the probes.
pub fn header(topo: Topology, clock: &Clock, profile: Profile) -> RunFile {
    RunFile {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::current(),
        host: topology::host::host_info(),
        topology: topo,
        clock: clock.info.clone(),
        env: topology::host::env_info(),
        // What blurs the figures, read as `corescope doctor` reads it (no sampling:
        // `env` has just sampled steal, and the drift checks time the CPU pair).
        doctor: Some(crate::doctor::read(
            &topology::knobs::HostFiles::live(),
            &Default::default(),
        )),
        profile,
        started_utc: utc_rfc3339(SystemTime::now()),
        // Lossily: a non-UTF-8 byte in an argument (a file name) is recorded
        // as U+FFFD, never a panic.
        command: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        probes: Vec::new(),
        statistics: Some(Default::default()),
        crosscheck: None,
        drift: Vec::new(),
    }
}

/// A run file being written: its header, the probes so far, and the lock that keeps
/// a second run from writing the same file.
#[derive(Debug)]
pub struct Session {
    /// What is measured so far.
    pub run: RunFile,
    /// The file and its lock; `None` for a session that keeps its results in memory.
    file: Option<(PathBuf, OutputLock)>,
}

impl Session {
    /// Take the lock for `out` and save the header there at once.
    pub fn open(out: &Path, run: RunFile) -> Result<Self, StoreError> {
        Self::with_lock(out, OutputLock::acquire(out)?, run)
    }

    /// As [`Session::open`], with the lock for `out` taken already (a command takes
    /// it before its slow start, so a second run on the same file fails at once).
    pub fn with_lock(out: &Path, lock: OutputLock, run: RunFile) -> Result<Self, StoreError> {
        let s = Self {
            run,
            file: Some((out.to_path_buf(), lock)),
        };
        s.save()?;
        Ok(s)
    }

    /// A session whose results stay in memory (`tune channel` without `--run-file`).
    pub fn in_memory(run: RunFile) -> Self {
        Self { run, file: None }
    }

    /// Where the run file goes, if anywhere.
    pub fn out(&self) -> Option<&Path> {
        self.file.as_ref().map(|(p, _)| p.as_path())
    }

    /// Save the run file as it stands (atomically, see [`store::save`]); nothing for
    /// a session in memory.
    pub fn save(&self) -> Result<(), StoreError> {
        match &self.file {
            Some((out, _)) => store::save(&self.run, out),
            None => Ok(()),
        }
    }

    /// Add a probe's result and save.
    pub fn push(&mut self, probe: ProbeResult) -> Result<(), StoreError> {
        self.run.probes.push(probe);
        self.save()
    }

    /// Put a probe's result at `slot` (replacing what an earlier pass saved there),
    /// or after the others when it has none yet, and save; its slot.
    pub fn put(&mut self, slot: Option<usize>, probe: ProbeResult) -> Result<usize, StoreError> {
        let slot = match slot.filter(|&i| i < self.run.probes.len()) {
            Some(i) => {
                self.run.probes[i] = probe;
                i
            }
            None => {
                self.run.probes.push(probe);
                self.run.probes.len() - 1
            }
        };
        self.save()?;
        Ok(slot)
    }
}

/// Host name made safe for a file name.
pub fn hostname_for_file() -> String {
    let h = topology::host::host_info().hostname;
    let s: String = h
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "host".into()
    } else {
        s
    }
}

/// `corescope-<host>-<UTC YYYYMMDDTHHMMSSZ>.json`.
pub fn default_out_name(host: &str) -> String {
    let stamp = utc_rfc3339(SystemTime::now()).replace(['-', ':'], "");
    format!("corescope-{host}-{stamp}.json")
}

/// RFC 3339 UTC time with second precision (`2026-11-22T19:28:00Z`).
pub fn utc_rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formatting() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_375_680); // 2026-11-22T19:28:00Z
        assert_eq!(utc_rfc3339(t), "2026-11-22T19:28:00Z");
        assert_eq!(utc_rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert!(default_out_name("h").starts_with("corescope-h-"));
    }

    #[test]
    fn a_session_saves_its_header_at_once_and_locks_its_file() {
        let dir = std::env::temp_dir().join(format!("corescope-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("run.json");
        let topo = topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        let clock = Clock::from_info(Default::default());
        let mut s = Session::open(&out, header(topo, &clock, Profile::Quick)).unwrap();
        let saved = store::load(&out).unwrap();
        assert_eq!(saved.schema_version, SCHEMA_VERSION);
        assert!(saved.probes.is_empty());
        assert_eq!(
            saved.doctor.map(|d| d.checks.len()),
            Some(12),
            "the header records doctor's checks"
        );
        assert!(
            OutputLock::acquire(&out).is_err(),
            "a second writer must be refused"
        );
        s.push(ProbeResult::new(
            "x",
            "test",
            crate::model::Status::Completed,
        ))
        .unwrap();
        assert_eq!(store::load(&out).unwrap().probes.len(), 1);
        drop(s);
        assert!(
            OutputLock::acquire(&out).is_ok(),
            "the lock goes with the session"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
