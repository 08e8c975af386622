//! A fleet's nodes → its analysis: nodes grouped by model (CPU model and core
//! count), and within each group every figure's spread and outliers. Pure.
//!
//! The work is one pass over each group's column of each figure: time
//! O(nodes × figures), and beside the nodes' own values one column of at most
//! `nodes` estimates in memory at a time ([`Cost`] counts both for the tests).

use super::file::{Analysis, FigureSpread, Group, Node, Outlier};
use super::stats::{self, MIN_FLEET_EFFECT, MIN_NODES, OUTLIER_SIGMAS};
use crate::model::Estimate;
use std::collections::BTreeMap;

/// What the analysis did, counted: the structure of its cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Node values read.
    pub values_read: usize,
    /// Largest column held at once.
    pub largest_column: usize,
    /// Figures judged (a figure counts once per group).
    pub columns: usize,
}

/// The method as written into the fleet file.
pub const METHOD: &str = "per node model (CPU model and core count), each figure on a log \
    scale: fleet median and sigma = 1.4826 x MAD; between-node sigma = sqrt(sigma^2 - \
    own^2), own = the median node's interval half-width / 1.96; a node's ratio to the \
    median carries its own 95 % interval and the median's (1.96 x sqrt(pi/2) x sigma / \
    sqrt(n)) in quadrature; an outlier when the whole interval lies beyond \
    max(outlier_sigmas x between-node sigma, ln(1 + min_effect))";

/// Nodes grouped by model, in order of first appearance: (model, node indices).
pub fn groups(nodes: &[Node]) -> Vec<(String, Vec<usize>)> {
    let mut order: Vec<String> = Vec::new();
    let mut members: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let m = n.model();
        if !members.contains_key(&m) {
            order.push(m.clone());
        }
        members.entry(m).or_default().push(i);
    }
    order
        .into_iter()
        .map(|m| {
            let idx = members.remove(&m).unwrap_or_default();
            (m, idx)
        })
        .collect()
}

/// Judge one group: every figure, every node.
fn judge_group(
    nodes: &[Node],
    figures: usize,
    members: &[usize],
    cost: &mut Cost,
) -> (Vec<FigureSpread>, Vec<Outlier>) {
    let mut spreads = Vec::new();
    let mut outliers = Vec::new();
    let mut column: Vec<Option<Estimate>> = Vec::with_capacity(members.len());
    for f in 0..figures {
        column.clear();
        column.extend(
            members
                .iter()
                .map(|&i| nodes[i].values[f].map(|v| v.estimate())),
        );
        cost.values_read += column.len();
        cost.largest_column = cost.largest_column.max(column.len());
        let Some(spread) = stats::spread(&column) else {
            continue;
        };
        cost.columns += 1;
        for (&i, v) in members.iter().zip(&column) {
            let Some(place) = v.as_ref().and_then(|v| stats::place(&spread, v)) else {
                continue;
            };
            if let (Some(side), Some(v)) = (place.outlier, v) {
                outliers.push(Outlier {
                    node: nodes[i].name.clone(),
                    figure: f,
                    side,
                    value: v.value,
                    fleet_median: spread.median,
                    ratio: place.ratio,
                });
            }
        }
        spreads.push(FigureSpread { figure: f, spread });
    }
    (spreads, outliers)
}

/// The analysis of nodes whose `values` are aligned with `figures` figures.
pub fn analyse(nodes: &[Node], figures: usize) -> (Analysis, Cost) {
    let mut cost = Cost::default();
    let groups = groups(nodes)
        .into_iter()
        .map(|(model, members)| {
            let (figures, outliers) = if members.len() >= MIN_NODES {
                judge_group(nodes, figures, &members, &mut cost)
            } else {
                (Vec::new(), Vec::new())
            };
            Group {
                model,
                nodes: members.iter().map(|&i| nodes[i].name.clone()).collect(),
                figures,
                outliers,
            }
        })
        .collect();
    let analysis = Analysis {
        method: METHOD.into(),
        outlier_sigmas: OUTLIER_SIGMAS,
        min_effect: MIN_FLEET_EFFECT,
        min_nodes: MIN_NODES,
        groups,
    };
    (analysis, cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::file::NodeValue;
    use crate::model::Profile;

    /// A node with `figures` values, each `base × factor(figure)`, interval ±1 %.
    pub(crate) fn node(
        name: &str,
        model: &str,
        figures: usize,
        value: impl Fn(usize) -> f64,
    ) -> Node {
        Node {
            name: name.into(),
            run_file: None,
            cpu_model: model.into(),
            cores: 4,
            cpus: 4,
            profile: Profile::Quick,
            started_utc: String::new(),
            failed: vec![],
            values: (0..figures)
                .map(|f| {
                    let v = value(f);
                    Some(NodeValue(v, v * 0.99, v * 1.01, 10))
                })
                .collect(),
        }
    }

    #[test]
    fn models_are_judged_apart() {
        // Three fast nodes of model A, three nodes of model B at half speed, one of
        // them slower still: B's slow node is named, A's are not, and B's normal
        // nodes are not outliers against A.
        let mut nodes: Vec<Node> = (0..3)
            .map(|i| {
                node(&format!("a{i}"), "A", 2, |f| {
                    100.0 * (1.0 + 0.001 * (i + f) as f64)
                })
            })
            .collect();
        for i in 0..4 {
            let slow = if i == 2 { 0.7 } else { 1.0 };
            nodes.push(node(&format!("b{i}"), "B", 2, |f| {
                50.0 * slow * (1.0 + 0.001 * (i + f) as f64)
            }));
        }
        nodes.push(node("c0", "C", 2, |_| 1.0));
        let (a, cost) = analyse(&nodes, 2);
        assert_eq!(a.groups.len(), 3);
        assert_eq!(a.groups[0].model, "A, 4 cores");
        assert!(a.groups[0].outliers.is_empty());
        let names: Vec<(&str, usize)> = a.groups[1]
            .outliers
            .iter()
            .map(|o| (o.node.as_str(), o.figure))
            .collect();
        assert_eq!(names, [("b2", 0), ("b2", 1)]);
        let o = &a.groups[1].outliers[0];
        assert!((o.ratio.value - 0.7).abs() < 0.01, "{o:?}");
        // One node of model C: not judged.
        assert!(a.groups[2].figures.is_empty());
        assert_eq!(cost.values_read, 2 * 3 + 2 * 4);
        assert_eq!(cost.largest_column, 4);
    }
}
