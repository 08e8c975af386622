//! Inline SVG charts for the HTML report: line charts (series), scatter with the
//! y = x line and histograms are in `distribution_svg.rs`, heat maps in
//! `heatmap.rs`, Gantt lanes in `gantt.rs`. Pure string building; every label is escaped.

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
pub(crate) const ML: f64 = 70.0;
pub(crate) const MR: f64 = 190.0;
/// Top margin: room for the chart's title.
pub(crate) const MT: f64 = 32.0;
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
    /// Whether the axis is log10 (or log2 when `binary`).
    pub(crate) log: bool,
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
            // Exponents within f64's range: an end of 0 or a subnormal (a hostile
            // run file) would give -inf, i.e. i32::MIN, and billions of ticks.
            let exp = |x: f64, (lo, hi): (i32, i32)| (x as i32).clamp(lo, hi);
            let mut t: Vec<f64> = if self.binary {
                let range = F64_EXP2_RANGE;
                let (a, b) = (
                    exp(self.lo.log2().floor(), range),
                    exp(self.hi.log2().ceil(), range),
                );
                (a..=b).map(|e| 2f64.powi(e)).collect()
            } else {
                let range = F64_EXP10_RANGE;
                let (a, b) = (
                    exp(self.lo.log10().floor(), range),
                    exp(self.hi.log10().ceil(), range),
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
/// Binary exponents of finite, nonzero f64 values, subnormals included
/// (`f64::MIN_POSITIVE` is 2^-1022; the smallest subnormal 2^-1074).
const F64_EXP2_RANGE: (i32, i32) = (-1075, 1024);
/// Decimal exponents of finite, nonzero f64 values (about 4.9e-324 … 1.8e308).
const F64_EXP10_RANGE: (i32, i32) = (-324, 309);

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

pub(crate) fn label(unit: &str, v: f64) -> String {
    match unit {
        "threads" | "levels" | "size_log2" | "n" | "padding_bytes" | "read_interval_ns"
        | "x_alone" => fmt_num(v),
        _ => fmt_value(unit, v),
    }
}

/// Most characters of a chart's drawn title (the tooltip has it whole).
const TITLE_CHARS: usize = 110;

/// Frame, axes, ticks, axis titles and the chart's title, drawn at the top.
pub(crate) fn frame(out: &mut String, x: &Axis, y: &Axis, x_name: &str, y_name: &str, title: &str) {
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
pub(crate) fn thin<T: Copy>(pts: &[T], n: usize) -> Vec<T> {
    let n = n.max(2);
    if pts.len() <= n {
        return pts.to_vec();
    }
    let last = pts.len() - 1;
    (0..n).map(|k| pts[k * last / (n - 1)]).collect()
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

    /// A log axis whose low end is 0 or subnormal (a hostile run file's values
    /// padded down) keeps a handful of ticks: found by the run-file fuzz test, which
    /// once asked for 51 GB of them.
    #[test]
    fn log_ticks_stay_few_at_the_ends_of_f64() {
        for binary in [true, false] {
            for (lo, hi) in [(0.0, 1e300), (5e-324, 1.0), (1e-310, f64::MAX)] {
                let a = Axis {
                    lo,
                    hi,
                    log: true,
                    step: 0.0,
                    binary,
                };
                let t = a.ticks();
                assert!((2..=12).contains(&t.len()), "{a:?}: {} ticks", t.len());
            }
        }
        let a = Axis::over([5e-324, 1.0].into_iter(), true, false).binary(5e-324, 1.0);
        assert!(a.ticks().len() <= 12, "{a:?}");
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
    }
}
