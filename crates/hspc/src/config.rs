//! Channel configuration: the knobs the tuner sweeps, and their validation.

use core::fmt;

use crate::pad::CACHE_LINE;

/// How the producer hands events to the consumer.
///
/// # Examples
///
/// ```
/// use hspc::{Config, Mode};
/// assert_eq!(Config::n_buffer(3, 4096).mode, Mode::NBuffer);
/// assert_eq!(Config::ring(4096).mode, Mode::Ring);
/// assert_eq!(Mode::NBuffer.to_string(), "n_buffer");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Mode {
    /// Seed 004's n-buffering: `buffers` buffers of `buffer_bytes` each.
    /// The producer fills a buffer, then hands it over whole; the consumer
    /// empties it, then hands it back whole. The two threads synchronise
    /// once per buffer, not once per event. The producer fills next the
    /// buffer the consumer handed back last, so while the consumer keeps up
    /// two or three buffers take turns and stay in both CPUs' caches (a
    /// buffer the consumer has partly read is written again only once it is
    /// wholly read).
    /// [`Producer::flush`](crate::Producer::flush) hands over what has been
    /// written so far.
    NBuffer,
    /// A ring of `buffers × buffer_bytes` bytes with a per-event hand-off:
    /// every push is visible to the consumer at once (like rtrb). Head and
    /// tail are cached on each side, so the shared indices are read only
    /// when the cached view runs out.
    Ring,
}

/// How a blocked producer or consumer waits (seed 004 §4.2).
///
/// The spinning ones ([`Spinlock`](Self::Spinlock),
/// [`SpinBackoff`](Self::SpinBackoff), [`SpinPause`](Self::SpinPause)) give
/// the lowest latency and burn a CPU while waiting; the others sleep, and
/// every publication then pays a fence (or, for [`Mutex`](Self::Mutex), a
/// lock), so prefer [`Mode::NBuffer`] with them.
///
/// # Examples
///
/// ```
/// use hspc::{Config, WaitStrategy};
/// let config = Config::default().with_wait(WaitStrategy::SpinPause);
/// assert!(config.wait.spins());
/// assert_eq!(Config::default().wait, WaitStrategy::SpinThenPark);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WaitStrategy {
    /// Sleep on a condition variable; the other side signals it only when a
    /// waiter has announced itself (no lock per hand-off otherwise).
    Condvar,
    /// Every hand-off takes a mutex (the seed's POSIX-mutex variant); a
    /// waiter polls under the mutex and yields the CPU between polls.
    Mutex,
    /// Busy-poll the index word with nothing in the loop (the seed's
    /// "standard" spinlock, seed 003's Linux loop). Burns a CPU.
    Spinlock,
    /// Busy-poll with exponential backoff of spin hints between polls (the
    /// seed's "local spinlock"). Burns a CPU; no system calls.
    SpinBackoff,
    /// Busy-poll with one spin hint (PAUSE / ISB) between polls (the seed's
    /// "hyperthread-aware spinlock"). Burns a CPU; no system calls.
    SpinPause,
    /// Spin with [`Backoff::snooze`](crate::wait::Backoff::snooze) until it
    /// completes, then sleep on a futex. Announced waiters only: no system
    /// call per hand-off while both sides are busy.
    SpinThenPark,
}

impl WaitStrategy {
    /// Every strategy, in a stable order.
    ///
    /// ```
    /// let names: Vec<&str> = hspc::WaitStrategy::ALL.iter().map(|w| w.name()).collect();
    /// assert_eq!(names[0], "condvar");
    /// assert_eq!(names.len(), 6);
    /// ```
    pub const ALL: [WaitStrategy; 6] = [
        WaitStrategy::Condvar,
        WaitStrategy::Mutex,
        WaitStrategy::Spinlock,
        WaitStrategy::SpinBackoff,
        WaitStrategy::SpinPause,
        WaitStrategy::SpinThenPark,
    ];

