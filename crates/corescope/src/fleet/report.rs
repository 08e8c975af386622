//! A fleet file in words: the nodes, per probe the distribution of each series'
//! key figure over the nodes, the outliers with their evidence, by model; and the
//! one line per bad node that Slurm and NHC take as a drain reason. Pure: text in,
//! text out.

use super::file::{FigureKey, FleetFile, Group, Outlier, MATRIX, MATRIX_ROW};
use super::stats::Side;
use crate::units::{fmt_num, fmt_value, fmt_x, threads};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A matrix row's name: `CPU 3` for a row labelled by a number, else its label.
fn row_name(label: &str) -> String {
    if !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()) {
        format!("CPU {label}")
    } else {
        label.to_string()
    }
}

/// `compute int/linear at 2 threads`, `threads create/joinable (median)`,
/// `c2c c2c/cas matrix (median entry)`, `c2c c2c/cas matrix, CPU 3's row (median)`.
pub fn figure_label(k: &FigureKey) -> String {
    match k.x {
        None if k.x_name == MATRIX => format!("{} {} matrix (median entry)", k.probe, k.name),
        None if k.x_name == MATRIX_ROW => format!(
            "{} {} matrix, {}'s row (median)",
            k.probe,
            k.name,
            row_name(k.row.as_deref().unwrap_or("?"))
        ),
        Some(x) if k.x_name == "threads" => format!("{} {} at {}", k.probe, k.name, threads(x)),
        Some(x) => {
            let unit = if k.x_name == "bytes" {
                ""
            } else {
                k.x_name.as_str()
            };
            format!("{} {} at {} {unit}", k.probe, k.name, fmt_x(&k.x_name, x))
                .trim_end()
                .to_string()
        }
        None => format!("{} {} (median)", k.probe, k.name),
    }
}

/// `node17: compute int/linear at 2 threads 0.71× the fleet median, 95 % CI
/// 0.66–0.75 (1.20 Gops/s; fleet 1.70 Gops/s)`.
pub fn evidence(f: &FleetFile, o: &Outlier) -> String {
    let k = &f.figures[o.figure];
    format!(
        "{}: {} {}× the fleet median, 95 % CI {}–{} ({}; fleet {})",
        o.node,
        figure_label(k),
        fmt_num(o.ratio.value),
        fmt_num(o.ratio.lo),
        fmt_num(o.ratio.hi),
        fmt_value(&k.unit, o.value),
        fmt_value(&k.unit, o.fleet_median)
    )
}

/// The header and node list.
fn nodes(f: &FleetFile, out: &mut String) {
    let _ = writeln!(
        out,
        "fleet of {} nodes, {} figures each (made {} by corescope {})",
        f.nodes.len(),
        f.figures.len(),
        f.created_utc,
        f.tool.version
    );
    for n in &f.nodes {
        let have = n.values.iter().filter(|v| v.is_some()).count();
        let failed = if n.failed.is_empty() {
            String::new()
        } else {
            format!("; failed: {}", n.failed.join(", "))
        };
        let _ = writeln!(
            out,
            "  {:<20} {} ({} CPUs), {} profile, {have} figures{failed}",
            n.name,
            n.model(),
            n.cpus,
            n.profile.name()
        );
    }
}

/// Per probe, one row per series: its key figure (the largest x the group
/// measured), with the fleet median, spread and the nodes' range.
fn distributions(f: &FleetFile, g: &Group, out: &mut String) {
    // (probe, series) → the spread at its largest x (a distribution: its median).
    let mut key: BTreeMap<(&str, &str), &super::file::FigureSpread> = BTreeMap::new();
    let mut probes: Vec<&str> = Vec::new();
    for s in &g.figures {
        let k = &f.figures[s.figure];
        if !probes.contains(&k.probe.as_str()) {
            probes.push(&k.probe);
        }
        let slot = key.entry((&k.probe, &k.name)).or_insert(s);
        if f.figures[slot.figure].x < k.x {
            *slot = s;
        }
    }
    for p in probes {
        let _ = writeln!(out, "  {p}");
        for ((_, _), s) in key.iter().filter(|((probe, _), _)| *probe == p) {
            let k = &f.figures[s.figure];
            let sp = &s.spread;
            let _ = writeln!(
                out,
                "    {:<44} median {:>14}  spread ±{:.1} %  nodes {:.2}–{:.2}×  (n={})",
                figure_label(k).trim_start_matches(p).trim_start(),
                fmt_value(&k.unit, sp.median),
                100.0 * sp.sigma_log,
                sp.ratio_range[0],
                sp.ratio_range[1],
                sp.nodes
            );
        }
    }
}

