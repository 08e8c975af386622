//! Measuring the memory probe's cases: a bandwidth repetition (each thread's block
//! first touched by its owner or the main thread, an untimed pass, the timed one),
//! the sustained stream of the crosscheck, and the working-set read and chase.

use super::arrays::{self, Lease};
use super::kernel::{bytes_moved, Kernel};
use super::pages::{huge_bytes_at, huge_share};
use super::plan::ws_latency_series;
use crate::kernels::buffer::{Block, BlockTag, BufferError, Loan, Pages};
use crate::kernels::chase::{build_chase, chase, chase_from};
use crate::kernels::stream::read_sum;
use crate::model::{Measurement, Point, Warning};
use crate::placement::{self, Strategy};
use crate::probes::{NotRun, ProbeError, RunCtx};
use std::hint::black_box;
use std::sync::Mutex;

/// Passes of the kernel per bandwidth sample; the last is timed. Right after the
/// first touch the last LLC-full of the block sits dirty in the caches: a first pass
/// then reads part of the block from cache (read 1.06–1.08× likwid-bench's steady
/// stream on the Zen 4 guest) and must write those dirty lines back before its
/// streaming stores (write 0.80×). One untimed pass first leaves what a steady
/// stream leaves, as likwid-bench's repeated iterations do.
pub const BANDWIDTH_PASSES: usize = 2;

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
pub(super) fn run_bandwidth(
    ctx: &mut RunCtx,
    kernel: Kernel,
    placement_s: &str,
    threads: usize,
    block_bytes: u64,
) -> Result<Measurement, ProbeError> {
    let (strategy, cpus) = crate::probes::placed(&ctx.plan.topo, placement_s, threads)?;
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
        return Err(ProbeError::step(kernel.name(), err.clone()));
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
    out: &crate::harness::team::TeamOutcome<Result<u64, arrays::PassError>>,
    huge_share: Option<f64>,
) -> Result<Measurement, ProbeError> {
    let rep = out.reps.last().ok_or(NotRun::Repetition)?;
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
) -> Result<(T, Option<Warning>), ProbeError> {
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let refused = cpu.and_then(|c| crate::affinity::pin_checked(c).err());
            (
                f(),
                refused.map(|e| Warning::FirstTouch {
                    pin: Box::new(crate::harness::team::pin_warning(e)),
                }),
            )
        });
        worker.join().map_err(|_| NotRun::FirstTouch.into())
    })
}

/// Why a sustained stream was not measured.
#[derive(Debug, thiserror::Error)]
pub enum SustainedError {
    /// The thread team failed.
    #[error(transparent)]
    Team(#[from] crate::harness::team::TeamError),
    /// A thread's pass did not run.
    #[error("{kernel}: {source}")]
    Pass {
        /// The kernel's name.
        kernel: &'static str,
        /// Why.
        #[source]
        source: arrays::PassError,
    },
    /// Only the untimed pass ran.
    #[error("no timed pass ran")]
    NoTimedPass,
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
) -> Result<f64, SustainedError> {
    let team: Vec<Option<u32>> = cpus.iter().map(|&c| Some(c)).collect();
    let out = crate::harness::team::run_team(
        &team,
        passes.max(1) + 1,
        None,
        |t| arrays::lease(None, kernel, block_bytes, t, None),
        |_t, lease| lease.pass(kernel, block_bytes),
    )?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(SustainedError::Pass {
            kernel: kernel.name(),
            source: err.clone(),
        });
    }
    let timed: Vec<u64> = out.reps.iter().skip(1).map(|r| r.team_ns()).collect();
    if timed.is_empty() {
        return Err(SustainedError::NoTimedPass);
    }
    let bytes = cpus.len() as f64 * bytes_moved(kernel, block_bytes) as f64 * timed.len() as f64;
    Ok(bytes / (timed.iter().sum::<u64>().max(1) as f64 * 1e-9))
}

/// Repetitions of a working-set read inside one round: the first brings the block
/// into the caches, the second is the sample (the runner's rounds repeat it, as it
/// does the bandwidth sweep's; a chase is walked once in its setup instead).
pub const WS_READ_REPS: usize = 2;