    /// The stable name (as in serialized configs): "condvar", "mutex",
    /// "spinlock", "spin_backoff", "spin_pause", "spin_then_park".
    ///
    /// ```
    /// use hspc::WaitStrategy;
    /// assert_eq!(WaitStrategy::SpinThenPark.name(), "spin_then_park");
    /// assert_eq!(WaitStrategy::SpinPause.to_string(), "spin_pause");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            WaitStrategy::Condvar => "condvar",
            WaitStrategy::Mutex => "mutex",
            WaitStrategy::Spinlock => "spinlock",
            WaitStrategy::SpinBackoff => "spin_backoff",
            WaitStrategy::SpinPause => "spin_pause",
            WaitStrategy::SpinThenPark => "spin_then_park",
        }
    }

    /// True if a waiter never leaves the CPU (and never makes a system call).
    ///
    /// ```
    /// use hspc::WaitStrategy;
    /// assert!(WaitStrategy::Spinlock.spins());
    /// assert!(!WaitStrategy::SpinThenPark.spins());
    /// ```
    pub const fn spins(self) -> bool {
        matches!(
            self,
            WaitStrategy::Spinlock | WaitStrategy::SpinBackoff | WaitStrategy::SpinPause
        )
    }
}

impl fmt::Display for WaitStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::NBuffer => "n_buffer",
            Mode::Ring => "ring",
        })
    }
}

/// The configuration of a channel; what the tuner searches and stores.
///
/// Sizes are in bytes so that one tuned configuration fits any event type;
/// the capacity in events is `buffer_bytes / size_of::<T>()` per buffer.
///
/// Build one from [`Config::default`], [`Config::n_buffer`] or
/// [`Config::ring`] and the `with_*` methods: the struct is
/// `#[non_exhaustive]`, so a release may add a field without breaking code.
///
/// # Examples
///
/// ```
/// let config = hspc::Config::n_buffer(3, 4096).with_wait(hspc::WaitStrategy::SpinPause);
/// let json = serde_json::to_string(&config).unwrap();
/// assert_eq!(serde_json::from_str::<hspc::Config>(&json).unwrap(), config);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct Config {
    /// n-buffering or per-event ring.
    pub mode: Mode,
    /// Number of buffers: at least 2 in [`Mode::NBuffer`] (the seed's
    /// double/triple/n-buffering); in [`Mode::Ring`], at least 1, and the
    /// ring holds `buffers × buffer_bytes` bytes (the same memory as the
    /// n-buffer configuration with the same numbers).
    pub buffers: usize,
    /// Bytes per buffer (rounded down to whole events).
    pub buffer_bytes: usize,
    /// Bytes of padding before, between and after the buffers, so that the
    /// edge of one buffer does not share a cache line with the next (seed
    /// 004 `p6_rmfalsesharing`). The hand-off words are always on their own
    /// cache-line-aligned lines whatever this says.
    pub padding_bytes: usize,
    /// How a side that cannot proceed waits.
    pub wait: WaitStrategy,
    /// Bytes to shift the producer thread's stack by, relative to the
    /// consumer's (seed 004 `p4_adjuststack`, Figure 2 loop 2), so the two
    /// threads' hot frames do not share cache sets. hspc starts no threads,
    /// so the channel itself ignores it: the application runs its producer's
    /// loop that much lower on the stack, for instance below a frame that is
    /// never inlined and holds an array of that many bytes (the tuner that
    /// writes it measures 0, 32, 64, … 1024). 0 (the default, and what files
    /// without the field read as): no shift.
    pub stack_offset_bytes: usize,
    /// Where the tuner measured this configuration at its best: the producer and
    /// the consumer pinned to these CPUs (seed 004 §4.1, "use processor
    /// affinity"); `None` (the default): left to the OS. hspc starts no threads,
    /// so the channel itself ignores it: pin the two threads there.
    pub affinity: Option<Affinity>,
}

/// The CPUs a producer and a consumer ran on (OS CPU numbers): where a
/// tuned [`Config`] was measured at its best. The channel starts no threads
/// and pins none; the caller pins its two threads there.
///
/// # Examples
///
/// ```
/// let pinned = hspc::Affinity { producer_cpu: 0, consumer_cpu: 2 };
/// let config = hspc::Config::default().with_affinity(Some(pinned));
/// assert_eq!(config.affinity.map(|a| a.consumer_cpu), Some(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Affinity {
    /// The producer's CPU.
    pub producer_cpu: u32,
    /// The consumer's CPU.
    pub consumer_cpu: u32,
}

/// Default buffer size: 4 KiB, the seed's spinlock sweet spot (§4.2, "2048
/// and 4096 bytes gave acceptable performance with much better latency")
/// and one page.
///
/// ```
/// assert_eq!(hspc::Config::default().buffer_bytes, hspc::DEFAULT_BUFFER_BYTES);
/// ```
pub const DEFAULT_BUFFER_BYTES: usize = 4096;

