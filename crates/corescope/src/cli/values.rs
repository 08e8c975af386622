//! The command line's values: the value parsers clap calls for numbers, thread
//! counts, placements and seconds, and why a value is refused ([`ArgError`]).

use crate::placement::{PlacementError, Strategy};

/// Why a value given on the command line is refused; each message names the
/// value where clap's own line (`invalid value 'V' for '--flag <N>': ...`) does not
/// say which part of it is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// `--event-bytes` is not a number.
    #[error("expected a number of bytes from 1 to {MAX_EVENT_BYTES}")]
    NotEventBytes,
    /// `--event-bytes 0`.
    #[error("an event needs at least 1 byte")]
    NoEventBytes,
    /// `--event-bytes` above [`MAX_EVENT_BYTES`].
    #[error("at most {MAX_EVENT_BYTES} bytes")]
    EventBytesOver,
    /// Not a whole number (of rounds, epochs, nodes, ...).
    #[error("expected a whole number {}", whole_range(*min, *max))]
    NotCount {
        /// The smallest accepted.
        min: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A negative number where a count is expected.
    #[error("negative; expected a whole number {}", whole_range(*min, *max))]
    NegativeCount {
        /// The smallest accepted.
        min: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A count below its least.
    #[error("at least {min}")]
    CountBelow {
        /// The smallest accepted.
        min: u64,
    },
    /// A count above its most.
    #[error("at most {max}")]
    CountAbove {
        /// The largest accepted.
        max: u64,
    },
    /// A negative thread count.
    #[error("thread count {0} is negative: give a positive integer")]
    NegativeThreads(String),
    /// A thread count of 0.
    #[error("thread count 0: give at least 1")]
    ZeroThreads,
    /// A thread count above [`MAX_THREADS`].
    #[error("thread count {0} is above the limit of {MAX_THREADS}")]
    TooManyThreads(String),
    /// Not a thread count.
    #[error("thread count '{0}' is not a positive integer")]
    NotThreads(String),
    /// An item of a `--threads` list.
    #[error("{0}; expected a list like 1,2,4,8")]
    ThreadList(Box<ArgError>),
    /// A placement that does not parse.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// A CPU list, with what exactly is wrong.
    #[error("CPU list '{list}': {why}")]
    CpuList {
        /// The list as given.
        list: String,
        /// What is wrong.
        why: CpuListError,
    },
    /// A placement name misspelt.
    #[error("{source}; did you mean '{name}'?")]
    Misspelt {
        /// The parse error.
        source: PlacementError,
        /// The name meant.
        name: &'static str,
    },
    /// A duration beyond [`MAX_DURATION_S`].
    #[error("at most {MAX_DURATION_S:.0} seconds (7 days)")]
    TooLong,
    /// Not a duration.
    #[error("expected a positive number of seconds, e.g. 60")]
    NotSeconds,
}

/// What exactly is wrong with a CPU list (`0,2,4-7`) that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// `0,,1`, `0-`.
    #[error("an empty item or range end; write ids like 0,2,4-7")]
    Empty,
    /// `0-1-2`: an item that is not digits.
    #[error("'{0}' is not a CPU id; write ids like 0,2,4-7")]
    NotAnId(String),
    /// A CPU id above [`crate::placement::MAX_CPU_INDEX`].
    #[error(
        "CPU {0} is above the largest CPU id corescope accepts ({max})",
        max = crate::placement::MAX_CPU_INDEX
    )]
    AboveMax(String),
    /// `-1`.
    #[error("negative CPU id {0}: CPU ids are 0 or more")]
    Negative(String),
    /// `7-4`.
    #[error("range {range} is reversed; write {low}-{high}")]
    Reversed {
        /// The range as given.
        range: String,
        /// Its smaller end.
        low: u64,
        /// Its larger end.
        high: u64,
    },
    /// More CPUs than [`crate::placement::MAX_LIST_CPUS`] once ranges are expanded.
    #[error(
        "the list names {0} CPUs once its ranges are expanded, more than the {most} \
         corescope accepts",
        most = crate::placement::MAX_LIST_CPUS
    )]
    TooMany(u64),
}

/// Most bytes per event `tune channel` moves (the largest of Stage One's sizes).
pub const MAX_EVENT_BYTES: usize = 1024;

