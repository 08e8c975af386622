//! The comparison model: pure functions from the runs' probes (one entry per
//! machine, `None` where a run lacks the probe) to typed rows that the terminal
//! and HTML renderers of `compare` draw. Nothing here formats or measures.
//!
//! - matrices are aligned by row and column label, with each machine's ratio to
//!   the first cell by cell;
//! - free tables are aligned by the value of their first column (the key);
//! - distributions become cumulative distributions (from the exact histogram
//!   where the file has one, else from the summary's percentiles).

use crate::model::{Distribution, ProbeResult};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Values of a matrix, `values[row][col]`, `None` where not measured.
pub type Cells = Vec<Vec<Option<f64>>>;

/// One matrix across the machines.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixComparison {
    /// Name (`c2c/cas`).
    pub name: String,
    /// Unit of the values (`ns`).
    pub unit: String,
    /// Row labels: every label any machine has, in order of first appearance.
    pub rows: Vec<String>,
    /// Column labels, likewise.
    pub cols: Vec<String>,
    /// Each machine's values on these labels; `None` where the run lacks the matrix.
    pub per_machine: Vec<Option<Cells>>,
    /// Each machine's values divided by the first machine's, cell by cell
    /// (`ratios[0]` is the first machine itself: all `None`); `None` where
    /// either run lacks the matrix.
    pub ratios: Vec<Option<Cells>>,
}

/// One free table across the machines, rows aligned by key.
#[derive(Debug, Clone, PartialEq)]
pub struct TableComparison {
    /// Name.
    pub name: String,
    /// Header of the key column (the first column).
    pub key_column: String,
    /// The other columns: every column any machine has, in order.
    pub columns: Vec<String>,
    /// One row per key, in order of first appearance (at most the `max_rows`
    /// given to [`tables`]).
    pub rows: Vec<AlignedRow>,
    /// How many distinct keys the machines' tables have in all (more than
    /// `rows.len()` when the table was cut).
    pub keys_total: usize,
}

/// One key of a [`TableComparison`]: each machine's cells for each column.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignedRow {
    /// The key (the first cell, as text).
    pub key: String,
    /// `cells[machine][column]`; `None` where that machine has no such row or column.
    pub cells: Vec<Vec<Option<serde_json::Value>>>,
}

/// One distribution across the machines as cumulative distributions.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionComparison {
    /// Name.
    pub name: String,
    /// Unit of the values.
    pub unit: String,
    /// Each machine's CDF as `(value, fraction of samples ≤ value)`, sorted by
    /// value, fractions rising from 0 (to 1, or to 0.999 where the tail is cut
    /// at the 99.9th percentile); `None` where the run lacks it.
    pub cdfs: Vec<Option<Vec<(f64, f64)>>>,
}

/// Labels in order of first appearance across several lists.
fn union<'a>(lists: impl Iterator<Item = &'a [String]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for l in lists {
        for s in l {
            if seen.insert(s.as_str()) {
                out.push(s.clone());
            }
        }
    }
    out
}

