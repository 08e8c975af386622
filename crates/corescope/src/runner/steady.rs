//! Rounds kept only while the watched pair holds still (`Case::kept_when_steady`):
//! a round during which its round trip moved is dropped and run again, and the
//! probe's result says how many and between which round trips.

use crate::model::{ProbeResult, Warning};

/// The rounds of a group that the watched pair's round trip made the runner drop
/// (`R`: what one round produced, kept aside when it is dropped).
pub(super) struct Steadiness<R> {
    /// The last reading (it opens the next round).
    pub(super) last_ns: Option<f64>,
    /// Dropped rounds, kept aside in case no round is steady, each with the
    /// (lowest, highest) round trip read around it.
    dropped: Vec<(R, (f64, f64))>,
    /// Rounds during which the pair moved.
    pub(super) moved: usize,
    /// Rounds kept although they moved (too few held still).
    pub(super) kept_anyway: usize,
    /// The widest (lowest, highest) span of a dropped round (`None` before any).
    pub(super) widest: Option<(f64, f64)>,
    /// The lowest and highest reading of the kept rounds, those kept anyway
    /// included (`None` before any).
    pub(super) kept_span_ns: Option<(f64, f64)>,
}

impl<R> Default for Steadiness<R> {
    fn default() -> Self {
        Self {
            last_ns: None,
            dropped: Vec::new(),
            moved: 0,
            kept_anyway: 0,
            widest: None,
            kept_span_ns: None,
        }
    }
}

impl<R> Steadiness<R> {
    /// Whether a round with these readings is kept; a dropped one is set aside
    /// (`round`) and widens the record.
    pub(super) fn keep(&mut self, round: R, trips_ns: Vec<f64>) -> Option<R> {
        match crate::drift::moved_within(&trips_ns) {
            None => {
                for &t in &trips_ns {
                    self.widen_kept(t, t);
                }
                Some(round)
            }
            Some((lo, hi)) => {
                self.moved += 1;
                if self.widest.is_none_or(|(wlo, whi)| hi / lo > whi / wlo) {
                    self.widest = Some((lo, hi));
                }
                self.dropped.push((round, (lo, hi)));
                None
            }
        }
    }

    /// Up to `n` dropped rounds, kept after all (too few held still): the kept
    /// span then takes in their round trips, so the state it names is the mixed
    /// one their figures belong to.
    pub(super) fn keep_anyway(&mut self, n: usize) -> Vec<R> {
        let mut dropped = std::mem::take(&mut self.dropped);
        dropped.truncate(n);
        self.kept_anyway += dropped.len();
        dropped
            .into_iter()
            .map(|(round, (lo, hi))| {
                self.widen_kept(lo, hi);
                round
            })
            .collect()
    }

    fn widen_kept(&mut self, lo_ns: f64, hi_ns: f64) {
        let (lo, hi) = self.kept_span_ns.unwrap_or((lo_ns, hi_ns));
        self.kept_span_ns = Some((lo.min(lo_ns), hi.max(hi_ns)));
    }
}

/// Say how many rounds were dropped because the watched pair moved, and how far
/// (`rounds_dropped_unsteady` counts them over the probe, 0 when none was), and
/// the span of the kept rounds' round trips (`steady_round_trip_ns`, by group):
/// the state of the machine the group's figures belong to.
pub(super) fn report<R>(
    result: &mut ProbeResult,
    what: String,
    steadiness: &Steadiness<R>,
    watch: Option<(u32, u32)>,
    kept: usize,
) {
    let Some((a, b)) = watch else {
        return;
    };
    let dropped = steadiness.moved - steadiness.kept_anyway;
    let params = &mut result.params;
    let total = params
        .get("rounds_dropped_unsteady")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    params.insert(
        "rounds_dropped_unsteady".into(),
        (total + dropped as u64).into(),
    );
    params.insert(
        "steady_round_trip_factor".into(),
        crate::drift::ROUND_TRIP_MOVED.into(),
    );
    if let Some((lo, hi)) = steadiness.kept_span_ns {
        let spans = params
            .entry("steady_round_trip_ns".to_string())
            .or_insert_with(|| serde_json::json!({}));
        if let Some(m) = spans.as_object_mut() {
            m.insert(what.clone(), serde_json::json!([lo.round(), hi.round()]));
        }
    }
    let Some((lo, hi)) = steadiness.widest else {
        return;
    };
    let moved = format!(
        "the round trip between CPUs {a} and {b} moved by more than {:.1}× within \
             {} rounds (from {lo:.0} to {hi:.0} ns at most)",
        crate::drift::ROUND_TRIP_MOVED,
        steadiness.moved
    );
    let detail = if steadiness.kept_anyway > 0 {
        format!(
            "{what}: {moved}, every round run; {} of the {kept} rounds were kept \
                 anyway, so its comparisons mix states of the machine",
            steadiness.kept_anyway
        )
    } else {
        format!("{what}: {moved}; they were dropped and {kept} steady rounds kept")
    };
    result.warnings.push_unique(Warning::Noisy {
        detail,
        cause: crate::model::NoiseCause::RoundTrip,
    });
}
