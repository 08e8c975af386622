//! `sharing`: the empirical sharing map (seed 000 §3.1, which found ALU groups of 4
//! strands the OS did not report). For pairs of CPUs, the compute kernel (int and fp)
//! runs on the first alone, then on both at once; the slowdown says whether they share
//! a pipeline, ALU or FPU. On more than 64 CPUs a representative subset of pairs.

use super::compute::{fp_kernel, int_kernel, INPUTS};
use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::model::{Matrix, Measurement, ProbeResult};
use crate::placement::subset;
use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Repetitions; the best is kept.
pub const REPS: usize = 3;
/// Two CPUs "slow each other" when running together takes this much longer.
pub const SHARED_SLOWDOWN: f64 = 1.3;

/// The probe.
pub struct Sharing;

#[derive(Debug, Clone, Serialize, Deserialize)]
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
        let (cpus, note) = subset::cpus(&ctx.topo);
        if cpus.len() < 2 {
            return Err(ProbeError::Skipped("fewer than 2 CPUs allowed".into()));
        }
        let passes: u64 = ctx.profile.pick(20_000, 100_000, 1_000_000);
        let mut cases = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            for &b in &cpus[i + 1..] {
                cases.push(Case::new(format!("{a}+{b}"), &CaseParams { a, b, passes }));
            }
        }
        let mut plan = Plan {
            cases,
            ..Plan::default()
        }
        .param("cpus", &cpus)
        .param("passes", passes)
        .param("repetitions", REPS)
        .param("shared_slowdown", SHARED_SLOWDOWN);
        if let Some(n) = note {
            plan = plan.param("subset", n);
        }
        Ok(plan)
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c: CaseParams = case.decode()?;
        let mut m = Measurement::default();
        for (fp, name) in [(false, "sharing/int"), (true, "sharing/fp")] {
            let alone = ctx.team(&[Some(c.a)], REPS, |_| (), |t, _| kernel(fp, t, c.passes))?;
            let both = ctx.team(
                &[Some(c.a), Some(c.b)],
                REPS,
                |_| (),
                |t, _| kernel(fp, t, c.passes),
            )?;
            let (Some(a), Some(b)) = (alone.best(), both.best()) else {
                return Err(ProbeError::GaveUp("no repetition ran".into()));
            };
            let slowdown = b.team_ns() as f64 / a.team_ns().max(1) as f64;
            m.matrices.push(Matrix {
                name: name.into(),
                unit: "x_alone".into(),
                rows: vec![c.a.to_string()],
                cols: vec![c.b.to_string()],
                values: vec![vec![Some(slowdown)]],
            });
        }
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, ctx: &PlanCtx) {
        let cpus: Vec<u32> = result
            .params
            .get("cpus")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let labels: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
        let idx = |s: &str| labels.iter().position(|l| l == s);
        let mut full = Vec::new();
        for (name, unit) in [
            ("sharing/int", "integer pipeline"),
            ("sharing/fp", "FP unit"),
        ] {
            let mut values = vec![vec![None; cpus.len()]; cpus.len()];
            let mut pairs = Vec::new();
            for m in result.matrices.iter().filter(|m| m.name == name) {
                if let (Some(r), Some(c), Some(Some(v))) = (
                    idx(&m.rows[0]),
                    idx(&m.cols[0]),
                    m.values.first().and_then(|r| r.first()),
                ) {
                    values[r][c] = Some(*v);
                    values[c][r] = Some(*v);
                    pairs.push(((cpus[r], cpus[c]), *v));
                }
            }
            let sets = groups(&pairs);
            if sets.is_empty() && !pairs.is_empty() {
                let worst = pairs.iter().map(|p| p.1).fold(0.0, f64::max);
                result.findings.push(format!(
                    "{name}: no two CPUs slow each other by {:.0} % or more (worst {worst:.2}× among {} pairs): no shared {unit} seen{}",
                    (SHARED_SLOWDOWN - 1.0) * 100.0,
                    pairs.len(),
                    if ctx.topo.has_smt() { "" } else { "; the topology reports no SMT either" }
                ));
            }
            for (set, v) in sets {
                let all_siblings = set
                    .windows(2)
                    .all(|w| subset::relation(&ctx.topo, w[0], w[1]) == "SMT siblings");
                result.findings.push(format!(
                    "{name}: CPUs {} slow each other (up to {v:.2}×): they share an {unit}; {}",
                    set.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
                    if all_siblings {
                        "SMT siblings, as the topology says"
                    } else {
                        "not all SMT siblings per the topology: a shared unit the OS does not report"
                    }
                ));
            }
            full.push(Matrix {
                name: name.into(),
                unit: "x_alone".into(),
                rows: labels.clone(),
                cols: labels.clone(),
                values,
            });
        }
        result.matrices = full;
        if let Some(n) = result.params.get("subset").and_then(|v| v.as_str()) {
            result.warnings.push(n.to_string());
        }
    }
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
