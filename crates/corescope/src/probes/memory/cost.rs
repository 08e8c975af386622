//! What one run of a memory case costs (`corescope plan`'s model): a bandwidth
//! case streams its blocks over the node's memory controllers, a working-set read
//! runs from cache, a latency chase pays a dependent load per step.

use super::plan::CaseParams;
use crate::probes::cost::{team, Cost};

/// Memory streams one NUMA node sustains before its bandwidth saturates: the
/// aggregate of `threads` streams is min(threads, CPUs, this × nodes) single streams.
/// (A DDR4/DDR5 socket saturates at about 4–8 streaming cores; STREAM results.)
pub const STREAMS_PER_NODE: usize = 6;

/// Streams over a block its first touch costs: the kernel zeroes each page on the
/// fault, then the owner writes it.
const FIRST_TOUCH_STREAMS: f64 = 2.0;

/// Working-set reads run from cache: this fraction of a DRAM stream's time per
/// byte. Fitted on the reference runs (`final1.json`).
const WS_READ_PER_BYTE: f64 = 0.5;

/// A working-set latency step: a dependent load from L1 to DRAM, on average this
/// many dependent integer ops. Fitted on the reference runs.
const WS_LATENCY_PER_STEP: f64 = 25.0;

/// Seconds of one run of memory case `p` whose bandwidth cases time `passes`
/// passes and whose working-set reads repeat `ws_reps` times.
pub fn run_s(c: &Cost, p: &CaseParams, passes: usize, ws_reps: usize) -> f64 {
    match *p {
        CaseParams::Bandwidth {
            threads,
            block_bytes,
            ..
        } => bandwidth_run_s(c, threads, block_bytes, passes),
        CaseParams::WsLatency { steps, .. } => steps as f64 * WS_LATENCY_PER_STEP * c.op_s(),
        CaseParams::WsRead {
            ws_bytes, passes, ..
        } => c.bytes_s(ws_bytes as f64 * passes as f64 * ws_reps as f64) * WS_READ_PER_BYTE,
    }
}

/// Seconds of one run of a bandwidth case: `threads` stream their blocks of
/// `block_bytes` over the memory controllers `passes` times after the first touch.
fn bandwidth_run_s(c: &Cost, threads: usize, block_bytes: u64, passes: usize) -> f64 {
    // Memory controllers: one per NUMA node, or per package where no node is known.
    let nodes = c.topo.numa_nodes.max(c.topo.packages).max(1) as f64;
    let threads = team(threads);
    let streams = threads.min(c.cpus_f()).min(STREAMS_PER_NODE as f64 * nodes);
    // The calibrated cost covers the first touch and one pass; each further pass
    // of the kernel streams the block once more. The first touch streams it twice
    // (the kernel zeroes each page, then its owner fills it).
    let passes = passes as f64;
    let streams_of_block = (FIRST_TOUCH_STREAMS + passes) / (FIRST_TOUCH_STREAMS + 1.0);
    streams_of_block * c.bytes_s(block_bytes as f64 * threads) / streams + c.spawn_s(threads)
}
