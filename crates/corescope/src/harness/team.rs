//! The thread team of the seeds.
//!
//! Each worker pins itself, runs its setup (allocation, first touch), then for
//! every repetition waits at a start gate, stamps its start, runs the kernel and
//! stamps its end. The team time of a repetition is last end − first start
//! (seed 000 §3: "from the first thread to start its computation, until the time
//! at which the last one completed"). The last worker to reach the start gate
//! decides whether to go on (repetitions, budget) and opens it; no controlling
//! thread competes with the workers for their CPUs.
//!
//! Nothing here can hang the caller: a worker that panics or a thread that cannot
//! be created aborts the gate and every other worker returns.

use crate::affinity;
use crate::counters::{CountedThread, SkipReason, TeamCount, ThreadCounter};
use crate::model::Warning;
use crate::timestamp::now_ns;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Stack size of team workers. Kernels keep their data on the heap; small stacks
/// let thousands of workers exist on machines with thousands of CPUs.
pub const WORKER_STACK_BYTES: usize = 256 * 1024;

/// Spin iterations before a worker waiting at the gate falls asleep. Spinning
/// tightens the start when every worker has a CPU; sleeping keeps an
/// oversubscribed team from burning the CPUs the running workers need.
const GATE_SPINS: u32 = 20_000;

/// Memory maps one thread costs: its stack and guard page, and the signal stack
/// and guard page the Rust runtime gives every thread (std `stack_overflow`).
const MAPS_PER_THREAD: usize = 4;

/// Threads kept in reserve for the process itself (main, progress, runtime).
const RESERVED_THREADS: usize = 16;

/// About how many more threads this process can create now, and the limit that
/// decides it (`vm.max_map_count`, `kernel.threads-max`, `kernel.pid_max`,
/// `RLIMIT_NPROC`, `RLIMIT_AS` or available memory for
/// [`WORKER_STACK_BYTES`] stacks). Asking for more makes thread creation fail,
/// or the runtime abort when it cannot map a thread's guard page, so callers
/// refuse such counts up front.
pub fn thread_capacity() -> (usize, &'static str) {
    capacity_from(&crate::topology::host::thread_limits())
}

/// [`thread_capacity`] from limits read earlier (pure).
pub fn capacity_from(l: &crate::topology::host::ThreadLimits) -> (usize, &'static str) {
    let limits = [
        l.max_map_count.map(|m| {
            (
                m.saturating_sub(l.maps_now) / MAPS_PER_THREAD,
                "vm.max_map_count",
            )
        }),
        l.threads_max
            .map(|t| (t.saturating_sub(l.tasks_now), "kernel.threads-max")),
        l.pid_max
            .map(|t| (t.saturating_sub(l.tasks_now), "kernel.pid_max")),
        l.nproc.map(|n| (n, "RLIMIT_NPROC (ulimit -u)")),
        l.address_space_bytes.map(|b| {
            (
                b / WORKER_STACK_BYTES,
                "RLIMIT_AS (ulimit -v) for thread stacks",
            )
        }),
        l.mem_available_bytes
            .map(|b| (b / WORKER_STACK_BYTES, "available memory for thread stacks")),
    ];
    limits
        .into_iter()
        .flatten()
        .min_by_key(|l| l.0)
        .map(|(n, why)| (n.saturating_sub(RESERVED_THREADS), why))
        .unwrap_or((usize::MAX, "no known limit"))
}

/// Start and end stamps (`CLOCK_MONOTONIC` ns) of every worker in one repetition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepStamps {
    /// `(start_ns, end_ns)` per worker, in worker order.
    pub per_thread: Vec<(u64, u64)>,
}

impl RepStamps {
    /// Last end − first start.
    pub fn team_ns(&self) -> u64 {
        let start = self.per_thread.iter().map(|s| s.0).min().unwrap_or(0);
        let end = self.per_thread.iter().map(|s| s.1).max().unwrap_or(0);
        end.saturating_sub(start)
    }

    /// Spread of the start stamps (last start − first start).
    pub fn start_skew_ns(&self) -> u64 {
        let lo = self.per_thread.iter().map(|s| s.0).min().unwrap_or(0);
        let hi = self.per_thread.iter().map(|s| s.0).max().unwrap_or(0);
        hi - lo
    }
}

