//! Grouped horizontal bar charts with 95 % interval whiskers: one band per
//! group (a benchmark, a roadmap step), one bar per variant inside it (a spin
//! loop, a configuration), an optional reference line (1× = alone, the
//! optimum). Horizontal, so that long group labels read without rotation.
//! Pure string building; every label is escaped.

use super::fmt_value;
use super::svg::{esc, open_svg, series_style, tick_labels, Axis, W};
use std::fmt::Write;

/// One bar: its central value and, when measured with repetitions, its
/// interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The variant's name; bars of the same name share a colour and one
    /// legend entry across groups.
    pub name: String,
    pub value: f64,
    /// The 95 % interval, when there is one.
    pub interval: Option<(f64, f64)>,
}

/// The bars of one group, drawn as one band.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// A vertical reference line across every group (drawn dashed and labelled,
/// never like a measured bar).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub value: f64,
    pub label: String,
}

/// Left margin (group labels), right margin (legend), top and bottom.
const LEFT_PX: f64 = 170.0;
const RIGHT_PX: f64 = 200.0;
const TOP_PX: f64 = 24.0;
const BOTTOM_PX: f64 = 45.0;
/// Height of one bar, the gap between bars and between groups.
const BAR_PX: f64 = 12.0;
const BAR_GAP_PX: f64 = 2.0;
const GROUP_GAP_PX: f64 = 10.0;
/// Most groups one chart draws; beyond it, a note says how many were left out.
pub const MAX_GROUPS: usize = 60;

/// The legend: distinct bar names in order of first appearance.
fn legend(groups: &[BarGroup]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for b in groups.iter().flat_map(|g| &g.bars) {
        if !names.contains(&b.name.as_str()) {
            names.push(&b.name);
        }
    }
    names
}

/// A grouped bar chart of `groups` in `unit` (a unit name the renderers know,
/// such as `x_alone`, `ns`, `bytes_per_s`), its value axis from zero.
pub fn bars(title: &str, unit: &str, groups: &[BarGroup], reference: Option<&Reference>) -> String {
    let shown = &groups[..groups.len().min(MAX_GROUPS)];
    let finite = |b: &&Bar| b.value.is_finite();
    let values = shown
        .iter()
        .flat_map(|g| g.bars.iter().filter(finite))
        .flat_map(|b| {
            let (lo, hi) = b.interval.unwrap_or((b.value, b.value));
            [b.value, lo, hi]
        })
        .chain(reference.map(|r| r.value))
        .chain([0.0]);
    let axis = Axis::over(values, false, true);
    let names = legend(shown);
    let band = |g: &BarGroup| g.bars.len().max(1) as f64 * (BAR_PX + BAR_GAP_PX) + GROUP_GAP_PX;
    let plot_h: f64 = shown.iter().map(band).sum::<f64>().max(BAR_PX * 2.0);
    let legend_h = names.len() as f64 * 16.0 + 8.0;
    let h = TOP_PX + plot_h.max(legend_h) + BOTTOM_PX;
    let (x0, x1) = (LEFT_PX, W - RIGHT_PX);
    let (y_top, y_bottom) = (TOP_PX, TOP_PX + plot_h);
    let px = |v: f64| x0 + axis.t(v) * (x1 - x0);
    let mut out = open_svg(W, h, title, None);
    let _ = write!(
        out,
        "<text x='{x0}' y='14' font-size='12' font-weight='bold'>{}</text>",
        esc(title)
    );
    let (ticks, axis_title) = tick_labels(unit, &axis);
    for (t, l) in ticks {
        let x = px(t);
        let _ = write!(out, "<line x1='{x:.1}' y1='{y_top}' x2='{x:.1}' y2='{y_bottom}' stroke='#e5e5e5'/><text x='{x:.1}' y='{:.1}' font-size='10' text-anchor='middle'>{}</text>", y_bottom + 14.0, esc(&l));
    }
    let _ = write!(
        out,
        "<text x='{:.1}' y='{:.1}' font-size='11' text-anchor='middle'>{}</text>",
        (x0 + x1) / 2.0,
        y_bottom + 32.0,
        esc(&axis_title)
    );
    let mut y = y_top;
    for g in shown {
        draw_group(&mut out, g, y, &names, &px, unit);
        y += band(g);
    }
    let _ = write!(
        out,
        "<line x1='{x0}' y1='{y_top}' x2='{x0}' y2='{y_bottom}' stroke='#999'/>"
    );
    if let Some(r) = reference.filter(|r| r.value.is_finite()) {
        let x = px(r.value);
        let _ = write!(out, "<line x1='{x:.1}' y1='{y_top}' x2='{x:.1}' y2='{y_bottom}' stroke='#555' stroke-dasharray='5 3'><title>{}</title></line><text x='{x:.1}' y='{:.1}' font-size='9' fill='#555' text-anchor='middle'>{}</text>", esc(&r.label), y_top - 2.0, esc(&r.label));
    }
    draw_legend(&mut out, &names, x1 + 14.0, y_top);
    if groups.len() > shown.len() {
        let _ = write!(
            out,
            "<text x='{x0}' y='{:.1}' font-size='9' fill='#555'>{} more groups not drawn (the table has them)</text>",
            h - 4.0,
            groups.len() - shown.len()
        );
    }
    out.push_str("</svg>");
    out
}

