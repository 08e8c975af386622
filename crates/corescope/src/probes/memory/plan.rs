//! The memory probe's plan: the bandwidth sweep's blocks (per thread, or per team on
//! a big machine) and cases over thread counts, kernels and placements, and the
//! working-set sweep's sizes and cases.

use super::kernel::Kernel;
use super::pages::thp_probe;
use crate::kernels::buffer::HUGE_PAGE_BYTES;
use crate::memguard;
use crate::model::Warning;
use crate::placement::arg as placement_arg;
use crate::placement::Strategy;
use crate::probes::{Case, Plan, PlanCtx, ProbeError, Rounds, SweepConfigs};
use serde::Serialize;

/// Smallest useful block per thread for the bandwidth sweep.
pub const MIN_BLOCK_BYTES: u64 = 4 << 20;
/// Smallest working set of the sweep (seed 001 test 2 starts at a few KiB).
pub const WS_MIN_BYTES: u64 = 4 << 10;
/// Largest working set as a multiple of the last-level cache.
pub const WS_LLC_FACTOR: u64 = 4;
/// Working set used when the topology reports no cache at all.
pub const WS_FALLBACK_MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, Clone, Serialize)]
pub enum CaseParams {
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
    /// Working-set latency: a pointer chase over `ws_bytes`, with transparent huge
    /// pages requested (`huge_pages`) or no advice (the page walks' share).
    WsLatency {
        ws_bytes: u64,
        steps: u64,
        huge_pages: bool,
    },
}

/// The memory probe's `ws_latency_pages` parameter: how the chase's blocks were
/// advised (files written before the chase asked for huge pages lack it).
pub const WS_LATENCY_PAGES: &str = "ws-latency/1t: MADV_HUGEPAGE at every size; ws-latency-default-pages/1t: no advice, at the largest size";

/// The chase's series with huge pages requested.
pub const WS_LATENCY_HUGE_SERIES: &str = "ws-latency/1t";

/// The chase's series: [`WS_LATENCY_HUGE_SERIES`] with huge pages requested,
/// `ws-latency-default-pages/1t` with no advice.
pub fn ws_latency_series(huge_pages: bool) -> &'static str {
    if huge_pages {
        WS_LATENCY_HUGE_SERIES
    } else {
        "ws-latency-default-pages/1t"
    }
}

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

/// Default placements of the probe (as compute).
pub const PLACEMENTS: [Strategy; 4] = crate::probes::compute::PLACEMENTS;

/// Each thread count's block per thread, and why.
struct Blocks {
    per_thread: Vec<u64>,
    requested: u64,
    rule: &'static str,
    warning: Option<Warning>,
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

/// The rounds of a working-set point: enough for a 95 % interval, without the
/// runner's untimed warm-up (a read's first repetition and a chase's walk in its
/// setup already bring the block into the caches it fits in).
const WS_ROUNDS: Rounds = Rounds {
    warmup: false,
    ..Rounds::REPEATED
};

/// The working-set sweep's cases and sizes.
struct WsPlan {
    cases: Vec<Case<CaseParams>>,
    sizes: Vec<u64>,
    /// Bytes read per thread per case.
    target: u64,
    /// Chase steps per latency case.
    steps: u64,
    /// The memory guard's word when it shrank the sweep.
    warning: Option<Warning>,
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
    // The chase asks for huge pages at every size, as MLC's idle latency does: past
    // the TLBs' reach a chase over 4 KiB pages mostly times page walks, whose cost
    // moved by 25 % between two runs on a shared host where the huge-page figure
    // repeated within 2 %. Where memory was fitted for two blocks (a thread per
    // CPU), the largest size is also chased with no advice, interleaved with the
    // huge-page chase (each in a block slot of its own): the page walks' share, and
    // `loaded-latency`'s default-pages idle step.
    let largest = sizes.last().copied().filter(|_| cpus >= 2);
    for &ws in &sizes {
        let at = memguard::human(ws);
        let advice: &[bool] = if Some(ws) == largest {
            &[true, false]
        } else {
            &[true]
        };
        for &huge_pages in advice {
            let series = ws_latency_series(huge_pages);
            let case = Case::new(
                format!("{series} {at}"),
                &CaseParams::WsLatency {
                    ws_bytes: ws,
                    steps,
                    huge_pages,
                },
            );
            let case = if advice.len() > 1 {
                let pages = if huge_pages {
                    "MADV_HUGEPAGE"
                } else {
                    "no advice"
                };
                case.compared(
                    format!("pointer chase over {at}, pages"),
                    pages,
                    format!("{series} {at}"),
                )
            } else {
                case
            };
            cases.push(case.with_rounds(WS_ROUNDS));
        }
    }
    Ok(WsPlan {
        cases,
        sizes,
        target,
        steps,
        warning: ws_fit.warning,
    })
}

/// The plan: the bandwidth sweep over thread counts, kernels and placements (the
/// first-touch and huge-page variants where they say something), then the
/// working-set sweep; the parameters the run file records.
pub(super) fn plan(ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
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
        .param("ws_latency_pages", WS_LATENCY_PAGES)
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
        notes.push(Warning::NoHugePages {
            part: "read-thp".into(),
            mode: thp.clone(),
        });
    }
    for n in notes {
        plan = plan.warning(n);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::super::analysis::cache_levels;
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
}
