//! Measuring one step of `loaded-latency`: the chaser's dependent walk over its
//! buffer while the injectors stream over theirs; the chaser's ns per step and the
//! injectors' summed bandwidth.

use super::plan::CaseParams;
use super::traffic::{inject, Traffic};
use crate::clock::ticks;
use crate::kernels::buffer::{Block, BlockTag, BufferError, Loan, Pages};
use crate::kernels::chase::{build_chase, chase_from};
use crate::probes::{NotRun, ProbeError, RunCtx};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a worker of a step's team holds: the chaser's chain, or an injector's block.
type Held<'c> = Result<Loan<'c>, BufferError>;

/// What a worker returns: the chaser its timed ticks, an injector its lines and
/// its own start and end ticks.
enum Done {
    Chaser(u64),
    Injector { lines: u64, ticks: u64 },
    Failed(BufferError),
}

/// One run of a step: the chaser's ns per step and the injectors' summed bandwidth
/// (`None` at idle).
pub(super) fn measure_step(
    ctx: &mut RunCtx,
    c: &CaseParams,
) -> Result<(f64, Option<f64>), ProbeError> {
    let line = c.line_bytes as usize;
    let stride = line / 8;
    let slots = (c.chase_bytes as usize / line).max(2);
    let node = c.team.node.or(Some(0));
    let chase_tag = BlockTag {
        holds: "pointer chase",
        words: slots * stride,
        pages: if c.huge { Pages::Huge } else { Pages::Default },
        node,
    };
    let inj_words = (c.injector_bytes / 8) as usize;
    let inj_tag = BlockTag {
        holds: "injector lines",
        words: inj_words,
        pages: Pages::Huge,
        node,
    };
    let mut cpus = vec![Some(c.team.chaser)];
    if c.traffic.is_some() {
        cpus.extend(c.team.injectors.iter().map(|&i| Some(i)));
    }
    let stop = AtomicBool::new(false);
    let cache = std::mem::take(&mut ctx.blocks);
    let seed = c.chase_bytes ^ 0x5eed;
    // The default-pages chase keeps its own slot, after the injectors', so the two
    // chase buffers of a group are each made once.
    let chase_slot = if c.huge {
        0
    } else {
        c.team.injectors.len() + 1
    };
    let setup = |t: usize| -> Held<'_> {
        if t == 0 {
            Loan::take_or_make(Some(&cache), chase_slot, chase_tag, || {
                Block::new(slots * stride, chase_tag.pages, 0).map(|mut b| {
                    build_chase(b.as_mut_slice(), stride, slots, seed);
                    b
                })
            })
        } else {
            Loan::take_or_make(Some(&cache), t, inj_tag, || {
                Block::new(inj_words, Pages::Huge, t as u64)
            })
        }
    };
    let kernel = |t: usize, held: &mut Held<'_>| -> Done {
        let loan = match held {
            Ok(l) => l,
            Err(e) => {
                stop.store(true, Ordering::Release);
                return Done::Failed(e.clone());
            }
        };
        if t == 0 {
            let next = loan.block().as_slice();
            let warm = chase_from(next, stride, loan.cursor, c.warm_steps);
            let t0 = ticks();
            loan.cursor = black_box(chase_from(next, stride, warm, c.steps));
            let dt = ticks().wrapping_sub(t0);
            stop.store(true, Ordering::Release);
            Done::Chaser(dt)
        } else {
            let traffic = c.traffic.unwrap_or(Traffic::Read);
            let words = loan.block_mut().as_mut_slice();
            let t0 = ticks();
            let lines = inject(words, stride, traffic, c.delay_iters, &stop);
            Done::Injector {
                lines,
                ticks: ticks().wrapping_sub(t0),
            }
        }
    };
    let out = ctx.team(&cpus, 1, setup, kernel);
    ctx.blocks = cache;
    let out = out?;
    let clock = &ctx.plan.clock;
    let (mut lat, mut bw) = (None, 0.0);
    for r in out.results.iter().filter_map(|r| r.first()) {
        match r {
            Done::Failed(e) => return Err(ProbeError::step("loaded-latency", e.clone())),
            Done::Chaser(dt) => lat = Some(clock.ticks_to_ns(*dt) / c.steps.max(1) as f64),
            Done::Injector { lines, ticks } => {
                let bytes =
                    *lines as f64 * c.traffic.map_or(0, |t| t.bytes_per_line(c.line_bytes)) as f64;
                bw += bytes / (clock.ticks_to_ns(*ticks).max(1.0) * 1e-9);
            }
        }
    }
    let lat = lat.ok_or(NotRun::Chaser)?;
    Ok((lat, c.traffic.map(|_| bw)))
}
