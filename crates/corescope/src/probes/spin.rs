//! `spin`: what a spinning thread costs its neighbour, and which wait loop is cheapest
//! (seed 003; the loops are `kernels::spin_loops`).
//!
//! One *active* thread, pinned to the first allowed CPU, runs a benchmark while one
//! *spinner* waits on a lock word that is never released during the measurement.
//! Each benchmark runs alone and with the spinner back to back, in alternating order,
//! `reps` times (the spinner blocks on a condition variable between its spins, so
//! "alone" really is alone and both runs find the same cache state); the slowdown is
//! the Hodges-Lehmann estimate of the paired ratios with its signed-rank interval. Responsiveness of each loop: the spinner's time between two
//! reads of the lock word (spin time ÷ reads), and, in a separate hand-off run, the
//! time from the release to the spinner returning.
//!
//! Spinner placements: `smt-sibling` (where the machine has SMT), `other-core`,
//! `other-package` (where there is one), and `same-cpu` (oversubscribed: the spinner
//! shares the active thread's CPU and the scheduler time-slices them).

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::{ticks, Clock};
use crate::harness::pair;
use crate::kernels::spin_loops::{ChaseBuffer, LockWord, SpinKind, Spinner, Woken};
use crate::model::{Estimate, Finding, Measurement, Outcome, Point, ProbeResult, Table};
use crate::placement::pairs::{self, Relation};
use crate::stats;
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// The active benchmarks of seed 003: single-behaviour, then multiple-behaviour.
pub const BENCHES: [&str; 9] = [
    "add",
    "branch",
    "l1-load",
    "l2-load",
    "mul",
    "matvec-int",
    "matvec-fp",
    "quicksort",
    "hash",
];
/// Matrix order of the matrix-vector benchmarks (8 MiB of i64/f64: memory-bound).
pub const MATVEC_ORDER: usize = 1024;
/// Elements sorted by the quicksort benchmark.
pub const SORT_LEN: usize = 1 << 15;
/// Hash table of the hashing benchmark (4 MiB of u64: random accesses beyond L2).
pub const HASH_WORDS: usize = 1 << 19;
/// How long the active thread waits for a new spinner to start spinning, in µs.
pub const SPINNER_START_US: f64 = 500.0;

/// The probe.
pub struct Spin;

#[derive(Debug, Clone, Serialize)]
struct CaseParams {
    relation: Relation,
    active: Option<u32>,
    spinner: Option<u32>,
    kind: String,
    reps: usize,
    handoffs: usize,
    l1_bytes: usize,
    l2_bytes: usize,
    chase_bytes: usize,
    /// More spinners on these CPUs, on the same lock (seed 003's k spinners).
    #[serde(default)]
    extra: Vec<u32>,
    /// Placement name when it is not the relation's (`all-others`).
    #[serde(default)]
    label: Option<String>,
}

/// Most spinners of the `all-others` placement (one per other allowed CPU).
pub const MAX_SPINNERS: usize = 63;

/// The `all-others` placement: the active thread on the first allowed CPU and a
/// spinner on every other allowed CPU (at most [`MAX_SPINNERS`]), or why not.
pub fn all_others(topo: &crate::topology::Topology) -> Result<(u32, Vec<u32>), String> {
    let cpus = topo.allowed_os_indices();
    match cpus.split_first() {
        Some((&a, rest)) if rest.len() >= 2 => {
            Ok((a, rest.iter().copied().take(MAX_SPINNERS).collect()))
        }
        _ => Err(format!(
            "{} other CPU(s) allowed: k spinners need at least 2 besides the active thread's",
            cpus.len().saturating_sub(1)
        )),
    }
}

/// Data of the active benchmarks, built once per case.
pub struct Work {
    l1: ChaseRing,
    l2: ChaseRing,
    mat_i: Vec<i64>,
    mat_f: Vec<f64>,
    vec_i: Vec<i64>,
    vec_f: Vec<f64>,
    unsorted: Vec<u32>,
    table: Vec<u64>,
}

/// A random single-cycle pointer chase over `bytes` (one link per 64-byte line).
pub struct ChaseRing(Vec<usize>);

impl ChaseRing {
    /// Over `bytes` bytes.
    pub fn new(bytes: usize, seed: u64) -> Self {
        let lines = (bytes / 64).max(2);
        let mut next = vec![0usize; lines * 8];
        let mut words: Vec<u64> = vec![0; lines * 8];
        crate::kernels::chase::build_chase(&mut words, 8, lines, seed);
        for (n, w) in next.iter_mut().zip(&words) {
            *n = *w as usize;
        }
        Self(next)
    }
    fn walk(&self, steps: usize) -> usize {
        let mut i = 0usize;
        for _ in 0..steps {
            i = self.0[i * 8];
        }
        i
    }
}

impl Work {
    /// Benchmark data for these cache sizes.
    pub fn new(l1_bytes: usize, l2_bytes: usize) -> Self {
        let n = MATVEC_ORDER;
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        Self {
            l1: ChaseRing::new(l1_bytes / 2, 1),
            l2: ChaseRing::new(l2_bytes / 2, 2),
            mat_i: (0..n * n).map(|i| (i % 7) as i64 - 3).collect(),
            mat_f: (0..n * n).map(|i| (i % 7) as f64 * 0.25 - 0.75).collect(),
            vec_i: (0..n).map(|i| (i % 5) as i64).collect(),
            vec_f: (0..n).map(|i| (i % 5) as f64 * 0.5).collect(),
            unsorted: (0..SORT_LEN).map(|_| rnd() as u32).collect(),
            table: vec![0; HASH_WORDS],
        }
    }

