//! The peak overview (`View::PeakOverview`, which `peak` declares): FLOP per cycle per thread of every ISA level and precision
//! (a row each) at every thread count (a column each), the best placement's
//! median with its 95 % interval, beside the FMA units' limit the probe recorded
//! at measure time (its `fma-limit` table: a report drawn on another machine never
//! reads its own CPU) and the share of it reached. A table, and the same figures
//! as grouped bars. The per-level charts stay in the report, collapsed.

use super::bars::{bars, Bar, BarGroup};
use super::fmt_num;
use super::svg::esc;
use crate::model::{Estimate, ProbeResult};
use crate::probes::peak::{kernel_name, limit, Precision, LEVELS};
use std::fmt::Write;

/// The summary line of the collapsed per-level charts.
pub const FOLDED: &str = "per level and placement";

/// Unit of the overview's figures (a series' `y_name`).
const UNIT: &str = "flops_per_cycle_per_thread";

/// The FMA limit of one kernel, as the run file holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// FLOP per cycle per core, and where the figure comes from.
    Known(f64, String),
    /// No figure, and why (units not known on the measured CPU, no FMA at the level).
    Unknown(String),
    /// The run file has no `fma-limit` table (written before it was recorded).
    NotRecorded,
}

/// One measured point of the overview: the best placement's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub value: Estimate,
    pub placement: String,
}

/// One kernel's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `avx512-fma-f64`.
    pub kernel: String,
    /// One per thread count of [`Overview::threads`]; `None` where not measured.
    pub cells: Vec<Option<Cell>>,
    pub limit: Limit,
}

impl Row {
    /// The highest median of the row.
    pub fn best(&self) -> Option<f64> {
        self.cells
            .iter()
            .flatten()
            .map(|c| c.value.value)
            .max_by(f64::total_cmp)
    }

    /// The best median as a percentage of the limit, when both are numbers.
    pub fn percent_of_limit(&self) -> Option<f64> {
        let Limit::Known(l, _) = &self.limit else {
            return None;
        };
        let l = *l;
        Some(self.best()? / l * 100.0).filter(|p| p.is_finite() && l > 0.0)
    }
}

/// The whole overview.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    /// Thread counts, ascending.
    pub threads: Vec<f64>,
    pub rows: Vec<Row>,
}

/// The kernel's limit from the result's `fma-limit` table.
fn limit_of(p: &ProbeResult, kernel: &str) -> Limit {
    let Some(t) = p.tables.iter().find(|t| t.name == limit::TABLE) else {
        return Limit::NotRecorded;
    };
    let Some(r) = t
        .rows
        .iter()
        .find(|r| r.first().and_then(|v| v.as_str()) == Some(kernel))
    else {
        return Limit::NotRecorded;
    };
    let source = r
        .get(2)
        .and_then(|v| v.as_str())
        .unwrap_or("no source recorded")
        .to_string();
    match r.get(1).and_then(|v| v.as_f64()).filter(|v| v.is_finite()) {
        Some(v) => Limit::Known(v, source),
        None => Limit::Unknown(source),
    }
}

/// The best placement's estimate at `x` among a kernel's per-cycle series.
fn best_at(p: &ProbeResult, prefix: &str, x: f64) -> Option<Cell> {
    p.series
        .iter()
        .filter_map(|s| Some((s.name.strip_prefix(prefix)?, s)))
        .filter_map(|(place, s)| {
            let e = s.estimate_at(x).filter(|e| e.value.is_finite())?;
            Some(Cell {
                value: e,
                placement: place.to_string(),
            })
        })
        .max_by(|a, b| a.value.value.total_cmp(&b.value.value))
}

