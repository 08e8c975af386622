//! The tuner's report as a measurement: one table per step, the curves of seed 004's
//! Figures 2–8 (time per event vs buffer size; Stage Two with its Optimal,
//! Achievable and Upper-bound lines), and its findings as data
//! (`model::tuning`): the chosen configuration and why, each step's notes. The
//! renderers word them (`render::tune_words`).

use super::settle::settled_note;
use super::stage_two::affinity_name;
use super::{per_million, Note, Report, Row, Step};
use crate::model::tuning::{self, Against, Stands, StepNote, Tuned};
use crate::model::{Finding, Measurement, Outcome, Point, Table, Warning};
use crate::stats::Comparison;
use serde_json::{json, Value};

/// Title prefix of the Stage Two steps (`stage two: fib, 24-byte events`).
const STAGE_TWO: &str = "stage two";

/// Everything the run file keeps of a tuning.
pub(super) fn measurement(r: &Report) -> Measurement {
    let mut m = Measurement::default();
    // Each settling's finding, drawn once from the step as it ends.
    let settled: Vec<Option<tuning::Settled>> = r
        .steps
        .iter()
        .map(|s| Some(settled_note(s, s.settled.as_ref()?)))
        .collect();
    // The answer first: the configuration chosen, then each step's notes.
    m.findings
        .push(choice(r, settled.get(r.why.step).and_then(Option::as_ref)));
    for (s, settled) in r.steps.iter().zip(&settled) {
        m.tables.push(step_table(s));
        m.findings.extend(s.notes.iter().filter_map(|n| {
            let note = match n {
                Note::Said(n) => n.clone(),
                Note::Settled => StepNote::Settled(settled.clone()?),
            };
            Some(Finding::TuneStep {
                step: s.title.clone(),
                note,
            })
        }));
        m.points.extend(step_points(s, r.cpus.0.is_some()));
    }
    for s in &r.steps {
        if let Some(note) = cpu_note(s) {
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
        m.warnings.push(Warning::PinsRefused {
            pins: r.refused_pins,
        });
    }
    m
}

/// The contenders of a settling with `outcome` against its choice.
fn with_outcome(settled: Option<&tuning::Settled>, outcome: Outcome) -> Vec<Tuned> {
    settled.map_or_else(Vec::new, |s| {
        s.others
            .iter()
            .filter(|v| v.outcome == outcome)
            .map(|v| v.config.clone())
            .collect()
    })
}

/// Where row `i` (a configuration a user asked to race) stands against the
/// step's choice.
pub(super) fn against_stands(step: &Step, i: usize) -> Stands {
    let Some(s) = step.settled.as_ref() else {
        return Stands::NothingSettled;
    };
    if i == s.faster {
        return Stands::Choice;
    }
    match s.others.iter().find(|v| v.row == i) {
        Some(v) => Stands::Compared {
            ratio: v.comparison.ratio,
            significant: v.comparison.significant,
            outcome: v.comparison.outcome,
        },
        None => Stands::NotRepeated,
    }
}

/// The report's first finding: the configuration chosen and why (whose choice,
/// its affinity, what it could not be told from, where each `--against`
/// configuration stands); `settled`: the finding of the choosing step's settling.
fn choice(r: &Report, settled: Option<&tuning::Settled>) -> Finding {
    let w = &r.why;
    let step = r.steps.get(w.step);
    let against = match step {
        Some(step) => w
            .against
            .iter()
            .map(|a| Against {
                name: a.name.clone(),
                stands: match step.against_row(a) {
                    // Stage One does not race them; Stage Two's notes say where they stand.
                    _ if !w.stage_two => Stands::StageOne,
                    Some(i) => against_stands(step, i),
                    None => Stands::NotRun,
                },
            })
            .collect(),
        None => Vec::new(),
    };
    Finding::TunerChoice {
        config: super::describe(&r.best),
        step: step.map(|s| s.title.clone()).unwrap_or_default(),
        stage_two: w.stage_two,
        event_bytes: w.event_bytes,
        affinity: r.best_pinned,
        kept: settled.is_some_and(|s| s.kept),
        equivalent: with_outcome(settled, Outcome::Equivalent),
        not_told_apart: with_outcome(settled, Outcome::Inconclusive),
        run_once_within_spread: settled.map_or(0, |s| s.run_once_within_spread.len()),
        against,
    }
}

/// The CPU the best row's producer and consumer used, as seed 004 reports it.
fn cpu_note(s: &Step) -> Option<Finding> {
    let best = s.best()?;
    let [p, c] = best.cpu_share?;
    Some(Finding::TuneStep {
        step: s.title.clone(),
        note: StepNote::CpuShare {
            run: best.label.clone(),
            producer_share: p,
            consumer_share: c,
        },
    })
}

/// What one comparison with the step's choice shows, as the table's `vs_choice`
/// column labels it (see [`standing`]).
pub(super) fn standing_of(c: &Comparison) -> &'static str {
    match c.outcome {
        Outcome::Different if c.ratio.value > 1.0 => "slower",
        Outcome::Different => "faster (paired)",
        Outcome::Equivalent => "indistinguishable",
        Outcome::Inconclusive => "not told apart",
    }
}

