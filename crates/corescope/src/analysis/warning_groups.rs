//! A run's warnings grouped by cause: what happened, which probes and figures it
//! touches, and how many times. A default run on a VM has about a hundred
//! warnings, nearly all of a few causes; the report's overview shows one group a
//! cause (the renderer words each with its remedy), and each probe section keeps
//! its own warnings in full. Pure: the run file in, groups out.

use crate::model::{NoiseCause, ProbeResult, RunFile, Warning};
use std::collections::BTreeMap;

/// Why a figure is less trustworthy: the causes warnings are grouped by, in the
/// order the overview lists them (what changes the most figures first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// The machine changed state while probes ran: the CPUs' round trip moved (on a
    /// VM, vCPUs moved between host cores), or points differed between the run's
    /// two epochs beyond their intervals.
    StateChanged,
    /// The OS moved threads pinned to one CPU to another (cpu-migrations counter),
    /// or a thread pinned to one CPU runs on another.
    PinnedMoved,
    /// Other programs used the CPUs, or the hypervisor stole CPU time.
    Busy,
    /// The reference kernel's time drifted around a probe (clock or thermal state).
    Drift,
    /// Intervals still wide after every repetition the budget allowed.
    WideInterval,
    /// Medians only a few timer steps long.
    TimerStep,
    /// Anything else (warnings in words, and older run files' noise).
    Other,
}

/// The warnings of one cause.
#[derive(Debug, Clone, PartialEq)]
pub struct WarningGroup {
    /// The cause.
    pub cause: Cause,
    /// Warnings in the group.
    pub count: usize,
    /// Figures the group's warnings stand for (a wide-interval warning names one
    /// point and counts the others of its probe; every other warning is one).
    pub points: usize,
    /// Probes with a warning of the group, in run order.
    pub probes: Vec<String>,
    /// The figures named (series, cases), `probe series`, in run order, each once.
    pub figures: Vec<String>,
    /// The widest interval's half width relative to its value (wide intervals), the
    /// most migrations of one case (pinned moves), the smallest median in timer
    /// steps (timer step); `None` for the other causes.
    pub worst: Option<f64>,
    /// The group's first warning, whose own words [`Cause::Other`] shows.
    pub first: Option<Warning>,
}

/// The cause a warning is grouped under.
pub fn cause_of(w: &Warning) -> Cause {
    match w {
        Warning::Noisy { cause, .. } => match cause {
            NoiseCause::RoundTrip | NoiseCause::Epochs => Cause::StateChanged,
            NoiseCause::Load | NoiseCause::Steal => Cause::Busy,
            NoiseCause::Drift => Cause::Drift,
            NoiseCause::Unknown => Cause::Other,
        },
        Warning::Migrated { .. } | Warning::PinnedElsewhere { .. } => Cause::PinnedMoved,
        Warning::WideInterval { .. } => Cause::WideInterval,
        Warning::TimerStep { .. } => Cause::TimerStep,
        // Pins, counters, stops, memory and the environment: in their own words.
        _ => Cause::Other,
    }
}

/// The figure a warning names, if it names one.
fn figure_of(w: &Warning) -> Option<&str> {
    match w {
        Warning::WideInterval { series, .. } | Warning::TimerStep { series, .. } => Some(series),
        Warning::Migrated { case, .. } => Some(case),
        _ => None,
    }
}

/// How many figures a warning stands for (a wide-interval warning names one point
/// and counts the others of its probe).
fn weight_of(w: &Warning) -> usize {
    match w {
        Warning::WideInterval { others, .. } => 1 + others,
        _ => 1,
    }
}

/// The warning's measure of how bad it is, as [`WarningGroup::worst`] keeps it,
/// and whether a larger value is worse.
fn severity_of(w: &Warning) -> Option<(f64, bool)> {
    match w {
        Warning::WideInterval { rel_half_width, .. } => Some((*rel_half_width, true)),
        Warning::Migrated { migrations, .. } => Some((*migrations as f64, true)),
        Warning::TimerStep {
            median_ns, step_ns, ..
        } => Some((median_ns / step_ns, false)),
        _ => None,
    }
}

/// The warnings of every probe of the run, grouped by cause (in [`Cause`] order).
pub fn groups(run: &RunFile) -> Vec<WarningGroup> {
    group_probes(run.probes.iter())
}

/// [`groups`] of some probes.
pub fn group_probes<'a>(probes: impl Iterator<Item = &'a ProbeResult>) -> Vec<WarningGroup> {
    let mut by_cause: BTreeMap<Cause, WarningGroup> = BTreeMap::new();
    for p in probes {
        for w in &p.warnings {
            let cause = cause_of(w);
            let g = by_cause.entry(cause).or_insert_with(|| WarningGroup {
                cause,
                count: 0,
                points: 0,
                probes: Vec::new(),
                figures: Vec::new(),
                worst: None,
                first: None,
            });
            add(g, &p.id, w);
        }
    }
    by_cause.into_values().collect()
}

