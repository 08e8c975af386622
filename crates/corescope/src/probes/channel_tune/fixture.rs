//! What the tuner's unit tests share: a pair left to the OS, a budget, a row, a
//! deadline far off.

use super::*;

static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// A pair on no CPU in particular, not counting.
pub(super) fn pair() -> Pair<'static> {
    Pair {
        cpus: (None, None),
        refused: &REFUSED,
        counts: None,
    }
}

/// A budget of `total_s` from now, a run cut after `run_limit_s`.
pub(super) fn budget(total_s: f64, run_limit_s: f64) -> Budget {
    Budget {
        start: Instant::now(),
        total: total_s,
        run_limit_s,
    }
}

/// A row of 1000 events in `secs`, run with `pinned`.
pub(super) fn row(label: &str, config: Option<Config>, secs: f64, pinned: Option<bool>) -> Row {
    Row {
        pinned,
        ..Row::once(label, config, 1000, secs)
    }
}

/// A cut no test run reaches.
pub(super) fn far() -> Instant {
    Instant::now() + std::time::Duration::from_secs(30)
}