/// The names `names` gives for each present probe, in order of first appearance.
fn names_in<'p, I>(
    probes: &[Option<&'p ProbeResult>],
    names: impl Fn(&'p ProbeResult) -> I,
) -> Vec<String>
where
    I: Iterator<Item = &'p String>,
{
    let lists: Vec<Vec<String>> = probes
        .iter()
        .flatten()
        .map(|&p| names(p).cloned().collect())
        .collect();
    union(lists.iter().map(Vec::as_slice))
}

/// Every matrix of the probes, aligned by name and labels.
pub fn matrices(probes: &[Option<&ProbeResult>]) -> Vec<MatrixComparison> {
    let names = names_in(probes, |p| p.matrices.iter().map(|m| &m.name));
    names
        .into_iter()
        .map(|name| {
            let ms: Vec<Option<&crate::model::Matrix>> = probes
                .iter()
                .map(|p| p.and_then(|p| p.matrices.iter().find(|m| m.name == name)))
                .collect();
            let rows = union(ms.iter().flatten().map(|m| m.rows.as_slice()));
            let cols = union(ms.iter().flatten().map(|m| m.cols.as_slice()));
            let per_machine: Vec<Option<Cells>> = ms
                .iter()
                .map(|m| m.map(|m| realign(m, &rows, &cols)))
                .collect();
            let ratios = per_machine
                .iter()
                .enumerate()
                .map(
                    |(k, v)| match (k, per_machine.first().and_then(Option::as_ref), v) {
                        (1.., Some(a), Some(b)) => Some(cell_ratios(a, b)),
                        _ => None,
                    },
                )
                .collect();
            MatrixComparison {
                unit: ms
                    .iter()
                    .flatten()
                    .next()
                    .map(|m| m.unit.clone())
                    .unwrap_or_default(),
                name,
                rows,
                cols,
                per_machine,
                ratios,
            }
        })
        .collect()
}

/// A matrix's values on the given labels (`None` where it has no such cell).
/// Labels are looked up in maps (the first of a repeated label wins), so a
/// matrix of many rows is realigned in linear time.
fn realign(m: &crate::model::Matrix, rows: &[String], cols: &[String]) -> Cells {
    let row_at = first_index(&m.rows);
    let col_at: Vec<Option<usize>> = {
        let at = first_index(&m.cols);
        cols.iter().map(|c| at.get(c.as_str()).copied()).collect()
    };
    rows.iter()
        .map(|r| {
            let ri = row_at.get(r.as_str()).copied();
            col_at
                .iter()
                .map(|ci| m.values.get(ri?)?.get((*ci)?).copied().flatten())
                .collect()
        })
        .collect()
}

/// Where each label first appears in a list.
fn first_index(labels: &[String]) -> HashMap<&str, usize> {
    let mut at = HashMap::with_capacity(labels.len());
    for (i, l) in labels.iter().enumerate() {
        at.entry(l.as_str()).or_insert(i);
    }
    at
}

/// `b ÷ a` cell by cell; `None` where either is missing, zero or not finite.
pub fn cell_ratios(a: &Cells, b: &Cells) -> Cells {
    a.iter()
        .zip(b)
        .map(|(ra, rb)| {
            ra.iter()
                .zip(rb)
                .map(|(x, y)| match (x, y) {
                    (Some(x), Some(y)) if *x != 0.0 && x.is_finite() && y.is_finite() => {
                        Some(y / x)
                    }
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The text of a key cell.
fn key_text(v: &serde_json::Value) -> Cow<'_, str> {
    match v {
        serde_json::Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// Every free table of the probes, aligned by name, then by key (the first
/// cell of each row) and column header. Only the first `max_rows` keys are
/// aligned (a table of a million rows is shown cut, see
/// [`TableComparison::keys_total`]); every key is counted. Linear in the rows.
pub fn tables(probes: &[Option<&ProbeResult>], max_rows: usize) -> Vec<TableComparison> {
    let names = names_in(probes, |p| p.tables.iter().map(|t| &t.name));
    names
        .into_iter()
        .map(|name| {
            let ts: Vec<Option<&crate::model::Table>> = probes
                .iter()
                .map(|p| p.and_then(|p| p.tables.iter().find(|t| t.name == name)))
                .collect();
            let key_column = ts
                .iter()
                .flatten()
                .find_map(|t| t.columns.first().cloned())
                .unwrap_or_default();
            let rest: Vec<Vec<String>> = ts
                .iter()
                .flatten()
                .map(|t| t.columns.iter().skip(1).cloned().collect())
                .collect();
            let columns = union(rest.iter().map(Vec::as_slice));
            let (keys, keys_total) = first_keys(&ts, max_rows);
            let at: HashMap<&str, usize> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect();
            let per_machine: Vec<Vec<Vec<Option<serde_json::Value>>>> = ts
                .iter()
                .map(|t| machine_cells(*t, &at, keys.len(), &columns))
                .collect();
            let rows = keys
                .into_iter()
                .enumerate()
                .map(|(i, key)| AlignedRow {
                    cells: per_machine
                        .iter()
                        .map(|m| m.get(i).cloned().unwrap_or_default())
                        .collect(),
                    key,
                })
                .collect();
            TableComparison {
                name,
                key_column,
                columns,
                rows,
                keys_total,
            }
        })
        .collect()
}

/// The first `max` keys across the machines' tables in order of first
/// appearance, and how many distinct keys there are in all.
fn first_keys(ts: &[Option<&crate::model::Table>], max: usize) -> (Vec<String>, usize) {
    let mut seen: HashSet<Cow<'_, str>> = HashSet::new();
    let mut keys = Vec::new();
    for t in ts.iter().flatten() {
        for k in t.rows.iter().filter_map(|r| r.first()) {
            let k = key_text(k);
            if !seen.contains(&k) {
                if keys.len() < max {
                    keys.push(k.to_string());
                }
                seen.insert(k);
            }
        }
    }
    (keys, seen.len())
}

/// One machine's cells for each of `n` keys (`at`: a key's index), on the
/// given columns; the first row of a repeated key wins. Empty rows (all
/// `None`) where the machine lacks the table or the key.
fn machine_cells(
    t: Option<&crate::model::Table>,
    at: &HashMap<&str, usize>,
    n: usize,
    columns: &[String],
) -> Vec<Vec<Option<serde_json::Value>>> {
    let mut rows: Vec<Option<&Vec<serde_json::Value>>> = vec![None; n];
    let col_at: Vec<Option<usize>> = match t {
        Some(t) => {
            let index = first_index(&t.columns);
            columns
                .iter()
                .map(|c| index.get(c.as_str()).copied())
                .collect()
        }
        None => vec![None; columns.len()],
    };
    for r in t.iter().flat_map(|t| &t.rows) {
        let Some(i) = r.first().and_then(|k| at.get(key_text(k).as_ref())) else {
            continue;
        };
        if let Some(slot @ None) = rows.get_mut(*i) {
            *slot = Some(r);
        }
    }
    rows.into_iter()
        .map(|r| {
            col_at
                .iter()
                .map(|c| r.and_then(|r| r.get((*c)?)).cloned())
                .collect()
        })
        .collect()
}

/// A distribution's cumulative distribution: from its histogram (exact at each
/// bin's upper edge) when it has one, else from its percentiles.
pub fn cdf(d: &Distribution) -> Vec<(f64, f64)> {
    let h = &d.histogram;
    let total: u64 = h.counts.iter().sum();
    let mut pts: Vec<(f64, f64)> =
        if total > 0 && h.edges.len() == h.counts.len() + 1 && h.edges[0].is_finite() {
            let mut acc = 0u64;
            std::iter::once((h.edges[0], 0.0))
                .chain(h.counts.iter().zip(&h.edges[1..]).map(|(&c, &e)| {
                    acc += c;
                    (e, acc as f64 / total as f64)
                }))
                .collect()
        } else {
            let s = &d.summary;
            vec![
                (s.min, 0.0),
                (s.p50, 0.5),
                (s.p90, 0.9),
                (s.p99, 0.99),
                (s.p999, 0.999),
                (s.max, 1.0),
            ]
        };
    // Up to the 99.9th percentile: a long tail (one 1 ms outlier among 0.1 µs
    // samples) would squeeze the body into one vertical step; the percentiles
    // sharpen the body where histogram bins are coarse.
    let s = &d.summary;
    let cut = s.p999;
    if cut.is_finite() && pts.len() > 6 {
        pts.retain(|p| p.0 <= cut);
        pts.extend([(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.p999, 0.999)]);
    }
    pts.retain(|(v, f)| v.is_finite() && f.is_finite());
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    // Fractions never fall (bins and interpolated percentiles may disagree).
    let mut top = 0.0f64;
    for p in &mut pts {
        top = top.max(p.1);
        p.1 = top;
    }
    pts
}

/// Every distribution of the probes, aligned by name, as CDFs per machine.
pub fn distributions(probes: &[Option<&ProbeResult>]) -> Vec<DistributionComparison> {
    let names = names_in(probes, |p| p.distributions.iter().map(|d| &d.name));
    names
        .into_iter()
        .map(|name| {
            let ds: Vec<Option<&Distribution>> = probes
                .iter()
                .map(|p| p.and_then(|p| p.distributions.iter().find(|d| d.name == name)))
                .collect();
            DistributionComparison {
                unit: ds
                    .iter()
                    .flatten()
                    .next()
                    .map(|d| d.unit.clone())
                    .unwrap_or_default(),
                cdfs: ds.iter().map(|d| d.map(cdf)).collect(),
                name,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probe(v: serde_json::Value) -> ProbeResult {
        let mut base = json!({
            "id": "p", "title": "t", "status": "completed",
            "params": {}, "cases_planned": 1, "cases_done": 1, "elapsed_s": 0.0
        });
        for (k, x) in v.as_object().unwrap() {
            base[k] = x.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn two_runs_agree_where_their_intervals_overlap_or_both_saw_two_states() {
        // A run of one probe with `points` series points of 12 samples each around
        // 100 (± 1 %), the k-th point scaled by `scale(k)`.
        let run = |scale: &dyn Fn(usize) -> f64| -> crate::model::RunFile {
            let mut r: crate::model::RunFile =
                serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
            let mut s = crate::model::Series::new("v/linear", "threads", "ops_per_s");
            for k in 0..20 {
                let samples = (0..12)
                    .map(|i| scale(k) * (99.0 + (i % 5) as f64 * 0.5))
                    .collect();
                s.push_samples(k as f64 + 1.0, samples, 0);
            }
            let mut p = probe(json!({}));
            p.series.push(s);
            r.probes = vec![p];
            r
        };
        let a = run(&|_| 1.0);
        let same = run_agreement(&a, &run(&|_| 1.0));
        assert_eq!((same.points, same.overlap), (20, 20));
        assert!(same.apart.is_empty());
        // One point three times as high: apart, and named with its ratio.
        let moved = run_agreement(&a, &run(&|k| if k == 4 { 3.0 } else { 1.0 }));
        assert_eq!((moved.points, moved.overlap), (20, 19));
        assert_eq!(moved.apart.len(), 1);
        assert_eq!(moved.apart[0].2, 5.0);
        assert!((moved.apart[0].3 - 3.0).abs() < 1e-9, "{:?}", moved.apart);
        assert!((moved.held() - 0.95).abs() < 1e-12);
    }

    #[test]
    fn matrices_align_by_label_and_give_ratios() {
        let a = probe(json!({"matrices": [{"name": "m", "unit": "ns",
            "rows": ["0", "1"], "cols": ["0", "1"],
            "values": [[null, 10.0], [20.0, null]]}]}));
        let b = probe(json!({"matrices": [{"name": "m", "unit": "ns",
            "rows": ["1", "0"], "cols": ["1", "0"],
            "values": [[null, 30.0], [5.0, null]]}]}));
        let m = matrices(&[Some(&a), Some(&b), None]);
        assert_eq!(m.len(), 1);
        let m = &m[0];
        assert_eq!(m.rows, ["0", "1"]);
        // b's (0,1) is 5, its (1,0) is 30, after realignment.
        assert_eq!(
            m.per_machine[1].as_ref().unwrap(),
            &vec![vec![None, Some(5.0)], vec![Some(30.0), None]]
        );
        assert_eq!(
            m.ratios[1].as_ref().unwrap(),
            &vec![vec![None, Some(0.5)], vec![Some(1.5), None]]
        );
        assert!(m.ratios[0].is_none() && m.ratios[2].is_none());
    }

    #[test]
    fn tables_align_by_key_and_column() {
        let a = probe(
            json!({"tables": [{"name": "t", "columns": ["impl", "rate_per_s"],
            "rows": [["x", 1.0], ["y", 2.0]]}]}),
        );
        let b = probe(
            json!({"tables": [{"name": "t", "columns": ["impl", "extra", "rate_per_s"],
            "rows": [["y", 7, 3.0], ["z", 8, 4.0]]}]}),
        );
        let t = &tables(&[Some(&a), Some(&b)], usize::MAX)[0];
        assert_eq!(t.key_column, "impl");
        assert_eq!(t.columns, ["rate_per_s", "extra"]);
        let keys: Vec<&str> = t.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["x", "y", "z"]);
        assert_eq!(t.rows[1].cells[0], vec![Some(json!(2.0)), None]);
        assert_eq!(t.rows[1].cells[1], vec![Some(json!(3.0)), Some(json!(7))]);
        assert_eq!(t.rows[0].cells[1], vec![None, None]);
    }

    #[test]
    fn tables_are_aligned_on_the_first_keys_and_every_key_counted() {
        let rows: Vec<serde_json::Value> = (0..50).map(|i| json!([format!("k{i}"), i])).collect();
        let a = probe(json!({"tables": [{"name": "t", "columns": ["key", "v"], "rows": rows}]}));
        let b = probe(json!({"tables": [{"name": "t", "columns": ["key", "v"],
            "rows": [["k3", 30], ["new", 1], ["k3", 99]]}]}));
        let t = &tables(&[Some(&a), Some(&b)], 5)[0];
        assert_eq!(t.rows.len(), 5);
        assert_eq!(t.keys_total, 51);
        assert_eq!(t.rows[3].key, "k3");
        assert_eq!(
            t.rows[3].cells[1],
            vec![Some(json!(30))],
            "the first k3 of b"
        );
        assert_eq!(t.rows[4].cells[1], vec![None], "b has no k4");
    }

    #[test]
    fn cdfs_rise_from_zero_to_one() {
        let p = probe(json!({"distributions": [{"name": "d", "unit": "ns",
            "summary": {"count": 4, "min": 1.0, "p50": 2.0, "p90": 3.0, "p99": 4.0,
                        "p999": 4.0, "max": 4.0, "mean": 2.5, "stddev": 1.0},
            "histogram": {"edges": [1.0, 2.0, 3.0, 4.0], "counts": [1, 2, 1], "log": false}}]}));
        let d = &distributions(&[Some(&p), None])[0];
        let c = d.cdfs[0].as_ref().unwrap();
        assert_eq!(c.first(), Some(&(1.0, 0.0)));
        assert_eq!(c.last().map(|p| p.0), Some(4.0));
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(d.cdfs[1].is_none());
    }
}

/// How two runs agree point by point: of the series points both measured with an
/// interval, where the 95 % intervals overlap, where the point is state-dependent in
/// both runs, and the others (the runs tell them apart).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunAgreement {
    /// Series points both runs hold with an interval (`n` > 1 in both).
    pub points: usize,
    /// Of those, where the two intervals overlap.
    pub overlap: usize,
    /// Of those that do not overlap, points marked state-dependent in both runs.
    pub state_dependent_both: usize,
    /// Points marked state-dependent in either run (of `points`).
    pub state_dependent_either: usize,
    /// The points that neither overlap nor are state-dependent in both: (probe,
    /// series, x, second ÷ first), the farthest apart first.
    pub apart: Vec<(String, String, f64, f64)>,
}

impl RunAgreement {
    /// Share of points that overlap or are state-dependent in both runs.
    pub fn held(&self) -> f64 {
        if self.points == 0 {
            return f64::NAN;
        }
        (self.overlap + self.state_dependent_both) as f64 / self.points as f64
    }
}

/// Point-by-point agreement of run `b` with run `a` (every probe and series both
/// hold; points measured once or without an interval, and copies of a point measured
/// under another variant's name, are left out).
pub fn run_agreement(a: &crate::model::RunFile, b: &crate::model::RunFile) -> RunAgreement {
    let mut out = RunAgreement::default();
    for pair in super::differences::point_pairs(a, b) {
        out.points += 1;
        out.state_dependent_either += usize::from(pair.dependent_a || pair.dependent_b);
        if pair.overlap() {
            out.overlap += 1;
        } else if !pair.apart() {
            out.state_dependent_both += 1;
        } else {
            out.apart.push((
                pair.probe.to_string(),
                pair.series.name.clone(),
                pair.x,
                pair.b.value / pair.a.value,
            ));
        }
    }
    let far = |r: f64| if r > 0.0 { r.ln().abs() } else { f64::INFINITY };
    out.apart.sort_by(|p, q| far(q.3).total_cmp(&far(p.3)));
    out
}
