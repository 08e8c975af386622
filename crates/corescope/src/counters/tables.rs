//! Counter readings filed into a probe's result (one record per case, one round
//! per repetition) and shaped into its tables: the summary over the probe, one
//! table per kind of case, the note on hardware counters.

use super::{issue_width_here, Availability, CounterReading, CounterStatus, TeamCount};
use crate::model::{CaseCounters, ProbeCounters, ProbeResult, RoundCount, Table, Warning};

/// A new record of a probe's counters, with the issue width of this machine.
fn probe_counters(status: &CounterStatus) -> ProbeCounters {
    let (issue_width, issue_width_source) = match issue_width_here() {
        Ok(w) => (Some(w.width), format!("{}: {}", w.uarch, w.source)),
        Err(why) => (None, why.to_string()),
    };
    ProbeCounters {
        software: status.software.clone(),
        hardware: status.hardware.clone(),
        kernel_counted: status.kernel_counted,
        issue_width,
        issue_width_source,
        cases: Vec::new(),
    }
}

/// One round of a case: its teams' counts summed.
fn round_of(teams: &[TeamCount]) -> RoundCount {
    let mut total: Option<CounterReading> = None;
    let mut pinned_migrations: Option<u64> = None;
    for t in teams {
        let team = t.total().unwrap_or_default();
        match &mut total {
            Some(s) => s.accumulate(&team),
            None => total = Some(team),
        }
        for th in t.threads.iter().filter(|th| th.pinned) {
            let m = th.reading.and_then(|r| r.cpu_migrations).unwrap_or(0);
            *pinned_migrations.get_or_insert(0) += m;
        }
    }
    RoundCount {
        wall_ns: teams.iter().map(|t| t.wall_ns).sum(),
        teams: teams.len(),
        thread_runs: teams.iter().map(|t| t.threads.len()).sum(),
        total: total.unwrap_or_default(),
        pinned_migrations,
    }
}

/// Record what the teams of one run of `case` counted (one round) in
/// `result.counters`, update the case's MIPS / CPI / efficiency, and warn when a
/// pinned worker migrated. Does nothing without teams.
pub fn record(result: &mut ProbeResult, case: &str, teams: Vec<TeamCount>) {
    let Some(first) = teams.first() else {
        return;
    };
    let pc = result
        .counters
        .get_or_insert_with(|| probe_counters(&first.status));
    // A team that could not count (descriptors) must not hide later teams that did.
    for t in &teams {
        if pc.software != Availability::Counted && t.status.software == Availability::Counted {
            pc.software = Availability::Counted;
            pc.kernel_counted = t.status.kernel_counted;
        }
        if pc.hardware != Availability::Counted && t.status.hardware == Availability::Counted {
            pc.hardware = Availability::Counted;
        }
    }
    let width = pc.issue_width;
    let i = match pc.cases.iter().position(|c| c.case == case) {
        Some(i) => i,
        None => {
            pc.cases.push(CaseCounters::new(case));
            pc.cases.len() - 1
        }
    };
    let c = &mut pc.cases[i];
    c.threads = teams
        .iter()
        .map(|t| t.threads.len())
        .fold(c.threads, usize::max);
    c.rounds.push(round_of(&teams));
    c.derive(width);
    let migrations: u64 = c.rounds.iter().filter_map(|r| r.pinned_migrations).sum();
    let rounds = c.rounds.len();
    if migrations > 0 {
        let w = result.warnings.as_mut_vec();
        w.retain(|w| !matches!(w, Warning::Migrated { case: c, .. } if c == case));
        w.push(Warning::Migrated {
            case: case.into(),
            migrations,
            rounds,
        });
    }
}

fn cell(v: Option<f64>) -> serde_json::Value {
    v.filter(|v| v.is_finite())
        .map(serde_json::Value::from)
        .unwrap_or(serde_json::Value::Null)
}

/// A count as written (`12`, not `12.00`); empty where not counted.
fn count_cell(v: Option<u64>) -> serde_json::Value {
    v.map(|v| serde_json::Value::from(v.to_string()))
        .unwrap_or(serde_json::Value::Null)
}

/// A share of 1 as a percentage (`54 %`); empty where unknown.
fn share_cell(v: Option<f64>) -> serde_json::Value {
    v.filter(|v| v.is_finite())
        .map(|v| serde_json::Value::from(format!("{:.0} %", v * 100.0)))
        .unwrap_or(serde_json::Value::Null)
}

/// Sum of `wall_ns` × workers over the rounds: the workers' wall time, ns.
fn worker_wall_ns(c: &CaseCounters) -> f64 {
    c.rounds
        .iter()
        .map(|r| r.wall_ns as f64 * r.thread_runs as f64 / r.teams.max(1) as f64)
        .sum()
}

/// Name of the table [`summary_table`] makes.
pub const SUMMARY_TABLE: &str = "event counters (around the measured kernels)";

