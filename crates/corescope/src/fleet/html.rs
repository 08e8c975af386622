//! The fleet page (`fleet report --html`, `fleet run --html`): one self-contained
//! HTML page (no network) with, per node model, a node × probe heat map of each
//! node's ratio to the fleet median (a log colour scale centred on 1, outliers
//! marked), then each outlying node's figures beside the fleet's. A renderer:
//! fleet file in, text out; every name is escaped.

use super::file::{FleetFile, Group, Node};
use super::report::{evidence, figure_label, matrix_lines};
use super::stats::{self, Side};
use crate::model::Estimate;
use crate::render::html::STYLE;
use crate::render::svg::{colour_bar, esc, open_svg, ColourScale};
use crate::units::{fmt_num, fmt_value};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// Most node rows one model's heat map draws: the nodes with outliers always,
/// then the others in order.
pub const MAX_MAP_ROWS: usize = 1000;
/// Most figures listed per outlying node; the farthest first.
pub const MAX_FIGURES_PER_NODE: usize = 40;
/// The colour scale reaches at least this far from 1 (×1.10 and ÷1.10), so a
/// fleet of near-identical nodes looks pale rather than saturated.
const MIN_SCALE_RATIO: f64 = 1.10;
/// Heat-map geometry, px.
const CELL_W: f64 = 64.0;
const CELL_H: f64 = 16.0;
const LABEL_W: f64 = 150.0;
const HEAD_H: f64 = 44.0;

/// One heat-map cell: a node's most telling figure of one probe (its farthest
/// outlier, else its farthest figure from the median).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Index into [`FleetFile::figures`].
    pub figure: usize,
    /// Node ÷ fleet median with its 95 % interval.
    pub ratio: Estimate,
    /// Outlying figures of this node in this probe.
    pub outliers: usize,
}

/// One heat-map row: the node's index in [`FleetFile::nodes`] and its cells, one
/// per probe (`None` where it has no judged figure of the probe).
pub type Row = (usize, Vec<Option<Cell>>);

/// The probes of the fleet, in order of first appearance.
pub fn probes(f: &FleetFile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in &f.figures {
        if !out.contains(&k.probe) {
            out.push(k.probe.clone());
        }
    }
    out
}

/// Distance of a ratio from 1 on a log scale.
fn far(r: &Estimate) -> f64 {
    r.value.ln().abs()
}

/// A group's cells: for each of its nodes (in the group's order), one per probe
/// of `probes` (`None` where the node has no judged figure of that probe).
pub fn cells(f: &FleetFile, g: &Group, probes: &[String]) -> Vec<Row> {
    let index: HashMap<&str, usize> = f
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let outlying: HashSet<(&str, usize)> = g
        .outliers
        .iter()
        .map(|o| (o.node.as_str(), o.figure))
        .collect();
    let col: HashMap<&str, usize> = probes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let members: Vec<usize> = g
        .nodes
        .iter()
        .filter_map(|n| index.get(n.as_str()).copied())
        .collect();
    let mut rows: Vec<Row> = members
        .iter()
        .map(|&i| (i, vec![None; probes.len()]))
        .collect();
    for s in &g.figures {
        let Some(&c) = col.get(f.figures[s.figure].probe.as_str()) else {
            continue;
        };
        for (i, row) in rows.iter_mut() {
            let node = &f.nodes[*i];
            let Some(v) = node.values.get(s.figure).copied().flatten() else {
                continue;
            };
            let Some(place) = stats::place(&s.spread, &v.estimate()) else {
                continue;
            };
            let out = outlying.contains(&(node.name.as_str(), s.figure));
            keep(&mut row[c], s.figure, place.ratio, out);
        }
    }
    rows
}

/// Keep the more telling of a cell and a new figure: an outlier over a figure
/// within the spread, then the farther from 1.
fn keep(cell: &mut Option<Cell>, figure: usize, ratio: Estimate, outlier: bool) {
    match cell {
        None => {
            *cell = Some(Cell {
                figure,
                ratio,
                outliers: usize::from(outlier),
            })
        }
        Some(c) => {
            let was_outlier = c.outliers > 0;
            c.outliers += usize::from(outlier);
            let better = if outlier != was_outlier {
                outlier
            } else {
                far(&ratio) > far(&c.ratio)
            };
            if better {
                c.figure = figure;
                c.ratio = ratio;
            }
        }
    }
}

