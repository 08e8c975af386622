//! Event counters of a probe's thread teams in the run file (`perf_event_open`
//! through `counters/`): what was counted, per case the team's sums per round,
//! and the derived MIPS, CPI and efficiency with their intervals. Optional and
//! additive: files without it load as before (`docs/counters.md`).

use super::Estimate;
use crate::counters::{Availability, CounterReading};
use serde::{Deserialize, Serialize};

/// What a probe's teams counted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeCounters {
    /// task-clock, context switches, CPU migrations, page faults: counted or why not.
    pub software: Availability,
    /// instructions and cycles (cache misses, stalled cycles where offered):
    /// counted, or "no PMU (…)".
    pub hardware: Availability,
    /// Whether kernel-mode events were counted too (software group).
    #[serde(default)]
    pub kernel_counted: bool,
    /// Instructions a core can issue per cycle (the denominator of efficiency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_width: Option<u32>,
    /// Where the issue width comes from (microarchitecture and manual), or why it
    /// is unknown.
    #[serde(default)]
    pub issue_width_source: String,
    /// One entry per measured case, in the order first run.
    #[serde(default)]
    pub cases: Vec<CaseCounters>,
}

/// The counts of one case over its rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseCounters {
    /// The case's label (`int scatter ×2`).
    pub case: String,
    /// Workers of its largest team.
    pub threads: usize,
    /// One entry per round (one run of the case, possibly several teams).
    pub rounds: Vec<RoundCount>,
    /// Millions of instructions per wall second, per round: median and interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mips: Option<Estimate>,
    /// Cycles per instruction (all workers' cycles ÷ their instructions), per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpi: Option<Estimate>,
    /// IPC ÷ issue width, per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<Estimate>,
}

/// Everything one round of a case counted, summed over its teams and workers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoundCount {
    /// Team wall time (last end − first start), summed over teams and repetitions, ns.
    pub wall_ns: u64,
    /// Team runs in the round.
    pub teams: usize,
    /// Worker-runs counted (workers × teams).
    pub thread_runs: usize,
    /// The sums; a count is present only if every worker had it.
    pub total: CounterReading,
    /// CPU migrations of workers that were pinned to one CPU (should be 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_migrations: Option<u64>,
}

impl CaseCounters {
    /// An empty record for `case`.
    pub fn new(case: &str) -> Self {
        Self {
            case: case.into(),
            threads: 0,
            rounds: Vec::new(),
            mips: None,
            cpi: None,
            efficiency: None,
        }
    }

    /// Recompute `mips`, `cpi` and `efficiency` from the rounds.
    pub fn derive(&mut self, issue_width: Option<u32>) {
        let per_round: Vec<crate::counters::Derived> = self
            .rounds
            .iter()
            .map(|r| r.total.derived(r.wall_ns as f64, issue_width))
            .collect();
        let est = |f: fn(&crate::counters::Derived) -> Option<f64>| {
            let v: Vec<f64> = per_round.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| crate::stats::estimate(&v))
        };
        self.mips = est(|d| d.mips);
        self.cpi = est(|d| d.cpi);
        self.efficiency = est(|d| d.efficiency);
    }

    /// The sum over every round.
    pub fn total(&self) -> Option<CounterReading> {
        let mut it = self.rounds.iter();
        let mut sum = it.next()?.total;
        for r in it {
            sum.accumulate(&r.total);
        }
        Some(sum)
    }

    /// Wall time of every round, ns.
    pub fn wall_ns(&self) -> u64 {
        self.rounds.iter().map(|r| r.wall_ns).sum()
    }
}
