//! The papers' machines (see `crate::reference`) as text: the list, one machine's
//! numbers with their sources, and a run beside a paper's machine.

use crate::model::RunFile;
use crate::reference::{side_by_side, unmatched, Reference};
use crate::units::{fmt_num, fmt_value};

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

/// This run beside the paper's machine, where the same quantity exists.
pub fn compare(run: &RunFile, r: &Reference) -> String {
    let rows = side_by_side(run, r);
    let missing = unmatched(run, r, &rows);
    let mut out = format!(
        "{} ({}) beside {} — {}\n",
        run.host.hostname, run.host.cpu_model, r.name, r.description
    );
    if rows.is_empty() {
        out.push_str("no quantity of this run matches one the paper states\n");
    }
    for row in &rows {
        let ratio = if row.paper != 0.0 {
            format!(
                " ({}× the paper)",
                crate::units::fmt_ratio(row.this / row.paper)
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{}: this {}, paper {}{ratio}\n",
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
        out.push_str(&format!("    source: {}\n", row.source));
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
    out
}