/// Parse `--event-bytes`: an integer from 1 to [`MAX_EVENT_BYTES`].
pub fn parse_event_bytes(s: &str) -> Result<usize, ArgError> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err(ArgError::NoEventBytes),
        Ok(n) if n > MAX_EVENT_BYTES => Err(ArgError::EventBytesOver),
        Ok(n) => Ok(n),
        Err(_) if is_digits(s.trim()) => Err(ArgError::EventBytesOver),
        Err(_) => Err(ArgError::NotEventBytes),
    }
}

/// Whether `s` is one or more ASCII digits (a number too large for its type
/// when it does not parse).
pub(crate) fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The range of a count in words: `from 2 to 50`, or `of 1 or more` when only
/// the type bounds it.
pub(crate) fn whole_range(min: u64, max: u64) -> String {
    if max == MAX_USIZE {
        format!("of {min} or more")
    } else {
        format!("from {min} to {max}")
    }
}

/// The largest `usize`, as a bound of [`count`].
pub(crate) const MAX_USIZE: u64 = usize::MAX as u64;

/// The value parser of a whole number from `min` to `max` (`--epochs`,
/// `--rounds`, `--nx`, ...), saying what is wrong with any other value.
pub(crate) fn count<T: TryFrom<u64>>(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<T, ArgError> + Clone + Send + Sync + 'static {
    move |s| {
        let t = s.trim();
        let n = match t.parse::<u64>() {
            Ok(n) => n,
            Err(_) if is_digits(t) => u64::MAX,
            Err(_) if t.strip_prefix('-').is_some_and(is_digits) => {
                return Err(ArgError::NegativeCount { min, max })
            }
            Err(_) => return Err(ArgError::NotCount { min, max }),
        };
        if n < min {
            return Err(ArgError::CountBelow { min });
        }
        T::try_from(n)
            .ok()
            .filter(|_| n <= max)
            .ok_or(ArgError::CountAbove { max })
    }
}

/// Largest Jacobi grid `mpi --nx` accepts: 16,384 × 16,384 interior points, two
/// grids of (NX + 2)² doubles, 4.3 GB over all the ranks (the seed's grid is
/// 1,000; a larger one would only ask the machine for memory it may not have).
pub const MAX_JACOBI_NX: u64 = 16_384;

/// Most Jacobi iterations `mpi --iterations` accepts: 100 times the full
/// profile's 1,000.
pub const MAX_JACOBI_ITERATIONS: u64 = 100_000;

/// Largest thread count accepted (far above any machine's CPUs × 4).
pub const MAX_THREADS: usize = 1 << 16;

/// Parse a thread count: a positive integer.
pub fn parse_thread_count(s: &str) -> Result<usize, ArgError> {
    let t = s.trim();
    if let Some(digits) = t.strip_prefix('-') {
        if is_digits(digits) {
            return Err(ArgError::NegativeThreads(t.to_string()));
        }
    }
    match t.parse::<usize>() {
        Ok(0) => Err(ArgError::ZeroThreads),
        Ok(n) if n > MAX_THREADS => Err(ArgError::TooManyThreads(n.to_string())),
        Ok(n) => Ok(n),
        Err(_) if is_digits(t) => Err(ArgError::TooManyThreads(t.to_string())),
        Err(_) => Err(ArgError::NotThreads(t.to_string())),
    }
}

/// Parse `1,2,4,8` into thread counts (sorted, deduplicated).
pub fn parse_thread_list(s: &str) -> Result<Vec<usize>, ArgError> {
    let mut v = s
        .split(',')
        .map(parse_thread_count)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ArgError::ThreadList(Box::new(e)))?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Parse the values of `--placement`: names separated by commas, or CPU lists.
pub fn parse_placements(values: &[String]) -> Result<Vec<Strategy>, ArgError> {
    let mut out = Vec::new();
    for v in values {
        // An expression may hold commas (`N0:0,2`): one per flag.
        if v.contains(':') || v.contains('@') {
            out.push(Strategy::parse(v)?);
            continue;
        }
        let looks_like_list = v
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '-' || c == ' ');
        if looks_like_list {
            out.push(parse_strategy(v)?);
        } else {
            for name in v.split(',').map(str::trim) {
                out.push(parse_strategy(name)?);
            }
        }
    }
    Ok(out)
}

