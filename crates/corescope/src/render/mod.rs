//! Renderers: read the model, never measure.

pub mod csv;
pub mod html;
pub mod svg;
pub mod terminal;
pub mod topo;

/// Scale and label for a quantity named by its unit suffix, chosen from `magnitude`.
pub fn unit_scale(unit: &str, magnitude: f64) -> (f64, String) {
    let m = magnitude.abs();
    let si = |base: &str| -> (f64, String) {
        for (f, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
            if m >= f {
                return (f, format!("{p}{base}"));
            }
        }
        (1.0, base.to_string())
    };
    match unit {
        "ops_per_s" => si("ops/s"),
        "bytes_per_s" => si("B/s"),
        "events_per_s" => si("events/s"),
        "flops_per_s" => si("FLOP/s"),
        "per_s" | "increments_per_s" => si("/s"),
        "bytes" => {
            for (f, p) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
                if m >= f as f64 {
                    return (f as f64, p.into());
                }
            }
            (1.0, "B".into())
        }
        "ns" => {
            for (f, p) in [(1e9, "s"), (1e6, "ms"), (1e3, "µs")] {
                if m >= f {
                    return (f, p.into());
                }
            }
            (1.0, "ns".into())
        }
        "cycles" => si("cycles"),
        "s" | "seconds" => {
            if m < 1e-3 && m > 0.0 {
                (1e-6, "µs".into())
            } else if m < 1.0 && m > 0.0 {
                (1e-3, "ms".into())
            } else {
                (1.0, "s".into())
            }
        }
        other => (1.0, other.replace('_', " ")),
    }
}

/// Number with about four significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
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

/// An x value by its axis name: bytes scaled (`4.000 KiB`), whole numbers
/// without decimals (thread counts), anything else to four digits.
pub fn fmt_x(x_name: &str, x: f64) -> String {
    if x_name == "bytes" {
        fmt_value("bytes", x)
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        fmt_num(x)
    }
}

/// A value with its unit, scaled (`12.3 Gops/s`, `840 ns`, `1.50 GiB`).
pub fn fmt_value(unit: &str, v: f64) -> String {
    let (f, label) = unit_scale(unit, v);
    format!("{} {label}", fmt_num(v / f))
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
        profile: run.profile,
        started_utc: run.started_utc.clone(),
        command: run.command.clone(),
        probes: Vec::new(),
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

/// One probe made safe to show (see [`for_display`]).
pub fn probe_for_display(p: &crate::model::ProbeResult) -> crate::model::ProbeResult {
    let mut p = p.clone();
    name(&mut p.id);
    text(&mut p.title);
    p.reason.as_mut().map(text);
    p.findings.iter_mut().for_each(text);
    p.warnings.iter_mut().for_each(text);
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

/// A JSON value with its strings (and keys) cleaned; an array or object whose
/// text is longer than [`MAX_TEXT_CHARS`] becomes that text, cut.
fn clean_json(v: serde_json::Value) -> serde_json::Value {
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
mod tests {
    use super::*;

    #[test]
    fn values_scale_with_units() {
        assert_eq!(fmt_value("ops_per_s", 12.3e9), "12.30 Gops/s");
        assert_eq!(fmt_value("ns", 840.0), "840.0 ns");
        assert_eq!(fmt_value("ns", 28_000.0), "28.00 µs");
        assert_eq!(fmt_value("bytes", 1.5 * (1u64 << 30) as f64), "1.500 GiB");
        assert_eq!(fmt_value("bytes_per_s", 25e9), "25.00 GB/s");
        assert_eq!(fmt_num(f64::NAN), "-");
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
}
