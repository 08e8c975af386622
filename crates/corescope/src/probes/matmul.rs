//! `matmul`: the six loop orders of the naive triple loop × normal / transposed
//! output, against an optimised library (seed 002 §3.1, where a compiler that
//! recognised the pattern beat every hand-written order). MFLOP/s = 2n³ / time.
//!
//! `normal` computes C = A·B with C row-major; `transposed` stores the result
//! transposed (C[j][i]), which turns every order's access to C around. The library
//! is the `matrixmultiply` crate's `dgemm` (blocked, vectorised, one thread).
//!
//! Repetition is the runner's: a case is one product of one variant at one n, and
//! the 13 variants of one n are one group, run interleaved in rotated rounds, so
//! drift hits every order alike. Best vs worst order and library vs best order are
//! compared round by round (paired), and stated as differences only when the
//! interval of the ratio excludes 1.

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::model::{Measurement, Point, ProbeResult, Sensitivity, Warning};
use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;

/// The six loop orders, outermost first.
pub const ORDERS: [&str; 6] = ["ijk", "ikj", "jik", "jki", "kij", "kji"];
/// A variant whose previous size took longer than this share of the probe's budget
/// is not run at the next size (it would take about 8× longer): recorded as gave up.
pub const GIVE_UP_SHARE: f64 = 1.0 / 16.0;

/// Rounds of one n. The orders differ by large factors (seed 002: up to 10×), so 6
/// pairs (the fewest with which the signed-rank test can reach 5 %) suffice, and
/// more are run only while intervals are wide. No warm-up round: every run
/// allocates its own output, so every round starts in the same state.
pub const ROUNDS: Rounds = Rounds {
    min: 6,
    max: 8,
    warmup: false,
    target_rel_half_width: crate::probes::TARGET_REL_HALF_WIDTH,
};

/// The probe.
pub struct Matmul;

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    n: usize,
    /// `ijk/normal` … `kji/transposed`, or `library/matrixmultiply`.
    variant: String,
}

