//! A `numa` case: what it measures (read bandwidth or latency, CPUs on one node,
//! memory on another), and the names of its series and comparison group.

use serde::{Deserialize, Serialize};

/// What a case measures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum Kind {
    Read,
    Latency,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Latency => "latency",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    pub(super) kind: Kind,
    pub(super) cpu_node: u32,
    pub(super) mem_node: u32,
    pub(super) cpus: Vec<u32>,
    /// Per thread (read) or the chase buffer (latency).
    pub(super) bytes: u64,
    /// Chase steps (latency only).
    pub(super) steps: u64,
}

/// The series of a kind and CPU node.
pub(super) fn series_name(kind: Kind, cpu_node: u32) -> String {
    format!("{}{cpu_node}", series_prefix(kind))
}

/// What every series of a kind starts with, before the CPU node's number.
fn series_prefix(kind: Kind) -> String {
    format!("{}/cpus-node", kind.name())
}

/// The CPU node of a latency series (`latency/cpus-node3` → 3), the inverse of
/// [`series_name`] for [`Kind::Latency`]; `None` for any other series. Readers
/// outside the probe (the measured topology) find the node-to-node latencies with it.
pub fn latency_series_node(name: &str) -> Option<u32> {
    name.strip_prefix(&series_prefix(Kind::Latency))?
        .parse()
        .ok()
}

/// The comparison of a kind and CPU node (its variants are the memory nodes).
pub(super) fn group_name(kind: Kind, cpu_node: u32) -> String {
    format!("{}, CPUs on node {cpu_node}", kind.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_series_gives_back_its_cpu_node_and_no_other_series_does() {
        for node in [0, 3, 17] {
            let name = series_name(Kind::Latency, node);
            assert_eq!(latency_series_node(&name), Some(node), "{name}");
            assert_eq!(latency_series_node(&series_name(Kind::Read, node)), None);
        }
        assert_eq!(latency_series_node("latency/cpus-nodex"), None);
        assert_eq!(latency_series_node("latency/idle"), None);
    }
}