/// The overview of a result; `None` for a result without per-cycle series.
pub fn overview(p: &ProbeResult) -> Option<Overview> {
    let kernels: Vec<String> = LEVELS
        .iter()
        .flat_map(|&l| [Precision::F64, Precision::F32].map(|pr| kernel_name(l, pr)))
        .collect();
    let per_cycle = |k: &str| format!("{k}-per-cycle/");
    let mut threads: Vec<f64> = p
        .series
        .iter()
        .filter(|s| kernels.iter().any(|k| s.name.starts_with(&per_cycle(k))))
        .flat_map(|s| s.x.iter().copied())
        .filter(|x| x.is_finite())
        .collect();
    threads.sort_by(f64::total_cmp);
    threads.dedup();
    let rows: Vec<Row> = kernels
        .iter()
        .filter_map(|k| {
            let prefix = per_cycle(k);
            let cells: Vec<Option<Cell>> =
                threads.iter().map(|&x| best_at(p, &prefix, x)).collect();
            cells.iter().any(Option::is_some).then(|| Row {
                kernel: k.clone(),
                cells,
                limit: limit_of(p, k),
            })
        })
        .collect();
    (!rows.is_empty()).then_some(Overview { threads, rows })
}

/// The summary line under which the probe's per-level charts are folded, when
/// the overview is drawn above them.
pub fn folded(p: &ProbeResult) -> Option<&'static str> {
    overview(p).map(|_| FOLDED)
}

/// Whether `t` is the limit table the overview already shows (collapsed below).
pub fn is_drawn(p: &ProbeResult, t: &crate::model::Table) -> bool {
    t.name == limit::TABLE && folded(p).is_some()
}

/// `15.62 (15.40–15.81)`: the median and its interval where it has one.
pub fn cell_text(c: &Cell) -> String {
    let e = &c.value;
    if e.has_interval() && e.lo.is_finite() && e.hi.is_finite() {
        format!("{} ({}–{})", fmt_num(e.value), fmt_num(e.lo), fmt_num(e.hi))
    } else {
        fmt_num(e.value)
    }
}

/// The limit's cell: the figure, `unknown`, `no FMA`, or `not recorded`.
pub fn limit_text(l: &Limit) -> String {
    match l {
        Limit::Known(v, _) => fmt_num(*v),
        Limit::Unknown(why) if why.starts_with("no FMA") => "no FMA".into(),
        Limit::Unknown(_) => "unknown".into(),
        Limit::NotRecorded => "not recorded".into(),
    }
}

