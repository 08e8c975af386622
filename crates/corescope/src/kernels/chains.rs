//! The dependent arithmetic chains of the compute probe (seed 000 §3: 128 inputs,
//! 8 dependent operations each), integer and floating point, shared with the
//! sharing and workload probes.

use std::hint::black_box;

/// Inputs per pass, as in the seed.
pub const INPUTS: usize = 128;
/// Dependent operations per input: 2 add, 2 sub, 4 mul.
pub const OPS_PER_INPUT: u64 = 8;

/// Instructions one pass of [`int_kernel`] or [`fp_kernel`] retires on x86_64: what
/// MIPS and CPI are computed from where no PMU counts them (the compute probe's
/// series "from the kernel's instruction count"). Read off `objdump -d` of the
/// optimised builds (release with LTO and the test profile's opt-level 2, rustc
/// 1.95; both give the same loop), the same for both kernels:
/// - inner loop, unrolled by two, per turn: 2 loads of the inputs (`mov` /
///   `movsd`), 16 operations of the chain (4 `add`/`addsd`, 4 `sub`/`subsd`, 8
///   `imul`/`mulsd`), the index's `add`, `cmp`, `jne`: 21 instructions, 64 turns
///   for the 128 inputs: 1344;
/// - per pass around it: the index's reset (`xor`), the pass counter's `inc`,
///   `black_box`'s store and reload of the result, `cmp`, `jne`: 6.
///
/// 64 × 21 + 6 = 1350 (the call's own prologue, about 20 instructions, is left
/// out: under 10⁻⁶ of the smallest case). Pinned in
/// `tests::instructions_per_pass_matches_the_loop` and, where a PMU counts
/// instructions, against the counted figure in
/// `tests::counted_instructions_match_the_stated_count`. Debug builds (opt-level 0)
/// run many more instructions: the figure holds for optimised builds only.
pub const X86_64_INSTRUCTIONS_PER_PASS: u64 = 1350;

/// [`X86_64_INSTRUCTIONS_PER_PASS`] on x86_64; `None` elsewhere (the generated
/// code was not read there, so no MIPS is derived from it).
pub const INSTRUCTIONS_PER_PASS: Option<u64> = if cfg!(target_arch = "x86_64") {
    Some(X86_64_INSTRUCTIONS_PER_PASS)
} else {
    None
};
// The kernel. One macro so the integer and floating-point versions do exactly the
// same calculation (seed 000: "exactly the same for both").
//
// How it keeps the compiler from folding operations (seed 000 §3.2 tells how a
// compiler removed 2 of 8): every step depends on the previous result, additions
// and subtractions alternate with multiplications so no two additive constants
// meet, and the multipliers come through `black_box` so none is known at compile
// time. For f64 Rust never reassociates or contracts into FMA without explicit
// intrinsics. Checked in the release build (x86_64, rustc 1.95, `objdump -d`):
// LLVM unrolls the inner loop by two; per input `int_kernel` executes 4 `imul`,
// 2 `add`, 2 `sub` on the result register (plus the loop counter's own add), and
// `fp_kernel` 4 `mulsd`, 2 `addsd`, 2 `subsd`: scalar, no packed forms, no FMA.
macro_rules! kernel {
    ($name:ident, $t:ty, $add:ident, $sub:ident, $mul:ident) => {
        /// Run `passes` passes over `inputs`, 8 dependent operations per input.
        #[inline(never)]
        pub fn $name(inputs: &[$t; INPUTS], k: [$t; 4], passes: u64, seed: $t) -> $t {
            let [k0, k1, k2, k3] = black_box(k);
            let mut r = seed;
            for _ in 0..passes {
                for &x in inputs.iter() {
                    r = r.$add(x); // add
                    r = r.$mul(k0); // mul
                    r = r.$sub(x); // sub
                    r = r.$mul(k1); // mul
                    r = r.$add(k2); // add
                    r = r.$mul(x); // mul
                    r = r.$sub(k3); // sub
                    r = r.$mul(k1); // mul
                }
                r = black_box(r);
            }
            r
        }
    };
}

