//! The checks on virtual CPUs: whether these are, and where the host runs them
//! (classed from measured round trips).

use super::check::{check, with_advice};
use super::limits::{SAME_CACHE_NS, SAME_CORE_NS};
use crate::model::{Check, CheckId, Verdict};
use crate::topology::knobs::Knob;

pub(super) fn hypervisor(vm: bool) -> Check {
    let source = format!("{} flags", Knob::Cpuinfo.host_path());
    if vm {
        with_advice(
            check(
                CheckId::Hypervisor,
                source,
                "present: the CPUs are vCPUs, threads of the host".into(),
                Verdict::Blurs,
            ),
            "ask the host for vCPUs pinned 1:1 to dedicated cores, its governor set to \
             performance, and the host topology (threads, caches) passed through",
        )
    } else {
        check(CheckId::Hypervisor, source, "none".into(), Verdict::Ok)
    }
}

/// The class of a round trip between two CPUs.
pub fn placement_class(round_trip_ns: f64) -> &'static str {
    if round_trip_ns < SAME_CORE_NS {
        "same host core likely"
    } else if round_trip_ns < SAME_CACHE_NS {
        "same host cache likely"
    } else {
        "far apart (another die or socket likely)"
    }
}

pub(super) fn vcpu_placement(vm: bool, trips: Option<&[f64]>) -> Check {
    let id = CheckId::VcpuPlacement;
    let source = "round trips between the first two CPUs".to_string();
    if !vm {
        return check(id, source, "not a VM".into(), Verdict::Ok);
    }
    let Some(trips) = trips.filter(|t| !t.is_empty()) else {
        return with_advice(
            check(id, source, "not measured".into(), Verdict::Unknown),
            "`corescope doctor --measure` times it; `corescope run sharing` maps it",
        );
    };
    let mut sorted = trips.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    let classes: Vec<&str> = {
        let mut c: Vec<&str> = sorted.iter().map(|&t| placement_class(t)).collect();
        c.dedup();
        c
    };
    let state = format!(
        "{} readings {lo:.0}-{hi:.0} ns: {}",
        trips.len(),
        classes.join(" / ")
    );
    let moved = crate::drift::moved_within(trips).is_some();
    with_advice(
        check(id, source, state, Verdict::Blurs),
        if moved {
            "the vCPUs moved between host cores during the check: ask the host to pin them"
        } else {
            "the host may move the vCPUs at any time (the run watches this pair): ask the \
             host to pin them"
        },
    )
}
