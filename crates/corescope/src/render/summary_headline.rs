//! Each probe's headline for the summary: its key result with its interval in one
//! short line of labelled words (`f64 114.9 GFLOP/s (avx512-fma, 2 threads)`).
//! A probe gets several wordings, richest first; the layout (`summary.rs`) shows
//! the first that fits its line. Pure: typed findings, series, distributions and
//! tables in, phrases out. Every number is formatted as the rest of the summary
//! formats it (`est`, `fmt_value`, the short verdict words of `words`), and every
//! ratio is worded from its finding's own verdict.

use super::summary_items::{
    already, core_sharing_pairs, drop_parens, est, plain_counts, sharing_says, short_finding,
    slowdowns,
};
use super::terminal::plus_minus;
use super::words;
use crate::model::{Estimate, Finding, PairClass, ProbeResult, SummaryShape, Table};
use crate::units::{fmt_num, fmt_value, threads, unit_scale};

/// The probe's headline wordings, richest first, drawn by its summary shape
/// (empty when the shape has no headline or the probe no typed result to lead
/// with: the layout then leads with its first item).
pub fn headlines(p: &ProbeResult, shape: &SummaryShape) -> Vec<String> {
    let mut heads = match *shape {
        SummaryShape::Scaling { families, .. } => scaling_heads(p, families),
        SummaryShape::PeakPerLevel { suffixes } => peak_heads(p, suffixes),
        SummaryShape::PlacedMedians {
            prefix,
            head_part,
            head_lead,
            ..
        } => dist_heads(p, prefix, head_part, head_lead),
        SummaryShape::LockHandoff {
            uncontended,
            sleeping,
            spinning,
            part,
        } => lock_heads(p, uncontended, (sleeping, spinning), part),
        SummaryShape::PairClasses { classes } => pair_class_heads(p, classes),
        SummaryShape::CoreSharing => sharing_heads(p),
        SummaryShape::Slowdowns { .. } => slowdown_heads(p),
        SummaryShape::Race { ours, .. } => race_heads(p, ours),
        SummaryShape::TunerPick {
            first_stage,
            last_stage,
        } => tune_heads(p, first_stage, last_stage),
        SummaryShape::Comparison { picks } => picks
            .iter()
            .flat_map(|pick| comparison_heads(p, |a, b| pick.accepts(a, b)))
            .collect(),
        SummaryShape::FirstItem
        | SummaryShape::Medians
        | SummaryShape::ValueWithCompanion { .. } => Vec::new(),
    };
    heads.retain(|h| !h.is_empty());
    heads.dedup();
    heads
}

/// An item the headline already states: an item starting with `item` is left out
/// after a headline that holds every one of `head` (the same figures).
#[derive(Debug, Clone, PartialEq)]
pub struct Restated {
    pub item: String,
    pub head: Vec<String>,
}

impl Restated {
    /// Whether `item` says nothing that `head` does not.
    pub fn by(&self, head: &str, item: &str) -> bool {
        item.starts_with(&self.item) && self.head.iter().all(|h| head.contains(h.as_str()))
    }
}

