//! Renderers: read the model, never measure. Imported only by the commands.

pub mod bars;
pub mod channel_roadmap;
pub mod compare;
pub mod compare_first;
pub mod compare_html;
pub mod compare_text;
pub mod compare_view;
pub mod consistency;
pub mod crosscheck;
pub mod csv;
pub mod distribution_svg;
pub mod doctor;
pub mod gantt;
pub mod glossary;
pub mod heatmap;
pub mod html;
pub mod html_answers;
pub mod hwloc_xml;
pub mod loaded_curve;
pub mod machine_drawing;
pub mod peak_overview;
pub mod pinning;
pub mod plan;
pub mod reference;
pub mod spin_bars;
pub mod stream_chart;
pub mod summary;
pub mod summary_headline;
pub mod summary_items;
pub mod svg;
pub mod svg_legend;
pub mod terminal;
pub mod topo;
pub mod tune_words;
pub mod warning_overview;
pub mod warning_words;
pub mod words;
pub mod xy_chart;

pub use crate::units::{fmt_num, fmt_ratio, fmt_value, fmt_x, unit_scale};

/// The special views the probe `id` declares in `registry` ([`Probe::views`]);
/// none for an id the registry does not know (an older run file's).
///
/// [`Probe::views`]: crate::probes::AnyProbe::views
pub fn views_of(
    registry: &[Box<dyn crate::probes::AnyProbe>],
    id: &str,
) -> &'static [crate::model::View] {
    registry
        .iter()
        .find(|p| p.id() == id)
        .map_or(&[], |p| p.views())
}

/// Escape text for HTML and SVG.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
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

/// The rows and unit of one table of several series sharing an x axis: every x
/// any of them has (sorted, each once), and the scale and label of the y values
/// (chosen from the largest y, named by the first series' `y_name`).
pub fn table_axes(series: &[&crate::model::Series]) -> (Vec<f64>, f64, String) {
    let magnitude = series
        .iter()
        .flat_map(|s| s.y.iter().copied())
        .fold(0.0, f64::max);
    let y_name = series.first().map(|s| s.y_name.as_str()).unwrap_or("");
    let (scale, label) = unit_scale(y_name, magnitude);
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.x.iter().copied()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    (xs, scale, label)
}

/// What shapes a big run, in words, for the environment line: the cgroup CPU
/// limit, isolated and `nohz_full` CPUs, NUMA balancing. Only what was recorded
/// (older run files have none of it).
pub fn env_extras(e: &crate::model::EnvInfo) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = e.cgroup_cpu_max {
        out.push(format!(
            "cgroup CPU limit {:.2} CPUs ({} µs per {} µs)",
            m.cpus(),
            m.quota_us,
            m.period_us
        ));
    }
    if let Some(c) = e.isolated_cpus.as_deref().filter(|c| !c.is_empty()) {
        out.push(format!("isolated CPUs {c}"));
    }
    if let Some(c) = e.nohz_full_cpus.as_deref().filter(|c| !c.is_empty()) {
        out.push(format!("nohz_full CPUs {c}"));
    }
    if let Some(b) = e.numa_balancing {
        out.push(format!(
            "NUMA balancing {}",
            match b {
                0 => "off".to_string(),
                1 => "on".to_string(),
                2 => "memory tiering".to_string(),
                3 => "on + memory tiering".to_string(),
                other => format!("mode {other}"),
            }
        ));
    }
    out
}

/// Most rows one table shows in the terminal, the HTML report and Markdown
/// (series tables, free tables, matrix grids, distribution tables, and their
/// `compare` views). The rest are counted in a line below the table
/// ([`rows_left_out`]); the CSV export keeps every row. A 1 M-row table took
/// 1.9 GB and 5 s to lay out in the terminal.
pub const MAX_TABLE_ROWS: usize = 1000;

/// How many of `total` rows a table shows (at most [`MAX_TABLE_ROWS`]).
pub fn rows_shown(total: usize) -> usize {
    total.min(MAX_TABLE_ROWS)
}

/// The line said below a table that shows `shown` of its `total` rows, in words
/// (`… 999,000 more rows (1,000 of 1,000,000 shown); the CSV export
/// (--csv DIR) has every row`); `None` when every row is shown.
pub fn rows_left_out(shown: usize, total: usize) -> Option<String> {
    let left = total.checked_sub(shown).filter(|&n| n > 0)?;
    Some(format!(
        "… {} more row{} ({} of {} shown); the CSV export (--csv DIR) has every row",
        fmt_count(left),
        if left == 1 { "" } else { "s" },
        fmt_count(shown),
        fmt_count(total)
    ))
}

/// A count with thousands separated by commas (`1,000,000`).
pub fn fmt_count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Longest name (probe, series, unit, label, host) shown in the terminal and
/// HTML; longer ones are cut with an ellipsis (JSON and CSV keep them whole).
pub const MAX_NAME_CHARS: usize = 120;
/// Longest sentence (reason, finding, warning, table cell, command) shown.
pub const MAX_TEXT_CHARS: usize = 2000;

