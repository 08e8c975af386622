//! The counters of the threads of one measured run over its measured intervals:
//! one thread's ([`ThreadCounter`]), a team's ([`TeamCount`]), the threads of a
//! run that is not a harness team ([`CountedRun`]) and the threads someone else
//! starts ([`SharedCounters`]); and whether the file descriptors allow them.

use super::perf::Counters;
use super::{Availability, CounterError, CounterReading, CounterStatus, SkipReason};

/// Descriptors one thread's [`Counters`] hold at most: a group leader and four
/// software events, a group leader, cycles, instructions and three optional
/// hardware events.
pub const FDS_PER_THREAD: usize = 11;

/// Too few file descriptors left for the counters of a team.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error(
    "not counted: {threads} threads × {FDS_PER_THREAD} descriptors would take more \
     than half of the {left} left under RLIMIT_NOFILE (ulimit -n {limit})"
)]
pub struct DescriptorShortage {
    /// Threads of the team.
    pub threads: usize,
    /// Descriptors left under the limit.
    pub left: usize,
    /// `RLIMIT_NOFILE`.
    pub limit: usize,
}

/// Whether `threads` threads may open their counters without starving the
/// process of file descriptors (the probes open files and sockets too): `Err`
/// with the reason when they would take more than half of what is left of
/// `RLIMIT_NOFILE`.
pub fn descriptors_allow(threads: usize) -> Result<(), DescriptorShortage> {
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
        Err(DescriptorShortage {
            threads,
            left: limit.saturating_sub(open),
            limit,
        })
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
    pub fn skipped(why: SkipReason, wall_ns: u64) -> TeamCount {
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
/// the thread; it is kept for the result's warnings.
pub struct ThreadCounter {
    counters: Option<Counters>,
    status: CounterStatus,
    pinned: bool,
    sum: Option<CounterReading>,
    error: Option<CounterError>,
}

/// What one counted thread leaves behind ([`ThreadCounter::finish`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CountedThread {
    /// What its counters could open.
    pub status: CounterStatus,
    /// Its counts (none if a counter failed) and whether it was pinned.
    pub count: ThreadCount,
    /// Why its counters failed (a warning of the result).
    pub error: Option<CounterError>,
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
        self.error = Some(e);
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
    /// errors (warnings of the result).
    pub fn finish(self) -> (Option<TeamCount>, Vec<CounterError>) {
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
    refused: Option<SkipReason>,
}

impl SharedCounters {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Count none of the threads, for this reason (too many threads for the file
    /// descriptors left, [`descriptors_allow`]): joining then opens nothing, and
    /// [`SharedCounters::finish`] reports the team as skipped.
    pub fn refuse(&self, why: SkipReason) {
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
    /// joined), and the counter errors (warnings of the result).
    pub fn finish(&self) -> (Option<TeamCount>, Vec<CounterError>) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let short = super::DescriptorShortage {
            threads: 64,
            left: 100,
            limit: 1024,
        };
        r.refuse(short.clone().into());
        r.join_this_thread(false);
        r.start();
        r.stop();
        let (team, _) = r.finish();
        let team = team.unwrap();
        assert!(team.threads.is_empty());
        assert_eq!(
            team.status.software,
            Availability::Skipped(SkipReason::Descriptors(short))
        );
    }
}
