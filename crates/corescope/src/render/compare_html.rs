//! `corescope compare --html`: one self-contained page with the machines, how far
//! the runs agree, then per probe overlaid curves, CDFs, heat maps and tables.

use super::compare_first::{first_screen, RULE};
use super::compare_view::{
    agreement_lines, cell_stats, cycles, is_rate, machine_rows, machines, per_cpu, prepared,
    ratio_of, shown_tables, Machine, OVERLAP_MARK, OVERLAP_NOTE,
};
use crate::compare::{self, model, param_mismatches};
use crate::model::{Estimate, ProbeResult, RunFile, Series};
use crate::render::html::STYLE;
use crate::render::svg::{self, esc};
use crate::render::terminal::{estimates_by_x, interval_note, plus_minus};
use crate::render::{fmt_num, fmt_value, fmt_x, table_axes, words};
use std::fmt::Write;

/// Differences listed on the first screen at most; the rest are below.
const FIRST_SCREEN_ITEMS: usize = 15;

/// The first screen: per run after the first, its differences beyond the noise
/// against the first, the largest first, each linked to its probe's section.
fn first_screen_html(o: &mut String, ms: &[Machine], only: Option<&[String]>) {
    let blocks = first_screen(ms, only);
    if blocks.is_empty() {
        return;
    }
    o.push_str("<section id='differences'><h2>Differences beyond the noise</h2>");
    for b in &blocks {
        if let Some(c) = &b.clock {
            let _ = write!(o, "<p class='note'>{}</p>", esc(c));
        }
        let _ = write!(o, "<p>{}</p>", esc(&b.head));
        if !b.items.is_empty() {
            o.push_str("<ol class='differences'>");
            for (probe, text) in b.items.iter().take(FIRST_SCREEN_ITEMS) {
                let _ = write!(
                    o,
                    "<li><a href='#{p}'>{p}</a> {}</li>",
                    esc(text),
                    p = esc(probe)
                );
            }
            o.push_str("</ol>");
        }
        if let Some(more) = b
            .items
            .len()
            .checked_sub(FIRST_SCREEN_ITEMS)
            .filter(|k| *k > 0)
        {
            let _ = write!(o, "<p>… and {more} more in the sections below.</p>");
        }
        if let Some(n) = &b.note {
            let _ = write!(o, "<p>({})</p>", esc(n));
        }
    }
    if blocks.iter().any(|b| !b.items.is_empty()) {
        let _ = write!(o, "<p class='note'>{}</p>", esc(RULE));
    }
    o.push_str("</section>");
}

/// The machines table, what the ratios and cycles are, and how far the runs agree.
fn machines_html(o: &mut String, raw_runs: &[RunFile], ms: &[Machine]) {
    o.push_str("<section id='machines'><h2>Machines</h2><div class='scroll'><table><tr><th></th>");
    for m in ms {
        let _ = write!(o, "<th>{}</th>", esc(&m.label));
    }
    o.push_str("</tr>");
    for (k, f) in machine_rows() {
        let _ = write!(o, "<tr><th>{}</th>", esc(k));
        for m in ms {
            let _ = write!(o, "<td>{}</td>", esc(&f(m)));
        }
        o.push_str("</tr>");
    }
    let _ = write!(
        o,
        "</table></div><p>Ratios: each machine against the first ({}). Per-CPU: divided by the CPUs the run could use. Cycles: each run's measured core clock (one thread busy), else its nominal clock, else its timer's.</p></section>",
        esc(ms.first().map(|m| m.label.as_str()).unwrap_or("-"))
    );
    for line in agreement_lines(raw_runs, ms) {
        let _ = write!(o, "<p class='agreement'>{}</p>", esc(&line));
    }
}

