//! `peak`: floating-point peak per instruction-set level found at run time, single
//! and double precision, vs threads × placement, and per cycle at the measured
//! core clock (seed 000 §4: vector units need "a separate benchmark").
//!
//! Kernel: [`CHAINS`] independent accumulators, each updated `acc = acc · a + b`
//! per step — one FMA where the level has FMA, a multiply then an add where it has
//! not — so every step is 2 FLOP per lane. With a = 0.5 and b = 1 every chain
//! converges to 2.0: finite, normal, never denormal. Twelve chains hide the
//! latency: a core needs latency × pipes independent chains in flight (FMA: 4
//! cycles × 2 pipes = 8 on Zen 4/5 and Skylake–Golden Cove; multiply + add
//! without FMA: 3 + 2 = 5 cycles × 2 pipe pairs = 10 on Zen 4/5, 8 on Skylake).
//!
//! Generated code, checked once with `objdump -d` on the x86_64 release build
//! (rustc 1.95, LTO): the loop body holds the 12 chains' steps, 14 registers (12
//! accumulators, a, b), no load or store; the FMA loops are unrolled twice (24
//! FMAs per branch), the others hold 12 multiplies and 12 adds per branch. A step is
//! - `scalar`: `mulsd`/`addsd` (`mulss`/`addss`), 12 of each, no packed forms (the
//!   empty `asm!` register barrier per turn keeps LLVM from packing the 12 chains);
//! - `sse2`: `mulpd`/`addpd` (`mulps`/`addps`) on xmm;
//! - `avx2`: `vmulpd`/`vaddpd` (`vmulps`/`vaddps`) on ymm, no FMA;
//! - `avx2-fma`: `vfmadd213pd`/`ps` on ymm;
//! - `avx512-fma`: `vfmadd213pd`/`ps` on zmm;
//!
//! so the loop overhead is one counter update and branch per 24 FP instructions.
//! On aarch64 (not compiled on the x86_64 development machine): `scalar` is
//! `fmul`/`fadd` on d/s registers and `neon-fma` `fmla` on 128-bit vectors; SVE is
//! not measured (no stable Rust intrinsics).

use super::SweepConfigs;
use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::analysis;
use crate::model::{Measurement, Point, ProbeResult, Sensitivity};
use crate::placement::arg as placement_arg;
use crate::placement::Strategy;
use serde::{Deserialize, Serialize};
use std::hint::black_box;

pub mod limit;

/// Independent accumulator chains per kernel.
pub const CHAINS: usize = 12;
/// FLOP per lane per step (a multiply and an add, fused or not).
pub const FLOP_PER_STEP: u64 = 2;
/// Repetitions per case; the best is kept.
pub const REPS: usize = 3;
/// Multiplier and addend of every step: the fixed point is b / (1 − a) = 2.
const A: f64 = 0.5;
const B: f64 = 1.0;

/// Default placements.
pub const PLACEMENTS: [Strategy; 3] = [Strategy::Linear, Strategy::Compact, Strategy::Scatter];

/// The probe.
pub struct Peak;

/// An instruction-set level.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Scalar multiply + add (x86_64: SSE2 scalar; aarch64: FP scalar).
    Scalar,
    /// 128-bit SSE2 multiply + add.
    Sse2,
    /// 256-bit AVX multiply + add (run where AVX2 is present).
    Avx2,
    /// 256-bit FMA.
    Avx2Fma,
    /// 512-bit FMA.
    Avx512Fma,
    /// 128-bit NEON FMA (`fmla`).
    NeonFma,
}

/// Every level this build knows, in order.
pub const LEVELS: [Level; 6] = [
    Level::Scalar,
    Level::Sse2,
    Level::Avx2,
    Level::Avx2Fma,
    Level::Avx512Fma,
    Level::NeonFma,
];

