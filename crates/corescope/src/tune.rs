//! `corescope tune channel`: seed 004's Stage One and Stage Two for hspc, pruned to
//! fit a time budget, ending in the fastest configuration as JSON that
//! `hspc::Config` reads back.
//!
//! Stage One (an ideal producer and consumer: the producer writes N-byte events as
//! fast as it can, the consumer folds them into a checksum):
//! 1. baseline: producer alone, consumer alone (no channel, a 1 KiB local buffer);
//! 2. `p0`: both baselines at once on the pinned pair, sharing nothing;
//! 3. loop 1 of Figure 2: padding between buffers, 1 … 256 bytes (hspc keeps the
//!    hand-off words on their own lines always, so this is `p6`'s buffer padding);
//! 4. loop 2 of Figure 2 (`p4_adjuststack`): the producer's stack shifted by 0,
//!    32 … 1024 bytes relative to the consumer's ([`hspc::stack::with_stack_offset`]);
//! 5. buffer sizes 256 B … 1.5 MB (Figure 2's list) with 3 buffers, then
//!    2, 4 and 5 buffers for the fastest [`KEEP_SIZES`] sizes;
//! 6. every wait strategy, and the ring mode, on the fastest layout.
//!
//! Stage Two (a real workload): the producer computes a recursive Fibonacci number
//! with some interpreter-like work per call ([`WORK_STEPS`]), emitting an enter and
//! a return event per call (128-byte events, then the seed's shrunk 24-byte ones);
//! the consumer computes a profile (calls per function and depth, with a shadow
//! stack that checks every return). Lines: Optimal (no profiling), Achievable
//! (events written into a buffer nobody reads), Upper bound (one thread computes
//! and profiles); then buffer sizes × wait strategies × affinity (seed 004 §4.1:
//! the two threads pinned to the pair, then left unpinned).
//!
//! Each step may use its share of the budget; a step that runs out records how many
//! of its configurations it measured. Every run checks its events (count and order;
//! Stage Two compares the profile with the single-thread one).

use crate::model::{ProbeResult, Status, Table};
use crate::placement::pairs::{self, PairCpus, Relation};
use crate::topology::Topology;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement};
use hspc::stack::{with_stack_offset, STACK_OFFSETS};
use hspc::{Config, Mode, WaitStrategy};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

/// Buffer sizes of seed 004 Figure 2, in bytes.
pub const STAGE_ONE_BUFFER_BYTES: [usize; 25] = [
    256, 512, 768, 1024, 1200, 1600, 2000, 2048, 2200, 2500, 3000, 3500, 4096, 4500, 5000, 5500,
    6000, 7000, 8192, 10000, 16384, 32768, 65536, 1_000_000, 1_500_000,
];
/// Padding values of loop 1 (Figure 2), in bytes.
pub const PADDINGS: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
/// Numbers of buffers of Figure 2.
pub const BUFFER_COUNTS: [usize; 4] = [2, 3, 4, 5];
/// Buffer sizes carried from the 3-buffer sweep into the buffer-count sweep.
pub const KEEP_SIZES: usize = 4;
/// Event sizes Stage One can move; other sizes round up to the next one.
pub const EVENT_SIZES: [usize; 12] = [1, 2, 4, 8, 16, 24, 32, 64, 128, 256, 512, 1024];
/// Stage Two's event sizes, in the seed's order (128 B, then shrunk to 24 B).
pub const STAGE_TWO_EVENT_BYTES: [usize; 2] = [128, 24];
/// Buffer sizes of Stage Two (after the Stage One best, which is tried first).
pub const STAGE_TWO_BUFFER_BYTES: [usize; 6] = [4096, 65536, 16384, 1024, 262_144, 1_048_576];
/// Interpreter-like work per Fibonacci call (dependent multiply-adds), so the
/// producer is not only calls and events.
pub const WORK_STEPS: u32 = 200;
/// The producer looks at the clock every this-many-plus-one events.
const CUT_CHECK_MASK: u64 = 0xfff;
/// Default budget of `tune channel`, in seconds.
pub const DEFAULT_BUDGET_S: f64 = 60.0;
/// Default event size of Stage One, in bytes (the seed's shrunk profiling event).
pub const DEFAULT_EVENT_BYTES: usize = 24;
/// Shares of the budget (from the start) at which each step stops starting
/// configurations: padding, stack offset, buffer size, buffer count, wait strategy
/// (Stage One), then 128-byte and 24-byte Stage Two. Every step measures at least
/// its first configuration while the whole budget lasts.
const STEP_ENDS: [f64; 7] = [0.10, 0.16, 0.29, 0.37, 0.45, 0.70, 0.95];

/// The event size Stage One uses for `n` requested bytes.
pub fn event_size_for(n: usize) -> Result<usize, String> {
    if n == 0 {
        return Err("--event-bytes 0: an event needs at least 1 byte".into());
    }
    EVENT_SIZES
        .iter()
        .copied()
        .find(|&s| s >= n)
        .ok_or_else(|| format!("--event-bytes {n}: at most {} bytes", EVENT_SIZES[11]))
}

/// Validated options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes per Stage One event, as asked.
    pub event_bytes: usize,
    /// Seconds the whole tuning may take.
    pub budget_s: f64,
}