/// The comparison as one self-contained HTML page: machine table, then per
/// probe the differing parameters, overlaid curves (one colour per machine,
/// raw and normalised) with their tables, and distribution percentiles.
pub fn render_html(runs: &[RunFile], only: Option<&[String]>) -> String {
    let raw_runs = runs;
    let (shown, only) = prepared(runs, only);
    let runs = shown.as_slice();
    let only = only.as_deref();
    let ms = machines(runs);
    let names: Vec<&str> = ms.iter().map(|m| m.label.as_str()).collect();
    let title = format!("corescope comparison — {}", names.join(" vs "));
    let mut o = format!(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>",
        t = esc(&title)
    );
    first_screen_html(&mut o, &ms, only);
    machines_html(&mut o, raw_runs, &ms);
    for id in compare::probe_ids(runs, only) {
        let probes: Vec<Option<&ProbeResult>> = runs
            .iter()
            .map(|r| r.probes.iter().find(|p| p.id == id))
            .collect();
        let _ = write!(o, "<section id='{i}'><h2>{i}</h2><p>", i = esc(&id));
        for (m, p) in ms.iter().zip(&probes) {
            let (cls, text) = match p {
                Some(p) => (p.status.name(), p.status.name().replace('_', " ")),
                None => ("skipped", "not in this run".to_string()),
            };
            let _ = write!(
                o,
                "{} <span class='badge {cls}'>{}</span> ",
                esc(&m.label),
                esc(&text)
            );
            if let Some(r) = p.and_then(|p| p.reason.as_deref()) {
                let _ = write!(o, "<span class='warn'>({})</span> ", esc(r));
            }
        }
        o.push_str("</p>");
        let mism = param_mismatches(&probes);
        if !mism.is_empty() {
            o.push_str("<div class='scroll'><table><tr><th>parameter differs</th>");
            for m in &ms {
                let _ = write!(o, "<th>{}</th>", esc(&m.label));
            }
            o.push_str("</tr>");
            for (k, vals) in &mism {
                let _ = write!(o, "<tr><td>{}</td>", esc(k));
                for v in vals {
                    let _ = write!(o, "<td>{}</td>", esc(v));
                }
                o.push_str("</tr>");
            }
            o.push_str("</table></div>");
        }
        findings_html(&mut o, &probes, &ms);
        let index = compare::series_index(&probes);
        for name in compare::series_names(&probes) {
            let ss: Vec<Option<&Series>> = index
                .iter()
                .map(|m| m.get(name.as_str()).copied())
                .collect();
            series_html(&mut o, &name, &ss, &ms);
        }
        distributions_html(&mut o, &probes, &ms);
        cdfs_html(&mut o, &model::distributions(&probes), &ms);
        for m in model::matrices(&probes) {
            matrix_html(&mut o, &m, &ms);
        }
        for t in shown_tables(raw_runs, runs, &id) {
            table_html(&mut o, &t, &ms);
        }
        o.push_str("</section>");
    }
    o.push_str(crate::render::html::SCRIPT);
    o.push_str("</body></html>");
    o
}

/// Each run's findings in HTML, worded (`render::words`), one list per machine.
fn findings_html(o: &mut String, probes: &[Option<&ProbeResult>], ms: &[Machine]) {
    for (m, p) in ms.iter().zip(probes) {
        let Some(p) = p.filter(|p| !p.findings.is_empty()) else {
            continue;
        };
        let _ = write!(
            o,
            "<p>Findings on {}:</p><ul class='findings'>",
            esc(&m.label)
        );
        for f in &p.findings {
            let _ = write!(o, "<li>{}</li>", esc(&words::finding(f)));
        }
        o.push_str("</ul>");
    }
}

