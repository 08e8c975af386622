//! The greedy `scatter` order of [`super::scatter_order`] in O(n · levels² · log n)
//! instead of comparing every PU not yet taken at every step (n² · levels).
//!
//! The greedy rule takes, among the PUs not yet taken, the smallest by
//! (kind rank, NUMA node used, tree levels used outermost first, NUMA node count,
//! tree level counts outermost first, topology order). Two facts make it cheap:
//!
//! - The tree levels nest (an object at level k+1 lies inside one at level k), so a
//!   PU's "used" flags along the tree are some used levels, then unused ones: they
//!   compare as `d`, the number of used levels on the PU's path.
//! - The kind rank and the NUMA node are not tree levels, so PUs are split into
//!   classes of equal (rank, NUMA node): within a class those keys are equal and the
//!   rest of the key, (d, counts along the path, topology order), can be minimised
//!   in the tree. Per class, every tree object keeps its children ordered by the best
//!   key in their subtree; taking a PU changes only the counts on its own path, so
//!   only the objects on that path (one per class present there) are re-keyed.
//!
//! The result is the same order as the n² search (a test compares the two on every
//! topology file, synthetic specs, masks and hybrids).

use std::collections::{BTreeSet, HashMap};

/// A key in the order the greedy rule compares, as numbers: see [`Search::child_key`].
type Key = Vec<usize>;

/// One tree object as seen by one class: its children (objects one level down, or
/// PUs at the last spread level) ordered by their keys, and the key it has in its
/// parent's set now.
struct ClassNode {
    /// The class whose tree this node is part of.
    class: usize,
    /// Spread level (0: the class's root above the tree; 1..: [`Search::groups`]).
    level: usize,
    /// Dense id of the object at `level` (0 for the root).
    object: usize,
    /// The node one level up (`None` for the root).
    parent: Option<usize>,
    /// (key of the child, child node or PU index), smallest first.
    children: BTreeSet<(Key, usize)>,
    /// The key under which this node sits in its parent's `children` now.
    entry: Option<Key>,
}

/// The state of the greedy search: counts of taken PUs per object, and per class the
/// tree of its nodes.
struct Search<'a> {
    /// `groups[l][i]`: PU `i`'s object at spread level `l` (0: NUMA node; 1..: tree).
    groups: &'a [Vec<usize>],
    /// `counts[l][g]`: PUs taken so far in object `g` of spread level `l`.
    counts: Vec<Vec<usize>>,
    /// Every class's nodes.
    nodes: Vec<ClassNode>,
    /// `at[l][g]`: the nodes (one per class present) of object `g` of tree level `l`.
    at: Vec<Vec<Vec<usize>>>,
    /// Per PU: its node at the last spread level (the one holding the PU).
    holder: Vec<usize>,
    /// Per class: (kind rank, NUMA node id, root node).
    classes: Vec<(usize, usize, usize)>,
    /// Per NUMA node id: the classes of that node.
    classes_of_node: Vec<Vec<usize>>,
    /// Per class: the key under which it sits in `best` now.
    class_entry: Vec<Option<Key>>,
    /// (class key, class): the next PU is the last number of the first key.
    best: BTreeSet<(Key, usize)>,
    /// Nodes and classes re-keyed so far (each a removal and an insertion in a
    /// sorted set): the work the tests bound.
    rekeys: usize,
}

/// The allowed PUs `0..n` in greedy scatter order, as indices: `groups` as
/// `spread_groups` makes them (level 0 the NUMA node, then the tree levels without
/// the PU), `ranks` the CPU kind rank of each PU.
pub(super) fn greedy_order(groups: &[Vec<usize>], ranks: &[usize]) -> Vec<usize> {
    let n = ranks.len();
    let mut search = Search::new(groups, ranks);
    let mut out = Vec::with_capacity(n);
    while let Some(i) = search.next_pu() {
        search.take(i);
        out.push(i);
    }
    out
}

/// Dense ids of the values of `xs`, in order of first appearance.
fn dense_ids<K: std::hash::Hash + Eq>(xs: impl Iterator<Item = K>) -> Vec<usize> {
    let mut ids: HashMap<K, usize> = HashMap::new();
    xs.map(|x| {
        let next = ids.len();
        *ids.entry(x).or_insert(next)
    })
    .collect()
}

