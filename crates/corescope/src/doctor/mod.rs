//! `corescope doctor`: what blurs the figures on this machine, read before a run
//! (and recorded in it), in the spirit of `pyperf system show`.
//!
//! [`read`] turns the host files (through [`HostFiles`], so a test can hand it a
//! fake `/sys` + `/proc` tree) into typed [`Checks`]: each with what was read and
//! where, a verdict, the probes it affects, advice, and for what `--tune` can set,
//! the file and the value it would write. Nothing here writes or prints; `tune`
//! writes (after the command asked), `render::doctor` words.
//!
//! The files: `check.rs` makes a check and holds the host facts several checks
//! share; `clock.rs`, `sharing.rs`, `kernel.rs` and `virt.rs` read the host
//! files into the checks on the clock, on what else runs on the CPUs, on the
//! kernel's settings and on virtual CPUs; `limits.rs` holds the limits that
//! decide a verdict, `affects.rs` the probes each condition blurs (what each
//! probe declares it is sensitive to, looked up in the registry).

mod affects;
mod check;
mod clock;
mod kernel;
mod limits;
mod sharing;
pub mod tune;
mod virt;

use crate::model::Checks;
use crate::probes;
use crate::topology::knobs::{HostFiles, Knob};
use crate::topology::Topology;
use check::{cpu_list, is_vm};
use std::time::Duration;

pub use limits::{
    LOAD_BLURS_PER_CPU, PARANOID_COUNTERS_OFF, SAME_CACHE_NS, SAME_CORE_NS, STEAL_BLURS,
};
pub use virt::placement_class;

/// What [`read`] measures besides reading files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Sample `/proc/stat` twice this far apart for the steal now (else since boot only).
    pub steal_window: Option<Duration>,
    /// Round trips (ns) of a cache line between the first two CPUs, measured by
    /// the caller ([`measure_round_trips`]); `None`: not measured.
    pub round_trips_ns: Option<Vec<f64>>,
}

/// Read the machine into its checks, each naming the probes of this build it
/// affects ([`probes::registry`]).
pub fn read(files: &HostFiles, opts: &Options) -> Checks {
    read_in(files, opts, &probes::registry())
}

/// [`read`], naming the affected probes from `registry`: every probe for a
/// condition of the clock or of stolen time, else those whose
/// [`Probe::sensitive_to`](probes::AnyProbe::sensitive_to) names the condition.
pub fn read_in(
    files: &HostFiles,
    opts: &Options,
    registry: &[Box<dyn probes::AnyProbe>],
) -> Checks {
    let mut checks = read_checks(files, opts);
    for c in &mut checks.checks {
        c.affects = affects::affected(c.id, registry);
    }
    checks
}

/// The checks of the machine, without their affected probes.
fn read_checks(files: &HostFiles, opts: &Options) -> Checks {
    let online = files
        .read(Knob::Online)
        .ok()
        .and_then(|s| cpu_list(&s))
        .unwrap_or_default();
    let vm = is_vm(files);
    let isolated = files
        .read(Knob::Isolated)
        .ok()
        .and_then(|s| cpu_list(&s))
        .unwrap_or_default();
    Checks {
        checks: vec![
            clock::governor(files, &online, vm),
            clock::boost(files, vm),
            sharing::smt(files, vm),
            sharing::isolated_cpus(files, &isolated),
            sharing::irq_affinity(files, &isolated, vm),
            kernel::thp(files),
            sharing::load(files, online.len()),
            sharing::steal(files, vm, opts.steal_window),
            virt::hypervisor(vm),
            virt::vcpu_placement(vm, opts.round_trips_ns.as_deref()),
            kernel::perf_event_paranoid(files),
            kernel::numa_balancing(files),
        ],
    }
}

