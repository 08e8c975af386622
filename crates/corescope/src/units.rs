//! Numbers with their units, scaled for people (`12.30 Gops/s`, `840.0 ns`).
//! A leaf: the model's unit names (`ops_per_s`, `bytes_per_s`, `ns`) → words. Used by
//! the renderers and by the wording of findings; never by measuring code.

/// Scale and label for a quantity named by its unit suffix, chosen from `magnitude`.
pub fn unit_scale(unit: &str, magnitude: f64) -> (f64, String) {
    let m = magnitude.abs();
    let si = |base: &str| -> (f64, String) {
        for (f, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
            if m >= f {
                return (f, format!("{p}{base}"));
            }
        }
        (1.0, base.to_string())
    };
    match unit {
        "ops_per_s" => si("ops/s"),
        "bytes_per_s" => si("B/s"),
        "events_per_s" => si("events/s"),
        "flops_per_s" => si("FLOP/s"),
        "flops_per_s_per_thread" => si("FLOP/s per thread"),
        "per_s" | "increments_per_s" => si("/s"),
        "hz" => si("Hz"),
        "bytes" => {
            for (f, p) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
                if m >= f as f64 {
                    return (f as f64, p.into());
                }
            }
            (1.0, "B".into())
        }
        "ns" => {
            for (f, p) in [(1e9, "s"), (1e6, "ms"), (1e3, "µs")] {
                if m >= f {
                    return (f, p.into());
                }
            }
            (1.0, "ns".into())
        }
        "cycles" => si("cycles"),
        // Seed 001's figures where no PMU counts: labelled with their source.
        "mips_from_kernel_instruction_count" => {
            (1.0, "MIPS (from the kernel's instruction count)".into())
        }
        "cpi_from_kernel_instruction_count" => {
            (1.0, "CPI (from the kernel's instruction count)".into())
        }
        "percent_of_machine_max_mips" => (1.0, "% of the machine's maximum MIPS".into()),
        // Durations given in larger units: scaled through ns, so a 0.001 ms value
        // reads 1.000 µs and 1500 ms reads 1.500 s.
        "ms" => {
            let (f, label) = unit_scale("ns", magnitude * 1e6);
            (f / 1e6, label)
        }
        "us" | "µs" => {
            let (f, label) = unit_scale("ns", magnitude * 1e3);
            (f / 1e3, label)
        }
        "s" | "seconds" => {
            if m < 1e-3 && m > 0.0 {
                (1e-6, "µs".into())
            } else if m < 1.0 && m > 0.0 {
                (1e-3, "ms".into())
            } else {
                (1.0, "s".into())
            }
        }
        other => (1.0, other.replace('_', " ")),
    }
}

/// Which side of a quantity is better, by its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// A time (`ns`, `s`, `cycles`, `ns_per_event`): lower is better.
    Lower,
    /// A rate (`ops_per_s`, `bytes_per_s`, `flops_per_cycle`): higher is better.
    Higher,
    /// Anything else (counts, sizes, ratios): no side is better by itself.
    Neither,
}

/// Which side of a quantity in `unit` is better: times lower, rates (work per
/// second or per cycle) higher, anything else neither.
pub fn better(unit: &str) -> Better {
    let time = matches!(unit, "ns" | "us" | "µs" | "ms" | "s" | "seconds" | "cycles")
        || unit.starts_with("ns_per_");
    let rate = matches!(unit, "per_s" | "hz")
        || unit.split_once("_per_").is_some_and(|(_, per)| {
            per == "s" || per.starts_with("s_per_") || per.starts_with("cycle")
        });
    if time {
        Better::Lower
    } else if rate {
        Better::Higher
    } else {
        Better::Neither
    }
}

