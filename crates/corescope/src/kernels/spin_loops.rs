//! The spin-loop variants of seed 003 ("Overhead of the spin-lock loop"),
//! with read counting: the instruments of the `spin` probe.
//!
//! One function per loop (`spin_plain`, `spin_pause`, `spin_fpdiv`,
//! `spin_intdiv`, `spin_cas`, `spin_cachemiss`, `spin_yield`, `park_futex`),
//! each waiting on a 32-bit *lock word* until it no longer holds the `locked`
//! value and counting how many times it read the word, so that
//! *responsiveness* (time between two reads of the lock word) is
//! `elapsed / reads`; [`SpinKind`] names them, [`spin`] dispatches, and
//! [`LockWord`], [`Spinner`], [`ChaseBuffer`], [`Woken`], [`SpinReport`],
//! [`MissingChaseBuffer`] and [`UnknownSpinKind`] go with them. (They were
//! hspc's `wait` module behind its `unstable-spin-loops` feature; only this
//! probe used them, so they live here, and hspc's public API is its channel,
//! its configuration and its backoff.)
//!
//! The lock word is 32 bits because the futex variant needs a 32-bit word.
//! There is no separate stop flag to poll (it would add a load to every
//! loop): stopping a spinner is a change of the lock word, as
//! [`LockWord::stop`] does. Every loop reads the word with a `Relaxed` load
//! and ends with an `Acquire` fence, so whatever the releasing thread wrote
//! before its `Release` store is visible when the loop returns.

use core::fmt;
use core::hint::black_box;
use core::str::FromStr;
use std::sync::atomic::{fence, AtomicU32, Ordering};

use crossbeam_utils::CachePadded;

use super::futex;

/// Bytes of a cache line as the padding type counts them: the alignment of
/// crossbeam-utils' `CachePadded` (128 on x86_64 and aarch64).
const CACHE_LINE: usize = core::mem::align_of::<CachePadded<u8>>();

/// One of the wait loops of seed 003 (plus `sched_yield` and futex).
///
/// The string names ([`SpinKind::name`], `FromStr`, serde) are stable: they
/// appear in run files.
///
/// ```
/// use corescope::kernels::spin_loops::SpinKind;
/// assert_eq!("pause".parse::<SpinKind>(), Ok(SpinKind::Pause));
/// assert_eq!(SpinKind::Futex.to_string(), "futex");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpinKind {
    /// Load and test, nothing else (the Linux 2.6 spin-lock loop of seed 003).
    Plain,
    /// Load, test, then the CPU's spin hint: PAUSE on x86, ISB on aarch64.
    Pause,
    /// Load, test, then a floating-point divide (a dependent chain).
    FpDiv,
    /// Load, test, then an integer divide (a dependent chain).
    IntDiv,
    /// Compare-and-swap of the lock word with itself (reads it with a CAS).
    Cas,
    /// Load, test, then one step of a pointer chase that misses the cache.
    CacheMiss,
    /// Load, test, then `sched_yield`.
    Yield,
    /// Load, test, then sleep on a futex until woken: blocks, so it is the
    /// zero-interference reference.
    Futex,
}

impl SpinKind {
    /// Every variant, in a stable order.
    ///
    /// ```
    /// assert_eq!(corescope::kernels::spin_loops::SpinKind::ALL.len(), 8);
    /// ```
    pub const ALL: [SpinKind; 8] = [
        SpinKind::Plain,
        SpinKind::Pause,
        SpinKind::FpDiv,
        SpinKind::IntDiv,
        SpinKind::Cas,
        SpinKind::CacheMiss,
        SpinKind::Yield,
        SpinKind::Futex,
    ];

