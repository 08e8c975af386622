//! `corescope doctor`: what blurs the figures on this machine, read before a run
//! (and recorded in it), in the spirit of `pyperf system show`.
//!
//! [`read`] turns the host files (through [`HostFiles`], so a test can hand it a
//! fake `/sys` + `/proc` tree) into typed [`Checks`]: each with what was read and
//! where, a verdict, the probes it affects, advice, and for what `--tune` can set,
//! the file and the value it would write. Nothing here writes or prints; `tune`
//! writes (after the command asked), `render::doctor` words.

pub mod tune;

use crate::model::{Check, CheckId, Checks, TuneWrite, Verdict};
use crate::topology::knobs::{HostFiles, Knob, Unread};
use crate::topology::Topology;
use std::time::Duration;

/// Every probe: conditions that slow or jitter the clock or steal time blur them all.
/// (Checked against the registry in the tests.)
const EVERY: [&str; 22] = [
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
const CORE_THROUGHPUT: [&str; 8] = [
    "compute", "peak", "matmul", "workload", "sharing", "spin", "pool", "memory",
];
/// Probes whose figures depend on page sizes (TLB reach, page faults).
const PAGES: [&str; 5] = ["memory", "numa", "workload", "matmul", "pool"];
/// Probes whose figures depend on where memory pages sit.
const PAGE_PLACEMENT: [&str; 3] = ["numa", "memory", "workload"];
/// Probes that measure between two or more CPUs: where the host runs each vCPU
/// decides what they see.
const CROSS_CPU: [&str; 11] = [
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

/// A 1-minute load average above this many runnable tasks per CPU blurs: the probes
/// run one thread per CPU and share them with that load. (Half a CPU's worth:
/// pyperf's `system show` warns on any visible load; a loaded 2-CPU VM idles near 0.1.)
pub const LOAD_BLURS_PER_CPU: f64 = 0.5;
/// Steal above this share of CPU time (since boot, or in the sampled window) blurs:
/// any steal means the host ran something else on the cores behind these vCPUs.
pub const STEAL_BLURS: f64 = 0.0;
/// `perf_event_paranoid` above this keeps unprivileged users from any
/// `perf_event_open` (Debian's and Android's level 3; the kernel knows -1 to 2,
/// Documentation/admin-guide/sysctl/kernel.rst).
pub const PARANOID_COUNTERS_OFF: i64 = 2;
/// The value `--tune` writes: user-space counters of one's own threads allowed.
const PARANOID_TUNED: &str = "2";
/// Round trips of a cache line below this are most likely between two hardware
/// threads of one host core (this VM: 63 ns in that state, see `drift.rs`; the
/// SMT siblings of current x86 cores measure 40-90 ns in `c2c`).
pub const SAME_CORE_NS: f64 = 90.0;
/// Below this (and above [`SAME_CORE_NS`]), two cores sharing a last-level cache;
/// above it, farther (another die or socket). This VM's other states: 326 and 480 ns.
pub const SAME_CACHE_NS: f64 = 250.0;

/// What [`read`] measures besides reading files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Sample `/proc/stat` twice this far apart for the steal now (else since boot only).
    pub steal_window: Option<Duration>,
    /// Round trips (ns) of a cache line between the first two CPUs, measured by
    /// the caller ([`measure_round_trips`]); `None`: not measured.
    pub round_trips_ns: Option<Vec<f64>>,
}

/// Read the machine into its checks.
pub fn read(files: &HostFiles, opts: &Options) -> Checks {
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
            governor(files, &online, vm),
            boost(files, vm),
            smt(files, vm),
            isolated_cpus(files, &isolated),
            irq_affinity(files, &isolated, vm),
            thp(files),
            load(files, online.len()),
            steal(files, vm, opts.steal_window),
            hypervisor(vm),
            vcpu_placement(vm, opts.round_trips_ns.as_deref()),
            perf_event_paranoid(files),
            numa_balancing(files),
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

/// A CPU list (`0-3,8`); an empty text is an empty list.
fn cpu_list(s: &str) -> Option<Vec<u32>> {
    if s.trim().is_empty() {
        return Some(Vec::new());
    }
    crate::placement::parse_cpu_list(s.trim())
}

fn list(cpus: &[u32]) -> String {
    Topology::format_cpu_list(cpus)
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn unread(u: &Unread) -> String {
    match u {
        Unread::Missing => "not exposed".into(),
        Unread::Denied => "not readable by this user".into(),
        Unread::Failed(e) => format!("unreadable ({e})"),
    }
}

/// Whether `/proc/cpuinfo` flags the CPUs as virtual (the `hypervisor` flag x86
/// guests see; CPUID leaf 1, ECX bit 31).
fn is_vm(files: &HostFiles) -> bool {
    files.read(Knob::Cpuinfo).is_ok_and(|c| {
        c.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|w| w == "hypervisor"))
    })
}

fn check(id: CheckId, source: String, state: String, verdict: Verdict, affects: &[&str]) -> Check {
    Check {
        id,
        source,
        state,
        verdict,
        affects: ids(affects),
        advice: String::new(),
        tune: Vec::new(),
    }
}

fn with_advice(mut c: Check, advice: impl Into<String>) -> Check {
    c.advice = advice.into();
    c
}

fn governor(files: &HostFiles, online: &[u32], vm: bool) -> Check {
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
            &EVERY,
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
        return check(CheckId::Governor, source, state, Verdict::Ok, &EVERY);
    }
    let mut c = with_advice(
        check(CheckId::Governor, source, state, Verdict::Blurs, &EVERY),
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

fn boost(files: &HostFiles, vm: bool) -> Check {
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
                    &EVERY,
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
        Ok(v) if v == off => check(CheckId::Boost, source, "off".into(), Verdict::Ok, &EVERY),
        Ok(v) => check(
            CheckId::Boost,
            source,
            format!("'{v}' (not 0 or 1)"),
            Verdict::Unknown,
            &EVERY,
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
                &EVERY,
            ),
            if vm {
                "ask the host to turn turbo/boost off (or to say whether it is on)"
            } else {
                "no boost switch here: check the firmware's turbo setting"
            },
        ),
    }
}

