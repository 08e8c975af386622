//! Inline SVG charts for the HTML report: line charts (series), scatter with the
//! y = x line (paired distributions), histograms and heat maps (matrices); Gantt
//! lanes (timelines) are in `gantt.rs`. Pure string building; every label is escaped.

pub use super::esc;
use super::svg_legend::{self, marker};
pub use super::svg_legend::{colour_bar, series_style, ColourScale, DASHES, PALETTE};
use super::{fmt_num, fmt_value};
use std::fmt::Write;

/// Width and height of a chart's drawing (its viewBox); on the page a chart
/// takes the width of its column (`width='100%'`) and keeps this aspect.
pub const W: f64 = 860.0;
/// See [`W`].
pub const H: f64 = 380.0;
const ML: f64 = 70.0;
const MR: f64 = 190.0;
/// Top margin: room for the chart's title.
const MT: f64 = 32.0;
pub(crate) const MB: f64 = 45.0;
/// The opening tag of a chart: a viewBox of `w × h` that scales with the page
/// (`width='100%'`), never wider than `max_px` when given (small heat maps).
pub fn open_svg(w: f64, h: f64, title: &str, max_px: Option<f64>) -> String {
    let style = max_px
        .map(|m| format!(" style='max-width:{m:.0}px'"))
        .unwrap_or_default();
    format!(
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {w:.0} {h:.0}' width='100%'{style} preserveAspectRatio='xMinYMin meet' role='img' aria-label='{t}'><title>{t}</title>",
        t = esc(title)
    )
}

/// An axis: linear or log10, from `lo` to `hi`.
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    /// Tick step of a linear axis.
    step: f64,
    /// Log ticks at powers of two (threads, bytes) instead of 1-2-5 × 10^k.
    binary: bool,
}

impl Axis {
    /// An axis over `values`; log when all are positive and span more than 20×
    /// (or when `force_log`).
    pub fn over(values: impl Iterator<Item = f64>, force_log: bool, from_zero: bool) -> Self {
        let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return Axis {
                lo: 0.0,
                hi: 1.0,
                log: false,
                step: 0.25,
                binary: false,
            };
        }
        let log = lo > 0.0 && (force_log || hi / lo > 20.0) && hi > lo;
        if log {
            let (lo, hi) = log_ends(lo, hi, false);
            Axis {
                lo,
                hi,
                log,
                step: 0.0,
                binary: false,
            }
        } else {
            let lo = if from_zero { lo.min(0.0) } else { lo };
            let hi = if hi == lo {
                lo + 1.0_f64.max(lo.abs() * 1e-9)
            } else {
                hi
            };
            // Round the ends out to a nice step (1, 2, 2.5 or 5 × 10^k); the
            // span in halves, so that ±1e308 does not overflow to infinity.
            let step = nice_step((hi / 2.0 - lo / 2.0) / 2.0);
            Axis {
                lo: (lo / step).floor() * step,
                hi: (hi / step).ceil() * step,
                log,
                step,
                binary: false,
            }
        }
    }
    /// The axis with log ticks at powers of two (threads, bytes), its ends
    /// padded out to the nearest such tick.
    fn binary(mut self, data_lo: f64, data_hi: f64) -> Self {
        if self.log {
            (self.lo, self.hi) = log_ends(data_lo, data_hi, true);
            self.binary = true;
        }
        self
    }
    /// Position of `v` on the axis, 0 at `lo` and 1 at `hi`; always finite
    /// (computed in halves so that spans near `f64::MAX` do not overflow).
    pub(crate) fn t(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0)
        };
        if t.is_finite() {
            t.clamp(-0.05, 1.05)
        } else {
            0.0
        }
    }
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let mut t: Vec<f64> = if self.binary {
                let (a, b) = (self.lo.log2().floor() as i32, self.hi.log2().ceil() as i32);
                (a..=b).map(|e| 2f64.powi(e)).collect()
            } else {
                let (a, b) = (
                    self.lo.log10().floor() as i32,
                    self.hi.log10().ceil() as i32,
                );
                (a..=b)
                    .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
                    .collect()
            };
            t.retain(|&x| x >= self.lo * 0.999 && x <= self.hi * 1.001);
            // At most about eight labels.
            let step = t.len().div_ceil(8).max(1);
            t = t.into_iter().step_by(step).collect();
            if t.len() < 2 {
                t = vec![self.lo, self.hi];
            }
            t
        } else {
            let n = ((self.hi / 2.0 - self.lo / 2.0) / self.step * 2.0)
                .round()
                .clamp(1.0, 10.0) as usize;
            (0..=n).map(|i| self.lo + self.step * i as f64).collect()
        }
    }
    /// The largest magnitude on the axis (for choosing a unit prefix).
    fn magnitude(&self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }
}

/// The ends of a log axis over `lo..hi` (both > 0) padded out to the next
/// tick (a power of two when `binary`, else 1, 2 or 5 × 10^k), so that no point
/// sits on the frame without a tick.
fn log_ends(lo: f64, hi: f64, binary: bool) -> (f64, f64) {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return (lo, hi);
    }
    if binary {
        let (a, b) = (lo.log2().floor(), hi.log2().ceil());
        let (a, b) = (2f64.powf(a), 2f64.powf(b));
        return if b > a { (a, b) } else { (a, a * 2.0) };
    }
    let grid = |e: f64| [1.0, 2.0, 5.0].map(|m| m * 10f64.powf(e));
    let (ea, eb) = (lo.log10().floor(), hi.log10().floor());
    let a = grid(ea)
        .into_iter()
        .rev()
        .find(|&t| t <= lo * (1.0 + 1e-9))
        .unwrap_or(10f64.powf(ea));
    let b = grid(eb)
        .into_iter()
        .chain([10f64.powf(eb + 1.0)])
        .find(|&t| t >= hi * (1.0 - 1e-9))
        .unwrap_or(10f64.powf(eb + 1.0));
    if b > a {
        (a, b)
    } else {
        (a, a * 2.0)
    }
}

