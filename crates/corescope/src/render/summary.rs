//! The one-screen summary a run ends with: the machine, then per probe its key
//! results with their intervals in labelled words, then the warnings that matter.
//! A pure function of the run file (typed findings and series estimates); it
//! never measures. Lines wrap at the width with a hanging indent and are never
//! cut: when the screen is full a probe's last items are left out whole and
//! counted. The full tables are `corescope report` (and `run --verbose`).

use super::summary_items::probe_items;
use super::terminal::wrap;
use crate::model::{RunFile, Warning};

/// Most lines the summary aims for (one screen); more only when the probes alone
/// need more than one line each.
pub const MAX_LINES: usize = 40;
/// Width of the probe-name column (the hanging indent of a probe's lines).
const NAME_COLS: usize = 14;
/// Most lines one probe gets when the screen has room.
const MAX_PROBE_LINES: usize = 3;
/// Most lines one probe gets when the screen has room to spare (few probes).
const MAX_PROBE_LINES_ROOMY: usize = 8;
/// The warnings take at most this many lines: the count, the machine's state, and
/// the first warnings (every warning is in `corescope report`).
const MAX_WARNING_LINES: usize = 6;
/// Indent of a wrapped header or warning line.
const HANG: usize = 2;

/// What `±` and `(n=1)` mean, said once under the machine.
const LEGEND: &str = "± = 95 % CI of the median (when over 1 %); (n=1) = measured once; full \
                      tables: corescope report";

/// The summary of `run` in lines of at most `width` columns (at least 40), at
/// most [`MAX_LINES`] of them while the probes fit one line each; no line is cut.
pub fn summary(run: &RunFile, width: usize) -> Vec<String> {
    let width = width.max(40);
    let run = super::for_display(run);
    let mut out = wrap("", &machine_line(&run), HANG, width);
    out.extend(wrap("", LEGEND, HANG, width));
    // (id, items, one more line than the others: the scaling probes lead).
    let probes: Vec<(&str, Vec<String>, usize)> = run
        .probes
        .iter()
        .map(|p| {
            let extra = usize::from(matches!(p.id.as_str(), "compute" | "memory"));
            (p.id.as_str(), probe_items(p, &run), extra)
        })
        .collect();
    let warnings = warning_blocks(&run, width);
    // Shrink the probes' share (3 lines each, then 2, then 1) and the warnings
    // until everything fits one screen.
    let budget = MAX_LINES.saturating_sub(out.len());
    let lay = |cap: usize| -> Vec<Vec<String>> {
        probes
            .iter()
            .map(|(id, items, extra)| layout_probe(id, items, width, cap + extra))
            .collect()
    };
    let mut cap = MAX_PROBE_LINES;
    let mut warn_cap = MAX_WARNING_LINES;
    let mut blocks = lay(cap);
    let total = |blocks: &[Vec<String>], wc: usize| {
        blocks.iter().map(Vec::len).sum::<usize>() + take_warnings(&warnings, wc).len()
    };
    while total(&blocks, warn_cap) > budget {
        if warn_cap > 4 {
            warn_cap -= 1;
        } else if cap > 1 {
            cap -= 1;
            blocks = lay(cap);
        } else if warn_cap > 0 {
            warn_cap -= 1;
        } else {
            break;
        }
    }
    // Room left on the screen: give every probe more lines while all still fit.
    while cap < MAX_PROBE_LINES_ROOMY && warn_cap == MAX_WARNING_LINES {
        let more = lay(cap + 1);
        if total(&more, warn_cap) > budget {
            break;
        }
        cap += 1;
        blocks = more;
    }
    out.extend(blocks.into_iter().flatten());
    out.extend(take_warnings(&warnings, warn_cap));
    out
}

/// The summary as one string (lines joined, each ending in a newline).
pub fn render(run: &RunFile, width: usize) -> String {
    summary(run, width).into_iter().map(|l| l + "\n").collect()
}