    /// Run benchmark `b` once; returns a checksum that depends on all the work.
    pub fn run(&mut self, b: &str) -> u64 {
        const ITERS: u64 = 200_000;
        match b {
            "add" => {
                let mut s = 0u64;
                for i in 0..ITERS * 4 {
                    s = black_box(s.wrapping_add(i));
                }
                s
            }
            "branch" => {
                let (mut s, mut x) = (0u64, 1u64);
                for _ in 0..ITERS {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    if (x >> 33) & 1 == 1 {
                        s = s.wrapping_add(x >> 40);
                    } else {
                        s ^= x >> 20;
                    }
                }
                s
            }
            "l1-load" => self.l1.walk(ITERS as usize) as u64,
            "l2-load" => self.l2.walk(ITERS as usize / 2) as u64,
            "mul" => {
                let mut s = 3u64;
                for _ in 0..ITERS {
                    s = black_box(s.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                }
                s
            }
            "matvec-int" => {
                let n = MATVEC_ORDER;
                let mut s = 0i64;
                for r in 0..n {
                    let row = &self.mat_i[r * n..(r + 1) * n];
                    s = s
                        .wrapping_add(row.iter().zip(&self.vec_i).map(|(a, b)| a * b).sum::<i64>());
                }
                s as u64
            }
            "matvec-fp" => {
                let n = MATVEC_ORDER;
                let mut s = 0.0f64;
                for r in 0..n {
                    let row = &self.mat_f[r * n..(r + 1) * n];
                    s += row.iter().zip(&self.vec_f).map(|(a, b)| a * b).sum::<f64>();
                }
                s.to_bits()
            }
            "quicksort" => {
                let mut v = self.unsorted.clone();
                v.sort_unstable();
                v[0] as u64 ^ v[v.len() / 2] as u64 ^ v[v.len() - 1] as u64
            }
            _ => {
                // "hash": FNV-1a of a counter picks a slot; increment it.
                let mut h = 0xcbf2_9ce4_8422_2325u64;
                for i in 0..ITERS / 2 {
                    h = (h ^ i).wrapping_mul(0x100_0000_01b3);
                    let slot = (h as usize) % self.table.len();
                    self.table[slot] = self.table[slot].wrapping_add(1);
                }
                self.table.iter().step_by(4096).fold(h, |a, &b| a ^ b)
            }
        }
    }
}

/// Columns after the per-benchmark slowdowns in a spin table: the slowdown over every
/// benchmark (Hodges-Lehmann estimate of all paired ratios), its 95 % interval, and
/// what the comparison shows (`different`, `equivalent`, `inconclusive`).
pub const SUMMARY_COLUMNS: [&str; 4] = ["slowdown ×", "low ×", "high ×", "outcome"];

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Different => "different",
        Outcome::Equivalent => "equivalent",
        Outcome::Inconclusive => "inconclusive",
    }
}

/// Ticks (at most 5 s) the active thread waits for the spinners before giving up.
const SPINNER_WAIT_S: f64 = 5.0;

/// Per benchmark, the times with the spinner(s) and alone, one pair per repetition.
type Paired = Vec<(Vec<f64>, Vec<f64>)>;

/// Coordination of the slowdown measurement. Phase `p` is one benchmark run with the
/// spinners spinning on `locks[p]`; between phases the spinners block on a condition
/// variable, off the CPU, so the alone run of the same benchmark really runs alone.
struct Phases {
    locks: Vec<LockWord>,
    /// Phases released to the spinners (`usize::MAX`: stop).
    go: Mutex<usize>,
    cv: Condvar,
    /// Spinner-phases begun and ended (every spinner counts once per phase).
    started: AtomicU64,
    finished: AtomicU64,
    spinners: u64,
    /// Spin time and lock reads of the timed spinner, over all phases.
    spin_ticks: AtomicU64,
    reads: AtomicU64,
}

impl Phases {
    fn new(phases: usize, spinners: usize) -> Self {
        Self {
            locks: (0..phases).map(|_| LockWord::new()).collect(),
            go: Mutex::new(0),
            cv: Condvar::new(),
            started: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            spinners: spinners as u64,
            spin_ticks: AtomicU64::new(0),
            reads: AtomicU64::new(0),
        }
    }

