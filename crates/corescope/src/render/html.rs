//! The self-contained HTML report: one file, inline CSS and SVG, one small
//! script (legend toggles), no network.
//! Sections: the answers (`html_answers`: each probe's headline and the warnings
//! by cause), the machine (summary, topology table, clock, environment), then every
//! probe by shape — findings first, then charts and tables, warnings last. Every
//! string from the run file is escaped.

use super::svg::{self, esc};
use super::terminal::{estimates_by_x, interval_note, repetitions, series_groups};
use super::{fmt_num, fmt_value, fmt_x, md, words};
use crate::model::{Distribution, Estimate, ProbeResult, RunFile, Status, View};
use std::fmt::Write;

/// The report's stylesheet (shared with `compare`). Charts take the column's
/// width; wide tables scroll inside their own box (`.scroll`), so that the page
/// never overflows at 800 px; print (A4 or Letter: `@page` sets only margins)
/// keeps figures whole and opens every `<details>` (see [`SCRIPT`]).
pub const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em;overflow-wrap:anywhere}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}\
.scroll{max-width:100%;overflow-x:auto}td{white-space:nowrap}tr.best td{background:#e7f6ec;font-weight:600}\
.badge{font-size:.75em;padding:2px 8px;border-radius:8px;color:#fff;vertical-align:middle}\
.completed{background:#2a7}.gave_up{background:#d80}.skipped{background:#888}.failed{background:#c33}.interrupted{background:#a3a}\
.warn{color:#a50}.more{color:#555;font-size:.92em}table.answers td,table.answers th{text-align:left;white-space:normal;overflow-wrap:normal}table.answers td:first-child{white-space:nowrap}.answers details{display:inline}.answers summary{display:inline;color:#555;font-size:.92em}.findings li{margin:.2em 0}p.answer{background:#f4f8f5;border-left:3px solid #2a7;padding:.3em .6em}figure{margin:1em 0}figcaption{font-size:.9em;color:#555}\
svg{max-width:100%;height:auto;font-family:system-ui,sans-serif;display:block}details{margin:.5em 0}\
.side{display:flex;flex-wrap:wrap;gap:1em}.side figure{flex:1 1 480px;min-width:0}code{overflow-wrap:anywhere}\
@page{margin:12mm}@media print{body{max-width:none;margin:0;font-size:11px}h2{page-break-before:always}figure,tr{break-inside:avoid}nav{display:none}.scroll{overflow:visible}}";

/// The whole report, each probe's special views those its registry entry
/// declares.
pub fn render_run(run: &RunFile) -> String {
    render_run_in(run, &crate::probes::registry())
}

/// [`render_run`] with the probes of `registry`: a result gets the special views
/// its probe declares there ([`crate::probes::AnyProbe::views`]); a result whose
/// probe `registry` does not know, none.
pub fn render_run_in(run: &RunFile, registry: &[Box<dyn crate::probes::AnyProbe>]) -> String {
    let run = &super::for_display(run);
    let mut o = String::new();
    let title = format!("corescope — {} — {}", run.host.hostname, run.started_utc);
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let _ = write!(o, "<h1>{}</h1>", esc(&title));
    let answers = super::summary::answers_in(run, registry);
    o.push_str(&super::html_answers::section(run, &answers));
    machine(&mut o, run);
    o.push_str("<nav><p>Probes: ");
    for p in &run.probes {
        let _ = write!(
            o,
            "<a href='#{id}'>{id}</a> <span class='badge {cls}'>{st}</span> ",
            id = esc(&p.id),
            cls = p.status.name(),
            st = esc(&p.status.name().replace('_', " "))
        );
    }
    o.push_str("</p></nav>");
    let opts = chart_opts(run);
    for p in &run.probes {
        let answer = answers.probes.iter().find(|a| a.id == p.id);
        let views = super::views_of(registry, &p.id);
        probe(
            &mut o,
            p,
            answer.and_then(|a| a.head.as_deref()),
            opts,
            views,
        );
    }
    if let Some(cc) = &run.crosscheck {
        o.push_str(&super::crosscheck::html(cc));
    }
    let same = super::consistency::of_run(run, registry);
    o.push_str(&super::consistency::html(run, &same));
    o.push_str(&super::glossary::html());
    let _ = write!(
        o,
        "<footer><p>{} {} · schema {} · profile {} · command: <code>{}</code></p></footer>",
        esc(&run.tool.name),
        esc(&run.tool.version),
        run.schema_version,
        esc(run.profile.name()),
        esc(&run.command.join(" "))
    );
    o.push_str(SCRIPT);
    o.push_str("</body></html>");
    o
}

/// The only script: clicking a legend entry hides or shows its curve, and
/// printing opens every collapsed part. The report reads fine without it.
pub const SCRIPT: &str = "<script>window.addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true;});});document.querySelectorAll('g.legend').forEach(function(l){l.addEventListener('click',function(){var c=l.ownerSVGElement.querySelector('g.curve[data-curve=\"'+l.dataset.curve+'\"]');if(c){var h=c.style.display==='none';c.style.display=h?'':'none';l.style.opacity=h?1:0.4;}});});</script>";

fn machine(o: &mut String, run: &RunFile) {
    let h = &run.host;
    let e = &run.env;
    let c = &run.clock;
    o.push_str("<section id='machine'><h2>Machine</h2><div class='scroll'><table>");
    let mut rows: Vec<(&str, String)> = vec![
        ("host", h.hostname.clone()),
        ("CPU", format!("{} ({})", h.cpu_model, h.arch)),
        (
            "virtualised",
            h.virtualized.clone().unwrap_or_else(|| "no".into()),
        ),
        ("OS / kernel", format!("{} / {}", h.os, h.kernel)),
        ("topology", run.topology.summary()),
        ("NUMA nodes", run.topology.numa_nodes.to_string()),
        (
            "clock",
            format!(
                "{} at {}, read {}, step {}",
                c.source,
                fmt_value("per_s", c.ticks_hz).replace("/s", "Hz"),
                fmt_value("ns", c.read_overhead_ns),
                fmt_value("ns", c.step_ns)
            ),
        ),
        (
            "governor / SMT / THP",
            format!(
                "{} / {} / {}",
                e.governor.as_deref().unwrap_or("unknown"),
                e.smt.as_deref().unwrap_or("unknown"),
                e.thp.as_deref().unwrap_or("unknown")
            ),
        ),
        ("cpuset", e.cpuset.clone()),
        ("profile", run.profile.name().to_string()),
    ];
    let extras = super::env_extras(e);
    if !extras.is_empty() {
        rows.push(("scheduling and memory", extras.join(", ")));
    }
    for (k, v) in rows {
        let _ = write!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    o.push_str("</table></div>");
    let _ = write!(o, "<figure>{}<figcaption>packages, cores and hardware threads (hover for CPU ids)</figcaption></figure>", super::machine_drawing::topology(&run.topology));
    // The CPU table, collapsed.
    let _ = write!(o, "<details><summary>CPU table ({} CPUs)</summary><div class='scroll'><table><tr><th>CPU</th><th>package</th><th>NUMA</th><th>core</th><th>slot</th><th>allowed</th></tr>", run.topology.pus.len());
    for p in run.topology.pus.iter().take(4096) {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            p.os_index,
            p.package,
            p.numa_node
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            p.core_os_index.unwrap_or(p.core),
            p.slot,
            if p.allowed { "yes" } else { "no" }
        );
    }
    o.push_str("</table></div></details></section>");
}

/// What the run's charts show beyond their curves: the CPUs the run could use
/// (marked on threads axes) and each cache level's largest capacity (marked on
/// working-set axes), when its file records the topology.
fn chart_opts(run: &RunFile) -> svg::ChartOpts {
    let t = &run.topology;
    let mut cache_bytes = [0u64; svg::MAX_CACHE_LEVELS];
    for c in &t.caches {
        let level = usize::from(c.level);
        if (1..=svg::MAX_CACHE_LEVELS).contains(&level) {
            let slot = &mut cache_bytes[level - 1];
            *slot = (*slot).max(c.size_bytes);
        }
    }
    svg::ChartOpts {
        cpus: Some(t.allowed_pus().count()).filter(|&n| n > 0),
        cache_bytes,
    }
}

/// The special figures of the views `p`'s probe declares, in the report's
/// order; the summary under which its series charts are folded, if any.
fn special_figures(
    o: &mut String,
    p: &ProbeResult,
    views: &[View],
    opts: svg::ChartOpts,
) -> Option<&'static str> {
    let roadmap = views.contains(&View::ChannelRoadmap);
    if roadmap {
        o.push_str(&super::channel_roadmap::figure(p).unwrap_or_default());
        o.push_str(&super::channel_roadmap::figures(p));
    }
    let spin_bars = views.contains(&View::SpinBars);
    if spin_bars {
        o.push_str(&super::spin_bars::figures(p));
    }
    let loaded_curve = views.contains(&View::LoadedCurve);
    if loaded_curve {
        o.push_str(&super::loaded_curve::figures(p));
    }
    if views.contains(&View::StreamChart) {
        o.push_str(&super::stream_chart::figure(p, opts));
    }
    let peak = views.contains(&View::PeakOverview);
    if peak {
        o.push_str(&super::peak_overview::figures(p));
    }
    peak.then(|| super::peak_overview::folded(p))
        .flatten()
        .or_else(|| spin_bars.then(|| super::spin_bars::folded(p)).flatten())
}

/// Findings shown before the rest of a probe's list is collapsed.
const FINDINGS_SHOWN: usize = 6;

/// One probe's section: its answer (the summary's headline) first, then its
/// findings (the first [`FINDINGS_SHOWN`], the rest collapsed), its figures and
/// tables, its warnings last.
fn probe(
    o: &mut String,
    p: &ProbeResult,
    answer: Option<&str>,
    opts: svg::ChartOpts,
    views: &[View],
) {
    let _ = write!(
        o,
        "<section id='{id}'><h2>{id} <span class='badge {cls}'>{st}</span></h2><p>{title}</p>",
        id = esc(&p.id),
        cls = p.status.name(),
        st = esc(&p.status.name().replace('_', " ")),
        title = esc(&p.title)
    );
    if let Some(r) = &p.reason {
        let what = match p.status {
            Status::Skipped => "Skipped",
            Status::GaveUp => "Gave up",
            Status::Failed => "Failed",
            Status::Interrupted => "Interrupted",
            Status::Completed => "Note",
        };
        let _ = write!(o, "<p class='warn'><strong>{what}:</strong> {}</p>", esc(r));
    }
    // A probe that stopped already says why above; its headline repeats it.
    if let (Some(a), Status::Completed) = (answer, p.status) {
        let _ = write!(
            o,
            "<p class='answer'><strong>Answer:</strong> {}</p>",
            esc(a)
        );
    }
    findings(o, p);
    params(o, p);
    let folded = special_figures(o, p, views, opts);
    if let Some(summary) = folded {
        let _ = write!(o, "<details><summary>{}</summary>", esc(summary));
    }
    let series = if views.contains(&View::ChannelRoadmap) {
        super::channel_roadmap::undrawn_series(p)
    } else {
        std::borrow::Cow::Borrowed(&p.series[..])
    };
    for g in chart_groups(&series) {
        series_figure(o, p, &g, opts);
    }
    if folded.is_some() {
        o.push_str("</details>");
    }
    if !p.distributions.is_empty() {
        distributions(o, p);
    }
    for m in &p.matrices {
        let _ = write!(
            o,
            "<figure>{}<figcaption>{} ({}); colour scale on the right, grey: not measured</figcaption></figure>",
            super::heatmap::heatmap(&m.name, &m.unit, &m.rows, &m.cols, &m.values),
            esc(&m.name),
            esc(&m.unit)
        );
    }
    // Timelines of one probe are compared with each other: one time axis.
    let shared = (p.timelines.len() > 1)
        .then(|| super::gantt::shared_end_ns(&p.timelines))
        .flatten();
    for t in &p.timelines {
        let scale = match shared {
            Some(end) => format!(
                "; drawn to one time scale (0 to {}) with the other timelines here, so bar lengths compare",
                fmt_value("ns", end)
            ),
            None => String::new(),
        };
        let _ = write!(
            o,
            "<figure>{}<figcaption>timeline {}: one lane per thread, one bar per portion of work, coloured by kind{}</figcaption></figure>",
            super::gantt::gantt(&t.name, &super::gantt::lanes_of(t), shared),
            esc(&t.name),
            esc(&scale)
        );
    }
    for t in &p.tables {
        // A table drawn as bars above keeps its numbers, collapsed.
        let drawn = (views.contains(&View::SpinBars) && super::spin_bars::is_drawn(t))
            || (views.contains(&View::LoadedCurve) && super::loaded_curve::is_drawn(t));
        let peak = views.contains(&View::PeakOverview);
        let summary = if peak && super::peak_overview::is_drawn(p, t) {
            Some("the FMA limit per kernel, as recorded at measure time")
        } else {
            drawn.then_some("the numbers behind the bars")
        };
        if let Some(summary) = summary {
            let _ = write!(o, "<details><summary>{summary}</summary>");
        }
        free_table(o, t);
        if summary.is_some() {
            o.push_str("</details>");
        }
    }
    if !p.warnings.is_empty() {
        o.push_str("<details class='warn'><summary>");
        let _ = write!(
            o,
            "{} warning{}</summary><ul>",
            p.warnings.len(),
            if p.warnings.len() == 1 { "" } else { "s" }
        );
        for w in &p.warnings {
            let _ = write!(o, "<li>{}</li>", esc(&super::words::warning(w)));
        }
        o.push_str("</ul></details>");
    }
    o.push_str("</section>");
}

/// The findings list: the first [`FINDINGS_SHOWN`] open, the rest collapsed.
fn findings(o: &mut String, p: &ProbeResult) {
    if p.findings.is_empty() {
        return;
    }
    let item = |f: &crate::model::Finding| format!("<li>{}</li>", esc(&super::words::finding(f)));
    o.push_str("<ul class='findings'>");
    for f in p.findings.iter().take(FINDINGS_SHOWN) {
        o.push_str(&item(f));
    }
    o.push_str("</ul>");
    let rest = p.findings.len().saturating_sub(FINDINGS_SHOWN);
    if rest > 0 {
        let _ = write!(
            o,
            "<details><summary>{rest} more finding{}</summary><ul class='findings'>",
            if rest == 1 { "" } else { "s" }
        );
        for f in &p.findings[FINDINGS_SHOWN..] {
            o.push_str(&item(f));
        }
        o.push_str("</ul></details>");
    }
}

/// Most series one chart draws before a group is split by series name.
pub const MAX_SERIES_PER_CHART: usize = 16;

/// Series drawn on one chart: one x and one y unit, at most
/// [`MAX_SERIES_PER_CHART`] curves.
#[derive(Debug, Clone)]
pub struct ChartGroup<'a> {
    /// What the chart shows (the shared name prefix, or the y unit).
    pub title: String,
    /// The series.
    pub series: Vec<&'a crate::model::Series>,
    /// Legend label of each series (its name without the shared prefix).
    pub labels: Vec<String>,
}

impl ChartGroup<'_> {
    /// Whether every series has at most one point: then the group is a table
    /// row, not a chart.
    pub fn is_points(&self) -> bool {
        self.series.iter().all(|s| s.x.len() <= 1)
    }
}

/// The charts of a probe's series: series sharing an x and a y unit go on one
/// chart (all loop orders and the library of matmul; one unit per axis, so a
/// rate and a dimensionless scalability never share one); more than
/// [`MAX_SERIES_PER_CHART`] of them are split by the name before the first `/`.
pub fn chart_groups(series: &[crate::model::Series]) -> Vec<ChartGroup<'_>> {
    let mut buckets: Vec<((&str, &str), Vec<&crate::model::Series>)> = Vec::new();
    for s in series {
        let key = (s.x_name.as_str(), s.y_name.as_str());
        match buckets.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(s),
            None => buckets.push((key, vec![s])),
        }
    }
    let prefix = |s: &crate::model::Series| s.name.split('/').next().unwrap_or("").to_string();
    let mut out = Vec::new();
    for ((_, y_name), b) in buckets {
        let parts: Vec<Vec<&crate::model::Series>> = if b.len() <= MAX_SERIES_PER_CHART {
            vec![b]
        } else {
            let mut by: Vec<(String, Vec<&crate::model::Series>)> = Vec::new();
            for s in b {
                let k = prefix(s);
                match by.iter_mut().find(|(p, _)| *p == k) {
                    Some((_, v)) => v.push(s),
                    None => by.push((k, vec![s])),
                }
            }
            by.into_iter().map(|(_, v)| v).collect()
        };
        for part in parts {
            let first = prefix(part[0]);
            let shared = part
                .iter()
                .all(|s| prefix(s) == first && s.name.contains('/'));
            let labels = part
                .iter()
                .map(|s| match s.name.split_once('/') {
                    Some((_, rest)) if shared => rest.to_string(),
                    _ => s.name.clone(),
                })
                .collect();
            let title = if shared {
                first
            } else {
                super::unit_scale(y_name, 1.0).1
            };
            out.push(ChartGroup {
                title,
                series: part,
                labels,
            });
        }
    }
    out
}

