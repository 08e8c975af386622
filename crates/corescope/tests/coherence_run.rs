//! Quick runs of the coherence probes: no lost increments, square matrices labelled
//! with the measured CPUs, timelines per thread, a padding sweep that covers the cache
//! line, and a budget that stops a deliberately long run. No timing thresholds.

use assert_cmd::Command;
use corescope::model::{RunFile, Status};

fn run(args: &[&str]) -> RunFile {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    Command::cargo_bin("corescope")
        .unwrap()
        .args(["run", "--no-progress"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    corescope::store::load(&out).unwrap()
}

#[test]
fn coherence_probes_produce_their_shapes() {
    let r = run(&[
        "atomics",
        "c2c",
        "false-sharing",
        "sharing",
        "--quick",
        "--threads",
        "1,2,5",
    ]);
    let cpus = r.topology.allowed_count();
    for p in &r.probes {
        assert!(
            matches!(p.status, Status::Completed),
            "{}: {:?} {:?}",
            p.id,
            p.status,
            p.reason
        );
        assert!(!p.findings.is_empty(), "{}", p.id);
    }
    let atomics = &r.probes[0];
    for m in ["cas", "cas-backoff", "fetch-add", "mutex"] {
        for pl in ["compact", "scatter"] {
            let s = atomics
                .series(&format!("{m}/{pl}"))
                .unwrap_or_else(|| panic!("{m}/{pl}"));
            assert_eq!(s.x, vec![1.0, 2.0, 5.0]);
            assert!(s.y.iter().all(|&y| y > 0.0));
        }
    }
    assert!(atomics.series("cas-failures/scatter").is_some());
    if cpus >= 2 {
        for id in ["c2c", "sharing"] {
            let p = r.probes.iter().find(|p| p.id == id).unwrap();
            let measured: Vec<u32> = serde_json::from_value(p.params["cpus"].clone()).unwrap();
            for m in &p.matrices {
                assert_eq!(m.rows.len(), measured.len(), "{}", m.name);
                assert_eq!(m.rows, m.cols, "{}: square, same labels", m.name);
                assert_eq!(
                    m.rows,
                    measured.iter().map(|c| c.to_string()).collect::<Vec<_>>()
                );
                for (i, row) in m.values.iter().enumerate() {
                    assert_eq!(row.len(), m.cols.len());
                    assert!(row[i].is_none(), "{}: diagonal not measured", m.name);
                    for (j, v) in row.iter().enumerate() {
                        if i != j {
                            let v = v.unwrap_or_else(|| panic!("{} [{i}][{j}]", m.name));
                            // Spreads may be 0; values are positive.
                            let ok = if m.name.ends_with("/spread") {
                                v >= 0.0
                            } else {
                                v > 0.0
                            };
                            assert!(ok && v == m.values[j][i].unwrap(), "{}", m.name);
                        }
                    }
                }
            }
            let names: Vec<&str> = p.matrices.iter().map(|m| m.name.as_str()).collect();
            let want: &[&str] = if id == "c2c" {
                &["c2c/cas", "c2c/cas/spread", "c2c/rw", "c2c/rw/spread"]
            } else {
                &[
                    "sharing/int",
                    "sharing/int/spread",
                    "sharing/fp",
                    "sharing/fp/spread",
                    "sharing/fma",
                    "sharing/fma/spread",
                    "sharing/l1-load",
                    "sharing/l1-load/spread",
                    "sharing/int-ports",
                    "sharing/int-ports/spread",
                ]
            };
            assert_eq!(names, want);
        }
        // The throughput kernels: one typed finding per measured pair, with every
        // kernel's ratio and its interval over the rounds, and the topology's word.
        let sh = r.probes.iter().find(|p| p.id == "sharing").unwrap();
        let measured: Vec<u32> = serde_json::from_value(sh.params["cpus"].clone()).unwrap();
        let rounds = sh.params["throughput_rounds"].as_u64().unwrap() as usize;
        assert!(rounds >= 6);
        let pairs: Vec<_> = sh
            .findings
            .iter()
            .filter_map(|f| match f {
                corescope::model::Finding::CoreSharing {
                    a,
                    b,
                    kernel,
                    ratio,
                    ratios,
                    topology,
                    ..
                } => Some((*a, *b, kernel, ratio, ratios, topology)),
                _ => None,
            })
            .collect();
        assert_eq!(pairs.len(), measured.len() * (measured.len() - 1) / 2);
        for (a, b, kernel, ratio, ratios, topology) in pairs {
            assert!(measured.contains(&a) && measured.contains(&b) && a != b);
            assert!(!topology.is_empty());
            let names: Vec<&str> = ratios.keys().map(String::as_str).collect();
            assert_eq!(names, ["fma", "int-ports", "l1-load"]);
            assert_eq!(ratios.get(kernel.as_str()), Some(ratio));
            for e in ratios.values() {
                assert!(e.n > 1 && e.n <= rounds, "paired rounds: {e:?}");
                assert!(e.value > 0.0 && e.lo <= e.value && e.value <= e.hi, "{e:?}");
            }
        }
        let fs = r.probes.iter().find(|p| p.id == "false-sharing").unwrap();
        let sweep = fs.series("padding/time").unwrap();
        assert_eq!(sweep.x, vec![2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]);
        if let Some(line) = r.topology.line_bytes() {
            assert!(sweep.x.contains(&(line as f64)));
        }
        // All paddings ran in the same interleaved rounds; packed vs padded is typed.
        assert!(sweep.n.iter().all(|&n| n == sweep.n[0] && n >= 2));
        assert!(fs.findings.iter().any(|f| matches!(
            f,
            corescope::model::Finding::Comparison { what, .. } if what.contains("packed vs padded")
        )));
        assert!(fs.series("padding/slowdown").is_some());
        let threads = fs.params["threads"].as_u64().unwrap() as usize;
        assert_eq!(threads, 5, "--threads' largest count");
        for name in ["false-sharing/packed", "false-sharing/padded"] {
            let t = fs.timelines.iter().find(|t| t.name == name).unwrap();
            assert_eq!(t.lanes.len(), threads);
            let portions = fs.params["portions"].as_u64().unwrap() as usize;
            for l in &t.lanes {
                assert_eq!(l.spans.len(), portions);
                assert!(l.spans.iter().all(|s| s.end_ns >= s.start_ns));
            }
        }
    }
}

#[test]
fn the_budget_stops_a_long_run() {
    // Full-size atomics: 1 s per case, dozens of cases; a 1 s budget stops it after the first.
    let r = run(&["atomics", "--full", "--budget", "1", "--threads", "1,2"]);
    let p = &r.probes[0];
    assert!(matches!(p.status, Status::GaveUp), "{:?}", p.status);
    assert!(p.cases_done < p.cases_planned);
    assert!(
        p.reason.as_deref().unwrap_or("").contains("budget"),
        "{:?}",
        p.reason
    );
}
