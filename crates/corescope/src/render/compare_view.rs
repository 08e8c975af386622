//! What the terminal and HTML renderers of `compare` share: each machine's label
//! and normalisation facts, ratios against the first run with their overlap mark,
//! the machine rows, the agreement lines and the peak line.

use crate::compare::model;
use crate::model::{Estimate, ProbeResult, RunFile, Series};
use crate::render::{fmt_num, fmt_value};
use std::collections::BTreeMap;

/// Longest machine label (column header) of a comparison.
pub const MAX_LABEL_CHARS: usize = 40;

/// One machine in a comparison.
#[derive(Debug, Clone)]
pub struct Machine<'a> {
    /// Column label: host name, made unique (`host`, `host#2`).
    pub label: String,
    /// The run.
    pub run: &'a RunFile,
    /// CPUs the run could use.
    pub cpus: usize,
    /// Clock used for cycles: the run's measured core clock, else its nominal
    /// frequency, else its timer's ([`crate::compare::cycle_clock`]).
    pub hz: f64,
    /// Which clock `hz` is (`measured core clock, …`, `nominal` or the timer source).
    pub hz_source: String,
}

/// Label and normalisation facts of each run.
/// The runs as displayed (`render::for_display`) and the probe ids asked for,
/// cleaned as displayed ids are: what both compare renderers start from.
pub(super) fn prepared(
    runs: &[RunFile],
    only: Option<&[String]>,
) -> (Vec<RunFile>, Option<Vec<String>>) {
    let shown = runs.iter().map(crate::render::for_display).collect();
    let only = only.map(|o| {
        o.iter()
            .map(|id| crate::render::clean(id, crate::render::MAX_NAME_CHARS, false))
            .collect()
    });
    (shown, only)
}

pub fn machines(runs: &[RunFile]) -> Vec<Machine<'_>> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    runs.iter()
        .map(|run| {
            // A column label: short whatever the host name (a 1 MB name would
            // be repeated in every table of the comparison).
            let base = if run.host.hostname.is_empty() {
                "host".to_string()
            } else {
                crate::render::clean(&run.host.hostname, MAX_LABEL_CHARS, false)
            };
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            let label = if *n == 1 { base } else { format!("{base}#{n}") };
            let (hz, hz_source) = crate::compare::cycle_clock(run);
            Machine {
                label,
                run,
                cpus: run.topology.allowed_count().max(1),
                hz,
                hz_source,
            }
        })
        .collect()
}

pub(super) fn is_rate(unit: &str) -> bool {
    unit.ends_with("per_s")
}

pub(super) fn is_time(unit: &str) -> bool {
    unit == "ns"
}

/// A rate per CPU the run could use (the per-core view).
pub(super) fn per_cpu(v: f64, m: &Machine) -> f64 {
    v / m.cpus as f64
}

/// A time in cycles of the machine's clock (the per-cycle view); `None` for
/// units that are not times.
pub(super) fn cycles(unit: &str, v: f64, m: &Machine) -> Option<f64> {
    is_time(unit).then(|| v * m.hz / 1e9)
}

pub(super) fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a != 0.0 && a.is_finite() && b.is_finite() => {
            format!("{}×", crate::render::fmt_ratio(b / a))
        }
        _ => "-".into(),
    }
}

/// Marks a ratio whose two runs' intervals overlap.
pub(super) const OVERLAP_MARK: &str = "≈";

/// The legend of [`OVERLAP_MARK`].
pub(super) const OVERLAP_NOTE: &str =
    "≈ = the two runs' 95 % intervals overlap: indistinguishable at this point";

/// `b ÷ a` of two runs' estimates, marked `≈` when both have an interval and the
/// intervals overlap (the runs are indistinguishable there; conservative, see
/// [`crate::stats::compare_estimates`]). Without intervals (version 1 files)
/// nothing is said either way.
pub(super) fn ratio_of(a: Option<&Estimate>, b: Option<&Estimate>) -> String {
    let plain = ratio(a.map(|e| e.value), b.map(|e| e.value));
    match (a, b) {
        (Some(a), Some(b)) if plain != "-" && a.has_interval() && b.has_interval() => {
            match crate::stats::compare_estimates(*b, *a) {
                Some(c) if !c.significant => format!("{plain} {OVERLAP_MARK}"),
                _ => plain,
            }
        }
        _ => plain,
    }
}

/// The median and range of the finite values of a matrix.
pub(super) fn cell_stats(c: &model::Cells) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = c
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some((v[0], v[v.len() / 2], v[v.len() - 1]))
}

