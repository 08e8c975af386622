//! The summary's key results per probe as short labelled items, in the manner of
//! hyperfine ("peak 2.997 Gops/s with 4 threads; 95 % of it already at 2"): every
//! figure named, no symbol strings. Pure: the run file in, phrases out; the layout
//! (wrapping, one screen) is `summary.rs`.

use super::terminal::plus_minus;
use super::words;
use crate::model::{Estimate, Finding, PairClass, ProbeResult, RunFile, Status, SummaryShape};
use crate::units::{fmt_num, fmt_value, threads};

/// A value with its unit and `±x%` when the interval is wider than 1 %.
pub fn est(unit: &str, e: &Estimate) -> String {
    format!("{}{}", fmt_value(unit, e.value), plus_minus(e))
}

/// The probe's key results as short items, most important first (the layout
/// joins them with `; `, wraps them and leaves out the last ones when the screen
/// is full).
pub fn probe_items(p: &ProbeResult, shape: &SummaryShape, run: &RunFile) -> Vec<String> {
    if p.status != Status::Completed && p.series.is_empty() && p.distributions.is_empty() {
        let why = p.reason.clone().unwrap_or_default();
        return vec![format!("{}: {why}", p.status.name())];
    }
    let mut items = shape_items(p, shape, run);
    // Every typed finding the shape's items did not cover, in short form; a
    // scaling shape shows every placement's figures, so not their comparisons.
    let covered = !items.is_empty();
    let placements_shown = covered && matches!(shape, SummaryShape::Scaling { .. });
    for f in &p.findings {
        if let Some(s) = short_finding(f, covered, placements_shown, &p.id) {
            items.push(s);
        }
    }
    if p.status != Status::Completed {
        items.insert(0, format!("[{}]", p.status.name()));
    }
    if items.is_empty() {
        // Findings in words only (version 1 files, untyped probes): the first ones.
        items.extend(p.findings.iter().filter_map(|f| match f {
            Finding::Note { text } => Some(plain_counts(text)),
            _ => None,
        }));
    }
    if items.is_empty() {
        items.push("no key result recorded (see `corescope report`)".into());
    }
    items
}

/// The items the probe's summary shape draws (empty for [`SummaryShape::FirstItem`]
/// and [`SummaryShape::Comparison`], whose findings speak for themselves).
fn shape_items(p: &ProbeResult, shape: &SummaryShape, run: &RunFile) -> Vec<String> {
    match *shape {
        SummaryShape::Scaling {
            families,
            by_placement,
            table2,
            latency_series,
        } => scaling_items(p, run, families, (by_placement, table2), latency_series),
        SummaryShape::PeakPerLevel { .. } => peak_items(p),
        SummaryShape::PlacedMedians {
            prefix,
            item_lead,
            item_parts,
            ..
        } => dist_items(p, prefix, item_lead, item_parts),
        SummaryShape::LockHandoff {
            uncontended,
            sleeping,
            spinning,
            part,
        } => lock_items(p, uncontended, (sleeping, spinning), part),
        SummaryShape::Medians => p
            .distributions
            .iter()
            .map(|d| format!("{} {}", d.name, est(&d.unit, &d.summary.median())))
            .collect(),
        SummaryShape::ValueWithCompanion {
            suffix,
            says,
            companion,
            companion_says,
        } => companion_items(p, (suffix, says), (companion, companion_says)),
        SummaryShape::Race {
            rates, round_trips, ..
        } => race_items(p, rates, round_trips),
        SummaryShape::Slowdowns { notes_with } => slowdown_items(p, notes_with),
        SummaryShape::CoreSharing => sharing_items(p),
        SummaryShape::PairClasses { classes } => pair_class_items(p, classes),
        SummaryShape::FirstItem
        | SummaryShape::Comparison { .. }
        | SummaryShape::TunerPick { .. } => Vec::new(),
    }
}

/// `1 CPU pairs` → `1 pair of CPUs`, `3 CPU pairs` → `3 pairs of CPUs` (older
/// run files' wording).
pub fn plain_counts(text: &str) -> String {
    text.replace(" 1 CPU pairs", " 1 pair of CPUs")
        .replace(" CPU pairs", " pairs of CPUs")
        .replace("classes of pairs of CPUs", "classes of CPU pairs")
}

