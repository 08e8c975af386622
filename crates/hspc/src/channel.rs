//! The channel: one producer, one consumer, a single allocation of slots.
//!
//! # Protocol
//!
//! Positions count events since the channel was made (wrapping `usize`).
//! The producer owns `tail`, the consumer owns `head`; each side also keeps
//! a private cursor that may run ahead of what it has published.
//!
//! - The producer may write position `p` only if `p < head + capacity`
//!   (the slot was released by the consumer), and publishes positions with
//!   a `Release` store of `tail`.
//! - The consumer may read position `p` only if `p < tail`, and releases
//!   positions with a `Release` store of `head`.
//! - Each side reads the other's index with `Acquire` and caches it, so the
//!   shared line is read only when the cached view runs out.
//!
//! The two modes differ only in *when* indices are published:
//! [`Mode::Ring`](crate::Mode::Ring) publishes after every push and pop (per-event hand-off), the
//! n-buffer mode at buffer boundaries (once per buffer, seed 004 §3.4), on
//! [`Producer::flush`], and before a side waits (so neither side ever waits
//! for something the other has done but not yet published).
//!
//! Closing: a dropped producer publishes what it wrote, then sets
//! `producer_closed` (Release); the consumer, finding no data, reads the
//! flag (Acquire) and then `tail` again, so it drains everything before it
//! reports the end. A dropped consumer sets `consumer_closed`; a producer
//! that would wait for space reports [`PushError::Disconnected`] instead.

use core::fmt;
use core::marker::PhantomData;
#[cfg(not(loom))]
use core::mem::MaybeUninit;

use crate::config::{Config, ConfigError, Geometry};
use crate::pad::CachePadded;
use crate::signal::Signal;
use crate::storage::{BufRef, Storage};
use crate::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc,
};

/// The `closed` flags: written once each, read only on slow paths.
struct Closed {
    producer: AtomicBool,
    consumer: AtomicBool,
}

/// The state both halves share. Hot words written by different threads
/// are on different cache lines.
struct Shared<T> {
    /// Positions `< tail` are written and published by the producer.
    tail: CachePadded<AtomicUsize>,
    /// Positions `< head` are read and released by the consumer.
    head: CachePadded<AtomicUsize>,
    closed: CachePadded<Closed>,
    /// The consumer waits here for data.
    data_ready: Signal,
    /// The producer waits here for space.
    space_ready: Signal,
    /// In n-buffer mode, the buffer each of the last `buffers` segments is
    /// written in: the segment of positions `[s × slots_per_buffer, (s + 1)
    /// × slots_per_buffer)` lives in buffer `order[s mod buffers]` (see
    /// [`FreeBuffers`]). The producer stores an entry before it writes the
    /// segment's first event, so the `Release` store of `tail` that
    /// publishes any of its events also publishes the entry; the consumer
    /// loads it after an `Acquire` load of `tail` has shown that events of
    /// the segment are there. The producer rewrites the entry `buffers`
    /// segments later, which it may only do after the consumer has released
    /// the whole segment, and so has read the entry. Relaxed atomics: the
    /// ordering comes from `tail` and `head`. One entry (unused) in ring mode.
    order: Box<[AtomicUsize]>,
    storage: Storage<T>,
}

/// The producer's free buffers in n-buffer mode, a stack: the buffer the
/// consumer released last is taken first. While the consumer keeps up, two
/// or three buffers take turns and the others rest, so both CPUs' caches
/// hold the buffers in use; a fixed rotation walked through all of them,
/// a working set of the whole capacity (docs/channel.md, "The n-buffer
/// takes the buffer freed last").
struct FreeBuffers {
    /// Buffer indices; `stack[..len]` are free, the last released on top.
    stack: Box<[usize]>,
    len: usize,
    /// Start of the oldest segment the producer has not yet seen released.
    oldest_pos: usize,
    /// That segment's index in `order` (its number mod `buffers`).
    oldest: usize,
}

