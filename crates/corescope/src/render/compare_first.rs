//! The first screen of `corescope compare`: for each run after the first, the
//! differences beyond the noise (`compare::differences`), the largest first, in
//! words that the terminal and the HTML page both print before the detail.

use super::compare_view::Machine;
use crate::compare::differences::{differences, Difference, Verdict, VerdictKind};
use crate::model::Estimate;
use crate::render::{fmt_num, fmt_x, unit_scale, words};
use crate::units::{direction, fmt_ratio_vs_one};

/// How the differences are decided, printed under them.
pub(super) const RULE: &str = "Beyond the noise: a series point whose two 95 % intervals do \
     not overlap (unless both runs mark it state-dependent), a comparison, slowdown or \
     core-sharing verdict that differs, or a probe whose status differs; statuses first, \
     then the ratio farthest from 1.";

/// One run after the first against the first.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Block {
    /// `B against A: …` with what was compared.
    pub head: String,
    /// Each difference, largest first: (probe id, what differs after the probe id).
    pub items: Vec<(String, String)>,
    /// The probes only one of the two runs holds, when any.
    pub note: Option<String>,
    /// The measured core clock, when it moved between the runs beyond its
    /// ranges: what many of the differences follow.
    pub clock: Option<String>,
}

/// One block per run after the first (none for a single run), on the probes
/// `only` names.
pub(super) fn first_screen(ms: &[Machine], only: Option<&[String]>) -> Vec<Block> {
    let Some(m0) = ms.first() else {
        return Vec::new();
    };
    ms.iter()
        .skip(1)
        .map(|m| {
            let d = differences(m0.run, m.run, only);
            let compared = format!(
                "{} series point{} compared, {} finding{}",
                d.points,
                plural(d.points),
                d.findings,
                plural(d.findings)
            );
            let head = match d.list.len() {
                0 if d.points + d.findings == 0 => format!(
                    "{} against {}: no differences beyond the noise ({compared}: no series \
                     point or finding has an interval in both runs, so nothing could be told apart)",
                    m.label, m0.label
                ),
                0 => format!(
                    "{} against {}: no differences beyond the noise ({compared})",
                    m.label, m0.label
                ),
                k => format!(
                    "{} against {}: {k} difference{} beyond the noise ({compared}), the largest first:",
                    m.label,
                    m0.label,
                    plural(k)
                ),
            };
            let mut only_in = Vec::new();
            for (ids, who) in [(&d.only_first, m0), (&d.only_other, m)] {
                if !ids.is_empty() {
                    only_in.push(format!("only in {}: {}", who.label, ids.join(", ")));
                }
            }
            Block {
                head,
                clock: crate::compare::clock_shift(m0.run, m.run).map(|c| clock_text(&c, m0, m)),
                items: d.list.iter().map(|x| item(x, m0, m)).collect(),
                note: (!only_in.is_empty()).then(|| format!("probes {}", only_in.join("; "))),
            }
        })
        .collect()
}

/// `The core clock moved: …` in words, with each run's range and the ratio.
fn clock_text(c: &crate::compare::ClockShift, a: &Machine, b: &Machine) -> String {
    let ghz = |(hz, r): (f64, [f64; 2])| {
        format!(
            "{} GHz (range {}–{})",
            fmt_num(hz / 1e9),
            fmt_num(r[0] / 1e9),
            fmt_num(r[1] / 1e9)
        )
    };
    format!(
        "The core clock moved between the runs: with {} {} in {}, {} in {} ({}×). Rates of \
         clock-bound work (compute, peak, the clock curve) differ with it; per-cycle figures \
         divide each run's own clock out.",
        c.load,
        ghz(c.a),
        a.label,
        ghz(c.b),
        b.label,
        fmt_ratio_vs_one(c.b.0 / c.a.0)
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `208.3 ns (95 % CI 200.1–210.4; 540.6 cycles)`: a value with its interval, a
/// time also in cycles of the run's own clock.
fn value_text(unit: &str, e: &Estimate, m: &Machine) -> String {
    let (f, label) = unit_scale(unit, e.value);
    let cycles = super::compare_view::cycles(unit, e.value, m)
        .map(|c| format!("; {} cycles", fmt_num(c)))
        .unwrap_or_default();
    format!(
        "{} {label} (95 % CI {}–{}{cycles})",
        fmt_num(e.value / f),
        fmt_num(e.lo / f),
        fmt_num(e.hi / f)
    )
}

/// One run's verdict with its ratio (`sides.0` ÷ `sides.1`): where it tells the
/// sides apart, the first side's direction worded from the ratio by
/// [`direction`] (`normal shorter (faster, better)`), never from the verdict's
/// own name, so the words and the figure cannot disagree.
fn verdict_text(
    kind: VerdictKind,
    (v, r): (&Verdict, &Estimate),
    sides: &(String, String),
    unit: &str,
) -> String {
    let said = match (kind, v) {
        (VerdictKind::CoreSharing, Verdict::Says(s)) => format!("{s} core"),
        (_, Verdict::Says(_)) => format!("{} {}", sides.0, direction(r.value, unit)),
        (_, Verdict::Equivalent) => "equivalent".into(),
        (_, Verdict::Undecided) => "not told apart".into(),
    };
    format!("{}, {said}", words::ratio(r))
}

/// One difference in words, after its probe id.
fn item(d: &Difference, a: &Machine, b: &Machine) -> (String, String) {
    let text = match d {
        Difference::Point {
            series,
            x_name,
            x,
            unit,
            a: ea,
            b: eb,
            ..
        } => {
            let r = eb.value / ea.value;
            format!(
                "{series} at {}: {} {}, {} {}: {}×, {} {}",
                fmt_x(x_name, *x),
                a.label,
                value_text(unit, ea, a),
                b.label,
                value_text(unit, eb, b),
                fmt_ratio_vs_one(r),
                b.label,
                direction(r, unit)
            )
        }
        Difference::Verdict {
            what,
            kind,
            sides,
            unit,
            a: (va, ra),
            b: (vb, rb),
            ..
        } => format!(
            "{what} ({} ÷ {}): {} {}; {} {}",
            sides.0,
            sides.1,
            a.label,
            verdict_text(*kind, (va, ra), sides, unit),
            b.label,
            verdict_text(*kind, (vb, rb), sides, unit)
        ),
        Difference::Status { a: sa, b: sb, .. } => format!(
            "{} {}, {} {}",
            a.label,
            sa.name().replace('_', " "),
            b.label,
            sb.name().replace('_', " ")
        ),
    };
    (d.probe().to_string(), text)
}
