//! A quick peak run: the run file's structure, one series per instruction-set level
//! found, per thread and per cycle; plausibility only (no timing thresholds).

use assert_cmd::Command;
use corescope::model::Status;

#[test]
fn quick_peak_run_writes_every_level_found() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let assert = Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "run",
            "peak",
            "--quick",
            "--threads",
            "1,2",
            "--placement",
            "scatter,compact",
            "--no-progress",
            "--no-html",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    // The run ends with the one-screen summary: a line per probe, no full tables.
    assert!(stdout.lines().any(|l| l.starts_with("peak ")), "{stdout}");
    assert!(!stdout.contains("== peak"), "{stdout}");

    let run = corescope::store::load(&out).expect("run file loads");
    let p = &run.probes[0];
    assert_eq!(p.id, "peak");
    assert!(matches!(p.status, Status::Completed), "{:?}", p.reason);
    assert_eq!(p.cases_done, p.cases_planned);
    let levels: Vec<String> = p.params["isa_levels"]
        .as_array()
        .expect("isa_levels")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(levels.contains(&"scalar".to_string()), "{levels:?}");
    if cfg!(target_arch = "x86_64") {
        assert!(levels.contains(&"sse2".to_string()), "{levels:?}");
    }
    assert!(p.params.contains_key("per_cycle_clock"));
    for level in &levels {
        for prec in ["f64", "f32"] {
            for place in ["scatter", "compact"] {
                let name = format!("{level}-{prec}/{place}");
                let s = p.series(&name).unwrap_or_else(|| panic!("{name}"));
                assert_eq!(s.y_name, "flops_per_s");
                assert_eq!(s.x, vec![1.0, 2.0]);
                assert!(s.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{s:?}");
                let t = p
                    .series(&format!("{level}-{prec}-per-thread/{place}"))
                    .unwrap();
                assert_eq!(t.y_name, "flops_per_s_per_thread");
                let c = p
                    .series(&format!("{level}-{prec}-per-cycle/{place}"))
                    .unwrap();
                assert_eq!(c.y_name, "flops_per_cycle_per_thread");
                // Plausible, not fast: more than 0 and below 1024 FLOP per cycle
                // (no core today exceeds 4 × 512-bit FMA = 128 f32 FLOP per cycle).
                assert!(c.y.iter().all(|&y| y > 0.0 && y < 1024.0), "{c:?}");
            }
        }
    }
    assert!(!p.findings.is_empty());
}
