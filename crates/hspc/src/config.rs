//! Channel configuration: the knobs the tuner sweeps, and their validation.

use core::fmt;

use crate::pad::CACHE_LINE;

/// How the producer hands events to the consumer.
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
    /// [`CACHE_LINE`]-aligned lines whatever this says.
    pub padding_bytes: usize,
    /// How a side that cannot proceed waits.
    pub wait: WaitStrategy,
    /// Bytes to shift the producer thread's stack by, relative to the
    /// consumer's (seed 004 `p4_adjuststack`, Figure 2 loop 2), so the two
    /// threads' hot frames do not share cache sets. hspc starts no threads,
    /// so the channel itself ignores it: run the producer's loop under
    /// [`stack::with_stack_offset`](crate::stack::with_stack_offset) with it.
    /// 0 (the default, and what files without the field read as): no shift.
    pub stack_offset_bytes: usize,
    /// Where the tuner measured this configuration at its best: the producer and
    /// the consumer pinned to these CPUs (seed 004 §4.1, "use processor
    /// affinity"); `None` (the default): left to the OS. hspc starts no threads,
    /// so the channel itself ignores it: pin the two threads there.
    pub affinity: Option<Affinity>,
}

/// The CPUs a producer and a consumer ran on (OS CPU numbers).
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
pub const DEFAULT_BUFFER_BYTES: usize = 4096;

/// Default number of buffers: triple buffering, as the seed's Stage One.
pub const DEFAULT_BUFFERS: usize = 3;

impl Default for Config {
    /// Triple buffering of 4 KiB buffers, [`CACHE_LINE`] padding, spin then
    /// park: fast while both sides are busy, no CPU burnt when idle.
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
    /// n-buffering with `buffers` buffers of `buffer_bytes` each.
    pub fn n_buffer(buffers: usize, buffer_bytes: usize) -> Self {
        Self {
            mode: Mode::NBuffer,
            buffers,
            buffer_bytes,
            ..Self::default()
        }
    }

    /// A ring of `ring_bytes` bytes with per-event hand-off.
    pub fn ring(ring_bytes: usize) -> Self {
        Self {
            mode: Mode::Ring,
            buffers: 1,
            buffer_bytes: ring_bytes,
            ..Self::default()
        }
    }

    /// The same configuration with another wait strategy.
    pub fn with_wait(self, wait: WaitStrategy) -> Self {
        Self { wait, ..self }
    }

    /// The same configuration with another padding.
    pub fn with_padding(self, padding_bytes: usize) -> Self {
        Self {
            padding_bytes,
            ..self
        }
    }

    /// The same configuration with another producer stack offset.
    pub fn with_stack_offset(self, stack_offset_bytes: usize) -> Self {
        Self {
            stack_offset_bytes,
            ..self
        }
    }

    /// Checks this configuration for events of type `T`, and returns the
    /// geometry it gives.
    pub fn validate<T>(&self) -> Result<Geometry, ConfigError> {
        self.geometry_for(core::mem::size_of::<T>(), core::mem::align_of::<T>())
    }

    /// Checks this configuration for events of `item_bytes` bytes and
    /// alignment `item_align`, and returns the geometry it gives.
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

/// The memory layout a [`Config`] gives for one event type.
///
/// Invariants (checked by [`Config::geometry_for`]): `buffers ≥ 1`,
/// `slots_per_buffer ≥ 1`, `capacity = buffers × slots_per_buffer` (for the
/// n-buffer mode) and `total_bytes ≤ isize::MAX / 2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Physical buffers (1 for a ring).
    pub buffers: usize,
    /// Events per physical buffer.
    pub slots_per_buffer: usize,
    /// Events the channel holds when full.
    pub capacity: usize,
    /// Bytes before the first buffer.
    pub lead_bytes: usize,
    /// Bytes from the start of one buffer to the start of the next.
    pub stride_bytes: usize,
    /// Bytes of the whole allocation.
    pub total_bytes: usize,
    /// Alignment of the allocation.
    pub align: usize,
    /// True if every event is handed over as it is pushed (ring mode).
    pub publish_each: bool,
}

/// A [`Config`] that cannot make a channel.
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
