//! The rows: which probe case meets which tool, on which CPUs and sizes, and what
//! differs in definition.

use super::ours::{self, CrossError, OurCase};
use super::tools::{self, Tool};
use super::Setup;
use crate::model::{CrossRow, Profile, RowStatus};
use crate::probes::memory::{self, Kernel};
use crate::probes::peak::{self, kernel_name, limit, Level, Precision};
use crate::probes::syscall::{self, Call};
use crate::probes::{c2c, mutex};
use serde_json::json;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

/// Passes of corescope's bandwidth case per round (each a fresh block, one timed
/// pass): the round's value is their median.
pub const MEMORY_PASSES_PER_ROUND: usize = 5;
/// Timed passes of the sustained read and copy experiments (about 0.2–0.4 s at
/// 128 MiB per thread and 15–30 GB/s; likwid-bench times about 1 s).
pub const SUSTAINED_PASSES: usize = 50;
/// likwid-bench's working set for the peak kernels: in L1 on every core known, so
/// its one load per FMA never waits on memory (`peakflops_*` at a large size is a
/// memory benchmark).
pub const PEAK_WORKING_SET_KB: u64 = 32;
/// ptsematest's loops per round and its interval between them (µs).
pub const PTSEMATEST_LOOPS: u32 = 1_000;
/// ptsematest's interval between wake-ups, µs (its default).
pub const PTSEMATEST_INTERVAL_US: u32 = 1_000;
/// core-to-core-latency's round trips per sample and samples per run (as the issue
/// that asked for this row ran it).
pub const C2C_TOOL_ITERATIONS: u32 = 5_000;
/// Round trips per run of corescope's experiment without pause (the default
/// profile's count of the c2c probe).
pub const C2C_ROUND_TRIPS: u64 = 20_000;
/// Samples of core-to-core-latency per run.
pub const C2C_TOOL_SAMPLES: u32 = 300;
/// Calls of `perf bench syscall basic` per run.
pub const PERF_SYSCALL_LOOPS: u32 = 1_000_000;
/// Longest a tool may run once before it is stopped.
pub const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// One side of a row, measured once: its value in the row's unit.
type Measure = Box<dyn FnMut() -> Result<f64, CrossError>>;

/// The two sides of a measurable row.
pub struct Side {
    ours: Measure,
    theirs: Measure,
    command: Rc<RefCell<String>>,
}

impl Side {
    /// corescope's value.
    pub fn ours(&mut self) -> Result<f64, CrossError> {
        (self.ours)()
    }

    /// The tool's value.
    pub fn theirs(&mut self) -> Result<f64, CrossError> {
        (self.theirs)()
    }

    /// The tool's command line as last run.
    pub fn command(&self) -> String {
        self.command.borrow().clone()
    }
}

/// A row before it is measured: what it is, and its sides when both can run.
pub struct RowPlan {
    /// The row, its status already set when it cannot be measured.
    pub row: CrossRow,
    /// Both sides; `None` when the row is not installed or skipped.
    pub sides: Option<Side>,
}

/// Every row for this machine, of the probes asked for.
pub fn plan_rows(setup: &Setup) -> Vec<RowPlan> {
    let cpus: Vec<u32> = setup.topo.allowed_os_indices();
    let mut out = Vec::new();
    let wanted = |p: &str| setup.probes.is_empty() || setup.probes.iter().any(|w| w == p);
    if wanted(memory::ID) {
        for threads in [1usize, 2] {
            for kernel in [Kernel::Read, Kernel::Write, Kernel::Copy] {
                out.push(memory_row(setup, &cpus, kernel, threads, None));
            }
        }
        // The experiments: the same kernels timed over many passes back to back.
        for kernel in [Kernel::Read, Kernel::Copy] {
            for threads in [1usize, 2] {
                out.push(memory_row(
                    setup,
                    &cpus,
                    kernel,
                    threads,
                    Some(SUSTAINED_PASSES),
                ));
            }
        }
    }
    if wanted(peak::ID) {
        for level in [Level::Avx2Fma, Level::Avx512Fma] {
            out.push(peak_likwid_row(setup, &cpus, level));
            out.push(peak_limit_row(setup, &cpus, level));
        }
    }
    if wanted(mutex::ID) {
        for which in [
            MutexRow::Probe,
            MutexRow::ToolAtSettle,
            MutexRow::HolderBlocks,
        ] {
            out.push(mutex_row(setup, &cpus, which));
        }
    }
    if wanted(c2c::ID) {
        for cas in [true, false] {
            out.push(c2c_row(setup, &cpus, cas, true));
            out.push(c2c_row(setup, &cpus, cas, false));
        }
    }
    if wanted(syscall::ID) {
        out.push(syscall_row(setup, &cpus, Call::Getpid));
        out.push(syscall_row(setup, &cpus, Call::Getppid));
    }
    out
}

