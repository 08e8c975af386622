//! Per-thread event counters through `perf_event_open` (the `perf-event2` crate).
//!
//! Two groups per thread, each optional:
//! - software (the kernel's, present even in VMs without a PMU): task-clock,
//!   context switches, CPU migrations, page faults;
//! - hardware, where the machine has a PMU: cycles and instructions in one group
//!   (so CPI covers exactly the same period), and cache misses and stalled cycles
//!   (front end, back end) each on its own where offered (the kernel multiplexes
//!   them if the PMU lacks counters; their values are scaled by enabled/running).
//!
//! [`Counters::open`] never fails: what could not be opened is recorded in
//! [`CounterStatus`] ("skipped: no PMU (…)") and its readings are `None`.
//! Counters observe the calling thread only (pid 0, no inheritance), so open them
//! inside the worker that runs the kernel, after pinning.
//!
//! Derived figures (seed 001 §3, Tables 2, 4, 5): MIPS = instructions / wall
//! seconds / 10⁶; CPI = cycles / instructions; IPC = 1 / CPI; efficiency = IPC ÷
//! the core's issue width ([`issue_width_here`]); the seed's own efficiency is the
//! machine's, [`machine_efficiency`]. Where no PMU counts instructions, MIPS and
//! CPI come from a kernel's known instruction count ([`mips_from_count`],
//! [`cpi_from_count`]). Measuring code never prints.

use perf_event::events::{Event, Hardware, Software};
use perf_event::{Builder, Counter, Group};
use serde::{Deserialize, Serialize};
use std::io;

mod from_count;
mod issue_width;
mod tables;
pub use from_count::{
    busy_cpus, cpi_from_count, machine_max_mips, mips_from_count, CPI_FROM_COUNT, MIPS_FROM_COUNT,
    PERCENT_OF_MAX_MIPS,
};
pub use issue_width::{cpu_signature, issue_width_for, issue_width_here, IssueWidth};
pub use tables::{case_table, case_tables, hardware_note, record, summary_table, SUMMARY_TABLE};

/// Why a counter operation failed after the counters were opened.
#[derive(Debug, thiserror::Error)]
#[error("perf counters: {op} the {group} group: {source}")]
pub struct CounterError {
    /// `enable`, `disable`, `reset` or `read`.
    pub op: &'static str,
    /// `software` or `hardware`.
    pub group: &'static str,
    /// The OS error.
    pub source: io::Error,
}

/// Whether a group of counters is counted here, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Opened; its readings are present.
    Counted,
    /// Not opened: "no PMU (…)", "not permitted (…)", or the OS error.
    Skipped(String),
}

impl std::fmt::Display for Availability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Availability::Counted => f.write_str("counted"),
            Availability::Skipped(why) => write!(f, "skipped: {why}"),
        }
    }
}

/// What [`Counters::open`] managed to open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterStatus {
    /// task-clock, context switches, CPU migrations, page faults.
    pub software: Availability,
    /// cycles and instructions (cache misses and stalled cycles where offered).
    pub hardware: Availability,
    /// Whether kernel-mode events are counted too (false where
    /// `perf_event_paranoid` allows user mode only: context switches then read 0).
    pub kernel_counted: bool,
}

/// Counts of one thread over one measured interval; `None` where not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterReading {
    /// CPU time of the thread while enabled (software task-clock), ns.
    pub task_clock_ns: Option<u64>,
    /// Context switches of the thread.
    pub context_switches: Option<u64>,
    /// Moves of the thread to another CPU.
    pub cpu_migrations: Option<u64>,
    /// Page faults (minor and major).
    pub page_faults: Option<u64>,
    /// Retired instructions (user mode).
    pub instructions: Option<u64>,
    /// Core cycles (user mode).
    pub cycles: Option<u64>,
    /// Last-level cache misses, where the PMU offers the generic event.
    pub cache_misses: Option<u64>,
    /// Cycles the front end delivered nothing, where offered.
    pub stalled_cycles_frontend: Option<u64>,
    /// Cycles the back end retired nothing, where offered.
    pub stalled_cycles_backend: Option<u64>,
    /// Wall time the counters were enabled, ns.
    pub enabled_ns: u64,
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        _ => None,
    }
}

