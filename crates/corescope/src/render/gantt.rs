//! Gantt lanes (timelines): one row per lane, spans as bars coloured by kind.
//! Timelines that are compared (false sharing's packed and padded runs, the MPI
//! ranks' phases) are drawn on one time axis, so that a bar's length reads the
//! same in each chart. Pure string building; every label is escaped.

use super::svg::{esc, nice_step, open_svg, MB, PALETTE, W};
use super::{fmt_num, unit_scale};
use crate::model::Timeline;
use std::fmt::Write;

/// Most lanes a timeline draws.
pub const MAX_LANES: usize = 256;
/// Most spans a timeline draws, over all lanes.
pub const MAX_SPANS: usize = 20_000;
/// Most ticks on the time axis (besides 0).
const MAX_TICKS: f64 = 8.0;

/// One lane of a timeline: its label and its spans `(start_ns, end_ns, kind)`.
pub type Lane = (String, Vec<(f64, f64, String)>);

/// The lanes of a run file's timeline, in drawing form.
pub fn lanes_of(t: &Timeline) -> Vec<Lane> {
    t.lanes
        .iter()
        .map(|l| {
            (
                l.label.clone(),
                l.spans
                    .iter()
                    .map(|s| (s.start_ns, s.end_ns, s.kind.clone()))
                    .collect(),
            )
        })
        .collect()
}

/// The latest span end over all given timelines (ns since each one's origin):
/// the common right end of their time axes. `None` when nothing has a positive end.
pub fn shared_end_ns<'a>(timelines: impl IntoIterator<Item = &'a Timeline>) -> Option<f64> {
    let end = timelines
        .into_iter()
        .flat_map(|t| {
            t.lanes
                .iter()
                .flat_map(|l| l.spans.iter().map(|s| s.end_ns))
        })
        .filter(|e| e.is_finite())
        .fold(0.0, f64::max);
    (end > 0.0).then_some(end)
}

/// Gantt lanes: one row per lane, spans as bars coloured by their kind
/// (`work`, `compute`, `Sendrecv` …) with a legend of the kinds above the lanes;
/// neighbouring spans of one kind are told apart by a thin white edge. The
/// time axis runs from 0 to `end_ns` when given (a scale shared with other
/// timelines), else to this timeline's own last span end.
pub fn gantt(title: &str, lanes: &[Lane], end_ns: Option<f64>) -> String {
    // Bounded drawing: at most MAX_LANES lanes and MAX_SPANS spans in all.
    let lanes = &lanes[..lanes.len().min(MAX_LANES)];
    let per_lane = (MAX_SPANS / lanes.len().max(1)).max(2);
    let own_end = lanes
        .iter()
        .flat_map(|l| l.1.iter().map(|s| s.1))
        .fold(0.0, f64::max);
    let end = end_ns
        .filter(|e| e.is_finite() && *e > 0.0)
        .unwrap_or(own_end)
        .max(own_end)
        .max(1.0);
    let kinds = kinds_of(lanes);
    let colour = |k: &str| {
        kinds
            .iter()
            .position(|&c| c == k)
            .map(|i| PALETTE[i % PALETTE.len()])
            .unwrap_or("#888")
    };
    let lane_h = 14.0;
    let top = 38.0;
    let h = top + lanes.len() as f64 * lane_h + MB;
    let (x0, x1) = (110.0, W - 20.0);
    let mut out = open_svg(W, h, title, None);
    let mut lx = x0;
    for k in &kinds {
        let _ = write!(
            out,
            "<g class='kind'><rect x='{lx:.1}' y='6' width='12' height='10' fill='{}'/><text x='{:.1}' y='15' font-size='10'>{}</text></g>",
            colour(k),
            lx + 16.0,
            esc(k)
        );
        lx += 16.0 + 7.0 * k.chars().count().min(24) as f64 + 14.0;
    }
    let px = |v: f64| x0 + (v / end).clamp(0.0, 1.0) * (x1 - x0);
    for (i, (label, spans)) in lanes.iter().enumerate() {
        let y = top + i as f64 * lane_h;
        let _ = write!(
            out,
            "<text x='{}' y='{:.1}' font-size='9' text-anchor='end'>{}</text>",
            x0 - 4.0,
            y + 10.0,
            esc(label)
        );
        let step = spans.len().div_ceil(per_lane).max(1);
        for (a, b, kind) in spans.iter().step_by(step) {
            let (pa, pb) = (px(*a), px(*b));
            let _ = write!(
                out,
                "<rect x='{pa:.2}' y='{y:.1}' width='{:.2}' height='{:.1}' fill='{}' stroke='#fff' stroke-width='0.4'><title>{}: {}–{}</title></rect>",
                (pb - pa).max(0.3),
                lane_h - 3.0,
                colour(kind),
                esc(kind),
                esc(&super::fmt_value("ns", *a)),
                esc(&super::fmt_value("ns", *b))
            );
        }
    }
    time_axis(&mut out, (x0, x1), top + lanes.len() as f64 * lane_h, end);
    out.push_str("</svg>");
    out
}

