//! The papers' machines as references: the numbers the seeds state (never
//! interpolated, never read off a plot), each with its source, shipped as data
//! (`data/references/*.json`), and put beside a run where the same quantity exists.

use crate::model::{Finding, RunFile};
use crate::probes::{compute, pool, workload};
use serde::{Deserialize, Serialize};

/// The reference files, compiled in.
const FILES: [(&str, &str); 6] = [
    ("t3-4", include_str!("../data/references/t3-4.json")),
    ("x4470", include_str!("../data/references/x4470.json")),
    (
        "magny-cours",
        include_str!("../data/references/magny-cours.json"),
    ),
    ("e6900", include_str!("../data/references/e6900.json")),
    ("t3e", include_str!("../data/references/t3e.json")),
    (
        "origin2000",
        include_str!("../data/references/origin2000.json"),
    ),
];

/// Errors reading the reference data.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// A compiled-in file does not parse (a bug in the data).
    #[error("reference data {name} does not parse: {source}")]
    Parse {
        /// The reference.
        name: String,
        /// Why.
        source: serde_json::Error,
    },
    /// No reference by that name.
    #[error("no reference machine '{0}' (see `corescope reference list`)")]
    Unknown(String),
}

/// One machine of a paper.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reference {
    /// Short name (`t3-4`).
    pub name: String,
    /// The machine as the paper describes it.
    pub description: String,
    /// The seed file the numbers come from.
    pub seed: String,
    /// The numbers.
    pub values: Vec<RefValue>,
    /// Cases the paper gave up on ("-give up-").
    #[serde(default)]
    pub gave_up: Vec<GaveUp>,
}

/// One number a paper states.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RefValue {
    /// What (`compute/int/per_core`, `fft/mutex`, `workload/compute/scalability`).
    pub quantity: String,
    /// The value as stated (converted only between SI prefixes: GIAOPS → ops/s).
    pub value: f64,
    /// Unit (`ops_per_s`, `ms`, `ns`, `unstated` when the paper gives none).
    pub unit: String,
    /// Seed file, section, figure or table, row and column.
    pub source: String,
    /// The x of the value (threads, FFT size, recursions), if any.
    #[serde(default)]
    pub x: Option<f64>,
    /// Name of x.
    #[serde(default)]
    pub x_name: Option<String>,
}

/// A case the paper gave up on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GaveUp {
    /// The quantity.
    pub quantity: String,
    /// Its x.
    pub x: f64,
    /// Where the paper says so.
    pub source: String,
}

impl Reference {
    /// The value of `quantity` (at `x`, when given).
    pub fn value(&self, quantity: &str, x: Option<f64>) -> Option<&RefValue> {
        self.values
            .iter()
            .find(|v| v.quantity == quantity && v.x == x)
    }

    /// The machine's size as the paper states it: its hardware threads, else its
    /// cores, with the word for them; `None` when the paper states neither.
    pub fn size(&self) -> Option<(f64, &'static str)> {
        let stated = |q: &str| self.value(q, None).map(|v| v.value).filter(|n| *n > 0.0);
        stated("hardware_threads")
            .map(|n| (n, "hardware threads"))
            .or_else(|| stated("cores").map(|n| (n, "cores")))
    }
}

/// Every reference machine.
pub fn all() -> Result<Vec<Reference>, ReferenceError> {
    FILES
        .iter()
        .map(|(name, text)| {
            serde_json::from_str(text).map_err(|source| ReferenceError::Parse {
                name: (*name).into(),
                source,
            })
        })
        .collect()
}

/// The reference called `name`.
pub fn get(name: &str) -> Result<Reference, ReferenceError> {
    all()?
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(|| ReferenceError::Unknown(name.into()))
}

/// One row of the side-by-side: the quantity, this run's value, the paper's, and
/// per core / per cycle forms where both machines' cores and clocks are known.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What.
    pub quantity: String,
    /// Unit of both values.
    pub unit: String,
    /// This run's value.
    pub this: f64,
    /// The paper's value.
    pub paper: f64,
    /// The paper's value per cycle of its clock, and this run's per cycle of its
    /// measured core clock, when both exist.
    pub per_cycle: Option<(f64, f64)>,
    /// The paper's source.
    pub source: String,
}