/// The rows a map draws: every node with an outlier, then the others, in
/// order, at most [`MAX_MAP_ROWS`]; and how many were left out.
fn shown_rows(rows: Vec<Row>) -> (Vec<Row>, usize) {
    if rows.len() <= MAX_MAP_ROWS {
        return (rows, 0);
    }
    let total = rows.len();
    let bad = |r: &Row| r.1.iter().flatten().any(|c| c.outliers > 0);
    let n_bad = rows.iter().filter(|r| bad(r)).count();
    let mut room = MAX_MAP_ROWS.saturating_sub(n_bad);
    let kept: Vec<_> = rows
        .into_iter()
        .filter(|r| {
            if bad(r) {
                true
            } else if room > 0 {
                room -= 1;
                true
            } else {
                false
            }
        })
        .collect();
    let left = total - kept.len();
    (kept, left)
}

/// A cell's tooltip: the node, the figure, its ratio with its interval.
fn tip(f: &FleetFile, node: &Node, cell: &Cell) -> String {
    let r = &cell.ratio;
    let mark = match cell.outliers {
        0 => String::new(),
        1 => "; an outlier".to_string(),
        n => format!("; {n} outlying figures in this probe"),
    };
    format!(
        "{}: {} {}× the fleet median, 95 % CI {}–{}{mark}",
        node.name,
        figure_label(&f.figures[cell.figure]),
        fmt_num(r.value),
        fmt_num(r.lo),
        fmt_num(r.hi)
    )
}

/// The ratio range of the colour scale: the cells' extremes, at least
/// [`MIN_SCALE_RATIO`] either side of 1.
fn scale_range<'a>(cells: impl Iterator<Item = &'a Cell>) -> (f64, f64) {
    cells.fold((1.0 / MIN_SCALE_RATIO, MIN_SCALE_RATIO), |(lo, hi), c| {
        (lo.min(c.ratio.value), hi.max(c.ratio.value))
    })
}

/// One model's heat map: nodes as rows, probes as columns.
fn heat_map(f: &FleetFile, probes: &[String], rows: &[Row], range: (f64, f64)) -> String {
    let scale = ColourScale::Ratio;
    let (lo, hi) = range;
    let n = rows.len() as f64;
    let w = LABEL_W + CELL_W * probes.len() as f64 + 70.0;
    let h = (HEAD_H + CELL_H * n + 10.0).max(120.0);
    let mut o = open_svg(
        w,
        h,
        "each node's ratio to its model's fleet median",
        Some(w),
    );
    for (c, p) in probes.iter().enumerate() {
        let _ = write!(
            o,
            "<text x='{:.1}' y='{:.1}' font-size='10' text-anchor='middle'>{}</text>",
            LABEL_W + (c as f64 + 0.5) * CELL_W,
            HEAD_H - 6.0,
            esc(p)
        );
    }
    for (r, (i, cells)) in rows.iter().enumerate() {
        let node = &f.nodes[*i];
        let y = HEAD_H + r as f64 * CELL_H;
        let _ = write!(
            o,
            "<text x='{:.1}' y='{:.1}' font-size='10' text-anchor='end'>{}</text>",
            LABEL_W - 4.0,
            y + CELL_H * 0.75,
            esc(&crate::render::clean(&node.name, 24, false))
        );
        for (c, cell) in cells.iter().enumerate() {
            let x = LABEL_W + c as f64 * CELL_W;
            cell_svg(&mut o, f, node, cell.as_ref(), (x, y), scale, range);
        }
    }
    o.push_str(&colour_bar(
        LABEL_W + CELL_W * probes.len() as f64 + 10.0,
        HEAD_H,
        (CELL_H * n).max(70.0),
        lo,
        hi,
        scale,
        "",
    ));
    o.push_str("</svg>");
    o
}