/// The names `crosscheck` accepts.
pub const PROBES: [&str; 5] = [memory::ID, peak::ID, mutex::ID, c2c::ID, syscall::ID];

fn threads_words(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

fn new_row(id: String, what: String, tool: String, unit: &str, definition: &str) -> CrossRow {
    CrossRow {
        id,
        what,
        tool,
        tool_version: None,
        unit: unit.into(),
        command: String::new(),
        definition: definition.into(),
        status: RowStatus::Measured,
        ours: Vec::new(),
        theirs: Vec::new(),
        ours_estimate: None,
        theirs_estimate: None,
        ratio: None,
        verdict: None,
    }
}

fn skipped(mut row: CrossRow, why: impl std::fmt::Display) -> RowPlan {
    row.status = RowStatus::Skipped {
        why: why.to_string(),
    };
    RowPlan { row, sides: None }
}

/// The tool's path, or the row marked "not installed" with the install command.
fn locate(row: &mut CrossRow, tool: Tool, os: &str) -> Option<PathBuf> {
    match tool.find() {
        Some(p) => {
            row.tool_version = tools::version(tool, &p);
            Some(p)
        }
        None => {
            row.status = RowStatus::NotInstalled {
                install: tool.install(os),
            };
            None
        }
    }
}

/// A measurable row: both sides, and the command line the tool side records.
fn measured(
    row: CrossRow,
    ours: Measure,
    theirs: Measure,
    command: Rc<RefCell<String>>,
) -> RowPlan {
    RowPlan {
        row,
        sides: Some(Side {
            ours,
            theirs,
            command,
        }),
    }
}

/// A row whose tool side runs `path args` (started from a thread pinned to `pin`
/// when one is given) and reads its value from the output with `parse`.
fn tool_row<E: Into<CrossError>>(
    row: CrossRow,
    path: PathBuf,
    args: Vec<String>,
    pin: Option<u32>,
    parse: impl Fn(&str) -> Result<f64, E> + 'static,
    ours: Measure,
) -> RowPlan {
    let command = Rc::new(RefCell::new(String::new()));
    let theirs = {
        let command = command.clone();
        Box::new(move || run_tool(&path, &args, &command, &parse, pin)) as Measure
    };
    measured(row, ours, theirs, command)
}

/// Run a tool (from a thread pinned to `pin`, which it inherits, when one is given)
/// and parse its output; a failed run says what it printed.
fn run_tool<E: Into<CrossError>>(
    path: &Path,
    args: &[String],
    command: &Rc<RefCell<String>>,
    parse: impl Fn(&str) -> Result<f64, E>,
    pin: Option<u32>,
) -> Result<f64, CrossError> {
    *command.borrow_mut() = match pin {
        Some(cpu) => format!(
            "{} {} (started pinned to CPU {cpu})",
            path.display(),
            args.join(" ")
        ),
        None => format!("{} {}", path.display(), args.join(" ")),
    };
    let out = match pin {
        Some(cpu) => pinned(cpu, || Ok(tools::run(path, args, TOOL_LIMIT)?))?,
        None => tools::run(path, args, TOOL_LIMIT)?,
    };
    if out.code != Some(0) {
        return Err(tools::ToolError::Exit(tools::failure_line(&out)).into());
    }
    parse(&out.stdout).map_err(
        |e| match out.stderr.lines().find(|l| !l.trim().is_empty()) {
            Some(l) => CrossError::ToolSaid {
                source: Box::new(e.into()),
                stderr: l.trim().to_string(),
            },
            None => e.into(),
        },
    )
}

/// likwid-bench's kernels matching corescope's read, write and copy: AVX where the
/// CPU has it, SSE otherwise.
fn likwid_memory_test(kernel: Kernel) -> &'static str {
    let avx = cfg!(target_arch = "x86_64") && has_avx();
    match (kernel, avx) {
        (Kernel::Read, true) => "load_avx",
        (Kernel::Read, false) => "load_sse",
        (Kernel::Write, true) => "store_mem_avx",
        (Kernel::Write, false) => "store_mem_sse",
        (_, true) => "copy_mem_avx",
        (_, false) => "copy_mem_sse",
    }
}

fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn memory_definition(kernel: Kernel) -> &'static str {
    match kernel {
        Kernel::Read => "both read every 64-bit word of the block once per pass and count 8 B per word; corescope sums with AVX2 (SSE2 without it), per sample an untimed pass then a timed one over a fresh block, the round's value the median of 5 samples; likwid loads with AVX and reports the mean over its iterations (about 1 s on the same block)",
        Kernel::Write => "both store 0x5A-like data with 256-bit non-temporal stores (SSE 128-bit without AVX) and count 8 B per word, no write-allocate; corescope: per sample an untimed pass then a timed one over a fresh block, the median of 5; likwid: the mean over its iterations",
        _ => "both: 256-bit loads and non-temporal stores (128-bit SSE without AVX), 16 B per element (STREAM); corescope: per sample an untimed pass then a timed one over fresh blocks, the median of 5; likwid: the mean over its iterations",
    }
}

/// A memory row: the probe's case (one timed pass per sample), or with
/// `sustained` = `Some(passes)` the experiment that times that many passes back to
/// back with the probe's kernel, as likwid does.
fn memory_row(
    setup: &Setup,
    cpus: &[u32],
    kernel: Kernel,
    threads: usize,
    sustained: Option<usize>,
) -> RowPlan {
    let test = likwid_memory_test(kernel);
    let mut row = match sustained {
        None => new_row(
            format!("{}/{}/{threads}", memory::ID, kernel.name()),
            format!("memory {}, {}", kernel.name(), threads_words(threads)),
            format!("likwid-bench {test}"),
            "bytes_per_s",
            memory_definition(kernel),
        ),
        Some(passes) => new_row(
            format!("{}/{}/{threads}/sustained", memory::ID, kernel.name()),
            format!(
                "memory {}, {}, {passes} passes timed back to back",
                kernel.name(),
                threads_words(threads)
            ),
            format!("likwid-bench {test}"),
            "bytes_per_s",
            "the experiment for the row above: corescope's kernel on the same blocks, timed over 50 passes back to back after one untimed pass (memory::sustained_bytes_per_s), as likwid times about 1 s of passes; a ratio near 1 here says the single timed pass is the difference",
        ),
    };
    if cpus.len() < threads {
        return skipped(
            row,
            format!(
                "{threads} threads need {threads} CPUs; {} allowed",
                cpus.len()
            ),
        );
    }
    // The probe's own block for this machine (the default profile's), found in its plan.
    let probe = OurCase::find(
        memory::ID,
        setup.topo,
        setup.clock,
        Profile::Default,
        Some(threads),
        Some(&cpus[..threads]),
        &[
            ("kernel", json!(kernel.name())),
            ("threads", json!(threads)),
        ],
    );
    let block_bytes = match probe
        .as_ref()
        .map(|c| ours::lookup(c.params(), "block_bytes").and_then(|v| v.as_u64()))
    {
        Ok(Some(b)) => b,
        Ok(None) => return skipped(row, "the memory probe's case has no block size"),
        Err(e) => return skipped(row, e),
    };
    row.what = format!("{}, {} MiB per thread", row.what, block_bytes >> 20);
    let Some(path) = locate(&mut row, Tool::LikwidBench, setup.os) else {
        return RowPlan { row, sides: None };
    };
    // likwid places its threads itself (domain S0, its order); corescope follows the
    // CPUs likwid reports, read from the warm-up (the tool runs first there).
    let likwid_cpus: Rc<RefCell<Vec<u32>>> = Rc::new(RefCell::new(Vec::new()));
    let total_kb = (block_bytes * threads as u64).div_ceil(1000);
    let args: Vec<String> = ["-t", test, "-w"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("S0:{total_kb}kB:{threads}")])
        .collect();
    let parse = {
        let likwid_cpus = likwid_cpus.clone();
        move |text: &str| -> Result<f64, tools::ToolError> {
            let l = tools::parse_likwid(text)?;
            *likwid_cpus.borrow_mut() = l.hwthreads;
            Ok(l.mbyte_per_s * 1e6)
        }
    };
    let (topo, clock) = (setup.topo.clone(), setup.clock.clone());
    let built: RefCell<Option<(Vec<u32>, OurCase)>> = RefCell::new(None);
    let ours = Box::new(move || {
        let want = likwid_cpus.borrow().clone();
        let list = if want.len() == threads {
            want
        } else {
            return Err(CrossError::LikwidSilent(threads));
        };
        let stale = built.borrow().as_ref().is_none_or(|(l, _)| *l != list);
        if stale {
            let case = OurCase::find(
                memory::ID,
                &topo,
                &clock,
                Profile::Default,
                Some(threads),
                Some(&list),
                &[
                    ("kernel", json!(kernel.name())),
                    ("threads", json!(threads)),
                ],
            )?;
            *built.borrow_mut() = Some((list, case));
        }
        let guard = built.borrow();
        let (list, case) = guard.as_ref().ok_or(CrossError::NotBuilt)?;
        if let Some(passes) = sustained {
            let bytes_per_s = memory::sustained_bytes_per_s(kernel, list, block_bytes, passes)?;
            return Ok(bytes_per_s);
        }
        let mut passes = Vec::with_capacity(MEMORY_PASSES_PER_ROUND);
        for _ in 0..MEMORY_PASSES_PER_ROUND {
            passes.push(ours::point(&case.run()?, &format!("{}/", kernel.name()))?);
        }
        Ok(crate::stats::median(&passes))
    }) as Measure;
    tool_row(row, path, args, None, parse, ours)
}