/// Text made safe to show: control characters (ESC, BEL, CR, C1 controls ...)
/// written as visible escapes (`\u{1b}`), bidirectional overrides dropped, and
/// cut to `max` characters with an ellipsis. Linear in `max`, not in `s`.
/// A newline is kept only when `keep_newlines`.
pub fn clean(s: &str, max: usize, keep_newlines: bool) -> String {
    let mut o = String::with_capacity(s.len().min(max + 8));
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            o.push('…');
            break;
        }
        match c {
            '\n' if keep_newlines => o.push(c),
            '\t' => o.push(' '),
            // Bidirectional embeddings, overrides and isolates reorder what a
            // terminal shows (CVE-2021-42574, "Trojan Source").
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c if c.is_control() => o.extend(c.escape_default()),
            c => o.push(c),
        }
    }
    o
}

fn name(s: &mut String) {
    *s = clean(s, MAX_NAME_CHARS, false);
}

fn text(s: &mut String) {
    *s = clean(s, MAX_TEXT_CHARS, false);
}

/// A typed finding or warning with every string in it cleaned (through its JSON
/// form, so no field is forgotten); unchanged if the round trip fails.
fn cleaned<T: serde::Serialize + serde::de::DeserializeOwned + Clone>(t: &T) -> T {
    serde_json::to_value(t)
        .ok()
        .map(clean_json)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_else(|| t.clone())
}

/// A copy of a run for the terminal and HTML: every string cleaned and cut
/// (see [`clean`]); numbers untouched.
pub fn for_display(run: &crate::model::RunFile) -> crate::model::RunFile {
    let mut r = header_for_display(run);
    r.probes = run.probes.iter().map(probe_for_display).collect();
    r
}

/// [`for_display`] without the probes (for the machine summary).
pub fn header_for_display(run: &crate::model::RunFile) -> crate::model::RunFile {
    let mut r = crate::model::RunFile {
        schema_version: run.schema_version,
        tool: run.tool.clone(),
        host: run.host.clone(),
        topology: run.topology.clone(),
        clock: run.clock.clone(),
        env: run.env.clone(),
        doctor: run.doctor.clone(),
        profile: run.profile,
        started_utc: run.started_utc.clone(),
        command: run.command.clone(),
        probes: Vec::new(),
        statistics: run.statistics.clone(),
        drift: run.drift.clone(),
        crosscheck: run.crosscheck.clone(),
    };
    let h = &mut r.host;
    for s in [
        &mut h.hostname,
        &mut h.cpu_model,
        &mut h.arch,
        &mut h.os,
        &mut h.kernel,
    ] {
        name(s);
    }
    h.virtualized.as_mut().map(name);
    let e = &mut r.env;
    for o in [&mut e.governor, &mut e.smt, &mut e.thp] {
        o.as_mut().map(name);
    }
    text(&mut e.cpuset);
    name(&mut r.clock.source);
    name(&mut r.tool.name);
    name(&mut r.tool.version);
    name(&mut r.started_utc);
    let t = &mut r.topology;
    name(&mut t.source);
    t.pus.iter_mut().for_each(|p| {
        p.kind.as_mut().map(name);
    });
    t.levels.iter_mut().for_each(|l| name(&mut l.name));
    t.caches.iter_mut().for_each(|c| name(&mut c.kind));
    r.command.iter_mut().for_each(text);
    r
}

/// One probe made safe to show (see [`for_display`]); free tables keep their
/// rows up to [`MAX_TABLE_ROWS`] (see [`probe_shown_rows`]).
pub fn probe_for_display(p: &crate::model::ProbeResult) -> crate::model::ProbeResult {
    let mut p = probe_shown_rows(p);
    name(&mut p.id);
    text(&mut p.title);
    p.reason.as_mut().map(text);
    for f in p.findings.as_mut_vec() {
        *f = cleaned(f);
    }
    for w in p.warnings.as_mut_vec() {
        *w = cleaned(w);
    }
    for a in &mut p.aliases {
        for t in [&mut a.series, &mut a.same_as, &mut a.config] {
            name(t);
        }
    }
    p.params = std::mem::take(&mut p.params)
        .into_iter()
        .map(|(k, v)| (clean(&k, MAX_NAME_CHARS, false), clean_json(v)))
        .collect();
    for s in &mut p.series {
        for t in [&mut s.name, &mut s.x_name, &mut s.y_name] {
            name(t);
        }
    }
    for d in &mut p.distributions {
        name(&mut d.name);
        name(&mut d.unit);
        d.paired_with.as_mut().map(name);
    }
    for m in &mut p.matrices {
        name(&mut m.name);
        name(&mut m.unit);
        m.rows.iter_mut().chain(&mut m.cols).for_each(name);
    }
    for t in &mut p.timelines {
        name(&mut t.name);
        for l in &mut t.lanes {
            name(&mut l.label);
            l.spans.iter_mut().for_each(|s| name(&mut s.kind));
        }
    }
    for t in &mut p.tables {
        name(&mut t.name);
        t.columns.iter_mut().for_each(name);
        for row in &mut t.rows {
            for v in row.iter_mut() {
                *v = clean_json(std::mem::take(v));
            }
        }
    }
    p
}