/// The smallest of 1, 2, 2.5, 5 × 10^k that is at least `raw`.
pub(crate) fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw * 0.999_999)
        .unwrap_or(10.0 * p)
}

/// Tick labels of an axis: numbers in one scaled unit, and the axis title
/// with that unit (`threads`, `bytes` keep their own per-tick formatting).
pub(crate) fn tick_labels(name: &str, axis: &Axis) -> (Vec<(f64, String)>, String) {
    let ticks = axis.ticks();
    match name {
        "bytes" => (
            ticks
                .iter()
                .map(|&t| {
                    let (f, p) = super::unit_scale("bytes", t);
                    (t, format!("{} {p}", super::fmt_x("", t / f)))
                })
                .collect(),
            "bytes".into(),
        ),
        _ => {
            let (mut scale, mut unit) = super::unit_scale(name, axis.magnitude());
            // A rate the unit table does not know (`units_per_s`): SI prefixes
            // all the same (200 k, not 200000).
            if let (Some(base), 1.0) = (name.strip_suffix("_per_s"), scale) {
                let (f, p) = super::unit_scale("per_s", axis.magnitude());
                let prefix = p.trim_end_matches("/s");
                scale = f;
                unit = format!("{prefix} {}/s", base.replace('_', " "))
                    .trim()
                    .to_string();
            }
            let pure_unit = matches!(
                name,
                "ns" | "s"
                    | "seconds"
                    | "cycles"
                    | "per_s"
                    | "ops_per_s"
                    | "bytes_per_s"
                    | "events_per_s"
                    | "flops_per_s"
                    | "increments_per_s"
            );
            let title = if pure_unit || name.ends_with("_per_s") || unit == name.replace('_', " ") {
                unit
            } else {
                format!("{} ({unit})", name.replace('_', " "))
            };
            (
                ticks
                    .iter()
                    .map(|&t| (t, super::fmt_x("", t / scale)))
                    .collect(),
                title,
            )
        }
    }
}

fn label(unit: &str, v: f64) -> String {
    match unit {
        "threads" | "levels" | "size_log2" | "n" | "padding_bytes" | "read_interval_ns"
        | "x_alone" => fmt_num(v),
        _ => fmt_value(unit, v),
    }
}

/// Most characters of a chart's drawn title (the tooltip has it whole).
const TITLE_CHARS: usize = 110;

/// Frame, axes, ticks, axis titles and the chart's title, drawn at the top.
fn frame(out: &mut String, x: &Axis, y: &Axis, x_name: &str, y_name: &str, title: &str) {
    out.push_str(&open_svg(W, H, title, None));
    let _ = write!(
        out,
        "<text class='chart-title' x='{ML}' y='{:.1}' font-size='12' font-weight='600'>{}</text>",
        MT - 12.0,
        esc(&super::clean(title, TITLE_CHARS, false))
    );
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    let _ = write!(
        out,
        "<rect x='{x0}' y='{y1}' width='{}' height='{}' fill='none' stroke='#999'/>",
        x1 - x0,
        y0 - y1
    );
    let (xt, x_title) = tick_labels(x_name, x);
    let (yt, y_title) = tick_labels(y_name, y);
    for (t, l) in xt {
        let px = x0 + x.t(t) * (x1 - x0);
        let _ = write!(out, "<line x1='{px:.1}' y1='{y0}' x2='{px:.1}' y2='{}' stroke='#999'/><text x='{px:.1}' y='{}' font-size='10' text-anchor='middle'>{}</text>", y0 + 4.0, y0 + 15.0, esc(&l));
    }
    for (t, l) in yt {
        let py = y0 - y.t(t) * (y0 - y1);
        let _ = write!(out, "<line x1='{}' y1='{py:.1}' x2='{x1}' y2='{py:.1}' stroke='#eee'/><text x='{}' y='{:.1}' font-size='10' text-anchor='end'>{}</text>", x0 - 4.0, x0 - 6.0, py + 3.0, esc(&l));
    }
    let _ = write!(
        out,
        "<text x='{:.1}' y='{}' font-size='11' text-anchor='middle'>{}{}</text><text x='12' y='{:.1}' font-size='11' text-anchor='middle' transform='rotate(-90 12 {:.1})'>{}{}</text>",
        (x0 + x1) / 2.0,
        H - 8.0,
        esc(&x_title),
        if x.log { " (log)" } else { "" },
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        esc(&y_title),
        if y.log { " (log)" } else { "" }
    );
}

/// One curve of a line chart: a label, its points and, where the run file has
/// them, the 95 % interval of each y.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Curve {
    /// Legend label.
    pub name: String,
    /// x values.
    pub x: Vec<f64>,
    /// y values (central values), same length as `x`.
    pub y: Vec<f64>,
    /// `(lo, hi)` of each y where it has an interval; empty when none does.
    pub ci: Vec<Option<(f64, f64)>>,
}

impl Curve {
    /// A curve without intervals.
    pub fn new(name: impl Into<String>, x: Vec<f64>, y: Vec<f64>) -> Self {
        Self {
            name: name.into(),
            x,
            y,
            ci: Vec::new(),
        }
    }

