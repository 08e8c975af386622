//! Cache-line padding.
//!
//! The hand-off words of the channel are written by one thread and read by
//! the other. If two of them shared a cache line, every write by one side
//! would invalidate the line the other side is polling ("false sharing",
//! seed 004 §3.2 `p3_rmfalsesharing` and §3.4 `p8_rmfalsesharing`).
//!
//! The padding type is crossbeam-utils' [`CachePadded`], the one padding
//! type of the workspace (corescope's probes and taskpool use it too): a
//! maintained answer to a solved problem, with the line size of each target
//! and its source in its documentation.

pub(crate) use crossbeam_utils::CachePadded;

/// Bytes that keep two hot words from interfering through the cache: the
/// alignment of [`CachePadded`].
///
/// x86_64 and aarch64 use 64-byte lines, but the L2 spatial prefetcher of
/// Intel cores (since Sandy Bridge) pulls lines in aligned pairs, and Apple
/// M-series / Neoverse cores have 128-byte lines or pair prefetchers, so two
/// words closer than 128 bytes still interfere; `CachePadded` is 128 bytes
/// there (and on powerpc64), 256 on s390x, 32 or 64 elsewhere.
///
/// Sources:
/// - Intel 64 and IA-32 Architectures Optimization Reference Manual,
///   §3.7.3 "Spatial Prefetcher" (adjacent-line pairs);
/// - crossbeam-utils `CachePadded` (per-target sources);
/// - <https://github.com/torvalds/linux/blob/v6.1/arch/arm64/include/asm/cache.h>
///   (`L1_CACHE_SHIFT` 6, with 128-byte `ARCH_DMA_MINALIGN`).
pub(crate) const CACHE_LINE: usize = core::mem::align_of::<CachePadded<u8>>();

#[cfg(test)]
mod tests {
    use super::{CachePadded, CACHE_LINE};

    #[test]
    fn a_padded_value_fills_whole_lines() {
        let x = CachePadded::new(7u64);
        assert_eq!(*x, 7);
        assert_eq!(core::mem::align_of_val(&x), CACHE_LINE);
        assert_eq!(core::mem::size_of_val(&x) % CACHE_LINE, 0);
        assert!(CACHE_LINE.is_power_of_two());
    }
}
