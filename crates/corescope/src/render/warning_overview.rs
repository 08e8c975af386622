//! The warnings overview in words: one sentence a cause (from
//! `analysis::warning_groups`), saying what happened, which figures it touches and
//! what to do. The summary and the HTML page open with it; each probe's section
//! keeps its own warnings in full.

use crate::analysis::warning_groups::{Cause, WarningGroup};
use crate::model::Warning;
use crate::units::fmt_percent;

/// A group's first warning in its own words (a noise warning: what changed).
fn first_words(w: &Warning) -> String {
    match w {
        Warning::Noisy { detail, .. } => detail.clone(),
        w => super::words::warning(w),
    }
}

/// Names listed before the rest are counted (`a, b, c and 4 more`).
const NAMED: usize = 3;
/// Names in a one-line form (`a, b +4`).
const NAMED_SHORT: usize = 2;

/// The first `shown` names joined with `, `, and the rest counted by `rest`.
fn listed_with(names: &[String], shown: usize, rest: fn(usize) -> String) -> String {
    let mut s = names
        .iter()
        .take(shown)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        s.push_str(&rest(names.len() - shown));
    }
    s
}

/// `a, b, c and 4 more`.
fn listed(names: &[String]) -> String {
    listed_with(names, NAMED, |n| format!(" and {n} more"))
}

/// `a, b +4`.
fn listed_short(names: &[String]) -> String {
    listed_with(names, NAMED_SHORT, |n| format!(" +{n}"))
}

/// `1 figure` / `3 figures`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The group in one short line (about 90 columns): what happened, where, and
/// what to do, for the terminal's overview.
pub fn group_line(g: &WarningGroup) -> String {
    let probes = listed_short(&g.probes);
    match g.cause {
        Cause::StateChanged => format!(
            "state changed (vCPUs moved) in {}: {probes}: see `states`; rerun",
            count(g.probes.len(), "probe", "probes")
        ),
        Cause::PinnedMoved => format!(
            "pinned threads moved{} in {probes}: they mix CPUs; keep other work off",
            g.worst.map(|w| format!(" (≤ {w:.0}×)")).unwrap_or_default()
        ),
        Cause::Busy => {
            format!("other load or steal in {probes}: figures may be low; rerun when idle")
        }
        Cause::Drift => {
            format!("speed drifted around {probes}: fix the governor (corescope doctor); rerun")
        }
        Cause::WideInterval => format!(
            "{} over ±5 %{} in {probes}: rough; raise --budget",
            count(g.points, "figure", "figures"),
            g.worst
                .map(|w| format!(" (to ±{} %)", fmt_percent(w * 100.0, false)))
                .unwrap_or_default()
        ),
        Cause::TimerStep => format!(
            "{} of {} timer steps in {probes}: gaps under one step are the timer's",
            count(g.count, "median", "medians"),
            g.worst
                .map(|s| format!("{s:.0}+"))
                .unwrap_or_else(|| "a few".into())
        ),
        Cause::Other => format!(
            "{} in {probes}: see their sections",
            count(g.count, "other warning", "other warnings")
        ),
    }
}

/// The run's overview as text, a line each (see [`lines`]).
pub fn render(run: &crate::model::RunFile, width: usize) -> String {
    let groups = crate::analysis::warning_groups::groups(run);
    lines(&groups, width)
        .into_iter()
        .map(|l| l + "\n")
        .collect()
}

/// The overview in wrapped lines of at most `width` columns: the heading, then
/// one `! line` a cause.
pub fn lines(groups: &[WarningGroup], width: usize) -> Vec<String> {
    let mut out = super::terminal::wrap("", &heading(groups), 2, width);
    for g in groups {
        out.extend(super::terminal::wrap("! ", &group_line(g), 2, width));
    }
    out
}

/// What happened, where (the probes or figures named), and what to do: the one
/// sentence of a group.
pub fn group_sentence(g: &WarningGroup) -> String {
    let probes = listed(&g.probes);
    let figures = listed(&g.figures);
    match g.cause {
        Cause::StateChanged => format!(
            "the machine changed state ({}; on a VM, vCPUs moving between host cores) during \
             {probes}: figures measured across a change keep each state apart in `states`; to \
             settle them, rerun, or ask for dedicated host cores",
            count(g.count, "change", "changes")
        ),
        Cause::PinnedMoved => {
            format!(
            "the OS moved pinned threads to another CPU{} in {}: those figures mix CPUs; rerun \
             with other work kept off these CPUs (cpuset, isolcpus)",
            g.worst
                .map(|w| format!(" (up to {w:.0} times in one case)"))
                .unwrap_or_default(),
            // A pinned thread found on another CPU names its probe, not a figure.
            if g.figures.is_empty() { &probes } else { &figures }
        )
        }
        Cause::Busy => format!(
            "other programs or the hypervisor took CPU time during {probes}: their figures may \
             be low; rerun on an idle machine (`corescope doctor` shows what runs)"
        ),
        Cause::Drift => format!(
            "the reference kernel's speed changed around {probes} (clock or thermal state): \
             compare figures across them with care; fix the frequency governor (`corescope \
             doctor`) and rerun"
        ),
        Cause::WideInterval => format!(
            "{} with a 95 % interval still wider than ±5 %{} ({figures}): read them as rough; a \
             larger `--budget` repeats them more",
            count(g.points, "figure", "figures"),
            g.worst
                .map(|w| format!(", the widest ±{} %", fmt_percent(w * 100.0, false)))
                .unwrap_or_default()
        ),
        Cause::TimerStep => format!(
            "{} only {} timer steps long ({figures}): differences smaller than one step between \
             them are the timer's, not the machine's",
            count(g.count, "median is", "medians are"),
            g.worst
                .map(|s| format!("{s:.0} or more"))
                .unwrap_or_else(|| "a few".into())
        ),
        Cause::Other => format!(
            "{} in {probes}{}: see the probe's section",
            count(g.count, "other warning", "other warnings"),
            g.first
                .as_ref()
                .map(first_words)
                .filter(|t| !t.is_empty())
                .map(|t| format!(", the first: {t}"))
                .unwrap_or_default()
        ),
    }
}