    /// A series as a curve, with the interval of every point that has one (more
    /// than one sample and distinct ends); version 1 series have none.
    pub fn of_series(name: impl Into<String>, s: &crate::model::Series) -> Self {
        let ci: Vec<Option<(f64, f64)>> = (0..s.y.len())
            .map(|i| {
                s.estimate(i)
                    .filter(|e| e.has_interval())
                    .map(|e| (e.lo, e.hi))
            })
            .collect();
        Self {
            name: name.into(),
            x: s.x.clone(),
            y: s.y.clone(),
            ci: if ci.iter().any(Option::is_some) {
                ci
            } else {
                Vec::new()
            },
        }
    }

    /// The curve with every y (and interval end) multiplied by `f` (per-CPU views).
    pub fn scaled(mut self, f: f64) -> Self {
        self.y.iter_mut().for_each(|y| *y *= f);
        for (lo, hi) in self.ci.iter_mut().flatten() {
            *lo *= f;
            *hi *= f;
        }
        self
    }

    /// Whether any point has an interval.
    pub fn has_intervals(&self) -> bool {
        self.ci.iter().any(Option::is_some)
    }
}

/// A line chart of several curves sharing axes: `(label, xs, ys)`, no intervals.
pub fn lines(
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[(String, Vec<f64>, Vec<f64>)],
) -> String {
    let curves: Vec<Curve> = curves
        .iter()
        .map(|(n, x, y)| Curve::new(n.clone(), x.clone(), y.clone()))
        .collect();
    chart(title, x_name, y_name, &curves)
}

/// One drawn point of a curve: pixel position, the values, and the interval's
/// pixel ends (`NaN` where the point has none).
#[derive(Debug, Clone, Copy)]
struct Dot {
    px: f64,
    py: f64,
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
    py_lo: f64,
    py_hi: f64,
}

impl Dot {
    fn has_ci(&self) -> bool {
        self.py_lo.is_finite() && self.py_hi.is_finite()
    }
}

/// The axes of a line chart: x on a log-2 axis for thread counts, sizes and
/// powers of two; y holding every point and interval end.
fn chart_axes(x_name: &str, curves: &[Curve]) -> (Axis, Axis) {
    // Thread counts and sizes on a log-2 axis; a 0 (a 0-byte message) is drawn
    // at the left edge (its tooltip keeps the true value).
    // Sizes that are all powers of two (paddings, batches) get the same axis.
    let pow2 = curves
        .iter()
        .flat_map(|c| c.x.iter())
        .all(|&v| v > 0.0 && v.log2().fract() == 0.0);
    let log_x = matches!(x_name, "threads" | "bytes" | "n" | "batch")
        || (pow2 && curves.iter().map(|c| c.x.len()).sum::<usize>() > 2);
    let xs_all = || curves.iter().flat_map(|c| c.x.iter().copied());
    let positive = || xs_all().filter(|&v| v > 0.0 && v.is_finite());
    let x = if log_x && positive().count() > 0 && xs_all().all(|v| v >= 0.0) {
        let lo = positive().fold(f64::INFINITY, f64::min);
        let hi = positive().fold(f64::NEG_INFINITY, f64::max);
        let x = Axis::over(positive(), hi > lo, false);
        x.binary(lo, hi)
    } else {
        Axis::over(xs_all(), false, false)
    };
    // The y axis holds the intervals too, so no bar is cut off.
    let ends = curves
        .iter()
        .flat_map(|c| c.ci.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]));
    let y = Axis::over(
        curves.iter().flat_map(|c| c.y.iter().copied()).chain(ends),
        false,
        true,
    );
    (x, y)
}

/// A curve's points in drawing coordinates, with their intervals.
fn curve_dots(c: &Curve, (x, y): (&Axis, &Axis)) -> Vec<Dot> {
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    let py = |v: f64| y0 - y.t(v) * (y0 - y1);
    let pts: Vec<Dot> =
        c.x.iter()
            .zip(&c.y)
            .enumerate()
            .filter(|(_, (a, b))| a.is_finite() && b.is_finite())
            .map(|(k, (&a, &b))| {
                let (lo, hi) =
                    c.ci.get(k)
                        .copied()
                        .flatten()
                        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
                        .unwrap_or((f64::NAN, f64::NAN));
                let (py_lo, py_hi) = if lo.is_finite() {
                    (py(lo), py(hi))
                } else {
                    (f64::NAN, f64::NAN)
                };
                Dot {
                    px: x0 + x.t(a) * (x1 - x0),
                    py: py(b),
                    x: a,
                    y: b,
                    lo,
                    hi,
                    py_lo,
                    py_hi,
                }
            })
            .collect();
    pts
}

/// What a line chart may show beyond its curves.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChartOpts {
    /// The CPUs the run could use: on a threads axis, a dashed line at that many
    /// threads (`N CPUs`) when it lies within the axis.
    pub cpus: Option<usize>,
    /// Cache capacities by level (L1 first, 0: none): on a bytes axis (working
    /// sets), a dashed line at each (`L2 2 MiB`) that lies within the axis.
    pub cache_bytes: [u64; MAX_CACHE_LEVELS],
}

/// Cache levels a chart marks (L1 to L4).
pub const MAX_CACHE_LEVELS: usize = 4;

/// A line chart of several curves sharing axes. Where a curve has intervals,
/// each point gets an error bar (`class='ci'`) and the curve a translucent band
/// (`class='band'`); the bars and band are thinned with the points.
pub fn chart(title: &str, x_name: &str, y_name: &str, curves: &[Curve]) -> String {
    chart_with(title, x_name, y_name, curves, ChartOpts::default())
}

