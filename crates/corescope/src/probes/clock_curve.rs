//! `clock-curve`: the core clock at each number of active cores and each
//! instruction-set level (the boost curve; AVX2 / AVX-512 licences).
//!
//! At each thread count of the ladder (1 to the CPU count, one thread per CPU,
//! placed `scatter` so the count is of active cores before SMT siblings), every
//! thread runs a dependent chain of known latency for a fixed time:
//! - `scalar`: the core clock's own add chain (`kernels::clock_chain`, 1 cycle per
//!   add), so its adds per second are the clock;
//! - `fma128`, `fma256`, `fma512` (x86_64, where the CPU has FMA, AVX and
//!   AVX-512F): `vfmadd231pd` on one xmm / ymm / zmm register, each reading the
//!   one before (inline asm, 100 per loop turn). Dependent FMAs per second × the
//!   FMA latency in cycles is the clock while that width runs.
//!
//! The FMA latency is an integer number of cycles that differs between cores (5 on
//! Haswell and Zen 2, 4 on Skylake and Zen 4; Agner Fog's tables, uops.info); the
//! probe does not look it up but infers it: at one thread, scalar clock ÷ dependent
//! FMAs per second, rounded, accepted only within [`LATENCY_TOLERANCE`] of an
//! integer. So the 1-thread vector clock is tied to the scalar clock up to that
//! rounding: a licence that lowers the clock of a width already at one thread by
//! more than the tolerance leaves that width without a curve, and says so.
//!
//! The ISAs of one thread count are measured in interleaved rounds (one group), each
//! thread's figure dropped when it was preempted (less than 95 % of its wall time on
//! a CPU), so the curve is of the clock, not of the scheduler. Counts above the CPU
//! count are not measured: oversubscribed threads share cores and time, and their
//! chains would time the sharing.

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::kernels::clock_chain::{self, ADDS_PER_ITER};
use crate::model::{Finding, Measurement, Point, ProbeResult, Series, Warning};
use crate::placement::Strategy;
use serde::Serialize;
use std::hint::black_box;

/// The probe.
pub struct ClockCurve;

/// Dependent FMAs per loop turn of the vector chains (`.rept 100`).
pub const FMAS_PER_ITER: u64 = 100;

/// An inferred FMA latency is accepted when scalar clock ÷ FMA rate at one thread
/// lies within this of an integer (± 5 % at a latency of 4).
pub const LATENCY_TOLERANCE: f64 = 0.2;

/// A thread's chain counts when it was on a CPU for at least this share of its wall
/// time (as the clock's own measurement, `clock::PREEMPTED_CPU_SHARE`).
pub const ON_CPU_SHARE: f64 = crate::clock::PREEMPTED_CPU_SHARE;

/// The rounds of a thread count: a 95 % interval per ISA, after a warm-up run.
pub const CLOCK_ROUNDS: Rounds = Rounds::REPEATED;

/// An instruction-set level of the chain.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Isa {
    /// The integer add chain.
    Scalar,
    /// `vfmadd231pd` on xmm.
    Fma128,
    /// `vfmadd231pd` on ymm.
    Fma256,
    /// `vfmadd231pd` on zmm.
    Fma512,
}

impl Isa {
    /// Every level, narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Fma128, Isa::Fma256, Isa::Fma512];

    /// Series variant.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Fma128 => "fma128",
            Isa::Fma256 => "fma256",
            Isa::Fma512 => "fma512",
        }
    }

    /// The CPU features the level needs (x86_64 names).
    pub fn features(self) -> &'static [&'static str] {
        match self {
            Isa::Scalar => &[],
            Isa::Fma128 => &["fma"],
            Isa::Fma256 => &["avx", "fma"],
            Isa::Fma512 => &["avx512f"],
        }
    }
}

