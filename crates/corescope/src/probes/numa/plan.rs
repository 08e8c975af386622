//! `numa`'s plan: the CPU nodes and their CPUs, the (CPU node, memory node) cells
//! to measure (every pair, or a sample on many nodes), their sizes within the memory
//! available, and their rounds.

use super::buffer::CHECKED_PAGES;
use super::case::{group_name, CaseParams, Kind};
use crate::memguard;
use crate::model::{Profile, Warning};
use crate::placement::{self, Strategy};
use crate::probes::{Case, Plan, PlanCtx, ProbeError, Rounds};
use crate::topology::Topology;
use std::collections::{BTreeMap, HashMap};

/// The latency buffer is at least this many times the last-level cache.
pub const LATENCY_LLC_FACTOR: u64 = 8;
/// Smallest latency buffer (machines that report no cache, or small caches).
pub const LATENCY_MIN_BYTES: u64 = 64 << 20;
/// Smallest bandwidth block per thread.
pub const MIN_BLOCK_BYTES: u64 = 4 << 20;

/// Nodes up to which the default profile measures every (CPU node, memory node)
/// pair.
pub(super) const MATRIX_FULL_MAX_NODES: usize = 4;

/// NUMA nodes with allowed CPUs and those CPUs, scatter order (one per core first);
/// a machine whose OS reports no node is one node 0.
pub fn cpu_nodes(topo: &Topology) -> Vec<(u32, Vec<u32>)> {
    let order = placement::order(topo, &Strategy::Scatter);
    let mut node_of: HashMap<u32, u32> = HashMap::with_capacity(topo.pus.len());
    for p in &topo.pus {
        node_of
            .entry(p.os_index)
            .or_insert(p.numa_node.unwrap_or(0));
    }
    let mut nodes: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for cpu in order {
        let node = node_of.get(&cpu).copied().unwrap_or(0);
        nodes.entry(node).or_default().push(cpu);
    }
    nodes.into_iter().collect()
}

/// Threads of a bandwidth cell: every CPU of the node at full size, fewer otherwise.
pub fn bandwidth_threads(profile: crate::model::Profile, node_cpus: usize) -> usize {
    node_cpus.min(profile.pick(2, 16, usize::MAX)).max(1)
}

/// CPU nodes the default and quick profiles measure on a machine of many nodes.
const CPU_NODES_SAMPLED: usize = 8;

/// The (CPU node, memory node) cells to measure, as indices into the nodes: every
/// pair up to [`MATRIX_FULL_MAX_NODES`] nodes and in the full profile; beyond, up to
/// [`CPU_NODES_SAMPLED`] CPU nodes spread evenly, each against its own memory, the
/// next node's and the one halfway round (nodes² cells would take most of a run on
/// 16 or 24 nodes).
fn cells(n: usize, profile: Profile) -> Vec<(usize, usize)> {
    if n <= MATRIX_FULL_MAX_NODES || profile == Profile::Full {
        return (0..n).flat_map(|i| (0..n).map(move |k| (i, k))).collect();
    }
    let stride = n.div_ceil(CPU_NODES_SAMPLED).max(1);
    let mut out = Vec::new();
    for i in (0..n).step_by(stride) {
        for k in [i, (i + 1) % n, (i + n / 2) % n] {
            if !out.contains(&(i, k)) {
                out.push((i, k));
            }
        }
    }
    out
}

/// [`cells`] in words, for the run file.
fn cells_rule(n: usize, profile: Profile) -> String {
    if n <= MATRIX_FULL_MAX_NODES || profile == Profile::Full {
        return format!("every pair of the {n} nodes");
    }
    let sampled = n.div_ceil(n.div_ceil(CPU_NODES_SAMPLED).max(1));
    format!(
        "{n} nodes: CPUs of {sampled} nodes spread evenly, each against its own memory, the \
         next node's and the one halfway round (--full measures every pair)"
    )
}

/// Rounds of a cell: beyond two nodes the default and quick profiles take 6 to 8
/// (enough for the signed-rank test to separate two cells). One node has a single
/// cell per kind and nothing to compare it with, so 6 to 8 give its interval too
/// (rounds widened to 30 there cost a default run about a minute of a 2 GiB chase).
fn cell_rounds(profile: Profile, nodes: usize) -> Rounds {
    let mut rounds = crate::probes::pool::rounds_for(profile, Rounds::COMPARED);
    if (nodes > 2 || nodes == 1) && profile != Profile::Full {
        rounds.min = rounds.min.min(6);
        rounds.max = rounds.max.min(8);
    }
    rounds
}

/// The case of one cell, compared within its CPU node's group.
fn cell_case(p: &CaseParams) -> Case<CaseParams> {
    let config = format!(
        "CPUs {} memory node {}",
        Topology::format_cpu_list(&p.cpus),
        p.mem_node
    );
    Case::new(
        format!(
            "{} CPUs node {} ← memory node {}",
            p.kind.name(),
            p.cpu_node,
            p.mem_node
        ),
        p,
    )
    .compared(
        group_name(p.kind, p.cpu_node),
        format!("memory node {}", p.mem_node),
        config,
    )
}

