//! `memory`: bandwidth vs thread count and placement (seed 000 §5, Figures 5–6), first
//! touch by the owner vs by the main thread (seed 001, MPO), transparent huge pages
//! (seed 001, MPSS), and the working-set sweep that shows each cache level (seed 001
//! test 2).
//!
//! Per thread one block, allocated and fully written in the team's setup, before the
//! start gate, so no page fault is timed. After the gate each thread runs one kernel
//! over its block once; best of 3.
//!
//! Kernels and what they compile to (x86_64 baseline target, rustc 1.95, release,
//! checked with `objdump -d` on `read_sum` / `triad`):
//! - `read`: sum of 64-bit words into 8 independent accumulators; LLVM vectorises it to
//!   `vpaddq` on 256-bit loads where the CPU has AVX2 (chosen at run time), to 128-bit
//!   `paddq` (SSE2) otherwise.
//! - `write`: every word set to 0x5A5A…; on x86_64 with AVX, 256-bit non-temporal
//!   stores (`vmovntdq`, then `sfence`), which skip the read-for-ownership (what the
//!   machine does best for a pure write, as likwid-bench's `store_mem_avx`); elsewhere
//!   `slice::fill` (glibc `memset`, whose stores depend on the glibc version). Never
//!   zeros: some machines write all-zero lines much faster than data (the 2-vCPU EPYC
//!   guest this was checked on: memset of 0 at 60 GB/s, of 0x5A at 23–40 GB/s,
//!   likwid-bench `store_avx` 22–24 GB/s), and STREAM writes data.
//!
//! Every array starts filled with non-zero f64 values (1.0, 2.0, …), so no kernel
//! reads or writes all-zero lines, and triad computes on normal numbers.
//! - `copy` (x86_64): 256-bit AVX loads and `vmovntdq` streaming stores where the CPU
//!   has AVX (as likwid-bench's `copy_mem_avx`), SSE2 loads and `movntdq` otherwise
//!   (`copy_mem_sse`); then `sfence`. `triad`: SSE2 with `movntpd` (as `triad_mem`).
//!   Elsewhere `memcpy` and a plain loop. (glibc's `memcpy` measured about 35 % below
//!   the streaming copy on the 2-vCPU EPYC this was written on, at 32 MiB per array.)
//!
//! Byte counting is STREAM's: read 8 B and write 8 B per word, copy 16 B and triad
//! 24 B per element; write-allocate traffic is not counted. GB/s = 10^9 B/s.

mod analysis;
mod arrays;
pub mod cost;
mod kernel;
mod measure;
mod pages;
mod plan;

pub use analysis::{cache_findings, cache_levels, LATENCY_STEP_RATIO};
pub use kernel::{bytes_moved, Kernel};
pub use measure::{sustained_bytes_per_s, SustainedError, BANDWIDTH_PASSES, WS_READ_REPS};
pub use pages::{huge_bytes_at, thp_probe};
pub use plan::{
    team_block_bytes, working_sets, ws_latency_series, MAX_WORKING_SET_BYTES, MIN_BLOCK_BYTES,
    PLACEMENTS, STREAM_CACHE_FACTOR, TEAM_BLOCK_RULE, WS_FALLBACK_MAX_BYTES,
    WS_LATENCY_HUGE_SERIES, WS_LATENCY_PAGES, WS_LLC_FACTOR, WS_MIN_BYTES,
};

use crate::model::{Measurement, ProbeResult, Sensitivity};
use crate::probes::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use measure::{run_bandwidth, run_ws_latency, run_ws_read};
use plan::CaseParams;

/// The probe.
pub struct Memory;

/// Id of the probe and of its run-file entry.
pub const ID: &str = "memory";

impl Probe for Memory {
    type Params = CaseParams;
    type Facts = ();

    /// [`cost::run_s`], with the probe's passes and repetitions.
    /// Summary: the four kernels' peaks, read and write per placement, the load latency per cache level.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Scaling {
            families: &["read", "write", "copy", "triad"],
            by_placement: &["read", "write"],
            table2: &[],
            latency_series: Some(plan::ws_latency_series(true)),
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(cost::run_s(c, p, BANDWIDTH_PASSES, WS_READ_REPS))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "memory bandwidth vs threads and placement, first touch, huge pages, cache levels"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[
            Sensitivity::CoreThroughput,
            Sensitivity::PageSize,
            Sensitivity::PagePlacement,
        ]
    }
    /// STREAM's kernels on one chart.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::StreamChart]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        plan::plan(ctx)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        match case.params.clone() {
            CaseParams::Bandwidth {
                kernel,
                placement,
                threads,
                block_bytes,
            } => run_bandwidth(ctx, kernel, &placement, threads, block_bytes),
            CaseParams::WsRead {
                threads,
                label,
                ws_bytes,
                passes,
            } => run_ws_read(ctx, threads, &label, ws_bytes, passes),
            CaseParams::WsLatency {
                ws_bytes,
                steps,
                huge_pages,
            } => run_ws_latency(ctx, ws_bytes, steps, huge_pages),
        }
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        Analysis::findings(analysis::findings(result, ctx))
    }
}