/// `n` round trips of a cache line between the first two CPUs this process may
/// use (the watched pair of the drift checks); empty with fewer than two CPUs or
/// when the pins are refused.
pub fn measure_round_trips(topo: &Topology, n: usize) -> Vec<f64> {
    match crate::drift::watched_pair(topo) {
        Some((a, b)) => (0..n)
            .filter_map(|_| crate::drift::round_trip(a, b))
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, CheckId, Sensitivity, TuneWrite, Verdict};
    use std::path::Path;

    /// A fake `/sys` + `/proc` tree: every (path, text) written under a temporary root.
    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, HostFiles) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let files = HostFiles::under(dir.path());
        (dir, files)
    }

    const CPU: &str = "/sys/devices/system/cpu";
    const VM_CPUINFO: &str = "processor\t: 0\nflags\t\t: fpu sse2 hypervisor avx2\n";
    const METAL_CPUINFO: &str = "processor\t: 0\nflags\t\t: fpu sse2 avx2\n";

    fn get(c: &Checks, id: CheckId) -> &Check {
        c.get(id).unwrap()
    }

    fn read_tree(files: &[(&str, &str)]) -> Checks {
        let (_dir, f) = tree(files);
        read(&f, &Options::default())
    }

    #[test]
    fn a_powersave_governor_blurs_and_performance_is_ok() {
        let gov = |g: &str| {
            read_tree(&[
                (&format!("{CPU}/online"), "0-1\n"),
                (&format!("{CPU}/cpu0/cpufreq/scaling_governor"), g),
                (&format!("{CPU}/cpu1/cpufreq/scaling_governor"), g),
                ("/proc/cpuinfo", METAL_CPUINFO),
            ])
        };
        let slow = gov("powersave\n");
        let c = get(&slow, CheckId::Governor);
        assert_eq!(c.verdict, Verdict::Blurs);
        assert_eq!(c.state, "powersave on CPUs 0-1");
        assert_eq!(c.tune.len(), 2);
        assert!(c.tune[1]
            .path
            .ends_with("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"));
        assert_eq!(
            (c.tune[0].old.as_str(), c.tune[0].new.as_str()),
            ("powersave", "performance")
        );
        let fast = gov("performance\n");
        assert_eq!(get(&fast, CheckId::Governor).verdict, Verdict::Ok);
        assert!(get(&fast, CheckId::Governor).tune.is_empty());
        assert_eq!(get(&fast, CheckId::Hypervisor).verdict, Verdict::Ok);
        assert_eq!(get(&fast, CheckId::VcpuPlacement).verdict, Verdict::Ok);
    }

    #[test]
    fn a_vm_without_cpufreq_says_to_ask_the_host() {
        let c = read_tree(&[
            (&format!("{CPU}/online"), "0-1\n"),
            (&format!("{CPU}/smt/control"), "notsupported\n"),
            ("/proc/cpuinfo", VM_CPUINFO),
        ]);
        let g = get(&c, CheckId::Governor);
        assert_eq!(g.verdict, Verdict::Unknown);
        assert!(g.state.contains("not exposed"), "{}", g.state);
        assert!(g.advice.contains("ask the host"), "{}", g.advice);
        assert_eq!(get(&c, CheckId::Boost).verdict, Verdict::Unknown);
        assert!(get(&c, CheckId::Boost).advice.contains("ask the host"));
        assert_eq!(get(&c, CheckId::Smt).verdict, Verdict::Unknown);
        assert_eq!(get(&c, CheckId::Hypervisor).verdict, Verdict::Blurs);
        let p = get(&c, CheckId::VcpuPlacement);
        assert_eq!(p.verdict, Verdict::Unknown);
        assert!(p.advice.contains("corescope run sharing"));
        assert!(c.writes().next().is_none(), "nothing to tune on such a VM");
        // Every check is made, in a fixed order, even on an empty tree.
        assert_eq!(read_tree(&[]).checks.len(), 12);
    }

    #[test]
    fn boost_reads_the_acpi_switch_or_intel_no_turbo() {
        let on = read_tree(&[(&format!("{CPU}/cpufreq/boost"), "1\n")]);
        let b = get(&on, CheckId::Boost);
        assert_eq!(b.verdict, Verdict::Blurs);
        assert_eq!((b.tune[0].old.as_str(), b.tune[0].new.as_str()), ("1", "0"));
        let turbo = read_tree(&[(&format!("{CPU}/intel_pstate/no_turbo"), "0\n")]);
        let b = get(&turbo, CheckId::Boost);
        assert_eq!(b.verdict, Verdict::Blurs);
        assert!(b.tune[0].path.ends_with("intel_pstate/no_turbo"));
        assert_eq!(b.tune[0].new, "1");
        let off = read_tree(&[(&format!("{CPU}/intel_pstate/no_turbo"), "1\n")]);
        assert_eq!(get(&off, CheckId::Boost).verdict, Verdict::Ok);
    }

    #[test]
    fn smt_on_blurs_but_is_not_tuned() {
        let c = read_tree(&[(&format!("{CPU}/smt/control"), "on\n")]);
        let s = get(&c, CheckId::Smt);
        assert_eq!(s.verdict, Verdict::Blurs);
        assert!(s.tune.is_empty());
    }

    #[test]
    fn thp_always_blurs_and_madvise_is_ok() {
        let thp = "/sys/kernel/mm/transparent_hugepage/enabled";
        let c = read_tree(&[(thp, "[always] madvise never\n")]);
        let t = get(&c, CheckId::Thp);
        assert_eq!(t.verdict, Verdict::Blurs);
        assert!(t.state.starts_with("[always]"));
        assert_eq!(
            (t.tune[0].old.as_str(), t.tune[0].new.as_str()),
            ("always", "madvise")
        );
        // The probes that declare a dependence on page sizes, in the registry's order.
        let paged: Vec<&str> = crate::probes::registry()
            .iter()
            .filter(|p| p.sensitive_to().contains(&Sensitivity::PageSize))
            .map(|p| p.id())
            .collect();
        assert!(!paged.is_empty(), "some probe depends on page sizes");
        assert_eq!(t.affects, paged);
        let c = read_tree(&[(thp, "always [madvise] never\n")]);
        assert_eq!(get(&c, CheckId::Thp).verdict, Verdict::Ok);
    }

    #[test]
    fn paranoid_3_means_no_counters() {
        let p = "/proc/sys/kernel/perf_event_paranoid";
        let c = read_tree(&[(p, "3\n")]);
        let k = get(&c, CheckId::PerfEventParanoid);
        assert_eq!(k.verdict, Verdict::Blurs);
        assert!(k.state.contains("counters unavailable"), "{}", k.state);
        assert_eq!(k.tune[0].new, "2");
        for ok in ["2\n", "-1\n"] {
            let c = read_tree(&[(p, ok)]);
            assert_eq!(get(&c, CheckId::PerfEventParanoid).verdict, Verdict::Ok);
        }
    }

    #[test]
    fn steal_and_load_blur_when_present() {
        let busy = read_tree(&[
            (&format!("{CPU}/online"), "0-1\n"),
            (
                "/proc/stat",
                "cpu  1000 0 500 8000 100 0 10 390 0 0\ncpu0 1 2 3\n",
            ),
            ("/proc/loadavg", "2.50 1.00 0.50 3/200 999\n"),
        ]);
        let s = get(&busy, CheckId::Steal);
        assert_eq!(s.verdict, Verdict::Blurs);
        assert_eq!(s.state, "3.90 % since boot");
        let l = get(&busy, CheckId::Load);
        assert_eq!(l.verdict, Verdict::Blurs);
        assert!(l.state.contains("2.50 (1 min)") && l.state.contains("on 2 CPUs"));
        let quiet = read_tree(&[
            (&format!("{CPU}/online"), "0-1\n"),
            ("/proc/stat", "cpu  1000 0 500 8000 100 0 10 0 0 0\n"),
            ("/proc/loadavg", "0.05 0.10 0.10 1/200 999\n"),
        ]);
        assert_eq!(get(&quiet, CheckId::Steal).verdict, Verdict::Ok);
        assert_eq!(get(&quiet, CheckId::Load).verdict, Verdict::Ok);
    }

    #[test]
    fn isolated_cpus_keep_irqs_off_them() {
        let c = read_tree(&[
            (&format!("{CPU}/online"), "0-3\n"),
            (&format!("{CPU}/isolated"), "2-3\n"),
            (&format!("{CPU}/nohz_full"), "2-3\n"),
            ("/proc/irq/24/smp_affinity_list", "0-3\n"),
            ("/proc/irq/25/smp_affinity_list", "0-1\n"),
            ("/proc/irq/default_smp_affinity", "f\n"),
        ]);
        let i = get(&c, CheckId::IsolatedCpus);
        assert_eq!(i.verdict, Verdict::Ok);
        assert_eq!(i.state, "isolcpus 2-3, nohz_full 2-3");
        let q = get(&c, CheckId::IrqAffinity);
        assert_eq!(q.verdict, Verdict::Blurs);
        assert_eq!(q.state, "1 of 2 IRQs may run on isolated CPUs 2-3");
        assert_eq!(q.tune.len(), 1);
        assert!(q.tune[0].path.ends_with("/proc/irq/24/smp_affinity_list"));
        assert_eq!(
            (q.tune[0].old.as_str(), q.tune[0].new.as_str()),
            ("0-3", "0-1")
        );
        let none = read_tree(&[(&format!("{CPU}/isolated"), "\n")]);
        assert_eq!(get(&none, CheckId::IsolatedCpus).verdict, Verdict::Blurs);
        assert_eq!(get(&none, CheckId::IrqAffinity).verdict, Verdict::Unknown);
    }

    #[test]
    fn numa_balancing_on_blurs() {
        let n = "/proc/sys/kernel/numa_balancing";
        let c = read_tree(&[(n, "1\n")]);
        let b = get(&c, CheckId::NumaBalancing);
        assert_eq!(b.verdict, Verdict::Blurs);
        assert_eq!(b.tune[0].new, "0");
        assert_eq!(
            get(&read_tree(&[(n, "0\n")]), CheckId::NumaBalancing).verdict,
            Verdict::Ok
        );
    }

    #[test]
    fn vcpu_placement_is_classed_from_given_round_trips() {
        let (_d, f) = tree(&[("/proc/cpuinfo", VM_CPUINFO)]);
        let opts = |t: Vec<f64>| Options {
            steal_window: None,
            round_trips_ns: Some(t),
        };
        let moved = read(&f, &opts(vec![63.0, 66.0, 326.0]));
        let p = get(&moved, CheckId::VcpuPlacement);
        assert_eq!(p.verdict, Verdict::Blurs);
        assert!(p.state.contains("63-326 ns"), "{}", p.state);
        assert!(p.state.contains("same host core likely"));
        assert!(p.advice.contains("moved"));
        let still = read(&f, &opts(vec![120.0, 130.0]));
        let p = get(&still, CheckId::VcpuPlacement);
        assert!(p.state.contains("same host cache likely"), "{}", p.state);
        assert!(!p.advice.contains("moved during"));
        assert_eq!(
            placement_class(480.0),
            "far apart (another die or socket likely)"
        );
    }

    #[test]
    fn tune_and_reset_on_a_fake_tree() {
        let (dir, f) = tree(&[
            (&format!("{CPU}/online"), "0\n"),
            (
                &format!("{CPU}/cpu0/cpufreq/scaling_governor"),
                "powersave\n",
            ),
            ("/proc/sys/kernel/numa_balancing", "1\n"),
        ]);
        let before = read(&f, &Options::default());
        let writes: Vec<TuneWrite> = before.writes().cloned().collect();
        assert_eq!(writes.len(), 2);
        let state = dir.path().join("state/doctor-saved.json");
        let out = tune::tune(&writes, &state).unwrap();
        assert_eq!(out.done.len(), 2);
        let after = read(&f, &Options::default());
        assert_eq!(get(&after, CheckId::Governor).verdict, Verdict::Ok);
        assert_eq!(get(&after, CheckId::NumaBalancing).verdict, Verdict::Ok);
        tune::reset(&state).unwrap();
        let again = read(&f, &Options::default());
        assert_eq!(get(&again, CheckId::Governor).state, "powersave on CPUs 0");
        assert!(!Path::new(&state).exists());
    }
}
