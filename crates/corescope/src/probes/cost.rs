//! What one run of a case costs, as each probe states it ([`super::Probe::run_cost_s`])
//! for `corescope plan`'s model (`estimate.rs`): the machine's speed measured once
//! ([`Calibration`]), the machine ([`Cost`]) and a case's typed parameters. Each
//! probe prices its own cases in its own file; the model walks the groups as the
//! runner does and sums.

use crate::model::Profile;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// This machine's speed, measured in well under 2 s (`Calibration::measure` in
/// `estimate.rs`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// ns per dependent integer op of compute's kernel (1 thread).
    pub op_ns: f64,
    /// ns per byte to first-touch and then read a fresh 32 MiB block (1 thread).
    pub byte_ns: f64,
    /// ns to create, pin and join one thread.
    pub spawn_ns: f64,
    /// ns of a cache-line round trip between the first two allowed CPUs.
    pub round_trip_ns: f64,
    /// Seconds the calibration took.
    pub calibration_s: f64,
    /// Where the numbers come from (`measured here`, `reference`).
    pub source: String,
}

impl Calibration {
    /// The 2-CPU machine (AMD EPYC VM, 2.6 GHz) the factors were fitted on,
    /// measured with `Calibration::measure` on 2026-11-23. Tests use it so their
    /// estimates do not depend on the machine they run on.
    pub fn reference() -> Self {
        Self {
            op_ns: 0.60,
            byte_ns: 0.46,
            spawn_ns: 40_000.0,
            round_trip_ns: 200.0,
            calibration_s: 0.0,
            source: "reference (2-CPU VM of 2026-11-23)".into(),
        }
    }
}

/// What prices a case besides its own parameters: the machine, its CPUs, the
/// profile and the machine's speed. Each probe reads its case's typed parameters
/// itself and passes the numbers it needs (threads, bytes, steps) to these helpers.
pub struct Cost<'a> {
    /// The machine planned for.
    pub topo: &'a Topology,
    /// CPUs the run may use (at least 1).
    pub cpus: usize,
    /// The profile planned.
    pub profile: Profile,
    /// The machine's speed.
    pub cal: &'a Calibration,
}

impl Cost<'_> {
    /// The CPUs as a number.
    pub fn cpus_f(&self) -> f64 {
        self.cpus.max(1) as f64
    }

    /// Waves of a team of `threads` over the CPUs (an oversubscribed team runs its
    /// work that many times over).
    pub fn waves(&self, threads: usize) -> f64 {
        (team(threads) / self.cpus_f()).ceil().max(1.0)
    }

    /// Seconds to create, pin and join a team of `threads` (at least one).
    pub fn team_spawn_s(&self, threads: usize) -> f64 {
        self.spawn_s(team(threads))
    }

    /// Seconds of one dependent integer op of compute's kernel.
    pub fn op_s(&self) -> f64 {
        self.cal.op_ns * 1e-9
    }

    /// Seconds to create, pin and join `threads` threads.
    pub fn spawn_s(&self, threads: f64) -> f64 {
        threads * self.cal.spawn_ns * 1e-9
    }

    /// Seconds to first-touch and read `bytes` on one thread.
    pub fn bytes_s(&self, bytes: f64) -> f64 {
        bytes * self.cal.byte_ns * 1e-9
    }

    /// A fixed time per run measured on the reference machine for each profile
    /// (quick, default, full), priced on this machine by its `op_ns`.
    pub fn per_profile(&self, quick_default_full_s: [f64; 3]) -> f64 {
        let [q, d, f] = quick_default_full_s;
        self.profile.pick(q, d, f) * self.cal.op_ns / Calibration::reference().op_ns
    }

    /// The round's clock after the kernel of a team of `threads`
    /// (`probes::round_clock_hz`): a second team (as the kernel's) and its
    /// repetitions of the add chain; nothing for teams above
    /// `clock::ROUND_CLOCK_MAX_CPUS`, which keep the header clock.
    pub fn round_clock_s(&self, threads: usize) -> f64 {
        if team(threads).min(self.cpus_f()) > crate::clock::ROUND_CLOCK_MAX_CPUS as f64 {
            return 0.0;
        }
        crate::clock::ROUND_CLOCK_REPS as f64 * crate::clock::ROUND_CLOCK_REP.as_secs_f64()
            + self.team_spawn_s(threads)
    }
}

/// A team of `threads` as a number (at least one thread).
pub fn team(threads: usize) -> f64 {
    threads.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(cpus: usize, f: impl Fn(&Cost) -> f64) -> f64 {
        let topo = crate::topology::from_synthetic("core:2 pu:1").expect("topology");
        let cal = Calibration::reference();
        f(&Cost {
            topo: &topo,
            cpus,
            profile: Profile::Default,
            cal: &cal,
        })
    }

    #[test]
    fn a_team_runs_in_waves_over_the_cpus() {
        assert_eq!(priced(2, |c| c.waves(4)), 2.0);
        assert_eq!(priced(2, |c| c.waves(3)), 2.0);
        assert_eq!(priced(2, |c| c.waves(1)), 1.0);
        // No threads is one thread.
        assert_eq!(priced(2, |c| c.waves(0)), 1.0);
        assert_eq!(
            priced(2, |c| c.team_spawn_s(0)),
            priced(2, |c| c.spawn_s(1.0))
        );
    }

    #[test]
    fn fixed_times_are_priced_by_the_machines_speed() {
        let on_reference = priced(2, |c| c.per_profile([1.0, 2.0, 3.0]));
        assert!((on_reference - 2.0).abs() < 1e-12, "{on_reference}");
    }
}