/// The paper's name for one of `workload`'s kinds of work: seed 001's IO test
/// opens its file for every unit (`io-open-each`; `io-open-once` is corescope's
/// own contrast and has no paper value).
fn paper_work(kind: &str) -> &str {
    match kind {
        "io-open-each" => "io",
        other => other,
    }
}

/// Facts about the paper's machine, shown in its description, not compared.
const MACHINE_FACTS: [&str; 4] = ["clock_hz", "clock_hz/nominal", "cores", "hardware_threads"];

/// Every value the paper states that [`side_by_side`] could not put beside this
/// run (machine facts aside), each with the reason: (quantity at x, why).
pub fn unmatched(run: &RunFile, r: &Reference, rows: &[Row]) -> Vec<(String, String)> {
    // A row's quantity is the value's, with " at <x name> <x>" for a value at an x
    // and " (<what>)" for the timer rows.
    let shown = |v: &RefValue| {
        let q = &v.quantity;
        rows.iter().any(|row| match v.x {
            Some(x) => {
                let name = v.x_name.as_deref().unwrap_or("x");
                row.quantity == format!("{q} at {name} {x}")
            }
            // `timer/overhead_max` is shown as "timer/overhead (…; paper: upper bound)".
            None => {
                row.quantity == *q
                    || row
                        .quantity
                        .starts_with(&format!("{} (", q.trim_end_matches("_max")))
            }
        })
    };
    let probe = |id: &str| run.probes.iter().find(|p| p.id == id);
    r.values
        .iter()
        .filter(|v| !MACHINE_FACTS.contains(&v.quantity.as_str()) && !shown(v))
        .map(|v| {
            let at =
                v.x.map(|x| format!(" at {} {x}", v.x_name.as_deref().unwrap_or("x")))
                    .unwrap_or_default();
            (format!("{}{at}", v.quantity), unmatched_reason(v, probe))
        })
        .collect()
}

/// Whether a reference quantity is probe `id`'s (`workload/io/cpi` is `workload`'s):
/// the papers' values are named after the probes that measure them.
fn named_after(quantity: &str, id: &str) -> bool {
    quantity
        .strip_prefix(id)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Why a paper's value has no counterpart in this run.
fn unmatched_reason<'a>(
    v: &RefValue,
    probe: impl Fn(&str) -> Option<&'a crate::model::ProbeResult>,
) -> String {
    let q = v.quantity.as_str();
    let (head, tail) = q.rsplit_once('/').unwrap_or((q, ""));
    let missing = |id: &str| format!("this run has no `{id}` probe");
    match (head, tail) {
        (_, "mips" | "cpi" | "efficiency") if named_after(head, workload::ID) => {
            match probe(workload::ID) {
                None => missing(workload::ID),
                Some(_) => "counted per case in the workload's counters table where the machine has a PMU; the paper's figure is for its whole run, so it is not matched automatically".into(),
            }
        }
        (_, "units" | "avg_time") if named_after(head, workload::ID) => {
            "the paper counts units in its own run time; this run gives a rate (`<work>/rate`) and a scalability, which is compared where the thread counts match".into()
        }
        ("rmatmul", order) => match probe(pool::ID) {
            None => missing(pool::ID),
            Some(p) => {
                let orders: Vec<&str> = p
                    .series
                    .iter()
                    .filter_map(|s| s.name.strip_prefix("rmatmul/taskpool/"))
                    .collect();
                format!(
                    "this run multiplied matrices of order {} (the paper {order}; `--full` runs 1024 and 2048)",
                    if orders.is_empty() { "none".to_string() } else { orders.join(", ") }
                )
            }
        },
        ("fft", _) => match probe(pool::ID) {
            None => missing(pool::ID),
            Some(_) => "this run has no FFT at this size with this runtime (sizes end where the profile or the budget stops them)".into(),
        },
        _ => "no series of this run has this quantity at this x".into(),
    }
}

