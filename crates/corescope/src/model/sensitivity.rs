//! What a probe's figures depend on besides the code it times, as data: each probe
//! states its sensitivities (`Probe::sensitive_to`, in its own file) and `doctor`
//! names, for each condition of the machine, the probes sensitive to it, looked up
//! in the registry, never by probe id. Conditions that slow or jitter the clock or
//! steal time (governor, boost, load, steal, a hypervisor) blur every probe; that
//! needs no declaration.

/// A condition of the machine a probe's figures depend on, beyond what blurs every
/// probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sensitivity {
    /// Throughput of a core, which its other hardware thread (SMT sibling) shares
    /// when busy: `doctor`'s `smt`.
    CoreThroughput,
    /// Page sizes: TLB reach and page faults (transparent huge pages): `thp`.
    PageSize,
    /// Where memory pages sit (NUMA nodes, pages the kernel moves): `numa_balancing`.
    PagePlacement,
    /// Figures measured between two or more CPUs: where the host runs each vCPU
    /// decides what they see: `vcpu_placement`.
    CrossCpu,
}

impl Sensitivity {
    /// Every sensitivity, in declaration order.
    pub const ALL: [Sensitivity; 4] = [
        Sensitivity::CoreThroughput,
        Sensitivity::PageSize,
        Sensitivity::PagePlacement,
        Sensitivity::CrossCpu,
    ];
}
