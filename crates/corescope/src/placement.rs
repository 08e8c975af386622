//! Placement strategies: strategy + thread count + topology → CPU list.
//! Pure: no syscalls, no printing.
//!
//! | strategy  | thread `i` goes to |
//! |-----------|--------------------|
//! | `linear`  | the `i`-th allowed CPU in OS-index order (seed 000's "dumb") |
//! | `compact` | the `i`-th allowed PU in topology order: every PU of a core, then the next core, then the next package |
//! | `scatter` | the `i`-th allowed PU in digit-reversed tree order: one thread per package in turn, then per core, then per level below the core, then per PU (seed 000's "round robin") |
//! | `unbound` | nowhere: the OS decides (seed 000's "auto") |
//! | a list    | the `i`-th CPU of the list (`0,2,4-7`), in the order written |
//!
//! More threads than CPUs wrap around: thread `i` takes the place of thread
//! `i mod n`, where `n` is the number of allowed CPUs (or list entries).

use crate::topology::{Pu, Topology};

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
}

/// Why a placement request is invalid.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlacementError {
    /// Unknown strategy name or bad list syntax.
    #[error("invalid placement '{0}': expected linear, compact, scatter, unbound or a CPU list like 0,2,4-7")]
    Parse(String),
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
        }
    }

    /// Parse `linear`, `compact`, `scatter`, `unbound` or a CPU list.
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
        parse_cpu_list(t)
            .map(Strategy::List)
            .ok_or_else(|| PlacementError::Parse(s.into()))
    }

    /// Check a strategy against a topology: every CPU of a list must exist and
    /// be allowed. Named strategies are always valid (they use allowed CPUs only).
    pub fn validate(&self, topo: &Topology) -> Result<(), PlacementError> {
        let Strategy::List(cpus) = self else {
            return Ok(());
        };
        let allowed = || Topology::format_cpu_list(&topo.allowed_os_indices());
        for &cpu in cpus {
            match topo.pu(cpu) {
                Some(p) if p.allowed => {}
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

fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
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
                out.extend(a..=b);
            }
            None => out.push(num(item)?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Allowed PUs in the order a strategy hands them out (one round), as OS indices.
/// `Unbound` yields an empty order; a list yields itself.
pub fn order(topo: &Topology, strategy: &Strategy) -> Vec<u32> {
    match strategy {
        Strategy::Linear => topo.allowed_os_indices(),
        Strategy::Compact => topo.allowed_pus().map(|p| p.os_index).collect(),
        Strategy::Scatter => scatter_order(topo),
        Strategy::Unbound => Vec::new(),
        Strategy::List(cpus) => cpus.clone(),
    }
}

/// Allowed PUs in scatter order.
///
/// A PU's [`Pu::path`] is a number in mixed radix over [`Topology::levels`];
/// scatter reads it with the outermost digit (the package) varying fastest, i.e.
/// it sorts PUs by their path read from the innermost (PU) digit to the outermost.
/// Positions that do not exist (irregular trees) or are disallowed are skipped, so
/// each allowed PU appears exactly once. PUs without a path (hand-made
/// topologies) come after, in topology order.
fn scatter_order(topo: &Topology) -> Vec<u32> {
    let depth = topo.levels.len();
    let mut pus: Vec<(usize, &Pu)> = topo.allowed_pus().enumerate().collect::<Vec<_>>();
    let key = |p: &Pu| -> Option<Vec<u32>> {
        (p.path.len() == depth && depth > 0).then(|| p.path.iter().rev().copied().collect())
    };
    // Stable: equal keys (none in a well-formed topology) keep topology order.
    pus.sort_by(|(ia, a), (ib, b)| match (key(a), key(b)) {
        (Some(ka), Some(kb)) => ka.cmp(&kb).then(ia.cmp(ib)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => ia.cmp(ib),
    });
    pus.into_iter().map(|(_, p)| p.os_index).collect()
}

/// CPU (OS index) for each of `threads` threads; `None` means unbound.
///
/// A list is validated against the topology first (see [`Strategy::validate`])
/// unless the topology is empty (unknown machine), in which case it is used as is.
pub fn assign(
    topo: &Topology,
    strategy: &Strategy,
    threads: usize,
) -> Result<Vec<Option<u32>>, PlacementError> {
    if *strategy == Strategy::Unbound {
        return Ok(vec![None; threads]);
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
    Ok((0..threads).map(|i| Some(order[i % order.len()])).collect())
}

/// One line: comma-separated OS indices in thread order; unbound threads as `-`.
pub fn format_assignment(cpus: &[Option<u32>]) -> String {
    cpus.iter()
        .map(|c| c.map_or_else(|| "-".to_string(), |c| c.to_string()))
        .collect::<Vec<_>>()
        .join(",")
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
