//! The reading half's calls: popping events and slices, chunks, releasing
//! slots to the producer.

use core::fmt;

use super::tuning::{prefetch_ahead_of, slip, streaming_into_line, Run};
#[cfg(doc)]
use super::Producer;
#[cfg(not(loom))]
use super::ReadChunk;
use super::{next_index, notify_slow, Consumer, PopError, TryPopError};
use crate::config::Config;
use crate::sync::atomic::Ordering;

impl<T: Copy> Consumer<T> {
    /// Receives an event if one has been handed over.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert_eq!(rx.try_pop(), Err(hspc::TryPopError::Empty));
    /// tx.push(3).unwrap();
    /// assert_eq!(rx.try_pop(), Ok(3));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    // Always inlined: the call is the whole per-event path, and a large
    // caller left it out of line at a third of the speed
    // (corescope's docs/channel.md, "hspc's per-event calls inlined").
    #[inline(always)]
    pub fn try_pop(&mut self) -> Result<T, TryPopError> {
        if self.pos == self.avail && !self.refresh_data() {
            return Err(self.empty_now());
        }
        Ok(self.take())
    }

    /// Receives an event, waiting for one with the configured strategy;
    /// fails only at the end of the stream (producer dropped, all received).
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
    /// let producer = std::thread::spawn(move || tx.push(42).unwrap());
    /// assert_eq!(rx.pop(), Ok(42)); // waits for it
    /// producer.join().unwrap();
    /// assert_eq!(rx.pop(), Err(hspc::PopError::Disconnected));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    #[inline]
    pub fn pop(&mut self) -> Result<T, PopError> {
        if self.pos == self.avail && !self.wait_for_data() {
            return Err(PopError::Disconnected);
        }
        Ok(self.take())
    }

    /// Reads the event at `pos`, which the producer has published, and
    /// moves on; the plain ring's branch as in `Producer::put`. When the
    /// producer is streaming into the line the plain ring's consumer is about
    /// to read (two to a line's worth of events published ahead of it), the
    /// consumer [`slip`]s first; a lone event (one ahead: a request, a
    /// ping-pong) is read at once.
    #[inline(always)]
    fn take(&mut self) -> T {
        if self.plain {
            if streaming_into_line(self.avail.wrapping_sub(self.pos), self.release_mask) {
                slip();
            }
            // SAFETY: `pos < avail = tail_seen`: the producer wrote and
            // published this slot, and will not touch it until we release
            // it; `pos & mask < slots_per_buffer`.
            let value = unsafe { self.shared.storage.read(self.cur, self.pos & self.mask) };
            self.pos = self.pos.wrapping_add(1);
            if self.pos & self.release_mask == 0 {
                self.shared.head.store(self.pos, Ordering::Release);
            }
            return value;
        }
        // SAFETY: as above; `slot_off() < slots_per_buffer`.
        let value = unsafe { self.shared.storage.read(self.cur, self.slot_off()) };
        self.advance(1);
        value
    }