/// The lines under the table: what the cells are, and every distinct source or
/// reason of the limit column.
pub fn notes(o: &Overview) -> Vec<String> {
    let mut out = vec![
        "Each cell: the best placement's median FLOP per cycle per thread at the core clock \
         measured in the same round, its 95 % interval in brackets. The limit is a core's: \
         threads sharing a core (SMT) share it. % of limit: the row's best cell ÷ the limit."
            .to_string(),
    ];
    let mut seen: Vec<String> = Vec::new();
    for r in &o.rows {
        let line = match &r.limit {
            Limit::Known(_, src) => sentence(&format!("Limit: {src}")),
            Limit::Unknown(why) if why.starts_with("no FMA") => {
                sentence(&format!("N{}", &why[1..]))
            }
            Limit::Unknown(why) => sentence(&format!("Limit unknown: {why}")),
            Limit::NotRecorded => "Limit not recorded: this run file was written before peak \
                                   recorded the FMA units' limit."
                .into(),
        };
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    out.extend(seen);
    out
}

/// `s` ending with one full stop.
fn sentence(s: &str) -> String {
    format!("{}.", s.trim_end_matches('.'))
}

/// The table's header cells.
fn header(o: &Overview) -> Vec<String> {
    let mut h = vec!["kernel".to_string()];
    h.extend(o.threads.iter().map(|&t| crate::units::threads(t)));
    h.push("FMA limit (FLOP/cycle per core)".into());
    h.push("% of limit".into());
    h
}

/// The body cells of one row, as text.
fn row_cells(r: &Row) -> Vec<String> {
    let mut c = vec![r.kernel.clone()];
    c.extend(
        r.cells
            .iter()
            .map(|c| c.as_ref().map(cell_text).unwrap_or_else(|| "-".into())),
    );
    c.push(limit_text(&r.limit));
    c.push(
        r.percent_of_limit()
            .map(|p| format!("{} %", crate::units::fmt_percent(p, false)))
            .unwrap_or_else(|| "-".into()),
    );
    c
}

/// The bars: a group per kernel, a bar per thread count.
fn bar_groups(o: &Overview) -> Vec<BarGroup> {
    o.rows
        .iter()
        .map(|r| BarGroup {
            label: r.kernel.clone(),
            bars: o
                .threads
                .iter()
                .zip(&r.cells)
                .filter_map(|(&t, c)| {
                    let e = &c.as_ref()?.value;
                    Some(Bar {
                        name: crate::units::threads(t),
                        value: e.value,
                        interval: e.has_interval().then_some((e.lo, e.hi)),
                    })
                })
                .collect(),
        })
        .collect()
}

/// The overview in HTML (empty for other probes).
pub fn figures(p: &ProbeResult) -> String {
    let Some(ov) = overview(p) else {
        return String::new();
    };
    let mut o = format!("<h3>{TITLE}</h3><div class='scroll'><table><tr>");
    for h in header(&ov) {
        let _ = write!(o, "<th>{}</th>", esc(&h));
    }
    o.push_str("</tr>");
    for r in &ov.rows {
        let cells = row_cells(r);
        let _ = write!(o, "<tr><td>{}</td>", esc(&cells[0]));
        for (k, c) in r.cells.iter().enumerate() {
            let tip = c
                .as_ref()
                .map(|c| {
                    format!(
                        " title='{}'",
                        esc(&format!("best placement: {}", c.placement))
                    )
                })
                .unwrap_or_default();
            let _ = write!(o, "<td{tip}>{}</td>", esc(&cells[k + 1]));
        }
        for c in &cells[1 + r.cells.len()..] {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
    for n in notes(&ov) {
        let _ = write!(o, "<p class='note'>{}</p>", esc(&n));
    }
    let title = "peak — FLOP per cycle per thread (best placement)";
    let _ = write!(
        o,
        "<figure>{}<figcaption>{}</figcaption></figure>",
        bars(title, UNIT, &bar_groups(&ov), None),
        esc(
            "the table's cells as bars: a group per ISA level and precision, a bar per thread \
             count; whiskers: 95 % intervals of the median; the limits are in the table"
        )
    );
    o
}

/// The overview's table title.
pub const TITLE: &str = "FLOP per cycle per thread, best placement, against the FMA limit";

/// The overview as text cells, for the text renderers.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// The overview as text cells (`None` for other probes).
pub fn text(p: &ProbeResult) -> Option<Text> {
    let ov = overview(p)?;
    Some(Text {
        header: header(&ov),
        rows: ov.rows.iter().map(row_cells).collect(),
        notes: notes(&ov),
    })
}

/// The overview as a Markdown table with its notes (empty for other probes).
pub fn markdown(p: &ProbeResult) -> String {
    let Some(t) = text(p) else {
        return String::new();
    };
    let md = super::md;
    let row = |cells: &[String]| cells.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | ");
    let mut o = format!(
        "\n{TITLE}\n\n| {} |\n|---|{}\n",
        row(&t.header),
        "---:|".repeat(t.header.len() - 1)
    );
    for r in &t.rows {
        let _ = writeln!(o, "| {} |", row(r));
    }
    o.push('\n');
    for n in &t.notes {
        let _ = writeln!(o, "{}\n", md(n));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, Status, Table};
    use serde_json::json;

    /// A peak result: scalar and avx2-fma, f64, at 1 and 2 threads, compact and
    /// scatter (scatter faster at 2 threads), four repetitions each.
    fn result(limit_rows: Option<Vec<Vec<serde_json::Value>>>) -> ProbeResult {
        let mut p = ProbeResult::new("peak", "t", Status::Completed);
        for (kernel, base) in [("scalar-f64", 2.0), ("avx2-fma-f64", 15.0)] {
            for (place, at2) in [("compact", 0.5), ("scatter", 1.0)] {
                for (x, f) in [(1.0, 1.0), (2.0, at2)] {
                    let v = base * f;
                    p.push_point(Point::samples(
                        format!("{kernel}-per-cycle/{place}"),
                        "threads",
                        x,
                        UNIT,
                        vec![v * 0.99, v, v * 1.01, v],
                    ));
                    p.push_point(Point::samples(
                        format!("{kernel}/{place}"),
                        "threads",
                        x,
                        "flops_per_s",
                        vec![v * 4e9],
                    ));
                }
            }
        }
        if let Some(rows) = limit_rows {
            p.tables.push(Table {
                name: limit::TABLE.into(),
                columns: limit::COLUMNS.map(String::from).to_vec(),
                rows,
            });
        }
        p
    }

    fn known() -> Vec<Vec<serde_json::Value>> {
        vec![
            vec![
                json!("scalar-f64"),
                json!(null),
                json!("no FMA at this level"),
            ],
            vec![
                json!("avx2-fma-f64"),
                json!(16.0),
                json!("Zen 4: 2 × 256-bit FMA pipes"),
            ],
        ]
    }

    #[test]
    fn a_row_per_kernel_a_column_per_thread_count_best_placement() {
        let ov = overview(&result(Some(known()))).unwrap();
        assert_eq!(ov.threads, vec![1.0, 2.0]);
        let names: Vec<&str> = ov.rows.iter().map(|r| r.kernel.as_str()).collect();
        assert_eq!(names, ["scalar-f64", "avx2-fma-f64"]);
        let at2 = ov.rows[1].cells[1].as_ref().unwrap();
        assert_eq!(at2.placement, "scatter");
        assert_eq!(at2.value.value, 15.0);
        assert!(at2.value.lo < 15.0 && at2.value.hi > 15.0);
        assert_eq!(
            ov.rows[1].limit,
            Limit::Known(16.0, "Zen 4: 2 × 256-bit FMA pipes".into())
        );
        assert_eq!(ov.rows[1].percent_of_limit(), Some(93.75));
        assert_eq!(ov.rows[0].percent_of_limit(), None);
        let html = figures(&result(Some(known())));
        assert!(html.contains("<th>FMA limit (FLOP/cycle per core)</th><th>% of limit</th>"));
        assert!(html.contains("<td>16.00</td><td>94 %</td>"), "{html}");
        assert!(html.contains("<td>no FMA</td><td>-</td>"));
        assert!(html.contains("15.00 ("), "{html}");
        assert!(html.contains("Limit: Zen 4"));
        assert!(!html.contains("NaN") && !html.contains("inf"));
        assert_eq!(html.matches("<figure>").count(), 1);
    }

    #[test]
    fn an_unknown_limit_is_said_in_words_never_a_number() {
        let why = "FMA units unknown for GenuineIntel family 0x6 model 0xcf (not in the table)";
        let rows = vec![
            vec![json!("scalar-f64"), json!(null), json!(why)],
            vec![json!("avx2-fma-f64"), json!(null), json!(why)],
        ];
        let p = result(Some(rows));
        let ov = overview(&p).unwrap();
        assert!(ov.rows.iter().all(|r| r.percent_of_limit().is_none()));
        let html = figures(&p);
        assert_eq!(html.matches("<td>unknown</td><td>-</td>").count(), 2);
        assert_eq!(
            html.matches("Limit unknown: FMA units unknown for GenuineIntel")
                .count(),
            1
        );
        assert!(!html.contains("NaN"));
        let md = markdown(&p);
        assert!(
            md.contains("| unknown | - |") && md.contains("GenuineIntel"),
            "{md}"
        );
        // A file from before the limit was recorded says so.
        let old = figures(&result(None));
        assert!(old.contains("<td>not recorded</td>") && old.contains("written before"));
    }

    #[test]
    fn other_probes_and_empty_results_draw_nothing() {
        let mut p = result(None);
        p.series.clear();
        assert!(figures(&p).is_empty() && folded(&p).is_none());
        let empty = ProbeResult::new("peak", "t", Status::Skipped);
        assert!(overview(&empty).is_none() && markdown(&empty).is_empty());
        // A non-finite median is left out, never printed.
        let mut p = result(Some(known()));
        for s in p.series.iter_mut().filter(|s| s.name.starts_with("scalar")) {
            s.y.iter_mut().for_each(|y| *y = f64::NAN);
        }
        let ov = overview(&p).unwrap();
        assert_eq!(ov.rows.len(), 1);
        assert!(!figures(&p).contains("NaN"));
    }
}
