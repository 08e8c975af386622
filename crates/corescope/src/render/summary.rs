//! The one-screen summary a run ends with: the machine in one line, then per probe
//! its key results with their intervals, then the warnings that matter. A pure
//! function of the run file (typed findings and series estimates); it never
//! measures. The full tables are `corescope report` (and `run --verbose`).

use super::terminal::plus_minus;
use crate::model::{Estimate, Finding, Outcome, ProbeResult, RunFile, Status, Warning};
use crate::units::{fmt_num, fmt_value};

/// Most lines the summary takes (one screen).
pub const MAX_LINES: usize = 40;
/// Width of the probe-name column.
const NAME_COLS: usize = 14;
/// Most lines one probe gets when the screen has room.
const MAX_PROBE_LINES: usize = 3;
/// The warnings take at most this many lines: the count, the machine's state, and
/// the first warnings (every warning is in `corescope report`).
const MAX_WARNING_LINES: usize = 5;

/// The summary of `run` in at most [`MAX_LINES`] lines of at most `width` columns.
pub fn summary(run: &RunFile, width: usize) -> Vec<String> {
    let width = width.max(40);
    let run = super::for_display(run);
    let head = vec![
        fit(&machine_line(&run), width),
        fit(
            "± = 95 % CI of the median (shown when wider than 1 %); full tables: corescope report",
            width,
        ),
    ];
    // (lines, one more line than the others: the scaling probes lead).
    let probes: Vec<(Vec<String>, usize)> = run
        .probes
        .iter()
        .map(|p| {
            let extra = usize::from(matches!(p.id.as_str(), "compute" | "memory"));
            (wrap_probe(&p.id, &probe_items(p, &run), width), extra)
        })
        .collect();
    let warnings = warning_lines(&run, width);
    // Shrink the probes' share (3 lines each, then 2, then 1) and the warnings
    // until everything fits one screen.
    let budget = MAX_LINES - head.len();
    let mut cap = MAX_PROBE_LINES;
    let mut warn_cap = warnings.len().min(MAX_WARNING_LINES);
    let total = |cap: usize, wc: usize| -> usize {
        probes
            .iter()
            .map(|(l, extra)| l.len().min(cap + extra))
            .sum::<usize>()
            + wc
    };
    while total(cap, warn_cap) > budget {
        if warn_cap > 4 {
            warn_cap -= 1;
        } else if cap > 1 {
            cap -= 1;
        } else if warn_cap > 0 {
            warn_cap -= 1;
        } else {
            break;
        }
    }
    let mut out = head;
    for (lines, extra) in &probes {
        let cap = cap + extra;
        let mut shown: Vec<String> = lines.iter().take(cap).cloned().collect();
        if lines.len() > cap {
            if let Some(last) = shown.last_mut() {
                *last = fit(&format!("{last} …"), width);
            }
        }
        out.extend(shown);
    }
    out.extend(warnings.into_iter().take(warn_cap));
    out.truncate(MAX_LINES);
    out
}

/// The summary as one string (lines joined, each ending in a newline).
pub fn render(run: &RunFile, width: usize) -> String {
    summary(run, width).into_iter().map(|l| l + "\n").collect()
}

/// `AMD EPYC (x86_64, KVM) · 1 package, 2 cores, ... · core 4.21 GHz · default run 2026-...`
fn machine_line(run: &RunFile) -> String {
    let h = &run.host;
    let mut s = if h.cpu_model.is_empty() {
        "unknown CPU".to_string()
    } else {
        h.cpu_model.clone()
    };
    match &h.virtualized {
        Some(v) => s.push_str(&format!(" ({}, {v})", h.arch)),
        None => s.push_str(&format!(" ({})", h.arch)),
    }
    s.push_str(&format!(" · {}", run.topology.summary()));
    if let Some(hz) = run.clock.core_hz_one {
        s.push_str(&format!(" · core {:.2} GHz", hz / 1e9));
    }
    s.push_str(&format!(
        " · {} run {}",
        run.profile.name(),
        run.started_utc.get(..10).unwrap_or(&run.started_utc)
    ));
    s
}

/// A value with its unit and `±x%` when the interval is wider than 1 %.
fn est(unit: &str, e: &Estimate) -> String {
    format!("{}{}", fmt_value(unit, e.value), plus_minus(e))
}

