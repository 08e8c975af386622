//! Typed findings and warnings put into words, the same for every output format
//! (terminal, HTML, Markdown, compare). Pure: the model in, sentences out.

use crate::model::{Estimate, Finding, Outcome, Warning};
use crate::units::{fmt_num, fmt_value, fmt_x, unit_scale};

/// Intervals narrower than this (relative half width) are not shown in tables.
pub const SHOW_INTERVAL_ABOVE: f64 = 0.01;

/// After a value measured once (no interval): `(n=1)`.
pub const SINGLE_MARK: &str = "(n=1)";

/// `2.995 Gops/s (95 % CI 2.981–3.010)`: a value with its interval in one scale.
pub fn estimate(unit: &str, e: &Estimate) -> String {
    if e.n == 1 {
        return format!(
            "{} (one measurement, no interval)",
            fmt_value(unit, e.value)
        );
    }
    if e.n == 0 || e.lo == e.hi {
        return fmt_value(unit, e.value);
    }
    let (f, label) = unit_scale(unit, e.value);
    format!(
        "{} {label} (95 % CI {}–{})",
        fmt_num(e.value / f),
        fmt_num(e.lo / f),
        fmt_num(e.hi / f)
    )
}

/// A table cell: the scaled value, and `±x %` when the interval is wider than 1 %.
pub fn cell(value: f64, scale: f64, e: Option<&Estimate>) -> String {
    let v = fmt_num(value / scale);
    match e {
        Some(e) if e.n > 1 && e.rel_half_width() > SHOW_INTERVAL_ABOVE => {
            format!(
                "{v} ±{}%",
                crate::units::fmt_percent((e.rel_half_width() * 100.0).ceil(), false)
            )
        }
        // One measurement: no interval exists, which is not the same as a narrow one.
        Some(e) if e.n == 1 => format!("{v} {SINGLE_MARK}"),
        _ => v,
    }
}

/// `1.73× (95 % CI 1.61–1.88)`.
pub fn ratio(r: &Estimate) -> String {
    if r.lo == r.hi {
        return format!("{:.2}×", r.value);
    }
    format!("{:.2}× (95 % CI {:.2}–{:.2})", r.value, r.lo, r.hi)
}

/// Whether a unit is a duration (a larger value is slower).
fn is_time(unit: &str) -> bool {
    matches!(
        unit,
        "s" | "seconds" | "ms" | "us" | "ns" | "cycles" | "ticks"
    )
}

/// One finding as a sentence.
pub fn finding(f: &Finding) -> String {
    match f {
        Finding::Scaling {
            what,
            unit,
            peak,
            peak_threads,
            peak_variant,
            saturation_threads,
            one_thread,
            cpus,
        } => {
            let mut s = format!(
                "{what}: peak {} with {} threads ({peak_variant}); 95 % of the peak from {} threads",
                estimate(unit, peak),
                fmt_x("threads", *peak_threads),
                fmt_x("threads", *saturation_threads)
            );
            if let Some(one) = one_thread.filter(|o| o.value > 0.0) {
                s.push_str(&format!(
                    "; {:.2}× one thread's {} on {cpus} CPUs",
                    peak.value / one.value,
                    fmt_value(unit, one.value)
                ));
            }
            s
        }
        Finding::Comparison {
            what,
            unit,
            a,
            a_value,
            b,
            b_value,
            ratio: r,
            outcome,
            context,
            ..
        } => comparison(
            what,
            unit,
            (a, a_value),
            (b, b_value),
            (r, *outcome),
            context.as_deref(),
        ),
        Finding::Slowdown {
            what,
            cause,
            ratio: r,
            outcome,
            context,
        } => slowdown(what, cause, (r, *outcome), context.as_deref()),
        Finding::SameConfiguration {
            what,
            variants,
            config,
        } => format!(
            "{what}: {} here (all ran {config}; measured once)",
            variants.join(" = ")
        ),
        Finding::Value {
            what,
            unit,
            value,
            context,
        } => {
            let mut s = format!("{what}: {}", estimate(unit, value));
            if let Some(c) = context {
                s.push_str(&format!(" ({c})"));
            }
            s
        }
        Finding::CoreSharing {
            a,
            b,
            shared,
            kernel,
            ratio: r,
            ratios,
            topology,
            topology_same_core,
        } => core_sharing(
            (*a, *b),
            *shared,
            kernel,
            r,
            ratios,
            topology,
            *topology_same_core,
        ),
        Finding::Note { text } => text.clone(),
    }
}

