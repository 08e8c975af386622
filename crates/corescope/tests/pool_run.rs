//! Quick runs of `pool` and `matmul`: every series, results checked inside the probes
//! (FFT against the direct DFT, matmuls against a reference), no thread left behind.
//! No timing thresholds.

use corescope::clock::Clock;
use corescope::harness::pair;
use corescope::model::{Profile, Status};
use corescope::probes::{self, Overrides, PlanCtx};
use std::time::Duration;

fn ctx() -> PlanCtx {
    PlanCtx {
        topo: corescope::topology::detect().expect("topology"),
        clock: Clock::calibrate(Duration::from_millis(20)),
        profile: Profile::Quick,
        overrides: Overrides::default(),
        // Room for a loaded machine (the two tests of this file run side by side,
        // and CI builds beside them): the quick pool takes 12-15 s alone on 2 CPUs.
        budget_s: 180.0,
    }
}

#[test]
fn the_pool_probe_measures_both_free_lists_and_rayon() {
    let before = pair::thread_count().unwrap();
    let r =
        corescope::runner::run_probe(probes::find("pool").unwrap().as_ref(), &ctx(), &mut |_| {});
    assert!(
        matches!(r.status, Status::Completed),
        "{:?} {:?}",
        r.status,
        r.reason
    );
    for name in [
        "fft/mutex",
        "fft/lockfree",
        "fft/rayon",
        "fft-cas-retries/lockfree",
    ] {
        let s = r.series(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(s.x.first(), Some(&1.0), "{name} starts at size 1");
        assert!(
            s.y.iter().all(|&y| y >= 0.0 && y.is_finite()),
            "{name}: {s:?}"
        );
    }
    // The cutoff comparison: every cutoff on both runtimes (results are checked
    // bit for bit inside the probe), and one thread alone.
    for name in ["fft-cutoff/taskpool", "fft-cutoff/rayon"] {
        let s = r.series(name).unwrap_or_else(|| panic!("{name}"));
        let cutoffs: Vec<f64> = corescope::probes::pool::FFT_CUTOFFS
            .iter()
            .map(|&c| c as f64)
            .collect();
        assert_eq!(s.x, cutoffs, "{name}");
        assert!(s.y.iter().all(|&y| y > 0.0), "{name}: {s:?}");
    }
    // The quick profile runs the cutoffs at its largest size, 2^11.
    assert!(r.series("fft-sequential/10").is_some());
    assert!(r
        .findings
        .iter()
        .any(|f| f.to_string().contains("with a sequential cutoff")));
    for name in ["rmatmul/taskpool/256", "rmatmul/rayon/256"] {
        let s = r.series(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(s.x, vec![1.0, 2.0, 3.0]);
        assert!(s.y.iter().all(|&y| y > 0.0));
    }
    assert!(r
        .findings
        .iter()
        .any(|f| f.to_string().starts_with("rmatmul N = 256")));
    // Two runtimes are compared best against best (each at its own k), paired by
    // round: the runner repeated every (runtime, k) in the same rounds.
    let best_vs_best = r.findings.iter().find_map(|f| match f {
        corescope::model::Finding::Comparison {
            what, a, b, ratio, ..
        } if what.starts_with("rmatmul N = 256") => Some((a.clone(), b.clone(), *ratio)),
        _ => None,
    });
    let (a, b, ratio) = best_vs_best.expect("a typed rmatmul comparison");
    assert!(a.contains("k = ") && b.contains("k = "), "{a} / {b}");
    assert!(ratio.lo <= ratio.value && ratio.value <= ratio.hi);
    let t = r.series("rmatmul/taskpool/256").unwrap();
    let ra = r.series("rmatmul/rayon/256").unwrap();
    assert!(t.n.iter().chain(&ra.n).all(|&n| n == t.n[0] && n >= 2));
    // The probe's pools were dropped: their workers joined (rayon's global pool stays).
    let after = pair::thread_count().unwrap();
    let rayon = rayon::current_num_threads();
    assert!(
        after <= before + rayon,
        "threads before {before}, after {after}, rayon {rayon}"
    );
}

#[test]
fn the_matmul_probe_compares_every_order_with_the_library() {
    let r = corescope::runner::run_probe(
        probes::find("matmul").unwrap().as_ref(),
        &ctx(),
        &mut |_| {},
    );
    assert!(matches!(r.status, Status::Completed), "{:?}", r.reason);
    for o in corescope::probes::matmul::ORDERS {
        for t in ["normal", "transposed"] {
            let s = r
                .series(&format!("{o}/{t}"))
                .unwrap_or_else(|| panic!("{o}/{t}"));
            assert_eq!(s.x, vec![32.0, 64.0, 128.0]);
            assert!(s.y.iter().all(|&y| y > 0.0));
            assert_eq!(s.y_name, "flops_per_s");
        }
    }
    assert!(r.series("library/matrixmultiply").is_some());
    assert!(r
        .findings
        .iter()
        .any(|f| f.to_string().contains("best vs worst loop order")));
    assert!(r.findings.iter().any(|f| matches!(
        f,
        corescope::model::Finding::Comparison { what, .. } if what.contains("the library vs")
    )));
    // The variants of one n ran in the same rounds.
    let n0 = r.series("ijk/normal").unwrap().n.clone();
    assert!(n0.iter().all(|&n| n >= 2));
    assert_eq!(r.series("library/matrixmultiply").unwrap().n, n0);
}