/// The probe's key results as short items (joined with `; ` and wrapped).
fn probe_items(p: &ProbeResult, run: &RunFile) -> Vec<String> {
    if p.status != Status::Completed && p.series.is_empty() && p.distributions.is_empty() {
        let why = p.reason.clone().unwrap_or_default();
        return vec![format!("{}: {why}", p.status.name())];
    }
    let mut items = match p.id.as_str() {
        "compute" => families(p, &["int", "fp"]),
        "memory" => memory_items(p, run),
        "peak" => peak_items(p),
        "threads" => dist_items(
            p,
            "create/joinable/",
            &["call", "start"],
            "create call/child runs",
        ),
        "mutex" => mutex_items(p),
        "condvar" => dist_items(p, "signal/", &["call", "wake"], "signal call/wake-up"),
        "syscall" => p
            .distributions
            .iter()
            .map(|d| format!("{} {}", d.name, est(&d.unit, &d.summary.median())))
            .collect(),
        "timers" => timer_items(p),
        "channel" => channel_items(p),
        "spin" => spin_items(p),
        "sharing" => sharing_items(p),
        _ => Vec::new(),
    };
    // Every typed finding the special cases did not cover, in short form.
    let covered = !items.is_empty();
    for f in &p.findings {
        if let Some(s) = short_finding(f, covered, &p.id) {
            items.push(s);
        }
    }
    if p.status != Status::Completed {
        items.insert(0, format!("[{}]", p.status.name()));
    }
    if items.is_empty() {
        // Findings in words only (version 1 files, untyped probes): the first ones.
        items.extend(p.findings.iter().filter_map(|f| match f {
            Finding::Note { text } => Some(text.clone()),
            _ => None,
        }));
    }
    if items.is_empty() {
        items.push("no key result recorded (see `corescope report`)".into());
    }
    items
}

/// A finding in a few words, or `None` when the summary shows it otherwise.
fn short_finding(f: &Finding, covered: bool, probe: &str) -> Option<String> {
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
            "{what} peak {} at {} thr ({peak_variant}), 95 % from {} thr",
            est(unit, peak),
            fmt_num_int(*peak_threads),
            fmt_num_int(*saturation_threads)
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
            // Compute and memory show every placement's figures already.
            if covered && matches!(probe, "compute" | "memory") {
                return None;
            }
            let head = drop_parens(what.split([',', ':']).next().unwrap_or(what));
            let rel = match outcome {
                Outcome::Different if is_time(unit) => {
                    format!("{a} takes {} as long as {b}", ratio_short(ratio))
                }
                Outcome::Different => format!("{a} {} the rate of {b}", ratio_short(ratio)),
                Outcome::Equivalent => format!("{a} ≈ {b}"),
                Outcome::Inconclusive => {
                    format!("{a} vs {b} not different ({})", ratio_short(ratio))
                }
            };
            Some(format!("{head}: {rel}"))
        }
        Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            ..
        } if !covered => Some(format!(
            "{what}, {cause}: {}{}",
            ratio_short(ratio),
            if *outcome == Outcome::Different {
                ""
            } else {
                " (n.s.)"
            }
        )),
        Finding::Value {
            what, unit, value, ..
        } if !covered => Some(format!(
            "{} {}",
            drop_parens(what.trim_start_matches(&format!("{probe}/"))),
            est(unit, value)
        )),
        _ => None,
    }
}

fn is_time(unit: &str) -> bool {
    matches!(unit, "s" | "seconds" | "ms" | "us" | "ns" | "cycles")
}

/// `1.73× [1.61–1.88]`, or `1.73×` without an interval.
fn ratio_short(r: &Estimate) -> String {
    format!("{:.2}×{}", r.value, plus_minus(r))
}

fn fmt_num_int(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        fmt_num(x)
    }
}

