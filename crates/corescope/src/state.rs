//! Reads the state of the machine around each measurement of a comparison group:
//! CPU time of other programs, steal, CPU pressure (the round trip between the first
//! two CPUs is read by the runner with `drift::round_trip`). [`Snapshot::take`]
//! reads the kernel's counters; [`between`] is pure and turns two snapshots into a
//! [`GroupState`].

use crate::clock::now_ns;
use crate::model::GroupState;
use crate::topology::host;

/// Jiffies per second when `sysconf` cannot tell (Linux's `USER_HZ` on every
/// mainstream architecture).
const DEFAULT_CLK_TCK: f64 = 100.0;

/// Kernel counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Snapshot {
    /// `now_ns()` when taken.
    pub t_ns: u64,
    /// The aggregate `cpu` line of `/proc/stat`: (busy, steal, total) jiffies.
    pub jiffies: Option<CpuJiffies>,
    /// This process's CPU time (user + system, all its threads, ended ones too), in ns.
    pub own_cpu_ns: Option<u64>,
    /// `/proc/pressure/cpu`'s `some ... total=` (µs during which a task waited).
    pub pressure_some_us: Option<u64>,
    /// Jiffies per second (`sysconf(_SC_CLK_TCK)`).
    pub clk_tck: f64,
}

/// Jiffies of the aggregate `cpu` line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuJiffies {
    /// user + nice + system + irq + softirq.
    pub busy: u64,
    /// steal.
    pub steal: u64,
    /// The first eight fields (idle and iowait included; guest is inside user).
    pub total: u64,
}

impl Snapshot {
    /// Read the counters now (each `None` where the kernel does not offer it).
    pub fn take() -> Self {
        Self {
            t_ns: now_ns(),
            jiffies: host::proc_stat_text().as_deref().and_then(parse_stat),
            own_cpu_ns: own_cpu_ns(),
            pressure_some_us: host::cpu_pressure_text()
                .as_deref()
                .and_then(parse_pressure_some),
            clk_tck: clk_tck(),
        }
    }
}

/// The state between two snapshots, with the watched round trips around them.
pub fn between(
    group: &str,
    epoch: usize,
    a: &Snapshot,
    b: &Snapshot,
    trips_ns: (Option<f64>, Option<f64>),
) -> GroupState {
    let wall_ns = b.t_ns.saturating_sub(a.t_ns);
    let jiffies = a.jiffies.zip(b.jiffies).and_then(|(x, y)| {
        let total = y.total.checked_sub(x.total).filter(|&t| t > 0)?;
        Some((
            y.busy.checked_sub(x.busy)?,
            y.steal.checked_sub(x.steal)?,
            total,
        ))
    });
    let own_jiffies = a
        .own_cpu_ns
        .zip(b.own_cpu_ns)
        .and_then(|(x, y)| y.checked_sub(x))
        .map(|ns| ns as f64 * 1e-9 * b.clk_tck);
    let others = jiffies
        .zip(own_jiffies)
        .map(|((busy, _, total), own)| ((busy as f64 - own).max(0.0) / total as f64).min(1.0));
    let pressure = a
        .pressure_some_us
        .zip(b.pressure_some_us)
        .and_then(|(x, y)| y.checked_sub(x))
        .filter(|_| wall_ns > 0)
        .map(|us| (us as f64 * 1e3 / wall_ns as f64).min(1.0));
    GroupState {
        group: group.into(),
        epoch,
        wall_s: wall_ns as f64 * 1e-9,
        round_trip_before_ns: trips_ns.0,
        round_trip_after_ns: trips_ns.1,
        round_trip_changed: {
            let t: Vec<f64> = [trips_ns.0, trips_ns.1].into_iter().flatten().collect();
            crate::drift::moved_within(&t).is_some()
        },
        steal_fraction: jiffies.map(|(_, steal, total)| steal as f64 / total as f64),
        others_cpu_fraction: others,
        cpu_pressure_fraction: pressure,
        measured_again: false,
    }
}

/// Other programs using more than this share of the machine's CPU time during a
/// group make it noisy (an idle VM shows 0–2 %: kernel threads and interrupts).
pub const OTHERS_NOISY: f64 = 0.10;

/// Groups named in a warning (the rest are counted).
const NAMED: usize = 3;

