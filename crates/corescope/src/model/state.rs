//! The state of the machine while one comparison group was measured (one epoch of
//! it): what moves figures on a shared machine, recorded beside the figures.

use serde::{Deserialize, Serialize};

/// The machine around one measurement of a group (see `state.rs` for how each
/// number is read).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GroupState {
    /// The comparison group (a lone case's label).
    pub group: String,
    /// The epoch of the run (0 or 1).
    pub epoch: usize,
    /// Wall time of the measurement, in s.
    pub wall_s: f64,
    /// Round trip of a cache line between the first two CPUs before the group, in ns
    /// (on a VM its state says whether the vCPUs share a host core, a cache, or
    /// neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_before_ns: Option<f64>,
    /// The same after the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trip_after_ns: Option<f64>,
    /// The two round trips differ by more than `drift::ROUND_TRIP_MOVED`: the CPUs
    /// changed state (on a VM, host placement) during the group.
    #[serde(default)]
    pub round_trip_changed: bool,
    /// Share of all CPU time the hypervisor stole during the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_fraction: Option<f64>,
    /// CPU time of other programs (every busy CPU second that corescope did not use)
    /// as a share of the machine's CPU time during the group: a competing load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_fraction: Option<f64>,
    /// Share of the group's wall time during which some task (corescope's own
    /// oversubscribed threads included) waited for a CPU (`/proc/pressure/cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_fraction: Option<f64>,
    /// The round trip changed state during this measurement and the group's
    /// allowance had room: what it gave was discarded and the group measured again
    /// (the next record of the group is the measurement kept).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub measured_again: bool,
}

/// The lowest and highest round trip read around `states`, in ns (`None` when none
/// was read).
pub fn round_trip_span<'a>(states: impl IntoIterator<Item = &'a GroupState>) -> Option<(f64, f64)> {
    states
        .into_iter()
        .flat_map(|s| [s.round_trip_before_ns, s.round_trip_after_ns])
        .flatten()
        .fold(None, |span, t| match span {
            None => Some((t, t)),
            Some((lo, hi)) => Some((t.min(lo), t.max(hi))),
        })
}