/// The kinds of span, in order of first appearance (at most 64 get a colour).
fn kinds_of(lanes: &[Lane]) -> Vec<&str> {
    let mut kinds: Vec<&str> = Vec::new();
    for s in lanes.iter().flat_map(|l| &l.1) {
        if !kinds.contains(&s.2.as_str()) && kinds.len() < 64 {
            kinds.push(&s.2);
        }
    }
    kinds
}

/// The time axis under the lanes at height `y`: a line from 0 to `end_ns`,
/// ticks at a round step in one unit, and the axis title with that unit.
fn time_axis(out: &mut String, (x0, x1): (f64, f64), y: f64, end_ns: f64) {
    let (scale, unit) = unit_scale("ns", end_ns);
    let _ = write!(
        out,
        "<line x1='{x0}' y1='{y:.1}' x2='{x1}' y2='{y:.1}' stroke='#999'/>"
    );
    for t in time_ticks(end_ns) {
        let x = x0 + t / end_ns * (x1 - x0);
        let _ = write!(
            out,
            "<line class='tick' x1='{x:.1}' y1='{y:.1}' x2='{x:.1}' y2='{:.1}' stroke='#999'/><text x='{x:.1}' y='{:.1}' font-size='10' text-anchor='middle'>{}</text>",
            y + 4.0,
            y + 15.0,
            esc(&fmt_num(t / scale))
        );
    }
    let _ = write!(
        out,
        "<text x='{:.1}' y='{:.1}' font-size='11' text-anchor='middle'>time since the first start ({})</text>",
        (x0 + x1) / 2.0,
        y + 32.0,
        esc(&unit)
    );
}

/// Ticks from 0 to `end_ns` at a round step (1, 2, 2.5 or 5 × 10^k ns), at
/// most [`MAX_TICKS`] + 1 of them.
fn time_ticks(end_ns: f64) -> Vec<f64> {
    if !(end_ns.is_finite() && end_ns > 0.0) {
        return vec![0.0];
    }
    let step = nice_step(end_ns / MAX_TICKS);
    (0..)
        .map(|i| i as f64 * step)
        .take_while(|t| *t <= end_ns * (1.0 + 1e-9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lane as ModelLane, Span};

    fn timeline(name: &str, end: f64) -> Timeline {
        Timeline {
            name: name.into(),
            lanes: vec![ModelLane {
                label: "thread 0".into(),
                spans: vec![Span {
                    start_ns: 0.0,
                    end_ns: end,
                    kind: "work".into(),
                }],
            }],
        }
    }

    #[test]
    fn compared_timelines_share_one_axis() {
        let (a, b) = (timeline("a", 1_000.0), timeline("b", 4_000.0));
        let end = shared_end_ns([&a, &b]);
        assert_eq!(end, Some(4_000.0));
        let short = gantt("a", &lanes_of(&a), end);
        // The 1 µs bar takes a quarter of the 4 µs axis: (860 - 20 - 110) / 4.
        assert!(short.contains("width='182.50'"), "{short}");
        assert!(gantt("b", &lanes_of(&b), end).contains("width='730.00'"));
        // Alone, the short one fills its own axis.
        assert!(gantt("a", &lanes_of(&a), None).contains("width='730.00'"));
        // Both axes end on the same label.
        let ticks = |s: &str| s.matches("class='tick'").count();
        assert_eq!(ticks(&short), ticks(&gantt("b", &lanes_of(&b), end)));
    }

    #[test]
    fn time_ticks_are_round_and_bounded() {
        assert_eq!(
            time_ticks(4_000.0),
            vec![0.0, 500.0, 1_000.0, 1_500.0, 2_000.0, 2_500.0, 3_000.0, 3_500.0, 4_000.0]
        );
        for end in [1.0, 7.3, 999.0, 1e6, 3.3e9] {
            let t = time_ticks(end);
            assert!(
                t.len() >= 2 && t.len() as f64 <= MAX_TICKS + 1.0,
                "{end}: {t:?}"
            );
            assert!(*t.last().unwrap_or(&f64::MAX) <= end * (1.0 + 1e-9));
        }
        assert_eq!(time_ticks(f64::NAN), vec![0.0]);
        assert_eq!(shared_end_ns([]), None);
    }

    #[test]
    fn empty_and_bounded() {
        assert!(gantt("t", &[], None).ends_with("</svg>"));
        let many: Vec<Lane> = (0..MAX_LANES + 5)
            .map(|i| (format!("l{i}"), vec![(0.0, 1.0, "work".into()); 200]))
            .collect();
        let svg = gantt("t", &many, Some(f64::INFINITY));
        assert!(svg.matches("<rect").count() <= MAX_SPANS + 64);
        assert!(svg.ends_with("</svg>"));
    }
}