/// The cases whose software counts exist (a case that refused its counters, e.g. for
/// want of file descriptors, has none): summed alone, so that one refused case does
/// not blank the totals of all the others. Every case when none was counted.
fn counted_cases(pc: &ProbeCounters) -> Vec<&CaseCounters> {
    let counted: Vec<&CaseCounters> = pc
        .cases
        .iter()
        .filter(|c| c.total().is_some_and(|t| t.task_clock_ns.is_some()))
        .collect();
    if counted.is_empty() {
        pc.cases.iter().collect()
    } else {
        counted
    }
}

/// The summary's first row: how many cases and rounds its totals cover, and the
/// cases left out of them.
fn counted_row(
    (cases, left_out): (usize, usize),
    runs: usize,
    worker_s: f64,
) -> Vec<serde_json::Value> {
    let (cell, note) = if left_out == 0 {
        (
            format!("{cases} cases, {runs} rounds"),
            "workers' wall time between their start and end stamps".to_string(),
        )
    } else {
        (
            format!("{cases} of {} cases, {runs} rounds", cases + left_out),
            format!(
                "workers' wall time between their start and end stamps; {left_out} {} \
                 without counts (refused: see the warnings) left out of every total",
                if left_out == 1 { "case" } else { "cases" }
            ),
        )
    };
    vec![
        "kernels counted".into(),
        cell.into(),
        format!("{worker_s:.2} worker-seconds").into(),
        note.into(),
    ]
}

/// One probe's counters in a few rows (every probe with teams): totals over every
/// case and round, per worker-second, and what was not counted and why.
pub fn summary_table(pc: &ProbeCounters) -> Option<Table> {
    if pc.cases.is_empty() {
        return None;
    }
    let cases = counted_cases(pc);
    let mut total: Option<CounterReading> = None;
    for t in cases.iter().filter_map(|c| c.total()) {
        match &mut total {
            Some(s) => s.accumulate(&t),
            None => total = Some(t),
        }
    }
    let total = total.unwrap_or_default();
    let worker_s: f64 = cases.iter().map(|c| worker_wall_ns(c)).sum::<f64>() * 1e-9;
    let runs: usize = cases.iter().map(|c| c.rounds.len()).sum();
    let left_out = pc.cases.len() - cases.len();
    let pinned: Option<u64> = pc
        .cases
        .iter()
        .flat_map(|c| c.rounds.iter().filter_map(|r| r.pinned_migrations))
        .reduce(|a, b| a + b);
    let per_s = |v: Option<u64>| cell(v.map(|v| v as f64 / worker_s).filter(|_| worker_s > 0.0));
    let mut rows: Vec<Vec<serde_json::Value>> =
        vec![counted_row((cases.len(), left_out), runs, worker_s)];
    let mut row = |name: &str, v: Option<u64>, rate: serde_json::Value, note: String| {
        rows.push(vec![name.into(), count_cell(v), rate, note.into()]);
    };
    let sw_note = |what: &str| match &pc.software {
        Availability::Counted => what.to_string(),
        other => other.to_string(),
    };
    let busy = total
        .task_clock_ns
        .map(|t| t as f64 * 1e-9 / worker_s)
        .filter(|b| b.is_finite());
    row(
        "task-clock (ns)",
        total.task_clock_ns,
        share_cell(busy),
        sw_note("per worker-second: the share of its wall time a worker was on a CPU"),
    );
    let ctx_note = if pc.kernel_counted {
        "every switch away from the worker"
    } else {
        "user mode only (perf_event_paranoid): may read 0"
    };
    row(
        "context switches",
        total.context_switches,
        per_s(total.context_switches),
        sw_note(ctx_note),
    );
    row(
        "CPU migrations",
        total.cpu_migrations,
        per_s(total.cpu_migrations),
        sw_note(&match pinned {
            Some(p) => format!("{p} in workers pinned to one CPU"),
            None => "no worker was pinned".into(),
        }),
    );
    row(
        "page faults",
        total.page_faults,
        per_s(total.page_faults),
        sw_note("minor and major, after the setup's first touch"),
    );
    let hw = |what: &str| match &pc.hardware {
        Availability::Counted => what.to_string(),
        other => other.to_string(),
    };
    if pc.hardware == Availability::Counted {
        row(
            "instructions",
            total.instructions,
            per_s(total.instructions),
            hw("user mode"),
        );
        row("cycles", total.cycles, per_s(total.cycles), hw("user mode"));
    } else {
        row("instructions, cycles", None, cell(None), hw(""));
    }
    if total.cache_misses.is_some() {
        row(
            "cache misses",
            total.cache_misses,
            per_s(total.cache_misses),
            "last level, generic event".into(),
        );
    }
    Some(Table {
        name: SUMMARY_TABLE.into(),
        columns: vec![
            "counter".into(),
            "total".into(),
            "per worker-second".into(),
            "note".into(),
        ],
        rows,
    })
}