    /// A spinner's life: for each phase, block until released, spin until stopped.
    fn spinner(&self, timed: bool, make: impl Fn() -> Spinner) {
        let mut s = make();
        for p in 0..self.locks.len() {
            {
                let mut g = self.go.lock().unwrap_or_else(|e| e.into_inner());
                while *g <= p {
                    g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                if *g == usize::MAX {
                    return;
                }
            }
            self.started.fetch_add(1, Ordering::AcqRel);
            let t0 = ticks();
            let (_, rep) = s.wait(&self.locks[p]);
            if timed {
                self.spin_ticks
                    .fetch_add(ticks().wrapping_sub(t0), Ordering::AcqRel);
                self.reads.fetch_add(rep.reads, Ordering::AcqRel);
            }
            self.finished.fetch_add(1, Ordering::AcqRel);
        }
    }

    fn set_go(&self, v: usize) {
        *self.go.lock().unwrap_or_else(|e| e.into_inner()) = v;
        self.cv.notify_all();
    }

    /// Stop every spinner: the current phase's and every later one.
    fn abort(&self) {
        for l in &self.locks {
            l.stop();
        }
        self.set_go(usize::MAX);
    }

    /// Wait until `counter` reaches the count of phase `p` done by every spinner.
    fn wait_for(&self, clock: &Clock, counter: &AtomicU64, p: usize) -> bool {
        let target = self.spinners * (p as u64 + 1);
        pair::wait_until(clock.ns_to_ticks(SPINNER_WAIT_S * 1e9) as u64, || {
            counter.load(Ordering::Acquire) >= target
        })
    }

    /// Benchmark `b` once with the spinners of phase `p` spinning; its time in ticks.
    fn with_spinners(
        &self,
        work: &mut Work,
        b: &str,
        p: usize,
        clock: &Clock,
    ) -> Option<(u64, u64)> {
        self.set_go(p + 1);
        if !self.wait_for(clock, &self.started, p) {
            return None;
        }
        let start_ticks = clock.ns_to_ticks(SPINNER_START_US * 1e3) as u64;
        let t = ticks();
        while ticks().wrapping_sub(t) < start_ticks {
            std::hint::spin_loop();
        }
        let t0 = ticks();
        let sum = black_box(work.run(b));
        let dt = ticks().wrapping_sub(t0);
        self.locks[p].stop();
        self.wait_for(clock, &self.finished, p).then_some((dt, sum))
    }

    /// The active thread: every benchmark alone and with the spinners, in alternating
    /// order, `reps` times (fewer if the deadline comes). `None` if a spinner did not
    /// start or stop, or a deterministic benchmark's checksum changed.
    fn active(
        &self,
        work: &mut Work,
        clock: &Clock,
        reps: usize,
        deadline: std::time::Instant,
    ) -> Option<Paired> {
        let out = self.measure(work, clock, reps, deadline);
        self.abort();
        out
    }

    fn measure(
        &self,
        work: &mut Work,
        clock: &Clock,
        reps: usize,
        deadline: std::time::Instant,
    ) -> Option<Paired> {
        let n = BENCHES.len();
        let mut out: Paired = vec![(Vec::new(), Vec::new()); n];
        let mut sums: Vec<Option<u64>> = vec![None; n];
        for rep in 0..reps {
            for k in 0..n {
                let (i, p) = ((k + rep) % n, rep * n + k);
                let b = BENCHES[i];
                let alone = |work: &mut Work| {
                    let t0 = ticks();
                    let sum = black_box(work.run(b));
                    (ticks().wrapping_sub(t0), sum)
                };
                let ((w, ws), (a, as_)) = if spinner_first(rep, i) {
                    let w = self.with_spinners(work, b, p, clock)?;
                    (w, alone(work))
                } else {
                    let a = alone(work);
                    (self.with_spinners(work, b, p, clock)?, a)
                };
                // Deterministic benchmarks give the same checksum every time.
                if b != "hash" {
                    let expect = *sums[i].get_or_insert(ws);
                    if ws != expect || as_ != expect {
                        return None;
                    }
                }
                out[i].0.push(w as f64);
                out[i].1.push(a as f64);
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
        }
        Some(out)
    }
}

/// Whether benchmark `bench` runs with the spinner first in repetition `rep`: the
/// order flips from each repetition to the next for every benchmark, so over any
/// number of repetitions each benchmark runs with-first and alone-first equally
/// often (±1). (Flipping on the position in the rotation instead, `(rep + k) % 2`,
/// flipped a benchmark's order only when the rotation wrapped: with 9 benchmarks,
/// `add` ran with-first in 1 or 2 of 11 repetitions.)
pub fn spinner_first(rep: usize, bench: usize) -> bool {
    (rep + bench) % 2 == 0
}

fn spinner_for(kind: SpinKind, chase_bytes: usize) -> Spinner {
    if kind.needs_chase_buffer() {
        Spinner::with_chase(kind, ChaseBuffer::new(chase_bytes, 0x5EED))
    } else {
        Spinner::new(kind)
    }
}

/// Median of ticks.
fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2] as f64
}

