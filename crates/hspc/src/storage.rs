//! The event slots: one allocation holding every buffer, laid out by a
//! [`Geometry`] (seed 004 `p1_singlealloc`: one allocation, so the padding
//! between buffers is under our control).
//!
//! The storage itself has no synchronisation: the channel's protocol decides
//! which side may touch which slot, and every method is `unsafe` with that
//! obligation. Under `cfg(loom)` every slot is a loom `UnsafeCell`, so loom
//! checks that the protocol never lets both sides touch a slot at once.

use core::marker::PhantomData;
use core::mem::MaybeUninit;

use crate::config::Geometry;

/// Where one buffer starts (an address outside loom, an index under loom).
///
/// Copying a `BufRef` gives no access by itself: every access goes through
/// the `unsafe` methods of [`Storage`].
pub(crate) struct BufRef<T> {
    #[cfg(not(loom))]
    ptr: *mut T,
    #[cfg(loom)]
    first: usize,
    _marker: PhantomData<*mut T>,
}

impl<T> Clone for BufRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for BufRef<T> {}

// SAFETY: a `BufRef` is only a position in a `Storage`; it is sent along
// with the `Arc` of the storage it points into, and reads or writes through
// it happen only in `Storage`'s unsafe methods, whose callers follow the
// channel protocol (one side per slot at a time).
unsafe impl<T: Send> Send for BufRef<T> {}
// SAFETY: as above; sharing the address gives no access.
unsafe impl<T: Send> Sync for BufRef<T> {}

#[cfg(not(loom))]
pub(crate) struct Storage<T> {
    base: core::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
    geometry: Geometry,
    _marker: PhantomData<T>,
}

#[cfg(loom)]
pub(crate) struct Storage<T> {
    slots: Box<[loom::cell::UnsafeCell<MaybeUninit<T>>]>,
    geometry: Geometry,
}

// SAFETY: the storage owns its slots; moving it to another thread moves
// `T`s, which is allowed for `T: Send`.
unsafe impl<T: Send> Send for Storage<T> {}
// SAFETY: shared access only goes through the unsafe methods, whose callers
// guarantee that a slot is never accessed by two threads at once without a
// happens-before edge (the channel's Release/Acquire hand-off), so sharing
// is sound whenever sending `T` is.
unsafe impl<T: Send> Sync for Storage<T> {}

#[cfg(not(loom))]
impl<T: Copy> Storage<T> {
    /// Allocates (and touches, so page faults happen here, in the creating
    /// thread, not in the producer's first pass) the memory of `geometry`.
    pub(crate) fn new(geometry: Geometry) -> Self {
        debug_assert!(geometry.total_bytes > 0);
        debug_assert!(geometry.align.is_power_of_two());
        let layout = match std::alloc::Layout::from_size_align(geometry.total_bytes, geometry.align)
        {
            Ok(l) => l,
            // `Config::geometry_for` bounds the size by isize::MAX / 2 and the
            // alignment is a power of two.
            Err(_) => unreachable!("geometry was validated"),
        };
        // SAFETY: the layout has a non-zero size (at least one event of
        // non-zero size).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(base) = core::ptr::NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: `base` points to `layout.size()` freshly allocated bytes.
        unsafe { core::ptr::write_bytes(base.as_ptr(), 0, layout.size()) };
        Self {
            base,
            layout,
            geometry,
            _marker: PhantomData,
        }
    }

    /// The start of buffer `i`.
    #[inline]
    pub(crate) fn buffer(&self, i: usize) -> BufRef<T> {
        debug_assert!(i < self.geometry.buffers);
        let offset = self.geometry.lead_bytes + i * self.geometry.stride_bytes;
        debug_assert!(
            offset + self.geometry.slots_per_buffer * core::mem::size_of::<T>()
                <= self.geometry.total_bytes
        );
        debug_assert_eq!(offset % core::mem::align_of::<T>(), 0);
        // SAFETY: `offset` plus the buffer's bytes is within the allocation
        // (checked above in debug builds; guaranteed by `Geometry`).
        let ptr = unsafe { self.base.as_ptr().add(offset) }.cast::<T>();
        BufRef {
            ptr,
            _marker: PhantomData,
        }
    }

