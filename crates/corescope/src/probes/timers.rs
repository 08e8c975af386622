//! `timers`: every clock the machine offers — its step (smallest non-zero difference
//! between two reads, never below the read cost), its granularity (the unit it moves
//! in: the greatest common divisor of the changes seen, which the read cost does not
//! bound), the resolution the kernel states (`clock_getres`), its read overhead, and
//! whether it stays monotonic when a thread moves between CPUs (seed 002 Table 1
//! gives both a clock's step unit and its access overhead).
//!
//! Repetition: the read overhead is sampled [`OVERHEAD_SAMPLES`] times per clock, the
//! clocks taking turns in rotated order (so drift hits all alike); its median and 95 %
//! interval become a typed value per clock, as does the step (the smallest change
//! seen: exact, no interval).

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::clock::{clock_ns, ticks};
use crate::model::{Estimate, Finding, Measurement, ProbeResult, Table, Warning};
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

/// Overhead samples per clock (each of [`READS`] reads), clocks interleaved.
pub const OVERHEAD_SAMPLES: usize = 9;

/// Counter ticks for [`READS`] reads of `read`: timed with the counter, not with the
/// clock itself, so a coarse clock's overhead is not read as zero.
fn overhead_ticks(read: fn() -> u64) -> u64 {
    let t0 = ticks();
    for _ in 0..READS {
        black_box(read());
    }
    ticks().wrapping_sub(t0)
}

/// Columns of the `timers` table.
const COLUMNS: [&str; 8] = [
    "clock",
    "step_ns",
    "read_overhead_ns",
    "read_overhead_lo_ns",
    "read_overhead_hi_ns",
    "monotonic across CPUs",
    "granularity_ns",
    "clock_getres_ns",
];

/// What watching a clock move shows, in its own units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moves {
    /// Smallest non-zero difference between consecutive reads (bounded below by
    /// the time one read takes).
    pub step: u64,
    /// Greatest common divisor of the differences: the unit the clock moves in.
    pub granularity: u64,
}

