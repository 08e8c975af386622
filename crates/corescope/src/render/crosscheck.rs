//! `corescope crosscheck` for people: one row per measurement (both values, the ratio
//! with its interval, the verdict), then per row what differs in definition, the
//! command run, or how to install the missing tool. Terminal, Markdown (for
//! docs/verification.md) and an HTML section. Reads the model only.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, ContentArrangement, Table};
use std::fmt::Write as _;

use super::md;
use super::svg::esc;
use crate::model::{CrossCheck, CrossRow, Estimate, RowStatus};
use crate::units::{fmt_num, fmt_value};

/// Longest text of one cell (tool output can be long).
const MAX_CELL_CHARS: usize = 800;

fn clean(s: &str) -> String {
    super::clean(s, MAX_CELL_CHARS, false)
}

/// A value with its interval: `25.0 GB/s (24.1–25.9)`.
pub fn value(unit: &str, e: Option<&Estimate>) -> String {
    match e {
        Some(e) if e.n > 1 && e.hi > e.lo => format!(
            "{} ({}–{})",
            fmt_value(unit, e.value),
            fmt_value(unit, e.lo),
            fmt_value(unit, e.hi)
        ),
        Some(e) => fmt_value(unit, e.value),
        None => "-".into(),
    }
}

/// The ratio with its interval: `0.97 (0.95–0.99)`.
pub fn ratio(e: Option<&Estimate>) -> String {
    match e {
        Some(e) if e.n > 1 && e.hi > e.lo => {
            format!("{:.2} ({:.2}–{:.2})", e.value, e.lo, e.hi)
        }
        Some(e) => format!("{:.2}", e.value),
        None => "-".into(),
    }
}

/// The verdict, or the reason there is none.
fn state(r: &CrossRow) -> String {
    match (&r.status, r.verdict) {
        (RowStatus::Measured, Some(v)) => v.word().into(),
        (RowStatus::Measured, None) => "no rounds".into(),
        (RowStatus::NotInstalled { .. }, _) => "not installed".into(),
        (RowStatus::Skipped { .. }, _) => "skipped".into(),
        (RowStatus::Failed { .. }, Some(v)) => format!("{} (stopped early)", v.word()),
        (RowStatus::Failed { .. }, None) => "failed".into(),
    }
}

/// What a reader must know of a row besides its figures.
fn note(r: &CrossRow) -> String {
    match &r.status {
        RowStatus::NotInstalled { install } => format!("not installed: `{install}`"),
        RowStatus::Skipped { why } => format!("skipped: {why}"),
        RowStatus::Failed { why } => format!("failed: {why}"),
        RowStatus::Measured => r.definition.clone(),
    }
}

/// The rows as a table `width` columns wide, then each row's note and command.
pub fn table(cc: &CrossCheck, width: usize) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_header(
            ["measurement", "corescope", "tool", "ratio", "verdict"]
                .into_iter()
                .map(Cell::new),
        );
    for r in &cc.rows {
        t.add_row(vec![
            Cell::new(format!("{}\n{}", clean(&r.what), clean(&r.tool))),
            Cell::new(value(&r.unit, r.ours_estimate.as_ref())),
            Cell::new(value(&r.unit, r.theirs_estimate.as_ref())),
            Cell::new(ratio(r.ratio.as_ref())),
            Cell::new(state(r)),
        ]);
    }
    let mut o = format!("{t}\n");
    let _ = writeln!(
        o,
        "ratio = corescope ÷ tool, the median of {} interleaved rounds with its 95 % interval; \
         agrees: the median lies in {}–{}; differs: the whole interval lies outside",
        cc.rounds,
        fmt_num(cc.band.0),
        fmt_num(cc.band.1)
    );
    for r in &cc.rows {
        let _ = writeln!(o, "\n{} ({}): {}", r.id, r.tool, clean(&note(r)));
        if !r.command.is_empty() {
            let _ = writeln!(o, "  ran: {}", clean(&r.command));
        }
        if let Some(v) = &r.tool_version {
            let _ = writeln!(o, "  version: {}", clean(v));
        }
    }
    o
}

