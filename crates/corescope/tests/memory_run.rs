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
            // The budget stops a probe on a slow machine; this test is about
            // shape: a guest at 9 GB/s per thread needs ~40 s for the quick plan.
            "--budget",
            "600",
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
    // Every kernel at every thread count; the first-touch and THP variants only
    // where each thread has a CPU of its own (3 threads on 2 CPUs: not measured).
    let cpus = run.topology.allowed_count() as f64;
    let mut kernels = vec!["read", "write", "copy", "triad", "read-main-init"];
    if thp != "never" && thp != "unknown" {
        kernels.extend(["read-thp", "read-nothp"]);
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
            let expect: Vec<f64> = [1.0, 3.0]
                .into_iter()
                .filter(|&x| !k.starts_with("read-") || x <= cpus)
                .collect();
            assert_eq!(s.x, expect, "{k}/{placement}");
            // Repetitions kept, with an interval around each median.
            for i in 0..s.x.len() {
                assert!(s.n[i] >= 1 && s.samples[i].len() == s.n[i], "{s:?}");
                assert!(s.y_lo[i] <= s.y[i] && s.y[i] <= s.y_hi[i], "{s:?}");
            }
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
        // Repeated in both epochs: an interval, never a point shown as exact.
        let least = corescope::probes::MIN_INTERVAL_SAMPLES;
        assert!(s.n.iter().all(|&n| n >= least), "{name}: n {:?}", s.n);
        for i in 0..s.x.len() {
            assert!(
                s.y_lo[i] <= s.y[i] && s.y[i] <= s.y_hi[i],
                "{name} point {i}"
            );
        }
        if !s.epochs.is_empty() {
            for (counts, reps) in s.epochs.iter().zip(&s.samples) {
                assert_eq!(counts.iter().sum::<usize>(), reps.len(), "{name}");
            }
        }
    }
    // Every group's measurement left its record of the machine's state.
    assert!(!p.machine_states.is_empty());
    assert!(p.machine_states.iter().any(|m| m.epoch == 1));
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
    assert!(f.contains("main thread's first touch"), "{f}");
    if run.topology.numa_nodes <= 1 {
        assert!(f.contains("1 NUMA node: no difference expected"), "{f}");
    }
    // Typed: the first-touch comparison is a comparison with an interval.
    assert!(p.findings.iter().any(|f| matches!(
        f,
        corescope::model::Finding::Comparison { what, ratio, .. }
            if what.starts_with("first touch") && ratio.lo <= ratio.value && ratio.value <= ratio.hi
    )));
}
