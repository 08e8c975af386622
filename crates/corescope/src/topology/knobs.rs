//! The host files `corescope doctor` reads (and `doctor --tune` writes), under a
//! root directory: `/` for this machine, a directory built by a test for a fake
//! `/sys` + `/proc` tree. The paths are named here and nowhere else; `doctor`
//! asks by [`Knob`] and gets the text with the path it came from.

use std::path::{Path, PathBuf};

/// A host file `doctor` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// `/sys/devices/system/cpu/online`: the online CPUs (list syntax).
    Online,
    /// `/sys/devices/system/cpu/isolated`: CPUs kept from the scheduler (`isolcpus`).
    Isolated,
    /// `/sys/devices/system/cpu/nohz_full`: CPUs whose tick stops.
    NohzFull,
    /// `/sys/devices/system/cpu/cpufreq`: the cpufreq driver's directory.
    CpufreqDir,
    /// `/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor`.
    Governor(u32),
    /// `/sys/devices/system/cpu/cpufreq/boost` (acpi-cpufreq, amd-pstate): 1 = boost on.
    Boost,
    /// `/sys/devices/system/cpu/intel_pstate/no_turbo`: 0 = turbo on.
    NoTurbo,
    /// `/sys/devices/system/cpu/smt/control`.
    SmtControl,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`.
    Thp,
    /// `/proc/sys/kernel/perf_event_paranoid`.
    PerfEventParanoid,
    /// `/proc/sys/kernel/numa_balancing`.
    NumaBalancing,
    /// `/proc/stat`.
    Stat,
    /// `/proc/loadavg`.
    Loadavg,
    /// `/proc/cpuinfo`.
    Cpuinfo,
    /// `/proc/irq`: one directory per interrupt number.
    IrqDir,
    /// `/proc/irq/N/smp_affinity_list`.
    IrqAffinity(u32),
}

impl Knob {
    /// The path on the host (`/proc/sys/kernel/numa_balancing`).
    pub fn host_path(self) -> String {
        const CPU: &str = "/sys/devices/system/cpu";
        match self {
            Knob::Online => format!("{CPU}/online"),
            Knob::Isolated => format!("{CPU}/isolated"),
            Knob::NohzFull => format!("{CPU}/nohz_full"),
            Knob::CpufreqDir => format!("{CPU}/cpufreq"),
            Knob::Governor(n) => format!("{CPU}/cpu{n}/cpufreq/scaling_governor"),
            Knob::Boost => format!("{CPU}/cpufreq/boost"),
            Knob::NoTurbo => format!("{CPU}/intel_pstate/no_turbo"),
            Knob::SmtControl => format!("{CPU}/smt/control"),
            Knob::Thp => "/sys/kernel/mm/transparent_hugepage/enabled".into(),
            Knob::PerfEventParanoid => "/proc/sys/kernel/perf_event_paranoid".into(),
            Knob::NumaBalancing => "/proc/sys/kernel/numa_balancing".into(),
            Knob::Stat => "/proc/stat".into(),
            Knob::Loadavg => "/proc/loadavg".into(),
            Knob::Cpuinfo => "/proc/cpuinfo".into(),
            Knob::IrqDir => "/proc/irq".into(),
            Knob::IrqAffinity(n) => format!("/proc/irq/{n}/smp_affinity_list"),
        }
    }
}

/// Why a host file gave no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unread {
    /// It does not exist (not exposed by this kernel, driver or hypervisor).
    Missing,
    /// This user may not read it.
    Denied,
    /// Another error, as the OS words it.
    Failed(String),
}

/// The host files under one root directory.
#[derive(Debug, Clone)]
pub struct HostFiles {
    root: PathBuf,
}

impl HostFiles {
    /// This machine's files.
    pub fn live() -> Self {
        Self { root: "/".into() }
    }

    /// The files of a tree under `root` (`root/proc/stat`, `root/sys/...`).
    pub fn under(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Whether this is the machine's own root (`/`).
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The file's path under the root (the host path itself for [`HostFiles::live`]).
    pub fn path(&self, knob: Knob) -> PathBuf {
        let host = knob.host_path();
        self.root.join(host.trim_start_matches('/'))
    }

    /// The file's text, trimmed.
    pub fn read(&self, knob: Knob) -> Result<String, Unread> {
        std::fs::read_to_string(self.path(knob))
            .map(|s| s.trim().to_string())
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Unread::Missing,
                std::io::ErrorKind::PermissionDenied => Unread::Denied,
                _ => Unread::Failed(e.to_string()),
            })
    }

    /// Whether the file or directory exists.
    pub fn exists(&self, knob: Knob) -> bool {
        self.path(knob).exists()
    }

    /// The interrupt numbers listed in `/proc/irq` (sorted), or why they could not be.
    pub fn irqs(&self) -> Result<Vec<u32>, Unread> {
        let dir = std::fs::read_dir(self.path(Knob::IrqDir)).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Unread::Missing,
            std::io::ErrorKind::PermissionDenied => Unread::Denied,
            _ => Unread::Failed(e.to_string()),
        })?;
        let mut v: Vec<u32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        v.sort_unstable();
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sit_under_the_root() {
        let f = HostFiles::under("/tmp/x");
        assert_eq!(
            f.path(Knob::Governor(3)),
            Path::new("/tmp/x/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor")
        );
        assert_eq!(
            HostFiles::live().path(Knob::IrqAffinity(24)),
            Path::new("/proc/irq/24/smp_affinity_list")
        );
        assert!(HostFiles::live().is_live());
        assert_eq!(
            f.read(Knob::Stat),
            Err(Unread::Missing),
            "a missing file is Missing"
        );
    }
}
