//! Which CPUs a pairwise probe (`c2c`, `sharing`) measures. Up to [`FULL_MATRIX_MAX`]
//! allowed CPUs: all of them. Beyond, a representative subset, so the number of pairs
//! stays bounded on machines with 2048 hardware threads: every hardware thread of the
//! first core (SMT siblings), the first hardware thread of up to [`CORES_SAMPLED`]
//! cores of the first package spread evenly, and the first hardware thread of the
//! first core of up to [`PACKAGES_SAMPLED`] other packages.

use crate::topology::Topology;

/// Largest CPU count measured completely (64 CPUs = 2016 pairs).
pub const FULL_MATRIX_MAX: usize = 64;
/// Cores of the first package sampled on larger machines.
pub const CORES_SAMPLED: usize = 8;
/// Other packages sampled on larger machines.
pub const PACKAGES_SAMPLED: usize = 16;

/// The CPUs to measure, in topology order, and a sentence when they are a subset.
pub fn cpus(topo: &Topology) -> (Vec<u32>, Option<String>) {
    let allowed: Vec<_> = topo.allowed_pus().collect();
    if allowed.len() <= FULL_MATRIX_MAX {
        return (allowed.iter().map(|p| p.os_index).collect(), None);
    }
    let first = allowed[0];
    let mut out: Vec<u32> = Vec::new();
    let push = |c: u32, out: &mut Vec<u32>| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    // SMT siblings of the first core.
    for p in allowed
        .iter()
        .filter(|p| p.package == first.package && p.core == first.core)
    {
        push(p.os_index, &mut out);
    }
    // First hardware thread of cores of the first package, spread evenly.
    let mut cores: Vec<(u32, u32)> = Vec::new();
    for p in allowed.iter().filter(|p| p.package == first.package) {
        if !cores.iter().any(|&(c, _)| c == p.core) {
            cores.push((p.core, p.os_index));
        }
    }
    let stride = cores.len().div_ceil(CORES_SAMPLED).max(1);
    for &(_, cpu) in cores.iter().step_by(stride) {
        push(cpu, &mut out);
    }
    // First hardware thread of other packages.
    let mut packages: Vec<(u32, u32)> = Vec::new();
    for p in allowed.iter().filter(|p| p.package != first.package) {
        if !packages.iter().any(|&(k, _)| k == p.package) {
            packages.push((p.package, p.os_index));
        }
    }
    for &(_, cpu) in packages.iter().take(PACKAGES_SAMPLED) {
        push(cpu, &mut out);
    }
    let n = out.len();
    (
        out,
        Some(format!(
            "{} CPUs allowed: measured a representative subset of {n} CPUs ({} pairs): the SMT siblings of the first core, {} cores of the first package, the first CPU of {} other packages",
            allowed.len(),
            n * (n - 1) / 2,
            cores.len().div_ceil(stride),
            packages.len().min(PACKAGES_SAMPLED)
        )),
    )
}

/// How two CPUs relate in the topology, in words.
pub fn relation(topo: &Topology, a: u32, b: u32) -> &'static str {
    match (topo.pu(a), topo.pu(b)) {
        (Some(x), Some(y)) if x.package == y.package && x.core == y.core => "SMT siblings",
        (Some(x), Some(y)) if x.package == y.package => "same package",
        (Some(_), Some(_)) => "other package",
        _ => "unknown",
    }
}

/// Group pair values into classes: sorted, a new class starts where a value exceeds
/// the class's first by more than `tolerance` (0.25 = 25 %). Returns (class median,
/// pairs) per class.
pub fn classes(mut pairs: Vec<((u32, u32), f64)>, tolerance: f64) -> Vec<(f64, Vec<(u32, u32)>)> {
    pairs.retain(|p| p.1.is_finite());
    pairs.sort_by(|a, b| a.1.total_cmp(&b.1));
    // (first value, pairs, values) per class.
    type Class = (f64, Vec<(u32, u32)>, Vec<f64>);
    let mut out: Vec<Class> = Vec::new();
    for (p, v) in pairs {
        match out.last_mut() {
            Some((first, ps, vs)) if v <= *first * (1.0 + tolerance) => {
                ps.push(p);
                vs.push(v);
            }
            _ => out.push((v, vec![p], vec![v])),
        }
    }
    out.into_iter()
        .map(|(_, ps, vs)| (crate::stats::median(&vs), ps))
        .collect()
}

/// "0-1, 0-2, 1-3 and 5 more".
pub fn pair_list(ps: &[(u32, u32)], max: usize) -> String {
    let mut s: Vec<String> = ps
        .iter()
        .take(max)
        .map(|(a, b)| format!("{a}-{b}"))
        .collect();
    if ps.len() > max {
        s.push(format!("and {} more", ps.len() - max));
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_machines_are_measured_completely() {
        let t = crate::topology::from_synthetic("pack:2 core:4 pu:2").unwrap();
        let (c, note) = cpus(&t);
        assert_eq!(c.len(), 16);
        assert!(note.is_none());
    }

    #[test]
    fn large_machines_get_a_bounded_representative_subset() {
        for spec in [
            "pack:4 core:16 group:2 pu:4",
            "pack:2 core:64 pu:2",
            "pack:16 core:32 pu:4",
        ] {
            let t = crate::topology::from_synthetic(spec).unwrap();
            let (c, note) = cpus(&t);
            assert!(note.unwrap().contains("representative subset"));
            assert!(
                c.len() <= 4 + CORES_SAMPLED + PACKAGES_SAMPLED + 1,
                "{spec}: {}",
                c.len()
            );
            let mut d = c.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), c.len(), "no CPU twice");
            // Every relation is represented: siblings, same package, other package.
            let rels: Vec<&str> = c
                .iter()
                .flat_map(|&a| c.iter().map(move |&b| (a, b)))
                .filter(|(a, b)| a < b)
                .map(|(a, b)| relation(&t, a, b))
                .collect();
            for r in ["SMT siblings", "same package", "other package"] {
                assert!(rels.contains(&r), "{spec}: {r}");
            }
        }
    }

    #[test]
    fn real_machines_from_xml_stay_bounded() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            if e.path().extension().is_none_or(|x| x != "xml") {
                continue;
            }
            let t = crate::topology::from_xml_file(&e.path()).unwrap();
            let (c, _) = cpus(&t);
            assert!(
                c.len() <= FULL_MATRIX_MAX,
                "{}: {}",
                e.path().display(),
                c.len()
            );
            assert!(c.iter().all(|&x| t.pu(x).is_some_and(|p| p.allowed)));
        }
    }

    #[test]
    fn classes_group_close_values() {
        let p = vec![
            ((0, 1), 8.0),
            ((0, 2), 25.0),
            ((1, 2), 26.0),
            ((0, 3), 110.0),
            ((2, 3), 9.0),
        ];
        let c = classes(p, 0.25);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].1.len(), 2);
        assert_eq!(c[1].1, vec![(0, 2), (1, 2)]);
        assert_eq!(c[2].0, 110.0);
        assert_eq!(
            pair_list(&[(0, 1), (0, 2), (1, 2)], 2),
            "0-1, 0-2, and 1 more"
        );
    }
}
