//! Pure statistics: summaries, percentiles, histograms, mode range, spread.
//! No I/O, no clocks; everything here is tested on known data.

use crate::model::{Distribution, Histogram, ModeRange, Summary};

/// Percentile by linear interpolation between closest ranks (`q` in 0..=1) of a
/// sorted slice; NaN for an empty slice.
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// Sort a copy of the samples, dropping NaNs.
pub fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Median (NaN when empty).
pub fn median(samples: &[f64]) -> f64 {
    percentile_sorted(&sorted(samples), 0.5)
}

/// Arithmetic mean (NaN when empty).
pub fn mean(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// Sample standard deviation (n − 1); 0 for fewer than two samples.
pub fn stddev(samples: &[f64]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let m = mean(samples);
    let var = samples.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (samples.len() - 1) as f64;
    var.sqrt()
}

/// Coefficient of variation: stddev / mean (0 when the mean is 0).
pub fn cv(samples: &[f64]) -> f64 {
    let m = mean(samples);
    if m == 0.0 || m.is_nan() {
        0.0
    } else {
        stddev(samples) / m.abs()
    }
}

/// Order statistics of a sample.
pub fn summary(samples: &[f64]) -> Summary {
    let s = sorted(samples);
    if s.is_empty() {
        return Summary::default();
    }
    Summary {
        count: s.len(),
        min: s[0],
        p50: percentile_sorted(&s, 0.5),
        p90: percentile_sorted(&s, 0.9),
        p99: percentile_sorted(&s, 0.99),
        p999: percentile_sorted(&s, 0.999),
        max: s[s.len() - 1],
        mean: mean(&s),
        stddev: stddev(&s),
    }
}

/// Histogram with `bins` bins spanning [min, max]; log-spaced when all samples are
/// positive and span more than a factor of 10, linear otherwise. Every sample
/// lands in exactly one bin (the last bin is closed on the right).
pub fn histogram(samples: &[f64], bins: usize) -> Histogram {
    let s = sorted(samples);
    let bins = bins.max(1);
    if s.is_empty() {
        return Histogram::default();
    }
    let (lo, hi) = (s[0], s[s.len() - 1]);
    let log = lo > 0.0 && hi / lo > 10.0;
    let edges: Vec<f64> = if lo == hi {
        vec![lo, hi]
    } else if log {
        let (a, b) = (lo.ln(), hi.ln());
        (0..=bins)
            .map(|i| (a + (b - a) * i as f64 / bins as f64).exp())
            .collect()
    } else {
        (0..=bins)
            .map(|i| lo + (hi - lo) * i as f64 / bins as f64)
            .collect()
    };
    let nb = edges.len() - 1;
    let mut counts = vec![0u64; nb];
    for &x in &s {
        // First edge strictly greater than x, minus one; clamp the max into the last bin.
        let idx = edges
            .partition_point(|&e| e <= x)
            .saturating_sub(1)
            .min(nb - 1);
        counts[idx] += 1;
    }
    let mut edges = edges;
    // Exact ends despite floating-point exp/ln round trips.
    edges[0] = lo;
    edges[nb] = hi;
    Histogram { edges, counts, log }
}

/// The narrowest interval [a, b] that holds at least `fraction` of the samples
/// ("80 % of threads start within 38–44 kcycles").
pub fn mode_range(samples: &[f64], fraction: f64) -> Option<ModeRange> {
    let s = sorted(samples);
    if s.is_empty() {
        return None;
    }
    let k = ((fraction.clamp(0.0, 1.0) * s.len() as f64).ceil() as usize).clamp(1, s.len());
    let (mut best_i, mut best_w) = (0, f64::INFINITY);
    for i in 0..=s.len() - k {
        let w = s[i + k - 1] - s[i];
        if w < best_w {
            best_w = w;
            best_i = i;
        }
    }
    Some(ModeRange {
        fraction: k as f64 / s.len() as f64,
        low: s[best_i],
        high: s[best_i + k - 1],
    })
}

/// Keep at most `max` pairs, evenly strided, for scatter plots.
pub fn downsample_pairs(a: &[f64], b: &[f64], max: usize) -> Vec<[f64; 2]> {
    let n = a.len().min(b.len());
    if n == 0 || max == 0 {
        return vec![];
    }
    let stride = n.div_ceil(max);
    (0..n).step_by(stride).map(|i| [a[i], b[i]]).collect()
}

/// Number of histogram bins used for distributions.
pub const HISTOGRAM_BINS: usize = 40;
/// Fraction used for the mode range, as in seed 000 ("80 % of threads start within ...").
pub const MODE_FRACTION: f64 = 0.8;
/// Most scatter pairs kept per distribution (keeps report files small).
pub const MAX_PAIRS: usize = 2000;

/// A full distribution record from raw samples.
pub fn distribution(name: impl Into<String>, unit: &str, samples: &[f64]) -> Distribution {
    Distribution {
        name: name.into(),
        unit: unit.into(),
        summary: summary(samples),
        histogram: histogram(samples, HISTOGRAM_BINS),
        mode_range: mode_range(samples, MODE_FRACTION),
        pairs: vec![],
        paired_with: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_data() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        let s = summary(&v);
        assert_eq!(s.count, 101);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.p50, 51.0);
        assert_eq!(s.p90, 91.0);
        assert_eq!(s.p99, 100.0);
        assert_eq!(s.max, 101.0);
        assert_eq!(s.mean, 51.0);
        assert!((s.stddev - 29.300170647967224).abs() < 1e-9);
        assert_eq!(percentile_sorted(&[1.0, 2.0], 0.5), 1.5);
        assert!(percentile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn histogram_counts_every_sample_once() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        let h = histogram(&v, 10);
        assert!(h.log);
        assert_eq!(h.edges.len(), 11);
        assert_eq!(h.counts.iter().sum::<u64>(), 1000);
        assert_eq!(h.edges[0], 1.0);
        assert_eq!(h.edges[10], 1000.0);
        assert!(h.edges.windows(2).all(|w| w[0] < w[1]));
        let lin = histogram(&[5.0, 6.0, 7.0, 8.0], 4);
        assert!(!lin.log);
        assert_eq!(lin.counts, vec![1, 1, 1, 1]);
        let same = histogram(&[3.0, 3.0], 8);
        assert_eq!(same.counts, vec![2]);
    }

    #[test]
    fn mode_range_finds_densest_interval() {
        // 8 samples packed in [40, 44], two outliers.
        let v = [40.0, 41.0, 41.5, 42.0, 42.5, 43.0, 43.5, 44.0, 10.0, 90.0];
        let m = mode_range(&v, 0.8).unwrap();
        assert_eq!((m.low, m.high), (40.0, 44.0));
        assert!((m.fraction - 0.8).abs() < 1e-12);
        assert!(mode_range(&[], 0.8).is_none());
    }

    #[test]
    fn spread_measures() {
        assert_eq!(cv(&[2.0, 2.0, 2.0]), 0.0);
        assert!((cv(&[1.0, 3.0]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(
            downsample_pairs(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2).len(),
            2
        );
    }
}