/// What a team run produced.
#[derive(Debug)]
pub struct TeamOutcome<R> {
    /// Stamps of every repetition that ran.
    pub reps: Vec<RepStamps>,
    /// `results[thread][rep]`: what the kernel returned.
    pub results: Vec<Vec<R>>,
    /// Pinning the OS refused, and counters that failed, once each.
    pub warnings: Vec<Warning>,
    /// The deadline stopped the team before all requested repetitions ran.
    pub stopped_early: bool,
    /// Per-worker event counts around the kernel (only from [`run_team_counted`]).
    pub counts: Option<TeamCount>,
}

impl<R> TeamOutcome<R> {
    /// The repetition with the shortest team time (best of N, as the seeds).
    pub fn best(&self) -> Option<&RepStamps> {
        self.reps.iter().min_by_key(|r| r.team_ns())
    }

    /// Team times of all repetitions, in ns.
    pub fn team_times_ns(&self) -> Vec<f64> {
        self.reps.iter().map(|r| r.team_ns() as f64).collect()
    }
}

/// Why a team could not run.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// The OS would not create a thread (limits); `started` of `wanted` existed.
    #[error("could not create thread {started} of {wanted}: {source}")]
    Spawn {
        /// Threads created before the failure.
        started: usize,
        /// Threads requested.
        wanted: usize,
        /// OS error.
        source: std::io::Error,
    },
    /// A worker panicked; the message is the panic payload.
    #[error("worker {thread} panicked: {message}")]
    Panic {
        /// Worker index.
        thread: usize,
        /// Panic message.
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Go,
    Stop,
}

struct GateState {
    arrived: usize,
    command: Command,
    aborted: bool,
    /// Repetitions released so far.
    ran: usize,
    /// The deadline ended the team before `reps` repetitions.
    stopped_early: bool,
}

/// A reusable start gate that the team releases itself: the last worker to
/// arrive decides whether to go on (repetitions left, deadline) and opens the
/// gate for all. No third thread takes part, so a team with one worker per CPU
/// never waits for a controller to be scheduled on a CPU a spinning worker
/// holds (that wait put milliseconds of start skew into the team time).
struct Gate {
    state: Mutex<GateState>,
    workers_cv: Condvar,
    generation: AtomicU64,
    /// Workers in the team.
    n: usize,
    /// Repetitions wanted (at least one always runs).
    reps: usize,
    deadline: Option<Instant>,
}