impl CounterReading {
    /// Sum of several threads' readings (a value is present only if every thread
    /// has it); `enabled_ns` is the longest.
    pub fn sum<'a>(readings: impl IntoIterator<Item = &'a CounterReading>) -> Option<Self> {
        let mut it = readings.into_iter();
        let first = *it.next()?;
        Some(it.fold(first, |a, b| CounterReading {
            task_clock_ns: add_opt(a.task_clock_ns, b.task_clock_ns),
            context_switches: add_opt(a.context_switches, b.context_switches),
            cpu_migrations: add_opt(a.cpu_migrations, b.cpu_migrations),
            page_faults: add_opt(a.page_faults, b.page_faults),
            instructions: add_opt(a.instructions, b.instructions),
            cycles: add_opt(a.cycles, b.cycles),
            cache_misses: add_opt(a.cache_misses, b.cache_misses),
            stalled_cycles_frontend: add_opt(a.stalled_cycles_frontend, b.stalled_cycles_frontend),
            stalled_cycles_backend: add_opt(a.stalled_cycles_backend, b.stalled_cycles_backend),
            enabled_ns: a.enabled_ns.max(b.enabled_ns),
        }))
    }

    /// Derived figures over `wall_ns` of wall time (the team time for a team's
    /// sum), with the core's issue width if known.
    pub fn derived(&self, wall_ns: f64, issue_width: Option<u32>) -> Derived {
        let instr = self.instructions.map(|i| i as f64);
        let cycles = self.cycles.map(|c| c as f64);
        let mips = instr
            .filter(|_| wall_ns > 0.0)
            .map(|i| i / (wall_ns * 1e-9) / 1e6);
        let cpi = match (cycles, instr) {
            (Some(c), Some(i)) if i > 0.0 => Some(c / i),
            _ => None,
        };
        let ipc = match (cycles, instr) {
            (Some(c), Some(i)) if c > 0.0 => Some(i / c),
            _ => None,
        };
        let efficiency = match (ipc, issue_width) {
            (Some(ipc), Some(w)) if w > 0 => Some(ipc / w as f64),
            _ => None,
        };
        Derived {
            mips,
            cpi,
            ipc,
            efficiency,
        }
    }
}

impl CounterReading {
    /// Add `other` to this reading (successive intervals of one thread): counts and
    /// `enabled_ns` add up; a count stays present only if both have it.
    pub fn accumulate(&mut self, other: &CounterReading) {
        let add = |a: &mut Option<u64>, b: Option<u64>| *a = add_opt(*a, b);
        add(&mut self.task_clock_ns, other.task_clock_ns);
        add(&mut self.context_switches, other.context_switches);
        add(&mut self.cpu_migrations, other.cpu_migrations);
        add(&mut self.page_faults, other.page_faults);
        add(&mut self.instructions, other.instructions);
        add(&mut self.cycles, other.cycles);
        add(&mut self.cache_misses, other.cache_misses);
        add(
            &mut self.stalled_cycles_frontend,
            other.stalled_cycles_frontend,
        );
        add(
            &mut self.stalled_cycles_backend,
            other.stalled_cycles_backend,
        );
        self.enabled_ns += other.enabled_ns;
    }
}

/// Descriptors one thread's [`Counters`] hold at most: a group leader and four
/// software events, a group leader, cycles, instructions and three optional
/// hardware events.
pub const FDS_PER_THREAD: usize = 11;

/// Whether `threads` threads may open their counters without starving the
/// process of file descriptors (the probes open files and sockets too): `Err`
/// with the reason when they would take more than half of what is left of
/// `RLIMIT_NOFILE`.
pub fn descriptors_allow(threads: usize) -> Result<(), String> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return Ok(());
    }
    let limit = usize::try_from(r.rlim_cur).unwrap_or(usize::MAX);
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    let need = threads.saturating_mul(FDS_PER_THREAD);
    if need <= limit.saturating_sub(open) / 2 {
        Ok(())
    } else {
        Err(format!(
            "not counted: {threads} threads × {FDS_PER_THREAD} descriptors would take more \
             than half of the {} left under RLIMIT_NOFILE (ulimit -n {limit})",
            limit.saturating_sub(open)
        ))
    }
}