/// A comparison of two variants as a sentence: which is faster and by how much,
/// or that they are indistinguishable here, or that the data cannot tell.
fn comparison(
    what: &str,
    unit: &str,
    (a, a_value): (&str, &Estimate),
    (b, b_value): (&str, &Estimate),
    (r, outcome): (&Estimate, Outcome),
    context: Option<&str>,
) -> String {
    let values = format!(
        "{a} {}, {b} {}",
        fmt_value(unit, a_value.value),
        fmt_value(unit, b_value.value)
    );
    let mut s = match outcome {
        Outcome::Different if is_time(unit) => {
            format!("{what}: {a} takes {} as long as {b} ({values})", ratio(r))
        }
        Outcome::Different => {
            format!("{what}: {a} is {} {b} ({values})", ratio(r))
        }
        Outcome::Equivalent => format!(
            "{what}: {a} and {b} are indistinguishable here (ratio {}, within ±{:.0} %)",
            ratio(r),
            crate::stats::MIN_EFFECT * 100.0
        ),
        Outcome::Inconclusive => format!(
            "{what}: no significant difference between {a} and {b} (ratio {}; {values})",
            ratio(r)
        ),
    };
    if let Some(c) = context {
        s.push_str(&format!(" — {c}"));
    }
    s
}

/// What a cause did to a workload as a sentence (a ratio of paired times).
fn slowdown(
    what: &str,
    cause: &str,
    (r, outcome): (&Estimate, Outcome),
    context: Option<&str>,
) -> String {
    let mut s = match outcome {
        Outcome::Different if r.value >= 1.0 => {
            format!("{what}: {cause} slows it {}", ratio(r))
        }
        Outcome::Different => format!("{what}: {cause} speeds it up, {}", ratio(r)),
        Outcome::Equivalent => format!(
            "{what}: {cause} costs nothing measurable (ratio {}, within ±{:.0} %)",
            ratio(r),
            crate::stats::MIN_EFFECT * 100.0
        ),
        Outcome::Inconclusive => {
            format!(
                "{what}: no significant effect of {cause} (ratio {})",
                ratio(r)
            )
        }
    };
    if let Some(c) = context {
        s.push_str(&format!(" — {c}"));
    }
    s
}

/// `measured: CPUs 0 and 1 share a core (throughput 0.52× together, 95 % CI
/// 0.50–0.55, fma; l1-load 0.55×), topology: separate cores (same cache)`, and what
/// the two say together.
fn core_sharing(
    (a, b): (u32, u32),
    shared: Option<bool>,
    kernel: &str,
    r: &Estimate,
    ratios: &std::collections::BTreeMap<String, Estimate>,
    topology: &str,
    same_core: bool,
) -> String {
    let ci = if r.n > 1 && r.lo != r.hi {
        format!(", 95 % CI {:.2}–{:.2}", r.lo, r.hi)
    } else {
        String::new()
    };
    let others: Vec<String> = ratios
        .iter()
        .filter(|(k, _)| k.as_str() != kernel)
        .map(|(k, e)| format!("{k} {:.2}×", e.value))
        .collect();
    let others = if others.is_empty() {
        String::new()
    } else {
        format!("; {}", others.join(", "))
    };
    let figure = format!("throughput {:.2}× together{ci}, {kernel}{others}", r.value);
    let topo = if same_core {
        format!("one core ({topology})")
    } else if topology == "unknown" {
        "not known".to_string()
    } else {
        format!("separate cores ({topology})")
    };
    match (shared, same_core) {
        (Some(true), true) => {
            format!("measured: CPUs {a} and {b} share a core ({figure}), as the topology says: {topo}")
        }
        (Some(true), false) => format!(
            "measured: CPUs {a} and {b} share a core ({figure}), topology: {topo} — a shared core the OS does not report"
        ),
        (Some(false), false) => format!(
            "measured: CPUs {a} and {b} run on separate cores ({figure}), as the topology says: {topo}"
        ),
        (Some(false), true) => format!(
            "measured: CPUs {a} and {b} keep their throughput together ({figure}), topology: {topo} — the measurement and the topology disagree"
        ),
        (None, _) => format!(
            "measured: CPUs {a} and {b} not told apart as one core or two ({figure}), topology: {topo}"
        ),
    }
}

