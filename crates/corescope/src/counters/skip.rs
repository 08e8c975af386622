//! Why a group of counters is not counted, as data: the event `perf_event_open`
//! refused and the OS error it gave ([`OsError`], the `std::io::Error` kept as the
//! source), the `perf_event_paranoid` level where the kernel forbids it, or too few
//! file descriptors for a team. Worded once, by `Display` ("no PMU
//! (perf_event_open(cycles): …)"); older run files hold that sentence, read back as
//! [`SkipReason::Old`].

use super::DescriptorShortage;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::{fmt, io, sync::Arc};

/// The event (or group leader) `perf_event_open` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterEvent {
    /// The software group (task-clock, switches, migrations, faults).
    Software,
    /// The hardware group's leader.
    Group,
    /// Core cycles.
    Cycles,
    /// Retired instructions.
    Instructions,
}

impl fmt::Display for CounterEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CounterEvent::Software => "software",
            CounterEvent::Group => "group",
            CounterEvent::Cycles => "cycles",
            CounterEvent::Instructions => "instructions",
        })
    }
}

/// An OS error kept whole (shared, so the reason can be cloned); in the run file its
/// number (`errno`), or its text where it has none.
#[derive(Debug, Clone)]
pub struct OsError(Arc<io::Error>);

impl OsError {
    /// The error as the OS gave it.
    pub fn io(&self) -> &io::Error {
        &self.0
    }

    /// Its `errno`, if it is one.
    pub fn errno(&self) -> Option<i32> {
        self.0.raw_os_error()
    }
}

impl From<io::Error> for OsError {
    fn from(e: io::Error) -> Self {
        Self(Arc::new(e))
    }
}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for OsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

/// Equal as the run file keeps them: the same `errno`, or, without one, the same text.
impl PartialEq for OsError {
    fn eq(&self, other: &Self) -> bool {
        match (self.errno(), other.errno()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.0.to_string() == other.0.to_string(),
            _ => false,
        }
    }
}

impl Eq for OsError {}

/// [`OsError`] in the run file.
#[derive(Serialize, Deserialize)]
struct OsErrorRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    errno: Option<i32>,
    /// The error's own text, for an error without a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Serialize for OsError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let errno = self.errno();
        OsErrorRepr {
            errno,
            message: errno.is_none().then(|| self.0.to_string()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for OsError {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = OsErrorRepr::deserialize(d)?;
        Ok(match r.errno {
            Some(n) => io::Error::from_raw_os_error(n),
            None => io::Error::other(r.message.unwrap_or_default()),
        }
        .into())
    }
}

/// Why a group of counters is not counted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkipReason {
    /// The kernel knows no such event here (`ENOENT`, `ENODEV`, `EOPNOTSUPP`): no
    /// PMU, as in most VMs.
    #[error("no PMU (perf_event_open({event}): {error})")]
    NoPmu {
        /// The event refused.
        event: CounterEvent,
        /// What the OS said.
        #[source]
        error: OsError,
    },
    /// The kernel forbids it (`EACCES`, `EPERM`) at this `perf_event_paranoid`.
    #[error(
        "not permitted (perf_event_open({event}): {error}; perf_event_paranoid = {})",
        paranoid_words(*paranoid)
    )]
    NotPermitted {
        /// The event refused.
        event: CounterEvent,
        /// What the OS said.
        #[source]
        error: OsError,
        /// `kernel.perf_event_paranoid`, `None` where unreadable.
        paranoid: Option<i64>,
    },
    /// Any other refusal.
    #[error("perf_event_open({event}): {error}")]
    Refused {
        /// The event refused.
        event: CounterEvent,
        /// What the OS said.
        #[source]
        error: OsError,
    },
    /// A team of too many threads for the file descriptors left.
    #[error(transparent)]
    Descriptors(#[from] DescriptorShortage),
    /// The sentence of an older run file.
    #[serde(untagged)]
    #[error("{0}")]
    Old(String),
    /// A reason a later build wrote, of a kind this one does not know: kept as
    /// read, so the run file still loads.
    #[serde(untagged)]
    #[error("{0}")]
    Later(serde_json::Value),
}

fn paranoid_words(level: Option<i64>) -> String {
    level.map_or_else(|| "unknown".into(), |l| l.to_string())
}

impl SkipReason {
    /// Why `perf_event_open(event)` failed with `e`, sorted by its `errno`
    /// (the paranoid level read now where the kernel forbids it).
    pub fn refused(event: CounterEvent, e: io::Error) -> Self {
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => SkipReason::NoPmu {
                event,
                error: e.into(),
            },
            Some(libc::EACCES) | Some(libc::EPERM) => SkipReason::NotPermitted {
                event,
                error: e.into(),
                paranoid: crate::topology::host::perf_event_paranoid().and_then(|p| p.parse().ok()),
            },
            _ => SkipReason::Refused {
                event,
                error: e.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enoent() -> io::Error {
        io::Error::from_raw_os_error(libc::ENOENT)
    }

    #[test]
    fn reasons_read_as_the_report_words_them() {
        let no_pmu = SkipReason::refused(CounterEvent::Cycles, enoent());
        assert_eq!(
            no_pmu.to_string(),
            "no PMU (perf_event_open(cycles): No such file or directory (os error 2))"
        );
        let denied = SkipReason::NotPermitted {
            event: CounterEvent::Software,
            error: io::Error::from_raw_os_error(libc::EACCES).into(),
            paranoid: Some(3),
        };
        assert_eq!(
            denied.to_string(),
            "not permitted (perf_event_open(software): Permission denied (os error 13); \
             perf_event_paranoid = 3)"
        );
        let other = SkipReason::refused(CounterEvent::Group, io::Error::other("odd"));
        assert_eq!(other.to_string(), "perf_event_open(group): odd");
        assert!(std::error::Error::source(&no_pmu).is_some());
    }

    #[test]
    fn reasons_round_trip_and_old_sentences_still_read() {
        for r in [
            SkipReason::refused(CounterEvent::Cycles, enoent()),
            SkipReason::refused(CounterEvent::Instructions, io::Error::other("odd")),
            SkipReason::refused(
                CounterEvent::Group,
                io::Error::new(io::ErrorKind::Unsupported, "too large"),
            ),
            SkipReason::Descriptors(DescriptorShortage {
                threads: 64,
                left: 100,
                limit: 1024,
            }),
            SkipReason::Old("no PMU (perf_event_open(cycles): ENOENT)".into()),
        ] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(
                serde_json::from_str::<SkipReason>(&json).unwrap(),
                r,
                "{json}"
            );
        }
        // A kind from a later build reads, shown as its JSON, and is written back as read.
        let later = r#"{"kind":"no_budget","event":"cycles"}"#;
        let r: SkipReason = serde_json::from_str(later).unwrap();
        assert!(matches!(r, SkipReason::Later(_)), "{r:?}");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::from_str::<serde_json::Value>(later).unwrap()
        );
        let json = serde_json::to_string(&SkipReason::refused(CounterEvent::Cycles, enoent()));
        assert_eq!(
            json.unwrap(),
            r#"{"kind":"no_pmu","event":"cycles","error":{"errno":2}}"#
        );
        let old: SkipReason = serde_json::from_str(r#""not permitted (…)""#).unwrap();
        assert_eq!(old, SkipReason::Old("not permitted (…)".into()));
    }
}
