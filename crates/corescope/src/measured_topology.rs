//! What a run measured of the machine's structure, as data other tools take:
//! the c2c probe's latency between CPUs and the NUMA probe's latency and
//! bandwidth between nodes as complete distance matrices (hwloc's distances),
//! and where the measurements and the topology disagree (CPUs the `sharing`
//! probe finds on one core that the topology puts on two, NUMA nodes whose
//! measured latency ranks them otherwise than the topology's structure does).
//! Pure functions of a run file; the renderers word and export them.

use std::collections::BTreeMap;

use crate::model::{Finding, Matrix, RunFile};
use crate::probes::{c2c, numa, sharing};
use crate::topology::Topology;

/// Which objects a distance matrix relates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceObjects {
    /// Processing units, by OS index.
    Pu,
    /// NUMA nodes, by OS index.
    NumaNode,
}

/// What a distance matrix's values mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceMeaning {
    /// A latency: lower is closer.
    Latency,
    /// A bandwidth: higher is closer.
    Bandwidth,
}

/// One complete measured matrix between objects, in whole units.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredDistances {
    /// Name for hwloc, with the probe's matrix and the unit:
    /// `corescope c2c/cas latency (ns)`.
    pub name: String,
    /// The objects related.
    pub objects: DistanceObjects,
    /// Latency or bandwidth.
    pub meaning: DistanceMeaning,
    /// OS indices of the objects, in matrix order.
    pub indexes: Vec<u32>,
    /// Row-major `indexes.len()²` values: row = from (initiator), column = to
    /// (target). A diagonal the probe does not measure (c2c) is 0.
    pub values: Vec<u64>,
}

/// Bytes per MiB: hwloc's bandwidths are in MiB/s.
const MIB: f64 = (1u64 << 20) as f64;

/// Every complete matrix the run measured: c2c latencies between CPUs (`c2c/cas`,
/// `c2c/rw`, in ns) and the NUMA probe's latency (ns) and read bandwidth (MiB/s)
/// between nodes. A matrix with unmeasured cells keeps the largest set of objects
/// whose cells are all measured (greedily dropping the object missing the most,
/// the last of those missing equally many); one left with fewer than two
/// objects is left out.
pub fn measured_distances(run: &RunFile) -> Vec<MeasuredDistances> {
    let mut out = Vec::new();
    for p in &run.probes {
        for m in &p.matrices {
            let spec = match (p.id.as_str(), m.name.as_str()) {
                (c2c::ID, c2c::MATRIX_CAS | c2c::MATRIX_RW) => {
                    (DistanceObjects::Pu, DistanceMeaning::Latency, "ns", 1.0)
                }
                (numa::ID, numa::MATRIX_LATENCY) => (
                    DistanceObjects::NumaNode,
                    DistanceMeaning::Latency,
                    "ns",
                    1.0,
                ),
                (numa::ID, numa::MATRIX_READ) => (
                    DistanceObjects::NumaNode,
                    DistanceMeaning::Bandwidth,
                    "MiB/s",
                    1.0 / MIB,
                ),
                _ => continue,
            };
            if let Some(d) = complete(m, spec) {
                out.push(d);
            }
        }
    }
    out
}

/// A matrix's label as an object's OS index: `3`, `CPUs node 1`, `memory node 1`.
fn label_index(label: &str) -> Option<u32> {
    label.rsplit(' ').next()?.parse().ok()
}

