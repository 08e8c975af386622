//! Page-aligned blocks of 64-bit words for the memory kernels, with transparent
//! huge pages requested (or refused) before the first touch.

use crate::units::fmt_value;
use std::alloc::Layout;
use std::ptr::NonNull;

/// Size of a transparent huge page on x86_64 and most aarch64 kernels (2 MiB);
/// blocks are aligned and sized to it so a THP request can be honoured.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Which pages back a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// Whatever the system's THP mode gives (no advice).
    Default,
    /// `MADV_HUGEPAGE` before the first touch.
    Huge,
    /// `MADV_NOHUGEPAGE` before the first touch.
    Small,
}

/// A page-aligned, heap-allocated array of 64-bit words, optionally with
/// transparent huge pages requested before the first touch.
pub struct Block {
    ptr: NonNull<u64>,
    words: usize,
    layout: Layout,
}

// SAFETY: a Block owns its allocation exclusively (like a Vec<u64>); moving it to
// another thread moves that ownership.
unsafe impl Send for Block {}
// SAFETY: `&Block` only hands out `&[u64]` (shared reads), like `&Vec<u64>`.
unsafe impl Sync for Block {}

impl Block {
    /// Allocate `words` words (rounded up to whole huge pages), advise the kernel
    /// which pages to use, and write every word (the first touch) with `fill`.
    pub fn new(words: usize, pages: Pages, fill: u64) -> Result<Self, String> {
        let bytes = (words.max(1) * 8).div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
        let layout = Layout::from_size_align(bytes, HUGE_PAGE_BYTES)
            .map_err(|e| format!("block of {bytes} B: {e}"))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) } as *mut u64;
        let ptr = NonNull::new(raw)
            .ok_or_else(|| format!("could not allocate {}", fmt_value("bytes", bytes as f64)))?;
        let advice = match pages {
            Pages::Default => None,
            Pages::Huge => Some(libc::MADV_HUGEPAGE),
            Pages::Small => Some(libc::MADV_NOHUGEPAGE),
        };
        if let Some(advice) = advice {
            // SAFETY: ptr..ptr+bytes is our own, 2 MiB-aligned allocation; madvise
            // only changes how the kernel backs it. A failure (THP off) is harmless.
            unsafe {
                libc::madvise(ptr.as_ptr().cast(), bytes, advice);
            }
        }
        let mut b = Block {
            ptr,
            words: bytes / 8,
            layout,
        };
        b.words = words.max(1);
        b.as_mut_slice().fill(fill);
        Ok(b)
    }

    /// The words.
    pub fn as_slice(&self) -> &[u64] {
        // SAFETY: ptr points to at least `words` initialised u64 (written in `new`),
        // and `&self` rules out a concurrent `&mut`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.words) }
    }

    /// The words, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: as in `as_slice`; `&mut self` makes the access exclusive. Before
        // the first fill the memory is uninitialised, but u64 has no invalid bit
        // patterns and `new` only writes through this slice before reading.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }

    /// The words as f64 (for triad).
    pub fn as_f64_mut(&mut self) -> &mut [f64] {
        // SAFETY: u64 and f64 have the same size and alignment; every bit pattern is
        // a valid f64.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.words) }
    }

    /// Start address (for the huge-page check).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Bytes allocated.
    pub fn allocated_bytes(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), self.layout) }
    }
}
