//! `false-sharing`: N threads each increment their own 16-bit counter; after every 25
//! portions of work all meet at a barrier (seed 002 §5). Counters `pad` bytes apart:
//! packed (2 B: all in one cache line) vs padded (128 B), with a timeline of every
//! portion of every thread (the seed's Figures 32–33), and a padding sweep 2 … 256 B
//! (seed 004 loop 1) whose knee is the effective coherence granularity.
//!
//! Repetition is the runner's: a case is one run at one padding, and all paddings are
//! one group, run interleaved in rotated rounds (packed and padded alike see the same
//! drift). Packed vs padded is a paired comparison with its interval; the knee is
//! stated only when the step into it is a significant difference.

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::clock::now_ns;
use crate::kernels::buffer::{Block, BufferError, Pages};
use crate::model::{
    Finding, Lane, Measurement, Outcome, Point, ProbeResult, Sensitivity, Span, Timeline,
};
use crate::placement::{self, Strategy};
use serde::Serialize;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Barrier;

/// Portions between two barriers (seed 002 §5).
pub const PORTIONS_PER_BARRIER: usize = 25;
/// Paddings swept, in bytes (16-bit counters need at least 2).
pub const PADDINGS: [usize; 8] = [2, 4, 8, 16, 32, 64, 128, 256];
/// Packed and padded layouts whose timelines are kept.
pub const PACKED: usize = 2;
/// See [`PACKED`]: 128 B, two lines, because of adjacent-line prefetch on x86.
pub const PADDED: usize = 128;
/// Rounds of the sweep: the compared minimum, a few more while intervals are wide
/// (capped so the default suite keeps its time).
pub const ROUNDS: Rounds = Rounds {
    min: crate::probes::MIN_COMPARED_ROUNDS,
    max: crate::probes::MIN_COMPARED_ROUNDS + 5,
    warmup: true,
    target_rel_half_width: crate::probes::TARGET_REL_HALF_WIDTH,
};

/// The probe.
pub struct FalseSharing;

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    threads: usize,
    pad: usize,
    portions: usize,
    increments: u64,
}

/// Counters `pad` bytes apart in one 4 KiB-aligned buffer.
pub struct Counters {
    block: Block,
    pad: usize,
}

impl Counters {
    /// Room for `n` counters `pad` bytes apart (pad even, ≥ 2).
    pub fn new(n: usize, pad: usize) -> Result<Self, BufferError> {
        let pad = pad.max(2) & !1;
        let words = (n * pad).div_ceil(8) + 1;
        Ok(Self {
            block: Block::new(words, Pages::Default, 0)?,
            pad,
        })
    }
    /// Counter `i`.
    pub fn get(&self, i: usize) -> &AtomicU16 {
        let base = self.block.as_slice().as_ptr() as *const u8;
        // SAFETY: i·pad + 2 ≤ the block's bytes (sized in `new`); pad is even and the
        // block 2 MiB-aligned, so the address is 2-aligned; AtomicU16 has the layout of
        // u16 and the block is only accessed through these atomics while shared.
        unsafe { &*(base.add(i * self.pad) as *const AtomicU16) }
    }
}

/// One thread's work: `portions` × `increments` on its counter, a barrier every 25
/// portions; returns the (start, end) ns of every portion.
pub fn work(c: &AtomicU16, barrier: &Barrier, portions: usize, increments: u64) -> Vec<(u64, u64)> {
    let mut spans = Vec::with_capacity(portions);
    for p in 0..portions {
        let t0 = now_ns();
        for _ in 0..increments {
            // A load and a store, not a locked RMW: the seed's `counter++`.
            c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        }
        spans.push((t0, now_ns()));
        if (p + 1) % PORTIONS_PER_BARRIER == 0 {
            barrier.wait();
        }
    }
    spans
}

/// The model's price of one increment of a contended line (`corescope plan`), in
/// dependent integer ops. Fitted on the reference runs (`final1.json`).
const COST_OPS_PER_INCREMENT: f64 = 3.3;

/// Id of the probe and of its run-file entry.
pub const ID: &str = "false-sharing";

impl Probe for FalseSharing {
    type Params = CaseParams;
    type Facts = ();