impl Probe for Spin {
    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// The all-others case also starts a spinner on every other CPU, in every
    /// repetition.
    /// Summary: what each spinner did to the active thread, and the cheapest wait.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Slowdowns {
            notes_with: Some("cheapest"),
        }
    }
    fn run_cost_s(&self, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(
            c.per_profile([0.16, 0.55, 7.7])
                + c.spawn_s(c.len_of("extra") as f64 * c.num("reps").unwrap_or(1.0)),
        )
    }

    fn id(&self) -> &'static str {
        "spin"
    }

    fn title(&self) -> &'static str {
        "spin-wait interference: a spinner's cost to its neighbour, and each wait loop's responsiveness"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let reps: usize = ctx.profile.pick(5, 11, 31);
        let handoffs: usize = ctx.profile.pick(30, 200, 1000);
        let size = |level: u8, fallback: usize| {
            ctx.topo
                .caches
                .iter()
                .find(|c| c.level == level)
                .map(|c| c.size_bytes as usize)
                .unwrap_or(fallback)
        };
        let (l1_bytes, l2_bytes) = (size(1, 32 << 10), size(2, 512 << 10));
        let chase_bytes = 2 * ctx.topo.llc_bytes().unwrap_or(32 << 20) as usize;
        let mut cases = Vec::new();
        let mut skipped = Vec::new();
        for (relation, pair) in pairs::pairs(&ctx.topo) {
            if relation == Relation::Unpinned {
                continue;
            }
            match pair {
                Ok((active, spinner)) => {
                    for kind in SpinKind::ALL {
                        cases.push(Case::new(
                            format!("{} {}", relation.name(), kind.name()),
                            &CaseParams {
                                relation,
                                active,
                                spinner,
                                kind: kind.name().into(),
                                reps,
                                handoffs,
                                l1_bytes,
                                l2_bytes,
                                chase_bytes,
                                extra: Vec::new(),
                                label: None,
                            },
                        ));
                    }
                }
                Err(why) => skipped.push(format!("{}: skipped: {why}", relation.name())),
            }
        }
        // k spinners: every other allowed CPU spins on the same lock.
        let mut spinner_threads = vec![1usize];
        match all_others(&ctx.topo) {
            Ok((active, others)) => {
                spinner_threads.push(others.len());
                for kind in SpinKind::ALL {
                    cases.push(Case::new(
                        format!("all-others ×{} {}", others.len(), kind.name()),
                        &CaseParams {
                            relation: Relation::OtherCore,
                            active: Some(active),
                            spinner: Some(others[0]),
                            kind: kind.name().into(),
                            reps,
                            handoffs,
                            l1_bytes,
                            l2_bytes,
                            chase_bytes,
                            extra: others[1..].to_vec(),
                            label: Some("all-others".into()),
                        },
                    ));
                }
            }
            Err(why) => skipped.push(format!("all-others: skipped: {why}")),
        }
        Ok(Plan::new(cases)
            .param("benchmarks", BENCHES)
            .param(
                "spinners",
                SpinKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
            )
            .param("spinner_threads", spinner_threads)
            .param("repetitions", reps)
            .param("handoffs", handoffs)
            .param("l1_chase_bytes", l1_bytes / 2)
            .param("l2_chase_bytes", l2_bytes / 2)
            .param("cachemiss_chase_bytes", chase_bytes)
            .skipping(skipped))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.typed()?;
        let kind: SpinKind =
            c.kind
                .parse()
                .map_err(|e: crate::kernels::spin_loops::UnknownSpinKind| {
                    ProbeError::Failed(e.to_string())
                })?;
        let clock = ctx.plan.clock.clone();
        let deadline = ctx.deadline;

        // Phase 1: slowdown, alone and with the spinner(s) alternating.
        let mut cpus = vec![c.active, c.spinner];
        cpus.extend(c.extra.iter().map(|&e| Some(e)));
        let phases = Phases::new(c.reps * BENCHES.len(), cpus.len() - 1);
        let out = ctx.team(
            &cpus,
            1,
            |me| (me == 0).then(|| Work::new(c.l1_bytes, c.l2_bytes)),
            |me, work| match work.as_mut() {
                Some(work) if me == 0 => phases.active(work, &clock, c.reps, deadline),
                _ => {
                    phases.spinner(me == 1, || spinner_for(kind, c.chase_bytes));
                    None
                }
            },
        )?;
        let paired = out
            .results
            .first()
            .and_then(|r| r.first())
            .cloned()
            .flatten()
            .ok_or_else(|| {
                ProbeError::Failed(format!(
                    "{}: a benchmark's checksum changed between runs, or a spinner did not start",
                    kind.name()
                ))
            })?;

        // The timed spinner (worker 1) as the team's counters saw it.
        let spinner = SpinnerCount::of_team(ctx.counted.last());
        let handoff_ns = handoff_phase(ctx, &c, kind, &clock)?;
        let read_ns = clock.ticks_to_ns(phases.spin_ticks.load(Ordering::Acquire))
            / phases.reads.load(Ordering::Acquire).max(1) as f64;
        let rel = c
            .label
            .clone()
            .unwrap_or_else(|| c.relation.name().to_string());
        slowdown_measurement(kind.name(), (read_ns, handoff_ns), &paired, &rel, &spinner)
    }

    fn finish(&self, result: &mut ProbeResult, _plan: &Plan, ctx: &PlanCtx) {
        let (tables, findings) = merge_tables(std::mem::take(&mut result.tables));
        result.tables = tables;
        result.findings.extend(findings);
        if !ctx.topo.has_smt() {
            result.findings.push(
                "no SMT here: spinners were measured on another core and on the same CPU \
                 (time-sliced) instead of a sibling strand",
            );
        }
    }
}

/// The cases' one-row tables merged into one table per placement, and what they
/// show: per placement the plain loop's and the parked waiter's cost, the cheapest
/// spinning loop, and every benchmark slowed beyond the noise under every loop.
/// The spin tables come out transposed (a column per loop, a row per quantity:
/// narrower), without the per-benchmark outcome columns (the findings carry them);
/// other tables (the event counters') pass through.
pub fn merge_tables(tables: Vec<Table>) -> (Vec<Table>, Vec<Finding>) {
    let mut merged: Vec<Table> = Vec::new();
    for t in tables {
        match merged.iter_mut().find(|m| m.name == t.name) {
            Some(m) => m.rows.extend(t.rows),
            None => merged.push(t),
        }
    }
    let mut findings = Vec::new();
    let mut out = Vec::new();
    for t in merged {
        let Some(rel) = t.name.strip_prefix("spin/").map(str::to_string) else {
            out.push(t);
            continue;
        };
        findings.extend(table_findings(&t));
        findings.extend(slowed_everywhere(&rel, &bench_slowdowns(&t)));
        out.push(transpose(&without_outcomes(&t)));
    }
    (out, findings)
}

/// One loop's row of a spin table: name, read interval, hand-off, overall slowdown.
struct LoopRow {
    name: String,
    read_ns: f64,
    handoff_ns: f64,
    slowdown: Estimate,
    outcome: Outcome,
}

fn loop_rows(t: &Table) -> Vec<LoopRow> {
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let (Some(sd), Some(lo), Some(hi), Some(oc)) = (
        col(SUMMARY_COLUMNS[0]),
        col(SUMMARY_COLUMNS[1]),
        col(SUMMARY_COLUMNS[2]),
        col(SUMMARY_COLUMNS[3]),
    ) else {
        return Vec::new();
    };
    t.rows
        .iter()
        .filter_map(|r| {
            Some(LoopRow {
                name: r.first()?.as_str()?.to_string(),
                read_ns: r.get(1)?.as_f64()?,
                handoff_ns: r.get(2)?.as_f64()?,
                slowdown: Estimate {
                    value: r.get(sd)?.as_f64()?,
                    lo: r.get(lo)?.as_f64()?,
                    hi: r.get(hi)?.as_f64()?,
                    n: 0,
                },
                outcome: match r.get(oc)?.as_str()? {
                    "different" => Outcome::Different,
                    "equivalent" => Outcome::Equivalent,
                    _ => Outcome::Inconclusive,
                },
            })
        })
        .collect()
}