/// The writing half of a channel: see [`channel`].
///
/// `Send` but not `Sync`: exactly one thread pushes at a time, and every
/// push takes `&mut self`.
///
/// ```compile_fail
/// fn is_sync<S: Sync>() {}
/// is_sync::<hspc::Producer<u64>>();
/// ```
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::default())?;
/// tx.push(1).unwrap();
/// tx.flush(); // n-buffer mode hands over whole buffers, or on flush
/// assert_eq!(rx.try_pop(), Ok(1));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Next position to write. Invariant: `pos - head_seen <= capacity`.
    pos: usize,
    /// Positions `< limit` may be written: `head_seen + capacity` in ring
    /// mode; in n-buffer mode the start of the oldest segment not released
    /// + `capacity`, so that a position below it always has a buffer.
    limit: usize,
    /// Last value stored into `tail` in n-buffer mode (`published <= pos`);
    /// not maintained in ring mode, where `tail` is always `pos`.
    published: usize,
    /// The segment of `pos`: its number mod `buffers`, an index of `order`.
    seg: usize,
    /// The start of the buffer of `pos` (in n-buffer mode the one `order`
    /// names for `seg`).
    cur: BufRef<T>,
    /// In n-buffer mode: the segment of `pos` has no buffer yet. Set at each
    /// buffer boundary and cleared as a free buffer is taken; it stays set
    /// while all are in use, and then `pos == limit`, so nothing is written
    /// before [`Producer::refresh_space`] finds one free.
    pending: bool,
    /// In n-buffer mode, the buffers the consumer has released.
    free: FreeBuffers,
    /// Offset of `pos` in its buffer (read it through `slot_off`). Invariant:
    /// `off < geometry.slots_per_buffer`; not maintained in a masked ring.
    off: usize,
    /// A ring whose slot count is a power of two: the slot of `pos` is
    /// `pos & mask`, so the per-event path carries one counter, not two.
    masked: bool,
    /// `slots_per_buffer - 1` in a masked ring.
    mask: usize,
    /// A masked ring whose wait strategy spins: the per-event work is a
    /// slot access, a mask and one publication.
    plain: bool,
    /// In the plain ring, how many slots ahead of `pos` each push asks for
    /// the line in the writable state ([`crate::prefetch`]); 0: never (other
    /// modes, or a CPU without the instruction).
    prefetch_ahead: usize,
    /// In n-buffer mode, how many slots ahead of each run it copies the
    /// producer asks for the lines in the writable state (0: never; see
    /// [`prefetch_window`]).
    run_prefetch: usize,
    geometry: Geometry,
    config: Config,
    /// `!config.wait.spins()`: publications must notify the other side.
    notifies: bool,
    _not_sync: PhantomData<core::cell::Cell<()>>,
}

/// The reading half of a channel: see [`channel`].
///
/// `Send` but not `Sync`: exactly one thread pops at a time, and every pop
/// takes `&mut self`.
///
/// ```compile_fail
/// fn is_sync<S: Sync>() {}
/// is_sync::<hspc::Consumer<u64>>();
/// ```
///
/// ```
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::default())?;
/// tx.push_slice(&[1, 2, 3]).unwrap();
/// drop(tx); // hands over what is left, then ends the stream
/// assert_eq!(rx.collect::<Vec<_>>(), [1, 2, 3]); // a consumer is an iterator
/// # Ok::<(), hspc::ConfigError>(())
/// ```
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Next position to read. Invariant: `pos <= tail_seen`.
    pos: usize,
    /// Last `tail` seen: positions `< avail` may be read.
    avail: usize,
    /// Last value stored into `head` in n-buffer mode (`published <= pos`),
    /// or by `release_pending` in the plain ring; not maintained in other
    /// rings, where `head` is always `pos`.
    published: usize,
    /// As the producer's `seg` and `cur`.
    seg: usize,
    cur: BufRef<T>,
    /// In n-buffer mode: the segment of `pos` is not yet known to be
    /// published, so its buffer (`order`) is not read yet; then `pos ==
    /// avail`, and [`Consumer::refresh_data`] reads it once it is.
    pending: bool,
    /// As the producer's `off`, `masked`, `mask` and `plain`.
    off: usize,
    masked: bool,
    mask: usize,
    plain: bool,
    /// The plain ring releases read slots a [`CACHE_LINE`](crate::pad::CACHE_LINE)
    /// at a time (128 bytes on x86_64, the unit in which two cores interfere):
    /// `head` is stored when `pos & release_mask == 0` (and whenever the
    /// consumer finds the ring empty or waits), so the producer never writes
    /// into the line the consumer is still reading and the `head` line moves
    /// once per line of events, not once per event. Events per line minus 1,
    /// at most half the capacity (0: every event, for events of a line or more).
    release_mask: usize,
    /// As the producer's `run_prefetch`, for reading.
    run_prefetch: usize,
    geometry: Geometry,
    config: Config,
    /// `!config.wait.spins()`: publications must notify the other side.
    notifies: bool,
    _not_sync: PhantomData<core::cell::Cell<()>>,
}

