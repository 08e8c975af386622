//! Side-by-side comparison of run files from several machines (seed 000
//! Figure 3: one column per machine). Probes are matched by id, series and
//! distributions by name; parameters that differ between the runs are listed,
//! never merged silently. Normalised views put machines of different sizes and
//! clocks on one scale: throughput per allowed CPU, latency in cycles of each
//! machine's nominal (or timer) clock.

pub mod model;

use crate::model::{Estimate, ProbeResult, RunFile, Series, Status};
use crate::render::html::STYLE;
use crate::render::svg::{self, esc};
use crate::render::terminal::{estimates_by_x, has_interval, interval_note, plus_minus};
use crate::render::{fmt_num, fmt_value, fmt_x, table_axes, words};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Longest machine label (column header) of a comparison.
pub const MAX_LABEL_CHARS: usize = 40;

/// One machine in a comparison.
#[derive(Debug, Clone)]
pub struct Machine<'a> {
    /// Column label: host name, made unique (`host`, `host#2`).
    pub label: String,
    /// The run.
    pub run: &'a RunFile,
    /// CPUs the run could use.
    pub cpus: usize,
    /// Clock used for cycles: nominal frequency if known, else the timer's.
    pub hz: f64,
    /// Which clock `hz` is (`nominal` or the timer source).
    pub hz_source: String,
}

/// Label and normalisation facts of each run.
pub fn machines(runs: &[RunFile]) -> Vec<Machine<'_>> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    runs.iter()
        .map(|run| {
            // A column label: short whatever the host name (a 1 MB name would
            // be repeated in every table of the comparison).
            let base = if run.host.hostname.is_empty() {
                "host".to_string()
            } else {
                crate::render::clean(&run.host.hostname, MAX_LABEL_CHARS, false)
            };
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let label = if *n == 1 { base } else { format!("{base}#{n}") };
            let (hz, hz_source) = match run.host.nominal_hz {
                Some(h) if h > 0.0 => (h, "nominal".to_string()),
                _ => (run.clock.ticks_hz, run.clock.source.clone()),
            };
            Machine {
                label,
                run,
                cpus: run.topology.allowed_count().max(1),
                hz,
                hz_source,
            }
        })
        .collect()
}

/// Probe ids in order of first appearance across the runs, filtered.
fn probe_ids(runs: &[RunFile], only: Option<&[String]>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut ids: Vec<String> = Vec::new();
    for r in runs {
        for p in &r.probes {
            if only.is_none_or(|o| o.contains(&p.id)) && seen.insert(p.id.as_str()) {
                ids.push(p.id.clone());
            }
        }
    }
    ids
}

/// Entries of a probe's parameters that the runner records as it measures (the
/// round trips it read, the rounds it ran), not settings of the measurement: two
/// runs differ in them by nature, so they are not listed as differing parameters.
pub const OBSERVED_PARAMS: [&str; 5] = [
    "cpu_round_trip_ns_seen",
    "steady_round_trip_ns",
    "rounds_min",
    "rounds_max",
    "rounds_dropped_unsteady",
];

/// Parameters whose values differ between the runs that have the probe:
/// `(key, value per machine)`; a missing key shows as `-`. What the runner observed
/// ([`OBSERVED_PARAMS`]) is left out.
pub fn param_mismatches(probes: &[Option<&ProbeResult>]) -> Vec<(String, Vec<String>)> {
    let mut keys: Vec<&String> = probes
        .iter()
        .flatten()
        .flat_map(|p| p.params.keys())
        .collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| !OBSERVED_PARAMS.contains(&k.as_str()));
    let mut out = Vec::new();
    for k in keys {
        let vals: Vec<String> = probes
            .iter()
            .map(|p| match p {
                Some(p) => p
                    .params
                    .get(k)
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
                None => "(no probe)".into(),
            })
            .collect();
        let present: Vec<&String> = vals.iter().filter(|v| *v != "(no probe)").collect();
        if present.windows(2).any(|w| w[0] != w[1]) {
            out.push((k.clone(), vals));
        }
    }
    out
}

/// Names of one shape (`names_of` lists them per probe) across runs, in order of
/// first appearance.
fn names_across<F>(probes: &[Option<&ProbeResult>], names_of: F) -> Vec<String>
where
    F: Fn(&ProbeResult) -> Vec<&str>,
{
    let mut seen = std::collections::HashSet::new();
    let mut names: Vec<String> = Vec::new();
    for p in probes.iter().flatten() {
        for n in names_of(p) {
            if seen.insert(n) {
                names.push(n.to_string());
            }
        }
    }
    names
}

