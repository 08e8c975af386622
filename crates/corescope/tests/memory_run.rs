//! A quick memory run on the test machine: every series, positive values, working
//! sets that cover the machine's caches, the findings the issue asks for. No timing
//! thresholds.

use assert_cmd::Command;
use corescope::model::Status;

#[test]
fn quick_memory_run_has_every_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "run",
            "memory",
            "--quick",
            "--threads",
            "1,3",
            "--placement",
            "linear,scatter",
            "--no-progress",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let run = corescope::store::load(&out).expect("run file loads");
    let p = &run.probes[0];
    assert_eq!(p.id, "memory");
    assert!(
        matches!(p.status, Status::Completed),
        "{:?} {:?}",
        p.status,
        p.reason
    );
    let thp = p.params["thp_mode"].as_str().unwrap_or("").to_string();
    let mut kernels = vec!["read", "write", "copy", "triad", "read-main-init"];
    if thp != "never" && thp != "unknown" {
        kernels.push("read-thp");
    } else {
        assert!(p
            .warnings
            .iter()
            .any(|w| w.to_string().starts_with("read-thp: skipped")));
    }
    for k in kernels {
        for placement in ["linear", "scatter"] {
            let s = p
                .series(&format!("{k}/{placement}"))
                .unwrap_or_else(|| panic!("{k}/{placement}"));
            assert_eq!(s.x, vec![1.0, 3.0], "{k}/{placement}");
            assert_eq!(s.y_name, "bytes_per_s");
            assert!(s.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{s:?}");
        }
    }
    // The working-set sweep reaches past every cache the topology reports.
    let ws: Vec<u64> = serde_json::from_value(p.params["ws_bytes"].clone()).unwrap();
    for c in &run.topology.caches {
        assert!(
            ws.iter().any(|&s| s >= 2 * c.size_bytes),
            "L{} {}",
            c.level,
            c.size_bytes
        );
    }
    for name in ["ws-read/1t", "ws-read/all", "ws-latency/1t"] {
        let s = p.series(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(s.x_name, "bytes");
        assert_eq!(s.x.len(), ws.len(), "{name}");
        assert!(s.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{s:?}");
    }
    // Plausibility: a random chase far beyond the caches is slower than inside L1.
    let lat = p.series("ws-latency/1t").unwrap();
    assert!(lat.y.last().unwrap() > lat.y.first().unwrap(), "{lat:?}");
    let f = p
        .findings
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(f.contains("read: "), "{f}");
    assert!(f.contains("write-allocate traffic is not counted"), "{f}");
    assert!(f.contains("first touch by the main thread"), "{f}");
    if run.topology.numa_nodes <= 1 {
        assert!(f.contains("no difference expected: 1 NUMA node"), "{f}");
    }
}