/// Default number of buffers: triple buffering, as the seed's Stage One.
///
/// ```
/// assert_eq!(hspc::Config::default().buffers, hspc::DEFAULT_BUFFERS);
/// ```
pub const DEFAULT_BUFFERS: usize = 3;

impl Default for Config {
    /// Triple buffering of 4 KiB buffers, padding of the target's
    /// false-sharing distance (the alignment of crossbeam-utils'
    /// `CachePadded`: 128 bytes on x86_64 and aarch64), spin then park: fast
    /// while both sides are busy, no CPU burnt when idle.
    fn default() -> Self {
        Self {
            mode: Mode::NBuffer,
            buffers: DEFAULT_BUFFERS,
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            padding_bytes: CACHE_LINE,
            wait: WaitStrategy::SpinThenPark,
            stack_offset_bytes: 0,
            affinity: None,
        }
    }
}

impl Config {
    /// n-buffering with `buffers` buffers of `buffer_bytes` each; the other
    /// fields as in [`Config::default`].
    ///
    /// ```
    /// let config = hspc::Config::n_buffer(4, 1024);
    /// assert_eq!((config.buffers, config.buffer_bytes), (4, 1024));
    /// assert_eq!(config.validate::<u64>()?.capacity(), 4 * 128);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn n_buffer(buffers: usize, buffer_bytes: usize) -> Self {
        Self {
            mode: Mode::NBuffer,
            buffers,
            buffer_bytes,
            ..Self::default()
        }
    }

    /// n-buffering in `total_bytes` with buffers sized to an L1 data cache of
    /// `l1d_bytes` (see [`l1d_bytes`](crate::l1d_bytes) for this CPU's): each
    /// buffer the largest power of two at most a third of the L1d (so that
    /// the buffer being filled, the one being drained and the threads' own
    /// data fit in it) and at most half of `total_bytes`; as many buffers as
    /// `total_bytes` holds, at least two. The other fields as in
    /// [`Config::default`].
    ///
    /// A bigger buffer costs fewer hand-offs, and each hand-off a round trip
    /// between the two CPUs; a buffer beyond the L1d is written back before
    /// it is read. In 32 KiB this gives four buffers of 8 KiB on a 32 KiB
    /// L1d and two of 16 KiB on a 48 KiB L1d (the measurements behind the
    /// rule are in corescope's `docs/channel.md`, "Buffers sized to the L1d").
    ///
    /// ```
    /// use hspc::Config;
    /// let zen4 = Config::n_buffer_for_cache(32 << 10, 32 << 10);
    /// assert_eq!((zen4.buffers, zen4.buffer_bytes), (4, 8 << 10));
    /// let zen5 = Config::n_buffer_for_cache(32 << 10, 48 << 10);
    /// assert_eq!((zen5.buffers, zen5.buffer_bytes), (2, 16 << 10));
    /// // On this CPU, or a 32 KiB L1d where it cannot be read:
    /// let here = Config::n_buffer_for_cache(64 << 10, hspc::l1d_bytes().unwrap_or(32 << 10));
    /// assert!(here.buffers >= 2 && here.buffers * here.buffer_bytes <= 64 << 10);
    /// ```
    pub fn n_buffer_for_cache(total_bytes: usize, l1d_bytes: usize) -> Self {
        let most = (l1d_bytes / 3).min(total_bytes / 2).max(1);
        let buffer_bytes = 1usize << (usize::BITS - 1 - most.leading_zeros());
        Self::n_buffer((total_bytes / buffer_bytes).max(2), buffer_bytes)
    }

    /// A ring of `ring_bytes` bytes with per-event hand-off; the other
    /// fields as in [`Config::default`].
    ///
    /// ```
    /// let (mut tx, mut rx) = hspc::channel::<u32>(hspc::Config::ring(64))?;
    /// tx.push(7).unwrap(); // visible at once, no flush needed
    /// assert_eq!(rx.try_pop(), Ok(7));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn ring(ring_bytes: usize) -> Self {
        Self {
            mode: Mode::Ring,
            buffers: 1,
            buffer_bytes: ring_bytes,
            ..Self::default()
        }
    }

    /// The same configuration with another wait strategy.
    ///
    /// ```
    /// use hspc::{Config, WaitStrategy};
    /// let config = Config::ring(4096).with_wait(WaitStrategy::Condvar);
    /// assert_eq!(config.wait, WaitStrategy::Condvar);
    /// ```
    pub fn with_wait(self, wait: WaitStrategy) -> Self {
        Self { wait, ..self }
    }

    /// The same configuration with another padding (see
    /// [`Config::padding_bytes`]).
    ///
    /// ```
    /// let config = hspc::Config::n_buffer(2, 4096).with_padding(0);
    /// assert_eq!(config.padding_bytes, 0);
    /// ```
    pub fn with_padding(self, padding_bytes: usize) -> Self {
        Self {
            padding_bytes,
            ..self
        }
    }

    /// The same configuration with another producer stack offset (see
    /// [`Config::stack_offset_bytes`]).
    ///
    /// ```
    /// let config = hspc::Config::default().with_stack_offset(256);
    /// assert_eq!(config.stack_offset_bytes, 256);
    /// ```
    pub fn with_stack_offset(self, stack_offset_bytes: usize) -> Self {
        Self {
            stack_offset_bytes,
            ..self
        }
    }

    /// The same configuration with another mode (see [`Config::mode`]).
    ///
    /// ```
    /// use hspc::{Config, Mode};
    /// let config = Config::n_buffer(2, 4096).with_mode(Mode::Ring);
    /// assert_eq!(config.mode, Mode::Ring);
    /// ```
    pub fn with_mode(self, mode: Mode) -> Self {
        Self { mode, ..self }
    }

    /// The same configuration with another number of buffers (see
    /// [`Config::buffers`]).
    ///
    /// ```
    /// let config = hspc::Config::n_buffer(2, 4096).with_buffers(4);
    /// assert_eq!((config.buffers, config.buffer_bytes), (4, 4096));
    /// ```
    pub fn with_buffers(self, buffers: usize) -> Self {
        Self { buffers, ..self }
    }

    /// The same configuration with another buffer size (see
    /// [`Config::buffer_bytes`]).
    ///
    /// ```
    /// let config = hspc::Config::n_buffer(2, 4096).with_buffer_bytes(1024);
    /// assert_eq!((config.buffers, config.buffer_bytes), (2, 1024));
    /// ```
    pub fn with_buffer_bytes(self, buffer_bytes: usize) -> Self {
        Self {
            buffer_bytes,
            ..self
        }
    }

    /// The same configuration with another affinity (see
    /// [`Config::affinity`]).
    ///
    /// ```
    /// use hspc::{Affinity, Config};
    /// let pinned = Affinity { producer_cpu: 0, consumer_cpu: 2 };
    /// let config = Config::default().with_affinity(Some(pinned));
    /// assert_eq!(config.affinity, Some(pinned));
    /// assert_eq!(config.with_affinity(None).affinity, None);
    /// ```
    pub fn with_affinity(self, affinity: Option<Affinity>) -> Self {
        Self { affinity, ..self }
    }

    /// Checks this configuration for events of type `T`, and returns the
    /// geometry it gives: [`channel`](crate::channel) fails with the same
    /// error.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] saying what to change.
    ///
    /// ```
    /// use hspc::{Config, ConfigError};
    /// assert_eq!(Config::n_buffer(2, 64).validate::<u64>()?.capacity(), 16);
    /// assert!(matches!(
    ///     Config::n_buffer(2, 4).validate::<u64>(),
    ///     Err(ConfigError::BufferTooSmall { .. })
    /// ));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn validate<T>(&self) -> Result<Geometry, ConfigError> {
        self.geometry_for(core::mem::size_of::<T>(), core::mem::align_of::<T>())
    }

    /// Checks this configuration for events of `item_bytes` bytes and
    /// alignment `item_align`, and returns the geometry it gives:
    /// [`validate`](Config::validate) without a type at hand. `item_align`
    /// must be a power of two, as every Rust alignment is (another value
    /// gives a meaningless geometry, or a panic in a debug build).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] saying what to change.
    ///
    /// ```
    /// let config = hspc::Config::ring(4096);
    /// assert_eq!(config.geometry_for(24, 8)?, config.validate::<[u64; 3]>()?);
    /// assert!(config.geometry_for(0, 1).is_err());
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn geometry_for(
        &self,
        item_bytes: usize,
        item_align: usize,
    ) -> Result<Geometry, ConfigError> {
        if item_bytes == 0 {
            return Err(ConfigError::ZeroSizedEvent);
        }
        let min_buffers = match self.mode {
            Mode::NBuffer => 2,
            Mode::Ring => 1,
        };
        if self.buffers < min_buffers {
            return Err(ConfigError::TooFewBuffers {
                mode: self.mode,
                buffers: self.buffers,
                min: min_buffers,
            });
        }
        let per_buffer = self.buffer_bytes / item_bytes;
        if per_buffer == 0 {
            return Err(ConfigError::BufferTooSmall {
                buffer_bytes: self.buffer_bytes,
                event_bytes: item_bytes,
            });
        }
        let too_large = || ConfigError::TooLarge {
            buffers: self.buffers,
            buffer_bytes: self.buffer_bytes,
            padding_bytes: self.padding_bytes,
        };
        let capacity = per_buffer.checked_mul(self.buffers).ok_or_else(too_large)?;
        let (buffers, slots_per_buffer) = match self.mode {
            Mode::NBuffer => (self.buffers, per_buffer),
            Mode::Ring => (1, capacity),
        };
        let lead = round_up(self.padding_bytes, item_align).ok_or_else(too_large)?;
        let stride = slots_per_buffer
            .checked_mul(item_bytes)
            .and_then(|b| b.checked_add(self.padding_bytes))
            .and_then(|b| round_up(b, item_align))
            .ok_or_else(too_large)?;
        let total = stride
            .checked_mul(buffers)
            .and_then(|b| b.checked_add(lead))
            .filter(|&b| b <= isize::MAX as usize / 2)
            .ok_or_else(too_large)?;
        Ok(Geometry {
            buffers,
            slots_per_buffer,
            capacity,
            lead_bytes: lead,
            stride_bytes: stride,
            total_bytes: total,
            align: item_align.max(CACHE_LINE),
            publish_each: self.mode == Mode::Ring,
        })
    }
}

