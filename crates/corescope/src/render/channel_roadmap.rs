//! Seed 004 Figure 1 in the HTML report (`View::ChannelRoadmap`, which
//! `channel-tune` declares): the Stage One roadmap, one bar per step (the median time per event with its 95 %
//! interval), the baseline drawn as a dashed reference line, a skipped step
//! (the SMT baseline without SMT) as an empty band that says why. And seed 004's
//! Figures 3–8: Stage Two's time per event against the buffer size, a curve per
//! wait strategy, with its Optimal, Achievable and Upper-bound lines drawn as
//! references (dashed grey, labelled, no markers), never like measured curves.

use super::bars::{bars, Bar, BarGroup, Reference};
use super::svg::{esc, open_svg, series_style, tick_labels, Axis, W};
use crate::model::{ProbeResult, Series, Table};
use crate::probes::channel_tune::ROADMAP_TITLE;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write;

/// The reference lines of Stage Two, as the first word of their row labels and
/// the last part of their series names: limits measured without the profiler's
/// cost (or with all of it in one thread), never contenders.
pub const REFERENCES: [&str; 3] = ["Optimal", "Achievable", "Upper bound"];

/// Whether a row label (`Optimal: fib, no profiling`) or a series variant
/// (`Optimal`) names a reference line.
pub fn is_reference(label: &str) -> bool {
    let head = label.split(':').next().unwrap_or(label).trim();
    REFERENCES.contains(&head)
}

/// The roadmap's figure (`<figure>` with its caption) when `p` has the roadmap
/// table; `None` otherwise.
pub fn figure(p: &ProbeResult) -> Option<String> {
    let t = p.tables.iter().find(|t| t.name == ROADMAP_TITLE)?;
    let (groups, baseline_ns) = roadmap_bars(t)?;
    let reference = baseline_ns.map(|v| Reference {
        value: v,
        label: "baseline".into(),
    });
    let title = format!("{} — Stage One roadmap (seed 004 Figure 1)", p.id);
    Some(format!(
        "<figure>{}<figcaption>{}</figcaption></figure>",
        bars(&title, "ns", &groups, reference.as_ref()),
        esc(
            "time per event of each step of the roadmap: median of its rounds, whiskers the \
             95 % interval of the median; dashed: the baseline (the slower of producer and \
             consumer alone); an empty band: a step not run here, its reason in the label"
        )
    ))
}

/// The bars of the roadmap table (one group per row, in the seed's order) and
/// the baseline in ns (from any measured row's `x_baseline`).
pub fn roadmap_bars(t: &Table) -> Option<(Vec<BarGroup>, Option<f64>)> {
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let (run, ns) = (col("run")?, col("ns_per_event")?);
    let (lo, hi, x) = (
        col("ns_per_event_lo"),
        col("ns_per_event_hi"),
        col("x_baseline"),
    );
    let num = |row: &[Value], i: Option<usize>| i.and_then(|i| row.get(i)?.as_f64());
    let mut baseline = None;
    let groups = t
        .rows
        .iter()
        .map(|row| {
            let label = row.get(run).and_then(Value::as_str).unwrap_or("?");
            let value = num(row, Some(ns)).unwrap_or(f64::NAN);
            if let (None, Some(r)) = (baseline, num(row, x).filter(|r| *r > 0.0)) {
                baseline = Some(value / r);
            }
            let interval = num(row, lo).zip(num(row, hi));
            BarGroup {
                label: label.to_string(),
                bars: vec![Bar {
                    name: "time per event".into(),
                    value,
                    interval,
                }],
            }
        })
        .collect();
    Some((groups, baseline.filter(|b: &f64| b.is_finite())))
}

/// The Stage Two charts: per step (series prefix), its measured curves and its
/// reference lines (series whose variant [`is_reference`]); only steps that
/// have references.
fn stage_two(p: &ProbeResult) -> Vec<(String, Vec<&Series>, Vec<&Series>)> {
    let mut out: Vec<(String, Vec<&Series>, Vec<&Series>)> = Vec::new();
    for s in &p.series {
        let Some((step, variant)) = s.name.split_once('/') else {
            continue;
        };
        let i = match out.iter().position(|(n, _, _)| n == step) {
            Some(i) => i,
            None => {
                out.push((step.to_string(), Vec::new(), Vec::new()));
                out.len() - 1
            }
        };
        if is_reference(variant) {
            out[i].2.push(s);
        } else {
            out[i].1.push(s);
        }
    }
    out.retain(|(_, measured, refs)| !refs.is_empty() && !measured.is_empty());
    out
}