/// The quantities this run and `r` both have, side by side. Only exact matches:
/// the same quantity at the same x; nothing is interpolated.
pub fn side_by_side(run: &RunFile, r: &Reference) -> Vec<Row> {
    let mut rows = Vec::new();
    let cores = run.topology.cores.max(1) as f64;
    let hz = run.clock.core_hz_all.or(run.clock.core_hz_one);
    let paper_hz = r.value("clock_hz", None).map(|v| v.value);
    let per_cycle = |this: f64, paper: f64| match (hz, paper_hz) {
        (Some(h), Some(p)) if h > 0.0 && p > 0.0 => Some((paper / p, this / h)),
        _ => None,
    };
    // Compute: the peak of int / fp over the cores (seed 000 §4 compares per core).
    if let Some(p) = run.probes.iter().find(|p| p.id == compute::ID) {
        for f in &p.findings {
            if let Finding::Scaling { what, peak, .. } = f {
                let q = format!("{}/{what}/per_core", compute::ID);
                if let Some(v) = r.value(&q, None) {
                    let this = peak.value / cores;
                    rows.push(Row {
                        quantity: q,
                        unit: v.unit.clone(),
                        this,
                        paper: v.value,
                        per_cycle: per_cycle(this, v.value),
                        source: v.source.clone(),
                    });
                }
            }
        }
    }
    // Series with the same name and x: workload scalability (seed 001), FFT times.
    for p in &run.probes {
        for s in &p.series {
            let (q, scale) = match (p.id.as_str(), s.name.split_once('/')) {
                (workload::ID, Some((kind, "scalability"))) => {
                    let q = format!("{}/{}/scalability", workload::ID, paper_work(kind));
                    (q, 1.0)
                }
                // The pool probe's FFT times are seconds; the paper's ms.
                (pool::ID, _) if s.name == "fft/mutex" => ("fft/mutex".to_string(), 1e3),
                (pool::ID, _) if s.name == "fft/lockfree" => ("fft/lockless".to_string(), 1e3),
                _ => continue,
            };
            for (i, &x) in s.x.iter().enumerate() {
                if let (Some(v), Some(&y)) = (r.value(&q, Some(x)), s.y.get(i)) {
                    rows.push(Row {
                        quantity: format!("{q} at {} {x}", v.x_name.as_deref().unwrap_or("x")),
                        unit: v.unit.clone(),
                        this: y * scale,
                        paper: v.value,
                        per_cycle: None,
                        source: v.source.clone(),
                    });
                }
            }
        }
    }
    // Timers (seed 002 Table 1): this run's finest clock step.
    if let Some(v) = r.value("timer/step", None) {
        rows.push(Row {
            quantity: format!("timer/step ({})", run.clock.source),
            unit: v.unit.clone(),
            this: run.clock.step_ns,
            paper: v.value,
            per_cycle: None,
            source: v.source.clone(),
        });
    }
    if let Some(v) = r.value("timer/overhead_max", None) {
        rows.push(Row {
            quantity: format!("timer/overhead ({}; paper: upper bound)", run.clock.source),
            unit: v.unit.clone(),
            this: run.clock.read_overhead_ns,
            paper: v.value,
            per_cycle: None,
            source: v.source.clone(),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_names_its_seed_and_where_in_it() {
        let refs = all().expect("reference data parses");
        assert_eq!(refs.len(), FILES.len());
        for r in &refs {
            assert!(!r.values.is_empty(), "{}", r.name);
            for v in &r.values {
                assert!(
                    v.source.starts_with(&r.seed),
                    "{}: {} has no seed source: {}",
                    r.name,
                    v.quantity,
                    v.source
                );
                let place = ["Figure", "Table", "§"];
                assert!(
                    place.iter().any(|p| v.source.contains(p)),
                    "{}: {} does not say where in the seed: {}",
                    r.name,
                    v.quantity,
                    v.source
                );
                assert!(v.value.is_finite() && !v.unit.is_empty());
            }
        }
        // Spot checks against the seeds' text.
        let t3 = get("t3-4").unwrap();
        assert_eq!(t3.value("compute/fp/per_core", None).unwrap().value, 1.60e9);
        assert_eq!(t3.value("fft/mutex", Some(16.0)).unwrap().value, 126745.60);
        assert_eq!(
            t3.value("rmatmul/8192", Some(5.0)).unwrap().value,
            166715.08
        );
        let e = get("e6900").unwrap();
        assert_eq!(
            e.value("workload/compute/scalability", Some(8.0))
                .unwrap()
                .value,
            7.97
        );
        assert_eq!(e.value("workload/io/cpi", Some(2.0)).unwrap().value, 3.31);
        assert_eq!(t3.size(), Some((512.0, "hardware threads")));
        assert_eq!(e.size(), Some((8.0, "hardware threads")));
        assert_eq!(get("t3e").unwrap().size(), None);
        assert!(matches!(get("nope"), Err(ReferenceError::Unknown(_))));
    }

    #[test]
    fn a_run_is_put_beside_the_paper_per_core_and_per_cycle() {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../tests/fixtures/quick.json")).unwrap();
        run.topology.cores = 2;
        run.clock.core_hz_all = Some(2e9);
        let mut p = crate::model::ProbeResult::new("compute", "t", crate::model::Status::Completed);
        p.findings.push(Finding::Scaling {
            what: "fp".into(),
            unit: "ops_per_s".into(),
            peak: crate::model::Estimate::without_interval(4e9),
            peak_threads: 2.0,
            peak_variant: "linear".into(),
            saturation_threads: 2.0,
            one_thread: None,
            cpus: 2,
        });
        let mut w =
            crate::model::ProbeResult::new("workload", "t", crate::model::Status::Completed);
        w.push_point(crate::model::Point::new(
            "compute/scalability",
            "threads",
            2.0,
            "x_one_thread",
            1.9,
        ));
        run.probes = vec![p, w];
        let rows = side_by_side(&run, &get("t3-4").unwrap());
        let fp = rows
            .iter()
            .find(|r| r.quantity == "compute/fp/per_core")
            .unwrap();
        assert_eq!((fp.this, fp.paper), (2e9, 1.60e9));
        let (paper, this) = fp.per_cycle.unwrap();
        assert!((paper - 1.60 / 1.65).abs() < 1e-9 && (this - 1.0).abs() < 1e-9);
        let rows = side_by_side(&run, &get("e6900").unwrap());
        assert!(rows
            .iter()
            .any(|r| r.quantity.starts_with("workload/compute/scalability") && r.paper == 2.0));
    }

    #[test]
    fn every_value_of_every_paper_is_beside_the_run_or_says_why_not() {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../tests/fixtures/quick.json")).unwrap();
        let mut w =
            crate::model::ProbeResult::new("workload", "t", crate::model::Status::Completed);
        // The seed's IO test opens its file per unit: io-open-each.
        w.push_point(crate::model::Point::new(
            "io-open-each/scalability",
            "threads",
            2.0,
            "x_one_thread",
            1.5,
        ));
        run.probes = vec![w];
        for r in all().unwrap() {
            let rows = side_by_side(&run, &r);
            let missing = unmatched(&run, &r, &rows);
            let facts = r
                .values
                .iter()
                .filter(|v| MACHINE_FACTS.contains(&v.quantity.as_str()))
                .count();
            assert_eq!(
                rows.len() + missing.len() + facts,
                r.values.len(),
                "{}: {rows:?} {missing:?}",
                r.name
            );
            assert!(missing.iter().all(|(_, why)| !why.is_empty()));
            if r.name == "e6900" {
                assert!(rows
                    .iter()
                    .any(|row| row.quantity == "workload/io/scalability at threads 2"));
                assert!(missing
                    .iter()
                    .any(|(q, why)| q.starts_with("workload/io/cpi") && why.contains("PMU")));
            }
        }
    }
}