/// Every variant: the six orders × normal / transposed, then the library.
fn variants() -> Vec<(String, Option<(&'static str, bool)>)> {
    let mut v = Vec::new();
    for o in ORDERS {
        for t in [false, true] {
            let tag = if t { "transposed" } else { "normal" };
            v.push((format!("{o}/{tag}"), Some((o, t))));
        }
    }
    v.push((LIBRARY.into(), None));
    v
}

/// Series of the library.
pub const LIBRARY: &str = "library/matrixmultiply";

// One function per order: `$o1 $o2 $o3` are the loops, outermost first. `$t` selects
// where C[i][j] lives: row-major (normal) or transposed.
macro_rules! order {
    ($name:ident, [$o1:ident, $o2:ident, $o3:ident], $i:ident, $j:ident, $k:ident) => {
        /// C (+)= A·B with this loop order; `t`: store C transposed.
        #[inline(never)]
        pub fn $name(n: usize, a: &[f64], b: &[f64], c: &mut [f64], t: bool) {
            for $o1 in 0..n {
                for $o2 in 0..n {
                    for $o3 in 0..n {
                        let ci = if t { $j * n + $i } else { $i * n + $j };
                        c[ci] += a[$i * n + $k] * b[$k * n + $j];
                    }
                }
            }
        }
    };
}
order!(ijk, [i, j, k], i, j, k);
order!(ikj, [i, k, j], i, j, k);
order!(jik, [j, i, k], i, j, k);
order!(jki, [j, k, i], i, j, k);
order!(kij, [k, i, j], i, j, k);
order!(kji, [k, j, i], i, j, k);

/// Run loop order `o` (an entry of [`ORDERS`]).
pub fn by_order(o: &str, n: usize, a: &[f64], b: &[f64], c: &mut [f64], t: bool) {
    match o {
        "ijk" => ijk(n, a, b, c, t),
        "ikj" => ikj(n, a, b, c, t),
        "jik" => jik(n, a, b, c, t),
        "jki" => jki(n, a, b, c, t),
        "kij" => kij(n, a, b, c, t),
        _ => kji(n, a, b, c, t),
    }
}

/// C = A·B with `matrixmultiply::dgemm` (row-major).
pub fn library(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    // SAFETY: a, b, c hold n·n values each, row-major (row stride n, column stride 1),
    // and c does not alias a or b (`&mut` vs `&`).
    unsafe {
        matrixmultiply::dgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            n as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    let a = (0..n * n)
        .map(|x| ((x * 7 + 3) % 13) as f64 / 13.0)
        .collect();
    let b = (0..n * n)
        .map(|x| ((x * 5 + 1) % 11) as f64 / 11.0)
        .collect();
    (a, b)
}

/// The model's price of a multiply-add (`corescope plan`), in dependent integer
/// ops, every loop order and the library averaged. Fitted on the reference runs
/// (`final1.json`).
const COST_OPS_PER_N3: f64 = 7.4;

/// Id of the probe and of its run-file entry.
pub const ID: &str = "matmul";

impl Probe for Matmul {
    type Params = CaseParams;
    type Facts = ();

    /// n³ multiply-adds, [`COST_OPS_PER_N3`] dependent integer ops each (every loop
    /// order and the library averaged).
    /// Summary: the library against the best loop order, then the loop orders.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Comparison {
            picks: &[
                crate::model::Sides::From("library"),
                crate::model::Sides::NotFrom("library"),
            ],
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some((p.n as f64).powi(3) * COST_OPS_PER_N3 * c.op_s())
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "matrix multiply: the six loop orders × normal/transposed vs an optimised library"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CoreThroughput, Sensitivity::PageSize]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let sizes: Vec<usize> = ctx.profile.pick(
            // Quick stops at 128: at 256 the worst orders take about 100 ms a
            // product, 8 of the quick profile's 70 s on a 2-vCPU guest.
            vec![32, 64, 128],
            // 1024 left the default: every variant now runs at least 6 times.
            vec![64, 128, 256, 512],
            vec![64, 128, 256, 512, 1024, 2048],
        );
        GAVE_UP.with(|g| g.borrow_mut().clear());
        let mut cases = Vec::new();
        for &n in &sizes {
            for (name, _) in variants() {
                let params = CaseParams {
                    n,
                    variant: name.clone(),
                };
                cases.push(
                    Case::new(format!("{name} n = {n}"), &params)
                        .compared(format!("matmul n = {n}"), &name, &name)
                        .with_rounds(super::pool::rounds_for(ctx.profile, ROUNDS)),
                );
            }
        }
        Ok(Plan::new(cases)
            .param("sizes", &sizes)
            .param("orders", ORDERS)
            .param("library", "matrixmultiply 0.3 dgemm (one thread)")
            .param("flops", "2n³ per product")
            .param(
                "repetitions",
                "runner rounds, the variants of one n interleaved (see rounds_min / rounds_max)",
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let n = c.n;
        let mut m = Measurement::default();
        // Gave up at a smaller n: not run again (its own n keeps all its rounds).
        if GAVE_UP.with(|g| g.borrow().iter().any(|(v, at)| *v == c.variant && *at < n)) {
            return Ok(m);
        }
        let v = variants()
            .into_iter()
            .find(|(name, _)| *name == c.variant)
            .map(|(_, v)| v)
            .ok_or_else(|| ProbeError::UnknownVariant(c.variant.clone()))?;
        let (a, b) = inputs(n);
        let flops = 2.0 * (n as f64).powi(3);
        let budget = ctx.plan.budget_s * GIVE_UP_SHARE;
        // Pinned to one CPU, as the seed's single-threaded runs.
        let cpus =
            crate::placement::assign(&ctx.plan.topo, &crate::placement::Strategy::Linear, 1)?;
        let (a, b) = (&a, &b);
        let out = ctx.team(
            &cpus,
            1,
            |_| vec![0.0; n * n],
            |_, c_buf: &mut Vec<f64>| {
                let t0 = Instant::now();
                match v {
                    Some((o, t)) => by_order(o, n, black_box(a), black_box(b), c_buf, t),
                    None => library(n, black_box(a), black_box(b), c_buf),
                }
                black_box(&*c_buf);
                t0.elapsed().as_secs_f64()
            },
        )?;
        let secs = out
            .results
            .first()
            .and_then(|r| r.first())
            .copied()
            .ok_or(NotRun::Kernel)?;
        m.points.push(Point::new(
            &c.variant,
            "n",
            n as f64,
            "flops_per_s",
            flops / secs.max(1e-12),
        ));
        let first = secs > budget
            && GAVE_UP.with(|g| {
                let mut g = g.borrow_mut();
                let new = !g.iter().any(|(v, _)| *v == c.variant);
                if new {
                    g.push((c.variant.clone(), n));
                }
                new
            });
        if first {
            m.warnings.push(Warning::GaveUp {
                variant: c.variant.clone(),
                n,
                time_s: secs,
            });
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        // At the largest n every naive variant reached: best and worst order, and the
        // library against the best order, paired by round.
        let naive: Vec<_> = result.series.iter().filter(|s| s.name != LIBRARY).collect();
        let Some(n) = naive
            .iter()
            .filter_map(|s| s.x.iter().copied().reduce(f64::max))
            .reduce(f64::min)
        else {
            return Analysis::default();
        };
        let at: Vec<(String, f64)> = naive
            .iter()
            .filter_map(|s| Some((s.name.clone(), s.estimate_at(n)?.value)))
            .filter(|(_, y)| y.is_finite())
            .collect();
        let best = at.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        let worst = at.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let (Some((b, _)), Some((w, _))) = (best, worst) else {
            return Analysis::default();
        };
        let unit = "flops_per_s";
        let found = [
            analysis::compare(
                result,
                &format!("matmul n = {n}, best vs worst loop order"),
                unit,
                (b, b, n),
                (w, w, n),
                None,
            ),
            analysis::compare(
                result,
                &format!("matmul n = {n}, the library vs the best loop order"),
                unit,
                ("library (matrixmultiply)", LIBRARY, n),
                (b, b, n),
                None,
            ),
        ];
        Analysis::findings(found.into_iter().flatten())
    }
}

thread_local! {
    /// Variants that gave up in the current run, and at which n (the runner calls one
    /// probe at a time from one thread).
    static GAVE_UP: std::cell::RefCell<Vec<(String, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_and_the_library_compute_the_product() {
        let n = 12;
        let (a, b) = inputs(n);
        let mut reference = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                reference[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
            }
        }
        for o in ORDERS {
            for t in [false, true] {
                let mut c = vec![0.0; n * n];
                by_order(o, n, &a, &b, &mut c, t);
                for i in 0..n {
                    for j in 0..n {
                        let got = if t { c[j * n + i] } else { c[i * n + j] };
                        assert!((got - reference[i * n + j]).abs() < 1e-9, "{o} t={t}");
                    }
                }
            }
        }
        let mut c = vec![0.0; n * n];
        library(n, &a, &b, &mut c);
        assert!(c.iter().zip(&reference).all(|(x, y)| (x - y).abs() < 1e-9));
    }
}
