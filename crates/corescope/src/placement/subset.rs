//! Which CPUs a pairwise probe (`c2c`, `sharing`) measures. Up to [`FULL_MATRIX_MAX`]
//! allowed CPUs: all of them. Beyond, a representative subset, so the number of pairs
//! stays bounded on machines with 2048 hardware threads, that still holds a pair of
//! every [`Level`] the machine has (same core, same cache, same NUMA node, other NUMA
//! node of the package, other package): the first CPU and its SMT siblings; for every
//! level, a partner of the first CPU at that level (or, where the first CPU has none,
//! a pair elsewhere); the first hardware thread of up to [`CORES_SAMPLED`] cores of the
//! first package spread evenly; and the first hardware thread of up to
//! [`PACKAGES_SAMPLED`] other packages.

use crate::model::SubsetChoice;
use crate::topology::Topology;
use std::collections::{HashMap, HashSet};

/// Largest CPU count measured completely (64 CPUs = 2016 pairs).
pub const FULL_MATRIX_MAX: usize = 64;
/// Cores of the first package sampled on larger machines.
pub const CORES_SAMPLED: usize = 8;
/// Other packages sampled on larger machines.
pub const PACKAGES_SAMPLED: usize = 16;

/// How near two CPUs are, nearest first: the levels of a pair matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Two hardware threads of one core.
    SameCore,
    /// Two cores sharing a cache (an L2 cluster, an L3).
    SameCache,
    /// Same NUMA node (and package), no shared cache.
    SameNode,
    /// Same package, other NUMA node.
    OtherNode,
    /// Other package.
    OtherPackage,
}

impl Level {
    /// Every level, nearest first.
    pub const ALL: [Level; 5] = [
        Level::SameCore,
        Level::SameCache,
        Level::SameNode,
        Level::OtherNode,
        Level::OtherPackage,
    ];

    /// In words (`relation` and the c2c findings).
    pub fn name(self) -> &'static str {
        match self {
            Level::SameCore => "SMT siblings",
            Level::SameCache => "same cache",
            Level::SameNode => "same NUMA node",
            Level::OtherNode => "other NUMA node",
            Level::OtherPackage => "other package",
        }
    }
}

/// What decides a PU's level relation to another, precomputed.
struct Key {
    os: u32,
    package: u32,
    core: u32,
    node: Option<u32>,
    /// Indices into `topo.caches` of the caches shared by more than one core.
    caches: Vec<usize>,
}

fn keys(topo: &Topology) -> Vec<Key> {
    let core_of: HashMap<u32, u32> = topo.pus.iter().map(|p| (p.os_index, p.core)).collect();
    // A cache counts as shared when its PUs span more than one core.
    let shared: Vec<usize> = topo
        .caches
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let mut cores: Vec<u32> = c
                .pus
                .iter()
                .filter_map(|p| core_of.get(p).copied())
                .collect();
            cores.sort_unstable();
            cores.dedup();
            cores.len() > 1
        })
        .map(|(i, _)| i)
        .collect();
    // Each PU's shared caches, in the order of `topo.caches`: one pass over the
    // caches' PU lists, not a search of every list for every PU.
    let mut caches_of: HashMap<u32, Vec<usize>> = HashMap::new();
    for &i in &shared {
        for &pu in &topo.caches[i].pus {
            let list = caches_of.entry(pu).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    topo.allowed_pus()
        .map(|p| Key {
            os: p.os_index,
            package: p.package,
            core: p.core,
            node: p.numa_node,
            caches: caches_of.remove(&p.os_index).unwrap_or_default(),
        })
        .collect()
}

fn level_of(x: &Key, y: &Key) -> Level {
    if same_core(x, y) {
        Level::SameCore
    } else {
        level_apart(x, y)
    }
}

fn same_core(x: &Key, y: &Key) -> bool {
    x.package == y.package && x.core == y.core
}

/// The level of two CPUs of different cores: it depends only on their packages,
/// NUMA nodes and shared caches (their [`Partners`] classes).
fn level_apart(x: &Key, y: &Key) -> Level {
    if x.caches.iter().any(|c| y.caches.contains(c)) {
        Level::SameCache
    } else if x.package != y.package {
        Level::OtherPackage
    } else if x.node != y.node {
        Level::OtherNode
    } else {
        Level::SameNode
    }
}

/// The first partner of a CPU at a level (in topology order), found without
/// comparing it with every CPU: CPUs of one class (package, NUMA node, shared
/// caches) stand at the same level to every CPU outside their own core, so a
/// CPU's partners at a level other than [`Level::SameCore`] are the first members,
/// outside its core, of the classes at that level from its own class.
struct Partners<'k> {
    ks: &'k [Key],
    /// Per CPU (index into `ks`): its class.
    class_of: Vec<usize>,
    /// Per class: its CPUs in topology order (the first one speaks for the class).
    members: Vec<Vec<usize>>,
    /// Per (package, core): its CPUs in topology order.
    cores: HashMap<(u32, u32), Vec<usize>>,
    /// (class, level) → the classes at that level from it, computed when first asked.
    at_level: HashMap<(usize, Level), Vec<usize>>,
}

