//! Stage Two of seed 004: a recursive Fibonacci emitting profiling events that the
//! consumer folds into a profile, against the Optimal, Achievable and Upper-bound
//! lines, over buffer sizes × wait strategies × affinity.

use super::*;
use crate::harness::stack::with_stack_offset;
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::sync::Barrier;

// ---- Stage Two: recursive Fibonacci emitting profiling events ----

const ENTER: u64 = 0;
const RETURN: u64 = 1;

/// A profiling event of `W` words: kind, function and depth; the argument; a
/// sequence number; the rest a filler (the larger event of the seed carried more
/// of the interpreter's frame).
#[derive(Clone, Copy)]
struct Prof<const W: usize>([u64; W]);

impl<const W: usize> Prof<W> {
    #[inline(always)]
    fn new(kind: u64, func: u64, depth: u64, arg: u64, seq: u64) -> Self {
        let mut w = [seq; W];
        w[0] = kind | func << 8 | depth << 32;
        w[1] = arg;
        w[2] = seq;
        Self(w)
    }
}

/// Where the producer's events go.
trait Sink {
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64);
}

/// No profiling (Optimal).
struct Nothing;
impl Sink for Nothing {
    #[inline(always)]
    fn event(&mut self, _: u64, _: u64, _: u64, _: u64) {}
}

/// Events into a local buffer nobody reads (Achievable).
struct WriteOnly<const W: usize> {
    buf: Vec<Prof<W>>,
    i: usize,
    seq: u64,
}
impl<const W: usize> Sink for WriteOnly<W> {
    #[inline(always)]
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64) {
        self.buf[self.i] = Prof::new(kind, func, depth, arg, self.seq);
        self.seq += 1;
        self.i += 1;
        if self.i == self.buf.len() {
            self.i = 0;
            black_box(&mut self.buf);
        }
    }
}

/// Where the consumer keeps its calls per (function, depth): a hash table
/// (std `HashMap`, the seed's thread-neutral `HardHashT`'s kind) or an ordered
/// tree (std `BTreeMap`, the kind of the STL `map` the seed replaced).
#[derive(Debug, Clone)]
enum Calls {
    Hash(HashMap<(u64, u64), u64>),
    Tree(BTreeMap<(u64, u64), u64>),
}

impl Default for Calls {
    fn default() -> Self {
        Calls::Hash(HashMap::new())
    }
}

impl Calls {
    #[inline]
    fn add(&mut self, key: (u64, u64)) {
        match self {
            Calls::Hash(m) => *m.entry(key).or_default() += 1,
            Calls::Tree(m) => *m.entry(key).or_default() += 1,
        }
    }

    /// The counts in key order, whichever map holds them.
    fn sorted(&self) -> BTreeMap<(u64, u64), u64> {
        match self {
            Calls::Hash(m) => m.iter().map(|(k, v)| (*k, *v)).collect(),
            Calls::Tree(m) => m.clone(),
        }
    }

    #[cfg(test)]
    fn total(&self) -> u64 {
        self.sorted().values().sum()
    }
}

/// The same counts are the same profile, whichever map holds them.
impl PartialEq for Calls {
    fn eq(&self, other: &Self) -> bool {
        self.sorted() == other.sorted()
    }
}

/// The map the consumer's profile uses (seed 004 §4.1's container step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MapKind {
    Hash,
    Tree,
}

/// The profile the consumer computes.
#[derive(Default, Debug, PartialEq)]
struct ProfileData {
    /// Calls per (function, depth).
    calls: Calls,
    /// Arguments of the open calls.
    stack: Vec<u64>,
    /// Returns that did not match the open call, and events out of sequence.
    bad: u64,
    /// Events seen.
    events: u64,
}

impl ProfileData {
    /// An empty profile keeping its calls in `map`.
    fn in_map(map: MapKind) -> Self {
        Self {
            calls: match map {
                MapKind::Hash => Calls::Hash(HashMap::new()),
                MapKind::Tree => Calls::Tree(BTreeMap::new()),
            },
            ..Self::default()
        }
    }

    #[inline]
    fn record<const W: usize>(&mut self, e: &Prof<W>) {
        if e.0[2] != self.events {
            self.bad += 1;
        }
        self.events += 1;
        let kind = e.0[0] & 0xff;
        let func = (e.0[0] >> 8) & 0xff_ffff;
        let depth = e.0[0] >> 32;
        if kind == ENTER {
            self.calls.add((func, depth));
            self.stack.push(e.0[1]);
        } else if self.stack.pop() != Some(e.0[1]) {
            self.bad += 1;
        }
    }
}

