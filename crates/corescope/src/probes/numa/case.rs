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
    format!("{}/cpus-node{cpu_node}", kind.name())
}

/// The comparison of a kind and CPU node (its variants are the memory nodes).
pub(super) fn group_name(kind: Kind, cpu_node: u32) -> String {
    format!("{}, CPUs on node {cpu_node}", kind.name())
}