/// The notification of a non-spinning strategy, out of the hot path so
/// that the push and pop loops stay small (and keep their state in
/// registers).
#[cold]
#[inline(never)]
fn notify_slow(signal: &Signal, wait: crate::config::WaitStrategy) {
    signal.notify(wait);
}

/// The plain ring's consumer, about to read an event of the line the
/// producer is still filling, lets it go on first: one spin hint (`PAUSE`),
/// tens of cycles. This is FastForward's *temporal slipping* (Giacomoni,
/// Moseley and Vachharajani, PPoPP 2008) in its smallest form. A consumer
/// that keeps up reads each line while the producer writes it, so the line
/// moves to the consumer and back for every few events, and every store of
/// the producer that finds it gone waits a cross-core round trip; slipped a
/// little, the consumer finds more of the line written when it comes. The
/// event is returned all the same: no call waits for anything but the hint.
/// Only while the producer streams (at least two events ahead), so a lone
/// event's latency is unchanged. Measured on the Zen 4 guest of
/// docs/channel.md ("The consumer slips"), 8-byte events one at a time with
/// the CPUs close: 1.42× the ring without it (quartiles 1.23–1.56), and a
/// ping-pong's round trip 110 ns against 104 (with a slip at one event ahead
/// as well: 187 ns).
#[inline(always)]
fn slip() {
    core::hint::spin_loop();
}

/// True when the plain ring's consumer, with `ahead` events published
/// before it (this one included), reads the line the producer is streaming
/// into: two to a release granule (`release_mask + 1`, a line) of events
/// ahead. One event ahead is a lone event, read at once; rings of events of
/// a line or more (`release_mask` 0) never slip.
#[inline(always)]
fn streaming_into_line(ahead: usize, release_mask: usize) -> bool {
    (2..=release_mask + 1).contains(&ahead)
}