impl Level {
    /// Series prefix.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx2Fma => "avx2-fma",
            Level::Avx512Fma => "avx512-fma",
            Level::NeonFma => "neon-fma",
        }
    }

    /// Register width in bytes (0 for scalar).
    pub fn vector_bytes(self) -> usize {
        match self {
            Level::Scalar => 0,
            Level::Sse2 | Level::NeonFma => 16,
            Level::Avx2 | Level::Avx2Fma => 32,
            Level::Avx512Fma => 64,
        }
    }

    /// Whether a step is one fused instruction (else a multiply and an add).
    pub fn fused(self) -> bool {
        matches!(self, Level::Avx2Fma | Level::Avx512Fma | Level::NeonFma)
    }

    /// Lanes per register for `p`.
    pub fn lanes(self, p: Precision) -> usize {
        (self.vector_bytes() / p.bytes()).max(1)
    }

    /// FP instructions per step of one chain.
    pub fn instructions_per_step(self) -> u64 {
        if self.fused() {
            1
        } else {
            2
        }
    }

    /// FLOP of one kernel call of `iters` turns (every chain steps once per turn).
    pub fn flop_per_call(self, p: Precision, iters: u64) -> u64 {
        iters * CHAINS as u64 * self.lanes(p) as u64 * FLOP_PER_STEP
    }

    /// Whether the level belongs to this build's architecture (the others are
    /// not even reported as absent).
    pub fn of_this_arch(self) -> bool {
        match self {
            Level::Scalar => true,
            Level::Sse2 | Level::Avx2 | Level::Avx2Fma | Level::Avx512Fma => {
                cfg!(target_arch = "x86_64")
            }
            Level::NeonFma => cfg!(target_arch = "aarch64"),
        }
    }

    /// Whether this CPU (and OS) runs the level: `Ok` or why not.
    pub fn available(self) -> Result<(), LevelMissing> {
        let missing = |feature: &'static str| {
            Err(LevelMissing::Feature {
                level: self.name(),
                feature,
            })
        };
        match self {
            Level::Scalar => Ok(()),
            #[cfg(target_arch = "x86_64")]
            Level::Sse2 => Ok(()),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 if !is_x86_feature_detected!("avx2") => missing("avx2"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => Ok(()),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2Fma if !is_x86_feature_detected!("avx2") => missing("avx2"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2Fma if !is_x86_feature_detected!("fma") => missing("fma"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx2Fma => Ok(()),
            #[cfg(target_arch = "x86_64")]
            Level::Avx512Fma if !is_x86_feature_detected!("avx512f") => missing("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Level::Avx512Fma => Ok(()),
            #[cfg(target_arch = "aarch64")]
            Level::NeonFma => Ok(()),
            _ => Err(LevelMissing::OtherArch {
                level: self.name(),
                arch: std::env::consts::ARCH,
            }),
        }
    }
}

/// Floating-point precision.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl Precision {
    /// Bytes per value.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// Suffix of series names.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

/// Series prefix of a level and precision (`avx512-fma-f64`).
pub fn kernel_name(level: Level, p: Precision) -> String {
    format!("{}-{}", level.name(), p.name())
}

// ---- kernels -------------------------------------------------------------------

/// Keep the 12 scalar accumulators in 12 separate registers across each turn, so
/// LLVM cannot pack the chains into vectors: an empty `asm!` that "reads and
/// writes" each of them. It emits no instruction (only an assembler comment).
macro_rules! scalar_barrier {
    ($acc:ident, $class:ident) => {
        // SAFETY: the template is empty; the operands only pin values to registers.
        unsafe {
            core::arch::asm!(
                "/* {0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11} */",
                inout($class) $acc[0], inout($class) $acc[1], inout($class) $acc[2],
                inout($class) $acc[3], inout($class) $acc[4], inout($class) $acc[5],
                inout($class) $acc[6], inout($class) $acc[7], inout($class) $acc[8],
                inout($class) $acc[9], inout($class) $acc[10], inout($class) $acc[11],
                options(pure, nomem, nostack, preserves_flags),
            );
        }
    };
}

macro_rules! scalar_kernel {
    ($name:ident, $t:ty) => {
        /// Scalar multiply + add on [`CHAINS`] chains, `iters` turns; the sum of the
        /// accumulators.
        #[inline(never)]
        pub fn $name(iters: u64, a: $t, b: $t, seed: $t) -> $t {
            let mut acc: [$t; CHAINS] = [0.0; CHAINS];
            for (k, x) in acc.iter_mut().enumerate() {
                *x = seed + k as $t;
            }
            for _ in 0..iters {
                for x in acc.iter_mut() {
                    *x = *x * a + b;
                }
                #[cfg(target_arch = "x86_64")]
                scalar_barrier!(acc, xmm_reg);
                #[cfg(target_arch = "aarch64")]
                scalar_barrier!(acc, vreg);
                #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
                {
                    acc = black_box(acc);
                }
            }
            acc.iter().sum()
        }
    };
}

scalar_kernel!(scalar_f64, f64);
scalar_kernel!(scalar_f32, f32);

/// An x86 vector kernel: `$step(acc, a, b)` on [`CHAINS`] registers of type `$v`.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_kernel {
    ($name:ident, $feat:literal, $t:ty, $v:ty, $set1:ident, $step:expr) => {
        /// [`CHAINS`] vector chains, `iters` turns; the sum of every lane.
        #[target_feature(enable = $feat)]
        #[inline(never)]
        pub fn $name(iters: u64, a: $t, b: $t, seed: $t) -> $t {
            use core::arch::x86_64::*;
            const LANES: usize = core::mem::size_of::<$v>() / core::mem::size_of::<$t>();
            let (va, vb) = ($set1(a), $set1(b));
            let mut acc = [$set1(0.0); CHAINS];
            for (k, x) in acc.iter_mut().enumerate() {
                *x = $set1(seed + k as $t);
            }
            for _ in 0..iters {
                for x in acc.iter_mut() {
                    *x = $step(*x, va, vb);
                }
            }
            let mut sum: $t = 0.0;
            for v in acc {
                // SAFETY: a vector of LANES values of $t has the size of [$t; LANES]
                // and every bit pattern is a valid float.
                let lanes: [$t; LANES] = unsafe { core::mem::transmute::<$v, [$t; LANES]>(v) };
                sum += lanes.iter().sum::<$t>();
            }
            sum
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;

    x86_kernel!(sse2_f64, "sse2", f64, __m128d, _mm_set1_pd, |x, a, b| {
        _mm_add_pd(_mm_mul_pd(x, a), b)
    });
    x86_kernel!(sse2_f32, "sse2", f32, __m128, _mm_set1_ps, |x, a, b| {
        _mm_add_ps(_mm_mul_ps(x, a), b)
    });
    x86_kernel!(avx2_f64, "avx2", f64, __m256d, _mm256_set1_pd, |x, a, b| {
        _mm256_add_pd(_mm256_mul_pd(x, a), b)
    });
    x86_kernel!(avx2_f32, "avx2", f32, __m256, _mm256_set1_ps, |x, a, b| {
        _mm256_add_ps(_mm256_mul_ps(x, a), b)
    });
    x86_kernel!(
        avx2_fma_f64,
        "avx2,fma",
        f64,
        __m256d,
        _mm256_set1_pd,
        _mm256_fmadd_pd
    );
    x86_kernel!(
        avx2_fma_f32,
        "avx2,fma",
        f32,
        __m256,
        _mm256_set1_ps,
        _mm256_fmadd_ps
    );
    x86_kernel!(
        avx512_fma_f64,
        "avx512f",
        f64,
        __m512d,
        _mm512_set1_pd,
        _mm512_fmadd_pd
    );
    x86_kernel!(
        avx512_fma_f32,
        "avx512f",
        f32,
        __m512,
        _mm512_set1_ps,
        _mm512_fmadd_ps
    );
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use super::CHAINS;
    use core::arch::aarch64::*;

    /// [`CHAINS`] NEON chains of `fmla`, `iters` turns; the sum of every lane.
    #[inline(never)]
    pub fn neon_fma_f64(iters: u64, a: f64, b: f64, seed: f64) -> f64 {
        let (va, vb) = (vdupq_n_f64(a), vdupq_n_f64(b));
        let mut acc = [vdupq_n_f64(0.0); CHAINS];
        for (k, x) in acc.iter_mut().enumerate() {
            *x = vdupq_n_f64(seed + k as f64);
        }
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = vfmaq_f64(vb, *x, va); // b + x · a
            }
        }
        acc.iter().map(|&v| vaddvq_f64(v)).sum()
    }

    /// As [`neon_fma_f64`], single precision.
    #[inline(never)]
    pub fn neon_fma_f32(iters: u64, a: f32, b: f32, seed: f32) -> f32 {
        let (va, vb) = (vdupq_n_f32(a), vdupq_n_f32(b));
        let mut acc = [vdupq_n_f32(0.0); CHAINS];
        for (k, x) in acc.iter_mut().enumerate() {
            *x = vdupq_n_f32(seed + k as f32);
        }
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = vfmaq_f32(vb, *x, va);
            }
        }
        acc.iter().map(|&v| vaddvq_f32(v)).sum()
    }
}