fn round_up(x: usize, to: usize) -> Option<usize> {
    debug_assert!(to.is_power_of_two());
    Some(x.checked_add(to - 1)? & !(to - 1))
}

/// The memory layout a [`Config`] gives for one event type: what
/// [`Config::validate`] and [`Config::geometry_for`] return.
///
/// Invariants: `buffers() ≥ 1`, `slots_per_buffer() ≥ 1`, `capacity() =
/// buffers() × slots_per_buffer()` and `total_bytes() ≤ isize::MAX / 2`.
/// The rest of the layout (padding, strides, alignment) is the channel's own.
///
/// # Examples
///
/// ```
/// let g = hspc::Config::n_buffer(3, 4096).validate::<u64>()?;
/// assert_eq!((g.buffers(), g.slots_per_buffer(), g.capacity()), (3, 512, 1536));
/// assert!(g.total_bytes() >= 3 * 4096);
/// # Ok::<(), hspc::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Physical buffers (1 for a ring).
    pub(crate) buffers: usize,
    /// Events per physical buffer.
    pub(crate) slots_per_buffer: usize,
    /// Events the channel holds when full.
    pub(crate) capacity: usize,
    /// Bytes before the first buffer.
    pub(crate) lead_bytes: usize,
    /// Bytes from the start of one buffer to the start of the next.
    pub(crate) stride_bytes: usize,
    /// Bytes of the whole allocation.
    pub(crate) total_bytes: usize,
    /// Alignment of the allocation.
    pub(crate) align: usize,
    /// True if every event is handed over as it is pushed (ring mode).
    pub(crate) publish_each: bool,
}