/// A value's side of another in words, from `ratio` = value ÷ other alone, with
/// which is better for its `unit` ([`better`]): `shorter (faster, better)` for
/// a time below 1, `higher (better)` for a rate above 1, `larger` where no side
/// is better. The one place a ratio's direction is worded, so the words can
/// never say the opposite of the figure beside them.
pub fn direction(ratio: f64, unit: &str) -> &'static str {
    if !(ratio.is_finite() && ratio > 0.0) {
        return "not comparable";
    }
    let up = match ratio.partial_cmp(&1.0) {
        Some(std::cmp::Ordering::Greater) => true,
        Some(std::cmp::Ordering::Less) => false,
        _ => return "the same",
    };
    match (better(unit), up) {
        (Better::Lower, false) => "shorter (faster, better)",
        (Better::Lower, true) => "longer (slower, worse)",
        (Better::Higher, true) => "higher (better)",
        (Better::Higher, false) => "lower (worse)",
        (Better::Neither, true) => "larger",
        (Better::Neither, false) => "smaller",
    }
}

/// From this magnitude on, numbers are printed in scientific notation
/// (`1.797e308`, never 309 digits).
pub const SCIENTIFIC_FROM: f64 = 1e15;

/// Largest percentage printed as a figure; beyond it the text says `>1000000`.
pub const MAX_PERCENT_SHOWN: f64 = 1e6;

/// A percentage for text, rounded as `{:.0}` rounds (`12`, `+3` with
/// `signed`): `?` when it is not a number, `>1000000` / `<-1000000` beyond
/// [`MAX_PERCENT_SHOWN`]; never `inf`, `NaN` or hundreds of digits.
pub fn fmt_percent(p: f64, signed: bool) -> String {
    if p.is_nan() {
        "?".into()
    } else if p > MAX_PERCENT_SHOWN {
        format!(">{MAX_PERCENT_SHOWN:.0}")
    } else if p < -MAX_PERCENT_SHOWN {
        format!("<-{MAX_PERCENT_SHOWN:.0}")
    } else if signed {
        format!("{p:+.0}")
    } else {
        format!("{p:.0}")
    }
}

/// Below this magnitude numbers are printed in scientific notation (`3.10e-5`).
pub const SCIENTIFIC_BELOW: f64 = 1e-4;

/// Number with about four significant digits (three below 0.1: `0.0310`, never
/// `0.000` for a value that is not zero).
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= SCIENTIFIC_FROM {
        format!("{v:.3e}")
    } else if a < SCIENTIFIC_BELOW && a > 0.0 {
        format!("{v:.2e}")
    } else if a < 0.1 && a > 0.0 {
        format!("{v:.*}", decimals_for(a, 3))
    } else if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Decimals that show `significant` digits of a magnitude `a` below 1 (`0.0031`
/// with 2 → 4 decimals).
fn decimals_for(a: f64, significant: usize) -> usize {
    // -log10 of a number in (1e-300, 1) is at most ~300: the cast cannot overflow.
    let zeros = (-a.log10()).floor().max(0.0) as usize;
    (zeros + significant).min(12)
}

/// A ratio for text, by magnitude: `250`, `19.6`, `1.73`, `0.52`, `0.0031` (two
/// significant digits below 0.1, so a ratio of 0.003 never reads `0.00`).
pub fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() {
        return "-".into();
    }
    let a = r.abs();
    if a >= SCIENTIFIC_FROM || (a < SCIENTIFIC_BELOW && a > 0.0) {
        format!("{r:.1e}")
    } else if a >= 100.0 || a == 0.0 {
        format!("{r:.0}")
    } else if a >= 10.0 {
        format!("{r:.1}")
    } else if a >= 0.1 {
        format!("{r:.2}")
    } else {
        format!("{r:.*}", decimals_for(a, 2))
    }
}