/// One measured configuration (or baseline line) of a step.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was run.
    pub label: String,
    /// The channel configuration, for channel runs.
    pub config: Option<Config>,
    /// Events moved (or produced).
    pub events: u64,
    /// Wall time.
    pub secs: f64,
    /// Stopped at the per-run time limit before all its events were sent.
    pub cut: bool,
    /// Stage Two: the producer and consumer pinned to the pair (affinity on) or
    /// left to the OS (off). `None` in Stage One, which always pins.
    pub pinned: Option<bool>,
    /// Stage One channel runs: context switches of the producer and of the
    /// consumer thread from the start gate to their last event.
    pub switches: Option<[Switches; 2]>,
}

/// Context switches of one thread (`getrusage(RUSAGE_THREAD)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Switches {
    /// The thread gave up the CPU (blocked in a system call: futex, sleep…).
    pub voluntary: u64,
    /// The OS took the CPU away (time slice over, another task preferred).
    pub involuntary: u64,
}

impl Switches {
    /// Both kinds.
    pub fn total(&self) -> u64 {
        self.voluntary + self.involuntary
    }

    /// The calling thread's switches so far; `None` where the OS does not say.
    #[cfg(target_os = "linux")]
    pub fn of_this_thread() -> Option<Self> {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is valid for writes of one `rusage`; RUSAGE_THREAD (Linux
        // 2.6.26+) fills it for the calling thread and touches nothing else.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: zero-initialised (a valid `rusage`) and filled by the kernel.
        let ru = unsafe { ru.assume_init() };
        Some(Self {
            voluntary: u64::try_from(ru.ru_nvcsw).unwrap_or(0),
            involuntary: u64::try_from(ru.ru_nivcsw).unwrap_or(0),
        })
    }

    /// The calling thread's switches so far; `None` where the OS does not say.
    #[cfg(not(target_os = "linux"))]
    pub fn of_this_thread() -> Option<Self> {
        None
    }

    /// Switches between `before` and `self`.
    fn since(self, before: Self) -> Self {
        Self {
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
        }
    }
}

/// Switches between a reading before and one after, where both exist.
fn switches_between(before: Option<Switches>, after: Option<Switches>) -> Option<Switches> {
    Some(after?.since(before?))
}

/// One Stage One channel run.
struct Run {
    /// From the start gate to the consumer's last event.
    secs: f64,
    /// Events moved.
    moved: u64,
    /// Producer's and consumer's context switches during the run.
    switches: Option<[Switches; 2]>,
}

impl Row {
    /// Seconds per event.
    pub fn per_event(&self) -> f64 {
        self.secs / self.events.max(1) as f64
    }
}

/// One step (a table).
#[derive(Debug, Clone)]
pub struct Step {
    /// Title.
    pub title: String,
    /// Rows in the order run.
    pub rows: Vec<Row>,
    /// Notes (budget cuts, what was not run).
    pub notes: Vec<String>,
    /// The reference time the `×` column divides by, if any.
    pub reference_s: Option<f64>,
    /// Show the context-switch columns.
    pub show_switches: bool,
}

impl Step {
    fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            rows: Vec::new(),
            notes: Vec::new(),
            reference_s: None,
            show_switches: false,
        }
    }

    /// The channel configuration of this step with the least time per event.
    pub fn best(&self) -> Option<&Row> {
        self.rows
            .iter()
            .filter(|r| r.config.is_some() && r.events > 0)
            .min_by(|a, b| a.per_event().total_cmp(&b.per_event()))
    }
}

/// Everything `tune channel` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// Where the pair ran (`other-core`, ...) and its CPUs.
    pub placement: String,
    /// The pair's CPUs.
    pub cpus: PairCpus,
    /// Stage One's event size (after rounding).
    pub event_bytes: usize,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// The configuration to write.
    pub best: Config,
    /// Whether it was measured pinned to the pair (affinity on).
    pub best_pinned: bool,
    /// Why that one.
    pub best_why: String,
}

/// Budget bookkeeping.
struct Budget {
    start: Instant,
    total: f64,
    /// Longest one run may take.
    run_limit_s: f64,
}

impl Budget {
    /// When a run started now must stop: its limit, or the end of the budget.
    fn run_cut(&self) -> Instant {
        let end = self.start + std::time::Duration::from_secs_f64(self.total);
        end.min(Instant::now() + std::time::Duration::from_secs_f64(self.run_limit_s))
    }

    fn left_until(&self, share: f64) -> bool {
        self.start.elapsed().as_secs_f64() < share * self.total
    }
}

#[derive(Clone, Copy)]
struct Ev<const N: usize>([u8; N]);

impl<const N: usize> Ev<N> {
    #[inline(always)]
    fn new(seq: u64) -> Self {
        let mut b = [0u8; N];
        let k = N.min(8);
        b[..k].copy_from_slice(&seq.to_le_bytes()[..k]);
        Self(b)
    }
    #[inline(always)]
    fn word(&self) -> u64 {
        let mut w = [0u8; 8];
        let k = N.min(8);
        w[..k].copy_from_slice(&self.0[..k]);
        u64::from_le_bytes(w)
    }
    #[inline(always)]
    fn matches(&self, seq: u64) -> bool {
        let k = N.min(8);
        self.0[..k] == seq.to_le_bytes()[..k]
    }
}

