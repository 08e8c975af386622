//! Terminal table of the topology: every OS CPU id → package, NUMA node, core,
//! slot, the caches it shares, whether it is allowed, and its kind. This is the
//! map the T3-4 authors had to discover by experiment (seed 000 §3.1).

use std::collections::BTreeMap;

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

use crate::topology::{Cache, Topology};

/// Widest table we aim for.
const WIDTH: u16 = 100;

/// What a run file measured of each pair of CPUs (its `Finding::CoreSharing`s,
/// whichever probe wrote them: a shared core or not, with the throughput ratio
/// and its interval) next to what the topology says, one line per pair; or how
/// to measure it when the run has none.
pub fn measured_sharing(run: &crate::model::RunFile) -> String {
    let lines: Vec<String> = run
        .probes
        .iter()
        .flat_map(|p| &p.findings)
        .filter(|f| matches!(f, crate::model::Finding::CoreSharing { .. }))
        .map(|f| format!("  {}\n", crate::render::words::finding(f)))
        .collect();
    if lines.is_empty() {
        return "measured sharing: none in this run file (`corescope run sharing` measures it)\n"
            .into();
    }
    format!("measured sharing (probe `sharing`):\n{}", lines.concat())
}

/// "topology says vs measured": where the run's measurements contradict its
/// topology (CPUs the `sharing` probe finds on one core that the topology puts on
/// two, or the reverse; NUMA nodes the `numa` probe's latency ranks otherwise
/// than the topology's packages do), "nothing measured differs" where nothing
/// does, and "not measured in this run" for what the run lacks.
pub fn topology_vs_measured(run: &crate::model::RunFile) -> String {
    use crate::measured_topology::{numa_check, sharing_check, Check};
    let sharing = sharing_check(run);
    let numa = numa_check(run);
    let mut lines = Vec::new();
    match &sharing {
        Check::NotMeasured(why) => lines.push(format!("cores: not measured in this run ({why})")),
        Check::Agrees(what) => lines.push(format!("cores: nothing measured differs ({what})")),
        Check::Differs(d) => lines.extend(d.iter().map(|d| {
            let (measured, says) = if d.measured_shared {
                ("share a core", "separate cores")
            } else {
                ("are on separate cores", "one core")
            };
            format!(
                "cores: CPUs {} and {} {measured} by measurement (probe `sharing`); the topology says {says} ({})",
                d.a, d.b, d.topology
            )
        })),
    }
    match &numa {
        Check::NotMeasured(why) => lines.push(format!("NUMA: not measured in this run ({why})")),
        Check::Agrees(what) => lines.push(format!("NUMA: nothing measured differs ({what})")),
        Check::Differs(d) => lines.extend(d.iter().map(|d| {
            format!(
                "NUMA: from node {}'s CPUs, node {} is farther than node {} by measured latency ({} vs {}, intervals apart); the topology puts node {} closer",
                d.from,
                d.near,
                d.far,
                crate::units::fmt_value("ns", d.near_ns),
                crate::units::fmt_value("ns", d.far_ns),
                d.near
            )
        })),
    }
    let head = if matches!(sharing, Check::Agrees(_)) && matches!(numa, Check::Agrees(_)) {
        "topology says vs measured: nothing measured differs\n"
    } else {
        "topology says vs measured:\n"
    };
    let body: String = lines.iter().map(|l| format!("  {l}\n")).collect();
    format!("{head}{body}")
}

