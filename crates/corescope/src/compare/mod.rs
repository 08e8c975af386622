//! Side-by-side comparison of run files from several machines (seed 000
//! Figure 3: one column per machine), as a pure model: probes are matched by id,
//! series and distributions by name; parameters that differ between the runs are
//! listed, never merged silently ([`param_mismatches`]); `model` aligns matrices,
//! tables and distributions. The renderers (`render::compare`) word and draw it.

pub mod differences;
pub mod model;

use crate::model::{ProbeResult, RunFile, Series};
use std::collections::BTreeMap;

/// Probe ids in order of first appearance across the runs, filtered.
pub fn probe_ids(runs: &[RunFile], only: Option<&[String]>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut ids: Vec<String> = Vec::new();
    for r in runs {
        for p in &r.probes {
            if only.is_none_or(|o| o.contains(&p.id)) && seen.insert(p.id.as_str()) {
                ids.push(p.id.clone());
            }
        }
    }
    ids
}

/// The clock a run's per-cycle figures divide by, and which it is: the measured
/// core clock with one thread busy, else with every CPU busy, else the nominal
/// clock, else the timer's rate (named by its source).
pub fn cycle_clock(run: &RunFile) -> (f64, String) {
    let c = &run.clock;
    match (c.core_hz_one, c.core_hz_all, run.host.nominal_hz) {
        (Some(h), _, _) if h > 0.0 => (h, "measured core clock, one thread busy".into()),
        (_, Some(h), _) if h > 0.0 => (h, "measured core clock, every CPU busy".into()),
        (_, _, Some(h)) if h > 0.0 => (h, "nominal".into()),
        _ => (c.ticks_hz, c.source.clone()),
    }
}

/// The measured core clock of two runs where they cannot be the same: with one
/// thread or with every CPU busy, the two runs' ranges (the spread of the
/// clock's repetitions) do not overlap. Rates of clock-bound work then differ
/// with the clock, and per-cycle figures divide it out.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockShift {
    /// `one thread busy` or `every CPU busy`.
    pub load: &'static str,
    /// The first run's clock (Hz) and its range.
    pub a: (f64, [f64; 2]),
    /// The other run's.
    pub b: (f64, [f64; 2]),
}

/// The first clock (one thread busy, then every CPU busy) that moved between
/// run `a` and run `b` beyond its ranges; `None` when both overlap or either
/// run lacks a measured clock with its range.
pub fn clock_shift(a: &RunFile, b: &RunFile) -> Option<ClockShift> {
    let pairs = [
        (
            "one thread busy",
            (a.clock.core_hz_one, a.clock.core_hz_one_range),
            (b.clock.core_hz_one, b.clock.core_hz_one_range),
        ),
        (
            "every CPU busy",
            (a.clock.core_hz_all, a.clock.core_hz_all_range),
            (b.clock.core_hz_all, b.clock.core_hz_all_range),
        ),
    ];
    pairs.into_iter().find_map(|(load, (ha, ra), (hb, rb))| {
        let (ha, ra, hb, rb) = (ha?, ra?, hb?, rb?);
        let apart = ra[1] < rb[0] || rb[1] < ra[0];
        (apart && ha > 0.0 && hb > 0.0).then_some(ClockShift {
            load,
            a: (ha, ra),
            b: (hb, rb),
        })
    })
}

/// Entries of a probe's parameters that the runner records as it measures (the
/// round trips it read, the rounds it ran), not settings of the measurement: two
/// runs differ in them by nature, so they are not listed as differing parameters.
pub const OBSERVED_PARAMS: [&str; 5] = [
    "cpu_round_trip_ns_seen",
    "steady_round_trip_ns",
    "rounds_min",
    "rounds_max",
    "rounds_dropped_unsteady",
];

/// Parameters whose values differ between the runs that have the probe:
/// `(key, value per machine)`; a missing key shows as `-`. What the runner observed
/// ([`OBSERVED_PARAMS`]) is left out.
pub fn param_mismatches(probes: &[Option<&ProbeResult>]) -> Vec<(String, Vec<String>)> {
    let mut keys: Vec<&String> = probes
        .iter()
        .flatten()
        .flat_map(|p| p.params.keys())
        .collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| !OBSERVED_PARAMS.contains(&k.as_str()));
    let mut out = Vec::new();
    for k in keys {
        let vals: Vec<String> = probes
            .iter()
            .map(|p| match p {
                Some(p) => p
                    .params
                    .get(k)
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
                None => "(no probe)".into(),
            })
            .collect();
        let present: Vec<&String> = vals.iter().filter(|v| *v != "(no probe)").collect();
        if present.windows(2).any(|w| w[0] != w[1]) {
            out.push((k.clone(), vals));
        }
    }
    out
}

