//! Running a pair of threads: how many samples a profile takes, bounded waiting
//! for a partner, variants taken in rotated chunks (so drift hits every variant
//! alike), the thread count of the process, and pthread mutex / condition variable
//! wrappers in a stable place. Used by the primitive probes (`threads`, `mutex`,
//! `condvar`) and the spin probe.

use crate::timestamp::ticks;

/// Samples per pair for a profile (seed 000: 10^5 at full size).
pub fn samples(profile: crate::model::Profile) -> usize {
    profile.pick(300, 5_000, 100_000)
}

/// Polls between yields of [`wait_until`].
pub const POLLS_PER_YIELD: u32 = 64;

/// Spin (yielding the CPU) until `done()` or until `limit_ticks` pass; false on timeout.
/// Yielding lets a partner pinned to the same CPU run.
pub fn wait_until(limit_ticks: u64, done: impl FnMut() -> bool) -> bool {
    wait_polling(limit_ticks, POLLS_PER_YIELD, done)
}

/// [`wait_until`] for a partner pinned to this thread's CPU: yield at every poll.
/// Spinning there only delays the partner, which cannot run until this thread lets
/// go of the CPU (63 pauses cost a few µs, which a same-CPU wake-up then included).
pub fn wait_for_same_cpu(limit_ticks: u64, done: impl FnMut() -> bool) -> bool {
    wait_polling(limit_ticks, 1, done)
}

