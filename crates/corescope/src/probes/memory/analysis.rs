//! The memory probe's findings (pure): scaling and placements of each kernel, team
//! against per-thread timing, first touch, huge pages, and the cache boundaries the
//! working-set latency shows.

use super::plan::ws_latency_series;
use crate::analysis;
use crate::memguard;
use crate::model::{Finding, Notes, ProbeResult};
use crate::probes::PlanCtx;

/// Latency steps at least this large between neighbouring working sets are named
/// in the findings.
pub const LATENCY_STEP_RATIO: f64 = 1.3;

/// Findings from a latency curve: for every cache of the topology, latency inside
/// (≤ half its size) vs beyond (≥ twice its size), and every step between
/// neighbouring working sets of at least [`LATENCY_STEP_RATIO`].
pub fn cache_findings(x: &[f64], y: &[f64], caches: &[(u8, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    for &(level, size) in caches {
        let inside = x.iter().zip(y).rfind(|(&b, _)| b <= size as f64 / 2.0);
        let beyond = x.iter().zip(y).find(|(&b, _)| b >= size as f64 * 2.0);
        match (inside, beyond) {
            (Some((&bi, &li)), Some((&bb, &lb))) if li > 0.0 => out.push(format!(
                "L{level} ({}): {:.1} ns per access at {} → {:.1} ns at {} ({:.1}×){}",
                memguard::human(size),
                li,
                memguard::human(bi as u64),
                lb,
                memguard::human(bb as u64),
                lb / li,
                if lb / li >= LATENCY_STEP_RATIO {
                    ": the boundary shows where the topology says"
                } else {
                    ": no clear boundary there"
                }
            )),
            _ => out.push(format!(
                "L{level} ({}): outside the measured working sets",
                memguard::human(size)
            )),
        }
    }
    let steps: Vec<String> = x
        .windows(2)
        .zip(y.windows(2))
        .filter(|(_, l)| l[0] > 0.0 && l[1] / l[0] >= LATENCY_STEP_RATIO)
        .map(|(b, l)| {
            format!(
                "{} → {} (×{:.1})",
                memguard::human(b[0] as u64),
                memguard::human(b[1] as u64),
                l[1] / l[0]
            )
        })
        .collect();
    if steps.is_empty() {
        out.push("latency: no step of 30 % or more between neighbouring working sets".into());
    } else {
        out.push(format!("latency steps: {}", steps.join(", ")));
    }
    out
}

/// Distinct data/unified cache levels of a topology as (level, size of one instance).
pub fn cache_levels(topo: &crate::topology::Topology) -> Vec<(u8, u64)> {
    let mut v: Vec<(u8, u64)> = Vec::new();
    for c in &topo.caches {
        if !v.iter().any(|&(l, _)| l == c.level) {
            v.push((c.level, c.size_bytes));
        }
    }
    v.sort_unstable();
    v
}

/// Every finding of a merged result.
pub(super) fn findings(result: &ProbeResult, ctx: &PlanCtx) -> Vec<Finding> {
    let mut out: Notes<Finding> = Notes::default();
    let cpus = ctx.cpus();
    for what in ["read", "write", "copy", "triad"] {
        let found = [
            analysis::scaling(result, what, "bytes_per_s", cpus),
            analysis::placements(result, what, "bytes_per_s", cpus as f64),
        ];
        out.extend(found.into_iter().flatten());
    }
    out.push(
            "byte counting as STREAM (copy 16 B, triad 24 B per element); write-allocate traffic is not counted",
        );
    let found = [
        team_vs_threads(result, cpus),
        first_touch(result, ctx),
        huge_pages(result),
        chase_pages(result),
    ];
    out.extend(found.into_iter().flatten());
    if let Some(s) = result.series(ws_latency_series(true)) {
        let (x, y) = (s.x.clone(), s.y.clone());
        out.extend(cache_findings(&x, &y, &cache_levels(&ctx.topo)));
    }
    if let (Some(one), Some(all)) = (result.series("ws-read/1t"), result.series("ws-read/all")) {
        if let (Some(&m1), Some(&ma)) = (one.y.last(), all.y.last()) {
            out.push(format!(
                "largest working set ({}): one thread reads {}, all {cpus} CPUs {} ({:.2}×)",
                memguard::human(one.x.last().copied().unwrap_or(0.0) as u64),
                crate::units::fmt_value("bytes_per_s", m1),
                crate::units::fmt_value("bytes_per_s", ma),
                ma / m1
            ));
        }
    }
    out.0
}

/// The placement compared first in a variant comparison: the first measured one
/// that is pinned, else the first.
fn reference_placement(result: &ProbeResult, base: &str, x: f64) -> Option<String> {
    let names: Vec<&str> = result
        .series
        .iter()
        .filter_map(|s| s.name.strip_prefix(base)?.strip_prefix('/'))
        .collect();
    names
        .iter()
        .find(|p| **p != "unbound" && result.estimate(&format!("{base}/{p}"), x).is_some())
        .or_else(|| names.first())
        .map(|p| p.to_string())
}

/// The largest thread count ≤ CPUs at which `variant` was measured.
fn variant_threads(result: &ProbeResult, variant: &str, cpus: usize) -> Option<f64> {
    result
        .series
        .iter()
        .filter(|s| s.name.starts_with(&format!("{variant}/")))
        .flat_map(|s| s.x.iter().copied())
        .filter(|&x| x <= cpus as f64)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

/// Read by the owner vs read of blocks first written by the main thread.
fn first_touch(result: &ProbeResult, ctx: &PlanCtx) -> Option<Finding> {
    let x = variant_threads(result, "read-main-init", ctx.cpus())?;
    let p = reference_placement(result, "read-main-init", x)?;
    let context = if ctx.topo.numa_nodes <= 1 {
        "1 NUMA node: no difference expected".to_string()
    } else {
        format!("{} NUMA nodes", ctx.topo.numa_nodes)
    };
    analysis::compare(
        result,
        &format!("first touch, read with {} ({p})", crate::units::threads(x)),
        "bytes_per_s",
        ("owner's first touch", &format!("read/{p}"), x),
        (
            "main thread's first touch",
            &format!("read-main-init/{p}"),
            x,
        ),
        Some(context),
    )
}

/// Read with huge pages advised vs refused, interleaved.
fn huge_pages(result: &ProbeResult) -> Option<Finding> {
    let x = variant_threads(result, "read-thp", usize::MAX)?;
    let p = reference_placement(result, "read-thp", x)?;
    let granted = match result
        .params
        .get("thp_test_block_huge_fraction")
        .and_then(|v| v.as_f64())
    {
        Some(g) => format!(
            "THP mode {}; the kernel backed {:.0} % of a test block with huge pages",
            result
                .params
                .get("thp_mode")
                .and_then(|v| v.as_str())
                .unwrap_or("unknown"),
            g * 100.0
        ),
        None => "whether the kernel granted huge pages could not be read".into(),
    };
    // What the measured blocks had, where smaps said.
    let share = |k: &str| {
        result
            .estimate(&format!("{k}-huge-share/{p}"), x)
            .map(|e| format!("{:.0} %", e.value * 100.0))
    };
    let granted = match (share("read-thp"), share("read-nothp")) {
        (Some(a), Some(b)) => format!(
            "{granted}; the measured blocks (first thread's, median over rounds): {a} backed by huge pages with MADV_HUGEPAGE, {b} with MADV_NOHUGEPAGE"
        ),
        _ => granted,
    };
    analysis::compare(
        result,
        &format!("huge pages, read with {} ({p})", crate::units::threads(x)),
        "bytes_per_s",
        ("MADV_HUGEPAGE", &format!("read-thp/{p}"), x),
        ("MADV_NOHUGEPAGE", &format!("read-nothp/{p}"), x),
        Some(granted),
    )
}

/// The chase at the largest working set with huge pages requested vs no advice,
/// interleaved: past the TLBs' reach the difference is the page walks' cost.
fn chase_pages(result: &ProbeResult) -> Option<Finding> {
    let default = result.series(ws_latency_series(false))?;
    let x = *default.x.last()?;
    let share = result
        .estimate("ws-latency-huge-share/1t", x)
        .map(|e| {
            format!(
                "the chase's block was {:.0} % backed by huge pages with MADV_HUGEPAGE (median over rounds); ",
                e.value * 100.0
            )
        })
        .unwrap_or_default();
    analysis::compare(
        result,
        &format!("pointer chase over {}, pages", memguard::human(x as u64)),
        "ns",
        ("MADV_HUGEPAGE", ws_latency_series(true), x),
        ("no advice", ws_latency_series(false), x),
        Some(format!(
            "{share}a difference is the cost of page walks, which the `ws-latency/1t` series leaves out"
        )),
    )
}

/// The team figure (first start → last end) vs the sum of the threads' own rates,
/// for read at the CPU count: a gap is start skew or imbalance, not the kernel.
fn team_vs_threads(result: &ProbeResult, cpus: usize) -> Option<Finding> {
    let x = cpus as f64;
    let p = reference_placement(result, "read", x)?;
    analysis::compare(
        result,
        &format!(
            "read with {} ({p}), team timing vs per-thread timing",
            crate::units::threads(cpus as f64)
        ),
        "bytes_per_s",
        ("per-thread sum", &format!("read-per-thread-sum/{p}"), x),
        ("team", &format!("read/{p}"), x),
        Some("a difference is start skew or imbalance between threads".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_findings_name_boundaries() {
        let x = [16384.0, 32768.0, 65536.0, 131072.0, 1048576.0, 4194304.0];
        let y = [1.0, 1.0, 3.0, 3.2, 3.3, 80.0];
        let f = cache_findings(&x, &y, &[(1, 32768), (2, 524288), (3, 1 << 30)]);
        assert!(f[0].starts_with("L1d") || f[0].starts_with("L1"), "{f:?}");
        assert!(f[0].contains("boundary shows"), "{f:?}");
        assert!(f[1].contains("no clear boundary"), "{f:?}");
        assert!(f[2].contains("outside the measured"), "{f:?}");
        let steps = f.last().unwrap();
        assert!(
            steps.contains("32.00 KiB → 64.00 KiB") && steps.contains("×3.0"),
            "{steps}"
        );
    }
}
