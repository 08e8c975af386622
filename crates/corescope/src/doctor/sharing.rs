//! The checks on what else runs on the CPUs the probes use: SMT siblings,
//! isolated CPUs and the interrupts kept off them, the load, and the time the
//! host steals.

use super::check::{check, cpu_list, list, unread, with_advice};
use super::limits::{LOAD_BLURS_PER_CPU, STEAL_BLURS};
use crate::model::{Check, CheckId, TuneWrite, Verdict};
use crate::topology::knobs::{HostFiles, Knob};
use std::time::Duration;

pub(super) fn smt(files: &HostFiles, vm: bool) -> Check {
    let source = Knob::SmtControl.host_path();
    match files.read(Knob::SmtControl) {
        Ok(v) if v == "on" => with_advice(
            check(
                CheckId::Smt,
                source,
                "on: two hardware threads share each core".into(),
                Verdict::Blurs,
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
            ),
            "the host may run two vCPUs (or another guest) on one core's two threads: ask \
             the host whether these vCPUs sit on sibling threads",
        ),
        Ok(v) => check(CheckId::Smt, source, v, Verdict::Ok),
        Err(e) => check(CheckId::Smt, source, unread(&e), Verdict::Unknown),
    }
}

pub(super) fn isolated_cpus(files: &HostFiles, isolated: &[u32]) -> Check {
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
        check(CheckId::IsolatedCpus, source, state, Verdict::Ok),
        format!("run with --placement {}", list(isolated)),
    )
}

pub(super) fn irq_affinity(files: &HostFiles, isolated: &[u32], vm: bool) -> Check {
    let source = Knob::IrqAffinity(0).host_path().replace("/0/", "/*/");
    let irqs = match files.irqs() {
        Ok(v) => v,
        Err(e) => return check(CheckId::IrqAffinity, source, unread(&e), Verdict::Unknown),
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

pub(super) fn load(files: &HostFiles, cpus: usize) -> Check {
    let source = Knob::Loadavg.host_path();
    let parsed = files
        .read(Knob::Loadavg)
        .map(|t| crate::topology::host::loadavg(&t));
    match parsed {
        Ok(Some([one, five, _])) if cpus > 0 => {
            let state = format!("{one:.2} (1 min), {five:.2} (5 min) on {cpus} CPUs");
            if one > LOAD_BLURS_PER_CPU * cpus as f64 {
                with_advice(
                    check(CheckId::Load, source, state, Verdict::Blurs),
                    "other work shares the CPUs: stop it (`top` shows what runs), or wait",
                )
            } else {
                check(CheckId::Load, source, state, Verdict::Ok)
            }
        }
        Ok(Some([one, ..])) => check(
            CheckId::Load,
            source,
            format!("{one:.2} (1 min); CPU count unknown"),
            Verdict::Unknown,
        ),
        Ok(None) => check(CheckId::Load, source, "unparsable".into(), Verdict::Unknown),
        Err(e) => check(CheckId::Load, source, unread(&e), Verdict::Unknown),
    }
}

pub(super) fn steal(files: &HostFiles, vm: bool, window: Option<Duration>) -> Check {
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
            check(CheckId::Steal, source, state, Verdict::Blurs),
            "the host ran other work on the cores behind these vCPUs: ask the host for \
             dedicated (pinned, not overcommitted) cores",
        )
    } else {
        check(CheckId::Steal, source, state, Verdict::Ok)
    }
}
