//! Terminal table of the topology (placeholder; replaced by the full table).

use crate::topology::Topology;

/// Table of every OS CPU id → package, NUMA node, core, slot, caches.
pub fn topo_table(t: &Topology) -> String {
    t.summary()
}
