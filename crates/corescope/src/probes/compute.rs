//! `compute`: integer and floating-point throughput vs thread count and placement
//! (seed 000 §3–4, Figures 1–4; seed 001 test 1).
//!
//! Per thread: a loop over 128 inputs doing 8 dependent operations (2 add, 2 sub,
//! 4 mul) on the input and the previous result, repeated `passes` times. Every
//! thread waits at the start gate; throughput = all operations / (last end − first
//! start). The seed keeps the best of 3; here the runner repeats each case in
//! rounds, the placements of one thread count interleaved, and reports the median
//! with its interval (placements that give the same CPUs are measured once).
//!
//! Every worker counts its events around the kernel (`counters/`): the tables
//! `int: counters per case` and `fp: …` show MIPS, CPI and efficiency where the
//! machine has a PMU, and task-clock, context switches, migrations and page
//! faults everywhere (docs/counters.md).
//!
//! Seed 001's Table 2 (MIPS, CPI and efficiency as threads fill the machine)
//! everywhere, PMU or not: the kernel retires a known number of instructions per
//! pass (`kernels::chains::INSTRUCTIONS_PER_PASS`, read off its generated code),
//! so every round also gives MIPS = instructions ÷ team time and CPI = cycles of
//! the busy CPUs (the clock read in the round) ÷ instructions, the series
//! `int-mips-from-count/<placement>`, `int-cpi-from-count/…`, and the seed's
//! machine efficiency = MIPS ÷ (core clock × cores × issue width ÷ 10⁶),
//! `int-machine-efficiency-from-count/…` (percent). The tables `int: seed 001
//! Table 2 …` take the PMU's counts where they exist and these where not
//! (`analysis::seed001`, docs/compute.md).

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, RunCtx, SweepConfigs};
use crate::analysis;
use crate::kernels::chains::{
    fp_inputs, fp_kernel, int_inputs, int_kernel, FP_K, INPUTS, INSTRUCTIONS_PER_PASS, INT_K,
    OPS_PER_INPUT,
};
use crate::model::{Measurement, Point, ProbeResult, Profile, Sensitivity};
use crate::placement::arg as placement_arg;
use crate::placement::Strategy;
use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Largest thread count as a multiple of the CPU count (seed: up to 4× the strands).
pub const MAX_THREAD_FACTOR: usize = 4;

/// The probe.
pub struct Compute;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Int,
    Fp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Fp => "fp",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    kind: Kind,
    placement: String,
    threads: usize,
    /// Passes over the 128 inputs per thread.
    passes: u64,
    /// Instructions the kernel retires per pass, where known (x86_64).
    #[serde(default)]
    instructions_per_pass: Option<u64>,
    /// Seed 001's maximum MIPS of the machine, where the issue width is known.
    #[serde(default)]
    machine_max_mips: Option<f64>,
}

/// Seed 001's maximum MIPS of the machine this run may use: the all-CPUs core
/// clock × its cores × the issue width ÷ 10⁶, and how it was found; `None` with
/// the reason when the issue width is unknown.
fn machine_max_mips(ctx: &PlanCtx) -> (Option<f64>, String) {
    let cpus = ctx.cpus();
    let mut cores: Vec<u32> = ctx.topo.allowed_pus().map(|p| p.core).collect();
    cores.sort_unstable();
    cores.dedup();
    let clock = ctx.clock.per_cycle_hz(cpus);
    match crate::counters::issue_width_here() {
        Ok(w) => {
            let max = crate::counters::machine_max_mips(clock.hz, cores.len(), w.width);
            let rule = format!(
                "{:.4} GHz ({}) × {} cores × issue width {} ({}: {}) ÷ 10⁶",
                clock.hz / 1e9,
                clock.source,
                cores.len(),
                w.width,
                w.uarch,
                w.source
            );
            (max, rule)
        }
        Err(why) => (None, format!("not known: the issue width is {why}")),
    }
}