/// What a spinner on the active thread's own CPU measures: not seed 003's
/// interference through a shared core, but the scheduler sharing one CPU.
pub const SAME_CPU_MEANS: &str = "the spinner shares the active thread's CPU: this is the scheduler time-slicing the two, not interference through a shared core (smt-sibling measures that, where the machine has SMT)";

/// Per placement: what the plain loop and a futex-parked waiter cost the active
/// thread, and the cheapest loop that still spins (by its interval: only a loop
/// whose upper bound is below every other loop's central value is called cheapest).
fn table_findings(t: &Table) -> Vec<Finding> {
    let rows = loop_rows(t);
    let rel = t.name.strip_prefix("spin/").unwrap_or(&t.name);
    let what = format!("active thread, spinner {rel}");
    let mut out = Vec::new();
    for (loop_name, cause) in [
        ("plain", "a plain spin loop"),
        ("futex", "a waiter parked on a futex"),
    ] {
        if let Some(r) = rows.iter().find(|r| r.name == loop_name) {
            out.push(Finding::Slowdown {
                what: what.clone(),
                cause: cause.into(),
                ratio: r.slowdown,
                outcome: r.outcome,
                context: match (loop_name, rel) {
                    ("futex", _) => Some(format!("its hand-off takes {:.0} ns", r.handoff_ns)),
                    (_, "same-cpu") => Some(SAME_CPU_MEANS.into()),
                    _ => None,
                },
            });
        }
    }
    let spinning: Vec<&LoopRow> = rows
        .iter()
        .filter(|r| r.name != "futex" && r.name != "yield")
        .collect();
    if let Some(best) = spinning
        .iter()
        .min_by(|a, b| a.slowdown.value.total_cmp(&b.slowdown.value))
    {
        let clear = spinning
            .iter()
            .filter(|r| r.name != best.name)
            .all(|r| best.slowdown.hi < r.slowdown.lo);
        out.push(if clear {
            Finding::Note {
                text: format!(
                    "{rel}: the cheapest spinning loop is {} ({:.2}× the active thread's time, \
                     95 % CI {:.2}–{:.2}; a lock read every {:.0} ns, hand-off {:.0} ns)",
                    best.name,
                    best.slowdown.value,
                    best.slowdown.lo,
                    best.slowdown.hi,
                    best.read_ns,
                    best.handoff_ns
                ),
            }
        } else {
            Finding::Note {
                text: format!(
                    "{rel}: no spinning loop is clearly cheapest (their slowdown intervals \
                     overlap); lowest estimate {} at {:.2}×",
                    best.name, best.slowdown.value
                ),
            }
        });
    }
    out
}

/// Rows ↔ columns, the first column becoming the header.
fn transpose(t: &Table) -> Table {
    let mut columns = vec![String::new()];
    columns.extend(
        t.rows
            .iter()
            .map(|r| r[0].as_str().unwrap_or("?").to_string()),
    );
    let rows = (1..t.columns.len())
        .map(|c| {
            let mut row = vec![serde_json::json!(t.columns[c])];
            row.extend(t.rows.iter().map(|r| r.get(c).cloned().unwrap_or_default()));
            row
        })
        .collect();
    Table {
        name: t.name.clone(),
        columns,
        rows,
    }
}

/// Phase 2: the hand-off latency, release → the spinner returns; the median in ns.
fn handoff_phase(
    ctx: &mut RunCtx,
    c: &CaseParams,
    kind: SpinKind,
    clock: &crate::clock::Clock,
) -> Result<f64, ProbeError> {
    let start_ticks = clock.ns_to_ticks(SPINNER_START_US * 1e3) as u64;
    let woke = AtomicU64::new(0);
    let armed = AtomicU64::new(0);
    let handoffs = c.handoffs;
    let deadline = ctx.deadline;
    let lock2 = LockWord::new();
    let hand = ctx.team(
        &[c.active, c.spinner],
        1,
        |_| (),
        |me, _| -> Vec<u64> {
            let mut lat = Vec::new();
            if me == 1 {
                let mut s = spinner_for(kind, c.chase_bytes);
                for k in 1..=handoffs as u64 {
                    if !pair::wait_until(clock.ns_to_ticks(5e9) as u64, || {
                        armed.load(Ordering::Acquire) >= k
                    }) {
                        return lat;
                    }
                    let (w, _) = s.wait(&lock2);
                    woke.store(ticks().max(1), Ordering::Release);
                    if w == Woken::Stopped {
                        return lat;
                    }
                }
                return lat;
            }
            for k in 1..=handoffs as u64 {
                lock2.lock();
                woke.store(0, Ordering::Release);
                armed.store(k, Ordering::Release);
                let t = ticks();
                while ticks().wrapping_sub(t) < start_ticks / 10 {
                    std::thread::yield_now();
                }
                let t0 = ticks();
                lock2.release();
                if !pair::wait_until(clock.ns_to_ticks(5e9) as u64, || {
                    woke.load(Ordering::Acquire) != 0
                }) {
                    break;
                }
                lat.push(woke.load(Ordering::Acquire).wrapping_sub(t0));
                if std::time::Instant::now() >= deadline {
                    break;
                }
            }
            armed.store(u64::MAX, Ordering::Release);
            lock2.stop();
            lat
        },
    )?;
    let mut lat = hand
        .results
        .first()
        .and_then(|r| r.first())
        .cloned()
        .unwrap_or_default();
    Ok(clock.ticks_to_ns(median(&mut lat) as u64))
}

