//! Measuring one `numa` cell: the CPUs of one node read, or chase through, memory
//! bound to another; the bandwidth or ns per step, and where the pages went.

use super::buffer::{Binding, NodeBuffer, NumaError, CHECKED_PAGES};
use super::case::{series_name, CaseParams, Kind};
use crate::kernels::chase::{build_chase, chase};
use crate::kernels::stream::read_sum;
use crate::model::{Measurement, Point, Table};
use crate::probes::{Case, ProbeError, RunCtx};
use std::hint::black_box;

/// One run of a cell: its point, the binding's warnings and its `numa/binding` row.
pub(super) fn measure_cell(
    case: &Case<CaseParams>,
    ctx: &mut RunCtx,
) -> Result<Measurement, ProbeError> {
    let c = &case.params;
    let cpus: Vec<Option<u32>> = c.cpus.iter().map(|&x| Some(x)).collect();
    let line = ctx.plan.topo.line_bytes_or_default() as usize;
    let words = (c.bytes / 8) as usize;
    let out = ctx.team(
        &cpus,
        1,
        |_t| -> Result<(NodeBuffer, Binding), NumaError> {
            let mut b = NodeBuffer::new(words, Some(c.mem_node), c.kind == Kind::Latency)?;
            match c.kind {
                Kind::Read => b.as_mut_slice().fill(0x0101_0101_0101_0101),
                Kind::Latency => {
                    let stride = line / 8;
                    let slots = (words / stride).max(2);
                    build_chase(b.as_mut_slice(), stride, slots, c.bytes ^ 0x5eed);
                }
            }
            let binding = b.check(CHECKED_PAGES);
            Ok((b, binding))
        },
        |_t, s| -> Result<(u64, Binding), NumaError> {
            let (b, binding) = s.as_ref().map_err(|e| e.clone())?;
            let r = match c.kind {
                Kind::Read => black_box(read_sum(b.as_slice())),
                Kind::Latency => black_box(chase(b.as_slice(), line / 8, c.steps)),
            };
            Ok((r, binding.clone()))
        },
    )?;
    if let Some(err) = out.results.iter().flatten().find_map(|r| r.as_ref().err()) {
        return Err(ProbeError::step(case.label.clone(), err.clone()));
    }
    let rep = out.reps.first().ok_or_else(|| {
        ProbeError::GaveUp(format!("{}: the budget ended before it ran", case.label))
    })?;
    let ns = rep.team_ns().max(1) as f64;
    let (y_name, y) = match c.kind {
        Kind::Read => (
            "bytes_per_s",
            (c.bytes * c.cpus.len() as u64) as f64 / ns * 1e9,
        ),
        Kind::Latency => ("ns", ns / c.steps.max(1) as f64),
    };
    let mut m = Measurement::points(vec![Point::new(
        series_name(c.kind, c.cpu_node),
        "memory_node",
        c.mem_node as f64,
        y_name,
        y,
    )]);
    let bindings: Vec<Binding> = out
        .results
        .iter()
        .filter_map(|r| r.first()?.as_ref().ok().map(|(_, b)| b.clone()))
        .collect();
    let total = Binding::sum(&bindings);
    for w in total.warnings("numa", &case.label, c.mem_node) {
        m.warnings.push(w);
    }
    m.tables.push(Table {
        name: "numa/binding".into(),
        columns: [
            "kind",
            "cpu_node",
            "memory_node",
            "mbind",
            "pages_checked",
            "on_node",
            "elsewhere",
            "unknown",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![vec![
            c.kind.name().into(),
            c.cpu_node.into(),
            c.mem_node.into(),
            total.mbind.clone().into(),
            total.checked.into(),
            total.on_node.into(),
            serde_json::json!(total.elsewhere),
            total.unknown.into(),
        ]],
    });
    Ok(m)
}
