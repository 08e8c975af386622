//! The drawing of the machine on the report's first screen: packages, cores and
//! hardware threads as nested boxes. Pure string building; every label is escaped.

use super::svg::esc;
use std::fmt::Write;

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