/// `AMD EPYC (x86_64, KVM) · 1 package × 2 cores … · measured core clock 4.21 GHz
/// · default run of 2026-11-23`
fn machine_line(run: &RunFile) -> String {
    let h = &run.host;
    let mut s = if h.cpu_model.is_empty() {
        "unknown CPU".to_string()
    } else {
        h.cpu_model.clone()
    };
    match &h.virtualized {
        Some(v) => s.push_str(&format!(" ({}, {v})", h.arch)),
        None => s.push_str(&format!(" ({})", h.arch)),
    }
    s.push_str(&format!(" · {}", run.topology.summary()));
    if let Some(hz) = run.clock.core_hz_one {
        s.push_str(&format!(" · measured core clock {:.2} GHz", hz / 1e9));
    }
    s.push_str(&format!(
        " · {} run of {}",
        run.profile.name(),
        run.started_utc.get(..10).unwrap_or(&run.started_utc)
    ));
    s
}

/// A probe's block in at most `cap` lines: as many of its items as fit, the rest
/// counted (`2 more in corescope report`); never a cut line. When not even the
/// first item fits, a pointer to the full report.
fn layout_probe(id: &str, items: &[String], width: usize, cap: usize) -> Vec<String> {
    for k in (1..=items.len()).rev() {
        let mut shown = items[..k].to_vec();
        if k < items.len() {
            shown.push(format!("{} more in `corescope report`", items.len() - k));
        }
        let lines = pack(id, &shown, width);
        if lines.len() <= cap {
            return lines;
        }
    }
    // Not even the first item fits: its first sentence, when that does.
    if let Some(first) = items.first().and_then(|i| first_sentence(i)) {
        let lines = pack(
            id,
            &[first, "more in `corescope report`".to_string()],
            width,
        );
        if lines.len() <= cap {
            return lines;
        }
    }
    pack(id, &["see `corescope report`".to_string()], width)
}

/// The text up to its first sentence or clause break (`. `, `; `, ` — `), when
/// it has one.
fn first_sentence(text: &str) -> Option<String> {
    let end = [". ", "; ", " — "]
        .iter()
        .filter_map(|sep| text.find(sep))
        .min()?;
    Some(text[..end].to_string())
}

