//! A pair of threads' samples as distributions (in ns, with paired samples and a
//! warning when the timer's step is too coarse) and findings in the seeds' words:
//! the median with its mode range, relations compared through their intervals.

use crate::clock::Clock;
use crate::model::{Distribution, Estimate, Finding, Measurement};
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

/// Warn when the median sample is shorter than 100 timer steps.
pub fn resolution_warning(d: &Distribution, clock: &Clock) -> Option<String> {
    let step = clock.info.step_ns;
    (d.summary.count > 0 && d.summary.p50 < 100.0 * step).then(|| {
        format!(
            "{}: median {} is shorter than 100× the timer step ({}): read it as an upper bound",
            d.name,
            crate::units::fmt_value("ns", d.summary.p50),
            crate::units::fmt_value("ns", step)
        )
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
        let kc = |ns: f64| clock.ns_to_ticks(ns) / 1000.0;
        format!(
            "{:.0} % of samples within {:.1}–{:.1} kcycles ({}–{})",
            m.fraction * 100.0,
            kc(m.low),
            kc(m.high),
            crate::units::fmt_value("ns", m.low),
            crate::units::fmt_value("ns", m.high),
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
}