/// One series across the runs in HTML: overlaid curves (with each run's
/// intervals where it has them), the per-CPU view of rates, and the table.
fn series_html(o: &mut String, name: &str, ss: &[Option<&Series>], ms: &[Machine]) {
    let Some(first) = ss.iter().flatten().next() else {
        return;
    };
    let curves: Vec<svg::Curve> = ss
        .iter()
        .zip(ms)
        .filter_map(|(s, m)| s.map(|s| svg::Curve::of_series(m.label.clone(), s)))
        .collect();
    let ci = if curves.iter().any(svg::Curve::has_intervals) {
        "; bars and band: each run's 95 % CI of the median"
    } else {
        ""
    };
    let _ = write!(
        o,
        "<figure>{}<figcaption>{}{ci}</figcaption></figure>",
        svg::chart(name, &first.x_name, &first.y_name, &curves),
        esc(name)
    );
    if is_rate(&first.y_name) {
        let per: Vec<svg::Curve> = curves
            .iter()
            .zip(ss.iter().zip(ms).filter(|(s, _)| s.is_some()))
            .map(|(c, (_, m))| c.clone().scaled(per_cpu(1.0, m)))
            .collect();
        let _ = write!(
            o,
            "<details><summary>per CPU</summary><figure>{}<figcaption>{} divided by each machine's CPUs</figcaption></figure></details>",
            svg::chart(&format!("{name} per CPU"), &first.x_name, &first.y_name, &per),
            esc(name)
        );
    }
    let present: Vec<&Series> = ss.iter().flatten().copied().collect();
    let (xs, scale, unit) = table_axes(&present);
    let lookups: Vec<_> = ss.iter().map(|s| s.map(estimates_by_x)).collect();
    let note = interval_note(lookups.iter().flatten().flat_map(|m| m.values()))
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    let _ = write!(
        o,
        "<details><summary>table ({}{})</summary><div class='scroll'><table><tr><th>{}</th>",
        esc(&unit),
        esc(&note),
        esc(&first.x_name)
    );
    for m in ms {
        let _ = write!(o, "<th>{}</th>", esc(&m.label));
    }
    for m in ms.iter().skip(1) {
        let _ = write!(o, "<th>{}/{}</th>", esc(&m.label), esc(&ms[0].label));
    }
    o.push_str("</tr>");
    let mut overlap = false;
    let shown = crate::render::rows_shown(xs.len());
    for &x in &xs[..shown] {
        let key = crate::render::x_key(x);
        let vals: Vec<Option<&Estimate>> = lookups
            .iter()
            .map(|m| m.as_ref().and_then(|m| m.get(&key)))
            .collect();
        let _ = write!(o, "<tr><td>{}</td>", esc(&fmt_x(&first.x_name, x)));
        for v in &vals {
            let cell = v
                .map(|e| words::cell(e.value, scale, Some(e)))
                .unwrap_or_else(|| "-".into());
            let _ = write!(o, "<td>{}</td>", esc(&cell));
        }
        for v in vals.iter().skip(1) {
            let r = ratio_of(vals[0], *v);
            overlap |= r.ends_with(OVERLAP_MARK);
            let _ = write!(o, "<td>{}</td>", esc(&r));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    crate::render::html::left_out(o, shown, xs.len());
    if overlap {
        let _ = write!(o, "<p>{}</p>", esc(OVERLAP_NOTE));
    }
    o.push_str("</details>");
}

/// The distributions of one probe across the runs in HTML: p50 (with its
/// interval where wider than 1 %), p99 and p50 in cycles per run.
fn distributions_html(o: &mut String, probes: &[Option<&ProbeResult>], ms: &[Machine]) {
    let dn = compare::dist_names(probes);
    if dn.is_empty() {
        return;
    }
    let dindex = compare::dist_index(probes);
    o.push_str("<div class='scroll'><table><tr><th>distribution</th>");
    for m in ms {
        let _ = write!(
            o,
            "<th>{} p50</th><th>{} p99</th><th>{} p50 cycles</th>",
            esc(&m.label),
            esc(&m.label),
            esc(&m.label)
        );
    }
    o.push_str("</tr>");
    let mut shown = false;
    for name in dn {
        let _ = write!(o, "<tr><td>{}</td>", esc(&name));
        for (d, m) in dindex.iter().zip(ms) {
            match d.get(name.as_str()) {
                Some(d) => {
                    let cyc = cycles(&d.unit, d.summary.p50, m)
                        .map(fmt_num)
                        .unwrap_or_else(|| "-".into());
                    let pm = plus_minus(&d.summary.median());
                    shown |= !pm.is_empty();
                    let _ = write!(
                        o,
                        "<td>{}{}</td><td>{}</td><td>{}</td>",
                        esc(&fmt_value(&d.unit, d.summary.p50)),
                        esc(&pm),
                        esc(&fmt_value(&d.unit, d.summary.p99)),
                        esc(&cyc)
                    );
                }
                None => o.push_str("<td>-</td><td>-</td><td>-</td>"),
            }
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    if shown {
        o.push_str("<p>± on p50: 95 % CI of the median.</p>");
    }
}

/// Each distribution's CDF per machine, overlaid (identical runs are nudged
/// apart and say so in the legend); several distributions side by side.
fn cdfs_html(o: &mut String, ds: &[model::DistributionComparison], ms: &[Machine]) {
    if ds.is_empty() {
        return;
    }
    o.push_str("<div class='side'>");
    for d in ds {
        let curves: Vec<svg::Curve> = d
            .cdfs
            .iter()
            .zip(ms)
            .filter_map(|(c, m)| {
                let c = c.as_ref()?;
                Some(svg::Curve::new(
                    m.label.clone(),
                    c.iter().map(|p| p.0).collect(),
                    c.iter().map(|p| p.1).collect(),
                ))
            })
            .collect();
        let _ = write!(
            o,
            "<figure>{}<figcaption>{}: cumulative distribution per machine, to the 99.9th percentile (fraction of samples at or below a value)</figcaption></figure>",
            svg::chart(&format!("{} CDF", d.name), &d.unit, "fraction_of_samples", &curves),
            esc(&d.name)
        );
    }
    o.push_str("</div>");
}

/// A matrix across the runs: each machine's heat map side by side, then each
/// machine's ratio to the first as a heat map on a diverging scale around 1.
fn matrix_html(o: &mut String, m: &model::MatrixComparison, ms: &[Machine]) {
    let _ = write!(
        o,
        "<h3>{} ({})</h3><div class='side'>",
        esc(&m.name),
        esc(&m.unit)
    );
    // One colour scale for every machine's map.
    let range = m.per_machine.iter().flatten().filter_map(cell_stats).fold(
        None,
        |acc: Option<(f64, f64)>, (lo, _, hi)| {
            Some(acc.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))))
        },
    );
    for (v, mach) in m.per_machine.iter().zip(ms) {
        if let Some(v) = v {
            let _ = write!(
                o,
                "<figure>{}<figcaption>{} on {} (one colour scale for all machines)</figcaption></figure>",
                super::heatmap::heatmap_in(
                    &format!("{} on {}", m.name, mach.label),
                    &m.unit,
                    &m.rows,
                    &m.cols,
                    v,
                    svg::ColourScale::Sequential,
                    range
                ),
                esc(&m.name),
                esc(&mach.label)
            );
        }
    }
    for (r, mach) in m.ratios.iter().zip(ms) {
        if let Some(r) = r {
            let _ = write!(
                o,
                "<figure>{}<figcaption>{}: {} ÷ {} per cell (red: larger on {}, blue: smaller)</figcaption></figure>",
                super::heatmap::heatmap_with(
                    &format!("{} ratio {}/{}", m.name, mach.label, ms[0].label),
                    "ratio",
                    &m.rows,
                    &m.cols,
                    r,
                    svg::ColourScale::Ratio
                ),
                esc(&m.name),
                esc(&mach.label),
                esc(&ms[0].label),
                esc(&mach.label)
            );
        }
    }
    o.push_str("</div>");
}

/// A free table across the runs: rows aligned by key, each column once per
/// machine, numbers scaled as in the report.
fn table_html(o: &mut String, t: &model::TableComparison, ms: &[Machine]) {
    let _ = write!(
        o,
        "<h3>{}</h3><div class='scroll'><table><tr><th rowspan='2'>{}</th>",
        esc(&t.name),
        esc(&crate::render::html::column_kind(&t.key_column).0)
    );
    let kinds: Vec<_> = t
        .columns
        .iter()
        .map(|c| crate::render::html::column_kind(c))
        .collect();
    for (h, _) in &kinds {
        let _ = write!(o, "<th colspan='{}'>{}</th>", ms.len(), esc(h));
    }
    o.push_str("</tr><tr>");
    for _ in &kinds {
        for m in ms {
            let _ = write!(o, "<th>{}</th>", esc(&m.label));
        }
    }
    o.push_str("</tr>");
    let shown = crate::render::rows_shown(t.rows.len());
    for r in &t.rows[..shown] {
        let _ = write!(o, "<tr><td>{}</td>", esc(&r.key));
        for (ci, (_, kind)) in kinds.iter().enumerate() {
            for cells in &r.cells {
                let v = cells[ci]
                    .as_ref()
                    .map(|v| crate::render::html::cell_text(v, *kind))
                    .unwrap_or_else(|| "-".into());
                let _ = write!(o, "<td>{}</td>", esc(&v));
            }
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    crate::render::html::left_out(o, shown, t.keys_total);
}