/// One chart group: its chart with the intervals, and its table (collapsed);
/// a group of one-point series is a table only, shown open.
fn series_figure(o: &mut String, p: &ProbeResult, g: &ChartGroup, opts: svg::ChartOpts) {
    let first = g.series[0];
    if g.is_points() {
        let _ = write!(o, "<h3>{}</h3>", esc(&g.title));
        series_table(o, g, true);
        return;
    }
    let curves: Vec<svg::Curve> = g
        .series
        .iter()
        .zip(&g.labels)
        .map(|(s, l)| svg::Curve::of_series(l.clone(), s))
        .collect();
    let title = format!("{} — {}", p.id, g.title);
    let ci = if curves.iter().any(svg::Curve::has_intervals) {
        let all: Vec<Estimate> = g
            .series
            .iter()
            .flat_map(|s| (0..s.y.len()).filter_map(|i| s.estimate(i)))
            .collect();
        repetitions(&all)
            .map(|(reps, _)| format!("; bars and band: 95 % CI of the median, {reps}"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let unit = super::unit_scale(&first.y_name, 1.0).1;
    let what = if g.title == unit {
        String::new()
    } else {
        format!("{}: ", g.title)
    };
    let _ = write!(
        o,
        "<figure>{}<figcaption>{}{} vs {}{}</figcaption></figure>",
        svg::chart_with(&title, &first.x_name, &first.y_name, &curves, opts),
        esc(&what),
        esc(&unit),
        esc(&first.x_name.replace('_', " ")),
        esc(&ci)
    );
    series_table(o, g, false);
}

fn series_table(o: &mut String, g: &ChartGroup, open: bool) {
    let group = &g.series;
    let first = group[0];
    let (xs, scale, label) = super::table_axes(group);
    let lookups: Vec<_> = group.iter().map(|s| estimates_by_x(s)).collect();
    let note = interval_note(lookups.iter().flat_map(|m| m.values()))
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    let _ = write!(
        o,
        "<details{}><summary>table ({}{})</summary><div class='scroll'><table><tr><th>{}</th>",
        if open { " open" } else { "" },
        esc(&label),
        esc(&note),
        esc(&first.x_name.replace('_', " "))
    );
    for l in &g.labels {
        let _ = write!(o, "<th>{}</th>", esc(l));
    }
    o.push_str("</tr>");
    let shown = super::rows_shown(xs.len());
    for &x in &xs[..shown] {
        let xl = fmt_x(&first.x_name, x);
        let _ = write!(o, "<tr><td>{}</td>", esc(&xl));
        for m in &lookups {
            let v = m
                .get(&super::x_key(x))
                .map(|e| words::cell(e.value, scale, Some(e)))
                .unwrap_or_default();
            let _ = write!(o, "<td>{}</td>", esc(&v));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    left_out(o, shown, xs.len());
    o.push_str("</details>");
}

/// The paragraph below a table cut at [`super::MAX_TABLE_ROWS`], or nothing.
pub fn left_out(o: &mut String, shown: usize, total: usize) {
    if let Some(line) = super::rows_left_out(shown, total) {
        let _ = write!(o, "<p class='note'>{}</p>", esc(&line));
    }
}

/// The parameters of a probe (sizes, repetitions, budgets), collapsed.
fn params(o: &mut String, p: &ProbeResult) {
    if p.params.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<details class='params'><summary>parameters ({})</summary><div class='scroll'><table><tr><th>parameter</th><th>value</th></tr>",
        p.params.len()
    );
    for (k, v) in &p.params {
        let (head, kind) = column_kind(k);
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(&head),
            esc(&super::words::param(k, v).unwrap_or_else(|| cell_text(v, kind)))
        );
    }
    o.push_str("</table></div></details>");
}

/// What a free table's column holds, read from its name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColumnKind {
    /// A rate (`events_per_s`): scaled with an SI prefix; larger is better.
    Rate,
    /// A time in ns (`step_ns`).
    Nanoseconds,
    /// A size in bytes.
    Bytes,
    /// A rate whose header already names its scaled unit (`8B ×1 (M events/s)`):
    /// numbers as they are; larger is better.
    ScaledRate,
    /// Anything else: numbers with about four significant digits.
    Plain,
}

/// A human header and the kind of a column named in snake case
/// (`events_per_s` → `events/s`, `step_ns` → `step`, in ns).
pub fn column_kind(name: &str) -> (String, ColumnKind) {
    let human = |s: &str| {
        s.replace("ctx_sw", "context switches")
            .replace("_per_1e6", " per million events")
            .replace('_', " ")
    };
    if let Some(base) = name.strip_suffix("_per_s") {
        (format!("{}/s", human(base)), ColumnKind::Rate)
    } else if name.contains("/s)") || name.ends_with("/s") {
        (name.to_string(), ColumnKind::ScaledRate)
    } else if let Some(base) = name.strip_suffix("_ns") {
        (human(base), ColumnKind::Nanoseconds)
    } else if let Some(base) = name.strip_suffix("_bytes") {
        (human(base), ColumnKind::Bytes)
    } else {
        (human(name), ColumnKind::Plain)
    }
}

/// A table cell for people: `9612064` in a rate column → `9.61 M`.
pub fn cell_text(v: &serde_json::Value, kind: ColumnKind) -> String {
    let serde_json::Value::Number(n) = v else {
        return match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "-".into(),
            other => other.to_string(),
        };
    };
    let Some(x) = n.as_f64() else {
        return n.to_string();
    };
    match kind {
        ColumnKind::Rate => {
            let (f, p) = super::unit_scale("per_s", x);
            format!("{} {}", fmt_num(x / f), p.trim_end_matches("/s"))
                .trim_end()
                .to_string()
        }
        ColumnKind::Nanoseconds => fmt_value("ns", x),
        ColumnKind::Bytes => fmt_value("bytes", x),
        ColumnKind::Plain | ColumnKind::ScaledRate => fmt_num(x),
    }
}

/// The row to mark as best in a free table. A table with its own `best` column
/// (a tuner's steps) has its choice marked: the one row that column says `true`
/// for. Otherwise the highest value of its first rate column, when at least two
/// rows have a number there; reference rows (`Optimal: …`, see
/// [`super::channel_roadmap::is_reference`]) are never the best.
pub fn best_row(t: &crate::model::Table) -> Option<usize> {
    if let Some(b) = t.columns.iter().position(|c| c == "best") {
        let chosen: Vec<usize> = t
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.get(b) == Some(&serde_json::Value::Bool(true)))
            .map(|(i, _)| i)
            .collect();
        return (chosen.len() == 1).then(|| chosen[0]);
    }
    let col = t
        .columns
        .iter()
        .position(|c| matches!(column_kind(c).1, ColumnKind::Rate | ColumnKind::ScaledRate))?;
    let vals: Vec<(usize, f64)> = t
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let label = r.first().and_then(serde_json::Value::as_str);
            !label.is_some_and(super::channel_roadmap::is_reference)
        })
        .filter_map(|(i, r)| {
            r.get(col)
                .and_then(serde_json::Value::as_f64)
                .map(|v| (i, v))
        })
        .filter(|(_, v)| v.is_finite())
        .collect();
    if vals.len() < 2 {
        return None;
    }
    vals.into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A free table: human headers, numbers scaled by their column's unit, the best
