//! The checks on the kernel's settings: transparent huge pages,
//! `perf_event_paranoid` and NUMA balancing.

use super::check::{check, unread, with_advice};
use super::limits::{PARANOID_COUNTERS_OFF, PARANOID_TUNED};
use crate::model::{Check, CheckId, TuneWrite, Verdict};
use crate::topology::knobs::{HostFiles, Knob, Unread};

pub(super) fn thp(files: &HostFiles) -> Check {
    let source = Knob::Thp.host_path();
    let text = match files.read(Knob::Thp) {
        Ok(t) => t,
        Err(e) => return check(CheckId::Thp, source, unread(&e), Verdict::Unknown),
    };
    let Some(mode) = crate::topology::host::bracketed(&text) else {
        return check(
            CheckId::Thp,
            source,
            format!("'{text}' (no [mode])"),
            Verdict::Unknown,
        );
    };
    if mode == "always" {
        let mut c = with_advice(
            check(
                CheckId::Thp,
                source,
                "[always]: every large buffer may or may not get huge pages; khugepaged \
                 merges pages during a run"
                    .into(),
                Verdict::Blurs,
            ),
            "set madvise (`corescope doctor --tune`): the probes that want huge pages ask \
             for them",
        );
        c.tune = vec![TuneWrite {
            path: files.path(Knob::Thp).display().to_string(),
            old: mode,
            new: "madvise".into(),
        }];
        return c;
    }
    check(CheckId::Thp, source, format!("[{mode}]"), Verdict::Ok)
}

pub(super) fn perf_event_paranoid(files: &HostFiles) -> Check {
    let source = Knob::PerfEventParanoid.host_path();
    let v = match files.read(Knob::PerfEventParanoid) {
        Ok(v) => v,
        Err(e) => {
            return with_advice(
                check(
                    CheckId::PerfEventParanoid,
                    source,
                    unread(&e),
                    Verdict::Unknown,
                ),
                "no perf events in this kernel: the probes record no counters",
            )
        }
    };
    match v.parse::<i64>() {
        Ok(n) if n > PARANOID_COUNTERS_OFF => {
            let mut c = with_advice(
                check(
                    CheckId::PerfEventParanoid,
                    source,
                    format!("{n}: counters unavailable to non-root users"),
                    Verdict::Blurs,
                ),
                "allow per-thread counters (`corescope doctor --tune` writes 2), or run as root",
            );
            c.tune = vec![TuneWrite {
                path: files.path(Knob::PerfEventParanoid).display().to_string(),
                old: v,
                new: PARANOID_TUNED.into(),
            }];
            c
        }
        Ok(n) => check(
            CheckId::PerfEventParanoid,
            source,
            format!("{n}: per-thread counters allowed"),
            Verdict::Ok,
        ),
        Err(_) => check(
            CheckId::PerfEventParanoid,
            source,
            format!("'{v}' (not a number)"),
            Verdict::Unknown,
        ),
    }
}

pub(super) fn numa_balancing(files: &HostFiles) -> Check {
    let source = Knob::NumaBalancing.host_path();
    match files.read(Knob::NumaBalancing) {
        Ok(v) if v == "0" => check(
            CheckId::NumaBalancing,
            source,
            "0 (off)".into(),
            Verdict::Ok,
        ),
        Ok(v) => {
            let mut c = with_advice(
                check(
                    CheckId::NumaBalancing,
                    source,
                    format!("{v}: pages migrate towards the CPUs touching them during a run"),
                    Verdict::Blurs,
                ),
                "turn it off (`corescope doctor --tune` writes 0): the numa probe places \
                 its pages itself",
            );
            c.tune = vec![TuneWrite {
                path: files.path(Knob::NumaBalancing).display().to_string(),
                old: v,
                new: "0".into(),
            }];
            c
        }
        Err(Unread::Missing) => check(
            CheckId::NumaBalancing,
            source,
            "not built into this kernel".into(),
            Verdict::Ok,
        ),
        Err(e) => check(CheckId::NumaBalancing, source, unread(&e), Verdict::Unknown),
    }
}