impl<'a> Search<'a> {
    fn new(groups: &'a [Vec<usize>], ranks: &[usize]) -> Self {
        let n = ranks.len();
        let tree_levels = groups.len().saturating_sub(1);
        let numa = groups.first().map(Vec::as_slice).unwrap_or(&[]);
        let class_of = dense_ids((0..n).map(|i| (ranks[i], numa.get(i).copied().unwrap_or(0))));
        let counts: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| vec![0; g.iter().max().map_or(0, |m| m + 1)])
            .collect();
        let mut s = Self {
            groups,
            at: counts.iter().map(|c| vec![Vec::new(); c.len()]).collect(),
            counts,
            nodes: Vec::new(),
            holder: Vec::with_capacity(n),
            classes: Vec::new(),
            classes_of_node: Vec::new(),
            class_entry: Vec::new(),
            best: BTreeSet::new(),
            rekeys: 0,
        };
        // The nodes of every class, created along each PU's path.
        let mut node_of: HashMap<(usize, usize, usize), usize> = HashMap::new();
        for (i, &class) in class_of.iter().enumerate() {
            let mut parent = None;
            // Level 0 is the class's root (one object); then the tree levels.
            let path = std::iter::once(0).chain(groups.iter().skip(1).map(|g| g[i]));
            for (level, object) in path.enumerate() {
                let id = *node_of.entry((class, level, object)).or_insert_with(|| {
                    s.nodes.push(ClassNode {
                        class,
                        level,
                        object,
                        parent,
                        children: BTreeSet::new(),
                        entry: None,
                    });
                    if level > 0 {
                        s.at[level][object].push(s.nodes.len() - 1);
                    }
                    s.nodes.len() - 1
                });
                parent = Some(id);
            }
            let holder = parent.unwrap_or_default();
            s.nodes[holder].children.insert((vec![0, i], i));
            s.holder.push(holder);
            if class == s.classes.len() {
                let node = numa.get(i).copied().unwrap_or(0);
                let root = node_of.get(&(class, 0, 0)).copied().unwrap_or_default();
                s.classes.push((ranks[i], node, root));
                if s.classes_of_node.len() <= node {
                    s.classes_of_node.resize(node + 1, Vec::new());
                }
                s.classes_of_node[node].push(class);
            }
        }
        // Key every node into its parent, deepest level first, then every class.
        for level in (1..=tree_levels).rev() {
            for id in 0..s.nodes.len() {
                if s.nodes[id].level == level {
                    s.rekey_node(id);
                }
            }
        }
        s.class_entry = vec![None; s.classes.len()];
        for class in 0..s.classes.len() {
            s.rekey_class(class);
        }
        s
    }

    /// The PU to take next, if any is left.
    fn next_pu(&self) -> Option<usize> {
        self.best.first().and_then(|(key, _)| key.last().copied())
    }

    /// Take PU `i`: count it in each of its objects, and re-key the nodes of those
    /// objects (every class present in them) and the classes they belong to.
    fn take(&mut self, i: usize) {
        let holder = self.holder[i];
        self.nodes[holder].children.remove(&(vec![0, i], i));
        for (level, g) in self.groups.iter().enumerate() {
            self.counts[level][g[i]] += 1;
        }
        let tree_levels = self.groups.len().saturating_sub(1);
        for level in (1..=tree_levels).rev() {
            let object = self.groups[level][i];
            for k in 0..self.at[level][object].len() {
                let id = self.at[level][object][k];
                self.rekey_node(id);
            }
        }
        let mut touched: Vec<usize> = match tree_levels {
            0 => vec![self.nodes[holder].class],
            _ => self.at[1][self.groups[1][i]]
                .iter()
                .map(|&id| self.nodes[id].class)
                .collect(),
        };
        if let Some(node) = self.groups.first().map(|g| g[i]) {
            touched.extend(self.classes_of_node.get(node).into_iter().flatten());
        }
        touched.sort_unstable();
        touched.dedup();
        for class in touched {
            self.rekey_class(class);
        }
    }

    /// Node `id`'s key as a child of its parent: with `c` the count of its object and
    /// (d, counts below, PU) its best child's key, `(c > 0 ? 1 + d : 0, c, counts
    /// below, PU)`; `None` when no PU of the class is left below it.
    fn child_key(&self, id: usize) -> Option<Key> {
        let node = &self.nodes[id];
        let (best, _) = node.children.first()?;
        let c = self.counts[node.level][node.object];
        let mut key = Vec::with_capacity(best.len() + 1);
        key.push(if c > 0 { 1 + best[0] } else { 0 });
        key.push(c);
        key.extend_from_slice(&best[1..]);
        Some(key)
    }

    /// Put node `id` into its parent's children under its current key.
    fn rekey_node(&mut self, id: usize) {
        self.rekeys += 1;
        let new = self.child_key(id);
        let Some(parent) = self.nodes[id].parent else {
            return;
        };
        if let Some(old) = self.nodes[id].entry.take() {
            self.nodes[parent].children.remove(&(old, id));
        }
        if let Some(k) = &new {
            self.nodes[parent].children.insert((k.clone(), id));
        }
        self.nodes[id].entry = new;
    }

    /// Put `class` into `best` under its current key: (rank, NUMA node used, d, NUMA
    /// node count, counts along the tree, PU) of its best PU.
    fn rekey_class(&mut self, class: usize) {
        self.rekeys += 1;
        let (rank, node, root) = self.classes[class];
        let numa_count = self.counts.first().map_or(0, |c| c[node]);
        let new = self.nodes[root].children.first().map(|(best, _)| {
            let mut key = Vec::with_capacity(best.len() + 3);
            key.push(rank);
            key.push(usize::from(numa_count > 0));
            key.push(best[0]);
            key.push(numa_count);
            key.extend_from_slice(&best[1..]);
            key
        });
        if let Some(old) = self.class_entry[class].take() {
            self.best.remove(&(old, class));
        }
        if let Some(k) = &new {
            self.best.insert((k.clone(), class));
        }
        self.class_entry[class] = new;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{from_synthetic, from_xml_file, Pu, Topology};
    use std::cmp::Ordering;

    /// The greedy rule as first written: at every step, compare every PU not yet
    /// taken (n² · levels). The reference the fast search must equal.
    fn reference_order(groups: &[Vec<usize>], ranks: &[usize]) -> Vec<usize> {
        let n = ranks.len();
        let mut counts: Vec<Vec<u32>> = groups
            .iter()
            .map(|g| vec![0; g.iter().max().map_or(0, |m| m + 1)])
            .collect();
        let mut taken = vec![false; n];
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut best: Option<usize> = None;
            for i in (0..n).filter(|&i| !taken[i]) {
                let better = best.is_none_or(|b| {
                    let used = |j: usize, l: usize| counts[l][groups[l][j]] > 0;
                    let count = |j: usize, l: usize| counts[l][groups[l][j]];
                    let levels = 0..groups.len();
                    ranks[i]
                        .cmp(&ranks[b])
                        .then_with(|| {
                            levels
                                .clone()
                                .map(|l| used(i, l).cmp(&used(b, l)))
                                .find(|o| o.is_ne())
                                .unwrap_or(Ordering::Equal)
                        })
                        .then_with(|| {
                            levels
                                .map(|l| count(i, l).cmp(&count(b, l)))
                                .find(|o| o.is_ne())
                                .unwrap_or(Ordering::Equal)
                        })
                        .is_lt()
                });
                if better {
                    best = Some(i);
                }
            }
            let Some(b) = best else { break };
            taken[b] = true;
            for (l, g) in groups.iter().enumerate() {
                counts[l][g[b]] += 1;
            }
            out.push(b);
        }
        out
    }

    fn both(t: &Topology) -> (Vec<usize>, Vec<usize>) {
        let pus: Vec<&Pu> = t.allowed_pus().collect();
        let groups = super::super::spread_groups(&pus, t.levels.len());
        let ranks: Vec<usize> = pus.iter().map(|p| t.kind_rank(p)).collect();
        (
            greedy_order(&groups, &ranks),
            reference_order(&groups, &ranks),
        )
    }

    /// Disallow the PUs whose bit of `mask` (cycled) is clear, keeping at least one.
    fn masked(t: &Topology, mask: u64) -> Topology {
        let mut m = t.clone();
        for (k, p) in m.pus.iter_mut().enumerate() {
            p.allowed = p.allowed && (k == 0 || mask >> (k % 64) & 1 == 1);
        }
        m
    }

    fn topologies() -> Vec<(String, Topology)> {
        let mut v: Vec<(String, Topology)> = [
            "pu:3",
            "core:5 pu:1",
            "pack:2 core:3 pu:2",
            "pack:4 core:16 group:2 pu:4",
            "pack:2 numa:2 l3:4 core:8 pu:2",
            "pack:2 numa:4 l3:2 l2:4 core:2 pu:2",
            "group:4 numa:2 pack:2 core:4 pu:2",
            "numa:8 pack:8 core:1 pu:4",
            "pack:3 numa:3 core:5 pu:3",
            "pack:8 numa:2 core:32 pu:4",
        ]
        .iter()
        .map(|s| (s.to_string(), from_synthetic(s).unwrap()))
        .collect();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "xml"))
            .collect();
        files.sort();
        for f in files {
            v.push((f.display().to_string(), from_xml_file(&f).unwrap()));
        }
        v
    }

    #[test]
    fn the_fast_search_gives_the_order_of_the_exhaustive_one() {
        let masks = [u64::MAX, 0x5555_5555_5555_5555, 0xF0F0_1234_8765_FFFF, 0x1];
        for (name, t) in topologies() {
            for mask in masks {
                let m = masked(&t, mask);
                let (fast, slow) = both(&m);
                assert_eq!(fast, slow, "{name}, mask {mask:#x}");
                assert_eq!(fast.len(), m.allowed_pus().count(), "{name}");
            }
        }
    }

    #[test]
    fn each_pu_taken_re_keys_one_node_per_level_and_its_class() {
        // The work per PU does not grow with the machine: taking a PU re-keys the
        // nodes on its path (one per tree level on a machine of one kind and one
        // NUMA node per package) and its class, whatever the number of PUs.
        for spec in [
            "pack:4 core:16 pu:8",
            "pack:4 core:64 pu:8",
            "pack:16 core:128 pu:8",
            "pack:4 numa:2 l3:2 core:8 pu:2",
        ] {
            let t = from_synthetic(spec).unwrap();
            let pus: Vec<&Pu> = t.allowed_pus().collect();
            let groups = super::super::spread_groups(&pus, t.levels.len());
            let ranks = vec![0; pus.len()];
            let mut search = Search::new(&groups, &ranks);
            let setup = search.rekeys;
            assert!(setup <= 2 * pus.len(), "{spec}: {setup} to set up");
            let mut taken = 0;
            while let Some(i) = search.next_pu() {
                search.take(i);
                taken += 1;
            }
            assert_eq!(taken, pus.len(), "{spec}");
            // The most classes one object holds (2 where a package holds 2 nodes).
            let shared = search.at.iter().flatten().map(Vec::len).max().unwrap_or(1);
            let tree_levels = groups.len() - 1;
            let work = search.rekeys - setup;
            assert!(
                work <= pus.len() * (tree_levels + 1) * shared,
                "{spec}: {work} re-keys while taking {} PUs",
                pus.len()
            );
            if shared == 1 {
                assert_eq!(work, pus.len() * (tree_levels + 1), "{spec}");
            }
        }
    }

    #[test]
    fn hybrid_kinds_split_the_classes_as_the_exhaustive_search_does() {
        // P cores and E cores spread over two NUMA nodes, kinds interleaved.
        let mut t = from_synthetic("pack:2 numa:2 core:6 pu:2").unwrap();
        t.cpu_kinds = vec![
            crate::topology::CpuKind {
                label: "P".into(),
                ..Default::default()
            },
            crate::topology::CpuKind {
                label: "E".into(),
                ..Default::default()
            },
        ];
        for p in &mut t.pus {
            p.kind = Some(if p.core % 3 == 0 { "E" } else { "P" }.into());
        }
        let (fast, slow) = both(&t);
        assert_eq!(fast, slow);
    }
}
