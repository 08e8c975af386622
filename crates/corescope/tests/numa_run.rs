//! A quick NUMA run on the test machine (one node): its diagonal, with an interval,
//! the binding checked page by page, and the finding that says only the diagonal
//! exists. No timing thresholds.

use assert_cmd::Command;
use corescope::model::{Finding, Status};

#[test]
fn quick_numa_run_measures_the_diagonal_and_checks_the_binding() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    Command::cargo_bin("corescope")
        .unwrap()
        .args(["run", "numa", "--quick", "--no-progress", "--out"])
        .arg(&out)
        .assert()
        .success();
    let run = corescope::store::load(&out).expect("run file loads");
    let p = &run.probes[0];
    assert_eq!(p.id, "numa");
    assert_eq!(p.status, Status::Completed, "{:?}", p.reason);
    let nodes: Vec<u32> = serde_json::from_value(p.params["nodes"].clone()).unwrap();
    let n = nodes.len();
    for (name, unit) in [("numa/read", "bytes_per_s"), ("numa/latency", "ns")] {
        let m = p.matrices.iter().find(|m| m.name == name).expect(name);
        assert_eq!(m.unit, unit);
        assert_eq!((m.rows.len(), m.cols.len()), (n, n));
        for row in &m.values {
            for v in row {
                assert!(v.is_some_and(|v| v > 0.0 && v.is_finite()), "{name}: {v:?}");
            }
        }
    }
    // Every cell has an interval from the runner's rounds.
    for s in &p.series {
        assert_eq!(s.x.len(), n, "{}", s.name);
        for i in 0..s.x.len() {
            assert!(s.n[i] >= 2, "{}: {} samples", s.name, s.n[i]);
            assert!(s.y_lo[i] <= s.y[i] && s.y[i] <= s.y_hi[i]);
        }
    }
    // The binding was checked, never assumed: a share per cell, or a warning why not.
    let pages = p
        .matrices
        .iter()
        .find(|m| m.name == "numa/pages-on-node")
        .unwrap();
    let table = p.tables.iter().find(|t| t.name == "numa/binding").unwrap();
    assert_eq!(table.rows.len(), 2 * n * n);
    for v in pages.values.iter().flatten() {
        match v {
            Some(share) if *share == 1.0 => {}
            _ => assert!(
                p.warnings.iter().any(|w| w.to_string().contains("numa ")),
                "{v:?} without a warning"
            ),
        }
    }
    if n == 1 {
        assert!(p
            .findings
            .iter()
            .any(|f| matches!(f, Finding::Note { text } if text.contains("diagonal only"))));
    }
}
