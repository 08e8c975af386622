//! A quick workload run: every kind of work measured, scalability relative to one
//! thread, and an honest word on hardware counters. No timing thresholds.

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
    if !p.params.contains_key("io_skipped") {
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
        for (r, s) in rate.y.iter().zip(&sc.y) {
            assert!((r / rate.y[0] - s).abs() < 1e-9);
        }
    }
    let counters = p.params["counters"].as_str().unwrap();
    assert!(counters.starts_with("available") || counters.starts_with("not available here"));
    if counters.starts_with("not") {
        assert!(p
            .findings
            .iter()
            .any(|f| f.to_string().starts_with("counters: not available here")));
    }
}