/// The items of the shape that a headline may state already: a scaling family's
/// placement with the family's peak (`int peak 3.560 Gops/s with 6 threads, 95 %
/// of it already at 2 (linear, …)` after `peak int 3.560 Gops/s, … with 6
/// threads, 95 % of it already at 2`), a level with its precision's best.
pub fn restated(p: &ProbeResult, shape: &SummaryShape) -> Vec<Restated> {
    match *shape {
        SummaryShape::Scaling { families, .. } => scaling_found(p, families)
            .into_iter()
            .map(|(what, unit, peak, at, sat)| {
                let value = est(unit, peak);
                // One thread count for all (`… with 6 threads`), else each its own.
                let mut head = if same_threads(p, families) {
                    vec![format!("{what} {value}"), format!("with {}", threads(at))]
                } else {
                    vec![format!("{what} {value} with {}", threads(at))]
                };
                let more = already(sat, at);
                if !more.is_empty() {
                    head.push(more.trim_start_matches(", ").to_string());
                }
                Restated {
                    item: format!("{what} peak {value} with {}{more} (", threads(at)),
                    head,
                }
            })
            .collect(),
        SummaryShape::PeakPerLevel { suffixes } => suffixes
            .iter()
            .filter_map(|prec| best_level(p, prec))
            .map(|best| Restated {
                item: best.item,
                head: vec![best.rich],
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `prefix` + the first n parts joined with `, ` + `suffix`, for n from all the
/// parts down to one: the same statement with fewer figures.
fn shrinking(prefix: &str, parts: &[String], suffix: &str) -> Vec<String> {
    (1..=parts.len())
        .rev()
        .map(|n| format!("{prefix}{}{suffix}", parts[..n].join(", ")))
        .collect()
}

/// `4.356–5.408 ns`: the lowest to the highest of some values in one scale, or the
/// value with its interval when there is one value.
fn span(unit: &str, values: &[&Estimate]) -> Option<String> {
    let lo = values.iter().map(|e| e.value).fold(f64::INFINITY, f64::min);
    let hi = values
        .iter()
        .map(|e| e.value)
        .fold(f64::NEG_INFINITY, f64::max);
    match values {
        [] => None,
        [one] => Some(est(unit, one)),
        _ if lo == hi => Some(fmt_value(unit, lo)),
        _ => {
            let (f, label) = unit_scale(unit, hi);
            Some(format!("{}–{} {label}", fmt_num(lo / f), fmt_num(hi / f)))
        }
    }
}

/// The scaling findings of the families named, in that order: (family, unit,
/// peak, its threads, the threads reaching 95 % of it).
fn scaling_found<'p>(
    p: &'p ProbeResult,
    families: &[&str],
) -> Vec<(&'p str, &'p str, &'p Estimate, f64, f64)> {
    families
        .iter()
        .filter_map(|fam| {
            p.findings.iter().find_map(|f| match f {
                Finding::Scaling {
                    what,
                    unit,
                    peak,
                    peak_threads,
                    saturation_threads,
                    ..
                } if what == fam => Some((
                    what.as_str(),
                    unit.as_str(),
                    peak,
                    *peak_threads,
                    *saturation_threads,
                )),
                _ => None,
            })
        })
        .collect()
}

/// Whether the families' peaks are at one thread count.
fn same_threads(p: &ProbeResult, families: &[&str]) -> bool {
    let found = scaling_found(p, families);
    found
        .iter()
        .all(|f| Some(f.3) == found.first().map(|g| g.3))
}

/// `peak int 3.560 Gops/s, fp 2.404 Gops/s with 6 threads, 95 % of it already at
/// 2`: the scaling findings of the families named, in that order.
fn scaling_heads(p: &ProbeResult, families: &[&str]) -> Vec<String> {
    let found = scaling_found(p, families);
    let Some(first) = found.first() else {
        return Vec::new();
    };
    let same_threads = found.iter().all(|f| f.3 == first.3);
    let same_saturation = found.iter().all(|f| f.4 == first.4);
    if !same_threads {
        let parts: Vec<String> = found
            .iter()
            .map(|(w, u, e, t, _)| format!("{w} {} with {}", est(u, e), threads(*t)))
            .collect();
        return shrinking("peak ", &parts, "");
    }
    let parts: Vec<String> = found
        .iter()
        .map(|(w, u, e, _, _)| format!("{w} {}", est(u, e)))
        .collect();
    let with = format!(" with {}", threads(first.3));
    let mut heads = Vec::new();
    if same_saturation && first.4 < first.3 {
        let already = format!(
            "{with}, 95 % of it already at {}",
            super::summary_items::fmt_num_int(first.4)
        );
        heads.extend(shrinking("peak ", &parts, &already));
    }
    heads.extend(shrinking("peak ", &parts, &with));
    // Longest first, so the layout takes the most figures that fit.
    heads.sort_by_key(|h| std::cmp::Reverse(h.chars().count()));
    heads
}

/// The highest rate per precision (`f64`, `f32`: the levels' suffixes) with the
/// ISA level and thread count that reach it, and one thread's FLOP per cycle at
/// that level.
fn peak_heads(p: &ProbeResult, suffixes: &[&str]) -> Vec<String> {
    let per_prec: Vec<BestLevel> = suffixes.iter().filter_map(|s| best_level(p, s)).collect();
    match per_prec.as_slice() {
        [] => Vec::new(),
        [one] => vec![one.rich.clone(), one.short.clone()],
        [a, b, ..] => vec![
            format!("{}; {}", a.rich, b.rich),
            format!("{}; {}", a.rich, b.short),
            format!("{}, {}", a.short, b.short),
            a.rich.clone(),
            a.short.clone(),
        ],
    }
}

/// The fastest level of one precision in the headline's words (`short`, and
/// `rich` with one thread's FLOP per cycle) and in its item's (`item`, as
/// `summary_items::peak_items` words it).
struct BestLevel {
    short: String,
    rich: String,
    item: String,
}

/// The fastest of the levels named `<level>-<prec>`.
fn best_level(p: &ProbeResult, prec: &str) -> Option<BestLevel> {
    let (what, unit, peak, t) = p
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Scaling {
                what,
                unit,
                peak,
                peak_threads,
                ..
            } if what.ends_with(prec) => Some((what, unit, peak, *peak_threads)),
            _ => None,
        })
        .max_by(|a, b| a.2.value.total_cmp(&b.2.value))?;
    let isa = what
        .strip_suffix(prec)
        .map(|s| s.trim_end_matches('-'))
        .filter(|s| !s.is_empty())
        .unwrap_or(what);
    let short = format!("{prec} {} ({isa}, {})", est(unit, peak), threads(t));
    let per_cycle = p.findings.iter().find_map(|f| match f {
        Finding::Value {
            what: w,
            unit: u,
            value,
            ..
        } if w.starts_with(&format!("{what}:")) && u == "flops_per_cycle" => Some(format!(
            "one thread {} FLOP per cycle{}",
            fmt_num(value.value),
            plus_minus(value)
        )),
        _ => None,
    });
    let with = |s: &str| match &per_cycle {
        Some(c) => format!("{s}, {c}"),
        None => s.to_string(),
    };
    Some(BestLevel {
        rich: with(&short),
        item: with(&format!("{what} {} with {}", est(unit, peak), threads(t))),
        short,
    })
}

/// `a new thread runs after 11.83 µs on same-cpu, 35.43 µs on other-core`: the
/// median of the `prefix<where>/<part>` distributions, one figure per where.
fn dist_heads(p: &ProbeResult, prefix: &str, part: &str, lead: &str) -> Vec<String> {
    let parts: Vec<String> = p
        .distributions
        .iter()
        .filter_map(|d| {
            let w = d
                .name
                .strip_prefix(prefix)?
                .strip_suffix(&format!("/{part}"))?;
            let v = est(&d.unit, &d.summary.median());
            Some(if w == "unpinned" {
                format!("{v} unpinned")
            } else {
                format!("{v} on {w}")
            })
        })
        .collect();
    shrinking(&format!("{lead} "), &parts, "")
}

/// Uncontended lock+unlock over the implementations (`<uncontended><impl>`), then
/// the hand-over to a sleeping and to a spinning waiter (`<sleeping><where>/<part>`,
/// `<spinning><where>/<part>`) on another core (or wherever measured).
fn lock_heads(
    p: &ProbeResult,
    uncontended: &str,
    (sleeping, spinning): (&str, &str),
    part: &str,
) -> Vec<String> {
    let dist = |name: &str| {
        p.distributions
            .iter()
            .find(|d| d.name == name)
            .map(|d| (d.unit.clone(), d.summary.median()))
    };
    let unc: Vec<(String, Estimate)> = p
        .distributions
        .iter()
        .filter(|d| d.name.starts_with(uncontended))
        .map(|d| (d.unit.clone(), d.summary.median()))
        .collect();
    let unit = unc.first().map(|u| u.0.clone()).unwrap_or_default();
    let Some(range) = span(&unit, &unc.iter().map(|u| &u.1).collect::<Vec<_>>()) else {
        return Vec::new();
    };
    let lock = format!("lock+unlock {range} uncontended");
    let wheres = ["other-core", "unpinned", "same-cpu"];
    let sleeping = wheres
        .iter()
        .find_map(|w| dist(&format!("{sleeping}{w}/{part}")).map(|(u, e)| (*w, est(&u, &e))));
    let mut heads = Vec::new();
    if let Some((w, s)) = sleeping {
        if let Some((u, e)) = dist(&format!("{spinning}{w}/{part}")) {
            let sp = est(&u, &e);
            heads.push(format!(
                "{lock}; waking a waiter on {w}: sleeping {s}, spinning {sp}"
            ));
            heads.push(format!(
                "lock+unlock {range}; waking a waiter on {w}: sleeping {s}, spinning {sp}"
            ));
        }
        heads.push(format!("{lock}; waking a sleeping waiter on {w} {s}"));
    }
    heads.push(lock);
    heads
}

/// `compare-and-swap hand-over 102.6 ns (range 98.40–106.9 ns), a write seen by a
/// read 209.3 ns; 1 pair of CPUs (same cache)`: the first two classes of pairs
/// with the range of their pairs (the figure's `n` counts pairs, not
/// repetitions); several groups of the first class, each with its pairs.
fn pair_class_heads(p: &ProbeResult, classes: &[PairClass]) -> Vec<String> {
    let Some(lead) = classes.first() else {
        return Vec::new();
    };
    let (h1, h2) = (lead.head, classes.get(1).map_or("", |c| c.head));
    let values_of = |name: &str| -> Vec<(String, String, String)> {
        p.findings
            .iter()
            .filter_map(|f| match f {
                Finding::Value {
                    what, unit, value, ..
                } => {
                    let (n, pairs) = what.split_once(": ")?;
                    (n == name).then(|| {
                        let (f, label) = unit_scale(unit, value.hi);
                        (
                            fmt_value(unit, value.value),
                            format!(
                                "{}–{} {label}",
                                fmt_num(value.lo / f),
                                fmt_num(value.hi / f)
                            ),
                            plain_counts(&format!(" {pairs}")).trim().to_string(),
                        )
                    })
                }
                _ => None,
            })
            .collect()
    };
    let cas = values_of(lead.name);
    let rw = classes
        .get(1)
        .map(|c| values_of(c.name))
        .unwrap_or_default();
    let mut heads = Vec::new();
    match (cas.as_slice(), rw.as_slice()) {
        ([(v, r, pairs)], [(v2, r2, _)]) => {
            heads.push(format!(
                "{h1} {v} (range {r}), {h2} {v2} (range {r2}); {pairs}"
            ));
            heads.push(format!("{h1} {v} (range {r}), {h2} {v2}; {pairs}"));
            heads.push(format!("{h1} {v} (range {r}); {pairs}"));
            heads.push(format!("{h1} {v} (range {r})"));
        }
        ([(v, r, pairs)], _) => {
            heads.push(format!("{h1} {v} (range {r}); {pairs}"));
            heads.push(format!("{h1} {v} (range {r})"));
        }
        (many, _) if !many.is_empty() => {
            let parts: Vec<String> = many
                .iter()
                .map(|(v, r, pairs)| format!("{v} (range {r}) for {pairs}"))
                .collect();
            heads.extend(shrinking(&format!("{h1} "), &parts, ""));
        }
        _ => {}
    }
    heads
}

/// Whether CPUs share a core, by the throughput kernels, next to the topology.
fn sharing_heads(p: &ProbeResult) -> Vec<String> {
    let pairs = core_sharing_pairs(p);
    match pairs.as_slice() {
        [] => Vec::new(),
        [one] => {
            let (a, b, says) = (one.a, one.b, sharing_says(one.shared));
            let topo = if one.topology_same_core {
                "one core"
            } else {
                "separate cores"
            };
            let (kernel, x) = (one.kernel, words::ratio_short(one.ratio));
            vec![
                format!(
                    "CPUs {a} and {b} {says} ({kernel} throughput {x} together); topology: {topo}"
                ),
                format!("CPUs {a} and {b} {says} ({kernel} {x} together)"),
                format!("CPUs {a} and {b} {says}"),
            ]
        }
        many => {
            let count = |v: Option<bool>| many.iter().filter(|p| p.shared == v).count();
            let disagree = many.iter().filter(|p| p.disagrees()).count();
            let head = format!(
                "{} pairs of CPUs: {} share a core, {} separate, {} not told apart",
                many.len(),
                count(Some(true)),
                count(Some(false)),
                count(None)
            );
            vec![
                format!("{head}; {disagree} disagree with the topology"),
                head,
            ]
        }
    }
}

/// `8 B events in batches of 256 (other-core)` for `8B events ×256, other-core`.
fn channel_group(what: &str) -> String {
    let (main, place) = what.split_once(", ").unwrap_or((what, ""));
    let worded = match main.split_once(" events ×") {
        Some((size, "1")) => format!("{} events one at a time", size.replace('B', " B")),
        Some((size, batch)) => format!("{} events in batches of {batch}", size.replace('B', " B")),
        None => main.to_string(),
    };
    if place.is_empty() {
        worded
    } else {
        format!("{worded} ({place})")
    }
}

/// Batch size and event bytes of a channel comparison (`8B events ×256`).
fn channel_key(what: &str) -> (u64, u64) {
    let main = what.split(", ").next().unwrap_or(what);
    let (size, batch) = main.split_once(" events ×").unwrap_or((main, "0"));
    let num = |s: &str| {
        s.trim_end_matches('B')
            .trim()
            .parse::<u64>()
            .unwrap_or(u64::MAX)
    };
    (num(size), num(batch))
}

/// `ours` against its strongest rival (the smallest ratio) at the smallest events
/// in the largest batches, worded from the finding's verdict; then the other
/// groups.
fn race_heads(p: &ProbeResult, ours: &str) -> Vec<String> {
    let mut groups: Vec<(&str, &Finding, f64)> = Vec::new();
    for f in &p.findings {
        if let Finding::Comparison { what, a, ratio, .. } = f {
            if a != ours {
                continue;
            }
            match groups.iter_mut().find(|g| g.0 == what) {
                Some(g) if g.2 <= ratio.value => {}
                Some(g) => *g = (what, f, ratio.value),
                None => groups.push((what, f, ratio.value)),
            }
        }
    }
    // Smallest events first, the largest batch first among them.
    groups.sort_by_key(|g| {
        let (size, batch) = channel_key(g.0);
        (size, std::cmp::Reverse(batch))
    });
    let mut heads = Vec::new();
    for (what, f, _) in &groups {
        if let Finding::Comparison {
            unit,
            a,
            b,
            ratio,
            outcome,
            ..
        } = f
        {
            let said = words::comparison_short(a, b, unit, ratio, *outcome);
            let main = what.split(", ").next().unwrap_or(what);
            heads.push(format!("{}: {said}", channel_group(what)));
            heads.push(format!("{}: {said}", channel_group(main)));
            heads.push(format!("{}: {said}", channel_group_short(main)));
        }
    }
    heads
}

/// `batches of 256 × 8 B` for `8B events ×256` (the fewest words).
fn channel_group_short(main: &str) -> String {
    match main.split_once(" events ×") {
        Some((size, "1")) => format!("{} one at a time", size.replace('B', " B")),
        Some((size, batch)) => format!("batches of {batch} × {}", size.replace('B', " B")),
        None => main.to_string(),
    }
}

/// The first of [`slowdowns`] (a shared core first), and the same in fewer
/// words: `a plain spin loop on other-core: 1.01× ±5%, no effect shown`.
fn slowdown_heads(p: &ProbeResult) -> Vec<String> {
    let mut heads: Vec<String> = slowdowns(p).into_iter().take(1).collect();
    if let Some(first) = heads.first() {
        let short = first
            .strip_prefix("spinner on ")
            .and_then(|r| r.split_once(", "))
            .and_then(|(place, rest)| {
                let (cause, said) = rest.split_once(": ")?;
                Some(format!("{cause} on {place}: {said}"))
            });
        heads.extend(short);
    }
    heads
}

/// The comparisons whose sides `keep` accepts, each in its short form, all of them
/// joined first, then fewer; then each alone in the findings' order, each in
/// shorter forms before the next: whole, without its sides' asides (`taskpool
/// (mutex free list)`; an equivalence keeps its `(within ±3 %)`), and with each
/// side named by its first word (`taskpool` for `taskpool (one thread per CPU) at
/// cutoff 1024`). So the probe's first finding leads while any form of it fits.
fn comparison_heads(p: &ProbeResult, keep: impl Fn(&str, &str) -> bool) -> Vec<String> {
    // Each finding with its short form, so the two cannot fall out of step.
    let found: Vec<(&Finding, String)> = p
        .findings
        .iter()
        .filter(|f| matches!(f, Finding::Comparison { a, b, .. } if keep(a, b)))
        .filter_map(|f| Some((f, short_finding(f, false, false, &p.id)?)))
        .collect();
    let parts: Vec<&str> = found.iter().map(|(_, part)| part.as_str()).collect();
    let mut heads: Vec<String> = (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("; "))
        .collect();
    for (i, (f, part)) in found.iter().enumerate() {
        if i > 0 {
            heads.push(part.clone());
        }
        if !part.contains('≈') {
            heads.push(drop_parens(part));
        }
        heads.extend(sides_by_first_word(f).and_then(|t| short_finding(&t, false, false, &p.id)));
    }
    let mut seen = std::collections::HashSet::new();
    heads.retain(|h| seen.insert(h.clone()));
    heads
}

/// A comparison with each side named by its first word, when that shortens either.
fn sides_by_first_word(f: &Finding) -> Option<Finding> {
    let Finding::Comparison { a, b, .. } = f else {
        return None;
    };
    let first = |s: &str| s.split_whitespace().next().unwrap_or(s).to_string();
    let (a1, b1) = (first(a), first(b));
    if a1 == *a && b1 == *b {
        return None;
    }
    let mut t = f.clone();
    if let Finding::Comparison { a, b, .. } = &mut t {
        (*a, *b) = (a1, b1);
    }
    Some(t)
}

/// A cell of a free table by column name.
fn cell<'t>(
    t: &'t Table,
    row: &'t [serde_json::Value],
    col: &str,
) -> Option<&'t serde_json::Value> {
    let i = t.columns.iter().position(|c| c == col)?;
    row.get(i)
}

