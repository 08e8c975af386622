//! Two probes that measure the same quantity, as data: a probe states which of its
//! figures another probe measures too (`Probe::same_quantities`, in its own file),
//! and `analysis::consistency` puts the two side by side in every report. A run
//! whose two measurements of one thing disagree beyond the stated tolerance says
//! so, instead of leaving the reader to find it.

/// Which point of a series: by position, or at the x a parameter of the declaring
/// probe's result names (a size both probes used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The series' first point.
    First,
    /// The series' last point.
    Last,
    /// The point at x = the declaring probe's parameter of this name (a number).
    AtParam(&'static str),
}

/// A figure of the declaring probe that another probe measures too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SameQuantity {
    /// What both measure, in words ("memory latency, idle, huge pages").
    pub what: &'static str,
    /// The declaring probe's series and its point.
    pub series: &'static str,
    /// Which point of `series`.
    pub x: Pick,
    /// The other probe's id.
    pub other_probe: &'static str,
    /// The other probe's series.
    pub other_series: &'static str,
    /// Which point of `other_series` (an `AtParam` reads the declaring probe's
    /// parameter).
    pub other_x: Pick,
    /// A parameter the other probe's result must record with this value for the
    /// two to be the same quantity (how it measured: a run file written before the
    /// other probe measured that way has no pair).
    pub other_param: Option<(&'static str, &'static str)>,
    /// The relative difference within which the two agree (0.10: ±10 %).
    pub tolerance: f64,
}