pub trait Arith: Copy {
    fn fadd(self, o: Self) -> Self;
    fn fsub(self, o: Self) -> Self;
    fn fmul(self, o: Self) -> Self;
}
impl Arith for f64 {
    #[inline(always)]
    fn fadd(self, o: Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn fsub(self, o: Self) -> Self {
        self - o
    }
    #[inline(always)]
    fn fmul(self, o: Self) -> Self {
        self * o
    }
}

kernel!(int_kernel, i64, wrapping_add, wrapping_sub, wrapping_mul);
kernel!(fp_kernel, f64, fadd, fsub, fmul);

/// Integer inputs: odd values so products never collapse to zero.
pub fn int_inputs(thread: usize) -> [i64; INPUTS] {
    std::array::from_fn(|i| (2 * (i + thread) + 3) as i64)
}

/// Multipliers for the integer kernel.
pub const INT_K: [i64; 4] = [3, 5, 7, 11];

/// FP inputs in [0.9, 1.1): with multipliers whose product stays below 1 the
/// recurrence contracts to a finite, non-zero fixed point — no overflow, no
/// denormals (which would slow some FPUs by 100×).
pub fn fp_inputs(thread: usize) -> [f64; INPUTS] {
    std::array::from_fn(|i| 0.9 + 0.2 * (((i + thread) % INPUTS) as f64) / INPUTS as f64)
}

/// Multipliers for the FP kernel: 0.5 · 1.25 · x · 1.25 < 0.86 for x < 1.1.
pub const FP_K: [f64; 4] = [0.5, 1.25, 0.75, 0.25];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_deterministic_and_input_dependent() {
        let a = int_kernel(&int_inputs(0), INT_K, 10, 1);
        assert_eq!(a, int_kernel(&int_inputs(0), INT_K, 10, 1));
        assert_ne!(a, int_kernel(&int_inputs(1), INT_K, 10, 1));
        let f = fp_kernel(&fp_inputs(0), FP_K, 1000, 1.0);
        assert!(
            f.is_finite() && f != 0.0 && f.abs() > f64::MIN_POSITIVE,
            "{f}"
        );
    }

    #[test]
    fn fp_kernel_stays_normal_over_long_runs() {
        // Converges to a fixed point: the result after 10^4 passes is finite and normal.
        let f = fp_kernel(&fp_inputs(3), FP_K, 10_000, 1e6);
        assert!(f.is_normal(), "{f}");
    }

    #[test]
    fn instructions_per_pass_matches_the_loop() {
        // Unrolled by two: 64 turns of 2 loads + 16 chain operations + add, cmp, jne.
        let turns = INPUTS as u64 / 2;
        let per_turn = 2 + 2 * OPS_PER_INPUT + 3;
        // Per pass: index reset, pass counter, black_box store and reload, cmp, jne.
        let per_pass = 6;
        assert_eq!(turns * per_turn + per_pass, X86_64_INSTRUCTIONS_PER_PASS);
        assert_eq!(
            INSTRUCTIONS_PER_PASS.is_some(),
            cfg!(target_arch = "x86_64")
        );
    }

    /// Where a PMU counts user-mode instructions, a run of each kernel retires the
    /// stated count per pass (within 0.1 %: the call's prologue and the counter's
    /// own enable/disable path); without one it says so and checks nothing.
    #[test]
    fn counted_instructions_match_the_stated_count() {
        let Some(per_pass) = INSTRUCTIONS_PER_PASS else {
            return;
        };
        const PASSES: u64 = 20_000;
        let mut c = crate::counters::Counters::open();
        if c.status().hardware != crate::counters::Availability::Counted {
            eprintln!("hardware counters: {}", c.status().hardware);
            return;
        }
        let ints = int_inputs(0);
        let fps = fp_inputs(0);
        for kind in ["int", "fp"] {
            c.start().unwrap();
            match kind {
                "int" => {
                    black_box(int_kernel(&ints, INT_K, black_box(PASSES), 1));
                }
                _ => {
                    black_box(fp_kernel(&fps, FP_K, black_box(PASSES), 1.0));
                }
            }
            let r = c.stop().unwrap();
            let Some(counted) = r.instructions else {
                continue;
            };
            let stated = (PASSES * per_pass) as f64;
            let off = (counted as f64 - stated).abs() / stated;
            assert!(off < 1e-3, "{kind}: counted {counted}, stated {stated}");
        }
    }

    #[test]
    fn one_pass_matches_a_hand_computation() {
        let mut inputs = [0i64; INPUTS];
        inputs[0] = 2;
        let mut r = 1i64;
        for &x in &inputs {
            r = ((((((r + x) * 3 - x) * 5 + 7) * x) - 11) * 5).wrapping_mul(1);
        }
        assert_eq!(int_kernel(&inputs, INT_K, 1, 1), r);
    }
}
