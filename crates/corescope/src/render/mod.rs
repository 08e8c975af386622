//! Renderers: read the model, never measure. Imported only by the commands.

pub mod csv;
pub mod html;
pub mod svg;
pub mod terminal;
pub mod topo;
pub mod words;

pub use crate::units::{fmt_num, fmt_value, fmt_x, unit_scale};

/// The rows and unit of one table of several series sharing an x axis: every x
/// any of them has (sorted, each once), and the scale and label of the y values
/// (chosen from the largest y, named by the first series' `y_name`).
pub fn table_axes(series: &[&crate::model::Series]) -> (Vec<f64>, f64, String) {
    let magnitude = series
        .iter()
        .flat_map(|s| s.y.iter().copied())
        .fold(0.0, f64::max);
    let y_name = series.first().map(|s| s.y_name.as_str()).unwrap_or("");
    let (scale, label) = unit_scale(y_name, magnitude);
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.x.iter().copied()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    (xs, scale, label)
}
