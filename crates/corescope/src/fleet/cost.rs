//! What a fleet run costs before it starts (`corescope plan --fleet N`): every
//! node measures itself at once, then rank 0 receives, parses and reduces the
//! run files one at a time and judges every figure. Pure: a node's planned run
//! in, the fleet's bytes and seconds out. The constants are the measured ones of
//! docs/fleet.md ("The cost at scale").

use crate::estimate::PlanReport;
use serde::Serialize;

/// Run-file bytes per planned case: a quick run of five probes on 2 CPUs
/// (tests/fixtures/quick.json) is 109 kB, and `plan --quick` gives those five
/// probes 59 cases on that machine.
pub const RUN_FILE_BYTES_PER_CASE: f64 = 1850.0;
/// Fleet figures per planned case: that run has 130 figures for 59 cases.
pub const FIGURES_PER_CASE: f64 = 2.2;
/// Fleet-file bytes per node and figure (its `[value, lo, hi, n]`).
pub const FLEET_FILE_BYTES_PER_FIGURE: f64 = 60.0;
/// JSON parsed per second on one core by rank 0 (serde_json: a few hundred MB/s).
pub const PARSE_BYTES_PER_S: f64 = 200e6;
/// Bytes per second into rank 0 over the cluster's network.
pub const GATHER_BYTES_PER_S: f64 = 10e9;
/// Comparisons per second of the analysis' sorts (two per figure and model).
pub const COMPARES_PER_S: f64 = 1e8;

/// The price of a fleet run of `nodes` nodes of the planned machine.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FleetCost {
    /// Nodes, one rank each.
    pub nodes: usize,
    /// One node's run (all run at once), seconds.
    pub node_run_s: f64,
    /// Figures per node: about [`FIGURES_PER_CASE`] per planned case.
    pub figures: usize,
    /// One node's run file, bytes.
    pub run_file_bytes: f64,
    /// Bytes gathered into rank 0.
    pub gathered_bytes: f64,
    /// The fleet file, bytes.
    pub fleet_file_bytes: f64,
    /// Rank 0's memory beyond one run file: every node's figures, bytes.
    pub rank0_bytes: f64,
    /// Moving the run files into rank 0, seconds.
    pub gather_s: f64,
    /// Parsing them on rank 0, seconds.
    pub parse_s: f64,
    /// The analysis, seconds.
    pub analysis_s: f64,
    /// Everything, seconds (the steps after the runs one after the other).
    pub total_s: f64,
}

/// Price a fleet run of `nodes` nodes, each running `node` (its plan).
pub fn price(node: &PlanReport, nodes: usize) -> FleetCost {
    let cases: usize = node.probes.iter().map(|p| p.cases.len()).sum();
    let f = (cases as f64 * FIGURES_PER_CASE).round();
    let figures = f as usize;
    let n = nodes.max(1) as f64;
    let run_file_bytes = cases as f64 * RUN_FILE_BYTES_PER_CASE;
    let gathered_bytes = n * run_file_bytes;
    let fleet_file_bytes = n * f * FLEET_FILE_BYTES_PER_FIGURE;
    let gather_s = gathered_bytes / GATHER_BYTES_PER_S;
    let parse_s = gathered_bytes / PARSE_BYTES_PER_S;
    let analysis_s = 2.0 * f * n * n.log2().max(1.0) / COMPARES_PER_S;
    FleetCost {
        nodes,
        node_run_s: node.total_s,
        figures,
        run_file_bytes,
        gathered_bytes,
        fleet_file_bytes,
        rank0_bytes: fleet_file_bytes,
        gather_s,
        parse_s,
        analysis_s,
        total_s: node.total_s + gather_s + parse_s + analysis_s,
    }
}

/// The price in words, for `plan`'s table.
pub fn words(c: &FleetCost) -> String {
    use crate::render::plan::duration;
    use crate::units::fmt_value;
    let b = |v: f64| fmt_value("bytes", v);
    format!(
        "\nfleet of {n} nodes (one rank each, all measuring at once; docs/fleet.md):\n  \
         each node's run      {run}\n  \
         gathered to rank 0   {g} ({nf} run files of {rf}; {gs} at 10 GB/s)\n  \
         parsed on rank 0     {ps} (200 MB/s, one file at a time)\n  \
         judged               {as_} ({figs} figures per node)\n  \
         fleet file           {ff} (rank 0 holds it and one run file)\n  \
         total                about {t}\n",
        n = c.nodes,
        run = duration(c.node_run_s),
        g = b(c.gathered_bytes),
        nf = c.nodes,
        rf = b(c.run_file_bytes),
        gs = duration(c.gather_s),
        ps = duration(c.parse_s),
        as_ = duration(c.analysis_s),
        figs = c.figures,
        ff = b(c.fleet_file_bytes),
        t = duration(c.total_s),
    )
}
