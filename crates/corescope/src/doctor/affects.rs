//! Which probes each condition blurs: the `affects` of a check.

/// Every probe: conditions that slow or jitter the clock or steal time blur them all.
/// (Checked against the registry in the tests.)
pub(super) const EVERY: [&str; 22] = [
    "compute",
    "peak",
    "clock-curve",
    "memory",
    "numa",
    "loaded-latency",
    "workload",
    "threads",
    "mutex",
    "condvar",
    "timers",
    "syscall",
    "atomics",
    "c2c",
    "loaded-coherence",
    "false-sharing",
    "sharing",
    "spin",
    "channel",
    "channel-tune",
    "pool",
    "matmul",
];
/// Probes whose throughput depends on whether a core's other hardware thread is busy.
pub(super) const CORE_THROUGHPUT: [&str; 8] = [
    "compute", "peak", "matmul", "workload", "sharing", "spin", "pool", "memory",
];
/// Probes whose figures depend on page sizes (TLB reach, page faults).
pub(super) const PAGES: [&str; 5] = ["memory", "numa", "workload", "matmul", "pool"];
/// Probes whose figures depend on where memory pages sit.
pub(super) const PAGE_PLACEMENT: [&str; 3] = ["numa", "memory", "workload"];
/// Probes that measure between two or more CPUs: where the host runs each vCPU
/// decides what they see.
pub(super) const CROSS_CPU: [&str; 11] = [
    "c2c",
    "sharing",
    "false-sharing",
    "atomics",
    "channel",
    "channel-tune",
    "spin",
    "mutex",
    "condvar",
    "threads",
    "pool",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_affected_probes_exist() {
        let known: Vec<&str> = crate::probes::registry().iter().map(|p| p.id()).collect();
        assert_eq!(EVERY.len(), known.len(), "EVERY lists every probe");
        for id in EVERY
            .iter()
            .chain(&CORE_THROUGHPUT)
            .chain(&PAGES)
            .chain(&PAGE_PLACEMENT)
            .chain(&CROSS_CPU)
        {
            assert!(known.contains(id), "{id} is no probe");
        }
    }
}