    /// The stable name: "plain", "pause", "fpdiv", "intdiv", "cas",
    /// "cachemiss", "yield", "futex".
    ///
    /// ```
    /// assert_eq!(corescope::kernels::spin_loops::SpinKind::CacheMiss.name(), "cachemiss");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            SpinKind::Plain => "plain",
            SpinKind::Pause => "pause",
            SpinKind::FpDiv => "fpdiv",
            SpinKind::IntDiv => "intdiv",
            SpinKind::Cas => "cas",
            SpinKind::CacheMiss => "cachemiss",
            SpinKind::Yield => "yield",
            SpinKind::Futex => "futex",
        }
    }

    /// True for the variant that leaves the CPU while waiting (futex).
    ///
    /// ```
    /// use corescope::kernels::spin_loops::SpinKind;
    /// assert!(SpinKind::Futex.blocks() && !SpinKind::Yield.blocks());
    /// ```
    pub const fn blocks(self) -> bool {
        matches!(self, SpinKind::Futex)
    }

    /// True for the variant that needs a [`ChaseBuffer`].
    ///
    /// ```
    /// use corescope::kernels::spin_loops::SpinKind;
    /// assert!(SpinKind::CacheMiss.needs_chase_buffer() && !SpinKind::Plain.needs_chase_buffer());
    /// ```
    pub const fn needs_chase_buffer(self) -> bool {
        matches!(self, SpinKind::CacheMiss)
    }
}

impl fmt::Display for SpinKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`SpinKind::ALL`]'s.
///
/// ```
/// let err = "spin".parse::<corescope::kernels::spin_loops::SpinKind>().unwrap_err();
/// assert_eq!(err.name, "spin");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown spin loop {name:?}; expected one of plain, pause, fpdiv, intdiv, cas, cachemiss, yield, futex")]
pub struct UnknownSpinKind {
    /// The name that was given.
    pub name: String,
}

impl FromStr for SpinKind {
    type Err = UnknownSpinKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SpinKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownSpinKind { name: s.to_owned() })
    }
}

/// What a wait loop saw when it stopped waiting.
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_plain(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinReport {
    /// The value of the lock word that ended the wait (never `locked`).
    pub value: u32,
    /// How many times the loop read the lock word, the final read included.
    pub reads: u64,
}

#[inline(always)]
fn done(value: u32, reads: u64) -> SpinReport {
    fence(Ordering::Acquire);
    SpinReport { value, reads }
}

/// Waits with a bare load-and-test loop.
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_plain(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_plain(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            return done(v, reads);
        }
    }
}

/// Waits with load, test and the CPU spin hint (PAUSE on x86, ISB on aarch64).
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_pause(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_pause(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            return done(v, reads);
        }
        core::hint::spin_loop();
    }
}

/// Divisor and addend of the FP chain `x = x / FP_DIVISOR + FP_ADDEND`: it
/// converges to 3.0 and stays a normal number (subnormals would take a
/// microcode assist and measure something else).
const FP_DIVISOR: f64 = 1.5;
const FP_ADDEND: f64 = 1.0;

/// Waits with load, test and one floating-point divide per iteration.
///
/// The divides form a dependent chain whose result is consumed at the end,
/// so the compiler keeps one `divsd` per iteration.
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_fpdiv(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_fpdiv(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    let d = black_box(FP_DIVISOR);
    let c = black_box(FP_ADDEND);
    let mut x = black_box(FP_ADDEND);
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            black_box(x);
            return done(v, reads);
        }
        x = x / d + c;
    }
}

/// Divisor of the integer chain `x = x / INT_DIVISOR + INT_ADDEND`.
const INT_DIVISOR: u64 = 3;
/// Addend of the integer chain: keeps `x` large, so the divide does not
/// take a short-operand fast path.
const INT_ADDEND: u64 = 1 << 62;

/// Waits with load, test and one integer divide per iteration (a dependent
/// chain of 64-bit `div`s whose result is consumed at the end).
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_intdiv(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_intdiv(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    let d = black_box(INT_DIVISOR);
    let c = black_box(INT_ADDEND);
    let mut x = black_box(u64::MAX);
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            black_box(x);
            return done(v, reads);
        }
        x = x / d + c;
    }
}

