//! Load and save run files: atomic writes, version checks, clear errors.

use crate::model::{RunFile, SCHEMA_VERSION};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a run file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
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
}

/// Read and validate a run file.
pub fn load(path: &Path) -> Result<RunFile, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::Io {
        path: path.into(),
        source,
    })?;
    parse(&text, path)
}

/// Parse run-file text; `path` is only used in messages.
pub fn parse(text: &str, path: &Path) -> Result<RunFile, StoreError> {
    let invalid = |detail: String| StoreError::Invalid {
        path: path.into(),
        detail,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("JSON error: {e}")))?;
    let obj = value
        .as_object()
        .ok_or_else(|| invalid("top level is not an object".into()))?;
    match obj
        .get("tool")
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
    let version = obj
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| invalid("missing or non-integer \"schema_version\"".into()))?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(StoreError::TooNew {
            path: path.into(),
            found: version,
        });
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
}

/// Write a run file atomically: a temporary file in the same directory, flushed
/// to disk, then renamed over `path`. Readers never see a half-written file.
pub fn save(run: &RunFile, path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.into(),
        source,
    };
    let bytes = serde_json::to_vec_pretty(run).map_err(|e| io(std::io::Error::other(e)))?;
    write_atomic(path, &bytes).map_err(io)
}

/// Write bytes to `path` atomically (temporary file + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("run");
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Check that a file can be created at `path` (its directory exists and is
/// writable) without leaving anything behind.
pub fn check_writable(path: &Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    if path.is_dir() {
        return Err(format!(
            "cannot write {}: it is a directory",
            path.display()
        ));
    }
    let probe = dir.join(format!(".corescope-write-test.{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}
