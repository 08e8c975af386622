//! Pure statistics: summaries, percentiles, histograms, mode range, spread,
//! confidence intervals of medians and comparisons of two variants.
//! No I/O, no clocks; everything here is tested on known data and on synthetic
//! samples with fixed seeds.
//!
//! Intervals are distribution-free: timing samples are skewed (a slow tail from
//! interrupts and preemption), so a mean ± t·s interval would be wrong exactly where
//! it matters. The median's interval comes from order statistics (binomial ranks);
//! two variants measured in interleaved rounds are compared by the Wilcoxon
//! signed-rank test on the log-ratio of each round, with the Hodges-Lehmann estimate
//! and its interval (Hollander & Wolfe, *Nonparametric Statistical Methods*, §3.1–3.2).

pub mod epochs;
mod types;
pub use types::{Distribution, Estimate, Histogram, ModeRange, Outcome, Summary};

/// splitmix64 (Steele, Lea & Flood, OOPSLA 2014): a small, fast, deterministic
/// generator (the epochs' bootstrap; synthetic samples in tests).
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` ≥ 1; the modulo bias is below 2^-50 for the sizes here).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in (0, 1).
    #[cfg(test)]
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    #[cfg(test)]
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

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
        p50_lo: median_interval(&s, CONFIDENCE).lo,
        p50_hi: median_interval(&s, CONFIDENCE).hi,
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

/// Confidence level of every interval corescope reports.
pub const CONFIDENCE: f64 = 0.95;

/// Smallest relative difference stated as a difference: a ratio is called a difference
/// only when its whole 95 % interval lies beyond ±this (repeated runs on a shared
/// machine move by about this much), and an interval inside ±this is called
/// "indistinguishable".
pub const MIN_EFFECT: f64 = 0.03;

/// Above this many pairs the comparison uses the sign test on the log-ratios instead
/// of the Walsh averages (n² / 2 of them).
const MAX_WALSH_PAIRS: usize = 2000;

/// An interval with the coverage it really has (with few samples the exact
/// distribution-free interval cannot reach the level asked for).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Probability that the interval covers the true value (≥ the level asked for
    /// when enough samples exist).
    pub coverage: f64,
}

/// `ln P(X ≤ k)` for every `k` in `0..=n`, X ~ Binomial(n, 1/2) (exact, log space).
fn binomial_half_log_cdf(n: usize) -> Vec<f64> {
    let mut log_pmf = -(n as f64) * std::f64::consts::LN_2;
    let mut acc = f64::NEG_INFINITY;
    let mut out = Vec::with_capacity(n + 1);
    for k in 0..=n {
        acc = log_add(acc, log_pmf);
        out.push(acc);
        log_pmf += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    out
}

fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// Largest tail count `j ≥ 1` with `cdf(j − 1) ≤ alpha/2`, or `None` when even the
/// extremes do not reach the level; `cdf` gives `P(X ≤ k)`.
fn tail_rank(max: usize, alpha: f64, cdf: impl Fn(usize) -> f64) -> Option<usize> {
    let half = alpha / 2.0;
    if cdf(0) > half {
        return None;
    }
    // cdf is increasing: binary search for the last k with cdf(k) ≤ half.
    let (mut lo, mut hi) = (0usize, max);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if cdf(mid) <= half {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo + 1)
}

/// Distribution-free interval of the median of a sorted sample: order statistics
/// `x(j)` and `x(n+1−j)` with `j` from the binomial(n, ½) distribution. With fewer than
/// 6 samples (95 %) the interval is [min, max] and its coverage, lower, is recorded.
pub fn median_interval(sorted: &[f64], confidence: f64) -> Interval {
    let n = sorted.len();
    if n == 0 {
        return Interval {
            lo: f64::NAN,
            hi: f64::NAN,
            coverage: 0.0,
        };
    }
    let alpha = 1.0 - confidence;
    let cdf = binomial_half_log_cdf(n);
    let p = |k: usize| cdf[k].exp();
    let j = tail_rank((n - 1) / 2, alpha, p).unwrap_or(1);
    let coverage = (1.0 - 2.0 * p(j - 1)).max(0.0);
    Interval {
        lo: sorted[j - 1],
        hi: sorted[n - j],
        coverage,
    }
}

/// The median of `samples` with its 95 % interval and count.
pub fn estimate(samples: &[f64]) -> Estimate {
    let s = sorted(samples);
    if s.is_empty() {
        return Estimate {
            value: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
            n: 0,
        };
    }
    let iv = median_interval(&s, CONFIDENCE);
    Estimate {
        value: percentile_sorted(&s, 0.5),
        lo: iv.lo,
        hi: iv.hi,
        n: s.len(),
    }
}

/// Exact null distribution of the Wilcoxon signed-rank statistic W+ for `n` pairs:
/// `P(W+ ≤ w)` for `w` in `0..=n(n+1)/2`.
fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    // counts[w] = number of subsets of {1..n} summing to w, scaled by 2^-n as we go.
    let mut dist = vec![0.0f64; max + 1];
    dist[0] = 1.0;
    for r in 1..=n {
        for w in (r..=r * (r + 1) / 2).rev() {
            dist[w] += dist[w - r];
        }
        for d in dist.iter_mut().take(r * (r + 1) / 2 + 1) {
            *d *= 0.5;
        }
    }
    let mut acc = 0.0;
    dist.iter()
        .map(|d| {
            acc += d;
            acc
        })
        .collect()
}

/// Hodges-Lehmann estimate of the centre of `d` (the median of the Walsh averages)
/// with the signed-rank interval at `confidence`.
pub fn hodges_lehmann(d: &[f64], confidence: f64) -> (f64, Interval) {
    let n = d.len();
    if n == 0 {
        let nan = Interval {
            lo: f64::NAN,
            hi: f64::NAN,
            coverage: 0.0,
        };
        return (f64::NAN, nan);
    }
    if n > MAX_WALSH_PAIRS {
        let s = sorted(d);
        return (percentile_sorted(&s, 0.5), median_interval(&s, confidence));
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    let cdf = signed_rank_cdf(n);
    let k = tail_rank((m - 1) / 2, 1.0 - confidence, |w| cdf[w]).unwrap_or(1);
    let coverage = (1.0 - 2.0 * cdf[k - 1]).max(0.0);
    (
        percentile_sorted(&walsh, 0.5),
        Interval {
            lo: walsh[k - 1],
            hi: walsh[m - k],
            coverage,
        },
    )
}

/// The comparison of two variants: `a ÷ b` with its interval and what it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// a ÷ b (centre and 95 % interval; `n` = pairs, or the smaller sample when unpaired).
    pub ratio: Estimate,
    /// Whether the interval excludes 1 at the full confidence level.
    pub significant: bool,
    /// Difference, equivalence or neither (see [`Outcome`]).
    pub outcome: Outcome,
}

fn outcome_of(ratio: Estimate, coverage: f64) -> Comparison {
    let band = 1.0 + MIN_EFFECT;
    let excludes_one = ratio.lo > 1.0 || ratio.hi < 1.0;
    let full = coverage + 1e-12 >= CONFIDENCE;
    let significant = excludes_one && full;
    // A difference is stated only when the whole interval lies beyond ±MIN_EFFECT:
    // significant, and at least that large with 95 % confidence (a borderline
    // "1.05×, 95 % CI 1.01–1.12" is not repeated by the next run often enough).
    let big = ratio.lo >= band || ratio.hi <= 1.0 / band;
    let outcome = if significant && big {
        Outcome::Different
    } else if ratio.lo >= 1.0 / band && ratio.hi <= band && coverage + 1e-12 >= CONFIDENCE {
        Outcome::Equivalent
    } else {
        Outcome::Inconclusive
    };
    Comparison {
        ratio,
        significant,
        outcome,
    }
}

/// Compare two variants measured in the same rounds: `a[i]` and `b[i]` come from
/// round `i`, run back to back in rotated order. Values must be positive (rates or
/// times). The log-ratio of each round removes drift that hit both alike; its
/// Hodges-Lehmann centre and signed-rank interval give the ratio and its interval.
/// `None` when fewer than 2 pairs exist or a value is not positive.
pub fn compare_paired(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let n = a.len().min(b.len());
    if n < 2
        || a[..n]
            .iter()
            .chain(&b[..n])
            .any(|&v| v <= 0.0 || !v.is_finite())
    {
        return None;
    }
    let d: Vec<f64> = (0..n).map(|i| (a[i] / b[i]).ln()).collect();
    let (centre, iv) = hodges_lehmann(&d, CONFIDENCE);
    let ratio = Estimate {
        value: centre.exp(),
        lo: iv.lo.exp(),
        hi: iv.hi.exp(),
        n,
    };
    Some(outcome_of(ratio, iv.coverage))
}

/// Compare two medians known only by their samples' summaries (not paired): each
/// median's interval at 97.5 % makes the ratio's interval [a.lo / b.hi, a.hi / b.lo]
/// cover at least 95 % (Bonferroni). Conservative; used for distributions.
pub fn compare_medians(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let (sa, sb) = (sorted(a), sorted(b));
    if sa.len() < 2 || sb.len() < 2 || sa[0] <= 0.0 || sb[0] <= 0.0 {
        return None;
    }
    let level = 1.0 - (1.0 - CONFIDENCE) / 2.0;
    let (ia, ib) = (median_interval(&sa, level), median_interval(&sb, level));
    let ratio = Estimate {
        value: percentile_sorted(&sa, 0.5) / percentile_sorted(&sb, 0.5),
        lo: ia.lo / ib.hi,
        hi: ia.hi / ib.lo,
        n: sa.len().min(sb.len()),
    };
    let coverage = 1.0 - ((1.0 - ia.coverage) + (1.0 - ib.coverage));
    Some(outcome_of(ratio, coverage))
}

/// Compare two estimates whose samples are not available (version 1 files, or
/// summaries only): conservative, as [`compare_medians`] but from the recorded
/// 95 % intervals, so its coverage is only known to be ≥ 90 %; never `significant`
/// unless the intervals are disjoint.
pub fn compare_estimates(a: Estimate, b: Estimate) -> Option<Comparison> {
    if a.lo <= 0.0 || b.lo <= 0.0 || !(a.value > 0.0 && b.value > 0.0) {
        return None;
    }
    let ratio = Estimate {
        value: a.value / b.value,
        lo: a.lo / b.hi,
        hi: a.hi / b.lo,
        n: a.n.min(b.n),
    };
    let disjoint = a.lo > b.hi || b.lo > a.hi;
    let mut c = outcome_of(ratio, if disjoint { CONFIDENCE } else { 0.0 });
    if !disjoint {
        c.significant = false;
    }
    Some(c)
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

    // The synthetic samples' generator.
    use super::SplitMix as Rng;

    /// Synthetic rounds as a shared machine gives them: a per-round drift that hits
    /// both variants alike (interleaving), lognormal noise of `cv` per sample, and a
    /// 5 % chance per sample of a 1.3× slow outlier (an interrupt, a preemption).
    fn rounds(rng: &mut Rng, n: usize, b_factor: f64, cv: f64) -> (Vec<f64>, Vec<f64>) {
        let mut a = Vec::with_capacity(n);
        let mut b = Vec::with_capacity(n);
        for _ in 0..n {
            let drift = 1.0 + 0.2 * rng.uniform();
            let draw = |f: f64, rng: &mut Rng| {
                let outlier = if rng.uniform() < 0.05 { 1.3 } else { 1.0 };
                100.0 * f * drift * outlier * (cv * rng.normal()).exp()
            };
            a.push(draw(1.0, rng));
            b.push(draw(b_factor, rng));
        }
        (a, b)
    }

    #[test]
    fn median_interval_has_binomial_ranks() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let iv = median_interval(&v, 0.95);
        // Binomial(100, ½): ranks 40 and 61 (the textbook table).
        assert_eq!((iv.lo, iv.hi), (40.0, 61.0));
        assert!(iv.coverage >= 0.95 && iv.coverage < 0.97, "{}", iv.coverage);
        // Five samples cannot reach 95 %: [min, max] with coverage 1 − 2/32.
        let five = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95);
        assert_eq!((five.lo, five.hi), (1.0, 5.0));
        assert!((five.coverage - 0.9375).abs() < 1e-12);
        let six = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95);
        assert!((six.coverage - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
        let one = estimate(&[7.0]);
        assert_eq!((one.value, one.lo, one.hi, one.n), (7.0, 7.0, 7.0, 1));
        // Large samples take the exact path too and stay ordered.
        let big: Vec<f64> = (0..100_000).map(f64::from).collect();
        let e = estimate(&big);
        assert!(
            e.lo < e.value && e.value < e.hi && e.hi - e.lo < 1000.0,
            "{e:?}"
        );
    }

    #[test]
    fn signed_rank_distribution_is_exact() {
        // n = 3: W+ takes 0..=6 with counts 1,1,1,2,1,1,1 over 8 subsets.
        let cdf = signed_rank_cdf(3);
        let expect = [1.0, 2.0, 3.0, 5.0, 6.0, 7.0, 8.0].map(|c| c / 8.0);
        for (a, b) in cdf.iter().zip(expect) {
            assert!((a - b).abs() < 1e-12);
        }
        // n = 10: the two-sided 5 % critical value is 8 (tables: P(W ≤ 8) = 0.0244).
        let c10 = signed_rank_cdf(10);
        assert!((c10[8] - 0.024_414).abs() < 1e-5, "{}", c10[8]);
        assert!(c10[9] > 0.025);
    }

    #[test]
    fn identical_variants_are_called_different_rarely() {
        // A and B from one distribution, 1,000 seeds: at most 6 % "significant".
        let mut significant = 0;
        let mut different = 0;
        for seed in 0..1000 {
            let mut rng = Rng(seed);
            let (a, b) = rounds(&mut rng, 8, 1.0, 0.05);
            let c = compare_paired(&a, &b).expect("positive values");
            significant += usize::from(c.significant);
            different += usize::from(c.outcome == Outcome::Different);
        }
        eprintln!("identical variants: {significant} of 1000 significant, {different} different");
        assert!(significant <= 60, "{significant} of 1000 significant");
        assert!(different <= significant);
    }

    #[test]
    fn a_twenty_percent_slowdown_is_found() {
        // B 20 % slower (a rate 1/1.2 of A's), 5 % noise and outliers, the runner's
        // minimum of rounds for a comparison: found in ≥ 95 %.
        let mut found = 0;
        for seed in 0..1000 {
            let mut rng = Rng(10_000 + seed);
            let (a, b) = rounds(
                &mut rng,
                crate::probes::MIN_COMPARED_ROUNDS,
                1.0 / 1.2,
                0.05,
            );
            let c = compare_paired(&a, &b).expect("positive values");
            if c.outcome == Outcome::Different && c.ratio.value > 1.0 {
                found += 1;
            }
        }
        eprintln!("20 % slower, 5 % noise: found in {found} of 1000");
        assert!(found >= 950, "found in {found} of 1000");
    }

    #[test]
    fn noisier_machines_need_more_rounds_but_are_found() {
        // 10 % noise per sample: 20 rounds find the 20 % in ≥ 95 % of seeds.
        let mut found = 0;
        for seed in 0..1000 {
            let mut rng = Rng(50_000 + seed);
            let (a, b) = rounds(&mut rng, 20, 1.0 / 1.2, 0.10);
            let c = compare_paired(&a, &b).expect("positive values");
            found += usize::from(c.outcome == Outcome::Different);
        }
        eprintln!("20 % slower, 10 % noise, 20 rounds: found in {found} of 1000");
        assert!(found >= 950, "found in {found} of 1000");
    }

    #[test]
    fn identical_configurations_are_equivalent_with_enough_rounds() {
        let mut rng = Rng(7);
        let (a, b) = rounds(&mut rng, 30, 1.0, 0.01);
        let c = compare_paired(&a, &b).unwrap();
        assert_eq!(c.outcome, Outcome::Equivalent, "{c:?}");
        assert!(!c.significant);
        // Too few rounds: never significant, whatever the data.
        let c = compare_paired(&[2.0, 2.0, 2.0], &[1.0, 1.0, 1.0]).unwrap();
        assert!(
            !c.significant && c.outcome == Outcome::Inconclusive,
            "{c:?}"
        );
        assert!(compare_paired(&[1.0], &[1.0]).is_none());
        assert!(compare_paired(&[1.0, 0.0], &[1.0, 1.0]).is_none());
    }

    #[test]
    fn unpaired_medians_are_compared_conservatively() {
        let mut rng = Rng(3);
        let a: Vec<f64> = (0..2000)
            .map(|_| 100.0 * (0.05 * rng.normal()).exp())
            .collect();
        let b: Vec<f64> = (0..2000)
            .map(|_| 120.0 * (0.05 * rng.normal()).exp())
            .collect();
        let c = compare_medians(&b, &a).unwrap();
        assert!(c.significant && c.outcome == Outcome::Different, "{c:?}");
        assert!(c.ratio.lo < 1.2 && 1.2 < c.ratio.hi, "{c:?}");
        let mut false_pos = 0;
        for seed in 0..200 {
            let mut rng = Rng(90_000 + seed);
            let a: Vec<f64> = (0..200).map(|_| (0.3 * rng.normal()).exp()).collect();
            let b: Vec<f64> = (0..200).map(|_| (0.3 * rng.normal()).exp()).collect();
            false_pos += usize::from(compare_medians(&a, &b).unwrap().significant);
        }
        assert!(false_pos <= 12, "{false_pos} of 200");
        let e = |v: f64, lo: f64, hi: f64| Estimate {
            value: v,
            lo,
            hi,
            n: 5,
        };
        assert!(
            !compare_estimates(e(10.0, 9.0, 11.0), e(10.5, 10.0, 11.0))
                .unwrap()
                .significant
        );
        assert!(
            compare_estimates(e(10.0, 9.0, 11.0), e(20.0, 19.0, 21.0))
                .unwrap()
                .significant
        );
    }
}
