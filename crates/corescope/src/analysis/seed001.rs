//! Seed 001's Table 2 (test 1, compute work: MIPS, CPI and efficiency as threads
//! fill the machine) read from a compute result: the PMU's counts where the
//! machine has one (`counters`), the kernel's known instruction count where not
//! (the series `<kind>-mips-from-count/<placement>` …). Efficiency is the seed's
//! machine figure, MIPS ÷ the machine's maximum MIPS (the plan's
//! `machine_max_mips`: core clock × cores × issue width ÷ 10⁶), in percent.

use crate::counters::Availability;
use crate::model::{Estimate, ProbeResult};

/// Placements the table is read from, in order of preference: unbound first (the
/// seed's threads were placed by the Solaris scheduler).
pub const PLACEMENT_ORDER: [&str; 4] = ["unbound", "linear", "scatter", "compact"];

/// Name of the MIPS series from the kernel's instruction count.
pub fn mips_series(kind: &str, placement: &str) -> String {
    format!("{kind}-mips-from-count/{placement}")
}

/// Name of the CPI series from the kernel's instruction count.
pub fn cpi_series(kind: &str, placement: &str) -> String {
    format!("{kind}-cpi-from-count/{placement}")
}

/// Name of the machine-efficiency series (percent; MIPS from the instruction count).
pub fn efficiency_series(kind: &str, placement: &str) -> String {
    format!("{kind}-machine-efficiency-from-count/{placement}")
}

/// Where the MIPS and CPI of a table come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Counted by the PMU (instructions and cycles of every worker).
    Pmu,
    /// The kernel's instruction count per pass (stated from its generated code),
    /// the team time and the core clock read in the round.
    KernelCount,
}

impl Source {
    /// How the source is named beside every figure taken from it.
    pub fn label(self) -> &'static str {
        match self {
            Source::Pmu => "counted by the PMU",
            Source::KernelCount => "from the kernel's instruction count",
        }
    }
}

/// One row of the table: a thread count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Threads.
    pub threads: f64,
    /// Millions of instructions per second (median and interval over rounds).
    pub mips: Estimate,
    /// Cycles per instruction.
    pub cpi: Option<Estimate>,
    /// MIPS ÷ the machine's maximum MIPS, percent.
    pub efficiency: Option<Estimate>,
}

/// Seed 001's Table 2 for one kind of work (`int`, `fp`) and one placement.
#[derive(Debug, Clone, PartialEq)]
pub struct Table2 {
    /// `int` or `fp`.
    pub kind: String,
    /// The placement the rows are read from.
    pub placement: String,
    /// Where MIPS and CPI come from.
    pub source: Source,
    /// The machine's maximum MIPS, if known (issue width and clock).
    pub max_mips: Option<f64>,
    /// One row per thread count, fewest threads first.
    pub rows: Vec<Row>,
}

/// The table for `kind`: the PMU's counts where they exist for the placement,
/// else the series from the kernel's instruction count; `None` when neither.
pub fn table2(result: &ProbeResult, kind: &str) -> Option<Table2> {
    let max_mips = result
        .params
        .get("machine_max_mips")
        .and_then(serde_json::Value::as_f64)
        .filter(|m| *m > 0.0);
    let percent = |mips: Estimate| max_mips.map(|m| mips.scaled(100.0 / m));
    for placement in PLACEMENT_ORDER {
        let rows = pmu_rows(result, kind, placement);
        if !rows.is_empty() {
            let rows = rows
                .into_iter()
                .map(|(threads, mips, cpi)| Row {
                    threads,
                    mips,
                    cpi,
                    efficiency: percent(mips),
                })
                .collect();
            return Some(Table2 {
                kind: kind.into(),
                placement: placement.into(),
                source: Source::Pmu,
                max_mips,
                rows,
            });
        }
    }
    let placement = PLACEMENT_ORDER
        .into_iter()
        .find(|p| result.series(&mips_series(kind, p)).is_some())?;
    let s = result.series(&mips_series(kind, placement))?;
    let cpi = result.series(&cpi_series(kind, placement));
    let rows =
        s.x.iter()
            .enumerate()
            .filter_map(|(i, &x)| {
                let mips = s.estimate(i)?;
                Some(Row {
                    threads: x,
                    mips,
                    cpi: cpi.and_then(|c| c.estimate_at(x)),
                    efficiency: percent(mips),
                })
            })
            .collect();
    Some(Table2 {
        kind: kind.into(),
        placement: placement.into(),
        source: Source::KernelCount,
        max_mips,
        rows,
    })
}

/// (threads, MIPS, CPI) of the PMU-counted cases `<kind> <placement> ×<n>`,
/// fewest threads first; empty without a PMU.
fn pmu_rows(
    result: &ProbeResult,
    kind: &str,
    placement: &str,
) -> Vec<(f64, Estimate, Option<Estimate>)> {
    let Some(pc) = &result.counters else {
        return Vec::new();
    };
    if pc.hardware != Availability::Counted {
        return Vec::new();
    }
    let head = format!("{kind} {placement} ×");
    let mut rows: Vec<_> = pc
        .cases
        .iter()
        .filter_map(|c| {
            let threads: f64 = c.case.strip_prefix(&head)?.parse().ok()?;
            Some((threads, c.mips?, c.cpi))
        })
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    rows
}

