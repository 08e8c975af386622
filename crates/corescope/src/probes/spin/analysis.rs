//! `spin`'s findings (pure): the cases' one-row tables merged per placement, what
//! the plain loop and the parked waiter cost, the cheapest spinning loop, and the
//! benchmarks slowed under every loop.

use super::bench::BENCHES;
use super::table::{
    bench_column, bench_high_column, bench_low_column, bench_outcome_column, SUMMARY_COLUMNS,
};
use crate::model::{Estimate, Finding, Outcome, Table};
use crate::stats;

/// The cases' one-row tables merged into one table per placement, and what they
/// show: per placement the plain loop's and the parked waiter's cost, the cheapest
/// spinning loop, and every benchmark slowed beyond the noise under every loop.
/// The spin tables come out transposed (a column per loop, a row per quantity:
/// narrower), without the per-benchmark outcome columns (the findings carry them);
/// other tables (the event counters') pass through.
pub fn merge_tables(tables: Vec<Table>) -> (Vec<Table>, Vec<Finding>) {
    let mut merged: Vec<Table> = Vec::new();
    for t in tables {
        match merged.iter_mut().find(|m| m.name == t.name) {
            Some(m) => m.rows.extend(t.rows),
            None => merged.push(t),
        }
    }
    let mut findings = Vec::new();
    let mut out = Vec::new();
    for t in merged {
        let Some(rel) = super::table_placement(&t.name).map(str::to_string) else {
            out.push(t);
            continue;
        };
        findings.extend(table_findings(&t));
        findings.extend(slowed_everywhere(&rel, &bench_slowdowns(&t)));
        out.push(transpose(&without_outcomes(&t)));
    }
    (out, findings)
}

/// One loop's row of a spin table: name, read interval, hand-off, overall slowdown.
struct LoopRow {
    name: String,
    read_ns: f64,
    handoff_ns: f64,
    slowdown: Estimate,
    outcome: Outcome,
}

fn loop_rows(t: &Table) -> Vec<LoopRow> {
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let (Some(sd), Some(lo), Some(hi), Some(oc)) = (
        col(SUMMARY_COLUMNS[0]),
        col(SUMMARY_COLUMNS[1]),
        col(SUMMARY_COLUMNS[2]),
        col(SUMMARY_COLUMNS[3]),
    ) else {
        return Vec::new();
    };
    t.rows
        .iter()
        .filter_map(|r| {
            Some(LoopRow {
                name: r.first()?.as_str()?.to_string(),
                read_ns: r.get(1)?.as_f64()?,
                handoff_ns: r.get(2)?.as_f64()?,
                slowdown: Estimate {
                    value: r.get(sd)?.as_f64()?,
                    lo: r.get(lo)?.as_f64()?,
                    hi: r.get(hi)?.as_f64()?,
                    n: 0,
                },
                outcome: match r.get(oc)?.as_str()? {
                    "different" => Outcome::Different,
                    "equivalent" => Outcome::Equivalent,
                    _ => Outcome::Inconclusive,
                },
            })
        })
        .collect()
}

/// What a spinner on the active thread's own CPU measures: not seed 003's
/// interference through a shared core, but the scheduler sharing one CPU.
pub const SAME_CPU_MEANS: &str = "the spinner shares the active thread's CPU: this is the scheduler time-slicing the two, not interference through a shared core (smt-sibling measures that, where the machine has SMT)";

/// Per placement: what the plain loop and a futex-parked waiter cost the active
/// thread, and the cheapest loop that still spins (by its interval: only a loop
/// whose upper bound is below every other loop's central value is called cheapest).
fn table_findings(t: &Table) -> Vec<Finding> {
    let rows = loop_rows(t);
    let rel = super::table_placement(&t.name).unwrap_or(&t.name);
    let what = format!("active thread, spinner {rel}");
    let mut out = Vec::new();
    for (loop_name, cause) in [
        ("plain", "a plain spin loop"),
        ("futex", "a waiter parked on a futex"),
    ] {
        if let Some(r) = rows.iter().find(|r| r.name == loop_name) {
            out.push(Finding::Slowdown {
                what: what.clone(),
                cause: cause.into(),
                ratio: r.slowdown,
                outcome: r.outcome,
                context: match (loop_name, rel) {
                    ("futex", _) => Some(format!("its hand-off takes {:.0} ns", r.handoff_ns)),
                    (_, "same-cpu") => Some(SAME_CPU_MEANS.into()),
                    _ => None,
                },
            });
        }
    }
    let spinning: Vec<&LoopRow> = rows
        .iter()
        .filter(|r| r.name != "futex" && r.name != "yield")
        .collect();
    if let Some(best) = spinning
        .iter()
        .min_by(|a, b| a.slowdown.value.total_cmp(&b.slowdown.value))
    {
        let clear = spinning
            .iter()
            .filter(|r| r.name != best.name)
            .all(|r| best.slowdown.hi < r.slowdown.lo);
        out.push(if clear {
            Finding::Note {
                text: format!(
                    "{rel}: the cheapest spinning loop is {} ({:.2}× the active thread's time, \
                     95 % CI {:.2}–{:.2}; a lock read every {:.0} ns, hand-off {:.0} ns)",
                    best.name,
                    best.slowdown.value,
                    best.slowdown.lo,
                    best.slowdown.hi,
                    best.read_ns,
                    best.handoff_ns
                ),
            }
        } else {
            Finding::Note {
                text: format!(
                    "{rel}: no spinning loop is clearly cheapest (their slowdown intervals \
                     overlap); lowest estimate {} at {:.2}×",
                    best.name, best.slowdown.value
                ),
            }
        });
    }
    out
}

