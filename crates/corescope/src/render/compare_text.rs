//! `corescope compare` in the terminal: the machines, how far the runs agree, then
//! per probe the differing parameters, each run's findings and the series,
//! distributions, matrices and free tables side by side.

use super::compare_first::{first_screen, RULE};
use super::compare_view::{
    agreement_lines, cell_stats, cycles, machine_rows, machines, peak_line, prepared, ratio_of,
    shown_tables, Machine, OVERLAP_MARK, OVERLAP_NOTE,
};
use crate::compare::{self, model, param_mismatches};
use crate::model::{Estimate, ProbeResult, RunFile, Series, Status};
use crate::render::terminal::{estimates_by_x, interval_note, plus_minus, wrap, wrapped};
use crate::render::{fmt_num, fmt_value, fmt_x, table_axes, words};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::fmt::Write;

/// A table laid out for `width` columns.
fn new_table(width: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX));
    t
}

/// `text` wrapped to `width` after `first`, further lines indented by `indent`.
fn line(o: &mut String, first: &str, text: &str, indent: usize, width: usize) {
    o.push_str(&wrapped(first, text, indent, width));
}

/// Each run's findings, worded (`render::words`), one list per machine.
fn findings_text(o: &mut String, probes: &[Option<&ProbeResult>], ms: &[Machine], width: usize) {
    for (m, p) in ms.iter().zip(probes) {
        let Some(p) = p.filter(|p| !p.findings.is_empty()) else {
            continue;
        };
        line(o, "  ", &format!("findings on {}:", m.label), 4, width);
        for f in &p.findings {
            line(o, "   • ", &words::finding(f), 5, width);
        }
    }
}

