//! Placement: strategy + thread count + topology → CPU list; placement
//! expressions; the CPU pairs and subsets that pairwise probes measure.
//! Pure: no syscalls, no printing (see `docs/placement.md`).
//!
//! | strategy  | thread `i` goes to |
//! |-----------|--------------------|
//! | `linear`  | the `i`-th allowed CPU in OS-index order (seed 000's "dumb") |
//! | `compact` | the `i`-th allowed PU in topology order, NUMA node by NUMA node, the most performant CPU kind first within a node: every PU of a core, then the next core, ... |
//! | `scatter` | the allowed PU farthest from those already taken: a new NUMA node first, then a new Group, package, die, shared cache, core (outermost first), the most performant CPU kind first (seed 000's "round robin" on regular machines) |
//! | `unbound` | nowhere: the OS decides (seed 000's "auto") |
//! | a list    | the `i`-th CPU of the list (`0,2,4-7`), in the order written |
//! | an expression | `N0:0-3`, `S1:0-7`, `kind:P`, joined by `@`: see [`expr`] |
//!
//! More threads than CPUs wrap around: thread `i` takes the place of thread
//! `i mod n`, where `n` is the number of allowed CPUs (or list entries).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::topology::{Pu, Topology};

pub mod expr;
pub mod pairs;
mod scatter;
pub mod subset;

pub use expr::{Domain, Expr, Selection};

/// Largest number of allowed CPUs that `scatter` orders greedily: every topology
/// corescope accepts ([`crate::topology::MAX_PUS`]); the greedy order costs
/// n · levels² · log n (`scatter.rs`). Larger hand-made topologies get the
/// digit-reversed tree order, which is the same on regular trees without NUMA
/// levels of their own.
pub const GREEDY_MAX_CPUS: usize = crate::topology::MAX_PUS;

/// Largest CPU index accepted in a list (far above any machine; guards `0-4000000000`).
pub const MAX_CPU_INDEX: u32 = 1 << 20;

/// Where threads go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Thread i → i-th allowed CPU in OS-index order (the seed's "dumb").
    Linear,
    /// Fill every PU of a core, then the next core, then the next package.
    Compact,
    /// Consecutive threads as far apart as possible (the seed's "round robin").
    Scatter,
    /// No binding: the OS decides (the seed's "auto").
    Unbound,
    /// An explicit list of OS CPU indices, used in order, wrapping around.
    List(Vec<u32>),
    /// A placement expression (`N0:0-3`, `S1:0-7`, `kind:P`, `N0@N1`).
    Expr(Expr),
}

/// Why a placement request is invalid.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum PlacementError {
    /// Unknown strategy name or bad list syntax.
    #[error("invalid placement '{0}': expected linear, compact, scatter, unbound, a CPU list like 0,2,4-7 or an expression like N0:0-3, S1:0-7, kind:P")]
    Parse(String),
    /// A placement expression that does not parse.
    #[error("invalid placement expression '{expr}': {reason}")]
    Expr {
        /// The expression as given.
        expr: String,
        /// What is wrong, and what would be right.
        #[source]
        reason: expr::SyntaxError,
    },
    /// A placement expression that names a domain or index this machine lacks.
    #[error("placement '{expr}': {reason}")]
    Domain {
        /// The expression.
        expr: String,
        /// What is missing, and what there is.
        #[source]
        reason: expr::DomainError,
    },
    /// A CPU list names a CPU this machine does not have.
    #[error("CPU {cpu} does not exist on this machine; CPUs that may be used: {allowed}")]
    NoSuchCpu {
        /// The CPU named.
        cpu: u32,
        /// The allowed CPUs in list syntax.
        allowed: String,
    },
    /// A CPU list names a CPU that exists but that this process may not use.
    #[error("CPU {cpu} is {why}; CPUs that may be used: {allowed}")]
    NotAllowed {
        /// The CPU named.
        cpu: u32,
        /// `outside this process's cpuset` or `offline or outside the cpuset`.
        why: String,
        /// The allowed CPUs in list syntax.
        allowed: String,
    },
    /// The topology has no CPU this process may use.
    #[error(
        "no allowed CPU in the topology ({source_name}): cannot place threads with '{strategy}'"
    )]
    NoCpus {
        /// The strategy asked for.
        strategy: String,
        /// Where the topology came from.
        source_name: String,
    },
}

