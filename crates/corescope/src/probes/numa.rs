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

use super::memory::DEFAULT_LINE_BYTES;
use super::{Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::kernels::chase::{build_chase, chase};
use crate::kernels::stream::read_sum;
use crate::memguard;
use crate::model::{Finding, Matrix, Measurement, Point, ProbeResult, Profile, Table};
use crate::placement::{self, Strategy};
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;

/// Pages per buffer whose node `move_pages` reports (spread evenly over it).
pub const CHECKED_PAGES: usize = 64;
/// The latency buffer is at least this many times the last-level cache.
pub const LATENCY_LLC_FACTOR: u64 = 8;
/// Smallest latency buffer (machines that report no cache, or small caches).
pub const LATENCY_MIN_BYTES: u64 = 64 << 20;
/// Smallest bandwidth block per thread.
pub const MIN_BLOCK_BYTES: u64 = 4 << 20;
/// `MPOL_BIND` (linux/mempolicy.h): allocate only on the nodes of the mask.
const MPOL_BIND: libc::c_int = 2;
/// `MPOL_MF_STRICT` (linux/mempolicy.h): fail if pages already exist elsewhere.
const MPOL_MF_STRICT: libc::c_uint = 1;

/// The probe.
pub struct Numa;

/// What a case measures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Read,
    Latency,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Latency => "latency",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct CaseParams {
    kind: Kind,
    cpu_node: u32,
    mem_node: u32,
    cpus: Vec<u32>,
    /// Per thread (read) or the chase buffer (latency).
    bytes: u64,
    /// Chase steps (latency only).
    steps: u64,
}

/// Nodes up to which the default profile measures every (CPU node, memory node)
/// pair.
const MATRIX_FULL_MAX_NODES: usize = 4;

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

/// The series of a kind and CPU node.
fn series_name(kind: Kind, cpu_node: u32) -> String {
    format!("{}/cpus-node{cpu_node}", kind.name())
}

/// The comparison of a kind and CPU node (its variants are the memory nodes).
fn group_name(kind: Kind, cpu_node: u32) -> String {
    format!("{}, CPUs on node {cpu_node}", kind.name())
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
/// (enough for the signed-rank test to separate two cells).
fn cell_rounds(profile: Profile, nodes: usize) -> Rounds {
    let mut rounds = super::pool::rounds_for(profile, Rounds::COMPARED);
    if nodes > 2 && profile != Profile::Full {
        rounds.min = rounds.min.min(6);
        rounds.max = rounds.max.min(8);
    }
    rounds
}

/// The case of one cell, compared within its CPU node's group.
fn cell_case(p: &CaseParams) -> Case {
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

/// The model's price of a dependent load from memory (`corescope plan`), ns.
const COST_DRAM_LOAD_NS: f64 = 100.0;

impl Probe for Numa {
    /// A latency cell chases `steps` dependent loads (about
    /// [`COST_DRAM_LOAD_NS`] each) after writing its buffer; a read cell streams
    /// `bytes` per thread, the node's bandwidth saturating at 6 streams as in
    /// `memory`, and starts its team.
    fn run_cost_s(&self, c: &crate::probes::cost::Cost) -> Option<f64> {
        let bytes = c.num("bytes")?;
        let steps = c.num("steps").unwrap_or(0.0);
        let threads = c.len_of("cpus").max(1) as f64;
        Some(if steps > 0.0 {
            steps * COST_DRAM_LOAD_NS * 1e-9 + c.bytes_s(bytes)
        } else {
            c.bytes_s(bytes * threads) / threads.clamp(1.0, 6.0) + c.spawn_s(threads)
        })
    }

    fn id(&self) -> &'static str {
        "numa"
    }

    fn title(&self) -> &'static str {
        "NUMA matrix: read bandwidth and idle latency for every (CPU node, memory node) pair"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
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
        let warnings: Vec<String> = [fit.warning, lat_fit.warning]
            .into_iter()
            .flatten()
            .collect();
        let no_node = ctx.topo.pus.iter().all(|p| p.numa_node.is_none());
        let warnings = warnings.into_iter().chain(
            no_node.then(|| "the OS reports no NUMA node: measured as one node 0".to_string()),
        );
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

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.typed()?;
        let cpus: Vec<Option<u32>> = c.cpus.iter().map(|&x| Some(x)).collect();
        let line = ctx
            .plan
            .topo
            .line_bytes()
            .map(|l| l as usize)
            .unwrap_or(DEFAULT_LINE_BYTES)
            .max(8);
        let words = (c.bytes / 8) as usize;
        let out = ctx.team(
            &cpus,
            1,
            |_t| -> Result<(NodeBuffer, Binding), String> {
                let mut b = NodeBuffer::new(words, Some(c.mem_node), c.kind == Kind::Latency)?;
                match c.kind {
                    Kind::Read => b.as_mut_slice().fill(0x0101_0101_0101_0101),
                    Kind::Latency => {
                        let stride = line / 8;
                        let slots = (words / stride).max(2);
                        build_chase(b.as_mut_slice(), stride, slots, c.bytes ^ 0x5eed);
                    }
                }
                let binding = b.check(CHECKED_PAGES);
                Ok((b, binding))
            },
            |_t, s| -> Result<(u64, Binding), String> {
                let (b, binding) = s.as_ref().map_err(|e| e.clone())?;
                let r = match c.kind {
                    Kind::Read => black_box(read_sum(b.as_slice())),
                    Kind::Latency => black_box(chase(b.as_slice(), line / 8, c.steps)),
                };
                Ok((r, binding.clone()))
            },
        )?;
        if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
            return Err(ProbeError::Failed(format!("{}: {err}", case.label)));
        }
        let rep = out.reps.first().ok_or_else(|| {
            ProbeError::GaveUp(format!("{}: the budget ended before it ran", case.label))
        })?;
        let ns = rep.team_ns().max(1) as f64;
        let (y_name, y) = match c.kind {
            Kind::Read => (
                "bytes_per_s",
                (c.bytes * c.cpus.len() as u64) as f64 / ns * 1e9,
            ),
            Kind::Latency => ("ns", ns / c.steps.max(1) as f64),
        };
        let mut m = Measurement::points(vec![Point::new(
            series_name(c.kind, c.cpu_node),
            "memory_node",
            c.mem_node as f64,
            y_name,
            y,
        )]);
        let bindings: Vec<Binding> = out
            .results
            .iter()
            .filter_map(|r| r.first()?.as_ref().ok().map(|(_, b)| b.clone()))
            .collect();
        let total = Binding::sum(&bindings);
        for w in total.warnings("numa", &case.label, c.mem_node) {
            m.warnings.push(w);
        }
        m.tables.push(Table {
            name: "numa/binding".into(),
            columns: [
                "kind",
                "cpu_node",
                "memory_node",
                "mbind",
                "pages_checked",
                "on_node",
                "elsewhere",
                "unknown",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![vec![
                c.kind.name().into(),
                c.cpu_node.into(),
                c.mem_node.into(),
                total.mbind.clone().into(),
                total.checked.into(),
                total.on_node.into(),
                serde_json::json!(total.elsewhere),
                total.unknown.into(),
            ]],
        });
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, plan: &Plan, _ctx: &PlanCtx) {
        let nodes: Vec<u32> = plan.facts::<Vec<u32>>().cloned().unwrap_or_default();
        merge_binding_tables(result);
        for (kind, unit) in [(Kind::Read, "bytes_per_s"), (Kind::Latency, "ns")] {
            result.matrices.push(matrix(result, kind, unit, &nodes));
        }
        result.matrices.push(binding_matrix(result, &nodes));
        let found = findings(result, &nodes);
        result.findings.extend(found);
    }
}

/// The cases' one-row `numa/binding` tables as one table, in case order.
fn merge_binding_tables(result: &mut ProbeResult) {
    let mut merged: Option<Table> = None;
    result.tables.retain(|t| {
        if t.name != "numa/binding" {
            return true;
        }
        match &mut merged {
            Some(m) => m.rows.extend(t.rows.iter().cloned()),
            None => merged = Some(t.clone()),
        }
        false
    });
    result.tables.extend(merged);
}

/// The matrix of a kind's medians: rows CPU nodes, columns memory nodes.
fn matrix(result: &ProbeResult, kind: Kind, unit: &str, nodes: &[u32]) -> Matrix {
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
fn binding_matrix(result: &ProbeResult, nodes: &[u32]) -> Matrix {
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
fn findings(result: &ProbeResult, nodes: &[u32]) -> Vec<Finding> {
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

// ---------------------------------------------------------------------------
// Memory bound to a node

/// An anonymous private mapping of 64-bit words, bound to one NUMA node with
/// `mbind` before its first touch (where the OS allows it).
pub struct NodeBuffer {
    ptr: std::ptr::NonNull<u64>,
    words: usize,
    bytes: usize,
    /// `ok`, or why `mbind` failed (then the memory follows first touch).
    mbind: String,
    node: u32,
}

// SAFETY: a NodeBuffer owns its mapping exclusively (like a Vec<u64>); moving it to
// another thread moves that ownership.
unsafe impl Send for NodeBuffer {}
// SAFETY: `&NodeBuffer` hands out only `&[u64]` (shared reads).
unsafe impl Sync for NodeBuffer {}

impl NodeBuffer {
    /// Map `words` words (at least one page), bind them to `node` (when known), and
    /// ask for transparent huge pages when `huge`. Nothing is touched yet.
    pub fn new(words: usize, node: Option<u32>, huge: bool) -> Result<Self, String> {
        let page = page_bytes();
        let bytes = (words.max(1) * 8).div_ceil(page) * page;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing;
        // no existing memory is affected. The result is checked against MAP_FAILED.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {}: {}",
                memguard::human(bytes as u64),
                std::io::Error::last_os_error()
            ));
        }
        let ptr = std::ptr::NonNull::new(raw.cast::<u64>()).ok_or("mmap returned NULL")?;
        if huge {
            // SAFETY: ptr..ptr+bytes is our own mapping; madvise only changes how the
            // kernel backs it. A failure (THP off) is harmless.
            unsafe {
                libc::madvise(raw, bytes, libc::MADV_HUGEPAGE);
            }
        }
        let mbind = match node.map(|n| bind(raw, bytes, n)) {
            Some(Ok(())) => "ok".to_string(),
            Some(Err(e)) => e,
            None => "not bound: the OS reports no NUMA node".to_string(),
        };
        Ok(Self {
            ptr,
            words: words.max(1),
            bytes,
            mbind,
            node: node.unwrap_or(0),
        })
    }

    /// The words (zero until written).
    pub fn as_slice(&self) -> &[u64] {
        // SAFETY: the mapping holds at least `words` u64, zero-filled by the kernel
        // on first touch, and `&self` rules out a concurrent `&mut`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.words) }
    }

    /// Start of the mapping (page-aligned).
    pub fn as_ptr(&self) -> *const u64 {
        self.ptr.as_ptr()
    }

    /// The words, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: as in `as_slice`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }

    /// Where `samples` pages spread over the buffer are (touch it first).
    pub fn check(&self, samples: usize) -> Binding {
        let page = page_bytes();
        let pages = self.bytes / page;
        let n = samples.clamp(1, pages.max(1));
        let addrs: Vec<*mut libc::c_void> = (0..n)
            .map(|k| {
                // SAFETY: k·pages/n < pages, so the address lies inside the mapping.
                unsafe { self.ptr.as_ptr().cast::<u8>().add(k * pages / n * page) }.cast()
            })
            .collect();
        let mut b = Binding {
            mbind: self.mbind.clone(),
            checked: n as u64,
            ..Binding::default()
        };
        match page_nodes(&addrs) {
            Ok(status) => {
                for s in status {
                    if s == self.node as i32 {
                        b.on_node += 1;
                    } else if s >= 0 {
                        b.add_elsewhere(s as u32);
                    } else {
                        b.unknown += 1;
                    }
                }
            }
            Err(e) => {
                b.unknown = n as u64;
                b.query_error = Some(e);
            }
        }
        b
    }
}

impl Drop for NodeBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with exactly this length and is
        // unmapped once; no slice into it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.bytes);
        }
    }
}

