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

/// Why a block could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    /// The size does not make a valid layout.
    #[error("block of {bytes} B: {source}")]
    Layout {
        /// The bytes asked for.
        bytes: usize,
        /// What the layout refused.
        #[source]
        source: std::alloc::LayoutError,
    },
    /// The allocator returned nothing.
    #[error("could not allocate {}", fmt_value("bytes", *bytes as f64))]
    Alloc {
        /// The bytes asked for.
        bytes: usize,
    },
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
    pub fn new(words: usize, pages: Pages, fill: u64) -> Result<Self, BufferError> {
        let bytes = (words.max(1) * 8).div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
        let layout = Layout::from_size_align(bytes, HUGE_PAGE_BYTES)
            .map_err(|source| BufferError::Layout { bytes, source })?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) } as *mut u64;
        let ptr = NonNull::new(raw).ok_or(BufferError::Alloc { bytes })?;
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

/// What a kept block was made for: what it holds, its words, its pages, and the
/// NUMA node whose memory its first touch filled (`None`: not known, so never
/// handed out again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTag {
    /// What the block holds, in words ("stream arrays", "pointer chase"): a block
    /// laid out for one use never serves another.
    pub holds: &'static str,
    /// Words the block holds.
    pub words: usize,
    /// Pages asked for before its first touch.
    pub pages: Pages,
    /// NUMA node of the CPU that first touched it.
    pub node: Option<u32>,
}

impl BlockTag {
    /// Whether a block made for `self` serves a request for `want`.
    fn serves(&self, want: &BlockTag) -> bool {
        self.node.is_some() && self == want
    }
}

/// Blocks kept between the runs of one group of cases, one per thread slot, so a
/// group's rounds first-touch each thread's memory once rather than in every
/// sample (a fresh 64 MiB block costs about 85 ms of page faults on the Zen 4 guest
/// this was written on, 20 times a pass over it). A block is handed out again only
/// for the same words, pages and NUMA node; a request for anything else frees the
/// slot's block first, so the cache never holds more than one block per slot (the
/// memory the probe's plan fitted) and never serves memory from another node.
#[derive(Default)]
pub struct BlockCache {
    slots: std::sync::Mutex<Vec<Option<Kept>>>,
}

/// A kept block, what it was made for, and where its last user stopped in it.
struct Kept {
    tag: BlockTag,
    block: Block,
    cursor: u64,
}

impl BlockCache {
    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Option<Kept>>> {
        // A panic while the lock was held left a consistent Vec behind.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The block kept in `slot` if it was made for `want`, with the cursor its last
    /// user left (a pointer chase's position); any other block kept there is freed.
    pub fn take(&self, slot: usize, want: &BlockTag) -> Option<(Block, u64)> {
        let kept = self.slots().get_mut(slot).and_then(Option::take);
        match kept {
            Some(k) if k.tag.serves(want) => Some((k.block, k.cursor)),
            _ => None,
        }
    }

    /// Keep `block`, made for `tag`, in `slot` with its user's `cursor` (freeing
    /// what was there).
    pub fn put(&self, slot: usize, tag: BlockTag, block: Block, cursor: u64) {
        let mut slots = self.slots();
        if slots.len() <= slot {
            slots.resize_with(slot + 1, || None);
        }
        slots[slot] = Some(Kept { tag, block, cursor });
    }

    /// Free every kept block.
    pub fn clear(&self) {
        self.slots().clear();
    }

    /// Bytes the kept blocks hold.
    pub fn held_bytes(&self) -> usize {
        self.slots()
            .iter()
            .flatten()
            .map(|k| k.block.allocated_bytes())
            .sum()
    }
}

/// A block lent for one run: back in its cache, with the cursor its user left,
/// when dropped (freed when it has no cache).
pub struct Loan<'c> {
    cache: Option<&'c BlockCache>,
    slot: usize,
    tag: BlockTag,
    block: std::mem::ManuallyDrop<Block>,
    /// Where the user stopped in the block (a pointer chase's position).
    pub cursor: u64,
}

