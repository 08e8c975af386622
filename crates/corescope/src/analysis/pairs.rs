//! A pair of threads' samples as distributions (in ns, with paired samples and a
//! warning when the timer's step is too coarse) and findings in the seeds' words:
//! the median with its mode range, relations compared through their intervals.

use crate::clock::Clock;
use crate::model::{Distribution, Estimate, Finding, Measurement, Warning};
use crate::placement::pairs::Relation;
use crate::stats;

/// A distribution in ns from tick samples, with its cycle-based mode range kept in
/// the name's finding by [`mode_finding`].
pub fn dist_ns(name: &str, clock: &Clock, tick_samples: &[u64]) -> Distribution {
    let ns: Vec<f64> = tick_samples.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    stats::distribution(name, "ns", &ns)
}

/// Two paired distributions (A and B of the same samples): B keeps the pairs (A, B).
pub fn paired(
    a_name: &str,
    b_name: &str,
    clock: &Clock,
    a: &[u64],
    b: &[u64],
) -> [Distribution; 2] {
    let da = dist_ns(a_name, clock, a);
    let mut db = dist_ns(b_name, clock, b);
    let an: Vec<f64> = a.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    let bn: Vec<f64> = b.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    db.pairs = stats::downsample_pairs(&an, &bn, stats::MAX_PAIRS);
    db.paired_with = Some(a_name.to_string());
    [da, db]
}

/// A timer reading is off by up to one step (quantisation); a median is left
/// unwarned while one step is at most this fraction of it.
pub const MAX_STEP_FRACTION: f64 = 0.01;

/// Warn when the timer's quantisation (± one step) is more than
/// [`MAX_STEP_FRACTION`] of the median sample (`render::words` says by how much
/// the median is uncertain, and what to do when it is below one step).
pub fn resolution_warning(d: &Distribution, clock: &Clock) -> Option<Warning> {
    step_warning(&d.name, d.summary.count, d.summary.p50, clock.info.step_ns)
}

/// [`resolution_warning`] from the figures (pure, for tests).
fn step_warning(name: &str, count: usize, p50_ns: f64, step_ns: f64) -> Option<Warning> {
    if count == 0 || step_ns.is_nan() || step_ns <= 0.0 || !p50_ns.is_finite() {
        return None;
    }
    (step_ns / p50_ns > MAX_STEP_FRACTION).then(|| Warning::TimerStep {
        series: name.to_string(),
        median_ns: p50_ns,
        step_ns,
    })
}

/// Push distributions into a measurement with their resolution warnings.
pub fn push_dists(m: &mut Measurement, clock: &Clock, ds: impl IntoIterator<Item = Distribution>) {
    for d in ds {
        if let Some(w) = resolution_warning(&d, clock) {
            m.warnings.push(w);
        }
        m.distributions.push(d);
    }
}

/// The median of the distribution named `name`, with its interval.
pub fn median_of(ds: &[Distribution], name: &str) -> Option<Estimate> {
    ds.iter()
        .find(|d| d.name == name)
        .map(|d| d.summary.median())
}

/// Compare the medians of two distributions (a time or a cost in ns), through their
/// 95 % intervals (`stats::compare_estimates`, conservative: a difference is stated
/// only when the intervals are disjoint and the ratio is beyond the minimum effect).
/// The larger median is named first. `None` when either is missing or not positive.
pub fn compare_dists(
    ds: &[Distribution],
    what: &str,
    a: (&str, &str),
    b: (&str, &str),
    context: Option<String>,
) -> Option<Finding> {
    let (ea, eb) = (median_of(ds, a.1)?, median_of(ds, b.1)?);
    let c = stats::compare_estimates(ea, eb)?;
    Some(crate::analysis::oriented(
        what,
        "ns",
        (a.0, ea),
        (b.0, eb),
        c,
        context,
    ))
}

