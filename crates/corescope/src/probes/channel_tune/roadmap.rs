//! Seed 004 Figure 1: the roadmap of Stage One, one codebase per step ([`Road`];
//! docs/channel.md describes each), the producer and consumer code invariant
//! (only the layout of their data and the synchronisation change), every step run
//! in rotated rounds ([`round_order`]), a row the median with its 95 % interval.
//!
//! Data words are `AtomicU64` with relaxed loads and stores (plain moves on x86
//! and ARM): `p5` races on purpose, and Rust allows that only on atomics; every
//! step uses the same words so the code stays invariant. Paddings are therefore
//! whole words: 1, 2 and 4 bytes act as 8.

use super::*;
use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::sync::Condvar;

/// Rounds of the roadmap: at least 6 (fewer cannot give a 95 % interval of the
/// median), at most 12.
pub const ROADMAP_ROUNDS: (usize, usize) = (6, 12);
/// The padding the roadmap's `p3`, `p6` and `p5`'s indices use (the hand-tuned
/// value; loop 1 then searches [`PADDINGS`] on `p3` automatically): two 64-byte
/// lines, so that the adjacent-line prefetcher cannot pair them either.
pub const HAND_PAD_BYTES: usize = 128;
/// Bytes of each buffer (seed 004 Stage One: "a 1K buffer").
pub const ROAD_BUFFER_BYTES: usize = 1024;
/// Buffers `p5` to `p8` share (the seed's triple buffering).
pub const SHARED_BUFFERS: usize = 3;
/// Words the arena's start is aligned to (128 bytes).
const ALIGN_WORDS: usize = 16;
/// Title of the roadmap's step (and of its table).
pub const ROADMAP_TITLE: &str = "stage one: roadmap (seed 004 Figure 1)";

/// One step of the roadmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Road {
    ProducerAlone,
    ConsumerAlone,
    P0,
    P1,
    Smt,
    P2,
    P3,
    P5,
    P6,
    P7,
    P8,
}

impl Road {
    /// Every step, in the seed's order.
    pub const ALL: [Road; 11] = [
        Road::ProducerAlone,
        Road::ConsumerAlone,
        Road::P0,
        Road::P1,
        Road::Smt,
        Road::P2,
        Road::P3,
        Road::P5,
        Road::P6,
        Road::P7,
        Road::P8,
    ];

    /// The row's label: the seed's name, then what the step does.
    pub fn label(self) -> &'static str {
        match self {
            Road::ProducerAlone => "baseline producer: alone",
            Road::ConsumerAlone => "baseline consumer: alone",
            Road::P0 => "p0_add_parallel: both at once, sharing nothing",
            Road::P1 => "p1_singlealloc: both buffers in one allocation",
            Road::Smt => "SMT baseline: p1 on two hardware threads of one core",
            Road::P2 => "p2_ADD_shareddatastructure: indices and buffers adjacent",
            Road::P3 => "p3_rmfalsesharing: indices and buffers padded",
            Road::P5 => "p5_ADD_sharedbuffer: 3 shared buffers end to end, no sync",
            Road::P6 => "p6_rmfalsesharing: shared buffers padded",
            Road::P7 => "p7_ADD_sync: mutex + condvar per buffer, side by side",
            Road::P8 => "p8_rmfalsesharing: each mutex + condvar on its own 128 B",
        }
    }
}

/// Where a step's words are, in words from a 128-byte boundary of one arena:
/// each thread's index and its buffer(s). `None` for `p0` and the baselines
/// (each thread its own allocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Words of the arena.
    pub words: usize,
    pub producer_index: usize,
    pub consumer_index: usize,
    /// Start of each buffer; the threads' own buffers (`p1`–`p3`: producer's
    /// first) or the shared ones (`p5`–`p8`).
    pub buffers: Vec<usize>,
}

/// Words of one buffer: the events that fit in [`ROAD_BUFFER_BYTES`].
pub fn buffer_words(event_words: usize) -> usize {
    (ROAD_BUFFER_BYTES / (8 * event_words)).max(1) * event_words
}

