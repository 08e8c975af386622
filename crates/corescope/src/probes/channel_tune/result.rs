//! The tuner's report as a measurement: one table per step, the curves of seed 004's
//! Figures 2–8 (time per event vs buffer size; Stage Two with its Optimal,
//! Achievable and Upper-bound lines), the chosen configuration and the notes.

use super::stage_two::affinity_name;
use super::{per_million, words, Report, Row, Step};
use crate::model::{Measurement, Point, Table};
use serde_json::{json, Value};

/// Title prefix of the Stage Two steps (`stage two: fib, 24-byte events`).
const STAGE_TWO: &str = "stage two";

/// Everything the run file keeps of a tuning.
pub(super) fn measurement(r: &Report) -> Measurement {
    let mut m = Measurement::default();
    // The answer first: the configuration chosen, then each step's notes.
    m.findings.push(words::best(r));
    for s in &r.steps {
        m.tables.push(step_table(s));
        m.findings.extend(
            s.notes
                .iter()
                .map(|n| format!("{}: {}", s.title, words::note(s, n))),
        );
        m.points.extend(step_points(s, r.cpus.0.is_some()));
    }
    for s in &r.steps {
        if let Some(note) = words::cpu_note(s) {
            m.findings.push(note);
        }
    }
    m.params.insert(
        "best_config".into(),
        serde_json::to_value(r.best).unwrap_or_default(),
    );
    m.params
        .insert("best_affinity".into(), affinity_name(r.best_pinned).into());
    if r.refused_pins > 0 {
        m.warnings.push(words::refused_pins(r.refused_pins));
    }
    m
}

/// The step's table: per row its time, events, rate, the ratio to the step's
/// reference, whether it was cut, which row is the step's best and where each
/// stands against it (see `words::standing`).
fn step_table(s: &Step) -> Table {
    let reference = if s.title.starts_with(STAGE_TWO) {
        "x_achievable"
    } else {
        "x_baseline"
    };
    let with_affinity = s.rows.iter().any(|r| r.pinned.is_some());
    let with_cpu = s.rows.iter().any(|r| r.cpu_share.is_some());
    let mut columns: Vec<String> = [
        "run",
        "seconds",
        "events",
        "events_per_s",
        reference,
        "cut",
        "best",
        "vs_choice",
        "runs",
        "ns_per_event",
        "ns_per_event_lo",
        "ns_per_event_hi",
    ]
    .map(String::from)
    .to_vec();
    if with_affinity {
        columns.push("affinity".into());
    }
    if s.show_switches {
        for side in ["producer", "consumer"] {
            columns.push(format!("{side}_ctx_sw_per_1e6"));
            columns.push(format!("{side}_voluntary_per_1e6"));
        }
    }
    if with_cpu {
        columns.push("producer_cpu_share".into());
        columns.push("consumer_cpu_share".into());
    }
    let best = s.best();
    let rows = s
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            if let Some(why) = &row.skipped {
                // Not measured: its label with the reason, every number empty.
                let mut cells = vec![Value::Null; columns.len()];
                cells[0] = json!(format!("{} ({why})", row.label));
                return cells;
            }
            let est = row.estimate();
            let mut cells = vec![
                json!(row.label),
                json!(row.secs),
                json!(row.events),
                json!(1.0 / row.per_event().max(1e-15)),
                s.reference_s
                    .map(|x| json!(row.per_event() / x))
                    .unwrap_or(Value::Null),
                json!(row.cut),
                json!(best.is_some_and(|b| std::ptr::eq(b, row))),
                json!(words::standing(s, i)),
                json!(est.n),
                json!(row.per_event() * 1e9),
                json!(est.lo * 1e9),
                json!(est.hi * 1e9),
            ];
            if with_affinity {
                cells.push(json!(row.pinned.map(affinity_name)));
            }
            if s.show_switches {
                cells.extend(switch_cells(row));
            }
            if with_cpu {
                let share = |k: usize| row.cpu_share.map(|c| c[k]);
                cells.extend([json!(share(0)), json!(share(1))]);
            }
            cells
        })
        .collect();
    Table {
        name: s.title.clone(),
        columns,
        rows,
    }
}

