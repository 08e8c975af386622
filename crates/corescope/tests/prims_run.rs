//! Quick runs of the primitive probes in-process: distributions with the requested
//! sample count and ordered statistics, paired samples for A-vs-B plots, the timer
//! table, and no thread left behind. No timing thresholds.

use corescope::clock::Clock;
use corescope::harness::pair;
use corescope::model::{Finding, Profile, Status};
use corescope::probes::{self, Overrides, PlanCtx};
use std::time::Duration;

fn ctx() -> PlanCtx {
    PlanCtx {
        topo: corescope::topology::detect().expect("topology"),
        clock: Clock::calibrate(Duration::from_millis(20)),
        profile: Profile::Quick,
        overrides: Overrides::default(),
        budget_s: 60.0,
    }
}

#[test]
fn primitive_probes_yield_complete_distributions_and_leave_no_thread() {
    let ctx = ctx();
    let expected = pair::samples(Profile::Quick);
    let before = pair::thread_count().unwrap();
    for id in ["threads", "mutex", "condvar"] {
        let probe = probes::find(id).unwrap();
        let r = corescope::runner::run_probe(probe.as_ref(), &ctx, &mut |_| {});
        assert!(
            matches!(r.status, Status::Completed),
            "{id}: {:?} {:?}",
            r.status,
            r.reason
        );
        assert!(!r.distributions.is_empty(), "{id}");
        for d in &r.distributions {
            let s = &d.summary;
            assert_eq!(s.count, expected, "{}", d.name);
            assert!(
                s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max,
                "{}: {s:?}",
                d.name
            );
            assert!(s.min > 0.0, "{}: {s:?}", d.name);
            assert_eq!(d.histogram.counts.iter().sum::<u64>() as usize, expected);
            let m = d.mode_range.as_ref().unwrap();
            assert!(m.low <= m.high && m.fraction >= 0.8);
            if let Some(a) = &d.paired_with {
                assert!(r.distributions.iter().any(|x| &x.name == a), "{a}");
                assert!(!d.pairs.is_empty());
            }
        }
        assert!(!r.findings.is_empty(), "{id}");
        // Medians are typed values with their interval around them.
        let values: Vec<_> = r
            .findings
            .iter()
            .filter_map(|f| match f {
                Finding::Value { value, .. } => Some(value),
                _ => None,
            })
            .collect();
        assert!(!values.is_empty(), "{id}: {:?}", r.findings);
        for v in values {
            assert!(v.lo <= v.value && v.value <= v.hi, "{id}: {v:?}");
        }
        // Comparisons carry a ratio with its interval, larger value first.
        for f in &r.findings {
            if let Finding::Comparison {
                ratio,
                a_value,
                b_value,
                ..
            } = f
            {
                assert!(ratio.lo <= ratio.value && ratio.value <= ratio.hi, "{f:?}");
                assert!(a_value.value >= b_value.value, "{f:?}");
            }
        }
    }
    // Every joinable child joined, every detached child finished, every partner gone.
    let mut after = pair::thread_count().unwrap();
    for _ in 0..100 {
        if after <= before {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        after = pair::thread_count().unwrap();
    }
    assert!(after <= before, "threads before {before}, after {after}");
}

#[test]
fn the_mutex_probe_measures_all_three_locks_and_each_pair() {
    let ctx = ctx();
    let r =
        corescope::runner::run_probe(probes::find("mutex").unwrap().as_ref(), &ctx, &mut |_| {});
    for name in [
        "uncontended/pthread",
        "uncontended/std",
        "uncontended/parking_lot",
    ] {
        assert!(r.distributions.iter().any(|d| d.name == name), "{name}");
    }
    // Same CPU always exists; its sleeping hand-off has unlock and wake distributions.
    assert!(r
        .distributions
        .iter()
        .any(|d| d.name == "handoff/sleeping/same-cpu/wake"));
    if ctx.topo.allowed_count() >= 2 {
        assert!(r
            .distributions
            .iter()
            .any(|d| d.name == "handoff/spinning/other-core/wake"));
    }
    // The three locks were compared (typed), whatever the outcome.
    let compared = r
        .findings
        .iter()
        .filter(
            |f| matches!(f, Finding::Comparison { what, .. } if what.starts_with("uncontended")),
        )
        .count();
    assert_eq!(compared, 3, "{:?}", r.findings);
    if !ctx.topo.has_smt() {
        assert!(r
            .findings
            .iter()
            .any(|f| f.to_string().starts_with("handoff/smt-sibling: skipped")));
    }
}

#[test]
fn the_timer_table_lists_every_clock() {
    let ctx = ctx();
    let r =
        corescope::runner::run_probe(probes::find("timers").unwrap().as_ref(), &ctx, &mut |_| {});
    let t = r.tables.iter().find(|t| t.name == "timers").unwrap();
    let names: Vec<&str> = t.rows.iter().map(|r| r[0].as_str().unwrap()).collect();
    for c in [
        "CLOCK_MONOTONIC",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_MONOTONIC_COARSE",
        "CLOCK_REALTIME",
        "CLOCK_BOOTTIME",
        "std::time::Instant",
    ] {
        assert!(names.contains(&c), "{c}");
    }
    for row in &t.rows {
        let step = row[1].as_f64().unwrap();
        let overhead = row[2].as_f64().unwrap();
        let (lo, hi) = (row[3].as_f64().unwrap(), row[4].as_f64().unwrap());
        assert!(step > 0.0 && overhead > 0.0, "{row:?}");
        assert!(lo <= overhead && overhead <= hi, "{row:?}");
    }
    // A typed read overhead for every clock.
    let overheads = r
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::Value { what, .. } if what.ends_with("read overhead")))
        .count();
    assert_eq!(overheads, t.rows.len());
}
