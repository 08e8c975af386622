//! The analysis stage: pure functions from a probe's measured series to typed
//! findings. No I/O, no clocks, no wording (renderers word the findings).
//!
//! A comparison becomes a stated difference only when the statistics say so
//! (`stats::compare_paired`): interleaved rounds are compared pairwise, round by
//! round; points without repetitions (older files, probes that run once) are
//! compared conservatively through their intervals.

use crate::model::{Estimate, Finding, ProbeResult};
use crate::stats;

pub mod consistency;
pub mod pairs;
pub mod seed001;
pub mod warning_groups;

/// The curves `what/<variant>` of a result.
fn family<'a>(
    result: &'a ProbeResult,
    what: &'a str,
) -> impl Iterator<Item = (&'a str, &'a crate::model::Series)> + 'a {
    result.series.iter().filter_map(move |s| {
        s.name
            .strip_prefix(what)
            .and_then(|r| r.strip_prefix('/'))
            .map(|variant| (variant, s))
    })
}

/// Peak, saturation point and one-thread figure of the family `what/<variant>`
/// (x = threads): seed 000's reading of its scaling figures.
pub fn scaling(result: &ProbeResult, what: &str, unit: &str, cpus: usize) -> Option<Finding> {
    let mut peak: Option<(Estimate, f64, &str)> = None;
    let mut one: Option<Estimate> = None;
    for (variant, s) in family(result, what) {
        for i in 0..s.x.len() {
            let Some(e) = s.estimate(i) else { continue };
            if !e.value.is_finite() {
                continue;
            }
            if peak.as_ref().is_none_or(|(p, ..)| e.value > p.value) {
                peak = Some((e, s.x[i], variant));
            }
            if s.x[i] == 1.0 && one.is_none_or(|o| e.value > o.value) {
                one = Some(e);
            }
        }
    }
    let (peak, peak_threads, peak_variant) = peak?;
    let saturation_threads = family(result, what)
        .flat_map(|(_, s)| s.x.iter().zip(&s.y))
        .filter(|(_, &y)| y >= 0.95 * peak.value)
        .map(|(&x, _)| x)
        .fold(f64::INFINITY, f64::min);
    Some(Finding::Scaling {
        what: what.into(),
        unit: unit.into(),
        peak,
        peak_threads,
        peak_variant: peak_variant.into(),
        saturation_threads,
        one_thread: one,
        cpus,
    })
}

/// Compare point (`series_a`, `x_a`) with (`series_b`, `x_b`): paired by round when
/// both hold the same number of repetitions (they ran interleaved), else through
/// their intervals. The larger value is named first. `None` when either is missing
/// or not positive.
pub fn compare(
    result: &ProbeResult,
    what: &str,
    unit: &str,
    a: (&str, &str, f64),
    b: (&str, &str, f64),
    context: Option<String>,
) -> Option<Finding> {
    let (name_a, series_a, x_a) = a;
    let (name_b, series_b, x_b) = b;
    let sa = result.series(series_a)?;
    let sb = result.series(series_b)?;
    let (ea, eb) = (sa.estimate_at(x_a)?, sb.estimate_at(x_b)?);
    let (pa, pb) = (sa.samples_at(x_a), sb.samples_at(x_b));
    let c = if pa.len() == pb.len() && pa.len() >= 2 {
        stats::compare_paired(pa, pb)?
    } else {
        stats::compare_estimates(ea, eb)?
    };
    Some(oriented(what, unit, (name_a, ea), (name_b, eb), c, context))
}

/// A comparison as a finding, the larger value named first (the ratio ≥ 1).
pub fn oriented(
    what: &str,
    unit: &str,
    a: (&str, Estimate),
    b: (&str, Estimate),
    c: stats::Comparison,
    context: Option<String>,
) -> Finding {
    let flip = c.ratio.value < 1.0;
    let ratio = if flip {
        Estimate {
            value: 1.0 / c.ratio.value,
            lo: 1.0 / c.ratio.hi,
            hi: 1.0 / c.ratio.lo,
            n: c.ratio.n,
        }
    } else {
        c.ratio
    };
    let ((a, a_value), (b, b_value)) = if flip { (b, a) } else { (a, b) };
    Finding::Comparison {
        what: what.into(),
        unit: unit.into(),
        a: a.into(),
        a_value,
        b: b.into(),
        b_value,
        ratio,
        significant: c.significant,
        outcome: c.outcome,
        context,
    }
}