fn likwid_peak_test(level: Level) -> &'static str {
    match level {
        Level::Avx512Fma => "peakflops_avx512_fma",
        _ => "peakflops_avx_fma",
    }
}

/// corescope's peak case at one thread on `cpu`, as a measure of FLOP/s.
fn peak_ours(setup: &Setup, cpu: u32, level: Level) -> Result<Measure, CrossError> {
    let name = kernel_name(level, Precision::F64);
    let case = OurCase::find(
        peak::ID,
        setup.topo,
        setup.clock,
        Profile::Default,
        Some(1),
        Some(&[cpu]),
        &[
            ("level", json!(level.name())),
            ("precision", json!("f64")),
            ("threads", json!(1)),
        ],
    )?;
    Ok(Box::new(move || {
        ours::point(&case.run()?, &format!("{name}/"))
    }))
}

fn peak_likwid_row(setup: &Setup, cpus: &[u32], level: Level) -> RowPlan {
    let test = likwid_peak_test(level);
    let mut row = new_row(
        format!("{}/{}-f64/likwid", peak::ID, level.name()),
        format!("peak {} f64, 1 thread", level.name()),
        format!("likwid-bench {test}, {PEAK_WORKING_SET_KB} kB"),
        "flops_per_s",
        "corescope: 12 independent FMA chains in registers, no memory operand; likwid: FMAs with one load each from a 32 kB array (in L1), FLOP counted the same way (2 per lane per FMA)",
    );
    if let Err(why) = level.available() {
        return skipped(row, why);
    }
    let Some(&cpu) = cpus.first() else {
        return skipped(row, "no CPU allowed");
    };
    let ours = match peak_ours(setup, cpu, level) {
        Ok(m) => m,
        Err(e) => return skipped(row, e),
    };
    let Some(path) = locate(&mut row, Tool::LikwidBench, setup.os) else {
        return RowPlan { row, sides: None };
    };
    let args: Vec<String> = vec![
        "-t".into(),
        test.into(),
        "-w".into(),
        format!("S0:{PEAK_WORKING_SET_KB}kB:1"),
    ];
    let parse = move |text: &str| {
        let l = tools::parse_likwid(text)?;
        if l.hwthreads != [cpu] {
            return Err(CrossError::LikwidElsewhere {
                theirs: l.hwthreads,
                ours: cpu,
            });
        }
        Ok(l.mflop_per_s * 1e6)
    };
    tool_row(row, path, args, None, parse, ours)
}

