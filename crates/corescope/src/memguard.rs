//! The memory guard: probes ask it before allocating large blocks, so that a run on a
//! 2048-thread machine with 256 MiB per thread never gets the box OOM-killed.
//!
//! What is available is the smaller of `MemAvailable` (/proc/meminfo) and, for every
//! cgroup from this process's own up to the root, its limit minus its usage (v2
//! `memory.max` − `memory.current`, v1 `memory.limit_in_bytes` −
//! `memory.usage_in_bytes`); `topology::host` reads them. A probe may use at most
//! [`USABLE_FRACTION`] of it.

use crate::model::Warning;
use crate::topology::host;

/// Share of the available memory one probe may allocate: the rest is headroom for
/// the OS, page tables and whatever else runs.
pub const USABLE_FRACTION: f64 = 0.5;

/// Memory this process may still allocate, and where that figure came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// `MemAvailable`, `cgroup v2 memory.max`, ...
    pub source: String,
}

/// Why a request cannot be met.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemError {
    /// Even the smallest acceptable size does not fit.
    #[error(
        "{what}: needs at least {need} ({threads} threads × {per}), but only {usable} may be used \
         ({frac:.0} % of {avail} available, {origin})",
        need = human(*min_total),
        per = human(*min_per_thread),
        usable = human(*usable),
        avail = human(*available),
        frac = USABLE_FRACTION * 100.0
    )]
    TooLarge {
        /// What asked.
        what: String,
        /// Threads.
        threads: usize,
        /// Smallest acceptable size per thread.
        min_per_thread: u64,
        /// `threads × min_per_thread`.
        min_total: u64,
        /// What may be used.
        usable: u64,
        /// What is available.
        available: u64,
        /// Where `available` came from.
        origin: String,
    },
}

/// The size granted per thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Bytes per thread (a multiple of `granule`).
    pub per_thread: u64,
    /// Set when the request was shrunk: a warning for the result.
    pub warning: Option<Warning>,
}

/// `1.5 GiB`, `256 MiB`, `4 KiB`.
pub fn human(bytes: u64) -> String {
    crate::units::fmt_value("bytes", bytes as f64)
}

/// Fit `threads × per_thread` bytes into `available` (pure; see [`available`]).
///
/// Shrinks `per_thread` (to a multiple of `granule`) when it does not fit, with a
/// warning; refuses when even `min_per_thread` does not fit. When `forced` the
/// request is not shrunk: it fits or it is refused.
pub fn fit(
    what: &str,
    per_thread: u64,
    min_per_thread: u64,
    threads: usize,
    granule: u64,
    forced: bool,
    available: &Available,
) -> Result<Fit, MemError> {
    let threads_u = threads.max(1) as u64;
    let usable = (available.bytes as f64 * USABLE_FRACTION) as u64;
    let granule = granule.max(1);
    let too_large = |min: u64| MemError::TooLarge {
        what: what.into(),
        threads: threads.max(1),
        min_per_thread: min,
        min_total: min.saturating_mul(threads_u),
        usable,
        available: available.bytes,
        origin: available.source.clone(),
    };
    if per_thread.saturating_mul(threads_u) <= usable {
        return Ok(Fit {
            per_thread,
            warning: None,
        });
    }
    if forced {
        return Err(too_large(per_thread));
    }
    let shrunk = (usable / threads_u) / granule * granule;
    if shrunk < min_per_thread.max(granule) {
        return Err(too_large(min_per_thread.max(granule)));
    }
    Ok(Fit {
        per_thread: shrunk,
        warning: Some(Warning::MemoryShrunk {
            what: what.into(),
            asked_bytes_per_thread: per_thread,
            threads,
            usable_bytes: usable,
            usable_percent: USABLE_FRACTION * 100.0,
            available_bytes: available.bytes,
            available_source: available.source.clone(),
            used_bytes_per_thread: shrunk,
        }),
    })
}

/// What this process may allocate now; `None` if nothing can be read (then the
/// caller should be conservative). The host facts come from
/// [`crate::topology::host`]: `MemAvailable`, and what the cgroups on the path
/// from this process's cgroup to the root still allow.
pub fn available() -> Option<Available> {
    let mem = host::mem_available_bytes().map(|bytes| Available {
        bytes,
        source: "MemAvailable".into(),
    });
    let cgroup = host::cgroup_memory_left().map(|(bytes, source)| Available { bytes, source });
    match (mem, cgroup) {
        (Some(m), Some(c)) => Some(if c.bytes < m.bytes { c } else { m }),
        (m, c) => m.or(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn avail(bytes: u64) -> Available {
        Available {
            bytes,
            source: "test".into(),
        }
    }

    #[test]
    fn a_request_that_fits_is_kept() {
        let f = fit("a buffer", 64 * MIB, MIB, 4, MIB, false, &avail(1024 * MIB)).unwrap();
        assert_eq!(f.per_thread, 64 * MIB);
        assert!(f.warning.is_none());
    }

    #[test]
    fn a_request_that_does_not_fit_is_shrunk_with_a_warning() {
        // 2048 threads × 256 MiB on a 24 GiB machine.
        let f = fit(
            "a buffer",
            256 * MIB,
            MIB,
            2048,
            MIB,
            false,
            &avail(24 * 1024 * MIB),
        )
        .unwrap();
        assert!(f.per_thread * 2048 <= 12 * 1024 * MIB);
        assert_eq!(f.per_thread % MIB, 0);
        assert!(f.per_thread >= MIB);
        let w = f.warning.unwrap();
        assert!(
            matches!(
                w,
                Warning::MemoryShrunk { threads: 2048, used_bytes_per_thread, .. }
                    if used_bytes_per_thread == f.per_thread
            ),
            "{w:?}"
        );
    }

    #[test]
    fn an_impossible_request_is_refused_clearly() {
        let e = fit(
            "a buffer",
            256 * MIB,
            64 * MIB,
            64,
            MIB,
            false,
            &avail(1024 * MIB),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("needs at least 4.000 GiB"), "{msg}");
        assert!(msg.contains("64 threads"), "{msg}");
        assert!(msg.contains("512.0 MiB may be used"), "{msg}");
        // A forced size is never shrunk.
        let e = fit("a buffer", 256 * MIB, MIB, 8, MIB, true, &avail(1024 * MIB)).unwrap_err();
        assert!(e.to_string().contains("needs at least 2.000 GiB"), "{e}");
    }

    #[test]
    fn this_machine_reports_something_plausible() {
        let a = available().expect("/proc/meminfo is readable on Linux");
        assert!(a.bytes > 0 && !a.source.is_empty());
    }
}