impl Strategy {
    /// Name as used in series names: `scatter`, or for an explicit list `list:`
    /// and the list (`list:0,2,4-7`), so that several lists give several series.
    pub fn name(&self) -> String {
        match self {
            Strategy::Linear => "linear".into(),
            Strategy::Compact => "compact".into(),
            Strategy::Scatter => "scatter".into(),
            Strategy::Unbound => "unbound".into(),
            Strategy::List(cpus) => format!("list:{}", list_text(cpus)),
            Strategy::Expr(e) => e.text.clone(),
        }
    }

    /// Parse `linear`, `compact`, `scatter`, `unbound`, a CPU list or a
    /// placement expression ([`expr`]).
    ///
    /// A list is comma-separated OS indices and inclusive ranges (`0,2,4-7`),
    /// spaces around items allowed, kept in the order written (duplicates too).
    /// Empty items, reversed ranges (`7-4`) and anything else are rejected.
    pub fn parse(s: &str) -> Result<Self, PlacementError> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "linear" => return Ok(Strategy::Linear),
            "compact" => return Ok(Strategy::Compact),
            "scatter" => return Ok(Strategy::Scatter),
            "unbound" => return Ok(Strategy::Unbound),
            _ => {}
        }
        if expr::looks_like_expr(t) {
            return Expr::parse(t).map(Strategy::Expr);
        }
        parse_cpu_list(t)
            .map(Strategy::List)
            .ok_or_else(|| PlacementError::Parse(s.into()))
    }

    /// Check a strategy against a topology: every CPU of a list must exist and
    /// be allowed; every domain and index of an expression must exist. Named
    /// strategies are always valid (they use allowed CPUs only).
    pub fn validate(&self, topo: &Topology) -> Result<(), PlacementError> {
        let cpus = match self {
            Strategy::List(cpus) => cpus,
            Strategy::Expr(e) => return e.resolve(topo).map(|_| ()),
            _ => return Ok(()),
        };
        let allowed = || Topology::format_cpu_list(&topo.allowed_os_indices());
        // Whether each PU is allowed, by OS index: one lookup per CPU of the list.
        let mut known: HashMap<u32, bool> = HashMap::with_capacity(topo.pus.len());
        for p in &topo.pus {
            known.entry(p.os_index).or_insert(p.allowed);
        }
        for &cpu in cpus {
            match known.get(&cpu) {
                Some(true) => {}
                Some(_) => {
                    return Err(PlacementError::NotAllowed {
                        cpu,
                        why: "outside this process's cpuset".into(),
                        allowed: allowed(),
                    })
                }
                None if topo.unavailable.contains(&cpu) => {
                    return Err(PlacementError::NotAllowed {
                        cpu,
                        why: "offline or outside the cpuset".into(),
                        allowed: allowed(),
                    })
                }
                None => {
                    return Err(PlacementError::NoSuchCpu {
                        cpu,
                        allowed: allowed(),
                    })
                }
            }
        }
        Ok(())
    }
}