/// The layout of `road` for events of `event_words` words and `pad_bytes` of
/// padding (rounded up to whole words); `None` where each thread has its own
/// allocation.
pub fn layout(road: Road, event_words: usize, pad_bytes: usize) -> Option<Layout> {
    let bw = buffer_words(event_words);
    let pw = pad_bytes.div_ceil(8);
    let (producer_index, consumer_index, buffers) = match road {
        Road::ProducerAlone | Road::ConsumerAlone | Road::P0 => return None,
        // The indices live in each thread's own allocation (outside the arena).
        Road::P1 | Road::Smt => (usize::MAX, usize::MAX, vec![0, bw]),
        Road::P2 => (1, 0, vec![2 + bw, 2]),
        Road::P3 => {
            let p = 1 + pw;
            let c_buf = p + 1 + pw;
            (p, 0, vec![c_buf + bw + pw, c_buf])
        }
        Road::P5 => {
            let base = 2 + 2 * pw;
            (
                1 + pw,
                0,
                (0..SHARED_BUFFERS).map(|k| base + k * bw).collect(),
            )
        }
        Road::P6 | Road::P7 | Road::P8 => {
            let base = 2 + 2 * pw;
            let stride = bw + pw;
            (
                1 + pw,
                0,
                (0..SHARED_BUFFERS).map(|k| base + k * stride).collect(),
            )
        }
    };
    let end = buffers.iter().map(|b| b + bw).max().unwrap_or(0);
    Some(Layout {
        words: end.max(2),
        producer_index,
        consumer_index,
        buffers,
    })
}

/// `n` words of zeros starting on a 128-byte boundary: the vector and the
/// offset of that boundary in it.
fn arena(n: usize) -> (Vec<AtomicU64>, usize) {
    let v: Vec<AtomicU64> = (0..n + ALIGN_WORDS).map(|_| AtomicU64::new(0)).collect();
    let addr = v.as_ptr() as usize;
    let off = (addr.next_multiple_of(8 * ALIGN_WORDS) - addr) / 8;
    (v, off)
}

/// What one thread of a run touches: its index word, the buffers it cycles
/// through (each `buffer` words), the event size, and when it must stop.
struct Side<'a> {
    index: &'a AtomicU64,
    buffers: Vec<&'a [AtomicU64]>,
    event_words: usize,
    cut: Instant,
}

impl<'a> Side<'a> {
    fn new(index: &'a AtomicU64, buffers: Vec<&'a [AtomicU64]>, ew: usize, cut: Instant) -> Self {
        Self {
            index,
            buffers,
            event_words: ew,
            cut,
        }
    }
}

/// The producer's loop: `m` events written into its buffers in turn, the index
/// stored after each; stops at the cut. Returns (events, seconds).
fn produce(side: &Side<'_>, m: u64) -> (u64, f64) {
    let t = Instant::now();
    let ew = side.event_words;
    let (mut b, mut i) = (0usize, 0usize);
    let mut k = 0u64;
    while k < m {
        if k & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= side.cut {
            break;
        }
        let buf = side.buffers[b];
        for w in &buf[i..i + ew] {
            w.store(k, Ordering::Relaxed);
        }
        i += ew;
        if i == buf.len() {
            i = 0;
            b = (b + 1) % side.buffers.len();
        }
        side.index.store(i as u64, Ordering::Relaxed);
        k += 1;
    }
    (k, t.elapsed().as_secs_f64())
}

/// The consumer's loop: `m` events read from its buffers in turn and folded into
/// a checksum, the index stored after each; stops at the cut.
fn consume(side: &Side<'_>, m: u64) -> (u64, f64) {
    let t = Instant::now();
    let ew = side.event_words;
    let (mut b, mut i) = (0usize, 0usize);
    let (mut k, mut sum) = (0u64, 0u64);
    while k < m {
        if k & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= side.cut {
            break;
        }
        let buf = side.buffers[b];
        sum = sum
            .wrapping_mul(31)
            .wrapping_add(buf[i].load(Ordering::Relaxed));
        i += ew;
        if i == buf.len() {
            i = 0;
            b = (b + 1) % side.buffers.len();
        }
        side.index.store(i as u64, Ordering::Relaxed);
        k += 1;
    }
    black_box(sum);
    (k, t.elapsed().as_secs_f64())
}

/// Seconds per event of the slower side (the later end, per event moved).
fn slower(a: (u64, f64), b: (u64, f64)) -> f64 {
    (a.1 / a.0.max(1) as f64).max(b.1 / b.0.max(1) as f64)
}