/// Table of every OS CPU id → package, NUMA node, core, slot, caches.
///
/// The summary line comes first, then one row per OS index (CPUs that are
/// offline or outside the cpuset get a row saying so), then one line per kind
/// of cache.
pub fn topo_table(t: &Topology) -> String {
    let mut out = String::new();
    out.push_str(&t.summary());
    out.push('\n');
    if !t.source.is_empty() {
        out.push_str(&format!("source: {}\n", t.source));
    }
    if !t.levels.is_empty() {
        let levels: Vec<String> = t
            .levels
            .iter()
            .map(|l| format!("{} ×{}", l.name, l.arity))
            .collect();
        out.push_str(&format!("levels: {}\n", levels.join(" → ")));
    }
    out.push_str(&numbering_line(t));
    out.push_str(&kinds_line(t));

    let show_kind = t.pus.iter().any(|p| p.kind.is_some());
    let show_numa = t.pus.iter().any(|p| p.numa_node.is_some());
    let mut header = vec!["CPU", "pkg"];
    if show_numa {
        header.push("NUMA");
    }
    header.extend(["core", "slot", "caches (×n = CPUs sharing)", "allowed"]);
    if show_kind {
        header.push("kind");
    }

    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(WIDTH)
        .set_header(header.iter().map(Cell::new));

    let mut rows: Vec<(u32, Vec<String>)> = Vec::with_capacity(t.pus.len());
    for p in &t.pus {
        let mut row = vec![p.os_index.to_string(), p.package.to_string()];
        if show_numa {
            row.push(p.numa_node.map_or_else(|| "-".into(), |n| n.to_string()));
        }
        row.push(p.core_os_index.unwrap_or(p.core).to_string());
        row.push(p.slot.to_string());
        row.push(cache_list(t, p.os_index));
        row.push(if p.allowed { "yes" } else { "no" }.into());
        if show_kind {
            row.push(p.kind.clone().unwrap_or_else(|| "-".into()));
        }
        rows.push((p.os_index, row));
    }
    // Columns from `pkg` up to the caches column, and the caches column itself.
    let caches_col = header.len() - 2 - usize::from(show_kind);
    for &cpu in &t.unavailable {
        let mut row = vec![cpu.to_string()];
        row.extend(std::iter::repeat_n("-".to_string(), caches_col));
        row.push("absent".into());
        if show_kind {
            row.push("-".into());
        }
        rows.push((cpu, row));
    }
    rows.sort_by_key(|(cpu, _)| *cpu);
    for (_, row) in rows {
        table.add_row(row.into_iter().enumerate().map(|(i, c)| {
            let cell = Cell::new(c);
            // Numbers right-aligned: the id columns before the caches column.
            if i < caches_col {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    out.push_str(&table.to_string());
    out.push('\n');
    if !t.unavailable.is_empty() {
        out.push_str("absent: offline or outside the cpuset; where they sit is unknown\n");
    }
    out.push_str(&cache_summary(t));
    out
}

/// Which numbers the table shows: one convention for every level.
fn numbering_line(t: &Topology) -> String {
    let mut s = String::from(
        "numbering: the OS's (hwloc P#, `hwloc-calc --physical`); core ids repeat across packages",
    );
    if !t.logical_levels.is_empty() {
        s.push_str(&format!(
            "; {}: hwloc logical (L#), the OS gives none",
            t.logical_levels.join(", ")
        ));
    }
    s.push('\n');
    s
}

/// `CPU kinds, most performant first: P 0-11 (FrequencyMaxMHz=5000), E 12-19 (...)`.
fn kinds_line(t: &Topology) -> String {
    if t.cpu_kinds.is_empty() {
        return String::new();
    }
    let kinds: Vec<String> = t
        .cpu_kinds
        .iter()
        .map(|k| {
            let infos: Vec<String> = k
                .infos
                .iter()
                .filter(|(n, _)| n == "CoreType" || n == "FrequencyMaxMHz")
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            let mut s = format!("{} {}", k.label, Topology::format_cpu_list(&k.cpus));
            if !infos.is_empty() {
                s.push_str(&format!(" ({})", infos.join(", ")));
            }
            s
        })
        .collect();
    format!(
        "CPU kinds, most performant first (filled first): {}\n",
        kinds.join("; ")
    )
}

/// `L1d 48K ×1, L2 1M ×2, L3 32M ×16` for one CPU, or `-`.
fn cache_list(t: &Topology, os_index: u32) -> String {
    let caches = t.caches_of(os_index);
    if caches.is_empty() {
        return "-".into();
    }
    caches
        .iter()
        .map(|c| {
            format!(
                "{} {} ×{}",
                cache_name(c),
                size_short(c.size_bytes),
                c.pus.len()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `L1d`, `L2`, `L3` (data caches get a `d`; unified ones none).
fn cache_name(c: &Cache) -> String {
    if c.kind == "data" {
        format!("L{}d", c.level)
    } else {
        format!("L{}", c.level)
    }
}

/// `48K`, `1M`, `1280K`, `512` (bytes); binary units.
fn size_short(bytes: u64) -> String {
    const K: u64 = 1 << 10;
    for (unit, suffix) in [(K * K * K, "G"), (K * K, "M"), (K, "K")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    if bytes == 0 {
        "?".into()
    } else {
        format!("{bytes}B")
    }
}

/// One line per kind of cache: `L2 1M: 8 instances, each shared by 2 CPUs, 64 B lines, 16-way`.
fn cache_summary(t: &Topology) -> String {
    if t.caches.is_empty() {
        return "caches: unknown\n".into();
    }
    // (level, name, size, line, assoc) → sharing counts of the instances.
    type Key = (u8, String, u64, u32, i32);
    let mut groups: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for c in &t.caches {
        groups
            .entry((
                c.level,
                cache_name(c),
                c.size_bytes,
                c.line_bytes,
                c.associativity,
            ))
            .or_default()
            .push(c.pus.len());
    }
    let mut out = String::from("caches:\n");
    for ((_, name, size, line, assoc), shares) in groups {
        let (lo, hi) = (
            shares.iter().copied().min().unwrap_or(0),
            shares.iter().copied().max().unwrap_or(0),
        );
        let sharing = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}-{hi}")
        };
        let mut s = format!(
            "  {name} {}: {} instance{}, each shared by {sharing} CPU{}",
            size_short(size),
            shares.len(),
            if shares.len() == 1 { "" } else { "s" },
            if hi == 1 { "" } else { "s" }
        );
        if line > 0 {
            s.push_str(&format!(", {line} B lines"));
        }
        match assoc {
            -1 => s.push_str(", fully associative"),
            a if a > 0 => s.push_str(&format!(", {a}-way")),
            _ => {}
        }
        out.push_str(&s);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Estimate, Finding, ProbeResult, RunFile, Status};

    #[test]
    fn a_run_files_sharing_verdicts_are_listed_or_how_to_measure_them() {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        run.probes.retain(|p| p.id != "sharing");
        assert!(measured_sharing(&run).contains("corescope run sharing"));
        let e = Estimate {
            value: 0.52,
            lo: 0.50,
            hi: 0.55,
            n: 8,
        };
        let mut p = ProbeResult::new("sharing", "t", Status::Completed);
        p.findings.push(Finding::CoreSharing {
            a: 0,
            b: 1,
            shared: Some(true),
            kernel: "fma".into(),
            ratio: e,
            ratios: [("fma".to_string(), e)].into_iter().collect(),
            topology: "same cache".into(),
            topology_same_core: false,
        });
        run.probes.push(p);
        let text = measured_sharing(&run);
        assert!(
            text.contains("measured: CPUs 0 and 1 share a core (throughput 0.52× together, 95 % CI 0.50–0.55, fma), topology: separate cores (same cache)"),
            "{text}"
        );
    }

    #[test]
    fn sizes_are_short() {
        assert_eq!(size_short(48 * 1024), "48K");
        assert_eq!(size_short(1 << 20), "1M");
        assert_eq!(size_short(1280 * 1024), "1280K");
        assert_eq!(size_short(32 << 20), "32M");
        assert_eq!(size_short(0), "?");
        assert_eq!(size_short(100), "100B");
    }
}
