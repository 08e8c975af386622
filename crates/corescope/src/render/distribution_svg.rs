//! Charts of distributions: the paired scatter (A against B, with the y = x
//! line, marginal histograms and an intensity map) and the histogram of one
//! sample. Pure string building; every label is escaped.

use super::fmt_value;
use super::svg::{
    colour_bar, esc, frame, open_svg, tick_labels, Axis, ColourScale, H, MB, ML, MR, MT, W,
};
use std::fmt::Write;

/// Most points a scatter plot draws; beyond this the samples are thinned by a
/// fixed stride (the marginal histograms and the intensity map stay exact).
pub const MAX_SCATTER_POINTS: usize = 2000;

/// Where the parts of a paired chart sit: the scatter (`sx0`, `sy0`, `sy1`, `side`),
/// the right margin histogram (`mx0`..`mx1`), the intensity map (`ix0`..`ix1`).
struct PairedLayout {
    sx0: f64,
    sy0: f64,
    sy1: f64,
    side: f64,
    mx0: f64,
    mx1: f64,
    ix0: f64,
    ix1: f64,
}

/// The marginal histograms of a paired chart (over the scatter's axis, exact) and
/// its intensity map (log-scaled counts per cell) with a colour bar.
fn densities(
    out: &mut String,
    pairs: &[[f64; 2]],
    axis: &Axis,
    l: &PairedLayout,
    (a_name, b_name): (&str, &str),
) {
    let PairedLayout {
        sx0,
        sy0,
        sy1,
        side,
        mx0,
        mx1,
        ix0,
        ix1,
    } = *l;
    const BINS: usize = 40;
    let bin = |v: f64| ((axis.t(v) * BINS as f64) as usize).min(BINS - 1);
    let mut ha = [0u64; BINS];
    let mut hb = [0u64; BINS];
    let mut grid = vec![[0u64; BINS]; BINS];
    for p in pairs {
        let (i, j) = (bin(p[0]), bin(p[1]));
        ha[i] += 1;
        hb[j] += 1;
        grid[j][i] += 1;
    }
    let ma = ha.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mb = hb.iter().copied().max().unwrap_or(0).max(1) as f64;
    let cw = side / BINS as f64;
    for k in 0..BINS {
        if ha[k] > 0 {
            let hh = ha[k] as f64 / ma * 55.0;
            let _ = write!(out, "<rect x='{:.1}' y='{:.1}' width='{cw:.1}' height='{hh:.1}' fill='#009E73'><title>{}: {}</title></rect>", sx0 + k as f64 * cw, sy1 - 4.0 - hh, esc(a_name), ha[k]);
        }
        if hb[k] > 0 {
            let ww = hb[k] as f64 / mb * (mx1 - mx0);
            let _ = write!(out, "<rect x='{mx0:.1}' y='{:.1}' width='{ww:.1}' height='{cw:.1}' fill='#009E73'><title>{}: {}</title></rect>", sy0 - (k + 1) as f64 * cw, esc(b_name), hb[k]);
        }
    }
    // Intensity map: log-scaled counts per cell.
    let mg = grid.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let _ = write!(
        out,
        "<rect x='{ix0}' y='{sy1}' width='{side}' height='{side}' fill='#fff' stroke='#999'/>"
    );
    for (j, row) in grid.iter().enumerate() {
        for (i, &c) in row.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let fill = ColourScale::Counts.fill(ColourScale::Counts.t(c as f64, 1.0, mg));
            let _ = write!(
                out,
                "<rect x='{:.1}' y='{:.1}' width='{cw:.1}' height='{cw:.1}' fill='{fill}'><title>{c}</title></rect>",
                ix0 + i as f64 * cw,
                sy0 - (j + 1) as f64 * cw,
            );
        }
    }
    let _ = write!(
        out,
        "<line x1='{ix0}' y1='{sy0}' x2='{ix1}' y2='{sy1}' stroke='#888' stroke-dasharray='4 3'/><text x='{:.1}' y='{:.1}' font-size='11' text-anchor='middle'>intensity (pairs per cell, log)</text><text x='{:.1}' y='{:.1}' font-size='9' text-anchor='middle'>same axes as the scatter</text>",
        (ix0 + ix1) / 2.0,
        sy1 - 8.0,
        (ix0 + ix1) / 2.0,
        sy0 + 13.0,
    );
    out.push_str(&colour_bar(
        ix1 + 8.0,
        sy1,
        side,
        1.0,
        mg,
        ColourScale::Counts,
        "pairs",
    ));
}

