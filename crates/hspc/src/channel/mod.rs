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

#[cfg(not(loom))]
mod chunk;
mod consumer;
mod errors;
mod producer;
mod tuning;

use core::marker::PhantomData;

use crate::config::{Config, ConfigError, Geometry};
use crate::pad::CachePadded;
use crate::signal::Signal;
use crate::storage::{BufRef, Storage};
use crate::sync::{
    atomic::{AtomicBool, AtomicUsize},
    Arc,
};
#[cfg(not(loom))]
pub use chunk::{ReadChunk, WriteChunk};
pub use errors::{PopError, PushError, SliceError, TryPopError, TryPushError};
use tuning::{prefetch_ahead_slots, release_granule, run_prefetch_slots};

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

const _: fn() = || {
    fn send<S: Send>() {}
    send::<Producer<u64>>();
    send::<Consumer<u64>>();
};

#[cfg(test)]
mod tests {
    use super::limit_after;

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
