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

use super::{Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx, SweepConfigs};
use crate::analysis;
use crate::kernels::buffer::{Block, BlockTag, Loan, Pages, HUGE_PAGE_BYTES};
use crate::kernels::chase::{build_chase, chase, chase_from};
use crate::kernels::stream::read_sum;
use crate::memguard;
use crate::model::{Finding, Measurement, Point, ProbeResult};
use crate::placement::arg as placement_arg;
use crate::placement::{self, Strategy};
use serde::Serialize;
use std::hint::black_box;
use std::sync::Mutex;

mod arrays;
pub mod cost;
mod kernel;

use arrays::Lease;
pub use kernel::{bytes_moved, Kernel};

/// Passes of the kernel per bandwidth sample; the last is timed. Right after the
/// first touch the last LLC-full of the block sits dirty in the caches: a first pass
/// then reads part of the block from cache (read 1.06–1.08× likwid-bench's steady
/// stream on the Zen 4 guest) and must write those dirty lines back before its
/// streaming stores (write 0.80×). One untimed pass first leaves what a steady
/// stream leaves, as likwid-bench's repeated iterations do.
pub const BANDWIDTH_PASSES: usize = 2;

/// Smallest useful block per thread for the bandwidth sweep.
pub const MIN_BLOCK_BYTES: u64 = 4 << 20;
/// Cache line assumed for the pointer chase when the topology does not say (x86_64,
/// most aarch64).
pub const DEFAULT_LINE_BYTES: usize = 64;
/// Smallest working set of the sweep (seed 001 test 2 starts at a few KiB).
pub const WS_MIN_BYTES: u64 = 4 << 10;
/// Largest working set as a multiple of the last-level cache.
pub const WS_LLC_FACTOR: u64 = 4;
/// Working set used when the topology reports no cache at all.
pub const WS_FALLBACK_MAX_BYTES: u64 = 64 << 20;
/// Latency steps at least this large between neighbouring working sets are named
/// in the findings.
pub const LATENCY_STEP_RATIO: f64 = 1.3;

/// The probe.
pub struct Memory;

#[derive(Debug, Clone, Serialize)]
enum CaseParams {
    /// A bandwidth case of the thread sweep.
    Bandwidth {
        kernel: Kernel,
        placement: String,
        threads: usize,
        block_bytes: u64,
    },
    /// Working-set read bandwidth: each thread reads `ws_bytes` `passes` times.
    WsRead {
        threads: usize,
        label: String,
        ws_bytes: u64,
        passes: u64,
    },
    /// Working-set latency: a pointer chase over `ws_bytes`.
    WsLatency { ws_bytes: u64, steps: u64 },
}

// ---------------------------------------------------------------------------
// Working-set sizes and cache boundaries

/// Largest working set of the ladder (256 TiB, beyond any machine's memory).
pub const MAX_WORKING_SET_BYTES: u64 = 1 << 48;

/// Working sets from 4 KiB to `max`: powers of two, plus the midpoints 1.5·2^k when
/// `fine`.
/// `max` is capped at [`MAX_WORKING_SET_BYTES`] and the doubling is checked,
/// so a size near 2^64 can neither wrap to 0 nor loop.
pub fn working_sets(max: u64, fine: bool) -> Vec<u64> {
    let max = max.min(MAX_WORKING_SET_BYTES);
    let mut v = Vec::new();
    let mut s = WS_MIN_BYTES;
    while s <= max {
        v.push(s);
        if fine && s.saturating_add(s / 2) <= max {
            v.push(s + s / 2);
        }
        match s.checked_mul(2) {
            Some(next) => s = next,
            None => break,
        }
    }
    if v.last().is_some_and(|&l| l < max) {
        v.push(max);
    }
    v
}