/// The timed spinner thread's own cycles and instructions over its spinning (the
/// team's counters around its kernel: it is off the CPU while parked between
/// phases), where the machine has a PMU; seed 003's "spin-lock loop shows low CPI".
#[derive(Debug, Clone, PartialEq)]
pub enum SpinnerCount {
    /// Counted by the PMU.
    Counted {
        /// Core cycles (user mode).
        cycles: u64,
        /// Retired instructions (user mode).
        instructions: u64,
    },
    /// Not counted here (no PMU, counters refused): never a made-up number.
    Skipped,
}

/// What the spin table says where the spinner was not counted.
pub const SPINNER_NOT_COUNTED: &str = "skipped: no counters";

/// Rows of a spin table after the per-benchmark slowdowns: the spinner's own counts.
pub const SPINNER_COLUMNS: [&str; 3] = ["spinner cycles", "spinner instructions", "spinner CPI"];

impl SpinnerCount {
    /// The spinner (worker 1) of the slowdown team's counts.
    pub fn of_team(team: Option<&crate::counters::TeamCount>) -> Self {
        let reading = team
            .filter(|t| t.status.hardware == crate::counters::Availability::Counted)
            .and_then(|t| t.threads.get(1))
            .and_then(|t| t.reading);
        match reading.and_then(|r| Some((r.cycles?, r.instructions?))) {
            Some((cycles, instructions)) if instructions > 0 => SpinnerCount::Counted {
                cycles,
                instructions,
            },
            _ => SpinnerCount::Skipped,
        }
    }

    /// Cycles per instruction, where counted.
    pub fn cpi(&self) -> Option<f64> {
        match *self {
            SpinnerCount::Counted {
                cycles,
                instructions,
            } => Some(cycles as f64 / instructions as f64),
            SpinnerCount::Skipped => None,
        }
    }

    fn cells(&self) -> [serde_json::Value; 3] {
        match (self, self.cpi()) {
            (
                SpinnerCount::Counted {
                    cycles,
                    instructions,
                },
                Some(cpi),
            ) => [
                serde_json::json!(cycles),
                serde_json::json!(instructions),
                serde_json::json!((cpi * 1000.0).round() / 1000.0),
            ],
            _ => [
                serde_json::Value::Null,
                serde_json::Value::Null,
                serde_json::json!(SPINNER_NOT_COUNTED),
            ],
        }
    }
}

/// Column of benchmark `b`'s slowdown; its interval's ends and its outcome follow.
pub fn bench_column(b: &str) -> String {
    format!("{b} ×")
}
/// Column of the lower end of benchmark `b`'s 95 % interval.
pub fn bench_low_column(b: &str) -> String {
    format!("{b} low ×")
}
/// Column of the upper end of benchmark `b`'s 95 % interval.
pub fn bench_high_column(b: &str) -> String {
    format!("{b} high ×")
}
/// Column of benchmark `b`'s outcome (read by the findings, then dropped).
fn bench_outcome_column(b: &str) -> String {
    format!("{b} outcome")
}

/// The loop's row (read interval, hand-off, slowdown per benchmark with its
/// interval, over all of them, the spinner's own counts) and its point: the
/// slowdown per paired round at its read interval.
pub fn slowdown_measurement(
    loop_name: &str,
    (read_ns, handoff_ns): (f64, f64),
    paired: &[(Vec<f64>, Vec<f64>)],
    rel: &str,
    spinner: &SpinnerCount,
) -> Result<Measurement, ProbeError> {
    let mut m = Measurement::default();
    // Per benchmark: the slowdown (HL estimate of with ÷ alone) and its interval;
    // over all of them: every (with, alone) pair of every benchmark, compared at once.
    let mut row = vec![
        serde_json::json!(loop_name),
        serde_json::json!((read_ns * 10.0).round() / 10.0),
        serde_json::json!(handoff_ns.round()),
    ];
    let round3 = |v: f64| serde_json::json!((v * 1000.0).round() / 1000.0);
    let (mut all_with, mut all_alone) = (Vec::new(), Vec::new());
    let mut outcomes = Vec::new();
    for (with, alone) in paired {
        match stats::compare_paired(with, alone) {
            Some(c) => {
                row.extend([c.ratio.value, c.ratio.lo, c.ratio.hi].map(round3));
                outcomes.push(serde_json::json!(outcome_name(c.outcome)));
            }
            None => {
                row.extend([(); 3].map(|_| serde_json::Value::Null));
                outcomes.push(serde_json::Value::Null);
            }
        }
        all_with.extend(with);
        all_alone.extend(alone);
    }
    row.extend(outcomes);
    let all = stats::compare_paired(&all_with, &all_alone)
        .ok_or_else(|| ProbeError::Failed("no benchmark time was measured".into()))?;
    row.extend([
        round3(all.ratio.value),
        round3(all.ratio.lo),
        round3(all.ratio.hi),
        serde_json::json!(outcome_name(all.outcome)),
    ]);
    row.extend(spinner.cells());
    let mut columns = vec![
        "loop".to_string(),
        "read_interval_ns".into(),
        "handoff_ns".into(),
    ];
    for b in BENCHES.iter().take(paired.len()) {
        columns.extend([bench_column(b), bench_low_column(b), bench_high_column(b)]);
    }
    columns.extend(
        BENCHES
            .iter()
            .take(paired.len())
            .map(|b| bench_outcome_column(b)),
    );
    columns.extend(SUMMARY_COLUMNS.iter().map(|c| c.to_string()));
    columns.extend(SPINNER_COLUMNS.iter().map(|c| c.to_string()));
    m.tables.push(Table {
        name: format!("spin/{rel}"),
        columns,
        rows: vec![row],
    });
    m.points.push(Point::samples(
        format!("mean-slowdown/{rel}"),
        "read_interval_ns",
        read_ns,
        "x_alone",
        all_with
            .iter()
            .zip(&all_alone)
            .map(|(w, a)| w / a.max(f64::MIN_POSITIVE))
            .collect(),
    ));
    Ok(m)
}