/// `compute       item; item` with the items packed into lines of `width`
/// columns: an item starts a new line when it does not fit the current one, a
/// long item wraps with two more spaces of indent; every line after the first is
/// indented under the first item (the probe's id stands alone on the first line
/// when it is wider than the name column).
fn pack(id: &str, items: &[String], width: usize) -> Vec<String> {
    let room = width.saturating_sub(NAME_COLS);
    let len = |s: &str| textwrap::core::display_width(s);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (k, item) in items.iter().enumerate() {
        let text = if k + 1 < items.len() {
            format!("{item};")
        } else {
            item.clone()
        };
        let mut item_lines = wrap("", &text, HANG, room);
        if item_lines.len() == 1 && !cur.is_empty() && len(&cur) + 1 + len(&item_lines[0]) <= room {
            cur.push(' ');
            cur.push_str(&item_lines[0]);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        cur = item_lines.pop().unwrap_or_default();
        lines.extend(item_lines);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    let indent = " ".repeat(NAME_COLS);
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 1);
    let id_alone = len(id) >= NAME_COLS;
    if id_alone {
        out.extend(wrap("", id, HANG, width));
    }
    for (i, l) in lines.into_iter().enumerate() {
        out.push(if i == 0 && !id_alone {
            format!("{id:<w$}{l}", w = NAME_COLS)
        } else {
            format!("{indent}{l}")
        });
    }
    out
}

/// The warnings as blocks of wrapped lines: the count (or `no warnings`), the
/// machine's state when recorded, then each warning (noisy machine, intervals
/// still wide, then other notes), `! probe: text`.
fn warning_blocks(run: &RunFile, width: usize) -> Vec<Vec<String>> {
    let mut noisy = Vec::new();
    let mut wide = Vec::new();
    let mut notes = Vec::new();
    for p in &run.probes {
        for w in &p.warnings {
            let text = format!("{}: {}", p.id, super::words::warning(w));
            match w {
                // A migration during a pinned run is the machine moving threads.
                Warning::Noisy { .. } | Warning::Migrated { .. } => noisy.push(text),
                Warning::WideInterval { .. } => wide.push(text),
                Warning::Note { .. } => notes.push(text),
            }
        }
    }
    let total = noisy.len() + wide.len() + notes.len();
    let count = if total == 0 {
        "no warnings".to_string()
    } else {
        format!(
            "warnings: {total} ({} noisy machine, {} wide intervals, {} other; all in \
             `corescope report`)",
            noisy.len(),
            wide.len(),
            notes.len()
        )
    };
    let mut blocks = vec![wrap("", &count, HANG, width)];
    blocks.extend(state_line(run).map(|l| wrap("", &l, HANG, width)));
    blocks.extend(
        noisy
            .iter()
            .chain(&wide)
            .chain(&notes)
            .map(|t| wrap("! ", t, HANG, width)),
    );
    blocks
}

/// The first blocks of [`warning_blocks`] that fit `cap` lines, whole, and a line
/// counting the warnings left out; nothing when not even the count fits.
fn take_warnings(blocks: &[Vec<String>], cap: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // The count and the state are not warnings; the rest are, one block each.
    let fixed = blocks
        .len()
        .min(if blocks.len() > 1 && blocks[1][0].starts_with("machine") {
            2
        } else {
            1
        });
    for b in &blocks[..fixed] {
        if out.len() + b.len() <= cap {
            out.extend(b.iter().cloned());
        }
    }
    if out.is_empty() {
        return out;
    }
    let rest = &blocks[fixed..];
    for (k, b) in rest.iter().enumerate() {
        let left_after = rest.len() - k - 1;
        let tail = usize::from(left_after > 0);
        if out.len() + b.len() + tail > cap {
            if out.len() < cap {
                out.push(format!(
                    "+ {} more warnings in `corescope report`",
                    rest.len() - k
                ));
            }
            return out;
        }
        out.extend(b.iter().cloned());
    }
    out
}

/// One line on the machine's state over the run: how often the watched round trip
/// changed state during a group, how many points were state-dependent, and the
/// most the hypervisor stole and other programs used; `None` when nothing was
/// recorded (older run files, probes without groups).
fn state_line(run: &RunFile) -> Option<String> {
    let states: Vec<&crate::model::GroupState> =
        run.probes.iter().flat_map(|p| &p.machine_states).collect();
    if states.is_empty() {
        return None;
    }
    let moved = states.iter().filter(|s| s.round_trip_changed).count();
    let top = |get: fn(&crate::model::GroupState) -> Option<f64>| {
        states.iter().filter_map(|s| get(s)).fold(0.0f64, f64::max) * 100.0
    };
    let dependent: usize = run
        .probes
        .iter()
        .flat_map(|p| &p.series)
        .map(|s| s.states.iter().filter(|v| !v.is_empty()).count())
        .sum();
    let mut parts = Vec::new();
    let again = states.iter().filter(|s| s.measured_again).count();
    if let Some((lo, hi)) = crate::model::round_trip_span(states.iter().copied()) {
        parts.push(format!(
            "CPU round trip {lo:.0}–{hi:.0} ns, changed state during {moved} of {} group \
             measurements ({again} measured again, {} kept with the change)",
            states.len(),
            moved - again
        ));
    }
    parts.push(format!("{dependent} state-dependent points"));
    parts.push(format!(
        "other programs ≤ {:.0} % of the CPUs, steal ≤ {:.0} %",
        top(|s| s.others_cpu_fraction),
        top(|s| s.steal_fraction)
    ));
    Some(format!("machine: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Estimate, Finding, Outcome, Point, ProbeResult, RunFile, Status, Warning};

    fn fixture() -> RunFile {
        serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap()
    }

    /// Whitespace collapsed, so a wrapped text can be searched for an item.
    fn flat(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The summary at `width`: one screen, no line wider than `width`, none cut,
    /// every probe present, and every item either shown whole or counted.
    fn check(run: &RunFile, width: usize) -> Vec<String> {
        let lines = summary(run, width);
        let text = lines.join("\n");
        assert!(lines.len() <= MAX_LINES, "{} lines:\n{text}", lines.len());
        for l in &lines {
            assert!(
                l.chars().count() <= width,
                "wider than {width}: {l}\n{text}"
            );
            assert!(!l.contains('…'), "cut at {width}: {l}\n{text}");
        }
        let all = flat(&text);
        let shown = super::super::for_display(run);
        for p in &shown.probes {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("{} ", p.id)) || *l == p.id),
                "{} missing at width {width}:\n{text}",
                p.id
            );
            let items = probe_items(p, &shown);
            let whole = items.iter().filter(|i| all.contains(&flat(i))).count();
            assert!(
                whole == items.len() || all.contains("more in `corescope report`"),
                "{} of {} items of {} shown at {width}, the rest not counted:\n{text}",
                whole,
                items.len(),
                p.id
            );
        }
        lines
    }

    #[test]
    fn the_recorded_run_fits_80_and_100_columns_uncut() {
        let run = fixture();
        for width in [100, 80, 60, 40] {
            check(&run, width);
        }
        let text = check(&run, 80).join("\n");
        assert!(text.contains("1 pair of CPUs"), "{text}");
        assert!(!text.contains("1 CPU pairs"), "{text}");
    }

    #[test]
    fn many_probes_and_warnings_still_fit_one_screen() {
        let mut run = fixture();
        let base = run.probes.clone();
        for k in 0..3 {
            for p in &base {
                let mut q = p.clone();
                q.id = format!("{}-{k}", p.id);
                for i in 0..5 {
                    q.warnings.push(Warning::Noisy {
                        detail: format!("load {i} {}", "x".repeat(200)),
                    });
                }
                run.probes.push(q);
            }
        }
        let lines = check(&run, 100);
        assert!(lines.iter().any(|l| l.starts_with("warnings: ")));
        let lines = check(&run, 80);
        assert!(lines.iter().any(|l| l.contains("more warnings in")));
    }

    fn e(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 8,
        }
    }

    /// A run with typed results of every shape the summary words, long names and
    /// long warnings: what a default run of a larger machine gives.
    fn synthetic() -> RunFile {
        let mut run = fixture();
        let mut compute = ProbeResult::new("compute", "t", Status::Completed);
        for (placement, scale) in [("linear", 1.0), ("compact", 1.0), ("scatter", 0.5)] {
            for t in [1.0f64, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
                let y = 1e9 * scale * if t <= 16.0 { t } else { 16.0 - t / 64.0 };
                compute.push_point(Point::samples(
                    format!("int/{placement}"),
                    "threads",
                    t,
                    "ops_per_s",
                    vec![y, 1.1 * y, 0.9 * y],
                ));
            }
        }
        let mut threads = ProbeResult::new("threads", "t", Status::Completed);
        for w in [
            "same-cpu",
            "other-core",
            "smt-sibling",
            "other-package",
            "unpinned",
        ] {
            for (part, base) in [("call", 7000.0), ("start", 11000.0)] {
                let xs: Vec<f64> = (0..100).map(|i| base + f64::from(i)).collect();
                threads.distributions.push(crate::stats::distribution(
                    format!("create/joinable/{w}/{part}"),
                    "ns",
                    &xs,
                ));
            }
        }
        threads.findings.push(Finding::Comparison {
            what: "child start, by where the child runs".into(),
            unit: "ns".into(),
            a: "other-core".into(),
            a_value: e(11_440.0, 11_400.0, 11_500.0),
            b: "same-cpu".into(),
            b_value: e(11_000.0, 10_900.0, 11_100.0),
            ratio: e(1.04, 1.002, 1.06),
            significant: true,
            outcome: Outcome::Inconclusive,
            context: None,
        });
        let mut c2c = ProbeResult::new("c2c", "t", Status::Completed);
        c2c.findings.push(Finding::Value {
            what: "c2c/cas: 1 CPU pairs (same package)".into(),
            unit: "ns".into(),
            value: e(116.0, 110.0, 120.0),
            context: Some("0-1".into()),
        });
        let mut tune = ProbeResult::new("channel-tune-with-a-long-name", "t", Status::Completed);
        tune.findings.push(Finding::Note {
            text: format!(
                "the tuner picked batch 64; {}",
                "because of a reason ".repeat(12)
            ),
        });
        tune.warnings.push(Warning::Note {
            text: format!(
                "wake: median 150.0 ns {}",
                "is 15 steps of the timer ".repeat(6)
            ),
        });
        run.probes = vec![compute, threads, c2c, tune];
        run
    }

    #[test]
    fn a_larger_run_fits_80_and_100_columns_uncut_in_labelled_words() {
        let run = synthetic();
        for width in [100, 80] {
            let text = check(&run, width).join("\n");
            let all = flat(&text);
            assert!(
                all.contains(
                    "int peak 16.00 Gops/s ±10% with 16 threads (linear and compact alike)"
                ),
                "{text}"
            );
            assert!(
                all.contains("child on same-cpu: pthread_create returns in"),
                "{text}"
            );
            assert!(all.contains("1 pair of CPUs"), "{text}");
            assert!(all.contains("the tuner picked batch 64"), "{text}");
        }
    }

    #[test]
    fn scaling_families_show_each_placement_with_its_interval() {
        let mut run = fixture();
        let mut p = ProbeResult::new("compute", "t", Status::Completed);
        for (placement, scale) in [("linear", 1.0), ("scatter", 0.5)] {
            for t in [1.0, 2.0, 4.0] {
                p.push_point(Point::samples(
                    format!("int/{placement}"),
                    "threads",
                    t,
                    "ops_per_s",
                    vec![1e9 * t * scale, 1.1e9 * t * scale, 0.9e9 * t * scale],
                ));
            }
        }
        run.probes = vec![p];
        let text = flat(&check(&run, 100).join("\n"));
        assert!(
            text.contains("int peak 4.000 Gops/s ±10% with 4 threads (linear)"),
            "{text}"
        );
        assert!(
            text.contains("int peak 2.000 Gops/s ±10% with 4 threads (scatter)"),
            "{text}"
        );
    }

    /// Seed 001's Table 2 from one thread to the CPUs filled, with its source.
    #[test]
    fn seed_001_figures_name_their_source() {
        use crate::analysis::seed001::{cpi_series, efficiency_series, mips_series};
        let mut run = fixture();
        let cpus = run.topology.allowed_count() as f64;
        let mut p = ProbeResult::new("compute", "t", Status::Completed);
        p.params.insert("machine_max_mips".into(), 38400.0.into());
        for t in [1.0, cpus] {
            let mips = 1597.5 * t;
            for (name, unit, v) in [
                (
                    mips_series("int", "unbound"),
                    crate::counters::MIPS_FROM_COUNT,
                    mips,
                ),
                (
                    cpi_series("int", "unbound"),
                    crate::counters::CPI_FROM_COUNT,
                    0.75,
                ),
                (
                    efficiency_series("int", "unbound"),
                    crate::counters::PERCENT_OF_MAX_MIPS,
                    100.0 * mips / 38400.0,
                ),
            ] {
                p.push_point(Point::samples(name, "threads", t, unit, vec![v; 3]));
            }
        }
        run.probes = vec![p];
        let text = flat(&check(&run, 200).join("\n"));
        if cpus > 1.0 {
            assert!(
                text.contains("int seed 001 (unbound): 1598 → ")
                    && text.contains("efficiency 4.160 % → ")
                    && text.contains("(from the kernel's instruction count)"),
                "{text}"
            );
        }
    }

    #[test]
    fn saturation_is_said_in_words() {
        let mut run = fixture();
        let mut p = ProbeResult::new("compute", "t", Status::Completed);
        for t in [1.0, 2.0, 4.0] {
            let y = if t == 1.0 {
                1.5e9
            } else {
                2.997e9 - (4.0 - t) * 0.05e9
            };
            p.push_point(Point::samples(
                "int/linear",
                "threads",
                t,
                "ops_per_s",
                vec![y; 3],
            ));
        }
        run.probes = vec![p];
        let text = flat(&check(&run, 100).join("\n"));
        assert!(
            text.contains("int peak 2.997 Gops/s with 4 threads, 95 % of it already at 2 (linear)"),
            "{text}"
        );
    }
}