/// Bytes of a base page.
fn page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `mbind(addr, len, MPOL_BIND, {node}, ..., MPOL_MF_STRICT)`; the error in words.
fn bind(addr: *mut libc::c_void, len: usize, node: u32) -> Result<(), String> {
    let words = node as usize / 64 + 1;
    let mut mask = vec![0u64; words];
    mask[node as usize / 64] |= 1u64 << (node % 64);
    // The kernel reads maxnode − 1 bits (mm/mempolicy.c get_nodes), hence the + 1.
    let maxnode = (words * 64 + 1) as libc::c_ulong;
    // SAFETY: addr..addr+len is a mapping the caller owns; the mask holds `words`
    // u64 = maxnode − 1 bits; mbind only sets the policy of that range.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len as libc::c_ulong,
            MPOL_BIND,
            mask.as_ptr(),
            maxnode,
            MPOL_MF_STRICT,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "mbind to node {node}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// The node of each page (`move_pages` in query mode: `nodes` NULL moves nothing);
/// a negative entry is −errno (`-ENOENT`: not present).
fn page_nodes(addrs: &[*mut libc::c_void]) -> Result<Vec<i32>, String> {
    let mut status = vec![i32::MIN; addrs.len()];
    // SAFETY: `addrs` and `status` hold `addrs.len()` entries each; with nodes NULL
    // the kernel only writes each page's node into `status`.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            addrs.len() as libc::c_ulong,
            addrs.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if r < 0 {
        return Err(format!("move_pages: {}", std::io::Error::last_os_error()));
    }
    Ok(status)
}

/// Where a buffer's checked pages were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Binding {
    /// `ok`, or why `mbind` failed.
    pub mbind: String,
    /// Pages asked about.
    pub checked: u64,
    /// Pages on the intended node.
    pub on_node: u64,
    /// (node, pages) for pages on other nodes.
    pub elsewhere: Vec<(u32, u64)>,
    /// Pages whose node could not be read (not present, or the query failed).
    pub unknown: u64,
    /// Why `move_pages` failed, if it did.
    pub query_error: Option<String>,
}