    /// Receives as many events as are handed over, up to `dst.len()`,
    /// without waiting; returns how many (at least 1), or why none.
    ///
    /// Like [`Producer::try_push_slice`], it looks at the producer's
    /// position at most once per call, and only when the events it already
    /// knows of are fewer than `dst.len()`.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2, 3]).unwrap();
    /// let mut buf = [0; 8];
    /// assert_eq!(rx.try_pop_slice(&mut buf), Ok(3));
    /// assert_eq!(buf[..3], [1, 2, 3]);
    /// assert_eq!(rx.try_pop_slice(&mut buf), Err(hspc::TryPopError::Empty));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn try_pop_slice(&mut self, dst: &mut [T]) -> Result<usize, TryPopError> {
        if dst.is_empty() {
            return Ok(0);
        }
        if self.avail.wrapping_sub(self.pos) < dst.len() && !self.refresh_data() {
            return Err(self.empty_now());
        }
        Ok(self.read_known(dst))
    }

    /// Receives at least one event (waiting for it), then as many more as
    /// are handed over, up to `dst.len()`; returns how many. Fails only at
    /// the end of the stream.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2, 3]).unwrap();
    /// drop(tx);
    /// let mut buf = [0; 2];
    /// assert_eq!(rx.pop_slice(&mut buf), Ok(2));
    /// assert_eq!(rx.pop_slice(&mut buf), Ok(1));
    /// assert_eq!(rx.pop_slice(&mut buf), Err(hspc::PopError::Disconnected));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn pop_slice(&mut self, dst: &mut [T]) -> Result<usize, PopError> {
        if dst.is_empty() {
            return Ok(0);
        }
        if self.avail.wrapping_sub(self.pos) < dst.len()
            && !self.refresh_data()
            && !self.wait_for_data()
        {
            return Err(PopError::Disconnected);
        }
        Ok(self.read_known(dst))
    }

    /// Events handed over and not yet read, at most `max`, contiguous, to
    /// read in place. Does not wait.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2, 3]).unwrap();
    /// let chunk = rx.read_chunk(8).unwrap();
    /// assert_eq!(chunk.as_slice(), [1, 2, 3]);
    /// chunk.commit_all();
    /// assert!(rx.is_empty());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    #[cfg(not(loom))]
    pub fn read_chunk(&mut self, max: usize) -> Result<ReadChunk<'_, T>, TryPopError> {
        if self.pos == self.avail && !self.refresh_data() {
            return Err(self.empty_now());
        }
        let len = self.contiguous_ready().min(max);
        // SAFETY: `len` slots from `off` are published by the producer
        // (`contiguous_ready`), and the chunk borrows `self` mutably, so
        // they are not released (and rewritten) while it lives.
        let events = unsafe { self.shared.storage.init_ref(self.cur, self.slot_off(), len) };
        let events: *const [T] = events;
        Ok(ReadChunk {
            // SAFETY: from the line above; tied to the `&mut self` borrow.
            events: unsafe { &*events },
            consumer: self,
        })
    }

    /// True if the producer was dropped (events may remain to be read).
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
    /// tx.push(1).unwrap();
    /// drop(tx);
    /// assert!(rx.is_abandoned());
    /// assert_eq!(rx.pop(), Ok(1)); // events may remain
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn is_abandoned(&self) -> bool {
        self.shared.closed.producer.load(Ordering::Acquire)
    }

    /// Events handed over and not yet read, as of now.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2]).unwrap();
    /// assert_eq!(rx.len(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.shared
            .tail
            .load(Ordering::Acquire)
            .wrapping_sub(self.pos)
    }

    /// True if no event is handed over and unread now.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert!(rx.is_empty());
    /// tx.push(1).unwrap();
    /// assert!(!rx.is_empty());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events the channel holds when full.
    ///
    /// ```
    /// let (_tx, rx) = hspc::channel::<u64>(hspc::Config::ring(4096))?;
    /// assert_eq!(rx.capacity(), 512);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.geometry.capacity
    }

    /// The configuration the channel was made with.
    ///
    /// ```
    /// let (_tx, rx) = hspc::channel::<u64>(hspc::Config::default())?;
    /// assert_eq!(rx.config(), &hspc::Config::default());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    #[inline]
    fn contiguous_ready(&self) -> usize {
        let ready = self.avail.wrapping_sub(self.pos);
        debug_assert!(ready <= self.geometry.capacity);
        ready.min(self.geometry.slots_per_buffer - self.slot_off())
    }

    /// Copies events known to be ready (at least one must be) into `dst`,
    /// without looking at the producer's position again.
    fn read_known(&mut self, dst: &mut [T]) -> usize {
        let mut done = 0;
        // Runs of slots end where a buffer (or the ring) ends.
        while done < dst.len() && self.pos != self.avail {
            let n = self.contiguous_ready().min(dst.len() - done);
            if self.run_prefetch != 0 {
                let run = Run {
                    cur: self.cur,
                    off: self.off,
                    len: n,
                    known: self.avail.wrapping_sub(self.pos),
                };
                // Past this segment, events of the next one are published
                // (`known`), and with them its `order` entry.
                let (shared, buffers) = (&*self.shared, self.geometry.buffers);
                let next_seg = next_index(self.seg, buffers);
                let next = || {
                    Some(
                        shared
                            .storage
                            .buffer(shared.order[next_seg].load(Ordering::Relaxed)),
                    )
                };
                let spb = self.geometry.slots_per_buffer;
                prefetch_ahead_of(&shared.storage, spb, run, self.run_prefetch, next, false);
            }
            // SAFETY: `n` slots from `off` are published and ours to read.
            unsafe {
                self.shared
                    .storage
                    .read_slice(self.cur, self.slot_off(), &mut dst[done..done + n])
            };
            self.advance(n);
            done += n;
        }
        debug_assert!(done > 0);
        done
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

    /// Moves past `n` read slots of the current buffer.
    #[inline(always)]
    pub(super) fn advance(&mut self, n: usize) {
        debug_assert!(n <= self.geometry.slots_per_buffer - self.slot_off());
        self.pos = self.pos.wrapping_add(n);
        if self.plain {
            self.shared.head.store(self.pos, Ordering::Release);
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
            self.shared.head.store(self.pos, Ordering::Release);
            if self.notifies {
                notify_slow(&self.shared.space_ready, self.config.wait);
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
        self.release();
        if self.avail != self.pos {
            self.enter_buffer();
        } else {
            self.pending = true;
        }
    }

    /// Reads which buffer the segment of `pos` is in; call it only once an
    /// `Acquire` load of `tail` has shown events of the segment (`avail !=
    /// pos` at the segment's start), which publishes the entry.
    fn enter_buffer(&mut self) {
        let b = self.shared.order[self.seg].load(Ordering::Relaxed);
        debug_assert!(b < self.geometry.buffers);
        self.cur = self.shared.storage.buffer(b);
        self.pending = false;
    }

    #[inline(always)]
    fn release(&mut self) {
        self.shared.head.store(self.pos, Ordering::Release);
        self.published = self.pos;
        if self.notifies {
            notify_slow(&self.shared.space_ready, self.config.wait);
        }
    }

    /// Hands back every slot read so far that is not yet released: the
    /// n-buffer's partial buffer, or the plain ring's partial line.
    pub(super) fn release_pending(&mut self) {
        // Other rings store `head` at every event: nothing is ever pending.
        let batches = if self.plain {
            self.pos & self.release_mask != 0
        } else {
            !self.geometry.publish_each
        };
        if batches && self.published != self.pos {
            self.release();
        }
    }

    #[inline]
    fn refresh_data(&mut self) -> bool {
        self.avail = self.shared.tail.load(Ordering::Acquire);
        debug_assert!(self.avail.wrapping_sub(self.pos) <= self.geometry.capacity);
        if self.pending && self.avail != self.pos {
            self.enter_buffer();
        }
        self.avail != self.pos
    }

    /// Nothing is ready: hand back what we have read, and tell `Empty` from
    /// the end of the stream.
    #[cold]
    fn empty_now(&mut self) -> TryPopError {
        self.release_pending();
        // `closed` is stored after the producer's last `tail` store: once we
        // see it, one more read of `tail` sees everything.
        if self.shared.closed.producer.load(Ordering::Acquire) && !self.refresh_data() {
            TryPopError::Disconnected
        } else {
            // If events arrived since our first read, the next call gets them.
            TryPopError::Empty
        }
    }

    /// Waits until an event is ready (true) or the stream ended (false).
    #[cold]
    #[inline(never)]
    fn wait_for_data(&mut self) -> bool {
        if self.refresh_data() {
            return true;
        }
        // Never wait while holding slots the producer could be waiting for.
        self.release_pending();
        let shared = &*self.shared;
        let pos = self.pos;
        let mut avail = self.avail;
        shared.data_ready.wait_until(self.config.wait, || {
            avail = shared.tail.load(Ordering::Acquire);
            avail != pos || shared.closed.producer.load(Ordering::Acquire)
        });
        self.avail = avail;
        // If the wait ended on `closed`, the producer's last `tail` store
        // happened before it (Release/Acquire): read it again.
        self.refresh_data()
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        self.shared.closed.consumer.store(true, Ordering::Release);
        self.shared.space_ready.notify(self.config.wait);
    }
}

/// Drains the channel: yields events until the end of the stream.
impl<T: Copy> Iterator for Consumer<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.pop().ok()
    }
}

impl<T> fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("pos", &self.pos)
            .field("published", &self.published)
            .field("capacity", &self.geometry.capacity)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