/// Findings from a latency curve: for every cache of the topology, latency inside
/// (≤ half its size) vs beyond (≥ twice its size), and every step between
/// neighbouring working sets of at least [`LATENCY_STEP_RATIO`].
pub fn cache_findings(x: &[f64], y: &[f64], caches: &[(u8, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    for &(level, size) in caches {
        let inside = x.iter().zip(y).rfind(|(&b, _)| b <= size as f64 / 2.0);
        let beyond = x.iter().zip(y).find(|(&b, _)| b >= size as f64 * 2.0);
        match (inside, beyond) {
            (Some((&bi, &li)), Some((&bb, &lb))) if li > 0.0 => out.push(format!(
                "L{level} ({}): {:.1} ns per access at {} → {:.1} ns at {} ({:.1}×){}",
                memguard::human(size),
                li,
                memguard::human(bi as u64),
                lb,
                memguard::human(bb as u64),
                lb / li,
                if lb / li >= LATENCY_STEP_RATIO {
                    ": the boundary shows where the topology says"
                } else {
                    ": no clear boundary there"
                }
            )),
            _ => out.push(format!(
                "L{level} ({}): outside the measured working sets",
                memguard::human(size)
            )),
        }
    }
    let steps: Vec<String> = x
        .windows(2)
        .zip(y.windows(2))
        .filter(|(_, l)| l[0] > 0.0 && l[1] / l[0] >= LATENCY_STEP_RATIO)
        .map(|(b, l)| {
            format!(
                "{} → {} (×{:.1})",
                memguard::human(b[0] as u64),
                memguard::human(b[1] as u64),
                l[1] / l[0]
            )
        })
        .collect();
    if steps.is_empty() {
        out.push("latency: no step of 30 % or more between neighbouring working sets".into());
    } else {
        out.push(format!("latency steps: {}", steps.join(", ")));
    }
    out
}

/// Distinct data/unified cache levels of a topology as (level, size of one instance).
pub fn cache_levels(topo: &crate::topology::Topology) -> Vec<(u8, u64)> {
    let mut v: Vec<(u8, u64)> = Vec::new();
    for c in &topo.caches {
        if !v.iter().any(|&(l, _)| l == c.level) {
            v.push((c.level, c.size_bytes));
        }
    }
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------------------
// Huge pages

/// Fraction of a freshly touched 8 MiB block with THP requested that the kernel backs
/// with huge pages, if /proc/self/smaps says.
pub fn thp_probe() -> Option<f64> {
    let b = Block::new((8 << 20) / 8, Pages::Huge, 1).ok()?;
    let huge = huge_bytes_at(b.addr())?;
    Some((huge as f64 / b.allocated_bytes() as f64).min(1.0))
}

/// `AnonHugePages` of the mapping of /proc/self/smaps that contains `addr`, in bytes.
pub fn huge_bytes_at(addr: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a <= addr && addr < b;
                continue;
            }
        }
        if inside {
            if let Some(v) = line.strip_prefix("AnonHugePages:") {
                let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------
// The probe

/// Default placements of the probe (as compute).
pub const PLACEMENTS: [Strategy; 4] = super::compute::PLACEMENTS;

/// Each thread count's block per thread, and why.
struct Blocks {
    per_thread: Vec<u64>,
    requested: u64,
    rule: &'static str,
    warning: Option<String>,
}

/// Bytes per thread of the bandwidth blocks at each thread count.
///
/// Quick, full, and the default profile on a small machine: the profile's block per
/// thread (the seed's 256 MiB at full), at least 2× the LLC so one thread cannot run
/// from cache. The default profile on a big machine ([`PlanCtx::thinned`]) sizes the
/// team instead ([`team_block_bytes`]): 128 MiB per thread × 2,048 threads would read
/// 256 GiB per run. Every count is then fitted into the memory available.
fn bandwidth_blocks(
    ctx: &PlanCtx,
    counts: &[usize],
    avail: &memguard::Available,
) -> Result<Blocks, ProbeError> {
    let llc = ctx.topo.llc_bytes().unwrap_or(0);
    let requested: u64 = ctx.profile.pick(64 << 20, 128 << 20, 256 << 20);
    let granule = HUGE_PAGE_BYTES as u64;
    let (wanted, rule): (Vec<u64>, &'static str) = if ctx.thinned() {
        let llcs = ctx.topo.llc_count().max(1);
        let w = counts
            .iter()
            .map(|&t| team_block_bytes(requested, llc, llcs, t).next_multiple_of(granule))
            .collect();
        (w, TEAM_BLOCK_RULE)
    } else {
        let per = requested.max((2 * llc).next_multiple_of(granule));
        (
            vec![per; counts.len()],
            "the profile's block per thread, at least 2x the LLC",
        )
    };
    let mut per_thread = Vec::with_capacity(counts.len());
    let mut warning = None;
    for (&t, &w) in counts.iter().zip(&wanted) {
        let fit = memguard::fit(
            "memory bandwidth blocks",
            w,
            MIN_BLOCK_BYTES,
            t,
            granule,
            false,
            avail,
        )
        .map_err(|e| ProbeError::Skipped(e.to_string()))?;
        warning = warning.or(fit.warning);
        per_thread.push(fit.per_thread);
    }
    Ok(Blocks {
        per_thread,
        requested,
        rule,
        warning,
    })
}

/// [`team_block_bytes`] in words (the run file's `block_rule`).
pub const TEAM_BLOCK_RULE: &str = "default profile on a big machine: the team reads at least the profile's block (128 MiB) and at least 4x the last-level cache its threads can fill (STREAM's rule), each thread at least 4 MiB";

/// Bytes per thread so that a team of `threads` reads at least `requested` bytes in
/// all and at least 4× the last-level cache it can fill (STREAM's rule: each array at
/// least 4× the caches in use). The machine has `llcs` caches of `llc_bytes`; a team
/// of `threads` can occupy at most min(threads, llcs) of them (scatter gives each
/// thread its own while there are enough). Never below [`MIN_BLOCK_BYTES`].
pub fn team_block_bytes(requested: u64, llc_bytes: u64, llcs: usize, threads: usize) -> u64 {
    let t = threads.max(1) as u64;
    let caches_filled = llcs.max(1).min(threads.max(1)) as u64;
    let team = requested.max(STREAM_CACHE_FACTOR * llc_bytes * caches_filled);
    team.div_ceil(t).max(MIN_BLOCK_BYTES)
}

/// STREAM's sizing rule: each array at least this many times the caches in use.
pub const STREAM_CACHE_FACTOR: u64 = 4;

impl Probe for Memory {
    /// [`cost::run_s`], with the probe's passes and repetitions.
    /// Summary: the four kernels' peaks, read and write per placement, the load latency per cache level.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Scaling {
            families: &["read", "write", "copy", "triad"],
            by_placement: &["read", "write"],
            table2: &[],
            latency_series: Some("ws-latency/1t"),
        }
    }
    fn run_cost_s(&self, c: &crate::probes::cost::Cost) -> Option<f64> {
        cost::run_s(c, BANDWIDTH_PASSES, WS_READ_REPS)
    }

    fn id(&self) -> &'static str {
        "memory"
    }

    fn title(&self) -> &'static str {
        "memory bandwidth vs threads and placement, first touch, huge pages, cache levels"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let cpus = ctx.cpus();
        // Quick: up to the CPU count; default 2×; full 4× as the seed.
        let counts = ctx.thread_counts(ctx.profile.pick(1, 2, 4));
        // A big machine (default profile): compact and scatter only, the two ends (as `peak`).
        let placements =
            ctx.placements_or_thinned(&PLACEMENTS, &[Strategy::Compact, Strategy::Scatter]);
        let avail = ctx.memory_available();
        let blocks = bandwidth_blocks(ctx, &counts, &avail)?;
        let thp = crate::topology::host::thp_mode();
        let thp_ok = thp.as_deref().is_some_and(|m| m != "never");
        // Does the kernel grant huge pages when asked? A small test block says.
        let thp_granted = if thp_ok { thp_probe() } else { None };

        // Throughput kernels at every thread count; the first-touch and THP variants
        // only where every thread has a CPU of its own (a comparison at 4 threads on 2
        // CPUs measures the scheduler, not the pages), and on a big machine only at one
        // thread and the CPU count (`PlanCtx::side_count`).
        let mut variants = vec![Kernel::ReadMainInit];
        if thp_ok {
            variants.extend([Kernel::ReadThp, Kernel::ReadNoThp]);
        }
        // The quick profile measures them only where their findings read them: the
        // largest count with a CPU per thread (`variant_threads`).
        let widest = counts.iter().copied().filter(|&t| t <= cpus).max();
        let side_here = |threads: usize| match ctx.profile {
            crate::model::Profile::Quick => Some(threads) == widest,
            _ => ctx.side_count(threads),
        };
        let mut configs = SweepConfigs::new(&ctx.topo, &placements);
        let mut cases = Vec::new();
        for (&threads, &block) in counts.iter().zip(&blocks.per_thread) {
            let group = format!("memory with {}", crate::units::threads(threads as f64));
            let mut kernels = vec![Kernel::Read, Kernel::Write, Kernel::Copy, Kernel::Triad];
            if threads <= cpus && side_here(threads) {
                kernels.extend(&variants);
            }
            for &kernel in &kernels {
                for (k, p) in placements.iter().enumerate() {
                    let cpu_config = configs.config(k, threads)?;
                    cases.push(
                        Case::new(
                            format!("{} {} ×{threads}", kernel.name(), p.name()),
                            &CaseParams::Bandwidth {
                                kernel,
                                placement: placement_arg(p),
                                threads,
                                block_bytes: block,
                            },
                        )
                        .compared(
                            &group,
                            p.name(),
                            format!("{} {cpu_config}", kernel.name()),
                        ),
                    );
                }
            }
        }

        let ws = working_set_plan(ctx, &avail)?;
        cases.extend(ws.cases);
        let (sizes, target, steps) = (ws.sizes, ws.target, ws.steps);

        let mut plan = Plan::new(cases)
        .scaled_down(ctx.thinned_note(", blocks per team (4x the LLCs it fills), compact and scatter only, first touch and huge pages at one thread and the CPU count"))
        .param("block_bytes_per_thread", blocks.per_thread.first().copied().unwrap_or(0))
        .param("block_bytes_by_thread_count", &blocks.per_thread)
        .param("block_rule", blocks.rule)
        .param("block_bytes_requested", blocks.requested)
        .param("repetitions", "bandwidth: runner rounds, every kernel and placement of one thread count interleaved, each thread's block first touched once per group and kept between its runs (the first-touch and huge-page variants: a new block every run); working sets: runner rounds of one warm repetition each, in both epochs, the chase built once per group and each run continuing the walk where the last stopped")
        .param("thread_counts", &counts)
        .param(
            "placements",
            placements.iter().map(placement_arg).collect::<Vec<_>>(),
        )
        .param(
            "byte_counting",
            "STREAM: read 8 B, write 8 B, copy 16 B, triad 24 B per element; write-allocate traffic not counted; GB/s = 1e9 B/s",
        )
        .param("kernels", "read: AVX2 (else SSE2) vector loads; write: 0x5A words (never zeros) with AVX non-temporal stores (else memset); copy: AVX (else SSE2) with non-temporal stores; triad: SSE2 with non-temporal stores (x86_64)")
        .param("timing", "team: all bytes / (last end - first start), as the seeds; per-thread-sum: the sum over threads of each thread's bytes / its own time (no start skew)")
        .param("thp_arms", "read-thp: MADV_HUGEPAGE; read-nothp: MADV_NOHUGEPAGE; read: no advice; each case records the share of its first thread's block backed by huge pages (<kernel>-huge-share/<placement>, from /proc/self/smaps)")
        .param("main_init_cpu", ctx.topo.allowed_os_indices().first().copied())
        .param("thp_mode", thp.clone().unwrap_or_else(|| "unknown".into()))
        .param("thp_test_block_huge_fraction", thp_granted)
        .param("ws_bytes", &sizes)
        .param("ws_read_bytes_per_case", target)
        .param("ws_latency_steps", steps)
        .param("memory_available_bytes", avail.bytes)
        .param("memory_available_source", &avail.source);
        let mut notes = Vec::new();
        if let Some(w) = blocks.warning {
            notes.push(w);
        }
        if let Some(w) = ws.warning {
            notes.push(w);
        }
        if !thp_ok {
            notes.push(format!(
                "read-thp: skipped: transparent huge pages unavailable (mode: {})",
                thp.as_deref().unwrap_or("not readable")
            ));
        }
        for n in notes {
            plan = plan.warning(n);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        match case.typed()? {
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
            CaseParams::WsLatency { ws_bytes, steps } => run_ws_latency(ctx, ws_bytes, steps),
        }
    }

    fn finish(&self, result: &mut ProbeResult, _plan: &Plan, ctx: &PlanCtx) {
        let cpus = ctx.cpus();
        for what in ["read", "write", "copy", "triad"] {
            let found = [
                analysis::scaling(result, what, "bytes_per_s", cpus),
                analysis::placements(result, what, "bytes_per_s", cpus as f64),
            ];
            result.findings.extend(found.into_iter().flatten());
        }
        result.findings.push(
            "byte counting as STREAM (copy 16 B, triad 24 B per element); write-allocate traffic is not counted",
        );
        let found = [
            team_vs_threads(result, cpus),
            first_touch(result, ctx),
            huge_pages(result),
        ];
        result.findings.extend(found.into_iter().flatten());
        if let Some(s) = result.series("ws-latency/1t") {
            let (x, y) = (s.x.clone(), s.y.clone());
            result
                .findings
                .extend(cache_findings(&x, &y, &cache_levels(&ctx.topo)));
        }
        if let (Some(one), Some(all)) = (result.series("ws-read/1t"), result.series("ws-read/all"))
        {
            if let (Some(&m1), Some(&ma)) = (one.y.last(), all.y.last()) {
                result.findings.push(format!(
                    "largest working set ({}): one thread reads {}, all {cpus} CPUs {} ({:.2}×)",
                    memguard::human(one.x.last().copied().unwrap_or(0.0) as u64),
                    crate::units::fmt_value("bytes_per_s", m1),
                    crate::units::fmt_value("bytes_per_s", ma),
                    ma / m1
                ));
            }
        }
    }
}

/// The placement compared first in a variant comparison: the first measured one
/// that is pinned, else the first.
fn reference_placement(result: &ProbeResult, base: &str, x: f64) -> Option<String> {
    let names: Vec<&str> = result
        .series
        .iter()
        .filter_map(|s| s.name.strip_prefix(base)?.strip_prefix('/'))
        .collect();
    names
        .iter()
        .find(|p| **p != "unbound" && result.estimate(&format!("{base}/{p}"), x).is_some())
        .or_else(|| names.first())
        .map(|p| p.to_string())
}

/// The largest thread count ≤ CPUs at which `variant` was measured.
fn variant_threads(result: &ProbeResult, variant: &str, cpus: usize) -> Option<f64> {
    result
        .series
        .iter()
        .filter(|s| s.name.starts_with(&format!("{variant}/")))
        .flat_map(|s| s.x.iter().copied())
        .filter(|&x| x <= cpus as f64)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

/// Read by the owner vs read of blocks first written by the main thread.
fn first_touch(result: &ProbeResult, ctx: &PlanCtx) -> Option<Finding> {
    let x = variant_threads(result, "read-main-init", ctx.cpus())?;
    let p = reference_placement(result, "read-main-init", x)?;
    let context = if ctx.topo.numa_nodes <= 1 {
        "1 NUMA node: no difference expected".to_string()
    } else {
        format!("{} NUMA nodes", ctx.topo.numa_nodes)
    };
    analysis::compare(
        result,
        &format!("first touch, read with {} ({p})", crate::units::threads(x)),
        "bytes_per_s",
        ("owner's first touch", &format!("read/{p}"), x),
        (
            "main thread's first touch",
            &format!("read-main-init/{p}"),
            x,
        ),
        Some(context),
    )
}

/// Read with huge pages advised vs refused, interleaved.
fn huge_pages(result: &ProbeResult) -> Option<Finding> {
    let x = variant_threads(result, "read-thp", usize::MAX)?;
    let p = reference_placement(result, "read-thp", x)?;
    let granted = match result
        .params
        .get("thp_test_block_huge_fraction")
        .and_then(|v| v.as_f64())
    {
        Some(g) => format!(
            "THP mode {}; the kernel backed {:.0} % of a test block with huge pages",
            result
                .params
                .get("thp_mode")
                .and_then(|v| v.as_str())
                .unwrap_or("unknown"),
            g * 100.0
        ),
        None => "whether the kernel granted huge pages could not be read".into(),
    };
    // What the measured blocks had, where smaps said.
    let share = |k: &str| {
        result
            .estimate(&format!("{k}-huge-share/{p}"), x)
            .map(|e| format!("{:.0} %", e.value * 100.0))
    };
    let granted = match (share("read-thp"), share("read-nothp")) {
        (Some(a), Some(b)) => format!(
            "{granted}; the measured blocks (first thread's, median over rounds): {a} backed by huge pages with MADV_HUGEPAGE, {b} with MADV_NOHUGEPAGE"
        ),
        _ => granted,
    };
    analysis::compare(
        result,
        &format!("huge pages, read with {} ({p})", crate::units::threads(x)),
        "bytes_per_s",
        ("MADV_HUGEPAGE", &format!("read-thp/{p}"), x),
        ("MADV_NOHUGEPAGE", &format!("read-nothp/{p}"), x),
        Some(granted),
    )
}

/// The team figure (first start → last end) vs the sum of the threads' own rates,
/// for read at the CPU count: a gap is start skew or imbalance, not the kernel.
fn team_vs_threads(result: &ProbeResult, cpus: usize) -> Option<Finding> {
    let x = cpus as f64;
    let p = reference_placement(result, "read", x)?;
    analysis::compare(
        result,
        &format!(
            "read with {} ({p}), team timing vs per-thread timing",
            crate::units::threads(cpus as f64)
        ),
        "bytes_per_s",
        ("per-thread sum", &format!("read-per-thread-sum/{p}"), x),
        ("team", &format!("read/{p}"), x),
        Some("a difference is start skew or imbalance between threads".into()),
    )
}

/// NUMA node whose memory a thread on `cpu` first-touches: the only node of a
/// one-node machine whatever the pinning, the CPU's node otherwise, and `None`
/// (never reused) for an unpinned thread on a machine of several nodes.
fn first_touch_node(topo: &crate::topology::Topology, cpu: Option<u32>) -> Option<u32> {
    if topo.numa_nodes <= 1 {
        return Some(0);
    }
    cpu.and_then(|c| topo.pu(c)).and_then(|p| p.numa_node)
}

/// One repetition of a bandwidth case: each thread's block, first touched by its
/// owner (or the main thread) when it is new, an untimed pass, then the timed one
/// ([`BANDWIDTH_PASSES`]). The streaming kernels keep their blocks between the runs
/// of their group (`RunCtx::blocks`); the first-touch and huge-page variants make
/// new ones. Two figures: the team's (all bytes over first start → last end, as the
/// seeds) and the sum of each thread's own rate.
fn run_bandwidth(
    ctx: &mut RunCtx,
    kernel: Kernel,
    placement_s: &str,
    threads: usize,
    block_bytes: u64,
) -> Result<Measurement, ProbeError> {
    let (strategy, cpus) = super::placed(&ctx.plan.topo, placement_s, threads)?;
    let cache = std::mem::take(&mut ctx.blocks);
    if !kernel.keeps_blocks() {
        // The variant's new blocks take the kept ones' memory.
        cache.clear();
    }
    let topo = &ctx.plan.topo;
    let node = |t: usize| first_touch_node(topo, cpus.get(t).copied().flatten());
    // First touch by one initialising thread (the seed's main thread), pinned to
    // the first allowed CPU so the NUMA node its pages land on is chosen and
    // recorded (`main_init_cpu`): allocate and write every block there, then hand
    // each to its owner.
    let mut init_warning = None;
    let premade: Mutex<Vec<Option<Lease>>> = Mutex::new(if kernel == Kernel::ReadMainInit {
        let init_cpu = topo.allowed_os_indices().first().copied();
        let (made, warning) = on_cpu(init_cpu, || {
            (0..threads)
                .map(|t| Some(arrays::lease(None, kernel, block_bytes, t, None)))
                .collect()
        })?;
        init_warning = warning;
        made
    } else {
        Vec::new()
    });
    // The huge-page kernels read how much of the first thread's block the kernel
    // backed with huge pages, after its first touch (one smaps read per case).
    let huge_share: Mutex<Option<f64>> = Mutex::new(None);
    let setup = |t: usize| -> Lease {
        let premade = premade
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(t)
            .and_then(Option::take);
        let lease =
            premade.unwrap_or_else(|| arrays::lease(Some(&cache), kernel, block_bytes, t, node(t)));
        if t == 0 && matches!(kernel, Kernel::ReadThp | Kernel::ReadNoThp) {
            if let Some((addr, bytes)) = lease.addr() {
                let share = huge_bytes_at(addr).map(|h| (h as f64 / bytes.max(1) as f64).min(1.0));
                *huge_share.lock().unwrap_or_else(|p| p.into_inner()) = share;
            }
        }
        lease
    };
    let out = ctx.team(&cpus, BANDWIDTH_PASSES, setup, |_t, lease| {
        lease.pass(kernel, block_bytes)
    });
    drop(premade);
    ctx.blocks = cache;
    let out = out?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(ProbeError::Failed(format!("{}: {err}", kernel.name())));
    }
    let share = *huge_share.lock().unwrap_or_else(|p| p.into_inner());
    let mut m = bandwidth_points(kernel, strategy, threads, block_bytes, &out, share)?;
    m.warnings.extend(init_warning);
    Ok(m)
}

/// The points of one bandwidth repetition, from its last pass (the first only
/// puts the caches in the state a stream leaves).
fn bandwidth_points(
    kernel: Kernel,
    strategy: Strategy,
    threads: usize,
    block_bytes: u64,
    out: &crate::harness::team::TeamOutcome<Result<u64, String>>,
    huge_share: Option<f64>,
) -> Result<Measurement, ProbeError> {
    let rep = out
        .reps
        .last()
        .ok_or_else(|| ProbeError::Failed("no repetition ran".into()))?;
    let per_thread_bytes = bytes_moved(kernel, block_bytes) as f64;
    let team = threads as f64 * per_thread_bytes / (rep.team_ns().max(1) as f64 * 1e-9);
    let sum: f64 = rep
        .per_thread
        .iter()
        .map(|(s, e)| per_thread_bytes / (e.saturating_sub(*s).max(1) as f64 * 1e-9))
        .sum();
    let mut points = vec![Point::new(
        format!("{}/{}", kernel.name(), strategy.name()),
        "threads",
        threads as f64,
        "bytes_per_s",
        team,
    )];
    if let Some(share) = huge_share {
        points.push(Point::new(
            format!("{}-huge-share/{}", kernel.name(), strategy.name()),
            "threads",
            threads as f64,
            "fraction",
            share,
        ));
    }
    if kernel == Kernel::Read {
        points.push(Point::new(
            format!("read-per-thread-sum/{}", strategy.name()),
            "threads",
            threads as f64,
            "bytes_per_s",
            sum,
        ));
    }
    Ok(Measurement::points(points))
}

/// Run `f` on a thread pinned to `cpu` (unpinned when `None`), with a warning when
/// the pin was refused.
fn on_cpu<T: Send>(
    cpu: Option<u32>,
    f: impl FnOnce() -> T + Send,
) -> Result<(T, Option<String>), ProbeError> {
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let refused = cpu.and_then(|c| crate::affinity::pin_checked(c).err());
            (
                f(),
                refused.map(|e| format!("first touch by one thread: {e}")),
            )
        });
        worker
            .join()
            .map_err(|_| ProbeError::Failed("the first-touch thread panicked".into()))
    })
}