/// Where row `i` stands against the step's settled choice, as a label of the
/// table's `vs_choice` column: `choice`, `slower`, `faster (paired)`,
/// `indistinguishable` (within ±3 %), `not told apart`, `one run, within spread`
/// (run once, within the repeats' spread of the choice), `one run, behind`;
/// `None` for rows without a configuration or when nothing was settled.
pub(super) fn standing(step: &Step, i: usize) -> Option<&'static str> {
    let s = step.settled.as_ref()?;
    let row = step.rows.get(i)?;
    row.config?;
    if i == s.faster {
        return Some("choice");
    }
    if let Some(v) = s.others.iter().find(|v| v.row == i) {
        return Some(standing_of(&v.comparison));
    }
    Some(if s.unrepeated.contains(&i) {
        "one run, within spread"
    } else if row.repeats.is_empty() {
        "one run, behind"
    } else {
        // A contender dropped before it shared two rounds with the choice.
        "not told apart"
    })
}

/// The step's table: per row its time, events, rate, the ratio to the step's
/// reference, whether it was cut, which row is the step's best and where each
/// stands against it (see [`standing`]).
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
                json!(standing(s, i)),
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

    /// A tuning of two steps, the last one settled between two configurations
    /// (4096 B the choice, 1024 B slower), one `--against` configuration raced.
    fn settled_report() -> Report {
        use super::super::settle::{Settled, Versus};
        use super::super::{Against, Why};
        use crate::stats::Comparison;
        let (slow, fast) = (Config::n_buffer(3, 1024), Config::n_buffer(3, 4096));
        let mut one = Step::new("stage one: wait strategy");
        one.rows.push(row("3 × 4096 B", Some(fast), 2e-3, None));
        one.note(StepNote::Switches);
        let mut two = Step::new("stage two: fib, 24-byte events");
        two.rows
            .push(row("3 × 4096 B", Some(fast), 1e-3, Some(true)));
        two.rows
            .push(row("3 × 1024 B", Some(slow), 2e-3, Some(true)));
        two.rows[0].cpu_share = Some([1.0, 0.4]);
        two.settled = Some(Settled {
            faster: 0,
            kept: true,
            fastest: 0,
            others: vec![Versus {
                row: 1,
                comparison: Comparison {
                    ratio: crate::model::Estimate {
                        value: 2.0,
                        lo: 1.9,
                        hi: 2.1,
                        n: 6,
                    },
                    significant: true,
                    outcome: Outcome::Different,
                },
            }],
            unrepeated: Vec::new(),
            band: 1.05,
            contenders: 2,
        });
        two.note(StepNote::GridCut {
            round: 1,
            rounds: 3,
            runs: 4,
        });
        Report {
            cpus: (Some(0), Some(1)),
            steps: vec![one, two],
            best: fast,
            best_pinned: true,
            why: Why {
                step: 1,
                stage_two: true,
                event_bytes: 24,
                against: vec![Against {
                    name: "earlier.json".into(),
                    config: slow.with_affinity(Some(hspc::Affinity {
                        producer_cpu: 0,
                        consumer_cpu: 1,
                    })),
                }],
            },
            refused_pins: 2,
        }
    }

    #[test]
    fn the_run_file_keeps_the_findings_as_data() {
        let m = measurement(&settled_report());
        assert!(
            m.findings
                .iter()
                .all(|f| !matches!(f, Finding::Note { .. })),
            "{:?}",
            m.findings
        );
        let Finding::TunerChoice {
            config,
            step,
            kept,
            against,
            affinity,
            ..
        } = &m.findings[0]
        else {
            panic!("the choice comes first: {:?}", m.findings[0])
        };
        assert_eq!(config, "3 × 4096 B, pad 128 B, spin_then_park");
        assert_eq!(step, "stage two: fib, 24-byte events");
        assert!(*kept && *affinity);
        assert!(matches!(
            &against[..],
            [Against { name, stands: Stands::Compared { outcome: Outcome::Different, .. } }]
                if name == "earlier.json"
        ));
        let steps: Vec<(&str, &StepNote)> = m
            .findings
            .iter()
            .filter_map(|f| match f {
                Finding::TuneStep { step, note } => Some((step.as_str(), note)),
                _ => None,
            })
            .collect();
        assert!(matches!(
            steps[0],
            ("stage one: wait strategy", StepNote::Switches)
        ));
        assert!(matches!(steps[1].1, StepNote::GridCut { round: 1, .. }));
        assert!(matches!(
            steps[2].1,
            StepNote::CpuShare { consumer_share, .. } if *consumer_share == 0.4
        ));
        assert!(m.warnings.iter().eq([&Warning::PinsRefused { pins: 2 }]));
        // The table labels where each row stands, in a word or two.
        let t = step_table(&settled_report().steps[1]);
        let vs = t.columns.iter().position(|c| c == "vs_choice").unwrap();
        let labels: Vec<&Value> = t.rows.iter().map(|r| &r[vs]).collect();
        assert_eq!(labels, [&json!("choice"), &json!("slower")]);
        // A settling note names the rows as the table finally does, even when
        // the step relabels them after settling (as the padding step does).
        let mut r = settled_report();
        r.steps[1].notes.push(Note::Settled);
        r.steps[1].rows[0].label = "p3, padding 128 B".into();
        let m = measurement(&r);
        let settled = m.findings.iter().find_map(|f| match f {
            Finding::TuneStep {
                note: StepNote::Settled(n),
                ..
            } => Some(n),
            _ => None,
        });
        assert_eq!(
            settled.map(|n| (n.choice.label.as_str(), n.contenders)),
            Some(("p3, padding 128 B", 2))
        );
    }
}