impl<'k> Partners<'k> {
    fn new(ks: &'k [Key]) -> Self {
        let mut ids: HashMap<(u32, Option<u32>, &[usize]), usize> = HashMap::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut cores: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        let mut class_of = Vec::with_capacity(ks.len());
        for (i, k) in ks.iter().enumerate() {
            let next = ids.len();
            let class = *ids
                .entry((k.package, k.node, k.caches.as_slice()))
                .or_insert(next);
            if class == members.len() {
                members.push(Vec::new());
            }
            members[class].push(i);
            class_of.push(class);
            cores.entry((k.package, k.core)).or_default().push(i);
        }
        Self {
            ks,
            class_of,
            members,
            cores,
            at_level: HashMap::new(),
        }
    }

    /// The first CPU (index into `ks`) at `level` from CPU `a`, as a scan of every
    /// CPU in topology order would find it.
    fn partner(&mut self, a: usize, level: Level) -> Option<usize> {
        let ks = self.ks;
        let x = &ks[a];
        if level == Level::SameCore {
            return self
                .cores
                .get(&(x.package, x.core))
                .and_then(|m| m.iter().copied().find(|&y| ks[y].os != x.os));
        }
        let class = self.class_of[a];
        let members = &self.members;
        let classes = self.at_level.entry((class, level)).or_insert_with(|| {
            let rep = &ks[members[class][0]];
            (0..members.len())
                .filter(|&c| level_apart(rep, &ks[members[c][0]]) == level)
                .collect()
        });
        classes
            .iter()
            .filter_map(|&c| members[c].iter().copied().find(|&y| !same_core(x, &ks[y])))
            .min()
    }
}

/// The level of two CPUs (`None` when either is not an allowed CPU of `topo`).
pub fn level(topo: &Topology, a: u32, b: u32) -> Option<Level> {
    let ks = keys(topo);
    let x = ks.iter().find(|k| k.os == a)?;
    let y = ks.iter().find(|k| k.os == b)?;
    Some(level_of(x, y))
}

/// The CPUs to measure, in topology order, and how they were chosen when they are
/// a subset.
pub fn cpus(topo: &Topology) -> (Vec<u32>, Option<SubsetChoice>) {
    cpus_up_to(topo, FULL_MATRIX_MAX)
}

/// As [`cpus`], with every allowed CPU up to `full_max` CPUs (a probe whose pairs
/// cost more measures the full matrix on fewer).
pub fn cpus_up_to(topo: &Topology, full_max: usize) -> (Vec<u32>, Option<SubsetChoice>) {
    let allowed: Vec<_> = topo.allowed_pus().collect();
    if allowed.len() <= full_max {
        return (allowed.iter().map(|p| p.os_index).collect(), None);
    }
    let (out, note) = representative(topo);
    (out, Some(note))
}

