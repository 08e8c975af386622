//! Pure statistics of one figure over the nodes of a fleet: the fleet median and
//! its robust spread (the median absolute deviation scaled to a standard
//! deviation), each node's ratio to the median with an interval, and whether a
//! node lies beyond the fleet's spread. No I/O.
//!
//! Everything is computed on the logarithm of the figure, so "0.8× the median" and
//! "1.25× the median" are equally far from it and a spread is relative.
//!
//! A node's interval combines two uncertainties: its own 95 % interval (from its
//! run file: the repetitions and epochs of that node) and the fleet median's
//! (`z · √(π/2) · σ / √n`, the large-sample standard error of a median). A node is
//! an outlier only when that whole interval lies beyond the threshold
//! `max(k · σ, ln(1 + min_effect))`, with `k` = 3.5 as in Iglewicz and Hoaglin's
//! modified z-score (*How to Detect and Handle Outliers*, ASQC 1993): a noisy
//! node is never called bad on the strength of a noisy figure, and a fleet of
//! identical nodes (σ = 0) does not flag a difference below the minimum effect.

use crate::model::Estimate;
use crate::stats::{percentile_sorted, sorted};
use serde::{Deserialize, Serialize};

/// Robust threshold in scaled MADs beyond which a node is an outlier.
pub const OUTLIER_SIGMAS: f64 = 3.5;
/// Smallest relative difference from the fleet median called an outlier, whatever
/// the spread: a fleet of near-identical nodes would otherwise flag 1 %.
pub const MIN_FLEET_EFFECT: f64 = 0.05;
/// Fewest nodes (of one model) whose spread is estimated and judged.
pub const MIN_NODES: usize = 3;
/// MAD → standard deviation of a normal distribution (1 / Φ⁻¹(3/4)).
const MAD_TO_SIGMA: f64 = 1.482_602_218_505_602;
/// Large-sample standard error of a median in units of σ / √n (√(π/2)).
const MEDIAN_SE: f64 = 1.253_314_137_315_500_3;
/// Two-sided 95 % normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// The fleet's distribution of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Nodes that have the figure.
    pub nodes: usize,
    /// Fleet median, in the figure's unit.
    pub median: f64,
    /// Robust spread of the log figure: 1.4826 × MAD (≈ the relative spread).
    pub sigma_log: f64,
    /// The spread between the nodes' true figures: `sigma_log` less the typical
    /// node's own measurement spread (its interval's half-width / 1.96), in
    /// quadrature; what the threshold is measured in, since each node's own
    /// interval already carries its measurement spread.
    pub sigma_between_log: f64,
    /// Half-width of the fleet median's 95 % interval, log scale.
    pub median_half_width_log: f64,
    /// Outlier threshold on the log ratio: `max(k · sigma_between, ln(1 + min effect))`.
    pub threshold_log: f64,
    /// Smallest and largest node ratio to the median.
    pub ratio_range: [f64; 2],
}

/// Which side of the fleet an outlier lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Its figure is lower than the fleet's.
    Low,
    /// Its figure is higher than the fleet's.
    High,
}

/// One node's place in the fleet's distribution of a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    /// Node ÷ fleet median, with the 95 % interval of both uncertainties (`n` is
    /// the node's own sample count).
    pub ratio: Estimate,
    /// Set when the whole interval lies beyond the threshold.
    pub outlier: Option<Side>,
}

/// A node's value usable for the statistics: positive and finite.
fn usable(e: &Estimate) -> bool {
    e.value > 0.0 && e.value.is_finite()
}

/// Half the width of a node's own interval, log scale (0 without a usable one).
fn own_half_width_log(e: &Estimate) -> f64 {
    if e.lo > 0.0 && e.hi >= e.lo && e.hi.is_finite() {
        (e.hi.ln() - e.lo.ln()) / 2.0
    } else {
        0.0
    }
}