/// The complete part of one square matrix, scaled and rounded to whole units.
fn complete(
    m: &Matrix,
    (objects, meaning, unit, scale): (DistanceObjects, DistanceMeaning, &str, f64),
) -> Option<MeasuredDistances> {
    let rows: Vec<u32> = m
        .rows
        .iter()
        .map(|l| label_index(l))
        .collect::<Option<_>>()?;
    let cols: Vec<u32> = m
        .cols
        .iter()
        .map(|l| label_index(l))
        .collect::<Option<_>>()?;
    if rows != cols || m.values.len() != rows.len() {
        return None;
    }
    let diagonal_measured = objects == DistanceObjects::NumaNode;
    let cell = |r: usize, c: usize| -> Option<f64> {
        if r == c && !diagonal_measured {
            return Some(0.0);
        }
        m.values
            .get(r)?
            .get(c)
            .copied()
            .flatten()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let mut kept: Vec<usize> = (0..rows.len()).collect();
    loop {
        let missing: Vec<usize> = kept
            .iter()
            .map(|&r| {
                kept.iter()
                    .filter(|&&c| cell(r, c).is_none() || cell(c, r).is_none())
                    .count()
            })
            .collect();
        let (worst, &n) = missing.iter().enumerate().max_by_key(|&(i, n)| (*n, i))?;
        if n == 0 {
            break;
        }
        kept.remove(worst);
    }
    if kept.len() < 2 {
        return None;
    }
    let mut values = Vec::with_capacity(kept.len() * kept.len());
    for &r in &kept {
        for &c in &kept {
            // Rounded to a whole unit, at least 1 off the diagonal (0 means "self").
            let v = (cell(r, c)? * scale).round() as u64;
            values.push(if r == c { v } else { v.max(1) });
        }
    }
    let what = match meaning {
        DistanceMeaning::Latency => "latency",
        DistanceMeaning::Bandwidth => "bandwidth",
    };
    Some(MeasuredDistances {
        name: format!("corescope {} {what} ({unit})", m.name),
        objects,
        meaning,
        indexes: kept.iter().map(|&i| rows[i]).collect(),
        values,
    })
}

/// One pair of CPUs where the `sharing` probe and the topology disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct SharingDifference {
    /// First CPU (OS index).
    pub a: u32,
    /// Second CPU (OS index).
    pub b: u32,
    /// Measured: `true` they share a core.
    pub measured_shared: bool,
    /// The topology's word on the pair (`same cache`, `SMT siblings`).
    pub topology: String,
}

/// One ordering the NUMA probe's latency contradicts: from CPU node `from`, the
/// topology puts `near` closer than `far` (local before same package before
/// another package), but `near`'s measured latency interval lies wholly above
/// `far`'s.
#[derive(Debug, Clone, PartialEq)]
pub struct NumaDifference {
    /// The CPUs' node.
    pub from: u32,
    /// The node the topology says is closer.
    pub near: u32,
    /// The node the topology says is farther.
    pub far: u32,
    /// Measured median latency to `near`, ns.
    pub near_ns: f64,
    /// Measured median latency to `far`, ns.
    pub far_ns: f64,
}

/// The outcome of one comparison of the topology with a measurement.
#[derive(Debug, Clone, PartialEq)]
pub enum Check<T> {
    /// The run has no such measurement (with the reason).
    NotMeasured(String),
    /// Measured, and nothing differs from the topology (what was compared).
    Agrees(String),
    /// The differences.
    Differs(Vec<T>),
}

/// Where the `sharing` probe's verdicts differ from the topology's cores: a pair
/// measured as sharing a core that the topology puts on two, or the reverse.
/// Pairs the probe could not tell apart are not differences.
pub fn sharing_check(run: &RunFile) -> Check<SharingDifference> {
    let verdicts: Vec<(u32, u32, Option<bool>, &str, bool)> = run
        .probes
        .iter()
        .filter(|p| p.id == sharing::ID)
        .flat_map(|p| &p.findings)
        .filter_map(|f| match f {
            Finding::CoreSharing {
                a,
                b,
                shared,
                topology,
                topology_same_core,
                ..
            } => Some((*a, *b, *shared, topology.as_str(), *topology_same_core)),
            _ => None,
        })
        .collect();
    if verdicts.is_empty() {
        return Check::NotMeasured("no `sharing` probe in this run".into());
    }
    let differs: Vec<SharingDifference> = verdicts
        .iter()
        .filter_map(|&(a, b, shared, topology, same)| {
            let measured = shared?;
            (measured != same).then(|| SharingDifference {
                a,
                b,
                measured_shared: measured,
                topology: topology.to_string(),
            })
        })
        .collect();
    if differs.is_empty() {
        Check::Agrees(format!("{} CPU pairs", verdicts.len()))
    } else {
        Check::Differs(differs)
    }
}

