//! Heat maps of matrices (c2c latency, NUMA bandwidth, compare's ratios) with
//! labelled rows and columns and a colour scale. Pure string building; every
//! label is escaped.

use super::fmt_value;
use super::svg::{colour_bar, esc, open_svg, ColourScale};
use std::fmt::Write;

/// Most rows (and columns) a heat map draws; larger matrices are sampled.
pub const MAX_HEATMAP_SIDE: usize = 128;

/// A heat map of a matrix with labelled rows and columns and its colour scale.
pub fn heatmap(
    title: &str,
    unit: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
) -> String {
    heatmap_with(title, unit, rows, cols, values, ColourScale::Sequential)
}

/// [`heatmap`] with a chosen colour scale (a ratio map uses [`ColourScale::Ratio`]).
pub fn heatmap_with(
    title: &str,
    unit: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    scale: ColourScale,
) -> String {
    heatmap_in(title, unit, rows, cols, values, scale, None)
}

/// [`heatmap_with`] on a given value range (`lo`, `hi`), so that several maps
/// (one per machine) share one colour scale; `None`: the map's own range.
pub fn heatmap_in(
    title: &str,
    unit: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    scale: ColourScale,
    range: Option<(f64, f64)>,
) -> String {
    // Bounded drawing: every k-th row and column of a large matrix.
    let (rk, ck) = (
        rows.len()
            .max(values.len())
            .div_ceil(MAX_HEATMAP_SIDE)
            .max(1),
        cols.len().div_ceil(MAX_HEATMAP_SIDE).max(1),
    );
    let sampled: Vec<Vec<Option<f64>>> = values
        .iter()
        .step_by(rk)
        .map(|r| r.iter().step_by(ck).copied().collect())
        .collect();
    let rows: Vec<String> = rows.iter().step_by(rk).cloned().collect();
    let cols: Vec<String> = cols.iter().step_by(ck).cloned().collect();
    let values = sampled.as_slice();
    let (rows, cols) = (rows.as_slice(), cols.as_slice());
    let n = rows.len().max(1) as f64;
    let m = cols.len().max(1) as f64;
    let cell = (420.0 / n.max(m)).clamp(4.0, 48.0);
    let (w, h) = (80.0 + cell * m + 110.0, (40.0 + cell * n + 20.0).max(150.0));
    let vals: Vec<f64> = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let (lo, hi) = range.unwrap_or((
        vals.iter().copied().fold(f64::INFINITY, f64::min),
        vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ));
    let mut out = open_svg(w, h, title, Some(w * 1.3));
    let show_labels = cell >= 10.0;
    for (r, row) in values.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let (px, py) = (80.0 + c as f64 * cell, 40.0 + r as f64 * cell);
            let (fill, tip) = match v {
                Some(v) if v.is_finite() => {
                    let tip = match scale {
                        ColourScale::Ratio => format!("{v:.3}×"),
                        ColourScale::Sequential => fmt_value(unit, *v),
                        ColourScale::Counts => format!("{v:.0}"),
                    };
                    (scale.fill(scale.t(*v, lo, hi)), tip)
                }
                _ => ("#f4f4f4".to_string(), "not measured".to_string()),
            };
            let _ = write!(
                out,
                "<rect x='{px:.1}' y='{py:.1}' width='{cell:.1}' height='{cell:.1}' fill='{fill}' stroke='#fff'><title>{} ↔ {}: {}</title></rect>",
                esc(rows.get(r).map(String::as_str).unwrap_or("")),
                esc(cols.get(c).map(String::as_str).unwrap_or("")),
                esc(&tip)
            );
        }
        if show_labels {
            let _ = write!(
                out,
                "<text x='76' y='{:.1}' font-size='9' text-anchor='end'>{}</text>",
                40.0 + (r as f64 + 0.7) * cell,
                esc(rows.get(r).map(String::as_str).unwrap_or(""))
            );
        }
    }
    if show_labels {
        for (c, l) in cols.iter().enumerate() {
            let _ = write!(
                out,
                "<text x='{:.1}' y='34' font-size='9' text-anchor='middle'>{}</text>",
                80.0 + (c as f64 + 0.5) * cell,
                esc(l)
            );
        }
    }
    if rk > 1 || ck > 1 {
        let _ = write!(
            out,
            "<text x='4' y='12' font-size='9' fill='#555'>{}</text>",
            esc(&format!(
                "every {rk}th row and {ck}th column drawn; the CSV has every cell"
            ))
        );
    }
    if lo.is_finite() {
        let lx = 80.0 + cell * m + 12.0;
        out.push_str(&colour_bar(
            lx,
            40.0,
            (cell * n).max(90.0),
            lo,
            hi,
            scale,
            unit,
        ));
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_matrix_is_still_a_drawing() {
        assert!(heatmap("t", "ns", &[], &[], &[]).ends_with("</svg>"));
    }
}
