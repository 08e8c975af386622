//! The channels the SPSC harness compares, made to look alike: each crate's
//! producer and consumer as the harness's [`Tx`] and [`Rx`] (batch calls where the
//! crate has them: hspc slices, rtrb chunks, ringbuf slices; loops of single calls
//! otherwise: heapless, crossbeam, std), all with the same channel memory
//! ([`CHANNEL_BYTES`]), and one throughput run or round-trip series of any of
//! them ([`transfer_of`], [`roundtrip_of`]).

use super::{roundtrip, transfer, Cpus, Event, PairLog, RunFail, Rx, Tx};
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Channel memory of every implementation: 32 KiB (4096 events of 8 bytes, 512 of 64).
pub const CHANNEL_BYTES: usize = 32 << 10;
/// Buffers of hspc's n-buffer configuration where the L1d's size is not known (each
/// `CHANNEL_BYTES / NBUFFER_BUFFERS`); where it is, hspc's own rule sizes them
/// ([`hspc::Config::n_buffer_for_cache`]).
pub const NBUFFER_BUFFERS: usize = 4;
/// hspc's wait strategy here: the harness spins on full/empty itself, so the
/// strategy only decides what a hand-off costs; a spinning one makes it a plain
/// store, as in rtrb.
pub const HSPC_WAIT: hspc::WaitStrategy = hspc::WaitStrategy::SpinPause;

/// One implementation under test.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Impl {
    /// hspc, n-buffer mode: [`CHANNEL_BYTES`] in buffers sized to the L1d, spin wait
    /// ([`hspc_config`]).
    Hspc,
    /// hspc, ring mode (per-event hand-off, like rtrb), spin wait.
    HspcRing,
    /// `rtrb::RingBuffer`.
    Rtrb,
    /// `ringbuf::HeapRb` (split into its producer and consumer).
    Ringbuf,
    /// `heapless::spsc::Queue` (fixed capacity; one slot stays empty).
    Heapless,
    /// `crossbeam_queue::ArrayQueue` (an MPMC queue used by one thread each side).
    Crossbeam,
    /// `std::sync::mpsc::sync_channel`.
    Std,
}

impl Impl {
    /// Every implementation, in the order of the series.
    pub const ALL: [Impl; 7] = [
        Impl::Hspc,
        Impl::HspcRing,
        Impl::Rtrb,
        Impl::Ringbuf,
        Impl::Heapless,
        Impl::Crossbeam,
        Impl::Std,
    ];

    /// Whether the crate has calls that move a batch of events (hspc's slices,
    /// rtrb's chunks, ringbuf's slices); the others move one event a call and a
    /// batch is a loop of them.
    pub fn batch_calls(self) -> bool {
        !matches!(self, Impl::Heapless | Impl::Crossbeam | Impl::Std)
    }

    /// Name in series and distributions.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Hspc => "hspc",
            Impl::HspcRing => "hspc-ring",
            Impl::Rtrb => "rtrb",
            Impl::Ringbuf => "ringbuf",
            Impl::Heapless => "heapless",
            Impl::Crossbeam => "crossbeam",
            Impl::Std => "std",
        }
    }
}

/// hspc's configuration for `impl_` (`None` for the peers) on CPUs whose L1 data
/// cache holds `l1d_bytes`: the n-buffer's [`CHANNEL_BYTES`] in buffers sized to it
/// ([`hspc::Config::n_buffer_for_cache`]; [`NBUFFER_BUFFERS`] buffers where it is not
/// known), the ring in one piece.
pub fn hspc_config(impl_: Impl, l1d_bytes: Option<u64>) -> Option<hspc::Config> {
    let l1d = l1d_bytes.and_then(|b| usize::try_from(b).ok());
    let n_buffer = match l1d {
        Some(l1d) => hspc::Config::n_buffer_for_cache(CHANNEL_BYTES, l1d),
        None => hspc::Config::n_buffer(NBUFFER_BUFFERS, CHANNEL_BYTES / NBUFFER_BUFFERS),
    };
    match impl_ {
        Impl::Hspc => Some(n_buffer.with_wait(HSPC_WAIT)),
        Impl::HspcRing => Some(hspc::Config::ring(CHANNEL_BYTES).with_wait(HSPC_WAIT)),
        _ => None,
    }
}