/// The time per event of a tuner table's row, with its interval and runs.
fn row_time(t: &Table, row: &[serde_json::Value]) -> Option<Estimate> {
    let get = |c: &str| cell(t, row, c).and_then(serde_json::Value::as_f64);
    Some(Estimate {
        value: get("ns_per_event")?,
        lo: get("ns_per_event_lo")?,
        hi: get("ns_per_event_hi")?,
        n: get("runs").map_or(0, |r| r as usize),
    })
}

/// The row a tuner table marks as its choice (`best`).
fn chosen(t: &Table) -> Option<&[serde_json::Value]> {
    t.rows
        .iter()
        .find(|r| cell(t, r, "best").and_then(serde_json::Value::as_bool) == Some(true))
        .map(Vec::as_slice)
}

/// The tuner's pick and what it gained: `pick 4 × 1500000 B, pad 128 B,
/// spin_then_park: 2.398 ns ±27% per event, from 7.123 ns ±9%` (the first stage's
/// first and last choice on the same events), else the pick alone.
fn tune_heads(p: &ProbeResult, first_stage: &str, last_stage: &str) -> Vec<String> {
    let label = |t: &Table, row: &[serde_json::Value]| {
        cell(t, row, "run")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    let stage_one: Vec<&Table> = p
        .tables
        .iter()
        .filter(|t| t.name.starts_with(first_stage) && !t.name.contains("roadmap"))
        .filter(|t| chosen(t).is_some())
        .collect();
    let event_bytes = p
        .params
        .get("event_bytes")
        .and_then(serde_json::Value::as_f64)
        .map(|b| format!("{b:.0}-byte events"));
    let stage_two = p
        .tables
        .iter()
        .filter(|t| t.name.starts_with(last_stage) && chosen(t).is_some())
        .find(|t| {
            event_bytes
                .as_ref()
                .is_none_or(|e| t.name.contains(e.as_str()))
        });
    let pick = stage_two
        .and_then(|t| label(t, chosen(t)?))
        .or_else(|| stage_one.last().and_then(|t| label(t, chosen(t)?)));
    let Some(pick) = pick else {
        // No table marks its choice: the choice's finding (in older files the
        // `best:` note up to its reasons).
        return p
            .findings
            .iter()
            .filter_map(|f| match f {
                Finding::TunerChoice { config, .. } => Some(format!("pick {config}")),
                Finding::Note { text } if text.starts_with("best: ") => Some(format!(
                    "pick {}",
                    text["best: ".len()..]
                        .split(" (")
                        .next()
                        .unwrap_or_default()
                )),
                _ => None,
            })
            .collect();
    };
    let mut heads = Vec::new();
    let last = stage_one
        .last()
        .and_then(|t| Some((t, chosen(t)?)))
        .filter(|(t, row)| label(t, row).as_deref() == Some(pick.as_str()));
    if let Some((t, row)) = last {
        let events = |t: &Table, row: &[serde_json::Value]| cell(t, row, "events").cloned();
        let end = row_time(t, row);
        let start = stage_one
            .iter()
            .filter_map(|s| Some((*s, chosen(s)?)))
            .find(|(s, r)| events(s, r) == events(t, row))
            .filter(|(s, r)| label(s, r).as_deref() != Some(pick.as_str()))
            .and_then(|(s, r)| row_time(s, r));
        if let Some(end) = end {
            if let Some(start) = start {
                heads.push(format!(
                    "pick {pick}: {} per event, from {} at the start",
                    est("ns", &end),
                    est("ns", &start)
                ));
                heads.push(format!(
                    "pick {pick}: {} per event, from {}",
                    est("ns", &end),
                    est("ns", &start)
                ));
            }
            heads.push(format!("pick {pick}: {} per event", est("ns", &end)));
        }
    }
    heads.push(format!("pick {pick}"));
    heads
}
