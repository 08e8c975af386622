//! `sharing`: the empirical sharing map (seed 000 §3.1, which found ALU groups of 4
//! strands the OS did not report). For pairs of CPUs, the compute kernel (int and fp)
//! runs on the first alone, then on both at once; the slowdown says whether they share
//! a pipeline, ALU or FPU. On more than 64 CPUs a representative subset of pairs.
//!
//! Repetition: per pair and kernel, [`ROUNDS`] rounds each run the kernel alone and
//! together once, in an order alternating round by round (alone first, then together
//! first), so drift hits both alike. The slowdown is the paired ratio of the rounds
//! (`stats::compare_paired`: Hodges-Lehmann centre, signed-rank 95 % interval); the
//! matrix holds its centre and `…/spread` the width of its interval. Two CPUs are said
//! to share a unit only when the slowdown is at least [`SHARED_SLOWDOWN`] and
//! significant.

use super::c2c::assemble;
use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::kernels::chains::{fp_kernel, int_kernel, INPUTS};
use crate::model::{Finding, Matrix, Measurement, ProbeResult};
use crate::placement::subset;
use serde::Serialize;
use std::hint::black_box;

/// Rounds of (alone, together) per pair and kernel: 6 is the fewest with which the
/// signed-rank interval can exclude 1 at 95 %.
pub const ROUNDS: usize = 6;
/// Two CPUs "slow each other" when running together takes this much longer.
pub const SHARED_SLOWDOWN: f64 = 1.3;

/// Pairs of each level the default profile measures on machines beyond the full
/// matrix (see [`subset::pairs_by_level`]).
pub const PAIRS_PER_LEVEL: usize = 8;

/// The probe.
pub struct Sharing;

#[derive(Debug, Clone, Serialize)]
struct CaseParams {
    a: u32,
    b: u32,
    passes: u64,
}

fn kernel(fp: bool, t: usize, passes: u64) {
    if fp {
        let x: [f64; INPUTS] = std::array::from_fn(|i| 0.9 + 0.2 * i as f64 / INPUTS as f64);
        black_box(fp_kernel(
            &x,
            [0.5, 1.25, 0.75, 0.25],
            passes,
            1.0 + t as f64,
        ));
    } else {
        let x: [i64; INPUTS] = std::array::from_fn(|i| (2 * (i + t) + 3) as i64);
        black_box(int_kernel(&x, [3, 5, 7, 11], passes, t as i64));
    }
}

/// Sets of CPUs linked by a slowdown ≥ [`SHARED_SLOWDOWN`] (connected components).
pub fn groups(pairs: &[((u32, u32), f64)]) -> Vec<(Vec<u32>, f64)> {
    let mut sets: Vec<(Vec<u32>, f64)> = Vec::new();
    for &((a, b), v) in pairs.iter().filter(|p| p.1 >= SHARED_SLOWDOWN) {
        let ia = sets.iter().position(|s| s.0.contains(&a));
        let ib = sets.iter().position(|s| s.0.contains(&b));
        match (ia, ib) {
            (Some(i), Some(j)) if i != j => {
                let (hi, lo) = (i.max(j), i.min(j));
                let moved = sets.remove(hi);
                sets[lo].0.extend(moved.0);
                sets[lo].1 = sets[lo].1.max(moved.1).max(v);
            }
            (Some(i), _) | (_, Some(i)) => {
                for c in [a, b] {
                    if !sets[i].0.contains(&c) {
                        sets[i].0.push(c);
                    }
                }
                sets[i].1 = sets[i].1.max(v);
            }
            (None, None) => sets.push((vec![a, b], v)),
        }
    }
    for s in &mut sets {
        s.0.sort_unstable();
    }
    sets
}

