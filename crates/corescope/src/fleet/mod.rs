//! Fleet mode: many nodes' run files side by side, judged against each other.
//!
//! `stats.rs`: one figure's fleet median, robust spread and each node's place in
//! it (pure). See docs/fleet.md.

pub mod stats;