/// Whether two curves have the same points (and intervals): drawn once.
fn same_points(a: &Curve, b: &Curve) -> bool {
    !a.x.is_empty() && a.x == b.x && a.y == b.y && a.ci == b.ci
}

/// [`chart`] with the extras of `opts`. Curves with identical points are drawn
/// once, under one legend entry naming them all (`linear = compact`); legend
/// entries are drawn by [`svg_legend`].
pub fn chart_with(
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[Curve],
    opts: ChartOpts,
) -> String {
    let (x, y) = chart_axes(x_name, curves);
    // Bounded drawing: at most MAX_CURVES curves and MAX_LINE_POINTS points in
    // all; the tables and the CSV keep every value.
    let shown = svg_legend::alike_groups(curves, same_points, MAX_CURVES);
    let names: Vec<Vec<&str>> = shown
        .iter()
        .map(|g| g.iter().map(|&k| curves[k].name.as_str()).collect())
        .collect();
    let keys = svg_legend::keys(title, &names);
    let mut out = String::new();
    frame(&mut out, &x, &y, x_name, y_name, &keys.title);
    if x_name == "threads" {
        cpu_marker(&mut out, &x, opts.cpus);
    }
    if x_name == "bytes" {
        cache_markers(&mut out, &x, &opts.cache_bytes);
    }
    let (x0, x1) = (ML, W - MR);
    let per_curve = (MAX_LINE_POINTS / shown.len().max(1)).max(2);
    let mut thinned = false;
    let mut any_ci = false;
    for (i, (g, key)) in shown.iter().zip(&keys.entries).enumerate() {
        let c = &curves[g[0]];
        let mut pts = curve_dots(c, (&x, &y));
        // Lines join points in order of x, never back and forth.
        pts.sort_by(|a, b| a.px.total_cmp(&b.px));
        if pts.len() > per_curve {
            pts = thin(&pts, per_curve);
            thinned = true;
        }
        any_ci |= pts.iter().any(Dot::has_ci);
        draw_curve(&mut out, &pts, i, (&key.name, x_name, y_name));
    }
    // Legend entries on the right, as many lines each as fit.
    let below = svg_legend::draw(&mut out, &keys.entries, x1, (MT, H - MT - 30.0));
    if any_ci {
        let _ = write!(
            out,
            "<text x='{}' y='{:.1}' font-size='9' fill='#555'>bars, band: 95 % CI</text>",
            x1 + 8.0,
            below + 12.0
        );
    }
    let mut notes = Vec::new();
    if thinned {
        notes.push("points thinned for drawing; the table has every value".to_string());
    }
    let drawn: usize = shown.iter().map(Vec::len).sum();
    if curves.len() > drawn {
        notes.push(format!("first {drawn} of {} curves drawn", curves.len()));
    }
    if !notes.is_empty() {
        let _ = write!(
            out,
            "<text x='{x0}' y='{:.1}' font-size='9' fill='#555'>{}</text>",
            H - 22.0,
            esc(&notes.join("; "))
        );
    }
    out.push_str("</svg>");
    out
}

/// One curve of a line chart, the `i`-th drawn: its band and bars where it has
/// intervals, its line, its markers with their tooltips (`name: x → y`).
fn draw_curve(out: &mut String, pts: &[Dot], i: usize, (name, x_name, y_name): (&str, &str, &str)) {
    let (color, dash) = series_style(i);
    let _ = write!(out, "<g class='curve' data-curve='{i}'>");
    if pts.iter().any(Dot::has_ci) {
        band(out, pts, color);
    }
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", p.px, p.py))
        .collect();
    let _ = write!(
        out,
        "<polyline fill='none' stroke='{color}' stroke-width='1.8' stroke-dasharray='{dash}' points='{}'/>",
        path.join(" ")
    );
    for p in pts {
        dot(out, p, (color, i), name, x_name, y_name);
    }
    out.push_str("</g>");
}

/// The CPU count on a threads axis: a thin dashed line at `cpus` threads,
/// labelled `N CPUs`, when it lies within the axis.
fn cpu_marker(out: &mut String, x: &Axis, cpus: Option<usize>) {
    let Some(n) = cpus.filter(|&n| n > 0) else {
        return;
    };
    let label = format!("{n} CPU{}", if n == 1 { "" } else { "s" });
    x_marker(out, x, n as f64, ("cpus", "3 3"), &label, 0);
}

/// A thin dashed vertical line at `v` on the x axis, with its label near the top
/// (`row` lines down, so that close markers stay readable), when `v` lies within
/// the axis; `style` is the group's class and the line's dash pattern.
fn x_marker(out: &mut String, x: &Axis, v: f64, style: (&str, &str), label: &str, row: usize) {
    let tolerance = (x.hi - x.lo).abs() * 1e-9;
    if v < x.lo - tolerance || v > x.hi + tolerance {
        return;
    }
    let (class, dash) = style;
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    let px = x0 + x.t(v) * (x1 - x0);
    // The label reads inward from a line on the right edge.
    let (lx, anchor) = if px > x1 - 60.0 {
        (px - 3.0, "end")
    } else {
        (px + 3.0, "start")
    };
    let _ = write!(
        out,
        "<g class='{class}'><line x1='{px:.1}' y1='{y0}' x2='{px:.1}' y2='{y1}' stroke='#777' stroke-width='1' stroke-dasharray='{dash}'/><text x='{lx:.1}' y='{:.1}' font-size='9' fill='#555' text-anchor='{anchor}'>{}</text></g>",
        y1 + 10.0 + 10.0 * row as f64,
        esc(label)
    );
}