/// One benchmark's slowdown under one loop.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchSlowdown {
    /// The spin loop (`plain`, `futex`).
    pub loop_name: String,
    /// The benchmark (`hash`).
    pub bench: String,
    /// With ÷ alone, its interval.
    pub ratio: Estimate,
    /// The comparison's outcome.
    pub outcome: Outcome,
}

/// The per-benchmark slowdowns of a merged (row per loop) spin table.
fn bench_slowdowns(t: &Table) -> Vec<BenchSlowdown> {
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let mut out = Vec::new();
    for r in &t.rows {
        let Some(loop_name) = r.first().and_then(|v| v.as_str()) else {
            continue;
        };
        for b in BENCHES {
            let cell = |c: Option<usize>| c.and_then(|c| r.get(c));
            let num = |name: String| cell(col(&name)).and_then(|v| v.as_f64());
            let (Some(value), Some(lo), Some(hi)) = (
                num(bench_column(b)),
                num(bench_low_column(b)),
                num(bench_high_column(b)),
            ) else {
                continue;
            };
            let outcome = match cell(col(&bench_outcome_column(b))).and_then(|v| v.as_str()) {
                Some("different") => Outcome::Different,
                Some("equivalent") => Outcome::Equivalent,
                _ => Outcome::Inconclusive,
            };
            out.push(BenchSlowdown {
                loop_name: loop_name.to_string(),
                bench: b.to_string(),
                ratio: Estimate {
                    value,
                    lo,
                    hi,
                    n: 0,
                },
                outcome,
            });
        }
    }
    out
}

/// The loop whose waiter does not run while it waits: a benchmark slowed under it
/// too is not slowed by spinning.
pub const PARKED_LOOP: &str = "futex";

/// Benchmarks slowed beyond the noise under every loop measured on placement `rel`,
/// the parked waiter's included (its interval wholly above 1 + the minimum effect,
/// with the full 95 % coverage: the outcome `different`): one finding each, with the
/// smallest of those slowdowns. A parked waiter runs nothing while the benchmark
/// does, so such a slowdown comes from something else that differs between the
/// with and alone runs, and the per-loop differences above it are what spinning adds.
pub fn slowed_everywhere(rel: &str, rows: &[BenchSlowdown]) -> Vec<Finding> {
    let band = 1.0 + stats::MIN_EFFECT;
    let mut out = Vec::new();
    for b in BENCHES {
        let of_b: Vec<&BenchSlowdown> = rows.iter().filter(|r| r.bench == b).collect();
        let parked = of_b.iter().any(|r| r.loop_name == PARKED_LOOP);
        let slowed = |r: &&BenchSlowdown| r.outcome == Outcome::Different && r.ratio.lo >= band;
        if of_b.len() < 2 || !parked || !of_b.iter().all(slowed) {
            continue;
        }
        let Some(least) = of_b
            .iter()
            .min_by(|x, y| x.ratio.value.total_cmp(&y.ratio.value))
        else {
            continue;
        };
        let most = of_b
            .iter()
            .map(|r| r.ratio.value)
            .fold(f64::NEG_INFINITY, f64::max);
        out.push(Finding::Slowdown {
            what: format!("{b}, spinner {rel}"),
            cause: format!(
                "every one of the {} wait loops, the parked {PARKED_LOOP} waiter included (least: {})",
                of_b.len(),
                least.loop_name
            ),
            ratio: least.ratio,
            outcome: Outcome::Different,
            context: Some(format!(
                "{:.2}–{:.2}× across the loops; a parked waiter runs nothing, so this much \
                 is not the spinning's cost but something else the with and alone runs differ in",
                least.ratio.value, most
            )),
        });
    }
    out
}