/// Seed 000 Figure 8: pairs (A, B) as a scatter with the y = x line, the
/// histogram of A above it and of B to its right (both exact, from every
/// pair), and next to it the intensity map (2-D histogram) of the same pairs.
pub fn paired(title: &str, a_name: &str, b_name: &str, unit: &str, pairs: &[[f64; 2]]) -> String {
    let pairs: Vec<[f64; 2]> = pairs
        .iter()
        .copied()
        .filter(|p| p[0].is_finite() && p[1].is_finite())
        .collect();
    let all = || pairs.iter().flat_map(|p| p.iter().copied());
    let axis = Axis::over(all(), false, false);
    // Layout: marginal A histogram on top, scatter below, marginal B histogram right,
    // intensity map further right.
    let (sx0, sy1, side) = (ML, 70.0, 230.0);
    let (sx1, sy0) = (sx0 + side, sy1 + side);
    let (mx0, mx1) = (sx1 + 8.0, sx1 + 68.0);
    let (ix0, ix1) = (mx1 + 60.0, mx1 + 60.0 + side);
    let (w, h) = (ix1 + 60.0, sy0 + 50.0);
    let mut out = open_svg(
        w,
        h,
        &format!("{title}: {b_name} against {a_name}, {} pairs", pairs.len()),
        Some(w * 1.4),
    );
    let px = |v: f64| sx0 + axis.t(v) * (sx1 - sx0);
    let py = |v: f64| sy0 - axis.t(v) * (sy0 - sy1);
    // Frame and ticks of the scatter.
    let _ = write!(
        out,
        "<rect x='{sx0}' y='{sy1}' width='{side}' height='{side}' fill='none' stroke='#999'/>"
    );
    // Numbers in one scaled unit (named in the axis titles); at most five on a
    // side this narrow.
    let (ticks, unit_title) = tick_labels(unit, &axis);
    let thin = ticks.len().div_ceil(5).max(1);
    for (t, l) in ticks.into_iter().step_by(thin) {
        let _ = write!(
            out,
            "<text x='{:.1}' y='{:.1}' font-size='9' text-anchor='middle'>{l}</text><text x='{:.1}' y='{:.1}' font-size='9' text-anchor='end'>{l}</text>",
            px(t),
            sy0 + 13.0,
            sx0 - 4.0,
            py(t) + 3.0,
            l = esc(&l)
        );
    }
    let a_title = format!(
        "{a_name} ({unit_title}{})",
        if axis.log { ", log" } else { "" }
    );
    let b_title = format!("{b_name} ({unit_title})");
    let _ = write!(
        out,
        "<text x='{:.1}' y='{:.1}' font-size='11' text-anchor='middle'>{}</text><text x='12' y='{:.1}' font-size='11' text-anchor='middle' transform='rotate(-90 12 {:.1})'>{}</text>",
        (sx0 + sx1) / 2.0,
        sy0 + 30.0,
        esc(&a_title),
        (sy0 + sy1) / 2.0,
        (sy0 + sy1) / 2.0,
        esc(&b_title)
    );
    let _ = write!(out, "<line x1='{sx0}' y1='{sy0}' x2='{sx1}' y2='{sy1}' stroke='#888' stroke-dasharray='4 3'><title>y = x</title></line>");
    let stride = pairs.len().div_ceil(MAX_SCATTER_POINTS).max(1);
    for p in pairs.iter().step_by(stride) {
        let _ = write!(
            out,
            "<circle cx='{:.1}' cy='{:.1}' r='1.6' fill='#0072B2' fill-opacity='0.4'/>",
            px(p[0]),
            py(p[1])
        );
    }
    if stride > 1 {
        let _ = write!(out, "<text x='{sx0}' y='{:.1}' font-size='9' fill='#555'>every {stride}th pair drawn</text>", sy0 + 44.0);
    }
    let layout = PairedLayout {
        sx0,
        sy0,
        sy1,
        side,
        mx0,
        mx1,
        ix0,
        ix1,
    };
    densities(&mut out, &pairs, &axis, &layout, (a_name, b_name));
    out.push_str("</svg>");
    out
}

/// A histogram from bin edges and counts.
pub fn histogram(title: &str, unit: &str, edges: &[f64], counts: &[u64], log: bool) -> String {
    // Bounded drawing: more bins than MAX_BARS are merged k at a time.
    let merged;
    let (edges, counts) = if counts.len() > MAX_BARS && edges.len() == counts.len() + 1 {
        let k = counts.len().div_ceil(MAX_BARS);
        let c: Vec<u64> = counts.chunks(k).map(|c| c.iter().sum()).collect();
        let mut e: Vec<f64> = edges.iter().step_by(k).copied().collect();
        if e.len() < c.len() + 1 {
            e.push(edges[edges.len() - 1]);
        }
        e.truncate(c.len() + 1);
        merged = (e, c);
        (merged.0.as_slice(), merged.1.as_slice())
    } else {
        (edges, counts)
    };
    let x = Axis::over(edges.iter().copied(), log, false);
    let y = Axis::over(counts.iter().map(|&c| c as f64).chain([0.0]), false, true);
    let mut out = String::new();
    frame(&mut out, &x, &y, unit, "samples", title);
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    for (&c, e) in counts.iter().zip(edges.windows(2)) {
        let (a, b) = (e[0], e[1]);
        let (pa, pb) = (x0 + x.t(a) * (x1 - x0), x0 + x.t(b) * (x1 - x0));
        let py = y0 - y.t(c as f64) * (y0 - y1);
        let _ = write!(
            out,
            "<rect x='{pa:.1}' y='{py:.1}' width='{:.1}' height='{:.1}' fill='#009E73'><title>{}–{}: {c}</title></rect>",
            (pb - pa).max(0.5),
            y0 - py,
            esc(&fmt_value(unit, a)),
            esc(&fmt_value(unit, b))
        );
    }
    out.push_str("</svg>");
    out
}

/// Most bars a histogram draws.
pub const MAX_BARS: usize = 2000;
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_huge_samples_are_drawn_bounded() {
        assert!(paired("t", "a", "b", "ns", &[]).ends_with("</svg>"));
        let many: Vec<[f64; 2]> = (0..100_000)
            .map(|i| [1.0 + i as f64, 2.0 + i as f64])
            .collect();
        let svg = paired("t", "a", "b", "ns", &many);
        assert!(svg.matches("<circle").count() <= MAX_SCATTER_POINTS);
        assert!(histogram("t", "ns", &[1.0, 1.0], &[3], false).contains("<rect"));
    }
}