/// The plan: a case per measured cell and kind, compared within its CPU node.
pub(super) fn plan(ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<u32>>, ProbeError> {
    let nodes = cpu_nodes(&ctx.topo);
    if nodes.is_empty() {
        return Err(ProbeError::Skipped("no allowed CPU".into()));
    }
    let avail = ctx.memory_available();
    let max_threads = nodes
        .iter()
        .map(|(_, c)| bandwidth_threads(ctx.profile, c.len()))
        .max()
        .unwrap_or(1);
    let want: u64 = ctx.profile.pick(16 << 20, 64 << 20, 256 << 20);
    let fit = memguard::fit(
        "numa read",
        want,
        MIN_BLOCK_BYTES,
        max_threads,
        4096,
        false,
        &avail,
    )
    .map_err(|e| ProbeError::Skipped(e.to_string()))?;
    let llc = ctx.topo.llc_bytes().unwrap_or(0);
    let lat_want = (llc * LATENCY_LLC_FACTOR)
        .max(LATENCY_MIN_BYTES)
        .max(ctx.profile.pick(0, 256 << 20, 1 << 30));
    let lat_min = (llc * LATENCY_LLC_FACTOR).max(MIN_BLOCK_BYTES);
    let lat_fit = memguard::fit("numa latency", lat_want, lat_min, 1, 4096, false, &avail)
        .map_err(|e| ProbeError::Skipped(e.to_string()))?;
    let steps: u64 = ctx.profile.pick(200_000, 1_000_000, 4_000_000);
    let rounds = cell_rounds(ctx.profile, nodes.len());
    let cells = cells(nodes.len(), ctx.profile);
    let mut cases = Vec::new();
    for kind in [Kind::Read, Kind::Latency] {
        for &(i, k) in &cells {
            let (cpu_node, node_cpus) = &nodes[i];
            let (cpus, bytes) = match kind {
                Kind::Read => (
                    node_cpus[..bandwidth_threads(ctx.profile, node_cpus.len())].to_vec(),
                    fit.per_thread,
                ),
                Kind::Latency => (node_cpus[..1].to_vec(), lat_fit.per_thread),
            };
            let p = CaseParams {
                kind,
                cpu_node: *cpu_node,
                mem_node: nodes[k].0,
                cpus,
                bytes,
                steps,
            };
            cases.push(cell_case(&p).with_rounds(rounds));
        }
    }
    let no_node = ctx.topo.pus.iter().all(|p| p.numa_node.is_none());
    let warnings = [fit.warning, lat_fit.warning]
        .into_iter()
        .flatten()
        .chain(no_node.then_some(Warning::NoNumaNode));
    let node_ids: Vec<u32> = nodes.iter().map(|(n, _)| *n).collect();
    let mut plan = Plan::new(cases)
        .scaled_down((cells.len() < nodes.len() * nodes.len()).then(|| cells_rule(nodes.len(), ctx.profile)))
        .param("nodes", &node_ids)
        .with_facts(node_ids.clone())
        .param(
            "node_cpus",
            nodes
                .iter()
                .map(|(n, c)| (n.to_string(), Topology::format_cpu_list(c)))
                .collect::<std::collections::BTreeMap<_, _>>(),
        )
        .param("read_bytes_per_thread", fit.per_thread)
        .param("read_threads_max", max_threads)
        .param("latency_buffer_bytes", lat_fit.per_thread)
        .param("latency_steps", steps)
        .param("cells_measured", cells.len())
        .param("cells_rule", cells_rule(nodes.len(), ctx.profile))
        .param("checked_pages_per_buffer", CHECKED_PAGES)
        .param("binding", "mbind(MPOL_BIND, MPOL_MF_STRICT) before first touch by the pinned thread; checked with move_pages (query mode)")
        ;
    for w in warnings {
        plan = plan.warning(w);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_nodes_sample_cpu_nodes_and_keep_local_next_and_far_memory() {
        // Up to four nodes, and in the full profile: the whole matrix.
        assert_eq!(cells(4, Profile::Default).len(), 16);
        assert_eq!(cells(24, Profile::Full).len(), 24 * 24);
        for n in [5usize, 8, 16, 24, 64] {
            let c = cells(n, Profile::Default);
            let rows: std::collections::BTreeSet<usize> = c.iter().map(|&(i, _)| i).collect();
            assert!(rows.len() <= CPU_NODES_SAMPLED && rows.len() >= CPU_NODES_SAMPLED.min(n) / 2);
            for &i in &rows {
                // Own memory, the next node's, the one halfway round; each once.
                for k in [i, (i + 1) % n, (i + n / 2) % n] {
                    assert_eq!(
                        c.iter().filter(|&&x| x == (i, k)).count(),
                        1,
                        "{n}: {i}->{k}"
                    );
                }
            }
            assert!(c.iter().all(|&(i, k)| i < n && k < n));
            assert!(
                cells_rule(n, Profile::Default).contains(&format!("CPUs of {} nodes", rows.len()))
            );
        }
    }
}