/// A finding in a few words, or `None` when the summary shows it otherwise:
/// `covered` when the shape's items cover the probe's findings (comparisons
/// still shown, unless `placements_shown`: a scaling shape's items show every
/// placement's figures).
pub fn short_finding(
    f: &Finding,
    covered: bool,
    placements_shown: bool,
    probe: &str,
) -> Option<String> {
    match f {
        Finding::Scaling {
            what,
            unit,
            peak,
            peak_threads,
            peak_variant,
            saturation_threads,
            ..
        } if !covered => Some(format!(
            "{what} peak {} with {} ({peak_variant}){}",
            est(unit, peak),
            threads(*peak_threads),
            already(*saturation_threads, *peak_threads)
        )),
        Finding::Comparison {
            what,
            unit,
            a,
            b,
            ratio,
            outcome,
            ..
        } => {
            if placements_shown {
                return None;
            }
            let head = drop_parens(what.split([',', ':']).next().unwrap_or(what));
            Some(format!(
                "{head}: {}",
                words::comparison_short(a, b, unit, ratio, *outcome)
            ))
        }
        Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            ..
        } if !covered => Some(format!(
            "{what}, {cause}: {}",
            words::slowdown_short(ratio, *outcome)
        )),
        // A tuner's findings, whole: its summary shape draws no items of its own.
        Finding::TunerChoice { .. } | Finding::TuneStep { .. } if !covered => {
            Some(words::finding(f))
        }
        Finding::Value {
            what, unit, value, ..
        } if !covered => Some(format!(
            "{} {}",
            plain_counts(&drop_parens(what.trim_start_matches(&format!("{probe}/")))),
            est(unit, value)
        )),
        _ => None,
    }
}

/// `, 95 % of it already at 2` when fewer threads than the peak's reach 95 % of
/// it, else nothing.
pub fn already(saturation: f64, peak_at: f64) -> String {
    if saturation < peak_at {
        format!(", 95 % of it already at {}", fmt_num_int(saturation))
    } else {
        String::new()
    }
}

/// `2` for a whole number, else as `fmt_num`.
pub fn fmt_num_int(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        fmt_num(x)
    }
}

/// `linear`, or `linear, compact and scatter alike` (placements with the same
/// figures: the same CPUs here).
fn placements_words(names: &[&str]) -> String {
    match names {
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last} alike", init.join(", ")),
        [] => String::new(),
    }
}

/// Per placement of a family (`int/linear`, `int/scatter` …): `int peak 2.997
/// Gops/s with 4 threads, 95 % of it already at 2 (linear, compact and scatter
/// alike)`; placements with the same figures are named together.
fn families(p: &ProbeResult, names: &[&str]) -> Vec<String> {
    let mut items = Vec::new();
    for name in names {
        let prefix = format!("{name}/");
        // (placements, text of their figures)
        let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
        for s in p.series.iter().filter(|s| s.name.starts_with(&prefix)) {
            let Some((i, peak)) = (0..s.y.len())
                .filter_map(|i| s.estimate(i).map(|e| (i, e)))
                .filter(|(_, e)| e.value.is_finite())
                .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
            else {
                continue;
            };
            let sat =
                s.x.iter()
                    .zip(&s.y)
                    .filter(|(_, &y)| y >= 0.95 * peak.value)
                    .map(|(&x, _)| x)
                    .fold(f64::INFINITY, f64::min);
            let text = format!(
                "peak {} with {}{}",
                est(&s.y_name, &peak),
                threads(s.x[i]),
                already(sat, s.x[i])
            );
            let placement = &s.name[prefix.len()..];
            match groups.iter_mut().find(|g| g.1 == text) {
                Some(g) => g.0.push(placement),
                None => groups.push((vec![placement], text)),
            }
        }
        for (placements, text) in &groups {
            items.push(format!("{name} {text} ({})", placements_words(placements)));
        }
    }
    items
}

