//! Stage Two of seed 004: a recursive Fibonacci emitting profiling events that the
//! consumer folds into a profile, against the Optimal, Achievable and Upper-bound
//! lines, over buffer sizes × wait strategies × affinity.

use super::*;
use hspc::stack::with_stack_offset;
use std::collections::HashMap;
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

/// The profile the consumer computes.
#[derive(Default, Debug, PartialEq)]
struct ProfileData {
    /// Calls per (function, depth).
    calls: HashMap<(u64, u64), u64>,
    /// Arguments of the open calls.
    stack: Vec<u64>,
    /// Returns that did not match the open call, and events out of sequence.
    bad: u64,
    /// Events seen.
    events: u64,
}

impl ProfileData {
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
            *self.calls.entry((func, depth)).or_default() += 1;
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

/// Events into std `Vec` batches handed over a bounded `std::sync::mpsc` channel,
/// the emptied vectors coming back for reuse (seed 004's container-library question:
/// the standard containers doing hspc's job, heap and all).
struct ToVecs<const W: usize> {
    batch: Vec<Prof<W>>,
    cap: usize,
    tx: Option<std::sync::mpsc::SyncSender<Vec<Prof<W>>>>,
    spare: std::sync::mpsc::Receiver<Vec<Prof<W>>>,
    seq: u64,
}
impl<const W: usize> ToVecs<W> {
    fn hand_over(&mut self) {
        let fresh = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.cap));
        let full = std::mem::replace(&mut self.batch, fresh);
        // A dropped consumer shows up as a profile that does not match.
        if let Some(tx) = &self.tx {
            if tx.send(full).is_err() {
                self.tx = None;
            }
        }
    }
}
impl<const W: usize> Sink for ToVecs<W> {
    #[inline(always)]
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64) {
        self.batch.push(Prof::new(kind, func, depth, arg, self.seq));
        self.seq += 1;
        if self.batch.len() == self.cap {
            self.hand_over();
        }
    }
}

/// Fibonacci through [`ToVecs`] batches of `batch` events, `in_flight` batches at
/// most, on the pair; the time from the start gate to the consumer's last event,
/// the profile checked against `reference`.
fn fib_vec_batches<const W: usize>(
    n: u64,
    (batch, in_flight): (usize, usize),
    cpus: Pair<'_>,
    reference: &ProfileData,
) -> Result<f64, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Prof<W>>>(in_flight.max(1));
    let (back, spare) = std::sync::mpsc::sync_channel::<Vec<Prof<W>>>(in_flight.max(1) + 1);
    let gate = Barrier::new(2);
    let cap = batch.max(1);
    std::thread::scope(|s| {
        s.spawn(|| {
            cpus.pin_producer();
            let mut sink = ToVecs::<W> {
                batch: Vec::with_capacity(cap),
                cap,
                tx: Some(tx),
                spare,
                seq: 0,
            };
            gate.wait();
            black_box(fib(n, 0, &mut sink));
            if !sink.batch.is_empty() {
                sink.hand_over();
            }
        });
        let c = s.spawn(|| {
            cpus.pin_consumer();
            let mut p = ProfileData::default();
            gate.wait();
            let t = Instant::now();
            for mut v in rx {
                for e in &v {
                    p.record(e);
                }
                v.clear();
                // Full: the producer has enough spares; this one is dropped.
                let _ = back.try_send(v);
            }
            (t.elapsed().as_secs_f64(), p)
        });
        let (secs, p) = c.join().map_err(|_| "the consumer panicked".to_string())?;
        if &p != reference {
            return Err(format!(
                "std Vec batches: the consumer's profile differs from the single-thread one ({} of {} events, {} bad)",
                p.events, reference.events, p.bad
            ));
        }
        Ok(secs)
    })
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
    reference: &ProfileData,
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
            let mut p = ProfileData::default();
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

/// The step's choice against the std-container line, per event (one run of the
/// container line: a ratio, not a verdict).
fn container_note(step: &Step, vec_per_event_s: f64) -> Option<String> {
    let best = step.best()?;
    let ratio = vec_per_event_s / best.per_event();
    ratio.is_finite().then(|| {
        format!(
            "container library: std Vec batches over std::sync::mpsc take {ratio:.2}× the time per event of {} (one run of the container line)",
            best.label
        )
    })
}