/// Bytes per second of `kernel` on `cpus` (one pinned thread each, `block_bytes`
/// per thread) over `passes` timed passes back to back after one untimed pass, as
/// likwid-bench times its iterations: all bytes over the sum of the timed passes'
/// team times. Not part of the probe's plan: the crosscheck's experiment rows use
/// it to tell a single timed pass (the probe's sample) from a sustained stream.
pub fn sustained_bytes_per_s(
    kernel: Kernel,
    cpus: &[u32],
    block_bytes: u64,
    passes: usize,
) -> Result<f64, String> {
    let team: Vec<Option<u32>> = cpus.iter().map(|&c| Some(c)).collect();
    let out = crate::harness::team::run_team(
        &team,
        passes.max(1) + 1,
        None,
        |t| arrays::lease(None, kernel, block_bytes, t, None),
        |_t, lease| lease.pass(kernel, block_bytes),
    )
    .map_err(|e| e.to_string())?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(format!("{}: {err}", kernel.name()));
    }
    let timed: Vec<u64> = out.reps.iter().skip(1).map(|r| r.team_ns()).collect();
    if timed.is_empty() {
        return Err("no timed pass ran".into());
    }
    let bytes = cpus.len() as f64 * bytes_moved(kernel, block_bytes) as f64 * timed.len() as f64;
    Ok(bytes / (timed.iter().sum::<u64>().max(1) as f64 * 1e-9))
}