/// Names of one shape (`names_of` lists them per probe) across runs, in order of
/// first appearance.
fn names_across<F>(probes: &[Option<&ProbeResult>], names_of: F) -> Vec<String>
where
    F: Fn(&ProbeResult) -> Vec<&str>,
{
    let mut seen = std::collections::HashSet::new();
    let mut names: Vec<String> = Vec::new();
    for p in probes.iter().flatten() {
        for n in names_of(p) {
            if seen.insert(n) {
                names.push(n.to_string());
            }
        }
    }
    names
}

pub fn series_names(probes: &[Option<&ProbeResult>]) -> Vec<String> {
    names_across(probes, |p| {
        p.series.iter().map(|s| s.name.as_str()).collect()
    })
}

pub fn dist_names(probes: &[Option<&ProbeResult>]) -> Vec<String> {
    names_across(probes, |p| {
        p.distributions.iter().map(|d| d.name.as_str()).collect()
    })
}

/// The series of each name in each run, looked up by map (linear, where a
/// search per name was quadratic in the number of series).
pub fn series_index<'a>(probes: &[Option<&'a ProbeResult>]) -> Vec<BTreeMap<&'a str, &'a Series>> {
    probes
        .iter()
        .map(|p| {
            let mut m = BTreeMap::new();
            for s in p.map(|p| p.series.as_slice()).unwrap_or_default() {
                m.entry(s.name.as_str()).or_insert(s);
            }
            m
        })
        .collect()
}

/// [`series_index`] for distributions.
pub fn dist_index<'a>(
    probes: &[Option<&'a ProbeResult>],
) -> Vec<BTreeMap<&'a str, &'a crate::model::Distribution>> {
    probes
        .iter()
        .map(|p| {
            let mut m = BTreeMap::new();
            for d in p.map(|p| p.distributions.as_slice()).unwrap_or_default() {
                m.entry(d.name.as_str()).or_insert(d);
            }
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probe(params: serde_json::Value) -> ProbeResult {
        serde_json::from_value(json!({
            "id": "p", "title": "t", "status": "completed",
            "params": params, "cases_planned": 1, "cases_done": 1, "elapsed_s": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn cycles_use_the_runs_own_measured_clock_first() {
        let mut r: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        r.host.nominal_hz = Some(2.0e9);
        r.clock.core_hz_one = None;
        r.clock.core_hz_all = None;
        assert_eq!(cycle_clock(&r), (2.0e9, "nominal".to_string()));
        r.clock.core_hz_all = Some(2.5e9);
        assert_eq!(cycle_clock(&r).0, 2.5e9);
        r.clock.core_hz_one = Some(3.1e9);
        assert_eq!(cycle_clock(&r).0, 3.1e9);
        r.clock.core_hz_one = Some(0.0);
        r.clock.core_hz_all = None;
        r.host.nominal_hz = None;
        assert_eq!(cycle_clock(&r), (r.clock.ticks_hz, r.clock.source.clone()));
    }

    #[test]
    fn a_clock_that_moved_beyond_its_ranges_is_named() {
        let mut a: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        a.clock.core_hz_one = Some(3.01e9);
        a.clock.core_hz_one_range = Some([2.96e9, 3.10e9]);
        a.clock.core_hz_all = Some(2.99e9);
        a.clock.core_hz_all_range = Some([2.94e9, 3.07e9]);
        let mut b = a.clone();
        assert_eq!(clock_shift(&a, &b), None);
        // One thread: overlapping ranges; every CPU: apart.
        b.clock.core_hz_one = Some(3.08e9);
        b.clock.core_hz_one_range = Some([2.96e9, 3.17e9]);
        b.clock.core_hz_all = Some(3.24e9);
        b.clock.core_hz_all_range = Some([3.14e9, 3.43e9]);
        let s = clock_shift(&a, &b).expect("moved");
        assert_eq!(s.load, "every CPU busy");
        assert_eq!(s.b.0, 3.24e9);
        // No range recorded: nothing is claimed.
        b.clock.core_hz_all_range = None;
        assert_eq!(clock_shift(&a, &b), None);
    }

    #[test]
    fn differing_parameters_are_listed_not_merged() {
        // The round trips the runner read differ by nature: not a parameter.
        let a = probe(json!({"iters": 10, "same": 1, "cpu_round_trip_ns_seen": [60]}));
        let b = probe(json!({"iters": 20, "same": 1, "cpu_round_trip_ns_seen": [420]}));
        let m = param_mismatches(&[Some(&a), Some(&b), None]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].0, "iters");
        assert_eq!(m[0].1, vec!["10", "20", "(no probe)"]);
    }
}
