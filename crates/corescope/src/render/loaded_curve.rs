//! The loaded-latency curve in the HTML report (`View::LoadedCurve`, which
//! `loaded-latency` and `loaded-coherence` declare), as Intel MLC (`--loaded_latency`)
//! and the Mess benchmark draw it: latency (y) against the bandwidth the other CPUs
//! draw (x), a 95 % interval on each axis where the run has one. Built from the
//! curve tables `loaded-latency` and `loaded-coherence` write ("…: latency vs
//! bandwidth", one row per step of the traffic ladder); one chart per measured node
//! (read and read/write traffic together) or per coherence figure (CAS hand-off,
//! mutex wake-up: every pair together). A renderer never measures: the tables hold
//! every number drawn.

use super::svg::esc;
use super::xy_chart::{xy_chart, XyCurve, XyPoint};
use crate::model::{ProbeResult, Table};
use std::fmt::Write;

/// The end of a curve table's name.
pub const TABLE_SUFFIX: &str = ": latency vs bandwidth";

/// Columns read, in order: bandwidth and its interval, latency and its interval.
const COLUMNS: [&str; 6] = [
    "bandwidth (B/s)",
    "bandwidth lo",
    "bandwidth hi",
    "latency (ns)",
    "latency lo",
    "latency hi",
];

/// Whether `t` is a curve table these charts draw.
pub fn is_drawn(t: &Table) -> bool {
    t.name.ends_with(TABLE_SUFFIX) && !points(t).is_empty()
}

/// The points of a curve table in its row order (the ladder's); none when a
/// column is missing. An interval is kept where both ends are numbers.
pub fn points(t: &Table) -> Vec<XyPoint> {
    let Some(cols) = COLUMNS
        .iter()
        .map(|name| t.columns.iter().position(|c| c == name))
        .collect::<Option<Vec<usize>>>()
    else {
        return Vec::new();
    };
    t.rows
        .iter()
        .filter_map(|r| {
            let v = |k: usize| r.get(cols[k]).and_then(serde_json::Value::as_f64);
            Some(XyPoint {
                x: v(0)?,
                y: v(3)?,
                x_ci: v(1).zip(v(2)),
                y_ci: v(4).zip(v(5)),
            })
        })
        .collect()
}

/// The chart a curve table goes on, and its curve's label: the table's name up to
/// its first ", " (`latency-node0`, `CAS hand-off`) and the rest (`read traffic`,
/// `other-core 0↔1`).
fn chart_and_label(t: &Table) -> (String, String) {
    let what = t.name.strip_suffix(TABLE_SUFFIX).unwrap_or(&t.name);
    match what.split_once(", ") {
        Some((chart, label)) => (chart.to_string(), label.to_string()),
        None => (what.to_string(), what.to_string()),
    }
}

