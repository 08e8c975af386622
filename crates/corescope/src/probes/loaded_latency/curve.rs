//! `loaded-latency`'s analysis (pure): the measured steps paired into the curve of
//! latency against bandwidth, its knee and saturation, its table and findings.

use crate::model::{Estimate, Finding, ProbeResult, Table};

/// A point's latency lies beyond the knee when its whole interval is above idle ×
/// (1 + this): MLC's and Mess's curves stay flat within about 20 % of idle until
/// the bandwidth nears its limit, then bend up.
pub const KNEE_RISE: f64 = 0.2;

/// Bandwidth counts as saturated when the heaviest step's interval overlaps the
/// one before it, or lies within this fraction of it: less traffic delay gave no
/// more bandwidth.
pub const SATURATION_GAIN: f64 = 0.05;

/// Every point of series `name` as (x, estimate); none when it is missing.
pub fn series_points(result: &ProbeResult, name: &str) -> Vec<(f64, Estimate)> {
    result.series(name).map_or(Vec::new(), |s| {
        (0..s.x.len())
            .filter_map(|i| Some((s.x[i], s.estimate(i)?)))
            .collect()
    })
}

/// One step of the measured curve: both axes with their intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// The ladder step (0 idle).
    pub step: f64,
    /// The injectors' measured bandwidth (0 at idle).
    pub bandwidth: Estimate,
    /// The chaser's ns per step.
    pub latency: Estimate,
}

/// The curve from the idle latency and the loaded steps' latency and bandwidth,
/// paired by step (a step missing either is left out), in ladder order.
pub fn curve(
    idle: Option<Estimate>,
    latency: &[(f64, Estimate)],
    bandwidth: &[(f64, Estimate)],
) -> Vec<CurvePoint> {
    let mut out: Vec<CurvePoint> = idle
        .map(|l| CurvePoint {
            step: 0.0,
            bandwidth: Estimate::exact(0.0),
            latency: l,
        })
        .into_iter()
        .collect();
    for &(x, l) in latency {
        if let Some(&(_, b)) = bandwidth.iter().find(|(bx, _)| *bx == x) {
            out.push(CurvePoint {
                step: x,
                bandwidth: b,
                latency: l,
            });
        }
    }
    out.sort_by(|a, b| a.step.total_cmp(&b.step));
    out
}

/// The knee: the first step (in ladder order) whose latency interval lies wholly
/// above the idle latency's upper end × (1 + [`KNEE_RISE`]); `None` when no step
/// rose that far or the curve has no idle point.
pub fn knee(curve: &[CurvePoint]) -> Option<CurvePoint> {
    let idle = curve.iter().find(|p| p.step == 0.0)?;
    let limit = idle.latency.hi * (1.0 + KNEE_RISE);
    curve
        .iter()
        .filter(|p| p.step > 0.0)
        .find(|p| p.latency.lo > limit)
        .copied()
}

/// The saturation bandwidth: the highest measured bandwidth of the curve, and
/// whether the traffic saturated there (the heaviest step's bandwidth did not rise
/// beyond its interval and [`SATURATION_GAIN`] over the step before it).
pub fn saturation(curve: &[CurvePoint]) -> Option<(CurvePoint, bool)> {
    let loaded: Vec<&CurvePoint> = curve.iter().filter(|p| p.step > 0.0).collect();
    let best = loaded
        .iter()
        .max_by(|a, b| a.bandwidth.value.total_cmp(&b.bandwidth.value))?;
    let saturated = match loaded.as_slice() {
        [.., prev, last] => {
            last.bandwidth.lo <= prev.bandwidth.hi
                || last.bandwidth.value <= prev.bandwidth.value * (1.0 + SATURATION_GAIN)
        }
        _ => false,
    };
    Some((**best, saturated))
}

/// The curve as a table: step, bandwidth and latency each with its interval.
pub fn curve_table(what: &str, curve: &[CurvePoint]) -> Table {
    let cols = [
        "load step",
        "bandwidth (B/s)",
        "bandwidth lo",
        "bandwidth hi",
        "latency (ns)",
        "latency lo",
        "latency hi",
        "samples",
    ];
    Table {
        name: format!("{what}: latency vs bandwidth"),
        columns: cols.iter().map(|c| c.to_string()).collect(),
        rows: curve
            .iter()
            .map(|p| {
                vec![
                    p.step.into(),
                    p.bandwidth.value.into(),
                    p.bandwidth.lo.into(),
                    p.bandwidth.hi.into(),
                    p.latency.value.into(),
                    p.latency.lo.into(),
                    p.latency.hi.into(),
                    p.latency.n.into(),
                ]
            })
            .collect(),
    }
}