/// Seed 001's Table 2 in one item per kind, from one thread to the machine's CPUs
/// filled, with the source of MIPS and CPI: `int seed 001 (unbound): 3120 → 6200
/// MIPS, CPI 1.130 → 1.140, efficiency 8.7 % → 17 % of the machine's maximum, 1 →
/// 2 threads (from the kernel's instruction count)`.
fn seed001_items(p: &ProbeResult, kinds: &[&str], cpus: usize) -> Vec<String> {
    use crate::analysis::seed001::{one_and_full, table2};
    let mut items = Vec::new();
    for &kind in kinds {
        let Some(t) = table2(p, kind) else { continue };
        let Some((one, full)) = one_and_full(&t, cpus) else {
            continue;
        };
        let fig = |e: &Estimate| format!("{}{}", fmt_num(e.value), plus_minus(e));
        let mut parts = vec![format!("{} → {} MIPS", fig(&one.mips), fig(&full.mips))];
        if let (Some(a), Some(b)) = (one.cpi, full.cpi) {
            parts.push(format!("CPI {} → {}", fig(&a), fig(&b)));
        }
        if let (Some(a), Some(b)) = (one.efficiency, full.efficiency) {
            let pct = |e: &Estimate| format!("{} %{}", fmt_num(e.value), plus_minus(e));
            parts.push(format!(
                "efficiency {} → {} of the machine's maximum",
                pct(&a),
                pct(&b)
            ));
        }
        items.push(format!(
            "{kind} seed 001 ({}): {}, {} → {} ({})",
            t.placement,
            parts.join(", "),
            fmt_num_int(one.threads),
            threads(full.threads),
            t.source.label()
        ));
    }
    items
}

/// A scaling shape's items: the families `by_placement` per placement, the peak
/// of the other `families`, seed 001's Table 2 of the families in `table2`, and
/// the load latency per cache level from `latency_series`.
fn scaling_items(
    p: &ProbeResult,
    run: &RunFile,
    names: &[&str],
    (by_placement, table2): (&[&str], &[&str]),
    latency_series: Option<&str>,
) -> Vec<String> {
    let mut items = families(p, by_placement);
    for f in &p.findings {
        if let Finding::Scaling {
            what,
            unit,
            peak,
            peak_threads,
            ..
        } = f
        {
            if names.contains(&what.as_str()) && !by_placement.contains(&what.as_str()) {
                items.push(format!(
                    "{what} peak {} with {}",
                    est(unit, peak),
                    threads(*peak_threads)
                ));
            }
        }
    }
    items.extend(seed001_items(p, table2, run.topology.allowed_count()));
    if let Some(s) = latency_series.and_then(|name| p.series(name)) {
        items.extend(load_latency(s, run));
    }
    items
}

/// `load latency 1.200 ns in L1 (32.00 KiB), 4.100 ns in L2 (512.0 KiB), 95.00 ns
/// at 256.0 MiB`: inside each cache level (the largest working set that fits half
/// of it) and at the largest working set.
fn load_latency(s: &crate::model::Series, run: &RunFile) -> Option<String> {
    let mut levels: Vec<(u8, u64)> = run
        .topology
        .caches
        .iter()
        .map(|c| (c.level, c.size_bytes))
        .collect();
    levels.sort_unstable();
    levels.dedup_by_key(|l| l.0);
    let mut parts = Vec::new();
    for (level, size) in levels {
        let at =
            s.x.iter()
                .enumerate()
                .filter(|(_, &x)| x <= size as f64 / 2.0)
                .max_by(|a, b| a.1.total_cmp(b.1));
        if let Some(e) = at.and_then(|(i, _)| s.estimate(i)) {
            parts.push(format!(
                "{} in L{level} ({})",
                est(&s.y_name, &e),
                fmt_value("bytes", size as f64)
            ));
        }
    }
    let last = s.x.len().checked_sub(1)?;
    if let Some(e) = s.estimate(last) {
        parts.push(format!(
            "{} at {}",
            est(&s.y_name, &e),
            fmt_value("bytes", s.x[last])
        ));
    }
    (!parts.is_empty()).then(|| format!("load latency {}", parts.join(", ")))
}