/// The fleet's spread of one figure from the nodes' values (`None` for a node
/// that lacks it); `None` when fewer than [`MIN_NODES`] nodes have a usable
/// (positive, finite) value.
pub fn spread(values: &[Option<Estimate>]) -> Option<Spread> {
    let nodes: Vec<&Estimate> = values.iter().flatten().filter(|e| usable(e)).collect();
    let logs: Vec<f64> = nodes.iter().map(|e| e.value.ln()).collect();
    // The typical node's own measurement spread (its interval's half-width / z).
    let own: Vec<f64> = nodes.iter().map(|e| own_half_width_log(e) / Z95).collect();
    if logs.len() < MIN_NODES {
        return None;
    }
    let s = sorted(&logs);
    let m = percentile_sorted(&s, 0.5);
    let dev = sorted(&s.iter().map(|l| (l - m).abs()).collect::<Vec<_>>());
    let sigma = MAD_TO_SIGMA * percentile_sorted(&dev, 0.5);
    let sigma_own = percentile_sorted(&sorted(&own), 0.5);
    let sigma_between = (sigma * sigma - sigma_own * sigma_own).max(0.0).sqrt();
    let n = s.len();
    Some(Spread {
        nodes: n,
        median: m.exp(),
        sigma_log: sigma,
        median_half_width_log: Z95 * MEDIAN_SE * sigma / (n as f64).sqrt(),
        sigma_between_log: sigma_between,
        threshold_log: (OUTLIER_SIGMAS * sigma_between).max(MIN_FLEET_EFFECT.ln_1p()),
        ratio_range: [(s[0] - m).exp(), (s[n - 1] - m).exp()],
    })
}

