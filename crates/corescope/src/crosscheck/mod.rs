//! `corescope crosscheck`: corescope's measurements beside the established tools'.
//!
//! Each row pairs one of corescope's probe cases (found in the probe's own plan and run
//! by the probe's own code, [`ours`]) with the tool's run on the same CPUs, sizes and
//! definition ([`tools`]), or with the physical limit of the FMA units (`probes::peak::limit`).
//! Both sides are warmed up once, then measured in [`DEFAULT_ROUNDS`] rounds whose order
//! alternates (tool first in even rounds), so drift and the machine's state hit both
//! alike. A row holds every round's two values; its ratio is the median of the per-round
//! ratios ours ÷ theirs, with the median's order-statistic interval. Measuring never
//! prints: progress goes to the caller's callback.

pub mod ours;
mod rows;
pub mod tools;

use crate::clock::Clock;
use crate::model::{Agreement, CrossCheck, CrossRow, RowStatus};
use crate::topology::Topology;
pub use rows::{plan_rows, RowPlan, Side, PROBES};

/// Rounds per row: 6 gives the median's order-statistic interval a coverage of
/// 1 − 2/2^6 ≈ 97 % between the smallest and largest ratio.
pub const DEFAULT_ROUNDS: usize = 6;
/// The band a ratio must lie in to agree.
pub const BAND: (f64, f64) = (0.95, 1.05);

/// What `crosscheck` is asked to do.
pub struct Setup<'a> {
    /// The machine.
    pub topo: &'a Topology,
    /// The calibrated counter.
    pub clock: &'a Clock,
    /// The operating system (the run header's line), for the install commands.
    pub os: &'a str,
    /// Rounds per row.
    pub rounds: usize,
    /// Probes whose rows to run (empty: all).
    pub probes: &'a [String],
}

/// Where a crosscheck is, for the progress line.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Row index (from 0) and count.
    pub row: (usize, usize),
    /// The row's id.
    pub id: String,
    /// Round (0 is the warm-up) and rounds.
    pub round: (usize, usize),
}

/// Run every planned row; rows whose tool is missing say how to install it.
pub fn run(setup: &Setup, progress: &mut dyn FnMut(&Progress)) -> CrossCheck {
    let plans = plan_rows(setup);
    let total = plans.len();
    let mut rows = Vec::with_capacity(total);
    for (i, plan) in plans.into_iter().enumerate() {
        if crate::interrupt::requested().is_some() {
            break;
        }
        let id = plan.row.id.clone();
        let mut tick = |round| {
            progress(&Progress {
                row: (i, total),
                id: id.clone(),
                round: (round, setup.rounds),
            })
        };
        rows.push(measure_row(plan, setup.rounds, &mut tick));
    }
    CrossCheck {
        rounds: setup.rounds,
        band: BAND,
        rows,
    }
}

/// Warm both sides up, then measure them in alternating order.
fn measure_row(plan: RowPlan, rounds: usize, tick: &mut dyn FnMut(usize)) -> CrossRow {
    let RowPlan { mut row, sides } = plan;
    let Some(mut sides) = sides else {
        return row;
    };
    let mut ours = Vec::with_capacity(rounds);
    let mut theirs = Vec::with_capacity(rounds);
    let mut outcome = Ok(());
    for round in 0..=rounds {
        tick(round);
        if crate::interrupt::requested().is_some() {
            outcome = Err(ours::CrossError::Interrupted);
            break;
        }
        let pair = if round % 2 == 0 {
            sides.theirs().and_then(|t| sides.ours().map(|o| (o, t)))
        } else {
            sides.ours().and_then(|o| sides.theirs().map(|t| (o, t)))
        };
        match pair {
            // Round 0 is the warm-up (and, for likwid, tells where its threads ran).
            Ok(_) if round == 0 => {}
            Ok((o, t)) => {
                ours.push(o);
                theirs.push(t);
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    row.command = sides.command();
    if let Err(why) = outcome {
        row.status = RowStatus::Failed {
            why: why.to_string(),
        };
    }
    summarise(&mut row, ours, theirs);
    row
}

/// Estimates of both sides and of the per-round ratio, and the verdict.
pub fn summarise(row: &mut CrossRow, ours: Vec<f64>, theirs: Vec<f64>) {
    let ratios: Vec<f64> = ours
        .iter()
        .zip(&theirs)
        .filter(|(_, t)| **t > 0.0)
        .map(|(o, t)| o / t)
        .collect();
    if !ratios.is_empty() {
        row.ours_estimate = Some(crate::stats::estimate(&ours));
        row.theirs_estimate = Some(crate::stats::estimate(&theirs));
        let ratio = crate::stats::estimate(&ratios);
        row.verdict = Some(Agreement::of(&ratio, BAND));
        row.ratio = Some(ratio);
    }
    row.ours = ours;
    row.theirs = theirs;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> CrossRow {
        CrossRow {
            id: "x".into(),
            what: "x".into(),
            tool: "t".into(),
            tool_version: None,
            unit: "ns".into(),
            command: String::new(),
            definition: String::new(),
            status: RowStatus::Measured,
            ours: vec![],
            theirs: vec![],
            ours_estimate: None,
            theirs_estimate: None,
            ratio: None,
            verdict: None,
        }
    }

    #[test]
    fn the_ratio_is_paired_by_round() {
        let mut r = row();
        // The machine slows down by half in the last three rounds: both sides alike,
        // so every per-round ratio is exactly 0.8.
        let theirs = vec![10.0, 10.0, 10.0, 20.0, 20.0, 20.0];
        let ours: Vec<f64> = theirs.iter().map(|t| t * 0.8).collect();
        summarise(&mut r, ours, theirs);
        let ratio = r.ratio.expect("a ratio");
        assert!((ratio.value - 0.8).abs() < 1e-12);
        assert!((ratio.lo - 0.8).abs() < 1e-12 && (ratio.hi - 0.8).abs() < 1e-12);
        assert_eq!(r.verdict, Some(Agreement::Differs));
        assert_eq!(ratio.n, 6);
    }

    #[test]
    fn no_rounds_no_ratio() {
        let mut r = row();
        summarise(&mut r, vec![], vec![]);
        assert!(r.ratio.is_none() && r.verdict.is_none() && r.ours_estimate.is_none());
        let mut r = row();
        summarise(&mut r, vec![1.0], vec![0.0]);
        assert!(
            r.ratio.is_none(),
            "a zero on the tool's side gives no ratio"
        );
    }
}
