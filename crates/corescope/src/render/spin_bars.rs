//! Seed 003's figure: per benchmark, the active thread's slowdown under each spin
//! loop (a bar per loop, its 95 % interval as whiskers), against 1× = alone. One
//! chart per spinner placement, built from the probe's spin tables (a column per
//! loop, a row per quantity: `add ×`, `add low ×`, `add high ×`, ...). Files
//! written before the intervals were kept draw bars without whiskers.

use super::bars::{bars, Bar, BarGroup, Reference};
use super::svg::esc;
use crate::model::{ProbeResult, Table};
use crate::probes::spin::{
    bench_column, bench_high_column, bench_low_column, table_placement, BENCHES,
};
use std::fmt::Write;

/// The group of the slowdown over every benchmark (the table's `slowdown ×` row).
pub const ALL_GROUP: &str = "all benchmarks";

/// Whether `t` is a spin table these charts draw.
pub fn is_drawn(t: &Table) -> bool {
    table_placement(&t.name).is_some() && !groups(t).is_empty()
}

/// One group per benchmark (then one over all of them), one bar per loop, with the
/// interval where the table holds one.
pub fn groups(t: &Table) -> Vec<BarGroup> {
    let loops: Vec<&str> = t.columns.iter().skip(1).map(String::as_str).collect();
    let row = |label: &str| {
        t.rows
            .iter()
            .find(|r| r.first().and_then(|v| v.as_str()) == Some(label))
    };
    let cell = |r: Option<&Vec<serde_json::Value>>, k: usize| {
        r.and_then(|r| r.get(k + 1)).and_then(|v| v.as_f64())
    };
    let group = |label: &str, (value, low, high): (String, String, String)| {
        let v = row(&value)?;
        let (lo, hi) = (row(&low), row(&high));
        let bars = loops
            .iter()
            .enumerate()
            .filter_map(|(k, name)| {
                Some(Bar {
                    name: name.to_string(),
                    value: cell(Some(v), k)?,
                    interval: cell(lo, k).zip(cell(hi, k)),
                })
            })
            .collect::<Vec<_>>();
        (!bars.is_empty()).then(|| BarGroup {
            label: label.to_string(),
            bars,
        })
    };
    let mut out: Vec<BarGroup> = BENCHES
        .iter()
        .filter_map(|b| {
            group(
                b,
                (bench_column(b), bench_low_column(b), bench_high_column(b)),
            )
        })
        .collect();
    if !out.is_empty() {
        out.extend(group(
            ALL_GROUP,
            ("slowdown ×".into(), "low ×".into(), "high ×".into()),
        ));
    }
    out
}

/// The summary of spin's series chart, folded under the bars: each placement's
/// mean slowdown (the bars' last group) against each loop's read interval, one
/// point per loop, unnamed on the chart; the bars say the same per loop by name.
pub const FOLDED: &str = "mean slowdown over all benchmarks against the spin loop's read \
                          interval: a point per loop (the bars' last group, placed at how \
                          often the loop reads the flag; the table's read interval row says \
                          which loop is which)";

/// [`FOLDED`] when `p`'s bars are drawn above its series (a result whose probe
/// declares `View::SpinBars`).
pub fn folded(p: &ProbeResult) -> Option<&'static str> {
    (!p.series.is_empty() && p.tables.iter().any(is_drawn)).then_some(FOLDED)
}

/// The charts of a result's spin tables, one per placement, as HTML figures
/// (empty for a result without such tables).
pub fn figures(p: &ProbeResult) -> String {
    let mut o = String::new();
    let reference = Reference {
        value: 1.0,
        label: "1× = alone".into(),
    };
    for t in p.tables.iter().filter(|t| is_drawn(t)) {
        let rel = table_placement(&t.name).unwrap_or(&t.name);
        let title = format!("slowdown of the active thread, spinner {rel}");
        let _ = write!(
            o,
            "<figure>{}<figcaption>{}: time with the spinner ÷ time alone, per benchmark and spin loop (seed 003); whiskers: 95 % intervals of the paired repetitions; dashed: 1× = alone</figcaption></figure>",
            bars(&title, "x_alone", &groups(t), Some(&reference)),
            esc(&title)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::spin::{merge_tables, slowdown_measurement, SpinnerCount};

    /// Paired times of every benchmark: `slow` × as long with the spinner.
    fn paired(slow: f64) -> Vec<(Vec<f64>, Vec<f64>)> {
        BENCHES
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let alone: Vec<f64> = (0..8).map(|r| 1000.0 + (i * 7 + r * 13) as f64).collect();
                let with = alone
                    .iter()
                    .enumerate()
                    .map(|(r, a)| a * slow * (1.0 + 0.01 * (r % 3) as f64))
                    .collect();
                (with, alone)
            })
            .collect()
    }

    #[test]
    fn one_group_per_benchmark_one_bar_per_loop_with_intervals() {
        let loops = [("plain", 1.5), ("pause", 1.2), ("futex", 1.0)];
        let mut tables = Vec::new();
        for (name, slow) in loops {
            let m = slowdown_measurement(
                name,
                (10.0, 100.0),
                &paired(slow),
                "other-core",
                &SpinnerCount::Skipped,
            )
            .unwrap();
            tables.extend(m.tables);
        }
        let (tables, _) = merge_tables(tables);
        let t = &tables[0];
        assert!(is_drawn(t));
        let g = groups(t);
        assert_eq!(g.len(), BENCHES.len() + 1);
        for (group, b) in g.iter().zip(BENCHES.iter().chain([&ALL_GROUP])) {
            assert_eq!(group.label, *b);
            let names: Vec<&str> = group.bars.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names, ["plain", "pause", "futex"]);
            for bar in &group.bars {
                let (lo, hi) = bar.interval.expect("interval kept");
                assert!(lo <= bar.value && bar.value <= hi, "{b}: {bar:?}");
            }
        }
        assert!(
            (g[0].bars[0].value - 1.51).abs() < 0.02,
            "{:?}",
            g[0].bars[0]
        );
        let mut p = ProbeResult::new("spin", "t", crate::model::Status::Completed);
        p.tables = tables;
        let html = figures(&p);
        assert_eq!(html.matches("<figure>").count(), 1);
        assert_eq!(html.matches("class='whisker'").count(), 3 * g.len());
        assert!(html.contains("1× = alone"));
        assert_eq!(folded(&p), None, "no series, nothing to fold");
        p.push_point(crate::model::Point::new(
            "mean-slowdown/other-core",
            "read_interval_ns",
            40.0,
            "x_alone",
            1.2,
        ));
        assert_eq!(folded(&p), Some(FOLDED));
        p.series.clear();
        assert_eq!(folded(&p), None);
    }

    #[test]
    fn a_table_without_intervals_draws_bars_without_whiskers() {
        let t = Table {
            name: "spin/same-cpu".into(),
            columns: vec!["".into(), "plain".into()],
            rows: vec![
                vec!["add ×".into(), 1.5.into()],
                vec!["slowdown ×".into(), 1.4.into()],
            ],
        };
        let g = groups(&t);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].bars[0].interval, None);
        let other = Table {
            name: "event counters".into(),
            ..t
        };
        assert!(!is_drawn(&other));
    }
}
