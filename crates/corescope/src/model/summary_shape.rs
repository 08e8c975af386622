//! How a probe's results are headed in the terminal summary, as data: each probe
//! states its shape (`Probe::summary_shape`, in its own file) and the summary's
//! renderers draw by shape, never by probe id. A variant names a *shape* of
//! headline (a scaling peak, a distribution's median per placement, pair
//! latencies, …); its fields are the names that shape reads in the probe's result
//! (series and distribution prefixes, family names, implementation names).

/// The shape of a probe's summary: which results lead (its headline) and which
/// items follow. Pure data; the wording is `render/summary_headline.rs` and
/// `render/summary_items.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryShape {
    /// No headline of its own: the first item leads, and the items are the typed
    /// findings in short form (or the notes of older files).
    #[default]
    FirstItem,
    /// Scaling families (`peak int 3.560 Gops/s, fp 2.404 Gops/s with 6 threads`):
    /// the `Finding::Scaling` of each family in `families`, in that order; one
    /// item per placement of the families in `by_placement`, the peak of the
    /// others, seed 001's Table 2 (MIPS, CPI) of the families in `table2`, and
    /// the load latency per cache level from `latency_series`. Its comparisons of placements are left out
    /// (the placements' figures are shown), and it leads with one more line.
    Scaling {
        families: &'static [&'static str],
        by_placement: &'static [&'static str],
        table2: &'static [&'static str],
        latency_series: Option<&'static str>,
    },
    /// The highest rate per precision over levels named `<level>-<suffix>`
    /// (`f64 114.9 GFLOP/s (avx512-fma, 2 threads)`), then every level, fastest
    /// first, with its one-thread figure per cycle.
    PeakPerLevel { suffixes: &'static [&'static str] },
    /// Medians of the distributions `<prefix><where>/<part>`: the headline names
    /// `head_part` per where after `head_lead`; one item per where, each part of
    /// `item_parts` (`(part, label)`) after `item_lead`.
    PlacedMedians {
        prefix: &'static str,
        head_part: &'static str,
        head_lead: &'static str,
        item_lead: &'static str,
        item_parts: &'static [(&'static str, &'static str)],
    },
    /// A lock: the span of the uncontended medians (`<uncontended><impl>`), then
    /// the hand-over to a sleeping and a spinning waiter
    /// (`<sleeping><where>/<part>`, `<spinning><where>/<part>`).
    LockHandoff {
        uncontended: &'static str,
        sleeping: &'static str,
        spinning: &'static str,
        part: &'static str,
    },
    /// Every distribution's median, one item each.
    Medians,
    /// Per subject, a `Finding::Value` named `<subject><suffix>` with the value
    /// named `<subject><companion>` beside it (`tsc: a read takes 9.650 ns, step
    /// 0.390 ns`).
    ValueWithCompanion {
        suffix: &'static str,
        says: &'static str,
        companion: &'static str,
        companion_says: &'static str,
    },
    /// Classes of CPU pairs, each a `Finding::Value` named `<class>: <pairs>`
    /// whose interval is the range over its pairs; the first class leads.
    PairClasses { classes: &'static [PairClass] },
    /// Whether CPUs share a core (`Finding::CoreSharing`), after the pair
    /// matrices' worst slowdowns.
    CoreSharing,
    /// What a neighbour did to a thread (`Finding::Slowdown`), a shared core
    /// first; notes whose text holds `notes_with` are kept as items before them.
    Slowdowns { notes_with: Option<&'static str> },
    /// One implementation (`ours`) against its strongest rival per group of
    /// events (`Finding::Comparison` with `a == ours`); items: the best rate per
    /// event size from the series `<rates><impl>/<size>`, and the round trips
    /// from the distributions `<round_trips><impl>/…`.
    Race {
        ours: &'static str,
        rates: &'static str,
        round_trips: &'static str,
    },
    /// Comparisons of implementations: those each pick accepts, in pick order.
    Comparison { picks: &'static [Sides] },
    /// A tuner's pick from its stage tables (`<first_stage>…`, `<last_stage>…`,
    /// each with a `best` row) and what it gained from the first stage's start.
    TunerPick {
        first_stage: &'static str,
        last_stage: &'static str,
    },
}

impl SummaryShape {
    /// Lines the probe gets beyond the others' share (the scaling probes lead).
    pub fn extra_lines(&self) -> usize {
        usize::from(matches!(self, Self::Scaling { .. }))
    }
}

/// A class of CPU pairs in [`SummaryShape::PairClasses`]: the name its values
/// carry, its words in the headline and in its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairClass {
    pub name: &'static str,
    pub head: &'static str,
    pub item: &'static str,
}

/// Which comparisons a [`SummaryShape::Comparison`] pick accepts, by the names of
/// its two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// One side starts with each (either order).
    Between(&'static str, &'static str),
    /// The first side starts with it.
    From(&'static str),
    /// The first side does not start with it.
    NotFrom(&'static str),
}

impl Sides {
    /// Whether a comparison of `a` with `b` is one of these.
    pub fn accepts(&self, a: &str, b: &str) -> bool {
        match *self {
            Self::Between(x, y) => {
                a.starts_with(x) && b.starts_with(y) || a.starts_with(y) && b.starts_with(x)
            }
            Self::From(x) => a.starts_with(x),
            Self::NotFrom(x) => !a.starts_with(x),
        }
    }
}