/// Names a placement may have (for suggestions).
pub(crate) const STRATEGY_NAMES: [&str; 4] = ["linear", "compact", "scatter", "unbound"];

/// Parse one strategy or CPU list; when it is invalid, say exactly why
/// (a reversed range, a CPU id too large, a negative id, an empty item, a
/// misspelt name) instead of the generic message.
pub fn parse_strategy(v: &str) -> Result<Strategy, ArgError> {
    Strategy::parse(v).map_err(|e| {
        let t = v.trim();
        let list_like = !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '-' || c == ' ');
        if list_like {
            if let Some(why) = cpu_list_problem(t) {
                return ArgError::CpuList {
                    list: t.to_string(),
                    why,
                };
            }
        } else if let Some(name) = suggest(t, &STRATEGY_NAMES) {
            return ArgError::Misspelt { source: e, name };
        }
        ArgError::Placement(e)
    })
}

/// What is wrong with a CPU list that did not parse, if it can be said.
pub(crate) fn cpu_list_problem(t: &str) -> Option<CpuListError> {
    let mut named: u64 = 0;
    for item in t.split(',') {
        let item = item.trim();
        if item.starts_with('-') {
            return Some(CpuListError::Negative(item.to_string()));
        }
        let r = match item.split_once('-') {
            Some((a, b)) => match (cpu_id(a), cpu_id(b)) {
                (Ok(a), Ok(b)) if a > b => {
                    return Some(CpuListError::Reversed {
                        range: item.to_string(),
                        low: b,
                        high: a,
                    })
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
                (Ok(a), Ok(b)) => Ok(b - a + 1),
            },
            None => cpu_id(item).map(|_| 1),
        };
        match r {
            Err(e) => return Some(e),
            Ok(n) => named = named.saturating_add(n),
        }
    }
    let most = crate::placement::MAX_LIST_CPUS;
    (named > most as u64).then_some(CpuListError::TooMany(named))
}

/// One CPU id of a list, or what is wrong with it.
pub(crate) fn cpu_id(x: &str) -> Result<u64, CpuListError> {
    let x = x.trim();
    if x.is_empty() {
        return Err(CpuListError::Empty);
    }
    if !is_digits(x) {
        return Err(CpuListError::NotAnId(x.to_string()));
    }
    let max = crate::placement::MAX_CPU_INDEX;
    match x.parse::<u64>() {
        Ok(n) if n > u64::from(max) => Err(CpuListError::AboveMax(n.to_string())),
        Ok(n) => Ok(n),
        Err(_) => Err(CpuListError::AboveMax(x.to_string())),
    }
}

/// The candidate closest to `word` when it is a likely misspelling
/// (Damerau–Levenshtein distance at most 2, and less than the word's length).
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(&w, c), *c))
        .filter(|&(d, _)| d <= 2 && d < w.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The subcommands, for "did you mean" when a word is taken for a probe.
pub const COMMANDS: [&str; 11] = [
    "run", "list", "topo", "place", "plan", "report", "compare", "tune", "mpi", "doctor", "fleet",
];

/// Longest duration any option accepts, in seconds (7 days): more is a typo,
/// and `Duration::from_secs_f64` panics past about 1.8e19 s.
pub const MAX_DURATION_S: f64 = 7.0 * 24.0 * 3600.0;

/// Parse a duration in seconds: a finite number above 0 and at most
/// [`MAX_DURATION_S`]. The one check of every duration option (clap's value
/// parser of each), so no later conversion to a `Duration` can overflow.
pub fn parse_seconds(s: &str) -> Result<f64, ArgError> {
    match s.trim().parse::<f64>() {
        Ok(b) if b.is_finite() && b > 0.0 && b <= MAX_DURATION_S => Ok(b),
        Ok(b) if b.is_finite() && b > MAX_DURATION_S => Err(ArgError::TooLong),
        _ => Err(ArgError::NotSeconds),
    }
}

/// Parse `--budget`: seconds (see [`parse_seconds`]).
pub fn parse_budget(s: &str) -> Result<f64, ArgError> {
    parse_seconds(s)
}