/// row marked, scrolling inside its box when wider than the page.
fn free_table(o: &mut String, t: &crate::model::Table) {
    let kinds: Vec<(String, ColumnKind)> = t.columns.iter().map(|c| column_kind(c)).collect();
    let best = best_row(t);
    let (best_tip, best_note) = if t.columns.iter().any(|c| c == "best") {
        ("its best column", "the one the table's best column marks")
    } else {
        ("highest rate", "the highest rate")
    };
    let _ = write!(
        o,
        "<h3>{}</h3><div class='scroll'><table><tr>",
        esc(&t.name)
    );
    for (h, _) in &kinds {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>");
    let shown = super::rows_shown(t.rows.len());
    for (i, r) in t.rows[..shown].iter().enumerate() {
        if best == Some(i) {
            let _ = write!(o, "<tr class='best' title='best ({best_tip})'>");
        } else {
            o.push_str("<tr>");
        }
        for (k, v) in r.iter().enumerate() {
            let kind = kinds.get(k).map(|k| k.1).unwrap_or(ColumnKind::Plain);
            let mut s = cell_text(v, kind);
            if k == 0 && best == Some(i) {
                s.push_str(" ★");
            }
            let _ = write!(o, "<td>{}</td>", esc(&s));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    left_out(o, shown, t.rows.len());
    if best.is_some_and(|b| b < shown) {
        let _ = write!(o, "<p class='note'>★ best row: {best_note}.</p>");
    }
}

/// The median's 95 % interval as a table cell (`1.20–1.31 µs`), when it has one.
fn median_ci(d: &Distribution) -> String {
    let e = d.summary.median();
    if !e.has_interval() {
        return "-".into();
    }
    let (f, unit) = super::unit_scale(&d.unit, e.value);
    format!("{}–{} {unit}", fmt_num(e.lo / f), fmt_num(e.hi / f))
}

fn distributions(o: &mut String, p: &ProbeResult) {
    // The median's interval gets a column only where the file has intervals
    // (version 1 files look as before).
    let ci = p
        .distributions
        .iter()
        .any(|d| d.summary.median().has_interval());
    o.push_str("<div class='scroll'><table><tr><th>distribution</th><th>unit</th><th>n</th><th>min</th><th>p50</th>");
    if ci {
        o.push_str("<th>p50 95 % CI</th>");
    }
    o.push_str("<th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mode range</th></tr>");
    let shown = super::rows_shown(p.distributions.len());
    for d in &p.distributions[..shown] {
        let s = &d.summary;
        let mode = d
            .mode_range
            .as_ref()
            .map(|m| {
                format!(
                    "{} % within {}–{}",
                    crate::units::fmt_percent(m.fraction * 100.0, false),
                    fmt_value(&d.unit, m.low),
                    fmt_value(&d.unit, m.high)
                )
            })
            .unwrap_or_default();
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&d.name),
            esc(&d.unit),
            s.count,
            esc(&fmt_value(&d.unit, s.min)),
            esc(&fmt_value(&d.unit, s.p50)),
        );
        if ci {
            let _ = write!(o, "<td>{}</td>", esc(&median_ci(d)));
        }
        let _ = write!(
            o,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&fmt_value(&d.unit, s.p90)),
            esc(&fmt_value(&d.unit, s.p99)),
            esc(&fmt_value(&d.unit, s.p999)),
            esc(&fmt_value(&d.unit, s.max)),
            esc(&mode)
        );
    }
    o.push_str("</table></div>");
    left_out(o, shown, p.distributions.len());
    // Seed 000 Figure 8: A vs B with y = x, and the histograms.
    for d in &p.distributions {
        if let (Some(a), false) = (&d.paired_with, d.pairs.is_empty()) {
            let _ = write!(
                o,
                "<figure>{}<figcaption>{} vs {} (each dot one pair of samples taken back to back; dashed: y = x; histograms of each on the sides; right: intensity map)</figcaption></figure>",
                super::distribution_svg::paired(&d.name, a, &d.name, &d.unit, &d.pairs),
                esc(&d.name),
                esc(a)
            );
        }
    }
    o.push_str("<details><summary>histograms</summary>");
    for d in &p.distributions {
        histogram(o, d);
    }
    o.push_str("</details>");
}