// Every adapter's calls are inlined into the harness's measured loops, for every
// crate alike: left to the compiler, corescope's large binary kept hspc's
// `recv_one` out of line (a call per event) where a small binary with the same
// harness inlined it (docs/channel.md, "hspc's per-event calls inlined").
impl<E: Event> Tx<E> for hspc::Producer<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        self.try_push_slice(src)
    }
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        self.try_push(e).is_ok()
    }
    fn flush(&mut self) {
        hspc::Producer::flush(self)
    }
}

impl<E: Event> Rx<E> for hspc::Consumer<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        self.try_pop_slice(dst).unwrap_or(0)
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.try_pop().ok()
    }
}

impl<E: Event> Tx<E> for rtrb::Producer<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        let n = self.slots().min(src.len());
        if n == 0 {
            return 0;
        }
        match self.write_chunk_uninit(n) {
            Ok(chunk) => chunk.fill_from_iter(src[..n].iter().copied()),
            Err(_) => 0,
        }
    }
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        self.push(e).is_ok()
    }
}

impl<E: Event> Rx<E> for rtrb::Consumer<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        let n = self.slots().min(dst.len());
        if n == 0 {
            return 0;
        }
        match self.read_chunk(n) {
            Ok(chunk) => {
                let (a, b) = chunk.as_slices();
                dst[..a.len()].copy_from_slice(a);
                dst[a.len()..a.len() + b.len()].copy_from_slice(b);
                chunk.commit_all();
                n
            }
            Err(_) => 0,
        }
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.pop().ok()
    }
}

impl<E: Event> Tx<E> for ringbuf::HeapProd<E> {
    #[inline(always)]
    fn send(&mut self, src: &[E]) -> usize {
        ringbuf::traits::Producer::push_slice(self, src)
    }
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        ringbuf::traits::Producer::try_push(self, e).is_ok()
    }
}

impl<E: Event> Rx<E> for ringbuf::HeapCons<E> {
    #[inline(always)]
    fn recv(&mut self, dst: &mut [E]) -> usize {
        ringbuf::traits::Consumer::pop_slice(self, dst)
    }
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        ringbuf::traits::Consumer::try_pop(self)
    }
}

/// heapless has no batch calls: batches are loops of single calls.
impl<E: Event> Tx<E> for heapless::spsc::Producer<'_, E> {
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        self.enqueue(e).is_ok()
    }
}

impl<E: Event> Rx<E> for heapless::spsc::Consumer<'_, E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.dequeue()
    }
}

/// crossbeam's queue has no batch calls: batches are loops of single calls.
pub struct Cb<E>(Arc<crossbeam_queue::ArrayQueue<E>>);

impl<E: Event> Tx<E> for Cb<E> {
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        self.0.push(e).is_ok()
    }
}

impl<E: Event> Rx<E> for Cb<E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.0.pop()
    }
}

/// std's channel has no batch calls either: loops of `try_send` / `try_recv`.
impl<E: Event> Tx<E> for SyncSender<E> {
    #[inline(always)]
    fn send_one(&mut self, e: E) -> bool {
        self.try_send(e).is_ok()
    }
}

impl<E: Event> Rx<E> for Receiver<E> {
    #[inline(always)]
    fn recv_one(&mut self) -> Option<E> {
        self.try_recv().ok()
    }
}

/// Why a channel could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// hspc refused its configuration.
    #[error("hspc: {0}")]
    Hspc(#[source] hspc::ConfigError),
    /// heapless has no queue type for the event size.
    #[error("heapless: no queue type for {0}-byte events")]
    HeaplessSize(usize),
}

/// A channel of hspc's `impl_`; why not, when hspc refuses its configuration.
fn hspc_pair<E: Event>(
    impl_: Impl,
    l1d_bytes: Option<u64>,
) -> Result<(hspc::Producer<E>, hspc::Consumer<E>), ChannelError> {
    let config = hspc_config(impl_, l1d_bytes).expect("an hspc implementation");
    hspc::channel::<E>(config).map_err(ChannelError::Hspc)
}

/// heapless's queue has its size in its type: one per event size, on the heap. Its
/// `N` is the others' capacity, a power of two as heapless advises for speed; it
/// holds `N − 1` events (one slot stays empty).
enum HeaplessQueue<E> {
    /// 8-byte events.
    Small(Box<heapless::spsc::Queue<E, { CHANNEL_BYTES / 8 }>>),
    /// 64-byte events.
    Large(Box<heapless::spsc::Queue<E, { CHANNEL_BYTES / 64 }>>),
}