/// Seconds per event of `f` run alone on `cpu` of `pair`.
fn alone_on(pair: Pair<'_>, cpu: Option<u32>, f: impl FnOnce() -> (u64, f64) + Send) -> f64 {
    pair.alone(cpu, f)
        .map_or(f64::NAN, |r| r.1 / r.0.max(1) as f64)
}

/// The two sides at once from a start gate on `pair`; seconds per event of
/// the slower.
fn together(pair: Pair<'_>, producer: &Side<'_>, consumer: &Side<'_>, m: u64) -> f64 {
    let names = ["the producer", "the consumer"];
    pair.both(
        false,
        names,
        || produce(producer, m),
        || consume(consumer, m),
    )
    .map_or(f64::NAN, |(a, b)| slower(a, b))
}

/// One run of the roadmap's steps: the events, the event size, the padding,
/// the pair and the SMT pair (when the machine has one).
#[derive(Clone, Copy)]
pub(super) struct Roadmap<'a> {
    pub m: u64,
    pub event_words: usize,
    pub pad_bytes: usize,
    pub pair: Pair<'a>,
    pub smt: Option<Pair<'a>>,
    /// How long one run may take before it is cut.
    pub run_limit_s: f64,
}

impl Roadmap<'_> {
    /// Seconds per event of one run of `road` (NaN for the SMT baseline without
    /// an SMT pair).
    pub(super) fn run(&self, road: Road) -> Result<f64, TuneError> {
        let cut = Instant::now() + std::time::Duration::from_secs_f64(self.run_limit_s);
        let ew = self.event_words;
        let own = || arena(ALIGN_WORDS + buffer_words(ew));
        let side = |a: &(Vec<AtomicU64>, usize)| -> (usize, usize) { (a.1, a.1 + ALIGN_WORDS) };
        match road {
            Road::ProducerAlone | Road::ConsumerAlone | Road::P0 => {
                let (pa, ca) = (own(), own());
                let (pi, pb) = side(&pa);
                let (ci, cb) = side(&ca);
                let bw = buffer_words(ew);
                let producer = Side::new(&pa.0[pi], vec![&pa.0[pb..pb + bw]], ew, cut);
                let consumer = Side::new(&ca.0[ci], vec![&ca.0[cb..cb + bw]], ew, cut);
                Ok(match road {
                    Road::ProducerAlone => {
                        alone_on(self.pair, self.pair.cpus.0, || produce(&producer, self.m))
                    }
                    Road::ConsumerAlone => {
                        alone_on(self.pair, self.pair.cpus.1, || consume(&consumer, self.m))
                    }
                    _ => together(self.pair, &producer, &consumer, self.m),
                })
            }
            Road::P7 | Road::P8 => synced(self, road == Road::P8, cut),
            _ => self.in_one_arena(road, cut),
        }
    }

    /// `p1`–`p6` (and the SMT baseline): both sides in one arena laid out by
    /// [`layout`].
    fn in_one_arena(&self, road: Road, cut: Instant) -> Result<f64, TuneError> {
        let pair = match (road, self.smt) {
            (Road::Smt, Some(p)) => p,
            (Road::Smt, None) => return Ok(f64::NAN),
            _ => self.pair,
        };
        let ew = self.event_words;
        let l = layout(road, ew, self.pad_bytes).ok_or(TuneError::NoLayout("this step"))?;
        let bw = buffer_words(ew);
        let (a, off) = arena(l.words);
        let (own_p, own_c) = (arena(1), arena(1));
        let word = |w: usize| &a[off + w];
        let buf = |b: usize| &a[off + b..off + b + bw];
        let (pi, ci) = if l.producer_index == usize::MAX {
            (&own_p.0[own_p.1], &own_c.0[own_c.1])
        } else {
            (word(l.producer_index), word(l.consumer_index))
        };
        let (pb, cb): (Vec<_>, Vec<_>) = if l.buffers.len() == 2 {
            (vec![buf(l.buffers[0])], vec![buf(l.buffers[1])])
        } else {
            let all: Vec<_> = l.buffers.iter().map(|&b| buf(b)).collect();
            (all.clone(), all)
        };
        let (producer, consumer) = (Side::new(pi, pb, ew, cut), Side::new(ci, cb, ew, cut));
        Ok(together(pair, &producer, &consumer, self.m))
    }
}

/// The hand-off state of one shared buffer.
#[derive(Default)]
struct SlotState {
    full: bool,
    /// Events in the buffer.
    count: usize,
    /// The producer's last buffer.
    last: bool,
}