fn histogram(o: &mut String, d: &Distribution) {
    if d.histogram.counts.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<figure>{}<figcaption>{}</figcaption></figure>",
        super::distribution_svg::histogram(
            &d.name,
            &d.unit,
            &d.histogram.edges,
            &d.histogram.counts,
            d.histogram.log
        ),
        esc(&d.name)
    );
}

/// Markdown: findings and series tables per probe.
pub fn markdown(run: &RunFile) -> String {
    markdown_in(run, &crate::probes::registry())
}

/// [`markdown`] with the probes of `registry`: a result gets the special views its
/// probe declares there; a result whose probe `registry` does not know, none.
pub fn markdown_in(run: &RunFile, registry: &[Box<dyn crate::probes::AnyProbe>]) -> String {
    let run = &super::for_display(run);
    let mut o = format!(
        "# corescope — {}\n\n{} · {} · {}\n",
        md(&run.host.hostname),
        md(&run.host.cpu_model),
        md(&run.topology.summary()),
        md(&run.started_utc)
    );
    for p in &run.probes {
        let _ = write!(
            o,
            "\n## {} ({})\n\n{}\n\n",
            md(&p.id),
            p.status.name(),
            md(&p.title)
        );
        if let Some(r) = &p.reason {
            let _ = writeln!(o, "> {}\n", md(r));
        }
        for f in &p.findings {
            let _ = writeln!(o, "- {}", md(&super::words::finding(f)));
        }
        if super::views_of(registry, &p.id).contains(&View::PeakOverview) {
            o.push_str(&super::peak_overview::markdown(p));
        }
        for group in series_groups(&p.series) {
            let first = group[0];
            let (xs, scale, label) = super::table_axes(&group);
            let lookups: Vec<_> = group.iter().map(|s| estimates_by_x(s)).collect();
            let note = interval_note(lookups.iter().flat_map(|m| m.values()))
                .map(|n| format!("; {n}"))
                .unwrap_or_default();
            let _ = write!(
                o,
                "\n{} ({}{})\n\n| {} |",
                md(first.name.split('/').next().unwrap_or("")),
                md(&label),
                md(&note),
                md(&first.x_name)
            );
            for s in &group {
                let _ = write!(
                    o,
                    " {} |",
                    md(s.name.split_once('/').map(|(_, v)| v).unwrap_or(&s.name))
                );
            }
            let _ = write!(o, "\n|---|{}\n", "---:|".repeat(group.len()));
            let shown = super::rows_shown(xs.len());
            for &x in &xs[..shown] {
                let _ = write!(o, "| {} |", md(&fmt_x(&first.x_name, x)));
                for m in &lookups {
                    let v = m
                        .get(&super::x_key(x))
                        .map(|e| words::cell(e.value, scale, Some(e)))
                        .unwrap_or_default();
                    let _ = write!(o, " {} |", md(&v));
                }
                o.push('\n');
            }
            md_left_out(&mut o, shown, xs.len());
        }
        md_distributions(&mut o, p);
    }
    if let Some(cc) = &run.crosscheck {
        let _ = write!(
            o,
            "\n## Cross-check against established tools\n\n{}",
            super::crosscheck::markdown(cc)
        );
    }
    o
}