/// The representative subset of any machine (what [`cpus`] measures beyond
/// [`FULL_MATRIX_MAX`] CPUs) and how it was chosen.
fn representative(topo: &Topology) -> (Vec<u32>, SubsetChoice) {
    let allowed: Vec<_> = topo.allowed_pus().collect();
    let ks = keys(topo);
    let Some(first) = allowed.first().copied() else {
        let none = SubsetChoice {
            allowed: 0,
            cpus: 0,
            pairs: 0,
            levels: Vec::new(),
            cores: 0,
            packages: 0,
            by_level: None,
        };
        return (Vec::new(), none);
    };
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
    // A partner at every level: of the first CPU where it has one, else of the
    // first CPU of every NUMA node and package in turn (a cpuset can leave the
    // first CPU without a sibling while other cores keep theirs).
    let mut anchors: Vec<usize> = vec![0];
    let mut seen: HashSet<(Option<u32>, u32)> = HashSet::new();
    for (i, k) in ks.iter().enumerate() {
        if seen.insert((k.node, k.package)) {
            anchors.push(i);
        }
    }
    let mut levels = Vec::new();
    let mut partners = Partners::new(&ks);
    let mut partner =
        |a: usize, level: Level| partners.partner(a, level).map(|y| (ks[a].os, ks[y].os));
    for level in Level::ALL {
        // Any CPU at all when no anchor has a partner at this level (offline
        // siblings can leave only cores further in with two threads).
        let found = anchors
            .iter()
            .find_map(|&a| partner(a, level))
            .or_else(|| (0..ks.len()).find_map(|a| partner(a, level)));
        if let Some((a, b)) = found {
            push(a, &mut out);
            push(b, &mut out);
            levels.push(level.name().to_string());
        }
    }
    // First hardware thread of cores of the first package, spread evenly.
    let mut cores: Vec<(u32, u32)> = Vec::new();
    let mut seen: HashSet<u32> = HashSet::new();
    for p in allowed.iter().filter(|p| p.package == first.package) {
        if seen.insert(p.core) {
            cores.push((p.core, p.os_index));
        }
    }
    let stride = cores.len().div_ceil(CORES_SAMPLED).max(1);
    for &(_, cpu) in cores.iter().step_by(stride) {
        push(cpu, &mut out);
    }
    // First hardware thread of other packages.
    let mut packages: Vec<(u32, u32)> = Vec::new();
    let mut seen: HashSet<u32> = HashSet::new();
    for p in allowed.iter().filter(|p| p.package != first.package) {
        if seen.insert(p.package) {
            packages.push((p.package, p.os_index));
        }
    }
    for &(_, cpu) in packages.iter().take(PACKAGES_SAMPLED) {
        push(cpu, &mut out);
    }
    // Topology order, as the full matrix.
    let position: HashMap<u32, usize> = allowed
        .iter()
        .enumerate()
        .map(|(i, p)| (p.os_index, i))
        .collect();
    out.sort_by_key(|c| position.get(c).copied());
    let n = out.len();
    let choice = SubsetChoice {
        allowed: allowed.len(),
        cpus: n,
        pairs: n * n.saturating_sub(1) / 2,
        levels,
        cores: cores.len().div_ceil(stride),
        packages: packages.len().min(PACKAGES_SAMPLED),
        by_level: None,
    };
    (out, choice)
}

/// Up to `per_level` pairs of `cpus` at each [`Level`], spread evenly over that
/// level's pairs (in topology order), nearest level first: a probe whose pairs are
/// costly measures these rather than every pair of a representative subset.
pub fn pairs_by_level(topo: &Topology, cpus: &[u32], per_level: usize) -> Vec<(u32, u32)> {
    let ks = keys(topo);
    let index: HashMap<u32, usize> = ks.iter().enumerate().map(|(i, k)| (k.os, i)).collect();
    let key = |c: u32| index.get(&c).map(|&i| &ks[i]);
    let mut by_level: Vec<Vec<(u32, u32)>> = vec![Vec::new(); Level::ALL.len()];
    for (i, &a) in cpus.iter().enumerate() {
        for &b in &cpus[i + 1..] {
            if let (Some(x), Some(y)) = (key(a), key(b)) {
                let l = level_of(x, y);
                if let Some(slot) = Level::ALL.iter().position(|&m| m == l) {
                    by_level[slot].push((a, b));
                }
            }
        }
    }
    let mut out = Vec::new();
    for pairs in by_level {
        let n = pairs.len();
        let take = n.min(per_level);
        // Evenly spread: the k-th of `take` picks index k·n/take.
        out.extend((0..take).map(|k| pairs[k * n / take]));
    }
    out
}