/// The rounds of a working-set point: enough for a 95 % interval, without the
/// runner's untimed warm-up (a read's first repetition and a chase's walk in its
/// setup already bring the block into the caches it fits in).
const WS_ROUNDS: Rounds = Rounds {
    warmup: false,
    ..Rounds::REPEATED
};

/// Repetitions of a working-set read inside one round: the first brings the block
/// into the caches, the second is the sample (the runner's rounds repeat it, as it
/// does the bandwidth sweep's; a chase is walked once in its setup instead).
pub const WS_READ_REPS: usize = 2;

fn run_ws_read(
    ctx: &mut RunCtx,
    threads: usize,
    label: &str,
    ws_bytes: u64,
    passes: u64,
) -> Result<Measurement, ProbeError> {
    let cpus = placement::assign(&ctx.plan.topo, &Strategy::Scatter, threads)
        .map_err(|e| ProbeError::Failed(e.to_string()))?;
    let words = (ws_bytes / 8) as usize;
    let out = ctx.team(
        &cpus,
        WS_READ_REPS,
        |t| Block::new(words, Pages::Default, t as u64 + 1),
        |_t, block| -> Result<u64, String> {
            let b = block.as_ref().map_err(|e| e.clone())?;
            let mut s = 0u64;
            for _ in 0..passes {
                s = s.wrapping_add(read_sum(black_box(b.as_slice())));
            }
            Ok(black_box(s))
        },
    )?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(ProbeError::Failed(format!("ws-read: {err}")));
    }
    // The last repetition: the first brought the block into the caches it fits in.
    let warm = out
        .reps
        .last()
        .ok_or_else(|| ProbeError::Failed("no repetition ran".into()))?;
    let bytes = threads as f64 * (words * 8) as f64 * passes as f64;
    Ok(Measurement::points(vec![Point::new(
        format!("ws-read/{label}").as_str(),
        "bytes",
        ws_bytes as f64,
        "bytes_per_s",
        bytes / (warm.team_ns().max(1) as f64 * 1e-9),
    )]))
}

