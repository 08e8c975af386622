//! The physical limit of a core's FMA units: pipes × lanes × 2 FLOP per cycle, per
//! instruction-set level, from the CPU model. `peak` records it in its run file (the
//! `fma-limit` table, at measure time: a report drawn elsewhere never reads the CPU),
//! and `crosscheck` gives it beside likwid-bench's `peakflops_*` kernels.

use super::{kernel_name, Level, Precision};
use crate::model::Table;
use serde_json::{json, Value};

/// A core's fused multiply-add units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmaUnits {
    /// FMA pipes per core.
    pub pipes: u32,
    /// Width of each pipe in bits: a wider vector is split over several cycles
    /// ("double-pumped").
    pub pipe_bits: u32,
    /// Microarchitecture.
    pub uarch: &'static str,
    /// Where the figures are stated.
    pub source: &'static str,
}

/// FLOP per FMA lane (a multiply and an add).
pub const FLOP_PER_FMA_LANE: u32 = 2;

/// The FMA units of an x86 core from its CPUID vendor, family and model; `None` where
/// the table has no entry (Intel's cores differ by SKU in the number of 512-bit
/// units, so they are left out until a machine of each kind is measured).
pub fn fma_units_for(vendor: &str, family: u32, model: u32) -> Option<FmaUnits> {
    let u = |pipes, pipe_bits, uarch, source| {
        Some(FmaUnits {
            pipes,
            pipe_bits,
            uarch,
            source,
        })
    };
    match (vendor, family, model) {
        ("AuthenticAMD", 0x17, 0x00..=0x2F) => u(
            2,
            128,
            "Zen / Zen+",
            "AMD Software Optimization Guide for Family 17h (pub. 55723): two 128-bit FMA pipes",
        ),
        ("AuthenticAMD", 0x17, _) => u(
            2,
            256,
            "Zen 2",
            "AMD Software Optimization Guide for Family 17h Models 30h+ (pub. 56305): two 256-bit FMA pipes",
        ),
        ("AuthenticAMD", 0x19, 0x10..=0x1F | 0x60..=0x7F | 0xA0..=0xAF) => u(
            2,
            256,
            "Zen 4",
            "AMD Software Optimization Guide for Family 19h Models 10h+ (pub. 57647): two 256-bit FMA pipes; 512-bit operations are executed as two 256-bit halves",
        ),
        ("AuthenticAMD", 0x19, _) => u(
            2,
            256,
            "Zen 3",
            "AMD Software Optimization Guide for Family 19h (pub. 56665): two 256-bit FMA pipes",
        ),
        ("AuthenticAMD", 0x1A, 0x00..=0x1F | 0x40..=0x4F) => u(
            2,
            512,
            "Zen 5 (desktop and server)",
            "AMD Software Optimization Guide for Family 1Ah (pub. 58455), Hot Chips 2024: two 512-bit FMA pipes",
        ),
        _ => None,
    }
}

/// FLOP per cycle per core at `level` and `precision`: pipes × lanes × 2, where a
/// vector wider than a pipe takes a pipe for several cycles. `None` for a level
/// without FMA (its multiply and add use other pipes).
pub fn flop_per_cycle(units: FmaUnits, level: Level, precision: Precision) -> Option<f64> {
    if !level.fused() {
        return None;
    }
    let vector_bits = level.vector_bytes() as u32 * 8;
    let elem_bits = match precision {
        Precision::F64 => 64,
        Precision::F32 => 32,
    };
    let lanes_per_pipe_cycle = vector_bits.min(units.pipe_bits) / elem_bits;
    Some(f64::from(
        units.pipes * lanes_per_pipe_cycle * FLOP_PER_FMA_LANE,
    ))
}

/// Why this machine's FMA units are not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FmaUnitsUnknown {
    /// No CPU signature on this architecture.
    #[error(transparent)]
    Signature(#[from] crate::counters::NoSignature),
    /// A CPU the table does not list.
    #[error(
        "FMA units unknown for {vendor} family {family:#x} model {model:#x} (not in the table)"
    )]
    NotInTable {
        /// CPUID vendor string.
        vendor: String,
        /// Display family.
        family: u32,
        /// Display model.
        model: u32,
    },
}

/// This machine's FMA units, or why they are not known.
pub fn fma_units_here() -> Result<FmaUnits, FmaUnitsUnknown> {
    let (vendor, family, model) = crate::counters::cpu_signature()?;
    fma_units_for(&vendor, family, model).ok_or(FmaUnitsUnknown::NotInTable {
        vendor,
        family,
        model,
    })
}

/// Name of the table in which `peak` records the limits at measure time.
pub const TABLE: &str = "fma-limit";

/// Columns of [`TABLE`]: the kernel (`avx512-fma-f64`), its limit in FLOP per
/// cycle per core (`null` where not known) and where the figure comes from, or why
/// there is none.
pub const COLUMNS: [&str; 3] = ["kernel", "limit_flop_per_cycle_per_core", "source"];