/// Every ISA level's highest rate, fastest first: `avx512-fma-f64 114.9 GFLOP/s
/// with 2 threads, one thread 15.67 FLOP per cycle` (the headline names the
/// highest per precision).
fn peak_items(p: &ProbeResult) -> Vec<String> {
    let mut levels: Vec<(f64, String)> = p
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Scaling {
                what,
                unit,
                peak,
                peak_threads,
                ..
            } => {
                let per_cycle = p.findings.iter().find_map(|f| match f {
                    Finding::Value {
                        what: w,
                        unit: u,
                        value,
                        ..
                    } if w.starts_with(&format!("{what}:")) && u == "flops_per_cycle" => {
                        Some(format!(
                            ", one thread {} FLOP per cycle{}",
                            fmt_num(value.value),
                            plus_minus(value)
                        ))
                    }
                    _ => None,
                });
                Some((
                    peak.value,
                    format!(
                        "{what} {} with {}{}",
                        est(unit, peak),
                        threads(*peak_threads),
                        per_cycle.unwrap_or_default()
                    ),
                ))
            }
            _ => None,
        })
        .collect();
    levels.sort_by(|a, b| b.0.total_cmp(&a.0));
    levels.into_iter().map(|(_, s)| s).collect()
}

/// One item per `<where>` of the `prefix<where>/<part>` distributions: `child on
/// same-cpu: pthread_create returns in 7.010 µs, the child runs after 10.60 µs`
/// (`lead` before the where, each part's median after its label).
fn dist_items(p: &ProbeResult, prefix: &str, lead: &str, parts: &[(&str, &str)]) -> Vec<String> {
    let mut wheres: Vec<&str> = Vec::new();
    for d in &p.distributions {
        if let Some((w, _)) = d.name.strip_prefix(prefix).and_then(|r| r.rsplit_once('/')) {
            if !wheres.contains(&w) {
                wheres.push(w);
            }
        }
    }
    wheres
        .iter()
        .filter_map(|w| {
            let vals: Vec<String> = parts
                .iter()
                .filter_map(|(part, label)| {
                    let name = format!("{prefix}{w}/{part}");
                    p.distributions
                        .iter()
                        .find(|d| d.name == name)
                        .map(|d| format!("{label} {}", est(&d.unit, &d.summary.median())))
                })
                .collect();
            (!vals.is_empty()).then(|| format!("{lead} {w}: {}", vals.join(", ")))
        })
        .collect()
}

/// A lock's uncontended lock+unlock per implementation, then the hand-over to a
/// sleeping and to a spinning waiter per where.
fn lock_items(
    p: &ProbeResult,
    uncontended: &str,
    (sleeping, spinning): (&str, &str),
    part: &str,
) -> Vec<String> {
    let unc: Vec<String> = p
        .distributions
        .iter()
        .filter_map(|d| {
            d.name
                .strip_prefix(uncontended)
                .map(|n| format!("{n} {}", est(&d.unit, &d.summary.median())))
        })
        .collect();
    let mut items = Vec::new();
    if !unc.is_empty() {
        items.push(format!("uncontended lock+unlock: {}", unc.join(", ")));
    }
    items.extend(dist_items(
        p,
        sleeping,
        "handoff to a sleeping waiter on",
        &[(part, "")],
    ));
    items.extend(dist_items(
        p,
        spinning,
        "handoff to a spinning waiter on",
        &[(part, "")],
    ));
    items.iter().map(|i| i.replace(":  ", ": ")).collect()
}

/// `tsc: a read takes 9.500 ns, step 0.400 ns` per subject (a clock): the value
/// named `<subject><suffix>`, with the one named `<subject><companion>`.
fn companion_items(
    p: &ProbeResult,
    (suffix, says): (&str, &str),
    (companion, companion_says): (&str, &str),
) -> Vec<String> {
    let mut items = Vec::new();
    for f in &p.findings {
        if let Finding::Value {
            what, unit, value, ..
        } = f
        {
            let Some(clock) = what.strip_suffix(suffix) else {
                continue;
            };
            let step = p.findings.iter().find_map(|g| match g {
                Finding::Value {
                    what: w,
                    unit: u,
                    value: v,
                    ..
                } if *w == format!("{clock}{companion}") => Some(est(u, v)),
                _ => None,
            });
            items.push(format!(
                "{clock}: {says} {}{}",
                est(unit, value),
                step.map(|s| format!(", {companion_says} {s}"))
                    .unwrap_or_default()
            ));
        }
    }
    items
}

