//! `c2c`: core-to-core latency between pairs of CPUs.
//!
//! - `c2c/cas`: one cache line bounced with compare-and-swap: the first thread moves the
//!   word from 2k to 2k+1, the second from 2k+1 to 2k+2; latency = round trip / 2.
//! - `c2c/rw`: a writer/reader pair on two padded lines (ping and pong); latency =
//!   round trip / 2.
//!
//! The lines live on a page of their own, fresh for every pair and repetition: mapped
//! (`mmap`) and bound (`mbind`) to the first CPU's NUMA node, first written by the
//! first thread after it is pinned (so the kernel zeroes the page on that CPU and the
//! lines start owned by it), checked with `move_pages`, and unmapped afterwards. A
//! line is never recycled across pairs: a recycled line can stay owned by a third
//! core, an artefact users of other core-to-core tools report on Zen.
//! On more than 64 CPUs a representative subset is measured (see `subset`): it holds a
//! pair of every level (same core, same cache, same node, other node, other package).
//!
//! Repetition: each pair runs [`REPS`] times; a cell holds the median of its
//! repetitions, and a second matrix (`c2c/cas/spread`, `c2c/rw/spread`) their spread
//! (largest − smallest). Classes of pairs (same core, other core, ...) are stated only
//! when their ranges (each cell ± its spread) separate; otherwise the report says they
//! do not.

use super::numa::{NodeBuffer, NumaError};
use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::model::{
    Counted, CpuSubset, Estimate, Finding, Matrix, Measurement, ProbeResult, Sensitivity, Warning,
};
use crate::placement::subset;
use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Repetitions per pair; the median is kept, and the spread recorded.
pub const REPS: usize = 3;
/// Bytes each line occupies: crossbeam-utils' `CachePadded` (128 on x86_64, aarch64 and
/// powerpc64, because their prefetchers pull lines in pairs; see its sources), the one
/// padding type of the workspace.
pub const LINE_PAD: usize = std::mem::size_of::<Line>();

/// The probe.
pub struct C2c;

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    a: u32,
    b: u32,
    round_trips: u64,
    /// The waiting side pauses (`spin_loop`) between tries; without, it retries at
    /// once, as other core-to-core tools do (see [`case_without_pause`]).
    pause: bool,
}

/// A case of one pair whose waiting side retries without a pause, as the
/// `core-to-core-latency` crate's threads do: the experiment `corescope crosscheck`
/// runs to show what the pause changes. The probe's own plan always pauses.
pub fn case_without_pause(a: u32, b: u32, round_trips: u64) -> Case<CaseParams> {
    Case::new(
        format!("{a}↔{b} without pause"),
        &CaseParams {
            a,
            b,
            round_trips,
            pause: false,
        },
    )
}

/// One word alone on its padded line.
type Line = CachePadded<AtomicU64>;

#[derive(Default)]
struct Lines {
    cas: Line,
    ping: Line,
    pong: Line,
    abort: AtomicBool,
}

/// The lines of one pair and repetition, on a page of their own.
struct LinePage {
    buf: NodeBuffer,
}

impl LinePage {
    /// Map a fresh page bound to `node` and write every line (the first touch):
    /// call it on the first CPU's thread, after pinning.
    fn new(node: Option<u32>) -> Result<Self, NumaError> {
        let words = std::mem::size_of::<Lines>().div_ceil(8);
        let page = LinePage {
            buf: NodeBuffer::new(words, node, false)?,
        };
        let l = page.lines();
        l.cas.store(0, Ordering::Relaxed);
        l.ping.store(0, Ordering::Relaxed);
        l.pong.store(0, Ordering::Relaxed);
        l.abort.store(false, Ordering::Relaxed);
        Ok(page)
    }

    fn lines(&self) -> &Lines {
        // SAFETY: the mapping is page-aligned (≥ Lines' 128-byte alignment), at least
        // size_of::<Lines>() long, zero-filled by the kernel, and all-zero bytes are a
        // valid Lines (atomics at 0 and false). It lives as long as `self`, and is only
        // accessed through these atomics.
        unsafe { &*self.buf.as_ptr().cast::<Lines>() }
    }
}