/// Profiling in the producer's own thread (Upper bound).
struct Inline<const W: usize> {
    profile: ProfileData,
    seq: u64,
}
impl<const W: usize> Sink for Inline<W> {
    #[inline(always)]
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64) {
        let e = Prof::<W>::new(kind, func, depth, arg, self.seq);
        self.seq += 1;
        self.profile.record(&e);
    }
}

/// Events into an hspc channel.
/// Events into an hspc channel, until `cut`: then the channel is closed and the
/// rest of the computation sends nothing.
struct ToChannel<const W: usize> {
    tx: Option<hspc::Producer<Prof<W>>>,
    seq: u64,
    cut: Instant,
}
impl<const W: usize> Sink for ToChannel<W> {
    #[inline(always)]
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64) {
        let Some(tx) = &mut self.tx else {
            return;
        };
        if self.seq & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= self.cut {
            self.tx = None;
            return;
        }
        // A dropped consumer shows up as a profile that does not match.
        let _ = tx.push(Prof::new(kind, func, depth, arg, self.seq));
        self.seq += 1;
    }
}

/// Interpreter-like work of one call.
#[inline(always)]
fn work(n: u64) -> u64 {
    let mut x = n | 1;
    for _ in 0..WORK_STEPS {
        x = x.wrapping_mul(0x5851_F42D_4C95_7F2D).wrapping_add(n);
    }
    black_box(x)
}

/// Recursive Fibonacci with an enter and a return event per call; function 0 is
/// `fib`, function 1 its base case.
fn fib<S: Sink>(n: u64, depth: u64, sink: &mut S) -> u64 {
    let func = u64::from(n < 2);
    sink.event(ENTER, func, depth, n);
    black_box(work(n));
    let r = if n < 2 {
        n
    } else {
        fib(n - 1, depth + 1, sink) + fib(n - 2, depth + 1, sink)
    };
    sink.event(RETURN, func, depth, n);
    r
}

fn time<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

/// Fibonacci through a channel made with `config`; the consumer profiles. Returns
/// the time from the start gate to the consumer's last event, checked against
/// `reference`.
/// One Stage Two channel run.
#[derive(Debug)]
struct FibRun {
    /// From the start gate to the consumer's last event.
    secs: f64,
    /// Events moved.
    moved: u64,
    /// Stopped at the cut before the computation ended.
    cut: bool,
    /// Producer's and consumer's CPU time as a share of `secs`.
    cpu_share: Option<[f64; 2]>,
}

fn fib_channel<const W: usize>(
    config: Config,
    n: u64,
    cpus: Pair<'_>,
    (reference, map): (&ProfileData, MapKind),
    cut: Instant,
) -> Result<FibRun, String> {
    let (tx, mut rx) = hspc::channel::<Prof<W>>(config).map_err(|e| e.to_string())?;
    let gate = Barrier::new(2);
    let counted = CountedRun::default();
    let out = std::thread::scope(|s| {
        let prod = s.spawn(|| {
            let mut counter = cpus.pin_counted(cpus.cpus.0);
            let mut sink = ToChannel {
                tx: Some(tx),
                seq: 0,
                cut,
            };
            gate.wait();
            counter.start();
            let cpu = thread_cpu_s();
            with_stack_offset(config.stack_offset_bytes, || {
                black_box(fib(n, 0, &mut sink));
            });
            let cpu = thread_cpu_since(cpu);
            counter.stop_into(&counted);
            (sink.seq, sink.tx.is_none(), cpu)
        });
        let c = s.spawn(|| {
            let mut counter = cpus.pin_counted(cpus.cpus.1);
            let mut p = ProfileData::in_map(map);
            gate.wait();
            counter.start();
            let (t, cpu) = (Instant::now(), thread_cpu_s());
            while let Ok(e) = rx.pop() {
                p.record(&e);
            }
            let (secs, cpu) = (t.elapsed().as_secs_f64(), thread_cpu_since(cpu));
            counter.stop_into(&counted);
            (secs, p, cpu)
        });
        let (secs, p, consumer_cpu) = c.join().map_err(|_| "the consumer panicked".to_string())?;
        let (sent, was_cut, producer_cpu) = prod
            .join()
            .map_err(|_| "the producer panicked".to_string())?;
        let cpu_share = producer_cpu
            .zip(consumer_cpu)
            .map(|(p, c)| [p / secs.max(1e-12), c / secs.max(1e-12)]);
        if was_cut {
            // A prefix of the stream: in order, every return matching its call.
            if p.bad != 0 || p.events != sent {
                return Err(format!(
                    "{}: {} of {sent} events arrived, {} bad",
                    describe(&config),
                    p.events,
                    p.bad
                ));
            }
            return Ok(FibRun {
                secs,
                moved: sent,
                cut: true,
                cpu_share,
            });
        }
        if &p != reference {
            return Err(format!(
                "{}: the consumer's profile differs from the single-thread one ({} of {} events, {} bad)",
                describe(&config),
                p.events,
                reference.events,
                p.bad
            ));
        }
        Ok(FibRun {
            secs,
            moved: p.events,
            cut: false,
            cpu_share,
        })
    });
    cpus.record(counted);
    out
}