/// Poll `done`, yielding every `polls_per_yield` polls, for at most `limit_ticks`.
fn wait_polling(limit_ticks: u64, polls_per_yield: u32, mut done: impl FnMut() -> bool) -> bool {
    let start = ticks();
    let mut n = 0u32;
    loop {
        if done() {
            return true;
        }
        n = n.wrapping_add(1);
        if n % polls_per_yield.max(1) == 0 {
            if ticks().wrapping_sub(start) > limit_ticks {
                return false;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Threads of this process right now (`Threads:` of /proc/self/status).
pub fn thread_count() -> Option<usize> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

/// Chunks in which a primitive probe's variants take turns: each variant's samples
/// are taken in this many chunks, the variants alternating in an order rotated by one
/// per round, so drift during the case hits every variant alike (never one block
/// after another).
pub const CHUNKS: usize = 8;

/// The order in which `variants` variants run in `rounds` rotated rounds: round `r`
/// runs variant `(k + r) % variants` for `k = 0, 1, ...`.
pub fn rotation(variants: usize, rounds: usize) -> Vec<usize> {
    (0..rounds)
        .flat_map(|r| super::race::rotated(variants, r))
        .collect()
}

/// One chunk of a paired measurement: (A, B) tick pairs, and why it stopped early.
pub type PairChunk = (Vec<(u64, u64)>, Option<crate::model::Warning>);

/// Samples of chunk `round` (of [`CHUNKS`]) when the chunks together take `samples`.
pub fn chunk_len(samples: usize, round: usize) -> usize {
    samples * (round + 1) / CHUNKS - samples * round / CHUNKS
}

/// Run `variants` in [`CHUNKS`] rotated rounds; `run(v, n)` takes a chunk of `n` of
/// variant `v`'s samples (all chunks together: `samples`) and returns them with the
/// reason it stopped early, if it did. The first stop ends all rounds (the budget or
/// a partner that did not answer): every variant then has the rounds it completed.
/// Returns the samples per variant and the stop reason.
pub fn interleaved<T, S, E>(
    variants: usize,
    samples: usize,
    mut run: impl FnMut(usize, usize) -> Result<(Vec<T>, Option<S>), E>,
) -> Result<(Vec<Vec<T>>, Option<S>), E> {
    let mut out: Vec<Vec<T>> = (0..variants).map(|_| Vec::new()).collect();
    for (i, v) in rotation(variants, CHUNKS).into_iter().enumerate() {
        let n = chunk_len(samples, i / variants.max(1));
        if n == 0 {
            continue;
        }
        let (chunk, stop) = run(v, n)?;
        out[v].extend(chunk);
        if stop.is_some() {
            return Ok((out, stop));
        }
    }
    Ok((out, None))
}

/// A `pthread_mutex_t` (default kind) in a stable place, shared by reference.
pub struct PthreadMutex(std::cell::UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be used from several threads at once; it never
// moves (callers keep it boxed or borrowed).
unsafe impl Sync for PthreadMutex {}

impl PthreadMutex {
    /// A new, unlocked mutex.
    pub fn new() -> Box<Self> {
        Box::new(Self(std::cell::UnsafeCell::new(
            libc::PTHREAD_MUTEX_INITIALIZER,
        )))
    }
    /// Lock (blocking in the kernel when held).
    pub fn lock(&self) {
        // SAFETY: the mutex is initialised and lives as long as `self`.
        unsafe { libc::pthread_mutex_lock(self.0.get()) };
    }
    /// Try to lock without blocking.
    pub fn try_lock(&self) -> bool {
        // SAFETY: as in `lock`.
        unsafe { libc::pthread_mutex_trylock(self.0.get()) == 0 }
    }
    /// Unlock (the caller holds it).
    pub fn unlock(&self) {
        // SAFETY: as in `lock`; callers unlock only what they locked.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) };
    }
    /// Lock, blocking in the kernel for at most `timeout`; false if it timed out (or
    /// the clock could not be read).
    pub fn lock_within(&self, timeout: std::time::Duration) -> bool {
        /// Nanoseconds per second, for `timespec`'s two fields.
        const NS_PER_S: u128 = 1_000_000_000;
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` writes the `timespec` it is given, nothing else.
        if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) } != 0 {
            return false;
        }
        let ns = now.tv_nsec as u128 + timeout.as_nanos();
        let Ok(extra_s) = libc::time_t::try_from(ns / NS_PER_S) else {
            return false;
        };
        let deadline = libc::timespec {
            tv_sec: now.tv_sec.saturating_add(extra_s),
            // Below 10^9, so it fits.
            tv_nsec: (ns % NS_PER_S) as libc::c_long,
        };
        // SAFETY: as in `lock`; `deadline` is a valid absolute CLOCK_REALTIME time
        // (`tv_nsec` below 10^9), which `pthread_mutex_timedlock` only reads.
        unsafe { libc::pthread_mutex_timedlock(self.0.get(), &deadline) == 0 }
    }
    /// The raw pointer, for `pthread_cond_*`.
    pub fn raw(&self) -> *mut libc::pthread_mutex_t {
        self.0.get()
    }
}

/// A `pthread_cond_t` (default attributes) in a stable place.
pub struct PthreadCond(std::cell::UnsafeCell<libc::pthread_cond_t>);

// SAFETY: condition variables are made to be shared between threads; it never moves.
unsafe impl Sync for PthreadCond {}

impl PthreadCond {
    /// A new condition variable.
    pub fn new() -> Box<Self> {
        Box::new(Self(std::cell::UnsafeCell::new(
            libc::PTHREAD_COND_INITIALIZER,
        )))
    }
    /// Wait at most `ms` milliseconds (CLOCK_REALTIME deadline, the default).
    pub fn wait_ms(&self, m: &PthreadMutex, ms: u64) {
        // SAFETY: timespec is plain data filled by clock_gettime.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: ts is valid for writing.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let ns = ts.tv_nsec as u64 + ms * 1_000_000;
        ts.tv_sec += (ns / 1_000_000_000) as libc::time_t;
        ts.tv_nsec = (ns % 1_000_000_000) as _;
        // SAFETY: both objects are initialised; the caller holds `m`.
        unsafe { libc::pthread_cond_timedwait(self.0.get(), m.raw(), &ts) };
    }
    /// Wake one waiter.
    pub fn signal(&self) {
        // SAFETY: initialised.
        unsafe { libc::pthread_cond_signal(self.0.get()) };
    }
    /// Wake all waiters.
    pub fn broadcast(&self) {
        // SAFETY: initialised.
        unsafe { libc::pthread_cond_broadcast(self.0.get()) };
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: nobody holds or waits on it any more (it is being dropped).
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

impl Drop for PthreadCond {
    fn drop(&mut self) {
        // SAFETY: nobody waits on it any more.
        unsafe { libc::pthread_cond_destroy(self.0.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_take_turns_in_rotated_rounds() {
        assert_eq!(rotation(3, 2), vec![0, 1, 2, 1, 2, 0]);
        let mut order = Vec::new();
        let (out, stop) = interleaved::<usize, &str, ()>(2, 300, |v, n| {
            order.push(v);
            Ok((vec![v; n], None))
        })
        .unwrap();
        assert!(stop.is_none());
        assert_eq!(order.len(), 2 * CHUNKS);
        assert!(order.chunks(2).all(|r| r[0] != r[1]));
        assert_eq!((out[0].len(), out[1].len()), (300, 300));
        let (out, stop) = interleaved::<usize, &str, ()>(2, 300, |v, _| {
            Ok((vec![v], (v == 1).then_some("late")))
        })
        .unwrap();
        assert_eq!((out[0].len(), out[1].len(), stop), (1, 1, Some("late")));
        assert_eq!((0..CHUNKS).map(|r| chunk_len(5, r)).sum::<usize>(), 5);
    }

    #[test]
    fn waiting_is_bounded() {
        assert!(wait_until(u64::MAX, || true));
        assert!(!wait_until(1000, || false));
    }

    #[test]
    fn the_thread_count_is_readable() {
        assert!(thread_count().unwrap() >= 1);
    }
}