fn peak_limit_row(setup: &Setup, cpus: &[u32], level: Level) -> RowPlan {
    let mut row = new_row(
        format!("{}/{}-f64/limit", peak::ID, level.name()),
        format!("peak {} f64, 1 thread", level.name()),
        "FMA limit: pipes × lanes × 2 at the measured core clock".into(),
        "flops_per_s",
        "the limit is computed, not measured: FLOP per cycle from the CPU model's FMA units times the core clock measured in the same round (a dependent add chain on the same CPU)",
    );
    if let Err(why) = level.available() {
        return skipped(row, why);
    }
    let Some(&cpu) = cpus.first() else {
        return skipped(row, "no CPU allowed");
    };
    let units = match limit::fma_units_here() {
        Ok(u) => u,
        Err(why) => return skipped(row, why),
    };
    let Some(per_cycle) = limit::flop_per_cycle(units, level, Precision::F64) else {
        return skipped(row, format!("{} has no FMA", level.name()));
    };
    row.tool = format!(
        "FMA limit: {} × {}-bit pipes = {per_cycle} FLOP/cycle ({}) at the measured core clock",
        units.pipes, units.pipe_bits, units.uarch
    );
    row.tool_version = Some(units.source.into());
    let ours = match peak_ours(setup, cpu, level) {
        Ok(m) => m,
        Err(e) => return skipped(row, e),
    };
    let clock = setup.clock.clone();
    let command = Rc::new(RefCell::new(format!(
        "{per_cycle} FLOP/cycle × core clock of CPU {cpu}"
    )));
    let theirs = Box::new(move || {
        crate::clock::core_hz_now(&clock, &[cpu])
            .map(|hz| hz * per_cycle)
            .ok_or(CrossError::NoCoreClock)
    }) as Measure;
    measured(row, ours, theirs, command)
}

/// The mutex row and its two experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MutexRow {
    /// The probe's own figure against the tool at its default interval.
    Probe,
    /// The probe's own figure against the tool at corescope's settle time.
    ToolAtSettle,
    /// corescope's hand-off with a holder that blocks after its unlock, as the
    /// tool's does, against the tool at corescope's settle time.
    HolderBlocks,
}

/// ptsematest's interval in the [`MutexRow::ToolAtSettle`] experiment: the
/// probe's settle time, µs.
pub const PTSEMATEST_SETTLE_INTERVAL_US: u32 = mutex::SETTLE_US as u32;

fn mutex_definition(which: MutexRow) -> &'static str {
    match which {
        MutexRow::Probe => "both: the time from just before the holder's unlock until the waiter, blocked in lock, runs with the lock, both threads pinned to one CPU; both are means (ptsematest prints no median); ptsematest reads gettimeofday (1 µs steps), corescope the TSC; between wake-ups ptsematest sleeps 1 ms (the CPU idles), corescope's holder yields for 50 µs (the CPU stays busy)",
        MutexRow::ToolAtSettle => "the experiment for the row above: ptsematest with a 50 µs interval (-i 50, corescope's settle time) against corescope's own figure; a ratio near 1 here says the gap is the difference (after 1 ms of idle the CPU's caches and predictors have served other work: on a VM, other guests)",
        MutexRow::HolderBlocks => "the second experiment: corescope's hand-off with its holder giving up the CPU as ptsematest's sender does, asleep on a second mutex that the waiter holds until it has run with the lock, where the probe's holder polls for the waiter and yields between polls; against ptsematest at corescope's settle time (-i 50); a ratio near 1 here, with the row above away from 1, says the holder's way of giving up the CPU is the difference",
    }
}