/// One worker's counts over the repetitions of one team run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadCount {
    /// The worker was pinned to one CPU and the OS honoured it.
    pub pinned: bool,
    /// Counts summed over the repetitions; `None` if its counters failed.
    pub reading: Option<CounterReading>,
}

/// What one team run counted: per worker, and the team's wall time.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamCount {
    /// What the first worker could open (every worker opens the same events).
    pub status: CounterStatus,
    /// One entry per worker, in worker order.
    pub threads: Vec<ThreadCount>,
    /// Sum over the repetitions of last end − first start, ns.
    pub wall_ns: u64,
}

impl TeamCount {
    /// The team's counts (every worker's sum); `None` if a worker has none.
    pub fn total(&self) -> Option<CounterReading> {
        let readings: Option<Vec<CounterReading>> =
            self.threads.iter().map(|t| t.reading).collect();
        CounterReading::sum(readings?.iter())
    }

    /// The team of `threads` (the first one's status stands for all: every thread
    /// opens the same events) over `wall_ns`; `None` without threads.
    pub fn of_threads(
        threads: impl IntoIterator<Item = CountedThread>,
        wall_ns: u64,
    ) -> Option<TeamCount> {
        let mut status = None;
        let mut counted = Vec::new();
        for t in threads {
            status.get_or_insert(t.status);
            counted.push(t.count);
        }
        Some(TeamCount {
            status: status?,
            threads: counted,
            wall_ns,
        })
    }

    /// A team that did not count, and why (both groups skipped with `why`).
    pub fn skipped(why: String, wall_ns: u64) -> TeamCount {
        let no = Availability::Skipped(why);
        TeamCount {
            status: CounterStatus {
                software: no.clone(),
                hardware: no,
                kernel_counted: false,
            },
            threads: Vec::new(),
            wall_ns,
        }
    }
}

/// One thread's counters over successive measured intervals, and their sum: what
/// every counted thread keeps (a team's workers, the channel's producer and
/// consumer, the pool's workers). Open it in the thread it counts, after pinning
/// and setup; [`ThreadCounter::start`] just before the start stamp,
/// [`ThreadCounter::stop`] just after the end stamp (another thread may call them
/// too: the descriptors belong to the process). A counter error ends counting for
/// the thread; it is kept as a sentence for the result's warnings.
pub struct ThreadCounter {
    counters: Option<Counters>,
    status: CounterStatus,
    pinned: bool,
    sum: Option<CounterReading>,
    error: Option<String>,
}

/// What one counted thread leaves behind ([`ThreadCounter::finish`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CountedThread {
    /// What its counters could open.
    pub status: CounterStatus,
    /// Its counts (none if a counter failed) and whether it was pinned.
    pub count: ThreadCount,
    /// Why its counters failed, as a warning sentence.
    pub error: Option<String>,
}

impl ThreadCounter {
    /// Open the calling thread's counters (disabled); `pinned`: the thread is
    /// pinned to one CPU and the OS honoured it (its migrations then warn).
    pub fn open(pinned: bool) -> Self {
        let counters = Counters::open();
        Self {
            status: counters.status().clone(),
            counters: Some(counters),
            pinned,
            sum: None,
            error: None,
        }
    }

    fn fail(&mut self, e: CounterError) {
        self.error = Some(e.to_string());
        self.counters = None;
        self.sum = None;
    }

    /// Zero and enable the counters.
    pub fn start(&mut self) {
        if let Some(Err(e)) = self.counters.as_mut().map(Counters::start) {
            self.fail(e);
        }
    }

    /// Disable and read the counters; add the interval to the sum.
    pub fn stop(&mut self) {
        match self.counters.as_mut().map(Counters::stop) {
            Some(Ok(r)) => match &mut self.sum {
                Some(s) => s.accumulate(&r),
                None => self.sum = Some(r),
            },
            Some(Err(e)) => self.fail(e),
            None => {}
        }
    }

    /// The sum of the intervals (closes the counters).
    pub fn finish(self) -> CountedThread {
        let reading = if self.error.is_some() { None } else { self.sum };
        CountedThread {
            status: self.status,
            count: ThreadCount {
                pinned: self.pinned,
                reading,
            },
            error: self.error,
        }
    }
}

