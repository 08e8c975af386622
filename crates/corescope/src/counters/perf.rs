//! One thread's `perf_event_open` groups (the `perf-event2` crate): opened
//! disabled with the reason for what could not be, zeroed and enabled, disabled
//! and read into a [`CounterReading`].

use super::{Availability, CounterError, CounterEvent, CounterReading, CounterStatus, SkipReason};
use perf_event::events::{Event, Hardware, Software};
use perf_event::{Builder, Counter, Group};
use std::io;

struct SoftwareSet {
    group: Group,
    task_clock: Counter,
    context_switches: Counter,
    cpu_migrations: Counter,
    page_faults: Counter,
}

struct HardwareSet {
    group: Group,
    cycles: Counter,
    instructions: Counter,
    /// Cache misses, stalled front end, stalled back end: each alone, if offered.
    optional: [Option<Counter>; 3],
}

/// The counters of the calling thread.
pub struct Counters {
    software: Option<SoftwareSet>,
    hardware: Option<HardwareSet>,
    status: CounterStatus,
}

fn member(event: impl Event, kernel: bool) -> Builder<'static> {
    let mut b = Builder::new(event);
    b.exclude_kernel(!kernel);
    b
}

fn open_software(kernel: bool) -> io::Result<SoftwareSet> {
    let mut gb = Group::builder();
    gb.exclude_kernel(!kernel);
    let mut group = gb.build_group()?;
    Ok(SoftwareSet {
        task_clock: group.add(&member(Software::TASK_CLOCK, kernel))?,
        context_switches: group.add(&member(Software::CONTEXT_SWITCHES, kernel))?,
        cpu_migrations: group.add(&member(Software::CPU_MIGRATIONS, kernel))?,
        page_faults: group.add(&member(Software::PAGE_FAULTS, kernel))?,
        group,
    })
}

fn refused(event: CounterEvent) -> impl Fn(io::Error) -> SkipReason {
    move |e| SkipReason::refused(event, e)
}

fn open_hardware() -> Result<HardwareSet, SkipReason> {
    // User mode only: what the kernel does for the thread is not the kernel's
    // instructions, and user-mode counting needs no privilege.
    let mut group = Group::new().map_err(refused(CounterEvent::Group))?;
    let cycles = group
        .add(&member(Hardware::CPU_CYCLES, false))
        .map_err(refused(CounterEvent::Cycles))?;
    let instructions = group
        .add(&member(Hardware::INSTRUCTIONS, false))
        .map_err(refused(CounterEvent::Instructions))?;
    let alone = |ev: Hardware| member(ev, false).build().ok();
    Ok(HardwareSet {
        group,
        cycles,
        instructions,
        optional: [
            alone(Hardware::CACHE_MISSES),
            alone(Hardware::STALLED_CYCLES_FRONTEND),
            alone(Hardware::STALLED_CYCLES_BACKEND),
        ],
    })
}

fn software_skipped(e: io::Error) -> Availability {
    Availability::Skipped(SkipReason::refused(CounterEvent::Software, e))
}

fn io_err(op: &'static str, group: &'static str) -> impl Fn(io::Error) -> CounterError {
    move |e| CounterError {
        op,
        group,
        source: e.into(),
    }
}

/// A single counter's value scaled for multiplexing; `None` if it never ran.
fn scaled(c: &mut Counter) -> Result<Option<u64>, CounterError> {
    let r = c
        .read_count_and_time()
        .map_err(io_err("read", "hardware"))?;
    Ok(match (r.time_running, r.time_enabled) {
        (0, _) => None,
        (run, en) if run >= en => Some(r.count),
        (run, en) => Some((r.count as f64 * en as f64 / run as f64) as u64),
    })
}