/// One cell: its colour, its tooltip, a mark and a bold frame on an outlier.
fn cell_svg(
    o: &mut String,
    f: &FleetFile,
    node: &Node,
    cell: Option<&Cell>,
    (x, y): (f64, f64),
    scale: ColourScale,
    (lo, hi): (f64, f64),
) {
    let (fill, title, stroke) = match cell {
        Some(c) => (
            scale.fill(scale.t(c.ratio.value, lo, hi)),
            tip(f, node, c),
            if c.outliers > 0 {
                "stroke='#000' stroke-width='2'"
            } else {
                "stroke='#fff'"
            },
        ),
        None => (
            "#f4f4f4".to_string(),
            format!("{}: no judged figure of this probe", node.name),
            "stroke='#fff'",
        ),
    };
    let _ = write!(
        o,
        "<rect class='cell' x='{x:.1}' y='{y:.1}' width='{CELL_W:.1}' height='{CELL_H:.1}' fill='{fill}' {stroke}><title>{}</title></rect>",
        esc(&title)
    );
    if let Some(c) = cell {
        let mark = if c.outliers > 0 { "● " } else { "" };
        let _ = write!(
            o,
            "<text x='{:.1}' y='{:.1}' font-size='9' text-anchor='middle' pointer-events='none'>{mark}{}</text>",
            x + CELL_W / 2.0,
            y + CELL_H * 0.72,
            esc(&format!("{:.2}", c.ratio.value))
        );
    }
}

/// A node's value with its interval: `938.0 Mops/s (920.1–951.2)`.
fn with_interval(unit: &str, v: &Estimate) -> String {
    if v.lo > 0.0 && v.hi >= v.lo && (v.lo != v.value || v.hi != v.value) {
        format!(
            "{} ({}–{})",
            fmt_value(unit, v.value),
            fmt_value(unit, v.lo),
            fmt_value(unit, v.hi)
        )
    } else {
        fmt_value(unit, v.value)
    }
}

/// Each outlying node of a group: its outlying figures beside the fleet's, the
/// farthest first.
fn outlier_tables(o: &mut String, f: &FleetFile, g: &Group) {
    let mut by_node: Vec<(&str, Vec<&super::file::Outlier>)> = Vec::new();
    for x in &g.outliers {
        match by_node.iter_mut().find(|(n, _)| *n == x.node) {
            Some((_, v)) => v.push(x),
            None => by_node.push((&x.node, vec![x])),
        }
    }
    for (name, mut os) in by_node {
        os.sort_by(|a, b| far(&b.ratio).total_cmp(&far(&a.ratio)));
        let node = f.nodes.iter().find(|n| n.name == name);
        let _ = write!(
            o,
            "<h3 id='node-{id}'>{n}: {k} outlying figures</h3><div class='scroll'><table><tr><th>figure</th><th>node (95 % interval)</th><th>fleet median</th><th>ratio (95 % CI)</th><th>side</th></tr>",
            id = esc(&anchor(name)),
            n = esc(name),
            k = os.len()
        );
        for x in os.iter().take(MAX_FIGURES_PER_NODE) {
            let k = &f.figures[x.figure];
            let own = node
                .and_then(|n| n.values.get(x.figure).copied().flatten())
                .map(|v| with_interval(&k.unit, &v.estimate()))
                .unwrap_or_else(|| fmt_value(&k.unit, x.value));
            let side = match x.side {
                Side::Low => "low",
                Side::High => "high",
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}× ({}–{})</td><td>{side}</td></tr>",
                esc(&figure_label(k)),
                esc(&own),
                esc(&fmt_value(&k.unit, x.fleet_median)),
                fmt_num(x.ratio.value),
                fmt_num(x.ratio.lo),
                fmt_num(x.ratio.hi)
            );
        }
        o.push_str("</table></div>");
        if os.len() > MAX_FIGURES_PER_NODE {
            let _ = write!(
                o,
                "<p class='more'>… and {} more (<code>corescope fleet report</code> lists them all).</p>",
                os.len() - MAX_FIGURES_PER_NODE
            );
        }
    }
}

/// An id for a node's section: its name with anything but letters and digits
/// replaced.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect()
}