fn pin(cpu: Option<u32>) {
    if let Some(c) = cpu {
        // A refused pin leaves the thread unpinned; the placement line says where
        // the pair was meant to run.
        let _ = crate::affinity::pin_checked(c);
    }
}

/// Stage One's baseline producer: `m` events into a 1 KiB local buffer.
fn baseline_producer<const N: usize>(m: u64) -> f64 {
    let mut buf = vec![Ev::<N>::new(0); (1024 / N).max(1)];
    let t = Instant::now();
    let mut i = 0;
    for k in 0..m {
        buf[i] = Ev::new(k);
        i += 1;
        if i == buf.len() {
            i = 0;
            black_box(&mut buf);
        }
    }
    black_box(&buf);
    t.elapsed().as_secs_f64()
}

/// Stage One's baseline consumer: `m` events read from a 1 KiB local buffer.
fn baseline_consumer<const N: usize>(m: u64) -> f64 {
    let buf: Vec<Ev<N>> = (0..(1024 / N).max(1) as u64).map(Ev::new).collect();
    let t = Instant::now();
    let mut sum = 0u64;
    let mut i = 0;
    for _ in 0..m {
        sum = sum.wrapping_mul(31).wrapping_add(black_box(&buf[i]).word());
        i += 1;
        if i == buf.len() {
            i = 0;
        }
    }
    black_box(sum);
    t.elapsed().as_secs_f64()
}

/// Both baselines at once on the pair (`p0_add_parallel`): the later end.
fn baseline_parallel<const N: usize>(m: u64, cpus: PairCpus) -> f64 {
    let gate = Barrier::new(2);
    std::thread::scope(|s| {
        let p = s.spawn(|| {
            pin(cpus.0);
            gate.wait();
            baseline_producer::<N>(m)
        });
        let c = s.spawn(|| {
            pin(cpus.1);
            gate.wait();
            baseline_consumer::<N>(m)
        });
        let a = p.join().unwrap_or(f64::NAN);
        let b = c.join().unwrap_or(f64::NAN);
        a.max(b)
    })
}

/// Stage One channel run: `m` events through a channel made with `config`,
/// blocking calls; the time from the start gate to the consumer's last event, and
/// the events moved (fewer than `m` when the producer stopped at `cut`).
fn channel_run<const N: usize>(
    config: Config,
    m: u64,
    cpus: PairCpus,
    cut: Instant,
) -> Result<Run, String> {
    let (mut tx, mut rx) = hspc::channel::<Ev<N>>(config).map_err(|e| e.to_string())?;
    let gate = Barrier::new(2);
    std::thread::scope(|s| {
        let p = s.spawn(|| {
            pin(cpus.0);
            gate.wait();
            let before = Switches::of_this_thread();
            // The producer's loop runs `stack_offset_bytes` lower on its stack
            // than the consumer's (seed 004 `p4_adjuststack`).
            let sent = with_stack_offset(config.stack_offset_bytes, move || {
                let mut sent = 0;
                for k in 0..m {
                    if (k & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= cut)
                        || tx.push(Ev::new(k)).is_err()
                    {
                        break;
                    }
                    sent += 1;
                }
                drop(tx);
                sent
            });
            (sent, switches_between(before, Switches::of_this_thread()))
        });
        let c = s.spawn(|| {
            pin(cpus.1);
            gate.wait();
            let before = Switches::of_this_thread();
            let t = Instant::now();
            let (mut k, mut bad, mut sum) = (0u64, 0u64, 0u64);
            while let Ok(e) = rx.pop() {
                bad += u64::from(!e.matches(k));
                sum = sum.wrapping_mul(31).wrapping_add(e.word());
                k += 1;
            }
            let secs = t.elapsed().as_secs_f64();
            black_box(sum);
            let sw = switches_between(before, Switches::of_this_thread());
            (secs, k, bad, sw)
        });
        let (secs, got, bad, csw) = c.join().map_err(|_| "the consumer panicked".to_string())?;
        let (sent, psw) = p.join().map_err(|_| "the producer panicked".to_string())?;
        if got != sent || bad != 0 {
            return Err(format!(
                "{}: {got} of {sent} events arrived, {bad} out of order",
                describe(&config)
            ));
        }
        Ok(Run {
            secs,
            moved: got,
            switches: psw.zip(csw).map(|(p, c)| [p, c]),
        })
    })
}

/// Events to move so that every buffer is handed over a few times.
fn events_for<const N: usize>(config: &Config, m: u64) -> u64 {
    let cap = config
        .geometry_for(N, 1)
        .map(|g| g.capacity as u64)
        .unwrap_or(0);
    m.max(4 * cap)
}

fn describe(c: &Config) -> String {
    let stack = match c.stack_offset_bytes {
        0 => String::new(),
        b => format!(", stack +{b} B"),
    };
    let what = match c.mode {
        Mode::NBuffer => format!(
            "{} × {} B, pad {} B, {}",
            c.buffers, c.buffer_bytes, c.padding_bytes, c.wait
        ),
        Mode::Ring => format!(
            "ring {} B, pad {} B, {}",
            c.buffers * c.buffer_bytes,
            c.padding_bytes,
            c.wait
        ),
    };
    what + &stack
}