/// One group's label and bars, starting at height `y`.
fn draw_group(
    out: &mut String,
    g: &BarGroup,
    y: f64,
    names: &[&str],
    px: &dyn Fn(f64) -> f64,
    unit: &str,
) {
    let band_h = g.bars.len().max(1) as f64 * (BAR_PX + BAR_GAP_PX);
    let _ = write!(
        out,
        "<text x='{:.1}' y='{:.1}' font-size='10' text-anchor='end'>{}</text>",
        LEFT_PX - 6.0,
        y + band_h / 2.0 + 3.0,
        esc(&g.label)
    );
    let zero = px(0.0);
    for (i, b) in g.bars.iter().enumerate() {
        if !b.value.is_finite() {
            continue;
        }
        let colour_index = names.iter().position(|n| *n == b.name).unwrap_or(0);
        let (colour, _) = series_style(colour_index);
        let top = y + i as f64 * (BAR_PX + BAR_GAP_PX);
        let (a, e) = (zero.min(px(b.value)), zero.max(px(b.value)));
        let interval = b
            .interval
            .map(|(lo, hi)| {
                format!(
                    " (95 % interval {}–{})",
                    fmt_value(unit, lo),
                    fmt_value(unit, hi)
                )
            })
            .unwrap_or_default();
        let _ = write!(
            out,
            "<rect x='{a:.1}' y='{top:.1}' width='{:.1}' height='{BAR_PX}' fill='{colour}' fill-opacity='0.8'><title>{}: {} {}{}</title></rect>",
            (e - a).max(0.5),
            esc(&g.label),
            esc(&b.name),
            esc(&fmt_value(unit, b.value)),
            esc(&interval)
        );
        if let Some((lo, hi)) = b
            .interval
            .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        {
            let mid = top + BAR_PX / 2.0;
            let (l, r) = (px(lo), px(hi));
            let _ = write!(out, "<path d='M{l:.1} {:.1}V{:.1}M{l:.1} {mid:.1}H{r:.1}M{r:.1} {:.1}V{:.1}' stroke='#222' fill='none' class='whisker'/>", mid - 4.0, mid + 4.0, mid - 4.0, mid + 4.0);
        }
    }
}

/// The legend: one entry per bar name, in the names' colours.
fn draw_legend(out: &mut String, names: &[&str], x: f64, y: f64) {
    for (i, n) in names.iter().enumerate() {
        let (colour, _) = series_style(i);
        let ty = y + 8.0 + i as f64 * 16.0;
        let _ = write!(
            out,
            "<rect x='{x:.1}' y='{:.1}' width='12' height='10' fill='{colour}' fill-opacity='0.8'/><text x='{:.1}' y='{ty:.1}' font-size='10' class='legend'>{}</text>",
            ty - 8.0,
            x + 16.0,
            esc(n)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(name: &str, value: f64, interval: Option<(f64, f64)>) -> Bar {
        Bar {
            name: name.into(),
            value,
            interval,
        }
    }

    fn groups() -> Vec<BarGroup> {
        vec![
            BarGroup {
                label: "add <i>".into(),
                bars: vec![bar("pause", 1.1, Some((1.0, 1.2))), bar("yield", 1.4, None)],
            },
            BarGroup {
                label: "hash".into(),
                bars: vec![
                    bar("pause", 2.0, Some((1.6, 2.7))),
                    bar("yield", f64::NAN, None),
                ],
            },
        ]
    }

    #[test]
    fn one_rect_per_finite_bar_and_one_whisker_per_interval() {
        let r = Reference {
            value: 1.0,
            label: "1× = alone".into(),
        };
        let s = bars("slowdown", "x_alone", &groups(), Some(&r));
        // Three finite bars plus one legend swatch per distinct name.
        assert_eq!(s.matches("<rect").count(), 3 + 2);
        assert_eq!(s.matches("class='whisker'").count(), 2);
        assert_eq!(s.matches("stroke-dasharray='5 3'").count(), 1);
        assert!(s.contains("add &lt;i&gt;") && !s.contains("<i>"));
        assert!(s.ends_with("</svg>"));
    }

    #[test]
    fn legend_names_are_unique_in_first_seen_order() {
        let s = bars("t", "x_alone", &groups(), None);
        let legend: Vec<&str> = s
            .split("class='legend'>")
            .skip(1)
            .filter_map(|p| p.split('<').next())
            .collect();
        assert_eq!(legend, ["pause", "yield"]);
    }

    #[test]
    fn empty_and_oversized_inputs_still_draw_a_closed_chart() {
        let s = bars("none", "ns", &[], None);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        let many: Vec<BarGroup> = (0..MAX_GROUPS + 5)
            .map(|i| BarGroup {
                label: format!("g{i}"),
                bars: vec![bar("a", i as f64, None)],
            })
            .collect();
        let s = bars("many", "ns", &many, None);
        assert!(s.contains("5 more groups not drawn"));
        assert_eq!(s.matches("<rect").count(), MAX_GROUPS + 1);
    }
}