/// The median of a distribution as a typed value, its mode range (in cycles and ns)
/// as context: "80 % of samples within 38–44 kcycles (15.5–18.0 µs)".
pub fn median_finding(d: &Distribution, clock: &Clock) -> Finding {
    let context = d.mode_range.as_ref().map(|m| {
        // Each range in one scale chosen by its magnitude (`26.30–30.60 kcycles`,
        // `20.00–25.00 cycles`; never `0.0–0.0 kcycles`).
        format!(
            "{:.0} % of samples within {} ({})",
            m.fraction * 100.0,
            crate::units::fmt_range(
                "cycles",
                clock.ns_to_ticks(m.low),
                clock.ns_to_ticks(m.high)
            ),
            crate::units::fmt_range("ns", m.low, m.high),
        )
    });
    Finding::Value {
        what: format!("{} (median)", d.name),
        unit: "ns".into(),
        value: d.summary.median(),
        context,
    }
}

/// Compare the relations of one measured quantity: the distributions
/// `{prefix}/{relation}{suffix}` of same CPU and other core, and of other core and
/// SMT sibling or other package where those exist.
pub fn relation_findings(
    ds: &[Distribution],
    what: &str,
    prefix: &str,
    suffix: &str,
) -> Vec<Finding> {
    let name = |rel: Relation| format!("{prefix}/{}{suffix}", rel.name());
    [
        (Relation::OtherCore, Relation::SameCpu),
        (Relation::OtherCore, Relation::SmtSibling),
        (Relation::OtherPackage, Relation::OtherCore),
    ]
    .iter()
    .filter_map(|&(a, b)| {
        compare_dists(
            ds,
            &format!("{what}, by where the partner runs"),
            (a.name(), &name(a)),
            (b.name(), &name(b)),
            None,
        )
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_differ_only_when_their_intervals_separate() {
        let d = |name: &str, base: f64| {
            stats::distribution(
                name,
                "ns",
                &(0..200).map(|i| base + (i % 10) as f64).collect::<Vec<_>>(),
            )
        };
        let ds = vec![
            d("w/same-cpu/wake", 1000.0),
            d("w/other-core/wake", 3000.0),
            d("w/other-package/wake", 3001.0),
        ];
        let f = relation_findings(&ds, "wake-up", "w", "/wake");
        assert_eq!(f.len(), 2);
        let Finding::Comparison { a, b, outcome, .. } = &f[0] else {
            panic!("{f:?}")
        };
        assert_eq!((a.as_str(), b.as_str()), ("other-core", "same-cpu"));
        assert_eq!(*outcome, crate::model::Outcome::Different);
        let Finding::Comparison { outcome, .. } = &f[1] else {
            panic!("{f:?}")
        };
        assert_ne!(*outcome, crate::model::Outcome::Different);
    }

    #[test]
    fn the_timer_step_warning_is_raised_past_one_percent() {
        let steps = |p50: f64| match step_warning("wake", 100, p50, 9.8) {
            Some(Warning::TimerStep {
                series,
                median_ns,
                step_ns,
            }) => {
                assert_eq!((series.as_str(), median_ns, step_ns), ("wake", p50, 9.8));
                true
            }
            Some(w) => panic!("{w:?}"),
            None => false,
        };
        // 150 ns is 15 steps of a 9.8 ns timer: ± one step is ±6.5 %.
        assert!(steps(150.0));
        // 1.5 µs is 153 steps: ± one step is 0.65 %, under 1 %: no warning.
        assert!(!steps(1500.0));
        // Exactly 100 steps is ±1 %: still no warning; 99 steps warns.
        assert!(!steps(980.0));
        assert!(steps(970.0));
        // Below one step (an upper bound only) too.
        assert!(steps(5.0));
        assert_eq!(step_warning("wake", 0, 5.0, 9.8), None);
        assert_eq!(step_warning("wake", 100, 5.0, 0.0), None);
    }

    #[test]
    fn mode_ranges_keep_their_digits() {
        let clock = Clock::from_info(crate::model::ClockInfo {
            ticks_hz: 1e9,
            ..Default::default()
        });
        let mut d = stats::distribution(
            "x",
            "ns",
            &(0..200).map(|i| 20.0 + (i % 5) as f64).collect::<Vec<_>>(),
        );
        d.mode_range = Some(stats::ModeRange {
            fraction: 0.8,
            low: 20.0,
            high: 24.0,
        });
        let Finding::Value { context, .. } = median_finding(&d, &clock) else {
            panic!()
        };
        let c = context.unwrap();
        assert!(c.contains("20.00–24.00 cycles (20.00–24.00 ns)"), "{c}");
        assert!(!c.contains("0.0–0.0"), "{c}");
    }
}
