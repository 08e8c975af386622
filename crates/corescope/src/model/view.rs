//! The special charts and sections a probe's results get in the report, as data:
//! each probe states its views (`Probe::views`, in its own file) and the renderers
//! look them up in the registry by the run file's probe id, never test the id
//! themselves. A result whose probe the registry does not know (an older run
//! file's) gets no special view; the generic charts and tables draw it all.

/// A special chart or section of the report, drawn from the shapes of a result
/// (named series and tables) in addition to the generic ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum View {
    /// STREAM's kernels on one chart (`render/stream_chart.rs`): bandwidth
    /// against threads, each point the best placement's, from the series
    /// `<kernel>/<placement>` in bytes per second.
    StreamChart,
    /// Seed 003's bars (`render/spin_bars.rs`): per benchmark, the slowdown
    /// under each spin loop, from the tables `spin/<placement>`; the series
    /// below them folded.
    SpinBars,
    /// The peak overview (`render/peak_overview.rs`): FLOP per cycle per thread
    /// of every ISA level and precision at every thread count beside the FMA
    /// limit, from the series `<kernel>-per-cycle/<placement>` and the
    /// limit table; the per-level charts below it folded.
    PeakOverview,
    /// Latency against the bandwidth the other CPUs draw (`render/loaded_curve.rs`),
    /// as Intel MLC draws it, from the tables `…: latency vs bandwidth`; the
    /// tables below it folded.
    LoadedCurve,
    /// Seed 004's figures (`render/channel_roadmap.rs`): the Stage One roadmap
    /// as bars, from its roadmap table, and Stage Two's curves against their
    /// reference lines (series `<step>/Optimal`, …), which leave the generic
    /// charts.
    ChannelRoadmap,
}
