//! A quick `syscall` run on the test machine: structure of the run file, and
//! plausibility only (no timing thresholds).

use assert_cmd::Command;
use corescope::model::{Finding, Status};

const CALLS: [&str; 4] = ["getpid", "clock_gettime", "futex_wake", "sched_yield"];

#[test]
fn quick_syscall_run_writes_four_distributions_and_their_findings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let assert = Command::cargo_bin("corescope")
        .unwrap()
        .args(["run", "syscall", "--quick", "--no-progress", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    // The run ends with the one-screen summary: a line per probe, no full tables.
    assert!(
        stdout.lines().any(|l| l.starts_with("syscall ")),
        "{stdout}"
    );
    assert!(!stdout.contains("== syscall"), "{stdout}");

    let run = corescope::store::load(&out).expect("run file loads");
    assert_eq!(run.probes.len(), 1);
    let p = &run.probes[0];
    assert_eq!(p.id, "syscall");
    assert!(
        matches!(p.status, Status::Completed),
        "{:?} {:?}",
        p.status,
        p.reason
    );
    assert_eq!((p.cases_planned, p.cases_done), (1, 1));
    for key in ["cpu", "calls_per_batch", "max_batches_per_call", "calls"] {
        assert!(p.params.contains_key(key), "{key}: {:?}", p.params);
    }
    let names: Vec<&str> = p.distributions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, CALLS);
    // Interleaved batch by batch: every call got the same number of batches.
    let n = p.distributions[0].summary.count;
    assert!(n > 0);
    for d in &p.distributions {
        let s = &d.summary;
        assert_eq!(d.unit, "ns");
        assert_eq!(s.count, n, "{}", d.name);
        assert!(
            s.min >= 0.0 && s.min <= s.p50 && s.p50 <= s.max,
            "{}: {s:?}",
            d.name
        );
        assert!(s.p50_lo <= s.p50 && s.p50 <= s.p50_hi, "{}: {s:?}", d.name);
        assert!(s.p50.is_finite() && s.max.is_finite(), "{}: {s:?}", d.name);
        assert_eq!(
            d.histogram.counts.iter().sum::<u64>(),
            n as u64,
            "{}",
            d.name
        );
    }
    let values: Vec<&Finding> = p
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::Value { unit, .. } if unit == "ns"))
        .collect();
    assert_eq!(values.len(), 4, "{:?}", p.findings);
    for (f, d) in values.iter().zip(&p.distributions) {
        if let Finding::Value { value, .. } = f {
            assert_eq!(value.value, d.summary.p50);
            assert_eq!(value.n, n);
        }
    }
}