/// Rows ↔ columns, the first column becoming the header.
fn transpose(t: &Table) -> Table {
    let mut columns = vec![String::new()];
    columns.extend(
        t.rows
            .iter()
            .map(|r| r[0].as_str().unwrap_or("?").to_string()),
    );
    let rows = (1..t.columns.len())
        .map(|c| {
            let mut row = vec![serde_json::json!(t.columns[c])];
            row.extend(t.rows.iter().map(|r| r.get(c).cloned().unwrap_or_default()));
            row
        })
        .collect();
    Table {
        name: t.name.clone(),
        columns,
        rows,
    }
}

/// One benchmark's slowdown under one loop.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchSlowdown {
    /// The spin loop (`plain`, `futex`).
    pub loop_name: String,
    /// The benchmark (`hash`).
    pub bench: String,
    /// With ÷ alone, its interval.
    pub ratio: Estimate,
    /// The comparison's outcome.
    pub outcome: Outcome,
}

/// The per-benchmark slowdowns of a merged (row per loop) spin table.
fn bench_slowdowns(t: &Table) -> Vec<BenchSlowdown> {
    let col = |name: &str| t.columns.iter().position(|c| c == name);
    let mut out = Vec::new();
    for r in &t.rows {
        let Some(loop_name) = r.first().and_then(|v| v.as_str()) else {
            continue;
        };
        for b in BENCHES {
            let cell = |c: Option<usize>| c.and_then(|c| r.get(c));
            let num = |name: String| cell(col(&name)).and_then(|v| v.as_f64());
            let (Some(value), Some(lo), Some(hi)) = (
                num(bench_column(b)),
                num(bench_low_column(b)),
                num(bench_high_column(b)),
            ) else {
                continue;
            };
            let outcome = match cell(col(&bench_outcome_column(b))).and_then(|v| v.as_str()) {
                Some("different") => Outcome::Different,
                Some("equivalent") => Outcome::Equivalent,
                _ => Outcome::Inconclusive,
            };
            out.push(BenchSlowdown {
                loop_name: loop_name.to_string(),
                bench: b.to_string(),
                ratio: Estimate {
                    value,
                    lo,
                    hi,
                    n: 0,
                },
                outcome,
            });
        }
    }
    out
}

/// The loop whose waiter does not run while it waits: a benchmark slowed under it
/// too is not slowed by spinning.
pub const PARKED_LOOP: &str = "futex";

/// Benchmarks slowed beyond the noise under every loop measured on placement `rel`,
/// the parked waiter's included (its interval wholly above 1 + the minimum effect,
/// with the full 95 % coverage: the outcome `different`): one finding each, with the
/// smallest of those slowdowns. A parked waiter runs nothing while the benchmark
/// does, so such a slowdown comes from something else that differs between the
/// with and alone runs, and the per-loop differences above it are what spinning adds.
pub fn slowed_everywhere(rel: &str, rows: &[BenchSlowdown]) -> Vec<Finding> {
    let band = 1.0 + stats::MIN_EFFECT;
    let mut out = Vec::new();
    for b in BENCHES {
        let of_b: Vec<&BenchSlowdown> = rows.iter().filter(|r| r.bench == b).collect();
        let parked = of_b.iter().any(|r| r.loop_name == PARKED_LOOP);
        let slowed = |r: &&BenchSlowdown| r.outcome == Outcome::Different && r.ratio.lo >= band;
        if of_b.len() < 2 || !parked || !of_b.iter().all(slowed) {
            continue;
        }
        let Some(least) = of_b
            .iter()
            .min_by(|x, y| x.ratio.value.total_cmp(&y.ratio.value))
        else {
            continue;
        };
        let most = of_b
            .iter()
            .map(|r| r.ratio.value)
            .fold(f64::NEG_INFINITY, f64::max);
        out.push(Finding::Slowdown {
            what: format!("{b}, spinner {rel}"),
            cause: format!(
                "every one of the {} wait loops, the parked {PARKED_LOOP} waiter included (least: {})",
                of_b.len(),
                least.loop_name
            ),
            ratio: least.ratio,
            outcome: Outcome::Different,
            context: Some(format!(
                "{:.2}–{:.2}× across the loops; a parked waiter runs nothing, so this much \
                 is not the spinning's cost but something else the with and alone runs differ in",
                least.ratio.value, most
            )),
        });
    }
    out
}

