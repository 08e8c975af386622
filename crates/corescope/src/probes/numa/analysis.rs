//! `numa`'s results (pure): the cells' medians as matrices (read, latency, pages on
//! the intended node), and local against the farthest remote node per CPU node.

use super::case::{group_name, series_name, Kind};
use crate::model::{Finding, Matrix, ProbeResult, Table};

/// The tables with the cases' one-row `numa/binding` tables as one table, in case
/// order, after the others.
pub(super) fn merged_binding_tables(tables: &[Table]) -> Vec<Table> {
    let mut merged: Option<Table> = None;
    let mut out: Vec<Table> = Vec::with_capacity(tables.len());
    for t in tables {
        if t.name != "numa/binding" {
            out.push(t.clone());
            continue;
        }
        match &mut merged {
            Some(m) => m.rows.extend(t.rows.iter().cloned()),
            None => merged = Some(t.clone()),
        }
    }
    out.extend(merged);
    out
}

/// The matrix of a kind's medians: rows CPU nodes, columns memory nodes.
pub(super) fn matrix(result: &ProbeResult, kind: Kind, unit: &str, nodes: &[u32]) -> Matrix {
    let values = nodes
        .iter()
        .map(|&i| {
            nodes
                .iter()
                .map(|&j| {
                    result
                        .estimate(&series_name(kind, i), j as f64)
                        .map(|e| e.value)
                })
                .collect()
        })
        .collect();
    Matrix {
        name: format!("numa/{}", kind.name()),
        unit: unit.into(),
        rows: nodes.iter().map(|n| format!("CPUs node {n}")).collect(),
        cols: nodes.iter().map(|n| format!("memory node {n}")).collect(),
        values,
    }
}

/// Share of checked pages found on the intended node, per cell (both kinds
/// together); `None` where no page could be checked.
pub(super) fn binding_matrix(result: &ProbeResult, nodes: &[u32]) -> Matrix {
    let mut acc = vec![vec![(0u64, 0u64); nodes.len()]; nodes.len()];
    for t in result.tables.iter().filter(|t| t.name == "numa/binding") {
        for row in &t.rows {
            let get = |k: usize| row.get(k).and_then(|v| v.as_u64());
            let (Some(i), Some(j), Some(checked), Some(on)) = (get(1), get(2), get(4), get(5))
            else {
                continue;
            };
            let pos = |n: u64| nodes.iter().position(|&x| x as u64 == n);
            if let (Some(r), Some(c)) = (pos(i), pos(j)) {
                let unknown = get(7).unwrap_or(0);
                acc[r][c].0 += on;
                acc[r][c].1 += checked.saturating_sub(unknown);
            }
        }
    }
    Matrix {
        name: "numa/pages-on-node".into(),
        unit: "fraction".into(),
        rows: nodes.iter().map(|n| format!("CPUs node {n}")).collect(),
        cols: nodes.iter().map(|n| format!("memory node {n}")).collect(),
        values: acc
            .iter()
            .map(|r| {
                r.iter()
                    .map(|&(on, n)| (n > 0).then(|| on as f64 / n as f64))
                    .collect()
            })
            .collect(),
    }
}

/// The diagonal-only note on one node; on several, local vs the slowest remote node
/// per CPU node (paired by round), for bandwidth and latency.
pub(super) fn findings(result: &ProbeResult, nodes: &[u32]) -> Vec<Finding> {
    let mut out = Vec::new();
    if nodes.len() == 1 {
        let n = nodes[0];
        out.push(Finding::Note {
            text: format!(
                "one NUMA node (node {n}): measured the diagonal only, CPUs and memory of node \
                 {n}; there is no remote memory to compare with"
            ),
        });
        for (kind, unit) in [(Kind::Read, "bytes_per_s"), (Kind::Latency, "ns")] {
            if let Some(e) = result.estimate(&series_name(kind, n), n as f64) {
                out.push(Finding::Value {
                    what: format!("{} of node {n} from its own CPUs", kind.name()),
                    unit: unit.into(),
                    value: e,
                    context: None,
                });
            }
        }
        return out;
    }
    for (kind, unit) in [(Kind::Read, "bytes_per_s"), (Kind::Latency, "ns")] {
        for &i in nodes {
            let s = series_name(kind, i);
            let Some(series) = result.series(&s) else {
                continue;
            };
            // The remote node farthest from local: lowest bandwidth, highest latency.
            let remote = series
                .x
                .iter()
                .zip(&series.y)
                .filter(|(&x, _)| x != i as f64)
                .max_by(|a, b| match kind {
                    Kind::Read => b.1.total_cmp(a.1),
                    Kind::Latency => a.1.total_cmp(b.1),
                })
                .map(|(&x, _)| x);
            let Some(j) = remote else { continue };
            let local_name = format!("local (node {i})");
            let remote_name = format!("remote (node {j})");
            if let Some(f) = crate::analysis::compare(
                result,
                &group_name(kind, i),
                unit,
                (&local_name, &s, i as f64),
                (&remote_name, &s, j),
                None,
            ) {
                out.push(f);
            }
        }
    }
    out
}