/// The row with one thread and the row where the threads first fill the
/// machine's CPUs (the most threads up to `cpus` when none equals it); `None`
/// when the table has no such rows or they are the same.
pub fn one_and_full(t: &Table2, cpus: usize) -> Option<(&Row, &Row)> {
    let one = t.rows.iter().find(|r| r.threads == 1.0)?;
    let full = t
        .rows
        .iter()
        .filter(|r| r.threads <= cpus as f64)
        .max_by(|a, b| a.threads.total_cmp(&b.threads))?;
    (full.threads > one.threads).then_some((one, full))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseCounters, Point, ProbeCounters, Status};

    /// Seed 001's Table 2 filed as the series of a run on its machine (8 cores, 4
    /// per cycle, 1.2 GHz: 38400 MIPS at most): the efficiencies come out as the
    /// seed's, 4.16 % with 1 thread rising to 33.23 % with 8.
    #[test]
    fn the_seeds_table_2_from_series() {
        let mut r = ProbeResult::new("compute", "t", Status::Completed);
        r.params.insert("machine_max_mips".into(), 38400.0.into());
        let rows = [
            (1.0, 1597.5, 2.78, 4.16),
            (2.0, 3183.5, 1.53, 8.29),
            (4.0, 4180.11, 1.23, 10.89),
            (8.0, 12761.94, 0.8, 33.23),
        ];
        for (t, mips, cpi, _) in rows {
            r.push_point(Point::samples(
                mips_series("int", "linear"),
                "threads",
                t,
                crate::counters::MIPS_FROM_COUNT,
                vec![mips * 0.99, mips, mips * 1.01],
            ));
            r.push_point(Point::samples(
                cpi_series("int", "linear"),
                "threads",
                t,
                crate::counters::CPI_FROM_COUNT,
                vec![cpi; 3],
            ));
        }
        let t = table2(&r, "int").unwrap();
        assert_eq!(
            (t.placement.as_str(), t.source),
            ("linear", Source::KernelCount)
        );
        assert_eq!(t.rows.len(), 4);
        for (row, (threads, mips, cpi, percent)) in t.rows.iter().zip(rows) {
            assert_eq!(row.threads, threads);
            assert!((row.mips.value - mips).abs() < 1e-9);
            assert_eq!(row.cpi.unwrap().value, cpi);
            let e = row.efficiency.unwrap();
            assert!(
                (e.value - percent).abs() < 0.005 + 1e-9,
                "{e:?} vs {percent}"
            );
            assert!(e.lo < e.value && e.value < e.hi, "{e:?}");
        }
        let (one, full) = one_and_full(&t, 8).unwrap();
        assert_eq!((one.threads, full.threads), (1.0, 8.0));
        assert_eq!(one_and_full(&t, 1), None);
        assert!(table2(&r, "fp").is_none());
        // No maximum (issue width unknown): MIPS and CPI, no efficiency.
        r.params.remove("machine_max_mips");
        assert!(table2(&r, "int").unwrap().rows[0].efficiency.is_none());
    }

    /// Where the PMU counted, its MIPS and CPI lead, for the preferred placement.
    #[test]
    fn the_pmus_counts_come_first() {
        let mut r = ProbeResult::new("compute", "t", Status::Completed);
        r.params.insert("machine_max_mips".into(), 38400.0.into());
        r.push_point(Point::samples(
            mips_series("int", "unbound"),
            "threads",
            1.0,
            crate::counters::MIPS_FROM_COUNT,
            vec![1.0],
        ));
        let case = |label: &str, mips: f64| CaseCounters {
            mips: Some(Estimate::exact(mips)),
            cpi: Some(Estimate::exact(0.8)),
            ..CaseCounters::new(label)
        };
        let mut pc = ProbeCounters {
            software: Availability::Counted,
            hardware: Availability::Counted,
            kernel_counted: true,
            issue_width: Some(4),
            issue_width_source: "test".into(),
            cases: vec![
                case("int unbound ×8", 12761.94),
                case("int unbound ×1", 1597.5),
                case("fp unbound ×1", 1.0),
            ],
        };
        r.counters = Some(pc.clone());
        let t = table2(&r, "int").unwrap();
        assert_eq!(t.source, Source::Pmu);
        assert_eq!(
            t.rows.iter().map(|r| r.threads).collect::<Vec<_>>(),
            [1.0, 8.0]
        );
        assert!((t.rows[1].efficiency.unwrap().value - 33.23).abs() < 0.005);
        // Without a PMU the series are read instead.
        pc.hardware = Availability::Skipped(crate::counters::SkipReason::Old("no PMU".into()));
        r.counters = Some(pc);
        assert_eq!(table2(&r, "int").unwrap().source, Source::KernelCount);
    }
}
