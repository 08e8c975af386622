//! The papers' machines (see `crate::reference`) as text: the list, one machine's
//! numbers with their sources, and a run beside a paper's machine.

use crate::model::RunFile;
use crate::reference::{side_by_side, unmatched, Reference, Row};
use crate::units::{fmt_num, fmt_ratio_sig3, fmt_value};

/// One line per reference machine.
pub fn list(refs: &[Reference]) -> String {
    refs.iter()
        .map(|r| {
            format!(
                "{:<12} {} ({} values; {})\n",
                r.name,
                r.description,
                r.values.len(),
                r.seed
            )
        })
        .collect()
}

fn value_text(unit: &str, v: f64) -> String {
    match unit {
        "unstated" | "count" | "units" | "percent" | "mips" | "x_one_thread" => fmt_num(v),
        u => fmt_value(u, v),
    }
}

/// Every number of one machine with its source.
pub fn show(r: &Reference) -> String {
    let mut out = format!("{} — {}\n", r.name, r.description);
    for v in &r.values {
        let at = match (&v.x_name, v.x) {
            (Some(n), Some(x)) => format!(" at {n} {x}"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{}{at}: {} [{}]\n    source: {}\n",
            v.quantity,
            value_text(&v.unit, v.value),
            v.unit,
            v.source
        ));
    }
    for g in &r.gave_up {
        out.push_str(&format!(
            "{} at {}: gave up\n    source: {}\n",
            g.quantity, g.x, g.source
        ));
    }
    out
}

/// The line that warns when the two machines differ in size: this run's CPUs
/// beside the paper's hardware threads (else cores); `None` when they are as
/// many or the paper states no size.
pub fn size_caveat(run: &RunFile, r: &Reference, rows: &[Row]) -> Option<String> {
    let (paper, word) = r.size()?;
    let this = run.topology.allowed_count();
    // A count of CPUs is far below 2^52: the cast is exact.
    if this as f64 == paper {
        return None;
    }
    let cpus = if this == 1 { "CPU" } else { "CPUs" };
    let advice = if rows.iter().any(|row| row.quantity.contains("per_core")) {
        "; compare the per-core and per-cycle rows"
    } else {
        ""
    };
    Some(format!(
        "{this} {cpus} beside {paper:.0} {word}: totals scale with the machine's size{advice}"
    ))
}

/// Each distinct source once, numbered from 1 in the order the rows cite them.
fn numbered_sources(rows: &[Row]) -> Vec<&str> {
    let mut sources: Vec<&str> = Vec::new();
    for row in rows {
        if !sources.contains(&row.source.as_str()) {
            sources.push(&row.source);
        }
    }
    sources
}

/// This run beside the paper's machine, where the same quantity exists: each
/// row cites its source by number (`[1]`), the sources listed once at the end.
pub fn compare(run: &RunFile, r: &Reference) -> String {
    let rows = side_by_side(run, r);
    let missing = unmatched(run, r, &rows);
    let sources = numbered_sources(&rows);
    let mut out = format!(
        "{} ({}) beside {} — {}\n",
        run.host.hostname, run.host.cpu_model, r.name, r.description
    );
    if rows.is_empty() {
        out.push_str("no quantity of this run matches one the paper states\n");
    } else if let Some(line) = size_caveat(run, r, &rows) {
        out.push_str(&format!("{line}\n"));
    }
    for row in &rows {
        let ratio = if row.paper != 0.0 {
            format!(" ({}× the paper)", fmt_ratio_sig3(row.this / row.paper))
        } else {
            String::new()
        };
        let cite = sources
            .iter()
            .position(|s| *s == row.source)
            .map_or(0, |i| i + 1);
        out.push_str(&format!(
            "{}: this {}, paper {}{ratio} [{cite}]\n",
            row.quantity,
            value_text(&row.unit, row.this),
            value_text(&row.unit, row.paper)
        ));
        if let Some((paper, this)) = row.per_cycle {
            out.push_str(&format!(
                "    per cycle: this {} per cycle, paper {} per cycle\n",
                fmt_num(this),
                fmt_num(paper)
            ));
        }
    }
    if !missing.is_empty() {
        out.push_str(&format!(
            "not beside this run ({} of the paper's values):\n",
            missing.len()
        ));
        for (what, why) in missing {
            out.push_str(&format!("  {what}: {why}\n"));
        }
    }
    if !sources.is_empty() {
        out.push_str("sources:\n");
        for (i, s) in sources.iter().enumerate() {
            out.push_str(&format!("  [{}] {s}\n", i + 1));
        }
    }
    out
}
