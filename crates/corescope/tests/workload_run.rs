//! A quick workload run: every kind of work measured, scalability relative to one
//! thread, and the counters of every worker (MIPS / CPI where a PMU exists, the
//! software counts always). No timing thresholds.

use assert_cmd::Command;
use corescope::model::Status;

#[test]
fn quick_workload_run_reports_rates_and_scalability() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "run",
            "workload",
            "--quick",
            "--threads",
            "1,2,4",
            "--no-progress",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let run = corescope::store::load(&out).unwrap();
    let p = &run.probes[0];
    assert_eq!(p.id, "workload");
    assert!(matches!(p.status, Status::Completed), "{:?}", p.reason);
    let mut works = vec!["compute", "working-set"];
    let io_skipped = p
        .warnings
        .iter()
        .any(|w| w.to_string().starts_with("io: skipped"));
    if !io_skipped {
        works.extend(["io-open-once", "io-open-each"]);
    }
    for w in works {
        let rate = p
            .series(&format!("{w}/rate"))
            .unwrap_or_else(|| panic!("{w}"));
        assert_eq!(rate.x, vec![1.0, 2.0, 4.0]);
        assert!(rate.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{rate:?}");
        let sc = p.series(&format!("{w}/scalability")).unwrap();
        assert_eq!(sc.y[0], 1.0, "scalability is relative to one thread");
        assert_eq!(sc.x, rate.x);
        // One ratio per round (paired with the same round's one-thread rate), so every
        // point carries as many samples as the rate and an interval around its value.
        for i in 0..sc.x.len() {
            assert_eq!(sc.n[i], rate.n[i], "{w}: samples at {}", sc.x[i]);
            assert!(sc.n[i] >= 2, "{w}: repeated by the runner");
            assert!(
                sc.y_lo[i] <= sc.y[i] && sc.y[i] <= sc.y_hi[i],
                "{w}: {sc:?}"
            );
        }
    }
    // The best thread count against one thread, as a typed comparison.
    for w in ["compute", "working-set"] {
        assert!(
            p.findings.iter().any(|f| matches!(
                f,
                corescope::model::Finding::Comparison { what, b, .. }
                    if what.starts_with(w) && (b == "1 thread" || what.contains("vs one thread"))
            )),
            "{w}: {:?}",
            p.findings
        );
    }
    // What the workers could count, as data: each group counted or why not.
    let counters: corescope::counters::CounterStatus =
        serde_json::from_value(p.params["counters"].clone()).unwrap();
    assert_eq!(
        counters.software,
        corescope::counters::Availability::Counted,
        "{counters:?}"
    );
    common_counters(p, &["compute ×1", "working-set ×4"]);
}

/// The counters every worker took: recorded per case, shown in a table with MIPS /
/// CPI / efficiency where a PMU exists and a "skipped: no PMU" note where not.
fn common_counters(p: &corescope::model::ProbeResult, cases: &[&str]) {
    use corescope::counters::Availability;
    let pc = p.counters.as_ref().expect("counters recorded");
    assert_eq!(pc.software, Availability::Counted, "{pc:?}");
    for case in cases {
        let c = pc.cases.iter().find(|c| c.case == *case).unwrap();
        assert!(c.rounds.len() >= 2, "{case}: one entry per round");
        let r = &c.rounds[0].total;
        assert!(
            r.task_clock_ns.unwrap() > 0 && r.page_faults.is_some(),
            "{r:?}"
        );
    }
    let table = p
        .tables
        .iter()
        .find(|t| t.name.starts_with("counters per case"));
    let table = table.expect("counters per case table");
    let has_mips = table.columns.iter().any(|c| c == "MIPS");
    let note = p.findings.iter().map(|f| f.to_string()).collect::<Vec<_>>();
    match &pc.hardware {
        Availability::Counted => assert!(has_mips),
        Availability::Skipped(why) => {
            assert!(!has_mips);
            assert!(
                note.iter()
                    .any(|n| n == &format!("MIPS / CPI / efficiency: skipped: {why}")),
                "{note:?}"
            );
        }
    }
    assert!(p
        .tables
        .iter()
        .any(|t| t.name == corescope::counters::SUMMARY_TABLE));
}