/// The table without its per-benchmark outcome columns.
fn without_outcomes(t: &Table) -> Table {
    let keep: Vec<usize> = (0..t.columns.len())
        .filter(|&c| !t.columns[c].ends_with(" outcome"))
        .collect();
    Table {
        name: t.name.clone(),
        columns: keep.iter().map(|&c| t.columns[c].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| {
                keep.iter()
                    .map(|&c| r.get(c).cloned().unwrap_or_default())
                    .collect()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_benchmark_runs_with_first_and_alone_first_equally_often() {
        for reps in 1..=40 {
            for bench in 0..BENCHES.len() {
                let with_first = (0..reps).filter(|&r| spinner_first(r, bench)).count();
                let alone_first = reps - with_first;
                assert!(
                    with_first.abs_diff(alone_first) <= 1,
                    "bench {bench}, {reps} reps: {with_first} with-first, {alone_first} alone-first"
                );
            }
        }
    }

    use super::*;

    /// A slowdown whose outcome follows its interval (the analysis' rule).
    fn slow(loop_name: &str, bench: &str, (value, lo, hi): (f64, f64, f64)) -> BenchSlowdown {
        BenchSlowdown {
            loop_name: loop_name.into(),
            bench: bench.into(),
            ratio: Estimate {
                value,
                lo,
                hi,
                n: 11,
            },
            outcome: if lo >= 1.0 + stats::MIN_EFFECT {
                Outcome::Different
            } else {
                Outcome::Inconclusive
            },
        }
    }

    #[test]
    fn a_benchmark_slowed_under_every_loop_the_parked_one_included_is_a_finding() {
        let mut rows = Vec::new();
        for (l, k) in [("plain", 2.7), ("pause", 2.1), ("futex", 1.6)] {
            // hash: slowed beyond the noise everywhere, the parked waiter included.
            rows.push(slow(l, "hash", (k, k - 0.2, k + 0.2)));
            // add: slowed by the spinning loops only; the parked waiter's interval holds 1.
            let a = if l == "futex" {
                (1.0, 0.97, 1.04)
            } else {
                (1.5, 1.4, 1.6)
            };
            rows.push(slow(l, "add", a));
            // mul: everywhere above 1, but one interval reaches into the ±3 % band.
            rows.push(slow(
                l,
                "mul",
                if l == "pause" {
                    (1.05, 1.02, 1.08)
                } else {
                    (1.5, 1.4, 1.6)
                },
            ));
        }
        let f = slowed_everywhere("other-core", &rows);
        assert_eq!(f.len(), 1, "{f:?}");
        let Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            context,
        } = &f[0]
        else {
            panic!("{f:?}");
        };
        assert_eq!(what, "hash, spinner other-core");
        assert!(
            cause.contains("3 wait loops") && cause.contains("least: futex"),
            "{cause}"
        );
        assert_eq!((ratio.value, *outcome), (1.6, Outcome::Different));
        assert!(context.as_deref().unwrap().starts_with("1.60–2.70×"));
        // Without the parked loop measured, nothing is claimed.
        let spinning: Vec<BenchSlowdown> = rows
            .into_iter()
            .filter(|r| r.loop_name != PARKED_LOOP)
            .collect();
        assert!(slowed_everywhere("other-core", &spinning).is_empty());
    }

    #[test]
    fn merged_tables_keep_per_benchmark_intervals_and_drop_their_outcomes() {
        let paired: Paired = (0..BENCHES.len())
            .map(|i| {
                let alone: Vec<f64> = (0..11).map(|r| 1000.0 + (i + 3 * r) as f64).collect();
                // hash (the last) is twice as long with any waiter, the others equal.
                let k = if i + 1 == BENCHES.len() { 2.0 } else { 1.0 };
                let with = alone
                    .iter()
                    .enumerate()
                    .map(|(r, a)| a * k + (r % 4) as f64)
                    .collect();
                (with, alone)
            })
            .collect();
        let mut tables = Vec::new();
        for name in ["plain", "futex"] {
            let counted = SpinnerCount::Counted {
                cycles: 3000,
                instructions: 1000,
            };
            let sc = if name == "plain" {
                counted
            } else {
                SpinnerCount::Skipped
            };
            let m = slowdown_measurement(name, (5.0, 50.0), &paired, "other-core", &sc).unwrap();
            tables.extend(m.tables);
        }
        let (tables, findings) = merge_tables(tables);
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(t.columns, ["", "plain", "futex"]);
        let row = |label: &str| {
            t.rows
                .iter()
                .find(|r| r[0] == label)
                .unwrap_or_else(|| panic!("{label}"))
        };
        assert!(row("hash low ×")[1].as_f64().unwrap() > 1.9);
        assert!(!t
            .rows
            .iter()
            .any(|r| r[0].as_str().unwrap().ends_with(" outcome")));
        assert_eq!(row("spinner CPI")[1], serde_json::json!(3.0));
        assert_eq!(
            row("spinner CPI")[2],
            serde_json::json!(SPINNER_NOT_COUNTED)
        );
        assert_eq!(row("spinner cycles")[2], serde_json::Value::Null);
        let everywhere: Vec<&Finding> = findings
            .iter()
            .filter(|f| matches!(f, Finding::Slowdown { what, .. } if what.starts_with("hash")))
            .collect();
        assert_eq!(everywhere.len(), 1, "{findings:?}");
    }

    #[test]
    fn k_spinners_fill_every_other_cpu() {
        let two = crate::topology::from_synthetic("pack:1 core:2 pu:1").unwrap();
        assert!(all_others(&two).unwrap_err().contains("1 other CPU"));
        let four = crate::topology::from_synthetic("pack:1 core:2 pu:2").unwrap();
        let (a, others) = all_others(&four).unwrap();
        assert!(!others.contains(&a));
        assert_eq!(others.len(), 3);
        let big = crate::topology::from_synthetic("pack:4 core:16 pu:4").unwrap();
        assert_eq!(all_others(&big).unwrap().1.len(), MAX_SPINNERS);
    }

    #[test]
    fn benchmarks_are_deterministic_and_correct() {
        let mut w = Work::new(32 << 10, 256 << 10);
        for b in BENCHES {
            let a = w.run(b);
            if b != "hash" {
                assert_eq!(a, w.run(b), "{b}");
            }
        }
        // matvec-int against a direct sum: row r of M·x, summed over rows.
        let n = MATVEC_ORDER;
        let direct: i64 = (0..n)
            .map(|r| {
                (0..n)
                    .map(|c| ((r * n + c) % 7) as i64 - 3)
                    .zip(0..n)
                    .map(|(m, c)| m * (c % 5) as i64)
                    .sum::<i64>()
            })
            .sum();
        assert_eq!(w.run("matvec-int"), direct as u64);
        // quicksort: min, median and max of the sorted copy.
        let mut v = w.unsorted.clone();
        v.sort();
        assert_eq!(
            w.run("quicksort"),
            v[0] as u64 ^ v[v.len() / 2] as u64 ^ v[v.len() - 1] as u64
        );
    }

    #[test]
    fn every_spinner_sees_the_release_and_stops_when_asked() {
        for kind in SpinKind::ALL {
            for stop in [false, true] {
                let lock = LockWord::new();
                let mut s = spinner_for(kind, 1 << 16);
                let (w, r) = std::thread::scope(|sc| {
                    let h = sc.spawn(|| s.wait(&lock));
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    if stop {
                        lock.stop();
                    } else {
                        lock.release();
                    }
                    h.join().unwrap()
                });
                assert_eq!(
                    w,
                    if stop {
                        Woken::Stopped
                    } else {
                        Woken::Released
                    },
                    "{kind}"
                );
                assert!(r.reads >= 1);
            }
        }
    }
}