/// Per case (those `keep` selects): MIPS, CPI and efficiency (medians over
/// rounds) where the PMU counted, and the software counts; `None` when no case
/// matches. The compute and workload tables of seed 001.
pub fn case_table(pc: &ProbeCounters, name: &str, keep: impl Fn(&str) -> bool) -> Option<Table> {
    let hw = pc.hardware == Availability::Counted;
    let mut columns: Vec<String> = vec!["case".into(), "threads".into(), "rounds".into()];
    if hw {
        columns.extend(["MIPS".into(), "CPI".into(), "efficiency".into()]);
    }
    columns.extend([
        "CPU busy".into(),
        "switches".into(),
        "migrations".into(),
        "faults".into(),
    ]);
    let mut rows = Vec::new();
    for c in pc.cases.iter().filter(|c| keep(&c.case)) {
        let t = c.total().unwrap_or_default();
        let mut row = vec![
            c.case.clone().into(),
            count_cell(Some(c.threads as u64)),
            count_cell(Some(c.rounds.len() as u64)),
        ];
        if hw {
            let v = |e: &Option<crate::model::Estimate>| e.map(|e| e.value);
            row.extend([
                cell(v(&c.mips)),
                cell(v(&c.cpi)),
                share_cell(v(&c.efficiency)),
            ]);
        }
        let wall = worker_wall_ns(c);
        let busy = t
            .task_clock_ns
            .map(|b| b as f64 / wall)
            .filter(|_| wall > 0.0);
        row.extend([
            share_cell(busy),
            count_cell(t.context_switches),
            count_cell(t.cpu_migrations),
            count_cell(t.page_faults),
        ]);
        rows.push(row);
    }
    (!rows.is_empty()).then(|| Table {
        name: name.into(),
        columns,
        rows,
    })
}

/// What the hardware part says in a probe's findings: the skip and its reason,
/// or where efficiency's denominator comes from.
pub fn hardware_note(pc: &ProbeCounters) -> String {
    match (&pc.hardware, pc.issue_width) {
        (Availability::Skipped(why), _) => {
            format!("MIPS / CPI / efficiency: skipped: {why}")
        }
        (Availability::Counted, Some(w)) => format!(
            "efficiency = IPC ÷ issue width {w} ({})",
            pc.issue_width_source
        ),
        (Availability::Counted, None) => format!(
            "efficiency: not computed, the issue width is {}",
            pc.issue_width_source
        ),
    }
}

/// Seed 001's MIPS / CPI / efficiency beside the rates: per kind of work (the case
/// labels start with it; no kinds: one table of all cases), a table of every case's
/// counters, and the hardware part's skip reason or the source of the issue width
/// as a note; `None` for a result without counters.
pub fn case_tables(result: &ProbeResult, kinds: &[&str]) -> Option<(String, Vec<Table>)> {
    let pc = result.counters.as_ref()?;
    let note = hardware_note(pc);
    let all = "counters per case (medians over rounds)";
    let tables: Vec<_> = if kinds.is_empty() {
        case_table(pc, all, |_| true).into_iter().collect()
    } else {
        kinds
            .iter()
            .filter_map(|k| {
                case_table(pc, &format!("{k}: {all}"), |c| {
                    c.strip_prefix(k).is_some_and(|r| r.starts_with(' '))
                })
            })
            .collect()
    };
    Some((note, tables))
}

#[cfg(test)]
mod tests {
    use super::super::tests::recorded;
    use super::super::ThreadCount;
    use super::*;
    use crate::model::{ProbeCounters, ProbeResult, Warning};

    fn team(instructions: u64, cycles: u64, wall_ns: u64, migrations: u64) -> TeamCount {
        let reading = CounterReading {
            instructions: Some(instructions / 2),
            cycles: Some(cycles / 2),
            cpu_migrations: Some(migrations),
            task_clock_ns: Some(wall_ns),
            ..recorded()
        };
        TeamCount {
            status: CounterStatus {
                software: Availability::Counted,
                hardware: Availability::Counted,
                kernel_counted: true,
            },
            threads: vec![
                ThreadCount {
                    pinned: true,
                    reading: Some(reading),
                },
                ThreadCount {
                    pinned: false,
                    reading: Some(CounterReading {
                        cpu_migrations: Some(0),
                        ..reading
                    }),
                },
            ],
            wall_ns,
        }
    }