/// The rows as a Markdown table, for docs/verification.md.
pub fn markdown(cc: &CrossCheck) -> String {
    let mut o = String::from(
        "| measurement | counterpart | corescope | tool | ratio (95 % interval) | verdict |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in &cc.rows {
        let counterpart = match &r.tool_version {
            Some(v) if v.len() < 20 => format!("{} {v}", r.tool),
            _ => r.tool.clone(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            md(&r.what),
            md(&counterpart),
            md(&value(&r.unit, r.ours_estimate.as_ref())),
            md(&value(&r.unit, r.theirs_estimate.as_ref())),
            md(&ratio(r.ratio.as_ref())),
            md(&state(r)),
        );
    }
    o
}

/// The rows as an HTML section.
pub fn html(cc: &CrossCheck) -> String {
    let mut o = String::from(
        "<section id='crosscheck'><h2>Cross-check against established tools</h2>\
         <table><tr><th>measurement</th><th>counterpart</th><th>corescope</th><th>tool</th>\
         <th>ratio</th><th>verdict</th><th>definition, or why not measured</th></tr>",
    );
    for r in &cc.rows {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.what),
            esc(&r.tool),
            esc(&value(&r.unit, r.ours_estimate.as_ref())),
            esc(&value(&r.unit, r.theirs_estimate.as_ref())),
            esc(&ratio(r.ratio.as_ref())),
            esc(&state(r)),
            esc(&clean(&note(r))),
        );
    }
    let _ = write!(
        o,
        "</table><p>ratio = corescope ÷ tool, the median of {} interleaved rounds with its 95 % interval.</p></section>",
        cc.rounds
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Agreement;

    fn rows() -> CrossCheck {
        let base = CrossRow {
            id: "memory/read/1".into(),
            what: "memory read, 1 thread".into(),
            tool: "likwid-bench load_avx".into(),
            tool_version: Some("5.2.2".into()),
            unit: "bytes_per_s".into(),
            command: "likwid-bench -t load_avx -w S0:134218kB:1".into(),
            definition: "both read every word".into(),
            status: RowStatus::Measured,
            ours: vec![20e9; 6],
            theirs: vec![21e9; 6],
            ours_estimate: Some(Estimate {
                value: 20e9,
                lo: 19e9,
                hi: 21e9,
                n: 6,
            }),
            theirs_estimate: Some(Estimate {
                value: 21e9,
                lo: 20e9,
                hi: 22e9,
                n: 6,
            }),
            ratio: Some(Estimate {
                value: 0.952,
                lo: 0.94,
                hi: 0.97,
                n: 6,
            }),
            verdict: Some(Agreement::Agrees),
        };
        let missing = CrossRow {
            id: "mutex/wake/same-cpu".into(),
            tool: "rt-tests ptsematest -t 1".into(),
            status: RowStatus::NotInstalled {
                install: "apt-get install rt-tests".into(),
            },
            ours: vec![],
            theirs: vec![],
            ours_estimate: None,
            theirs_estimate: None,
            ratio: None,
            verdict: None,
            command: String::new(),
            ..base.clone()
        };
        CrossCheck {
            rounds: 6,
            band: (0.95, 1.05),
            rows: vec![base, missing],
        }
    }

    #[test]
    fn every_row_is_one_line_of_the_table_with_its_ratio_or_its_install_command() {
        let cc = rows();
        let t = table(&cc, 120);
        assert!(t.contains("0.95 (0.94–0.97)"), "{t}");
        assert!(t.contains("agrees"), "{t}");
        assert!(t.contains("apt-get install rt-tests"), "{t}");
        assert!(t.contains("not installed"), "{t}");
        let m = markdown(&cc);
        assert_eq!(m.lines().count(), 2 + cc.rows.len(), "{m}");
        assert!(m.contains("likwid-bench load\\_avx 5.2.2"), "{m}");
        let h = html(&cc);
        assert!(
            h.contains("<section id='crosscheck'>") && h.contains("rt-tests"),
            "{h}"
        );
    }
}
