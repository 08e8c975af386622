//! Typed findings and warnings put into words, the same for every output format
//! (terminal, HTML, Markdown, compare). Pure: the model in, sentences out.

use crate::model::{Estimate, Finding, Outcome, Warning};
use crate::units::{fmt_num, fmt_ratio_vs_one, fmt_value, fmt_x, unit_scale};

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

/// `1.73× (95 % CI 1.61–1.88)`: each figure by its magnitude (`0.0030×`), an
/// interval end near 1 with the digits that keep it on its side of 1 (`1.002`).
pub fn ratio(r: &Estimate) -> String {
    if !has_ratio_interval(r) {
        return format!("{}×", fmt_ratio_vs_one(r.value));
    }
    format!(
        "{}× (95 % CI {}–{})",
        fmt_ratio_vs_one(r.value),
        fmt_ratio_vs_one(r.lo),
        fmt_ratio_vs_one(r.hi)
    )
}

/// `1.73× ±4%` or `1.73×`: a ratio in a few characters (the summary's form).
pub fn ratio_short(r: &Estimate) -> String {
    let pm = if has_ratio_interval(r) && r.rel_half_width() > SHOW_INTERVAL_ABOVE {
        format!(
            " ±{}%",
            crate::units::fmt_percent((r.rel_half_width() * 100.0).ceil(), false)
        )
    } else {
        String::new()
    };
    format!("{}×{pm}", fmt_ratio_vs_one(r.value))
}

/// Whether a ratio carries an interval to judge it by.
fn has_ratio_interval(r: &Estimate) -> bool {
    r.lo.is_finite() && r.hi.is_finite() && r.lo < r.hi
}

/// What a ratio with its 95 % interval shows. Decided by [`verdict`] alone, from
/// the interval as printed beside it and the outcome the analysis stored, so a
/// sentence can never say "no difference" beside an interval that excludes 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval lies beyond 1 ± the minimum effect: a difference, sized.
    Different,
    /// The whole interval lies within 1 ± the minimum effect: the same here.
    Equivalent,
    /// The interval excludes 1 but reaches within the minimum effect of it: a
    /// difference, but too small to size.
    Small,
    /// The interval holds 1: no difference shown.
    NotShown,
    /// The interval lies beyond the minimum effect, but the analysis did not call it
    /// a difference (too few repetitions for a full 95 % interval).
    Unsettled,
}

impl Verdict {
    /// The verdict's name in data (`findings.csv`): `different`, `equivalent`,
    /// `small`, `not_shown`, `unsettled`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Different => "different",
            Verdict::Equivalent => "equivalent",
            Verdict::Small => "small",
            Verdict::NotShown => "not_shown",
            Verdict::Unsettled => "unsettled",
        }
    }
}

/// The one place a ratio is judged (see [`Verdict`]); every sentence about a
/// comparison or a slowdown, long or short, is worded from it.
pub fn verdict(r: &Estimate, outcome: Outcome) -> Verdict {
    if !has_ratio_interval(r) {
        return match outcome {
            Outcome::Different => Verdict::Different,
            Outcome::Equivalent => Verdict::Equivalent,
            Outcome::Inconclusive => Verdict::NotShown,
        };
    }
    let band = 1.0 + crate::stats::MIN_EFFECT;
    let beyond = r.lo >= band || r.hi <= 1.0 / band;
    let within = r.lo >= 1.0 / band && r.hi <= band;
    let excludes_one = r.lo > 1.0 || r.hi < 1.0;
    match outcome {
        Outcome::Different if beyond => Verdict::Different,
        Outcome::Equivalent if within => Verdict::Equivalent,
        _ if beyond => Verdict::Unsettled,
        _ if excludes_one => Verdict::Small,
        _ => Verdict::NotShown,
    }
}

/// `±3 %`: the minimum effect the verdicts use, in words.
fn min_effect_words() -> String {
    format!("±{:.0} %", crate::stats::MIN_EFFECT * 100.0)
}

/// `3 %`: the minimum effect as a size, for "perhaps under 3 %".
fn min_effect() -> String {
    format!("{:.0} %", crate::stats::MIN_EFFECT * 100.0)
}

