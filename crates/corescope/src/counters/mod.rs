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
//!
//! The files: this one holds the readings and what is derived from them;
//! `perf.rs` opens, starts, stops and reads one thread's `perf_event_open`
//! groups; `threads.rs` keeps the counters of a thread, a team or a pool over
//! its measured intervals; `issue_width.rs` the cores' issue widths with their
//! sources; `tables.rs` files the counts into a probe's result and its tables;
//! `from_count.rs` the figures from a kernel's known instruction count.

use serde::{Deserialize, Serialize};

mod from_count;
mod issue_width;
mod perf;
mod skip;
mod switches;
mod tables;
mod threads;
pub use from_count::{
    busy_cpus, cpi_from_count, machine_max_mips, mips_from_count, CPI_FROM_COUNT, MIPS_FROM_COUNT,
    PERCENT_OF_MAX_MIPS,
};
pub use issue_width::{
    cpu_signature, issue_width_for, issue_width_here, IssueWidth, IssueWidthUnknown, NoSignature,
};
pub use perf::Counters;
pub use skip::{CounterEvent, OsError, SkipReason};
pub use switches::Switches;
pub use tables::{case_table, case_tables, hardware_note, record, summary_table, SUMMARY_TABLE};
pub use threads::{
    descriptors_allow, CountedRun, CountedThread, DescriptorShortage, SharedCounters, TeamCount,
    ThreadCount, ThreadCounter, FDS_PER_THREAD,
};

/// Why a counter operation failed after the counters were opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("perf counters: {op} the {group} group: {source}")]
pub struct CounterError {
    /// `enable`, `disable`, `reset` or `read`.
    pub op: &'static str,
    /// `software` or `hardware`.
    pub group: &'static str,
    /// The OS error.
    pub source: OsError,
}

impl From<CounterError> for crate::model::Warning {
    fn from(e: CounterError) -> Self {
        crate::model::Warning::CountersFailed {
            op: e.op.into(),
            group: e.group.into(),
            error: e.source,
        }
    }
}

/// Whether a group of counters is counted here, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Opened; its readings are present.
    Counted,
    /// Not opened, and why ("no PMU (…)", "not permitted (…)", the OS error; older
    /// run files: the sentence).
    Skipped(SkipReason),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Synthetic counts in the proportions of one thread of an integer kernel over
    /// 0.1 s (this machine has no PMU to record real hardware counts from); the
    /// seed's recorded figures are checked in `machine_efficiency_matches_seed_001`.
    pub(super) fn recorded() -> CounterReading {
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

    /// The run file's form of a skipped group: the typed reason, and an older
    /// file's sentence read back as such, worded as before.
    #[test]
    fn availability_reads_typed_reasons_and_old_sentences() {
        let no_pmu = Availability::Skipped(SkipReason::refused(
            CounterEvent::Cycles,
            std::io::Error::from_raw_os_error(libc::ENOENT),
        ));
        let json = serde_json::to_string(&no_pmu).unwrap();
        assert_eq!(
            json,
            r#"{"skipped":{"kind":"no_pmu","event":"cycles","error":{"errno":2}}}"#
        );
        assert_eq!(serde_json::from_str::<Availability>(&json).unwrap(), no_pmu);
        let sentence = "no PMU (perf_event_open(cycles): No such file or directory (os error 2))";
        assert_eq!(no_pmu.to_string(), format!("skipped: {sentence}"));
        let old = format!(r#"{{"skipped":"{sentence}"}}"#);
        let read: Availability = serde_json::from_str(&old).unwrap();
        assert_eq!(
            read,
            Availability::Skipped(SkipReason::Old(sentence.into()))
        );
        assert_eq!(read.to_string(), no_pmu.to_string());
        assert_eq!(serde_json::to_string(&read).unwrap(), old);
        let counted: Availability = serde_json::from_str(r#""counted""#).unwrap();
        assert_eq!(counted, Availability::Counted);
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
}