/// Context switches of producer and consumer per 10^6 events (all, voluntary).
fn switch_cells(row: &Row) -> Vec<Value> {
    let mut cells = Vec::new();
    for k in 0..2 {
        for v in [
            row.switches
                .map(|sw| per_million(sw[k].total(), row.events)),
            row.switches
                .map(|sw| per_million(sw[k].voluntary, row.events)),
        ] {
            cells.push(json!(v));
        }
    }
    cells
}

/// Time per event vs buffer size. Stage One's size steps give one curve per
/// buffer count; Stage Two one curve per wait strategy (the runs with the pair's
/// affinity: pinned when the pair has CPUs) and its three limit lines drawn across
/// the measured sizes, as in seed 004's Figures 3–8.
fn step_points(s: &Step, pinned_pair: bool) -> Vec<Point> {
    let per_event_ns =
        |r: &Row| -> Vec<f64> { r.per_event_runs().iter().map(|s| s * 1e9).collect() };
    let measured = |r: &&Row| r.events > 0 && r.config.is_some();
    if s.title.starts_with(STAGE_TWO) {
        let what = s.title.trim_start_matches("stage two: ");
        let runs: Vec<&Row> = s
            .rows
            .iter()
            .filter(measured)
            .filter(|r| r.pinned == Some(pinned_pair))
            .collect();
        let mut sizes: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.config.map(|c| c.buffer_bytes as f64))
            .collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        let mut points: Vec<Point> = runs
            .iter()
            .filter_map(|r| {
                let c = r.config?;
                Some(Point::samples(
                    format!("{what}/{}", c.wait),
                    "bytes",
                    c.buffer_bytes as f64,
                    "ns",
                    per_event_ns(r),
                ))
            })
            .collect();
        for line in s.rows.iter().filter(|r| r.config.is_none() && r.events > 0) {
            let name = line.label.split(':').next().unwrap_or(&line.label);
            for &x in &sizes {
                points.push(Point::samples(
                    format!("{what}/{name}"),
                    "bytes",
                    x,
                    "ns",
                    per_event_ns(line),
                ));
            }
        }
        return points;
    }
    if !s.title.contains("buffer") {
        return Vec::new();
    }
    s.rows
        .iter()
        .filter(measured)
        .filter_map(|r| {
            let c = r.config?;
            Some(Point::samples(
                format!("stage one: buffer size/{} buffers", c.buffers),
                "bytes",
                c.buffer_bytes as f64,
                "ns",
                per_event_ns(r),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixture::row;
    use super::*;
    use hspc::{Config, WaitStrategy};

    #[test]
    fn stage_two_draws_limit_lines_across_the_measured_sizes() {
        let mut s = Step::new("stage two: fib, 24-byte events");
        s.rows
            .push(row("Optimal: fib, no profiling", None, 1e-3, Some(true)));
        s.rows.push(row(
            "Upper bound: fib and profiling in one thread",
            None,
            3e-3,
            Some(true),
        ));
        for (b, w) in [
            (1024, WaitStrategy::SpinPause),
            (4096, WaitStrategy::Condvar),
        ] {
            let c = Config::n_buffer(3, b).with_wait(w);
            s.rows.push(row("x", Some(c), 2e-3, Some(true)));
            s.rows.push(row("x", Some(c), 9e-3, Some(false)));
        }
        let pts = step_points(&s, true);
        let optimal: Vec<f64> = pts
            .iter()
            .filter(|p| p.series == "fib, 24-byte events/Optimal")
            .map(|p| p.x)
            .collect();
        assert_eq!(optimal, vec![1024.0, 4096.0]);
        // Only the pinned runs are drawn; the unpinned ones stay in the table.
        assert!(pts
            .iter()
            .filter(|p| !p.series.ends_with("Optimal") && !p.series.ends_with("Upper bound"))
            .all(|p| (p.samples[0] - 2000.0).abs() < 1e-6));
        let t = step_table(&s);
        let best = t.columns.iter().position(|c| c == "best").unwrap();
        assert_eq!(t.rows.iter().filter(|r| r[best] == json!(true)).count(), 1);
    }
}