/// The limit of each measured kernel as a table row: the figure with its source,
/// or an empty figure and the reason (units not known here, or a level without
/// FMA); never an invented number.
pub fn limit_table(
    kernels: &[(Level, Precision)],
    units: &Result<FmaUnits, FmaUnitsUnknown>,
) -> Table {
    let no_fma = "no FMA at this level: its multiplies and adds use other pipes, \
                  the FMA units set no limit";
    let rows = kernels
        .iter()
        .map(|&(level, p)| {
            let (limit, source) = match units {
                _ if !level.fused() => (Value::Null, no_fma.to_string()),
                Err(why) => (Value::Null, why.to_string()),
                Ok(u) => match flop_per_cycle(*u, level, p) {
                    Some(v) => (
                        json!(v),
                        format!(
                            "{}: {} × {}-bit FMA pipes ({})",
                            u.uarch, u.pipes, u.pipe_bits, u.source
                        ),
                    ),
                    None => (Value::Null, no_fma.to_string()),
                },
            };
            vec![json!(kernel_name(level, p)), limit, json!(source)]
        })
        .collect();
    Table {
        name: TABLE.into(),
        columns: COLUMNS.map(String::from).to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_of_known_cores() {
        let zen4 = fma_units_for("AuthenticAMD", 0x19, 0x11).expect("Zen 4");
        assert_eq!(zen4.uarch, "Zen 4");
        assert_eq!(
            flop_per_cycle(zen4, Level::Avx2Fma, Precision::F64),
            Some(16.0)
        );
        // Double-pumped: AVX-512 gives Zen 4 no more FLOP per cycle than AVX2.
        assert_eq!(
            flop_per_cycle(zen4, Level::Avx512Fma, Precision::F64),
            Some(16.0)
        );
        assert_eq!(
            flop_per_cycle(zen4, Level::Avx512Fma, Precision::F32),
            Some(32.0)
        );
        let zen3 = fma_units_for("AuthenticAMD", 0x19, 0x01).expect("Zen 3");
        assert_eq!(zen3.uarch, "Zen 3");
        let zen5 = fma_units_for("AuthenticAMD", 0x1A, 0x02).expect("Zen 5");
        assert_eq!(
            flop_per_cycle(zen5, Level::Avx512Fma, Precision::F64),
            Some(32.0)
        );
        assert_eq!(
            flop_per_cycle(zen5, Level::Avx2Fma, Precision::F64),
            Some(16.0)
        );
        let zen1 = fma_units_for("AuthenticAMD", 0x17, 0x01).expect("Zen 1");
        assert_eq!(
            flop_per_cycle(zen1, Level::Avx2Fma, Precision::F64),
            Some(8.0)
        );
    }

    #[test]
    fn unknown_cores_and_unfused_levels_have_no_limit() {
        assert!(fma_units_for("GenuineIntel", 6, 0x55).is_none());
        assert!(fma_units_for("AuthenticAMD", 0x15, 0x02).is_none());
        let zen4 = fma_units_for("AuthenticAMD", 0x19, 0x61).expect("Zen 4");
        assert_eq!(flop_per_cycle(zen4, Level::Avx2, Precision::F64), None);
        assert_eq!(flop_per_cycle(zen4, Level::Sse2, Precision::F64), None);
    }

    #[test]
    fn the_table_holds_a_figure_with_its_source_or_the_reason() {
        let kernels = [
            (Level::Avx2, Precision::F64),
            (Level::Avx512Fma, Precision::F32),
        ];
        let zen4 = fma_units_for("AuthenticAMD", 0x19, 0x11).ok_or(FmaUnitsUnknown::NotInTable {
            vendor: "AuthenticAMD".into(),
            family: 0x19,
            model: 0x11,
        });
        let t = limit_table(&kernels, &zen4);
        assert_eq!(t.name, TABLE);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][0], json!("avx2-f64"));
        assert_eq!(t.rows[0][1], Value::Null);
        assert!(t.rows[0][2].as_str().unwrap().starts_with("no FMA"));
        assert_eq!(t.rows[1][1], json!(32.0));
        assert!(t.rows[1][2]
            .as_str()
            .unwrap()
            .contains("Zen 4: 2 × 256-bit"));
        let unknown: Result<FmaUnits, FmaUnitsUnknown> = Err(FmaUnitsUnknown::NotInTable {
            vendor: "GenuineIntel".into(),
            family: 6,
            model: 0xcf,
        });
        let t = limit_table(&kernels, &unknown);
        assert!(t.rows.iter().all(|r| r[1].is_null()));
        // A level without FMA has none on any CPU; the FMA level says why it has no figure.
        assert!(t.rows[0][2].as_str().unwrap().starts_with("no FMA"));
        assert!(t.rows[1][2].as_str().unwrap().contains("GenuineIntel"));
    }
}
