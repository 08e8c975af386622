//! The only pinning syscalls. Masks are sized dynamically so machines with more
//! than 1024 CPUs (the size of glibc's fixed `cpu_set_t`) work.

use std::io;

const BITS: usize = u64::BITS as usize;

fn set_mask(cpus: &[u32]) -> io::Result<()> {
    let max = cpus.iter().copied().max().unwrap_or(0) as usize;
    let mut mask = vec![0u64; max / BITS + 1];
    for &c in cpus {
        mask[c as usize / BITS] |= 1 << (c as usize % BITS);
    }
    // SAFETY: `mask` is a valid buffer of `mask.len() * 8` bytes; the kernel reads
    // exactly `cpusetsize` bytes from it, and a u64 array has the bit layout of a
    // cpu_set_t on little- and big-endian Linux (CPU n = bit n%64 of word n/64).
    let rc = unsafe {
        libc::sched_setaffinity(0, mask.len() * 8, mask.as_ptr().cast::<libc::cpu_set_t>())
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pin the calling thread to one CPU (OS index).
pub fn pin_current(cpu: u32) -> io::Result<()> {
    set_mask(&[cpu])
}

/// Let the calling thread run on any of these CPUs.
pub fn allow_current(cpus: &[u32]) -> io::Result<()> {
    if cpus.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty CPU set"));
    }
    set_mask(cpus)
}

/// CPUs the calling thread may run on.
pub fn allowed_current() -> io::Result<Vec<u32>> {
    let mut words = 16usize; // 1024 CPUs; grown on EINVAL
    loop {
        let mut mask = vec![0u64; words];
        // SAFETY: `mask` is writable for `words * 8` bytes, the size passed.
        let rc = unsafe {
            libc::sched_getaffinity(0, words * 8, mask.as_mut_ptr().cast::<libc::cpu_set_t>())
        };
        if rc == 0 {
            let mut out = Vec::new();
            for (w, &bits) in mask.iter().enumerate() {
                for b in 0..BITS {
                    if bits & (1 << b) != 0 {
                        out.push((w * BITS + b) as u32);
                    }
                }
            }
            return Ok(out);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINVAL) && words < 1 << 12 {
            words *= 2;
        } else {
            return Err(err);
        }
    }
}

/// CPU the calling thread is running on right now, if the OS says.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    u32::try_from(c).ok()
}

/// Why a thread is not on the CPU it was pinned to; its message is a warning's.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// The OS refused the pin.
    #[error("the OS refused to pin a thread to CPU {cpu} ({source}); it ran unpinned")]
    Refused {
        /// The CPU asked for.
        cpu: u32,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// The pin was accepted but the thread runs elsewhere.
    #[error("pinned a thread to CPU {cpu} but it runs on CPU {now}")]
    Elsewhere {
        /// The CPU asked for.
        cpu: u32,
        /// Where it runs.
        now: u32,
    },
}

/// Pin to `cpu` and check that the OS honoured it. `Err` says why, for a
/// warning; the thread then runs wherever it was allowed before.
pub fn pin_checked(cpu: u32) -> Result<(), PinError> {
    match pin_current(cpu) {
        Err(source) => Err(PinError::Refused { cpu, source }),
        Ok(()) => match current_cpu() {
            Some(now) if now != cpu => Err(PinError::Elsewhere { cpu, now }),
            _ => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_round_trip() {
        let before = allowed_current().unwrap();
        assert!(!before.is_empty());
        std::thread::spawn(move || {
            let cpu = *before.last().unwrap();
            pin_checked(cpu).unwrap();
            assert_eq!(allowed_current().unwrap(), vec![cpu]);
            assert_eq!(current_cpu(), Some(cpu));
            allow_current(&before).unwrap();
            assert_eq!(allowed_current().unwrap(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn refused_pin_is_an_error_not_a_panic() {
        // CPU 100000 does not exist anywhere.
        std::thread::spawn(|| assert!(pin_checked(100_000).is_err()))
            .join()
            .unwrap();
    }
}