/// The charts of a result's curve tables as HTML figures (empty for results
/// without such tables).
pub fn figures(p: &ProbeResult) -> String {
    let mut o = String::new();
    let mut charts: Vec<(String, Vec<XyCurve>)> = Vec::new();
    for t in p.tables.iter().filter(|t| is_drawn(t)) {
        let (chart, label) = chart_and_label(t);
        let curve = XyCurve {
            name: label,
            points: points(t),
        };
        match charts.iter_mut().find(|(c, _)| *c == chart) {
            Some((_, v)) => v.push(curve),
            None => charts.push((chart, vec![curve])),
        }
    }
    for (chart, curves) in charts {
        let title = format!("{} — {chart} vs bandwidth", p.id);
        let _ = write!(
            o,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            xy_chart(&title, "bytes_per_s", "ns", &curves),
            esc(&format!(
                "{chart}: ns against the bandwidth the other CPUs draw, one point per step of the \
                 traffic ladder (the first at 0: idle), joined in ladder order; bars: 95 % \
                 intervals of each axis over the rounds; the table below has every value"
            ))
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Estimate, Status};
    use crate::probes::loaded_latency::{curve, curve_table};

    fn e(v: f64) -> Estimate {
        Estimate {
            value: v,
            lo: v * 0.97,
            hi: v * 1.03,
            n: 6,
        }
    }

    /// An MLC-shaped curve: flat, then the knee, then saturation.
    fn mlc_table(what: &str) -> Table {
        let lat = [(1.0, e(92.0)), (2.0, e(110.0)), (3.0, e(260.0))];
        let bw = [(1.0, e(3e9)), (2.0, e(150e9)), (3.0, e(350e9))];
        curve_table(what, &curve(Some(e(90.0)), &lat, &bw))
    }

    #[test]
    fn a_node_gets_one_chart_with_both_traffics_and_intervals_on_both_axes() {
        let mut p = ProbeResult::new("loaded-latency", "t", Status::Completed);
        p.tables.push(mlc_table("latency-node0, read traffic"));
        p.tables
            .push(mlc_table("latency-node0, read-write traffic"));
        p.tables.push(mlc_table("latency-node1, read traffic"));
        p.tables.push(Table {
            name: "something else".into(),
            columns: vec!["a".into()],
            rows: vec![vec![1.0.into()]],
        });
        assert!(p.tables[..3].iter().all(is_drawn));
        assert!(!is_drawn(&p.tables[3]));
        let html = figures(&p);
        assert_eq!(html.matches("<figure>").count(), 2, "one chart per node");
        let first = &html[..html.find("</figure>").unwrap()];
        assert_eq!(first.matches("<g class='curve'").count(), 2);
        assert_eq!(first.matches("<g class='legend'").count(), 2);
        assert!(first.contains("read-write traffic") && first.contains("read traffic"));
        // Every point a y bar; every loaded point an x bar (idle: exactly 0 B/s).
        assert_eq!(first.matches("class='ci'").count(), 2 * 4);
        assert_eq!(first.matches("class='xci'").count(), 2 * 3);
        assert!(first.contains("bars: 95 % CI, both axes"));
        // Axes: bandwidth in bytes per second along x, ns up y.
        assert!(first.contains("B/s") && first.contains(">ns<"), "{first}");
        // Joined in ladder order: the polyline's x rises with the bandwidth here.
        let i = first.find("points='").unwrap() + 8;
        let pts = &first[i..i + first[i..].find('\'').unwrap()];
        let xs: Vec<f64> = pts
            .split(' ')
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 4);
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
    }

    #[test]
    fn coherence_figures_share_a_chart_per_metric_and_other_tables_draw_none() {
        let mut p = ProbeResult::new("loaded-coherence", "t", Status::Completed);
        p.tables.push(mlc_table("CAS hand-off, other-core 0↔1"));
        p.tables.push(mlc_table("CAS hand-off, other-package 0↔8"));
        p.tables.push(mlc_table("mutex wake-up, other-core 0↔1"));
        let html = figures(&p);
        assert_eq!(html.matches("<figure>").count(), 2);
        assert!(html.contains("CAS hand-off vs bandwidth"));
        p.tables
            .iter_mut()
            .for_each(|t| t.name = "something else".into());
        assert!(figures(&p).is_empty());
    }

    #[test]
    fn a_table_without_intervals_draws_points_without_bars() {
        let t = Table {
            name: "latency, read traffic: latency vs bandwidth".into(),
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows: vec![
                vec![
                    0.0.into(),
                    serde_json::Value::Null,
                    serde_json::Value::Null,
                    90.0.into(),
                    serde_json::Value::Null,
                    serde_json::Value::Null,
                ],
                vec![
                    1e9.into(),
                    1e9.into(),
                    1e9.into(),
                    95.0.into(),
                    95.0.into(),
                    95.0.into(),
                ],
            ],
        };
        let pts = points(&t);
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].x_ci, None);
        let mut p = ProbeResult::new("loaded-latency", "t", Status::Completed);
        p.tables.push(t);
        let html = figures(&p);
        assert_eq!(html.matches("<figure>").count(), 1);
        assert!(!html.contains("class='ci'") && !html.contains("class='xci'"));
    }
}