/// Makes a channel for events of type `T` laid out as `config` says.
///
/// # Examples
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::n_buffer(2, 64))?;
/// let t = std::thread::spawn(move || {
///     for i in 0..1000 {
///         tx.push(i).unwrap();
///     }
///     // Dropping the producer hands over the last, partial buffer.
/// });
/// let got: Vec<u64> = rx.by_ref().collect();
/// assert_eq!(got, (0..1000).collect::<Vec<_>>());
/// t.join().unwrap();
/// # Ok::<(), hspc::ConfigError>(())
/// ```
pub fn channel<T: Copy + Send>(config: Config) -> Result<(Producer<T>, Consumer<T>), ConfigError> {
    let geometry = config.validate::<T>()?;
    let storage = Storage::new(geometry);
    let first = storage.buffer(0);
    let masked = geometry.publish_each && geometry.slots_per_buffer.is_power_of_two();
    let mask = geometry.slots_per_buffer - 1;
    let plain = masked && config.wait.spins();
    let release_mask = if plain {
        release_granule(core::mem::size_of::<T>(), geometry.capacity) - 1
    } else {
        0
    };
    let prefetch_ahead = if plain && crate::prefetch::for_write_supported() {
        prefetch_ahead_slots(core::mem::size_of::<T>(), geometry.capacity)
    } else {
        0
    };
    let run_prefetch = |supported: bool| {
        if !geometry.publish_each && supported {
            run_prefetch_slots(core::mem::size_of::<T>(), geometry.slots_per_buffer)
        } else {
            0
        }
    };
    let shared = Arc::new(Shared {
        tail: CachePadded::new(AtomicUsize::new(0)),
        head: CachePadded::new(AtomicUsize::new(0)),
        closed: CachePadded::new(Closed {
            producer: AtomicBool::new(false),
            consumer: AtomicBool::new(false),
        }),
        data_ready: Signal::new(),
        space_ready: Signal::new(),
        order: (0..geometry.buffers).map(|_| AtomicUsize::new(0)).collect(),
        storage,
    });
    let producer = Producer {
        shared: shared.clone(),
        pos: 0,
        limit: geometry.capacity,
        published: 0,
        seg: 0,
        cur: first,
        pending: false,
        free: FreeBuffers::new(geometry.buffers),
        off: 0,
        masked,
        mask,
        plain,
        prefetch_ahead,
        run_prefetch: run_prefetch(crate::prefetch::for_write_supported()),
        geometry,
        config,
        notifies: !config.wait.spins(),
        _not_sync: PhantomData,
    };
    let consumer = Consumer {
        shared,
        pos: 0,
        avail: 0,
        published: 0,
        seg: 0,
        cur: first,
        pending: false,
        off: 0,
        masked,
        mask,
        plain,
        release_mask,
        run_prefetch: run_prefetch(crate::prefetch::FOR_READ),
        geometry,
        config,
        notifies: !config.wait.spins(),
        _not_sync: PhantomData,
    };
    Ok((producer, consumer))
}

impl FreeBuffers {
    /// Segment 0 is in buffer 0; the others are free, buffer 1 on top (so
    /// the first lap goes 0, 1, 2, … as a rotation would).
    fn new(buffers: usize) -> Self {
        let mut stack = vec![0; buffers].into_boxed_slice();
        for (slot, b) in stack.iter_mut().zip((1..buffers).rev()) {
            *slot = b;
        }
        Self {
            stack,
            len: buffers.saturating_sub(1),
            oldest_pos: 0,
            oldest: 0,
        }
    }
}

/// The n-buffer producer's write limit once the consumer's `head` is seen:
/// the start of the oldest segment that `head` has not wholly passed, plus
/// `capacity`. `oldest_pos` is a segment start at or below `head`. A
/// partly read segment keeps its buffer, so positions past `head +
/// capacity - slots_per_buffer` wait for it (a fixed rotation could write
/// them into the part already read; a buffer taken from the free stack
/// must be free as a whole).
fn limit_after(head: usize, oldest_pos: usize, slots_per_buffer: usize, capacity: usize) -> usize {
    let whole = head.wrapping_sub(oldest_pos) / slots_per_buffer * slots_per_buffer;
    oldest_pos.wrapping_add(whole).wrapping_add(capacity)
}

/// `i + 1` mod `n`.
#[inline]
fn next_index(i: usize, n: usize) -> usize {
    if i + 1 == n {
        0
    } else {
        i + 1
    }
}

/// Events the plain ring's consumer releases at once: the events of one
/// [`CACHE_LINE`](crate::pad::CACHE_LINE) (a power of two, rounded down),
/// at most half of `capacity` (a power of two in a plain ring), at least 1.
fn release_granule(event_bytes: usize, capacity: usize) -> usize {
    let per_line = (crate::pad::CACHE_LINE / event_bytes.max(1)).max(1);
    let per_line = 1 << per_line.ilog2();
    per_line.min(capacity / 2).max(1)
}

