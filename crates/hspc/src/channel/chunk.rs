//! In-place access: free slots to fill ([`WriteChunk`]) and events to read
//! ([`ReadChunk`]) without a copy through the caller's slice.

use core::mem::MaybeUninit;

use super::{Consumer, Producer};

/// Free slots to fill in place: see [`Producer::write_chunk`].
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
/// let mut chunk = tx.write_chunk(2);
/// for (i, slot) in chunk.as_mut_uninit().iter_mut().enumerate() {
///     slot.write(10 * i as u32);
/// }
/// // SAFETY: both slots of the chunk were written just above.
/// unsafe { chunk.commit(2) };
/// assert_eq!((rx.try_pop(), rx.try_pop()), (Ok(0), Ok(10)));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[cfg(not(loom))]
pub struct WriteChunk<'a, T: Copy> {
    pub(super) slots: &'a mut [MaybeUninit<T>],
    pub(super) producer: &'a mut Producer<T>,
}

#[cfg(not(loom))]
impl<T: Copy> WriteChunk<'_, T> {
    /// Number of slots in the chunk.
    ///
    /// ```
    /// let (mut tx, _rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert_eq!(tx.write_chunk(100).len(), 16);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True if the chunk has no slot (the channel was full).
    ///
    /// ```
    /// let (mut tx, _rx) = hspc::channel::<u32>(hspc::Config::ring(8))?; // 2 slots
    /// tx.push_slice(&[1, 2]).unwrap();
    /// assert!(tx.write_chunk(4).is_empty()); // full
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The slots, to initialise from the front.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// let mut chunk = tx.write_chunk(1);
    /// chunk.as_mut_uninit()[0].write(5);
    /// // SAFETY: the chunk's one slot was written just above.
    /// unsafe { chunk.commit(1) };
    /// assert_eq!(rx.try_pop(), Ok(5));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn as_mut_uninit(&mut self) -> &mut [MaybeUninit<T>] {
        self.slots
    }

    /// Copies a prefix of `src` into the chunk and hands it over; returns
    /// how many events were copied.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert_eq!(tx.write_chunk(2).copy_from(&[1, 2, 3]), 2); // the chunk has 2 slots
    /// assert_eq!(rx.len(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn copy_from(self, src: &[T]) -> usize {
        let n = src.len().min(self.slots.len());
        for (slot, v) in self.slots.iter_mut().zip(&src[..n]) {
            slot.write(*v);
        }
        // SAFETY: the first `n` slots were just written.
        unsafe { self.commit(n) };
        n
    }

    /// Hands over the first `n` slots.
    ///
    /// # Safety
    /// The first `n` slots (`n <= len()`) must have been initialised
    /// through [`as_mut_uninit`](WriteChunk::as_mut_uninit).
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// let mut chunk = tx.write_chunk(4);
    /// chunk.as_mut_uninit()[0].write(1);
    /// // SAFETY: only the first slot was written, and only it is handed over.
    /// unsafe { chunk.commit(1) };
    /// assert_eq!(rx.len(), 1);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub unsafe fn commit(self, n: usize) {
        assert!(n <= self.slots.len(), "commit beyond the chunk");
        if n > 0 {
            self.producer.advance(n);
        }
    }
}

/// Events to read in place: see [`Consumer::read_chunk`].
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
/// tx.push_slice(&[1, 2, 3]).unwrap();
/// let chunk = rx.read_chunk(8).unwrap();
/// let sum: u32 = chunk.as_slice().iter().sum();
/// chunk.commit(2); // the third stays
/// assert_eq!((sum, rx.try_pop()), (6, Ok(3)));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[cfg(not(loom))]
pub struct ReadChunk<'a, T: Copy> {
    pub(super) events: &'a [T],
    pub(super) consumer: &'a mut Consumer<T>,
}

#[cfg(not(loom))]
impl<T: Copy> ReadChunk<'_, T> {
    /// The events.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[4, 5]).unwrap();
    /// assert_eq!(rx.read_chunk(1).unwrap().as_slice(), [4]);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn as_slice(&self) -> &[T] {
        self.events
    }

    /// Number of events in the chunk.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[4, 5, 6]).unwrap();
    /// assert_eq!(rx.read_chunk(2).unwrap().len(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True if the chunk is empty (only when `max` was 0).
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push(4).unwrap();
    /// assert!(rx.read_chunk(0).unwrap().is_empty());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Marks the first `n` events (`n <= len()`) as read, releasing their
    /// slots; the others stay for the next read.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2]).unwrap();
    /// rx.read_chunk(2).unwrap().commit(1);
    /// assert_eq!(rx.try_pop(), Ok(2));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn commit(self, n: usize) {
        assert!(n <= self.events.len(), "commit beyond the chunk");
        if n > 0 {
            self.consumer.advance(n);
        }
    }

    /// Marks every event of the chunk as read.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// tx.push_slice(&[1, 2]).unwrap();
    /// rx.read_chunk(2).unwrap().commit_all();
    /// assert!(rx.is_empty());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn commit_all(self) {
        let n = self.events.len();
        self.commit(n);
    }
}