    /// Writes `value` into slot `off` of buffer `b`.
    ///
    /// # Safety
    /// `off < slots_per_buffer`, and the caller owns the slot: no other thread
    /// accesses it until a Release/Acquire hand-off.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, b: BufRef<T>, off: usize, value: T) {
        debug_assert!(off < self.geometry.slots_per_buffer);
        // SAFETY: in bounds and owned by the caller (the function's contract).
        unsafe { b.ptr.add(off).write(value) }
    }

    /// Asks for the cache line of slot `off` of buffer `b` in the writable
    /// state ([`crate::prefetch`]); call it only where
    /// `prefetch::for_write_supported`. Safe: it accesses no slot, and the
    /// address is only computed (`wrapping_add`) and hinted, never
    /// dereferenced, so even an `off` past the buffer would be harmless.
    #[inline(always)]
    pub(crate) fn prefetch_for_write(&self, b: BufRef<T>, off: usize) {
        debug_assert!(off < self.geometry.slots_per_buffer);
        crate::prefetch::for_write(b.ptr.wrapping_add(off));
    }

    /// Asks for the cache lines of slots `from..to` of buffer `b`, one
    /// request per [`LINE_BYTES`](crate::prefetch::LINE_BYTES), for writing
    /// (call it so only where `prefetch::for_write_supported`) or for
    /// reading. Safe for the reason [`Self::prefetch_for_write`] is.
    #[inline]
    pub(crate) fn prefetch_slots(&self, b: BufRef<T>, from: usize, to: usize, write: bool) {
        debug_assert!(to <= self.geometry.slots_per_buffer);
        let step = (crate::prefetch::LINE_BYTES / core::mem::size_of::<T>().max(1)).max(1);
        let mut s = from;
        while s < to {
            let p = b.ptr.wrapping_add(s);
            if write {
                crate::prefetch::for_write(p);
            } else {
                crate::prefetch::for_read(p);
            }
            s += step;
        }
    }

    /// Reads slot `off` of buffer `b`.
    ///
    /// # Safety
    /// `off < slots_per_buffer`, the slot was written, and the caller owns it.
    #[inline(always)]
    pub(crate) unsafe fn read(&self, b: BufRef<T>, off: usize) -> T {
        debug_assert!(off < self.geometry.slots_per_buffer);
        // SAFETY: in bounds, initialised and owned (the function's contract).
        unsafe { b.ptr.add(off).read() }
    }

    /// Copies `src` into slots `off..off + src.len()` of buffer `b`.
    ///
    /// # Safety
    /// `off + src.len() <= slots_per_buffer` and the caller owns those slots.
    #[inline]
    pub(crate) unsafe fn write_slice(&self, b: BufRef<T>, off: usize, src: &[T]) {
        debug_assert!(off + src.len() <= self.geometry.slots_per_buffer);
        // SAFETY: the destination is in bounds and owned by the caller, so it
        // cannot overlap `src`, which the caller borrows from elsewhere.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), b.ptr.add(off), src.len()) }
    }

    /// Copies slots `off..off + dst.len()` of buffer `b` into `dst`.
    ///
    /// # Safety
    /// The range is in bounds, written, and owned by the caller.
    #[inline]
    pub(crate) unsafe fn read_slice(&self, b: BufRef<T>, off: usize, dst: &mut [T]) {
        debug_assert!(off + dst.len() <= self.geometry.slots_per_buffer);
        // SAFETY: the source is in bounds, initialised and owned by the
        // caller; `dst` is a distinct exclusive borrow.
        unsafe { core::ptr::copy_nonoverlapping(b.ptr.add(off), dst.as_mut_ptr(), dst.len()) }
    }

    /// Slots `off..off + len` of buffer `b`, for the producer to fill.
    ///
    /// # Safety
    /// The range is in bounds and owned by the caller while the returned borrow lives.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn uninit_mut(
        &self,
        b: BufRef<T>,
        off: usize,
        len: usize,
    ) -> &mut [MaybeUninit<T>] {
        debug_assert!(off + len <= self.geometry.slots_per_buffer);
        // SAFETY: in bounds; the caller owns the range exclusively while the borrow lives, so
        // no other reference to it exists. `MaybeUninit<T>` has `T`'s layout.
        unsafe { core::slice::from_raw_parts_mut(b.ptr.add(off).cast(), len) }
    }

    /// Slots `off..off + len` of buffer `b`, for the consumer to read.
    ///
    /// # Safety
    /// The range is in bounds, written, and owned by the caller while the returned borrow lives.
    #[inline]
    pub(crate) unsafe fn init_ref(&self, b: BufRef<T>, off: usize, len: usize) -> &[T] {
        debug_assert!(off + len <= self.geometry.slots_per_buffer);
        // SAFETY: in bounds, initialised, and not written by anyone while the borrow lives.
        unsafe { core::slice::from_raw_parts(b.ptr.add(off), len) }
    }
}

#[cfg(not(loom))]
impl<T> Drop for Storage<T> {
    fn drop(&mut self) {
        // SAFETY: `base` was allocated in `new` with `self.layout`. `T: Copy`
        // in every constructor, so there is nothing to drop in the slots.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

#[cfg(loom)]
impl<T: Copy> Storage<T> {
    pub(crate) fn new(geometry: Geometry) -> Self {
        let n = geometry.buffers * geometry.slots_per_buffer;
        let slots = (0..n)
            .map(|_| loom::cell::UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Self { slots, geometry }
    }

    pub(crate) fn buffer(&self, i: usize) -> BufRef<T> {
        BufRef {
            first: i * self.geometry.slots_per_buffer,
            _marker: PhantomData,
        }
    }

    pub(crate) unsafe fn write(&self, b: BufRef<T>, off: usize, value: T) {
        // SAFETY: loom checks the exclusive access this claims.
        self.slots[b.first + off].with_mut(|p| unsafe { (*p).write(value) });
    }

    /// No cache to prefetch into under loom.
    pub(crate) fn prefetch_for_write(&self, _b: BufRef<T>, _off: usize) {}

    /// No cache to prefetch into under loom.
    pub(crate) fn prefetch_slots(&self, _b: BufRef<T>, _from: usize, _to: usize, _write: bool) {}

    pub(crate) unsafe fn read(&self, b: BufRef<T>, off: usize) -> T {
        // SAFETY: loom checks the access; the protocol wrote the slot first.
        self.slots[b.first + off].with(|p| unsafe { (*p).assume_init() })
    }

    pub(crate) unsafe fn write_slice(&self, b: BufRef<T>, off: usize, src: &[T]) {
        for (i, v) in src.iter().enumerate() {
            // SAFETY: the caller's contract, element by element.
            unsafe { self.write(b, off + i, *v) }
        }
    }

    pub(crate) unsafe fn read_slice(&self, b: BufRef<T>, off: usize, dst: &mut [T]) {
        for (i, v) in dst.iter_mut().enumerate() {
            // SAFETY: the caller's contract, element by element.
            *v = unsafe { self.read(b, off + i) };
        }
    }
}
