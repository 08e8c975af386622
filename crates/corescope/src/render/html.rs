//! The self-contained HTML report: one file, inline CSS and SVG, one small
//! script (legend toggles), no network.
//! Sections: the machine (summary, topology table, clock, environment), then every
//! probe by shape — findings first, then charts and tables, warnings last. Every
//! string from the run file is escaped.

use super::svg::{self, esc};
use super::terminal::{estimates_by_x, has_interval, interval_note, repetitions, series_groups};
use super::{fmt_num, fmt_value, fmt_x, words};
use crate::model::{Distribution, Estimate, ProbeResult, RunFile, Status};
use std::fmt::Write;

/// The report's stylesheet (shared with `compare`).
pub const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}\
.badge{font-size:.75em;padding:2px 8px;border-radius:8px;color:#fff;vertical-align:middle}\
.completed{background:#2a7}.gave_up{background:#d80}.skipped{background:#888}.failed{background:#c33}.interrupted{background:#a3a}\
.warn{color:#a50}.findings li{margin:.2em 0}figure{margin:1em 0}figcaption{font-size:.9em;color:#555}\
svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}details{margin:.5em 0}\
@media print{details{display:block}h2{page-break-before:always}}";

/// The whole report.
pub fn render_run(run: &RunFile) -> String {
    let run = &super::for_display(run);
    let mut o = String::new();
    let title = format!("corescope — {} — {}", run.host.hostname, run.started_utc);
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let _ = write!(o, "<h1>{}</h1>", esc(&title));
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
    for p in &run.probes {
        probe(&mut o, p);
    }
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

/// The only script: clicking a legend entry hides or shows its curve. The
/// report reads fine without it.
pub const SCRIPT: &str = "<script>document.querySelectorAll('g.legend').forEach(function(l){l.addEventListener('click',function(){var c=l.ownerSVGElement.querySelector('g.curve[data-curve=\"'+l.dataset.curve+'\"]');if(c){var h=c.style.display==='none';c.style.display=h?'':'none';l.style.opacity=h?1:0.4;}});});</script>";

fn machine(o: &mut String, run: &RunFile) {
    let h = &run.host;
    let e = &run.env;
    let c = &run.clock;
    o.push_str("<section id='machine'><h2>Machine</h2><table>");
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
    o.push_str("</table>");
    let _ = write!(o, "<figure>{}<figcaption>packages, cores and hardware threads (hover for CPU ids)</figcaption></figure>", svg::topology(&run.topology));
    // The CPU table, collapsed.
    let _ = write!(o, "<details><summary>CPU table ({} CPUs)</summary><table><tr><th>CPU</th><th>package</th><th>NUMA</th><th>core</th><th>slot</th><th>allowed</th></tr>", run.topology.pus.len());
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
    o.push_str("</table></details></section>");
}

fn probe(o: &mut String, p: &ProbeResult) {
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
    if !p.findings.is_empty() {
        o.push_str("<ul class='findings'>");
        for f in &p.findings {
            let _ = write!(o, "<li>{}</li>", esc(&super::words::finding(f)));
        }
        o.push_str("</ul>");
    }
    for group in series_groups(&p.series) {
        let first = group[0];
        let what = first.name.split('/').next().unwrap_or(&first.name);
        let curves: Vec<svg::Curve> = group
            .iter()
            .map(|s| {
                svg::Curve::of_series(s.name.split_once('/').map(|(_, v)| v).unwrap_or(&s.name), s)
            })
            .collect();
        let title = format!("{} — {what}", p.id);
        let ci = if curves.iter().any(svg::Curve::has_intervals) {
            let all: Vec<Estimate> = group
                .iter()
                .flat_map(|s| (0..s.y.len()).filter_map(|i| s.estimate(i)))
                .collect();
            repetitions(&all)
                .map(|(reps, _)| format!("; bars and band: 95 % CI of the median, {reps}"))
                .unwrap_or_default()
        } else {
            String::new()
        };
        let _ = write!(
            o,
            "<figure>{}<figcaption>{}: {} vs {}{}</figcaption></figure>",
            svg::chart(&title, &first.x_name, &first.y_name, &curves),
            esc(what),
            esc(&first.y_name.replace('_', " ")),
            esc(&first.x_name.replace('_', " ")),
            esc(&ci)
        );
        series_table(o, &group);
    }
    if !p.distributions.is_empty() {
        distributions(o, p);
    }
    for m in &p.matrices {
        let _ = write!(
            o,
            "<figure>{}<figcaption>{} ({})</figcaption></figure>",
            svg::heatmap(&m.name, &m.unit, &m.rows, &m.cols, &m.values),
            esc(&m.name),
            esc(&m.unit)
        );
    }
    for t in &p.timelines {
        let lanes: Vec<(String, Vec<(f64, f64)>)> = t
            .lanes
            .iter()
            .map(|l| {
                (
                    l.label.clone(),
                    l.spans.iter().map(|s| (s.start_ns, s.end_ns)).collect(),
                )
            })
            .collect();
        let _ = write!(
            o,
            "<figure>{}<figcaption>timeline {}: one lane per thread, one bar per portion of work</figcaption></figure>",
            svg::gantt(&t.name, &lanes),
            esc(&t.name)
        );
    }
    for t in &p.tables {
        let _ = write!(o, "<h3>{}</h3><table><tr>", esc(&t.name));
        for c in &t.columns {
            let _ = write!(o, "<th>{}</th>", esc(c));
        }
        o.push_str("</tr>");
        for r in &t.rows {
            o.push_str("<tr>");
            for v in r {
                let s = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => {
                        n.as_f64().map(fmt_num).unwrap_or_else(|| n.to_string())
                    }
                    other => other.to_string(),
                };
                let _ = write!(o, "<td>{}</td>", esc(&s));
            }
            o.push_str("</tr>");
        }
        o.push_str("</table>");
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

fn series_table(o: &mut String, group: &[&crate::model::Series]) {
    let first = group[0];
    let (xs, scale, label) = super::table_axes(group);
    let lookups: Vec<_> = group.iter().map(|s| estimates_by_x(s)).collect();
    let note = interval_note(lookups.iter().flat_map(|m| m.values()))
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    let _ = write!(
        o,
        "<details><summary>table ({}{})</summary><table><tr><th>{}</th>",
        esc(&label),
        esc(&note),
        esc(&first.x_name)
    );
    for s in group {
        let _ = write!(
            o,
            "<th>{}</th>",
            esc(s.name.split_once('/').map(|(_, v)| v).unwrap_or(&s.name))
        );
    }
    o.push_str("</tr>");
    for x in xs {
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
    o.push_str("</table></details>");
}

/// The median's 95 % interval as a table cell (`1.20–1.31 µs`), when it has one.
fn median_ci(d: &Distribution) -> String {
    let e = d.summary.median();
    if !has_interval(&e) {
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
        .any(|d| has_interval(&d.summary.median()));
    o.push_str("<table><tr><th>distribution</th><th>unit</th><th>n</th><th>min</th><th>p50</th>");
    if ci {
        o.push_str("<th>p50 95 % CI</th>");
    }
    o.push_str("<th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mode range</th></tr>");
    for d in &p.distributions {
        let s = &d.summary;
        let mode = d
            .mode_range
            .as_ref()
            .map(|m| {
                format!(
                    "{:.0} % within {}–{}",
                    m.fraction * 100.0,
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
    o.push_str("</table>");
    // Seed 000 Figure 8: A vs B with y = x, and the histograms.
    for d in &p.distributions {
        if let (Some(a), false) = (&d.paired_with, d.pairs.is_empty()) {
            let _ = write!(
                o,
                "<figure>{}<figcaption>{} vs {} (each dot one pair of samples taken back to back; dashed: y = x; histograms of each on the sides; right: intensity map)</figcaption></figure>",
                svg::paired(&d.name, a, &d.name, &d.unit, &d.pairs),
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
        svg::histogram(
            &d.name,
            &d.unit,
            &d.histogram.edges,
            &d.histogram.counts,
            d.histogram.log
        ),
        esc(&d.name)
    );
}

/// Text for a Markdown table cell or line: `|`, `\\`, the characters that
/// start emphasis, code, links or headings, and raw HTML (`<`, `>`, `&`) are
/// escaped; newlines become spaces.
pub fn md(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '\n' | '\r' => o.push(' '),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                o.push('\\');
                o.push(c);
            }
            c => o.push(c),
        }
    }
    o
}

/// Markdown: findings and series tables per probe.
pub fn markdown(run: &RunFile) -> String {
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
            for x in xs {
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
        }
        md_distributions(&mut o, p);
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
    let mut shown = false;
    for d in &p.distributions {
        let s = &d.summary;
        let p50 = words::cell(s.p50, 1.0, Some(&s.median()));
        shown |= p50.contains('±');
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
    if shown {
        o.push_str("\n± on p50 = 95 % CI of the median\n");
    }
}