fn smt(files: &HostFiles, vm: bool) -> Check {
    let source = Knob::SmtControl.host_path();
    match files.read(Knob::SmtControl) {
        Ok(v) if v == "on" => with_advice(
            check(
                CheckId::Smt,
                source,
                "on: two hardware threads share each core".into(),
                Verdict::Blurs,
                &CORE_THROUGHPUT,
            ),
            format!(
                "a busy sibling halves a core's throughput: keep other work off the \
                 siblings (`corescope topo` shows them), or measure without them (`echo off \
                 > {}`; not done by --tune: it changes the machine being characterised)",
                Knob::SmtControl.host_path()
            ),
        ),
        Ok(v) if v == "notsupported" && vm => with_advice(
            check(
                CheckId::Smt,
                source,
                "not visible to the guest".into(),
                Verdict::Unknown,
                &CORE_THROUGHPUT,
            ),
            "the host may run two vCPUs (or another guest) on one core's two threads: ask \
             the host whether these vCPUs sit on sibling threads",
        ),
        Ok(v) => check(CheckId::Smt, source, v, Verdict::Ok, &CORE_THROUGHPUT),
        Err(e) => check(
            CheckId::Smt,
            source,
            unread(&e),
            Verdict::Unknown,
            &CORE_THROUGHPUT,
        ),
    }
}

fn isolated_cpus(files: &HostFiles, isolated: &[u32]) -> Check {
    let source = format!(
        "{}, {}",
        Knob::Isolated.host_path(),
        Knob::NohzFull.host_path()
    );
    let nohz = files
        .read(Knob::NohzFull)
        .ok()
        .and_then(|s| cpu_list(&s))
        .unwrap_or_default();
    if isolated.is_empty() {
        return with_advice(
            check(
                CheckId::IsolatedCpus,
                source,
                "none: every CPU takes other tasks".into(),
                Verdict::Blurs,
                &EVERY,
            ),
            "boot with isolcpus=<CPUs> nohz_full=<CPUs> rcu_nocbs=<CPUs> and run with \
             --placement <those CPUs> (a boot parameter: not set by --tune)",
        );
    }
    let mut state = format!("isolcpus {}", list(isolated));
    if !nohz.is_empty() {
        state.push_str(&format!(", nohz_full {}", list(&nohz)));
    }
    with_advice(
        check(CheckId::IsolatedCpus, source, state, Verdict::Ok, &EVERY),
        format!("run with --placement {}", list(isolated)),
    )
}