/// The step and granularity of a clock from the differences between consecutive
/// reads that changed it; `None` when none did.
pub fn moves(changes: &[u64]) -> Option<Moves> {
    let nonzero = changes.iter().copied().filter(|&d| d > 0);
    let step = nonzero.clone().min()?;
    let granularity = nonzero.fold(0, gcd);
    Some(Moves { step, granularity })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Changes between consecutive reads of `read`, watching at most
/// [`STEP_WAIT_MS`] or 64 changes, and what they show.
fn step(read: fn() -> u64) -> Option<Moves> {
    let until = Instant::now() + std::time::Duration::from_millis(STEP_WAIT_MS);
    let mut changes = Vec::with_capacity(64);
    let mut prev = read();
    let mut n = 0u32;
    while changes.len() < 64 {
        let now = read();
        if now != prev {
            changes.push(now.wrapping_sub(prev));
            prev = now;
        }
        n = n.wrapping_add(1);
        if n % 1024 == 0 && Instant::now() >= until {
            break;
        }
    }
    moves(&changes)
}

/// The resolution the kernel states for `id`, in ns (`None` if it refuses).
fn getres_ns(id: libc::clockid_t) -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call.
    let rc = unsafe { libc::clock_getres(id, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
}

/// A clock's name, its reader, ns per unit (`None`: counter ticks), and the POSIX
/// clock it reads (`None`: the counter itself).
type ClockReader = (
    &'static str,
    fn() -> u64,
    Option<f64>,
    Option<libc::clockid_t>,
);

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
            None,
        ),
        (
            "CLOCK_MONOTONIC",
            mono,
            Some(1.0),
            Some(libc::CLOCK_MONOTONIC),
        ),
        (
            "CLOCK_MONOTONIC_RAW",
            raw,
            Some(1.0),
            Some(libc::CLOCK_MONOTONIC_RAW),
        ),
        (
            "CLOCK_MONOTONIC_COARSE",
            coarse,
            Some(1.0),
            Some(libc::CLOCK_MONOTONIC_COARSE),
        ),
        (
            "CLOCK_REALTIME",
            real,
            Some(1.0),
            Some(libc::CLOCK_REALTIME),
        ),
        (
            "CLOCK_BOOTTIME",
            boot,
            Some(1.0),
            Some(libc::CLOCK_BOOTTIME),
        ),
        // std's Instant reads CLOCK_MONOTONIC on Linux.
        (
            "std::time::Instant",
            instant,
            Some(1.0),
            Some(libc::CLOCK_MONOTONIC),
        ),
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

/// Id of the probe and of its run-file entry.
pub const ID: &str = "timers";

impl Probe for Timers {
    type Params = ();
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Summary: each clock's read overhead with its step.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::ValueWithCompanion {
            suffix: ": read overhead",
            says: "a read takes",
            companion: ": step",
            companion_says: "step",
        }
    }
    fn run_cost_s(&self, _params: &(), c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.26, 0.24, 0.24]))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "every clock: step (resolution), read overhead, monotonic across CPUs"
    }

    fn plan(&self, _ctx: &PlanCtx) -> Result<Plan<()>, ProbeError> {
        Ok(Plan::new(vec![Case::new("clocks", &())]).param("migrations_per_pair", MIGRATIONS))
    }

    fn run(&self, _case: &Case<()>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let clock = ctx.plan.clock.clone();
        // A few CPUs to migrate between: the first of each package/core, at most 8.
        let cpus: Vec<u32> = ctx
            .plan
            .topo
            .allowed_pus()
            .map(|p| p.os_index)
            .take(8)
            .collect();
        let all = clocks();
        // Overhead: the clocks take turns, rotated each round.
        let mut overhead: Vec<Vec<f64>> = vec![Vec::new(); all.len()];
        for (r, v) in crate::harness::pair::rotation(all.len(), OVERHEAD_SAMPLES)
            .into_iter()
            .enumerate()
        {
            if r % all.len() == 0 && ctx.expired() && overhead.iter().all(|o| !o.is_empty()) {
                break;
            }
            overhead[v].push(clock.ticks_to_ns(overhead_ticks(all[v].1)) / READS as f64);
        }
        let mut m = Measurement::default();
        let mut rows = Vec::new();
        let round = |v: f64| (v * 100.0).round() / 100.0;
        for ((name, read, ns_per_unit, id), o) in all.into_iter().zip(&overhead) {
            let o = crate::stats::estimate(o);
            let to_ns = |units: u64| match ns_per_unit {
                Some(f) => units as f64 * f,
                None => units as f64 * 1e9 / clock.info.ticks_hz,
            };
            let moved = step(read);
            let step_ns = moved.map_or(f64::NAN, |m| to_ns(m.step));
            let granularity_ns = moved.map_or(f64::NAN, |m| to_ns(m.granularity));
            // The counter's stated resolution is one tick.
            let getres = id.map_or(Some(1e9 / clock.info.ticks_hz), getres_ns);
            let mono = monotonic_across(read, &cpus);
            rows.push(vec![
                serde_json::json!(name),
                serde_json::json!(round(step_ns)),
                serde_json::json!(round(o.value)),
                serde_json::json!(round(o.lo)),
                serde_json::json!(round(o.hi)),
                serde_json::json!(match mono {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "untested (one CPU)",
                }),
                serde_json::json!(round(granularity_ns)),
                serde_json::json!(getres.map(round)),
            ]);
            if mono == Some(false) {
                m.warnings.push(Warning::NotMonotonic {
                    timer: name.to_string(),
                });
            }
        }
        m.tables.push(Table {
            name: "timers".into(),
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows,
        });
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        match result.tables.iter().find(|t| t.name == "timers") {
            Some(t) => Analysis::findings(table_findings(t, OVERHEAD_SAMPLES)),
            None => Analysis::default(),
        }
    }
}