/// The free tables of probe `id` across the runs, aligned on the first
/// [`crate::render::MAX_TABLE_ROWS`] keys and made safe to show. Aligned from
/// the run files themselves (`raw`), whose tables are whole: the display
/// copies (`shown`, where the probe is found by its cleaned id) keep only the
/// rows a table shows.
pub(super) fn shown_tables(
    raw: &[RunFile],
    shown: &[RunFile],
    id: &str,
) -> Vec<model::TableComparison> {
    let probes: Vec<Option<&ProbeResult>> = raw
        .iter()
        .zip(shown)
        .map(|(r, s)| {
            let i = s.probes.iter().position(|p| p.id == id)?;
            r.probes.get(i)
        })
        .collect();
    model::tables(&probes, crate::render::MAX_TABLE_ROWS)
        .into_iter()
        .map(|mut t| {
            use crate::render::{clean, clean_json, MAX_NAME_CHARS, MAX_TEXT_CHARS};
            t.name = clean(&t.name, MAX_NAME_CHARS, false);
            t.key_column = clean(&t.key_column, MAX_NAME_CHARS, false);
            for c in &mut t.columns {
                *c = clean(c, MAX_NAME_CHARS, false);
            }
            for r in &mut t.rows {
                r.key = clean(&r.key, MAX_TEXT_CHARS, false);
                for v in r.cells.iter_mut().flatten().flatten() {
                    *v = clean_json(std::mem::take(v));
                }
            }
            t
        })
        .collect()
}

pub(super) type Fact = (&'static str, fn(&Machine) -> String);

/// Points of the farthest-apart list named in an agreement line.
const APART_NAMED: usize = 3;

/// One line per run after the first: where its 95 % intervals overlap the first
/// run's, point by point (`model::run_agreement`), and the points farthest apart.
pub(super) fn agreement_lines(runs: &[RunFile], ms: &[Machine]) -> Vec<String> {
    let (Some(first), Some(m0)) = (runs.first(), ms.first()) else {
        return Vec::new();
    };
    runs.iter()
        .zip(ms)
        .skip(1)
        .filter_map(|(run, m)| {
            let a = model::run_agreement(first, run);
            if a.points == 0 {
                return None;
            }
            let pct = |k: usize| 100.0 * k as f64 / a.points as f64;
            let mut line = format!(
                "{} against {}: the 95 % intervals overlap at {} of {} series points ({:.0} %); \
                 {} more state-dependent in both runs; {} state-dependent in either ({:.0} %)",
                m.label,
                m0.label,
                a.overlap,
                a.points,
                pct(a.overlap),
                a.state_dependent_both,
                a.state_dependent_either,
                pct(a.state_dependent_either)
            );
            if !a.apart.is_empty() {
                let named: Vec<String> = a
                    .apart
                    .iter()
                    .take(APART_NAMED)
                    .map(|(p, s, x, r)| format!("{p} {s} at {x} ({r:.2}×)"))
                    .collect();
                line.push_str(&format!(
                    "; {} apart, the farthest: {}",
                    a.apart.len(),
                    named.join(", ")
                ));
            }
            Some(line)
        })
        .collect()
}

pub(super) fn machine_rows() -> Vec<Fact> {
    vec![
        ("CPU", |m| m.run.host.cpu_model.clone()),
        ("topology", |m| m.run.topology.summary()),
        ("CPUs allowed", |m| m.cpus.to_string()),
        ("clock for cycles", |m| {
            format!("{:.3} GHz ({})", m.hz / 1e9, m.hz_source)
        }),
        ("kernel", |m| m.run.host.kernel.clone()),
        ("profile", |m| m.run.profile.name().to_string()),
        ("started", |m| m.run.started_utc.clone()),
    ]
}

/// "peak: A 1.2 Gops/s (0.6 per CPU), B …" for rate series over threads.
pub(super) fn peak_line(ss: &[Option<&Series>], ms: &[Machine], unit: &str) -> Option<String> {
    if !is_rate(unit) {
        return None;
    }
    let parts: Vec<String> = ss
        .iter()
        .zip(ms)
        .filter_map(|(s, m)| {
            let s = (*s)?;
            // The peak with its interval where the file has one.
            let peak = (0..s.y.len())
                .filter_map(|i| s.estimate(i))
                .filter(|e| e.value.is_finite())
                .max_by(|a, b| a.value.total_cmp(&b.value))?;
            let per = fmt_value(unit, per_cpu(peak.value, m));
            if !peak.has_interval() {
                return Some(format!(
                    "{} {} ({per} per CPU)",
                    m.label,
                    fmt_value(unit, peak.value)
                ));
            }
            let (f, label) = crate::render::unit_scale(unit, peak.value);
            Some(format!(
                "{} {} {label} (95 % CI {}–{}; {per} per CPU)",
                m.label,
                fmt_num(peak.value / f),
                fmt_num(peak.lo / f),
                fmt_num(peak.hi / f)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("peak: {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_intervals_are_marked_indistinguishable() {
        let e = |value: f64, lo: f64, hi: f64| Estimate {
            value,
            lo,
            hi,
            n: 7,
        };
        let a = e(10.0, 9.0, 11.0);
        assert_eq!(ratio_of(Some(&a), Some(&e(10.5, 9.5, 11.5))), "1.05× ≈");
        assert_eq!(ratio_of(Some(&a), Some(&e(15.0, 14.0, 16.0))), "1.50×");
        // Without an interval on either side nothing is said either way.
        let exact = Estimate::exact(10.5);
        assert_eq!(ratio_of(Some(&a), Some(&exact)), "1.05×");
        assert_eq!(ratio_of(None, Some(&a)), "-");
    }

    #[test]
    fn ratios_are_against_the_first() {
        assert_eq!(ratio(Some(2.0), Some(3.0)), "1.50×");
        assert_eq!(ratio(None, Some(3.0)), "-");
        assert_eq!(ratio(Some(0.0), Some(3.0)), "-");
    }
}