fn irq_affinity(files: &HostFiles, isolated: &[u32], vm: bool) -> Check {
    let source = Knob::IrqAffinity(0).host_path().replace("/0/", "/*/");
    let irqs = match files.irqs() {
        Ok(v) => v,
        Err(e) => {
            return check(
                CheckId::IrqAffinity,
                source,
                unread(&e),
                Verdict::Unknown,
                &EVERY,
            )
        }
    };
    let read: Vec<(u32, String, Vec<u32>)> = irqs
        .iter()
        .filter_map(|&n| {
            let s = files.read(Knob::IrqAffinity(n)).ok()?;
            let cpus = cpu_list(&s)?;
            Some((n, s, cpus))
        })
        .collect();
    let mut all: Vec<u32> = read
        .iter()
        .flat_map(|(_, _, c)| c.iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    if isolated.is_empty() {
        let c = check(
            CheckId::IrqAffinity,
            source,
            format!("{} IRQs served on CPUs {}", read.len(), list(&all)),
            Verdict::Ok,
            &EVERY,
        );
        return with_advice(
            c,
            "no isolated CPUs to keep them off; with isolcpus, --tune moves them to the others",
        );
    }
    let housekeeping: Vec<u32> = all
        .iter()
        .copied()
        .filter(|c| !isolated.contains(c))
        .collect();
    let hit: Vec<&(u32, String, Vec<u32>)> = read
        .iter()
        .filter(|(_, _, c)| c.iter().any(|x| isolated.contains(x)))
        .collect();
    if hit.is_empty() {
        return check(
            CheckId::IrqAffinity,
            source,
            format!("{} IRQs, none on the isolated CPUs", read.len()),
            Verdict::Ok,
            &EVERY,
        );
    }
    let mut c = with_advice(
        check(
            CheckId::IrqAffinity,
            source,
            format!(
                "{} of {} IRQs may run on isolated CPUs {}",
                hit.len(),
                read.len(),
                list(isolated)
            ),
            Verdict::Blurs,
            &EVERY,
        ),
        if vm {
            "move them to the other CPUs (`corescope doctor --tune`; stop irqbalance first, \
             it moves them back); the host's own interrupts land where the host puts them"
        } else {
            "move them to the other CPUs (`corescope doctor --tune`; stop irqbalance first, \
             it moves them back)"
        },
    );
    if !housekeeping.is_empty() {
        let to = list(&housekeeping);
        c.tune = hit
            .iter()
            .map(|(n, s, _)| TuneWrite {
                path: files.path(Knob::IrqAffinity(*n)).display().to_string(),
                old: s.clone(),
                new: to.clone(),
            })
            .collect();
    }
    c
}

fn thp(files: &HostFiles) -> Check {
    let source = Knob::Thp.host_path();
    let text = match files.read(Knob::Thp) {
        Ok(t) => t,
        Err(e) => return check(CheckId::Thp, source, unread(&e), Verdict::Unknown, &PAGES),
    };
    let Some(mode) = crate::topology::host::bracketed(&text) else {
        return check(
            CheckId::Thp,
            source,
            format!("'{text}' (no [mode])"),
            Verdict::Unknown,
            &PAGES,
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
                &PAGES,
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
    check(
        CheckId::Thp,
        source,
        format!("[{mode}]"),
        Verdict::Ok,
        &PAGES,
    )
}

fn load(files: &HostFiles, cpus: usize) -> Check {
    let source = Knob::Loadavg.host_path();
    let parsed = files
        .read(Knob::Loadavg)
        .map(|t| crate::topology::host::loadavg(&t));
    match parsed {
        Ok(Some([one, five, _])) if cpus > 0 => {
            let state = format!("{one:.2} (1 min), {five:.2} (5 min) on {cpus} CPUs");
            if one > LOAD_BLURS_PER_CPU * cpus as f64 {
                with_advice(
                    check(CheckId::Load, source, state, Verdict::Blurs, &EVERY),
                    "other work shares the CPUs: stop it (`top` shows what runs), or wait",
                )
            } else {
                check(CheckId::Load, source, state, Verdict::Ok, &EVERY)
            }
        }
        Ok(Some([one, ..])) => check(
            CheckId::Load,
            source,
            format!("{one:.2} (1 min); CPU count unknown"),
            Verdict::Unknown,
            &EVERY,
        ),
        Ok(None) => check(
            CheckId::Load,
            source,
            "unparsable".into(),
            Verdict::Unknown,
            &EVERY,
        ),
        Err(e) => check(CheckId::Load, source, unread(&e), Verdict::Unknown, &EVERY),
    }
}

fn steal(files: &HostFiles, vm: bool, window: Option<Duration>) -> Check {
    let source = Knob::Stat.host_path();
    let jiffies = || {
        files
            .read(Knob::Stat)
            .ok()
            .and_then(|t| crate::topology::host::stat_steal_total(&t))
    };
    let Some((s0, t0)) = jiffies() else {
        return check(
            CheckId::Steal,
            source,
            "no steal column".into(),
            if vm { Verdict::Unknown } else { Verdict::Ok },
            &EVERY,
        );
    };
    let since_boot = s0 as f64 / t0.max(1) as f64;
    let mut state = format!("{:.2} % since boot", since_boot * 100.0);
    let mut worst = since_boot;
    if let Some(w) = window {
        std::thread::sleep(w);
        if let Some((s1, t1)) = jiffies() {
            if t1 > t0 && s1 >= s0 {
                let now = (s1 - s0) as f64 / (t1 - t0) as f64;
                state.push_str(&format!(
                    ", {:.1} % over {:.1} s",
                    now * 100.0,
                    w.as_secs_f64()
                ));
                worst = worst.max(now);
            }
        }
    }
    if worst > STEAL_BLURS {
        with_advice(
            check(CheckId::Steal, source, state, Verdict::Blurs, &EVERY),
            "the host ran other work on the cores behind these vCPUs: ask the host for \
             dedicated (pinned, not overcommitted) cores",
        )
    } else {
        check(CheckId::Steal, source, state, Verdict::Ok, &EVERY)
    }
}

fn hypervisor(vm: bool) -> Check {
    let source = format!("{} flags", Knob::Cpuinfo.host_path());
    if vm {
        with_advice(
            check(
                CheckId::Hypervisor,
                source,
                "present: the CPUs are vCPUs, threads of the host".into(),
                Verdict::Blurs,
                &EVERY,
            ),
            "ask the host for vCPUs pinned 1:1 to dedicated cores, its governor set to \
             performance, and the host topology (threads, caches) passed through",
        )
    } else {
        check(
            CheckId::Hypervisor,
            source,
            "none".into(),
            Verdict::Ok,
            &EVERY,
        )
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

fn vcpu_placement(vm: bool, trips: Option<&[f64]>) -> Check {
    let id = CheckId::VcpuPlacement;
    let source = "round trips between the first two CPUs".to_string();
    if !vm {
        return check(id, source, "not a VM".into(), Verdict::Ok, &CROSS_CPU);
    }
    let Some(trips) = trips.filter(|t| !t.is_empty()) else {
        return with_advice(
            check(
                id,
                source,
                "not measured".into(),
                Verdict::Unknown,
                &CROSS_CPU,
            ),
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
        check(id, source, state, Verdict::Blurs, &CROSS_CPU),
        if moved {
            "the vCPUs moved between host cores during the check: ask the host to pin them"
        } else {
            "the host may move the vCPUs at any time (the run watches this pair): ask the \
             host to pin them"
        },
    )
}

fn perf_event_paranoid(files: &HostFiles) -> Check {
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
                    &EVERY,
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
                    &EVERY,
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
            &EVERY,
        ),
        Err(_) => check(
            CheckId::PerfEventParanoid,
            source,
            format!("'{v}' (not a number)"),
            Verdict::Unknown,
            &EVERY,
        ),
    }
}

fn numa_balancing(files: &HostFiles) -> Check {
    let source = Knob::NumaBalancing.host_path();
    match files.read(Knob::NumaBalancing) {
        Ok(v) if v == "0" => check(
            CheckId::NumaBalancing,
            source,
            "0 (off)".into(),
            Verdict::Ok,
            &PAGE_PLACEMENT,
        ),
        Ok(v) => {
            let mut c = with_advice(
                check(
                    CheckId::NumaBalancing,
                    source,
                    format!("{v}: pages migrate towards the CPUs touching them during a run"),
                    Verdict::Blurs,
                    &PAGE_PLACEMENT,
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
            &PAGE_PLACEMENT,
        ),
        Err(e) => check(
            CheckId::NumaBalancing,
            source,
            unread(&e),
            Verdict::Unknown,
            &PAGE_PLACEMENT,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert!(t.affects.contains(&"memory".to_string()));
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