/// Per placement of a family (`int/linear`, `int/scatter` …): the peak with its
/// interval, the threads of the peak and the fewest threads reaching 95 % of it;
/// placements with the same figures (the same CPUs here) are named together.
fn families(p: &ProbeResult, names: &[&str]) -> Vec<String> {
    let mut items = Vec::new();
    for name in names {
        let prefix = format!("{name}/");
        // (placements, text of their figures)
        let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
        let mut scale = (1.0, String::new());
        for s in p.series.iter().filter(|s| s.name.starts_with(&prefix)) {
            let Some((i, peak)) = (0..s.y.len())
                .filter_map(|i| s.estimate(i).map(|e| (i, e)))
                .filter(|(_, e)| e.value.is_finite())
                .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
            else {
                continue;
            };
            if groups.is_empty() {
                scale = crate::units::unit_scale(&s.y_name, peak.value);
            }
            let sat =
                s.x.iter()
                    .zip(&s.y)
                    .filter(|(_, &y)| y >= 0.95 * peak.value)
                    .map(|(&x, _)| x)
                    .fold(f64::INFINITY, f64::min);
            let text = format!(
                "{}{} at {}, 95 % at {}",
                fmt_num(peak.value / scale.0),
                plus_minus(&peak),
                fmt_num_int(s.x[i]),
                fmt_num_int(sat)
            );
            let placement = &s.name[prefix.len()..];
            match groups.iter_mut().find(|g| g.1 == text) {
                Some(g) => g.0.push(placement),
                None => groups.push((vec![placement], text)),
            }
        }
        for (k, (placements, text)) in groups.iter().enumerate() {
            let lead = if k == 0 {
                format!("{name} peak {} (threads): ", scale.1)
            } else {
                String::new()
            };
            items.push(format!("{lead}{} {text}", placements.join("=")));
        }
    }
    items
}

fn memory_items(p: &ProbeResult, run: &RunFile) -> Vec<String> {
    let mut items = families(p, &["read", "write"]);
    for f in &p.findings {
        if let Finding::Scaling {
            what, unit, peak, ..
        } = f
        {
            if what == "copy" || what == "triad" {
                items.push(format!("{what} peak {}", est(unit, peak)));
            }
        }
    }
    if let Some(s) = p.series("ws-latency/1t") {
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
            // The largest working set that fits half the cache: latency of that level.
            let at =
                s.x.iter()
                    .enumerate()
                    .filter(|(_, &x)| x <= size as f64 / 2.0)
                    .max_by(|a, b| a.1.total_cmp(b.1));
            if let Some(e) = at.and_then(|(i, _)| s.estimate(i)) {
                parts.push(format!(
                    "L{level} {} {}",
                    fmt_value("bytes", size as f64),
                    est(&s.y_name, &e)
                ));
            }
        }
        if let Some(e) = s.estimate(s.x.len().saturating_sub(1)) {
            parts.push(format!(
                "{} {}",
                fmt_value("bytes", s.x[s.x.len() - 1]),
                est(&s.y_name, &e)
            ));
        }
        items.push(format!("load latency: {}", parts.join(", ")));
    }
    items
}

fn peak_items(p: &ProbeResult) -> Vec<String> {
    let mut items = Vec::new();
    for prec in ["f64", "f32"] {
        let best = p
            .findings
            .iter()
            .filter_map(|f| match f {
                Finding::Scaling {
                    what,
                    unit,
                    peak,
                    peak_threads,
                    ..
                } if what.ends_with(prec) => Some((what, unit, peak, peak_threads)),
                _ => None,
            })
            .max_by(|a, b| a.2.value.total_cmp(&b.2.value));
        if let Some((what, unit, peak, t)) = best {
            let per_cycle =
                p.findings.iter().find_map(|f| match f {
                    Finding::Value {
                        what: w,
                        unit: u,
                        value,
                        ..
                    } if w.starts_with(&format!("{what}:")) && u == "flops_per_cycle" => Some(
                        format!("{:.1} FLOP/cycle{}", value.value, plus_minus(value)),
                    ),
                    _ => None,
                });
            let mut s = format!("{what} {} at {} thr", est(unit, peak), fmt_num_int(*t));
            if let Some(c) = per_cycle {
                s.push_str(&format!(", one thread {c}"));
            }
            items.push(s);
        }
    }
    items
}

