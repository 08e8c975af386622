//! `timers`: every clock the machine offers — its step (smallest non-zero difference
//! between two reads), its read overhead, and whether it stays monotonic when a
//! thread moves between CPUs (seed 002 Table 1).

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::{clock_ns, ticks};
use crate::model::{Measurement, ProbeResult, Table};
use std::hint::black_box;
use std::time::Instant;

/// Migrations per CPU pair in the monotonicity check.
pub const MIGRATIONS: usize = 50;

/// Reads per overhead sample.
pub const READS: u64 = 20_000;
/// Longest time spent waiting for a clock to move, in ms.
pub const STEP_WAIT_MS: u64 = 200;

/// The probe.
pub struct Timers;

/// Counter ticks for [`READS`] reads of `read` (best of 5): timed with the counter,
/// not with the clock itself, so a coarse clock's overhead is not read as zero.
fn overhead_ticks(read: fn() -> u64) -> u64 {
    (0..5)
        .map(|_| {
            let t0 = ticks();
            for _ in 0..READS {
                black_box(read());
            }
            ticks().wrapping_sub(t0)
        })
        .min()
        .unwrap_or(0)
}

/// Smallest non-zero difference between consecutive reads, in the clock's units,
/// watching at most [`STEP_WAIT_MS`] or 64 changes; `None` if it never moved.
fn step(read: fn() -> u64) -> Option<u64> {
    let until = Instant::now() + std::time::Duration::from_millis(STEP_WAIT_MS);
    let (mut best, mut changes) = (u64::MAX, 0);
    let mut prev = read();
    let mut n = 0u32;
    while changes < 64 {
        let now = read();
        if now != prev {
            best = best.min(now.wrapping_sub(prev));
            changes += 1;
            prev = now;
        }
        n = n.wrapping_add(1);
        if n % 1024 == 0 && Instant::now() >= until {
            break;
        }
    }
    (best != u64::MAX).then_some(best)
}

/// A clock's name, its reader, and ns per unit (`None`: counter ticks).
type ClockReader = (&'static str, fn() -> u64, Option<f64>);

/// The clocks measured: name, and a reader returning the clock's own units with its
/// nanoseconds per unit (`None` = the counter, converted with the calibration).
fn clocks() -> Vec<ClockReader> {
    fn mono() -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC)
    }
    fn raw() -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC_RAW)
    }
    fn coarse() -> u64 {
        clock_ns(libc::CLOCK_MONOTONIC_COARSE)
    }
    fn real() -> u64 {
        clock_ns(libc::CLOCK_REALTIME)
    }
    fn boot() -> u64 {
        clock_ns(libc::CLOCK_BOOTTIME)
    }
    fn instant() -> u64 {
        thread_local!(static BASE: Instant = Instant::now());
        BASE.with(|b| b.elapsed().as_nanos() as u64)
    }
    vec![
        (
            if cfg!(target_arch = "x86_64") {
                "tsc (rdtsc)"
            } else {
                "counter (cntvct)"
            },
            ticks as fn() -> u64,
            None,
        ),
        ("CLOCK_MONOTONIC", mono, Some(1.0)),
        ("CLOCK_MONOTONIC_RAW", raw, Some(1.0)),
        ("CLOCK_MONOTONIC_COARSE", coarse, Some(1.0)),
        ("CLOCK_REALTIME", real, Some(1.0)),
        ("CLOCK_BOOTTIME", boot, Some(1.0)),
        ("std::time::Instant", instant, Some(1.0)),
    ]
}

/// Read `read` on one CPU, move to the next, read again: `Some(true)` if no later read
/// was ever smaller, `None` if the thread could not move (one CPU or pinning refused).
fn monotonic_across(read: fn() -> u64, cpus: &[u32]) -> Option<bool> {
    if cpus.len() < 2 {
        return None;
    }
    let before = crate::affinity::allowed_current().ok()?;
    let mut ok = true;
    let mut moved = false;
    for _ in 0..MIGRATIONS {
        for w in cpus.windows(2) {
            if crate::affinity::pin_current(w[0]).is_err() {
                continue;
            }
            let a = read();
            if crate::affinity::pin_current(w[1]).is_err() {
                continue;
            }
            moved = true;
            let b = read();
            if b < a {
                ok = false;
            }
        }
    }
    let _ = crate::affinity::allow_current(&before);
    moved.then_some(ok)
}

impl Probe for Timers {
    fn id(&self) -> &'static str {
        "timers"
    }

    fn title(&self) -> &'static str {
        "every clock: step (resolution), read overhead, monotonic across CPUs"
    }

    fn plan(&self, _ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        Ok(Plan {
            cases: vec![Case::new("clocks", &())],
            ..Plan::default()
        }
        .param("migrations_per_pair", MIGRATIONS))
    }

    fn run(&self, _case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let clock = ctx.plan.clock.clone();
        // A few CPUs to migrate between: the first of each package/core, at most 8.
        let cpus: Vec<u32> = ctx
            .plan
            .topo
            .allowed_pus()
            .map(|p| p.os_index)
            .take(8)
            .collect();
        let mut m = Measurement::default();
        let mut rows = Vec::new();
        for (name, read, ns_per_unit) in clocks() {
            let overhead_ns = clock.ticks_to_ns(overhead_ticks(read)) / READS as f64;
            let step_ns = match step(read) {
                Some(s) => match ns_per_unit {
                    Some(f) => s as f64 * f,
                    None => s as f64 * 1e9 / clock.info.ticks_hz,
                },
                None => f64::NAN,
            };
            let round = |v: f64| (v * 10.0).round() / 10.0;
            let (overhead_ns, step_ns) = (round(overhead_ns), round(step_ns));
            let mono = monotonic_across(read, &cpus);
            rows.push(vec![
                serde_json::json!(name),
                serde_json::json!(step_ns),
                serde_json::json!(overhead_ns),
                serde_json::json!(match mono {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "untested (one CPU)",
                }),
            ]);
            if mono == Some(false) {
                m.warnings.push(format!(
                    "{name}: a read on one CPU was later than the next read on another CPU"
                ));
            }
        }
        m.tables.push(Table {
            name: "timers".into(),
            columns: vec![
                "clock".into(),
                "step_ns".into(),
                "read_overhead_ns".into(),
                "monotonic across CPUs".into(),
            ],
            rows,
        });
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, _ctx: &PlanCtx) {
        let Some(t) = result.tables.iter().find(|t| t.name == "timers") else {
            return;
        };
        let rows: Vec<(String, f64, f64)> = t
            .rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.first()?.as_str()?.to_string(),
                    r.get(1)?.as_f64()?,
                    r.get(2)?.as_f64()?,
                ))
            })
            .collect();
        // The cheapest clock with a step finer than 100 ns.
        if let Some((name, step, o)) = rows
            .iter()
            .filter(|r| r.1 < 100.0)
            .min_by(|a, b| a.2.total_cmp(&b.2))
        {
            result.findings.push(format!(
                "cheapest fine clock: {name} ({} per read, step {})",
                crate::units::fmt_value("ns", *o),
                crate::units::fmt_value("ns", *step)
            ));
        }
        if let Some((_, s, _)) = rows.iter().find(|r| r.0 == "CLOCK_MONOTONIC_COARSE") {
            result.findings.push(format!(
                "CLOCK_MONOTONIC_COARSE moves in steps of {}: too coarse for anything shorter than {}",
                crate::units::fmt_value("ns", *s),
                crate::units::fmt_value("ns", 100.0 * s)
            ));
        }
    }
}
