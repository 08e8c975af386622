//! The raw time stamps every room reads: `CLOCK_MONOTONIC` and any POSIX clock in ns,
//! and the cycle counter (TSC on x86_64, `cntvct_el0` on aarch64). A leaf: the
//! calibration that turns ticks into ns, and the measured core clock, live in
//! `clock.rs`, which re-exports these (so `crate::clock::now_ns` keeps working);
//! the thread team reads its stamps here without depending on that calibration.

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

/// CPU time of the calling thread so far (`CLOCK_THREAD_CPUTIME_ID`), in seconds;
/// `None` where the OS does not say ([`clock_ns`] reads 0 for a clock it lacks).
pub fn thread_cpu_s() -> Option<f64> {
    let ns = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    (ns != 0).then_some(ns as f64 * 1e-9)
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