/// A ratio to three significant digits at every magnitude: `0.00312`, `0.520`,
/// `1.73`, `19.6`, `312`, `3120` (scientific beyond [`SCIENTIFIC_FROM`] and below
/// [`SCIENTIFIC_BELOW`]): for ratios that span orders of magnitude, as a run
/// beside a paper's machine does, where `0.00` or `0.0031` would hide a digit.
pub fn fmt_ratio_sig3(r: f64) -> String {
    if !r.is_finite() {
        return "-".into();
    }
    let a = r.abs();
    if a >= SCIENTIFIC_FROM || (a < SCIENTIFIC_BELOW && a > 0.0) {
        format!("{r:.2e}")
    } else if a >= 100.0 || a == 0.0 {
        format!("{r:.0}")
    } else if a >= 10.0 {
        format!("{r:.1}")
    } else if a >= 1.0 {
        format!("{r:.2}")
    } else {
        format!("{r:.*}", decimals_for(a, 3))
    }
}

/// A ratio for text that stays on its side of 1: [`fmt_ratio`], with more
/// decimals (up to 6) while the rounded figure would read 1 or cross it
/// (`1.002`, never `1.00` for an interval end above 1; `0.998`, never `1.00`).
pub fn fmt_ratio_vs_one(r: f64) -> String {
    let plain = fmt_ratio(r);
    if !r.is_finite() || r == 1.0 || !(0.1..100.0).contains(&r.abs()) {
        return plain;
    }
    let side = |x: f64| x.partial_cmp(&1.0);
    for decimals in 2..=6 {
        let s = format!("{r:.decimals$}");
        if s.parse::<f64>().ok().and_then(side) == side(r) {
            return if decimals == 2 { plain } else { s };
        }
    }
    format!("{r:.6}")
}

/// A range of values in one scale chosen by the larger end, the unit once:
/// `26.30–30.60 kcycles`, `20.00–25.00 cycles` (never `0.0–0.0 kcycles`).
pub fn fmt_range(unit: &str, lo: f64, hi: f64) -> String {
    let (f, label) = unit_scale(unit, lo.abs().max(hi.abs()));
    format!("{}–{} {label}", fmt_num(lo / f), fmt_num(hi / f))
}

/// An x value by its axis name: bytes scaled (`4.000 KiB`), whole numbers
/// without decimals (thread counts), anything else to four digits.
pub fn fmt_x(x_name: &str, x: f64) -> String {
    if x_name == "bytes" {
        fmt_value("bytes", x)
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        fmt_num(x)
    }
}

/// `1 thread`, `2 threads`, `0.5 threads`.
pub fn threads(n: impl Into<f64>) -> String {
    let n: f64 = n.into();
    if n == 1.0 {
        "1 thread".into()
    } else {
        format!("{} threads", fmt_x("threads", n))
    }
}