/// One series across the runs as a terminal table: each run's value with its
/// interval, each run against the first, and what the marks mean.
fn series_text(o: &mut String, name: &str, ss: &[Option<&Series>], ms: &[Machine], width: usize) {
    let Some(first) = ss.iter().flatten().next() else {
        return;
    };
    let present: Vec<&Series> = ss.iter().flatten().copied().collect();
    let (xs, scale, unit) = table_axes(&present);
    let mut t = new_table(width);
    let mut head = vec![Cell::new(&first.x_name)];
    head.extend(ms.iter().map(|m| Cell::new(&m.label)));
    head.extend(
        ms.iter()
            .skip(1)
            .map(|m| Cell::new(format!("{}/{}", m.label, ms[0].label))),
    );
    t.set_header(head);
    let lookups: Vec<_> = ss.iter().map(|s| s.map(estimates_by_x)).collect();
    let mut overlap = false;
    let shown = crate::render::rows_shown(xs.len());
    for &x in &xs[..shown] {
        let key = crate::render::x_key(x);
        let vals: Vec<Option<&Estimate>> = lookups
            .iter()
            .map(|m| m.as_ref().and_then(|m| m.get(&key)))
            .collect();
        let mut row = vec![Cell::new(fmt_x(&first.x_name, x))];
        row.extend(vals.iter().map(|v| {
            Cell::new(
                v.map(|e| words::cell(e.value, scale, Some(e)))
                    .unwrap_or_else(|| "-".into()),
            )
            .set_alignment(CellAlignment::Right)
        }));
        for v in vals.iter().skip(1) {
            let r = ratio_of(vals[0], *v);
            overlap |= r.ends_with(OVERLAP_MARK);
            row.push(Cell::new(r).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    let note = interval_note(lookups.iter().flatten().flat_map(|m| m.values()));
    line(o, "", &format!("{name} ({unit})"), 2, width);
    let _ = writeln!(o, "{t}");
    let left_out = crate::render::rows_left_out(shown, xs.len());
    for l in left_out
        .iter()
        .chain(&note)
        .map(String::as_str)
        .chain(overlap.then_some(OVERLAP_NOTE))
    {
        line(o, "  ", l, 4, width);
    }
    if let Some(l) = peak_line(ss, ms, &first.y_name) {
        line(o, "  ", &l, 4, width);
    }
}

/// Lines of the first screen at most (items wrapped to the width).
const FIRST_SCREEN_LINES: usize = 15;

/// The first screen: per run after the first, its differences beyond the noise
/// against the first, the largest first, as many as fit in [`FIRST_SCREEN_LINES`],
/// every line at most `width` columns.
fn first_screen_text(o: &mut String, ms: &[Machine], only: Option<&[String]>, width: usize) {
    let blocks = first_screen(ms, only);
    let mut any = false;
    for b in &blocks {
        let mut used = 0;
        if let Some(c) = &b.clock {
            let before = o.len();
            line(o, "", c, 0, width);
            used += o[before..].lines().count();
        }
        line(o, "", &b.head, 2, width);
        for (k, (probe, text)) in b.items.iter().enumerate() {
            let lines = wrap(
                &format!("  {}. ", k + 1),
                &format!("{probe} {text}"),
                6,
                width,
            );
            if used + lines.len() > FIRST_SCREEN_LINES && k > 0 {
                let more = format!("… and {} more in the tables below", b.items.len() - k);
                line(o, "  ", &more, 4, width);
                break;
            }
            used += lines.len();
            for l in lines {
                let _ = writeln!(o, "{l}");
            }
        }
        if let Some(n) = &b.note {
            line(o, "  ", &format!("({n})"), 3, width);
        }
        any |= !b.items.is_empty();
    }
    if any {
        line(o, "", RULE, 0, width);
    }
    if !blocks.is_empty() {
        o.push('\n');
    }
}

/// The machines table, what the ratios and cycles are, and how far the runs agree.
fn machines_text(o: &mut String, raw_runs: &[RunFile], ms: &[Machine], width: usize) {
    let mut t = new_table(width);
    let mut head = vec![Cell::new("")];
    head.extend(ms.iter().map(|m| Cell::new(&m.label)));
    t.set_header(head);
    for (k, f) in machine_rows() {
        let mut row = vec![Cell::new(k)];
        row.extend(ms.iter().map(|m| Cell::new(f(m))));
        t.add_row(row);
    }
    let _ = writeln!(o, "Machines\n{t}");
    let ratios = format!(
        "Ratios are each machine against the first ({}). Per-CPU views divide by the CPUs a run \
         could use; cycles use each run's measured core clock (one thread busy), else its \
         nominal clock, else its timer's.",
        ms.first().map(|m| m.label.as_str()).unwrap_or("-")
    );
    line(o, "", &ratios, 0, width);
    for l in agreement_lines(raw_runs, ms) {
        line(o, "", &l, 2, width);
    }
}

/// The comparison as terminal tables, laid out for
/// [`DEFAULT_WIDTH`](crate::render::terminal::DEFAULT_WIDTH) columns (what
/// `corescope compare` prints when its output is not a terminal).
pub fn render_text(runs: &[RunFile], only: Option<&[String]>) -> String {
    render_text_width(
        runs,
        only,
        usize::from(crate::render::terminal::DEFAULT_WIDTH),
    )
}

/// The comparison as terminal tables, every heading and note wrapped to `width`
/// columns (at least 40) and the tables laid out for it (`compare --width`).
pub fn render_text_width(runs: &[RunFile], only: Option<&[String]>, width: usize) -> String {
    let width = width.max(40);
    let raw_runs = runs;
    let (shown, only) = prepared(runs, only);
    let runs = shown.as_slice();
    let only = only.as_deref();
    let ms = machines(runs);
    let mut o = String::new();
    first_screen_text(&mut o, &ms, only, width);
    machines_text(&mut o, raw_runs, &ms, width);
    for id in compare::probe_ids(runs, only) {
        let probes: Vec<Option<&ProbeResult>> = runs
            .iter()
            .map(|r| r.probes.iter().find(|p| p.id == id))
            .collect();
        o.push('\n');
        line(&mut o, "== ", &id, 3, width);
        let status: Vec<String> = probes
            .iter()
            .map(|p| match p {
                Some(p) if p.status == Status::Completed => "completed".to_string(),
                Some(p) => format!(
                    "{}: {}",
                    p.status.name().replace('_', " "),
                    p.reason.as_deref().unwrap_or("")
                ),
                None => "not in this run".into(),
            })
            .collect();
        if status.iter().any(|s| s != "completed") {
            for (m, s) in ms.iter().zip(&status) {
                line(&mut o, "  ", &format!("{}: {s}", m.label), 4, width);
            }
        }
        let mism = param_mismatches(&probes);
        if !mism.is_empty() {
            let mut t = new_table(width);
            let mut head = vec![Cell::new("parameter differs")];
            head.extend(ms.iter().map(|m| Cell::new(&m.label)));
            t.set_header(head);
            for (k, vals) in &mism {
                let mut row = vec![Cell::new(k)];
                row.extend(vals.iter().map(Cell::new));
                t.add_row(row);
            }
            let _ = writeln!(o, "{t}");
        }
        findings_text(&mut o, &probes, &ms, width);
        let index = compare::series_index(&probes);
        for name in compare::series_names(&probes) {
            let ss: Vec<Option<&Series>> = index
                .iter()
                .map(|m| m.get(name.as_str()).copied())
                .collect();
            series_text(&mut o, &name, &ss, &ms, width);
        }
        distributions_text(&mut o, &probes, &ms, width);
        for m in model::matrices(&probes) {
            matrix_text(&mut o, &m, &ms, width);
        }
        for t in shown_tables(raw_runs, runs, &id) {
            table_text(&mut o, &t, &ms, width);
        }
    }
    o
}

/// A matrix across the runs in the terminal: each machine's median cell and
/// range, and its median ratio to the first machine.
fn matrix_text(o: &mut String, m: &model::MatrixComparison, ms: &[Machine], width: usize) {
    line(o, "", &format!("matrix {} ({}):", m.name, m.unit), 2, width);
    for (k, mach) in ms.iter().enumerate() {
        let Some((lo, med, hi)) = m.per_machine[k].as_ref().and_then(cell_stats) else {
            line(o, "  ", &format!("{}: -", mach.label), 4, width);
            continue;
        };
        let ratio = m.ratios[k]
            .as_ref()
            .and_then(cell_stats)
            .map(|(a, r, b)| format!("; vs {}: median {r:.2}× ({a:.2}–{b:.2}×)", ms[0].label))
            .unwrap_or_default();
        let text = format!(
            "{}: median {} (range {}–{}){ratio}",
            mach.label,
            fmt_value(&m.unit, med),
            fmt_value(&m.unit, lo),
            fmt_value(&m.unit, hi)
        );
        line(o, "  ", &text, 4, width);
    }
}

/// A free table across the runs in the terminal: one row per key and machine
/// (the machines of a key next to each other), the table's own columns.
fn table_text(o: &mut String, t: &model::TableComparison, ms: &[Machine], width: usize) {
    let mut tt = new_table(width);
    let kinds: Vec<_> = t
        .columns
        .iter()
        .map(|c| crate::render::html::column_kind(c))
        .collect();
    let mut head = vec![
        Cell::new(crate::render::html::column_kind(&t.key_column).0),
        Cell::new("machine"),
    ];
    head.extend(kinds.iter().map(|(h, _)| Cell::new(h)));
    tt.set_header(head);
    let shown = crate::render::rows_shown(t.rows.len());
    for r in &t.rows[..shown] {
        for (m, cells) in ms.iter().zip(&r.cells) {
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![Cell::new(&r.key), Cell::new(&m.label)];
            row.extend(cells.iter().zip(&kinds).map(|(v, (_, kind))| {
                Cell::new(
                    v.as_ref()
                        .map(|v| crate::render::html::cell_text(v, *kind))
                        .unwrap_or_else(|| "-".into()),
                )
                .set_alignment(CellAlignment::Right)
            }));
            tt.add_row(row);
        }
    }
    line(o, "", &t.name, 2, width);
    let _ = writeln!(o, "{tt}");
    if let Some(l) = crate::render::rows_left_out(shown, t.keys_total) {
        line(o, "  ", &l, 4, width);
    }
}

/// The distributions of one probe across the runs: p50 (with its interval where
/// wider than 1 %) and p99 per run, and the p50 ratios against the first run.
fn distributions_text(
    o: &mut String,
    probes: &[Option<&ProbeResult>],
    ms: &[Machine],
    width: usize,
) {
    let dn = compare::dist_names(probes);
    if dn.is_empty() {
        return;
    }
    let dindex = compare::dist_index(probes);
    let mut t = new_table(width);
    let mut head = vec![Cell::new("distribution (p50 / p99)")];
    head.extend(ms.iter().map(|m| Cell::new(&m.label)));
    if ms.len() > 1 {
        head.push(Cell::new("p50 ratio"));
    }
    t.set_header(head);
    let (mut shown, mut overlap) = (false, false);
    for name in dn {
        let ds: Vec<_> = dindex
            .iter()
            .map(|m| m.get(name.as_str()).copied())
            .collect();
        let mut row = vec![Cell::new(&name)];
        for (d, m) in ds.iter().zip(ms) {
            row.push(Cell::new(match d {
                Some(d) => {
                    let pm = plus_minus(&d.summary.median());
                    shown |= !pm.is_empty();
                    let mut s = format!(
                        "{}{pm} / {}",
                        fmt_value(&d.unit, d.summary.p50),
                        fmt_value(&d.unit, d.summary.p99)
                    );
                    if let Some(c) = cycles(&d.unit, d.summary.p50, m) {
                        let _ = write!(s, " ({} cyc)", fmt_num(c));
                    }
                    s
                }
                None => "-".into(),
            }));
        }
        if ms.len() > 1 {
            let p50: Vec<Option<Estimate>> =
                ds.iter().map(|d| d.map(|d| d.summary.median())).collect();
            let ratios: Vec<String> = p50
                .iter()
                .skip(1)
                .map(|v| ratio_of(p50[0].as_ref(), v.as_ref()))
                .collect();
            overlap |= ratios.iter().any(|r| r.ends_with(OVERLAP_MARK));
            row.push(Cell::new(ratios.join(" ")));
        }
        t.add_row(row);
    }
    let _ = writeln!(o, "{t}");
    if shown {
        line(o, "  ", "± on p50 = 95 % CI of the median", 4, width);
    }
    if overlap {
        line(o, "  ", OVERLAP_NOTE, 4, width);
    }
}