impl<'c> Loan<'c> {
    /// The block kept in `cache`'s `slot` for `tag`, or a new one from `make`
    /// (after freeing whatever the slot held); kept again when dropped if `cache`
    /// is given.
    pub fn take_or_make<E>(
        cache: Option<&'c BlockCache>,
        slot: usize,
        tag: BlockTag,
        make: impl FnOnce() -> Result<Block, E>,
    ) -> Result<Self, E> {
        let (block, cursor) = match cache.and_then(|c| c.take(slot, &tag)) {
            Some(kept) => kept,
            None => (make()?, 0),
        };
        Ok(Loan {
            cache,
            slot,
            tag,
            block: std::mem::ManuallyDrop::new(block),
            cursor,
        })
    }

    /// The block.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// The block, mutably.
    pub fn block_mut(&mut self) -> &mut Block {
        &mut self.block
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and `self.block` is not touched after this take.
        let block = unsafe { std::mem::ManuallyDrop::take(&mut self.block) };
        if let Some(cache) = self.cache {
            cache.put(self.slot, self.tag, block, self.cursor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(words: usize, node: Option<u32>) -> BlockTag {
        BlockTag {
            holds: "test words",
            words,
            pages: Pages::Default,
            node,
        }
    }

    #[test]
    fn a_kept_block_serves_only_its_own_size_pages_and_node() {
        let cache = BlockCache::default();
        let made = tag(512, Some(0));
        let block = Block::new(made.words, made.pages, 7).unwrap();
        let addr = block.addr();
        cache.put(1, made, block, 33);
        assert_eq!(cache.held_bytes(), HUGE_PAGE_BYTES);
        let (again, cursor) = cache.take(1, &made).expect("the same request is served");
        assert_eq!((again.addr(), again.as_slice()[0], cursor), (addr, 7, 33));
        cache.put(1, made, again, 0);
        // Another node, size, pages or use: the slot's block is freed.
        for other in [
            tag(512, Some(1)),
            tag(1024, Some(0)),
            BlockTag {
                pages: Pages::Huge,
                ..made
            },
            BlockTag {
                holds: "other words",
                ..made
            },
        ] {
            let block = Block::new(made.words, made.pages, 7).unwrap();
            cache.put(1, made, block, 0);
            assert!(cache.take(1, &other).is_none(), "{other:?}");
            assert_eq!(cache.held_bytes(), 0, "{other:?}");
        }
        assert!(cache.take(5, &made).is_none(), "an empty slot");
    }

    #[test]
    fn a_loan_goes_back_with_its_cursor_and_a_loan_without_a_cache_is_freed() {
        let cache = BlockCache::default();
        let t = tag(512, Some(0));
        let made = || Block::new(512, Pages::Default, 3);
        let mut loan = Loan::take_or_make(Some(&cache), 2, t, made).unwrap();
        let addr = loan.block().addr();
        loan.block_mut().as_mut_slice()[0] = 9;
        loan.cursor = 17;
        assert_eq!(cache.held_bytes(), 0, "lent out");
        drop(loan);
        let again = Loan::take_or_make(Some(&cache), 2, t, made).unwrap();
        assert_eq!(again.block().addr(), addr);
        assert_eq!((again.block().as_slice()[0], again.cursor), (9, 17));
        drop(again);
        let free = Loan::take_or_make(None, 2, t, made).unwrap();
        assert_ne!(free.block().addr(), 0);
        drop(free);
        assert_eq!(cache.held_bytes(), HUGE_PAGE_BYTES, "only the kept one");
        let failed = Loan::take_or_make(None, 0, t, || Err(BufferError::Alloc { bytes: 8 }));
        assert_eq!(failed.err(), Some(BufferError::Alloc { bytes: 8 }));
    }

    #[test]
    fn a_block_of_unknown_node_is_never_handed_out_again() {
        let cache = BlockCache::default();
        let unknown = tag(512, None);
        cache.put(0, unknown, Block::new(512, Pages::Default, 1).unwrap(), 0);
        assert!(cache.take(0, &unknown).is_none());
        assert_eq!(cache.held_bytes(), 0);
        let block = Block::new(512, Pages::Default, 1).unwrap();
        cache.put(0, tag(512, Some(0)), block, 0);
        cache.clear();
        assert_eq!(cache.held_bytes(), 0);
    }
}