/// `one cache line handed between two CPUs by compare-and-swap: 116.0 ns, 1 pair
/// of CPUs` per class of pairs (a value named `<class>: <pairs>`).
fn pair_class_items(p: &ProbeResult, classes: &[PairClass]) -> Vec<String> {
    p.findings
        .iter()
        .filter_map(|f| match f {
            Finding::Value {
                what, unit, value, ..
            } => {
                let (name, pairs) = what.split_once(": ")?;
                let how = classes
                    .iter()
                    .find(|c| c.name == name)
                    .map_or(name, |c| c.item);
                Some(format!(
                    "{how}: {}, {}",
                    est(unit, value),
                    plain_counts(&format!(" {pairs}")).trim()
                ))
            }
            _ => None,
        })
        .collect()
}

/// The best rate per event size over every implementation and batch (the series
/// `<rates><impl>/<size>`), then the round trips' medians (`<round_trips><impl>/…`).
fn race_items(p: &ProbeResult, rates: &str, round_trips: &str) -> Vec<String> {
    let mut best: Vec<(String, String, f64, Estimate, String)> = Vec::new();
    for s in &p.series {
        let Some(rest) = s.name.strip_prefix(rates) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let (Some(imp), Some(size)) = (parts.first(), parts.get(1)) else {
            continue;
        };
        for i in 0..s.y.len() {
            let Some(e) = s.estimate(i) else { continue };
            match best.iter_mut().find(|b| b.0 == *size) {
                Some(b) if b.3.value >= e.value => {}
                Some(b) => {
                    *b = (
                        size.to_string(),
                        imp.to_string(),
                        s.x[i],
                        e,
                        s.y_name.clone(),
                    )
                }
                None => best.push((
                    size.to_string(),
                    imp.to_string(),
                    s.x[i],
                    e,
                    s.y_name.clone(),
                )),
            }
        }
    }
    let mut items: Vec<String> = best
        .iter()
        .map(|(size, imp, batch, e, unit)| {
            format!(
                "{size} events: best {} ({imp}, batch {})",
                est(unit, e),
                fmt_num_int(*batch)
            )
        })
        .collect();
    let rt: Vec<String> = p
        .distributions
        .iter()
        .filter_map(|d| {
            let imp = d.name.strip_prefix(round_trips)?.split('/').next()?;
            Some(format!("{imp} {}", est(&d.unit, &d.summary.median())))
        })
        .collect();
    if !rt.is_empty() {
        items.push(format!("round trip: {}", rt.join(", ")));
    }
    items
}

/// The notes holding `notes_with` (older files' wording of a result), then the
/// [`slowdowns`].
fn slowdown_items(p: &ProbeResult, notes_with: Option<&str>) -> Vec<String> {
    let mut items: Vec<String> = p
        .findings
        .iter()
        .filter_map(|f| match (f, notes_with) {
            (Finding::Note { text }, Some(w)) if text.contains(w) => Some(drop_parens(text)),
            _ => None,
        })
        .collect();
    items.extend(slowdowns(p));
    items
}

/// What each spinner did to the active thread (`spinner on other-core, a plain
/// spin loop: 1.01× ±5%, no effect shown`), worded from each slowdown's verdict;
/// seed 003's interference first: the relation that shares the most, the one
/// sharing a CPU (the scheduler's time slicing) last.
pub fn slowdowns(p: &ProbeResult) -> Vec<String> {
    let mut slowdowns: Vec<(usize, String)> = Vec::new();
    for f in &p.findings {
        if let Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            ..
        } = f
        {
            let place = what.rsplit(' ').next().unwrap_or(what);
            let shown = if place == "same-cpu" {
                "same-cpu (time-sliced)"
            } else {
                place
            };
            slowdowns.push((
                spin_rank(place),
                format!(
                    "spinner on {shown}, {cause}: {}",
                    words::slowdown_short(ratio, *outcome)
                ),
            ));
        }
    }
    slowdowns.sort_by_key(|(rank, _)| *rank);
    slowdowns.into_iter().map(|(_, item)| item).collect()
}

/// Order of the spinner's placements in the summary: a shared core first.
fn spin_rank(place: &str) -> usize {
    match place {
        "smt-sibling" => 0,
        "other-core" => 1,
        "other-package" => 2,
        "same-cpu" => 4,
        _ => 3,
    }
}