/// Waits by compare-and-swapping the word with itself: each read is a CAS,
/// which takes the line exclusive (seed 003's CASX variant).
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_cas(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_cas(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    loop {
        let r = word.compare_exchange(locked, locked, Ordering::Relaxed, Ordering::Relaxed);
        reads += 1;
        if let Err(v) = r {
            return done(v, reads);
        }
    }
}

/// Waits with load, test and one dependent load of a pointer chase over
/// `chase` (which should be larger than the last-level cache, so that every
/// step misses).
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let mut chase = corescope::kernels::spin_loops::ChaseBuffer::new(1 << 16, 1);
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_cachemiss(&word, 1, &mut chase);
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_cachemiss(word: &AtomicU32, locked: u32, chase: &mut ChaseBuffer) -> SpinReport {
    let mut reads = 0u64;
    let next = &chase.next[..];
    let mut at = chase.cursor;
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            chase.cursor = at;
            return done(v, reads);
        }
        // The chase stays in bounds: every entry is an index of `next`
        // (checked in `ChaseBuffer::new`); the bounds check is one
        // predictable compare.
        at = next[at];
    }
}

/// Waits with load, test and `sched_yield` (gives the CPU to any runnable
/// thread, stays runnable itself).
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::spin_yield(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn spin_yield(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            return done(v, reads);
        }
        std::thread::yield_now();
    }
}

/// Waits by sleeping on a futex: load, test, then `futex_wait` until the
/// word changes. The thread that changes the word must call
/// `futex(FUTEX_WAKE)` on it (as [`LockWord::release`] and [`LockWord::stop`]
/// do), or this never returns.
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// let word = AtomicU32::new(0);
/// let report = corescope::kernels::spin_loops::park_futex(&word, 1); // not locked: returns at once
/// assert_eq!((report.value, report.reads), (0, 1));
/// ```
pub fn park_futex(word: &AtomicU32, locked: u32) -> SpinReport {
    let mut reads = 0u64;
    loop {
        let v = word.load(Ordering::Relaxed);
        reads += 1;
        if v != locked {
            return done(v, reads);
        }
        futex::park(word, locked);
    }
}

/// Asked for [`SpinKind::CacheMiss`] without a [`ChaseBuffer`].
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// use corescope::kernels::spin_loops::{spin, MissingChaseBuffer, SpinKind};
/// let word = AtomicU32::new(0);
/// assert_eq!(spin(SpinKind::CacheMiss, &word, 1, None), Err(MissingChaseBuffer));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the cachemiss spin loop needs a ChaseBuffer larger than the last-level cache")]
pub struct MissingChaseBuffer;

/// Waits on `word` with the loop `kind` until it no longer holds `locked`.
///
/// `chase` is needed by [`SpinKind::CacheMiss`] only.
///
/// ```
/// use std::sync::atomic::AtomicU32;
/// use corescope::kernels::spin_loops::{spin, SpinKind};
/// let word = AtomicU32::new(0);
/// for kind in SpinKind::ALL {
///     let mut chase = corescope::kernels::spin_loops::ChaseBuffer::new(4096, 1);
///     let report = spin(kind, &word, 1, Some(&mut chase)).unwrap();
///     assert_eq!(report.value, 0);
/// }
/// ```
pub fn spin(
    kind: SpinKind,
    word: &AtomicU32,
    locked: u32,
    chase: Option<&mut ChaseBuffer>,
) -> Result<SpinReport, MissingChaseBuffer> {
    Ok(match kind {
        SpinKind::Plain => spin_plain(word, locked),
        SpinKind::Pause => spin_pause(word, locked),
        SpinKind::FpDiv => spin_fpdiv(word, locked),
        SpinKind::IntDiv => spin_intdiv(word, locked),
        SpinKind::Cas => spin_cas(word, locked),
        SpinKind::CacheMiss => spin_cachemiss(word, locked, chase.ok_or(MissingChaseBuffer)?),
        SpinKind::Yield => spin_yield(word, locked),
        SpinKind::Futex => park_futex(word, locked),
    })
}

