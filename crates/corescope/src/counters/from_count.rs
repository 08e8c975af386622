//! Seed 001's MIPS, CPI and machine efficiency where no PMU counts instructions
//! (every VM here): from a kernel whose instructions per unit of work are known
//! from its generated code (`kernels::chains::INSTRUCTIONS_PER_PASS`), its wall
//! time and the measured core clock. Pure functions; every figure they give is
//! labelled "from the kernel's instruction count" wherever it is shown.

/// Unit of MIPS derived from a kernel's known instruction count (not counted).
pub const MIPS_FROM_COUNT: &str = "mips_from_kernel_instruction_count";
/// Unit of CPI derived from a kernel's known instruction count (not counted).
pub const CPI_FROM_COUNT: &str = "cpi_from_kernel_instruction_count";
/// Unit of seed 001's machine efficiency: percent of the machine's maximum MIPS.
pub const PERCENT_OF_MAX_MIPS: &str = "percent_of_machine_max_mips";

/// Millions of instructions per second: `instructions` retired over `wall_ns`;
/// `None` for an empty interval.
pub fn mips_from_count(instructions: f64, wall_ns: f64) -> Option<f64> {
    (wall_ns > 0.0 && instructions.is_finite()).then(|| instructions / (wall_ns * 1e-9) / 1e6)
}

/// Cycles per instruction from the cycles the team's CPUs had: `core_hz` ×
/// `busy_cpus` × `wall_ns` ÷ `instructions` (every busy CPU counted for the whole
/// team time, so a thread that finished early makes it a little high); `None`
/// without instructions, time, CPUs or clock.
pub fn cpi_from_count(
    core_hz: f64,
    busy_cpus: usize,
    wall_ns: f64,
    instructions: f64,
) -> Option<f64> {
    let cycles = core_hz * busy_cpus as f64 * wall_ns * 1e-9;
    (cycles > 0.0 && instructions > 0.0).then(|| cycles / instructions)
}

/// The CPUs a team keeps busy: its threads, at most one per distinct CPU it was
/// pinned to, or, unbound, at most the CPUs the run may use.
pub fn busy_cpus(team: &[Option<u32>], allowed_cpus: usize) -> usize {
    let mut pinned: Vec<u32> = team.iter().flatten().copied().collect();
    pinned.sort_unstable();
    pinned.dedup();
    let cpus = if pinned.is_empty() {
        allowed_cpus
    } else {
        pinned.len()
    };
    team.len().min(cpus.max(1))
}

/// Seed 001's maximum MIPS of a machine: core clock × cores × issue width ÷ 10⁶
/// (the seed: 1.2 GHz × 8 cores × 4 per cycle = 38400); `None` when any is zero.
pub fn machine_max_mips(core_hz: f64, cores: usize, issue_width: u32) -> Option<f64> {
    let max = core_hz * cores as f64 * issue_width as f64 / 1e6;
    (max > 0.0 && max.is_finite()).then_some(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::chains::{fp_inputs, fp_kernel, INPUTS, OPS_PER_INPUT};

    /// A kernel with a known count: 2 threads × 1000 passes of the chain kernel at
    /// 1350 instructions a pass in 1 ms are 2.7·10⁶ instructions: 2700 MIPS; on 2
    /// CPUs at 3 GHz that is 6·10⁶ cycles: CPI 2.222…
    #[test]
    fn mips_and_cpi_from_a_known_count() {
        let instructions = 2.0 * 1000.0 * 1350.0;
        let mips = mips_from_count(instructions, 1e6).unwrap();
        assert!((mips - 2700.0).abs() < 1e-9, "{mips}");
        let cpi = cpi_from_count(3e9, 2, 1e6, instructions).unwrap();
        assert!((cpi - 6e6 / 2.7e6).abs() < 1e-12, "{cpi}");
        assert_eq!(mips_from_count(1.0, 0.0), None);
        assert_eq!(cpi_from_count(3e9, 0, 1e6, 1.0), None);
        assert_eq!(cpi_from_count(3e9, 2, 1e6, 0.0), None);
    }

    /// The chain kernel run for real: its MIPS from the stated count is the op rate
    /// × 1350 / 1024 (instructions per pass ÷ operations per pass), whatever the time.
    #[test]
    fn chain_kernel_mips_follows_its_op_rate() {
        let Some(per_pass) = crate::kernels::chains::INSTRUCTIONS_PER_PASS else {
            return;
        };
        let passes = 2_000u64;
        let t0 = std::time::Instant::now();
        std::hint::black_box(fp_kernel(
            &fp_inputs(0),
            [0.5, 1.25, 0.75, 0.25],
            passes,
            1.0,
        ));
        let ns = t0.elapsed().as_nanos().max(1) as f64;
        let ops = passes as f64 * INPUTS as f64 * OPS_PER_INPUT as f64;
        let mips = mips_from_count(passes as f64 * per_pass as f64, ns).unwrap();
        let ops_per_s = ops / (ns * 1e-9);
        let ratio = mips * 1e6 / ops_per_s;
        assert!((ratio - 1350.0 / 1024.0).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn busy_cpus_of_pinned_and_unbound_teams() {
        assert_eq!(busy_cpus(&[Some(0), Some(1)], 8), 2);
        assert_eq!(busy_cpus(&[Some(0), Some(0), Some(1)], 8), 2);
        assert_eq!(busy_cpus(&[None; 3], 2), 2);
        assert_eq!(busy_cpus(&[None; 3], 8), 3);
        assert_eq!(busy_cpus(&[], 8), 0);
    }

    /// Seed 001, Table 2 (test 1, compute work; US-IV domain: 8 cores, 4 per
    /// cycle, 1.2 GHz): the maximum is 38400 MIPS, and each row's MIPS ÷ it is the
    /// row's efficiency to the seed's two decimals — 4.16 % with 1 thread to
    /// 33.23 % with 8. Table 4 (working set) too: 69.05 MIPS → 0.18 %.
    #[test]
    fn machine_efficiency_follows_seed_001_tables_2_and_4() {
        let max = machine_max_mips(1.2e9, 8, 4).unwrap();
        assert!((max - 38400.0).abs() < 1e-9, "{max}");
        for (threads, mips, percent) in [
            (1, 1597.5, 4.16),
            (2, 3183.5, 8.29),
            (4, 4180.11, 10.89),
            (8, 12761.94, 33.23),
            (1, 69.05, 0.18),
            (4, 888.21, 2.31),
        ] {
            let e = 100.0 * mips / max;
            assert!(
                (e - percent).abs() < 0.005 + 1e-9,
                "{threads}: {e} vs {percent}"
            );
            let via = super::super::machine_efficiency(mips, 1.2e9, 8, 4).unwrap();
            assert!((100.0 * via - e).abs() < 1e-9);
        }
        assert_eq!(machine_max_mips(0.0, 8, 4), None);
        assert_eq!(machine_max_mips(1.2e9, 0, 4), None);
    }
}
