//! `pool`: the pthread-pool runtime of seed 000 §7 (crate `taskpool`), its two
//! experiments, with rayon's work stealing as today's reference in the same run.
//!
//! - FFT (Figure 15): recursive radix-2, every butterfly stage a family of tiny
//!   threads (no block limit: a worker per butterfly, as the seed), sizes 2^1 … 2^S,
//!   on the mutex free list, the lock-free free list (with its failed-CAS count) and
//!   rayon. A size whose predecessor took more than a third of the case budget is not
//!   started: "gave up", as the seed's "-give up-".
//! - Recursive block matmul (Figure 16): 8 sub-products + 4 additions per level,
//!   k = 1 … K levels (8^k leaf tasks), on taskpool (mutex free list) and rayon.

use super::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::model::{Measurement, Point, ProbeResult, Table};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use taskpool::fft::{dft_reference, fft, fft_with_cutoff, max_abs_error, test_signal, Complex};
use taskpool::matmul::{matmul_reference, rmatmul, Matrix};
use taskpool::{Executor, FreeList, Pool, PoolConfig};

/// Sizes up to this are checked against the direct DFT.
pub const CHECK_FFT_MAX_LOG2: u32 = 10;
/// Largest FFT error accepted against the direct DFT.
pub const FFT_TOLERANCE: f64 = 1e-6;
/// Smallest leaf block of the recursive matmul.
pub const MIN_LEAF: usize = 8;
/// Runs shorter than this are repeated (best of 3).
pub const REPEAT_BELOW_S: f64 = 0.1;

/// The probe.
pub struct PoolProbe;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Exec {
    Mutex,
    Lockfree,
    Rayon,
}