/// The table without its per-benchmark outcome columns.
fn without_outcomes(t: &Table) -> Table {
    let keep: Vec<usize> = (0..t.columns.len())
        .filter(|&c| !t.columns[c].ends_with(" outcome"))
        .collect();
    Table {
        name: t.name.clone(),
        columns: keep.iter().map(|&c| t.columns[c].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| {
                keep.iter()
                    .map(|&c| r.get(c).cloned().unwrap_or_default())
                    .collect()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::measure::Paired;
    use super::super::table::{slowdown_measurement, SpinnerCount, SPINNER_NOT_COUNTED};
    use super::*;

    /// A slowdown whose outcome follows its interval (the analysis' rule).
    fn slow(loop_name: &str, bench: &str, (value, lo, hi): (f64, f64, f64)) -> BenchSlowdown {
        BenchSlowdown {
            loop_name: loop_name.into(),
            bench: bench.into(),
            ratio: Estimate {
                value,
                lo,
                hi,
                n: 11,
            },
            outcome: if lo >= 1.0 + stats::MIN_EFFECT {
                Outcome::Different
            } else {
                Outcome::Inconclusive
            },
        }
    }

    #[test]
    fn a_benchmark_slowed_under_every_loop_the_parked_one_included_is_a_finding() {
        let mut rows = Vec::new();
        for (l, k) in [("plain", 2.7), ("pause", 2.1), ("futex", 1.6)] {
            // hash: slowed beyond the noise everywhere, the parked waiter included.
            rows.push(slow(l, "hash", (k, k - 0.2, k + 0.2)));
            // add: slowed by the spinning loops only; the parked waiter's interval holds 1.
            let a = if l == "futex" {
                (1.0, 0.97, 1.04)
            } else {
                (1.5, 1.4, 1.6)
            };
            rows.push(slow(l, "add", a));
            // mul: everywhere above 1, but one interval reaches into the ±3 % band.
            rows.push(slow(
                l,
                "mul",
                if l == "pause" {
                    (1.05, 1.02, 1.08)
                } else {
                    (1.5, 1.4, 1.6)
                },
            ));
        }
        let f = slowed_everywhere("other-core", &rows);
        assert_eq!(f.len(), 1, "{f:?}");
        let Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            context,
        } = &f[0]
        else {
            panic!("{f:?}");
        };
        assert_eq!(what, "hash, spinner other-core");
        assert!(
            cause.contains("3 wait loops") && cause.contains("least: futex"),
            "{cause}"
        );
        assert_eq!((ratio.value, *outcome), (1.6, Outcome::Different));
        assert!(context.as_deref().unwrap().starts_with("1.60–2.70×"));
        // Without the parked loop measured, nothing is claimed.
        let spinning: Vec<BenchSlowdown> = rows
            .into_iter()
            .filter(|r| r.loop_name != PARKED_LOOP)
            .collect();
        assert!(slowed_everywhere("other-core", &spinning).is_empty());
    }

    #[test]
    fn merged_tables_keep_per_benchmark_intervals_and_drop_their_outcomes() {
        let paired: Paired = (0..BENCHES.len())
            .map(|i| {
                let alone: Vec<f64> = (0..11).map(|r| 1000.0 + (i + 3 * r) as f64).collect();
                // hash (the last) is twice as long with any waiter, the others equal.
                let k = if i + 1 == BENCHES.len() { 2.0 } else { 1.0 };
                let with = alone
                    .iter()
                    .enumerate()
                    .map(|(r, a)| a * k + (r % 4) as f64)
                    .collect();
                (with, alone)
            })
            .collect();
        let mut tables = Vec::new();
        for name in ["plain", "futex"] {
            let counted = SpinnerCount::Counted {
                cycles: 3000,
                instructions: 1000,
            };
            let sc = if name == "plain" {
                counted
            } else {
                SpinnerCount::Skipped
            };
            let m = slowdown_measurement(name, (5.0, 50.0), &paired, "other-core", &sc).unwrap();
            tables.extend(m.tables);
        }
        let (tables, findings) = merge_tables(tables);
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(t.columns, ["", "plain", "futex"]);
        let row = |label: &str| {
            t.rows
                .iter()
                .find(|r| r[0] == label)
                .unwrap_or_else(|| panic!("{label}"))
        };
        assert!(row("hash low ×")[1].as_f64().unwrap() > 1.9);
        assert!(!t
            .rows
            .iter()
            .any(|r| r[0].as_str().unwrap().ends_with(" outcome")));
        assert_eq!(row("spinner CPI")[1], serde_json::json!(3.0));
        assert_eq!(
            row("spinner CPI")[2],
            serde_json::json!(SPINNER_NOT_COUNTED)
        );
        assert_eq!(row("spinner cycles")[2], serde_json::Value::Null);
        let everywhere: Vec<&Finding> = findings
            .iter()
            .filter(|f| matches!(f, Finding::Slowdown { what, .. } if what.starts_with("hash")))
            .collect();
        assert_eq!(everywhere.len(), 1, "{findings:?}");
    }
}
