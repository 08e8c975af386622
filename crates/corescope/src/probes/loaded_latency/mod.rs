//! `loaded-latency`: memory latency as a function of the bandwidth the other CPUs
//! draw (Intel MLC `--loaded_latency`; the Mess benchmark, MICRO 2024).
//!
//! One thread (the chaser) walks a dependent pointer chase — the memory probe's
//! kernel (`kernels::chase`), a random cyclic permutation with one link per cache
//! line — over a buffer of 4× the last-level cache (the memory probe's largest
//! working set), with transparent huge pages requested so the figure is the
//! memory's and not the page walks'. Meanwhile every other CPU of its NUMA node (the
//! injectors) streams over a block of its own, one cache line after another, and
//! between two lines spins a delay of `delay` turns of a one-instruction loop (about
//! a core cycle each, [`delay_loop`]), as MLC and Mess space their traffic. The ladder of delays goes
//! from light traffic to none at all (saturation); its first step is the idle machine.
//! Two kinds of traffic: read-only (a load per line), and a read/write mix (a load
//! and a store to the same line: the line is read, dirtied and written back, 1:1).
//!
//! Both axes are measured: the chaser's ns per step, and the injectors' bandwidth —
//! the lines each touched × bytes per line over its own time, summed (read: 64 B
//! per line; read/write: 128 B, the line read and written back), never the nominal
//! rate of the delay. Each step is one case repeated in the runner's rounds, so both
//! its latency and its bandwidth carry a 95 % interval; `analyze` pairs them into the
//! curve (a table per traffic kind) and names its knee and its saturation bandwidth.
//!
//! Cross-check: the idle step (huge pages requested) is the memory probe's
//! `ws-latency/1t` at its largest working set; it is also measured with default
//! pages (`latency/idle-default-pages`), the memory probe's
//! `ws-latency-default-pages/1t` at that size.
//!
//! On a machine of several NUMA nodes each node is measured: chaser, injectors and
//! their memory (first touched by the thread that uses it) on that node.

mod curve;
mod measure;
mod plan;
mod traffic;

pub use curve::{
    curve, curve_findings, curve_table, knee, saturation, series_points, CurvePoint, KNEE_RISE,
    SATURATION_GAIN,
};
pub use plan::{
    coarse, ladders, loaded_run_cost_s, node_teams, NodeTeam, COARSE_CHASE_STEPS, COARSE_LADDER,
    MIN_INJECTOR_BYTES, STEP_ROUNDS, THINNED_NODE_TEAMS,
};
pub use traffic::{delay_loop, inject, ladder, nominal_lines_per_s, Traffic, LINES_PER_CHECK};

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::model::{Finding, Measurement, Point, ProbeResult};
use plan::CaseParams;

/// The probe.
pub struct LoadedLatency;

/// Within this the idle step and the memory probe's chase agree (the issue that
/// asked for the probe: ±10 %). Both use huge pages; with 4 KiB pages the page
/// walks' cost moves between runs (`docs/memory.md`), so only the huge-page pair
/// is held to it.
pub const IDLE_AGREEMENT: f64 = 0.10;

const IDLE_IS_THE_MEMORY_CHASE: [crate::model::SameQuantity; 1] = [crate::model::SameQuantity {
    what: "memory latency, idle, huge pages, 4× the LLC",
    series: "latency/idle",
    x: crate::model::Pick::First,
    other_probe: super::memory::ID,
    other_series: super::memory::WS_LATENCY_HUGE_SERIES,
    other_x: crate::model::Pick::AtParam("chase_bytes"),
    other_param: Some(("ws_latency_pages", super::memory::WS_LATENCY_PAGES)),
    tolerance: IDLE_AGREEMENT,
}];

/// Id of the probe and of its run-file entry.
pub const ID: &str = "loaded-latency";

impl Probe for LoadedLatency {
    type Params = CaseParams;
    type Facts = Vec<NodeTeam>;

    /// Its chase's duration, its blocks' first touch, its team ([`loaded_run_cost_s`]).
    fn run_cost_s(&self, p: &CaseParams, c: &super::cost::Cost) -> Option<f64> {
        Some(loaded_run_cost_s(
            c,
            p.duration_ns,
            p.setup_bytes_per_run,
            p.team_threads,
        ))
    }

    fn id(&self) -> &'static str {
        ID
    }

    /// Latency against bandwidth, as MLC draws it.
    fn views(&self) -> &'static [crate::model::View] {
        &[crate::model::View::LoadedCurve]
    }

    /// The idle step is the memory probe's chase at its largest working set: same
    /// kernel, stride, size and page advice (`docs/loaded.md`).
    fn same_quantities(&self) -> &'static [crate::model::SameQuantity] {
        &IDLE_IS_THE_MEMORY_CHASE
    }

    fn title(&self) -> &'static str {
        "memory latency vs the bandwidth the other CPUs draw (read, read/write), knee and saturation"
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams, Vec<NodeTeam>>, ProbeError> {
        plan::plan(ctx)
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let (lat_ns, bw) = measure::measure_step(ctx, &c)?;
        let x = c.load_step as f64;
        let mut points = vec![Point::new(
            format!("{}/{}", c.what("latency"), c.variant()),
            "load_step",
            x,
            "ns",
            lat_ns,
        )];
        if let Some(bw) = bw {
            points.push(Point::new(
                format!("{}/{}", c.what("bandwidth"), c.variant()),
                "load_step",
                x,
                "bytes_per_s",
                bw,
            ));
        }
        Ok(Measurement::points(points))
    }

    fn analyze(&self, result: &ProbeResult, teams: &Vec<NodeTeam>, _ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        for team in teams {
            let tag = |base: &str| match team.node {
                Some(n) => format!("{base}-node{n}"),
                None => base.to_string(),
            };
            let (lat, bw) = (tag("latency"), tag("bandwidth"));
            let idle = result.estimate(&format!("{lat}/idle"), 0.0);
            if let (Some(i), Some(d)) = (
                idle,
                result.estimate(&format!("{lat}/idle-default-pages"), 0.0),
            ) {
                out.findings.push(Finding::Value {
                    what: format!("{lat}: idle, default pages (the memory probe's chase)"),
                    unit: "ns".into(),
                    value: d,
                    context: Some(format!(
                        "huge pages requested: {}",
                        crate::units::fmt_value("ns", i.value)
                    )),
                });
            }
            for traffic in Traffic::ALL {
                let l = series_points(result, &format!("{lat}/{}", traffic.name()));
                let b = series_points(result, &format!("{bw}/{}", traffic.name()));
                let c = curve(idle, &l, &b);
                if c.len() < 2 {
                    continue;
                }
                let what = format!("{lat}, {} traffic", traffic.name());
                out.tables.push(curve_table(&what, &c));
                out.findings.extend(curve_findings(&what, &c));
            }
        }
        out
    }
}