/// One warning as a sentence.
pub fn warning(w: &Warning) -> String {
    match w {
        Warning::WideInterval {
            series,
            x,
            rel_half_width,
            n,
            others,
        } => {
            let mut s = format!(
                "{series} at {}: the 95 % interval is still ±{} % after {n} repetitions",
                fmt_x("threads", *x),
                crate::units::fmt_percent(rel_half_width * 100.0, false)
            );
            if *others > 0 {
                s.push_str(&format!(" ({others} other points are wider than ±5 % too)"));
            }
            s.push_str("; the machine may be busy");
            s
        }
        Warning::Noisy { detail } => format!("the machine was noisy: {detail}"),
        Warning::Migrated {
            case,
            migrations,
            rounds,
        } => format!(
            "{case}: the OS moved pinned threads to another CPU {migrations} time(s) in {rounds} \
             round(s) (cpu-migrations counter); its figure mixes CPUs"
        ),
        Warning::Note { text } => text.clone(),
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&finding(self))
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&warning(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 8,
        }
    }

    #[test]
    fn comparisons_are_worded_by_outcome() {
        let mut f = Finding::Comparison {
            what: "write with 2 threads".into(),
            unit: "bytes_per_s".into(),
            a: "linear".into(),
            a_value: e(45.56e9, 44e9, 46e9),
            b: "scatter".into(),
            b_value: e(26.41e9, 25e9, 27e9),
            ratio: e(1.73, 1.61, 1.88),
            significant: true,
            outcome: Outcome::Different,
            context: None,
        };
        assert_eq!(
            finding(&f),
            "write with 2 threads: linear is 1.73× (95 % CI 1.61–1.88) scatter \
             (linear 45.56 GB/s, scatter 26.41 GB/s)"
        );
        if let Finding::Comparison {
            outcome, ratio: r, ..
        } = &mut f
        {
            *outcome = Outcome::Equivalent;
            *r = e(1.01, 0.99, 1.02);
        }
        assert!(
            finding(&f).contains("indistinguishable here"),
            "{}",
            finding(&f)
        );
        assert_eq!(cell(2.0e9, 1e9, Some(&e(2.0e9, 1.9e9, 2.1e9))), "2.000 ±5%");
        assert_eq!(cell(2.0e9, 1e9, Some(&e(2.0e9, 1.999e9, 2.001e9))), "2.000");
    }

    #[test]
    fn core_sharing_says_the_measurement_and_the_topology() {
        let ratios: std::collections::BTreeMap<String, Estimate> = [
            ("fma".to_string(), e(0.52, 0.50, 0.55)),
            ("l1-load".to_string(), e(0.61, 0.58, 0.63)),
        ]
        .into_iter()
        .collect();
        let mut f = Finding::CoreSharing {
            a: 0,
            b: 1,
            shared: Some(true),
            kernel: "fma".into(),
            ratio: e(0.52, 0.50, 0.55),
            ratios,
            topology: "same cache".into(),
            topology_same_core: false,
        };
        assert_eq!(
            finding(&f),
            "measured: CPUs 0 and 1 share a core (throughput 0.52× together, 95 % CI \
             0.50–0.55, fma; l1-load 0.61×), topology: separate cores (same cache) — a \
             shared core the OS does not report"
        );
        if let Finding::CoreSharing {
            topology,
            topology_same_core,
            ..
        } = &mut f
        {
            *topology = "SMT siblings".into();
            *topology_same_core = true;
        }
        assert!(finding(&f).ends_with("as the topology says: one core (SMT siblings)"));
        if let Finding::CoreSharing { shared, .. } = &mut f {
            *shared = None;
        }
        assert!(finding(&f).contains("not told apart"), "{}", finding(&f));
    }
}
