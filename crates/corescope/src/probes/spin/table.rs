//! The shape of a `spin` case's table: one row per loop (read interval, hand-off,
//! each benchmark's slowdown with its interval and outcome, the slowdown over all of
//! them, the spinner's own counts), its column names, and its point.

use super::bench::BENCHES;
use crate::model::{Measurement, Outcome, Point, Table};
use crate::probes::{NotRun, ProbeError};
use crate::stats;

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

/// The name of the spin table of one spinner placement (`spin/same-cpu`).
fn table_name(placement: &str) -> String {
    format!("{}/{placement}", super::ID)
}

/// The spinner placement a spin table is of (`same-cpu` of `spin/same-cpu`); `None`
/// for a table of another kind.
pub fn table_placement(name: &str) -> Option<&str> {
    name.strip_prefix(super::ID)?.strip_prefix('/')
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
pub(super) fn bench_outcome_column(b: &str) -> String {
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
    let all = stats::compare_paired(&all_with, &all_alone).ok_or(NotRun::BenchmarkTime)?;
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
        name: table_name(rel),
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
