//! What one run of a case costs, as each probe states it ([`super::Probe::run_cost_s`])
//! for `corescope plan`'s model (`estimate.rs`): the machine's speed measured once
//! ([`Calibration`]) and a case's parameters, read through [`Cost`]. Each probe
//! prices its own cases in its own file; the model walks the groups as the runner
//! does and sums.

use crate::model::Profile;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

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

/// One case to price: its parameters, its plan's, the machine and its speed.
pub struct Cost<'a> {
    /// The case's parameters without serde's enum tag (`{"Bandwidth": {...}}` → `{...}`).
    pub params: &'a Value,
    /// The plan's parameters (`fp_instructions_per_thread_per_rep`).
    pub plan_params: &'a BTreeMap<String, Value>,
    /// The machine planned for.
    pub topo: &'a Topology,
    /// CPUs the run may use (at least 1).
    pub cpus: usize,
    /// The profile planned.
    pub profile: Profile,
    /// The machine's speed.
    pub cal: &'a Calibration,
}

impl<'a> Cost<'a> {
    /// A case's parameters as its probe wrote them (`case.params`), the enum tag
    /// taken off.
    pub fn flat(params: &'a Value) -> &'a Value {
        match params.as_object() {
            Some(m) if m.len() == 1 => match m.values().next() {
                Some(inner) if inner.is_object() => inner,
                _ => params,
            },
            _ => params,
        }
    }

    /// A number of the case's parameters.
    pub fn num(&self, key: &str) -> Option<f64> {
        self.params.get(key).and_then(Value::as_f64)
    }

    /// A number of the plan's parameters.
    pub fn plan_num(&self, key: &str) -> Option<f64> {
        self.plan_params.get(key).and_then(Value::as_f64)
    }

    /// A string of the case's parameters (`""` when absent).
    pub fn text(&self, key: &str) -> &'a str {
        self.params.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// Entries of an array parameter (0 when absent).
    pub fn len_of(&self, key: &str) -> usize {
        self.params
            .get(key)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    }

    /// Whether the case has this parameter.
    pub fn has(&self, key: &str) -> bool {
        self.params.get(key).is_some()
    }

    /// The CPUs as a number.
    pub fn cpus_f(&self) -> f64 {
        self.cpus.max(1) as f64
    }

    /// The case's `threads` (1 when it does not say).
    pub fn threads(&self) -> f64 {
        self.num("threads").unwrap_or(1.0).max(1.0)
    }

    /// Waves of the case's threads over the CPUs (an oversubscribed team runs its
    /// work that many times over).
    pub fn waves(&self) -> f64 {
        (self.threads() / self.cpus_f()).ceil().max(1.0)
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

    /// The round's clock after a team's kernel (`probes::round_clock_hz`): a second
    /// team (as the kernel's) and its repetitions of the add chain; nothing for
    /// teams above `clock::ROUND_CLOCK_MAX_CPUS`, which keep the header clock.
    pub fn round_clock_s(&self) -> f64 {
        let team = self.threads().min(self.cpus_f());
        if team > crate::clock::ROUND_CLOCK_MAX_CPUS as f64 {
            return 0.0;
        }
        crate::clock::ROUND_CLOCK_REPS as f64 * crate::clock::ROUND_CLOCK_REP.as_secs_f64()
            + self.spawn_s(self.threads())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn priced(params: &Value, cpus: usize, f: impl Fn(&Cost) -> f64) -> f64 {
        let topo = crate::topology::from_synthetic("core:2 pu:1").expect("topology");
        let plan = BTreeMap::new();
        let cal = Calibration::reference();
        f(&Cost {
            params: Cost::flat(params),
            plan_params: &plan,
            topo: &topo,
            cpus,
            profile: Profile::Default,
            cal: &cal,
        })
    }

    #[test]
    fn the_enum_tag_comes_off_and_numbers_read_through() {
        let p = json!({"Bandwidth": {"threads": 4, "kernel": "read", "cpus": [0, 1]}});
        assert_eq!(priced(&p, 2, |c| c.threads()), 4.0);
        assert_eq!(priced(&p, 2, |c| c.waves()), 2.0);
        assert_eq!(priced(&p, 2, |c| c.len_of("cpus") as f64), 2.0);
        assert_eq!(priced(&p, 2, |c| c.text("kernel").len() as f64), 4.0);
        // A bare map keeps its keys.
        assert_eq!(
            priced(&json!({"n": 8}), 2, |c| c.num("n").unwrap_or(0.0)),
            8.0
        );
    }

    #[test]
    fn fixed_times_are_priced_by_the_machines_speed() {
        let p = json!({});
        let on_reference = priced(&p, 2, |c| c.per_profile([1.0, 2.0, 3.0]));
        assert!((on_reference - 2.0).abs() < 1e-12, "{on_reference}");
    }
}
