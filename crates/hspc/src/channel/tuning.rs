//! The plain ring's and the n-buffer's tuned distances: how many events the
//! consumer releases at once, how far ahead each side prefetches, and when
//! the consumer slips behind a streaming producer.

use crate::storage::{BufRef, Storage};

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
pub(super) fn slip() {
    core::hint::spin_loop();
}

/// True when the plain ring's consumer, with `ahead` events published
/// before it (this one included), reads the line the producer is streaming
/// into: two to a release granule (`release_mask + 1`, a line) of events
/// ahead. One event ahead is a lone event, read at once; rings of events of
/// a line or more (`release_mask` 0) never slip.
#[inline(always)]
pub(super) fn streaming_into_line(ahead: usize, release_mask: usize) -> bool {
    (2..=release_mask + 1).contains(&ahead)
}

/// Events the plain ring's consumer releases at once: the events of one
/// [`CACHE_LINE`](crate::pad::CACHE_LINE) (a power of two, rounded down),
/// at most half of `capacity` (a power of two in a plain ring), at least 1.
pub(super) fn release_granule(event_bytes: usize, capacity: usize) -> usize {
    let per_line = (crate::pad::CACHE_LINE / event_bytes.max(1)).max(1);
    let per_line = 1 << per_line.ilog2();
    per_line.min(capacity / 2).max(1)
}

/// Slots the plain ring's producer prefetches ahead of itself:
/// [`AHEAD_BYTES`](crate::prefetch::AHEAD_BYTES) of events, at most half of
/// `capacity`, at least 1.
pub(super) fn prefetch_ahead_slots(event_bytes: usize, capacity: usize) -> usize {
    (crate::prefetch::AHEAD_BYTES / event_bytes.max(1)).clamp(1, (capacity / 2).max(1))
}

/// Slots the n-buffer's copies prefetch ahead of themselves:
/// [`AHEAD_BYTES`](crate::prefetch::AHEAD_BYTES) of events, at most a
/// buffer, at least 1.
pub(super) fn run_prefetch_slots(event_bytes: usize, slots_per_buffer: usize) -> usize {
    (crate::prefetch::AHEAD_BYTES / event_bytes.max(1)).clamp(1, slots_per_buffer.max(1))
}

/// A copy of `len` slots from offset `off` of buffer `cur`, by a side
/// that may touch `known` positions past its own (free ones for the
/// producer, published ones for the consumer; `len <= known`).
pub(super) struct Run<T> {
    pub(super) cur: BufRef<T>,
    pub(super) off: usize,
    pub(super) len: usize,
    pub(super) known: usize,
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
///
/// Only copies of at most `distance` slots ask ([`asks_ahead`]).
#[inline]
pub(super) fn prefetch_ahead_of<T: Copy>(
    storage: &Storage<T>,
    slots_per_buffer: usize,
    run: Run<T>,
    distance: usize,
    next: impl FnOnce() -> Option<BufRef<T>>,
    write: bool,
) {
    if !asks_ahead(run.len, distance) {
        return;
    }
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

/// True if a copy of `len` slots asks for the lines `distance` slots ahead:
/// only a copy no longer than the distance does. A longer copy keeps enough
/// of its own misses in flight, and asking ahead only slowed it: on a Zen 5
/// guest (AMD EPYC family 26 model 2, 2 vCPUs; docs/channel.md, "Long copies
/// ask for nothing ahead"), 64-byte events in calls of 4–16 KiB moved 1.35–1.51×
/// the events without the producer's prefetch, 8-byte events in 16 KiB calls
/// 1.21×, while calls of 2 KiB (at the distance) still gained 3–8 % by it.
#[inline(always)]
pub(super) fn asks_ahead(len: usize, distance: usize) -> bool {
    len <= distance
}

/// The slots of the positions `from..to` past a side at offset `off` of a
/// buffer of `slots_per_buffer` slots: `[(from, to) in this buffer, (from,
/// to) in the next one]`, each empty (`from >= to`) where the window does
/// not reach it. Position `r` lies at offset `off + r` of this buffer while
/// that is inside it, and at `r - (slots_per_buffer - off)` of the next one
/// after. The window must end within the next buffer (`to <=
/// slots_per_buffer - off + slots_per_buffer`), as a run of this buffer
/// plus a prefetch distance of at most a buffer does.
pub(super) fn window(
    slots_per_buffer: usize,
    off: usize,
    from: usize,
    to: usize,
) -> [(usize, usize); 2] {
    debug_assert!(off < slots_per_buffer);
    let split = slots_per_buffer - off;
    debug_assert!(to <= split + slots_per_buffer);
    let here = (off + from.min(split), off + to.min(split));
    let next = (from.max(split) - split, to.max(split) - split);
    [here, next]
}

#[cfg(test)]
mod tests {
    use super::{
        asks_ahead, prefetch_ahead_slots, release_granule, run_prefetch_slots, streaming_into_line,
        window,
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
    fn only_copies_within_the_distance_ask_ahead() {
        // The probe's calls: 256 events of 8 bytes (2 KiB, at the distance)
        // ask; 256 of 64 bytes (runs of a whole 8 KiB buffer) do not.
        let at_8 = run_prefetch_slots(8, 1024);
        let at_64 = run_prefetch_slots(64, 128);
        assert!(asks_ahead(256, at_8));
        assert!(asks_ahead(1, at_8) && asks_ahead(32, at_64));
        assert!(!asks_ahead(33, at_64) && !asks_ahead(128, at_64));
        assert!(!asks_ahead(at_8 + 1, at_8));
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
}