/// Why a level's kernel cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelMissing {
    /// The CPU (or OS) lacks a feature the level needs.
    #[error("{level}: {feature} not detected")]
    Feature {
        /// The level's name.
        level: &'static str,
        /// The feature.
        feature: &'static str,
    },
    /// The level belongs to another architecture.
    #[error("{level}: not an instruction set of {arch}")]
    OtherArch {
        /// The level's name.
        level: &'static str,
        /// This architecture.
        arch: &'static str,
    },
    /// This build has no kernel for the level.
    #[error("{0}: no kernel in this build")]
    NoKernel(&'static str),
}

/// Run one kernel call: `iters` turns of [`CHAINS`] steps; the consumed result.
pub fn run_kernel(level: Level, p: Precision, iters: u64, seed: f64) -> Result<f64, LevelMissing> {
    level.available()?;
    let (a, b) = (black_box(A), black_box(B));
    let (a32, b32, s32) = (a as f32, b as f32, seed as f32);
    let r = match (level, p) {
        (Level::Scalar, Precision::F64) => Some(scalar_f64(iters, a, b, seed)),
        (Level::Scalar, Precision::F32) => Some(scalar_f32(iters, a32, b32, s32) as f64),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level.available()` above checked at run time that the CPU and
        // the OS support the kernel's target features.
        _ => unsafe { x86_call(level, p, iters, a, b, seed) },
        #[cfg(target_arch = "aarch64")]
        (Level::NeonFma, Precision::F64) => Some(arm::neon_fma_f64(iters, a, b, seed)),
        #[cfg(target_arch = "aarch64")]
        (Level::NeonFma, Precision::F32) => Some(arm::neon_fma_f32(iters, a32, b32, s32) as f64),
        #[cfg(not(target_arch = "x86_64"))]
        _ => None,
    };
    r.ok_or(LevelMissing::NoKernel(level.name()))
}

/// The x86 vector kernels.
///
/// # Safety
/// The CPU must support `level` ([`Level::available`]).
#[cfg(target_arch = "x86_64")]
unsafe fn x86_call(
    level: Level,
    p: Precision,
    iters: u64,
    a: f64,
    b: f64,
    seed: f64,
) -> Option<f64> {
    let (a32, b32, s32) = (a as f32, b as f32, seed as f32);
    // SAFETY: the caller guarantees the target features of `level`.
    let r = unsafe {
        match (level, p) {
            (Level::Sse2, Precision::F64) => x86::sse2_f64(iters, a, b, seed),
            (Level::Sse2, Precision::F32) => x86::sse2_f32(iters, a32, b32, s32) as f64,
            (Level::Avx2, Precision::F64) => x86::avx2_f64(iters, a, b, seed),
            (Level::Avx2, Precision::F32) => x86::avx2_f32(iters, a32, b32, s32) as f64,
            (Level::Avx2Fma, Precision::F64) => x86::avx2_fma_f64(iters, a, b, seed),
            (Level::Avx2Fma, Precision::F32) => x86::avx2_fma_f32(iters, a32, b32, s32) as f64,
            (Level::Avx512Fma, Precision::F64) => x86::avx512_fma_f64(iters, a, b, seed),
            (Level::Avx512Fma, Precision::F32) => x86::avx512_fma_f32(iters, a32, b32, s32) as f64,
            _ => return None,
        }
    };
    Some(r)
}

// ---- the probe -----------------------------------------------------------------

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    level: Level,
    precision: Precision,
    placement: String,
    threads: usize,
    /// Kernel turns per thread per repetition.
    iters: u64,
    /// The plan's FP instructions per thread per repetition (its parameter
    /// `fp_instructions_per_thread_per_rep`), which `corescope plan` prices.
    #[serde(skip)]
    fp_instructions_per_thread_per_rep: u64,
}

/// The model's price of one FP instruction per thread (`corescope plan`): the
/// chains are independent and wide, a fraction of a dependent integer op each.
/// Fitted on the reference runs (`final1.json`).
const PEAK_COST_PER_INSTRUCTION: f64 = 0.116;

/// Id of the probe and of its run-file entry.
pub const ID: &str = "peak";

impl Probe for Peak {
    type Params = CaseParams;
    type Facts = ();

    /// The FP instructions per thread (a fraction of a dependent integer op each:
    /// [`PEAK_COST_PER_INSTRUCTION`]) in waves over the CPUs, the team's creation,
    /// then the round's clock.
    /// Summary: the highest f64 and f32 rates, then every ISA level.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::PeakPerLevel {
            suffixes: &["f64", "f32"],
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(
            p.fp_instructions_per_thread_per_rep as f64
                * PEAK_COST_PER_INSTRUCTION
                * c.op_s()
                * c.waves(p.threads)
                + c.team_spawn_s(p.threads)
                + c.round_clock_s(p.threads),
        )
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "floating-point peak per instruction set (scalar … AVX-512 FMA, NEON), f32/f64, vs threads and placement"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CoreThroughput]
    }
    /// The overview of every level against the FMA limit.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::PeakOverview]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        // FP instructions per thread per repetition: about 2.5 ms (quick), 25 ms
        // (default), 0.5 s (full) at 2 instructions per cycle and 4 GHz; the runner
        // repeats each case in rounds, the placements of one kernel and thread count
        // interleaved.
        let instructions: u64 = ctx.profile.pick(20_000_000, 200_000_000, 4_000_000_000);
        let counts = ctx.thread_counts(1);
        // A big machine (default profile): compact and scatter only, the two ends.
        let placements =
            ctx.placements_or_thinned(&PLACEMENTS, &[Strategy::Compact, Strategy::Scatter]);
        let mut found = Vec::new();
        let mut absent = Vec::new();
        for level in LEVELS.into_iter().filter(|l| l.of_this_arch()) {
            match level.available() {
                Ok(()) => found.push(level),
                Err(why) => absent.push(why.to_string()),
            }
        }
        // The widest unit found sweeps every count; on a big machine the narrower
        // ones only one thread and the CPU count (`PlanCtx::side_count`).
        let widest = found.last().copied();
        let mut configs = SweepConfigs::new(&ctx.topo, &placements);
        let mut cases = Vec::new();
        for &level in &found {
            let iters = (instructions / (CHAINS as u64 * level.instructions_per_step())).max(1);
            let sweeps = |t: usize| Some(level) == widest || ctx.side_count(t);
            for precision in [Precision::F64, Precision::F32] {
                for &threads in counts.iter().filter(|&&t| sweeps(t)) {
                    let name = kernel_name(level, precision);
                    let group = format!("{name} with {}", crate::units::threads(threads as f64));
                    for (k, p) in placements.iter().enumerate() {
                        let config = configs.config(k, threads)?;
                        let params = CaseParams {
                            level,
                            precision,
                            placement: placement_arg(p),
                            threads,
                            iters,
                            fp_instructions_per_thread_per_rep: instructions,
                        };
                        cases.push(
                            Case::new(format!("{name} {} ×{threads}", p.name()), &params).compared(
                                &group,
                                p.name(),
                                config,
                            ),
                        );
                    }
                }
            }
        }
        Ok(Plan::new(cases)
            .scaled_down(ctx.thinned_note(
                ", compact and scatter only, the narrower units at one thread and the CPU count",
            ))
            .param(
                "isa_levels",
                found.iter().map(|l| l.name()).collect::<Vec<_>>(),
            )
            .param("isa_levels_absent", &absent)
            .skipping(absent.iter().map(|why| format!("not measured: {why}")))
            .param("accumulator_chains", CHAINS)
            .param("flop_per_step_per_lane", FLOP_PER_STEP)
            .param("fp_instructions_per_thread_per_rep", instructions)
            .param("repetitions", "runner rounds (see rounds_min / rounds_max)")
            .param("per_cycle_clock", crate::clock::PER_CYCLE_ROUND_RULE)
            .param("thread_counts", &counts)
            .param("swept_by_every_count", widest.map(|l| l.name()))
            .param(
                "others_at",
                if ctx.thinned() {
                    "one thread and the CPU count (default profile on a big machine)"
                } else {
                    "every count"
                },
            )
            .param(
                "placements",
                placements.iter().map(placement_arg).collect::<Vec<_>>(),
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let (strategy, cpus) = super::placed(&ctx.plan.topo, &c.placement, c.threads)?;
        let (level, precision, iters) = (c.level, c.precision, c.iters);
        let out = ctx.team(
            &cpus,
            1,
            |t| 1.0 + t as f64 / 64.0,
            |_, seed| run_kernel(level, precision, iters, *seed).map(black_box),
        )?;
        if let Some(Err(e)) = out.results.iter().flatten().find(|r| r.is_err()) {
            return Err(e.clone().into());
        }
        let flop = c.threads as f64 * level.flop_per_call(precision, iters) as f64;
        let flops: Vec<f64> = out
            .team_times_ns()
            .iter()
            .map(|ns| flop / (ns.max(1.0) * 1e-9))
            .collect();
        if flops.is_empty() {
            return Err(NotRun::Repetition.into());
        }
        let threads = c.threads as f64;
        let per_thread: Vec<f64> = flops.iter().map(|f| f / threads).collect();
        let hz = super::round_clock_hz(ctx, &cpus, c.threads);
        let per_cycle = per_thread.iter().map(|f| f / hz).collect();
        let name = kernel_name(level, precision);
        let place = strategy.name();
        Ok(Measurement::points(vec![
            Point::samples(
                format!("{name}/{place}"),
                "threads",
                threads,
                "flops_per_s",
                flops,
            ),
            Point::samples(
                format!("{name}-per-thread/{place}"),
                "threads",
                threads,
                "flops_per_s_per_thread",
                per_thread,
            ),
            Point::samples(
                format!("{name}-per-cycle/{place}"),
                "threads",
                threads,
                "flops_per_cycle_per_thread",
                per_cycle,
            ),
        ]))
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let kernels: Vec<(Level, Precision)> = LEVELS
            .iter()
            .flat_map(|&l| [Precision::F64, Precision::F32].map(|p| (l, p)))
            .filter(|&(l, p)| {
                let prefix = format!("{}/", kernel_name(l, p));
                result.series.iter().any(|s| s.name.starts_with(&prefix))
            })
            .collect();
        let names: Vec<String> = kernels.iter().map(|&(l, p)| kernel_name(l, p)).collect();
        // The FMA units' limit, recorded now: a report drawn on another machine
        // must not read its own CPU.
        if result.tables.iter().any(|t| t.name == limit::TABLE) {
            out.replace_tables = Some(
                result
                    .tables
                    .iter()
                    .filter(|t| t.name != limit::TABLE)
                    .cloned()
                    .collect(),
            );
        }
        if !kernels.is_empty() {
            let units = limit::fma_units_here();
            out.tables.push(limit::limit_table(&kernels, &units));
        }
        let cpus = ctx.cpus();
        for n in &names {
            let found = [
                analysis::scaling(result, n, "flops_per_s", cpus),
                analysis::placements(result, n, "flops_per_s", cpus as f64),
            ];
            out.findings.extend(found.into_iter().flatten());
        }
        // Per cycle at one thread: the number to hold against FMA units × lanes × 2.
        for n in &names {
            let best_one = result
                .series
                .iter()
                .filter(|s| s.name.starts_with(&format!("{n}-per-cycle/")))
                .filter_map(|s| s.estimate_at(1.0))
                .max_by(|a, b| a.value.total_cmp(&b.value));
            if let Some(e) = best_one {
                out.findings.push(crate::model::Finding::Value {
                    what: format!("{n}: FLOP per cycle with one thread"),
                    unit: "flops_per_cycle".into(),
                    value: e,
                    context: Some("at the measured core clock".into()),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flop_counts_per_call() {
        // 12 chains × lanes × 2 FLOP per turn.
        assert_eq!(Level::Scalar.flop_per_call(Precision::F64, 10), 240);
        assert_eq!(Level::Sse2.flop_per_call(Precision::F64, 1), 48);
        assert_eq!(Level::Sse2.flop_per_call(Precision::F32, 1), 96);
        assert_eq!(Level::Avx2Fma.flop_per_call(Precision::F64, 1), 96);
        assert_eq!(Level::Avx512Fma.flop_per_call(Precision::F64, 1), 192);
        assert_eq!(Level::Avx512Fma.flop_per_call(Precision::F32, 1), 384);
        assert_eq!(Level::NeonFma.flop_per_call(Precision::F32, 1), 96);
        assert_eq!(Level::Avx2.instructions_per_step(), 2);
        assert_eq!(Level::Avx2Fma.instructions_per_step(), 1);
    }

    /// The kernels do what their FLOP count says: after n turns each lane of chain k
    /// holds x_n = a^n (s + k) + b (1 − a^n) / (1 − a); the sum over chains and
    /// lanes must match (and be finite) for every level found here.
    #[test]
    fn kernels_compute_the_recurrence_and_stay_finite() {
        for level in LEVELS.into_iter().filter(|l| l.available().is_ok()) {
            for p in [Precision::F64, Precision::F32] {
                for iters in [0u64, 1, 3, 50, 10_000] {
                    let seed = 1.25;
                    let got = run_kernel(level, p, iters, seed).unwrap();
                    let an = A.powi(iters as i32);
                    let per_lane: f64 = (0..CHAINS)
                        .map(|k| an * (seed + k as f64) + B * (1.0 - an) / (1.0 - A))
                        .sum();
                    let want = per_lane * level.lanes(p) as f64;
                    let tol = if p == Precision::F32 { 1e-4 } else { 1e-10 } * want.abs();
                    assert!(got.is_finite(), "{level:?} {p:?} {iters}: {got}");
                    assert!(
                        (got - want).abs() <= tol,
                        "{level:?} {p:?} {iters}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn scalar_and_sse2_exist_on_x86_64() {
        assert!(Level::Scalar.available().is_ok());
        if cfg!(target_arch = "x86_64") {
            assert!(Level::Sse2.available().is_ok());
            assert!(Level::NeonFma.available().is_err());
        }
    }
}