/// "on" (pinned to the pair) or "off" (left to the OS).
pub(super) fn affinity_name(pinned: bool) -> &'static str {
    if pinned {
        "on"
    } else {
        "off"
    }
}

/// Time per event unpinned ÷ pinned, over the configurations run both ways.
fn affinity_note(step: &Step) -> Option<String> {
    let on: Vec<&Row> = step
        .rows
        .iter()
        .filter(|r| r.config.is_some() && r.pinned == Some(true))
        .collect();
    let mut ratios: Vec<f64> = step
        .rows
        .iter()
        .filter(|r| r.pinned == Some(false) && r.events > 0)
        .filter_map(|off| {
            let twin = on.iter().find(|r| r.config == off.config && r.events > 0)?;
            Some(off.per_event() / twin.per_event())
        })
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    Some(format!(
        "affinity off ÷ on (time per event), {} configurations run both ways: median {:.2}×, {:.2}–{:.2}×",
        ratios.len(),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1]
    ))
}

/// The container step in words: the tree-map profile against the hash-map
/// one, paired by round (`None` when either did not run).
fn container_note(hash: &Row, tree: &Row) -> Option<String> {
    let c = crate::stats::compare_paired(&tree.per_event_runs(), &hash.per_event_runs())?;
    Some(format!(
        "container (seed 004 §4.1, the consumer's map): a BTreeMap profile takes {:.2}× \
         (95 % interval {:.2}–{:.2}, {} rounds paired) the time per event of a HashMap one, \
         on the same channel; the seed's swap of STL map for a hash table gave 20 %",
        c.ratio.value,
        c.ratio.lo,
        c.ratio.hi,
        hash.per_event_runs().len()
    ))
}

