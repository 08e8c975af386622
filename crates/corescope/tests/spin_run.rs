//! A quick spin run: every wait loop next to the active thread for each placement the
//! machine has, a table per placement, and findings. No timing thresholds.

use corescope::clock::Clock;
use corescope::model::{Profile, Status};
use corescope::probes::spin::{BENCHES, SPINNER_COLUMNS, SPINNER_NOT_COUNTED};
use corescope::probes::{self, Overrides, PlanCtx};
use std::time::Duration;

/// The quick profile on `topo`, with room for every case.
fn quick_ctx(topo: corescope::topology::Topology) -> PlanCtx {
    PlanCtx {
        topo,
        clock: Clock::calibrate(Duration::from_millis(20)),
        profile: Profile::Quick,
        overrides: Overrides::default(),
        budget_s: 120.0,
    }
}

#[test]
fn quick_spin_run_measures_every_loop() {
    let ctx = quick_ctx(corescope::topology::detect().expect("topology"));
    let r = corescope::runner::run_probe(probes::find("spin").unwrap().as_ref(), &ctx, &mut |_| {});
    assert!(
        matches!(r.status, Status::Completed),
        "{:?} {:?}",
        r.status,
        r.reason
    );
    let loops = [
        "plain",
        "pause",
        "fpdiv",
        "intdiv",
        "cas",
        "cachemiss",
        "yield",
        "futex",
    ];
    let same = r
        .tables
        .iter()
        .find(|t| t.name == "spin/same-cpu")
        .expect("same-cpu table");
    // The spin tables (the probe's event counters have a table of their own).
    for t in r.tables.iter().filter(|t| t.name.starts_with("spin/")) {
        assert_eq!(t.columns[1..], loops.map(String::from), "{}", t.name);
        let labels: Vec<&str> = t.rows.iter().map(|row| row[0].as_str().unwrap()).collect();
        assert_eq!(labels[0], "read_interval_ns");
        assert_eq!(labels[1], "handoff_ns");
        for b in BENCHES {
            for label in [
                format!("{b} ×"),
                format!("{b} low ×"),
                format!("{b} high ×"),
            ] {
                assert!(labels.contains(&label.as_str()), "{}: {label}", t.name);
            }
        }
        for row in &t.rows {
            if row[0] == "spinner CPI" {
                // Counted by the PMU, or said not to be: never a made-up number.
                for v in &row[1..] {
                    assert!(
                        v.as_str() == Some(SPINNER_NOT_COUNTED)
                            || v.as_f64().is_some_and(|c| c > 0.0),
                        "{}: {row:?}",
                        t.name
                    );
                }
                continue;
            }
            if SPINNER_COLUMNS.contains(&row[0].as_str().unwrap()) {
                continue;
            }
            if row[0] == "outcome" {
                for v in &row[1..] {
                    let o = v.as_str().unwrap();
                    assert!(["different", "equivalent", "inconclusive"].contains(&o));
                }
                continue;
            }
            for v in &row[1..] {
                let v = v.as_f64().unwrap();
                assert!(v.is_finite() && v > 0.0, "{}: {row:?}", t.name);
            }
        }
        // The overall slowdown lies inside its interval.
        let get = |name: &str| t.rows.iter().find(|r| r[0] == name).unwrap();
        let (sd, lo, hi) = (get("slowdown ×"), get("low ×"), get("high ×"));
        for k in 1..sd.len() {
            let (s, l, h) = (sd[k].as_f64(), lo[k].as_f64(), hi[k].as_f64());
            assert!(l <= s && s <= h, "{}: {l:?} {s:?} {h:?}", t.name);
        }
    }
    assert_eq!(
        same.rows.len(),
        2 + 3 * BENCHES.len() + 4 + SPINNER_COLUMNS.len()
    );
    if ctx.topo.allowed_count() >= 2 {
        let s = r
            .series("mean-slowdown/other-core")
            .expect("other-core series");
        assert_eq!(s.x.len(), loops.len());
    }
    if !ctx.topo.has_smt() {
        assert!(r
            .findings
            .iter()
            .any(|f| f.to_string().starts_with("smt-sibling: skipped")));
    }
}

/// k spinners, oversubscribed: a synthetic 4-CPU machine on whatever this one has
/// (pins to CPUs that do not exist fail and the threads run unpinned, with a
/// warning). The `all-others` placement runs 3 spinners on one lock and every
/// loop still stops and is measured.
#[test]
fn k_spinners_run_oversubscribed() {
    let ctx = quick_ctx(corescope::topology::from_synthetic("pack:1 core:4 pu:1").unwrap());
    let r = corescope::runner::run_probe(probes::find("spin").unwrap().as_ref(), &ctx, &mut |_| {});
    assert!(
        matches!(r.status, Status::Completed),
        "{:?} {:?}",
        r.status,
        r.reason
    );
    assert_eq!(r.params["spinner_threads"], serde_json::json!([1, 3]));
    let t = r
        .tables
        .iter()
        .find(|t| t.name == "spin/all-others")
        .expect("all-others table");
    assert_eq!(t.columns.len(), 1 + 8, "{:?}", t.columns);
    let s = r.series("mean-slowdown/all-others").expect("series");
    assert_eq!(s.x.len(), 8);
    assert!(s.y.iter().all(|&y| y.is_finite() && y > 0.0));
    // Typed: the plain loop's and the futex's cost, each with its interval.
    let slowdowns = r
        .findings
        .iter()
        .filter(|f| {
            matches!(f, corescope::model::Finding::Slowdown { what, ratio, .. }
                if what == "active thread, spinner all-others" && ratio.lo <= ratio.value && ratio.value <= ratio.hi)
        })
        .count();
    assert_eq!(slowdowns, 2, "{:?}", r.findings);
}
