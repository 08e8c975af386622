//! A dependent chain of integer adds: one core cycle per add, so adds per second
//! is the effective core clock.
//!
//! Each add reads the result of the one before, so the chain runs at one add per
//! add latency whatever the core's width; the loop counter is a second, independent
//! chain that a spare ALU retires in the shadow of the first. The chain is inline
//! assembly, so the compiler cannot shorten it: the code is exactly what is written
//! below (x86_64: `ADDS_PER_ITER` × `add r64, r64` on one register, then `dec` +
//! `jnz`; aarch64: `ADDS_PER_ITER` × `add x, x, x`, then `subs` + `b.ne`).
//! Register–register adds, not adds of an immediate: some cores (Intel Golden Cove)
//! can fold small immediate adds at rename, which would break the 1-cycle premise.
//!
//! On an SMT core two such chains (one per strand) still run at one add per cycle
//! each: a core has at least 4 integer ALUs, and each chain needs one.

/// Dependent adds per loop iteration: long enough that the loop's own two
/// instructions are hidden, short enough to stay in the µop cache / loop buffer.
pub const ADDS_PER_ITER: u64 = 100;

/// Latency of a register–register integer add, in core cycles.
///
/// Sources: Agner Fog, "Instruction tables" (ADD r,r: latency 1 on every listed
/// Intel core from Pentium M to Alder Lake/Golden Cove and AMD core from K8 to
/// Zen 4); uops.info (`ADD (R64, R64)`: latency 1 on every measured Intel and AMD
/// core, including Zen 5); Arm Cortex-A76 / Neoverse N1, V1, N2, V2 Software
/// Optimization Guides (ADD, shifted register with shift 0: execution latency 1);
/// Apple M1: 1 cycle (Dougall Johnson's measurements of the Firestorm core).
pub const ADD_LATENCY_CYCLES: u64 = 1;

/// Name of the method, as stored in the run file.
pub const METHOD: &str = "dependent register add chain, 1 cycle per add (inline asm)";

/// Whether this architecture has the chain.
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Run `iters` × [`ADDS_PER_ITER`] dependent adds of `inc`; returns the sum so the
/// caller can consume it. On architectures without the chain, returns `start`
/// at once (see [`SUPPORTED`]).
#[inline(never)]
pub fn add_chain(iters: u64, start: u64, inc: u64) -> u64 {
    let mut acc = start;
    if iters == 0 {
        return acc;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: pure register arithmetic on the named operands; no memory access,
    // no stack use; `n` starts ≥ 1 so the loop ends after `iters` turns; `dec`
    // and `add` change flags, which asm! assumes unless `preserves_flags`.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 100",
            "add {acc}, {inc}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            acc = inout(reg) acc,
            inc = in(reg) inc,
            n = inout(reg) iters => _,
            options(nomem, nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: pure register arithmetic on the named operands; no memory access,
    // no stack use; `n` starts ≥ 1 so the loop ends after `iters` turns.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 100",
            "add {acc}, {acc}, {inc}",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            acc = inout(reg) acc,
            inc = in(reg) inc,
            n = inout(reg) iters => _,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = inc;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_adds_exactly_adds_per_iter_times_iters() {
        if !SUPPORTED {
            return;
        }
        // `.rept 100` in the asm is ADDS_PER_ITER.
        assert_eq!(add_chain(1, 0, 1), ADDS_PER_ITER);
        assert_eq!(add_chain(7, 5, 3), 5 + 7 * ADDS_PER_ITER * 3);
        assert_eq!(add_chain(0, 9, 1), 9);
    }
}