fn run_ws_latency(ctx: &mut RunCtx, ws_bytes: u64, steps: u64) -> Result<Measurement, ProbeError> {
    let line = ctx
        .plan
        .topo
        .line_bytes()
        .map(|l| l as usize)
        .unwrap_or(DEFAULT_LINE_BYTES)
        .max(8);
    let stride = line / 8; // words per line: one link per cache line
    let slots = ((ws_bytes as usize) / line).max(2);
    let cpus = placement::assign(&ctx.plan.topo, &Strategy::Linear, 1)
        .map_err(|e| ProbeError::Failed(e.to_string()))?;
    // The chain is built and first walked once per group; each run continues the
    // walk where the last stopped, so the runs of a group cover the whole cycle.
    let tag = BlockTag {
        holds: "pointer chase",
        words: slots * stride,
        pages: Pages::Default,
        node: first_touch_node(&ctx.plan.topo, cpus.first().copied().flatten()),
    };
    let cache = std::mem::take(&mut ctx.blocks);
    let make = || {
        Block::new(slots * stride, Pages::Default, 0).map(|mut b| {
            build_chase(b.as_mut_slice(), stride, slots, ws_bytes ^ 0x5eed);
            // Walk it once so the first repetition is not a cold start.
            black_box(chase(b.as_slice(), stride, slots as u64));
            b
        })
    };
    let out = ctx.team(
        &cpus,
        1,
        |_t| Loan::take_or_make(Some(&cache), 0, tag, make),
        |_t, loan| -> Result<u64, String> {
            let loan = loan.as_mut().map_err(|e| e.clone())?;
            loan.cursor = chase_from(loan.block().as_slice(), stride, loan.cursor, steps);
            Ok(black_box(loan.cursor))
        },
    );
    ctx.blocks = cache;
    let out = out?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(ProbeError::Failed(format!("ws-latency: {err}")));
    }
    let rep = out
        .reps
        .first()
        .ok_or_else(|| ProbeError::Failed("no repetition ran".into()))?;
    Ok(Measurement::points(vec![Point::new(
        "ws-latency/1t",
        "bytes",
        ws_bytes as f64,
        "ns",
        rep.team_ns() as f64 / steps as f64,
    )]))
}