/// Which levels run here, and for the others "clock-curve fmaN: skipped: why",
/// from a feature test (pure: `has` answers for a feature name).
pub fn levels(arch_x86: bool, has: impl Fn(&str) -> bool) -> (Vec<Isa>, Vec<String>) {
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for isa in Isa::ALL {
        if isa == Isa::Scalar {
            run.push(isa);
            continue;
        }
        if !arch_x86 {
            skipped.push(format!(
                "clock-curve {}: skipped: the vector FMA chains are written for x86_64 only",
                isa.name()
            ));
            continue;
        }
        match isa.features().iter().find(|f| !has(f)) {
            None => run.push(isa),
            Some(f) => skipped.push(format!(
                "clock-curve {}: skipped: the CPU has no {f}",
                isa.name()
            )),
        }
    }
    (run, skipped)
}

/// This machine's levels.
fn levels_here() -> (Vec<Isa>, Vec<String>) {
    #[cfg(target_arch = "x86_64")]
    {
        levels(true, |f| match f {
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "avx" => std::arch::is_x86_feature_detected!("avx"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            _ => false,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        levels(false, |_| false)
    }
}

/// The thread counts of the curve: the plan's ladder, up to the CPU count.
pub fn counts(ladder: &[usize], cpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = ladder
        .iter()
        .copied()
        .filter(|&t| t >= 1 && t <= cpus)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    isa: Isa,
    threads: usize,
    duration_ns: u64,
    team_threads: usize,
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "clock-curve";

impl Probe for ClockCurve {
    type Params = CaseParams;
    type Facts = ();

    /// As `loaded-latency`'s runs ([`super::loaded_latency::loaded_run_cost_s`]),
    /// with no blocks to touch.
    fn run_cost_s(&self, p: &CaseParams, c: &super::cost::Cost) -> Option<f64> {
        Some(super::loaded_latency::loaded_run_cost_s(
            c,
            p.duration_ns,
            0,
            p.team_threads,
        ))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "core clock per active-core count and ISA level (scalar, 128/256/512-bit FMA): the boost curve"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        if !clock_chain::SUPPORTED {
            return Err(ProbeError::Skipped(
                "the clock's add chain is written for x86_64 and aarch64 only".into(),
            ));
        }
        let (isas, skipped) = if ctx.topo.is_this_machine() {
            levels_here()
        } else {
            // A plan for another machine cannot test its features: price every level.
            (Isa::ALL.to_vec(), Vec::new())
        };
        let cpus = ctx.cpus();
        let threads = counts(&ctx.thread_counts(1), cpus);
        let duration_ns: u64 = ctx.profile.pick(5_000_000, 20_000_000, 100_000_000);
        let coarse = super::loaded_latency::coarse(ctx);
        let mut cases = Vec::new();
        let mut left_out: Vec<(Isa, usize)> = Vec::new();
        for &t in &threads {
            let (_, config) = super::placement_config(&ctx.topo, &Strategy::Scatter, t)?;
            let group = format!("clock with {}", crate::units::threads(t as f64));
            for &isa in &isas {
                if !swept(isa, &isas, coarse) && !ctx.side_count(t) {
                    left_out.push((isa, t));
                    continue;
                }
                cases.push(
                    Case::new(
                        format!("{} ×{t}", isa.name()),
                        &CaseParams {
                            isa,
                            threads: t,
                            duration_ns,
                            team_threads: t,
                        },
                    )
                    .compared(&group, isa.name(), format!("{} {config}", isa.name()))
                    .with_rounds(CLOCK_ROUNDS),
                );
            }
        }
        Ok(Plan::new(cases)
            .param("thread_counts", &threads)
            .param("placement", "scatter")
            .param("isas", isas.iter().map(|i| i.name()).collect::<Vec<_>>())
            .param("duration_ns_per_run", duration_ns)
            .param("scalar", clock_chain::METHOD)
            .param("fma", "vfmadd231pd reg, reg, reg on one xmm/ymm/zmm register, 100 per loop turn (inline asm); latency inferred at one thread as scalar clock / FMA rate, rounded")
            .param("latency_tolerance", LATENCY_TOLERANCE)
            .param("preempted", "a thread's figure is dropped when it ran less than 95 % of its wall time")
            .scaled_down(ctx.thinned_note(&if coarse {
                format!(
                    "; above {} CPUs every vector width at one thread and the CPU count only",
                    super::POWERS_OF_FOUR_ABOVE_CPUS
                )
            } else {
                "; the narrower vector widths at one thread and the CPU count only".to_string()
            }))
            .skipping(skipped)
            .skipping(not_measured(&left_out)))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let (cpus, _) = super::placement_config(&ctx.plan.topo, &Strategy::Scatter, c.threads)?;
        let clock = ctx.plan.clock.clone();
        let wanted_ticks = (c.duration_ns as f64 / clock.ticks_to_ns(1).max(1e-9)) as u64;
        let out = ctx.team(&cpus, 1, |_| (), |_, _| chain_for(c.isa, wanted_ticks))?;
        let runs: Vec<(f64, bool)> = out
            .results
            .iter()
            .filter_map(|r| r.first())
            .map(|r| {
                let ns = clock.ticks_to_ns(r.ticks).max(1.0);
                let per_s = r.ops as f64 / (ns * 1e-9);
                (per_s, (r.cpu_ns as f64) >= ON_CPU_SHARE * ns)
            })
            .collect();
        let on_cpu: Vec<f64> = runs.iter().filter(|r| r.1).map(|r| r.0).collect();
        let used = if on_cpu.is_empty() {
            runs.iter().map(|r| r.0).collect()
        } else {
            on_cpu
        };
        if used.is_empty() {
            return Err(NotRun::Chain.into());
        }
        let mut m = Measurement::points(vec![Point::new(
            format!("chain/{}", c.isa.name()),
            "threads",
            c.threads as f64,
            "per_s",
            crate::stats::median(&used),
        )]);
        if used.len() < runs.len() {
            m.warnings.push(Warning::Preempted {
                probe: ID.into(),
                kernel: c.isa.name().into(),
                threads: c.threads,
                results: runs.len(),
                preempted: runs.len() - used.len(),
            });
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        let (series, findings) = boost_curves(&result.series);
        Analysis {
            series,
            ..Analysis::findings(findings)
        }
    }
}

/// Whether `isa` sweeps every thread count of a thinned plan: the scalar chain
/// (the clock itself) and, except on a coarse plan, the widest vector width
/// measured (as `peak`'s widest unit); the others run at one thread and the CPU
/// count only ([`PlanCtx::side_count`]).
pub fn swept(isa: Isa, isas: &[Isa], coarse: bool) -> bool {
    isa == Isa::Scalar || (!coarse && isas.last() == Some(&isa))
}

/// The (width, thread count) cells a thinned plan leaves out, one
/// "name: not measured" line per width.
fn not_measured(left_out: &[(Isa, usize)]) -> Vec<String> {
    let mut out = Vec::new();
    for isa in Isa::ALL {
        let counts: Vec<String> = left_out
            .iter()
            .filter(|(i, _)| *i == isa)
            .map(|(_, t)| t.to_string())
            .collect();
        if !counts.is_empty() {
            out.push(format!(
                "clock-curve {} at {} threads: not measured on a thinned plan (one thread and the CPU count stand for the curve)",
                isa.name(),
                counts.join(", ")
            ));
        }
    }
    out
}

/// What one thread's chain gave: dependent operations, ticks, and its CPU time.
#[derive(Debug, Clone, Copy)]
struct ChainRun {
    ops: u64,
    ticks: u64,
    cpu_ns: u64,
}

/// Loop turns per look at the counter (about 100k cycles: 30 µs at 3 GHz).
const TURNS_PER_CHECK: u64 = 1000;

/// Run `isa`'s chain until `wanted_ticks` have passed.
fn chain_for(isa: Isa, wanted_ticks: u64) -> ChainRun {
    use crate::clock::{clock_ns, ticks_ordered};
    let cpu0 = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let t0 = ticks_ordered();
    let mut turns = 0u64;
    let mut acc = 0u64;
    loop {
        match isa {
            Isa::Scalar => acc = clock_chain::add_chain(TURNS_PER_CHECK, acc, 1),
            _ => fma_chain(isa, TURNS_PER_CHECK),
        }
        turns += TURNS_PER_CHECK;
        if ticks_ordered().wrapping_sub(t0) >= wanted_ticks {
            break;
        }
    }
    let ticks = ticks_ordered().wrapping_sub(t0);
    black_box(acc);
    let per_turn = match isa {
        Isa::Scalar => ADDS_PER_ITER,
        _ => FMAS_PER_ITER,
    };
    ChainRun {
        ops: turns * per_turn,
        ticks,
        cpu_ns: clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(cpu0),
    }
}

/// `turns` × [`FMAS_PER_ITER`] dependent FMAs of `isa`'s width; nothing where the
/// plan did not put the level (it tests the features first).
fn fma_chain(isa: Isa, turns: u64) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY: the plan runs a level only where `is_x86_feature_detected!` found
        // its features (`levels_here`).
        Isa::Fma128 => unsafe { x86::fma128(turns) },
        // SAFETY: as above (avx, fma).
        Isa::Fma256 => unsafe { x86::fma256(turns) },
        // SAFETY: as above (avx512f).
        Isa::Fma512 => unsafe { x86::fma512(turns) },
        Isa::Scalar => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (isa, turns);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The chains: one register, `vfmadd231pd r0, r1, r2` (r0 += r1 × r2) 100 times
    //! per turn; every register starts at zero, so every value stays 0.0 (no
    //! denormals, no overflow). `clobber_abi("C")` covers the vector registers and
    //! the upper halves `vzeroupper` clears after the wide chains.

    /// 128-bit chain. Safety: the CPU has FMA.
    #[target_feature(enable = "fma")]
    #[inline(never)]
    pub unsafe fn fma128(turns: u64) {
        if turns == 0 {
            return;
        }
        // SAFETY: register arithmetic only; the counter starts ≥ 1 and counts down.
        unsafe {
            core::arch::asm!(
                "vxorpd xmm0, xmm0, xmm0",
                "vxorpd xmm1, xmm1, xmm1",
                "vxorpd xmm2, xmm2, xmm2",
                "2:",
                ".rept 100",
                "vfmadd231pd xmm0, xmm1, xmm2",
                ".endr",
                "dec rcx",
                "jnz 2b",
                inout("rcx") turns => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }

    /// 256-bit chain. Safety: the CPU has AVX and FMA.
    #[target_feature(enable = "avx,fma")]
    #[inline(never)]
    pub unsafe fn fma256(turns: u64) {
        if turns == 0 {
            return;
        }
        // SAFETY: as `fma128`.
        unsafe {
            core::arch::asm!(
                "vxorpd ymm0, ymm0, ymm0",
                "vxorpd ymm1, ymm1, ymm1",
                "vxorpd ymm2, ymm2, ymm2",
                "2:",
                ".rept 100",
                "vfmadd231pd ymm0, ymm1, ymm2",
                ".endr",
                "dec rcx",
                "jnz 2b",
                "vzeroupper",
                inout("rcx") turns => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }

    /// 512-bit chain. Safety: the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline(never)]
    pub unsafe fn fma512(turns: u64) {
        if turns == 0 {
            return;
        }
        // SAFETY: as `fma128`.
        unsafe {
            core::arch::asm!(
                "vpxorq zmm0, zmm0, zmm0",
                "vpxorq zmm1, zmm1, zmm1",
                "vpxorq zmm2, zmm2, zmm2",
                "2:",
                ".rept 100",
                "vfmadd231pd zmm0, zmm1, zmm2",
                ".endr",
                "dec rcx",
                "jnz 2b",
                "vzeroupper",
                inout("rcx") turns => _,
                clobber_abi("C"),
                options(nomem, nostack),
            );
        }
    }
}

/// The FMA latency in cycles implied by the scalar clock and the dependent FMA rate
/// at one thread: the nearest integer, if within [`LATENCY_TOLERANCE`] of the ratio
/// and at least 1; else why not.
pub fn infer_latency(scalar_hz: f64, fma_per_s: f64) -> Result<u32, NoLatency> {
    if !(scalar_hz > 0.0 && fma_per_s > 0.0) {
        return Err(NoLatency::NoFigure);
    }
    let ratio = scalar_hz / fma_per_s;
    let l = ratio.round();
    if l < 1.0 || (ratio - l).abs() > LATENCY_TOLERANCE {
        return Err(NoLatency::NotWhole(ratio));
    }
    Ok(l as u32)
}

/// Why no FMA latency is inferred.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoLatency {
    /// A one-thread figure is missing.
    #[error("no one-thread figure to infer the FMA latency from")]
    NoFigure,
    /// Only one chain has a one-thread figure.
    #[error("no one-thread figure of both chains")]
    NoChains,
    /// The ratio is not near a whole number of cycles.
    #[error("scalar clock / FMA rate at one thread is {0:.2} cycles, not within {LATENCY_TOLERANCE} of a whole latency: the clock of this width already differs at one thread")]
    NotWhole(f64),
}

/// The boost curves (`clock/<isa>`, Hz by thread count, with the chain series'
/// intervals) from the measured chains (`chain/<isa>`), and their findings: the
/// inferred FMA latency of each width, the clock at one thread and at the most
/// threads, or why a width has no curve. Pure.
pub fn boost_curves(series: &[Series]) -> (Vec<Series>, Vec<Finding>) {
    let (mut curves, mut findings) = (Vec::new(), Vec::new());
    let scalar = series.iter().find(|s| s.name == "chain/scalar");
    let scalar_1 = scalar.and_then(|s| s.estimate_at(1.0));
    for isa in Isa::ALL {
        let Some(chain) = series
            .iter()
            .find(|s| s.name == format!("chain/{}", isa.name()))
        else {
            continue;
        };
        let latency = match isa {
            Isa::Scalar => Ok(clock_chain::ADD_LATENCY_CYCLES as u32),
            _ => match (scalar_1, chain.estimate_at(1.0)) {
                (Some(s), Some(f)) => infer_latency(s.value, f.value),
                _ => Err(NoLatency::NoChains),
            },
        };
        let l = match latency {
            Ok(l) => l,
            Err(why) => {
                findings.push(Finding::from(format!(
                    "clock-curve {}: no clock curve: {why}",
                    isa.name()
                )));
                continue;
            }
        };
        let mut curve = Series::new(&format!("clock/{}", isa.name()), "threads", "hz");
        for i in 0..chain.x.len() {
            let Some(e) = chain.estimate(i) else { continue };
            let e = e.scaled(l as f64);
            curve.x.push(chain.x[i]);
            curve.y.push(e.value);
            curve.y_lo.push(e.lo);
            curve.y_hi.push(e.hi);
            // Every repetition behind the point, scaled as its estimate is: a value
            // carries its count and the samples it comes from.
            let samples: Vec<f64> = chain
                .samples
                .get(i)
                .map(|v| v.iter().map(|x| x * l as f64).collect())
                .unwrap_or_default();
            curve.n.push(if samples.is_empty() { 0 } else { e.n });
            curve.samples.push(samples);
        }
        let ends = [
            curve.estimate(0),
            curve.estimate(curve.x.len().saturating_sub(1)),
        ];
        if let [Some(first), Some(last)] = ends {
            let top = curve.x.last().copied().unwrap_or(1.0);
            findings.push(Finding::Value {
                what: format!("core clock, {}, 1 thread", isa.name()),
                unit: "hz".into(),
                value: first,
                context: Some(format!("dependent chain of {l} cycle(s) per operation")),
            });
            if curve.x.len() > 1 {
                findings.push(Finding::Value {
                    what: format!("core clock, {}, {}", isa.name(), crate::units::threads(top)),
                    unit: "hz".into(),
                    value: last,
                    context: Some(format!(
                        "{:.3}× the one-thread clock",
                        last.value / first.value.max(1.0)
                    )),
                });
            }
        }
        curves.push(curve);
    }
    (curves, findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain_series(name: &str, points: &[(f64, f64)]) -> Series {
        let mut s = Series::new(name, "threads", "per_s");
        for &(x, y) in points {
            s.x.push(x);
            s.y.push(y);
            s.y_lo.push(y * 0.99);
            s.y_hi.push(y * 1.01);
            s.n.push(6);
            s.samples.push(vec![y * 0.99, y, y, y, y, y * 1.01]);
        }
        s
    }

    #[test]
    fn levels_follow_the_features_and_say_what_is_missing() {
        let (run, skipped) = levels(true, |f| f == "fma" || f == "avx");
        assert_eq!(run, vec![Isa::Scalar, Isa::Fma128, Isa::Fma256]);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].contains("fma512: skipped: the CPU has no avx512f"));
        let (run, skipped) = levels(false, |_| true);
        assert_eq!(run, vec![Isa::Scalar]);
        assert_eq!(skipped.len(), 3);
        assert!(skipped.iter().all(|s| s.contains("skipped: ")));
    }

    #[test]
    fn the_curve_stops_at_the_cpu_count() {
        assert_eq!(counts(&[1, 2, 3, 4, 6, 8], 2), vec![1, 2]);
        assert_eq!(counts(&[1], 1), vec![1]);
        assert_eq!(counts(&[4, 1, 2, 2], 4), vec![1, 2, 4]);
    }

    #[test]
    fn the_latency_is_the_nearest_whole_number_of_cycles_or_none() {
        assert_eq!(infer_latency(3.6e9, 0.9e9), Ok(4));
        assert_eq!(infer_latency(3.6e9, 0.72e9), Ok(5));
        assert_eq!(infer_latency(3.6e9, 0.9e9 * 1.03), Ok(4));
        // 4.5 cycles: a licence that lowers the clock by 11 % already at one thread.
        assert!(infer_latency(3.6e9, 0.8e9)
            .unwrap_err()
            .to_string()
            .contains("4.50"));
        assert!(infer_latency(0.0, 1e9).is_err());
        assert!(infer_latency(3e9, f64::NAN).is_err());
    }

    #[test]
    fn boost_curves_scale_the_chains_by_their_latency() {
        let s = vec![
            chain_series("chain/scalar", &[(1.0, 3.6e9), (2.0, 3.4e9)]),
            chain_series("chain/fma256", &[(1.0, 0.9e9), (2.0, 0.8e9)]),
            chain_series("chain/fma512", &[(1.0, 0.8e9), (2.0, 0.7e9)]),
        ];
        let (curves, findings) = boost_curves(&s);
        let names: Vec<&str> = curves.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["clock/scalar", "clock/fma256"]);
        let fma = &curves[1];
        assert_eq!(fma.y, vec![3.6e9, 3.2e9]);
        assert_eq!(fma.y_lo[1], 0.8e9 * 0.99 * 4.0);
        assert_eq!(fma.y_name, "hz");
        // The samples come along, scaled, so every value carries what it is from.
        assert_eq!(fma.n, vec![6, 6]);
        assert_eq!(fma.samples[0].len(), 6);
        assert_eq!(fma.samples[0][1], 0.9e9 * 4.0);
        assert!(findings.iter().any(|f| matches!(f, Finding::Note { text }
            if text.starts_with("clock-curve fma512: no clock curve"))));
        let values = findings
            .iter()
            .filter(|f| matches!(f, Finding::Value { unit, .. } if unit == "hz"))
            .count();
        assert_eq!(values, 4, "1 thread and 2 threads of two curves");
        // Nothing measured: nothing said.
        let (c, f) = boost_curves(&[]);
        assert!(c.is_empty() && f.is_empty());
    }
}