/// Spin until `cond`, yielding now and then, with a pause between tries when `pause`;
/// false if `abort` was raised.
#[inline(always)]
fn spin(abort: &AtomicBool, pause: bool, mut cond: impl FnMut() -> bool) -> bool {
    let mut n = 0u32;
    while !cond() {
        n = n.wrapping_add(1);
        if n % 4096 == 0 {
            if abort.load(Ordering::Relaxed) {
                return false;
            }
            if n % (1 << 20) == 0 {
                std::thread::yield_now();
            }
        }
        if pause {
            std::hint::spin_loop();
        }
    }
    true
}

/// One side of both ping-pongs: `me` 0 starts; returns ticks of the CAS phase and of the
/// read/write phase (only side 0's are used).
fn bounce(l: &Lines, me: usize, n: u64, pause: bool) -> Option<(u64, u64)> {
    use crate::clock::ticks;
    let t0 = ticks();
    for k in 0..n {
        let (from, to) = if me == 0 {
            (2 * k, 2 * k + 1)
        } else {
            (2 * k + 1, 2 * k + 2)
        };
        let ok = spin(&l.abort, pause, || {
            l.cas
                .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        });
        if !ok {
            return None;
        }
    }
    let t1 = ticks();
    for k in 1..=n {
        if me == 0 {
            l.ping.store(k, Ordering::Release);
            if !spin(&l.abort, pause, || l.pong.load(Ordering::Acquire) == k) {
                return None;
            }
        } else {
            if !spin(&l.abort, pause, || l.ping.load(Ordering::Acquire) == k) {
                return None;
            }
            l.pong.store(k, Ordering::Release);
        }
    }
    Some((t1 - t0, crate::clock::ticks() - t1))
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "c2c";
/// The matrix of compare-and-swap hand-over latencies between CPUs (ns).
pub const MATRIX_CAS: &str = "c2c/cas";
/// The matrix of write-to-read latencies between CPUs (ns).
pub const MATRIX_RW: &str = "c2c/rw";

impl Probe for C2c {
    type Params = CaseParams;
    type Facts = Vec<u32>;

    /// Its round trips (three cache-line transfers each, at the calibrated round
    /// trip) and the pair's creation, twice over three threads.
    /// Summary: the compare-and-swap hand-over and the write seen by a read, over their pairs.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::PairClasses {
            classes: &[
                crate::model::PairClass {
                    name: MATRIX_CAS,
                    head: "compare-and-swap hand-over",
                    item: "one cache line handed between two CPUs by compare-and-swap",
                },
                crate::model::PairClass {
                    name: MATRIX_RW,
                    head: "a write seen by a read",
                    item: "a write seen by the other CPU's read (ping-pong)",
                },
            ],
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(p.round_trips as f64 * 3.0 * c.cal.round_trip_ns * 1e-9 + c.spawn_s(2.0 * 3.0))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "core-to-core latency matrix: a cache line bounced with CAS, and a writer/reader pair"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<u32>>, ProbeError> {
        let (cpus, note) = subset::cpus(&ctx.topo);
        if cpus.len() < 2 {
            return Err(ProbeError::Skipped("fewer than 2 CPUs allowed".into()));
        }
        let round_trips: u64 = ctx.profile.pick(2_000, 20_000, 100_000);
        let mut cases = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            for &b in &cpus[i + 1..] {
                cases.push(Case::new(
                    format!("{a}↔{b}"),
                    &CaseParams {
                        a,
                        b,
                        round_trips,
                        pause: true,
                    },
                ));
            }
        }
        let mut plan = Plan::new(cases)
        .param("cpus", &cpus)
        .with_facts(cpus.clone())
        .param("round_trips", round_trips)
        .param("repetitions", REPS)
        .param("waiter", "pauses (spin_loop) between tries")
        .param("line_pad_bytes", LINE_PAD)
        .param(
            "line_allocation",
            "a fresh page per pair and repetition: mapped and bound (mbind) to the first CPU's \
             NUMA node, first written by the first CPU's thread after pinning, checked with \
             move_pages, unmapped afterwards; never recycled",
        );
        if let Some(subset) = note {
            plan = plan.warning(Warning::CpuSubset {
                subset: CpuSubset::Chosen(subset),
            });
        }
        Ok(plan)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let clock = ctx.plan.clock.clone();
        let (mut cas_t, mut rw_t) = (Vec::new(), Vec::new());
        for _ in 0..REPS {
            if ctx.expired() && !cas_t.is_empty() {
                ctx.warnings.push(Warning::StoppedAtDeadline {
                    what: format!("{ID} {}↔{}", c.a, c.b),
                    done: cas_t.len() as u64,
                    planned: REPS as u64,
                    unit: Counted::Repetitions,
                });
                break;
            }
            // Fresh lines per repetition, mapped and first written by the first
            // thread once pinned (setup); unmapped when `page` drops.
            let node = ctx.plan.topo.pu(c.a).and_then(|p| p.numa_node);
            let page: OnceLock<Result<LinePage, NumaError>> = OnceLock::new();
            let deadline = ctx.deadline;
            let page_ref = &page;
            let watchdog_done = AtomicBool::new(false);
            let out = std::thread::scope(|s| {
                // Raise `abort` if the pair overruns the deadline (a refused pin can put
                // both on one CPU): nobody spins forever.
                s.spawn(|| {
                    while !watchdog_done.load(Ordering::Acquire) {
                        if std::time::Instant::now() >= deadline {
                            if let Some(Ok(p)) = page_ref.get() {
                                p.lines().abort.store(true, Ordering::Release);
                            }
                        }
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                });
                let r = ctx.team(
                    &[Some(c.a), Some(c.b)],
                    1,
                    |me| {
                        if me == 0 {
                            page_ref.get_or_init(|| LinePage::new(node));
                        }
                    },
                    |me, _| match page_ref.get() {
                        Some(Ok(p)) => bounce(p.lines(), me, c.round_trips, c.pause),
                        _ => None,
                    },
                );
                watchdog_done.store(true, Ordering::Release);
                r
            })?;
            match page.get() {
                Some(Err(e)) => {
                    return Err(ProbeError::step(format!("{}↔{}", c.a, c.b), e.clone()))
                }
                Some(Ok(p)) if node.is_some() => {
                    let b = p.buf.check(1);
                    let cell = format!("line of {}↔{}", c.a, c.b);
                    for w in b.warnings(ID, &cell, node.unwrap_or(0)) {
                        if !ctx.warnings.contains(&w) {
                            ctx.warnings.push(w);
                        }
                    }
                }
                _ => {}
            }
            let Some(Some((cas, rw))) = out.results.first().and_then(|r| r.first()).cloned() else {
                return Err(ProbeError::GaveUp(format!(
                    "{}↔{}: the ping-pong did not finish before the budget ran out \
                     (repetition {} of {REPS})",
                    c.a,
                    c.b,
                    cas_t.len() + 1
                )));
            };
            cas_t.push(cas);
            rw_t.push(rw);
        }
        let per = |t: &u64| clock.ticks_to_ns(*t) / (2 * c.round_trips) as f64;
        let cas_ns: Vec<f64> = cas_t.iter().map(per).collect();
        let rw_ns: Vec<f64> = rw_t.iter().map(per).collect();
        let mut m = Measurement::default();
        // One 1×1 matrix per pair and quantity; `analyze` assembles the full matrices.
        for (name, v) in [(MATRIX_CAS, &cas_ns), (MATRIX_RW, &rw_ns)] {
            let (median, spread) = median_spread(v);
            for (name, value) in [
                (name.to_string(), median),
                (format!("{name}/spread"), spread),
            ] {
                m.matrices.push(Matrix {
                    name,
                    unit: "ns".into(),
                    rows: vec![c.a.to_string()],
                    cols: vec![c.b.to_string()],
                    values: vec![vec![Some(value)]],
                });
            }
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, cpus: &Vec<u32>, ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let mut full = Vec::new();
        for name in [MATRIX_CAS, MATRIX_RW] {
            let spread_name = format!("{name}/spread");
            let (values, cells) = assemble(&result.matrices, name, "ns", cpus);
            let (spreads, _) = assemble(&result.matrices, &spread_name, "ns", cpus);
            let spread_of = |a: u32, b: u32| {
                let i = cpus.iter().position(|&c| c == a)?;
                let j = cpus.iter().position(|&c| c == b)?;
                spreads.values[i][j]
            };
            let mut classes = Vec::new();
            for (lat, ps) in subset::classes(cells.clone(), 0.25) {
                let range = ps
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |r, &(a, b)| {
                        let v = cells.iter().find(|c| c.0 == (a, b)).map_or(lat, |c| c.1);
                        let s = spread_of(a, b).unwrap_or(0.0);
                        (r.0.min(v - s), r.1.max(v + s))
                    });
                classes.push((lat, range, ps));
            }
            out.findings
                .extend(class_findings(name, &classes, &ctx.topo));
            full.push(values);
            full.push(spreads);
        }
        // The per-pair cells become the full matrices.
        out.replace_matrices = Some(full);
        out
    }
}

/// Median and spread (largest − smallest) of a pair's repetitions.
fn median_spread(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (crate::stats::median(v), hi - lo)
}

/// Cells of a pair matrix: ((first CPU, second CPU), value).
pub(crate) type Cells = Vec<((u32, u32), f64)>;

/// The full symmetric matrix `name` over `cpus` from the cases' 1×1 matrices, and
/// its cells (shared with `sharing`).
pub(crate) fn assemble(parts: &[Matrix], name: &str, unit: &str, cpus: &[u32]) -> (Matrix, Cells) {
    let labels: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    let idx = |s: &str| labels.iter().position(|l| l == s);
    let mut values = vec![vec![None; cpus.len()]; cpus.len()];
    let mut cells = Vec::new();
    for m in parts.iter().filter(|m| m.name == name) {
        if let (Some(r), Some(c), Some(Some(v))) = (
            idx(&m.rows[0]),
            idx(&m.cols[0]),
            m.values.first().and_then(|r| r.first()),
        ) {
            values[r][c] = Some(*v);
            values[c][r] = Some(*v);
            cells.push(((cpus[r], cpus[c]), *v));
        }
    }
    let matrix = Matrix {
        name: name.into(),
        unit: unit.into(),
        rows: labels.clone(),
        cols: labels,
        values,
    };
    (matrix, cells)
}

/// A class of CPU pairs: its central latency, its range (every cell ± its spread) and
/// its pairs.
type Class = (f64, (f64, f64), Vec<(u32, u32)>);

/// One finding per class of pairs when the classes' ranges separate (sorted by
/// latency, each range ends below the next one's start); otherwise one saying they
/// do not, so no class is stated from noise.
fn class_findings(name: &str, classes: &[Class], topo: &crate::topology::Topology) -> Vec<Finding> {
    if classes.is_empty() {
        return Vec::new();
    }
    let separate = classes.windows(2).all(|w| w[0].1 .1 < w[1].1 .0);
    if !separate {
        let lo = classes.iter().map(|c| c.1 .0).fold(f64::INFINITY, f64::min);
        let hi = classes
            .iter()
            .map(|c| c.1 .1)
            .fold(f64::NEG_INFINITY, f64::max);
        return vec![Finding::Note {
            text: format!(
                "{name}: no classes of CPU pairs separate beyond the spread of repetitions \
                 (all pairs within {}–{})",
                crate::units::fmt_value("ns", lo.max(0.0)),
                crate::units::fmt_value("ns", hi)
            ),
        }];
    }
    classes
        .iter()
        .map(|(lat, (lo, hi), ps)| {
            let mut rels: Vec<&str> = ps
                .iter()
                .map(|&(a, b)| subset::relation(topo, a, b))
                .collect();
            rels.sort_unstable();
            rels.dedup();
            Finding::Value {
                what: format!("{name}: {} CPU pairs ({})", ps.len(), rels.join(" / ")),
                unit: "ns".into(),
                value: Estimate {
                    value: *lat,
                    lo: lo.max(0.0),
                    hi: *hi,
                    n: ps.len(),
                },
                context: Some(format!(
                    "{}; range: every pair ± its repetitions' spread",
                    subset::pair_list(ps, 6)
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ping_pong_counts_every_round_trip() {
        let l = Lines::default();
        let n = 500;
        let r = std::thread::scope(|s| {
            let h = s.spawn(|| bounce(&l, 1, n, true));
            let a = bounce(&l, 0, n, true);
            (a, h.join().unwrap())
        });
        assert!(r.0.is_some() && r.1.is_some());
        assert_eq!(l.cas.load(Ordering::Relaxed), 2 * n);
        assert_eq!(l.pong.load(Ordering::Relaxed), n);
    }

    #[test]
    fn classes_are_stated_only_when_their_ranges_separate() {
        let topo = crate::topology::from_synthetic("core:2 pu:2").unwrap();
        let apart: Vec<Class> = vec![
            (20.0, (18.0, 22.0), vec![(0, 1)]),
            (60.0, (55.0, 70.0), vec![(0, 2), (1, 3)]),
        ];
        let f = class_findings("c2c/cas", &apart, &topo);
        assert_eq!(f.len(), 2);
        assert!(matches!(&f[1], Finding::Value { value, .. } if value.n == 2));
        let overlapping: Vec<Class> = vec![
            (20.0, (10.0, 40.0), vec![(0, 1)]),
            (60.0, (35.0, 70.0), vec![(0, 2)]),
        ];
        let f = class_findings("c2c/cas", &overlapping, &topo);
        assert!(matches!(&f[..], [Finding::Note { text }] if text.contains("no classes")));
        assert_eq!(median_spread(&[3.0, 1.0, 2.0]), (2.0, 2.0));
    }

    #[test]
    fn every_pair_gets_a_fresh_page_on_the_first_cpus_node() {
        let topo = crate::topology::detect().unwrap();
        let node = topo.allowed_pus().next().and_then(|p| p.numa_node);
        let a = LinePage::new(node).unwrap();
        let b = LinePage::new(node).unwrap();
        // Two live pages never share a line; each starts at zero, written by its maker.
        assert_ne!(a.buf.as_ptr(), b.buf.as_ptr());
        assert_eq!(a.buf.as_ptr() as usize % 4096, 0);
        for l in [a.lines(), b.lines()] {
            assert_eq!(l.cas.load(Ordering::Relaxed), 0);
            assert!(!l.abort.load(Ordering::Relaxed));
        }
        // The page is where it was bound (or the warning says why not).
        let check = a.buf.check(1);
        if let (Some(n), "ok", None) = (node, check.mbind.as_str(), &check.query_error) {
            assert_eq!(check.on_node, 1, "{check:?}");
            assert!(check.warnings("c2c", "line", n).is_empty());
        }
        // The ping-pong runs on it.
        let n = 200;
        let r = std::thread::scope(|s| {
            let h = s.spawn(|| bounce(b.lines(), 1, n, false));
            let x = bounce(b.lines(), 0, n, false);
            (x, h.join().unwrap())
        });
        assert!(r.0.is_some() && r.1.is_some());
        assert_eq!(b.lines().cas.load(Ordering::Relaxed), 2 * n);
    }

    #[test]
    fn an_abandoned_partner_does_not_hang() {
        let l = Lines::default();
        l.abort.store(true, Ordering::Relaxed);
        assert!(bounce(&l, 0, 10, true).is_none());
    }
}