fn mutex_row(setup: &Setup, cpus: &[u32], which: MutexRow) -> RowPlan {
    let (experiment, interval_us) = match which {
        MutexRow::Probe => ("", PTSEMATEST_INTERVAL_US),
        MutexRow::ToolAtSettle => ("/tool-at-settle", PTSEMATEST_SETTLE_INTERVAL_US),
        MutexRow::HolderBlocks => ("/holder-blocks", PTSEMATEST_SETTLE_INTERVAL_US),
    };
    let mut row = new_row(
        format!("{}/wake/same-cpu{experiment}", mutex::ID),
        "sleeping mutex waiter's wake-up, both threads on one CPU".into(),
        format!("rt-tests ptsematest -t 1 -i {interval_us}"),
        "ns",
        mutex_definition(which),
    );
    let Some(&cpu) = cpus.first() else {
        return skipped(row, "no CPU allowed");
    };
    let (case, wake) = if which == MutexRow::HolderBlocks {
        let case = OurCase::with_case(
            mutex::MutexProbe,
            setup.topo,
            setup.clock,
            Profile::Default,
            mutex::case_holder_blocks(cpu, Profile::Default),
        );
        (Ok(case), mutex::HOLDER_BLOCKS_WAKE)
    } else {
        let case = OurCase::find(
            mutex::ID,
            setup.topo,
            setup.clock,
            Profile::Default,
            None,
            None,
            &[("spinning", json!(false)), ("relation", json!("same-cpu"))],
        );
        (case, "handoff/sleeping/same-cpu/wake")
    };
    let case = match case {
        Ok(c) => c,
        Err(e) => return skipped(row, e),
    };
    row.what = match which {
        MutexRow::HolderBlocks => format!(
            "{}, corescope's holder blocking as the tool's, CPU {cpu}",
            row.what
        ),
        _ => format!("{row_what}, CPU {cpu}", row_what = row.what),
    };
    let Some(path) = locate(&mut row, Tool::Ptsematest, setup.os) else {
        return RowPlan { row, sides: None };
    };
    let args: Vec<String> = vec![
        "-t".into(),
        "1".into(),
        "-a".into(),
        cpu.to_string(),
        "-l".into(),
        PTSEMATEST_LOOPS.to_string(),
        "-i".into(),
        interval_us.to_string(),
        "-q".into(),
        "--json=/dev/stdout".into(),
    ];
    let parse = |text: &str| {
        // The JSON first, then the summary line.
        let json_start = text.find('{').unwrap_or(0);
        let json_end = text.rfind('}').map_or(text.len(), |e| e + 1);
        tools::parse_ptsematest_json(&text[json_start..json_end.max(json_start)])
            .or_else(|_| tools::parse_ptsematest_text(text))
            .map(|us| us * 1e3)
    };
    let ours = Box::new(move || ours::distribution_mean(&case.run()?, wake)) as Measure;
    tool_row(row, path, args, None, parse, ours)
}

fn c2c_definition(cas: bool, pause: bool) -> &'static str {
    match (cas, pause) {
        (true, true) => "both: one line bounced between two threads by compare-and-swap, one-way latency = round trip ÷ 2; the tool: the mean of 300 samples of 5,000 round trips, its waiter retrying the CAS at once; corescope: the median of 3 runs of 20,000 round trips, its waiter pausing (spin_loop) between tries, on a fresh page per run",
        (true, false) => "the experiment for the row above: corescope's CAS kernel with the tool's waiter (retrying at once, no pause), everything else as corescope; a ratio near 1 here says the pause is the difference",
        (false, true) => "both: a writer and a reader on two padded lines, one-way latency = round trip ÷ 2; the tool: the mean of 300 samples of 5,000 round trips, its reader polling without a pause; corescope: the median of 3 runs of 20,000 round trips, its reader pausing between polls, on a fresh page per run",
        (false, false) => "the experiment for the row above: corescope's writer/reader kernel with the tool's polling (no pause)",
    }
}