/// Runs `configs` while the budget share lasts; rows go into `step`.
fn sweep<const N: usize>(
    step: &mut Step,
    configs: &[Config],
    m: u64,
    cpus: PairCpus,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<(), String> {
    for (i, c) in configs.iter().enumerate() {
        if !budget.left_until(share) && (i > 0 || !budget.left_until(1.0)) {
            step.notes.push(format!(
                "budget: measured {i} of {} configurations",
                configs.len()
            ));
            break;
        }
        let events = events_for::<N>(c, m);
        let run = channel_run::<N>(*c, events, cpus, budget.run_cut())?;
        let (secs, moved) = (run.secs, run.moved);
        progress(&format!(
            "{}: {} ({}/{}) {:.1} ms",
            step.title,
            describe(c),
            i + 1,
            configs.len(),
            secs * 1e3
        ));
        step.rows.push(Row {
            label: describe(c),
            config: Some(*c),
            events: moved,
            secs,
            cut: moved < events,
            pinned: None,
            switches: run.switches,
        });
    }
    Ok(())
}

/// Stage One for N-byte events; returns its steps and its fastest configuration.
fn stage_one<const N: usize>(
    run_s: f64,
    cpus: PairCpus,
    budget: &Budget,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Step>, Config), String> {
    let mut steps = Vec::new();
    // Calibrate the run length on the producer alone.
    let probe_m = 1u64 << 16;
    let per_event = baseline_producer::<N>(probe_m).max(1e-6) / probe_m as f64;
    let m = ((run_s / per_event) as u64).clamp(1 << 12, 1 << 26);

    let mut base = Step::new("stage one: baseline");
    let mut alone = |label: &str, f: fn(u64) -> f64, cpu: Option<u32>| {
        let secs = std::thread::scope(|s| {
            s.spawn(|| {
                pin(cpu);
                f(m).min(f(m))
            })
            .join()
            .unwrap_or(f64::NAN)
        });
        base.rows.push(Row {
            label: label.into(),
            config: None,
            events: m,
            secs,
            cut: false,
            pinned: None,
            switches: None,
        });
        secs
    };
    let p = alone("producer alone", baseline_producer::<N>, cpus.0);
    let c = alone("consumer alone", baseline_consumer::<N>, cpus.1);
    let baseline = p.max(c);
    // Every row compares its time per event with the baseline's.
    let per_event_base = baseline / m as f64;
    base.reference_s = Some(per_event_base);
    base.notes.push(format!(
        "baseline = the slower of the two ({}): {:.2} ns per event",
        if c > p { "consumer" } else { "producer" },
        baseline / m as f64 * 1e9
    ));
    let par = baseline_parallel::<N>(m, cpus).min(baseline_parallel::<N>(m, cpus));
    base.rows.push(Row {
        label: "p0: both at once, sharing nothing".into(),
        config: None,
        events: m,
        secs: par,
        cut: false,
        pinned: None,
        switches: None,
    });
    progress(&format!(
        "stage one: baseline {:.1} ms, p0 {:.1} ms",
        baseline * 1e3,
        par * 1e3
    ));
    steps.push(base);

    let start = Config::n_buffer(3, 4096);
    let mut pad = Step::new("stage one: padding between buffers (loop 1)");
    let configs: Vec<Config> = PADDINGS.iter().map(|&p| start.with_padding(p)).collect();
    sweep::<N>(&mut pad, &configs, m, cpus, budget, STEP_ENDS[0], progress)?;
    let padding = pad
        .best()
        .and_then(|r| r.config)
        .map(|c| c.padding_bytes)
        .unwrap_or(start.padding_bytes);
    steps.push(pad);

    let mut stack = Step::new("stage one: producer stack offset (loop 2)");
    let configs: Vec<Config> = STACK_OFFSETS
        .iter()
        .map(|&b| start.with_padding(padding).with_stack_offset(b))
        .collect();
    sweep::<N>(
        &mut stack,
        &configs,
        m,
        cpus,
        budget,
        STEP_ENDS[1],
        progress,
    )?;
    stack.notes.push(
        "stack +N B: the producer's loop runs N bytes lower on its stack than the \
         consumer's (hspc::stack::with_stack_offset; seed 004 p4_adjuststack)"
            .into(),
    );
    let stack_offset = stack
        .best()
        .and_then(|r| r.config)
        .map(|c| c.stack_offset_bytes)
        .unwrap_or(0);
    // The steps from loop 2 on all carry the chosen padding and stack offset; the
    // layout and Stage One's best are picked among them, so that a padding-step row
    // (stack offset 0) that won by noise does not undo loop 2.
    let tuned_from = steps.len();
    steps.push(stack);

    let mut sizes = Step::new("stage one: buffer size, 3 buffers");
    let configs: Vec<Config> = STAGE_ONE_BUFFER_BYTES
        .iter()
        .filter(|&&b| b >= N)
        .map(|&b| {
            Config::n_buffer(3, b)
                .with_padding(padding)
                .with_stack_offset(stack_offset)
        })
        .collect();
    sweep::<N>(
        &mut sizes,
        &configs,
        m,
        cpus,
        budget,
        STEP_ENDS[2],
        progress,
    )?;
    let mut ranked: Vec<(f64, usize)> = sizes
        .rows
        .iter()
        .filter_map(|r| r.config.map(|c| (r.secs / r.events as f64, c.buffer_bytes)))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    steps.push(sizes);

    let mut counts = Step::new(format!(
        "stage one: buffers × the {KEEP_SIZES} fastest sizes"
    ));
    let configs: Vec<Config> = ranked
        .iter()
        .take(KEEP_SIZES)
        .flat_map(|&(_, b)| {
            BUFFER_COUNTS.iter().filter(|&&n| n != 3).map(move |&n| {
                Config::n_buffer(n, b)
                    .with_padding(padding)
                    .with_stack_offset(stack_offset)
            })
        })
        .collect();
    sweep::<N>(
        &mut counts,
        &configs,
        m,
        cpus,
        budget,
        STEP_ENDS[3],
        progress,
    )?;
    steps.push(counts);

    let layout = best_per_event(&steps[tuned_from..])
        .unwrap_or(start.with_padding(padding).with_stack_offset(stack_offset));
    let mut waits = Step::new("stage one: wait strategy");
    waits.show_switches = true;
    let mut configs: Vec<Config> = WaitStrategy::ALL
        .iter()
        .map(|&w| layout.with_wait(w))
        .collect();
    // The ring publishes every event; with a sleeping strategy each publication
    // pays a fence, so it is measured with the spinning one.
    configs.push(Config {
        mode: Mode::Ring,
        wait: WaitStrategy::SpinPause,
        ..layout
    });
    sweep::<N>(
        &mut waits,
        &configs,
        m,
        cpus,
        budget,
        STEP_ENDS[4],
        progress,
    )?;
    waits.notes.push(
        "ctx sw: context switches of each thread (getrusage RUSAGE_THREAD) from the start \
         gate to its last event, per 10^6 events, voluntary ones in parentheses; spinlock, \
         spin_backoff and spin_pause make no system call, so theirs are the OS taking the CPU"
            .into(),
    );
    steps.push(waits);
    for s in &mut steps[1..] {
        s.reference_s = Some(per_event_base);
    }
    let best = best_per_event(&steps[tuned_from..]).unwrap_or(layout);
    Ok((steps, best))
}

/// The configuration with the least time per event over the steps.
fn best_per_event(steps: &[Step]) -> Option<Config> {
    steps
        .iter()
        .flat_map(|s| s.rows.iter())
        .filter_map(|r| r.config.map(|c| (r.secs / r.events.max(1) as f64, c)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|x| x.1)
}

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
fn fib_channel<const W: usize>(
    config: Config,
    n: u64,
    cpus: PairCpus,
    reference: &ProfileData,
    cut: Instant,
) -> Result<(f64, u64, bool), String> {
    let (tx, mut rx) = hspc::channel::<Prof<W>>(config).map_err(|e| e.to_string())?;
    let gate = Barrier::new(2);
    std::thread::scope(|s| {
        let prod = s.spawn(|| {
            pin(cpus.0);
            let mut sink = ToChannel {
                tx: Some(tx),
                seq: 0,
                cut,
            };
            gate.wait();
            with_stack_offset(config.stack_offset_bytes, || {
                black_box(fib(n, 0, &mut sink));
            });
            (sink.seq, sink.tx.is_none())
        });
        let c = s.spawn(|| {
            pin(cpus.1);
            let mut p = ProfileData::default();
            gate.wait();
            let t = Instant::now();
            while let Ok(e) = rx.pop() {
                p.record(&e);
            }
            (t.elapsed().as_secs_f64(), p)
        });
        let (secs, p) = c.join().map_err(|_| "the consumer panicked".to_string())?;
        let (sent, was_cut) = prod
            .join()
            .map_err(|_| "the producer panicked".to_string())?;
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
            return Ok((secs, sent, true));
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
        Ok((secs, p.events, false))
    })
}

/// "on" (pinned to the pair) or "off" (left to the OS).
fn affinity_name(pinned: bool) -> &'static str {
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

/// Stage Two for `W`-word events; returns the step and its fastest configuration
/// with its affinity (true: pinned).
fn stage_two<const W: usize>(
    run_s: f64,
    layout: Config,
    cpus: PairCpus,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<(Step, Option<(Config, bool)>), String> {
    let bytes = W * 8;
    let mut step = Step::new(format!("stage two: fib, {bytes}-byte events"));
    // Choose n so that the unprofiled run takes about `run_s`.
    let n0 = 18u64;
    let (t0, _) = time(|| fib(n0, 0, &mut Nothing));
    let grow = (run_s / t0.max(1e-7)).ln() / 1.618f64.ln();
    let n = (n0 as f64 + grow).round().clamp(10.0, 34.0) as u64;
    let on_producer = |f: &mut (dyn FnMut() -> f64 + Send)| -> f64 {
        std::thread::scope(|s| {
            s.spawn(|| {
                pin(cpus.0);
                f()
            })
            .join()
            .unwrap_or(f64::NAN)
        })
    };
    // Reference lines: best of two runs (the first also warms caches and clocks).
    let optimal = on_producer(&mut || {
        let a = time(|| black_box(fib(n, 0, &mut Nothing))).0;
        a.min(time(|| black_box(fib(n, 0, &mut Nothing))).0)
    });
    let achievable = on_producer(&mut || {
        let mut sink = WriteOnly::<W> {
            buf: vec![Prof::new(0, 0, 0, 0, 0); (layout.buffer_bytes / bytes).max(1)],
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
    let events = reference.events;
    if reference.bad != 0 || !reference.stack.is_empty() {
        return Err("the single-thread profile is inconsistent".into());
    }
    for (label, secs) in [
        ("Optimal: fib, no profiling", optimal),
        ("Achievable: events into a buffer nobody reads", achievable),
        ("Upper bound: fib and profiling in one thread", upper),
    ] {
        step.rows.push(Row {
            label: label.into(),
            config: None,
            events,
            secs,
            cut: false,
            pinned: Some(cpus.0.is_some()),
            switches: None,
        });
    }
    step.reference_s = Some(achievable / events.max(1) as f64);
    step.notes.push(format!(
        "fib({n}): {events} events; {WORK_STEPS} multiply-adds of work per call"
    ));
    progress(&format!(
        "stage two {bytes} B: optimal {:.1} ms, achievable {:.1} ms, upper bound {:.1} ms",
        optimal * 1e3,
        achievable * 1e3,
        upper * 1e3
    ));
    let mut sizes = vec![layout.buffer_bytes];
    sizes.extend(STAGE_TWO_BUFFER_BYTES);
    let mut uniq: Vec<usize> = Vec::new();
    for b in sizes {
        if b >= bytes && !uniq.contains(&b) {
            uniq.push(b);
        }
    }
    let sizes = uniq;
    let configs: Vec<Config> = sizes
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
        .collect();
    // Each configuration pinned (affinity on), then unpinned (off), next to each
    // other so that a budget cut leaves pairs; with no pair to pin to, only off.
    let affinities: &[bool] = if cpus.0.is_some() || cpus.1.is_some() {
        &[true, false]
    } else {
        &[false]
    };
    let runs: Vec<(Config, bool)> = configs
        .iter()
        .flat_map(|&c| affinities.iter().map(move |&a| (c, a)))
        .collect();
    for (i, &(c, pinned)) in runs.iter().enumerate() {
        if !budget.left_until(share) && (i > 0 || !budget.left_until(1.0)) {
            step.notes.push(format!(
                "budget: measured {i} of {} runs ({} configurations × affinity {})",
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
        let pair = if pinned { cpus } else { (None, None) };
        let (secs, moved, cut) = fib_channel::<W>(c, n, pair, &reference, budget.run_cut())?;
        progress(&format!(
            "{}: {}, affinity {} ({}/{}) {:.1} ms",
            step.title,
            describe(&c),
            affinity_name(pinned),
            i + 1,
            runs.len(),
            secs * 1e3
        ));
        step.rows.push(Row {
            label: describe(&c),
            config: Some(c),
            events: moved,
            secs,
            cut,
            pinned: Some(pinned),
            switches: None,
        });
    }
    if let Some(note) = affinity_note(&step) {
        step.notes.push(note);
    }
    let best = step.best().and_then(|r| r.config.zip(r.pinned));
    Ok((step, best))
}

/// The pair tuning runs on: another core, else the SMT sibling, else one CPU.
pub fn tuning_pair(topo: &Topology) -> (String, PairCpus) {
    let all = pairs::pairs(topo);
    for (rel, name) in [
        (Relation::OtherCore, "other-core"),
        (Relation::SmtSibling, "same-core"),
        (Relation::SameCpu, "same-cpu"),
    ] {
        if let Some((_, Ok(cpus))) = all.iter().find(|(r, _)| *r == rel) {
            return (name.into(), *cpus);
        }
    }
    ("unpinned".into(), (None, None))
}

/// Runs both stages under the budget. `progress` gets one line per measurement.
pub fn tune_channel(
    opts: &Options,
    topo: &Topology,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, String> {
    let event_bytes = event_size_for(opts.event_bytes)?;
    // Runs of about budget/300 (channel runs take longer than the producer alone);
    // a configuration that is far slower is cut at 10× that and measured on the
    // events it moved.
    let run_s = (opts.budget_s / 300.0).clamp(0.002, 0.1);
    let budget = Budget {
        start: Instant::now(),
        total: opts.budget_s,
        run_limit_s: (10.0 * run_s).max(0.05),
    };
    let (placement, cpus) = tuning_pair(topo);
    progress(&format!(
        "tuning on {placement} {cpus:?}, {event_bytes}-byte events, budget {:.0} s",
        opts.budget_s
    ));
    if event_bytes != opts.event_bytes {
        progress(&format!(
            "{}-byte events were measured as {event_bytes}-byte ones",
            opts.event_bytes
        ));
    }
    let (mut steps, one_best) = match event_bytes {
        1 => stage_one::<1>(run_s, cpus, &budget, progress),
        2 => stage_one::<2>(run_s, cpus, &budget, progress),
        4 => stage_one::<4>(run_s, cpus, &budget, progress),
        8 => stage_one::<8>(run_s, cpus, &budget, progress),
        16 => stage_one::<16>(run_s, cpus, &budget, progress),
        24 => stage_one::<24>(run_s, cpus, &budget, progress),
        32 => stage_one::<32>(run_s, cpus, &budget, progress),
        64 => stage_one::<64>(run_s, cpus, &budget, progress),
        128 => stage_one::<128>(run_s, cpus, &budget, progress),
        256 => stage_one::<256>(run_s, cpus, &budget, progress),
        512 => stage_one::<512>(run_s, cpus, &budget, progress),
        _ => stage_one::<1024>(run_s, cpus, &budget, progress),
    }?;
    // Stage Two: 128-byte events get the first half of what is left, 24-byte the rest.
    let (s128, b128) = stage_two::<16>(run_s, one_best, cpus, &budget, STEP_ENDS[5], progress)?;
    let (s24, b24) = stage_two::<3>(run_s, one_best, cpus, &budget, STEP_ENDS[6], progress)?;
    steps.push(s128);
    steps.push(s24);
    let (best, best_pinned, best_why) = match (event_bytes, b24, b128) {
        (24, Some((b, a)), _) => (
            b,
            a,
            "the fastest of Stage Two for 24-byte events".to_string(),
        ),
        (128, _, Some((b, a))) => (
            b,
            a,
            "the fastest of Stage Two for 128-byte events".to_string(),
        ),
        _ => (
            one_best,
            cpus.0.is_some(),
            format!("the fastest of Stage One for {event_bytes}-byte events"),
        ),
    };
    let best_why = format!("{best_why}, affinity {}", affinity_name(best_pinned));
    Ok(Report {
        placement,
        cpus,
        event_bytes,
        steps,
        best,
        best_pinned,
        best_why,
    })
}

/// The report as tables: one per step, with notes.
pub fn render(r: &Report) -> String {
    let mut out = format!(
        "tune channel: {}-byte events (Stage One), producer on CPU {}, consumer on CPU {} ({})\n",
        r.event_bytes,
        cpu_name(r.cpus.0),
        cpu_name(r.cpus.1),
        r.placement
    );
    for s in &r.steps {
        let mut t = comfy_table::Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(crate::render::terminal::WIDTH);
        let reference = if s.title.starts_with("stage two") {
            "× Achievable"
        } else {
            "× baseline"
        };
        let with_affinity = s.rows.iter().any(|r| r.pinned.is_some());
        let mut header = vec!["run"];
        if with_affinity {
            header.push("affinity");
        }
        header.extend(["time", "events/s", reference]);
        if s.show_switches {
            header.extend([
                "producer ctx sw / 10⁶ events",
                "consumer ctx sw / 10⁶ events",
            ]);
        }
        t.set_header(header);
        let best = s.best();
        for row in &s.rows {
            let per_event = row.secs / row.events.max(1) as f64;
            let mark = if best.is_some_and(|b| std::ptr::eq(b, row)) {
                " ←"
            } else {
                ""
            };
            let cut = if row.cut { " (cut)" } else { "" };
            let mut cells = vec![Cell::new(format!("{}{cut}{mark}", row.label))];
            if with_affinity {
                cells.push(Cell::new(row.pinned.map(affinity_name).unwrap_or_default()));
            }
            cells.extend([
                Cell::new(crate::units::fmt_value("s", row.secs))
                    .set_alignment(CellAlignment::Right),
                Cell::new(crate::units::fmt_value(
                    "events_per_s",
                    row.events as f64 / row.secs.max(1e-12),
                ))
                .set_alignment(CellAlignment::Right),
                Cell::new(
                    s.reference_s
                        .map(|reference| format!("{:.2}", per_event / reference))
                        .unwrap_or_default(),
                )
                .set_alignment(CellAlignment::Right),
            ]);
            if s.show_switches {
                for k in 0..2 {
                    let text = row
                        .switches
                        .map(|sw| {
                            format!(
                                "{:.1} ({:.1})",
                                per_million(sw[k].total(), row.events),
                                per_million(sw[k].voluntary, row.events)
                            )
                        })
                        .unwrap_or_default();
                    cells.push(Cell::new(text).set_alignment(CellAlignment::Right));
                }
            }
            t.add_row(cells);
        }
        if s.rows.is_empty() {
            out.push_str(&format!("\n{}: nothing measured\n", s.title));
        } else {
            out.push_str(&format!("\n{}:\n{t}\n", s.title));
        }
        for n in &s.notes {
            out.push_str(&format!("  {n}\n"));
        }
    }
    out.push_str(&format!("\nbest: {} ({})\n", describe(&r.best), r.best_why));
    out
}

/// `n` per 10^6 of `events`.
fn per_million(n: u64, events: u64) -> f64 {
    n as f64 * 1e6 / events.max(1) as f64
}

fn cpu_name(c: Option<u32>) -> String {
    c.map(|c| c.to_string()).unwrap_or_else(|| "any".into())
}

/// Id of the run-file entry `tune channel --run-file` writes.
pub const RUN_FILE_ID: &str = "tune-channel";

/// The report as a run-file entry: one table per step (time, events, events/s and
/// the ratio to the step's reference, per row), the best configuration in
/// `params.best_config` and in words among the findings.
pub fn to_probe_result(r: &Report, opts: &Options, elapsed_s: f64) -> ProbeResult {
    let mut p = ProbeResult::new(
        RUN_FILE_ID,
        "seed 004 Stage One and Stage Two for the hspc channel, pruned to a budget",
        Status::Completed,
    );
    p.params.insert("event_bytes".into(), r.event_bytes.into());
    p.params
        .insert("event_bytes_asked".into(), opts.event_bytes.into());
    p.params.insert("budget_s".into(), opts.budget_s.into());
    p.params
        .insert("placement".into(), r.placement.clone().into());
    p.params
        .insert("cpus".into(), serde_json::json!([r.cpus.0, r.cpus.1]));
    p.params.insert(
        "best_config".into(),
        serde_json::to_value(r.best).unwrap_or_default(),
    );
    p.params
        .insert("best_affinity".into(), affinity_name(r.best_pinned).into());
    p.params
        .insert("work_steps_per_call".into(), WORK_STEPS.into());
    p.elapsed_s = elapsed_s;
    for s in &r.steps {
        let reference = if s.title.starts_with("stage two") {
            "x_achievable"
        } else {
            "x_baseline"
        };
        let with_affinity = s.rows.iter().any(|r| r.pinned.is_some());
        let rows = s
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![
                    serde_json::json!(row.label),
                    serde_json::json!(row.secs),
                    serde_json::json!(row.events),
                    serde_json::json!(row.events as f64 / row.secs.max(1e-12)),
                    s.reference_s
                        .map(|x| serde_json::json!(row.per_event() / x))
                        .unwrap_or(serde_json::Value::Null),
                    serde_json::json!(row.cut),
                ];
                if with_affinity {
                    cells.push(serde_json::json!(row.pinned.map(affinity_name)));
                }
                if s.show_switches {
                    for k in 0..2 {
                        for v in [
                            row.switches
                                .map(|sw| per_million(sw[k].total(), row.events)),
                            row.switches
                                .map(|sw| per_million(sw[k].voluntary, row.events)),
                        ] {
                            cells.push(serde_json::json!(v));
                        }
                    }
                }
                cells
            })
            .collect();
        let mut columns: Vec<String> = vec![
            "run".into(),
            "seconds".into(),
            "events".into(),
            "events_per_s".into(),
            reference.into(),
            "cut".into(),
        ];
        if with_affinity {
            columns.push("affinity".into());
        }
        if s.show_switches {
            for side in ["producer", "consumer"] {
                columns.push(format!("{side}_ctx_sw_per_1e6"));
                columns.push(format!("{side}_voluntary_per_1e6"));
            }
        }
        p.tables.push(Table {
            name: s.title.clone(),
            columns,
            rows,
        });
        p.findings
            .extend(s.notes.iter().map(|n| format!("{}: {n}", s.title)));
    }
    p.findings
        .push(format!("best: {} ({})", describe(&r.best), r.best_why));
    p
}

/// The configuration file's text (JSON, as `hspc::Config` deserializes it).
pub fn config_json(c: &Config) -> String {
    let mut s = serde_json::to_string_pretty(c).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_sizes_round_up_and_reject_nonsense() {
        assert_eq!(event_size_for(1).unwrap(), 1);
        assert_eq!(event_size_for(3).unwrap(), 4);
        assert_eq!(event_size_for(24).unwrap(), 24);
        assert_eq!(event_size_for(100).unwrap(), 128);
        assert!(event_size_for(0).unwrap_err().contains("at least 1"));
        assert!(event_size_for(5000).unwrap_err().contains("at most 1024"));
    }

    #[test]
    fn the_config_file_round_trips() {
        let c = Config::n_buffer(4, 2500)
            .with_padding(32)
            .with_wait(WaitStrategy::SpinBackoff)
            .with_stack_offset(512);
        let back: Config = serde_json::from_str(&config_json(&c)).unwrap();
        assert_eq!(back, c);
    }

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
            let (_, moved, cut) = fib_channel::<3>(c, 12, (None, None), &reference, far).unwrap();
            assert_eq!((moved, cut), (reference.events, false));
            let (_, moved, cut) =
                fib_channel::<3>(c, 20, (None, None), &ProfileData::default(), Instant::now())
                    .unwrap();
            assert!(cut && moved < 2 * 21_891);
        }
    }

    #[test]
    fn affinity_off_is_compared_with_on_for_the_same_config() {
        let c = Config::n_buffer(3, 4096);
        let row = |config: Option<Config>, secs: f64, pinned: bool| Row {
            label: String::new(),
            config,
            events: 1000,
            secs,
            cut: false,
            pinned: Some(pinned),
            switches: None,
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

    #[test]
    fn stage_one_runs_check_their_events() {
        let c = Config::n_buffer(2, 256);
        let far = Instant::now() + std::time::Duration::from_secs(30);
        assert_eq!(
            channel_run::<24>(c, 10_000, (None, None), far)
                .unwrap()
                .moved,
            10_000
        );
        assert_eq!(
            channel_run::<1>(Config::ring(64), 1000, (None, None), far)
                .unwrap()
                .moved,
            1000
        );
        // Cut at once: fewer events, still checked.
        let run = channel_run::<8>(c, 1 << 20, (None, None), Instant::now()).unwrap();
        assert!(run.moved < 1 << 20);
        // Context switches are counted per thread where the OS says.
        assert_eq!(run.switches.is_some(), cfg!(target_os = "linux"));
    }
}