/// A probe's groups' warnings, one per cause: during which of them the watched
/// round trip changed state, the hypervisor stole more than `drift::STEAL_NOISY`,
/// or other programs used more than [`OTHERS_NOISY`] of the CPUs; none when none did.
pub fn warnings(states: &[GroupState]) -> Vec<crate::model::Warning> {
    use crate::model::NoiseCause;
    let name = |s: &GroupState| format!("{} (epoch {})", s.group, s.epoch + 1);
    let list = |hits: &[&GroupState]| {
        let mut names: Vec<String> = hits.iter().take(NAMED).map(|s| name(s)).collect();
        if hits.len() > NAMED {
            names.push(format!("{} more", hits.len() - NAMED));
        }
        names.join(", ")
    };
    let mut parts = Vec::new();
    let moved: Vec<&GroupState> = states.iter().filter(|s| s.round_trip_changed).collect();
    if let Some((lo, hi)) = crate::model::round_trip_span(moved.iter().copied()) {
        let again = moved.iter().filter(|s| s.measured_again).count();
        let kept: Vec<&GroupState> = moved
            .iter()
            .copied()
            .filter(|s| !s.measured_again)
            .collect();
        let outcome = match (again, kept.is_empty()) {
            (0, _) => format!("kept with the change: {}", list(&kept)),
            (_, true) => format!("each measured again ({again})"),
            (_, false) => format!(
                "{again} measured again; kept with the change (no room in their budget to \
                 measure again): {}",
                list(&kept)
            ),
        };
        parts.push((
            NoiseCause::RoundTrip,
            format!(
                "the round trip between the first two CPUs changed state during {} of {} group \
                 measurements ({lo:.0}–{hi:.0} ns; on a VM the vCPUs moved between host cores); \
                 {outcome}",
                moved.len(),
                states.len(),
            ),
        ));
    }
    let over = |get: fn(&GroupState) -> Option<f64>, limit: f64| -> (Vec<&GroupState>, f64) {
        let hits: Vec<&GroupState> = states
            .iter()
            .filter(|s| get(s).is_some_and(|v| v > limit))
            .collect();
        let top = hits.iter().filter_map(|s| get(s)).fold(0.0, f64::max);
        (hits, top)
    };
    let (stolen, top) = over(|s| s.steal_fraction, crate::drift::STEAL_NOISY);
    if !stolen.is_empty() {
        parts.push((
            NoiseCause::Steal,
            format!(
                "the hypervisor stole up to {:.0} % of CPU time during {}",
                top * 100.0,
                list(&stolen)
            ),
        ));
    }
    let (busy, top) = over(|s| s.others_cpu_fraction, OTHERS_NOISY);
    if !busy.is_empty() {
        parts.push((
            NoiseCause::Load,
            format!(
                "other programs used up to {:.0} % of the CPUs during {}",
                top * 100.0,
                list(&busy)
            ),
        ));
    }
    parts
        .into_iter()
        .map(|(cause, detail)| crate::model::Warning::Noisy { detail, cause })
        .collect()
}

/// The aggregate `cpu` line of `/proc/stat`; `None` without the steal field.
pub fn parse_stat(stat: &str) -> Option<CpuJiffies> {
    let f = host::stat_cpu_fields(stat)?;
    let sum = |idx: &[usize]| idx.iter().try_fold(0u64, |acc, &i| acc.checked_add(f[i]));
    Some(CpuJiffies {
        busy: sum(&[0, 1, 2, 5, 6])?,
        steal: f[7],
        total: sum(&[0, 1, 2, 3, 4, 5, 6, 7])?,
    })
}

/// `total=` of the `some` line of `/proc/pressure/cpu`.
pub fn parse_pressure_some(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("total="))
        .and_then(|v| v.parse().ok())
}

/// This process's user + system CPU time, in ns.
fn own_cpu_ns() -> Option<u64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage returned 0, so it filled the struct (and it was zeroed).
    let u = unsafe { usage.assume_init() };
    let ns = |t: libc::timeval| {
        u64::try_from(t.tv_sec)
            .ok()?
            .checked_mul(1_000_000_000)?
            .checked_add(u64::try_from(t.tv_usec).ok()?.checked_mul(1000)?)
    };
    ns(u.ru_utime)?.checked_add(ns(u.ru_stime)?)
}

