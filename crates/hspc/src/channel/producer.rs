//! The writing half's calls: pushing events and slices, chunks, flushing,
//! and the n-buffer's free-buffer bookkeeping.

use core::fmt;
#[cfg(not(loom))]
use core::mem::MaybeUninit;

use super::tuning::{prefetch_ahead_of, Run};
#[cfg(not(loom))]
use super::WriteChunk;
use super::{limit_after, next_index, notify_slow, Producer, PushError, SliceError, TryPushError};
use crate::config::Config;
use crate::sync::atomic::Ordering;

impl<T: Copy> Producer<T> {
    /// Sends `value` if a slot is free now.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert!(tx.try_push(1).is_ok());
    /// assert_eq!(rx.try_pop(), Ok(1));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    // Always inlined: the call is the whole per-event path, and a large
    // caller left it out of line at a third of the speed
    // (corescope's docs/channel.md, "hspc's per-event calls inlined").
    #[inline(always)]
    pub fn try_push(&mut self, value: T) -> Result<(), TryPushError<T>> {
        if self.pos == self.limit && !self.refresh_space() {
            return Err(self.no_space(value));
        }
        self.put(value);
        Ok(())
    }

    /// Sends `value`, waiting for a free slot with the configured strategy.
    ///
    /// Fails only if the channel is full and the consumer was dropped (while
    /// free slots remain, events sent after the consumer is gone are
    /// accepted and lost; see [`is_abandoned`](Producer::is_abandoned)).
    ///
    /// ```
    /// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::n_buffer(2, 64))?;
    /// let consumer = std::thread::spawn(move || rx.sum::<u64>());
    /// for i in 1..=100 {
    ///     tx.push(i).unwrap(); // waits while both buffers are full
    /// }
    /// drop(tx);
    /// assert_eq!(consumer.join().unwrap(), 5050);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    #[inline]
    pub fn push(&mut self, value: T) -> Result<(), PushError<T>> {
        if self.pos == self.limit && !self.wait_for_space() {
            return Err(PushError::Disconnected(value));
        }
        self.put(value);
        Ok(())
    }

    /// Writes `value` at `pos`, a slot the consumer has released, and moves on.
    ///
    /// The plain ring's branch spells out what `slot_off` and `advance` would
    /// do, without their `masked` and `plain` tests; a build that went
    /// through them ran the 64-byte ring slower (docs/channel.md, "The
    /// ring's per-item path, second pass", step 3).
    #[inline(always)]
    fn put(&mut self, value: T) {
        if self.plain {
            // SAFETY: `pos < limit = head_seen + capacity`, so the consumer
            // has released this slot; `pos & mask < slots_per_buffer`.
            unsafe {
                self.shared
                    .storage
                    .write(self.cur, self.pos & self.mask, value)
            };
            if self.prefetch_ahead != 0 {
                let ahead = self.pos.wrapping_add(self.prefetch_ahead) & self.mask;
                self.shared.storage.prefetch_for_write(self.cur, ahead);
            }
            self.pos = self.pos.wrapping_add(1);
            self.shared.tail.store(self.pos, Ordering::Release);
            return;
        }
        // SAFETY: as above; `slot_off() < slots_per_buffer` (the `off`
        // invariant, or a mask of a power-of-two slot count).
        unsafe { self.shared.storage.write(self.cur, self.slot_off(), value) };
        self.advance(1);
    }

    /// Sends as many events of `src` as fit, without waiting; returns how
    /// many were sent (0 if the channel is full).
    ///
    /// It looks at the consumer's position at most once per call (and only
    /// when the slots it already knows are free are fewer than `src`), as
    /// rtrb's chunks do: a loop that looked again after every run of slots
    /// moved the consumer's cache line once per run, which on two distant
    /// CPUs cost more than the events it gained (docs/channel.md, "The
    /// ring's slice path").
    ///
    /// ```
    /// let (mut tx, _rx) = hspc::channel::<u64>(hspc::Config::ring(32))?; // 4 slots
    /// assert_eq!(tx.try_push_slice(&[1, 2, 3, 4, 5, 6]), 4);
    /// assert_eq!(tx.try_push_slice(&[5, 6]), 0); // full
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn try_push_slice(&mut self, src: &[T]) -> usize {
        if self.limit.wrapping_sub(self.pos) < src.len() {
            self.refresh_space();
        }
        let mut done = 0;
        // Runs of slots end where a buffer (or the ring) ends.
        while done < src.len() && self.pos != self.limit {
            done += self.write_some(&src[done..]);
        }
        done
    }