/// The overview's first line: how many warnings, in how many causes.
pub fn heading(groups: &[WarningGroup]) -> String {
    let total: usize = groups.iter().map(|g| g.count).sum();
    match groups.len() {
        0 => "no warnings".to_string(),
        n => format!(
            "warnings: {total}, of {} (each probe's section lists its own)",
            count(n, "cause", "causes")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(cause: Cause, probes: &[&str], figures: &[&str], worst: Option<f64>) -> WarningGroup {
        WarningGroup {
            cause,
            count: figures.len().max(probes.len()),
            points: figures.len().max(probes.len()),
            probes: probes.iter().map(|s| s.to_string()).collect(),
            figures: figures.iter().map(|s| s.to_string()).collect(),
            worst,
            first: Some(Warning::Note {
                text: crate::model::OldText::for_test("the first words"),
            }),
        }
    }

    #[test]
    fn every_cause_names_where_and_a_remedy() {
        let causes = [
            Cause::StateChanged,
            Cause::PinnedMoved,
            Cause::Busy,
            Cause::Drift,
            Cause::WideInterval,
            Cause::TimerStep,
            Cause::Other,
        ];
        for c in causes {
            let g = group(c, &["p1", "p2"], &["p1 s1"], Some(0.25));
            let t = group_sentence(&g);
            assert!(t.contains("p1"), "{c:?} names where: {t}");
            let remedy = [
                "rerun",
                "keep other work off",
                "--budget",
                "the timer's",
                "see their sections",
                "larger `--budget`",
                "timer's, not the machine's",
                "see the probe",
                "with care",
            ];
            assert!(
                remedy.iter().any(|r| t.contains(r)),
                "{c:?} says what to do: {t}"
            );
        }
        let g = group(Cause::WideInterval, &["a"], &["a x", "a y"], Some(0.25));
        assert!(group_sentence(&g).contains("2 figures with a 95 % interval"));
        assert!(group_sentence(&g).contains("the widest ±25 %"));
        // The short line names where (at most two, then a count) and fits one line
        // of 100 columns with probe names of the usual length.
        let many = ["packed-counts", "queue-tuning", "integer", "node"];
        for c in causes {
            let g = group(
                c,
                &many,
                &["queue-tuning fib, 128-byte events/spin_backoff"],
                Some(0.3),
            );
            let l = group_line(&g);
            assert!(
                l.contains("packed-counts") || l.contains("queue-tuning"),
                "{l}"
            );
            assert!(
                l.chars().count() + 2 <= 100,
                "{c:?}: {} columns: {l}",
                l.chars().count()
            );
        }
    }

    #[test]
    fn moved_pins_without_a_migration_count_name_their_probes() {
        let mut g = group(Cause::PinnedMoved, &["team"], &[], None);
        g.count = 1;
        assert_eq!(
            group_sentence(&g),
            "the OS moved pinned threads to another CPU in team: those figures mix CPUs; rerun \
             with other work kept off these CPUs (cpuset, isolcpus)"
        );
        assert_eq!(
            group_line(&g),
            "pinned threads moved in team: they mix CPUs; keep other work off"
        );
        let g = group(Cause::PinnedMoved, &["p"], &["p int ×2"], Some(22.0));
        assert!(
            group_sentence(&g).contains("(up to 22 times in one case) in p int ×2:"),
            "{}",
            group_sentence(&g)
        );
        assert!(group_line(&g).contains("moved (≤ 22×) in p:"));
    }

    #[test]
    fn long_lists_are_counted_and_the_heading_sums() {
        let names = ["a", "b", "c", "d", "e"].map(String::from);
        assert_eq!(listed(&names), "a, b, c and 2 more");
        assert_eq!(listed(&names[..2]), "a, b");
        assert_eq!(listed_short(&names), "a, b +3");
        assert_eq!(heading(&[]), "no warnings");
        let gs = [
            group(Cause::Busy, &["a"], &[], None),
            group(Cause::Other, &["a", "b"], &[], None),
        ];
        assert_eq!(
            heading(&gs),
            "warnings: 3, of 2 causes (each probe's section lists its own)"
        );
    }
}
