//! `spin`: what a spinning thread costs its neighbour, and which wait loop is cheapest
//! (seed 003; the loops are `hspc::wait`, shared with the channel).
//!
//! One *active* thread, pinned to the first allowed CPU, runs a benchmark while one
//! *spinner* waits on a lock word that is never released during the measurement.
//! Slowdown = median time with the spinner ÷ median time alone (measured in the same
//! case, alternating). Responsiveness of each loop: the spinner's time between two
//! reads of the lock word (spin time ÷ reads), and, in a separate hand-off run, the
//! time from the release to the spinner returning.
//!
//! Spinner placements: `smt-sibling` (where the machine has SMT), `other-core`,
//! `other-package` (where there is one), and `same-cpu` (oversubscribed: the spinner
//! shares the active thread's CPU and the scheduler time-slices them).

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::ticks;
use crate::model::{Measurement, Point, ProbeResult, Table};
use crate::placement::pairs::{self, Relation};
use hspc::wait::{ChaseBuffer, LockWord, SpinKind, Spinner, Woken};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

#[derive(Debug, Clone, Serialize, Deserialize)]
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
        super::memory::build_chase(&mut words, 8, lines, seed);
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
        Ok(Plan {
            cases,
            ..Plan::default()
        }
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
        .param("skipped", skipped))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.decode()?;
        let kind: SpinKind = c
            .kind
            .parse()
            .map_err(|e: hspc::wait::UnknownSpinKind| ProbeError::Failed(e.to_string()))?;
        let clock = ctx.plan.clock.clone();
        let start_ticks = clock.ns_to_ticks(SPINNER_START_US * 1e3) as u64;
        let lock = LockWord::new();
        let spinning = AtomicBool::new(false);
        let spin_ticks = AtomicU64::new(0);
        let reads = AtomicU64::new(0);
        let woke = AtomicU64::new(0);
        let armed = AtomicU64::new(0);
        let handoffs = c.handoffs;
        let deadline = ctx.deadline;

        // Phase 1: slowdown. Worker 0 = active, worker 1 = spinner.
        let mut cpus = vec![c.active, c.spinner];
        cpus.extend(c.extra.iter().map(|&e| Some(e)));
        let out = ctx.team(
            &cpus,
            1,
            |me| (me == 0).then(|| Work::new(c.l1_bytes, c.l2_bytes)),
            |me, work| -> Option<Vec<(f64, f64, u64)>> {
                if me >= 2 {
                    // The other k − 1 spinners: same loop, same lock, not timed.
                    let mut s = spinner_for(kind, c.chase_bytes);
                    let _ = s.wait(&lock);
                    return None;
                }
                if me == 1 {
                    let mut s = spinner_for(kind, c.chase_bytes);
                    spinning.store(true, Ordering::Release);
                    let t0 = ticks();
                    let (_, rep) = s.wait(&lock);
                    spin_ticks.store(ticks().wrapping_sub(t0), Ordering::Release);
                    reads.store(rep.reads, Ordering::Release);
                    return None;
                }
                let work = work.as_mut()?;
                let mut rows = Vec::new();
                // With the spinner first (it starts with the team), then alone once it
                // has been stopped and has left its loop.
                let mut with: Vec<Vec<u64>> = vec![Vec::new(); BENCHES.len()];
                pairs::wait_until(clock.ns_to_ticks(1e9) as u64, || {
                    spinning.load(Ordering::Acquire)
                });
                let t = ticks();
                while ticks().wrapping_sub(t) < start_ticks {
                    std::hint::spin_loop();
                }
                let mut sums = vec![0u64; BENCHES.len()];
                for _ in 0..c.reps {
                    for (i, b) in BENCHES.iter().enumerate() {
                        let t0 = ticks();
                        sums[i] = black_box(work.run(b));
                        with[i].push(ticks().wrapping_sub(t0));
                    }
                    if std::time::Instant::now() >= deadline {
                        break;
                    }
                }
                lock.stop();
                // Alone: the spinner has returned (stop); wait for it to leave the CPU.
                pairs::wait_until(clock.ns_to_ticks(5e9) as u64, || {
                    reads.load(Ordering::Acquire) != 0
                });
                for (i, b) in BENCHES.iter().enumerate() {
                    let mut alone: Vec<u64> = (0..with[i].len())
                        .map(|_| {
                            let t0 = ticks();
                            let s = black_box(work.run(b));
                            let dt = ticks().wrapping_sub(t0);
                            if s != sums[i] && !matches!(*b, "hash") {
                                // Deterministic benchmarks must give the same checksum.
                                return u64::MAX;
                            }
                            dt
                        })
                        .collect();
                    if alone.contains(&u64::MAX) {
                        return None;
                    }
                    rows.push((median(&mut with[i]), median(&mut alone), sums[i]));
                }
                Some(rows)
            },
        )?;
        let rows = out
            .results
            .first()
            .and_then(|r| r.first())
            .cloned()
            .flatten()
            .ok_or_else(|| {
                ProbeError::Failed(format!(
                    "{}: a benchmark's checksum changed between runs",
                    kind.name()
                ))
            })?;

        // Phase 2: hand-off latency (release → the spinner returns).
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
                        if !pairs::wait_until(clock.ns_to_ticks(5e9) as u64, || {
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
                    if !pairs::wait_until(clock.ns_to_ticks(5e9) as u64, || {
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
        let handoff_ns = clock.ticks_to_ns(median(&mut lat) as u64);
        let read_ns = clock.ticks_to_ns(spin_ticks.load(Ordering::Acquire))
            / reads.load(Ordering::Acquire).max(1) as f64;

        let rel = c
            .label
            .clone()
            .unwrap_or_else(|| c.relation.name().to_string());
        let mut m = Measurement::default();
        let slowdowns: Vec<f64> = rows.iter().map(|r| r.0 / r.1).collect();
        let mean = slowdowns.iter().sum::<f64>() / slowdowns.len().max(1) as f64;
        let mut row = vec![
            serde_json::json!(kind.name()),
            serde_json::json!((read_ns * 10.0).round() / 10.0),
            serde_json::json!(handoff_ns.round()),
        ];
        row.extend(
            slowdowns
                .iter()
                .map(|s| serde_json::json!((s * 1000.0).round() / 1000.0)),
        );
        row.push(serde_json::json!((mean * 1000.0).round() / 1000.0));
        let mut columns = vec![
            "loop".to_string(),
            "read_interval_ns".into(),
            "handoff_ns".into(),
        ];
        columns.extend(BENCHES.iter().map(|b| format!("{b} ×")));
        columns.push("mean ×".into());
        m.tables.push(Table {
            name: format!("spin/{rel}"),
            columns,
            rows: vec![row],
        });
        m.points.push(Point::new(
            format!("mean-slowdown/{rel}"),
            "read_interval_ns",
            read_ns,
            "x_alone",
            mean,
        ));
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, ctx: &PlanCtx) {
        super::skipped_as_findings(result);
        // One table per placement: merge the one-row tables of the cases.
        let mut merged: Vec<Table> = Vec::new();
        for t in result.tables.drain(..) {
            match merged.iter_mut().find(|m| m.name == t.name) {
                Some(m) => m.rows.extend(t.rows),
                None => merged.push(t),
            }
        }
        let mut findings = Vec::new();
        for t in &merged {
            let mean_col = t.columns.len() - 1;
            let rows: Vec<(String, f64, f64, f64)> = t
                .rows
                .iter()
                .filter_map(|r| {
                    Some((
                        r[0].as_str()?.to_string(),
                        r[1].as_f64()?,
                        r[2].as_f64()?,
                        r[mean_col].as_f64()?,
                    ))
                })
                .collect();
            // Cheapest loop that still spins (futex blocks; yield leaves the CPU).
            let spinning: Vec<_> = rows
                .iter()
                .filter(|r| r.0 != "futex" && r.0 != "yield")
                .collect();
            if let (Some(best), Some(plain)) = (
                spinning.iter().min_by(|a, b| a.3.total_cmp(&b.3)),
                rows.iter().find(|r| r.0 == "plain"),
            ) {
                findings.push(format!(
                    "{}: the plain loop slows the active thread {:.2}× on average; the cheapest spinning loop is {} ({:.2}×, a lock read every {:.0} ns, hand-off {:.0} ns)",
                    t.name, plain.3, best.0, best.3, best.1, best.2
                ));
            }
            if let Some(f) = rows.iter().find(|r| r.0 == "futex") {
                findings.push(format!(
                    "{}: parking on a futex costs the neighbour {:.2}× but a hand-off takes {:.0} ns",
                    t.name, f.3, f.2
                ));
            }
        }
        let mean_plain = |rel: &str| {
            merged
                .iter()
                .find(|t| t.name == format!("spin/{rel}"))
                .and_then(|t| {
                    let c = t.columns.len() - 1;
                    t.rows
                        .iter()
                        .find(|r| r[0] == "plain")
                        .and_then(|r| r[c].as_f64())
                })
        };
        match (mean_plain("smt-sibling"), mean_plain("other-core")) {
            (Some(s), Some(o)) => findings.push(format!(
                "a plain spinner on the SMT sibling costs {s:.2}×, on another core {o:.2}×"
            )),
            (None, Some(o)) if !ctx.topo.has_smt() => findings.push(format!(
                "no SMT here: spinners were measured on another core ({o:.2}× for the plain loop) and on the same CPU (time-sliced) instead of a sibling strand"
            )),
            _ => {}
        }
        if let (Some(k), Some(o)) = (mean_plain("all-others"), mean_plain("other-core")) {
            let n = result
                .params
                .get("spinner_threads")
                .and_then(|v| v.as_array())
                .and_then(|a| a.last())
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            findings.push(format!(
                "{n} plain spinners on every other CPU cost the active thread {k:.2}×, one on another core {o:.2}×"
            ));
        }
        // Shown transposed: a column per loop, a row per quantity (narrower).
        result.tables = merged.iter().map(transpose).collect();
        result.findings.extend(findings);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
