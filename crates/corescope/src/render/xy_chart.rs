//! Charts of points measured on both axes (latency against bandwidth, as Intel
//! MLC and the Mess benchmark draw them): each point with its 95 % interval in
//! x and in y. Pure string building; every label is escaped.

use super::svg::{frame, label, series_style, Axis, H, MAX_CURVES, MB, ML, MR, MT, W};
use super::svg_legend::{self, marker};
use std::fmt::Write;

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
