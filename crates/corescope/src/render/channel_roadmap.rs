//! Seed 004 Figure 1 in the HTML report: the Stage One roadmap of
//! `channel-tune`, one bar per step (the median time per event with its 95 %
//! interval), the baseline drawn as a dashed reference line, a skipped step
//! (the SMT baseline without SMT) as an empty band that says why.

use super::bars::{bars, Bar, BarGroup, Reference};
use super::svg::esc;
use crate::model::{ProbeResult, Table};
use crate::probes::channel_tune::ROADMAP_TITLE;
use serde_json::Value;

/// The roadmap's figure (`<figure>` with its caption) when `p` has the roadmap
/// table; `None` otherwise.
pub fn figure(p: &ProbeResult) -> Option<String> {
    let t = p.tables.iter().find(|t| t.name == ROADMAP_TITLE)?;
    let (groups, baseline_ns) = roadmap_bars(t)?;
    let reference = baseline_ns.map(|v| Reference {
        value: v,
        label: "baseline".into(),
    });
    Some(format!(
        "<figure>{}<figcaption>{}</figcaption></figure>",
        bars(
            "channel-tune — Stage One roadmap (seed 004 Figure 1)",
            "ns",
            &groups,
            reference.as_ref()
        ),
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
}
