//! Every timer corescope uses, and their calibration.
//!
//! Two time bases:
//! - [`now_ns`]: `CLOCK_MONOTONIC` in ns, common to all threads; team start/end stamps.
//! - [`ticks`]: the cheapest cycle counter (TSC on x86_64, `cntvct_el0` on aarch64,
//!   `CLOCK_MONOTONIC` elsewhere), converted to ns with the calibrated [`Clock`].
//!   Short latencies (a mutex hand-off, a CAS round trip) are timed with it.

use crate::model::ClockInfo;
use std::time::{Duration, Instant};

/// `CLOCK_MONOTONIC` in ns since an arbitrary origin (boot).
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Read any POSIX clock in ns; 0 if the clock does not exist here.
#[inline]
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Name of the counter behind [`ticks`].
pub const TICKS_SOURCE: &str = if cfg!(target_arch = "x86_64") {
    "tsc"
} else if cfg!(target_arch = "aarch64") {
    "cntvct"
} else {
    "clock_gettime"
};

/// Read the cycle counter. Not serialising: callers that need ordering with
/// surrounding loads use [`ticks_ordered`].
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC is available on every x86_64 CPU and has no memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading the virtual counter register is allowed at EL0 on Linux
        // and has no side effects.
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack)) };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        now_ns()
    }
}

/// Read the cycle counter after all earlier instructions have completed
/// (`RDTSCP` on x86_64, `ISB` + counter on aarch64).
#[inline]
pub fn ticks_ordered() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        // SAFETY: RDTSCP is present on every x86_64 CPU this tool targets
        // (checked: `rdtscp` flag; all x86_64 CPUs since 2006); `aux` is writable.
        unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: ISB and reading cntvct_el0 are allowed at EL0 and have no side effects.
        unsafe {
            core::arch::asm!("isb", "mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack))
        };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        now_ns()
    }
}

/// A calibrated cycle counter.
#[derive(Debug, Clone)]
pub struct Clock {
    /// Calibration results, as stored in the run file.
    pub info: ClockInfo,
    ns_per_tick: f64,
}

impl Clock {
    /// Calibrate [`ticks`] against `CLOCK_MONOTONIC` over about `span`.
    pub fn calibrate(span: Duration) -> Self {
        // Frequency: two (ticks, ns) pairs `span` apart; take the pair of each end
        // whose monotonic read was bracketed most tightly by the counter.
        let pair = || {
            let mut best = (u64::MAX, 0u64, 0u64);
            for _ in 0..16 {
                let t0 = ticks_ordered();
                let ns = now_ns();
                let t1 = ticks_ordered();
                if t1.wrapping_sub(t0) < best.0 {
                    best = (t1.wrapping_sub(t0), t0 / 2 + t1 / 2, ns);
                }
            }
            (best.1, best.2)
        };
        let (t_a, ns_a) = pair();
        let until = Instant::now() + span;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        let (t_b, ns_b) = pair();
        let ticks_hz = if TICKS_SOURCE == "clock_gettime" || ns_b <= ns_a || t_b <= t_a {
            1e9
        } else {
            (t_b - t_a) as f64 / ((ns_b - ns_a) as f64 * 1e-9)
        };
        let ns_per_tick = 1e9 / ticks_hz;
        let (ticks_overhead, ticks_step) = overhead_and_step(ticks);
        let (mono_overhead, mono_step) = overhead_and_step(now_ns);
        let info = ClockInfo {
            source: TICKS_SOURCE.into(),
            ticks_hz,
            read_overhead_ns: ticks_overhead * ns_per_tick,
            step_ns: ticks_step * ns_per_tick,
            monotonic_step_ns: mono_step,
            monotonic_overhead_ns: mono_overhead,
            invariant: invariant_tsc(),
        };
        Self { info, ns_per_tick }
    }

    /// A clock with a known frequency (tests, re-rendering).
    pub fn from_info(info: ClockInfo) -> Self {
        let ns_per_tick = if info.ticks_hz > 0.0 {
            1e9 / info.ticks_hz
        } else {
            1.0
        };
        Self { info, ns_per_tick }
    }

    /// Convert counter ticks to ns.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }

    /// Convert ns to counter ticks ("cycles" at the counter's rate).
    #[inline]
    pub fn ns_to_ticks(&self, ns: f64) -> f64 {
        ns / self.ns_per_tick
    }
}

/// Mean cost of one read and the smallest non-zero step, in the reader's own units.
pub fn overhead_and_step(read: impl Fn() -> u64) -> (f64, f64) {
    const READS: u64 = 20_000;
    let mut best_mean = f64::MAX;
    for _ in 0..5 {
        let start = read();
        let mut last = start;
        for _ in 0..READS {
            last = std::hint::black_box(read());
        }
        best_mean = best_mean.min(last.wrapping_sub(start) as f64 / READS as f64);
    }
    let mut step = u64::MAX;
    let mut prev = read();
    for _ in 0..READS {
        let now = read();
        let d = now.wrapping_sub(prev);
        if d > 0 && d < step {
            step = d;
        }
        prev = now;
    }
    if step == u64::MAX {
        // The clock never moved during the loop: its step is at least the loop's span.
        step = (best_mean * READS as f64) as u64;
    }
    (best_mean, step as f64)
}

/// Whether the TSC is invariant (Linux `constant_tsc` and `nonstop_tsc` flags).
fn invariant_tsc() -> Option<bool> {
    if !cfg!(target_arch = "x86_64") {
        return None;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags"))?;
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    Some(has("constant_tsc") && has("nonstop_tsc"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_plausible() {
        let c = Clock::calibrate(Duration::from_millis(20));
        // A counter between 1 MHz and 100 GHz; reads cost something and less than 100 µs.
        assert!(
            c.info.ticks_hz > 1e6 && c.info.ticks_hz < 1e11,
            "{:?}",
            c.info
        );
        assert!(c.info.read_overhead_ns > 0.0 && c.info.read_overhead_ns < 1e5);
        assert!(c.info.step_ns > 0.0);
        let ns = c.ticks_to_ns(1_000_000);
        assert!((c.ns_to_ticks(ns) - 1_000_000.0).abs() < 1.0);
    }

    #[test]
    fn monotonic_advances() {
        let a = now_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(now_ns() > a);
    }
}