    /// A case whose counters were refused (no task-clock) is left out of the summary's
    /// totals, which keep the counted cases' sums and say how many were left out.
    #[test]
    fn a_refused_case_does_not_blank_the_summary() {
        use crate::model::Status;
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        r.counters = Some(ProbeCounters {
            software: Availability::Counted,
            hardware: Availability::Counted,
            kernel_counted: true,
            issue_width: None,
            issue_width_source: "test".into(),
            cases: vec![],
        });
        record(&mut r, "counted", vec![team(2000, 1000, 500, 0)]);
        let mut refused = team(2000, 1000, 500, 0);
        for t in &mut refused.threads {
            t.reading = t.reading.map(|c| CounterReading {
                task_clock_ns: None,
                ..c
            });
        }
        record(&mut r, "refused", vec![refused]);
        let s = summary_table(r.counters.as_ref().unwrap()).unwrap();
        assert_eq!(s.rows[0][1], serde_json::json!("1 of 2 cases, 1 rounds"));
        assert!(s.rows[0][3]
            .as_str()
            .unwrap()
            .contains("1 case without counts"));
        // Two workers of 500 ns task-clock each in the counted case alone.
        assert_eq!(s.rows[1][1], serde_json::json!("1000"));
    }

    /// Rounds filed into a result: the case's MIPS / CPI / efficiency are medians
    /// over rounds of the recorded counts, the tables carry them, and a pinned
    /// worker that migrated becomes one typed warning for the case.
    #[test]
    fn recorded_rounds_give_medians_tables_and_warnings() {
        use crate::model::Status;
        let mut r = ProbeResult::new("compute", "t", Status::Completed);
        r.counters = Some(ProbeCounters {
            software: Availability::Counted,
            hardware: Availability::Counted,
            kernel_counted: true,
            issue_width: Some(4),
            issue_width_source: "test".into(),
            cases: vec![],
        });
        // 2·10⁹ instructions in 10⁹ cycles over 0.5 s: 4000 MIPS, CPI 0.5, IPC 2, 50 %.
        for (instr, wall) in [(2e9, 5e8), (2e9, 5e8), (1e9, 5e8)] {
            record(
                &mut r,
                "int scatter ×2",
                vec![team(instr as u64, 1e9 as u64, wall as u64, 0)],
            );
        }
        record(
            &mut r,
            "fp scatter ×2",
            vec![team(1e9 as u64, 1e9 as u64, 1e9 as u64, 1)],
        );
        record(
            &mut r,
            "fp scatter ×2",
            vec![team(1e9 as u64, 1e9 as u64, 1e9 as u64, 2)],
        );
        record(&mut r, "nothing", vec![]);
        let pc = r.counters.as_ref().unwrap();
        assert_eq!(pc.cases.len(), 2);
        let int = &pc.cases[0];
        assert_eq!((int.threads, int.rounds.len()), (2, 3));
        assert_eq!(int.mips.unwrap().value, 4000.0);
        assert_eq!(int.cpi.unwrap().value, 0.5);
        assert_eq!(int.efficiency.unwrap().value, 0.5);
        assert_eq!(int.mips.unwrap().n, 3);
        assert_eq!(int.rounds[0].pinned_migrations, Some(0));
        // Only the pinned worker's migrations count, summed over rounds, one warning.
        let migrated: Vec<&Warning> = r
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::Migrated { .. }))
            .collect();
        assert_eq!(
            migrated,
            vec![&Warning::Migrated {
                case: "fp scatter ×2".into(),
                migrations: 3,
                rounds: 2
            }]
        );
        let t = case_table(pc, "int", |c| c.starts_with("int ")).unwrap();
        assert_eq!(t.rows.len(), 1);
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        assert_eq!(t.rows[0][col("MIPS")], serde_json::json!(4000.0));
        assert_eq!(t.rows[0][col("efficiency")], serde_json::json!("50 %"));
        assert_eq!(t.rows[0][col("migrations")], serde_json::json!("0"));
        assert!(case_table(pc, "none", |_| false).is_none());
        let s = summary_table(pc).unwrap();
        assert_eq!(s.name, SUMMARY_TABLE);
        assert_eq!(s.rows[1][0], serde_json::json!("task-clock (ns)"));
        assert!(hardware_note(pc).contains("issue width 4"));
        // Without a PMU: no MIPS columns, and the note says why.
        let mut no_pmu = pc.clone();
        no_pmu.hardware = Availability::Skipped(crate::counters::SkipReason::refused(
            crate::counters::CounterEvent::Cycles,
            std::io::Error::from_raw_os_error(libc::ENOENT),
        ));
        let t = case_table(&no_pmu, "int", |_| true).unwrap();
        assert!(!t.columns.iter().any(|c| c == "MIPS"));
        assert!(hardware_note(&no_pmu).contains("skipped: no PMU"));
        // The record round-trips, and a result without one still loads.
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<ProbeResult>(&json).unwrap(), r);
        let old = r#"{"id":"compute","status":"completed"}"#;
        assert!(serde_json::from_str::<ProbeResult>(old)
            .unwrap()
            .counters
            .is_none());
    }
}
