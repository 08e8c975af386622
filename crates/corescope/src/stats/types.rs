//! The values statistics produce — an estimate with its interval, the summary and
//! histogram of a distribution, the outcome of a comparison — as the run file
//! stores them. They live here, beside the maths that makes them, so `stats`
//! imports nothing of the project; `model` re-exports them for the run file.

use serde::{Deserialize, Serialize};

/// A central value with its 95 % confidence interval and the count it came from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Central value (a median unless the field that holds it says otherwise).
    pub value: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// Number of samples behind the value.
    pub n: usize,
}

impl Estimate {
    /// Whether the estimate carries an interval worth showing: more than one
    /// sample and finite, distinct ends (a version 1 point, or one measured
    /// once, has none).
    pub fn has_interval(&self) -> bool {
        self.n > 1 && self.lo.is_finite() && self.hi.is_finite() && self.lo < self.hi
    }

    /// A value known from one sample: its interval is the value itself.
    pub fn exact(value: f64) -> Self {
        Self {
            value,
            lo: value,
            hi: value,
            n: 1,
        }
    }

    /// A value whose spread is not known (a file of version 1, a figure quoted from a
    /// paper, a fact such as a timer's step): no interval, and `n` = 0, so it is not
    /// shown as one measurement.
    pub fn without_interval(value: f64) -> Self {
        Self {
            n: 0,
            ..Self::exact(value)
        }
    }

    /// This estimate times a positive factor (a unit change, a known ratio): the
    /// value and both ends scale with it, the count stays.
    pub fn scaled(self, factor: f64) -> Self {
        Self {
            value: self.value * factor,
            lo: self.lo * factor,
            hi: self.hi * factor,
            n: self.n,
        }
    }

    /// Half the interval's width relative to the value (0 when the value is 0).
    pub fn rel_half_width(&self) -> f64 {
        if self.value == 0.0 || !self.value.is_finite() {
            0.0
        } else {
            (self.hi - self.lo).abs() / 2.0 / self.value.abs()
        }
    }
}

/// What a comparison of two variants showed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The whole interval of the ratio lies beyond 1 ± the minimum effect: a
    /// difference stated as a fact about this machine.
    Different,
    /// The interval of the ratio lies within ±(minimum effect) of 1: the variants are
    /// indistinguishable here.
    Equivalent,
    /// Neither: the data do not show a difference, nor rule one out.
    Inconclusive,
}

/// A latency distribution with its summary and histogram.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Distribution {
    /// `<what>/<variant>`, e.g. `create/joinable/same-cpu/start`.
    pub name: String,
    /// Unit of the samples (`ns` or `cycles`).
    pub unit: String,
    /// Order statistics.
    pub summary: Summary,
    /// Log-scaled histogram.
    pub histogram: Histogram,
    /// The densest interval holding `fraction` of the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_range: Option<ModeRange>,
    /// Paired samples (A, B), downsampled, for scatter plots.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "pairs_of_two"
    )]
    pub pairs: Vec<[f64; 2]>,
    /// Name of the distribution paired with this one (the y of `pairs`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_with: Option<String>,
}

/// Order statistics of a sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Lower end of the 95 % interval of the median (0 in version 1 files).
    #[serde(default)]
    pub p50_lo: f64,
    /// Upper end of the 95 % interval of the median (0 in version 1 files).
    #[serde(default)]
    pub p50_hi: f64,
}

impl Summary {
    /// The median as an estimate with its interval (exact when the file has none).
    pub fn median(&self) -> Estimate {
        if self.p50_lo == 0.0 && self.p50_hi == 0.0 {
            Estimate {
                n: self.count,
                ..Estimate::exact(self.p50)
            }
        } else {
            Estimate {
                value: self.p50,
                lo: self.p50_lo,
                hi: self.p50_hi,
                n: self.count,
            }
        }
    }
}

/// Histogram with explicit bin edges (`edges.len() == counts.len() + 1`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Histogram {
    /// Bin edges, increasing.
    pub edges: Vec<f64>,
    /// Samples per bin; bin i is `[edges[i], edges[i+1])`, the last bin is closed.
    pub counts: Vec<u64>,
    /// Whether edges are log-spaced.
    pub log: bool,
}

/// "x % of samples lie within [low, high]".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModeRange {
    /// Fraction of samples inside, 0..1.
    pub fraction: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Pairs read as arrays of any length, each checked to hold two numbers: a
/// pair of three is "invalid length 3, expected a pair of two numbers" (read
/// from text, serde_json called it "trailing characters").
fn pairs_of_two<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<[f64; 2]>, D::Error> {
    let lists: Vec<Vec<f64>> = Vec::deserialize(d)?;
    lists
        .into_iter()
        .map(|p| match p[..] {
            [a, b] => Ok([a, b]),
            _ => Err(serde::de::Error::invalid_length(
                p.len(),
                &"a pair of two numbers",
            )),
        })
        .collect()
}