fn series_names(probes: &[Option<&ProbeResult>]) -> Vec<String> {
    names_across(probes, |p| {
        p.series.iter().map(|s| s.name.as_str()).collect()
    })
}

fn dist_names(probes: &[Option<&ProbeResult>]) -> Vec<String> {
    names_across(probes, |p| {
        p.distributions.iter().map(|d| d.name.as_str()).collect()
    })
}

/// The series of each name in each run, looked up by map (linear, where a
/// search per name was quadratic in the number of series).
fn series_index<'a>(probes: &[Option<&'a ProbeResult>]) -> Vec<BTreeMap<&'a str, &'a Series>> {
    probes
        .iter()
        .map(|p| {
            let mut m = BTreeMap::new();
            for s in p.map(|p| p.series.as_slice()).unwrap_or_default() {
                m.entry(s.name.as_str()).or_insert(s);
            }
            m
        })
        .collect()
}

/// [`series_index`] for distributions.
fn dist_index<'a>(
    probes: &[Option<&'a ProbeResult>],
) -> Vec<BTreeMap<&'a str, &'a crate::model::Distribution>> {
    probes
        .iter()
        .map(|p| {
            let mut m = BTreeMap::new();
            for d in p.map(|p| p.distributions.as_slice()).unwrap_or_default() {
                m.entry(d.name.as_str()).or_insert(d);
            }
            m
        })
        .collect()
}

fn is_rate(unit: &str) -> bool {
    unit.ends_with("per_s")
}

fn is_time(unit: &str) -> bool {
    unit == "ns"
}

/// A rate per CPU the run could use (the per-core view).
fn per_cpu(v: f64, m: &Machine) -> f64 {
    v / m.cpus as f64
}

/// A time in cycles of the machine's clock (the per-cycle view); `None` for
/// units that are not times.
fn cycles(unit: &str, v: f64, m: &Machine) -> Option<f64> {
    is_time(unit).then(|| v * m.hz / 1e9)
}

fn new_table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(crate::render::terminal::WIDTH);
    t
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a != 0.0 && a.is_finite() && b.is_finite() => {
            format!("{}×", crate::render::fmt_ratio(b / a))
        }
        _ => "-".into(),
    }
}

/// Marks a ratio whose two runs' intervals overlap.
const OVERLAP_MARK: &str = "≈";

/// The legend of [`OVERLAP_MARK`].
const OVERLAP_NOTE: &str =
    "≈ = the two runs' 95 % intervals overlap: indistinguishable at this point";

/// `b ÷ a` of two runs' estimates, marked `≈` when both have an interval and the
/// intervals overlap (the runs are indistinguishable there; conservative, see
/// [`crate::stats::compare_estimates`]). Without intervals (version 1 files)
/// nothing is said either way.
fn ratio_of(a: Option<&Estimate>, b: Option<&Estimate>) -> String {
    let plain = ratio(a.map(|e| e.value), b.map(|e| e.value));
    match (a, b) {
        (Some(a), Some(b)) if plain != "-" && has_interval(a) && has_interval(b) => {
            match crate::stats::compare_estimates(*b, *a) {
                Some(c) if !c.significant => format!("{plain} {OVERLAP_MARK}"),
                _ => plain,
            }
        }
        _ => plain,
    }
}

/// Each run's findings, worded (`render::words`), one list per machine.
fn findings_text(o: &mut String, probes: &[Option<&ProbeResult>], ms: &[Machine]) {
    for (m, p) in ms.iter().zip(probes) {
        let Some(p) = p.filter(|p| !p.findings.is_empty()) else {
            continue;
        };
        let _ = writeln!(o, "  findings on {}:", m.label);
        for f in &p.findings {
            let _ = writeln!(o, "   • {}", words::finding(f));
        }
    }
}

/// One series across the runs as a terminal table: each run's value with its
/// interval, each run against the first, and what the marks mean.
fn series_text(o: &mut String, name: &str, ss: &[Option<&Series>], ms: &[Machine]) {
    let Some(first) = ss.iter().flatten().next() else {
        return;
    };
    let present: Vec<&Series> = ss.iter().flatten().copied().collect();
    let (xs, scale, unit) = table_axes(&present);
    let mut t = new_table();
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
    let _ = writeln!(o, "{name} ({unit})\n{t}");
    let left_out = crate::render::rows_left_out(shown, xs.len());
    for line in left_out
        .iter()
        .chain(&note)
        .map(String::as_str)
        .chain(overlap.then_some(OVERLAP_NOTE))
    {
        let _ = writeln!(o, "  {line}");
    }
    if let Some(line) = peak_line(ss, ms, &first.y_name) {
        let _ = writeln!(o, "  {line}");
    }
}