/// The series the generic charts still draw: all but those of [`figures`].
pub fn undrawn_series(p: &ProbeResult) -> Cow<'_, [Series]> {
    let steps: Vec<String> = stage_two(p).into_iter().map(|(n, _, _)| n).collect();
    if steps.is_empty() {
        return Cow::Borrowed(&p.series);
    }
    let drawn = |s: &Series| steps.iter().any(|n| s.name.starts_with(&format!("{n}/")));
    Cow::Owned(p.series.iter().filter(|s| !drawn(s)).cloned().collect())
}

/// Stage Two's figures with their captions (empty for other probes).
pub fn figures(p: &ProbeResult) -> String {
    let mut o = String::new();
    for (step, measured, refs) in stage_two(p) {
        let title = format!("{} — stage two: {step}", p.id);
        let _ = write!(
            o,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            stage_two_chart(&title, &measured, &refs),
            esc(&format!(
                "stage two, {step}: time per event against the buffer size, a curve per wait \
                 strategy (the pinned runs; median of the rounds, bars: 95 % interval of the \
                 median); dashed grey: the reference lines, measured per step, not per size, so flat \
                 across the sizes — Optimal (no profiling), Achievable (events into a buffer nobody \
                 reads), Upper bound (fib and profiling in one thread); the step's table has \
                 every run"
            ))
        );
    }
    o
}

/// Plot area of a Stage Two chart: left, right (legend), top, bottom margins.
const PLOT: (f64, f64, f64, f64) = (70.0, 230.0, 24.0, 45.0);
/// Height of a Stage Two chart.
const CHART_H: f64 = 360.0;

/// One Stage Two chart: buffer size on a log-2 axis, ns per event from zero.
fn stage_two_chart(title: &str, measured: &[&Series], refs: &[&Series]) -> String {
    let (ml, mr, mt, mb) = PLOT;
    let (x0, x1, y0, y1) = (ml, W - mr, CHART_H - mb, mt);
    let mut sizes: Vec<f64> = measured
        .iter()
        .flat_map(|s| s.x.iter().copied())
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let (lo, hi) = (sizes.first().copied(), sizes.last().copied());
    let px = |x: f64| match (lo, hi) {
        (Some(lo), Some(hi)) if hi > lo => x0 + (x / lo).log2() / (hi / lo).log2() * (x1 - x0),
        _ => (x0 + x1) / 2.0,
    };
    let ref_values: Vec<(String, f64)> = refs
        .iter()
        .filter_map(|s| {
            let v = s.y.iter().copied().find(|v| v.is_finite())?;
            Some((s.name.split_once('/').map_or("", |(_, v)| v).to_string(), v))
        })
        .collect();
    let values = measured
        .iter()
        .flat_map(|s| (0..s.y.len()).filter_map(|i| s.estimate(i)))
        .flat_map(|e| [e.value, e.lo, e.hi])
        .chain(ref_values.iter().map(|r| r.1));
    let axis = Axis::over(values, false, true);
    let py = |v: f64| y0 - axis.t(v) * (y0 - y1);
    let mut out = open_svg(W, CHART_H, title, None);
    let _ = write!(
        out,
        "<text x='{x0}' y='14' font-size='12' font-weight='bold'>{}</text><rect x='{x0}' y='{y1}' width='{:.1}' height='{:.1}' fill='none' stroke='#999'/>",
        esc(title),
        x1 - x0,
        y0 - y1
    );
    let (ticks, y_title) = tick_labels("ns", &axis);
    for (t, l) in ticks {
        let y = py(t);
        let _ = write!(out, "<line x1='{x0}' y1='{y:.1}' x2='{x1}' y2='{y:.1}' stroke='#eee'/><text x='{:.1}' y='{:.1}' font-size='10' text-anchor='end'>{}</text>", x0 - 4.0, y + 3.0, esc(&l));
    }
    for &x in &sizes {
        let _ = write!(
            out,
            "<text x='{:.1}' y='{:.1}' font-size='10' text-anchor='middle'>{}</text>",
            px(x),
            y0 + 14.0,
            esc(&size_label(x))
        );
    }
    let _ = write!(out, "<text x='{:.1}' y='{:.1}' font-size='11' text-anchor='middle'>buffer size</text><text x='14' y='{:.1}' font-size='11' text-anchor='middle' transform='rotate(-90 14 {:.1})'>{}</text>", (x0 + x1) / 2.0, y0 + 32.0, (y0 + y1) / 2.0, (y0 + y1) / 2.0, esc(&format!("per event ({y_title})")));
    for (name, v) in &ref_values {
        let (y, l) = (py(*v), format!("{name}: {}", super::fmt_value("ns", *v)));
        let _ = write!(out, "<g class='reference'><line x1='{x0}' y1='{y:.1}' x2='{x1}' y2='{y:.1}' stroke='#777' stroke-width='1.2' stroke-dasharray='5 3'><title>{}</title></line><text x='{:.1}' y='{:.1}' font-size='9' fill='#555'>{}</text></g>", esc(&l), x1 + 6.0, y + 3.0, esc(&l));
    }
    for (i, s) in measured.iter().enumerate() {
        measured_curve(&mut out, s, i, (&px, &py));
        let (colour, dash) = series_style(i);
        let ly = y1 + 8.0 + 15.0 * i as f64;
        let name = s.name.split_once('/').map_or(s.name.as_str(), |(_, v)| v);
        let _ = write!(out, "<line x1='{:.1}' y1='{ly:.1}' x2='{:.1}' y2='{ly:.1}' stroke='{colour}' stroke-width='2' stroke-dasharray='{dash}'/><text x='{:.1}' y='{:.1}' font-size='10'>{}</text>", x1 + 110.0, x1 + 130.0, x1 + 134.0, ly + 3.5, esc(name));
    }
    out.push_str("</svg>");
    out
}

