//! Cache-line padding.
//!
//! The hand-off words of the channel are written by one thread and read by
//! the other. If two of them shared a cache line, every write by one side
//! would invalidate the line the other side is polling ("false sharing",
//! seed 004 §3.2 `p3_rmfalsesharing` and §3.4 `p8_rmfalsesharing`).

use core::ops::{Deref, DerefMut};

/// Bytes that keep two hot words from interfering through the cache.
///
/// x86_64 and aarch64 use 64-byte lines, but the L2 spatial prefetcher of
/// Intel cores (since Sandy Bridge) pulls lines in aligned pairs, and Apple
/// M-series / Neoverse cores have 128-byte lines or pair prefetchers, so two
/// words closer than 128 bytes still interfere.
///
/// Sources:
/// - Intel 64 and IA-32 Architectures Optimization Reference Manual,
///   §3.7.3 "Spatial Prefetcher" (adjacent-line pairs);
/// - crossbeam-utils `CachePadded` (same choice, with per-target sources);
/// - <https://github.com/torvalds/linux/blob/v6.1/arch/arm64/include/asm/cache.h>
///   (`L1_CACHE_SHIFT` 6, with 128-byte `ARCH_DMA_MINALIGN`).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "powerpc64"
))]
pub const CACHE_LINE: usize = 128;

/// Bytes that keep two hot words from interfering through the cache.
///
/// 64 bytes: the line size of the remaining common targets (32-bit x86 and
/// ARM, RISC-V); see crossbeam-utils `CachePadded` for per-target sources.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "powerpc64"
)))]
pub const CACHE_LINE: usize = 64;

/// A value alone on its own [`CACHE_LINE`]-sized, [`CACHE_LINE`]-aligned slot.
///
/// # Size and alignment
///
/// `align_of::<CachePadded<T>>()` is [`CACHE_LINE`] and the size is a multiple
/// of it, so two `CachePadded` fields next to each other never share a line
/// (nor an adjacent-line prefetch pair).
///
/// # Examples
///
/// ```
/// use hspc::pad::{CachePadded, CACHE_LINE};
/// let x = CachePadded::new(7u64);
/// assert_eq!(*x, 7);
/// assert_eq!(core::mem::align_of_val(&x), CACHE_LINE);
/// assert_eq!(core::mem::size_of_val(&x) % CACHE_LINE, 0);
/// ```
#[cfg_attr(
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "powerpc64"
    ),
    repr(align(128))
)]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "powerpc64"
    )),
    repr(align(64))
)]
#[derive(Debug, Default)]
pub struct CachePadded<T> {
    value: T,
}

impl<T> CachePadded<T> {
    /// Pads `value`.
    pub const fn new(value: T) -> Self {
        Self { value }
    }

    /// Returns the inner value.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for CachePadded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

// The attribute and the constant must agree.
const _: () = assert!(core::mem::align_of::<CachePadded<u8>>() == CACHE_LINE);