/// How two CPUs relate in the topology, in words ([`Level::name`]).
pub fn relation(topo: &Topology, a: u32, b: u32) -> &'static str {
    level(topo, a, b).map_or("unknown", Level::name)
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
    fn pairs_by_level_keep_every_level_and_at_most_k_of_each() {
        for spec in ["pack:4 core:16 group:2 pu:4", "pack:8 numa:2 core:32 pu:4"] {
            let t = crate::topology::from_synthetic(spec).unwrap();
            let (c, _) = cpus(&t);
            let all: Vec<(u32, u32)> = c
                .iter()
                .enumerate()
                .flat_map(|(i, &a)| c[i + 1..].iter().map(move |&b| (a, b)))
                .collect();
            let lv = |&(a, b): &(u32, u32)| level(&t, a, b).unwrap();
            let mut present: Vec<Level> = all.iter().map(lv).collect();
            present.sort_unstable();
            present.dedup();
            let picked = pairs_by_level(&t, &c, 3);
            let mut got: Vec<Level> = picked.iter().map(lv).collect();
            got.sort_unstable();
            let mut distinct = got.clone();
            distinct.dedup();
            assert_eq!(distinct, present, "{spec}: every level of the subset kept");
            for l in present {
                let n = got.iter().filter(|&&g| g == l).count();
                let avail = all.iter().filter(|p| lv(p) == l).count();
                assert_eq!(n, avail.min(3), "{spec}: {l:?}");
            }
            let mut dedup = picked.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(dedup.len(), picked.len(), "{spec}: no pair twice");
        }
    }

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
            let note = note.expect("a subset");
            assert_eq!(
                (note.cpus, note.pairs),
                (c.len(), c.len() * (c.len() - 1) / 2)
            );
            assert!(
                c.len() <= 4 + 2 * Level::ALL.len() + CORES_SAMPLED + PACKAGES_SAMPLED,
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
            for r in ["SMT siblings", "other package"] {
                assert!(rels.contains(&r), "{spec}: {r}");
            }
        }
    }

    /// Levels of every pair of allowed CPUs, and of every pair of `cpus`.
    fn levels_of(t: &Topology, cpus: Option<&[u32]>) -> std::collections::BTreeSet<Level> {
        let ks: Vec<Key> = keys(t)
            .into_iter()
            .filter(|k| cpus.is_none_or(|c| c.contains(&k.os)))
            .collect();
        let mut out = std::collections::BTreeSet::new();
        for (i, x) in ks.iter().enumerate() {
            for y in &ks[i + 1..] {
                out.insert(level_of(x, y));
            }
        }
        out
    }

    fn topologies() -> Vec<(String, Topology)> {
        let mut v: Vec<(String, Topology)> = [
            "pack:4 core:16 group:2 pu:4",
            "pack:2 core:64 pu:2",
            "pack:2 numa:2 l3:4 core:8 pu:2",
            "pack:2 numa:4 l3:2 l2:4 core:2 pu:2",
            "group:4 numa:2 pack:2 core:4 pu:2",
            "numa:8 pack:8 core:1 pu:4",
            "pack:16 l3:2 core:16 pu:4",
        ]
        .iter()
        .map(|s| (s.to_string(), crate::topology::from_synthetic(s).unwrap()))
        .collect();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies");
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "xml") {
                let t = crate::topology::from_xml_file(&e.path()).unwrap();
                v.push((e.path().display().to_string(), t));
            }
        }
        v
    }

    #[test]
    fn partners_are_the_ones_a_scan_of_every_cpu_finds() {
        for (name, t) in topologies() {
            // Also with every third PU disallowed: cores lose siblings.
            let mut masked = t.clone();
            for (k, p) in masked.pus.iter_mut().enumerate() {
                p.allowed = p.allowed && (k == 0 || k % 3 != 1);
            }
            for t in [t, masked] {
                let ks = keys(&t);
                let mut partners = Partners::new(&ks);
                for a in 0..ks.len() {
                    for level in Level::ALL {
                        let scan = ks
                            .iter()
                            .position(|y| y.os != ks[a].os && level_of(&ks[a], y) == level);
                        assert_eq!(partners.partner(a, level), scan, "{name}: {a} {level:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_representative_subset_holds_a_pair_of_every_level_the_machine_has() {
        for (name, t) in topologies() {
            let (c, note) = representative(&t);
            let want = levels_of(&t, None);
            let got = levels_of(&t, Some(&c));
            assert_eq!(got, want, "{name}: subset {c:?}");
            assert!(c.len() <= 2 + 2 * Level::ALL.len() + CORES_SAMPLED + PACKAGES_SAMPLED + 4);
            assert!(
                c.iter().all(|&x| t.pu(x).is_some_and(|p| p.allowed)),
                "{name}"
            );
            let mut d = c.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), c.len(), "{name}: no CPU twice");
            for l in &want {
                assert!(
                    note.levels.iter().any(|n| n == l.name()),
                    "{name}: {note:?}"
                );
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
