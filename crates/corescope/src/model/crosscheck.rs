//! `corescope crosscheck`'s section of the run file: each of corescope's measurements
//! beside an established tool's, measured in interleaved rounds, with the ratio and its
//! interval. No I/O.

use super::Estimate;
use serde::{Deserialize, Serialize};

/// Every row of one `corescope crosscheck`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CrossCheck {
    /// Rounds per row: in each, corescope's measurement and the tool's, the order
    /// alternating from round to round.
    pub rounds: usize,
    /// The band the ratio must lie in to agree (0.95–1.05).
    pub band: (f64, f64),
    /// One row per measurement.
    pub rows: Vec<CrossRow>,
}

/// One measurement beside its counterpart.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CrossRow {
    /// Stable id (`memory/read/1`).
    pub id: String,
    /// What is measured, for people (`memory read, 1 thread, CPUs 0, 128 MiB`).
    pub what: String,
    /// The counterpart (`likwid-bench load_avx`), or how the reference is computed.
    pub tool: String,
    /// The tool's version where it says one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// Unit of both values (`bytes_per_s`, `ns`, `flop_per_s`).
    pub unit: String,
    /// The exact command of the tool, as run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// What differs in definition between the two, where something must.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub definition: String,
    /// Measured, not installed, failed, or skipped.
    pub status: RowStatus,
    /// corescope's value per round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ours: Vec<f64>,
    /// The tool's value per round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub theirs: Vec<f64>,
    /// Median of `ours` with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours_estimate: Option<Estimate>,
    /// Median of `theirs` with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theirs_estimate: Option<Estimate>,
    /// Median of the per-round ratios ours ÷ theirs, with its interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Estimate>,
    /// The ratio against the band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Agreement>,
}

/// Whether a row could be measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RowStatus {
    /// Both sides measured in every round.
    Measured,
    /// The tool is not on this machine: how to install it.
    NotInstalled {
        /// The command that installs it.
        install: String,
    },
    /// Not measurable here (no AVX-512, one CPU, unknown FMA width, …).
    Skipped {
        /// Why.
        why: String,
    },
    /// A side failed: the tool's error or corescope's.
    Failed {
        /// What went wrong.
        why: String,
    },
}

/// The ratio against the band.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    /// The ratio's median lies inside the band.
    Agrees,
    /// The ratio's whole interval lies outside the band.
    Differs,
    /// The median lies outside the band but the interval reaches into it.
    Undecided,
}

impl Agreement {
    /// The verdict for a ratio and a band: agree when the median is inside, differ
    /// when the whole interval is outside, undecided otherwise.
    pub fn of(ratio: &Estimate, band: (f64, f64)) -> Self {
        let (lo, hi) = band;
        if ratio.value >= lo && ratio.value <= hi {
            Agreement::Agrees
        } else if ratio.hi < lo || ratio.lo > hi {
            Agreement::Differs
        } else {
            Agreement::Undecided
        }
    }

    /// One word for tables.
    pub fn word(self) -> &'static str {
        match self {
            Agreement::Agrees => "agrees",
            Agreement::Differs => "differs",
            Agreement::Undecided => "undecided",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 6,
        }
    }

    #[test]
    fn the_verdict_reads_the_median_and_the_interval() {
        let band = (0.95, 1.05);
        assert_eq!(Agreement::of(&est(1.0, 0.9, 1.2), band), Agreement::Agrees);
        assert_eq!(
            Agreement::of(&est(0.95, 0.95, 0.95), band),
            Agreement::Agrees
        );
        assert_eq!(Agreement::of(&est(0.8, 0.7, 0.9), band), Agreement::Differs);
        assert_eq!(Agreement::of(&est(1.2, 1.1, 1.3), band), Agreement::Differs);
        assert_eq!(
            Agreement::of(&est(0.9, 0.85, 0.97), band),
            Agreement::Undecided
        );
    }

    #[test]
    fn a_row_round_trips_through_json() {
        let row = CrossRow {
            id: "memory/read/1".into(),
            what: "memory read".into(),
            tool: "likwid-bench load_avx".into(),
            tool_version: None,
            unit: "bytes_per_s".into(),
            command: String::new(),
            definition: String::new(),
            status: RowStatus::NotInstalled {
                install: "apt-get install likwid".into(),
            },
            ours: vec![],
            theirs: vec![],
            ours_estimate: None,
            theirs_estimate: None,
            ratio: None,
            verdict: None,
        };
        let text = serde_json::to_string(&row).expect("serialises");
        assert!(text.contains("\"state\":\"not_installed\""), "{text}");
        let back: CrossRow = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, row);
    }
}