pub(super) fn run_ws_read(
    ctx: &mut RunCtx,
    threads: usize,
    label: &str,
    ws_bytes: u64,
    passes: u64,
) -> Result<Measurement, ProbeError> {
    let cpus = placement::assign(&ctx.plan.topo, &Strategy::Scatter, threads)?;
    let words = (ws_bytes / 8) as usize;
    let out = ctx.team(
        &cpus,
        WS_READ_REPS,
        |t| Block::new(words, Pages::Default, t as u64 + 1),
        |_t, block| -> Result<u64, BufferError> {
            let b = block.as_ref().map_err(|e| e.clone())?;
            let mut s = 0u64;
            for _ in 0..passes {
                s = s.wrapping_add(read_sum(black_box(b.as_slice())));
            }
            Ok(black_box(s))
        },
    )?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(ProbeError::step("ws-read", err.clone()));
    }
    // The last repetition: the first brought the block into the caches it fits in.
    let warm = out.reps.last().ok_or(NotRun::Repetition)?;
    let bytes = threads as f64 * (words * 8) as f64 * passes as f64;
    Ok(Measurement::points(vec![Point::new(
        format!("ws-read/{label}").as_str(),
        "bytes",
        ws_bytes as f64,
        "bytes_per_s",
        bytes / (warm.team_ns().max(1) as f64 * 1e-9),
    )]))
}

/// Smallest chase block whose huge-page share is read (two huge pages: below it
/// the share says little, and the sweep's small sizes skip the smaps read).
const CHASE_SHARE_MIN_BYTES: u64 = 2 * crate::kernels::buffer::HUGE_PAGE_BYTES as u64;

pub(super) fn run_ws_latency(
    ctx: &mut RunCtx,
    ws_bytes: u64,
    steps: u64,
    huge_pages: bool,
) -> Result<Measurement, ProbeError> {
    let line = ctx.plan.topo.line_bytes_or_default() as usize;
    let stride = line / 8; // words per line: one link per cache line
    let slots = ((ws_bytes as usize) / line).max(2);
    let cpus = placement::assign(&ctx.plan.topo, &Strategy::Linear, 1)?;
    let pages = if huge_pages {
        Pages::Huge
    } else {
        Pages::Default
    };
    // The chain is built and first walked once per group; each run continues the
    // walk where the last stopped, so the runs of a group cover the whole cycle.
    let tag = BlockTag {
        holds: "pointer chase",
        words: slots * stride,
        pages,
        node: first_touch_node(&ctx.plan.topo, cpus.first().copied().flatten()),
    };
    let cache = std::mem::take(&mut ctx.blocks);
    let make = || {
        Block::new(slots * stride, pages, 0).map(|mut b| {
            build_chase(b.as_mut_slice(), stride, slots, ws_bytes ^ 0x5eed);
            // Walk it once so the first repetition is not a cold start.
            black_box(chase(b.as_slice(), stride, slots as u64));
            b
        })
    };
    // Untimed, before each run: how much of the block the kernel backs with huge
    // pages (it may collapse pages between runs), for the blocks where it matters.
    let read_share = huge_pages && ws_bytes >= CHASE_SHARE_MIN_BYTES;
    let out = ctx.team(
        &cpus,
        1,
        |_t| {
            Loan::take_or_make(Some(&cache), usize::from(!huge_pages), tag, make).map(|loan| {
                let b = loan.block();
                let share = read_share.then(|| huge_share(b)).flatten();
                (loan, share)
            })
        },
        |_t, state| -> Result<(u64, Option<f64>), BufferError> {
            let (loan, share) = state.as_mut().map_err(|e| e.clone())?;
            loan.cursor = chase_from(loan.block().as_slice(), stride, loan.cursor, steps);
            Ok((black_box(loan.cursor), *share))
        },
    );
    ctx.blocks = cache;
    let out = out?;
    let first = out.results.iter().flatten().next();
    let share = match first {
        Some(Err(err)) => return Err(ProbeError::step("ws-latency", err.clone())),
        Some(Ok((_, share))) => *share,
        None => None,
    };
    let rep = out.reps.first().ok_or(NotRun::Repetition)?;
    let mut points = vec![Point::new(
        ws_latency_series(huge_pages),
        "bytes",
        ws_bytes as f64,
        "ns",
        rep.team_ns() as f64 / steps as f64,
    )];
    if let Some(share) = share {
        points.push(Point::new(
            "ws-latency-huge-share/1t",
            "bytes",
            ws_bytes as f64,
            "fraction",
            share,
        ));
    }
    Ok(Measurement::points(points))
}
