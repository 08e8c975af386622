//! A bandwidth case's memory: per thread one block, carved into the kernel's arrays
//! (one for read and write, two for copy, three for triad), each array starting on a
//! huge-page boundary, as separate 2 MiB-aligned blocks would.
//!
//! One block serves every streaming kernel of a thread count, so the runs of a
//! group can share it ([`BlockCache`]): the block is first touched once by the
//! first run on its CPU's NUMA node and kept until the group ends.

use super::kernel::Kernel;
use crate::kernels::buffer::{Block, BlockCache, BlockTag, BufferError, Loan, HUGE_PAGE_BYTES};
use crate::kernels::stream::{copy, read_sum, triad, write_fill};
use std::hint::black_box;

/// Words of one array of `kernel` over a block of `block_bytes` (STREAM's elements).
pub fn array_words(kernel: Kernel, block_bytes: u64) -> usize {
    (block_bytes / 8 / kernel.arrays() as u64) as usize
}

/// Words from one array's start to the next's: the array rounded up to huge pages.
fn stride_words(words: usize) -> usize {
    (words * 8).next_multiple_of(HUGE_PAGE_BYTES) / 8
}

/// Words of a thread's block: enough for every streaming kernel's arrays.
pub fn block_words(block_bytes: u64) -> usize {
    [Kernel::Read, Kernel::Copy, Kernel::Triad]
        .iter()
        .map(|&k| k.arrays() * stride_words(array_words(k, block_bytes)))
        .max()
        .unwrap_or(0)
}

/// The value a thread's arrays start with: a normal, non-zero double (1.0, 4.0, …),
/// so no kernel meets all-zero lines and triad computes on normal numbers.
fn fill_bits(thread: usize) -> u64 {
    ((thread * 3 + 1) as f64).to_bits()
}

/// One thread's block for `kernel`, taken from `cache` when it holds one made for
/// the same words, pages and node (`None`: a new block, not kept).
pub fn lease<'c>(
    cache: Option<&'c BlockCache>,
    kernel: Kernel,
    block_bytes: u64,
    thread: usize,
    node: Option<u32>,
) -> Lease<'c> {
    let tag = BlockTag {
        holds: "stream arrays",
        words: block_words(block_bytes),
        pages: kernel.pages(),
        node,
    };
    let keeps = kernel.keeps_blocks();
    if !keeps {
        // Whatever the slot kept is freed before a new block is made: never two
        // blocks per slot.
        drop(cache.and_then(|c| c.take(thread, &tag)));
    }
    let make = || Block::new(tag.words, tag.pages, fill_bits(thread));
    Lease(Loan::take_or_make(
        cache.filter(|_| keeps),
        thread,
        tag,
        make,
    ))
}

/// Why a pass over a thread's arrays did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PassError {
    /// The thread's block could not be made.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// The block is too small for the kernel's arrays.
    #[error("{kernel}: block of {held} words holds no {arrays} arrays of {words}")]
    Short {
        /// The kernel's name.
        kernel: &'static str,
        /// Words the block holds.
        held: usize,
        /// Arrays the kernel needs.
        arrays: usize,
        /// Words per array.
        words: usize,
    },
}

/// A thread's block for one run, handed back to its cache when dropped.
pub struct Lease<'c>(Result<Loan<'c>, BufferError>);

impl Lease<'_> {
    /// Start address and size of the block (for the huge-page check).
    pub fn addr(&self) -> Option<(usize, usize)> {
        let block = self.0.as_ref().ok()?.block();
        Some((block.addr(), block.allocated_bytes()))
    }

    /// One pass of `kernel` over the block's arrays of `block_bytes`.
    pub fn pass(&mut self, kernel: Kernel, block_bytes: u64) -> Result<u64, PassError> {
        let block = self.0.as_mut().map_err(|e| e.clone())?.block_mut();
        let words = array_words(kernel, block_bytes);
        let stride = stride_words(words);
        let all = block.as_mut_slice();
        if all.len() < kernel.arrays() * stride {
            return Err(PassError::Short {
                kernel: kernel.name(),
                held: all.len(),
                arrays: kernel.arrays(),
                words,
            });
        }
        let (a, rest) = all.split_at_mut(stride);
        let a = &mut a[..words];
        Ok(match kernel {
            Kernel::Read | Kernel::ReadMainInit | Kernel::ReadThp | Kernel::ReadNoThp => {
                black_box(read_sum(a))
            }
            Kernel::Write => {
                write_fill(a);
                0
            }
            Kernel::Copy => {
                copy(a, &rest[..words]);
                0
            }
            Kernel::Triad => {
                let (b, c) = rest.split_at_mut(stride);
                triad(
                    as_f64(a),
                    as_f64(&mut b[..words]),
                    as_f64(&mut c[..words]),
                    3.0,
                );
                0
            }
        })
    }
}