/// A pointer-chase ring for [`SpinKind::CacheMiss`]: one random cycle through
/// every cache line of a buffer of the size the caller chose (larger than
/// the last-level cache for the seed's L2-miss loop).
///
/// The order is a random single cycle (Sattolo's algorithm), so hardware
/// prefetchers cannot follow it; the seed makes the order reproducible.
///
/// ```
/// let chase = corescope::kernels::spin_loops::ChaseBuffer::new(1 << 20, 7);
/// assert_eq!(chase.bytes(), 1 << 20);
/// ```
#[derive(Clone, Debug)]
pub struct ChaseBuffer {
    /// `next[i]` is the index of the element after `i`; only the first
    /// element of each cache line is on the cycle.
    next: Box<[usize]>,
    cursor: usize,
}

/// Elements of a [`ChaseBuffer`] per cache line.
const CHASE_STRIDE: usize = CACHE_LINE / core::mem::size_of::<usize>();

impl ChaseBuffer {
    /// A chase over `bytes` bytes (at least two cache lines are used),
    /// visiting the lines in an order drawn from `seed`.
    ///
    /// ```
    /// let chase = corescope::kernels::spin_loops::ChaseBuffer::new(0, 7);
    /// assert_eq!(chase.lines(), 2); // at least two lines
    /// ```
    pub fn new(bytes: usize, seed: u64) -> Self {
        let lines = (bytes / CACHE_LINE).max(2);
        let mut order: Vec<usize> = (0..lines).collect();
        let mut state = seed;
        // Sattolo: a uniformly random permutation with a single cycle.
        for i in (1..lines).rev() {
            let j = (splitmix64(&mut state) % i as u64) as usize;
            order.swap(i, j);
        }
        let mut next = vec![0usize; lines * CHASE_STRIDE].into_boxed_slice();
        for w in 0..lines {
            let from = order[w] * CHASE_STRIDE;
            let to = order[(w + 1) % lines] * CHASE_STRIDE;
            next[from] = to;
        }
        debug_assert!(next.iter().all(|&n| n < next.len()));
        Self { next, cursor: 0 }
    }

    /// Bytes covered by the chase.
    ///
    /// ```
    /// assert_eq!(corescope::kernels::spin_loops::ChaseBuffer::new(4096, 1).bytes(), 4096);
    /// ```
    pub fn bytes(&self) -> usize {
        self.next.len() * core::mem::size_of::<usize>()
    }

    /// Cache lines on the cycle.
    ///
    /// ```
    /// let chase = corescope::kernels::spin_loops::ChaseBuffer::new(4096, 1);
    /// assert!(chase.lines() >= 2 && 4096 % chase.lines() == 0);
    /// ```
    pub fn lines(&self) -> usize {
        self.next.len() / CHASE_STRIDE
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Why a wait on a [`LockWord`] ended.
///
/// ```
/// use corescope::kernels::spin_loops::{LockWord, SpinKind, Spinner, Woken};
/// let lock = LockWord::new();
/// lock.stop();
/// assert_eq!(Spinner::new(SpinKind::Plain).wait(&lock).0, Woken::Stopped);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The lock was released.
    Released,
    /// The waiter was asked to stop.
    Stopped,
}

/// A lock word for the spin loops, alone on its cache line: locked,
/// released, or stopped.
///
/// # Examples
///
/// ```
/// use corescope::kernels::spin_loops::{LockWord, SpinKind, Spinner, Woken};
/// let lock = LockWord::new();
/// let mut spinner = Spinner::new(SpinKind::Pause);
/// std::thread::scope(|s| {
///     let waiter = s.spawn(|| spinner.wait(&lock));
///     lock.release();
///     let (woken, report) = waiter.join().unwrap();
///     assert_eq!(woken, Woken::Released);
///     assert!(report.reads >= 1);
/// });
/// ```
#[derive(Debug)]
pub struct LockWord {
    word: CachePadded<AtomicU32>,
}

impl LockWord {
    /// The value of a locked word.
    ///
    /// ```
    /// use std::sync::atomic::Ordering;
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// assert_eq!(lock.word().load(Ordering::Relaxed), corescope::kernels::spin_loops::LockWord::LOCKED);
    /// ```
    pub const LOCKED: u32 = 1;
    /// The value of a released word.
    ///
    /// ```
    /// use std::sync::atomic::Ordering;
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// lock.release();
    /// assert_eq!(lock.word().load(Ordering::Relaxed), corescope::kernels::spin_loops::LockWord::RELEASED);
    /// ```
    pub const RELEASED: u32 = 0;
    /// The value that tells waiters to stop.
    ///
    /// ```
    /// use std::sync::atomic::Ordering;
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// lock.stop();
    /// assert_eq!(lock.word().load(Ordering::Relaxed), corescope::kernels::spin_loops::LockWord::STOPPED);
    /// ```
    pub const STOPPED: u32 = 2;

