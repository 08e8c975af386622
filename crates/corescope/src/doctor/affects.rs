//! Which probes each condition blurs: the `affects` of a check, looked up in a
//! registry by what each probe declares it is sensitive to
//! ([`crate::probes::Probe::sensitive_to`]), never by probe id.

use crate::model::{CheckId, Sensitivity};
use crate::probes::AnyProbe;

/// What a condition blurs: the probes sensitive to it, or every probe (`None`)
/// for the conditions that slow or jitter the clock or steal time.
pub(super) fn blurs(id: CheckId) -> Option<Sensitivity> {
    match id {
        CheckId::Smt => Some(Sensitivity::CoreThroughput),
        CheckId::Thp => Some(Sensitivity::PageSize),
        CheckId::NumaBalancing => Some(Sensitivity::PagePlacement),
        CheckId::VcpuPlacement => Some(Sensitivity::CrossCpu),
        CheckId::Governor
        | CheckId::Boost
        | CheckId::IsolatedCpus
        | CheckId::IrqAffinity
        | CheckId::Load
        | CheckId::Steal
        | CheckId::Hypervisor
        | CheckId::PerfEventParanoid => None,
    }
}

/// The ids of the probes of `registry` that condition `id` blurs, in the
/// registry's order.
pub(super) fn affected(id: CheckId, registry: &[Box<dyn AnyProbe>]) -> Vec<String> {
    let wanted = blurs(id);
    registry
        .iter()
        .filter(|p| wanted.is_none_or(|s| p.sensitive_to().contains(&s)))
        .map(|p| p.id().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::registry;

    #[test]
    fn every_sensitivity_is_a_condition_and_blurs_some_probe() {
        let all = registry();
        let dir = tempfile::tempdir().unwrap();
        let files = crate::topology::knobs::HostFiles::under(dir.path());
        let checks = super::super::read(&files, &super::super::Options::default());
        for s in Sensitivity::ALL {
            let conditions: Vec<CheckId> = checks
                .checks
                .iter()
                .map(|c| c.id)
                .filter(|&c| blurs(c) == Some(s))
                .collect();
            assert_eq!(conditions.len(), 1, "{s:?}: {conditions:?}");
            let ids = affected(conditions[0], &all);
            assert!(!ids.is_empty(), "no registered probe is sensitive to {s:?}");
            assert!(ids.len() < all.len(), "{s:?} is every probe: {ids:?}");
        }
    }

    #[test]
    fn a_clock_condition_blurs_every_probe_in_registry_order() {
        let all = registry();
        let ids: Vec<&str> = all.iter().map(|p| p.id()).collect();
        assert_eq!(affected(CheckId::Governor, &all), ids);
        assert!(affected(CheckId::Steal, &[]).is_empty());
    }
}
