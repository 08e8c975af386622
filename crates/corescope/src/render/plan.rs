//! Terminal tables of `corescope plan`: one row per probe with its cases and
//! estimated time, then (unless only the summary is asked for) every case.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

use crate::estimate::{CheckRow, PlanReport, ProbeEstimate};

/// Widest table we aim for.
const WIDTH: u16 = 110;

fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(WIDTH)
        .set_header(header.iter().map(Cell::new));
    t
}

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// Seconds as `42 s`, `3 min 20 s`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else {
        // Whole seconds first, so that 419.6 s reads 7 min 0 s, not 6 min 60 s.
        let whole = s.round() as u64;
        format!("{} min {} s", whole / 60, whole % 60)
    }
}

/// The thread counts of a probe's cases, `1–8` or `2`.
fn thread_range(p: &ProbeEstimate) -> String {
    let lo = p.cases.iter().map(|c| c.threads).min();
    let hi = p.cases.iter().map(|c| c.threads).max();
    match (lo, hi) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "-".into(),
    }
}

/// The summary table: probe, cases, groups, runs, threads, estimate, note.
pub fn summary(r: &PlanReport) -> String {
    let mut out = format!(
        "{}\nprofile: {}; {} CPUs allowed; calibration ({}): {:.2} ns per op, {:.2} ns per byte, {:.0} µs per thread, {:.0} ns round trip ({:.2} s)\n",
        crate::render::clean(&r.topology, 300, false),
        r.profile.name(),
        r.cpus,
        r.calibration.source,
        r.calibration.op_ns,
        r.calibration.byte_ns,
        r.calibration.spawn_ns / 1e3,
        r.calibration.round_trip_ns,
        r.calibration.calibration_s,
    );
    let mut t = new_table(&[
        "probe", "cases", "groups", "runs", "threads", "estimate", "note",
    ]);
    for p in &r.probes {
        let runs: f64 = p.cases.iter().map(|c| c.runs).sum();
        let mut note = Vec::new();
        if p.status != "planned" {
            note.push(format!(
                "{}: {}",
                p.status,
                p.reason.as_deref().unwrap_or("")
            ));
        }
        if p.capped {
            note.push(format!("stops at its budget ({})", duration(p.budget_s)));
        }
        if !p.modelled {
            note.push(format!(
                "no cost model: {} s per run assumed",
                crate::estimate::UNKNOWN_RUN_S
            ));
        }
        if let Some(s) = p.params.get("scaled_down").and_then(|v| v.as_str()) {
            note.push(s.to_string());
        }
        t.add_row(vec![
            Cell::new(&p.id),
            right(p.cases.len()),
            right(p.groups),
            right(format!("{runs:.0}")),
            right(thread_range(p)),
            right(duration(p.seconds)),
            Cell::new(crate::render::clean(&note.join("; "), 200, false)),
        ]);
    }
    t.add_row(vec![
        Cell::new("total"),
        right(r.probes.iter().map(|p| p.cases.len()).sum::<usize>()),
        right(r.probes.iter().map(|p| p.groups).sum::<usize>()),
        right(format!(
            "{:.0}",
            r.probes
                .iter()
                .flat_map(|p| p.cases.iter().map(|c| c.runs))
                .sum::<f64>()
        )),
        right(""),
        right(duration(r.total_s)),
        Cell::new("with start-up and the checks between probes"),
    ]);
    out.push_str(&t.to_string());
    out.push('\n');
    // The thinning rule, where a probe thinned its thread counts (numa and sharing
    // say their own rule in the note column).
    if r.probes.iter().any(|p| {
        p.params
            .get("scaled_down")
            .and_then(|v| v.as_str())
            .is_some_and(|s| s.starts_with("thinned"))
    }) {
        out.push_str(&format!(
            "thinned (default profile above {} CPUs): {}\n",
            crate::probes::THIN_ABOVE_CPUS,
            crate::probes::THINNED_RULE
        ));
    }
    out
}

/// Every case of every probe: label, threads, CPUs, sizes, runs, estimate.
pub fn cases(r: &PlanReport) -> String {
    let mut out = String::new();
    for p in r.probes.iter().filter(|p| !p.cases.is_empty()) {
        out.push_str(&format!(
            "\n{} — {} cases, {}\n",
            p.id,
            p.cases.len(),
            duration(p.seconds)
        ));
        let mut t = new_table(&["case", "threads", "CPUs", "size", "runs", "estimate"]);
        for c in &p.cases {
            t.add_row(vec![
                Cell::new(crate::render::clean(&c.label, 60, false)),
                right(c.threads),
                Cell::new(crate::render::clean(&c.cpus, 60, false)),
                Cell::new(crate::render::clean(&c.size, 60, false)),
                right(format!("{:.0}", c.runs)),
                right(duration(c.seconds)),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

/// A run file's recorded durations beside the estimate.
pub fn check(rows: &[CheckRow]) -> String {
    let mut t = new_table(&["probe", "estimate", "measured", "estimate ÷ measured"]);
    let (mut e, mut m) = (0.0, 0.0);
    for r in rows {
        e += r.estimated_s;
        m += r.measured_s;
        let ratio = if r.measured_s > 0.0 {
            format!("{:.2}", r.estimated_s / r.measured_s)
        } else {
            "-".into()
        };
        t.add_row(vec![
            Cell::new(&r.id),
            right(duration(r.estimated_s)),
            right(duration(r.measured_s)),
            right(ratio),
        ]);
    }
    let ratio = if m > 0.0 {
        format!("{:.2}", e / m)
    } else {
        "-".into()
    };
    t.add_row(vec![
        Cell::new("total"),
        right(duration(e)),
        right(duration(m)),
        right(ratio),
    ]);
    format!("{t}\n")
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_carry_whole_seconds_into_minutes() {
        assert_eq!(duration(419.6), "7 min 0 s");
        assert_eq!(duration(125.2), "2 min 5 s");
        assert_eq!(duration(119.4), "119 s");
        assert_eq!(duration(9.96), "10.0 s");
        assert_eq!(duration(f64::NAN), "-");
    }
}