/// How far the topology puts memory node `to` from CPU node `from`: 0 the same
/// node, 1 a node of the same package, 2 another package; `None` for a node
/// without CPUs (its package is unknown).
fn topology_rank(t: &Topology, from: u32, to: u32) -> Option<u8> {
    if from == to {
        return Some(0);
    }
    let packages = |n: u32| -> Vec<u32> {
        let mut v: Vec<u32> = t
            .pus
            .iter()
            .filter(|p| p.numa_node == Some(n))
            .map(|p| p.package)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (a, b) = (packages(from), packages(to));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    Some(if a.iter().any(|p| b.contains(p)) {
        1
    } else {
        2
    })
}

/// Where the NUMA probe's latency ranks the memory nodes otherwise than the
/// topology's structure (the run file keeps no firmware distance table, so the
/// structure stands for it: local, then the package's other nodes, then other
/// packages). A pair counts only when the two intervals separate.
pub fn numa_check(run: &RunFile) -> Check<NumaDifference> {
    let Some(numa) = run.probes.iter().find(|p| p.id == numa::ID) else {
        return Check::NotMeasured("no `numa` probe in this run".into());
    };
    // CPU node → memory node → (median, lo, hi).
    let mut lat: BTreeMap<u32, BTreeMap<u32, (f64, f64, f64)>> = BTreeMap::new();
    for s in &numa.series {
        let Some(from) = numa::latency_series_node(&s.name) else {
            continue;
        };
        for (i, &x) in s.x.iter().enumerate() {
            if let Some(e) = s.estimate(i) {
                lat.entry(from)
                    .or_default()
                    .insert(x as u32, (e.value, e.lo, e.hi));
            }
        }
    }
    let nodes: usize = lat.values().map(BTreeMap::len).max().unwrap_or(0);
    if nodes < 2 {
        return Check::NotMeasured("the `numa` probe measured one node only".into());
    }
    let mut differs = Vec::new();
    let mut compared = 0usize;
    for (&from, row) in &lat {
        for (&near, &(near_ns, near_lo, _)) in row {
            for (&far, &(far_ns, _, far_hi)) in row {
                let (Some(rn), Some(rf)) = (
                    topology_rank(&run.topology, from, near),
                    topology_rank(&run.topology, from, far),
                ) else {
                    continue;
                };
                if rn >= rf {
                    continue;
                }
                compared += 1;
                if near_lo > far_hi {
                    differs.push(NumaDifference {
                        from,
                        near,
                        far,
                        near_ns,
                        far_ns,
                    });
                }
            }
        }
    }
    if compared == 0 {
        return Check::NotMeasured(
            "no two measured memory nodes the topology ranks apart (nodes without CPUs)".into(),
        );
    }
    if differs.is_empty() {
        Check::Agrees(format!(
            "{compared} orderings of memory nodes by latency on {} CPU nodes",
            lat.len()
        ))
    } else {
        Check::Differs(differs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Estimate, Point, ProbeResult, Status};
    use crate::topology::Pu;

    fn quick() -> RunFile {
        serde_json::from_str(include_str!("../tests/fixtures/quick.json")).unwrap()
    }

    /// Four CPUs: 0, 1 on package 0 / node 0; 2, 3 on package 1 / node 1.
    fn two_nodes() -> Topology {
        let pus = (0..4)
            .map(|i| Pu {
                os_index: i,
                package: i / 2,
                numa_node: Some(i / 2),
                core: i,
                path: vec![i / 2, i % 2],
                allowed: true,
                ..Pu::default()
            })
            .collect();
        Topology {
            pus,
            packages: 2,
            numa_nodes: 2,
            cores: 4,
            ..Topology::default()
        }
    }

    #[test]
    fn a_cpu_missing_a_pair_is_dropped_and_the_rest_kept() {
        let mut run = quick();
        let v = |x: f64| Some(x);
        let m = Matrix {
            name: "c2c/cas".into(),
            unit: "ns".into(),
            rows: vec!["0".into(), "1".into(), "2".into()],
            cols: vec!["0".into(), "1".into(), "2".into()],
            values: vec![
                vec![None, v(50.4), v(90.0)],
                vec![v(50.4), None, None],
                vec![v(90.0), None, None],
            ],
        };
        let c2c = run.probes.iter_mut().find(|p| p.id == "c2c").unwrap();
        c2c.matrices = vec![m];
        let d = measured_distances(&run);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].indexes, [0, 1]);
        assert_eq!(d[0].values, [0, 50, 50, 0]);
    }

    #[test]
    fn numa_matrices_become_node_latency_and_bandwidth_in_mib() {
        let mut run = quick();
        let mut p = ProbeResult::new("numa", "t", Status::Completed);
        let m = |name: &str, unit: &str, a: f64, b: f64| Matrix {
            name: name.into(),
            unit: unit.into(),
            rows: vec!["CPUs node 0".into(), "CPUs node 1".into()],
            cols: vec!["memory node 0".into(), "memory node 1".into()],
            values: vec![vec![Some(a), Some(b)], vec![Some(b), Some(a)]],
        };
        p.matrices.push(m("numa/latency", "ns", 90.0, 140.0));
        p.matrices
            .push(m("numa/read", "bytes_per_s", 2.0 * MIB, MIB));
        run.probes.push(p);
        let d = measured_distances(&run);
        let numa: Vec<_> = d
            .iter()
            .filter(|d| d.objects == DistanceObjects::NumaNode)
            .collect();
        assert_eq!(numa[0].values, [90, 140, 140, 90]);
        assert_eq!(numa[1].meaning, DistanceMeaning::Bandwidth);
        assert_eq!(numa[1].values, [2, 1, 1, 2]);
        assert_eq!(numa[1].name, "corescope numa/read bandwidth (MiB/s)");
    }

    fn sharing_run(shared: Option<bool>, topology_same_core: bool) -> RunFile {
        let mut run = quick();
        let e = Estimate {
            value: 0.52,
            lo: 0.50,
            hi: 0.55,
            n: 8,
        };
        let mut p = ProbeResult::new("sharing", "t", Status::Completed);
        p.findings.push(Finding::CoreSharing {
            a: 0,
            b: 1,
            shared,
            kernel: "fma".into(),
            ratio: e,
            ratios: BTreeMap::new(),
            topology: "same cache".into(),
            topology_same_core,
        });
        run.probes.push(p);
        run
    }

    #[test]
    fn sharing_differs_only_where_a_verdict_contradicts_the_topology() {
        assert!(matches!(sharing_check(&quick()), Check::NotMeasured(_)));
        assert!(matches!(
            sharing_check(&sharing_run(Some(false), false)),
            Check::Agrees(_)
        ));
        assert!(matches!(
            sharing_check(&sharing_run(None, false)),
            Check::Agrees(_)
        ));
        let Check::Differs(d) = sharing_check(&sharing_run(Some(true), false)) else {
            panic!("a shared core the topology does not report is a difference");
        };
        assert_eq!((d[0].a, d[0].b, d[0].measured_shared), (0, 1, true));
    }

    fn numa_run(local_ns: f64, remote_ns: f64) -> RunFile {
        let mut run = quick();
        run.topology = two_nodes();
        let mut p = ProbeResult::new("numa", "t", Status::Completed);
        for from in 0..2u32 {
            for to in 0..2u32 {
                let y = if from == to { local_ns } else { remote_ns };
                let samples = vec![y - 1.0, y, y + 1.0, y, y - 0.5, y + 0.5];
                let name = format!("latency/cpus-node{from}");
                p.push_point(Point::samples(
                    name,
                    "memory node",
                    to as f64,
                    "ns",
                    samples,
                ));
            }
        }
        p.summarise();
        run.probes.push(p);
        run
    }

    #[test]
    fn numa_differs_where_a_remote_node_measures_closer_than_the_local_one() {
        assert!(matches!(numa_check(&quick()), Check::NotMeasured(_)));
        assert!(matches!(
            numa_check(&numa_run(90.0, 140.0)),
            Check::Agrees(_)
        ));
        let Check::Differs(d) = numa_check(&numa_run(140.0, 90.0)) else {
            panic!("local memory slower than remote is a difference");
        };
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].from, d[0].near, d[0].far), (0, 0, 1));
    }
}