/// Words as doubles (triad's arrays).
fn as_f64(words: &mut [u64]) -> &mut [f64] {
    // SAFETY: u64 and f64 have the same size and alignment, and every bit pattern is
    // a valid f64; the borrow of `words` moves into the result.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_fits_the_block_on_huge_page_boundaries_and_moves_streams_bytes() {
        for block_bytes in [3 * 8 * 64, 4 << 20, 64 << 20, (64 << 20) + 8] {
            let words = block_words(block_bytes);
            for k in [Kernel::Read, Kernel::Write, Kernel::Copy, Kernel::Triad] {
                let per = array_words(k, block_bytes);
                assert!(
                    k.arrays() * stride_words(per) <= words,
                    "{k:?} {block_bytes}"
                );
                assert_eq!(stride_words(per) * 8 % HUGE_PAGE_BYTES, 0);
                assert_eq!(
                    super::super::kernel::bytes_moved(k, block_bytes),
                    per as u64 * k.bytes_per_element()
                );
            }
        }
    }

    #[test]
    fn arrays_hold_normal_non_zero_doubles_after_every_kernel() {
        let mut lease = lease(None, Kernel::Triad, 3 * 8 * 64, 0, Some(0));
        for k in [Kernel::Read, Kernel::Write, Kernel::Copy, Kernel::Triad] {
            lease.pass(k, 3 * 8 * 64).unwrap();
        }
        let block = lease.0.as_ref().unwrap().block();
        let words = array_words(Kernel::Triad, 3 * 8 * 64);
        let stride = stride_words(words);
        for a in 0..3 {
            for &w in &block.as_slice()[a * stride..a * stride + words] {
                let x = f64::from_bits(w);
                assert!(x.is_normal() && x != 0.0, "array {a}: {x}");
            }
        }
    }

    #[test]
    fn a_group_touches_a_block_once_and_a_variant_never_keeps_one() {
        let cache = BlockCache::default();
        let bytes = 4 << 20;
        let first = lease(Some(&cache), Kernel::Read, bytes, 1, Some(0)).addr();
        assert_eq!(cache.held_bytes(), block_words(bytes) * 8);
        for k in [Kernel::Write, Kernel::Copy, Kernel::Triad] {
            let again = lease(Some(&cache), k, bytes, 1, Some(0));
            assert_eq!(again.addr(), first, "{k:?} reuses the block");
        }
        // A variant's block is new and not kept; the slot's block is freed first,
        // so no more than one block per slot is ever held.
        for variant in [Kernel::ReadThp, Kernel::ReadMainInit, Kernel::ReadNoThp] {
            let fresh = lease(Some(&cache), variant, bytes, 1, Some(0));
            assert_eq!(cache.held_bytes(), 0, "{variant:?}");
            drop(fresh);
            assert_eq!(cache.held_bytes(), 0, "{variant:?}");
        }
        let kept = lease(Some(&cache), Kernel::Read, bytes, 1, Some(0)).addr();
        // Another node frees the slot's block and keeps its own.
        let other = lease(Some(&cache), Kernel::Read, bytes, 1, Some(1));
        assert_eq!(cache.held_bytes(), 0);
        assert!(other.addr().is_some() && kept.is_some());
        drop(other);
        assert_eq!(cache.held_bytes(), block_words(bytes) * 8);
    }
}