    /// Sends every event of `src`, waiting for space as needed; copies are
    /// whole runs of slots (`memcpy`), with one publication per run in ring
    /// mode and per buffer in n-buffer mode.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::n_buffer(2, 64))?;
    /// let events: Vec<u64> = (0..1000).collect();
    /// std::thread::scope(|s| {
    ///     s.spawn(move || tx.push_slice(&events).unwrap());
    ///     let mut buf = [0u64; 100];
    ///     let mut got = Vec::new();
    ///     while let Ok(n) = rx.pop_slice(&mut buf) {
    ///         got.extend_from_slice(&buf[..n]);
    ///     }
    ///     assert_eq!(got, (0..1000).collect::<Vec<u64>>());
    /// });
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn push_slice(&mut self, src: &[T]) -> Result<(), SliceError> {
        let mut done = 0;
        while done < src.len() {
            if self.pos == self.limit && !self.wait_for_space() {
                return Err(SliceError { transferred: done });
            }
            done += self.write_some(&src[done..]);
        }
        Ok(())
    }

    /// Free slots to write in place, at most `max`, contiguous: the rest of
    /// the current buffer (or up to the ring's end) that the consumer has
    /// released. Empty if the channel is full. Does not wait.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// let chunk = tx.write_chunk(3);
    /// assert_eq!(chunk.len(), 3);
    /// assert_eq!(chunk.copy_from(&[7, 8, 9]), 3);
    /// assert_eq!(rx.len(), 3);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    #[cfg(not(loom))]
    pub fn write_chunk(&mut self, max: usize) -> WriteChunk<'_, T> {
        if self.pos == self.limit {
            self.refresh_space();
        }
        let len = self.contiguous_free().min(max);
        // SAFETY: `len` slots from `off` are in this buffer and released by
        // the consumer (`contiguous_free`), and the chunk borrows `self`
        // mutably, so nothing else writes them while it lives.
        let slots = unsafe {
            self.shared
                .storage
                .uninit_mut(self.cur, self.slot_off(), len)
        };
        let slots: *mut [MaybeUninit<T>] = slots;
        WriteChunk {
            // SAFETY: the pointer comes from the line above; its lifetime is
            // tied to the `&mut self` borrow held by the chunk.
            slots: unsafe { &mut *slots },
            producer: self,
        }
    }

    /// Hands over every event written so far (in n-buffer mode, the
    /// partially filled buffer); the producer goes on filling the rest of
    /// that buffer. A no-op in ring mode, where every push is published.
    /// Never waits.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::n_buffer(2, 64))?;
    /// tx.push(1).unwrap();
    /// assert!(rx.try_pop().is_err()); // still in the producer's buffer
    /// tx.flush();
    /// assert_eq!(rx.try_pop(), Ok(1));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn flush(&mut self) {
        if !self.geometry.publish_each && self.published != self.pos {
            self.publish();
        }
    }

    /// True if the consumer was dropped: further events would be lost.
    ///
    /// ```
    /// let (tx, rx) = hspc::channel::<u64>(hspc::Config::default())?;
    /// assert!(!tx.is_abandoned());
    /// drop(rx);
    /// assert!(tx.is_abandoned());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn is_abandoned(&self) -> bool {
        self.consumer_gone()
    }

    /// Events the channel holds when full.
    ///
    /// ```
    /// let (tx, _rx) = hspc::channel::<u64>(hspc::Config::n_buffer(3, 4096))?;
    /// assert_eq!(tx.capacity(), 3 * 4096 / 8);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.geometry.capacity
    }

    /// Free slots as of now (the consumer may free more at any time).
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push(1).unwrap();
    /// assert_eq!(tx.free_slots(), 15);
    /// rx.pop().unwrap();
    /// assert_eq!(tx.free_slots(), 16);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn free_slots(&self) -> usize {
        let head = self.shared.head.load(Ordering::Acquire);
        self.limit_for(head).wrapping_sub(self.pos)
    }

    /// The configuration the channel was made with.
    ///
    /// ```
    /// let config = hspc::Config::ring(64);
    /// let (tx, _rx) = hspc::channel::<u64>(config)?;
    /// assert_eq!(tx.config(), &config);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Free slots from `pos` to the end of the current buffer, as far as the
    /// cached head allows.
    #[inline]
    fn contiguous_free(&self) -> usize {
        let free = self.limit.wrapping_sub(self.pos);
        debug_assert!(free <= self.geometry.capacity);
        free.min(self.geometry.slots_per_buffer - self.slot_off())
    }

    /// Copies a prefix of `src` into free slots (at least one must be
    /// free by the cached head) and returns its length.
    #[inline]
    fn write_some(&mut self, src: &[T]) -> usize {
        let n = self.contiguous_free().min(src.len());
        debug_assert!(n > 0);
        if self.run_prefetch != 0 {
            let run = Run {
                cur: self.cur,
                off: self.off,
                len: n,
                known: self.limit.wrapping_sub(self.pos),
            };
            // Past this segment, the buffer on top of the free stack: the
            // one the next segment takes unless the consumer frees another
            // first (then the hint was wasted, never wrong).
            let (storage, free) = (&self.shared.storage, &self.free);
            let next = || {
                free.len
                    .checked_sub(1)
                    .map(|i| storage.buffer(free.stack[i]))
            };
            let spb = self.geometry.slots_per_buffer;
            prefetch_ahead_of(storage, spb, run, self.run_prefetch, next, true);
        }
        // SAFETY: `n` slots from `off` are free (`contiguous_free`) and ours.
        unsafe {
            self.shared
                .storage
                .write_slice(self.cur, self.slot_off(), &src[..n])
        };
        self.advance(n);
        n
    }

    /// Offset of `pos` in its buffer.
    #[inline(always)]
    fn slot_off(&self) -> usize {
        if self.masked {
            self.pos & self.mask
        } else {
            self.off
        }
    }

    /// Moves past `n` written slots of the current buffer.
    #[inline(always)]
    pub(super) fn advance(&mut self, n: usize) {
        debug_assert!(n <= self.geometry.slots_per_buffer - self.slot_off());
        self.pos = self.pos.wrapping_add(n);
        if self.plain {
            self.shared.tail.store(self.pos, Ordering::Release);
            return;
        }
        if self.geometry.publish_each {
            // Ring mode, tested first: one buffer, so a wrap only resets
            // `off` (`cur` stays), and a masked ring keeps no `off` at all;
            // every position is published at once (`published` is only read
            // in n-buffer mode). See docs/channel.md, "The ring's per-item gap".
            if !self.masked {
                self.off += n;
                if self.off == self.geometry.slots_per_buffer {
                    self.off = 0;
                }
            }
            self.shared.tail.store(self.pos, Ordering::Release);
            if self.notifies {
                notify_slow(&self.shared.data_ready, self.config.wait);
            }
            return;
        }
        self.off += n;
        if self.off == self.geometry.slots_per_buffer {
            self.next_buffer();
        }
    }

    /// The n-buffer mode's boundary: on to the next buffer, handing over
    /// the full one. Out of line (once per buffer), so that the per-event
    /// calls stay small enough to be inlined into the caller's loop.
    #[cold]
    #[inline(never)]
    fn next_buffer(&mut self) {
        self.off = 0;
        self.seg = next_index(self.seg, self.geometry.buffers);
        self.publish();
        // The new segment has no buffer until `refresh_buffers` gives it one.
        // One look at the consumer's head per buffer, so that the buffer it
        // released last is on top of the stack when the next one is taken.
        self.pending = true;
        let head = self.shared.head.load(Ordering::Acquire);
        self.refresh_buffers(head);
    }

    /// In n-buffer mode: puts the buffers of the segments `head` has wholly
    /// passed on the free stack (oldest first, so the last released is on
    /// top) and returns the write limit ([`limit_after`]).
    fn reclaim(&mut self, head: usize) -> usize {
        let spb = self.geometry.slots_per_buffer;
        let free = &mut self.free;
        while head.wrapping_sub(free.oldest_pos) >= spb {
            // The consumer released this segment, so it read the entry, and
            // we wrote it (the entry is not rewritten before we take the
            // buffer again).
            free.stack[free.len] = self.shared.order[free.oldest].load(Ordering::Relaxed);
            free.len += 1;
            free.oldest = next_index(free.oldest, self.geometry.buffers);
            free.oldest_pos = free.oldest_pos.wrapping_add(spb);
        }
        free.oldest_pos.wrapping_add(self.geometry.capacity)
    }

    /// Gives the `pending` segment of `pos` (at its start) the buffer
    /// released last, and records it in `order` before any of its events is
    /// written. Called only below the limit, where a buffer is free.
    fn take_buffer(&mut self) {
        debug_assert_eq!(self.off, 0);
        let free = &mut self.free;
        debug_assert!(free.len > 0, "below the limit, a buffer is free");
        let Some(top) = free.len.checked_sub(1) else {
            return; // stays pending
        };
        free.len = top;
        let b = free.stack[top];
        self.shared.order[self.seg].store(b, Ordering::Relaxed);
        self.cur = self.shared.storage.buffer(b);
        self.pending = false;
    }

    #[inline(always)]
    fn publish(&mut self) {
        self.shared.tail.store(self.pos, Ordering::Release);
        self.published = self.pos;
        if self.notifies {
            notify_slow(&self.shared.data_ready, self.config.wait);
        }
    }

    /// Re-reads the consumer's head; true if a slot is free.
    #[inline]
    fn refresh_space(&mut self) -> bool {
        let head = self.shared.head.load(Ordering::Acquire);
        debug_assert!(self.pos.wrapping_sub(head) <= self.geometry.capacity);
        if !self.geometry.publish_each {
            return self.refresh_buffers(head);
        }
        self.limit = head.wrapping_add(self.geometry.capacity);
        self.limit != self.pos
    }

    /// `refresh_space` in n-buffer mode: frees the released buffers, and
    /// gives a `pending` segment one if that made room.
    #[inline(never)]
    fn refresh_buffers(&mut self, head: usize) -> bool {
        self.limit = self.reclaim(head);
        if self.pending && self.limit != self.pos {
            self.take_buffer();
        }
        self.limit != self.pos
    }

    /// The write limit `head` would give ([`Producer::limit`]), without
    /// taking note of it.
    fn limit_for(&self, head: usize) -> usize {
        if self.geometry.publish_each {
            head.wrapping_add(self.geometry.capacity)
        } else {
            limit_after(
                head,
                self.free.oldest_pos,
                self.geometry.slots_per_buffer,
                self.geometry.capacity,
            )
        }
    }

    /// Why `value` could not be pushed now.
    #[cold]
    fn no_space(&self, value: T) -> TryPushError<T> {
        if self.consumer_gone() {
            TryPushError::Disconnected(value)
        } else {
            TryPushError::Full(value)
        }
    }

    fn consumer_gone(&self) -> bool {
        self.shared.closed.consumer.load(Ordering::Acquire)
    }

    /// Waits until a slot is free (true) or the consumer is gone (false).
    #[cold]
    #[inline(never)]
    fn wait_for_space(&mut self) -> bool {
        if self.refresh_space() {
            return true;
        }
        // Never wait while holding events the consumer could be waiting for.
        self.flush();
        let shared = &*self.shared;
        shared.space_ready.wait_until(self.config.wait, || {
            self.limit_for(shared.head.load(Ordering::Acquire)) != self.pos
                || shared.closed.consumer.load(Ordering::Acquire)
        });
        // If the wait ended on space, this look finds it (and gives a
        // pending segment its buffer).
        self.refresh_space()
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        if self.geometry.publish_each || self.published != self.pos {
            self.shared.tail.store(self.pos, Ordering::Release);
        }
        self.shared.closed.producer.store(true, Ordering::Release);
        self.shared.data_ready.notify(self.config.wait);
    }
}

impl<T> fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer")
            .field("pos", &self.pos)
            .field("published", &self.published)
            .field("capacity", &self.geometry.capacity)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