/// Slots the plain ring's producer prefetches ahead of itself:
/// [`AHEAD_BYTES`](crate::prefetch::AHEAD_BYTES) of events, at most half of
/// `capacity`, at least 1.
fn prefetch_ahead_slots(event_bytes: usize, capacity: usize) -> usize {
    (crate::prefetch::AHEAD_BYTES / event_bytes.max(1)).clamp(1, (capacity / 2).max(1))
}

/// Slots the n-buffer's copies prefetch ahead of themselves:
/// [`AHEAD_BYTES`](crate::prefetch::AHEAD_BYTES) of events, at most a
/// buffer, at least 1.
fn run_prefetch_slots(event_bytes: usize, slots_per_buffer: usize) -> usize {
    (crate::prefetch::AHEAD_BYTES / event_bytes.max(1)).clamp(1, slots_per_buffer.max(1))
}

/// A copy of `len` slots from offset `off` of buffer `cur`, by a side
/// that may touch `known` positions past its own (free ones for the
/// producer, published ones for the consumer; `len <= known`).
struct Run<T> {
    cur: BufRef<T>,
    off: usize,
    len: usize,
    known: usize,
}

/// Asks for the lines of the positions `distance` past each position of
/// `run`, as far as `run.known` allows: the rest of the run's buffer, then
/// the start of the next segment's buffer (`next`; [`window`]). Bounded
/// by `known`, a prefetch never takes a line the other side still uses.
///
/// Why: in n-buffer mode the copies move whole runs of lines that the other
/// CPU last held (the producer takes back lines the consumer read a lap ago,
/// the consumer fetches lines the producer just wrote). Asked for ahead, the
/// lines are on their way while the copy before them runs, instead of one
/// miss at a time as the copy reaches them (docs/channel.md, "The
/// n-buffer's copies ask for their lines ahead").
#[inline]
fn prefetch_ahead_of<T: Copy>(
    storage: &Storage<T>,
    slots_per_buffer: usize,
    run: Run<T>,
    distance: usize,
    next: impl FnOnce() -> Option<BufRef<T>>,
    write: bool,
) {
    let to = (run.len + distance).min(run.known);
    let [here, there] = window(slots_per_buffer, run.off, distance, to);
    if here.0 < here.1 {
        storage.prefetch_slots(run.cur, here.0, here.1, write);
    }
    if there.0 < there.1 {
        if let Some(b) = next() {
            storage.prefetch_slots(b, there.0, there.1, write);
        }
    }
}

/// The slots of the positions `from..to` past a side at offset `off` of a
/// buffer of `slots_per_buffer` slots: `[(from, to) in this buffer, (from,
/// to) in the next one]`, each empty (`from >= to`) where the window does
/// not reach it. Position `r` lies at offset `off + r` of this buffer while
/// that is inside it, and at `r - (slots_per_buffer - off)` of the next one
/// after. The window must end within the next buffer (`to <=
/// slots_per_buffer - off + slots_per_buffer`), as a run of this buffer
/// plus a prefetch distance of at most a buffer does.
fn window(slots_per_buffer: usize, off: usize, from: usize, to: usize) -> [(usize, usize); 2] {
    debug_assert!(off < slots_per_buffer);
    let split = slots_per_buffer - off;
    debug_assert!(to <= split + slots_per_buffer);
    let here = (off + from.min(split), off + to.min(split));
    let next = (from.max(split) - split, to.max(split) - split);
    [here, next]
}

/// [`Producer::try_push`] failed; the event is given back.
///
/// ```
/// use hspc::TryPushError;
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(16))?; // 2 slots
/// tx.try_push(1).unwrap();
/// tx.try_push(2).unwrap();
/// assert!(matches!(tx.try_push(3), Err(TryPushError::Full(3))));
/// drop(rx);
/// assert!(matches!(tx.try_push(3), Err(TryPushError::Disconnected(3))));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryPushError<T> {
    /// No free slot now.
    #[error("the channel is full")]
    Full(T),
    /// No free slot, and the consumer is gone: no slot will ever free up.
    #[error("the consumer was dropped")]
    Disconnected(T),
}