/// The best and the worst placement of family `what` at `threads`, compared; copies
/// of another placement's measurement (same CPUs here) take no part. `None` when
/// fewer than two placements were measured at that thread count.
pub fn placements(result: &ProbeResult, what: &str, unit: &str, threads: f64) -> Option<Finding> {
    let measured: Vec<(&str, f64)> = family(result, what)
        .filter(|(_, s)| result.alias_of(&s.name, threads).is_none())
        .filter_map(|(v, s)| s.estimate_at(threads).map(|e| (v, e.value)))
        .filter(|(_, y)| y.is_finite())
        .collect();
    if measured.len() < 2 {
        return None;
    }
    let best = measured.iter().max_by(|a, b| a.1.total_cmp(&b.1))?.0;
    let worst = measured.iter().min_by(|a, b| a.1.total_cmp(&b.1))?.0;
    let (sa, sb) = (format!("{what}/{best}"), format!("{what}/{worst}"));
    let label = format!(
        "{what} with {}, best vs worst placement",
        crate::units::threads(threads)
    );
    compare(
        result,
        &label,
        unit,
        (best, &sa, threads),
        (worst, &sb, threads),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Alias, Outcome, Point, Status};

    fn result_with(points: &[(&str, f64, Vec<f64>)]) -> ProbeResult {
        let mut r = ProbeResult::new("p", "t", Status::Completed);
        for (s, x, v) in points {
            r.push_point(Point::samples(*s, "threads", *x, "ops_per_s", v.clone()));
        }
        r
    }

    fn noisy(base: f64, n: usize, seed: u64) -> Vec<f64> {
        // Deterministic ±1 % wiggle.
        (0..n)
            .map(|i| base * (1.0 + 0.01 * (((i as u64 * 7 + seed) % 5) as f64 - 2.0) / 2.0))
            .collect()
    }

    #[test]
    fn scaling_finds_peak_and_saturation() {
        let r = result_with(&[
            ("int/linear", 1.0, noisy(1.0, 10, 1)),
            ("int/linear", 2.0, noisy(1.97, 10, 2)),
            ("int/linear", 4.0, noisy(2.0, 10, 3)),
            ("int/scatter", 2.0, noisy(1.5, 10, 4)),
        ]);
        let Some(Finding::Scaling {
            peak,
            peak_threads,
            saturation_threads,
            one_thread,
            ..
        }) = scaling(&r, "int", "ops_per_s", 2)
        else {
            panic!("no scaling finding");
        };
        assert_eq!(peak_threads, 4.0);
        assert_eq!(saturation_threads, 2.0);
        assert!(peak.lo <= peak.value && peak.value <= peak.hi);
        assert!((one_thread.unwrap().value - 1.0).abs() < 0.02);
    }

    #[test]
    fn placements_skip_copies_and_state_only_real_differences() {
        let mut r = result_with(&[
            ("w/linear", 2.0, noisy(45.0, 10, 1)),
            ("w/compact", 2.0, noisy(45.0, 10, 1)),
            ("w/scatter", 2.0, noisy(26.0, 10, 3)),
        ]);
        r.aliases.push(Alias {
            series: "w/compact".into(),
            x: 2.0,
            same_as: "w/linear".into(),
            config: "CPUs 0,1".into(),
        });
        let Some(Finding::Comparison {
            a,
            b,
            outcome,
            ratio,
            ..
        }) = placements(&r, "w", "bytes_per_s", 2.0)
        else {
            panic!("no comparison");
        };
        assert_eq!((a.as_str(), b.as_str()), ("linear", "scatter"));
        assert_eq!(outcome, Outcome::Different);
        assert!(ratio.lo > 1.6 && ratio.hi < 1.8, "{ratio:?}");
        // The same samples for both: equivalent, never a difference.
        let same = result_with(&[
            ("w/linear", 2.0, noisy(45.0, 12, 1)),
            ("w/unbound", 2.0, noisy(45.0, 12, 3)),
        ]);
        let Some(Finding::Comparison { outcome, .. }) = placements(&same, "w", "x", 2.0) else {
            panic!("no comparison");
        };
        assert_ne!(outcome, Outcome::Different);
        // Only copies of one measurement: nothing to compare.
        r.aliases.push(Alias {
            series: "w/scatter".into(),
            x: 2.0,
            same_as: "w/linear".into(),
            config: "CPUs 0,1".into(),
        });
        assert!(placements(&r, "w", "x", 2.0).is_none());
    }
}