impl Gate {
    fn new(n: usize, reps: usize, deadline: Option<Instant>) -> Self {
        Self {
            state: Mutex::new(GateState {
                arrived: 0,
                command: Command::Go,
                aborted: false,
                ran: 0,
                stopped_early: false,
            }),
            workers_cv: Condvar::new(),
            generation: AtomicU64::new(0),
            n,
            reps: reps.max(1),
            deadline,
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // A poisoned gate only means a worker panicked while holding it; the state
        // itself (counters and flags) is always consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Worker side: arrive, wait for release; `None` when aborted. The last to
    /// arrive releases everybody, itself included, without waiting.
    fn arrive(&self, spin: bool) -> Option<Command> {
        let gen = self.generation.load(Ordering::Acquire);
        {
            let mut st = self.lock();
            if st.aborted {
                return None;
            }
            st.arrived += 1;
            if st.arrived == self.n {
                let cmd = self.next_command(&mut st);
                st.arrived = 0;
                st.command = cmd;
                self.generation.fetch_add(1, Ordering::AcqRel);
                drop(st);
                self.workers_cv.notify_all();
                return Some(cmd);
            }
        }
        if spin {
            for _ in 0..GATE_SPINS {
                if self.generation.load(Ordering::Acquire) != gen {
                    break;
                }
                std::hint::spin_loop();
            }
        }
        let mut st = self.lock();
        while self.generation.load(Ordering::Acquire) == gen && !st.aborted {
            st = self.workers_cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.aborted {
            None
        } else {
            Some(st.command)
        }
    }

    /// Go while repetitions are left and the deadline has not passed (the first
    /// always goes); counts the repetition released.
    fn next_command(&self, st: &mut GateState) -> Command {
        let out_of_time = self.deadline.is_some_and(|d| Instant::now() >= d);
        if st.ran == self.reps || (st.ran > 0 && out_of_time) {
            st.stopped_early = st.ran < self.reps;
            Command::Stop
        } else {
            st.ran += 1;
            Command::Go
        }
    }

    /// The deadline stopped the team before all repetitions ran.
    fn stopped_early(&self) -> bool {
        self.lock().stopped_early
    }

    fn abort(&self) {
        let mut st = self.lock();
        st.aborted = true;
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(st);
        self.workers_cv.notify_all();
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Run a team: one worker per entry of `cpus` (`None` = unbound), `reps`
/// repetitions unless `deadline` passes first (at least one always runs).
///
/// `setup(i)` runs once per worker after pinning, before the first gate;
/// `kernel(i, &mut state)` runs once per repetition between the start and end stamps.
pub fn run_team<S, R, FS, FK>(
    cpus: &[Option<u32>],
    reps: usize,
    deadline: Option<Instant>,
    setup: FS,
    kernel: FK,
) -> Result<TeamOutcome<R>, TeamError>
where
    R: Send,
    FS: Fn(usize) -> S + Sync,
    FK: Fn(usize, &mut S) -> R + Sync,
{
    run_team_counted(cpus, reps, deadline, false, setup, kernel)
}

/// The warning a failed pin raises: the thread ran where the OS put it.
pub fn pin_warning(e: affinity::PinError) -> Warning {
    match e {
        affinity::PinError::Refused { cpu, source } => Warning::Unpinned {
            cpu,
            error: source.into(),
        },
        affinity::PinError::Elsewhere { cpu, now } => {
            Warning::PinnedElsewhere { cpu, now_cpu: now }
        }
    }
}

/// The team's outcome from its workers' records: stamps per repetition (as many as
/// every worker ran), results per worker, warnings once each, counts.
fn assemble<R>(
    per_worker: Vec<WorkerRecord<R>>,
    stopped_early: bool,
    count: bool,
    skipped_counts: Option<SkipReason>,
) -> TeamOutcome<R> {
    let ran = per_worker.iter().map(|w| w.0.len()).min().unwrap_or(0);
    let reps_out: Vec<RepStamps> = (0..ran)
        .map(|r| RepStamps {
            per_thread: per_worker.iter().map(|w| w.0[r]).collect(),
        })
        .collect();
    let mut warnings: Vec<Warning> = Vec::new();
    let counter_errors = per_worker
        .iter()
        .filter_map(|w| w.3.as_ref().and_then(|c| c.error.clone()))
        .map(Warning::from);
    for w in per_worker
        .iter()
        .filter_map(|w| w.2.clone())
        .chain(counter_errors)
    {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    let counts = team_count(&per_worker, &reps_out, count, skipped_counts);
    let results = per_worker.into_iter().map(|w| w.1).collect();
    TeamOutcome {
        reps: reps_out,
        results,
        warnings,
        stopped_early,
        counts,
    }
}

/// [`run_team`], and with `count` each worker also counts its own events
/// ([`Counters`]: software always, hardware where the machine has a PMU) from
/// just before its start stamp to just after its end stamp, in every repetition;
/// the sums are in [`TeamOutcome::counts`]. Counters are opened after pinning and
/// setup, so first-touch page faults of the setup are not counted.
pub fn run_team_counted<S, R, FS, FK>(
    cpus: &[Option<u32>],
    reps: usize,
    deadline: Option<Instant>,
    count: bool,
    setup: FS,
    kernel: FK,
) -> Result<TeamOutcome<R>, TeamError>
where
    R: Send,
    FS: Fn(usize) -> S + Sync,
    FK: Fn(usize, &mut S) -> R + Sync,
{
    let n = cpus.len();
    let skipped_counts = match count.then(|| crate::counters::descriptors_allow(n)) {
        Some(Err(why)) => Some(why.into()),
        _ => None,
    };
    let count = count && skipped_counts.is_none();
    let reps = reps.max(1);
    let gate = Gate::new(n, reps, deadline);
    let allowed = affinity::allowed_current().unwrap_or_default();
    let spin = n <= allowed.len().max(1);
    type WorkerOut<R> = Result<WorkerRecord<R>, TeamError>;

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(n);
        let mut spawn_error = None;
        for (i, &cpu) in cpus.iter().enumerate() {
            let (gate, setup, kernel) = (&gate, &setup, &kernel);
            let worker = move || -> WorkerOut<R> {
                let body = || {
                    let warning = cpu.and_then(|c| affinity::pin_checked(c).err().map(pin_warning));
                    let mut state = setup(i);
                    let mut stamps = Vec::with_capacity(reps);
                    let mut results = Vec::with_capacity(reps);
                    let pinned = cpu.is_some() && warning.is_none();
                    let mut counted = count.then(|| ThreadCounter::open(pinned));
                    while let Some(Command::Go) = gate.arrive(spin) {
                        if let Some(c) = counted.as_mut() {
                            c.start();
                        }
                        let start = now_ns();
                        let r = kernel(i, &mut state);
                        let end = now_ns();
                        if let Some(c) = counted.as_mut() {
                            c.stop();
                        }
                        stamps.push((start, end));
                        results.push(r);
                    }
                    (stamps, results, warning, counted.map(ThreadCounter::finish))
                };
                catch_unwind(AssertUnwindSafe(body)).map_err(|p| {
                    gate.abort();
                    TeamError::Panic {
                        thread: i,
                        message: panic_message(p.as_ref()),
                    }
                })
            };
            match std::thread::Builder::new()
                .name(format!("corescope-{i}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn_scoped(scope, worker)
            {
                Ok(h) => handles.push(h),
                Err(source) => {
                    spawn_error = Some(TeamError::Spawn {
                        started: i,
                        wanted: n,
                        source,
                    });
                    gate.abort();
                    break;
                }
            }
        }

        let mut per_worker = Vec::with_capacity(n);
        let mut first_error = spawn_error;
        for h in handles {
            match h.join() {
                Ok(Ok(out)) => per_worker.push(out),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(p) => {
                    first_error.get_or_insert(TeamError::Panic {
                        thread: per_worker.len(),
                        message: panic_message(p.as_ref()),
                    });
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let stopped_early = gate.stopped_early();
        Ok(assemble(per_worker, stopped_early, count, skipped_counts))
    })
}

type WorkerRecord<R> = (
    Vec<(u64, u64)>,
    Vec<R>,
    Option<Warning>,
    Option<CountedThread>,
);

/// The team's counts from its workers' (`None` unless counting was asked for).
fn team_count<R>(
    per_worker: &[WorkerRecord<R>],
    reps: &[RepStamps],
    count: bool,
    skipped: Option<SkipReason>,
) -> Option<TeamCount> {
    let wall_ns = reps.iter().map(RepStamps::team_ns).sum();
    if let Some(why) = skipped {
        return Some(TeamCount::skipped(why, wall_ns));
    }
    if !count {
        return None;
    }
    TeamCount::of_threads(per_worker.iter().filter_map(|w| w.3.clone()), wall_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::host::ThreadLimits;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[test]
    fn the_thread_capacity_is_the_tightest_limit_less_a_reserve() {
        let none = ThreadLimits::default();
        assert_eq!(capacity_from(&none), (usize::MAX, "no known limit"));
        let l = ThreadLimits {
            tasks_now: 1_000,
            maps_now: 400,
            max_map_count: Some(65_530),
            threads_max: Some(10_000),
            pid_max: Some(4_194_304),
            nproc: None,
            address_space_bytes: None,
            mem_available_bytes: Some(24 << 30),
        };
        // Maps: (65 530 − 400) / 4 = 16 282; threads-max: 9 000; memory: 98 304.
        assert_eq!(
            capacity_from(&l),
            (9_000 - RESERVED_THREADS, "kernel.threads-max")
        );
        let tight = ThreadLimits {
            nproc: Some(10),
            ..l
        };
        assert_eq!(capacity_from(&tight), (0, "RLIMIT_NPROC (ulimit -u)"));
    }

    #[test]
    fn every_worker_runs_every_rep_and_setup_once() {
        let setups = AtomicUsize::new(0);
        let out = run_team(
            &[None, None, None],
            4,
            None,
            |i| {
                setups.fetch_add(1, Ordering::Relaxed);
                i * 10
            },
            |i, s: &mut usize| {
                *s += 1;
                (i, *s)
            },
        )
        .unwrap();
        assert_eq!(setups.load(Ordering::Relaxed), 3);
        assert_eq!(out.reps.len(), 4);
        assert_eq!(out.results[2], vec![(2, 21), (2, 22), (2, 23), (2, 24)]);
        for rep in &out.reps {
            assert_eq!(rep.per_thread.len(), 3);
            assert!(rep.per_thread.iter().all(|(s, e)| e >= s));
            assert!(rep.team_ns() >= rep.per_thread.iter().map(|(s, e)| e - s).max().unwrap());
        }
        assert!(!out.stopped_early);
        assert!(out.best().is_some());
    }

    #[test]
    fn thread_capacity_is_plausible() {
        let (n, why) = thread_capacity();
        assert!(n >= 32, "{n} ({why})");
    }

    #[test]
    fn oversubscribed_team_completes() {
        let cpus = vec![None; 32];
        let out = run_team(&cpus, 2, None, |_| (), |i, _| i).unwrap();
        assert_eq!(out.results.len(), 32);
        assert_eq!(out.reps.len(), 2);
    }

    #[test]
    fn deadline_stops_after_first_rep() {
        let past = Instant::now() - Duration::from_millis(1);
        let out = run_team(&[None, None], 100, Some(past), |_| (), |_, _| ()).unwrap();
        assert_eq!(out.reps.len(), 1);
        assert!(out.stopped_early);
    }

    #[test]
    fn panicking_worker_does_not_hang_the_team() {
        let err = run_team(
            &[None, None, None],
            3,
            None,
            |_| (),
            |i, _| {
                if i == 1 {
                    panic!("boom");
                }
            },
        )
        .unwrap_err();
        assert!(matches!(err, TeamError::Panic { thread: 1, .. }), "{err}");
    }

    /// A counted team pinned to one CPU: its worker shows no migrations (or the test
    /// says the OS refused the pin), and a kernel touching fresh pages is counted
    /// with its page faults while the setup's first touch is not.
    #[test]
    fn counted_team_sees_its_kernel_only() {
        const PAGES: usize = 64;
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let cpu = *affinity::allowed_current().unwrap().last().unwrap();
        let out = run_team_counted(
            &[Some(cpu)],
            2,
            None,
            true,
            |_| {
                // Touched here, in the setup: not counted.
                let mut warm = vec![0u8; PAGES * page];
                warm.iter_mut().step_by(page).for_each(|b| *b = 1);
                warm
            },
            |_, warm| {
                let len = PAGES * page;
                // SAFETY: a new anonymous private mapping of `len` bytes, checked.
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
                // SAFETY: our mapping; base pages, one fault per page touched.
                unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
                for i in (0..len).step_by(page) {
                    // SAFETY: i < len: inside the mapping; volatile so it happens.
                    unsafe { p.cast::<u8>().add(i).write_volatile(1) };
                }
                // SAFETY: unmapping our own mapping once.
                unsafe { libc::munmap(p, len) };
                std::hint::black_box(&warm);
            },
        )
        .unwrap();
        let counts = out.counts.expect("counted");
        if counts.status.software != crate::counters::Availability::Counted {
            eprintln!("software counters: {}", counts.status.software);
            return;
        }
        if !out.warnings.is_empty() {
            eprintln!("pin refused: {:?}", out.warnings);
            return;
        }
        let t = counts.threads[0];
        assert!(t.pinned);
        let r = t.reading.unwrap();
        assert_eq!(r.cpu_migrations, Some(0), "{r:?}");
        // Two repetitions, each touching 64 fresh pages: about 128 faults.
        let faults = r.page_faults.unwrap();
        assert!(
            (2 * PAGES as u64..=2 * PAGES as u64 + 16).contains(&faults),
            "{faults}"
        );
        assert!(counts.wall_ns > 0 && r.task_clock_ns.unwrap() > 0);
        assert!(run_team(&[None], 1, None, |_| (), |_, _| ())
            .unwrap()
            .counts
            .is_none());
    }

    #[test]
    fn refused_pin_becomes_a_warning() {
        let out = run_team(&[Some(100_000)], 1, None, |_| (), |_, _| ()).unwrap();
        assert_eq!(out.reps.len(), 1);
        assert_eq!(out.warnings.len(), 1);
        assert!(
            matches!(out.warnings[0], Warning::Unpinned { cpu: 100_000, .. }),
            "{:?}",
            out.warnings[0]
        );
    }
}