/// One warning of `probe` into its group.
fn add(g: &mut WarningGroup, probe: &str, w: &Warning) {
    g.count += 1;
    g.points += weight_of(w);
    if !g.probes.iter().any(|p| p == probe) {
        g.probes.push(probe.to_string());
    }
    if let Some(f) = figure_of(w) {
        let named = format!("{probe} {f}");
        if !g.figures.contains(&named) {
            g.figures.push(named);
        }
    }
    if let Some((v, larger_worse)) = severity_of(w) {
        let worse = match g.worst {
            None => true,
            Some(old) => (v > old) == larger_worse && v != old,
        };
        if worse && v.is_finite() {
            g.worst = Some(v);
        }
    }
    if g.first.is_none() {
        g.first = Some(w.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    fn noisy(cause: NoiseCause) -> Warning {
        Warning::Noisy {
            detail: format!("{cause:?}"),
            cause,
        }
    }

    fn wide(series: &str, rel: f64, others: usize) -> Warning {
        Warning::WideInterval {
            series: series.into(),
            x: 1.0,
            rel_half_width: rel,
            n: 30,
            others,
        }
    }

    fn probe(id: &str, ws: Vec<Warning>) -> ProbeResult {
        let mut p = ProbeResult::new(id, "t", Status::Completed);
        for w in ws {
            p.warnings.push(w);
        }
        p
    }

    #[test]
    fn warnings_fall_into_one_group_a_cause_in_cause_order() {
        let probes = [
            probe(
                "a",
                vec![
                    wide("x", 0.12, 3),
                    noisy(NoiseCause::RoundTrip),
                    Warning::Note {
                        text: crate::model::OldText::for_test("hm"),
                    },
                ],
            ),
            probe(
                "b",
                vec![
                    noisy(NoiseCause::Epochs),
                    noisy(NoiseCause::Steal),
                    noisy(NoiseCause::Load),
                    wide("y", 0.30, 0),
                    Warning::Migrated {
                        case: "int ×2".into(),
                        migrations: 22,
                        rounds: 30,
                    },
                ],
            ),
        ];
        let g = group_probes(probes.iter());
        let causes: Vec<Cause> = g.iter().map(|g| g.cause).collect();
        assert_eq!(
            causes,
            [
                Cause::StateChanged,
                Cause::PinnedMoved,
                Cause::Busy,
                Cause::WideInterval,
                Cause::Other
            ]
        );
        // The round trip and the epochs are one cause, across probes.
        assert_eq!(
            (g[0].count, g[0].probes.clone()),
            (2, vec!["a".into(), "b".into()])
        );
        assert_eq!(g[1].figures, ["b int ×2"]);
        assert_eq!(g[1].worst, Some(22.0));
        assert_eq!(g[2].count, 2);
        // A wide-interval warning stands for its other points too; the worst is kept.
        assert_eq!((g[3].count, g[3].points), (2, 4 + 1));
        assert_eq!(g[3].figures, ["a x", "b y"]);
        assert_eq!(g[3].worst, Some(0.30));
        assert_eq!(
            g[4].first,
            Some(Warning::Note {
                text: crate::model::OldText::for_test("hm"),
            })
        );
    }

    #[test]
    fn a_thread_pinned_but_running_elsewhere_is_grouped_with_moved_pins() {
        let p = probe(
            "team",
            vec![
                Warning::PinnedElsewhere { cpu: 3, now_cpu: 5 },
                Warning::Migrated {
                    case: "int ×2".into(),
                    migrations: 4,
                    rounds: 30,
                },
            ],
        );
        let g = group_probes(std::iter::once(&p));
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!((g[0].cause, g[0].count), (Cause::PinnedMoved, 2));
        // The migrated case names its figure and its count; the pin found elsewhere neither.
        assert_eq!(g[0].figures, ["team int ×2"]);
        assert_eq!(g[0].worst, Some(4.0));
        let alone = probe(
            "team",
            vec![Warning::PinnedElsewhere { cpu: 3, now_cpu: 5 }],
        );
        let g = group_probes(std::iter::once(&alone));
        assert_eq!((g[0].cause, g[0].worst), (Cause::PinnedMoved, None));
        assert!(g[0].figures.is_empty());
    }

    #[test]
    fn the_timer_step_group_keeps_the_shortest_median_and_old_noise_is_other() {
        let step = |median_ns: f64| Warning::TimerStep {
            series: format!("m{median_ns}"),
            median_ns,
            step_ns: 0.5,
        };
        let p = probe(
            "mutex",
            vec![step(10.0), step(4.0), step(8.0), noisy(NoiseCause::Unknown)],
        );
        let g = group_probes(std::iter::once(&p));
        assert_eq!(g[0].cause, Cause::TimerStep);
        assert_eq!(g[0].worst, Some(8.0), "4 ns is 8 steps of 0.5 ns");
        assert_eq!(g[0].count, 3);
        assert_eq!(g[1].cause, Cause::Other);
        assert!(group_probes(std::iter::empty()).is_empty());
    }
}
