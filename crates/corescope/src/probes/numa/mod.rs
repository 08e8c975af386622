//! `numa`: read bandwidth and idle latency for every (CPUs on node i, memory on
//! node j) pair — the matrix of Intel MLC and likwid (seed 000 §5, seed 001 MPO).
//!
//! - `read/cpus-node<i>` at x = j: up to [`bandwidth_threads`] CPUs of node i
//!   (spread over its cores first) each read their own block bound to node j once
//!   with the memory probe's `read` kernel ([`crate::kernels::stream::read_sum`]); bytes /
//!   (last end − first start).
//! - `latency/cpus-node<i>` at x = j: the first CPU of node i follows a dependent
//!   pointer chase ([`crate::kernels::chase::chase`]) over a random cyclic permutation
//!   (Sattolo) of cache lines in a buffer bound to node j, [`LATENCY_LLC_FACTOR`] ×
//!   the last-level cache and at least [`LATENCY_MIN_BYTES`]: nearly every step misses
//!   every cache; ns per step.
//!
//! Memory is bound with `mbind(MPOL_BIND)` before its first touch, then touched by the
//! measuring thread (pinned on node i). The binding is never assumed: after the touch,
//! `move_pages` in query mode (`nodes = NULL`) reports the node of a sample of
//! [`CHECKED_PAGES`] pages per buffer. A page elsewhere is a warning, and the cell's
//! share of pages on the intended node is kept in the matrix `numa/pages-on-node`
//! (and the table `numa/binding`). Where `mbind` is refused (a container without
//! `CAP_SYS_NICE`), the memory falls back to first touch and the check still says
//! where it went.
//!
//! Repetition is the runner's: the memory nodes of one CPU node are the variants of
//! one comparison, run interleaved in rotated rounds, so each cell has its interval
//! and local vs remote is compared pair by pair. `finish` assembles the medians into
//! the matrices `numa/read` and `numa/latency` (rows: CPU nodes, columns: memory
//! nodes); intervals and counts stay in the series. On one node only the diagonal
//! exists, and a finding says so.

mod analysis;
mod buffer;
mod case;
mod measure;
mod plan;

pub use buffer::{Binding, NodeBuffer, NumaError, CHECKED_PAGES};
pub use case::latency_series_node;
pub use plan::{
    bandwidth_threads, cpu_nodes, LATENCY_LLC_FACTOR, LATENCY_MIN_BYTES, MIN_BLOCK_BYTES,
};

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::model::{Measurement, ProbeResult, Sensitivity};
use case::{CaseParams, Kind};

/// The probe.
pub struct Numa;

/// The model's price of a dependent load from memory (`corescope plan`), ns.
const COST_DRAM_LOAD_NS: f64 = 100.0;

/// Id of the probe and of its run-file entry.
pub const ID: &str = "numa";
/// The matrix of latencies from each CPU node to each memory node (ns).
pub const MATRIX_LATENCY: &str = "numa/latency";
/// The matrix of read bandwidths from each CPU node to each memory node (bytes/s).
pub const MATRIX_READ: &str = "numa/read";

impl Probe for Numa {
    type Params = CaseParams;
    type Facts = Vec<u32>;