impl<E: Event> HeaplessQueue<E> {
    fn new() -> Result<Self, ChannelError> {
        match E::BYTES {
            8 => Ok(Self::Small(Box::new(heapless::spsc::Queue::new()))),
            64 => Ok(Self::Large(Box::new(heapless::spsc::Queue::new()))),
            b => Err(ChannelError::HeaplessSize(b)),
        }
    }

    fn view(&mut self) -> &mut heapless::spsc::QueueView<E> {
        match self {
            Self::Small(q) => q.as_mut_view(),
            Self::Large(q) => q.as_mut_view(),
        }
    }
}

fn ringbuf_pair<E: Event>(cap: usize) -> (ringbuf::HeapProd<E>, ringbuf::HeapCons<E>) {
    ringbuf::traits::Split::split(ringbuf::HeapRb::<E>::new(cap))
}

fn cb_pair<E: Event>() -> (Cb<E>, Cb<E>) {
    let q = Arc::new(crossbeam_queue::ArrayQueue::new(CHANNEL_BYTES / E::BYTES));
    (Cb(q.clone()), Cb(q))
}

/// One throughput run of `impl_` (hspc's buffers sized to `l1d_bytes`, see
/// [`hspc_config`]): see [`transfer`]. The outer error: the channel could not be made.
pub fn transfer_of<E: Event>(
    impl_: Impl,
    l1d_bytes: Option<u64>,
    events: u64,
    batch: usize,
    cpus: Cpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Result<Duration, RunFail>, ChannelError> {
    let cap = CHANNEL_BYTES / E::BYTES;
    let (e, b, c, d, w) = (events, batch, cpus, deadline, log);
    Ok(match impl_ {
        Impl::Hspc | Impl::HspcRing => {
            let (tx, rx) = hspc_pair::<E>(impl_, l1d_bytes)?;
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Rtrb => {
            let (tx, rx) = rtrb::RingBuffer::<E>::new(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Ringbuf => {
            let (tx, rx) = ringbuf_pair::<E>(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Heapless => {
            let mut q = HeaplessQueue::<E>::new()?;
            let (tx, rx) = q.view().split();
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Crossbeam => {
            let (tx, rx) = cb_pair::<E>();
            transfer(tx, rx, e, b, c, d, w)
        }
        Impl::Std => {
            let (tx, rx) = mpsc::sync_channel::<E>(cap);
            transfer(tx, rx, e, b, c, d, w)
        }
    })
}

/// One round-trip series of `impl_` (hspc's buffers sized to `l1d_bytes`), `blocks`
/// timed blocks: see [`roundtrip`]. The outer error: a channel could not be made.
pub fn roundtrip_of<E: Event>(
    impl_: Impl,
    l1d_bytes: Option<u64>,
    blocks: usize,
    cpus: Cpus,
    deadline: Instant,
    log: &PairLog,
) -> Result<Result<Vec<u64>, RunFail>, ChannelError> {
    let cap = CHANNEL_BYTES / E::BYTES;
    let (n, c, d, w) = (blocks, cpus, deadline, log);
    Ok(match impl_ {
        Impl::Hspc | Impl::HspcRing => {
            let (a, b) = (hspc_pair(impl_, l1d_bytes)?, hspc_pair(impl_, l1d_bytes)?);
            roundtrip::<E, _, _, _, _>(a, b, n, c, d, w)
        }
        Impl::Rtrb => roundtrip::<E, _, _, _, _>(
            rtrb::RingBuffer::new(cap),
            rtrb::RingBuffer::new(cap),
            n,
            c,
            d,
            w,
        ),
        Impl::Ringbuf => {
            roundtrip::<E, _, _, _, _>(ringbuf_pair(cap), ringbuf_pair(cap), n, c, d, w)
        }
        Impl::Heapless => {
            let (mut a, mut b) = (HeaplessQueue::<E>::new()?, HeaplessQueue::<E>::new()?);
            roundtrip::<E, _, _, _, _>(a.view().split(), b.view().split(), n, c, d, w)
        }
        Impl::Crossbeam => roundtrip::<E, _, _, _, _>(cb_pair(), cb_pair(), n, c, d, w),
        Impl::Std => {
            roundtrip::<E, _, _, _, _>(mpsc::sync_channel(cap), mpsc::sync_channel(cap), n, c, d, w)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(20)
    }

    #[test]
    fn both_threads_of_a_run_are_counted_over_the_run() {
        let log = PairLog::default();
        transfer_of::<u64>(Impl::Rtrb, None, 20_000, 1, (None, None), far(), &log)
            .unwrap()
            .unwrap();
        let (team, errors) = log.counted.finish();
        assert!(errors.is_empty(), "{errors:?}");
        let team = team.expect("producer and consumer added themselves");
        assert_eq!(team.threads.len(), 2);
        assert!(team.wall_ns > 0);
        assert!(team.threads.iter().all(|t| !t.pinned));
        if team.status.software == crate::counters::Availability::Counted {
            for t in &team.threads {
                let r = t.reading.expect("a software reading");
                assert!(r.task_clock_ns.is_some_and(|ns| ns > 0), "{r:?}");
                assert!(r.enabled_ns > 0);
            }
        }
    }

    #[test]
    fn every_implementation_moves_every_event_in_order() {
        let w = PairLog::default();
        // hspc's buffers as the probe sizes them on a 32 KiB and a 48 KiB L1d, and
        // where the L1d is not known.
        for l1d in [None, Some(32 << 10), Some(48 << 10)] {
            for impl_ in Impl::ALL {
                for batch in [1, 16, 256] {
                    transfer_of::<u64>(impl_, l1d, 5000, batch, (None, None), far(), &w)
                        .unwrap()
                        .unwrap_or_else(|e| panic!("{impl_:?} ×{batch}: {e:?}"));
                    transfer_of::<[u64; 8]>(impl_, l1d, 3001, batch, (None, None), far(), &w)
                        .unwrap()
                        .unwrap_or_else(|e| panic!("{impl_:?} ×{batch}: {e:?}"));
                }
                let t = roundtrip_of::<u64>(impl_, l1d, 50, (None, None), far(), &w)
                    .unwrap()
                    .unwrap();
                assert_eq!(t.len(), 50);
            }
        }
    }

    #[test]
    fn hspcs_buffers_follow_the_l1d_in_the_same_memory() {
        let geometry = |l1d| {
            let c = hspc_config(Impl::Hspc, l1d).unwrap();
            (c.mode, c.buffers, c.buffer_bytes, c.wait)
        };
        let nb = hspc::Mode::NBuffer;
        assert_eq!(geometry(None), (nb, NBUFFER_BUFFERS, 8 << 10, HSPC_WAIT));
        assert_eq!(geometry(Some(32 << 10)), (nb, 4, 8 << 10, HSPC_WAIT));
        assert_eq!(geometry(Some(48 << 10)), (nb, 2, 16 << 10, HSPC_WAIT));
        assert_eq!(geometry(Some(u64::MAX)), (nb, 2, 16 << 10, HSPC_WAIT));
        let ring = hspc_config(Impl::HspcRing, Some(48 << 10)).unwrap();
        assert_eq!(
            (ring.mode, ring.buffer_bytes),
            (hspc::Mode::Ring, CHANNEL_BYTES)
        );
        assert!(hspc_config(Impl::Rtrb, Some(48 << 10)).is_none());
    }

    #[test]
    fn both_threads_on_one_cpu_still_finish() {
        // The harness yields, so a producer and a consumer time-sliced on one CPU
        // make progress with every implementation.
        let before = crate::affinity::allowed_current().unwrap();
        let cpu = before[0];
        let w = PairLog::default();
        for impl_ in Impl::ALL {
            transfer_of::<u64>(impl_, None, 20_000, 16, (Some(cpu), Some(cpu)), far(), &w)
                .unwrap()
                .unwrap_or_else(|e| panic!("{impl_:?}: {e:?}"));
            let t = roundtrip_of::<u64>(impl_, None, 20, (Some(cpu), Some(cpu)), far(), &w)
                .unwrap()
                .unwrap();
            assert_eq!(t.len(), 20);
        }
        assert!(w.warnings.into_inner().unwrap().is_empty());
        // Pinned threads say so in their counts.
        let (team, _) = w.counted.finish();
        assert!(team.unwrap().threads.iter().all(|t| t.pinned));
        // Only the probe's own threads were pinned, never the caller.
        assert_eq!(crate::affinity::allowed_current().unwrap(), before);
    }
}