    /// A locked word.
    ///
    /// ```
    /// assert!(corescope::kernels::spin_loops::LockWord::new().is_locked());
    /// ```
    pub fn new() -> Self {
        Self {
            word: CachePadded::new(AtomicU32::new(Self::LOCKED)),
        }
    }

    /// The raw word, for the free functions of this module.
    ///
    /// ```
    /// use corescope::kernels::spin_loops::{spin_plain, LockWord};
    /// let lock = LockWord::new();
    /// lock.release();
    /// assert_eq!(spin_plain(lock.word(), LockWord::LOCKED).value, LockWord::RELEASED);
    /// ```
    pub fn word(&self) -> &AtomicU32 {
        &self.word
    }

    /// Locks the word again (for the next hand-off).
    ///
    /// ```
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// lock.release();
    /// lock.lock();
    /// assert!(lock.is_locked());
    /// ```
    pub fn lock(&self) {
        self.word.store(Self::LOCKED, Ordering::Relaxed);
    }

    /// Releases the word (a `Release` store) and wakes futex waiters.
    ///
    /// ```
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// lock.release();
    /// assert!(!lock.is_locked());
    /// ```
    pub fn release(&self) {
        self.word.store(Self::RELEASED, Ordering::Release);
        futex::unpark_all(&self.word);
    }

    /// Tells every waiter to stop, and wakes futex waiters.
    ///
    /// ```
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// lock.stop();
    /// assert!(!lock.is_locked());
    /// ```
    pub fn stop(&self) {
        self.word.store(Self::STOPPED, Ordering::Release);
        futex::unpark_all(&self.word);
    }

    /// True while the word is locked.
    ///
    /// ```
    /// let lock = corescope::kernels::spin_loops::LockWord::new();
    /// assert!(lock.is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Acquire) == Self::LOCKED
    }
}

impl Default for LockWord {
    fn default() -> Self {
        Self::new()
    }
}

/// A wait loop of one [`SpinKind`], with the state it needs.
///
/// ```
/// use corescope::kernels::spin_loops::{LockWord, SpinKind, Spinner, Woken};
/// let lock = LockWord::new();
/// lock.release();
/// let (woken, report) = Spinner::new(SpinKind::IntDiv).wait(&lock);
/// assert_eq!((woken, report.reads), (Woken::Released, 1));
/// ```
#[derive(Debug)]
pub struct Spinner {
    kind: SpinKind,
    chase: Option<ChaseBuffer>,
}

