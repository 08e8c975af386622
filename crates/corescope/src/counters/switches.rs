//! Context switches of one thread as the OS counts them (`getrusage(RUSAGE_THREAD)`),
//! split into the ones the thread chose and the ones forced on it: what a
//! perf counter's one total cannot tell apart.

/// Context switches of one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Switches {
    /// The thread gave up the CPU (blocked in a system call: futex, sleep…).
    pub voluntary: u64,
    /// The OS took the CPU away (time slice over, another task preferred).
    pub involuntary: u64,
}

impl Switches {
    /// Both kinds.
    pub fn total(&self) -> u64 {
        self.voluntary + self.involuntary
    }

    /// The calling thread's switches so far; `None` where the OS does not say.
    #[cfg(target_os = "linux")]
    pub fn of_this_thread() -> Option<Self> {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is valid for writes of one `rusage`; RUSAGE_THREAD (Linux
        // 2.6.26+) fills it for the calling thread and touches nothing else.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: zero-initialised (a valid `rusage`) and filled by the kernel.
        let ru = unsafe { ru.assume_init() };
        Some(Self {
            voluntary: u64::try_from(ru.ru_nvcsw).unwrap_or(0),
            involuntary: u64::try_from(ru.ru_nivcsw).unwrap_or(0),
        })
    }

    /// The calling thread's switches so far; `None` where the OS does not say.
    #[cfg(not(target_os = "linux"))]
    pub fn of_this_thread() -> Option<Self> {
        None
    }

    /// The calling thread's switches while `f` runs; `None` where the OS does not say.
    pub fn during<R>(f: impl FnOnce() -> R) -> (R, Option<Self>) {
        let before = Self::of_this_thread();
        let r = f();
        let after = Self::of_this_thread();
        (r, after.zip(before).map(|(a, b)| a.since(b)))
    }

    /// Switches between `before` and `self`.
    fn since(self, before: Self) -> Self {
        Self {
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_thread_switches_voluntarily_where_the_os_says() {
        let ((), sw) = Switches::during(|| std::thread::sleep(std::time::Duration::from_millis(2)));
        assert_eq!(sw.is_some(), cfg!(target_os = "linux"));
        if let Some(s) = sw {
            assert!(s.voluntary >= 1 && s.total() >= s.voluntary, "{s:?}");
        }
    }
}