/// `0,2,4-7` → `[0, 2, 4, 5, 6, 7]`; `None` on any syntax error.
/// A CPU list as written back, in its order: ascending runs as ranges (`0,2,4-7`).
fn list_text(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j].wrapping_add(1) {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}-{}", cpus[i], cpus[j])
        } else if j == i + 1 {
            format!("{},{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Most CPU ids a list may name once its ranges are expanded (every id up to
/// [`MAX_CPU_INDEX`] once): `0-1048576,0-1048576,...` is refused before a
/// range is expanded, so a short string cannot ask for gigabytes.
pub const MAX_LIST_CPUS: usize = MAX_CPU_INDEX as usize + 1;

pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let num = |x: &str| -> Option<u32> {
        let x = x.trim();
        if x.is_empty() || !x.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        x.parse::<u32>().ok().filter(|&n| n <= MAX_CPU_INDEX)
    };
    let mut out = Vec::new();
    for item in s.split(',') {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return None;
                }
                let len = usize::try_from(b - a).ok()?.checked_add(1)?;
                if out.len().checked_add(len)? > MAX_LIST_CPUS {
                    return None;
                }
                out.extend(a..=b);
            }
            None => {
                if out.len() >= MAX_LIST_CPUS {
                    return None;
                }
                out.push(num(item)?);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Allowed PUs in the order a strategy hands them out (one round), as OS indices.
/// `Unbound` yields an empty order; a list yields itself; an expression that
/// does not fit the topology yields nothing (see [`Strategy::validate`]).
pub fn order(topo: &Topology, strategy: &Strategy) -> Vec<u32> {
    match strategy {
        Strategy::Linear => topo.allowed_os_indices(),
        Strategy::Compact => compact_order(topo),
        Strategy::Scatter => scatter_order(topo),
        Strategy::Unbound => Vec::new(),
        Strategy::List(cpus) => cpus.clone(),
        Strategy::Expr(e) => e.resolve(topo).unwrap_or_default(),
    }
}

/// Allowed PUs in compact order: NUMA node by NUMA node (in order of first
/// appearance in the topology), within a node the most performant CPU kind
/// first, otherwise topology order (every PU of a core, then the next core, ...).
fn compact_order(topo: &Topology) -> Vec<u32> {
    let mut node_rank: HashMap<Option<u32>, usize> = HashMap::new();
    let mut keyed: Vec<((usize, usize, usize), u32)> = topo
        .allowed_pus()
        .enumerate()
        .map(|(i, p)| {
            let next = node_rank.len();
            let node = *node_rank.entry(p.numa_node).or_insert(next);
            ((node, topo.kind_rank(p), i), p.os_index)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, cpu)| cpu).collect()
}

/// Allowed PUs in scatter order: each next PU is the one farthest from those
/// already taken.
///
/// Greedy: among the PUs not yet taken, take the smallest by
/// 1. CPU kind rank (the most performant kind first: P before E);
/// 2. for each spread level in turn — the NUMA node, then the tree levels of
///    [`Topology::levels`] from the outermost (Group, package, die, shared
///    cache, core) — whether that object already holds a taken PU (a new
///    object first);
/// 3. for each spread level in turn, how many taken PUs that object holds;
/// 4. topology order.
///
/// The NUMA node comes first because spreading threads is for using every
/// memory controller; the booleans of step 2 before the counts of step 3 make
/// the first k threads touch min(k, nodes) NUMA nodes and, where the tree
/// allows it, min(k, packages) packages. On a regular tree this is the
/// digit-reversed order with the outermost level varying fastest (seed 000's
/// round robin). More than [`GREEDY_MAX_CPUS`] CPUs, or PUs without a tree
/// path (hand-made topologies): [`tree_order`].
fn scatter_order(topo: &Topology) -> Vec<u32> {
    let pus: Vec<&Pu> = topo.allowed_pus().collect();
    let depth = topo.levels.len();
    if pus.len() > GREEDY_MAX_CPUS || depth == 0 || pus.iter().any(|p| p.path.len() != depth) {
        return tree_order(topo);
    }
    let groups = spread_groups(&pus, depth);
    let ranks: Vec<usize> = pus.iter().map(|p| topo.kind_rank(p)).collect();
    scatter::greedy_order(&groups, &ranks)
        .into_iter()
        .map(|i| pus[i].os_index)
        .collect()
}

/// `groups[l][i]`: a dense id of PU `i`'s object at spread level `l`: level 0 is
/// the NUMA node, levels 1.. are [`Topology::levels`] without the last (`pu`),
/// an object being identified by its path prefix.
fn spread_groups(pus: &[&Pu], depth: usize) -> Vec<Vec<usize>> {
    let mut groups = Vec::with_capacity(depth);
    let mut ids: HashMap<Option<u32>, usize> = HashMap::new();
    groups.push(
        pus.iter()
            .map(|p| {
                let next = ids.len();
                *ids.entry(p.numa_node).or_insert(next)
            })
            .collect(),
    );
    for k in 0..depth.saturating_sub(1) {
        let mut ids: HashMap<&[u32], usize> = HashMap::new();
        groups.push(
            pus.iter()
                .map(|p| {
                    let next = ids.len();
                    *ids.entry(&p.path[..=k]).or_insert(next)
                })
                .collect(),
        );
    }
    groups
}

/// Allowed PUs in digit-reversed tree order (the fallback of [`scatter_order`]).
///
/// A PU's [`Pu::path`] is a number in mixed radix over [`Topology::levels`];
/// this reads it with the outermost digit varying fastest, i.e. it sorts PUs
/// by their path read from the innermost (PU) digit to the outermost.
/// Positions that do not exist (irregular trees) or are disallowed are skipped, so
/// each allowed PU appears exactly once. PUs without a path (hand-made
/// topologies) come after, in topology order.
pub fn tree_order(topo: &Topology) -> Vec<u32> {
    let depth = topo.levels.len();
    let mut pus: Vec<(usize, &Pu)> = topo.allowed_pus().enumerate().collect::<Vec<_>>();
    let key = |p: &Pu| -> Option<Vec<u32>> {
        (p.path.len() == depth && depth > 0).then(|| p.path.iter().rev().copied().collect())
    };
    // Stable: equal keys (none in a well-formed topology) keep topology order.
    pus.sort_by(|(ia, a), (ib, b)| match (key(a), key(b)) {
        (Some(ka), Some(kb)) => ka.cmp(&kb).then(ia.cmp(ib)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => ia.cmp(ib),
    });
    pus.into_iter().map(|(_, p)| p.os_index).collect()
}

/// CPU (OS index) for each of `threads` threads; `None` means unbound.
///
/// A list is validated against the topology first (see [`Strategy::validate`])
/// unless the topology is empty (unknown machine), in which case it is used as is.
/// To place several thread counts with one strategy, make a [`Placer`] once.
pub fn assign(
    topo: &Topology,
    strategy: &Strategy,
    threads: usize,
) -> Result<Vec<Option<u32>>, PlacementError> {
    Placer::new(topo, strategy).assign(threads)
}

/// A strategy's order on one topology, computed once: what [`assign`] computes
/// for every call, kept for a sweep of thread counts (a plan places each strategy
/// at a dozen or more counts, and `scatter`'s order costs n · log n on n CPUs).
#[derive(Debug, Clone)]
pub struct Placer {
    /// The allowed CPUs in the order threads take them, wrapping around; `None`
    /// for `unbound`; the error [`assign`] gives for every thread count.
    order: Result<Option<Vec<u32>>, PlacementError>,
}

impl Placer {
    /// Validate `strategy` on `topo` and compute its order (see [`assign`]).
    pub fn new(topo: &Topology, strategy: &Strategy) -> Self {
        Self {
            order: Self::order_of(topo, strategy),
        }
    }

    fn order_of(topo: &Topology, strategy: &Strategy) -> Result<Option<Vec<u32>>, PlacementError> {
        if *strategy == Strategy::Unbound {
            return Ok(None);
        }
        if !topo.pus.is_empty() {
            strategy.validate(topo)?;
        }
        let order = order(topo, strategy);
        if order.is_empty() {
            return Err(PlacementError::NoCpus {
                strategy: strategy.name(),
                source_name: if topo.source.is_empty() {
                    "unknown".into()
                } else {
                    topo.source.clone()
                },
            });
        }
        Ok(Some(order))
    }

    /// CPU (OS index) for each of `threads` threads; `None` means unbound.
    pub fn assign(&self, threads: usize) -> Result<Vec<Option<u32>>, PlacementError> {
        match &self.order {
            Err(e) => Err(e.clone()),
            Ok(None) => Ok(vec![None; threads]),
            Ok(Some(order)) => Ok(order
                .iter()
                .cycle()
                .take(threads)
                .map(|&c| Some(c))
                .collect()),
        }
    }
}

/// One line: comma-separated OS indices in thread order; unbound threads as `-`.
pub fn format_assignment(cpus: &[Option<u32>]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(cpus.len() * 6);
    for (i, c) in cpus.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match c {
            // Writing to a String cannot fail.
            Some(c) => {
                let _ = write!(out, "{c}");
            }
            None => out.push('-'),
        }
    }
    out
}

/// Placement as given on the command line (`scatter`, `0,2,4-7`).
pub fn arg(s: &Strategy) -> String {
    match s {
        Strategy::List(cpus) => Topology::format_cpu_list(cpus),
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_in_order() {
        assert_eq!(
            Strategy::parse("0,2,4-7"),
            Ok(Strategy::List(vec![0, 2, 4, 5, 6, 7]))
        );
        assert_eq!(Strategy::parse(" 3 , 1 "), Ok(Strategy::List(vec![3, 1])));
        assert_eq!(Strategy::parse("5"), Ok(Strategy::List(vec![5])));
        assert_eq!(Strategy::parse("Scatter"), Ok(Strategy::Scatter));
        for bad in [
            "",
            " ",
            "7-4",
            "1,,2",
            "1-",
            "-1",
            "a",
            "1-2-3",
            "0x3",
            "+1",
            "zigzag",
            "99999999999",
        ] {
            assert!(
                matches!(Strategy::parse(bad), Err(PlacementError::Parse(_))),
                "{bad:?} should not parse"
            );
        }
    }

    #[test]
    fn assignment_formats() {
        assert_eq!(format_assignment(&[Some(0), None, Some(12)]), "0,-,12");
        assert_eq!(format_assignment(&[]), "");
    }
}