/// A comparison in a few words (`a takes 1.73× as long as b`, `a ≈ b`): the
/// summary's form, worded from the same [`verdict`] as [`finding`].
pub fn comparison_short(a: &str, b: &str, unit: &str, r: &Estimate, outcome: Outcome) -> String {
    let x = ratio_short(r);
    match verdict(r, outcome) {
        Verdict::Different if is_time(unit) => format!("{a} takes {x} as long as {b}"),
        Verdict::Different => format!("{a} at {x} the rate of {b}"),
        Verdict::Equivalent => format!("{a} ≈ {b} (within {})", min_effect_words()),
        // The interval excludes 1 but reaches into the band: the difference is
        // real, its size may be under the band (it may also be above it).
        Verdict::Small => format!(
            "{a} vs {b} {x}, a difference, perhaps under {}",
            min_effect()
        ),
        Verdict::NotShown => format!("{a} vs {b} {x}, no difference shown"),
        Verdict::Unsettled => format!("{a} vs {b} {x}, not settled (few repetitions)"),
    }
}

/// What a cause did in a few words (`2.10× slower`, `no effect shown`), from
/// [`verdict`].
pub fn slowdown_short(r: &Estimate, outcome: Outcome) -> String {
    let x = ratio_short(r);
    match verdict(r, outcome) {
        Verdict::Different if r.value >= 1.0 => format!("{x} as long"),
        Verdict::Different => format!("{x} as long (faster)"),
        Verdict::Equivalent => format!("no cost (within {})", min_effect_words()),
        Verdict::Small => format!("{x}, perhaps under {}", min_effect()),
        Verdict::NotShown => format!("{x}, no effect shown"),
        Verdict::Unsettled => format!("{x}, not settled"),
    }
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
                    "; {}× one thread's {} on {cpus} CPUs",
                    crate::units::fmt_ratio(peak.value / one.value),
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
        Finding::TunerChoice { .. } => super::tune_words::choice(f),
        Finding::TuneStep { step, note } => super::tune_words::step_note(step, note),
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
    let mut s = match verdict(r, outcome) {
        Verdict::Different if is_time(unit) => {
            format!("{what}: {a} takes {} as long as {b} ({values})", ratio(r))
        }
        Verdict::Different => {
            format!("{what}: {a} is {} {b} ({values})", ratio(r))
        }
        Verdict::Equivalent => format!(
            "{what}: {a} and {b} are indistinguishable here (ratio {}, within {})",
            ratio(r),
            min_effect_words()
        ),
        Verdict::Small => format!(
            "{what}: {a} is {} {b}, a difference too small to size: the interval excludes 1 \
             but reaches within {} of it ({values})",
            ratio(r),
            min_effect_words()
        ),
        Verdict::NotShown => format!(
            "{what}: no significant difference between {a} and {b} (ratio {}, the interval \
             holds 1; {values})",
            ratio(r)
        ),
        Verdict::Unsettled => format!(
            "{what}: {a} is {} {b}, not settled: too few repetitions for a full 95 % \
             interval ({values})",
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
    let mut s = match verdict(r, outcome) {
        Verdict::Different if r.value >= 1.0 => {
            format!("{what}: {cause} slows it {}", ratio(r))
        }
        Verdict::Different => format!("{what}: {cause} speeds it up, {}", ratio(r)),
        Verdict::Equivalent => format!(
            "{what}: {cause} costs nothing measurable (ratio {}, within {})",
            ratio(r),
            min_effect_words()
        ),
        Verdict::Small => format!(
            "{what}: {cause} changes it by {}, too little to size: the interval excludes 1 \
             but reaches within {} of it",
            ratio(r),
            min_effect_words()
        ),
        Verdict::NotShown => format!(
            "{what}: no significant effect of {cause} (ratio {}, the interval holds 1)",
            ratio(r)
        ),
        Verdict::Unsettled => format!(
            "{what}: {cause} changes it by {}, not settled: too few repetitions for a full \
             95 % interval",
            ratio(r)
        ),
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
        format!(
            ", 95 % CI {}–{}",
            fmt_ratio_vs_one(r.lo),
            fmt_ratio_vs_one(r.hi)
        )
    } else {
        String::new()
    };
    let others: Vec<String> = ratios
        .iter()
        .filter(|(k, _)| k.as_str() != kernel)
        .map(|(k, e)| format!("{k} {}×", fmt_ratio_vs_one(e.value)))
        .collect();
    let others = if others.is_empty() {
        String::new()
    } else {
        format!("; {}", others.join(", "))
    };
    let figure = format!(
        "throughput {}× together{ci}, {kernel}{others}",
        fmt_ratio_vs_one(r.value)
    );
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
        Warning::Noisy { detail, .. } => format!("the machine was noisy: {detail}"),
        Warning::TimerStep {
            series,
            median_ns,
            step_ns,
        } => timer_step(series, *median_ns, *step_ns),
        Warning::Migrated {
            case,
            migrations,
            rounds,
        } => format!(
            "{case}: the OS moved pinned threads to another CPU {migrations} time(s) in {rounds} \
             round(s) (cpu-migrations counter); its figure mixes CPUs"
        ),
        Warning::PinsRefused { pins } => super::tune_words::pins_refused(*pins),
        Warning::Note { text } => text.to_string(),
        other => super::warning_words::warning(other).unwrap_or_default(),
    }
}

/// A probe's parameter in words, where its value is data a reader should not have to
/// read as JSON (the counters the workload probe's workers take); `None` for the
/// others, shown as they are (and for older run files, whose value was words).
pub fn param(key: &str, value: &serde_json::Value) -> Option<String> {
    match key {
        "counters" => serde_json::from_value::<crate::counters::CounterStatus>(value.clone())
            .ok()
            .map(|s| counter_status(&s)),
        _ => None,
    }
}

/// What a team counted (`hardware and software`, `software only; hardware skipped:
/// no PMU (…)`).
fn counter_status(s: &crate::counters::CounterStatus) -> String {
    use crate::counters::Availability::{Counted, Skipped};
    let mut t = match (&s.software, &s.hardware) {
        (Counted, Counted) => "hardware and software".to_string(),
        (Counted, Skipped(h)) => format!("software only; hardware skipped: {h}"),
        (Skipped(w), Counted) => format!("hardware only; software skipped: {w}"),
        (Skipped(w), Skipped(h)) => {
            format!("none; software skipped: {w}; hardware skipped: {h}")
        }
    };
    if s.software == Counted && !s.kernel_counted {
        t.push_str("; user mode only");
    }
    t
}

/// A median a few timer steps long: known to ± one step (quantisation); below one
/// step, only an upper bound.
fn timer_step(series: &str, median_ns: f64, step_ns: f64) -> String {
    let ns = |v: f64| fmt_value("ns", v);
    if median_ns < step_ns {
        return format!(
            "{series}: median {} is below one step of the timer ({}): read it as an upper \
             bound (under {}); time several operations per sample to measure it",
            ns(median_ns),
            ns(step_ns),
            ns(step_ns)
        );
    }
    let pct = format!("{:.1}", step_ns / median_ns * 100.0);
    format!(
        "{series}: median {} is {:.0} steps of the timer ({} each), so it is known to ± one \
         step (±{pct} %); differences below ±{pct} % between such medians are the timer's \
         resolution, not the machine",
        ns(median_ns),
        (median_ns / step_ns).floor(),
        ns(step_ns),
    )
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
    fn the_counters_parameter_reads_as_the_plan_said_it() {
        use crate::counters::{Availability, CounterEvent, CounterStatus, SkipReason};
        let no_pmu = SkipReason::refused(
            CounterEvent::Cycles,
            std::io::Error::from_raw_os_error(libc::ENOENT),
        );
        let mut s = CounterStatus {
            software: Availability::Counted,
            hardware: Availability::Skipped(no_pmu),
            kernel_counted: true,
        };
        let words = |s: &CounterStatus| param("counters", &serde_json::to_value(s).unwrap());
        assert_eq!(
            words(&s).unwrap(),
            "software only; hardware skipped: no PMU (perf_event_open(cycles): No such file \
             or directory (os error 2))"
        );
        s.hardware = Availability::Counted;
        s.kernel_counted = false;
        assert_eq!(words(&s).unwrap(), "hardware and software; user mode only");
        // Older run files held the words; other parameters are shown as they are.
        assert_eq!(param("counters", &serde_json::json!("software only")), None);
        assert_eq!(param("duration_ns", &serde_json::json!(5)), None);
    }

    #[test]
    fn the_timer_step_warning_states_the_quantisation_error() {
        let w = |median_ns: f64| {
            warning(&Warning::TimerStep {
                series: "wake".into(),
                median_ns,
                step_ns: 9.8,
            })
        };
        // 150 ns is 15 steps of a 9.8 ns timer: ± one step is ±6.5 %, not "an upper bound".
        let t = w(150.0);
        assert!(t.contains("15 steps") && t.contains("±6.5 %"), "{t}");
        assert!(!t.contains("upper bound"), "{t}");
        // Below one step the median is only an upper bound.
        let t = w(5.0);
        assert!(t.contains("upper bound"), "{t}");
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

    /// The printed interval of a sentence: the two numbers after `95 % CI `.
    fn printed_interval(text: &str) -> (f64, f64) {
        let ci = text.split("95 % CI ").nth(1).expect(text);
        let (lo, rest) = ci.split_once('–').expect(text);
        let hi: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        (lo.parse().expect(text), hi.parse().expect(text))
    }

    fn comparison_of(r: Estimate, outcome: Outcome) -> Finding {
        Finding::Comparison {
            what: "wake-up".into(),
            unit: "ns".into(),
            a: "other-core".into(),
            a_value: e(104.0, 100.0, 106.0),
            b: "same-cpu".into(),
            b_value: e(100.0, 99.0, 101.0),
            ratio: r,
            significant: r.lo > 1.0 || r.hi < 1.0,
            outcome,
            context: None,
        }
    }

    #[test]
    fn the_words_never_contradict_the_printed_interval() {
        // The case: CI 1.002–1.06 excludes 1 (significant) but is not beyond
        // ±3 %: it was worded "no significant difference ... 1.00–1.06".
        let f = comparison_of(e(1.04, 1.002, 1.06), Outcome::Inconclusive);
        let text = finding(&f);
        assert!(!text.contains("no significant"), "{text}");
        assert!(text.contains("1.002–1.06"), "{text}");
        assert_eq!(
            verdict(&e(1.04, 1.002, 1.06), Outcome::Inconclusive),
            Verdict::Small
        );
        // Boundaries: touching 1, just either side of it, of ±3 %, and equal ends.
        let ends = [
            0.95, 0.97, 0.9709, 0.98, 0.999, 1.0, 1.0001, 1.002, 1.02, 1.03, 1.031, 1.06,
        ];
        for (i, &lo) in ends.iter().enumerate() {
            for &hi in &ends[i + 1..] {
                for outcome in [
                    Outcome::Different,
                    Outcome::Equivalent,
                    Outcome::Inconclusive,
                ] {
                    let r = e((lo + hi) / 2.0, lo, hi);
                    let text = finding(&comparison_of(r, outcome));
                    let (plo, phi) = printed_interval(&text);
                    let holds_one = plo <= 1.0 && phi >= 1.0;
                    assert_eq!(
                        (plo > 1.0, phi < 1.0),
                        (lo > 1.0, hi < 1.0),
                        "an end crossed 1 in print: {text}"
                    );
                    match verdict(&r, outcome) {
                        Verdict::NotShown => {
                            assert!(holds_one && text.contains("no significant"), "{text}")
                        }
                        Verdict::Small => {
                            assert!(!holds_one && text.contains("too small"), "{text}")
                        }
                        Verdict::Different => {
                            assert!(lo >= 1.03 || hi <= 1.0 / 1.03, "{text}");
                            assert!(text.contains("takes"), "{text}");
                        }
                        Verdict::Equivalent => {
                            assert!(lo >= 1.0 / 1.03 && hi <= 1.03, "{text}");
                            assert!(text.contains("indistinguishable"), "{text}");
                        }
                        Verdict::Unsettled => assert!(text.contains("not settled"), "{text}"),
                    }
                    if holds_one {
                        // An interval holding 1 is never worded as a difference.
                        assert!(
                            !text.contains("takes") && !text.contains("too small"),
                            "{text}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn short_forms_share_the_verdict() {
        let small = e(1.04, 1.002, 1.06);
        let s = comparison_short("a", "b", "ns", &small, Outcome::Inconclusive);
        assert!(s.contains("a difference, perhaps under 3 %"), "{s}");
        let none = e(1.01, 0.99, 1.04);
        let s = comparison_short("a", "b", "ns", &none, Outcome::Inconclusive);
        assert!(s.contains("no difference shown"), "{s}");
        let big = e(2.0, 1.9, 2.1);
        let s = comparison_short("a", "b", "ns", &big, Outcome::Different);
        assert!(
            s.starts_with("a takes 2.00× ±") && s.ends_with("% as long as b"),
            "{s}"
        );
        // A stored "different" whose interval holds 1 is not repeated as a difference.
        let s = slowdown_short(&none, Outcome::Different);
        assert!(s.contains("no effect shown"), "{s}");
        assert_eq!(ratio(&e(0.003, 0.003, 0.003)), "0.0030×");
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