/// A value with its unit, scaled (`12.3 Gops/s`, `840 ns`, `1.50 GiB`).
pub fn fmt_value(unit: &str, v: f64) -> String {
    let (f, label) = unit_scale(unit, v);
    format!("{} {label}", fmt_num(v / f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_scale_with_units() {
        assert_eq!(fmt_value("ops_per_s", 12.3e9), "12.30 Gops/s");
        assert_eq!(fmt_value("ns", 840.0), "840.0 ns");
        assert_eq!(fmt_value("ns", 28_000.0), "28.00 µs");
        assert_eq!(fmt_value("bytes", 1.5 * (1u64 << 30) as f64), "1.500 GiB");
        assert_eq!(fmt_value("bytes_per_s", 25e9), "25.00 GB/s");
        assert_eq!(fmt_num(f64::NAN), "-");
        assert_eq!(fmt_num(-1e308), "-1.000e308");
        assert_eq!(fmt_percent(f64::INFINITY, false), ">1000000");
        assert_eq!(fmt_percent(f64::NEG_INFINITY, true), "<-1000000");
        assert_eq!(fmt_percent(f64::NAN, true), "?");
        assert_eq!(fmt_percent(-3.4, true), "-3");
    }

    #[test]
    fn small_numbers_keep_significant_digits() {
        assert_eq!(fmt_num(0.5), "0.500");
        assert_eq!(fmt_num(0.031), "0.0310");
        assert_eq!(fmt_num(0.0031), "0.00310");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(3.1e-5), "3.10e-5");
        assert_eq!(fmt_num(-0.0042), "-0.00420");
    }

    #[test]
    fn durations_in_larger_units_are_scaled_by_magnitude() {
        assert_eq!(fmt_value("ms", 0.001), "1.000 µs");
        assert_eq!(fmt_value("ms", 2.5), "2.500 ms");
        assert_eq!(fmt_value("ms", 1500.0), "1.500 s");
        assert_eq!(fmt_value("us", 0.25), "250.0 ns");
        assert_eq!(fmt_value("s", 0.0004), "400.0 µs");
    }

    #[test]
    fn ratios_are_formatted_by_magnitude() {
        assert_eq!(fmt_ratio(0.003), "0.0030");
        assert_eq!(fmt_ratio(0.0456), "0.046");
        assert_eq!(fmt_ratio(0.52), "0.52");
        assert_eq!(fmt_ratio(1.734), "1.73");
        assert_eq!(fmt_ratio(19.64), "19.6");
        assert_eq!(fmt_ratio(250.4), "250");
        assert_eq!(fmt_ratio(f64::NAN), "-");
        assert_eq!(fmt_ratio(2e-6), "2.0e-6");
    }

    #[test]
    fn directions_follow_the_ratio_and_the_unit() {
        assert_eq!(better("ns"), Better::Lower);
        assert_eq!(better("ns_per_event"), Better::Lower);
        assert_eq!(better("bytes_per_s"), Better::Higher);
        assert_eq!(better("flops_per_s_per_thread"), Better::Higher);
        assert_eq!(better("ops_per_cycle_per_thread"), Better::Higher);
        assert_eq!(better("failed_cas_per_success"), Better::Neither);
        assert_eq!(better("bytes"), Better::Neither);
        assert_eq!(direction(0.92, "ns"), "shorter (faster, better)");
        assert_eq!(direction(1.3, "s"), "longer (slower, worse)");
        assert_eq!(direction(2.0, "ops_per_s"), "higher (better)");
        assert_eq!(direction(0.5, "bytes_per_s"), "lower (worse)");
        assert_eq!(direction(1.5, "x_one_thread"), "larger");
        assert_eq!(direction(1.0, "ns"), "the same");
        assert_eq!(direction(f64::NAN, "ns"), "not comparable");
    }

    #[test]
    fn ratios_keep_three_significant_digits() {
        assert_eq!(fmt_ratio_sig3(0.003_12), "0.00312");
        assert_eq!(fmt_ratio_sig3(0.003), "0.00300");
        assert_eq!(fmt_ratio_sig3(0.52), "0.520");
        assert_eq!(fmt_ratio_sig3(1.734), "1.73");
        assert_eq!(fmt_ratio_sig3(19.64), "19.6");
        assert_eq!(fmt_ratio_sig3(312.4), "312");
        assert_eq!(fmt_ratio_sig3(3124.0), "3124");
        assert_eq!(fmt_ratio_sig3(3.1e-5), "3.10e-5");
        assert_eq!(fmt_ratio_sig3(f64::INFINITY), "-");
    }

    #[test]
    fn ratio_ends_never_round_onto_one() {
        assert_eq!(fmt_ratio_vs_one(1.002), "1.002");
        assert_eq!(fmt_ratio_vs_one(0.998), "0.998");
        assert_eq!(fmt_ratio_vs_one(1.00004), "1.00004");
        assert_eq!(fmt_ratio_vs_one(1.06), "1.06");
        assert_eq!(fmt_ratio_vs_one(1.0), "1.00");
        assert_eq!(fmt_ratio_vs_one(0.003), "0.0030");
    }

    #[test]
    fn ranges_share_one_scale() {
        assert_eq!(
            fmt_range("cycles", 26_300.0, 30_600.0),
            "26.30–30.60 kcycles"
        );
        assert_eq!(fmt_range("cycles", 20.0, 25.0), "20.00–25.00 cycles");
        assert_eq!(fmt_range("ns", 800.0, 1500.0), "0.800–1.500 µs");
    }
}