/// The whole report.
pub fn render(f: &FleetFile) -> String {
    let mut out = String::new();
    nodes(f, &mut out);
    for g in &f.analysis.groups {
        let _ = writeln!(out, "\nmodel {}: {} nodes", g.model, g.nodes.len());
        if g.nodes.len() < f.analysis.min_nodes {
            let _ = writeln!(
                out,
                "  not judged: fewer than {} nodes of this model",
                f.analysis.min_nodes
            );
            continue;
        }
        let _ = writeln!(
            out,
            "  per probe, each series' key figure (its largest x) over the nodes:"
        );
        distributions(f, g, &mut out);
        if g.outliers.is_empty() {
            let _ = writeln!(
                out,
                "  outliers: none (every node's interval reaches the fleet's spread)"
            );
        } else {
            let _ = writeln!(out, "  outliers ({}):", g.outliers.len());
            for o in &g.outliers {
                let _ = writeln!(out, "    {}", evidence(f, o));
            }
            let rows = matrix_lines(f, g);
            if !rows.is_empty() {
                let _ = writeln!(out, "  matrices that differ:");
                for l in rows {
                    let _ = writeln!(out, "    {l}");
                }
            }
        }
    }
    out
}

/// Rows named per matrix at most; the rest are counted.
const MAX_ROWS_NAMED: usize = 4;

/// Per node and matrix whose rows are outliers: `node2: its c2c c2c/cas matrix
/// differs in CPU 3's row` (or `in the rows of CPU 3, CPU 5`), in the order of
/// the outliers.
pub fn matrix_lines(f: &FleetFile, g: &Group) -> Vec<String> {
    // (node, probe, matrix) → the rows named.
    type Rows<'a> = ((&'a str, &'a str, &'a str), Vec<String>);
    let mut found: Vec<Rows> = Vec::new();
    for o in &g.outliers {
        let k = &f.figures[o.figure];
        if k.x_name != MATRIX_ROW {
            continue;
        }
        let id = (o.node.as_str(), k.probe.as_str(), k.name.as_str());
        let row = row_name(k.row.as_deref().unwrap_or("?"));
        match found.iter_mut().find(|(x, _)| *x == id) {
            Some((_, rows)) => rows.push(row),
            None => found.push((id, vec![row])),
        }
    }
    found
        .into_iter()
        .map(|((node, probe, name), rows)| {
            let named = rows
                .iter()
                .take(MAX_ROWS_NAMED)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = rows.len().saturating_sub(MAX_ROWS_NAMED);
            let which = match (rows.len(), more) {
                (1, _) => format!("{named}'s row"),
                (_, 0) => format!("the rows of {named}"),
                _ => format!("the rows of {named} and {more} more"),
            };
            format!("{node}: its {probe} {name} matrix differs in {which}")
        })
        .collect()
}

/// Outliers by node, the farthest first, for the check lines.
fn by_node(f: &FleetFile) -> BTreeMap<&str, Vec<&Outlier>> {
    let mut m: BTreeMap<&str, Vec<&Outlier>> = BTreeMap::new();
    for o in f.analysis.groups.iter().flat_map(|g| &g.outliers) {
        m.entry(o.node.as_str()).or_default().push(o);
    }
    for v in m.values_mut() {
        v.sort_by(|a, b| {
            b.ratio
                .value
                .ln()
                .abs()
                .total_cmp(&a.ratio.value.ln().abs())
        });
    }
    m
}

/// Longest drain reason: Slurm shows reasons in `sinfo -R`, one short line.
const MAX_REASON_CHARS: usize = 200;

/// One ASCII line per bad node (`NODE: corescope fleet: REASON`), for Slurm's
/// `scontrol update ... reason=` and NHC's `die`: the farthest outlying figure
/// and how many more, or the probes that failed. `only` keeps one node.
pub fn check_lines(f: &FleetFile, only: Option<&str>) -> Vec<String> {
    let outliers = by_node(f);
    let mut lines = Vec::new();
    for n in &f.nodes {
        if only.is_some_and(|o| o != n.name) {
            continue;
        }
        let mut why: Vec<String> = Vec::new();
        if let Some(os) = outliers.get(n.name.as_str()) {
            let o = os[0];
            let dir = match o.side {
                Side::Low => "low",
                Side::High => "high",
            };
            let more = if os.len() > 1 {
                format!(" (+{} more figures)", os.len() - 1)
            } else {
                String::new()
            };
            why.push(format!(
                "{} {}x fleet median ({dir}; 95% CI {}-{}){more}",
                figure_label(&f.figures[o.figure]),
                fmt_num(o.ratio.value),
                fmt_num(o.ratio.lo),
                fmt_num(o.ratio.hi)
            ));
        }
        if !n.failed.is_empty() {
            why.push(format!("failed probes: {}", n.failed.join(",")));
        }
        if !why.is_empty() {
            let line = format!("{}: corescope fleet: {}", n.name, why.join("; "));
            let ascii: String = line
                .chars()
                .map(|c| {
                    if c.is_ascii_graphic() || c == ' ' {
                        c
                    } else {
                        '?'
                    }
                })
                .take(MAX_REASON_CHARS)
                .collect();
            lines.push(ascii);
        }
    }
    lines
}