/// [`Producer::push`] failed; the event is given back.
///
/// ```
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
/// drop(rx);
/// tx.push(1).unwrap(); // a free slot: accepted (and lost)
/// assert!(matches!(tx.push(2), Err(hspc::PushError::Disconnected(2))));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PushError<T> {
    /// The channel was full and the consumer is gone.
    #[error("the consumer was dropped")]
    Disconnected(T),
}

/// [`Consumer::try_pop`] found no event.
///
/// ```
/// use hspc::TryPopError;
/// let (tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
/// assert_eq!(rx.try_pop(), Err(TryPopError::Empty));
/// drop(tx);
/// assert_eq!(rx.try_pop(), Err(TryPopError::Disconnected));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TryPopError {
    /// No event now.
    #[error("the channel is empty")]
    Empty,
    /// No event, and the producer is gone: the stream has ended.
    #[error("the producer was dropped and every event was received")]
    Disconnected,
}

/// [`Consumer::pop`] found the end of the stream.
///
/// ```
/// let (mut tx, mut rx) = hspc::channel::<u64>(hspc::Config::ring(64))?;
/// tx.push(5).unwrap();
/// drop(tx);
/// assert_eq!(rx.pop(), Ok(5)); // everything pushed arrives first
/// assert_eq!(rx.pop(), Err(hspc::PopError::Disconnected));
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PopError {
    /// The producer is gone and every event was received.
    #[error("the producer was dropped and every event was received")]
    Disconnected,
}

/// A blocking slice transfer stopped because the other half was dropped.
///
/// ```
/// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(16))?; // 2 slots
/// drop(rx);
/// let err = tx.push_slice(&[1, 2, 3]).unwrap_err();
/// assert_eq!(err.transferred, 2);
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the other half of the channel was dropped after {transferred} events of the slice")]
pub struct SliceError {
    /// Events of the slice transferred before the end.
    pub transferred: usize,
}

impl<T> fmt::Debug for TryPushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryPushError::Full(_) => "Full(..)",
            TryPushError::Disconnected(_) => "Disconnected(..)",
        })
    }
}

impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Disconnected(..)")
    }
}

impl<T> TryPushError<T> {
    /// The event that was not sent.
    ///
    /// ```
    /// let (mut tx, _rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
    /// tx.try_push(1).unwrap();
    /// assert_eq!(tx.try_push(2).unwrap_err().into_inner(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TryPushError::Full(v) | TryPushError::Disconnected(v) => v,
        }
    }
}

impl<T> PushError<T> {
    /// The event that was not sent.
    ///
    /// ```
    /// let (mut tx, rx) = hspc::channel::<u64>(hspc::Config::ring(8))?; // 1 slot
    /// drop(rx);
    /// tx.push(1).unwrap();
    /// assert_eq!(tx.push(2).unwrap_err().into_inner(), 2);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            PushError::Disconnected(v) => v,
        }
    }
}