impl Geometry {
    /// Physical buffers: the configuration's `buffers` in n-buffer mode, 1
    /// for a ring.
    ///
    /// ```
    /// let ring = hspc::Config::ring(256).with_buffers(4);
    /// assert_eq!(ring.validate::<u64>()?.buffers(), 1);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn buffers(&self) -> usize {
        self.buffers
    }

    /// Events per physical buffer (for a ring: the whole ring).
    ///
    /// ```
    /// let g = hspc::Config::n_buffer(2, 100).validate::<[u8; 24]>()?;
    /// assert_eq!(g.slots_per_buffer(), 4); // 100 bytes hold four 24-byte events
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn slots_per_buffer(&self) -> usize {
        self.slots_per_buffer
    }

    /// Events the channel holds when full, as
    /// [`Producer::capacity`](crate::Producer::capacity) will say.
    ///
    /// ```
    /// let config = hspc::Config::ring(1024);
    /// let capacity = config.validate::<u32>()?.capacity();
    /// let (tx, _rx) = hspc::channel::<u32>(config)?;
    /// assert_eq!((capacity, tx.capacity()), (256, 256));
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of the channel's one allocation (buffers and padding; the
    /// hand-off words are allocated apart).
    ///
    /// ```
    /// let g = hspc::Config::n_buffer(3, 4096).with_padding(0).validate::<u64>()?;
    /// assert_eq!(g.total_bytes(), 3 * 4096);
    /// # Ok::<(), hspc::ConfigError>(())
    /// ```
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }
}