/// A copy of a probe with every field but its free tables' rows, and those
/// rows up to [`MAX_TABLE_ROWS`]; each row past it is left empty (no cell,
/// nothing allocated), so the copy keeps the count of rows, which is all a
/// renderer shows of them. A 1 M-row table is not copied whole to be shown.
fn probe_shown_rows(p: &crate::model::ProbeResult) -> crate::model::ProbeResult {
    let tables = p
        .tables
        .iter()
        .map(|t| crate::model::Table {
            name: t.name.clone(),
            columns: t.columns.clone(),
            rows: t
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    if i < MAX_TABLE_ROWS {
                        r.clone()
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
        })
        .collect();
    // Every field named (no `..`): a field added to the model is a compile
    // error here, not a field silently left out of the display.
    crate::model::ProbeResult {
        id: p.id.clone(),
        title: p.title.clone(),
        status: p.status,
        reason: p.reason.clone(),
        params: p.params.clone(),
        cases_planned: p.cases_planned,
        cases_done: p.cases_done,
        elapsed_s: p.elapsed_s,
        series: p.series.clone(),
        distributions: p.distributions.clone(),
        matrices: p.matrices.clone(),
        timelines: p.timelines.clone(),
        tables,
        warnings: p.warnings.clone(),
        findings: p.findings.clone(),
        aliases: p.aliases.clone(),
        counters: p.counters.clone(),
        machine_states: p.machine_states.clone(),
    }
}

/// A JSON value with its strings (and keys) cleaned; an array or object whose
/// text is longer than [`MAX_TEXT_CHARS`] becomes that text, cut.
pub fn clean_json(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(clean(&s, MAX_TEXT_CHARS, false)),
        Value::Array(_) | Value::Object(_) => {
            let text = v.to_string();
            if text.len() > MAX_TEXT_CHARS {
                return Value::String(clean(&text, MAX_TEXT_CHARS, false));
            }
            match v {
                Value::Array(a) => Value::Array(a.into_iter().map(clean_json).collect()),
                Value::Object(o) => Value::Object(
                    o.into_iter()
                        .map(|(k, v)| (clean(&k, MAX_NAME_CHARS, false), clean_json(v)))
                        .collect(),
                ),
                other => other,
            }
        }
        other => other,
    }
}

/// The y of each x of a series, for look-ups in tables that line series up by
/// x (linear in the data, where `position()` per row was quadratic). The first
/// y wins when an x repeats; `-0.0` and `0.0` are one key.
pub fn y_by_x(s: &crate::model::Series) -> std::collections::HashMap<u64, f64> {
    let mut m = std::collections::HashMap::with_capacity(s.x.len());
    for (&x, &y) in s.x.iter().zip(&s.y) {
        m.entry(x_key(x)).or_insert(y);
    }
    m
}

/// The key of an x value in [`y_by_x`].
pub fn x_key(x: f64) -> u64 {
    if x == 0.0 {
        0
    } else {
        x.to_bits()
    }
}

#[cfg(test)]
mod env_tests {
    use super::*;
    use crate::model::{CpuMax, EnvInfo};

    #[test]
    fn env_extras_only_say_what_was_recorded() {
        assert!(env_extras(&EnvInfo::default()).is_empty());
        let e = EnvInfo {
            cgroup_cpu_max: Some(CpuMax {
                quota_us: 150_000,
                period_us: 100_000,
            }),
            isolated_cpus: Some("2-5".into()),
            nohz_full_cpus: Some(String::new()),
            numa_balancing: Some(1),
            ..EnvInfo::default()
        };
        assert_eq!(
            env_extras(&e),
            [
                "cgroup CPU limit 1.50 CPUs (150000 µs per 100000 µs)",
                "isolated CPUs 2-5",
                "NUMA balancing on"
            ]
        );
    }

    #[test]
    fn text_is_cleaned_and_cut() {
        assert_eq!(clean("a\u{1b}[31mb\u{7}", 50, false), "a\\u{1b}[31mb\\u{7}");
        assert_eq!(clean("x\ry\nz", 50, false), "x\\ry\\nz");
        assert_eq!(clean("x\nz", 50, true), "x\nz");
        assert_eq!(clean("ab\u{202e}c", 50, false), "abc");
        assert_eq!(clean(&"h".repeat(1_000_000), 5, false), "hhhhh…");
        assert_eq!(clean("\u{9b}", 5, false), "\\u{9b}");
    }

    #[test]
    fn cut_tables_say_how_many_rows_are_left_out() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1000), "1,000");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
        assert_eq!(rows_shown(5), 5);
        assert_eq!(rows_shown(MAX_TABLE_ROWS + 1), MAX_TABLE_ROWS);
        assert_eq!(rows_left_out(5, 5), None);
        let line = rows_left_out(1000, 1_000_000).unwrap_or_default();
        assert!(
            line.starts_with("… 999,000 more rows (1,000 of 1,000,000 shown)"),
            "{line}"
        );
        assert!(rows_left_out(1, 2)
            .unwrap_or_default()
            .starts_with("… 1 more row ("));
    }
}