impl Probe for Sharing {
    fn id(&self) -> &'static str {
        "sharing"
    }

    fn title(&self) -> &'static str {
        "empirical sharing map: slowdown when two CPUs run the compute kernel together"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        // Each pair runs the kernel alone and together in rounds: the default
        // profile measures the full matrix up to 16 CPUs (120 pairs), the
        // representative subset beyond.
        let full_max = ctx.profile.pick(8, 16, subset::FULL_MATRIX_MAX);
        let (cpus, note) = subset::cpus_up_to(&ctx.topo, full_max);
        if cpus.len() < 2 {
            return Err(ProbeError::Skipped("fewer than 2 CPUs allowed".into()));
        }
        // Half the passes of the former 3 + 3 best-of runs: 6 + 6 rounds in about the
        // same time.
        let passes: u64 = ctx.profile.pick(10_000, 50_000, 500_000);
        // Beyond the full matrix the default profile measures up to
        // `PAIRS_PER_LEVEL` pairs of each level of the subset, not all its pairs.
        let by_level = note.is_some() && ctx.profile == crate::model::Profile::Default;
        let pairs: Vec<(u32, u32)> = if by_level {
            subset::pairs_by_level(&ctx.topo, &cpus, PAIRS_PER_LEVEL)
        } else {
            cpus.iter()
                .enumerate()
                .flat_map(|(i, &a)| cpus[i + 1..].iter().map(move |&b| (a, b)))
                .collect()
        };
        let note = note.map(|n| {
            if by_level {
                format!("{n}; of these, up to {PAIRS_PER_LEVEL} pairs of each level ({} pairs; --full measures them all)", pairs.len())
            } else {
                n
            }
        });
        let cases = pairs
            .iter()
            .map(|&(a, b)| Case::new(format!("{a}+{b}"), &CaseParams { a, b, passes }))
            .collect();
        let mut plan = Plan::new(cases)
            .scaled_down(by_level.then(|| format!("up to {PAIRS_PER_LEVEL} pairs of each level")))
            .param("cpus", &cpus)
            .with_facts(cpus.clone())
            .param("passes", passes)
            .param("rounds", ROUNDS)
            .param("shared_slowdown", SHARED_SLOWDOWN);
        if let Some(n) = note {
            plan = plan.warning(n);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.typed()?;
        let mut m = Measurement::default();
        for (fp, name) in [(false, "sharing/int"), (true, "sharing/fp")] {
            let (mut alone, mut both) = (Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                if ctx.expired() && alone.len() >= 2 {
                    let w = format!(
                        "{name} {}+{}: stopped at the probe's deadline after {round} of {ROUNDS} rounds",
                        c.a, c.b
                    );
                    if !ctx.warnings.contains(&w) {
                        ctx.warnings.push(w);
                    }
                    break;
                }
                for together in [round % 2 == 1, round % 2 == 0] {
                    let cpus: &[Option<u32>] = if together {
                        &[Some(c.a), Some(c.b)]
                    } else {
                        &[Some(c.a)]
                    };
                    let out = ctx.team(cpus, 1, |_| (), |t, _| kernel(fp, t, c.passes))?;
                    let t = out
                        .best()
                        .ok_or_else(|| ProbeError::GaveUp("no repetition ran".into()))?
                        .team_ns()
                        .max(1) as f64;
                    if together {
                        both.push(t);
                    } else {
                        alone.push(t);
                    }
                }
            }
            let slowdown = crate::stats::compare_paired(&both, &alone)
                .ok_or_else(|| ProbeError::GaveUp(format!("{name}: fewer than 2 rounds ran")))?
                .ratio;
            for (suffix, v) in [
                ("", slowdown.value),
                ("/lo", slowdown.lo),
                ("/spread", slowdown.hi - slowdown.lo),
            ] {
                m.matrices.push(Matrix {
                    name: format!("{name}{suffix}"),
                    unit: "x_alone".into(),
                    rows: vec![c.a.to_string()],
                    cols: vec![c.b.to_string()],
                    values: vec![vec![Some(v)]],
                });
            }
        }
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, plan: &Plan, ctx: &PlanCtx) {
        let cpus: Vec<u32> = plan.facts::<Vec<u32>>().cloned().unwrap_or_default();
        let mut full = Vec::new();
        for (name, unit) in [
            ("sharing/int", "integer pipeline"),
            ("sharing/fp", "FP unit"),
        ] {
            let (values, pairs) = assemble(&result.matrices, name, "x_alone", &cpus);
            let (_, lo) = assemble(&result.matrices, &format!("{name}/lo"), "x_alone", &cpus);
            let (spread, _) = assemble(
                &result.matrices,
                &format!("{name}/spread"),
                "x_alone",
                &cpus,
            );
            // Only a significant slowdown (interval above 1) links two CPUs.
            let linked: Vec<((u32, u32), f64)> = pairs
                .iter()
                .filter(|p| lo.iter().any(|l| l.0 == p.0 && l.1 > 1.0))
                .copied()
                .collect();
            result
                .findings
                .extend(share_findings(name, unit, &pairs, &linked, &ctx.topo));
            full.push(values);
            full.push(spread);
        }
        result.matrices = full;
    }
}

/// Findings of one kernel's map: the sets of CPUs whose significant slowdown reaches
/// [`SHARED_SLOWDOWN`], or that none does.
fn share_findings(
    name: &str,
    unit: &str,
    pairs: &[((u32, u32), f64)],
    linked: &[((u32, u32), f64)],
    topo: &crate::topology::Topology,
) -> Vec<Finding> {
    let sets = groups(linked);
    let mut out = Vec::new();
    if sets.is_empty() && !pairs.is_empty() {
        let worst = pairs.iter().map(|p| p.1).fold(0.0, f64::max);
        out.push(Finding::Note {
            text: format!(
                "{name}: no two CPUs significantly slow each other by {:.0} % or more (worst {worst:.2}× among {} pairs): no shared {unit} seen{}",
                (SHARED_SLOWDOWN - 1.0) * 100.0,
                pairs.len(),
                if topo.has_smt() { "" } else { "; the topology reports no SMT either" }
            ),
        });
    }
    for (set, v) in sets {
        let all_siblings = set
            .windows(2)
            .all(|w| subset::relation(topo, w[0], w[1]) == "SMT siblings");
        out.push(Finding::Note {
            text: format!(
                "{name}: CPUs {} slow each other (up to {v:.2}×, significant): they share an {unit}; {}",
                set.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
                if all_siblings {
                    "SMT siblings, as the topology says"
                } else {
                    "not all SMT siblings per the topology: a shared unit the OS does not report"
                }
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_join_linked_cpus() {
        let p = vec![((0, 1), 1.9), ((2, 3), 1.8), ((1, 4), 1.5), ((0, 2), 1.05)];
        let g = groups(&p);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, vec![0, 1, 4]);
        assert_eq!(g[1].0, vec![2, 3]);
        assert!(groups(&[((0, 1), 1.0)]).is_empty());
        // Two sets joined by a later pair.
        let g = groups(&[((0, 1), 2.0), ((2, 3), 2.0), ((1, 2), 2.0)]);
        assert_eq!(g, vec![(vec![0, 1, 2, 3], 2.0)]);
    }
}
