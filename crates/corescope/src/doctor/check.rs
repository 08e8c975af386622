//! Making a check (its fields, its advice), the words for a file that could not
//! be read, and the host facts several checks share: CPU lists, whether the CPUs
//! are virtual.

use crate::model::{Check, CheckId, Verdict};
use crate::topology::knobs::{HostFiles, Knob, Unread};
use crate::topology::Topology;

/// A CPU list (`0-3,8`); an empty text is an empty list.
pub(super) fn cpu_list(s: &str) -> Option<Vec<u32>> {
    if s.trim().is_empty() {
        return Some(Vec::new());
    }
    crate::placement::parse_cpu_list(s.trim())
}

pub(super) fn list(cpus: &[u32]) -> String {
    Topology::format_cpu_list(cpus)
}

pub(super) fn unread(u: &Unread) -> String {
    match u {
        Unread::Missing => "not exposed".into(),
        Unread::Denied => "not readable by this user".into(),
        Unread::Failed(e) => format!("unreadable ({e})"),
    }
}

/// Whether `/proc/cpuinfo` flags the CPUs as virtual (the `hypervisor` flag x86
/// guests see; CPUID leaf 1, ECX bit 31).
pub(super) fn is_vm(files: &HostFiles) -> bool {
    files.read(Knob::Cpuinfo).is_ok_and(|c| {
        c.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
    })
}

/// A check with no affected probes yet: [`super::read_in`] names them from the
/// registry (`affects.rs`).
pub(super) fn check(id: CheckId, source: String, state: String, verdict: Verdict) -> Check {
    Check {
        id,
        source,
        state,
        verdict,
        affects: Vec::new(),
        advice: String::new(),
        tune: Vec::new(),
    }
}

pub(super) fn with_advice(mut c: Check, advice: impl Into<String>) -> Check {
    c.advice = advice.into();
    c
}