/// Medians of `prefix<where>/<part>` distributions, grouped by `<where>`.
fn dist_items(p: &ProbeResult, prefix: &str, parts: &[&str], label: &str) -> Vec<String> {
    let mut wheres: Vec<&str> = Vec::new();
    for d in &p.distributions {
        if let Some(rest) = d.name.strip_prefix(prefix) {
            if let Some((w, _)) = rest.rsplit_once('/') {
                if !wheres.contains(&w) {
                    wheres.push(w);
                }
            }
        }
    }
    let cells: Vec<String> = wheres
        .iter()
        .map(|w| {
            let vals: Vec<String> = parts
                .iter()
                .filter_map(|part| {
                    let name = format!("{prefix}{w}/{part}");
                    p.distributions
                        .iter()
                        .find(|d| d.name == name)
                        .map(|d| est(&d.unit, &d.summary.median()))
                })
                .collect();
            format!("{w} {}", vals.join(" / "))
        })
        .collect();
    if cells.is_empty() {
        return Vec::new();
    }
    vec![format!("{label}: {}", cells.join(", "))]
}

fn mutex_items(p: &ProbeResult) -> Vec<String> {
    let unc: Vec<String> = p
        .distributions
        .iter()
        .filter_map(|d| {
            d.name
                .strip_prefix("uncontended/")
                .map(|n| format!("{n} {}", est(&d.unit, &d.summary.median())))
        })
        .collect();
    let mut items = Vec::new();
    if !unc.is_empty() {
        items.push(format!("lock+unlock {}", unc.join(", ")));
    }
    items.extend(dist_items(
        p,
        "handoff/sleeping/",
        &["wake"],
        "sleeping waiter wakes",
    ));
    items.extend(dist_items(
        p,
        "handoff/spinning/",
        &["wake"],
        "spinning waiter",
    ));
    items
}

fn timer_items(p: &ProbeResult) -> Vec<String> {
    let mut items = Vec::new();
    for f in &p.findings {
        match f {
            Finding::Value {
                what, unit, value, ..
            } if what.ends_with(": read overhead") => {
                let clock = what.trim_end_matches(": read overhead");
                let step = p.findings.iter().find_map(|g| match g {
                    Finding::Value {
                        what: w,
                        unit: u,
                        value: v,
                        ..
                    } if *w == format!("{clock}: step") => Some(est(u, v)),
                    _ => None,
                });
                items.push(format!(
                    "{clock} {}{}",
                    est(unit, value),
                    step.map(|s| format!(" (step {s})")).unwrap_or_default()
                ));
            }
            _ => {}
        }
    }
    items
}

fn channel_items(p: &ProbeResult) -> Vec<String> {
    // The best rate per event size over every implementation and batch.
    let mut best: Vec<(String, String, f64, Estimate, String)> = Vec::new();
    for s in p
        .series
        .iter()
        .filter(|s| s.name.starts_with("throughput/"))
    {
        let parts: Vec<&str> = s.name.split('/').collect();
        let (Some(imp), Some(size)) = (parts.get(1), parts.get(2)) else {
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
                "{size} events best {} ({imp}, batch {})",
                est(unit, e),
                fmt_num_int(*batch)
            )
        })
        .collect();
    let rt: Vec<String> = p
        .distributions
        .iter()
        .filter_map(|d| {
            let imp = d.name.strip_prefix("roundtrip/")?.split('/').next()?;
            Some(format!("{imp} {}", est(&d.unit, &d.summary.median())))
        })
        .collect();
    if !rt.is_empty() {
        items.push(format!("round trip {}", rt.join(", ")));
    }
    items
}

fn spin_items(p: &ProbeResult) -> Vec<String> {
    let mut items: Vec<String> = p
        .findings
        .iter()
        .filter_map(|f| match f {
            Finding::Note { text } if text.contains("cheapest") => Some(drop_parens(text)),
            _ => None,
        })
        .collect();
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
            let verdict = match outcome {
                Outcome::Different => "",
                Outcome::Equivalent => " (≈ none)",
                Outcome::Inconclusive => " (n.s.)",
            };
            let place = what.rsplit(' ').next().unwrap_or(what);
            let shown = if place == "same-cpu" {
                "same-cpu (time-sliced)"
            } else {
                place
            };
            slowdowns.push((
                spin_rank(place),
                format!("{shown}, {cause}: {}{verdict}", ratio_short(ratio)),
            ));
        }
    }
    // Seed 003's interference first: the relation that shares the most, the one
    // sharing a CPU (the scheduler's time slicing) last.
    slowdowns.sort_by_key(|(rank, _)| *rank);
    items.extend(slowdowns.into_iter().map(|(_, item)| item));
    items
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