/// The comparison as terminal tables.
pub fn render_text(runs: &[RunFile], only: Option<&[String]>) -> String {
    let raw_runs = runs;
    let shown: Vec<RunFile> = runs.iter().map(crate::render::for_display).collect();
    let runs = shown.as_slice();
    let only = only.map(|o| {
        o.iter()
            .map(|id| crate::render::clean(id, crate::render::MAX_NAME_CHARS, false))
            .collect::<Vec<_>>()
    });
    let only = only.as_deref();
    let ms = machines(runs);
    let mut o = String::new();
    let mut t = new_table();
    let mut head = vec![Cell::new("")];
    head.extend(ms.iter().map(|m| Cell::new(&m.label)));
    t.set_header(head);
    for (k, f) in machine_rows() {
        let mut row = vec![Cell::new(k)];
        row.extend(ms.iter().map(|m| Cell::new(f(m))));
        t.add_row(row);
    }
    let _ = writeln!(o, "Machines\n{t}");
    let _ = writeln!(
        o,
        "Ratios are each machine against the first ({}). Per-CPU views divide by the CPUs a run \
         could use; cycles use the nominal clock, or the timer's when none is known.",
        ms.first().map(|m| m.label.as_str()).unwrap_or("-")
    );
    for line in agreement_lines(raw_runs, &ms) {
        let _ = writeln!(o, "{line}");
    }
    for id in probe_ids(runs, only) {
        let probes: Vec<Option<&ProbeResult>> = runs
            .iter()
            .map(|r| r.probes.iter().find(|p| p.id == id))
            .collect();
        let _ = writeln!(o, "\n== {id}");
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
                let _ = writeln!(o, "  {}: {s}", m.label);
            }
        }
        let mism = param_mismatches(&probes);
        if !mism.is_empty() {
            let mut t = new_table();
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
        findings_text(&mut o, &probes, &ms);
        let index = series_index(&probes);
        for name in series_names(&probes) {
            let ss: Vec<Option<&Series>> = index
                .iter()
                .map(|m| m.get(name.as_str()).copied())
                .collect();
            series_text(&mut o, &name, &ss, &ms);
        }
        distributions_text(&mut o, &probes, &ms);
        for m in model::matrices(&probes) {
            matrix_text(&mut o, &m, &ms);
        }
        for t in shown_tables(raw_runs, runs, &id) {
            table_text(&mut o, &t, &ms);
        }
    }
    o
}

/// The median and range of the finite values of a matrix.
fn cell_stats(c: &model::Cells) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = c
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some((v[0], v[v.len() / 2], v[v.len() - 1]))
}

/// A matrix across the runs in the terminal: each machine's median cell and
/// range, and its median ratio to the first machine.
fn matrix_text(o: &mut String, m: &model::MatrixComparison, ms: &[Machine]) {
    let _ = writeln!(o, "matrix {} ({}):", m.name, m.unit);
    for (k, mach) in ms.iter().enumerate() {
        let Some((lo, med, hi)) = m.per_machine[k].as_ref().and_then(cell_stats) else {
            let _ = writeln!(o, "  {}: -", mach.label);
            continue;
        };
        let ratio = m.ratios[k]
            .as_ref()
            .and_then(cell_stats)
            .map(|(a, r, b)| format!("; vs {}: median {r:.2}× ({a:.2}–{b:.2}×)", ms[0].label))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  {}: median {} (range {}–{}){ratio}",
            mach.label,
            fmt_value(&m.unit, med),
            fmt_value(&m.unit, lo),
            fmt_value(&m.unit, hi)
        );
    }
}

/// The free tables of probe `id` across the runs, aligned on the first
/// [`crate::render::MAX_TABLE_ROWS`] keys and made safe to show. Aligned from
/// the run files themselves (`raw`), whose tables are whole: the display
/// copies (`shown`, where the probe is found by its cleaned id) keep only the
/// rows a table shows.
fn shown_tables(raw: &[RunFile], shown: &[RunFile], id: &str) -> Vec<model::TableComparison> {
    let probes: Vec<Option<&ProbeResult>> = raw
        .iter()
        .zip(shown)
        .map(|(r, s)| {
            let i = s.probes.iter().position(|p| p.id == id)?;
            r.probes.get(i)
        })
        .collect();
    model::tables(&probes, crate::render::MAX_TABLE_ROWS)
        .into_iter()
        .map(|mut t| {
            use crate::render::{clean, clean_json, MAX_NAME_CHARS, MAX_TEXT_CHARS};
            t.name = clean(&t.name, MAX_NAME_CHARS, false);
            t.key_column = clean(&t.key_column, MAX_NAME_CHARS, false);
            for c in &mut t.columns {
                *c = clean(c, MAX_NAME_CHARS, false);
            }
            for r in &mut t.rows {
                r.key = clean(&r.key, MAX_TEXT_CHARS, false);
                for v in r.cells.iter_mut().flatten().flatten() {
                    *v = clean_json(std::mem::take(v));
                }
            }
            t
        })
        .collect()
}