/// A node's place in the fleet's spread; `None` when its value is not usable.
/// Its interval is its own (`lo`, `hi`; the value itself where the file has no
/// usable interval) widened by the fleet median's.
pub fn place(spread: &Spread, node: &Estimate) -> Option<Place> {
    if !usable(node) {
        return None;
    }
    let m = spread.median.ln();
    let end = |x: f64| {
        if x > 0.0 && x.is_finite() {
            x
        } else {
            node.value
        }
    };
    let (lo, hi) = (end(node.lo.min(node.value)), end(node.hi.max(node.value)));
    let r = node.value.ln() - m;
    // Independent errors: the half-widths add in quadrature, each side its own.
    let h = spread.median_half_width_log;
    let r_lo = r - (node.value.ln() - lo.ln()).hypot(h);
    let r_hi = r + (hi.ln() - node.value.ln()).hypot(h);
    let t = spread.threshold_log;
    let outlier = if r_hi < -t {
        Some(Side::Low)
    } else if r_lo > t {
        Some(Side::High)
    } else {
        None
    };
    Some(Place {
        ratio: Estimate {
            value: r.exp(),
            lo: r_lo.exp(),
            hi: r_hi.exp(),
            n: node.n,
        },
        outlier,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix as Rng;

    /// Per-sample noise of a node's repetitions (3 %) and the repetitions per node.
    const SAMPLE_CV: f64 = 0.03;
    const SAMPLES: usize = 10;

    /// A synthetic fleet: each node's true figure drawn around 100 with a
    /// node-to-node spread `fleet_cv`, times `factor[i]` for node i; each node
    /// measures it `SAMPLES` times with `SAMPLE_CV` noise and a 5 % chance per
    /// sample of a 1.3× outlier (an interrupt), summarised by the run file's own
    /// estimate (median with its order-statistic interval).
    fn fleet(
        rng: &mut Rng,
        nodes: usize,
        fleet_cv: f64,
        factor: impl Fn(usize) -> f64,
    ) -> Vec<Option<Estimate>> {
        (0..nodes)
            .map(|i| {
                let truth = 100.0 * factor(i) * (fleet_cv * rng.normal()).exp();
                let samples: Vec<f64> = (0..SAMPLES)
                    .map(|_| {
                        let slow = if rng.uniform() < 0.05 { 1.0 / 1.3 } else { 1.0 };
                        truth * slow * (SAMPLE_CV * rng.normal()).exp()
                    })
                    .collect();
                Some(crate::stats::estimate(&samples))
            })
            .collect()
    }

    fn outliers(values: &[Option<Estimate>]) -> Vec<usize> {
        let s = spread(values).expect("enough nodes");
        values
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                v.as_ref()
                    .and_then(|v| place(&s, v))
                    .is_some_and(|p| p.outlier.is_some())
            })
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn known_fleet_has_known_spread() {
        let v: Vec<Option<Estimate>> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&x| Some(Estimate::exact(x)))
            .collect();
        let s = spread(&v).unwrap();
        assert!((s.median - 4.0).abs() < 1e-12);
        // |log deviations| are 2, 1, 0, 1, 2 × ln 2: MAD = ln 2.
        assert!((s.sigma_log - MAD_TO_SIGMA * 2f64.ln()).abs() < 1e-12);
        assert!((s.ratio_range[0] - 0.25).abs() < 1e-12 && (s.ratio_range[1] - 4.0).abs() < 1e-12);
        let p = place(&s, &Estimate::exact(2.0)).unwrap();
        assert!((p.ratio.value - 0.5).abs() < 1e-12);
        assert!(p.ratio.lo < 0.5 && p.ratio.hi > 0.5);
        // Too few or unusable nodes: no spread, no place.
        assert!(spread(&v[..2]).is_none());
        let mut bad = v[..2].to_vec();
        bad.push(Some(Estimate::exact(0.0)));
        bad.push(None);
        assert!(spread(&bad).is_none());
        assert!(place(&s, &Estimate::exact(f64::NAN)).is_none());
    }

    #[test]
    fn identical_nodes_flag_only_beyond_the_minimum_effect() {
        let mut v: Vec<Option<Estimate>> = (0..5).map(|_| Some(Estimate::exact(10.0))).collect();
        v.push(Some(Estimate::exact(9.7)));
        v.push(Some(Estimate::exact(7.1)));
        let s = spread(&v).unwrap();
        assert_eq!(s.sigma_log, 0.0);
        assert_eq!(outliers(&v), vec![6]);
        let p = place(&s, v[6].as_ref().unwrap()).unwrap();
        assert_eq!(p.outlier, Some(Side::Low));
        assert!((p.ratio.value - 0.71).abs() < 1e-12);
    }

    #[test]
    fn a_node_whose_interval_reaches_the_fleet_is_not_an_outlier() {
        let mut v: Vec<Option<Estimate>> = (0..9)
            .map(|i| Some(Estimate::exact(100.0 + f64::from(i))))
            .collect();
        // Central value far off, but its own interval reaches the fleet.
        let wide = Estimate {
            value: 60.0,
            lo: 40.0,
            hi: 101.0,
            n: 5,
        };
        v.push(Some(wide));
        let s = spread(&v).unwrap();
        assert_eq!(place(&s, &wide).unwrap().outlier, None);
        // The same value measured tightly is one.
        let tight = Estimate {
            value: 60.0,
            lo: 59.0,
            hi: 61.0,
            n: 5,
        };
        assert_eq!(place(&s, &tight).unwrap().outlier, Some(Side::Low));
        let fast = Estimate {
            value: 160.0,
            lo: 159.0,
            hi: 161.0,
            n: 5,
        };
        assert_eq!(place(&s, &fast).unwrap().outlier, Some(Side::High));
    }

    #[test]
    fn a_thousand_like_nodes_give_at_most_one_percent_outliers() {
        let mut worst = 0;
        for seed in 0..20 {
            let mut rng = Rng(1_000 + seed);
            let v = fleet(&mut rng, 1000, 0.02, |_| 1.0);
            worst = worst.max(outliers(&v).len());
        }
        eprintln!("1,000 like nodes, 20 seeds: at most {worst} outliers");
        assert!(worst <= 10, "{worst} of 1000 nodes called outliers");
        // Files without intervals (one value per node): the spread alone decides.
        let mut rng = Rng(7);
        let v: Vec<Option<Estimate>> = (0..1000)
            .map(|_| {
                Some(Estimate::without_interval(
                    100.0 * (0.03 * rng.normal()).exp(),
                ))
            })
            .collect();
        let o = outliers(&v).len();
        assert!(
            o <= 10,
            "{o} of 1000 nodes without intervals called outliers"
        );
    }

    /// How often node 1, `slower` times slower than the rest of a fleet of
    /// `nodes`, is found in 100 seeds, and how many other nodes are flagged.
    fn power(nodes: usize, slower: f64) -> (usize, usize) {
        let (mut found, mut others) = (0, 0);
        for seed in 0..100 {
            let mut rng = Rng(20_000 + seed + 1000 * nodes as u64);
            let v = fleet(&mut rng, nodes, 0.02, |i| {
                if i == 1 {
                    1.0 / slower
                } else {
                    1.0
                }
            });
            let o = outliers(&v);
            found += usize::from(o.contains(&1));
            others += o.iter().filter(|&&i| i != 1).count();
        }
        eprintln!("{nodes} nodes, one {slower}x slower: found in {found} of 100 seeds, {others} others flagged");
        (found, others)
    }

    #[test]
    fn one_node_fifteen_percent_slower_is_found() {
        // Node 1 takes 15 % longer: its rate is 1 / 1.15 of the fleet's.
        let (found, others) = power(1000, 1.15);
        assert!(found >= 95, "found in {found} of 100");
        assert!(
            others <= 1000,
            "{others} false outliers in 100 fleets of 1,000"
        );
        // Small fleets know their spread less well (the median of 16 or 4, the MAD
        // of as few): the same 15 % is found less often, a larger gap always.
        let (found, others) = power(16, 1.15);
        assert!(found >= 80 && others <= 16, "16 nodes: {found}, {others}");
        let (found, others) = power(4, 1.5);
        assert!(
            found >= 95 && others <= 4,
            "4 nodes, 1.5x: {found}, {others}"
        );
    }
}