impl Spinner {
    /// A spinner of `kind`. For [`SpinKind::CacheMiss`] this allocates a
    /// small [`ChaseBuffer`] (4 MiB: misses L2, not a large LLC); use
    /// [`Spinner::with_chase`] to size it beyond the last-level cache.
    ///
    /// ```
    /// use corescope::kernels::spin_loops::{SpinKind, Spinner};
    /// assert_eq!(Spinner::new(SpinKind::Cas).kind(), SpinKind::Cas);
    /// ```
    pub fn new(kind: SpinKind) -> Self {
        /// Default chase size: larger than common L2 caches (0.25–2 MiB).
        const DEFAULT_CHASE_BYTES: usize = 4 << 20;
        let chase = kind
            .needs_chase_buffer()
            .then(|| ChaseBuffer::new(DEFAULT_CHASE_BYTES, 0x5EED));
        Self { kind, chase }
    }

    /// A spinner of `kind` that chases `chase` (used by
    /// [`SpinKind::CacheMiss`] only).
    ///
    /// ```
    /// use corescope::kernels::spin_loops::{ChaseBuffer, SpinKind, Spinner};
    /// let spinner = Spinner::with_chase(SpinKind::CacheMiss, ChaseBuffer::new(1 << 16, 3));
    /// assert_eq!(spinner.kind(), SpinKind::CacheMiss);
    /// ```
    pub fn with_chase(kind: SpinKind, chase: ChaseBuffer) -> Self {
        Self {
            kind,
            chase: Some(chase),
        }
    }

    /// The loop this spinner runs.
    ///
    /// ```
    /// use corescope::kernels::spin_loops::{SpinKind, Spinner};
    /// assert_eq!(Spinner::new(SpinKind::Yield).kind(), SpinKind::Yield);
    /// ```
    pub fn kind(&self) -> SpinKind {
        self.kind
    }

    /// Waits until `lock` is released or stopped.
    ///
    /// ```
    /// use corescope::kernels::spin_loops::{LockWord, SpinKind, Spinner, Woken};
    /// let lock = LockWord::new();
    /// let mut spinner = Spinner::new(SpinKind::Futex);
    /// std::thread::scope(|s| {
    ///     let waiter = s.spawn(|| spinner.wait(&lock).0);
    ///     lock.release();
    ///     assert_eq!(waiter.join().unwrap(), Woken::Released);
    /// });
    /// ```
    pub fn wait(&mut self, lock: &LockWord) -> (Woken, SpinReport) {
        let report = self.wait_word(lock.word(), LockWord::LOCKED);
        let woken = if report.value == LockWord::STOPPED {
            Woken::Stopped
        } else {
            Woken::Released
        };
        (woken, report)
    }

    /// Waits until `word` no longer holds `locked`.
    ///
    /// ```
    /// use std::sync::atomic::AtomicU32;
    /// use corescope::kernels::spin_loops::{SpinKind, Spinner};
    /// let word = AtomicU32::new(5);
    /// assert_eq!(Spinner::new(SpinKind::Pause).wait_word(&word, 4).value, 5);
    /// ```
    pub fn wait_word(&mut self, word: &AtomicU32, locked: u32) -> SpinReport {
        match spin(self.kind, word, locked, self.chase.as_mut()) {
            Ok(r) => r,
            // `new` and `with_chase` give CacheMiss a buffer.
            Err(MissingChaseBuffer) => {
                unreachable!("a CacheMiss spinner always has a chase buffer")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chase_is_one_cycle_through_every_line() {
        for (bytes, seed) in [(2 * CACHE_LINE, 0), (4096, 1), (100_000, 2)] {
            let chase = ChaseBuffer::new(bytes, seed);
            let lines = chase.lines();
            let mut seen = vec![false; lines];
            let mut at = 0;
            for _ in 0..lines {
                assert_eq!(at % CHASE_STRIDE, 0);
                assert!(!seen[at / CHASE_STRIDE], "line visited twice");
                seen[at / CHASE_STRIDE] = true;
                at = chase.next[at];
            }
            assert_eq!(at, 0, "the chase is a single cycle");
            assert!(seen.iter().all(|&s| s));
        }
    }
}