fn c2c_row(setup: &Setup, cpus: &[u32], cas: bool, pause: bool) -> RowPlan {
    let (name, bench) = if cas { ("cas", "1") } else { ("rw", "2") };
    let (id, what) = if pause {
        (
            format!("{}/{name}", c2c::ID),
            format!("core-to-core latency, {name}"),
        )
    } else {
        (
            format!("{}/{name}/no-pause", c2c::ID),
            format!("core-to-core latency, {name}, corescope's waiter without pause"),
        )
    };
    let mut row = new_row(
        id,
        what,
        format!("core-to-core-latency -b {bench}"),
        "ns",
        c2c_definition(cas, pause),
    );
    let (Some(&a), Some(&b)) = (cpus.first(), cpus.get(1)) else {
        return skipped(row, "a pair needs two CPUs");
    };
    row.what = format!("{}, CPUs {a} and {b}", row.what);
    let case = if pause {
        OurCase::find(
            c2c::ID,
            setup.topo,
            setup.clock,
            Profile::Default,
            None,
            None,
            &[("a", json!(a)), ("b", json!(b))],
        )
    } else {
        Ok(OurCase::with_case(
            c2c::C2c,
            setup.topo,
            setup.clock,
            Profile::Default,
            c2c::case_without_pause(a, b, C2C_ROUND_TRIPS),
        ))
    };
    let case = match case {
        Ok(c) => c,
        Err(e) => return skipped(row, e),
    };
    let Some(path) = locate(&mut row, Tool::CoreToCore, setup.os) else {
        return RowPlan { row, sides: None };
    };
    row.tool_version = Some(tools::CORE_TO_CORE_VERSION.into());
    let args: Vec<String> = vec![
        C2C_TOOL_ITERATIONS.to_string(),
        C2C_TOOL_SAMPLES.to_string(),
        "-b".into(),
        bench.into(),
        "--csv".into(),
        "-c".into(),
        format!("{a},{b}"),
    ];
    let matrix = if cas { c2c::MATRIX_CAS } else { c2c::MATRIX_RW };
    let ours = Box::new(move || ours::cell(&case.run()?, matrix)) as Measure;
    tool_row(row, path, args, None, tools::parse_core_to_core_csv, ours)
}

/// The syscall row (`Call::Getpid`: the probe's own figure), or its experiment
/// (`Call::Getppid`: the probe's batch loop on the call perf makes, as many calls as
/// perf's run); both against `perf bench syscall basic` on the same CPU.
fn syscall_row(setup: &Setup, cpus: &[u32], call: Call) -> RowPlan {
    let experiment = call == Call::Getppid;
    let mut row = if experiment {
        new_row(
            format!("{}/getppid", syscall::ID),
            "a trivial system call, corescope's loop on getppid".into(),
            "perf bench syscall basic".into(),
            "ns",
            "the experiment for the row above: corescope's timed batches (as its getpid figure) calling syscall(SYS_getppid), the call perf makes, 1,000,000 calls, the mean per call; a ratio near 1 here says the call, not the timing, is the difference",
        )
    } else {
        new_row(
            format!("{}/getpid", syscall::ID),
            "a trivial system call".into(),
            "perf bench syscall basic".into(),
            "ns",
            "both: the mean time per call of a loop of calls, pinned to one CPU; perf calls getppid() through glibc, corescope syscall(SYS_getpid) in batches (the mean over its batches)",
        )
    };
    let Some(&cpu) = cpus.first() else {
        return skipped(row, "no CPU allowed");
    };
    row.what = format!("{}, CPU {cpu}", row.what);
    let ours = if experiment {
        let clock = setup.clock.clone();
        let calls = syscall::calls_per_batch(clock.info.step_ns);
        let batches = (PERF_SYSCALL_LOOPS / calls).max(1) as usize;
        Box::new(move || {
            let clock = clock.clone();
            pinned(cpu, move || {
                Ok(syscall::mean_call_ns(call, calls, batches, &clock))
            })
        }) as Measure
    } else {
        let case = match OurCase::find(
            syscall::ID,
            setup.topo,
            setup.clock,
            Profile::Quick,
            None,
            None,
            &[],
        ) {
            Ok(c) => c,
            Err(e) => return skipped(row, e),
        };
        Box::new(move || ours::distribution_mean(&case.run()?, "getpid")) as Measure
    };
    let Some(path) = locate(&mut row, Tool::PerfBench, setup.os) else {
        return RowPlan { row, sides: None };
    };
    let args: Vec<String> = ["bench", "syscall", "basic", "-l"]
        .iter()
        .map(|s| s.to_string())
        .chain([PERF_SYSCALL_LOOPS.to_string()])
        .collect();
    tool_row(row, path, args, Some(cpu), tools::parse_perf_syscall, ours)
}

/// Run `f` on a thread pinned to `cpu`: a child it starts inherits the pin.
fn pinned<T: Send>(
    cpu: u32,
    f: impl FnOnce() -> Result<T, CrossError> + Send,
) -> Result<T, CrossError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::affinity::pin_checked(cpu)?;
            f()
        })
        .join()
        .unwrap_or(Err(CrossError::PinnedPanic))
    })
}