/// The cache capacities on a bytes axis: a thin dashed line at each level's size,
/// labelled `L1 48 KiB`, when it lies within the axis; labels step down by level
/// so that close sizes stay readable.
fn cache_markers(out: &mut String, x: &Axis, sizes: &[u64; MAX_CACHE_LEVELS]) {
    for (i, &bytes) in sizes.iter().enumerate().filter(|(_, &b)| b > 0) {
        let label = format!("L{} {}", i + 1, binary_size(bytes));
        x_marker(out, x, bytes as f64, ("cache", "2 4"), &label, i);
    }
}

/// A capacity in binary units, as caches are stated: `48 KiB`, `2 MiB`, `1.5 MiB`.
fn binary_size(bytes: u64) -> String {
    let mut v = bytes as f64;
    for unit in ["B", "KiB", "MiB", "GiB"] {
        if v < 1024.0 || unit == "GiB" {
            return if v.fract() == 0.0 {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
        v /= 1024.0;
    }
    format!("{bytes} B")
}

/// The translucent band of a curve's intervals: along the upper ends left to
/// right, back along the lower ends (a point without an interval pinches the
/// band to the line).
fn band(out: &mut String, pts: &[Dot], color: &str) {
    let upper = pts
        .iter()
        .map(|p| (p.px, if p.has_ci() { p.py_hi } else { p.py }));
    let lower = pts
        .iter()
        .rev()
        .map(|p| (p.px, if p.has_ci() { p.py_lo } else { p.py }));
    let poly: Vec<String> = upper
        .chain(lower)
        .map(|(a, b)| format!("{a:.1},{b:.1}"))
        .collect();
    let _ = write!(
        out,
        "<polygon class='band' fill='{color}' fill-opacity='0.15' stroke='none' points='{}'/>",
        poly.join(" ")
    );
}

/// A point's marker with its tooltip, and its error bar when it has an interval.
fn dot(out: &mut String, p: &Dot, style: (&str, usize), name: &str, x_name: &str, y_name: &str) {
    let color = style.0;
    let mut tip = format!("{name}: {} → {}", label(x_name, p.x), label(y_name, p.y));
    if p.has_ci() {
        let _ = write!(
            out,
            "<path class='ci' d='M{px:.1},{lo:.1}V{hi:.1}M{a:.1},{lo:.1}H{b:.1}M{a:.1},{hi:.1}H{b:.1}' stroke='{color}' stroke-width='1' fill='none'/>",
            px = p.px,
            lo = p.py_lo,
            hi = p.py_hi,
            a = p.px - 3.0,
            b = p.px + 3.0
        );
        let _ = write!(
            tip,
            " (95 % CI {}–{})",
            label(y_name, p.lo),
            label(y_name, p.hi)
        );
    }
    out.push_str(&marker(p.px, p.py, style, &tip));
}

/// Most curves one line chart draws.
pub const MAX_CURVES: usize = 32;
/// Most points one line chart draws, over all its curves.
pub const MAX_LINE_POINTS: usize = 4000;

/// `n` points of a curve sorted by x, evenly spaced by index, keeping the first
/// and the last.
fn thin<T: Copy>(pts: &[T], n: usize) -> Vec<T> {
    let n = n.max(2);
    if pts.len() <= n {
        return pts.to_vec();
    }
    let last = pts.len() - 1;
    (0..n).map(|k| pts[k * last / (n - 1)]).collect()
}

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

/// Most hardware threads the machine drawing shows.
pub const MAX_TOPOLOGY_PUS: usize = 16_384;

/// A drawing of the machine: one box per package, one per core inside it, one
/// cell per hardware thread (PU) labelled with its OS index; CPUs this process
/// may not use are hatched grey. Scales to thousands of PUs by shrinking cells.
pub fn topology(t: &crate::topology::Topology) -> String {
    if t.pus.len() > MAX_TOPOLOGY_PUS {
        return format!(
            "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 640 30' width='100%' role='img'><text x='4' y='18' font-size='11'>{}</text></svg>",
            esc(&format!(
                "{} CPUs: too many to draw (more than {MAX_TOPOLOGY_PUS}); see the CPU table",
                t.pus.len()
            ))
        );
    }
    use std::collections::BTreeMap;
    let mut packages: BTreeMap<u32, BTreeMap<u32, Vec<&crate::topology::Pu>>> = BTreeMap::new();
    for p in &t.pus {
        packages
            .entry(p.package)
            .or_default()
            .entry(p.core)
            .or_default()
            .push(p);
    }
    let width = 960.0;
    let slots = packages
        .values()
        .flat_map(|c| c.values().map(Vec::len))
        .max()
        .unwrap_or(1) as f64;
    let total_cores = packages.values().map(BTreeMap::len).sum::<usize>().max(1) as f64;
    // Cell size: PU labels while they fit, else small squares.
    let cell: f64 = if total_cores * slots <= 256.0 {
        22.0
    } else if total_cores * slots <= 1024.0 {
        10.0
    } else {
        6.0
    };
    let core_w = slots * cell + 4.0;
    let per_row = (((width - 20.0) / (core_w + 3.0)).floor() as usize).max(1);
    let mut out = String::new();
    let mut y = 4.0;
    let mut body = String::new();
    for (pkg, cores) in &packages {
        let rows = cores.len().div_ceil(per_row) as f64;
        let ph = 18.0 + rows * (cell + 7.0) + 4.0;
        let _ = write!(body, "<rect x='2' y='{y:.1}' width='{:.1}' height='{ph:.1}' fill='#f7f7f7' stroke='#888'/><text x='8' y='{:.1}' font-size='11'>package {pkg} · {} cores</text>", width - 4.0, y + 13.0, cores.len());
        for (k, (core, pus)) in cores.iter().enumerate() {
            let (cx, cy) = (
                10.0 + (k % per_row) as f64 * (core_w + 3.0),
                y + 18.0 + (k / per_row) as f64 * (cell + 7.0),
            );
            let _ = write!(body, "<rect x='{cx:.1}' y='{cy:.1}' width='{core_w:.1}' height='{:.1}' fill='#fff' stroke='#aaa'><title>core {core}</title></rect>", cell + 4.0);
            for (s, pu) in pus.iter().enumerate() {
                let (ux, uy) = (cx + 2.0 + s as f64 * cell, cy + 2.0);
                let fill = if !pu.allowed {
                    "#ccc"
                } else if pu.slot == 0 {
                    "#0072B2"
                } else {
                    "#56B4E9"
                };
                let kind = pu
                    .kind
                    .as_deref()
                    .map(|k| format!(", kind {k}"))
                    .unwrap_or_default();
                let numa = pu
                    .numa_node
                    .map(|n| format!(", NUMA {n}"))
                    .unwrap_or_default();
                let _ = write!(
                    body,
                    "<rect x='{ux:.1}' y='{uy:.1}' width='{:.1}' height='{:.1}' fill='{fill}'><title>CPU {} (core {core}, thread {}{numa}{kind}){}</title></rect>",
                    cell - 1.0,
                    cell,
                    pu.os_index,
                    pu.slot,
                    esc(if pu.allowed { "" } else { " not allowed" })
                );
                if cell >= 20.0 {
                    let _ = write!(body, "<text x='{:.1}' y='{:.1}' font-size='9' fill='#fff' text-anchor='middle'>{}</text>", ux + cell / 2.0, uy + cell * 0.68, pu.os_index);
                }
            }
        }
        y += ph + 6.0;
    }
    let h = y + 18.0;
    let _ = write!(
        out,
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {h:.0}' width='100%' role='img' aria-label='{t}'><title>{t}</title>{body}<text x='4' y='{:.1}' font-size='10'>dark: first hardware thread of a core · light: SMT siblings · grey: not allowed to this process</text></svg>",
        y + 12.0,
        t = esc(&format!("machine drawing: {}", t.summary()))
    );
    out
}

/// One measured point of an [`xy_chart`]: both coordinates, each with its 95 %
/// interval where the data has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XyPoint {
    /// x (central value).
    pub x: f64,
    /// y (central value).
    pub y: f64,
    /// `(lo, hi)` of x, when measured with an interval.
    pub x_ci: Option<(f64, f64)>,
    /// `(lo, hi)` of y, when measured with an interval.
    pub y_ci: Option<(f64, f64)>,
}

/// A curve of an [`xy_chart`]: its points joined in the order given (a ladder's
/// order: the curve may bend back where x stops growing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XyCurve {
    /// Legend label.
    pub name: String,
    /// The points, in order.
    pub points: Vec<XyPoint>,
}