impl<T: Copy> Producer<T> {
    /// Sends `value` if a slot is free now.
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?; // 16 slots
    /// assert!(tx.try_push(1).is_ok());
    /// assert_eq!(rx.try_pop(), Ok(1));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    #[inline]
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
    fn advance(&mut self, n: usize) {
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
    #[inline]
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
    fn advance(&mut self, n: usize) {
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
    fn release_pending(&mut self) {
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
    slots: &'a mut [MaybeUninit<T>],
    producer: &'a mut Producer<T>,
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
    events: &'a [T],
    consumer: &'a mut Consumer<T>,
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

const _: fn() = || {
    fn send<S: Send>() {}
    send::<Producer<u64>>();
    send::<Consumer<u64>>();
};

#[cfg(test)]
mod tests {
    use super::{
        limit_after, prefetch_ahead_slots, release_granule, run_prefetch_slots,
        streaming_into_line, window,
    };
    use crate::pad::CACHE_LINE;
    use crate::prefetch::AHEAD_BYTES;

    #[test]
    fn release_granule_is_a_line_of_events_within_half_the_ring() {
        let line = CACHE_LINE;
        // Eight-byte events: a line of them, in a large ring.
        assert_eq!(release_granule(8, 4096), line / 8);
        // Events of a line or more: every event.
        assert_eq!(release_granule(line, 512), 1);
        assert_eq!(release_granule(4 * line, 512), 1);
        // Not a power of two per line: rounded down to a power of two.
        assert_eq!(
            release_granule(24, 4096),
            (line / 24).next_power_of_two() / 2
        );
        // Small rings: at most half of them, at least one.
        assert_eq!(release_granule(8, 4), 2);
        assert_eq!(release_granule(8, 2), 1);
        assert_eq!(release_granule(8, 1), 1);
        assert_eq!(release_granule(1, 1 << 20), line);
    }

    #[test]
    fn prefetch_reaches_a_fixed_distance_within_half_the_ring() {
        // The probe's channels: 32 KiB of 8- or 64-byte events.
        assert_eq!(prefetch_ahead_slots(8, 4096), AHEAD_BYTES / 8);
        assert_eq!(prefetch_ahead_slots(64, 512), AHEAD_BYTES / 64);
        // A small ring: never more than half of it ahead.
        assert_eq!(prefetch_ahead_slots(8, 16), 8);
        assert_eq!(prefetch_ahead_slots(8, 2), 1);
        assert_eq!(prefetch_ahead_slots(8, 1), 1);
        // Events larger than the distance: the next event.
        assert_eq!(prefetch_ahead_slots(4 * AHEAD_BYTES, 64), 1);
    }

    #[test]
    fn the_consumer_slips_only_behind_a_streaming_producer_in_its_line() {
        // Eight-byte events, 16 to a line: a lone event is read at once, two
        // to a line's worth ahead slip, more than a line ahead do not.
        let mask = release_granule(8, 4096) - 1;
        assert!(!streaming_into_line(1, mask));
        assert!(streaming_into_line(2, mask));
        assert!(streaming_into_line(mask + 1, mask));
        assert!(!streaming_into_line(mask + 2, mask));
        assert!(!streaming_into_line(4096, mask));
        // 64-byte events, two to a line: only two ahead.
        let mask = release_granule(64, 512) - 1;
        assert_eq!(
            (1..=4)
                .map(|a| streaming_into_line(a, mask))
                .collect::<Vec<_>>(),
            [false, true, false, false]
        );
        // Events of a line or more: never.
        let mask = release_granule(CACHE_LINE, 512) - 1;
        assert!((1..=512).all(|a| !streaming_into_line(a, mask)));
    }

    #[test]
    fn run_prefetch_reaches_a_fixed_distance_within_a_buffer() {
        // The probe's n-buffer: 4 buffers of 8 KiB.
        assert_eq!(run_prefetch_slots(8, 1024), AHEAD_BYTES / 8);
        assert_eq!(run_prefetch_slots(64, 128), AHEAD_BYTES / 64);
        // Small buffers: never more than one buffer ahead, at least one slot.
        assert_eq!(run_prefetch_slots(8, 16), 16);
        assert_eq!(run_prefetch_slots(4 * AHEAD_BYTES, 64), 1);
    }

    /// Every window that ends within the next buffer, at every offset of
    /// small buffers: the two ranges hold exactly the window's positions,
    /// in order, each at its slot (this buffer while inside it, then the
    /// next from 0), and never a slot outside a buffer.
    #[test]
    fn window_maps_each_position_to_its_slot_once() {
        for spb in 1..=9 {
            for off in 0..spb {
                let end = spb - off + spb;
                for from in 0..=end {
                    for to in from..=end {
                        let [here, next] = window(spb, off, from, to);
                        let mut got = Vec::new();
                        got.extend((here.0..here.1).map(|s| (0, s)));
                        got.extend((next.0..next.1).map(|s| (1, s)));
                        let want: Vec<(usize, usize)> = (from..to)
                            .map(|r| {
                                if off + r < spb {
                                    (0, off + r)
                                } else {
                                    (1, off + r - spb)
                                }
                            })
                            .collect();
                        assert_eq!(got, want, "spb {spb} off {off} window {from}..{to}");
                        assert!(here.1 <= spb && next.1 <= spb);
                    }
                }
            }
        }
    }

    #[test]
    fn the_limit_stops_at_the_oldest_segment_not_wholly_released() {
        // 4 buffers of 8 slots; the oldest unreleased segment starts at 16.
        for (head, limit) in [(16, 48), (17, 48), (23, 48), (24, 56), (31, 56), (40, 72)] {
            assert_eq!(limit_after(head, 16, 8, 32), limit, "head {head}");
        }
        // Positions wrap: a segment start just below usize::MAX.
        let start = usize::MAX - 7;
        assert_eq!(
            limit_after(start.wrapping_add(9), start, 8, 32),
            start.wrapping_add(40)
        );
    }

    /// Buffers used by the producer's segments, one per buffer's worth of
    /// events pushed, with the consumer reading `lag` buffers behind.
    #[cfg(not(loom))]
    fn buffers_taken(lag: usize, segments: usize) -> Vec<usize> {
        use core::sync::atomic::Ordering;
        let spb = 8;
        let (mut tx, mut rx) = crate::channel::<u64>(crate::Config::n_buffer(4, 64)).unwrap();
        let (mut sent, mut got) = (0u64, 0u64);
        let mut taken = Vec::new();
        for s in 0..segments {
            for i in 0..spb {
                tx.try_push(sent).unwrap();
                sent += 1;
                if i == 0 {
                    // The segment's first event is written: it has its buffer.
                    taken.push(tx.shared.order[tx.seg].load(Ordering::Relaxed));
                }
            }
            if s >= lag {
                for _ in 0..spb {
                    assert_eq!(rx.try_pop(), Ok(got));
                    got += 1;
                }
            }
        }
        taken
    }

    #[cfg(not(loom))]
    #[test]
    fn a_consumer_that_keeps_up_leaves_two_buffers_taking_turns() {
        // A rotation would walk 0, 1, 2, 3, 0, … whatever the consumer does.
        assert_eq!(buffers_taken(0, 8), [0, 1, 0, 1, 0, 1, 0, 1]);
        // One buffer behind: three take turns; the fourth rests.
        let taken = buffers_taken(1, 12);
        assert_eq!(&taken[..3], [0, 1, 2]);
        assert!(taken.iter().all(|&b| b < 3), "{taken:?}");
        // Three behind: every buffer is needed.
        let mut taken = buffers_taken(3, 12);
        taken.sort_unstable();
        taken.dedup();
        assert_eq!(taken, [0, 1, 2, 3]);
    }

    #[cfg(not(loom))]
    #[test]
    fn a_partly_read_buffer_is_not_written_until_it_is_wholly_read() {
        let (mut tx, mut rx) = crate::channel::<u64>(crate::Config::n_buffer(4, 64)).unwrap();
        assert_eq!(tx.try_push_slice(&(0..40).collect::<Vec<_>>()), 32);
        let mut dst = [0u64; 4];
        assert_eq!(rx.try_pop_slice(&mut dst), Ok(4));
        assert_eq!(dst, [0, 1, 2, 3]);
        // Found empty of more? No: 28 remain. Release the partial buffer the
        // way a waiting consumer does, then look from the producer's side.
        rx.release_pending();
        assert_eq!(tx.free_slots(), 0);
        assert_eq!(tx.try_push_slice(&[32]), 0);
        // The rest of the first buffer read: a whole buffer frees.
        assert_eq!(rx.try_pop_slice(&mut dst), Ok(4));
        assert_eq!(tx.free_slots(), 8);
        assert_eq!(tx.try_push_slice(&(32..40).collect::<Vec<_>>()), 8);
        tx.flush();
        let mut all = vec![0u64; 64];
        let mut n = 0;
        while let Ok(k) = rx.try_pop_slice(&mut all[n..]) {
            n += k;
        }
        assert_eq!(all[..n], (8..40).collect::<Vec<_>>());
    }
}