/// A free table across the runs in the terminal: one row per key and machine
/// (the machines of a key next to each other), the table's own columns.
fn table_text(o: &mut String, t: &model::TableComparison, ms: &[Machine]) {
    let mut tt = new_table();
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
    let _ = writeln!(o, "{}\n{tt}", t.name);
    if let Some(line) = crate::render::rows_left_out(shown, t.keys_total) {
        let _ = writeln!(o, "  {line}");
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
                svg::heatmap_in(
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
                svg::heatmap_with(
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

/// The distributions of one probe across the runs: p50 (with its interval where
/// wider than 1 %) and p99 per run, and the p50 ratios against the first run.
fn distributions_text(o: &mut String, probes: &[Option<&ProbeResult>], ms: &[Machine]) {
    let dn = dist_names(probes);
    if dn.is_empty() {
        return;
    }
    let dindex = dist_index(probes);
    let mut t = new_table();
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
        let _ = writeln!(o, "  ± on p50 = 95 % CI of the median");
    }
    if overlap {
        let _ = writeln!(o, "  {OVERLAP_NOTE}");
    }
}

type Fact = (&'static str, fn(&Machine) -> String);

/// Points of the farthest-apart list named in an agreement line.
const APART_NAMED: usize = 3;

/// One line per run after the first: where its 95 % intervals overlap the first
/// run's, point by point (`model::run_agreement`), and the points farthest apart.
fn agreement_lines(runs: &[RunFile], ms: &[Machine]) -> Vec<String> {
    let (Some(first), Some(m0)) = (runs.first(), ms.first()) else {
        return Vec::new();
    };
    runs.iter()
        .zip(ms)
        .skip(1)
        .filter_map(|(run, m)| {
            let a = model::run_agreement(first, run);
            if a.points == 0 {
                return None;
            }
            let pct = |k: usize| 100.0 * k as f64 / a.points as f64;
            let mut line = format!(
                "{} against {}: the 95 % intervals overlap at {} of {} series points ({:.0} %); \
                 {} more state-dependent in both runs; {} state-dependent in either ({:.0} %)",
                m.label,
                m0.label,
                a.overlap,
                a.points,
                pct(a.overlap),
                a.state_dependent_both,
                a.state_dependent_either,
                pct(a.state_dependent_either)
            );
            if !a.apart.is_empty() {
                let named: Vec<String> = a
                    .apart
                    .iter()
                    .take(APART_NAMED)
                    .map(|(p, s, x, r)| format!("{p} {s} at {x} ({r:.2}×)"))
                    .collect();
                line.push_str(&format!(
                    "; {} apart, the farthest: {}",
                    a.apart.len(),
                    named.join(", ")
                ));
            }
            Some(line)
        })
        .collect()
}

fn machine_rows() -> Vec<Fact> {
    vec![
        ("CPU", |m| m.run.host.cpu_model.clone()),
        ("topology", |m| m.run.topology.summary()),
        ("CPUs allowed", |m| m.cpus.to_string()),
        ("clock for cycles", |m| {
            format!("{:.3} GHz ({})", m.hz / 1e9, m.hz_source)
        }),
        ("kernel", |m| m.run.host.kernel.clone()),
        ("profile", |m| m.run.profile.name().to_string()),
        ("started", |m| m.run.started_utc.clone()),
    ]
}

/// "peak: A 1.2 Gops/s (0.6 per CPU), B …" for rate series over threads.
fn peak_line(ss: &[Option<&Series>], ms: &[Machine], unit: &str) -> Option<String> {
    if !is_rate(unit) {
        return None;
    }
    let parts: Vec<String> = ss
        .iter()
        .zip(ms)
        .filter_map(|(s, m)| {
            let s = (*s)?;
            // The peak with its interval where the file has one.
            let peak = (0..s.y.len())
                .filter_map(|i| s.estimate(i))
                .filter(|e| e.value.is_finite())
                .max_by(|a, b| a.value.total_cmp(&b.value))?;
            let per = fmt_value(unit, per_cpu(peak.value, m));
            if !has_interval(&peak) {
                return Some(format!(
                    "{} {} ({per} per CPU)",
                    m.label,
                    fmt_value(unit, peak.value)
                ));
            }
            let (f, label) = crate::render::unit_scale(unit, peak.value);
            Some(format!(
                "{} {} {label} (95 % CI {}–{}; {per} per CPU)",
                m.label,
                fmt_num(peak.value / f),
                fmt_num(peak.lo / f),
                fmt_num(peak.hi / f)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("peak: {}", parts.join(", ")))
}

/// The comparison as one self-contained HTML page: machine table, then per
/// probe the differing parameters, overlaid curves (one colour per machine,
/// raw and normalised) with their tables, and distribution percentiles.
pub fn render_html(runs: &[RunFile], only: Option<&[String]>) -> String {
    let raw_runs = runs;
    let shown: Vec<RunFile> = runs.iter().map(crate::render::for_display).collect();
    let runs = shown.as_slice();
    let only = only.map(|o| {
        o.iter()
            .map(|id| crate::render::clean(id, crate::render::MAX_NAME_CHARS, false))
            .collect::<Vec<_>>()
    });
    let only = only.as_deref();
    let ms = machines(runs);
    let names: Vec<&str> = ms.iter().map(|m| m.label.as_str()).collect();
    let title = format!("corescope comparison — {}", names.join(" vs "));
    let mut o = format!(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>",
        t = esc(&title)
    );
    o.push_str("<section id='machines'><h2>Machines</h2><div class='scroll'><table><tr><th></th>");
    for m in &ms {
        let _ = write!(o, "<th>{}</th>", esc(&m.label));
    }
    o.push_str("</tr>");
    for (k, f) in machine_rows() {
        let _ = write!(o, "<tr><th>{}</th>", esc(k));
        for m in &ms {
            let _ = write!(o, "<td>{}</td>", esc(&f(m)));
        }
        o.push_str("</tr>");
    }
    let _ = write!(
        o,
        "</table></div><p>Ratios: each machine against the first ({}). Per-CPU: divided by the CPUs the run could use. Cycles: nominal clock, or the timer's when none is known.</p></section>",
        esc(names.first().copied().unwrap_or("-"))
    );
    for line in agreement_lines(raw_runs, &ms) {
        let _ = write!(o, "<p class='agreement'>{}</p>", esc(&line));
    }
    for id in probe_ids(runs, only) {
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
        let index = series_index(&probes);
        for name in series_names(&probes) {
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
    let dn = dist_names(probes);
    if dn.is_empty() {
        return;
    }
    let dindex = dist_index(probes);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probe(params: serde_json::Value) -> ProbeResult {
        serde_json::from_value(json!({
            "id": "p", "title": "t", "status": "completed",
            "params": params, "cases_planned": 1, "cases_done": 1, "elapsed_s": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn differing_parameters_are_listed_not_merged() {
        // The round trips the runner read differ by nature: not a parameter.
        let a = probe(json!({"iters": 10, "same": 1, "cpu_round_trip_ns_seen": [60]}));
        let b = probe(json!({"iters": 20, "same": 1, "cpu_round_trip_ns_seen": [420]}));
        let m = param_mismatches(&[Some(&a), Some(&b), None]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].0, "iters");
        assert_eq!(m[0].1, vec!["10", "20", "(no probe)"]);
    }

    #[test]
    fn overlapping_intervals_are_marked_indistinguishable() {
        let e = |value: f64, lo: f64, hi: f64| Estimate {
            value,
            lo,
            hi,
            n: 7,
        };
        let a = e(10.0, 9.0, 11.0);
        assert_eq!(ratio_of(Some(&a), Some(&e(10.5, 9.5, 11.5))), "1.05× ≈");
        assert_eq!(ratio_of(Some(&a), Some(&e(15.0, 14.0, 16.0))), "1.50×");
        // Without an interval on either side nothing is said either way.
        let exact = Estimate::exact(10.5);
        assert_eq!(ratio_of(Some(&a), Some(&exact)), "1.05×");
        assert_eq!(ratio_of(None, Some(&a)), "-");
    }

    #[test]
    fn ratios_are_against_the_first() {
        assert_eq!(ratio(Some(2.0), Some(3.0)), "1.50×");
        assert_eq!(ratio(None, Some(3.0)), "-");
        assert_eq!(ratio(Some(0.0), Some(3.0)), "-");
    }
}