/// Pairs of CPUs up to which the summary names each pair's core-sharing verdict;
/// beyond, it counts them.
const CORE_SHARING_PAIRS_NAMED: usize = 3;

/// One pair's core-sharing verdict (`Finding::CoreSharing`), as the summary words it.
pub struct SharingPair<'p> {
    pub a: u32,
    pub b: u32,
    pub shared: Option<bool>,
    pub kernel: &'p str,
    pub ratio: &'p Estimate,
    pub topology_same_core: bool,
}

impl SharingPair<'_> {
    /// The measurement decided, and not as the topology says.
    pub fn disagrees(&self) -> bool {
        self.shared.is_some_and(|s| s != self.topology_same_core)
    }
}

/// The core-sharing verdicts of the probe's pairs, in finding order (for the
/// headline and the items alike).
pub fn core_sharing_pairs(p: &ProbeResult) -> Vec<SharingPair<'_>> {
    p.findings
        .iter()
        .filter_map(|f| match f {
            Finding::CoreSharing {
                a,
                b,
                shared,
                kernel,
                ratio,
                topology_same_core,
                ..
            } => Some(SharingPair {
                a: *a,
                b: *b,
                shared: *shared,
                kernel,
                ratio,
                topology_same_core: *topology_same_core,
            }),
            _ => None,
        })
        .collect()
}

/// What a pair's verdict says of its two CPUs.
pub fn sharing_says(shared: Option<bool>) -> &'static str {
    match shared {
        Some(true) => "share a core",
        Some(false) => "run on separate cores",
        None => "are not told apart as one core or two",
    }
}

/// The dependent chains' worst slowdown, and the throughput kernels' verdicts of
/// the pairs (each pair up to [`CORE_SHARING_PAIRS_NAMED`], counts beyond).
fn sharing_items(p: &ProbeResult) -> Vec<String> {
    let mut items = matrix_worst(p);
    let pairs = core_sharing_pairs(p);
    if pairs.len() <= CORE_SHARING_PAIRS_NAMED {
        for pair in &pairs {
            let topo = if pair.topology_same_core {
                "one core"
            } else {
                "separate cores"
            };
            items.push(format!(
                "CPUs {} and {} {} ({} throughput {} together), topology says {topo}",
                pair.a,
                pair.b,
                sharing_says(pair.shared),
                pair.kernel,
                words::ratio_short(pair.ratio)
            ));
        }
    } else {
        let count = |v: Option<bool>| pairs.iter().filter(|p| p.shared == v).count();
        let disagree = pairs.iter().filter(|p| p.disagrees()).count();
        items.push(format!(
            "{} pairs of CPUs: {} share a core, {} run on separate cores, {} not told apart; \
             {disagree} disagree with the topology",
            pairs.len(),
            count(Some(true)),
            count(Some(false)),
            count(None)
        ));
    }
    items
}

/// The worst off-diagonal slowdown of each pair matrix of slowdowns (`sharing/int`,
/// unit `x_alone`).
fn matrix_worst(p: &ProbeResult) -> Vec<String> {
    let mut items = Vec::new();
    for m in p
        .matrices
        .iter()
        .filter(|m| !m.name.ends_with("/spread") && m.unit == "x_alone")
    {
        let worst = m
            .values
            .iter()
            .enumerate()
            .flat_map(|(r, row)| {
                row.iter()
                    .enumerate()
                    .filter(move |(c, _)| *c != r)
                    .filter_map(|(_, v)| *v)
            })
            .fold(f64::NAN, f64::max);
        if worst.is_finite() {
            items.push(format!(
                "{}: the worst pair of CPUs takes {}× as long as one alone",
                m.name,
                crate::units::fmt_ratio(worst)
            ));
        }
    }
    let notes = p
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::Note { .. }))
        .count();
    if notes > 0 && items.is_empty() {
        items.push(format!("{notes} notes (see `corescope report`)"));
    }
    items
}

/// `s` without its parenthesised asides (`fft 2^14 (a worker per butterfly)` →
/// `fft 2^14`), spaces tidied.
pub fn drop_parens(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => o.push(c),
            _ => {}
        }
    }
    o.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ;", ";")
        .replace(" :", ":")
        .replace(" ,", ",")
}