/// Default placements of the probe.
pub const PLACEMENTS: [Strategy; 4] = [
    Strategy::Linear,
    Strategy::Compact,
    Strategy::Scatter,
    Strategy::Unbound,
];

/// Id of the probe and of its run-file entry.
pub const ID: &str = "compute";

impl Probe for Compute {
    type Params = CaseParams;
    type Facts = ();

    /// The kernel (`passes` × 1,024 dependent ops per thread, in waves over the
    /// CPUs), the team's creation, then the round's clock.
    /// Summary: the int and fp families' peaks, then each placement and seed 001's Table 2.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Scaling {
            families: &["int", "fp"],
            by_placement: &["int", "fp"],
            table2: &["int", "fp"],
            latency_series: None,
        }
    }
    fn run_cost_s(&self, p: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(
            p.passes as f64 * 1024.0 * c.op_s() * c.waves(p.threads)
                + c.team_spawn_s(p.threads)
                + c.round_clock_s(p.threads),
        )
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "integer and FP throughput vs threads and placement (8 dependent ops per input)"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CoreThroughput]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        // Elements (inputs processed) per thread when threads ≤ CPUs. Full: the
        // seed's 10^9 per thread. Quick and default shrink the per-thread work when
        // threads exceed CPUs so every case takes about the same wall time, and the
        // probe's time grows only with the number of thread counts.
        let elements: u64 = ctx.profile.pick(2_000_000, 8_000_000, 1_000_000_000);
        let cpus = ctx.cpus();
        let counts = ctx.thread_counts(MAX_THREAD_FACTOR);
        let placements = ctx.placements(&PLACEMENTS);
        let mut configs = SweepConfigs::new(&ctx.topo, &placements);
        let (max_mips, max_mips_rule) = machine_max_mips(ctx);
        let mut cases = Vec::new();
        for kind in [Kind::Int, Kind::Fp] {
            for &threads in &counts {
                let share = if ctx.profile == Profile::Full {
                    elements
                } else {
                    elements * cpus as u64 / threads.max(cpus) as u64
                };
                let passes = (share / INPUTS as u64).max(1);
                let group = format!(
                    "{} with {}",
                    kind.name(),
                    crate::units::threads(threads as f64)
                );
                for (k, p) in placements.iter().enumerate() {
                    let config = configs.config(k, threads)?;
                    let params = CaseParams {
                        kind,
                        placement: placement_arg(p),
                        threads,
                        passes,
                        instructions_per_pass: INSTRUCTIONS_PER_PASS,
                        machine_max_mips: max_mips,
                    };
                    cases.push(
                        Case::new(format!("{} {} ×{threads}", kind.name(), p.name()), &params)
                            .compared(&group, p.name(), config),
                    );
                }
            }
        }
        Ok(Plan::new(cases)
            .scaled_down(ctx.thinned_note(""))
            .param("inputs", INPUTS)
            .param("ops_per_input", OPS_PER_INPUT)
            .param("elements_per_thread", elements)
            .param(
                "work_rule",
                if ctx.profile == Profile::Full {
                    "fixed work per thread"
                } else {
                    "work per thread scaled by cpus/max(threads, cpus)"
                },
            )
            .param("repetitions", "runner rounds (see rounds_min / rounds_max)")
            .param("per_cycle_clock", crate::clock::PER_CYCLE_ROUND_RULE)
            .param(
                "instructions_per_pass",
                match INSTRUCTIONS_PER_PASS {
                    Some(n) => serde_json::json!(n),
                    None => serde_json::json!(format!(
                        "unknown on {} (generated code not read): no MIPS / CPI from the \
                         kernel's instruction count",
                        std::env::consts::ARCH
                    )),
                },
            )
            .param("instruction_count_rule", INSTRUCTION_COUNT_RULE)
            .param("machine_max_mips", max_mips)
            .param("machine_max_mips_rule", max_mips_rule)
            .param("thread_counts", &counts)
            .param(
                "placements",
                placements.iter().map(placement_arg).collect::<Vec<_>>(),
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let (strategy, cpus) = super::placed(&ctx.plan.topo, &c.placement, c.threads)?;
        let passes = c.passes;
        let out = match c.kind {
            Kind::Int => ctx.team(&cpus, 1, int_inputs, |t, inputs| {
                black_box(int_kernel(inputs, INT_K, passes, t as i64));
            })?,
            Kind::Fp => ctx.team(&cpus, 1, fp_inputs, |t, inputs| {
                black_box(fp_kernel(inputs, FP_K, passes, 1.0 + t as f64));
            })?,
        };
        let ops = c.threads as f64 * passes as f64 * INPUTS as f64 * OPS_PER_INPUT as f64;
        let rates: Vec<f64> = out
            .team_times_ns()
            .iter()
            .map(|ns| ops / (ns.max(1.0) * 1e-9))
            .collect();
        if rates.is_empty() {
            return Err(NotRun::Repetition.into());
        }
        let hz = super::round_clock_hz(ctx, &cpus, c.threads);
        let per_cycle = rates.iter().map(|r| r / c.threads as f64 / hz).collect();
        let busy = crate::counters::busy_cpus(&cpus, ctx.plan.topo.allowed_count());
        let from_count = from_count(&c, &strategy.name(), &out.team_times_ns(), hz, busy);
        let mut points = vec![
            Point::samples(
                format!("{}/{}", c.kind.name(), strategy.name()),
                "threads",
                c.threads as f64,
                "ops_per_s",
                rates,
            ),
            Point::samples(
                format!("{}-per-cycle/{}", c.kind.name(), strategy.name()),
                "threads",
                c.threads as f64,
                "ops_per_cycle_per_thread",
                per_cycle,
            ),
        ];
        points.extend(from_count);
        Ok(Measurement::points(points))
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let cpus = ctx.cpus();
        for what in ["int", "fp"] {
            let found = [
                analysis::scaling(result, what, "ops_per_s", cpus),
                analysis::placements(result, what, "ops_per_s", cpus as f64),
            ];
            out.findings.extend(found.into_iter().flatten());
        }
        if let Some((note, tables)) = crate::counters::case_tables(result, &["int", "fp"]) {
            out.findings.push(note);
            out.tables.extend(tables);
        }
        seed001_tables(result, cpus, &mut out);
        out
    }
}

