//! The issue (rename/dispatch) width of x86 cores by CPUID vendor, family and
//! model, each with the manual that states it: the denominator of seed 001's
//! efficiency (IPC ÷ issue width).

use serde::Serialize;

/// Instructions a core can issue per cycle, and where that number comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IssueWidth {
    /// Instructions (macro-ops) per cycle at rename/dispatch, per core.
    pub width: u32,
    /// Microarchitecture.
    pub uarch: &'static str,
    /// Where the width is stated.
    pub source: &'static str,
}

const INTEL_ORM: &str = "Intel 64 and IA-32 Architectures Optimization Reference Manual";

/// The issue (rename/dispatch) width of an x86 core from its CPUID vendor, family
/// and model; `None` for cores not in the table (hybrid Intel parts have two
/// widths and are left out on purpose).
pub fn issue_width_for(vendor: &str, family: u32, model: u32) -> Option<IssueWidth> {
    let w = |width, uarch, source| {
        Some(IssueWidth {
            width,
            uarch,
            source,
        })
    };
    match (vendor, family, model) {
        ("AuthenticAMD", 0x17, _) => w(
            6,
            "Zen / Zen+ / Zen 2",
            "AMD, Zen core, Hot Chips 28 (2016): 6 micro-ops dispatched per cycle",
        ),
        ("AuthenticAMD", 0x19, _) => w(
            6,
            "Zen 3 / Zen 4",
            "AMD Software Optimization Guide for Family 19h (pub. 56665): 6 macro-ops dispatched per cycle",
        ),
        ("AuthenticAMD", 0x1A, 0x00..=0x4F) => w(
            8,
            "Zen 5",
            "AMD Software Optimization Guide for Family 1Ah (pub. 58455), Hot Chips 2024: 8 macro-ops dispatched per cycle",
        ),
        ("GenuineIntel", 6, 0x3C | 0x3F | 0x45 | 0x46 | 0x3D | 0x47 | 0x4F | 0x56) => {
            w(4, "Haswell / Broadwell", INTEL_ORM)
        }
        ("GenuineIntel", 6, 0x4E | 0x5E | 0x55 | 0x8E | 0x9E | 0xA5 | 0xA6) => {
            w(4, "Skylake family (Skylake to Comet Lake, Cascade Lake)", INTEL_ORM)
        }
        ("GenuineIntel", 6, 0x7D | 0x7E | 0x6A | 0x6C | 0x8C | 0x8D | 0xA7) => {
            w(5, "Sunny / Willow / Cypress Cove (Ice, Tiger, Rocket Lake)", INTEL_ORM)
        }
        ("GenuineIntel", 6, 0x8F | 0xCF | 0xAD | 0xAE) => w(
            6,
            "Golden / Raptor / Redwood Cove (Sapphire, Emerald, Granite Rapids)",
            INTEL_ORM,
        ),
        _ => None,
    }
}

/// Why this CPU's signature is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown on {arch} (no table yet)")]
pub struct NoSignature {
    /// The architecture (`std::env::consts::ARCH`).
    pub arch: &'static str,
}

/// Why the issue width of this machine's cores is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IssueWidthUnknown {
    /// No CPU signature on this architecture.
    #[error(transparent)]
    Signature(#[from] NoSignature),
    /// A CPU the table does not list.
    #[error("unknown for {vendor} family {family:#x} model {model:#x} (not in the table)")]
    NotInTable {
        /// CPUID vendor string.
        vendor: String,
        /// Display family.
        family: u32,
        /// Display model.
        model: u32,
    },
}

/// The issue width of this machine's cores, or why it is unknown.
pub fn issue_width_here() -> Result<IssueWidth, IssueWidthUnknown> {
    let (vendor, family, model) = cpu_signature()?;
    issue_width_for(&vendor, family, model).ok_or(IssueWidthUnknown::NotInTable {
        vendor,
        family,
        model,
    })
}

/// This CPU's CPUID vendor string, family and model (the display family and model,
/// extended fields included), or why they are not known.
pub fn cpu_signature() -> Result<(String, u32, u32), NoSignature> {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86_64 CPU; leaves 0 and 1 always exist.
        // (`__cpuid` is a safe function in newer Rust; the block keeps older ones.)
        #[allow(unused_unsafe)]
        let (l0, l1) = unsafe { (__cpuid(0), __cpuid(1)) };
        let mut v = Vec::with_capacity(12);
        for r in [l0.ebx, l0.edx, l0.ecx] {
            v.extend_from_slice(&r.to_le_bytes());
        }
        let vendor = String::from_utf8_lossy(&v).to_string();
        let base_family = (l1.eax >> 8) & 0xF;
        let family = if base_family == 0xF {
            base_family + ((l1.eax >> 20) & 0xFF)
        } else {
            base_family
        };
        let model = if base_family == 0x6 || base_family == 0xF {
            ((l1.eax >> 12) & 0xF0) | ((l1.eax >> 4) & 0xF)
        } else {
            (l1.eax >> 4) & 0xF
        };
        Ok((vendor, family, model))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Err(NoSignature {
            arch: std::env::consts::ARCH,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_width_table() {
        assert_eq!(
            issue_width_for("AuthenticAMD", 0x1A, 0x02).unwrap().width,
            8
        );
        assert_eq!(
            issue_width_for("AuthenticAMD", 0x19, 0x11).unwrap().width,
            6
        );
        assert_eq!(issue_width_for("GenuineIntel", 6, 0x55).unwrap().width, 4);
        assert_eq!(issue_width_for("GenuineIntel", 6, 0x8F).unwrap().width, 6);
        // Hybrid Alder Lake: two widths, so none.
        assert!(issue_width_for("GenuineIntel", 6, 0x97).is_none());
        match issue_width_here() {
            Ok(w) => assert!(w.width >= 1 && !w.source.is_empty()),
            Err(why) => assert!(why.to_string().contains("unknown"), "{why}"),
        }
    }
}
