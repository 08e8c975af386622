//! Run files → a fleet's nodes: each run's figures (every series point and each
//! distribution's median, with its interval; each matrix's median entry and each
//! of its rows' median) filed in one table of figures shared
//! by all nodes. A run file is read once and can be dropped: the fleet keeps only
//! its figures (about 40 bytes each), never its samples. Pure.

use super::file::{FigureKey, Node, NodeValue, MATRIX, MATRIX_ROW};
use crate::model::Matrix;
use crate::model::{Estimate, RunFile, Status};
use std::collections::HashMap;

/// What tells figures apart: probe, name, x (as bits), x name, matrix row.
type FigureId = (String, String, Option<u64>, String, Option<String>);

/// Nodes and the figures they have, built one run at a time.
#[derive(Debug, Default)]
pub struct Table {
    /// Every figure seen, in order of first appearance.
    pub figures: Vec<FigureKey>,
    /// The nodes added so far (their `values` may be shorter than `figures`
    /// until [`Table::finish`]).
    pub nodes: Vec<Node>,
    index: HashMap<FigureId, usize>,
    names: HashMap<String, usize>,
}

/// Each figure of a run with its estimate: series points, then distributions.
pub fn run_figures(run: &RunFile) -> Vec<(FigureKey, Estimate)> {
    let mut out = Vec::new();
    for p in &run.probes {
        for s in &p.series {
            for (i, &x) in s.x.iter().enumerate() {
                if let Some(e) = s.estimate(i) {
                    let key = FigureKey {
                        probe: p.id.clone(),
                        name: s.name.clone(),
                        x: Some(x),
                        x_name: s.x_name.clone(),
                        unit: s.y_name.clone(),
                        row: None,
                    };
                    out.push((key, e));
                }
            }
        }
        for d in &p.distributions {
            let key = FigureKey {
                probe: p.id.clone(),
                name: d.name.clone(),
                x: None,
                x_name: String::new(),
                unit: d.unit.clone(),
                row: None,
            };
            out.push((key, d.summary.median()));
        }
        for m in p.matrices.iter().filter(|m| is_central(m)) {
            out.extend(matrix_figures(&p.id, m));
        }
    }
    out
}

/// Suffixes of the matrices that hold another matrix's spread or interval, not a
/// figure of its own (`c2c/cas/spread`).
const SIDE_MATRICES: [&str; 4] = ["/spread", "/lo", "/hi", "/n"];

/// Whether a matrix holds central values (not another one's spread or interval).
fn is_central(m: &Matrix) -> bool {
    !SIDE_MATRICES.iter().any(|s| m.name.ends_with(s))
}

/// The median of the positive, finite values, as an estimate without an interval
/// of its own (`n`: the entries behind it); `None` when there is none.
fn median_entry<'a>(values: impl Iterator<Item = &'a Option<f64>>) -> Option<Estimate> {
    let v: Vec<f64> = values
        .flatten()
        .copied()
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    let m = crate::stats::median(&v);
    Some(Estimate {
        value: m,
        lo: m,
        hi: m,
        n: v.len(),
    })
}

/// A matrix's figures: its median entry, then each row's median (a row of the
/// c2c matrix is one CPU's latency to all others), so that a node whose matrix
/// differs in one row is found and the row named.
fn matrix_figures(probe: &str, m: &Matrix) -> Vec<(FigureKey, Estimate)> {
    let key = |x_name: &str, row: Option<String>| FigureKey {
        probe: probe.to_string(),
        name: m.name.clone(),
        x: None,
        x_name: x_name.to_string(),
        unit: m.unit.clone(),
        row,
    };
    let mut out = Vec::new();
    if let Some(e) = median_entry(m.values.iter().flatten()) {
        out.push((key(MATRIX, None), e));
    }
    for (r, values) in m.values.iter().enumerate() {
        let label = m.rows.get(r).cloned().unwrap_or_else(|| r.to_string());
        if let Some(e) = median_entry(values.iter()) {
            out.push((key(MATRIX_ROW, Some(label)), e));
        }
    }
    out
}

impl Table {
    /// Add one node's run; `run_file` is where its full run file is. The node is
    /// named after the run's host, made unique (`n1`, `n1#2`).
    pub fn add(&mut self, run: &RunFile, run_file: Option<String>) {
        let base = if run.host.hostname.is_empty() {
            "node".to_string()
        } else {
            run.host.hostname.clone()
        };
        let seen = self.names.entry(base.clone()).or_insert(0);
        *seen += 1;
        let name = if *seen == 1 {
            base
        } else {
            format!("{base}#{seen}")
        };
        let mut values = Vec::new();
        for (key, e) in run_figures(run) {
            let i = self.figure_index(key);
            if values.len() <= i {
                values.resize(i + 1, None);
            }
            values[i] = Some(NodeValue::from(e));
        }
        self.nodes.push(Node {
            name,
            run_file,
            cpu_model: run.host.cpu_model.clone(),
            cores: run.topology.pus_per_core().len(),
            cpus: run.topology.allowed_count(),
            profile: run.profile,
            started_utc: run.started_utc.clone(),
            failed: run
                .probes
                .iter()
                .filter(|p| p.status == Status::Failed)
                .map(|p| p.id.clone())
                .collect(),
            values,
        });
    }

    fn figure_index(&mut self, key: FigureKey) -> usize {
        let k = (
            key.probe.clone(),
            key.name.clone(),
            key.x.map(f64::to_bits),
            key.x_name.clone(),
            key.row.clone(),
        );
        let next = self.figures.len();
        let i = *self.index.entry(k).or_insert(next);
        if i == next {
            self.figures.push(key);
        }
        i
    }

    /// Every node's values padded to the full list of figures.
    pub fn finish(mut self) -> (Vec<FigureKey>, Vec<Node>) {
        let n = self.figures.len();
        for node in &mut self.nodes {
            node.values.resize(n, None);
        }
        (self.figures, self.nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunFile {
        serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).expect("fixture")
    }

    #[test]
    fn runs_share_one_table_and_names_stay_unique() {
        let run = fixture();
        let figures = run_figures(&run);
        // 112 series points and the threads probe's distributions.
        let points = figures.iter().filter(|(k, _)| k.x.is_some()).count();
        assert_eq!(points, 112);
        assert!(figures.iter().any(|(k, _)| k.x.is_none()));
        // Two 2 × 2 c2c matrices: each its median entry and its two rows' medians.
        let rows: Vec<Option<&str>> = figures
            .iter()
            .filter(|(k, _)| k.x_name.starts_with(MATRIX))
            .map(|(k, _)| k.row.as_deref())
            .collect();
        assert_eq!(
            rows,
            [None, Some("0"), Some("1"), None, Some("0"), Some("1")]
        );
        let mut t = Table::default();
        t.add(&run, Some("a.json".into()));
        let mut other = run.clone();
        other.probes.truncate(1);
        t.add(&other, None);
        t.add(&run, None);
        let (keys, nodes) = t.finish();
        assert_eq!(keys.len(), figures.len());
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["vm", "vm#2", "vm#3"]);
        assert!(nodes.iter().all(|n| n.values.len() == keys.len()));
        // The truncated run lacks the later probes' figures.
        assert!(nodes[1].values.iter().any(Option::is_none));
        assert!(nodes[0].values.iter().all(Option::is_some));
        assert_eq!(nodes[0].model(), "AMD EPYC, 2 cores");
    }
}