/// How MIPS and CPI are found where no PMU counts them, as the plan records it.
const INSTRUCTION_COUNT_RULE: &str = "from the kernel's instruction count: MIPS = threads × \
     passes × instructions_per_pass ÷ team time ÷ 10⁶; CPI = core clock read in the round × \
     busy CPUs × team time ÷ those instructions; machine efficiency = MIPS ÷ machine_max_mips";

/// One round's MIPS, CPI and machine efficiency from the kernel's instruction
/// count (one sample per team time), as three points; none where the count is
/// not known.
fn from_count(c: &CaseParams, place: &str, team_ns: &[f64], hz: f64, busy: usize) -> Vec<Point> {
    use crate::analysis::seed001::{cpi_series, efficiency_series, mips_series};
    use crate::counters::{
        cpi_from_count, mips_from_count, CPI_FROM_COUNT, MIPS_FROM_COUNT, PERCENT_OF_MAX_MIPS,
    };
    let Some(per_pass) = c.instructions_per_pass else {
        return Vec::new();
    };
    let instructions = c.threads as f64 * c.passes as f64 * per_pass as f64;
    let kind = c.kind.name();
    let x = c.threads as f64;
    let mips: Vec<f64> = team_ns
        .iter()
        .filter_map(|ns| mips_from_count(instructions, ns.max(1.0)))
        .collect();
    let cpi: Vec<f64> = team_ns
        .iter()
        .filter_map(|ns| cpi_from_count(hz, busy, ns.max(1.0), instructions))
        .collect();
    let mut points = Vec::new();
    if let Some(max) = c.machine_max_mips.filter(|m| *m > 0.0) {
        let percent = mips.iter().map(|m| 100.0 * m / max).collect();
        points.push(Point::samples(
            efficiency_series(kind, place),
            "threads",
            x,
            PERCENT_OF_MAX_MIPS,
            percent,
        ));
    }
    points.push(Point::samples(
        mips_series(kind, place),
        "threads",
        x,
        MIPS_FROM_COUNT,
        mips,
    ));
    if !cpi.is_empty() {
        points.push(Point::samples(
            cpi_series(kind, place),
            "threads",
            x,
            CPI_FROM_COUNT,
            cpi,
        ));
    }
    points
}