impl Counters {
    /// Open the calling thread's counters (disabled). Never fails: what could not
    /// be opened is in [`Counters::status`].
    pub fn open() -> Self {
        let (software, sw_status, kernel_counted) = match open_software(true) {
            Ok(s) => (Some(s), Availability::Counted, true),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
                match open_software(false) {
                    Ok(s) => (Some(s), Availability::Counted, false),
                    Err(e) => (None, software_skipped(e), false),
                }
            }
            Err(e) => (None, software_skipped(e), false),
        };
        let (hardware, hw_status) = match open_hardware() {
            Ok(h) => (Some(h), Availability::Counted),
            Err(why) => (None, Availability::Skipped(why)),
        };
        Self {
            software,
            hardware,
            status: CounterStatus {
                software: sw_status,
                hardware: hw_status,
                kernel_counted,
            },
        }
    }

    /// What is counted here.
    pub fn status(&self) -> &CounterStatus {
        &self.status
    }

    /// Zero and enable every counter.
    pub fn start(&mut self) -> Result<(), CounterError> {
        if let Some(h) = &mut self.hardware {
            h.group.reset().map_err(io_err("reset", "hardware"))?;
            for c in h.optional.iter_mut().flatten() {
                c.reset().map_err(io_err("reset", "hardware"))?;
                c.enable().map_err(io_err("enable", "hardware"))?;
            }
            h.group.enable().map_err(io_err("enable", "hardware"))?;
        }
        if let Some(s) = &mut self.software {
            s.group.reset().map_err(io_err("reset", "software"))?;
            s.group.enable().map_err(io_err("enable", "software"))?;
        }
        Ok(())
    }

    /// Disable every counter and read them.
    pub fn stop(&mut self) -> Result<CounterReading, CounterError> {
        let mut r = CounterReading::default();
        if let Some(s) = &mut self.software {
            s.group.disable().map_err(io_err("disable", "software"))?;
            let d = s.group.read().map_err(io_err("read", "software"))?;
            r.enabled_ns = d.time_enabled().map(|t| t.as_nanos() as u64).unwrap_or(0);
            r.task_clock_ns = d.get(&s.task_clock).map(|e| e.value());
            r.context_switches = d.get(&s.context_switches).map(|e| e.value());
            r.cpu_migrations = d.get(&s.cpu_migrations).map(|e| e.value());
            r.page_faults = d.get(&s.page_faults).map(|e| e.value());
        }
        if let Some(h) = &mut self.hardware {
            h.group.disable().map_err(io_err("disable", "hardware"))?;
            for c in h.optional.iter_mut().flatten() {
                c.disable().map_err(io_err("disable", "hardware"))?;
            }
            let d = h.group.read().map_err(io_err("read", "hardware"))?;
            // A group the PMU never scheduled (too few counters) reads zero: no value.
            if d.time_running().is_some_and(|t| !t.is_zero()) {
                r.cycles = d.get(&h.cycles).map(|e| e.value());
                r.instructions = d.get(&h.instructions).map(|e| e.value());
            }
            if r.enabled_ns == 0 {
                r.enabled_ns = d.time_enabled().map(|t| t.as_nanos() as u64).unwrap_or(0);
            }
            let [cm, sf, sb] = &mut h.optional;
            r.cache_misses = cm.as_mut().map(scaled).transpose()?.flatten();
            r.stalled_cycles_frontend = sf.as_mut().map(scaled).transpose()?.flatten();
            r.stalled_cycles_backend = sb.as_mut().map(scaled).transpose()?.flatten();
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_bytes() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p).unwrap_or(4096)
    }

    /// Touching N fresh pages faults about N times (deterministic: the mapping is
    /// new and huge pages are turned off for it).
    #[test]
    fn touching_fresh_pages_counts_page_faults() {
        let mut c = Counters::open();
        if c.status().software != Availability::Counted {
            eprintln!("software counters: {}", c.status().software);
            return;
        }
        const PAGES: usize = 256;
        let page = page_bytes();
        let len = PAGES * page;
        // SAFETY: anonymous private mapping of `len` bytes; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: `p` is our mapping of `len` bytes. Failure only means THP stays
        // as configured, which the upper slack below would then reveal.
        unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
        let base = p.cast::<u8>();
        c.start().unwrap();
        for i in 0..PAGES {
            // SAFETY: i * page < len: inside the mapping.
            unsafe { base.add(i * page).write_volatile(1) };
        }
        let r = c.stop().unwrap();
        // SAFETY: unmapping our own mapping once.
        unsafe { libc::munmap(p, len) };
        let faults = r.page_faults.unwrap();
        assert!(
            (PAGES as u64..=PAGES as u64 + 16).contains(&faults),
            "{faults} page faults for {PAGES} fresh pages: {r:?}"
        );
    }

    #[test]
    fn a_pinned_thread_does_not_migrate() {
        let cpus = crate::affinity::allowed_current().unwrap();
        let cpu = *cpus.last().unwrap();
        std::thread::spawn(move || {
            crate::affinity::pin_checked(cpu).unwrap();
            let mut c = Counters::open();
            if c.status().software != Availability::Counted {
                return;
            }
            c.start().unwrap();
            let mut x = 0u64;
            for i in 0..2_000_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
                if i % 500_000 == 0 {
                    std::thread::yield_now();
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            let r = c.stop().unwrap();
            assert_eq!(r.cpu_migrations, Some(0), "{r:?}");
            assert!(r.task_clock_ns.unwrap() > 0);
            // It slept four times: four context switches where kernel events count.
            if c.status().kernel_counted {
                assert!(r.context_switches.unwrap() >= 4, "{r:?}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn hardware_part_is_counted_or_says_why_not() {
        let mut c = Counters::open();
        let status = c.status().clone();
        c.start().unwrap();
        let r = c.stop().unwrap();
        match status.hardware {
            Availability::Counted => assert!(r.cycles.is_some() || r.instructions.is_none()),
            Availability::Skipped(why) => {
                assert!(r.instructions.is_none() && r.cycles.is_none());
                assert!(why.to_string().contains("perf_event_open"), "{why}");
            }
        }
    }
}
