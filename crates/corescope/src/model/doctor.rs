//! What `corescope doctor` found on a machine before a run: every condition that
//! blurs the figures (governor, boost, SMT, isolated CPUs, IRQs, THP, load, steal,
//! the hypervisor, counters, NUMA balancing), the probes it affects, what to do,
//! and for the ones it can set, the file and the value `doctor --tune` writes.
//! Data only: `doctor` reads the machine, `render::doctor` words it.

use serde::{Deserialize, Serialize};

/// Every check of one look at the machine, in a fixed order.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Checks {
    /// One entry per condition looked at.
    pub checks: Vec<Check>,
}

impl Checks {
    /// The checks whose verdict is [`Verdict::Blurs`].
    pub fn blurring(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.verdict == Verdict::Blurs)
    }

    /// Every write `doctor --tune` would make, in check order.
    pub fn writes(&self) -> impl Iterator<Item = &TuneWrite> {
        self.checks.iter().flat_map(|c| c.tune.iter())
    }

    /// The check with this id, if it was made.
    pub fn get(&self, id: CheckId) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }
}

/// Which condition a check looks at.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum CheckId {
    /// The cpufreq governor of every online CPU.
    Governor,
    /// Turbo / boost clocks above the nominal frequency.
    Boost,
    /// Simultaneous multithreading (hardware threads sharing a core).
    Smt,
    /// CPUs kept from the scheduler (`isolcpus`) and from its tick (`nohz_full`).
    IsolatedCpus,
    /// Which CPUs serve interrupts.
    IrqAffinity,
    /// Transparent huge pages.
    Thp,
    /// The load average against the CPU count.
    Load,
    /// Time the hypervisor took from this machine's CPUs.
    Steal,
    /// Whether the CPUs are virtual.
    Hypervisor,
    /// Where the host runs the vCPUs relative to each other.
    VcpuPlacement,
    /// `kernel.perf_event_paranoid`: who may open hardware counters.
    PerfEventParanoid,
    /// Automatic NUMA balancing (pages moved during a run).
    NumaBalancing,
}

impl CheckId {
    /// The id as written in the run file (`numa_balancing`).
    pub fn name(self) -> &'static str {
        match self {
            CheckId::Governor => "governor",
            CheckId::Boost => "boost",
            CheckId::Smt => "smt",
            CheckId::IsolatedCpus => "isolated_cpus",
            CheckId::IrqAffinity => "irq_affinity",
            CheckId::Thp => "thp",
            CheckId::Load => "load",
            CheckId::Steal => "steal",
            CheckId::Hypervisor => "hypervisor",
            CheckId::VcpuPlacement => "vcpu_placement",
            CheckId::PerfEventParanoid => "perf_event_paranoid",
            CheckId::NumaBalancing => "numa_balancing",
        }
    }
}

/// Whether a condition blurs the figures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Set as a quiet run wants it.
    Ok,
    /// Present: figures it affects vary more (or differ) because of it.
    Blurs,
    /// Not readable here (not exposed in a VM, no permission, not measured).
    Unknown,
}

impl Verdict {
    /// Lower-case name (`blurs`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Blurs => "blurs",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One condition of the machine, as read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    /// Which condition.
    pub id: CheckId,
    /// Where it was read (a file, several with `*`, or a measurement).
    pub source: String,
    /// What was read, in a few words (`powersave on CPUs 0-3`).
    pub state: String,
    /// Whether it blurs the figures.
    pub verdict: Verdict,
    /// Ids of the probes whose figures it affects.
    pub affects: Vec<String>,
    /// What to do about it: the command, the boot parameter, or what to ask the
    /// host for; empty when nothing is to be done.
    pub advice: String,
    /// The writes `doctor --tune` makes for it (empty: nothing it can set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tune: Vec<TuneWrite>,
}

/// One file `doctor --tune` writes, with the value it holds now (what
/// `doctor --reset` writes back).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TuneWrite {
    /// The file (a /sys or /proc/sys path).
    pub path: String,
    /// Its value now, as `--reset` writes it back.
    pub old: String,
    /// The value `--tune` writes.
    pub new: String,
}