/// A coordinate of a point with its interval (`XyPoint`'s x or y).
type Coordinate = (f64, Option<(f64, f64)>);

/// Every finite value of an axis of `curves`, interval ends included.
fn xy_values(curves: &[XyCurve], pick: fn(&XyPoint) -> Coordinate) -> Vec<f64> {
    curves
        .iter()
        .flat_map(|c| c.points.iter())
        .flat_map(|p| {
            let (v, ci) = pick(p);
            [Some(v), ci.map(|c| c.0), ci.map(|c| c.1)]
        })
        .flatten()
        .filter(|v| v.is_finite())
        .collect()
}

/// Pixel position of `(vx, vy)` on the axes of a chart.
fn xy_pixel(vx: f64, vy: f64, (x, y): (&Axis, &Axis)) -> (f64, f64) {
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    (x0 + x.t(vx) * (x1 - x0), y0 - y.t(vy) * (y0 - y1))
}

/// A point of an [`xy_chart`]: its error bars (where it has intervals) and its
/// marker with the tooltip; whether it drew a bar.
fn xy_dot(
    out: &mut String,
    p: &XyPoint,
    axes: (&Axis, &Axis),
    style: (&str, usize),
    (name, x_name, y_name): (&str, &str, &str),
) -> bool {
    let color = style.0;
    let ok =
        |ci: Option<(f64, f64)>| ci.filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi);
    let (cx, cy) = xy_pixel(p.x, p.y, axes);
    let mut tip = format!("{name}: {} → {}", label(x_name, p.x), label(y_name, p.y));
    let mut drawn = false;
    if let Some((lo, hi)) = ok(p.y_ci) {
        let (a, b) = (xy_pixel(p.x, lo, axes).1, xy_pixel(p.x, hi, axes).1);
        let _ = write!(
            out,
            "<path class='ci' d='M{cx:.1},{a:.1}V{b:.1}M{l:.1},{a:.1}H{r:.1}M{l:.1},{b:.1}H{r:.1}' stroke='{color}' stroke-width='1' fill='none'/>",
            l = cx - 3.0,
            r = cx + 3.0
        );
        let _ = write!(tip, "; 95 % CI {}–{}", label(y_name, lo), label(y_name, hi));
        drawn = true;
    }
    if let Some((lo, hi)) = ok(p.x_ci) {
        let (a, b) = (xy_pixel(lo, p.y, axes).0, xy_pixel(hi, p.y, axes).0);
        let _ = write!(
            out,
            "<path class='xci' d='M{a:.1},{cy:.1}H{b:.1}M{a:.1},{t:.1}V{d:.1}M{b:.1},{t:.1}V{d:.1}' stroke='{color}' stroke-width='1' fill='none'/>",
            t = cy - 3.0,
            d = cy + 3.0
        );
        let _ = write!(tip, "; 95 % CI {}–{}", label(x_name, lo), label(x_name, hi));
        drawn = true;
    }
    out.push_str(&marker(cx, cy, style, &tip));
    drawn
}

