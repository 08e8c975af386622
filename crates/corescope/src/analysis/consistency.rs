//! Two probes' measurements of one quantity side by side (pure): for each
//! [`SameQuantity`] a probe declares, the two figures of this run, their ratio and
//! whether they agree within the declared tolerance.
//!
//! The ratio's interval is the conservative bound of two independent intervals:
//! from `lo_a / hi_b` to `hi_a / lo_b`. When both intervals hold (each a 95 %
//! interval of a median), the ratio lies inside it, so it holds at least as often
//! as both do (≥ 90 %); it is wider than a paired interval would be, since the two
//! probes are measured apart, never interleaved.

use crate::model::{Agreement, Estimate, Pick, ProbeResult, RunFile, SameQuantity};

/// One declared pair, as this run measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct Consistency {
    /// The declaring probe's id.
    pub probe: String,
    /// What both measure.
    pub what: String,
    /// The declaring probe's series, and the x of its point.
    pub series: String,
    /// The x of the declaring probe's point.
    pub x: f64,
    /// Its figure.
    pub ours: Estimate,
    /// The other probe's id and series.
    pub other_probe: String,
    /// The other probe's series.
    pub other_series: String,
    /// The x of the other probe's point.
    pub other_x: f64,
    /// Its figure.
    pub theirs: Estimate,
    /// ours ÷ theirs, with the conservative interval (module docs).
    pub ratio: Estimate,
    /// The declared tolerance (0.10: ±10 %).
    pub tolerance: f64,
    /// The ratio against 1 ± tolerance: agrees when its median lies inside, differs
    /// when its whole interval lies outside, undecided otherwise.
    pub verdict: Agreement,
}

/// Every declared pair both of whose points this run measured, in the order of the
/// run's probes; `declared` gives each probe id's declarations (the registry's).
pub fn check(run: &RunFile, declared: &[(&str, &[SameQuantity])]) -> Vec<Consistency> {
    let mut out = Vec::new();
    for p in &run.probes {
        let Some((_, sames)) = declared.iter().find(|(id, _)| *id == p.id) else {
            continue;
        };
        for same in sames.iter() {
            let Some(other) = run.probes.iter().find(|o| o.id == same.other_probe) else {
                continue;
            };
            out.extend(pair(p, other, same));
        }
    }
    out
}

/// One pair, when both points were measured with positive figures.
fn pair(p: &ProbeResult, other: &ProbeResult, same: &SameQuantity) -> Option<Consistency> {
    if let Some((name, want)) = same.other_param {
        if other.params.get(name)?.as_str()? != want {
            return None;
        }
    }
    let x = pick(p, p.series(same.series)?.x.as_slice(), same.x)?;
    let other_x = pick(
        p,
        other.series(same.other_series)?.x.as_slice(),
        same.other_x,
    )?;
    let ours = p.estimate(same.series, x)?;
    let theirs = other.estimate(same.other_series, other_x)?;
    let ratio = ratio(&ours, &theirs)?;
    let band = (1.0 - same.tolerance, 1.0 + same.tolerance);
    Some(Consistency {
        probe: p.id.clone(),
        what: same.what.to_string(),
        series: same.series.to_string(),
        x,
        ours,
        other_probe: other.id.clone(),
        other_series: same.other_series.to_string(),
        other_x,
        theirs,
        verdict: Agreement::of(&ratio, band),
        ratio,
        tolerance: same.tolerance,
    })
}

/// The x a [`Pick`] names among `xs`; a parameter is read from `declaring`'s
/// result and must be one of `xs`.
fn pick(declaring: &ProbeResult, xs: &[f64], at: Pick) -> Option<f64> {
    match at {
        Pick::First => xs.first().copied(),
        Pick::Last => xs.last().copied(),
        Pick::AtParam(name) => {
            let x = declaring.params.get(name)?.as_f64()?;
            xs.iter().copied().find(|&v| v == x)
        }
    }
}

