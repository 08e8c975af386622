//! Quick runs of the three probes under load on the test machine: structure of the
//! run file only (no timing thresholds).

use assert_cmd::Command;
use corescope::model::{Finding, RunFile, Status};

fn quick(probe: &str) -> RunFile {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    Command::cargo_bin("corescope")
        .unwrap()
        .args(["run", probe, "--quick", "--no-progress", "--out"])
        .arg(&out)
        .assert()
        .success();
    corescope::store::load(&out).expect("run file loads")
}

fn values(p: &corescope::model::ProbeResult) -> Vec<&str> {
    p.findings
        .iter()
        .filter_map(|f| match f {
            Finding::Value { what, .. } => Some(what.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn quick_loaded_latency_has_both_axes_for_every_step() {
    let run = quick("loaded-latency");
    let p = &run.probes[0];
    if matches!(p.status, Status::Skipped) {
        return; // one CPU: nothing to inject traffic with
    }
    assert!(matches!(p.status, Status::Completed), "{:?}", p.reason);
    for traffic in ["read", "read-write"] {
        let lat = p.series(&format!("latency/{traffic}")).expect("latency");
        let bw = p
            .series(&format!("bandwidth/{traffic}"))
            .expect("bandwidth");
        assert_eq!(lat.x, bw.x, "every step has both axes");
        assert_eq!(lat.x, vec![1.0, 2.0, 3.0], "the quick ladder's 3 steps");
        for s in [lat, bw] {
            assert_eq!(s.y_lo.len(), s.y.len(), "{}: intervals", s.name);
            assert!(s.y.iter().all(|y| y.is_finite() && *y > 0.0), "{}", s.name);
        }
        let table = p
            .tables
            .iter()
            .find(|t| t.name.starts_with(&format!("latency, {traffic} traffic")))
            .expect("curve table");
        assert_eq!(table.rows.len(), 4, "idle and 3 steps");
    }
    assert!(p.series("latency/idle").is_some());
    assert!(p.series("latency/idle-default-pages").is_some());
    let v = values(p);
    assert!(
        v.iter().any(|w| w.ends_with("saturation bandwidth")),
        "{v:?}"
    );
    assert!(v.iter().any(|w| w.ends_with("idle latency")), "{v:?}");
}

#[test]
fn quick_clock_curve_has_a_scalar_curve_up_to_the_cpu_count() {
    let run = quick("clock-curve");
    let p = &run.probes[0];
    assert!(matches!(p.status, Status::Completed), "{:?}", p.reason);
    let scalar = p.series("clock/scalar").expect("scalar curve");
    assert_eq!(scalar.y_name, "hz");
    assert_eq!(scalar.x.first(), Some(&1.0));
    let cpus = run.topology.allowed_count() as f64;
    assert!(scalar.x.iter().all(|&x| x <= cpus));
    assert!(values(p)
        .iter()
        .any(|w| w.starts_with("core clock, scalar")));
}

#[test]
fn quick_loaded_coherence_measures_idle_and_never_invents_a_loaded_figure() {
    let run = quick("loaded-coherence");
    let p = &run.probes[0];
    if matches!(p.status, Status::Skipped) {
        return;
    }
    assert!(matches!(p.status, Status::Completed), "{:?}", p.reason);
    let cas = p
        .series
        .iter()
        .find(|s| s.name.starts_with("cas/"))
        .expect("a CAS series");
    assert_eq!(cas.x.first(), Some(&0.0), "idle measured");
    let rel = cas.name.trim_start_matches("cas/");
    let loaded = p.series(&format!("bandwidth/{rel}"));
    // Loaded points exist only with a CPU beyond the pair; otherwise a skip says why.
    if run.topology.allowed_count() <= 2 {
        assert!(loaded.is_none() && cas.x == vec![0.0]);
        let skipped = p
            .params
            .get("skipped")
            .map(|v| v.to_string())
            .unwrap_or_default();
        assert!(skipped.contains("under traffic: skipped: "), "{skipped}");
    } else {
        assert!(loaded.is_some());
    }
}