/// Typed values from the `timers` table: each clock's read overhead (median with its
/// interval) and step, and the cheapest clock finer than 100 ns.
fn table_findings(t: &Table, samples: usize) -> Vec<Finding> {
    struct Row {
        name: String,
        step: f64,
        overhead: Estimate,
        granularity: Option<f64>,
        getres: Option<f64>,
    }
    let rows: Vec<Row> = t
        .rows
        .iter()
        .filter_map(|r| {
            Some(Row {
                name: r.first()?.as_str()?.to_string(),
                step: r.get(1)?.as_f64().unwrap_or(f64::NAN),
                overhead: Estimate {
                    value: r.get(2)?.as_f64()?,
                    lo: r.get(3)?.as_f64()?,
                    hi: r.get(4)?.as_f64()?,
                    n: samples,
                },
                granularity: r.get(6).and_then(|v| v.as_f64()),
                getres: r.get(7).and_then(|v| v.as_f64()),
            })
        })
        .collect();
    let mut out = Vec::new();
    for r in &rows {
        out.push(Finding::Value {
            what: format!("{}: read overhead", r.name),
            unit: "ns".into(),
            value: r.overhead,
            context: Some(format!("median of {samples} × {READS} reads")),
        });
        if r.step.is_finite() {
            out.push(Finding::Value {
                what: format!("{}: step", r.name),
                unit: "ns".into(),
                value: Estimate::without_interval(r.step),
                context: Some(
                    "smallest non-zero change between two reads (never below the read cost)".into(),
                ),
            });
        }
        if let Some(g) = r.granularity.filter(|g| g.is_finite()) {
            out.push(Finding::Value {
                what: format!("{}: granularity", r.name),
                unit: "ns".into(),
                value: Estimate::without_interval(g),
                context: Some(match r.getres {
                    Some(res) => format!(
                        "the unit it moves in (greatest common divisor of the changes seen); clock_getres says {}",
                        crate::units::fmt_value("ns", res)
                    ),
                    None => "the unit it moves in (greatest common divisor of the changes seen)"
                        .into(),
                }),
            });
        }
    }
    // The cheapest clock with a step finer than 100 ns: stated only when its overhead
    // interval lies below every other fine clock's.
    let fine: Vec<&Row> = rows.iter().filter(|r| r.step < 100.0).collect();
    if let Some(best) = fine
        .iter()
        .min_by(|a, b| a.overhead.value.total_cmp(&b.overhead.value))
    {
        let clear = fine
            .iter()
            .filter(|r| r.name != best.name)
            .all(|r| best.overhead.hi < r.overhead.lo);
        if clear && fine.len() > 1 {
            out.push(Finding::Note {
                text: format!(
                    "cheapest fine clock: {} ({} per read, step {})",
                    best.name,
                    crate::units::fmt_value("ns", best.overhead.value),
                    crate::units::fmt_value("ns", best.step)
                ),
            });
        }
    }
    if let Some(r) = rows.iter().find(|r| r.name == "CLOCK_MONOTONIC_COARSE") {
        out.push(Finding::Note {
            text: format!(
                "CLOCK_MONOTONIC_COARSE moves in steps of {}: too coarse for anything shorter than {}",
                crate::units::fmt_value("ns", r.step),
                crate::units::fmt_value("ns", 100.0 * r.step)
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granularity_is_the_unit_of_the_changes_not_the_smallest_one() {
        // A 1 ns clock read every 29-31 ns: step 29, granularity 1.
        assert_eq!(
            moves(&[30, 29, 31, 30]),
            Some(Moves {
                step: 29,
                granularity: 1
            })
        );
        // A 4 ms tick seen once or twice per change: both 4 ms.
        let ms4 = 4_000_000;
        assert_eq!(
            moves(&[ms4, 2 * ms4, ms4]),
            Some(Moves {
                step: ms4,
                granularity: ms4
            })
        );
        // A counter moving in steps of 8 ticks, read every 40-48 ticks.
        assert_eq!(moves(&[40, 48, 40, 56]).map(|m| m.granularity), Some(8));
        assert_eq!(moves(&[]), None);
        assert_eq!(moves(&[0, 0]), None);
    }

    #[test]
    fn the_kernel_states_a_resolution_for_the_monotonic_clock() {
        let res = getres_ns(libc::CLOCK_MONOTONIC);
        assert!(res.is_some_and(|r| r > 0.0 && r <= 1e9), "{res:?}");
    }
}