/// `a ÷ b` with the conservative interval (`stats::compare_estimates`'s); `None`
/// unless both are positive and finite.
fn ratio(a: &Estimate, b: &Estimate) -> Option<Estimate> {
    let finite = |e: &Estimate| e.value.is_finite() && e.lo.is_finite() && e.hi.is_finite();
    if !(finite(a) && finite(b)) {
        return None;
    }
    crate::stats::compare_estimates(*a, *b).map(|c| c.ratio)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, Status};

    const SAME: SameQuantity = SameQuantity {
        what: "idle latency",
        series: "latency/idle",
        x: Pick::First,
        other_probe: "b",
        other_series: "chase",
        other_x: Pick::AtParam("size"),
        other_param: Some(("pages", "huge")),
        tolerance: 0.10,
    };

    fn result(id: &str, name: &str, points: &[(f64, f64)]) -> ProbeResult {
        let mut r = ProbeResult::new(id, "t", Status::Completed);
        for &(x, y) in points {
            for k in 0..6 {
                r.push_point(Point::new(
                    name,
                    "bytes",
                    x,
                    "ns",
                    y * (1.0 + 0.01 * k as f64),
                ));
            }
        }
        r.summarise();
        r
    }

    fn run_of(probes: Vec<ProbeResult>) -> RunFile {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        run.probes = probes;
        run
    }

    fn run(a: ProbeResult, mut b: ProbeResult) -> RunFile {
        b.params.insert("pages".into(), "huge".into());
        run_of(vec![a, b])
    }

    fn declared() -> Vec<(&'static str, &'static [SameQuantity])> {
        vec![("a", std::slice::from_ref(&SAME))]
    }

    #[test]
    fn the_pair_is_read_at_the_declared_points_and_judged_against_the_band() {
        let mut a = result("a", "latency/idle", &[(0.0, 105.0)]);
        a.params.insert("size".into(), 4096.0.into());
        let b = result("b", "chase", &[(1024.0, 50.0), (4096.0, 100.0)]);
        let c = check(&run(a, b), &declared());
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!((c.x, c.other_x), (0.0, 4096.0));
        assert!((c.ratio.value - 1.05).abs() < 0.01, "{:?}", c.ratio);
        assert!(c.ratio.lo <= c.ratio.value && c.ratio.value <= c.ratio.hi);
        assert_eq!(c.verdict, Agreement::Agrees);
    }

    #[test]
    fn a_pair_far_apart_differs_and_a_missing_side_says_nothing() {
        let mut a = result("a", "latency/idle", &[(0.0, 200.0)]);
        a.params.insert("size".into(), 4096.0.into());
        let b = result("b", "chase", &[(4096.0, 100.0)]);
        let c = check(&run(a.clone(), b), &declared());
        assert_eq!(c[0].verdict, Agreement::Differs);
        // The size the parameter names was not measured by the other probe.
        let b = result("b", "chase", &[(1024.0, 100.0)]);
        assert!(check(&run(a.clone(), b), &declared()).is_empty());
        // The other probe did not run.
        assert!(check(&run_of(vec![a.clone()]), &declared()).is_empty());
        // The other probe measured another way (an older run file).
        let b = result("b", "chase", &[(4096.0, 200.0)]);
        assert!(check(&run_of(vec![a, b]), &declared()).is_empty());
    }

    #[test]
    fn the_ratio_refuses_figures_that_are_not_positive() {
        let e = |v: f64| Estimate {
            value: v,
            lo: v,
            hi: v,
            n: 6,
        };
        assert!(ratio(&e(1.0), &e(0.0)).is_none());
        assert!(ratio(&e(f64::NAN), &e(1.0)).is_none());
        assert!(ratio(&e(-1.0), &e(1.0)).is_none());
        assert_eq!(ratio(&e(2.0), &e(1.0)).map(|r| r.value), Some(2.0));
    }
}