/// The counted threads of one measured run whose threads are not a harness team
/// (the channel's producer and consumer): each thread adds what it counted and
/// its start and end stamps; the run's wall time is last end − first start.
#[derive(Default)]
pub struct CountedRun {
    threads: std::sync::Mutex<Vec<(CountedThread, u64, u64)>>,
}

impl CountedRun {
    /// Add one thread's counts over `[start_ns, end_ns]` (the caller's clock).
    pub fn add(&self, thread: CountedThread, start_ns: u64, end_ns: u64) {
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        t.push((thread, start_ns, end_ns));
    }

    /// The run as a team (`None` if no thread added itself), and the counter
    /// errors as warning sentences.
    pub fn finish(self) -> (Option<TeamCount>, Vec<String>) {
        let threads = self.threads.into_inner().unwrap_or_else(|e| e.into_inner());
        let start = threads.iter().map(|t| t.1).min().unwrap_or(0);
        let end = threads.iter().map(|t| t.2).max().unwrap_or(0);
        let errors = threads.iter().filter_map(|t| t.0.error.clone()).collect();
        let team =
            TeamCount::of_threads(threads.into_iter().map(|t| t.0), end.saturating_sub(start));
        (team, errors)
    }
}

/// Counters of threads that someone else starts and runs (a pool's workers): each
/// thread joins from inside ([`SharedCounters::join_this_thread`], e.g. from the
/// pool's worker-start hook), and the controlling thread starts and stops them all
/// around the measured part. A thread that joins while they run starts at once.
#[derive(Default)]
pub struct SharedCounters {
    state: std::sync::Mutex<SharedState>,
}

#[derive(Default)]
struct SharedState {
    running: bool,
    threads: Vec<ThreadCounter>,
    /// When the current interval began (`Instant`: this room sits below `clock`).
    started: Option<std::time::Instant>,
    /// The intervals' total, ns.
    wall_ns: u64,
    /// Why these threads are not counted ([`SharedCounters::refuse`]).
    refused: Option<String>,
}

impl SharedCounters {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Count none of the threads, for this reason (too many threads for the file
    /// descriptors left, [`descriptors_allow`]): joining then opens nothing, and
    /// [`SharedCounters::finish`] reports the team as skipped.
    pub fn refuse(&self, why: String) {
        let mut st = self.lock();
        st.threads.clear();
        st.refused = Some(why);
    }

    /// Open the calling thread's counters and add them (started if the others run).
    pub fn join_this_thread(&self, pinned: bool) {
        if self.lock().refused.is_some() {
            return;
        }
        let mut c = ThreadCounter::open(pinned);
        let mut st = self.lock();
        if st.running {
            c.start();
        }
        st.threads.push(c);
    }

    /// Zero and enable every joined thread's counters.
    pub fn start(&self) {
        let mut st = self.lock();
        st.running = true;
        st.threads.iter_mut().for_each(ThreadCounter::start);
        st.started = Some(std::time::Instant::now());
    }

    /// Disable and read every joined thread's counters.
    pub fn stop(&self) {
        let mut st = self.lock();
        if let Some(t) = st.started.take() {
            st.wall_ns += u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        }
        st.running = false;
        st.threads.iter_mut().for_each(ThreadCounter::stop);
    }

    /// Every joined thread as one team over the started intervals (`None` if none
    /// joined), and the counter errors as warning sentences.
    pub fn finish(&self) -> (Option<TeamCount>, Vec<String>) {
        let (threads, wall_ns) = {
            let mut st = self.lock();
            if let Some(why) = st.refused.clone() {
                return (Some(TeamCount::skipped(why, st.wall_ns)), Vec::new());
            }
            (std::mem::take(&mut st.threads), st.wall_ns)
        };
        // A thread that joined after the measured part counted nothing: left out.
        let threads: Vec<CountedThread> = threads
            .into_iter()
            .filter(|t| t.sum.is_some() || t.error.is_some())
            .map(ThreadCounter::finish)
            .collect();
        let errors = threads.iter().filter_map(|t| t.error.clone()).collect();
        (TeamCount::of_threads(threads, wall_ns), errors)
    }
}

/// Seed 001's efficiency of a whole machine: MIPS ÷ the machine's maximum MIPS,
/// (core clock × cores × issue width) / 10⁶. Equal to the team's IPC ÷ width when
/// every core runs one thread for the whole time.
pub fn machine_efficiency(mips: f64, core_hz: f64, cores: usize, issue_width: u32) -> Option<f64> {
    machine_max_mips(core_hz, cores, issue_width).map(|max| mips / max)
}

/// Figures derived from a [`CounterReading`] (seed 001 §3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Millions of instructions per wall second.
    pub mips: Option<f64>,
    /// Cycles per instruction.
    pub cpi: Option<f64>,
    /// Instructions per cycle.
    pub ipc: Option<f64>,
    /// IPC ÷ issue width (0..1; slightly above 1 is possible where the width
    /// counts fused macro-ops and two instructions fuse into one).
    pub efficiency: Option<f64>,
}

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