/// A chart of paired measurements, both axes linear from 0: y against x with an
/// error bar on each axis where the point has an interval (`class='ci'` vertical,
/// `class='xci'` horizontal), as Intel MLC and the Mess benchmark draw latency
/// against bandwidth. Legend entries toggle their curve as in [`chart`].
pub fn xy_chart(title: &str, x_name: &str, y_name: &str, curves: &[XyCurve]) -> String {
    let x = Axis::over(
        xy_values(curves, |p| (p.x, p.x_ci)).into_iter(),
        false,
        true,
    );
    let y = Axis::over(
        xy_values(curves, |p| (p.y, p.y_ci)).into_iter(),
        false,
        true,
    );
    let shown = curves.len().min(MAX_CURVES);
    let names: Vec<Vec<&str>> = curves[..shown]
        .iter()
        .map(|c| vec![c.name.as_str()])
        .collect();
    let keys = svg_legend::keys(title, &names);
    let mut out = String::new();
    frame(&mut out, &x, &y, x_name, y_name, &keys.title);
    let (x0, x1) = (ML, W - MR);
    let mut any_ci = false;
    for (i, c) in curves.iter().take(shown).enumerate() {
        let (color, dash) = series_style(i);
        let pts: Vec<&XyPoint> = c
            .points
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
            .collect();
        let path: Vec<String> = pts
            .iter()
            .map(|p| {
                let (a, b) = xy_pixel(p.x, p.y, (&x, &y));
                format!("{a:.1},{b:.1}")
            })
            .collect();
        let _ = write!(
            out,
            "<g class='curve' data-curve='{i}'><polyline fill='none' stroke='{color}' stroke-width='1.8' stroke-dasharray='{dash}' points='{}'/>",
            path.join(" ")
        );
        for p in pts {
            any_ci |= xy_dot(&mut out, p, (&x, &y), (color, i), (&c.name, x_name, y_name));
        }
        out.push_str("</g>");
    }
    let below = svg_legend::draw(&mut out, &keys.entries, x1, (MT, H - MT - 30.0));
    if any_ci {
        let _ = write!(
            out,
            "<text x='{}' y='{:.1}' font-size='9' fill='#555'>bars: 95 % CI, both axes</text>",
            x1 + 8.0,
            below + 12.0
        );
    }
    if curves.len() > shown {
        let _ = write!(
            out,
            "<text x='{x0}' y='{:.1}' font-size='9' fill='#555'>first {shown} of {} curves drawn</text>",
            H - 22.0,
            curves.len()
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;"
        );
        let svg = lines(
            "<b>",
            "threads",
            "ops_per_s",
            &[("<i>".into(), vec![1.0, 2.0], vec![1.0, 2.0])],
        );
        assert!(!svg.contains("<b>") && !svg.contains("<i>"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::over([0.0, 3.843e9].into_iter(), false, true);
        let t = a.ticks();
        for v in [8e-6, 110e-6] {
            let b = Axis::over([v, 110e-6].into_iter(), false, false);
            assert!(
                b.ticks()
                    .iter()
                    .all(|&x| x >= b.lo && x <= b.hi * 1.000_001),
                "{b:?}"
            );
        }
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.iter().all(|v| (v / 1e9 * 2.0).fract() == 0.0), "{t:?}");
        assert!(*t.last().unwrap() >= 3.843e9);
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(2.2), 2.5);
        let mut l = Axis::over([1.0, 64.0].into_iter(), true, false);
        l.binary = true;
        assert_eq!(l.ticks(), vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        let d = Axis::over([500.0, 20_000.0].into_iter(), true, false);
        assert_eq!(
            d.ticks(),
            vec![500.0, 1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0]
        );
        // A 0 among sizes keeps the log axis.
        let svg = lines(
            "t",
            "bytes",
            "ns",
            &[("a".into(), vec![0.0, 1.0, 1024.0], vec![1.0, 2.0, 3.0])],
        );
        assert!(svg.contains("bytes (log)"));
    }

    #[test]
    fn intervals_are_drawn_and_thinned_with_the_points() {
        let n = 20_000;
        let x: Vec<f64> = (1..=n).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
        let mut ci: Vec<Option<(f64, f64)>> = y.iter().map(|v| Some((v * 0.9, v * 1.1))).collect();
        ci[0] = None;
        ci[1] = Some((f64::NAN, 1.0));
        let c = Curve {
            name: "a".into(),
            x: x.clone(),
            y: y.clone(),
            ci,
        };
        let svg = chart("t", "threads", "ns", &[c]);
        let bars = svg.matches("class='ci'").count();
        // The same thinning for the bars as for the points; none where a point
        // has no (finite) interval.
        // (One more circle: the legend's marker.)
        assert_eq!(
            bars + 2,
            svg.matches("<circle").count(),
            "first point has none"
        );
        assert!(bars <= MAX_LINE_POINTS && bars > 100);
        assert_eq!(svg.matches("class='band'").count(), 1);
        assert!(svg.contains("bars, band: 95 % CI"));
        // A curve without intervals looks as before.
        let plain = chart(
            "t",
            "threads",
            "ns",
            &[Curve::new("a", x.clone(), y.clone())],
        );
        let old = lines("t", "threads", "ns", &[("a".into(), x, y)]);
        assert_eq!(plain, old);
        assert!(!plain.contains("class='ci'") && !plain.contains("class='band'"));
        assert!(!plain.contains("95 % CI"));
    }

    #[test]
    fn identical_curves_are_drawn_once_under_one_entry() {
        let (x, y) = (vec![1.0, 2.0], vec![5.0, 9.0]);
        let curves = [
            Curve::new("int/linear", x.clone(), y.clone()),
            Curve::new("int/compact", x.clone(), y.clone()),
            Curve::new("int/unbound", x.clone(), vec![5.0, 8.0]),
            Curve::new("int/scatter", x.clone(), y.clone()),
        ];
        let svg = chart("compute — ops/s", "threads", "ops_per_s", &curves);
        assert_eq!(svg.matches("<g class='curve'").count(), 2);
        assert_eq!(svg.matches("<g class='legend'").count(), 2);
        // The shared prefix goes to the title, drawn at the top.
        assert!(svg.contains(">linear = compact = scatter</text>"), "{svg}");
        assert!(svg.contains("class='chart-title'") && svg.contains("compute — ops/s — int"));
        // The tooltip keeps the full names; the toggles pair entry and curve.
        assert!(svg.contains("<title>int/linear = int/compact = int/scatter (click"));
        assert!(svg.contains("<g class='curve' data-curve='1'>"));
        assert!(svg.contains("<g class='legend' data-curve='1'"));
        // Bounded: MAX_CURVES drawn curves, however many are alike.
        let many: Vec<Curve> = (0..40)
            .map(|k| Curve::new(format!("c{k}"), x.clone(), vec![1.0, f64::from(k)]))
            .collect();
        let svg = chart("t", "threads", "ns", &many);
        assert_eq!(svg.matches("<g class='curve'").count(), MAX_CURVES);
        assert!(svg.contains("first 32 of 40 curves drawn"));
        let same: Vec<Curve> = (0..40)
            .map(|k| Curve::new(format!("c{k}"), x.clone(), y.clone()))
            .collect();
        let svg = chart("t", "threads", "ns", &same);
        assert_eq!(svg.matches("<g class='legend'").count(), 1);
        assert!(!svg.contains("curves drawn"));
    }

    #[test]
    fn threads_axes_mark_the_cpu_count_within_their_range() {
        let c = [Curve::new("a", vec![1.0, 2.0, 4.0, 8.0], vec![1.0; 4])];
        let with = |n, x_name| {
            let opts = ChartOpts {
                cpus: n,
                ..ChartOpts::default()
            };
            chart_with("t", x_name, "ns", &c, opts)
        };
        assert!(with(Some(2), "threads").contains(">2 CPUs</text>"));
        assert!(with(Some(1), "threads").contains(">1 CPU</text>"));
        assert!(!with(Some(64), "threads").contains("class='cpus'"));
        assert!(!with(Some(2), "bytes").contains("class='cpus'"));
        assert!(!with(None, "threads").contains("class='cpus'"));
        assert_eq!(with(None, "threads"), chart("t", "threads", "ns", &c));
    }

    #[test]
    fn bytes_axes_mark_the_cache_sizes_within_their_range() {
        let ws: Vec<f64> = (12..=28).map(|k| f64::from(1u32 << k)).collect();
        let c = [Curve::new("ws-read", ws.clone(), vec![1.0; ws.len()])];
        let opts = ChartOpts {
            // 48 KiB, 2 MiB and 105 MiB lie within the 4 KiB–256 MiB axis.
            cache_bytes: [48 << 10, 2 << 20, 105 << 20, 0],
            ..ChartOpts::default()
        };
        let svg = chart_with("t", "bytes", "bytes_per_s", &c, opts);
        assert_eq!(svg.matches("<g class='cache'>").count(), 3, "{svg}");
        for label in [">L1 48 KiB<", ">L2 2 MiB<", ">L3 105 MiB<"] {
            assert!(svg.contains(label), "{label}");
        }
        // Only on bytes axes, only within the axis.
        assert!(!chart_with("t", "threads", "ns", &c, opts).contains("class='cache'"));
        let huge = ChartOpts {
            cache_bytes: [1 << 30, 0, 0, 0],
            ..ChartOpts::default()
        };
        assert!(!chart_with("t", "bytes", "ns", &c, huge).contains("class='cache'"));
        assert_eq!(binary_size(1536 << 10), "1.5 MiB");
        assert_eq!(binary_size(512), "512 B");
    }

    #[test]
    fn charts_survive_empty_and_degenerate_data() {
        assert!(lines("t", "threads", "ns", &[]).ends_with("</svg>"));
        assert!(
            lines("t", "threads", "ns", &[("a".into(), vec![1.0], vec![5.0])]).contains("<circle")
        );
        assert!(paired("t", "a", "b", "ns", &[]).ends_with("</svg>"));
        let many: Vec<[f64; 2]> = (0..100_000)
            .map(|i| [1.0 + i as f64, 2.0 + i as f64])
            .collect();
        let svg = paired("t", "a", "b", "ns", &many);
        assert!(svg.matches("<circle").count() <= MAX_SCATTER_POINTS);
        assert!(histogram("t", "ns", &[1.0, 1.0], &[3], false).contains("<rect"));
        assert!(heatmap("t", "ns", &[], &[], &[]).ends_with("</svg>"));
    }
}