/// The first screen: every bad node in one line, its farthest figure as evidence.
fn summary(o: &mut String, f: &FleetFile) {
    let mut seen: Vec<&str> = Vec::new();
    let mut items = String::new();
    for g in &f.analysis.groups {
        let mut os: Vec<&super::file::Outlier> = g.outliers.iter().collect();
        os.sort_by(|a, b| far(&b.ratio).total_cmp(&far(&a.ratio)));
        for x in os {
            if seen.contains(&x.node.as_str()) {
                continue;
            }
            seen.push(&x.node);
            let more = g.outliers.iter().filter(|y| y.node == x.node).count() - 1;
            let _ = write!(
                items,
                "<li><a href='#node-{}'>{}</a>{}</li>",
                esc(&anchor(&x.node)),
                esc(&evidence(f, x)),
                if more > 0 {
                    format!(" (+{more} more figures)")
                } else {
                    String::new()
                }
            );
        }
    }
    for n in f.nodes.iter().filter(|n| !n.failed.is_empty()) {
        let _ = write!(
            items,
            "<li>{}: failed probes: {}</li>",
            esc(&n.name),
            esc(&n.failed.join(", "))
        );
    }
    if items.is_empty() {
        o.push_str("<p class='answer'>No outlier: every node's interval reaches its model's fleet spread.</p>");
    } else {
        let _ = write!(
            o,
            "<h2>Outlying nodes</h2><ol class='findings'>{items}</ol>"
        );
    }
}

/// One model's section: its heat map and its outliers' tables.
fn group_section(
    o: &mut String,
    f: &FleetFile,
    g: &Group,
    probes: &[String],
    rows: Vec<Row>,
    range: (f64, f64),
) {
    let _ = write!(o, "<h2>{}: {} nodes</h2>", esc(&g.model), g.nodes.len());
    if g.nodes.len() < f.analysis.min_nodes {
        let _ = write!(
            o,
            "<p>Not judged: fewer than {} nodes of this model.</p>",
            f.analysis.min_nodes
        );
        return;
    }
    let (rows, left) = shown_rows(rows);
    let _ = write!(
        o,
        "<figure><div class='scroll'>{}</div><figcaption>Each cell: the node's figure of that probe farthest from the fleet median of its model (an outlier first; ● and a black frame: outlying), as node ÷ median; hover for the figure and its 95 % interval.</figcaption></figure>",
        heat_map(f, probes, &rows, range)
    );
    if left > 0 {
        let _ = write!(
            o,
            "<p class='more'>{left} nodes without an outlier left out of the map.</p>"
        );
    }
    let matrices = matrix_lines(f, g);
    if !matrices.is_empty() {
        o.push_str("<h3>Matrices that differ</h3><ul class='findings'>");
        for l in &matrices {
            let _ = write!(o, "<li>{}</li>", esc(l));
        }
        o.push_str("</ul>");
    }
    outlier_tables(o, f, g);
}

/// The whole page.
pub fn render(f: &FleetFile) -> String {
    let probes = probes(f);
    let title = format!("corescope fleet — {} nodes", f.nodes.len());
    let mut o = format!(
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>",
        t = esc(&title)
    );
    let _ = write!(
        o,
        "<p>{} figures per node, {}; made {} by corescope {}. Nodes are judged against nodes of their own model (CPU model and core count).</p>",
        f.figures.len(),
        match f.analysis.groups.len() {
            1 => "one model".to_string(),
            n => format!("{n} models"),
        },
        esc(&f.created_utc),
        esc(&f.tool.version)
    );
    summary(&mut o, f);
    let all: Vec<Vec<Row>> = f
        .analysis
        .groups
        .iter()
        .map(|g| cells(f, g, &probes))
        .collect();
    let range = scale_range(all.iter().flatten().flat_map(|(_, r)| r.iter().flatten()));
    for (g, rows) in f.analysis.groups.iter().zip(all) {
        group_section(&mut o, f, g, &probes, rows, range);
    }
    let _ = write!(
        o,
        "<h2>Method</h2><p class='note'>{}</p></body></html>",
        esc(&f.analysis.method)
    );
    o
}