/// Markdown: the distributions of a probe, p50 with its interval where wider
/// than 1 % (as in the terminal).
fn md_distributions(o: &mut String, p: &ProbeResult) {
    if p.distributions.is_empty() {
        return;
    }
    o.push_str("\n| distribution | unit | n | min | p50 | p90 | p99 | max |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    let mut wide = false;
    let shown = super::rows_shown(p.distributions.len());
    for d in &p.distributions[..shown] {
        let s = &d.summary;
        let p50 = words::cell(s.p50, 1.0, Some(&s.median()));
        wide |= p50.contains('±');
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            md(&d.name),
            md(&d.unit),
            s.count,
            fmt_num(s.min),
            md(&p50),
            fmt_num(s.p90),
            fmt_num(s.p99),
            fmt_num(s.max)
        );
    }
    md_left_out(o, shown, p.distributions.len());
    if wide {
        o.push_str("\n± on p50 = 95 % CI of the median\n");
    }
}

/// The line below a Markdown table cut at [`super::MAX_TABLE_ROWS`], or nothing.
fn md_left_out(o: &mut String, shown: usize, total: usize) {
    if let Some(line) = super::rows_left_out(shown, total) {
        let _ = write!(o, "\n{}\n", md(&line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Finding;

    fn with_findings(n: usize) -> ProbeResult {
        let mut p = ProbeResult::new("alpha", "a probe", Status::Completed);
        let notes: Vec<Finding> = (0..n)
            .map(|i| Finding::Note {
                text: format!("finding {i}"),
            })
            .collect();
        p.findings = notes.into();
        p
    }

    #[test]
    fn a_section_opens_with_its_answer_and_collapses_long_findings() {
        let mut o = String::new();
        probe(
            &mut o,
            &with_findings(FINDINGS_SHOWN + 3),
            Some("the <answer>"),
            svg::ChartOpts::default(),
            &[],
        );
        let answer = o.find("<p class='answer'>").expect("answer shown");
        assert!(o.contains("the &lt;answer&gt;"), "{o}");
        assert!(answer < o.find("finding 0").expect("findings shown"), "{o}");
        let more = o.find("<details><summary>3 more findings</summary>");
        let last_open = o.find(&format!("finding {}", FINDINGS_SHOWN - 1));
        let first_closed = o.find(&format!("finding {FINDINGS_SHOWN}"));
        assert!(
            more.is_some() && last_open < more && more < first_closed,
            "{o}"
        );
    }

    #[test]
    fn a_stopped_probe_gets_no_answer_line_and_short_lists_stay_open() {
        let mut p = with_findings(2);
        p.status = Status::Skipped;
        p.reason = Some("no PMU".into());
        let mut o = String::new();
        probe(
            &mut o,
            &p,
            Some("skipped: no PMU"),
            svg::ChartOpts::default(),
            &[],
        );
        assert!(!o.contains("class='answer'"), "{o}");
        assert!(o.contains("Skipped:"), "{o}");
        assert!(!o.contains("more finding"), "{o}");
    }
}