    /// A latency cell chases `steps` dependent loads (about
    /// [`COST_DRAM_LOAD_NS`] each) after writing its buffer; a read cell streams
    /// `bytes` per thread, the node's bandwidth saturating at 6 streams as in
    /// `memory`, and starts its team.
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        let bytes = p.bytes as f64;
        let steps = p.steps as f64;
        let threads = crate::probes::cost::team(p.cpus.len());
        Some(if steps > 0.0 {
            steps * COST_DRAM_LOAD_NS * 1e-9 + c.bytes_s(bytes)
        } else {
            c.bytes_s(bytes * threads) / threads.clamp(1.0, 6.0) + c.spawn_s(threads)
        })
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "NUMA matrix: read bandwidth and idle latency for every (CPU node, memory node) pair"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::PageSize, Sensitivity::PagePlacement]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<u32>>, ProbeError> {
        plan::plan(ctx)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        measure::measure_cell(case, ctx)
    }

    fn analyze(&self, result: &ProbeResult, nodes: &Vec<u32>, _ctx: &PlanCtx) -> Analysis {
        let mut matrices: Vec<_> = [(Kind::Read, "bytes_per_s"), (Kind::Latency, "ns")]
            .into_iter()
            .map(|(kind, unit)| analysis::matrix(result, kind, unit, nodes))
            .collect();
        matrices.push(analysis::binding_matrix(result, nodes));
        Analysis {
            // The cases' one-row binding tables merged into one.
            replace_tables: Some(analysis::merged_binding_tables(&result.tables)),
            matrices,
            ..Analysis::findings(analysis::findings(result, nodes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::case::{series_name, CaseParams};
    use super::plan::MATRIX_FULL_MAX_NODES;
    use super::*;
    use crate::clock::Clock;
    use crate::model::{ClockInfo, Finding, Point, Profile, Status};
    use crate::probes::Overrides;
    use crate::topology::Topology;

    fn ctx(topo: Topology) -> PlanCtx {
        PlanCtx {
            topo,
            clock: Clock::from_info(ClockInfo {
                ticks_hz: 1e9,
                ..ClockInfo::default()
            }),
            profile: Profile::Quick,
            overrides: Overrides::default(),
            budget_s: 10.0,
        }
    }

    #[test]
    fn the_matrix_has_a_cell_per_node_pair_on_synthetic_machines() {
        for (spec, nodes) in [
            ("pack:2 numa:2 core:2 pu:2", 4usize),
            ("numa:8 pack:8 core:1 pu:4", 8),
            ("pack:2 core:4 pu:2", 1),
        ] {
            let topo = crate::topology::from_synthetic(spec).unwrap();
            let ctx = ctx(topo);
            let plan = Numa.plan(&ctx).unwrap();
            // Beyond 4 nodes the quick and default profiles measure three memory
            // nodes per CPU node (its own, the next, the one halfway round).
            let columns = if nodes > MATRIX_FULL_MAX_NODES {
                3
            } else {
                nodes
            };
            assert_eq!(plan.cases.len(), 2 * nodes * columns, "{spec}");
            let full = Numa
                .plan(&PlanCtx {
                    profile: Profile::Full,
                    ..ctx.clone()
                })
                .unwrap();
            assert_eq!(full.cases.len(), 2 * nodes * nodes, "{spec}: full profile");
            let locals = plan
                .cases
                .iter()
                .filter(|c| {
                    let p: CaseParams = c.params.clone();
                    p.cpu_node == p.mem_node
                })
                .count();
            assert_eq!(locals, 2 * nodes, "{spec}: every diagonal cell");
            // Every (kind, CPU node) is one comparison of `nodes` memory nodes.
            let mut groups: Vec<&str> = plan
                .cases
                .iter()
                .filter_map(|c| c.group.as_deref())
                .collect();
            groups.dedup();
            assert_eq!(groups.len(), 2 * nodes, "{spec}");
            assert!(plan.cases.iter().all(|c| c.rounds.min >= 2));
            // Each case's CPUs lie on its CPU node.
            for c in &plan.cases {
                let p: CaseParams = c.params.clone();
                assert!(!p.cpus.is_empty());
                for cpu in &p.cpus {
                    let node = ctx.topo.pu(*cpu).and_then(|p| p.numa_node).unwrap_or(0);
                    assert_eq!(node, p.cpu_node, "{spec}: CPU {cpu}");
                }
            }
            // A synthetic result with every planned cell: square matrices, the
            // planned cells set, the others empty.
            let mut r = ProbeResult::new("numa", "t", Status::Completed);
            r.params = plan.params.clone();
            for c in &plan.cases {
                let p: CaseParams = c.params.clone();
                let local = p.cpu_node == p.mem_node;
                let (y_name, y) = match p.kind {
                    Kind::Read => ("bytes_per_s", if local { 2e10 } else { 1e10 }),
                    Kind::Latency => ("ns", if local { 90.0 } else { 150.0 }),
                };
                for k in 0..12 {
                    r.push_point(Point::new(
                        series_name(p.kind, p.cpu_node),
                        "memory_node",
                        p.mem_node as f64,
                        y_name,
                        y * (1.0 + 0.001 * k as f64),
                    ));
                }
            }
            Numa.analyze(&r, &plan.facts, &ctx).file(&mut r);
            for name in ["numa/read", "numa/latency", "numa/pages-on-node"] {
                let m = r.matrices.iter().find(|m| m.name == name).unwrap();
                assert_eq!(
                    (m.rows.len(), m.cols.len()),
                    (nodes, nodes),
                    "{spec} {name}"
                );
                assert!(m.values.iter().all(|row| row.len() == nodes));
                if name != "numa/pages-on-node" {
                    let set = m.values.iter().flatten().filter(|v| v.is_some()).count();
                    assert_eq!(set, nodes * columns, "{spec} {name}");
                }
            }
            if nodes == 1 {
                assert!(r.findings.iter().any(
                    |f| matches!(f, Finding::Note { text } if text.contains("diagonal only"))
                ));
            } else {
                // Local vs remote per CPU node and kind, stated as a difference.
                let n = r
                    .findings
                    .iter()
                    .filter(|f| {
                        matches!(f, Finding::Comparison { outcome, .. }
                            if *outcome == crate::model::Outcome::Different)
                    })
                    .count();
                assert_eq!(n, 2 * nodes, "{spec}");
            }
        }
    }
}