/// The working-set sweep's cases and sizes.
struct WsPlan {
    cases: Vec<Case>,
    sizes: Vec<u64>,
    /// Bytes read per thread per case.
    target: u64,
    /// Chase steps per latency case.
    steps: u64,
    /// The memory guard's word when it shrank the sweep.
    warning: Option<String>,
}

/// Working-set sweep: 4 KiB → 4× LLC, read by one thread and by all, and chased by
/// one; per case about `target` bytes read per thread.
fn working_set_plan(ctx: &PlanCtx, avail: &memguard::Available) -> Result<WsPlan, ProbeError> {
    let cpus = ctx.cpus();
    let llc = ctx.topo.llc_bytes().unwrap_or(0);
    let mut cases = Vec::new();
    let ws_max = if llc > 0 {
        WS_LLC_FACTOR.saturating_mul(llc)
    } else {
        WS_FALLBACK_MAX_BYTES
    };
    let ws_fit = memguard::fit(
        "working-set sweep",
        ws_max,
        WS_MIN_BYTES,
        cpus,
        WS_MIN_BYTES,
        false,
        avail,
    )
    .map_err(|e| ProbeError::Skipped(e.to_string()))?;
    let sizes = working_sets(
        ws_fit.per_thread,
        ctx.profile != crate::model::Profile::Quick,
    );
    // Each point is measured in `WS_ROUNDS` rounds, so it has an interval (and both
    // epochs of the run); per round a quarter (quick) or half of what a point read
    // when it was the best of 3 repetitions once.
    let target: u64 = ctx.profile.pick(8 << 20, 128 << 20, 512 << 20);
    let steps: u64 = ctx.profile.pick(1 << 17, 1 << 21, 1 << 23);
    for (label, threads) in [("1t", 1usize), ("all", cpus)] {
        for &ws in &sizes {
            cases.push(
                Case::new(
                    format!("ws-read/{label} {}", memguard::human(ws)),
                    &CaseParams::WsRead {
                        threads,
                        label: label.into(),
                        ws_bytes: ws,
                        passes: (target / ws).max(1),
                    },
                )
                .with_rounds(WS_ROUNDS),
            );
        }
    }
    for &ws in &sizes {
        cases.push(
            Case::new(
                format!("ws-latency/1t {}", memguard::human(ws)),
                &CaseParams::WsLatency {
                    ws_bytes: ws,
                    steps,
                },
            )
            .with_rounds(WS_ROUNDS),
        );
    }
    Ok(WsPlan {
        cases,
        sizes,
        target,
        steps,
        warning: ws_fit.warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_team_reads_four_times_the_caches_it_fills_and_no_less_than_asked() {
        const MIB: u64 = 1 << 20;
        // One thread, one 32 MiB LLC: 4×32 = 128 MiB, also the request.
        assert_eq!(team_block_bytes(128 * MIB, 32 * MIB, 8, 1), 128 * MIB);
        // Eight threads over eight 32 MiB caches: 4×256 MiB in all, 128 MiB each.
        assert_eq!(team_block_bytes(128 * MIB, 32 * MIB, 8, 8), 128 * MIB);
        // 64 threads can fill only the 8 caches there are: 1 GiB in all, 16 MiB each.
        assert_eq!(team_block_bytes(128 * MIB, 32 * MIB, 8, 64), 16 * MIB);
        // Small caches: the request rules, but never below the minimum per thread.
        assert_eq!(team_block_bytes(128 * MIB, MIB, 1, 2), 64 * MIB);
        assert_eq!(team_block_bytes(128 * MIB, MIB, 1, 2048), MIN_BLOCK_BYTES);
        // Degenerate inputs stay defined.
        assert_eq!(team_block_bytes(0, 0, 0, 0), MIN_BLOCK_BYTES);
        for t in [1usize, 3, 17, 256, 2048] {
            let per = team_block_bytes(128 * MIB, 12 * MIB, 4, t);
            assert!(per * t as u64 >= (128 * MIB).max(4 * 12 * MIB * t.min(4) as u64));
        }
    }

    #[test]
    fn byte_accounting_is_streams() {
        let block = 3 * 2 * 8 * 1000; // divisible by 1, 2 and 3 arrays of words
        assert_eq!(bytes_moved(Kernel::Read, block), block);
        assert_eq!(bytes_moved(Kernel::Write, block), block);
        // copy: two arrays of block/16 elements, 16 B each → block bytes counted.
        assert_eq!(bytes_moved(Kernel::Copy, block), block);
        // triad: three arrays of block/24 elements, 24 B each.
        assert_eq!(bytes_moved(Kernel::Triad, block), block);
        assert_eq!(Kernel::Copy.bytes_per_element(), 16);
        assert_eq!(Kernel::Triad.bytes_per_element(), 24);
    }

    #[test]
    fn working_sets_cover_the_caches_of_real_machines() {
        for f in ["../../../shared/topologies"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(f);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_none_or(|x| x != "xml") {
                    continue;
                }
                let topo = crate::topology::from_xml_file(&p).unwrap();
                let llc = topo.llc_bytes().unwrap_or(WS_FALLBACK_MAX_BYTES / 4);
                let sizes = working_sets(WS_LLC_FACTOR * llc, true);
                assert!(sizes.windows(2).all(|w| w[0] < w[1]));
                for (level, size) in cache_levels(&topo) {
                    assert!(
                        sizes.iter().any(|&s| s <= size / 2 || s == WS_MIN_BYTES)
                            && sizes.iter().any(|&s| s >= 2 * size),
                        "{}: L{level} {size} not bracketed by {sizes:?}",
                        p.display()
                    );
                }
            }
        }
    }

    #[test]
    fn cache_findings_name_boundaries() {
        let x = [16384.0, 32768.0, 65536.0, 131072.0, 1048576.0, 4194304.0];
        let y = [1.0, 1.0, 3.0, 3.2, 3.3, 80.0];
        let f = cache_findings(&x, &y, &[(1, 32768), (2, 524288), (3, 1 << 30)]);
        assert!(f[0].starts_with("L1d") || f[0].starts_with("L1"), "{f:?}");
        assert!(f[0].contains("boundary shows"), "{f:?}");
        assert!(f[1].contains("no clear boundary"), "{f:?}");
        assert!(f[2].contains("outside the measured"), "{f:?}");
        let steps = f.last().unwrap();
        assert!(
            steps.contains("32.00 KiB → 64.00 KiB") && steps.contains("×3.0"),
            "{steps}"
        );
    }
}
