//! Where the second thread of a pair sits relative to the first (same CPU, SMT
//! sibling, other core, other package, unpinned), for the probes that measure a
//! pair of threads. Timing the pair is the harness's (`harness::pair`); turning
//! its samples into distributions and findings is analysis (`analysis::pairs`).

use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// Where the second thread of a pair runs, relative to the first.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The same CPU.
    SameCpu,
    /// Another hardware thread of the same core.
    SmtSibling,
    /// Another core (of the same package where there is one).
    OtherCore,
    /// A CPU of another package.
    OtherPackage,
    /// Not pinned: the OS decides.
    Unpinned,
}

impl Relation {
    /// Name in series and distributions.
    pub fn name(self) -> &'static str {
        match self {
            Relation::SameCpu => "same-cpu",
            Relation::SmtSibling => "smt-sibling",
            Relation::OtherCore => "other-core",
            Relation::OtherPackage => "other-package",
            Relation::Unpinned => "unpinned",
        }
    }

    /// All relations, nearest first.
    pub const ALL: [Relation; 5] = [
        Relation::SameCpu,
        Relation::SmtSibling,
        Relation::OtherCore,
        Relation::OtherPackage,
        Relation::Unpinned,
    ];
}

/// CPUs of a pair: `(first, second)`; `None` = unpinned.
pub type PairCpus = (Option<u32>, Option<u32>);

/// Why a topology has no pair of a relation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoPair {
    /// The process may use no CPU of the topology.
    #[error("no allowed CPU")]
    NoAllowedCpu,
    /// One hardware thread per core.
    #[error("no SMT sibling (one hardware thread per core)")]
    NoSmtSibling,
    /// One allowed core.
    #[error("only one core allowed")]
    OneCore,
    /// One package.
    #[error("one package")]
    OnePackage,
}

/// The pair for each relation the topology has, and for each it lacks the reason.
pub fn pairs(topo: &Topology) -> Vec<(Relation, Result<PairCpus, NoPair>)> {
    let allowed: Vec<_> = topo.allowed_pus().collect();
    let Some(first) = allowed.first() else {
        return Relation::ALL
            .iter()
            .map(|&r| (r, Err(NoPair::NoAllowedCpu)))
            .collect();
    };
    let a = first.os_index;
    Relation::ALL
        .iter()
        .map(|&r| {
            let found = match r {
                Relation::SameCpu => Ok(Some(a)),
                Relation::Unpinned => Ok(None),
                Relation::SmtSibling => allowed
                    .iter()
                    .find(|p| p.os_index != a && p.core == first.core && p.package == first.package)
                    .map(|p| Some(p.os_index))
                    .ok_or(NoPair::NoSmtSibling),
                Relation::OtherCore => allowed
                    .iter()
                    .find(|p| p.package == first.package && p.core != first.core)
                    .or_else(|| allowed.iter().find(|p| p.core != first.core))
                    .map(|p| Some(p.os_index))
                    .ok_or(NoPair::OneCore),
                Relation::OtherPackage => allowed
                    .iter()
                    .find(|p| p.package != first.package)
                    .map(|p| Some(p.os_index))
                    .ok_or(NoPair::OnePackage),
            };
            (
                r,
                found.map(|b| {
                    (
                        if r == Relation::Unpinned {
                            None
                        } else {
                            Some(a)
                        },
                        b,
                    )
                }),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_follow_the_topology() {
        // 2 packages × 2 cores × 2 hardware threads.
        let topo = crate::topology::from_synthetic("pack:2 core:2 pu:2").unwrap();
        let p = pairs(&topo);
        let get = |r: Relation| p.iter().find(|(x, _)| *x == r).unwrap().1.clone();
        let first = topo.pus[0].os_index;
        assert_eq!(get(Relation::SameCpu).unwrap(), (Some(first), Some(first)));
        let (_, sib) = get(Relation::SmtSibling).unwrap();
        let sib = topo.pu(sib.unwrap()).unwrap();
        assert_eq!(
            (sib.package, sib.core),
            (topo.pus[0].package, topo.pus[0].core)
        );
        let (_, oc) = get(Relation::OtherCore).unwrap();
        let oc = topo.pu(oc.unwrap()).unwrap();
        assert!(oc.core != topo.pus[0].core && oc.package == topo.pus[0].package);
        let (_, op) = get(Relation::OtherPackage).unwrap();
        assert_ne!(topo.pu(op.unwrap()).unwrap().package, topo.pus[0].package);
        assert_eq!(get(Relation::Unpinned).unwrap(), (None, None));

        // One package, no SMT: those relations say why they are missing.
        let small = crate::topology::from_synthetic("core:2 pu:1").unwrap();
        let p = pairs(&small);
        let get = |r: Relation| p.iter().find(|(x, _)| *x == r).unwrap().1.clone();
        assert_eq!(get(Relation::SmtSibling), Err(NoPair::NoSmtSibling));
        assert_eq!(get(Relation::OtherPackage), Err(NoPair::OnePackage));
        assert_eq!(
            NoPair::NoSmtSibling.to_string(),
            "no SMT sibling (one hardware thread per core)"
        );
        assert!(get(Relation::OtherCore).is_ok());
    }
}