impl Binding {
    fn add_elsewhere(&mut self, node: u32) {
        match self.elsewhere.iter_mut().find(|(n, _)| *n == node) {
            Some((_, k)) => *k += 1,
            None => self.elsewhere.push((node, 1)),
        }
    }

    /// Every thread's check of one case, added up.
    pub fn sum(all: &[Binding]) -> Binding {
        let mut t = Binding {
            mbind: "ok".into(),
            ..Binding::default()
        };
        for b in all {
            if b.mbind != "ok" {
                t.mbind = b.mbind.clone();
            }
            t.checked += b.checked;
            t.on_node += b.on_node;
            t.unknown += b.unknown;
            for &(n, k) in &b.elsewhere {
                for _ in 0..k {
                    t.add_elsewhere(n);
                }
            }
            if t.query_error.is_none() {
                t.query_error = b.query_error.clone();
            }
        }
        t
    }

    /// Sentences when the memory was not bound, pages were elsewhere, or their node
    /// is unknown. What holds for the whole probe (a refused `mbind`, a refused query)
    /// names only `who` and the node, so it is said once, not once per cell; what is
    /// particular to a cell (pages elsewhere, pages not present) names the cell.
    pub fn warnings(&self, who: &str, cell: &str, node: u32) -> Vec<String> {
        let mut out = Vec::new();
        if self.mbind != "ok" {
            out.push(format!(
                "{who}: {} (memory placed by first touch)",
                self.mbind
            ));
        }
        if !self.elsewhere.is_empty() {
            let where_: Vec<String> = self
                .elsewhere
                .iter()
                .map(|(n, k)| format!("{k} on node {n}"))
                .collect();
            out.push(format!(
                "{who} {cell}: {} of {} checked pages not on node {node} ({})",
                self.checked - self.on_node - self.unknown,
                self.checked,
                where_.join(", ")
            ));
        }
        if let Some(e) = &self.query_error {
            out.push(format!("{who}: binding unchecked: {e}"));
        } else if self.unknown > 0 {
            out.push(format!(
                "{who} {cell}: {} of {} checked pages of unknown node (not present)",
                self.unknown, self.checked
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::model::{ClockInfo, Profile, Status};
    use crate::probes::Overrides;

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
                    let p: CaseParams = c.typed().unwrap();
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
                let p: CaseParams = c.typed().unwrap();
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
                let p: CaseParams = c.typed().unwrap();
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
            Numa.finish(&mut r, &plan, &ctx);
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

    #[test]
    fn the_binding_is_checked_page_by_page_here() {
        let topo = crate::topology::detect().unwrap();
        let node = cpu_nodes(&topo)[0].0;
        let mut b = NodeBuffer::new(1 << 18, Some(node), false).unwrap();
        b.as_mut_slice().fill(1);
        let c = b.check(CHECKED_PAGES);
        assert_eq!(c.checked, CHECKED_PAGES as u64);
        let elsewhere: u64 = c.elsewhere.iter().map(|e| e.1).sum();
        assert_eq!(c.on_node + elsewhere + c.unknown, c.checked);
        if c.mbind == "ok" && c.query_error.is_none() {
            // Bound and touched: every checked page is on the node, and no warning.
            assert_eq!(c.on_node, c.checked, "{c:?}");
            assert!(c.warnings("numa", "cell", node).is_empty());
        } else {
            // Refused here (a container): the cell says so instead of assuming.
            assert!(!c.warnings("numa", "cell", node).is_empty());
        }
        // Untouched pages are not present: their node is unknown, never assumed.
        let fresh = NodeBuffer::new(1 << 18, Some(node), false).unwrap();
        let u = fresh.check(8);
        assert_eq!(u.on_node, 0, "{u:?}");
        assert!(!u.warnings("numa", "fresh", node).is_empty());
    }

    #[test]
    fn a_node_that_does_not_exist_is_refused_and_said() {
        let mut b = NodeBuffer::new(1 << 12, Some(1000), false).unwrap();
        assert_ne!(b.mbind, "ok");
        b.as_mut_slice().fill(1);
        let c = b.check(4);
        let w = c
            .warnings("numa", "read CPUs node 0 ← memory node 1000", 1000)
            .join("; ");
        assert!(w.contains("mbind"), "{w}");
        assert!(
            w.contains("not on node 1000") || w.contains("unchecked"),
            "{w}"
        );
    }
}