/// A buffer size as an axis label (`4 KiB`).
fn size_label(x: f64) -> String {
    let (f, unit) = super::unit_scale("bytes", x);
    format!("{} {unit}", super::fmt_x("", x / f))
}

/// A measured curve: its line, a marker per point with its tooltip, and the 95 %
/// interval as a bar where it has one.
fn measured_curve(
    out: &mut String,
    s: &Series,
    i: usize,
    (px, py): (&dyn Fn(f64) -> f64, &dyn Fn(f64) -> f64),
) {
    let (colour, dash) = series_style(i);
    let mut pts: Vec<(f64, crate::model::Estimate)> = (0..s.x.len())
        .filter_map(|k| Some((s.x[k], s.estimate(k)?)))
        .filter(|(x, e)| x.is_finite() && *x > 0.0 && e.value.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let line: Vec<String> = pts
        .iter()
        .map(|(x, e)| format!("{:.1},{:.1}", px(*x), py(e.value)))
        .collect();
    let _ = write!(out, "<g class='curve'><polyline fill='none' stroke='{colour}' stroke-width='1.8' stroke-dasharray='{dash}' points='{}'/>", line.join(" "));
    for (x, e) in &pts {
        let (cx, cy) = (px(*x), py(e.value));
        let mut tip = format!(
            "{}: {} → {}",
            s.name,
            super::fmt_value("bytes", *x),
            super::fmt_value("ns", e.value)
        );
        if e.has_interval() && e.lo.is_finite() && e.hi.is_finite() {
            let _ = write!(
                out,
                "<path class='ci' d='M{cx:.1},{:.1}V{:.1}' stroke='{colour}' fill='none'/>",
                py(e.lo),
                py(e.hi)
            );
            let _ = write!(
                tip,
                " (95 % CI {}–{})",
                super::fmt_value("ns", e.lo),
                super::fmt_value("ns", e.hi)
            );
        }
        let _ = write!(
            out,
            "<circle cx='{cx:.1}' cy='{cy:.1}' r='2.6' fill='{colour}'><title>{}</title></circle>",
            esc(&tip)
        );
    }
    out.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_roadmap_table_becomes_bars_with_the_baseline_as_reference() {
        let t = Table {
            name: ROADMAP_TITLE.into(),
            columns: [
                "run",
                "x_baseline",
                "ns_per_event",
                "ns_per_event_lo",
                "ns_per_event_hi",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![
                vec![
                    json!("baseline producer: alone"),
                    json!(1.0),
                    json!(2.0),
                    json!(1.9),
                    json!(2.2),
                ],
                vec![
                    json!("SMT baseline (skipped: no SMT)"),
                    json!(null),
                    json!(null),
                    json!(null),
                    json!(null),
                ],
                vec![
                    json!("p0_add_parallel"),
                    json!(1.5),
                    json!(3.0),
                    json!(2.8),
                    json!(3.5),
                ],
            ],
        };
        let (groups, baseline) = roadmap_bars(&t).unwrap();
        assert_eq!(groups.len(), 3);
        assert_eq!(baseline, Some(2.0));
        assert_eq!(groups[2].bars[0].interval, Some((2.8, 3.5)));
        assert!(
            groups[1].bars[0].value.is_nan(),
            "a skipped step is never a number"
        );
        let mut p = ProbeResult::new("channel-tune", "t", crate::model::Status::Completed);
        assert!(figure(&p).is_none());
        p.tables.push(t);
        let svg = figure(&p).unwrap();
        assert!(svg.contains("skipped: no SMT") && svg.contains("stroke-dasharray"));
    }

    #[test]
    fn reference_rows_and_series_are_told_apart() {
        assert!(is_reference("Optimal: fib, no profiling"));
        assert!(is_reference("Upper bound"));
        assert!(is_reference(
            "Achievable: events into a buffer nobody reads"
        ));
        assert!(!is_reference("3 buffers of 4 KiB, spin"));
        assert!(!is_reference("baseline producer: alone"));
    }

    #[test]
    fn stage_two_draws_its_limits_as_dashed_references_without_markers() {
        use crate::model::Point;
        let mut p = ProbeResult::new("tuner", "t", crate::model::Status::Completed);
        let what = "fib, 24-byte events";
        for (x, v) in [(1024.0, 30.0), (4096.0, 20.0)] {
            for (wait, f) in [("spin", 1.0), ("condvar", 2.0)] {
                p.push_point(Point::samples(
                    format!("{what}/{wait}"),
                    "bytes",
                    x,
                    "ns",
                    vec![v * f, v * f * 1.1, v * f * 0.9],
                ));
            }
            for (name, r) in [
                ("Optimal", 5.0),
                ("Achievable", 12.0),
                ("Upper bound", 90.0),
            ] {
                p.push_point(Point::samples(
                    format!("{what}/{name}"),
                    "bytes",
                    x,
                    "ns",
                    vec![r],
                ));
            }
        }
        p.push_point(Point::new(
            "stage one: buffer size/3 buffers",
            "bytes",
            1024.0,
            "ns",
            8.0,
        ));
        let html = figures(&p);
        assert_eq!(html.matches("<figure>").count(), 1);
        assert_eq!(html.matches("<g class='reference'>").count(), 3);
        let refs: Vec<&str> = html
            .split("<g class='reference'>")
            .skip(1)
            .map(|r| r.split("</g>").next().unwrap())
            .collect();
        for r in &refs {
            assert!(r.contains("stroke='#777'") && r.contains("stroke-dasharray"));
            assert!(!r.contains("<circle"), "no markers on a reference: {r}");
        }
        assert!(html.contains("Optimal: 5.000 ns"));
        // Two measured curves, two markers each.
        assert_eq!(html.matches("<g class='curve'>").count(), 2);
        assert_eq!(html.matches("<circle").count(), 4);
        assert!(!html.contains("NaN"));
        // The generic charts keep only Stage One.
        let left = undrawn_series(&p);
        assert_eq!(left.len(), 1);
        assert!(left[0].name.starts_with("stage one"));
        // Without references nothing is Stage Two's.
        p.series.retain(|s| !s.name.split('/').any(is_reference));
        assert!(figures(&p).is_empty());
        assert_eq!(undrawn_series(&p).len(), p.series.len());
    }
}