/// Seed 004's three limit lines: each a label and its seconds, one per round.
type LimitLines = [(&'static str, Vec<f64>); 3];

/// Rounds of Stage Two's limit lines and of its container step (6: the fewest
/// that give a 95 % interval of the median).
pub const LINE_ROUNDS: usize = 6;
/// Rounds of each row of Stage Two's grid (the grid is as large as the budget
/// lets it be at this many runs a row; see [`grid_share`]).
pub const GRID_ROUNDS: usize = 3;

/// One run of limit line `k` (0 Optimal, 1 Achievable, 2 Upper bound) on the
/// producer's CPU: its seconds, and for the Upper bound the profile it built.
fn line_run<const W: usize>(
    k: usize,
    n: u64,
    layout: Config,
    cpus: Pair<'_>,
) -> (f64, Option<ProfileData>) {
    std::thread::scope(|s| {
        s.spawn(|| {
            cpus.pin_producer();
            match k {
                0 => (time(|| black_box(fib(n, 0, &mut Nothing))).0, None),
                1 => {
                    let mut sink = WriteOnly::<W> {
                        buf: vec![Prof::new(0, 0, 0, 0, 0); (layout.buffer_bytes / (W * 8)).max(1)],
                        i: 0,
                        seq: 0,
                    };
                    (time(|| fib(n, 0, &mut sink)).0, None)
                }
                _ => {
                    let mut sink = Inline::<W> {
                        profile: ProfileData::default(),
                        seq: 0,
                    };
                    let secs = time(|| fib(n, 0, &mut sink)).0;
                    (secs, Some(sink.profile))
                }
            }
        })
        .join()
        .unwrap_or((f64::NAN, None))
    })
}

/// Seed 004's three limit lines for `fib(n)` with `W`-word events on the
/// producer's CPU, [`LINE_ROUNDS`] rounds, each round every line once in a
/// rotated order: Optimal (no profiling), Achievable (events into a buffer of
/// the layout's size nobody reads), Upper bound (one thread computes and
/// profiles). Returns them with the single-thread profile every channel run is
/// checked against (every Upper-bound run must build the same one).
fn limit_lines<const W: usize>(
    n: u64,
    layout: Config,
    cpus: Pair<'_>,
) -> Result<(LimitLines, ProfileData), String> {
    let mut secs: [Vec<f64>; 3] = Default::default();
    let mut reference: Option<ProfileData> = None;
    for round in 0..LINE_ROUNDS {
        for k in super::roadmap::round_order(3, round) {
            let (t, profile) = line_run::<W>(k, n, layout, cpus);
            secs[k].push(t);
            match (profile, &reference) {
                (Some(p), Some(r)) if &p != r => {
                    return Err("the single-thread profile changed between runs".into())
                }
                (Some(p), None) => reference = Some(p),
                _ => {}
            }
        }
    }
    let reference = reference.unwrap_or_default();
    if reference.bad != 0 || !reference.stack.is_empty() || reference.events == 0 {
        return Err("the single-thread profile is inconsistent".into());
    }
    let [optimal, achievable, upper] = secs;
    let lines = [
        ("Optimal: fib, no profiling", optimal),
        ("Achievable: events into a buffer nobody reads", achievable),
        ("Upper bound: fib and profiling in one thread", upper),
    ];
    Ok((lines, reference))
}

/// Stage Two's configurations: the Stage One layout's buffer size first, then
/// [`STAGE_TWO_BUFFER_BYTES`] (each at least one event), × every wait strategy.
fn stage_two_configs(layout: Config, event_bytes: usize) -> Vec<Config> {
    let mut sizes: Vec<usize> = Vec::new();
    for b in std::iter::once(layout.buffer_bytes).chain(STAGE_TWO_BUFFER_BYTES) {
        if b >= event_bytes && !sizes.contains(&b) {
            sizes.push(b);
        }
    }
    sizes
        .iter()
        .flat_map(|&b| {
            WaitStrategy::ALL.iter().map(move |&w| {
                layout
                    .with_mode(Mode::NBuffer)
                    .with_buffers(layout.buffers.max(2))
                    .with_buffer_bytes(b)
                    .with_wait(w)
            })
        })
        .collect()
}

/// The runs of the configurations a user asked to race that can carry `W`-word
/// events; a note says why any other cannot.
fn raced_runs<const W: usize>(
    against: &[Against],
    cpus: Pair<'_>,
    notes: &mut Vec<String>,
) -> Vec<(Config, bool)> {
    let can_pin = cpus.cpus.0.is_some() || cpus.cpus.1.is_some();
    let mut runs = Vec::new();
    for a in against {
        let (config, pinned) = a.as_run();
        if let Err(e) = config.validate::<Prof<W>>() {
            notes.push(format!(
                "--against {}: not run: {e} ({}-byte events)",
                a.name,
                W * 8
            ));
            continue;
        }
        if pinned && !can_pin {
            notes.push(format!(
                "--against {}: run unpinned (no CPU pair to pin to here)",
                a.name
            ));
        }
        let run = (config, pinned && can_pin);
        if !runs.contains(&run) {
            runs.push(run);
        }
    }
    runs
}

/// Stage Two's runs: the incumbent, the raced configurations, then each of
/// `configs` with each of `affinities`; and how many come before the grid.
fn grid_runs(
    incumbent: (Config, bool),
    raced: &[(Config, bool)],
    configs: &[Config],
    affinities: &[bool],
) -> (Vec<(Config, bool)>, usize) {
    let mut runs: Vec<(Config, bool)> = vec![incumbent];
    runs.extend(raced.iter().copied().filter(|&r| r != incumbent));
    let first = runs.len();
    for &c in configs {
        for &a in affinities {
            if !runs[..first].contains(&(c, a)) {
                runs.push((c, a));
            }
        }
    }
    (runs, first)
}

/// Stage Two's `runs` (indices) in groups: the first `fixed` (the incumbent and
/// the raced configurations) one a group, then the grid's configurations (a
/// configuration's runs, affinity on and off, one group) in the order they run,
/// spread over the grid (see [`spread_order`]).
fn run_groups(runs: &[(Config, bool)], fixed: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if i >= fixed && g[0] >= fixed && runs[g[0]].0 == run.0 => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let fixed = fixed.min(groups.len());
    let spread = spread_order(groups.len() - fixed)
        .into_iter()
        .map(|g| g + fixed);
    (0..fixed)
        .chain(spread)
        .map(|g| groups[g].clone())
        .collect()
}

/// How many of `groups` (see [`run_groups`]) fit `affordable_runs` runs at
/// `rounds` runs each: the first `fixed` always, then whole groups in order.
fn groups_affordable(
    groups: &[Vec<usize>],
    fixed: usize,
    rounds: usize,
    affordable_runs: f64,
) -> usize {
    let mut runs = 0usize;
    let mut kept = 0;
    for (i, g) in groups.iter().enumerate() {
        runs += g.len() * rounds;
        if i >= fixed && runs as f64 > affordable_runs {
            break;
        }
        kept = i + 1;
    }
    kept
}

/// Round `round` of Stage Two's grid over `groups`: the fixed ones first, then
/// the grid's groups rotated by the round; within a configuration, affinity on
/// first and off first in turn from one configuration to the next and from one
/// round to the next (so neither affinity always runs after the other, in the
/// cache state it left).
fn run_order(groups: &[Vec<usize>], fixed: usize, round: usize) -> Vec<usize> {
    let fixed = fixed.min(groups.len());
    let grid = &groups[fixed..];
    let turn = if grid.is_empty() {
        0
    } else {
        round * grid.len().div_ceil(GRID_ROUNDS.max(1)) % grid.len()
    };
    let fixed_runs = groups[..fixed].iter().flatten().copied();
    let grid_runs = (0..grid.len()).flat_map(move |position| {
        let mut pair = grid[(position + turn) % grid.len()].clone();
        if (position + round) % 2 == 1 {
            pair.reverse();
        }
        pair
    });
    fixed_runs.chain(grid_runs).collect()
}

/// Stage Two's reference rows for `W`-word events: Optimal, Achievable and Upper
/// bound, [`LINE_ROUNDS`] runs each (the step's reference is Achievable's
/// median). Returns the Fibonacci argument (chosen so that the unprofiled run
/// takes about `run_s` ÷ [`GRID_ROUNDS`], so that the grid's rounds cost what one
/// run a row did) and the single-thread profile every channel run is checked
/// against.
fn reference_rows<const W: usize>(
    step: &mut Step,
    run_s: f64,
    layout: Config,
    cpus: Pair<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(u64, ProfileData), String> {
    let bytes = W * 8;
    let n0 = 18u64;
    let (t0, _) = time(|| fib(n0, 0, &mut Nothing));
    let target_s = run_s / GRID_ROUNDS as f64;
    let grow = (target_s / t0.max(1e-7)).ln() / 1.618f64.ln();
    let n = (n0 as f64 + grow).round().clamp(10.0, 34.0) as u64;
    let (lines, reference) = limit_lines::<W>(n, layout, cpus)?;
    let events = reference.events;
    let per_event =
        |secs: &[f64]| -> Vec<f64> { secs.iter().map(|s| s / events.max(1) as f64).collect() };
    for (label, secs) in &lines {
        step.rows.push(Row {
            pinned: Some(cpus.cpus.0.is_some()),
            ..Row::sampled(*label, events, &per_event(secs))
        });
    }
    let median_ms = |k: usize| crate::stats::median(&lines[k].1) * 1e3;
    step.reference_s = Some(crate::stats::median(&per_event(&lines[1].1)));
    step.notes.push(format!(
        "fib({n}): {events} events; {WORK_STEPS} multiply-adds of work per call; the limit \
         lines {LINE_ROUNDS} runs each, interleaved"
    ));
    progress(&format!(
        "stage two {bytes} B: optimal {:.1} ms, achievable {:.1} ms, upper bound {:.1} ms",
        median_ms(0),
        median_ms(1),
        median_ms(2)
    ));
    Ok((n, reference))
}

/// Seed 004 §4.1's container step on `config`: the consumer's profile in a
/// `HashMap` and in a `BTreeMap`, [`LINE_ROUNDS`] rounds, the order alternating;
/// the two rows and a note comparing them.
fn container_rows<const W: usize>(
    step: &mut Step,
    (config, pair): (Config, Pair<'_>),
    n: u64,
    reference: &ProfileData,
    budget: &Budget,
) -> Result<(), String> {
    let mut per_event: [Vec<f64>; 2] = Default::default();
    let mut events = 0;
    for round in 0..LINE_ROUNDS {
        for k in [round % 2, 1 - round % 2] {
            let map = [MapKind::Hash, MapKind::Tree][k];
            let run = fib_channel::<W>(config, n, pair, (reference, map), budget.run_cut())?;
            events = run.moved;
            per_event[k].push(run.secs / run.moved.max(1) as f64);
        }
    }
    let [hash, tree] = per_event.map(|s| (s, events));
    let desc = describe(&config);
    let pinned = Some(pair.cpus.0.is_some());
    let hash = Row {
        pinned,
        ..Row::sampled(
            format!("Container: HashMap profile, {desc}"),
            hash.1,
            &hash.0,
        )
    };
    let tree = Row {
        pinned,
        ..Row::sampled(
            format!("Container: BTreeMap profile (std::map's kind), {desc}"),
            tree.1,
            &tree.0,
        )
    };
    if let Some(note) = container_note(&hash, &tree) {
        step.notes.push(note);
    }
    step.rows.push(hash);
    step.rows.push(tree);
    Ok(())
}

/// Stage Two's runs (configuration, affinity on), their groups (indices of
/// runs compared with each other) and how many leading runs are fixed.
type GridRuns<'a> = (&'a [(Config, bool)], &'a [Vec<usize>], usize);

/// Runs Stage Two's grid in [`GRID_ROUNDS`] rounds (see [`run_order`]) while
/// the budget lets it: the fixed runs (the first `first`) once in any case,
/// again while the whole budget lasts; the grid while the step's `share` does. Returns each run's
/// runs, by index of `runs`.
fn grid_rounds(
    step: &mut Step,
    (runs, groups, first): GridRuns<'_>,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
    run: &mut dyn FnMut(Config, bool) -> Result<FibRun, String>,
) -> Result<Vec<Vec<FibRun>>, String> {
    let mut samples: Vec<Vec<FibRun>> = (0..runs.len()).map(|_| Vec::new()).collect();
    for round in 0..GRID_ROUNDS {
        for (i, k) in run_order(groups, first, round).into_iter().enumerate() {
            let (c, pinned) = runs[k];
            // The first round's fixed runs always run: the step's choice needs them.
            let out = k >= first || (round > 0 && !budget.left_until(1.0));
            if !budget.left_until(share) && out {
                step.notes.push(format!(
                    "budget: round {} of {GRID_ROUNDS} stopped after {i} runs",
                    round + 1
                ));
                return Ok(samples);
            }
            let r = run(c, pinned)?;
            progress(&format!(
                "{}: {}, affinity {} (round {}) {:.1} ms",
                step.title,
                describe(&c),
                affinity_name(pinned),
                round + 1,
                r.secs * 1e3
            ));
            samples[k].push(r);
        }
    }
    Ok(samples)
}

/// The grid's rows from its rounds' `samples` (a row per run measured, its first
/// run the row's, the others its samples), and a note saying how much of the
/// grid (`grid`: configurations in all, kept) ran.
fn grid_rows(
    step: &mut Step,
    runs: &[(Config, bool)],
    samples: &[Vec<FibRun>],
    (all, kept): (usize, usize),
    both_affinities: bool,
) {
    step.notes.push(format!(
        "grid: {kept} of {all} configurations × affinity {}, {GRID_ROUNDS} rounds, every \
         round each run once, affinity on and off next to each other in alternate order \
         (from one configuration and one round to the next); the rest left out for the \
         budget, spread over the grid",
        if both_affinities { "on, off" } else { "off" }
    ));
    for (k, runs_k) in samples.iter().enumerate() {
        let Some(head) = runs_k.first() else {
            continue;
        };
        let (c, pinned) = runs[k];
        step.rows.push(Row {
            cut: runs_k.iter().any(|r| r.cut),
            pinned: Some(pinned),
            cpu_share: head.cpu_share,
            samples: runs_k[1..]
                .iter()
                .map(|r| r.secs / r.moved.max(1) as f64)
                .collect(),
            ..Row::once(describe(&c), Some(c), head.moved, head.secs)
        });
    }
}

/// Stage Two for `W`-word events; returns the step and its fastest configuration
/// with its affinity (true: pinned).
pub(super) fn stage_two<const W: usize>(
    run_s: f64,
    layout: Config,
    against: &[Against],
    cpus: Pair<'_>,
    budget: &Budget,
    step_index: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<(Step, Option<(Config, bool)>), String> {
    let share = sweep_end(step_index);
    let bytes = W * 8;
    let mut step = Step::new(format!("stage two: fib, {bytes}-byte events"));
    let run_s = run_s.max(1e-3);
    let (n, reference) = reference_rows::<W>(&mut step, run_s, layout, cpus, progress)?;
    let configs = stage_two_configs(layout, bytes);
    // Each configuration pinned (affinity on) and unpinned (off), next to each
    // other so that a budget cut leaves pairs; with no pair to pin to, only off.
    let affinities: &[bool] = if cpus.cpus.0.is_some() || cpus.cpus.1.is_some() {
        &[true, false]
    } else {
        &[false]
    };
    // The incumbent, what Stage One chose (pinned where it could be), runs first.
    let incumbent = (
        layout
            .with_mode(Mode::NBuffer)
            .with_buffers(layout.buffers.max(2)),
        affinities[0],
    );
    let pair_of = |pinned: bool| if pinned { cpus } else { cpus.unpinned() };
    container_rows::<W>(
        &mut step,
        (incumbent.0, pair_of(incumbent.1)),
        n,
        &reference,
        budget,
    )?;
    // Configurations a user asked to race run right after the incumbent, as
    // they are (pinned when they name an affinity), if they carry these events.
    let raced = raced_runs::<W>(against, cpus, &mut step.notes);
    let (runs, first) = grid_runs(incumbent, &raced, &configs, affinities);
    let groups = run_groups(&runs, first);
    // As many of the grid's configurations as GRID_ROUNDS runs each fit in the
    // step's share, at about the Upper bound's time a run.
    let run_est_s = step
        .rows
        .get(2)
        .map_or(run_s, |r| r.per_event() * r.events as f64);
    let affordable = budget.left_s_until(share) / run_est_s.max(1e-6);
    let kept = groups_affordable(&groups, first, GRID_ROUNDS, affordable);
    let samples = grid_rounds(
        &mut step,
        (&runs, &groups[..kept], first),
        budget,
        share,
        progress,
        &mut |c, pinned| {
            fib_channel::<W>(
                c,
                n,
                pair_of(pinned),
                (&reference, MapKind::Hash),
                budget.run_cut(),
            )
        },
    )?;
    let grid = (
        groups.len().saturating_sub(first),
        kept.saturating_sub(first),
    );
    grid_rows(&mut step, &runs, &samples, grid, affinities.len() == 2);
    let kept = step.row_of(&incumbent.0, Some(incumbent.1));
    let forced: Vec<usize> = raced
        .iter()
        .filter_map(|(c, pinned)| step.row_of(c, Some(*pinned)))
        .collect();
    for a in against {
        if let Some(i) = step.against_row(a) {
            step.rows[i]
                .label
                .push_str(&format!(" (--against {})", a.name));
        }
    }
    settle(
        &mut step,
        kept,
        &forced,
        budget,
        STEP_ENDS[step_index],
        &mut |row| {
            let c = row.config.ok_or("settling a row without a configuration")?;
            let pair = if row.pinned == Some(true) {
                cpus
            } else {
                cpus.unpinned()
            };
            let run = fib_channel::<W>(c, n, pair, (&reference, MapKind::Hash), budget.run_cut())?;
            Ok(run.secs / run.moved.max(1) as f64)
        },
    )?;
    if let Some(note) = affinity_note(&step) {
        step.notes.push(note);
    }
    let best = step.best().and_then(|r| r.config.zip(r.pinned));
    Ok((step, best))
}

#[cfg(test)]
mod tests {
    use super::*;

    static REFUSED: AtomicUsize = AtomicUsize::new(0);

    #[test]
    fn channel_and_inline_profiles_agree() {
        let mut inline = Inline::<3> {
            profile: ProfileData::default(),
            seq: 0,
        };
        assert_eq!(fib(12, 0, &mut inline), 144);
        let reference = inline.profile;
        assert_eq!(reference.events, 2 * 465);
        assert_eq!(reference.calls.total(), 465);
        for w in [WaitStrategy::SpinThenPark, WaitStrategy::Condvar] {
            let c = Config::n_buffer(3, 1024).with_wait(w);
            let far = Instant::now() + std::time::Duration::from_secs(30);
            let run = fib_channel::<3>(
                c,
                12,
                Pair::new((None, None), &REFUSED),
                (&reference, MapKind::Hash),
                far,
            )
            .unwrap();
            assert_eq!((run.moved, run.cut), (reference.events, false));
            // Both threads used some CPU, and no more than the wall time allows
            // (with a little slack for the clocks' steps).
            let [p, q] = run.cpu_share.expect("thread CPU clocks on Linux");
            assert!(p > 0.0 && q > 0.0 && p < 1.5 && q < 1.5, "{p} {q}");
            let FibRun { moved, cut, .. } = fib_channel::<3>(
                c,
                20,
                Pair::new((None, None), &REFUSED),
                (&ProfileData::default(), MapKind::Hash),
                Instant::now(),
            )
            .unwrap();
            assert!(cut && moved < 2 * 21_891);
        }
    }

    #[test]
    fn a_tree_map_profile_equals_the_hash_map_one() {
        let mut inline = Inline::<3> {
            profile: ProfileData::default(),
            seq: 0,
        };
        fib(12, 0, &mut inline);
        let reference = inline.profile;
        let c = Config::n_buffer(3, 1024);
        let far = Instant::now() + std::time::Duration::from_secs(30);
        let pair = Pair::new((None, None), &REFUSED);
        let run = fib_channel::<3>(c, 12, pair, (&reference, MapKind::Tree), far).unwrap();
        assert_eq!((run.moved, run.cut), (reference.events, false));
        // A different computation is still caught through the tree.
        let wrong = fib_channel::<3>(c, 11, pair, (&reference, MapKind::Tree), far);
        assert!(wrong.unwrap_err().contains("differs"));
    }

    #[test]
    fn stage_two_repeats_every_row_each_round_with_affinity_orders_alternating() {
        let c = |b: usize| Config::n_buffer(3, b);
        // The incumbent (pinned), one raced configuration, then 4 configurations
        // × affinity on, off.
        let grid = [1024, 4096, 16384, 65536].map(c);
        let (runs, first) = grid_runs(
            (c(4096), true),
            &[(c(1_000_000), true), (c(4096), true)],
            &grid,
            &[true, false],
        );
        assert_eq!(first, 2, "the raced twin of the incumbent runs once");
        assert_eq!(runs.len(), 2 + 4 * 2 - 1);
        let groups = run_groups(&runs, first);
        assert_eq!(&groups[..2], &[vec![0], vec![1]]);
        let mut on_first: HashMap<usize, [usize; 2]> = HashMap::new();
        let rounds = 2 * GRID_ROUNDS;
        for round in 0..rounds {
            let order = run_order(&groups, first, round);
            assert_eq!(&order[..2], &[0, 1], "round {round}");
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..runs.len()).collect::<Vec<_>>(),
                "each run once a round"
            );
            // A configuration's two runs stay next to each other.
            for w in order[2..].windows(2) {
                if runs[w[0]].0 == runs[w[1]].0 {
                    let key = runs[w[0]].0.buffer_bytes;
                    on_first.entry(key).or_default()[usize::from(!runs[w[0]].1)] += 1;
                }
            }
        }
        // (The grid's pinned 4096 is the incumbent: that configuration has its
        // unpinned run alone.) Each of the others ran on first and off first
        // equally often (±1) over the rounds.
        assert_eq!(on_first.len(), 3, "{on_first:?}");
        for (b, [on, off]) in &on_first {
            assert_eq!(on + off, rounds, "{b}");
            assert!(
                on.abs_diff(*off) <= 1,
                "{b}: on first {on}, off first {off}"
            );
        }
        let order = run_order(&groups, first, 0);
        let sizes: Vec<usize> = order[2..].iter().map(|&k| runs[k].0.buffer_bytes).collect();
        assert_ne!(
            &sizes[..3],
            &[1024, 1024, 4096],
            "spread, not in grid order"
        );
    }

    #[test]
    fn the_grid_keeps_the_groups_the_budget_affords_at_its_rounds() {
        let groups = [vec![0], vec![1], vec![2, 3], vec![4, 5], vec![6]];
        // Fixed ones always, even with no budget.
        assert_eq!(groups_affordable(&groups, 2, 3, 0.0), 2);
        // 3 rounds: fixed 6 runs, then 6 for each pair.
        assert_eq!(groups_affordable(&groups, 2, 3, 12.0), 3);
        assert_eq!(groups_affordable(&groups, 2, 3, 17.9), 3);
        assert_eq!(groups_affordable(&groups, 2, 3, 1e9), 5);
    }

    #[test]
    fn affinity_off_is_compared_with_on_for_the_same_config() {
        let c = Config::n_buffer(3, 4096);
        let row = |config: Option<Config>, secs: f64, pinned: bool| Row {
            pinned: Some(pinned),
            ..Row::once("", config, 1000, secs)
        };
        let mut step = Step::new("stage two: test");
        step.rows.push(row(None, 1.0, true));
        step.rows.push(row(Some(c), 1.0, true));
        step.rows.push(row(Some(c), 2.0, false));
        step.rows.push(row(Some(c.with_padding(1)), 1.0, false));
        let note = affinity_note(&step).unwrap();
        assert!(
            note.contains("1 configurations") && note.contains("median 2.00×"),
            "{note}"
        );
        assert!(step.best().is_some_and(|b| b.pinned == Some(true)));
    }
}