/// The typed findings of one curve: its idle latency, its knee (or that none was
/// reached), and its saturation bandwidth.
pub fn curve_findings(what: &str, curve: &[CurvePoint]) -> Vec<Finding> {
    let mut out = Vec::new();
    let fmt = crate::units::fmt_value;
    let idle = curve.iter().find(|p| p.step == 0.0);
    if let Some(i) = idle {
        out.push(Finding::Value {
            what: format!("{what}: idle latency"),
            unit: "ns".into(),
            value: i.latency,
            context: Some("no traffic; huge pages requested".into()),
        });
    }
    match (knee(curve), idle) {
        (Some(k), Some(i)) => out.push(Finding::Value {
            what: format!("{what}: knee bandwidth"),
            unit: "bytes_per_s".into(),
            value: k.bandwidth,
            context: Some(format!(
                "first step whose latency interval lies {:.0} % or more above idle: {} at this bandwidth vs {} idle",
                KNEE_RISE * 100.0,
                fmt("ns", k.latency.value),
                fmt("ns", i.latency.value)
            )),
        }),
        (None, Some(_)) => {
            let top = curve
                .iter()
                .map(|p| p.bandwidth.value)
                .fold(0.0, f64::max);
            out.push(Finding::from(format!(
                "{what}: no knee: latency stayed within {:.0} % of idle up to {}",
                KNEE_RISE * 100.0,
                fmt("bytes_per_s", top)
            )));
        }
        _ => {}
    }
    if let Some((s, saturated)) = saturation(curve) {
        out.push(Finding::Value {
            what: format!("{what}: saturation bandwidth"),
            unit: "bytes_per_s".into(),
            value: s.bandwidth,
            context: Some(format!(
                "{}; latency there {}",
                if saturated {
                    "the bandwidth stopped growing at the heaviest steps"
                } else {
                    "still growing at the heaviest step: a lower bound of what the memory gives"
                },
                fmt("ns", s.latency.value)
            )),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(v: f64, half: f64) -> Estimate {
        Estimate {
            value: v,
            lo: v - half,
            hi: v + half,
            n: 6,
        }
    }

    /// A synthetic curve: (bandwidth GB/s, latency ns), idle first.
    fn synthetic(points: &[(f64, f64)]) -> Vec<CurvePoint> {
        let idle = e(points[0].1, 2.0);
        let lat: Vec<(f64, Estimate)> = points[1..]
            .iter()
            .enumerate()
            .map(|(k, &(_, l))| ((k + 1) as f64, e(l, 3.0)))
            .collect();
        let bw: Vec<(f64, Estimate)> = points[1..]
            .iter()
            .enumerate()
            .map(|(k, &(b, _))| ((k + 1) as f64, e(b * 1e9, 0.5e9)))
            .collect();
        curve(Some(idle), &lat, &bw)
    }

    #[test]
    fn an_mlc_shaped_curve_has_its_knee_where_latency_bends_and_saturates() {
        // MLC's shape on a 2-socket Ice Lake-SP: flat near 91 ns, then up to 264 ns.
        let c = synthetic(&[
            (0.0, 91.0),
            (3.0, 92.0),
            (50.0, 95.0),
            (150.0, 104.0),
            (250.0, 125.0),
            (330.0, 180.0),
            (350.0, 240.0),
            (352.0, 264.0),
        ]);
        assert_eq!(c.len(), 8);
        let k = knee(&c).unwrap();
        // 91 + 2 = 93 × 1.2 = 111.6; 125 − 3 = 122 is the first above.
        assert_eq!(k.step, 4.0);
        assert_eq!(k.bandwidth.value, 250e9);
        let (s, saturated) = saturation(&c).unwrap();
        assert_eq!(s.bandwidth.value, 352e9);
        assert!(saturated, "350 → 352 GB/s: intervals overlap");
        let f = curve_findings("latency, read traffic", &c);
        assert!(
            matches!(&f[0], Finding::Value { unit, value, .. } if unit == "ns" && value.value == 91.0)
        );
        assert!(matches!(&f[1], Finding::Value { what, .. } if what.ends_with("knee bandwidth")));
        assert!(matches!(&f[2], Finding::Value { what, unit, .. }
            if what.ends_with("saturation bandwidth") && unit == "bytes_per_s"));
        let t = curve_table("x", &c);
        assert_eq!(t.rows.len(), 8);
        assert_eq!(t.columns.len(), t.rows[0].len());
    }

    #[test]
    fn a_flat_curve_has_no_knee_and_a_growing_one_no_saturation() {
        let flat = synthetic(&[(0.0, 100.0), (10.0, 101.0), (20.0, 103.0), (40.0, 110.0)]);
        assert!(knee(&flat).is_none());
        let (s, saturated) = saturation(&flat).unwrap();
        assert_eq!(s.bandwidth.value, 40e9);
        assert!(!saturated, "20 → 40 GB/s is still growing");
        let f = curve_findings("w", &flat);
        assert!(f
            .iter()
            .any(|f| matches!(f, Finding::Note { text } if text.contains("no knee"))));
        // No idle point: no knee can be named.
        let no_idle = curve(None, &[(1.0, e(200.0, 1.0))], &[(1.0, e(1e9, 1e8))]);
        assert!(knee(&no_idle).is_none());
        assert_eq!(no_idle.len(), 1);
    }

    #[test]
    fn the_curve_pairs_steps_and_drops_a_step_missing_an_axis() {
        let lat = [
            (2.0, e(120.0, 1.0)),
            (1.0, e(100.0, 1.0)),
            (3.0, e(150.0, 1.0)),
        ];
        let bw = [(1.0, e(1e9, 1e8)), (2.0, e(2e9, 1e8))];
        let c = curve(Some(e(90.0, 1.0)), &lat, &bw);
        let steps: Vec<f64> = c.iter().map(|p| p.step).collect();
        assert_eq!(steps, vec![0.0, 1.0, 2.0]);
        assert_eq!(c[0].bandwidth.value, 0.0);
        assert_eq!(c[2].latency.value, 120.0);
    }
}
