//! `doctor --tune` and `doctor --reset`: write the values the checks propose, after
//! the command asked, keeping the old ones in a state file; restore them from it.
//!
//! The state file is created exclusively (`O_CREAT | O_EXCL`, which never follows a
//! symlink) with mode 0600, and holds every old value before the first write, so a
//! crash in between still leaves what `--reset` needs. A second `--tune` while one
//! is saved refuses: the values saved first are the machine's own.

use crate::model::TuneWrite;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The state file's name under `$XDG_STATE_HOME/corescope/` (or `~/.local/state/...`).
const STATE_NAME: &str = "doctor-saved.json";
/// Where the state goes when neither `XDG_STATE_HOME` nor `HOME` is set.
const STATE_FALLBACK: &str = "/var/tmp/corescope-doctor.json";

/// What can go wrong tuning or resetting.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A state file exists: an earlier `--tune` was not reset.
    #[error(
        "{}: an earlier `corescope doctor --tune` saved the values it changed; run \
         `corescope doctor --reset` first (nothing written)",
        .0.display()
    )]
    AlreadySaved(PathBuf),
    /// No state file: nothing to restore.
    #[error(
        "{}: nothing saved to restore (no `corescope doctor --tune` ran, or a reset \
         already did)",
        .0.display()
    )]
    NothingSaved(PathBuf),
    /// The state file is not one `--tune` wrote.
    #[error("{}: not a state file of `corescope doctor --tune`: {source}", path.display())]
    BadState {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// Creating, reading, writing or removing the state file failed.
    #[error("{}: {source}", path.display())]
    State {
        /// The file (or its directory).
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// The state file: what `--tune` changed, with the values to write back.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Saved {
    /// Always `corescope doctor`; recognises the file.
    pub tool: String,
    /// Every write made, `old` being the value `--reset` restores.
    pub writes: Vec<TuneWrite>,
}

/// What a tune or reset did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The writes made (for a reset: the old values written back).
    pub done: Vec<TuneWrite>,
    /// The writes the kernel refused, with its error.
    pub failed: Vec<(TuneWrite, String)>,
    /// Where the old values are kept (`None` once a reset removed the file).
    pub state: Option<PathBuf>,
}

/// The state file for this user: `$XDG_STATE_HOME/corescope/doctor-saved.json`,
/// else `$HOME/.local/state/corescope/doctor-saved.json`, else
/// `/var/tmp/corescope-doctor.json`.
pub fn state_path() -> PathBuf {
    state_path_from(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))
}

/// [`state_path`] from the two variables (pure, for tests). Relative values are
/// ignored, as the XDG base directory specification asks.
pub fn state_path_from(xdg_state_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(x) = absolute(xdg_state_home) {
        x.join("corescope").join(STATE_NAME)
    } else if let Some(h) = absolute(home) {
        h.join(".local/state/corescope").join(STATE_NAME)
    } else {
        PathBuf::from(STATE_FALLBACK)
    }
}

/// Whether this process may write the host's tunables (it runs as root).
pub fn is_root() -> bool {
    // SAFETY: geteuid takes no argument, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() == 0 }
}

fn state_err(path: &Path) -> impl FnOnce(io::Error) -> TuneError + '_ {
    move |source| TuneError::State {
        path: path.to_path_buf(),
        source,
    }
}

/// Write `writes` (the checks' proposals, which the user agreed to), keeping the old
/// values in `state` first. Refuses when `state` exists. Writes the kernel refuses
/// are reported, not fatal; the state file then keeps only the writes made (and is
/// removed when none was).
pub fn tune(writes: &[TuneWrite], state: &Path) -> Result<Outcome, TuneError> {
    if let Some(dir) = state.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(state_err(dir))?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(state)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => TuneError::AlreadySaved(state.to_path_buf()),
            _ => state_err(state)(e),
        })?;
    save(&mut file, state, writes)?;
    let mut out = Outcome::default();
    for w in writes {
        match write_value(Path::new(&w.path), &w.new) {
            Ok(()) => out.done.push(w.clone()),
            Err(e) => out.failed.push((w.clone(), e.to_string())),
        }
    }
    if out.done.is_empty() {
        drop(file);
        std::fs::remove_file(state).map_err(state_err(state))?;
    } else {
        if !out.failed.is_empty() {
            save(&mut file, state, &out.done)?;
        }
        out.state = Some(state.to_path_buf());
    }
    Ok(out)
}