/// A [`Config`] that cannot make a channel. The message says what to change.
///
/// # Examples
///
/// ```
/// let err = hspc::channel::<u64>(hspc::Config::n_buffer(1, 4096)).unwrap_err();
/// assert!(matches!(err, hspc::ConfigError::TooFewBuffers { min: 2, .. }));
/// assert!(err.to_string().contains("at least 2"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Fewer buffers than the mode needs.
    #[error("{mode} mode needs at least {min} buffers, the configuration has {buffers}; set `buffers` to {min} or more")]
    TooFewBuffers {
        /// The mode.
        mode: Mode,
        /// What was asked.
        buffers: usize,
        /// The least the mode accepts.
        min: usize,
    },
    /// A buffer smaller than one event.
    #[error("a buffer of {buffer_bytes} bytes cannot hold one {event_bytes}-byte event; raise `buffer_bytes`")]
    BufferTooSmall {
        /// What was asked.
        buffer_bytes: usize,
        /// The size of one event.
        event_bytes: usize,
    },
    /// The buffers do not fit in the address space.
    #[error("{buffers} buffers of {buffer_bytes} bytes with {padding_bytes} bytes of padding do not fit in memory")]
    TooLarge {
        /// What was asked.
        buffers: usize,
        /// What was asked.
        buffer_bytes: usize,
        /// What was asked.
        padding_bytes: usize,
    },
    /// The event type has no size (nothing to transfer).
    #[error("zero-sized event types are not supported; send a unit count instead")]
    ZeroSizedEvent,
}

#[cfg(test)]
mod tests {
    use super::Config;

    #[test]
    fn cache_sized_buffers_fill_the_memory_in_powers_of_two() {
        for total in [0, 1, 100, 4096, 32 << 10, 48 << 10, 1 << 20] {
            for l1d in [0, 1, 2, 3, 4 << 10, 32 << 10, 48 << 10, 64 << 10, 1 << 20] {
                let c = Config::n_buffer_for_cache(total, l1d);
                assert!(c.buffers >= 2, "{total} {l1d}: {c:?}");
                assert!(c.buffer_bytes.is_power_of_two(), "{total} {l1d}: {c:?}");
                assert!(c.buffer_bytes <= (l1d / 3).max(1), "{total} {l1d}: {c:?}");
                if total >= 2 {
                    assert!(c.buffers * c.buffer_bytes <= total, "{total} {l1d}: {c:?}");
                    assert!(c.buffer_bytes <= total / 2, "{total} {l1d}: {c:?}");
                }
            }
        }
        // Not a multiple: the remainder is left unused.
        let c = Config::n_buffer_for_cache(40 << 10, 48 << 10);
        assert_eq!((c.buffers, c.buffer_bytes), (2, 16 << 10));
    }

    /// 20 bytes, align 4: not a power of two, to exercise the rounding.
    #[allow(dead_code)]
    struct Odd([u32; 5]);

    #[test]
    fn geometry_honours_padding_and_alignment() {
        let g = Config::n_buffer(3, 100)
            .with_padding(10)
            .validate::<Odd>()
            .unwrap();
        assert_eq!(g.buffers, 3);
        assert_eq!(g.slots_per_buffer, 5);
        assert_eq!(g.capacity, 15);
        assert_eq!(g.lead_bytes, 12); // 10 rounded up to Odd's alignment (4)
        assert_eq!(g.stride_bytes, 112); // 5 × 20 + 10, rounded up to 4
        assert_eq!(g.total_bytes, 12 + 3 * 112);
        assert!(!g.publish_each);
        let g = Config {
            buffers: 2,
            ..Config::ring(64)
        }
        .validate::<u64>()
        .unwrap();
        assert_eq!((g.buffers, g.slots_per_buffer, g.capacity), (1, 16, 16));
        assert!(g.publish_each);
    }
}