/// Why an event could not be opened, in the words of the report.
fn skip_reason(event: &str, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => {
            format!("no PMU (perf_event_open({event}): {e})")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let paranoid =
                crate::topology::host::perf_event_paranoid().unwrap_or_else(|| "unknown".into());
            format!(
                "not permitted (perf_event_open({event}): {e}; perf_event_paranoid = {paranoid})"
            )
        }
        _ => format!("perf_event_open({event}): {e}"),
    }
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

fn open_hardware() -> Result<HardwareSet, String> {
    // User mode only: what the kernel does for the thread is not the kernel's
    // instructions, and user-mode counting needs no privilege.
    let mut group = Group::new().map_err(|e| skip_reason("group", &e))?;
    let cycles = group
        .add(&member(Hardware::CPU_CYCLES, false))
        .map_err(|e| skip_reason("cycles", &e))?;
    let instructions = group
        .add(&member(Hardware::INSTRUCTIONS, false))
        .map_err(|e| skip_reason("instructions", &e))?;
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

fn io_err(op: &'static str, group: &'static str) -> impl Fn(io::Error) -> CounterError {
    move |source| CounterError { op, group, source }
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
                    Err(e) => (
                        None,
                        Availability::Skipped(skip_reason("software", &e)),
                        false,
                    ),
                }
            }
            Err(e) => (
                None,
                Availability::Skipped(skip_reason("software", &e)),
                false,
            ),
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
    use crate::model::{ProbeCounters, ProbeResult, Warning};

    #[test]
    fn shared_counters_count_joined_threads_over_started_intervals_or_say_why_not() {
        let c = std::sync::Arc::new(SharedCounters::default());
        c.join_this_thread(false);
        c.start();
        // A thread joining while they run starts at once.
        let c2 = std::sync::Arc::clone(&c);
        std::thread::spawn(move || {
            c2.join_this_thread(false);
            std::hint::black_box((0..100_000u64).sum::<u64>());
        })
        .join()
        .unwrap();
        c.stop();
        let (team, errors) = c.finish();
        assert!(errors.is_empty(), "{errors:?}");
        let team = team.unwrap();
        assert_eq!(team.threads.len(), 2);
        assert!(team.wall_ns > 0);
        // Refused: nothing opened, the team skipped with the reason.
        let r = SharedCounters::default();
        r.refuse("not counted: too many threads".into());
        r.join_this_thread(false);
        r.start();
        r.stop();
        let (team, _) = r.finish();
        let team = team.unwrap();
        assert!(team.threads.is_empty());
        assert_eq!(
            team.status.software,
            Availability::Skipped("not counted: too many threads".into())
        );
    }

    /// Synthetic counts in the proportions of one thread of an integer kernel over
    /// 0.1 s (this machine has no PMU to record real hardware counts from); the
    /// seed's recorded figures are checked in `machine_efficiency_matches_seed_001`.
    fn recorded() -> CounterReading {
        CounterReading {
            task_clock_ns: Some(100_200_000),
            context_switches: Some(1),
            cpu_migrations: Some(0),
            page_faults: Some(3),
            instructions: Some(1_020_000_000),
            cycles: Some(480_000_000),
            cache_misses: Some(1_200),
            stalled_cycles_frontend: None,
            stalled_cycles_backend: None,
            enabled_ns: 100_000_000,
        }
    }

    #[test]
    fn derived_figures_follow_seed_001() {
        let d = recorded().derived(100_000_000.0, Some(6));
        assert!((d.mips.unwrap() - 10_200.0).abs() < 1e-6, "{d:?}");
        assert!((d.cpi.unwrap() - 480.0 / 1020.0).abs() < 1e-12);
        assert!((d.ipc.unwrap() - 1020.0 / 480.0).abs() < 1e-12);
        assert!((d.efficiency.unwrap() - 1020.0 / 480.0 / 6.0).abs() < 1e-12);
        // 8 threads, each with its own core, at IPC 0.5 on 4-wide cores: 12.5 %.
        let team = CounterReading {
            instructions: Some(8 * 600_000_000),
            cycles: Some(8 * 1_200_000_000),
            ..CounterReading::default()
        };
        let d = team.derived(1e9, Some(4));
        assert_eq!(d.ipc, Some(0.5));
        assert_eq!(d.efficiency, Some(0.125));
        assert_eq!(d.mips, Some(4800.0));
    }

    /// Seed 001, Table 2 (US-IV, 8 cores, 4 instructions per cycle, 1.2 GHz):
    /// MIPS 1597.5 → 4.16 %, 3183.5 → 8.29 %, 4180.11 → 10.89 %, 12761.94 → 33.23 %.
    #[test]
    fn machine_efficiency_matches_seed_001() {
        for (mips, percent) in [
            (1597.5, 4.16),
            (3183.5, 8.29),
            (4180.11, 10.89),
            (12761.94, 33.23),
        ] {
            let e = machine_efficiency(mips, 1.2e9, 8, 4).unwrap();
            assert!((e * 100.0 - percent).abs() < 0.01, "{mips}: {e}");
        }
        assert_eq!(machine_efficiency(100.0, 0.0, 8, 4), None);
    }

    #[test]
    fn missing_counts_give_missing_figures() {
        let sw_only = CounterReading {
            instructions: None,
            cycles: None,
            ..recorded()
        };
        assert_eq!(sw_only.derived(1e8, Some(4)), Derived::default());
        let d = recorded().derived(1e8, None);
        assert!(d.ipc.is_some() && d.efficiency.is_none());
        let zero = CounterReading {
            instructions: Some(0),
            cycles: Some(0),
            ..recorded()
        };
        let d = zero.derived(0.0, Some(4));
        assert_eq!((d.mips, d.cpi, d.ipc), (None, None, None));
    }

    #[test]
    fn sums_keep_only_what_every_thread_has() {
        let a = recorded();
        let b = CounterReading {
            cache_misses: None,
            enabled_ns: 120_000_000,
            ..recorded()
        };
        let s = CounterReading::sum([&a, &b]).unwrap();
        assert_eq!(s.instructions, Some(2_040_000_000));
        assert_eq!(s.cache_misses, None);
        assert_eq!(s.enabled_ns, 120_000_000);
        assert!(CounterReading::sum([]).is_none());
    }

    #[test]
    fn issue_width_table() {
        assert_eq!(
            issue_width_for("AuthenticAMD", 0x1A, 0x02).unwrap().width,
            8
        );
        assert_eq!(
            issue_width_for("AuthenticAMD", 0x19, 0x11).unwrap().width,
            6
        );
        assert_eq!(issue_width_for("GenuineIntel", 6, 0x55).unwrap().width, 4);
        assert_eq!(issue_width_for("GenuineIntel", 6, 0x8F).unwrap().width, 6);
        // Hybrid Alder Lake: two widths, so none.
        assert!(issue_width_for("GenuineIntel", 6, 0x97).is_none());
        match issue_width_here() {
            Ok(w) => assert!(w.width >= 1 && !w.source.is_empty()),
            Err(why) => assert!(why.contains("unknown"), "{why}"),
        }
    }

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

    fn team(instructions: u64, cycles: u64, wall_ns: u64, migrations: u64) -> TeamCount {
        let reading = CounterReading {
            instructions: Some(instructions / 2),
            cycles: Some(cycles / 2),
            cpu_migrations: Some(migrations),
            task_clock_ns: Some(wall_ns),
            ..recorded()
        };
        TeamCount {
            status: CounterStatus {
                software: Availability::Counted,
                hardware: Availability::Counted,
                kernel_counted: true,
            },
            threads: vec![
                ThreadCount {
                    pinned: true,
                    reading: Some(reading),
                },
                ThreadCount {
                    pinned: false,
                    reading: Some(CounterReading {
                        cpu_migrations: Some(0),
                        ..reading
                    }),
                },
            ],
            wall_ns,
        }
    }

    /// Rounds filed into a result: the case's MIPS / CPI / efficiency are medians
    /// over rounds of the recorded counts, the tables carry them, and a pinned
    /// worker that migrated becomes one typed warning for the case.
    #[test]
    fn recorded_rounds_give_medians_tables_and_warnings() {
        use crate::model::Status;
        let mut r = ProbeResult::new("compute", "t", Status::Completed);
        r.counters = Some(ProbeCounters {
            software: Availability::Counted,
            hardware: Availability::Counted,
            kernel_counted: true,
            issue_width: Some(4),
            issue_width_source: "test".into(),
            cases: vec![],
        });
        // 2·10⁹ instructions in 10⁹ cycles over 0.5 s: 4000 MIPS, CPI 0.5, IPC 2, 50 %.
        for (instr, wall) in [(2e9, 5e8), (2e9, 5e8), (1e9, 5e8)] {
            record(
                &mut r,
                "int scatter ×2",
                vec![team(instr as u64, 1e9 as u64, wall as u64, 0)],
            );
        }
        record(
            &mut r,
            "fp scatter ×2",
            vec![team(1e9 as u64, 1e9 as u64, 1e9 as u64, 1)],
        );
        record(
            &mut r,
            "fp scatter ×2",
            vec![team(1e9 as u64, 1e9 as u64, 1e9 as u64, 2)],
        );
        record(&mut r, "nothing", vec![]);
        let pc = r.counters.as_ref().unwrap();
        assert_eq!(pc.cases.len(), 2);
        let int = &pc.cases[0];
        assert_eq!((int.threads, int.rounds.len()), (2, 3));
        assert_eq!(int.mips.unwrap().value, 4000.0);
        assert_eq!(int.cpi.unwrap().value, 0.5);
        assert_eq!(int.efficiency.unwrap().value, 0.5);
        assert_eq!(int.mips.unwrap().n, 3);
        assert_eq!(int.rounds[0].pinned_migrations, Some(0));
        // Only the pinned worker's migrations count, summed over rounds, one warning.
        let migrated: Vec<&Warning> = r
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::Migrated { .. }))
            .collect();
        assert_eq!(
            migrated,
            vec![&Warning::Migrated {
                case: "fp scatter ×2".into(),
                migrations: 3,
                rounds: 2
            }]
        );
        let t = case_table(pc, "int", |c| c.starts_with("int ")).unwrap();
        assert_eq!(t.rows.len(), 1);
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        assert_eq!(t.rows[0][col("MIPS")], serde_json::json!(4000.0));
        assert_eq!(t.rows[0][col("efficiency")], serde_json::json!("50 %"));
        assert_eq!(t.rows[0][col("migrations")], serde_json::json!("0"));
        assert!(case_table(pc, "none", |_| false).is_none());
        let s = summary_table(pc).unwrap();
        assert_eq!(s.name, SUMMARY_TABLE);
        assert_eq!(s.rows[1][0], serde_json::json!("task-clock (ns)"));
        assert!(hardware_note(pc).contains("issue width 4"));
        // Without a PMU: no MIPS columns, and the note says why.
        let mut no_pmu = pc.clone();
        no_pmu.hardware = Availability::Skipped("no PMU (perf_event_open(cycles): ENOENT)".into());
        let t = case_table(&no_pmu, "int", |_| true).unwrap();
        assert!(!t.columns.iter().any(|c| c == "MIPS"));
        assert!(hardware_note(&no_pmu).contains("skipped: no PMU"));
        // The record round-trips, and a result without one still loads.
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<ProbeResult>(&json).unwrap(), r);
        let old = r#"{"id":"compute","status":"completed"}"#;
        assert!(serde_json::from_str::<ProbeResult>(old)
            .unwrap()
            .counters
            .is_none());
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
                assert!(why.contains("perf_event_open"), "{why}");
            }
        }
    }
}
