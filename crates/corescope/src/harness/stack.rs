//! Stack offsets (seed 004 `p4_adjuststack`, Figure 2 loop 2).
//!
//! Two threads whose stacks start at the same offset modulo some large power
//! of two (64 KiB on the P4 of the seed) put their hot frames on the same
//! cache sets; shifting one thread's stack by a few hundred bytes moves its
//! frames off them. [`with_stack_offset`] runs a closure with the stack below
//! the caller shifted by a fixed number of bytes; a tuned
//! [`hspc::Config::stack_offset_bytes`] says how far to shift the producer's
//! (`corescope tune channel` measures each of [`STACK_OFFSETS`]).

use std::hint::black_box;

/// The shifts [`with_stack_offset`] applies, in bytes: 0 and seed 004 Figure 2
/// loop 2's powers of two.
///
/// ```
/// assert!(corescope::harness::stack::STACK_OFFSETS.contains(&256));
/// assert_eq!(corescope::harness::stack::STACK_OFFSETS[0], 0);
/// ```
pub const STACK_OFFSETS: [usize; 7] = [0, 32, 64, 128, 256, 512, 1024];

/// The shift [`with_stack_offset`] applies for `bytes`: the smallest of
/// [`STACK_OFFSETS`] that is at least `bytes`, at most 1024.
///
/// ```
/// use corescope::harness::stack::applied_stack_offset;
/// assert_eq!(applied_stack_offset(0), 0);
/// assert_eq!(applied_stack_offset(100), 128);
/// assert_eq!(applied_stack_offset(1 << 20), 1024);
/// ```
pub fn applied_stack_offset(bytes: usize) -> usize {
    STACK_OFFSETS
        .iter()
        .copied()
        .find(|&s| s >= bytes)
        .unwrap_or(STACK_OFFSETS[STACK_OFFSETS.len() - 1])
}

/// Runs `f` with its stack frame [`applied_stack_offset`]`(bytes)` bytes
/// further down than a direct call would put it (0: a direct call).
///
/// Call it at the top of a thread, around the hot loop:
///
/// ```
/// let config = hspc::Config::default().with_stack_offset(256);
/// let sum = corescope::harness::stack::with_stack_offset(config.stack_offset_bytes, || {
///     (0..100u64).sum::<u64>()
/// });
/// assert_eq!(sum, 4950);
/// ```
pub fn with_stack_offset<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    match applied_stack_offset(bytes) {
        0 => f(),
        32 => shifted::<32, R>(f),
        64 => shifted::<64, R>(f),
        128 => shifted::<128, R>(f),
        256 => shifted::<256, R>(f),
        512 => shifted::<512, R>(f),
        _ => shifted::<1024, R>(f),
    }
}

/// Holds `N` bytes in its own frame for as long as `f` runs, and calls `f`
/// through a further frame that is never inlined, so `f`'s locals sit below
/// the array.
#[inline(never)]
fn shifted<const N: usize, R>(f: impl FnOnce() -> R) -> R {
    let pad = [0u8; N];
    black_box(&pad);
    let r = below(f);
    // Used again after the call: the slot cannot be given to anything else.
    black_box(&pad);
    r
}

#[inline(never)]
fn below<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local_address() -> usize {
        let x = 0u8;
        black_box(&x) as *const u8 as usize
    }

    #[test]
    fn offsets_round_up_to_the_list() {
        assert_eq!(applied_stack_offset(0), 0);
        assert_eq!(applied_stack_offset(1), 32);
        assert_eq!(applied_stack_offset(64), 64);
        assert_eq!(applied_stack_offset(65), 128);
        assert_eq!(applied_stack_offset(5000), 1024);
    }

    #[test]
    fn the_closure_runs_lower_by_at_least_the_offset() {
        let base = with_stack_offset(32, local_address);
        for &n in &STACK_OFFSETS[2..] {
            let a = with_stack_offset(n, local_address);
            // Stacks grow down on every platform Rust's std supports here.
            assert!(base >= a + (n - 32), "{n}: {base:#x} vs {a:#x}");
        }
        assert_eq!(with_stack_offset(512, || 7), 7);
    }
}