/// A shared buffer's mutex and condition variable (the seed's POSIX pair).
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

/// A [`Slot`] on its own 128 bytes (`p8`).
#[derive(Default)]
#[repr(align(128))]
struct PaddedSlot(Slot);

/// Waits under `slot`'s mutex until it is `full` (the consumer) or empty (the
/// producer), lets `f` drain or fill it, hands it to the other side and wakes
/// it; whether that was the producer's last buffer. A panicking holder leaves
/// a valid state (two flags and a count), so a poisoned lock is taken as is.
fn hand_over(slot: &Slot, full: bool, f: impl FnOnce(&mut SlotState)) -> bool {
    let mut st = slot.state.lock().unwrap_or_else(|e| e.into_inner());
    while st.full != full {
        st = slot.ready.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    f(&mut st);
    st.full = !full;
    let last = st.last;
    drop(st);
    slot.ready.notify_one();
    last
}

/// `p7` (slots side by side) or `p8` (padded): the buffers handed over one at a
/// time under their mutex, the consumer checking every event's sequence number.
fn synced(r: &Roadmap<'_>, padded: bool, cut: Instant) -> Result<f64, TuneError> {
    let ew = r.event_words;
    let bw = buffer_words(ew);
    let l = layout(Road::P7, ew, r.pad_bytes).ok_or(TuneError::NoLayout("p7"))?;
    let (a, off) = arena(l.words);
    let bufs: Vec<&[AtomicU64]> = l
        .buffers
        .iter()
        .map(|&b| &a[off + b..off + b + bw])
        .collect();
    let (n_plain, n_wide) = if padded {
        (0, SHARED_BUFFERS)
    } else {
        (SHARED_BUFFERS, 0)
    };
    let plain: Vec<Slot> = (0..n_plain).map(|_| Slot::default()).collect();
    let wide: Vec<PaddedSlot> = (0..n_wide).map(|_| PaddedSlot::default()).collect();
    let slots: Vec<&Slot> = plain.iter().chain(wide.iter().map(|p| &p.0)).collect();
    let (pi, ci) = (&a[off + l.producer_index], &a[off + l.consumer_index]);
    let m = r.m;
    let producer = || {
        let t = Instant::now();
        let (mut k, mut b) = (0u64, 0usize);
        loop {
            let last = hand_over(slots[b], false, |st| {
                let left = (m - k).min((bw / ew) as u64);
                let done = fill(&Side::new(pi, vec![bufs[b]], ew, cut), k, left);
                k += done;
                st.count = done as usize;
                st.last = k >= m || done < left || Instant::now() >= cut;
            });
            if last {
                return (k, t.elapsed().as_secs_f64());
            }
            b = (b + 1) % SHARED_BUFFERS;
        }
    };
    let consumer = || {
        let t = Instant::now();
        let (mut k, mut bad, mut b) = (0u64, 0u64, 0usize);
        loop {
            let last = hand_over(slots[b], true, |st| {
                for e in 0..st.count {
                    bad += u64::from(bufs[b][e * ew].load(Ordering::Relaxed) != k);
                    k += 1;
                    ci.store(e as u64, Ordering::Relaxed);
                }
            });
            if last {
                return (k, bad, t.elapsed().as_secs_f64());
            }
            b = (b + 1) % SHARED_BUFFERS;
        }
    };
    let names = ["p7/p8: the producer", "p7/p8: the consumer"];
    let (sent, (got, bad, secs)) = r.pair.both(false, names, producer, consumer)?;
    if got != sent.0 || bad != 0 {
        return Err(TuneError::Lost {
            run: "p7/p8".into(),
            got,
            sent: sent.0,
            bad,
        });
    }
    Ok(slower(sent, (got, secs)))
}

/// The producer's loop over one buffer: `n` events numbered from `first`;
/// fewer when the cut comes.
fn fill(side: &Side<'_>, first: u64, n: u64) -> u64 {
    let buf = side.buffers[0];
    let ew = side.event_words;
    let mut i = 0;
    for k in 0..n {
        if (first + k) & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= side.cut {
            return k;
        }
        for w in &buf[i..i + ew] {
            w.store(first + k, Ordering::Relaxed);
        }
        i += ew;
        side.index.store(i as u64, Ordering::Relaxed);
    }
    n
}

/// Why the SMT baseline is skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoSmt {
    /// No two hardware threads of one core may be used: the pairs' reason.
    #[error("skipped: no SMT ({0})")]
    NoSibling(#[source] pairs::NoPair),
}

/// The pair of SMT siblings the SMT baseline runs on, or why there is none.
pub fn smt_pair(topo: &Topology) -> Result<PairCpus, NoSmt> {
    pairs::pairs(topo)
        .into_iter()
        .find(|(r, _)| *r == Relation::SmtSibling)
        .map(|(_, p)| p)
        .unwrap_or(Err(pairs::NoPair::NoSmtSibling))
        .map_err(NoSmt::NoSibling)
}

/// Runs every step of the roadmap in rounds (see [`round_order`]): at least
/// [`ROADMAP_ROUNDS`]`.0` rounds, then more while `more()` says so, at most
/// [`ROADMAP_ROUNDS`]`.1`. Returns each step's seconds per event, by round.
pub fn road_rounds(
    steps: &[Road],
    more: &mut dyn FnMut() -> bool,
    run: &mut dyn FnMut(Road) -> Result<f64, TuneError>,
) -> Result<Vec<Vec<f64>>, TuneError> {
    let order = |r| round_order(steps.len(), r);
    // Whether another round starts is asked once, before its first run.
    let go = |r, i, _| i > 0 || r < ROADMAP_ROUNDS.0 || more();
    let (samples, _) = rounds(steps.len(), ROADMAP_ROUNDS.1, order, go, |_, _, k| {
        run(steps[k])
    })?;
    Ok(samples)
}

/// The roadmap's step: calibrates the events per run so that
/// [`ROADMAP_ROUNDS`]`.0` rounds fit in 70 % of the budget's share up to
/// `share`, runs the rounds, and words the baseline, the SMT skip and the work
/// offloaded. The step's reference is the baseline (the slower alone).
pub(super) fn roadmap_step(
    event_bytes: usize,
    pair: Pair<'_>,
    smt: Result<Pair<'_>, NoSmt>,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<Step, TuneError> {
    let mut step = Step::new(ROADMAP_TITLE);
    let steps: Vec<Road> = Road::ALL
        .into_iter()
        .filter(|r| *r != Road::Smt || smt.is_ok())
        .collect();
    let mut road = Roadmap {
        m: 1 << 14,
        event_words: event_bytes.div_ceil(8),
        pad_bytes: HAND_PAD_BYTES,
        pair,
        smt: smt.as_ref().ok().copied(),
        run_limit_s: budget.run_limit_s,
    };
    // Calibrate: one producer-alone run; a channel step may take several times
    // as long, so plan on 2× the baseline per run.
    let per_event = road.run(Road::ProducerAlone)?.max(1e-10);
    let window_s = 0.7 * budget.left_s_until(share);
    let run_s = window_s / (ROADMAP_ROUNDS.0 as f64 * steps.len() as f64 * 2.0);
    road.m = ((run_s / per_event) as u64).clamp(1 << 12, 1 << 24);
    road.run_limit_s = (8.0 * run_s).max(0.01);
    let samples = road_rounds(&steps, &mut || budget.left_until(share), &mut |r| {
        road.run(r)
    })?;
    for (r, s) in steps.iter().zip(&samples) {
        step.rows.push(Row::sampled(r.label(), road.m, s));
    }
    if let Err(why) = &smt {
        let at = steps
            .iter()
            .position(|r| *r == Road::P2)
            .unwrap_or(step.rows.len());
        step.rows.insert(
            at,
            Row {
                skipped: Some(why.to_string()),
                ..Row::once(Road::Smt.label(), None, 0, f64::NAN)
            },
        );
    }
    let (tp, tc) = baselines(&step);
    let (tp, tc) = (tp.unwrap_or(f64::NAN), tc.unwrap_or(f64::NAN));
    let baseline = tp.max(tc);
    step.reference_s = Some(baseline);
    step.note(StepNote::Roadmap {
        rounds: samples.first().map_or(0, Vec::len),
        events: road.m,
        consumer_slower: tc > tp,
        baseline_s: baseline,
        padding_bytes: HAND_PAD_BYTES,
    });
    if let Err(why) = &smt {
        step.note(StepNote::SmtSkipped {
            why: why.to_string(),
        });
    }
    if let Some(p8) = step.rows.iter().find(|r| r.label == Road::P8.label()) {
        step.note(offloaded("p8_rmfalsesharing", p8.per_event(), (tp, tc)));
    }
    progress(&format!(
        "{ROADMAP_TITLE}: baseline {:.2} ns per event, {} rounds",
        baseline * 1e9,
        samples.first().map_or(0, Vec::len)
    ));
    Ok(step)
}

/// Seed 004 §3.4's work offloaded by `what` at `t_s` per event, against the
/// baseline producer's and consumer's seconds per event.
pub(super) fn offloaded(what: &str, t_s: f64, (producer_s, consumer_s): (f64, f64)) -> StepNote {
    StepNote::Offloaded {
        what: what.into(),
        t_s,
        producer_s,
        consumer_s,
    }
}

/// The baseline producer's and consumer's medians (seconds per event) of the
/// roadmap's step.
pub(super) fn baselines(step: &Step) -> (Option<f64>, Option<f64>) {
    let of = |road: Road| {
        step.rows
            .iter()
            .find(|r| r.label == road.label() && r.skipped.is_none() && r.events > 0)
            .map(Row::per_event)
    };
    (of(Road::ProducerAlone), of(Road::ConsumerAlone))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{budget, pair};
    use super::*;

    #[test]
    fn work_offloaded_matches_the_seeds_smt_figures() {
        // Seed 004 §3.4: P4-SMT 1 − 22.86 / (16.54 + 18.62) ≈ 35 %, Xeon-SMT ≈ 33 %.
        let work_offloaded = StepNote::work_offloaded;
        assert!((work_offloaded(22.86, 16.54, 18.62) - 0.3498).abs() < 1e-3);
        assert!((work_offloaded(21.52, 14.68, 17.28) - 0.3267).abs() < 1e-3);
        // Perfect balancing: the pair as fast as one side alone, equal sides.
        assert_eq!(work_offloaded(1.0, 1.0, 1.0), 0.5);
        assert_eq!(work_offloaded(2.0, 1.0, 1.0), 0.0);
    }

    #[test]
    fn every_round_runs_every_step_once_at_changing_places() {
        let n = Road::ALL.len();
        let mut first = vec![0; n];
        let mut after = std::collections::HashSet::new();
        for round in 0..ROADMAP_ROUNDS.1 {
            let o = round_order(n, round);
            let mut seen = o.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "round {round}: {o:?}");
            first[o[0]] += 1;
            after.extend(o.windows(2).map(|w| (w[0], w[1])));
        }
        // Steps lead in turn, and each follows more than one other step.
        assert!(first.iter().filter(|&&f| f > 0).count() >= ROADMAP_ROUNDS.1 / 2);
        for s in 0..n {
            let preds = after.iter().filter(|(_, b)| *b == s).count();
            assert!(preds >= 2, "step {s} always follows the same step");
        }
    }

    #[test]
    fn rounds_interleave_the_steps_and_stop_between_the_bounds() {
        let steps = [Road::ProducerAlone, Road::P0, Road::P8];
        let mut log = Vec::new();
        let s = road_rounds(&steps, &mut || false, &mut |r| {
            log.push(r);
            Ok(1.0)
        })
        .unwrap();
        assert!(s.iter().all(|v| v.len() == ROADMAP_ROUNDS.0));
        // Interleaved: every block of 3 runs holds each step once.
        for chunk in log.chunks(3) {
            let mut c = chunk.to_vec();
            c.dedup();
            assert_eq!(c.len(), 3, "{chunk:?}");
        }
        let s = road_rounds(&steps, &mut || true, &mut |_| Ok(1.0)).unwrap();
        assert!(s.iter().all(|v| v.len() == ROADMAP_ROUNDS.1));
    }

    #[test]
    fn the_layouts_put_the_false_sharing_where_the_seed_had_it() {
        let line = |w: usize| w * 8 / 64;
        // p2: the two indices side by side, the producer's beside a buffer's front.
        let p2 = layout(Road::P2, 3, HAND_PAD_BYTES).unwrap();
        assert_eq!(line(p2.producer_index), line(p2.consumer_index));
        assert!(p2.buffers.contains(&(p2.producer_index + 1)));
        // p3 (and loop 1's padding of at least a line): nothing shares a line.
        for pad in [64, 128, 256] {
            let p3 = layout(Road::P3, 3, pad).unwrap();
            let mut lines = vec![line(p3.producer_index), line(p3.consumer_index)];
            lines.extend(p3.buffers.iter().map(|&b| line(b)));
            let bw = buffer_words(3);
            lines.extend(p3.buffers.iter().map(|&b| line(b + bw - 1)));
            let mut d = lines.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), lines.len(), "pad {pad}: {p3:?}");
        }
        // Paddings below a word act as one word.
        assert_eq!(layout(Road::P3, 3, 1), layout(Road::P3, 3, 8));
        // p5: three buffers end to end (an edge shares a line with the next one);
        // p6–p8: the padding between them.
        let bw = buffer_words(3);
        let p5 = layout(Road::P5, 3, HAND_PAD_BYTES).unwrap();
        assert_eq!(p5.buffers.len(), SHARED_BUFFERS);
        assert_eq!(p5.buffers[1] - p5.buffers[0], bw);
        let shared_edges = |b: &[usize]| {
            b.windows(2)
                .filter(|w| line(w[0] + bw - 1) == line(w[1]))
                .count()
        };
        assert!(shared_edges(&p5.buffers) > 0, "{p5:?}");
        let p6 = layout(Road::P6, 3, HAND_PAD_BYTES).unwrap();
        assert_eq!(p6.buffers[1] - p6.buffers[0], bw + HAND_PAD_BYTES / 8);
        assert_eq!(shared_edges(&p6.buffers), 0, "{p6:?}");
        assert_eq!(layout(Road::P7, 3, 128), layout(Road::P8, 3, 128));
        assert!(layout(Road::P0, 3, 128).is_none());
    }

    #[test]
    fn the_smt_baseline_says_why_it_is_skipped_without_smt() {
        let no_smt = crate::topology::from_synthetic("core:2 pu:1").unwrap();
        let why = smt_pair(&no_smt).unwrap_err();
        assert_eq!(why, NoSmt::NoSibling(pairs::NoPair::NoSmtSibling));
        assert_eq!(
            why.to_string(),
            "skipped: no SMT (no SMT sibling (one hardware thread per core))"
        );
        let smt = crate::topology::from_synthetic("core:2 pu:2").unwrap();
        let (a, b) = smt_pair(&smt).unwrap();
        assert!(a.is_some() && b.is_some() && a != b);
    }

    #[test]
    fn every_step_runs_and_the_synchronised_ones_deliver_every_event_in_order() {
        let r = Roadmap {
            m: 5000,
            event_words: 3,
            pad_bytes: HAND_PAD_BYTES,
            pair: pair(),
            smt: None,
            run_limit_s: 30.0,
        };
        for road in Road::ALL {
            let t = r.run(road).unwrap();
            assert_eq!(t.is_nan(), road == Road::Smt, "{road:?}: {t}");
        }
        // One event per buffer and a partial last buffer.
        let one = Roadmap {
            m: 7,
            event_words: 128,
            ..r
        };
        assert!(one.run(Road::P7).unwrap().is_finite());
    }

    #[test]
    fn without_smt_the_step_has_an_empty_row_and_a_reason() {
        let step = roadmap_step(
            24,
            pair(),
            Err(NoSmt::NoSibling(pairs::NoPair::NoSmtSibling)),
            &budget(0.05, 0.05),
            1.0,
            &mut |_| {},
        )
        .unwrap();
        let smt = step
            .rows
            .iter()
            .find(|r| r.label == Road::Smt.label())
            .unwrap();
        assert_eq!(
            smt.skipped.as_deref(),
            Some("skipped: no SMT (no SMT sibling (one hardware thread per core))")
        );
        assert_eq!(step.rows.len(), Road::ALL.len());
        assert!(step.notes.iter().any(
            |n| matches!(n, Note::Said(StepNote::SmtSkipped { why }) if why.contains("no SMT"))
        ));
        assert!(step
            .notes
            .iter()
            .any(|n| matches!(n, Note::Said(StepNote::Offloaded { what, .. }) if what == "p8_rmfalsesharing")));
        // At least the minimum of rounds; more while the budget lasts (how many
        // depends on the machine's speed and load, so only the bounds are fixed).
        let bounds = ROADMAP_ROUNDS.0..=ROADMAP_ROUNDS.1;
        for r in step.rows.iter().filter(|r| r.skipped.is_none()) {
            let n = r.per_event_runs().len();
            assert!(bounds.contains(&n), "{}: {n} runs", r.label);
        }
    }
}