/// Seed 004's three limit lines, each a label and its seconds.
type LimitLines = [(&'static str, f64); 3];

/// Seed 004's three limit lines for `fib(n)` with `W`-word events, each the better
/// of two runs on the producer's CPU (the first also warms caches and clocks):
/// Optimal (no profiling), Achievable (events into a buffer of the layout's size
/// nobody reads), Upper bound (one thread computes and profiles). Returns them with
/// the single-thread profile every channel run is checked against.
fn limit_lines<const W: usize>(
    n: u64,
    layout: Config,
    cpus: Pair<'_>,
) -> Result<(LimitLines, ProfileData), String> {
    let on_producer = |f: &mut (dyn FnMut() -> f64 + Send)| -> f64 {
        std::thread::scope(|s| {
            s.spawn(|| {
                cpus.pin_producer();
                f()
            })
            .join()
            .unwrap_or(f64::NAN)
        })
    };
    let optimal = on_producer(&mut || {
        let a = time(|| black_box(fib(n, 0, &mut Nothing))).0;
        a.min(time(|| black_box(fib(n, 0, &mut Nothing))).0)
    });
    let achievable = on_producer(&mut || {
        let mut sink = WriteOnly::<W> {
            buf: vec![Prof::new(0, 0, 0, 0, 0); (layout.buffer_bytes / (W * 8)).max(1)],
            i: 0,
            seq: 0,
        };
        let a = time(|| fib(n, 0, &mut sink)).0;
        a.min(time(|| fib(n, 0, &mut sink)).0)
    });
    let mut reference = ProfileData::default();
    let upper = on_producer(&mut || {
        let mut sink = Inline::<W> {
            profile: ProfileData::default(),
            seq: 0,
        };
        let a = time(|| fib(n, 0, &mut sink)).0;
        sink.profile = ProfileData::default();
        sink.seq = 0;
        let b = time(|| fib(n, 0, &mut sink)).0;
        reference = std::mem::take(&mut sink.profile);
        a.min(b)
    });
    if reference.bad != 0 || !reference.stack.is_empty() {
        return Err("the single-thread profile is inconsistent".into());
    }
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
            WaitStrategy::ALL.iter().map(move |&w| Config {
                mode: Mode::NBuffer,
                buffers: layout.buffers.max(2),
                buffer_bytes: b,
                wait: w,
                ..layout
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

/// The order of Stage Two's `runs` (indices): the first `fixed` (the incumbent
/// and the raced configurations) in turn, then the grid's configurations spread
/// over it (see [`spread_order`]), a configuration's runs (affinity on, off)
/// together, on first and off first in turn from one configuration to the next
/// (so neither affinity always runs after the other, in the cache state it left).
fn run_order(runs: &[(Config, bool)], fixed: usize) -> Vec<usize> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if i >= fixed && g[0] >= fixed && runs[g[0]].0 == run.0 => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let fixed = fixed.min(groups.len());
    let grid = spread_order(groups.len() - fixed)
        .into_iter()
        .enumerate()
        .flat_map(|(position, g)| {
            let mut pair = groups[g + fixed].clone();
            if position % 2 == 1 {
                pair.reverse();
            }
            pair
        });
    (0..fixed)
        .flat_map(|g| groups[g].clone())
        .chain(grid)
        .collect()
}

/// Stage Two's reference rows for `W`-word events: Optimal, Achievable and Upper
/// bound (the step's reference is Achievable), and the container line. Returns
/// the Fibonacci argument (chosen so that the unprofiled run takes about
/// `run_s`), the single-thread profile every channel run is checked against, and
/// the container line's time.
fn reference_rows<const W: usize>(
    step: &mut Step,
    run_s: f64,
    layout: Config,
    cpus: Pair<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(u64, ProfileData, f64), String> {
    let bytes = W * 8;
    // Choose n so that the unprofiled run takes about `run_s`.
    let n0 = 18u64;
    let (t0, _) = time(|| fib(n0, 0, &mut Nothing));
    let grow = (run_s / t0.max(1e-7)).ln() / 1.618f64.ln();
    let n = (n0 as f64 + grow).round().clamp(10.0, 34.0) as u64;
    let (lines, reference) = limit_lines::<W>(n, layout, cpus)?;
    let events = reference.events;
    for (label, secs) in lines {
        step.rows.push(Row {
            pinned: Some(cpus.cpus.0.is_some()),
            ..Row::once(label, None, events, secs)
        });
    }
    // The container-library line: the layout's batches in std containers.
    let batch = (layout.buffer_bytes / bytes).max(1);
    let in_flight = layout.buffers.max(2);
    let vec_secs = fib_vec_batches::<W>(n, (batch, in_flight), cpus, &reference)?;
    let label = format!(
        "Container: std Vec batches of {batch} events over std::sync::mpsc, {in_flight} in flight"
    );
    step.rows.push(Row {
        pinned: Some(cpus.cpus.0.is_some()),
        ..Row::once(label, None, events, vec_secs)
    });
    step.reference_s = Some(lines[1].1 / events.max(1) as f64);
    step.notes.push(format!(
        "fib({n}): {events} events; {WORK_STEPS} multiply-adds of work per call"
    ));
    progress(&format!(
        "stage two {bytes} B: optimal {:.1} ms, achievable {:.1} ms, upper bound {:.1} ms",
        lines[0].1 * 1e3,
        lines[1].1 * 1e3,
        lines[2].1 * 1e3
    ));
    Ok((n, reference, vec_secs))
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
    let (n, reference, vec_secs) = reference_rows::<W>(&mut step, run_s, layout, cpus, progress)?;
    let events = reference.events;
    let configs = stage_two_configs(layout, bytes);
    // Each configuration pinned (affinity on), then unpinned (off), next to each
    // other so that a budget cut leaves pairs; with no pair to pin to, only off.
    let affinities: &[bool] = if cpus.cpus.0.is_some() || cpus.cpus.1.is_some() {
        &[true, false]
    } else {
        &[false]
    };
    // The incumbent, what Stage One chose (pinned where it could be), runs first.
    let incumbent = (
        Config {
            mode: Mode::NBuffer,
            buffers: layout.buffers.max(2),
            ..layout
        },
        affinities[0],
    );
    // Configurations a user asked to race run right after the incumbent, as
    // they are (pinned when they name an affinity), if they carry these events.
    let raced = raced_runs::<W>(against, cpus, &mut step.notes);
    let (runs, first) = grid_runs(incumbent, &raced, &configs, affinities);
    let order = run_order(&runs, first);
    let mut rows: Vec<(usize, Row)> = Vec::new();
    for (i, &k) in order.iter().enumerate() {
        let (c, pinned) = runs[k];
        // The incumbent and the raced configurations run while the whole budget
        // lasts; the grid while the step's share does.
        if !budget.left_until(share) && (i >= first || !budget.left_until(1.0)) {
            step.notes.push(format!(
                "budget: measured {i} of {} runs ({} configurations × affinity {}, spread over the grid)",
                runs.len(),
                configs.len(),
                if affinities.len() == 2 {
                    "on, off"
                } else {
                    "off"
                }
            ));
            break;
        }
        let pair = if pinned { cpus } else { cpus.unpinned() };
        let run = fib_channel::<W>(c, n, pair, &reference, budget.run_cut())?;
        let (secs, moved, cut) = (run.secs, run.moved, run.cut);
        progress(&format!(
            "{}: {}, affinity {} ({}/{}) {:.1} ms",
            step.title,
            describe(&c),
            affinity_name(pinned),
            i + 1,
            runs.len(),
            secs * 1e3
        ));
        rows.push((
            k,
            Row {
                cut,
                pinned: Some(pinned),
                cpu_share: run.cpu_share,
                ..Row::once(describe(&c), Some(c), moved, secs)
            },
        ));
    }
    rows.sort_by_key(|&(k, _)| k);
    step.rows.extend(rows.into_iter().map(|(_, r)| r));
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
            let run = fib_channel::<W>(c, n, pair, &reference, budget.run_cut())?;
            Ok(run.secs / run.moved.max(1) as f64)
        },
    )?;
    if let Some(note) = affinity_note(&step) {
        step.notes.push(note);
    }
    if let Some(note) = container_note(&step, vec_secs / events.max(1) as f64) {
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
        assert_eq!(reference.calls.values().sum::<u64>(), 465);
        for w in [WaitStrategy::SpinThenPark, WaitStrategy::Condvar] {
            let c = Config::n_buffer(3, 1024).with_wait(w);
            let far = Instant::now() + std::time::Duration::from_secs(30);
            let run = fib_channel::<3>(c, 12, Pair::new((None, None), &REFUSED), &reference, far)
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
                &ProfileData::default(),
                Instant::now(),
            )
            .unwrap();
            assert!(cut && moved < 2 * 21_891);
        }
    }

    #[test]
    fn std_vec_batches_carry_the_same_profile_and_a_wrong_one_fails() {
        let mut inline = Inline::<3> {
            profile: ProfileData::default(),
            seq: 0,
        };
        fib(14, 0, &mut inline);
        let reference = inline.profile;
        let pair = Pair::new((None, None), &REFUSED);
        // Batches that divide the events evenly, that do not, and one event each.
        for batch in [2, 7, 1000, 1] {
            let secs = fib_vec_batches::<3>(14, (batch, 3), pair, &reference).unwrap();
            assert!(secs > 0.0);
        }
        let wrong = fib_vec_batches::<3>(13, (64, 2), pair, &reference).unwrap_err();
        assert!(wrong.contains("differs"), "{wrong}");
    }

    #[test]
    fn stage_two_runs_the_incumbent_and_raced_first_then_the_grid_spread_in_pairs() {
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
        let order = run_order(&runs, first);
        assert_eq!(&order[..2], &[0, 1]);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..runs.len()).collect::<Vec<_>>(), "each run once");
        // A configuration's two runs stay next to each other, on first and off
        // first in turn.
        // (The grid's pinned 4096 is the incumbent, run once: that configuration
        // has its unpinned run alone.)
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &k in &order[2..] {
            match groups.last_mut() {
                Some(g) if runs[g[0]].0 == runs[k].0 => g.push(k),
                _ => groups.push(vec![k]),
            }
        }
        assert_eq!(groups.len(), 4, "{groups:?}");
        for (position, g) in groups.iter().enumerate() {
            if g.len() == 2 {
                assert_ne!(runs[g[0]].1, runs[g[1]].1);
                assert_eq!(runs[g[0]].1, position % 2 == 0, "{position}: {g:?}");
            }
        }
        let first_grid = runs[order[2]].0.buffer_bytes;
        let second_grid = order[2..]
            .iter()
            .map(|&k| runs[k].0.buffer_bytes)
            .find(|&b| b != first_grid)
            .unwrap();
        assert_ne!(
            (first_grid, second_grid),
            (1024, 4096),
            "spread, not in grid order"
        );
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
