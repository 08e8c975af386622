//! A quick channel run: every implementation's throughput series for each placement
//! the machine has, a round-trip distribution each, findings with measured ratios.
//! Events are checked inside the probe (count, order, content). No timing thresholds.

use corescope::clock::Clock;
use corescope::model::Finding;
use corescope::model::{Profile, Status};
use corescope::probes::channel::{throughput_what, Impl, BATCHES};
use corescope::probes::{self, Overrides, PlanCtx};
use std::time::{Duration, Instant};

#[test]
fn quick_channel_run_measures_every_implementation() {
    let ctx = PlanCtx {
        topo: corescope::topology::detect().expect("topology"),
        clock: Clock::calibrate(Duration::from_millis(20)),
        profile: Profile::Quick,
        overrides: Overrides::default(),
        budget_s: 120.0,
    };
    let t0 = Instant::now();
    let r =
        corescope::runner::run_probe(probes::find("channel").unwrap().as_ref(), &ctx, &mut |_| {});
    eprintln!("channel quick run took {:.1} s", t0.elapsed().as_secs_f64());
    assert!(
        matches!(r.status, Status::Completed),
        "{:?} {:?}",
        r.status,
        r.reason
    );
    let mut places = Vec::new();
    if ctx.topo.has_smt() {
        places.push("same-core");
    } else {
        assert!(
            r.findings
                .iter()
                .any(|f| f.to_string().starts_with("same-core: skipped: no SMT")),
            "{:?}",
            r.findings
        );
    }
    if ctx.topo.allowed_count() >= 2 {
        places.push("other-core");
    }
    if places.is_empty() {
        places.push("same-cpu");
    }
    let batches: Vec<f64> = BATCHES.iter().map(|&b| b as f64).collect();
    for place in &places {
        for impl_ in Impl::ALL {
            for bytes in [8, 64] {
                let name = format!("{}/{}", throughput_what(bytes, place), impl_.name());
                let s = r.series(&name).unwrap_or_else(|| panic!("{name} missing"));
                assert_eq!(s.x, batches, "{name}");
                assert_eq!(s.x.len(), s.y.len(), "{name}");
                assert_eq!(s.y_name, "events_per_s", "{name}");
                // Raced in rounds: every batch holds one sample per round and an interval.
                assert!(s.n.iter().all(|&n| n >= 2), "{name}: {:?}", s.n);
                assert_eq!(s.y_lo.len(), s.y.len(), "{name}");
                assert!(
                    s.y.iter().all(|&y| y.is_finite() && y > 0.0),
                    "{name}: {s:?}"
                );
            }
            let name = format!("roundtrip/{}/{place}", impl_.name());
            let d = r
                .distributions
                .iter()
                .find(|d| d.name == name)
                .unwrap_or_else(|| panic!("{name} missing"));
            assert!(d.summary.count > 0 && d.summary.p50 > 0.0, "{name}");
            assert_eq!(d.unit, "ns");
            // One sample per timed block of round trips, never one per trip.
            let blocks = r.params.get("roundtrip_blocks").and_then(|v| v.as_u64());
            assert_eq!(Some(d.summary.count as u64), blocks, "{name}");
            assert_eq!(
                r.params
                    .get("roundtrip_trips_per_block")
                    .and_then(|v| v.as_u64()),
                Some(64)
            );
        }
        // The race is stated as comparisons paired by round, per item and batched,
        // each naming the state of the machine (the CPUs' round trip) it belongs to.
        for how in ["per item, fastest other SPSC", "batched"] {
            let stated = format!("{how}; CPUs' round trip ");
            assert!(
                r.findings.iter().any(|f| matches!(
                    f,
                    Finding::Comparison { what, context: Some(c), .. }
                        if what.contains(place) && what.starts_with("8B")
                            && (c.starts_with(&stated) && c.ends_with(" ns"))
                )),
                "no '{how}' comparison for {place}: {:?}",
                r.findings
            );
        }
        assert!(r
            .tables
            .iter()
            .any(|t| t.name == format!("channel/throughput/{place}")));
    }
}
