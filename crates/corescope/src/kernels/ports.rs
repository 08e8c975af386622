//! Throughput-bound kernels that saturate one core's execution ports or its L1 data
//! cache, for the sharing probe: two hardware threads of one core running them
//! together each get about half of what one gets alone, where two separate cores
//! each keep their own. (A dependent chain does not tell them apart: it waits on
//! its own latency, and a sibling fills the idle ports without slowing it.) The FMA
//! chains are peak's kernel (`probes::peak::run_kernel`).
//!
//! Generated code, checked once with `objdump -d` on the x86_64 release build
//! (rustc 1.95):
//! - [`l1_load_sum`] with AVX2: the inner loop holds two `vpaddq ymm, ymm, [mem]`
//!   (a 32-byte load folded into each add) into two independent accumulators, eight
//!   words per iteration, and the counter's `add`, `cmp`, `jne`: two 32-byte loads
//!   per iteration, which is what a Zen 4 or Skylake core issues per cycle at most.
//!   The block's address passes through `black_box` (a store and reload on the
//!   stack) once per pass, so every pass loads the block again. Without AVX2 the
//!   same loop with 16-byte `paddq`.
//! - [`int_ports`]: per turn [`INT_CHAINS`] `add` and [`INT_CHAINS`] `xor` on
//!   general registers (the empty `asm!` barrier keeps the chains in separate
//!   registers and unpacked), one counter `dec` and a `jne`: no load, no store.

use std::hint::black_box;

/// Bytes of the block each thread reads in [`l1_load_sum`]: a quarter of the
/// smallest L1 data cache of current server cores, so the blocks of two hardware
/// threads of one core fit their shared L1 together with room for conflicts
/// (32 KiB per core: Intel Core since Nehalem through Golden Cove's 48 KiB, AMD
/// Zen 1–4, Zen 5 48 KiB; Arm Neoverse N1/V1/V2 64 KiB. Sources: Intel 64 and
/// IA-32 Architectures Optimization Reference Manual, §2 per microarchitecture;
/// AMD Software Optimization Guides for Family 17h, 19h and 1Ah, "Cache and
/// Memory"; Arm Neoverse N1/V1 Technical Reference Manuals, "L1 data memory
/// system").
pub const L1_BLOCK_BYTES: usize = 8 * 1024;
/// Words (u64) of that block.
pub const L1_BLOCK_WORDS: usize = L1_BLOCK_BYTES / 8;

/// Independent integer chains of [`int_ports`]: each step is an `add` then an
/// `xor`, a 2-cycle dependency; 8 chains offer 8 ALU operations per cycle, more than
/// any current core's integer ALUs (4 on Zen 2–4 and Skylake–Sunny Cove, 5 on
/// Golden Cove, 6 on Zen 5; the optimization guides above), so the kernel waits on
/// the ALU ports, not on latency, and stays within the general registers.
pub const INT_CHAINS: usize = 8;

/// Sum every word of `words` `passes` times (wrapping): loads from L1 as fast as
/// the core issues them. With AVX2 the loop is compiled for 256-bit loads.
pub fn l1_load_sum(words: &[u64], passes: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { l1_load_sum_avx2(words, passes) };
    }
    l1_load_sum_generic(words, passes)
}

#[inline(never)]
fn l1_load_sum_generic(words: &[u64], passes: u64) -> u64 {
    l1_load_sum_body(words, passes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn l1_load_sum_avx2(words: &[u64], passes: u64) -> u64 {
    l1_load_sum_body(words, passes)
}

#[inline(always)]
fn l1_load_sum_body(words: &[u64], passes: u64) -> u64 {
    let mut acc = [0u64; 8];
    for _ in 0..passes {
        // An opaque pointer each pass: the block is read again, not summed once.
        let w = black_box(words);
        for c in w.chunks_exact(8) {
            for i in 0..8 {
                acc[i] = acc[i].wrapping_add(c[i]);
            }
        }
    }
    let tail: u64 = words
        .chunks_exact(8)
        .remainder()
        .iter()
        .fold(0u64, |a, &b| a.wrapping_add(b))
        .wrapping_mul(passes);
    acc.iter().fold(tail, |a, &b| a.wrapping_add(b))
}

/// Keep the [`INT_CHAINS`] accumulators in separate general registers across each
/// turn so LLVM cannot pack them into vectors: an empty `asm!` that "reads and
/// writes" each of them. It emits no instruction.
macro_rules! gpr_barrier {
    ($acc:ident) => {
        // SAFETY: the template is empty; the operands only pin values to registers.
        unsafe {
            core::arch::asm!(
                "/* {0} {1} {2} {3} {4} {5} {6} {7} */",
                inout(reg) $acc[0], inout(reg) $acc[1], inout(reg) $acc[2],
                inout(reg) $acc[3], inout(reg) $acc[4], inout(reg) $acc[5],
                inout(reg) $acc[6], inout(reg) $acc[7],
                options(pure, nomem, nostack, preserves_flags),
            );
        }
    };
}

/// `iters` turns of [`INT_CHAINS`] independent `x = (x + k) ^ m` chains on the
/// integer ALUs; the xor of the accumulators.
#[inline(never)]
pub fn int_ports(iters: u64, seed: u64) -> u64 {
    let (k, m) = black_box((0x9E37_79B9_7F4A_7C15u64, 0x5851_F42D_4C95_7F2Du64));
    let mut acc: [u64; INT_CHAINS] = std::array::from_fn(|i| seed.wrapping_add(i as u64));
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = x.wrapping_add(k) ^ m;
        }
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        gpr_barrier!(acc);
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            acc = black_box(acc);
        }
    }
    acc.iter().fold(0, |a, &b| a ^ b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l1_load_sum_sums_every_pass() {
        for n in [0usize, 1, 7, 8, 9, L1_BLOCK_WORDS] {
            let v: Vec<u64> = (0..n as u64).collect();
            let once = (n as u64) * (n as u64).saturating_sub(1) / 2;
            assert_eq!(l1_load_sum(&v, 3), once.wrapping_mul(3), "n = {n}");
            assert_eq!(l1_load_sum(&v, 0), 0);
        }
    }

    #[test]
    fn int_ports_runs_every_turn() {
        // One turn by hand.
        let (k, m) = (0x9E37_79B9_7F4A_7C15u64, 0x5851_F42D_4C95_7F2Du64);
        let one = (0..INT_CHAINS as u64).fold(0, |a, i| a ^ (i.wrapping_add(k) ^ m));
        assert_eq!(int_ports(1, 0), one);
        assert_ne!(int_ports(2, 0), int_ports(3, 0));
        assert_eq!(int_ports(0, 5), (0..8u64).fold(0, |a, i| a ^ (5 + i)));
    }
}
