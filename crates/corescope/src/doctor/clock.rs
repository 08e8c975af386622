//! The checks on the core clock: the cpufreq governor and boost (turbo).

use super::check::{check, list, unread, with_advice};
use crate::model::{Check, CheckId, TuneWrite, Verdict};
use crate::topology::knobs::{HostFiles, Knob};

pub(super) fn governor(files: &HostFiles, online: &[u32], vm: bool) -> Check {
    let source = Knob::Governor(0).host_path().replace("cpu0/", "cpu*/");
    let read: Vec<(u32, String)> = online
        .iter()
        .filter_map(|&c| Some((c, files.read(Knob::Governor(c)).ok()?)))
        .collect();
    if read.is_empty() {
        let c = check(
            CheckId::Governor,
            source,
            "not exposed (no cpufreq governor)".into(),
            Verdict::Unknown,
        );
        return with_advice(
            c,
            if vm {
                "the host sets the clock: ask the host for the performance governor (or a \
                 fixed frequency) on the cores behind these vCPUs"
            } else {
                "no cpufreq driver: the firmware sets the clock; set its power profile to \
                 maximum performance"
            },
        );
    }
    let mut names: Vec<&str> = read.iter().map(|(_, g)| g.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let state = if names.len() == 1 {
        format!("{} on CPUs {}", names[0], list(online))
    } else {
        read.iter()
            .map(|(c, g)| format!("{c}: {g}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let slow: Vec<&(u32, String)> = read.iter().filter(|(_, g)| g != "performance").collect();
    if slow.is_empty() {
        return check(CheckId::Governor, source, state, Verdict::Ok);
    }
    let mut c = with_advice(
        check(CheckId::Governor, source, state, Verdict::Blurs),
        "the clock follows the load: set the performance governor \
         (`corescope doctor --tune`, or `cpupower frequency-set -g performance`)",
    );
    c.tune = slow
        .iter()
        .map(|(cpu, g)| TuneWrite {
            path: files.path(Knob::Governor(*cpu)).display().to_string(),
            old: g.clone(),
            new: "performance".into(),
        })
        .collect();
    c
}

pub(super) fn boost(files: &HostFiles, vm: bool) -> Check {
    // acpi-cpufreq and amd-pstate: `boost` 1 = on; intel_pstate: `no_turbo` 0 = on.
    let (knob, on, off) = if files.exists(Knob::Boost) {
        (Knob::Boost, "1", "0")
    } else {
        (Knob::NoTurbo, "0", "1")
    };
    let source = knob.host_path();
    match files.read(knob) {
        Ok(v) if v == on => {
            let mut c = with_advice(
                check(
                    CheckId::Boost,
                    source,
                    "on: the clock rises above nominal with temperature and load".into(),
                    Verdict::Blurs,
                ),
                "turn boost off for stable figures (`corescope doctor --tune`); figures \
                 then are at the nominal clock",
            );
            c.tune = vec![TuneWrite {
                path: files.path(knob).display().to_string(),
                old: v,
                new: off.into(),
            }];
            c
        }
        Ok(v) if v == off => check(CheckId::Boost, source, "off".into(), Verdict::Ok),
        Ok(v) => check(
            CheckId::Boost,
            source,
            format!("'{v}' (not 0 or 1)"),
            Verdict::Unknown,
        ),
        Err(e) => with_advice(
            check(
                CheckId::Boost,
                format!(
                    "{} or {}",
                    Knob::Boost.host_path(),
                    Knob::NoTurbo.host_path()
                ),
                unread(&e),
                Verdict::Unknown,
            ),
            if vm {
                "ask the host to turn turbo/boost off (or to say whether it is on)"
            } else {
                "no boost switch here: check the firmware's turbo setting"
            },
        ),
    }
}