/// Write back the old values kept in `state`, then remove it; when some write is
/// refused, the file keeps those (a later `--reset` tries them again).
pub fn reset(state: &Path) -> Result<Outcome, TuneError> {
    let saved = load(state)?;
    let mut out = Outcome::default();
    for w in &saved.writes {
        match write_value(Path::new(&w.path), &w.old) {
            Ok(()) => out.done.push(w.clone()),
            Err(e) => out.failed.push((w.clone(), e.to_string())),
        }
    }
    if out.failed.is_empty() {
        std::fs::remove_file(state).map_err(state_err(state))?;
    } else {
        let mut file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(state)
            .map_err(state_err(state))?;
        let left: Vec<TuneWrite> = out.failed.iter().map(|(w, _)| w.clone()).collect();
        save(&mut file, state, &left)?;
        out.state = Some(state.to_path_buf());
    }
    Ok(out)
}

/// The writes kept in `state` (what `--reset` would restore).
pub fn load(state: &Path) -> Result<Saved, TuneError> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(state)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => TuneError::NothingSaved(state.to_path_buf()),
            _ => state_err(state)(e),
        })?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(state_err(state))?;
    serde_json::from_str(&text).map_err(|source| TuneError::BadState {
        path: state.to_path_buf(),
        source,
    })
}

/// Replace the state file's content with `writes`, synced to disk.
fn save(file: &mut File, path: &Path, writes: &[TuneWrite]) -> Result<(), TuneError> {
    let saved = Saved {
        tool: "corescope doctor".into(),
        writes: writes.to_vec(),
    };
    let mut text = serde_json::to_string_pretty(&saved).map_err(|e| TuneError::State {
        path: path.to_path_buf(),
        source: io::Error::other(e),
    })?;
    text.push('\n');
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(text.as_bytes()))
        .and_then(|()| file.sync_all())
        .map_err(state_err(path))
}

/// Write one value to a /sys or /proc/sys file as `echo value > file` does (an
/// existing file only, never through a symlink).
fn write_value(path: &Path, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(format!("{value}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "corescope-doctor-tune-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_state_file_follows_xdg_then_home_then_var_tmp() {
        assert_eq!(
            state_path_from(Some("/x/state".into()), Some("/home/u".into())),
            Path::new("/x/state/corescope/doctor-saved.json")
        );
        assert_eq!(
            state_path_from(Some("relative".into()), Some("/home/u".into())),
            Path::new("/home/u/.local/state/corescope/doctor-saved.json")
        );
        assert_eq!(state_path_from(None, None), Path::new(STATE_FALLBACK));
    }

    #[test]
    fn tune_then_reset_restores_and_a_second_tune_refuses() {
        let d = tmp("roundtrip");
        let knob = d.join("numa_balancing");
        std::fs::write(&knob, "1\n").unwrap();
        let missing = d.join("gone");
        let state = d.join("state/doctor-saved.json");
        let writes = vec![
            TuneWrite {
                path: knob.display().to_string(),
                old: "1".into(),
                new: "0".into(),
            },
            TuneWrite {
                path: missing.display().to_string(),
                old: "x".into(),
                new: "y".into(),
            },
        ];
        let out = tune(&writes, &state).unwrap();
        assert_eq!(out.done.len(), 1);
        assert_eq!(
            out.failed.len(),
            1,
            "a missing file is refused, not created"
        );
        assert!(!missing.exists());
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "0\n");
        assert_eq!(load(&state).unwrap().writes, vec![writes[0].clone()]);
        assert!(matches!(
            tune(&writes, &state),
            Err(TuneError::AlreadySaved(_))
        ));
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "0\n");
        let back = reset(&state).unwrap();
        assert_eq!(back.done.len(), 1);
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "1\n");
        assert!(!state.exists());
        assert!(matches!(reset(&state), Err(TuneError::NothingSaved(_))));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_symlinked_state_file_is_refused() {
        let d = tmp("symlink");
        let target = d.join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        let state = d.join("doctor-saved.json");
        std::os::unix::fs::symlink(&target, &state).unwrap();
        assert!(tune(&[], &state).is_err());
        assert!(load(&state).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