/// The dependent chains' worst slowdown, and the throughput kernels' verdicts of
/// the pairs (each pair up to [`CORE_SHARING_PAIRS_NAMED`], counts beyond).
fn sharing_items(p: &ProbeResult) -> Vec<String> {
    let mut items = matrix_worst(p);
    let pairs: Vec<_> = p
        .findings
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
            } => Some((*a, *b, *shared, kernel, ratio, *topology_same_core)),
            _ => None,
        })
        .collect();
    let says = |shared: Option<bool>| match shared {
        Some(true) => "share a core",
        Some(false) => "separate cores",
        None => "not told apart",
    };
    if pairs.len() <= CORE_SHARING_PAIRS_NAMED {
        for &(a, b, shared, kernel, ratio, same_core) in &pairs {
            let topo = if same_core {
                "one core"
            } else {
                "separate cores"
            };
            items.push(format!(
                "CPUs {a}+{b}: measured {} ({} {kernel} together), topology: {topo}",
                says(shared),
                ratio_short(ratio)
            ));
        }
    } else {
        let count = |v: Option<bool>| pairs.iter().filter(|p| p.2 == v).count();
        let disagree = pairs
            .iter()
            .filter(|p| p.2.is_some_and(|s| s != p.5))
            .count();
        items.push(format!(
            "{} pairs: {} share a core, {} separate, {} not told apart; {disagree} disagree with the topology",
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
            items.push(format!("{} worst pair {worst:.2}×", m.name));
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

/// The warnings that matter: noisy machine, intervals still wide, then other
/// notes, one line each, counted per probe.
fn warning_lines(run: &RunFile, width: usize) -> Vec<String> {
    let mut noisy = Vec::new();
    let mut wide = Vec::new();
    let mut notes = Vec::new();
    for p in &run.probes {
        for w in &p.warnings {
            match w {
                // A migration during a pinned run is the machine moving threads.
                Warning::Noisy { .. } | Warning::Migrated { .. } => {
                    noisy.push(format!("! {}: {}", p.id, super::words::warning(w)))
                }
                Warning::WideInterval { .. } => {
                    wide.push(format!("! {}: {}", p.id, super::words::warning(w)))
                }
                Warning::Note { .. } => {
                    notes.push(format!("! {}: {}", p.id, super::words::warning(w)))
                }
            }
        }
    }
    let total = noisy.len() + wide.len() + notes.len();
    let state = state_line(run);
    if total == 0 {
        let mut out = vec!["no warnings".to_string()];
        out.extend(state.map(|l| fit(&l, width)));
        return out;
    }
    let mut out = vec![fit(
        &format!(
            "warnings: {total} ({} noisy machine, {} wide intervals, {} other; all in `corescope report`)",
            noisy.len(),
            wide.len(),
            notes.len()
        ),
        width,
    )];
    out.extend(state.map(|l| fit(&l, width)));
    let room = MAX_WARNING_LINES - out.len();
    let all: Vec<&String> = noisy.iter().chain(&wide).chain(&notes).collect();
    let shown = if all.len() > room { room - 1 } else { room };
    out.extend(all.iter().take(shown).map(|l| fit(l, width)));
    if all.len() > shown {
        out.push(format!(
            "… {} more in `corescope report`",
            all.len() - shown
        ));
    }
    out
}

/// One line on the machine's state over the run: how often the watched round trip
/// changed state during a group, how many points were state-dependent, and the
/// most the hypervisor stole and other programs used; `None` when nothing was
/// recorded (older run files, probes without groups).
fn state_line(run: &RunFile) -> Option<String> {
    let states: Vec<&crate::model::GroupState> =
        run.probes.iter().flat_map(|p| &p.machine_states).collect();
    if states.is_empty() {
        return None;
    }
    let moved = states.iter().filter(|s| s.round_trip_changed).count();
    let top = |get: fn(&crate::model::GroupState) -> Option<f64>| {
        states.iter().filter_map(|s| get(s)).fold(0.0f64, f64::max) * 100.0
    };
    let dependent: usize = run
        .probes
        .iter()
        .flat_map(|p| &p.series)
        .map(|s| s.states.iter().filter(|v| !v.is_empty()).count())
        .sum();
    let mut parts = Vec::new();
    let again = states.iter().filter(|s| s.measured_again).count();
    if let Some((lo, hi)) = crate::model::round_trip_span(states.iter().copied()) {
        parts.push(format!(
            "CPU round trip {lo:.0}–{hi:.0} ns, changed state during {moved} of {} group \
             measurements ({again} measured again, {} kept with the change)",
            states.len(),
            moved - again
        ));
    }
    parts.push(format!("{dependent} state-dependent points"));
    parts.push(format!(
        "other programs ≤ {:.0} % of the CPUs, steal ≤ {:.0} %",
        top(|s| s.others_cpu_fraction),
        top(|s| s.steal_fraction)
    ));
    Some(format!("machine: {}", parts.join("; ")))
}

/// `compute      items; items` wrapped at item boundaries to `width`, continuation
/// lines indented under the first item; an item longer than a line is cut.
fn wrap_probe(id: &str, items: &[String], width: usize) -> Vec<String> {
    let indent = " ".repeat(NAME_COLS);
    let room = width - NAME_COLS;
    let mut lines = Vec::new();
    let mut cur = String::new();
    for item in items {
        let item = fit(item, room);
        let len = |s: &str| s.chars().count();
        if cur.is_empty() {
            cur = item;
        } else if len(&cur) + 2 + len(&item) <= room {
            cur.push_str("; ");
            cur.push_str(&item);
        } else {
            lines.push(std::mem::take(&mut cur));
            cur = item;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                let name = fit(id, NAME_COLS - 1);
                format!("{name:<w$}{l}", w = NAME_COLS)
            } else {
                format!("{indent}{l}")
            }
        })
        .collect()
}

/// `s` cut to `width` characters, with an ellipsis when cut.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut o: String = s.chars().take(width.saturating_sub(1)).collect();
    o.push('…');
    o
}

/// `s` without its parenthesised asides (`fft 2^14 (a worker per butterfly)` →
/// `fft 2^14`), spaces tidied.
fn drop_parens(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, RunFile, Warning};

    fn fixture() -> RunFile {
        serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap()
    }

    fn check(run: &RunFile, width: usize) -> Vec<String> {
        let lines = summary(run, width);
        assert!(
            lines.len() <= MAX_LINES,
            "{} lines:\n{}",
            lines.len(),
            lines.join("\n")
        );
        for l in &lines {
            assert!(l.chars().count() <= width, "wider than {width}: {l}");
        }
        lines
    }

    #[test]
    fn one_screen_with_every_probe_of_a_recorded_run() {
        let run = fixture();
        for width in [100, 80, 60] {
            let lines = check(&run, width);
            for p in &run.probes {
                let name = fit(&p.id, NAME_COLS - 1);
                assert!(
                    lines.iter().any(|l| l.starts_with(&format!("{name} "))),
                    "{} missing at width {width}:\n{}",
                    p.id,
                    lines.join("\n")
                );
            }
        }
    }

    #[test]
    fn many_probes_and_warnings_still_fit_one_screen() {
        let mut run = fixture();
        let base = run.probes.clone();
        for k in 0..3 {
            for p in &base {
                let mut q = p.clone();
                q.id = format!("{}-{k}", p.id);
                for i in 0..5 {
                    q.warnings.push(Warning::Noisy {
                        detail: format!("load {i} {}", "x".repeat(200)),
                    });
                }
                run.probes.push(q);
            }
        }
        let lines = check(&run, 100);
        assert!(lines.iter().any(|l| l.starts_with("warnings: ")));
    }

    #[test]
    fn scaling_families_show_each_placement_with_its_interval() {
        let mut run = fixture();
        let mut p = crate::model::ProbeResult::new("compute", "t", Status::Completed);
        for (placement, scale) in [("linear", 1.0), ("scatter", 0.5)] {
            for t in [1.0, 2.0, 4.0] {
                p.push_point(Point::samples(
                    format!("int/{placement}"),
                    "threads",
                    t,
                    "ops_per_s",
                    vec![1e9 * t * scale, 1.1e9 * t * scale, 0.9e9 * t * scale],
                ));
            }
        }
        run.probes = vec![p];
        let text = check(&run, 100).join("\n");
        assert!(
            text.contains("int peak Gops/s (threads): linear 4.000 ±10% at 4, 95 % at 4"),
            "{text}"
        );
        assert!(text.contains("scatter 2.000 ±10% at 4"), "{text}");
    }
}
