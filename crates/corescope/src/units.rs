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

/// Number with about four significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= SCIENTIFIC_FROM {
        format!("{v:.3e}")
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
}