/// An estimate as a table cell: `2915 (2900–2930)`, the interval omitted when
/// there is none.
fn est_cell(e: &crate::model::Estimate, suffix: &str) -> serde_json::Value {
    use crate::units::fmt_num;
    let text = if e.n > 1 && e.lo < e.hi {
        format!(
            "{}{suffix} ({}–{})",
            fmt_num(e.value),
            fmt_num(e.lo),
            fmt_num(e.hi)
        )
    } else {
        format!("{}{suffix}", fmt_num(e.value))
    };
    text.into()
}

/// Seed 001's Table 2 per kind of work (`analysis::seed001`): a table of MIPS,
/// CPI and machine efficiency by threads, each labelled with its source, and the
/// efficiency with one thread and with the machine's CPUs filled as findings, added
/// to `out`.
fn seed001_tables(result: &ProbeResult, cpus: usize, out: &mut Analysis) {
    use crate::analysis::seed001::{one_and_full, table2};
    use crate::counters::PERCENT_OF_MAX_MIPS;
    for kind in ["int", "fp"] {
        let Some(t) = table2(result, kind) else {
            continue;
        };
        let src = t.source.label();
        if t.source == crate::analysis::seed001::Source::KernelCount && kind == "int" {
            out.findings.push(crate::model::Finding::Note {
                text: format!(
                    "MIPS and CPI without PMU counts: from the kernel's instruction count \
                     ({} instructions per pass of 128 inputs, read off its generated code; \
                     tables `<kind>: seed 001 Table 2`); seed 001's efficiency = MIPS ÷ the \
                     machine's maximum {}",
                    INSTRUCTIONS_PER_PASS.unwrap_or_default(),
                    t.max_mips.map_or_else(
                        || "(not known: no issue width for this CPU)".to_string(),
                        |m| format!("{} MIPS", crate::units::fmt_num(m))
                    )
                ),
            });
        }
        let rows = t
            .rows
            .iter()
            .map(|r| {
                vec![
                    crate::units::fmt_x("threads", r.threads).into(),
                    est_cell(&r.mips, ""),
                    r.cpi.map_or(serde_json::Value::Null, |c| est_cell(&c, "")),
                    r.efficiency
                        .map_or(serde_json::Value::Null, |e| est_cell(&e, " %")),
                ]
            })
            .collect();
        out.tables.push(crate::model::Table {
            name: format!(
                "{kind}: seed 001 Table 2 ({}; MIPS and CPI {src}; medians over rounds, 95 % intervals)",
                t.placement
            ),
            columns: vec![
                "threads".into(),
                "MIPS".into(),
                "CPI".into(),
                "efficiency (% of the machine's maximum MIPS)".into(),
            ],
            rows,
        });
        let Some((one, full)) = one_and_full(&t, cpus) else {
            continue;
        };
        for r in [one, full] {
            if let Some(e) = r.efficiency {
                out.findings.push(crate::model::Finding::Value {
                    what: format!(
                        "{kind}: seed 001 machine efficiency with {} ({})",
                        crate::units::threads(r.threads),
                        t.placement
                    ),
                    unit: PERCENT_OF_MAX_MIPS.into(),
                    value: e,
                    context: Some(format!("MIPS {src} ÷ the machine's maximum MIPS")),
                });
            }
        }
    }
}