impl Exec {
    fn name(self) -> &'static str {
        match self {
            Exec::Mutex => "mutex",
            Exec::Lockfree => "lockfree",
            Exec::Rayon => "rayon",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum CaseParams {
    Fft {
        exec: Exec,
        max_log2: u32,
        case_budget_s: f64,
    },
    Rmatmul {
        order: usize,
        max_levels: u32,
        case_budget_s: f64,
    },
    /// One FFT size with sequential cutoffs, taskpool (block = CPUs) vs rayon.
    FftCutoff { log2: u32, cutoffs: Vec<usize> },
}

/// Sequential cutoffs (points) of the `fft-cutoff` comparison.
pub const FFT_CUTOFFS: [usize; 5] = [1, 16, 64, 256, 1024];

fn time_it(mut f: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    f();
    let first = t0.elapsed().as_secs_f64();
    if first >= REPEAT_BELOW_S {
        return first;
    }
    (0..2)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(first, f64::min)
}

fn new_pool(free_list: FreeList) -> Result<Pool, ProbeError> {
    Pool::new(PoolConfig::new(free_list)).map_err(|e| ProbeError::Failed(format!("taskpool: {e}")))
}

impl Probe for PoolProbe {
    fn id(&self) -> &'static str {
        "pool"
    }

    fn title(&self) -> &'static str {
        "pthread pool with SVP families: FFT of tiny threads and recursive matmul, vs rayon"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan, ProbeError> {
        let max_log2: u32 = ctx.profile.pick(12, 14, 16);
        let orders: Vec<usize> =
            ctx.profile
                .pick(vec![256], vec![512, 1024], vec![1024, 2048, 4096, 8192]);
        let max_levels: u32 = ctx.profile.pick(3, 4, 5);
        let case_budget_s = (ctx.budget_s / 8.0).max(1.0);
        let mut cases = Vec::new();
        for exec in [Exec::Mutex, Exec::Lockfree, Exec::Rayon] {
            cases.push(Case::new(
                format!("fft {}", exec.name()),
                &CaseParams::Fft {
                    exec,
                    max_log2,
                    case_budget_s,
                },
            ));
        }
        cases.push(Case::new(
            format!("fft 2^{max_log2} with cutoffs"),
            &CaseParams::FftCutoff {
                log2: max_log2.min(12),
                cutoffs: FFT_CUTOFFS.to_vec(),
            },
        ));
        for &order in &orders {
            cases.push(Case::new(
                format!("rmatmul N = {order}"),
                &CaseParams::Rmatmul {
                    order,
                    max_levels,
                    case_budget_s,
                },
            ));
        }
        Ok(Plan {
            cases,
            ..Plan::default()
        }
        .param("fft_max_log2", max_log2)
        .param("rmatmul_orders", &orders)
        .param("rmatmul_max_levels", max_levels)
        .param("case_budget_s", case_budget_s)
        .param("fft_block", "0 (a worker per butterfly, as seed 000)")
        .param("fft_cutoff_log2", max_log2.min(12))
        .param("fft_cutoff_points", FFT_CUTOFFS)
        .param("fft_cutoff_block", "number of allowed CPUs")
        .param("rayon_threads", rayon::current_num_threads()))
    }

    fn run(&self, case: &Case, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let mut m = Measurement::default();
        match case.decode()? {
            CaseParams::Fft {
                exec,
                max_log2,
                case_budget_s,
            } => {
                let pool = match exec {
                    Exec::Mutex => Some(new_pool(FreeList::Mutex)?),
                    Exec::Lockfree => Some(new_pool(FreeList::LockFree)?),
                    Exec::Rayon => None,
                };
                let executor = match &pool {
                    Some(p) => Executor::TaskPool { pool: p, block: 0 },
                    None => Executor::Rayon,
                };
                let mut rows = Vec::new();
                let mut last = 0.0;
                for s in 1..=max_log2 {
                    let n = 1usize << s;
                    if last > case_budget_s / 3.0 || ctx.expired() {
                        rows.push(vec![
                            serde_json::json!(s),
                            serde_json::json!(exec.name()),
                            serde_json::json!("gave up"),
                        ]);
                        m.warnings.push(format!(
                            "fft/{} gave up at size {s}: size {} took {last:.2} s of a {case_budget_s:.0} s case budget",
                            exec.name(),
                            s - 1
                        ));
                        break;
                    }
                    let input = test_signal(n);
                    let mut output = vec![Complex::default(); n];
                    if let Some(p) = &pool {
                        p.reset_stats();
                    }
                    let mut runs = 0u32;
                    let mut err = None;
                    let secs = time_it(|| {
                        runs += 1;
                        if let Err(e) = fft(executor, &input, &mut output) {
                            err = Some(e.to_string());
                        }
                    });
                    if let Some(e) = err {
                        return Err(ProbeError::Failed(format!("fft: {e}")));
                    }
                    if s <= CHECK_FFT_MAX_LOG2 {
                        let e = max_abs_error(&output, &dft_reference(&input));
                        if e > FFT_TOLERANCE {
                            return Err(ProbeError::Failed(format!(
                                "fft size {s}: error {e} against the direct DFT"
                            )));
                        }
                    }
                    last = secs;
                    m.points.push(Point::new(
                        format!("fft/{}", exec.name()),
                        "size_log2",
                        s as f64,
                        "seconds",
                        secs,
                    ));
                    if exec == Exec::Lockfree {
                        if let Some(p) = &pool {
                            let retries = p.stats().cas_failures as f64 / runs.max(1) as f64;
                            m.points.push(Point::new(
                                "fft-cas-retries/lockfree",
                                "size_log2",
                                s as f64,
                                "failed_cas",
                                retries,
                            ));
                        }
                    }
                }
                if !rows.is_empty() {
                    m.tables.push(Table {
                        name: "fft given up".into(),
                        columns: vec!["size_log2".into(), "free list".into(), "time".into()],
                        rows,
                    });
                }
            }
            CaseParams::FftCutoff { log2, cutoffs } => {
                // Same transform, same cutoff for both: below it the calling
                // thread recurses alone; above it taskpool makes families with
                // block = CPUs (no worker per butterfly) and rayon its tasks.
                let pool = new_pool(FreeList::Mutex)?;
                let cpus = ctx.plan.topo.allowed_count().max(1);
                let n = 1usize << log2;
                let input = test_signal(n);
                // One thread alone: the time to beat, and the reference result.
                let mut reference = vec![Complex::default(); n];
                let mut err = None;
                let secs = time_it(|| {
                    if let Err(e) = fft(Executor::Sequential, &input, &mut reference) {
                        err = Some(e.to_string());
                    }
                });
                if let Some(e) = err {
                    return Err(ProbeError::Failed(format!("fft: {e}")));
                }
                m.points.push(Point::new(
                    format!("fft-sequential/{log2}"),
                    "size_log2",
                    log2 as f64,
                    "seconds",
                    secs,
                ));
                for &cutoff in &cutoffs {
                    for (label, executor) in [
                        (
                            "taskpool",
                            Executor::TaskPool {
                                pool: &pool,
                                block: cpus,
                            },
                        ),
                        ("rayon", Executor::Rayon),
                    ] {
                        if ctx.expired() {
                            m.warnings
                                .push(format!("fft-cutoff: budget reached at cutoff {cutoff}"));
                            return Ok(m);
                        }
                        let mut output = vec![Complex::default(); n];
                        let mut err = None;
                        let secs = time_it(|| {
                            if let Err(e) = fft_with_cutoff(executor, &input, &mut output, cutoff) {
                                err = Some(e.to_string());
                            }
                        });
                        if let Some(e) = err {
                            return Err(ProbeError::Failed(format!("fft: {e}")));
                        }
                        if output != reference {
                            return Err(ProbeError::Failed(format!(
                                "fft-cutoff {label} cutoff {cutoff}: result differs from the sequential transform"
                            )));
                        }
                        m.points.push(Point::new(
                            format!("fft-cutoff/{label}"),
                            "cutoff_points",
                            cutoff as f64,
                            "seconds",
                            secs,
                        ));
                    }
                }
            }
            CaseParams::Rmatmul {
                order,
                max_levels,
                case_budget_s,
            } => {
                let pool = new_pool(FreeList::Mutex)?;
                let (a, b) = (Matrix::test_matrix(order, 1), Matrix::test_matrix(order, 2));
                let mut c = Matrix::zeros(order);
                let mut checked = false;
                for (label, exec) in [
                    ("taskpool", Executor::taskpool(&pool)),
                    ("rayon", Executor::Rayon),
                ] {
                    for k in 1..=max_levels {
                        if order % (1 << k) != 0 || order >> k < MIN_LEAF {
                            break;
                        }
                        if ctx.expired() {
                            m.warnings.push(format!(
                                "rmatmul/{label}/{order}: budget reached at k = {k}"
                            ));
                            break;
                        }
                        let mut err = None;
                        let secs = time_it(|| {
                            if let Err(e) = rmatmul(exec, &a, &b, &mut c, k) {
                                err = Some(e.to_string());
                            }
                        });
                        if let Some(e) = err {
                            return Err(ProbeError::Failed(format!("rmatmul: {e}")));
                        }
                        if !checked && order <= 512 {
                            let r = matmul_reference(&a, &b)
                                .map_err(|e| ProbeError::Failed(e.to_string()))?;
                            let d = c.max_abs_diff(&r);
                            if d > 1e-6 * order as f64 {
                                return Err(ProbeError::Failed(format!(
                                    "rmatmul N = {order}: differs from the reference by {d}"
                                )));
                            }
                            checked = true;
                        }
                        m.points.push(Point::new(
                            format!("rmatmul/{label}/{order}"),
                            "levels",
                            k as f64,
                            "seconds",
                            secs,
                        ));
                        if secs > case_budget_s {
                            m.warnings.push(format!(
                                "rmatmul/{label}/{order} gave up after k = {k} ({secs:.1} s > case budget {case_budget_s:.0} s)"
                            ));
                            break;
                        }
                    }
                }
            }
        }
        Ok(m)
    }

    fn finish(&self, result: &mut ProbeResult, ctx: &PlanCtx) {
        let cpus = ctx.cpus();
        let mut out = Vec::new();
        let y_at = |name: &str, x: f64| {
            result
                .series(name)
                .and_then(|s| s.x.iter().position(|&v| v == x).map(|i| s.y[i]))
        };
        // FFT: the largest size every executor finished.
        let common = ["fft/mutex", "fft/lockfree", "fft/rayon"]
            .iter()
            .filter_map(|n| result.series(n).and_then(|s| s.x.last().copied()))
            .fold(f64::INFINITY, f64::min);
        if common.is_finite() {
            let (mu, lf, ra) = (
                y_at("fft/mutex", common),
                y_at("fft/lockfree", common),
                y_at("fft/rayon", common),
            );
            if let (Some(mu), Some(lf), Some(ra)) = (mu, lf, ra) {
                out.push(format!(
                    "fft size {common}: mutex free list {}, lock-free {}, rayon {} ({:.1}× and {:.1}× rayon's time)",
                    crate::units::fmt_value("s", mu),
                    crate::units::fmt_value("s", lf),
                    crate::units::fmt_value("s", ra),
                    mu / ra,
                    lf / ra
                ));
            }
            if let Some(c) = y_at("fft-cas-retries/lockfree", common) {
                out.push(format!(
                    "fft size {common}: {c:.0} failed CAS on the lock-free free list per run"
                ));
            }
        }
        // FFT with a sequential cutoff: each executor at its best cutoff.
        let best = |name: &str| {
            result.series(name).and_then(|s| {
                s.y.iter()
                    .enumerate()
                    .filter(|(_, y)| y.is_finite())
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .map(|(i, &y)| (s.x[i], y))
            })
        };
        if let (Some((ct, t)), Some((cr, r))) =
            (best("fft-cutoff/taskpool"), best("fft-cutoff/rayon"))
        {
            let size = result
                .params
                .get("fft_cutoff_log2")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let same = y_at("fft-cutoff/rayon", ct)
                .map(|r2| {
                    format!(
                        "; at cutoff {ct} rayon takes {} ({:.2}×)",
                        crate::units::fmt_value("s", r2),
                        t / r2
                    )
                })
                .unwrap_or_default();
            let seq = y_at(&format!("fft-sequential/{size}"), size as f64)
                .map(|q| format!("; one thread alone {}", crate::units::fmt_value("s", q)))
                .unwrap_or_default();
            out.push(format!(
                "fft size {size} with a sequential cutoff: taskpool (mutex free list, block = CPUs) best {} at cutoff {ct}, rayon best {} at cutoff {cr}: taskpool/rayon {:.2}×{same}{seq}",
                crate::units::fmt_value("s", t),
                crate::units::fmt_value("s", r),
                t / r
            ));
        }
        // Recursive matmul: best k per executor and order.
        let names: Vec<String> = result
            .series
            .iter()
            .filter(|s| s.name.starts_with("rmatmul/taskpool/"))
            .map(|s| s.name.clone())
            .collect();
        for name in names {
            let order = name.rsplit('/').next().unwrap_or("?").to_string();
            let best = |n: &str| {
                result.series(n).and_then(|s| {
                    s.y.iter()
                        .enumerate()
                        .min_by(|a, b| a.1.total_cmp(b.1))
                        .map(|(i, &y)| (s.x[i], y))
                })
            };
            if let (Some((kt, tt)), Some((kr, tr))) =
                (best(&name), best(&format!("rmatmul/rayon/{order}")))
            {
                let same_k = y_at(&format!("rmatmul/rayon/{order}"), kt);
                out.push(format!(
                    "rmatmul N = {order}: taskpool best at k = {kt} (8^k = {} tasks on {cpus} CPUs, {}), rayon best at k = {kr} ({}); taskpool/rayon at k = {kt}: {}",
                    8u64.pow(kt as u32),
                    crate::units::fmt_value("s", tt),
                    crate::units::fmt_value("s", tr),
                    same_k.map(|r| format!("{:.2}×", tt / r)).unwrap_or_else(|| "-".into())
                ));
            }
        }
        result.findings.extend(out);
    }
}