/// Jiffies per second.
fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as f64
    } else {
        DEFAULT_CLK_TCK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NoiseCause, Warning};

    const STAT_A: &str = "cpu  100 0 50 1000 10 5 5 20 0 0\ncpu0 1 2 3 4 5 6 7 8\n";
    const STAT_B: &str = "cpu  300 0 90 1400 10 5 5 40 0 0\ncpu0 1 2 3 4 5 6 7 8\n";

    #[test]
    fn stat_and_pressure_parse() {
        let a = parse_stat(STAT_A).expect("parsed");
        assert_eq!((a.busy, a.steal, a.total), (160, 20, 1190));
        assert!(parse_stat("cpu  1 2 3 4\n").is_none());
        assert!(parse_stat("intr 5\n").is_none());
        let psi = "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure_some(psi), Some(123_456));
        assert_eq!(parse_pressure_some("full total=5\n"), None);
    }

    fn snap(t_s: f64, stat: &str, own_s: f64, psi_us: u64) -> Snapshot {
        Snapshot {
            t_ns: (t_s * 1e9) as u64,
            jiffies: parse_stat(stat),
            own_cpu_ns: Some((own_s * 1e9) as u64),
            pressure_some_us: Some(psi_us),
            clk_tck: 100.0,
        }
    }

    #[test]
    fn others_steal_and_pressure_between_snapshots() {
        // 660 jiffies in all, 240 busy, 20 stolen; corescope used 1.4 s (140
        // jiffies), so others used 100 of 660.
        let a = snap(10.0, STAT_A, 3.0, 1_000_000);
        let b = snap(12.5, STAT_B, 4.4, 1_500_000);
        let s = between("g", 1, &a, &b, (Some(70.0), Some(120.0)));
        assert_eq!(s.group, "g");
        assert_eq!(s.epoch, 1);
        assert!((s.wall_s - 2.5).abs() < 1e-9);
        assert!((s.steal_fraction.expect("steal") - 20.0 / 660.0).abs() < 1e-9);
        let others = s.others_cpu_fraction.expect("others");
        assert!((others - 100.0 / 660.0).abs() < 1e-9, "{others}");
        assert!((s.cpu_pressure_fraction.expect("psi") - 0.2).abs() < 1e-9);
        assert_eq!(s.round_trip_before_ns, Some(70.0));
    }

    #[test]
    fn missing_or_backward_counters_give_none() {
        let a = snap(1.0, STAT_B, 2.0, 10);
        let b = snap(2.0, STAT_A, 1.0, 5);
        let s = between("g", 0, &a, &b, (None, None));
        assert_eq!(s.steal_fraction, None);
        assert_eq!(s.others_cpu_fraction, None);
        assert_eq!(s.cpu_pressure_fraction, None);
        let empty = Snapshot::default();
        let s = between("g", 0, &empty, &empty, (None, None));
        assert_eq!(s.wall_s, 0.0);
        assert_eq!(s.others_cpu_fraction, None);
    }

    fn state(group: &str, trips: (f64, f64), steal: f64, others: f64) -> GroupState {
        GroupState {
            group: group.into(),
            epoch: 0,
            wall_s: 1.0,
            round_trip_before_ns: Some(trips.0),
            round_trip_after_ns: Some(trips.1),
            round_trip_changed: trips.1 / trips.0 > 1.5 || trips.0 / trips.1 > 1.5,
            steal_fraction: Some(steal),
            others_cpu_fraction: Some(others),
            cpu_pressure_fraction: None,
            measured_again: false,
        }
    }

    /// The warnings' details joined with `; `.
    fn details(ws: &[Warning]) -> String {
        let d: Vec<&str> = ws
            .iter()
            .filter_map(|w| match w {
                Warning::Noisy { detail, .. } => Some(detail.as_str()),
                _ => None,
            })
            .collect();
        assert!(!d.is_empty(), "a warning expected");
        d.join("; ")
    }

    #[test]
    fn one_warning_per_cause_names_what_changed() {
        let calm = state("a", (100.0, 110.0), 0.0, 0.01);
        assert_eq!(
            warnings(&[calm.clone(), calm.clone()]),
            Vec::<Warning>::new()
        );
        let moved = state("b", (100.0, 371.0), 0.0, 0.01);
        let busy = state("c", (100.0, 100.0), 0.08, 0.4);
        let ws = warnings(&[calm, moved.clone(), busy]);
        let causes: Vec<NoiseCause> = ws
            .iter()
            .filter_map(|w| match w {
                Warning::Noisy { cause, .. } => Some(*cause),
                _ => None,
            })
            .collect();
        assert_eq!(
            causes,
            [NoiseCause::RoundTrip, NoiseCause::Steal, NoiseCause::Load],
            "one warning per cause"
        );
        let detail = details(&ws);
        assert!(
            detail.contains("during 1 of 3 group measurements (100–371 ns;"),
            "{detail}"
        );
        assert!(
            detail.contains("stole up to 8 % of CPU time during c (epoch 1)"),
            "{detail}"
        );
        assert!(
            detail.contains("used up to 40 % of the CPUs during c"),
            "{detail}"
        );
        let many: Vec<GroupState> = (0..5).map(|_| moved.clone()).collect();
        let detail = details(&warnings(&many));
        assert!(detail.ends_with("2 more"), "{detail}");
        // A group measured again is counted; the one kept with the change is named.
        let again = GroupState {
            measured_again: true,
            ..state("d", (100.0, 371.0), 0.0, 0.01)
        };
        let detail = details(&warnings(&[again, moved]));
        assert!(
            detail.contains("during 2 of 2 group measurements")
                && detail.contains("1 measured again; kept with the change")
                && detail.ends_with("b (epoch 1)"),
            "{detail}"
        );
    }

    #[test]
    fn a_snapshot_of_this_machine_reads_what_the_kernel_offers() {
        let s = Snapshot::take();
        assert!(s.clk_tck > 0.0);
        assert!(s.own_cpu_ns.is_some(), "getrusage works everywhere");
        assert_eq!(s.jiffies.is_some(), host::proc_stat_text().is_some());
    }
}
