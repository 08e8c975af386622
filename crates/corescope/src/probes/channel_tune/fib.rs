//! Stage Two's workload: a recursive Fibonacci with interpreter-like work per
//! call, emitting an enter and a return event per call into a sink (nothing, a
//! buffer nobody reads, a profile in the same thread, or an hspc channel whose
//! consumer profiles); one channel run checked against the single-thread profile,
//! and one run of a limit line.

use super::*;
use crate::clock::thread_cpu_s;
use crate::harness::stack::with_stack_offset;
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;

const ENTER: u64 = 0;
const RETURN: u64 = 1;

/// A profiling event of `W` words: kind, function and depth; the argument; a
/// sequence number; the rest a filler (the larger event of the seed carried more
/// of the interpreter's frame).
#[derive(Clone, Copy)]
pub(super) struct Prof<const W: usize>([u64; W]);

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
pub(super) trait Sink {
    fn event(&mut self, kind: u64, func: u64, depth: u64, arg: u64);
}

/// No profiling (Optimal).
pub(super) struct Nothing;
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
/// tree (std `BTreeMap`, the kind of the STL `map` the seed replaced): seed 004
/// §4.1's container step.
#[derive(Debug, Clone)]
pub(super) enum Calls {
    /// In a hash table (the default).
    Hash(HashMap<(u64, u64), u64>),
    /// In an ordered tree.
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

/// The profile the consumer computes.
#[derive(Default, Debug, PartialEq)]
pub(super) struct ProfileData {
    /// Calls per (function, depth).
    calls: Calls,
    /// Arguments of the open calls.
    pub(super) stack: Vec<u64>,
    /// Returns that did not match the open call, and events out of sequence.
    pub(super) bad: u64,
    /// Events seen.
    pub(super) events: u64,
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
pub(super) fn fib<S: Sink>(n: u64, depth: u64, sink: &mut S) -> u64 {
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

/// Seconds `f` takes.
pub(super) fn secs_of<R>(f: impl FnOnce() -> R) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// CPU seconds of the calling thread since `before` (a [`thread_cpu_s`] reading).
fn cpu_since(before: Option<f64>) -> Option<f64> {
    Some(thread_cpu_s()? - before?)
}

/// Fibonacci through a channel made with `config`; the consumer profiles. Returns
/// the time from the start gate to the consumer's last event, checked against
/// `reference`.
pub(super) fn fib_channel<const W: usize>(
    config: Config,
    n: u64,
    cpus: Pair<'_>,
    (reference, calls): (&ProfileData, Calls),
    cut: Instant,
) -> Result<Run, TuneError> {
    let (tx, mut rx) = hspc::channel::<Prof<W>>(config)?;
    let producer = || {
        let mut sink = ToChannel {
            tx: Some(tx),
            seq: 0,
            cut,
        };
        let cpu = thread_cpu_s();
        with_stack_offset(config.stack_offset_bytes, || {
            black_box(fib(n, 0, &mut sink));
        });
        (sink.seq, sink.tx.is_none(), cpu_since(cpu))
    };
    let consumer = || {
        let mut p = ProfileData {
            calls,
            ..ProfileData::default()
        };
        let (t, cpu) = (Instant::now(), thread_cpu_s());
        while let Ok(e) = rx.pop() {
            p.record(&e);
        }
        (t.elapsed().as_secs_f64(), p, cpu_since(cpu))
    };
    let names = ["the producer", "the consumer"];
    let ((sent, was_cut, producer_cpu), (secs, p, consumer_cpu)) =
        cpus.both(true, names, producer, consumer)?;
    let cpu_share = producer_cpu
        .zip(consumer_cpu)
        .map(|(p, c)| [p / secs.max(1e-12), c / secs.max(1e-12)]);
    if was_cut {
        // A prefix of the stream: in order, every return matching its call.
        if p.bad != 0 || p.events != sent {
            return Err(TuneError::CutProfile {
                config,
                got: p.events,
                sent,
                bad: p.bad,
            });
        }
    } else if &p != reference {
        return Err(TuneError::ProfileDiffers {
            config,
            got: p.events,
            expected: reference.events,
            bad: p.bad,
        });
    }
    Ok(Run {
        secs,
        moved: if was_cut { sent } else { p.events },
        cut: was_cut,
        switches: None,
        cpu_share,
    })
}

/// One run of limit line `k` (0 Optimal, 1 Achievable, 2 Upper bound) on the
/// producer's CPU: its seconds, and for the Upper bound the profile it built.
pub(super) fn line_run<const W: usize>(
    k: usize,
    n: u64,
    layout: Config,
    cpus: Pair<'_>,
) -> (f64, Option<ProfileData>) {
    let line = || match k {
        0 => (secs_of(|| black_box(fib(n, 0, &mut Nothing))), None),
        1 => {
            let mut sink = WriteOnly::<W> {
                buf: vec![Prof::new(0, 0, 0, 0, 0); (layout.buffer_bytes / (W * 8)).max(1)],
                i: 0,
                seq: 0,
            };
            (secs_of(|| fib(n, 0, &mut sink)), None)
        }
        _ => {
            let mut sink = Inline::<W> {
                profile: ProfileData::default(),
                seq: 0,
            };
            let secs = secs_of(|| fib(n, 0, &mut sink));
            (secs, Some(sink.profile))
        }
    };
    cpus.alone(cpus.cpus.0, line).unwrap_or((f64::NAN, None))
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{far, pair};
    use super::*;

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
            let far = far();
            let run = fib_channel::<3>(c, 12, pair(), (&reference, Calls::default()), far).unwrap();
            assert_eq!((run.moved, run.cut), (reference.events, false));
            // Both threads used some CPU, and no more than the wall time allows
            // (with a little slack for the clocks' steps).
            let [p, q] = run.cpu_share.expect("thread CPU clocks on Linux");
            assert!(p > 0.0 && q > 0.0 && p < 1.5 && q < 1.5, "{p} {q}");
            let Run { moved, cut, .. } = fib_channel::<3>(
                c,
                20,
                pair(),
                (&ProfileData::default(), Calls::default()),
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
        let far = far();
        let pair = pair();
        let tree = || Calls::Tree(BTreeMap::new());
        let run = fib_channel::<3>(c, 12, pair, (&reference, tree()), far).unwrap();
        assert_eq!((run.moved, run.cut), (reference.events, false));
        // A different computation is still caught through the tree.
        let wrong = fib_channel::<3>(c, 11, pair, (&reference, tree()), far);
        assert!(
            matches!(wrong, Err(TuneError::ProfileDiffers { .. })),
            "{wrong:?}"
        );
    }
}