    /// Its increments of a contended line (each about
    /// [`COST_OPS_PER_INCREMENT`] dependent integer ops) in waves over the CPUs,
    /// and its team's creation.
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(
            p.portions as f64
                * p.increments as f64
                * COST_OPS_PER_INCREMENT
                * c.op_s()
                * c.waves(p.threads)
                + c.team_spawn_s(p.threads),
        )
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "own 16-bit counters packed in one line vs padded; timelines; padding sweep"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let threads = ctx
            .overrides
            .threads
            .as_ref()
            .and_then(|t| t.iter().copied().max())
            .unwrap_or(ctx.cpus());
        if threads < 2 {
            return Err(ProbeError::Skipped(
                "needs at least 2 threads (one CPU allowed)".into(),
            ));
        }
        // One round's run (the runner repeats it at least 11 times).
        let portions: usize = ctx.profile.pick(25, 50, 250);
        let increments: u64 = ctx.profile.pick(10_000, 20_000, 1_000_000);
        let cases = PADDINGS
            .iter()
            .map(|&pad| {
                let v = format!("pad {pad} B");
                let params = CaseParams {
                    threads,
                    pad,
                    portions,
                    increments,
                };
                Case::new(&v, &params)
                    .compared("false sharing", &v, &v)
                    .with_rounds(super::pool::rounds_for(ctx.profile, ROUNDS))
            })
            .collect();
        Ok(Plan::new(cases)
            .param("threads", threads)
            .param("portions", portions)
            .param("increments_per_portion", increments)
            .param("portions_per_barrier", PORTIONS_PER_BARRIER)
            .param("paddings", PADDINGS)
            .param(
                "repetitions",
                "runner rounds, all paddings interleaved (see rounds_min / rounds_max)",
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let cpus = placement::assign(&ctx.plan.topo, &Strategy::Scatter, c.threads)?;
        let counters = Counters::new(c.threads, c.pad)?;
        let barrier = Barrier::new(c.threads);
        let out = ctx.team(
            &cpus,
            1,
            |_| (),
            |t, _| work(counters.get(t), &barrier, c.portions, c.increments),
        )?;
        let expect = (c.portions as u64 * c.increments) as u16;
        for t in 0..c.threads {
            let v = counters.get(t).load(Ordering::Acquire);
            if v != expect {
                return Err(ProbeError::CounterOff {
                    counter: t,
                    got: v.into(),
                    expected: expect.into(),
                });
            }
        }
        let team_ns = out.best().map(|b| b.team_ns()).unwrap_or(0).max(1) as f64;
        let per_inc = team_ns / (c.portions as f64 * c.increments as f64);
        let mut m = Measurement::points(vec![Point::new(
            "padding/time",
            "padding_bytes",
            c.pad as f64,
            "ns_per_increment",
            per_inc,
        )]);
        if c.pad == PACKED || c.pad == PADDED {
            let spans: Vec<&Vec<(u64, u64)>> =
                out.results.iter().filter_map(|r| r.first()).collect();
            let t0 = spans
                .iter()
                .flat_map(|s| s.iter().map(|x| x.0))
                .min()
                .unwrap_or(0);
            let lanes = spans
                .iter()
                .enumerate()
                .map(|(t, s)| Lane {
                    label: match cpus[t] {
                        Some(cpu) => format!("thread {t} (CPU {cpu})"),
                        None => format!("thread {t}"),
                    },
                    spans: s
                        .iter()
                        .map(|&(a, b)| Span {
                            start_ns: (a - t0) as f64,
                            end_ns: (b - t0) as f64,
                            kind: "work".into(),
                        })
                        .collect(),
                })
                .collect();
            m.timelines.push(Timeline {
                name: format!(
                    "false-sharing/{}",
                    if c.pad == PACKED { "packed" } else { "padded" }
                ),
                lanes,
            });
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let Some(s) = result.series("padding/time").cloned() else {
            return out;
        };
        let Some(&widest) = s.x.iter().reduce(|a, b| if b > a { b } else { a }) else {
            return out;
        };
        // Slowdown against the widest padding, round by round (all paddings ran
        // interleaved, so round i of each is a pair).
        let base = s.samples_at(widest).to_vec();
        for &x in &s.x {
            let at = s.samples_at(x);
            let ratios: Vec<f64> = if at.len() == base.len() {
                at.iter()
                    .zip(&base)
                    .map(|(a, b)| a / b.max(1e-12))
                    .collect()
            } else {
                let m = crate::stats::median(&base).max(1e-12);
                at.iter().map(|a| a / m).collect()
            };
            out.points.push(Point::samples(
                "padding/slowdown",
                "padding_bytes",
                x,
                "x_widest_padding",
                ratios,
            ));
        }
        let line = ctx
            .topo
            .line_bytes()
            .map(|l| format!("{l} B"))
            .unwrap_or_else(|| "unknown".into());
        let (packed, padded) = (PACKED as f64, PADDED as f64);
        let found = analysis::compare(
            result,
            "time per increment, packed vs padded counters",
            "ns",
            (&format!("packed ({PACKED} B)"), "padding/time", packed),
            (&format!("padded ({PADDED} B)"), "padding/time", padded),
            None,
        );
        let packing_costs = matches!(
            &found,
            Some(Finding::Comparison { a, outcome: Outcome::Different, .. }) if a.starts_with("packed")
        );
        out.findings.extend(found);
        out.findings.push(match packing_costs {
            true => granularity(result, &s, widest, &line),
            false => None,
        }
        .unwrap_or_else(|| {
            Finding::from(format!(
                "coherence granularity: could not tell (no significant step in the padding sweep; the topology's line: {line})"
            ))
        }));
        out
    }
}

/// Is `x`'s time per increment significantly above `y`'s (paired by round)?
fn slower(result: &ProbeResult, x: f64, y: f64) -> Option<Finding> {
    let f = analysis::compare(
        result,
        &format!("time per increment, padding {x} B vs {y} B"),
        "ns",
        (&format!("{x} B"), "padding/time", x),
        (&format!("{y} B"), "padding/time", y),
        None,
    )?;
    match &f {
        Finding::Comparison {
            a,
            outcome: Outcome::Different,
            ..
        } if *a == format!("{x} B") => Some(f),
        _ => None,
    }
}

/// The knee of the sweep: the smallest padding not significantly slower than the
/// widest, stated (as the step from the padding below it) only when that step is a
/// significant difference.
fn granularity(
    result: &ProbeResult,
    s: &crate::model::Series,
    widest: f64,
    line: &str,
) -> Option<Finding> {
    let mut xs = s.x.clone();
    xs.sort_by(f64::total_cmp);
    let i = xs
        .iter()
        .position(|&x| slower(result, x, widest).is_none())?;
    let prev = *xs.get(i.checked_sub(1)?)?;
    let step = slower(result, prev, xs[i])?;
    match step {
        Finding::Comparison {
            unit,
            a,
            a_value,
            b,
            b_value,
            ratio,
            significant,
            outcome,
            ..
        } => Some(Finding::Comparison {
            what: format!(
                "coherence granularity {} B: time per increment at the padding below it vs at it",
                xs[i]
            ),
            unit,
            a,
            a_value,
            b,
            b_value,
            ratio,
            significant,
            outcome,
            context: Some(format!(
                "{} B is the smallest padding not slower than the widest ({widest} B); the topology's line: {line}",
                xs[i]
            )),
        }),
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    /// A sweep whose paddings below `knee` cost `factor` × the others, ±1 % per round.
    fn sweep(knee: f64, factor: f64) -> ProbeResult {
        let mut r = ProbeResult::new("false-sharing", "t", Status::Completed);
        for pad in PADDINGS {
            let base = if (pad as f64) < knee { factor } else { 1.0 };
            let v = (0..12)
                .map(|i| base * (1.0 + 0.01 * (((i * 7 + pad) % 5) as f64 - 2.0) / 2.0))
                .collect();
            r.push_point(Point::samples(
                "padding/time",
                "padding_bytes",
                pad as f64,
                "ns_per_increment",
                v,
            ));
        }
        r
    }

    #[test]
    fn the_knee_is_stated_with_its_step_only_when_significant() {
        let r = sweep(64.0, 5.0);
        let s = r.series("padding/time").unwrap().clone();
        let Some(Finding::Comparison {
            what,
            a,
            b,
            outcome,
            ..
        }) = granularity(&r, &s, 256.0, "64 B")
        else {
            panic!("no granularity");
        };
        assert!(what.starts_with("coherence granularity 64 B"), "{what}");
        assert_eq!((a.as_str(), b.as_str()), ("32 B", "64 B"));
        assert_eq!(outcome, Outcome::Different);
        // No step at all: nothing to state.
        let flat = sweep(0.0, 1.0);
        let s = flat.series("padding/time").unwrap().clone();
        assert!(granularity(&flat, &s, 256.0, "64 B").is_none());
    }

    #[test]
    fn counters_add_up_and_do_not_overlap() {
        for pad in PADDINGS {
            let c = Counters::new(4, pad).unwrap();
            let b = Barrier::new(4);
            std::thread::scope(|s| {
                for t in 0..4 {
                    let (c, b) = (&c, &b);
                    s.spawn(move || work(c.get(t), b, 50, 1000));
                }
            });
            for t in 0..4 {
                assert_eq!(
                    c.get(t).load(Ordering::Relaxed),
                    (50 * 1000u64) as u16,
                    "pad {pad}"
                );
            }
        }
    }

    #[test]
    fn the_sweep_covers_the_cache_lines_of_real_machines() {
        assert!(PADDINGS.contains(&64) && PADDINGS.contains(&128));
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.path().extension().is_none_or(|x| x != "xml") {
                continue;
            }
            let t = crate::topology::from_xml_file(&e.path()).unwrap();
            if let Some(l) = t.line_bytes() {
                assert!(
                    PADDINGS.contains(&(l as usize)),
                    "{}: line {l}",
                    e.path().display()
                );
                assert!(*PADDINGS.last().unwrap() >= 2 * l as usize);
            }
        }
    }
}
