//! A topology as an hwloc 2.x XML export (what `lstopo --input FILE` and
//! `hwloc-info --input FILE` load), with a run's measured latencies and
//! bandwidths as hwloc distances (`<distances2>`, user-given, meaning latency or
//! bandwidth). Written with quick-xml (escaping, nesting); the object tree is
//! rebuilt from the plain topology by cpuset inclusion: packages, dies and
//! groups of the tree levels, caches, cores and PUs, with each NUMA node attached
//! to the object whose CPUs are exactly its own (a Group where none is).

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::measured_topology::{DistanceMeaning, DistanceObjects, MeasuredDistances};
use crate::topology::Topology;

/// hwloc's distance kinds (`hwloc/distances.h`): given by the user, meaning a
/// latency or a bandwidth.
const KIND_FROM_USER: u64 = 1 << 1;
const KIND_MEANS_LATENCY: u64 = 1 << 2;
const KIND_MEANS_BANDWIDTH: u64 = 1 << 3;
/// Values per `<indexes>`/`<u64values>` element, as hwloc writes them.
const VALUES_PER_LINE: usize = 10;

/// One object of the tree being rebuilt.
#[derive(Debug, Clone)]
struct Obj {
    /// hwloc type name: `Package`, `L2Cache`, `PU`, ...
    kind: &'static str,
    /// Order among objects of equal cpusets, outermost first.
    rank: u8,
    os_index: Option<u32>,
    cpus: BTreeSet<u32>,
    /// Extra attributes (cache size, depth, ...).
    attrs: Vec<(&'static str, String)>,
    children: Vec<usize>,
    /// NUMA nodes attached here (their OS indices).
    memory: Vec<u32>,
}

impl Obj {
    fn new(kind: &'static str, rank: u8, os_index: Option<u32>, cpus: BTreeSet<u32>) -> Self {
        Self {
            kind,
            rank,
            os_index,
            cpus,
            attrs: Vec::new(),
            children: Vec::new(),
            memory: Vec::new(),
        }
    }
}

/// The rebuilt tree: `objs[0]` is the Machine.
struct Tree {
    objs: Vec<Obj>,
    /// NUMA node → its CPUs.
    nodes: BTreeMap<u32, BTreeSet<u32>>,
    /// Objects left out because their CPUs cross another object's.
    dropped: usize,
}

/// The hwloc XML of `t`, with `distances` as `<distances2>` elements.
///
/// hwloc needs at least one NUMA node: where the topology knows none, one node 0
/// holding every PU is written. Nodes without CPUs are not in a topology's PUs
/// and are left out (their matrices' rows with them, by hwloc when it loads).
pub fn hwloc_xml(t: &Topology, distances: &[MeasuredDistances]) -> io::Result<String> {
    let tree = build_tree(t);
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::DocType(BytesText::from_escaped(
        "topology SYSTEM \"hwloc2.dtd\"",
    )))?;
    w.create_element("topology")
        .with_attribute(("version", "2.0"))
        .write_inner_content(|w| {
            write_object(w, t, &tree, 0, &mut 1)?;
            for d in distances {
                write_distances(w, d)?;
            }
            write_cpukinds(w, t)
        })?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Every object the plain topology describes, NUMA nodes' CPU sets, and the tree.
fn build_tree(t: &Topology) -> Tree {
    let mut by_core: BTreeMap<u32, (Option<u32>, BTreeSet<u32>)> = BTreeMap::new();
    let mut by_package: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut nodes: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut by_prefix: BTreeMap<(usize, Vec<u32>), BTreeSet<u32>> = BTreeMap::new();
    let mut objs = Vec::new();
    for p in &t.pus {
        objs.push(Obj::new("PU", 10, Some(p.os_index), [p.os_index].into()));
        let core = by_core
            .entry(p.core)
            .or_insert((p.core_os_index, BTreeSet::new()));
        core.1.insert(p.os_index);
        by_package.entry(p.package).or_default().insert(p.os_index);
        if let Some(n) = p.numa_node {
            nodes.entry(n).or_default().insert(p.os_index);
        }
        for (k, level) in t.levels.iter().enumerate() {
            if matches!(level.name.as_str(), "die" | "group") && k < p.path.len() {
                let key = (k, p.path[..=k].to_vec());
                by_prefix.entry(key).or_default().insert(p.os_index);
            }
        }
    }
    let all: BTreeSet<u32> = t.pus.iter().map(|p| p.os_index).collect();
    if nodes.is_empty() {
        nodes.insert(0, all.clone());
    }
    for (_, (os, cpus)) in by_core {
        objs.push(Obj::new("Core", 9, os, cpus));
    }
    let package_os = !t.logical_levels.iter().any(|l| l == "package");
    for (id, cpus) in by_package {
        objs.push(Obj::new("Package", 0, package_os.then_some(id), cpus));
    }
    for ((k, _), cpus) in by_prefix {
        let (kind, rank) = if t.levels[k].name == "die" {
            ("Die", 1)
        } else {
            ("Group", 2)
        };
        objs.push(Obj::new(kind, rank, None, cpus));
    }
    objs.extend(t.caches.iter().filter_map(cache_obj));
    for cpus in nodes.values() {
        if *cpus != all && !objs.iter().any(|o| o.cpus == *cpus) {
            objs.push(Obj::new("Group", 2, None, cpus.clone()));
        }
    }
    nest(objs, all, nodes)
}

/// A data or unified cache of level 1 to 5 as an object; others are left out.
fn cache_obj(c: &crate::topology::Cache) -> Option<Obj> {
    let (kind, rank) = match c.level {
        1 => ("L1Cache", 8),
        2 => ("L2Cache", 7),
        3 => ("L3Cache", 6),
        4 => ("L4Cache", 5),
        5 => ("L5Cache", 4),
        _ => return None,
    };
    let cache_type = match c.kind.as_str() {
        "unified" => "0",
        "data" => "1",
        _ => return None,
    };
    let mut o = Obj::new(kind, rank, None, c.pus.iter().copied().collect());
    o.attrs = vec![
        ("cache_size", c.size_bytes.to_string()),
        ("depth", c.level.to_string()),
        ("cache_linesize", c.line_bytes.to_string()),
        ("cache_associativity", c.associativity.to_string()),
        ("cache_type", cache_type.into()),
    ];
    Some(o)
}

/// Nest the objects by cpuset inclusion under a Machine of `all` PUs (largest
/// first; on equal sets the outer type first), attach the NUMA nodes, and order
/// every object's children by their first CPU.
fn nest(mut objs: Vec<Obj>, all: BTreeSet<u32>, nodes: BTreeMap<u32, BTreeSet<u32>>) -> Tree {
    objs.sort_by(|a, b| b.cpus.len().cmp(&a.cpus.len()).then(a.rank.cmp(&b.rank)));
    let mut tree = Tree {
        objs: vec![Obj::new("Machine", 0, Some(0), all)],
        nodes,
        dropped: 0,
    };
    for o in objs {
        if o.cpus.is_empty() {
            continue;
        }
        let parent = deepest_holding(&tree.objs, &o.cpus);
        let crosses = tree.objs[parent].children.iter().any(|&c| {
            let c = &tree.objs[c].cpus;
            !c.is_disjoint(&o.cpus) && !c.is_superset(&o.cpus)
        });
        // A duplicate (same type, same CPUs) or a set crossing a sibling's.
        if crosses || (tree.objs[parent].cpus == o.cpus && tree.objs[parent].kind == o.kind) {
            tree.dropped += 1;
            continue;
        }
        tree.objs.push(o);
        let id = tree.objs.len() - 1;
        tree.objs[parent].children.push(id);
    }
    let attach: Vec<(usize, u32)> = tree
        .nodes
        .iter()
        .map(|(&n, cpus)| (deepest_equal(&tree.objs, cpus), n))
        .collect();
    for (at, n) in attach {
        tree.objs[at].memory.push(n);
    }
    // hwloc loads children in the order of their cpusets' first CPU only (it
    // refuses others as "out-of-order"). That is the topology's own order except
    // where offline CPUs, whose places are unknown, made hwloc order otherwise.
    let keys: Vec<Option<u32>> = tree.objs.iter().map(|o| o.cpus.first().copied()).collect();
    for o in &mut tree.objs {
        o.children.sort_by_key(|&c| keys[c]);
    }
    tree
}

/// The deepest object whose CPUs include `cpus` (the Machine at least).
fn deepest_holding(objs: &[Obj], cpus: &BTreeSet<u32>) -> usize {
    let mut at = 0;
    while let Some(&c) = objs[at]
        .children
        .iter()
        .find(|&&c| objs[c].cpus.is_superset(cpus))
    {
        at = c;
    }
    at
}

/// The outermost object whose CPUs are exactly `cpus`, else the deepest holding them.
fn deepest_equal(objs: &[Obj], cpus: &BTreeSet<u32>) -> usize {
    let mut at = 0;
    while objs[at].cpus != *cpus {
        match objs[at]
            .children
            .iter()
            .find(|&&c| objs[c].cpus.is_superset(cpus))
        {
            Some(&c) => at = c,
            None => break,
        }
    }
    at
}

/// hwloc's bitmap syntax: 32-bit words in hex, most significant first, comma-separated.
pub fn bitmap(set: &BTreeSet<u32>) -> String {
    let Some(&max) = set.iter().next_back() else {
        return "0x0".into();
    };
    let mut words = vec![0u32; max as usize / 32 + 1];
    for &i in set {
        words[i as usize / 32] |= 1 << (i % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("0x{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The NUMA nodes holding any of `cpus`.
fn nodeset(tree: &Tree, cpus: &BTreeSet<u32>) -> BTreeSet<u32> {
    tree.nodes
        .iter()
        .filter(|(_, c)| !c.is_disjoint(cpus))
        .map(|(&n, _)| n)
        .collect()
}

/// One object, its NUMA nodes and its children; `gp` numbers objects in order.
fn write_object(
    w: &mut Writer<Vec<u8>>,
    t: &Topology,
    tree: &Tree,
    id: usize,
    gp: &mut u64,
) -> io::Result<()> {
    let o = &tree.objs[id];
    let cpus = bitmap(&o.cpus);
    let nodes = bitmap(&nodeset(tree, &o.cpus));
    let mut attrs: Vec<(&str, String)> = vec![("type", o.kind.into())];
    if let Some(i) = o.os_index {
        attrs.push(("os_index", i.to_string()));
    }
    attrs.push(("cpuset", cpus.clone()));
    if id == 0 {
        let mut complete = o.cpus.clone();
        complete.extend(t.unavailable.iter().copied());
        let allowed: BTreeSet<u32> = t.allowed_pus().map(|p| p.os_index).collect();
        attrs.push(("complete_cpuset", bitmap(&complete)));
        attrs.push(("allowed_cpuset", bitmap(&allowed)));
        attrs.extend([
            ("nodeset", nodes.clone()),
            ("complete_nodeset", nodes.clone()),
        ]);
        attrs.push(("allowed_nodeset", nodes));
    } else {
        attrs.push(("complete_cpuset", cpus));
        attrs.extend([("nodeset", nodes.clone()), ("complete_nodeset", nodes)]);
    }
    attrs.push(("gp_index", gp.to_string()));
    *gp += 1;
    attrs.extend(o.attrs.iter().map(|(k, v)| (*k, v.clone())));
    let el = w
        .create_element("object")
        .with_attributes(attrs.iter().map(|(k, v)| (*k, v.as_str())));
    if o.children.is_empty() && o.memory.is_empty() {
        el.write_empty()?;
        return Ok(());
    }
    el.write_inner_content(|w| {
        for &n in &o.memory {
            write_numa(w, t, tree, n, gp)?;
        }
        for &c in &o.children {
            write_object(w, t, tree, c, gp)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// One NUMA node (a memory child); its memory only where it is the only node.
fn write_numa(
    w: &mut Writer<Vec<u8>>,
    t: &Topology,
    tree: &Tree,
    n: u32,
    gp: &mut u64,
) -> io::Result<()> {
    let cpus = tree
        .nodes
        .get(&n)
        .map(bitmap)
        .unwrap_or_else(|| "0x0".into());
    let nodes = bitmap(&[n].into());
    let mut attrs = vec![
        ("type", "NUMANode".to_string()),
        ("os_index", n.to_string()),
        ("cpuset", cpus.clone()),
        ("complete_cpuset", cpus),
        ("nodeset", nodes.clone()),
        ("complete_nodeset", nodes),
        ("gp_index", gp.to_string()),
    ];
    *gp += 1;
    if let (Some(bytes), 1) = (t.memory_bytes, tree.nodes.len()) {
        attrs.push(("local_memory", bytes.to_string()));
    }
    w.create_element("object")
        .with_attributes(attrs.iter().map(|(k, v)| (*k, v.as_str())))
        .write_empty()?;
    Ok(())
}

/// `<tag length="L">v v v </tag>` elements of at most 10 values, as hwloc writes
/// them (`length` is the content's length in bytes, which hwloc checks).
fn write_array(w: &mut Writer<Vec<u8>>, tag: &str, values: &[String]) -> io::Result<()> {
    for chunk in values.chunks(VALUES_PER_LINE) {
        let text: String = chunk.iter().map(|v| format!("{v} ")).collect();
        w.create_element(tag)
            .with_attribute(("length", text.len().to_string().as_str()))
            .write_text_content(BytesText::new(&text))?;
    }
    Ok(())
}

/// One measured matrix as `<distances2>`, indexed by OS index.
fn write_distances(w: &mut Writer<Vec<u8>>, d: &MeasuredDistances) -> io::Result<()> {
    let kind = KIND_FROM_USER
        | match d.meaning {
            DistanceMeaning::Latency => KIND_MEANS_LATENCY,
            DistanceMeaning::Bandwidth => KIND_MEANS_BANDWIDTH,
        };
    let ty = match d.objects {
        DistanceObjects::Pu => "PU",
        DistanceObjects::NumaNode => "NUMANode",
    };
    let indexes: Vec<String> = d.indexes.iter().map(u32::to_string).collect();
    let values: Vec<String> = d.values.iter().map(u64::to_string).collect();
    w.create_element("distances2")
        .with_attribute(("type", ty))
        .with_attribute(("nbobjs", d.indexes.len().to_string().as_str()))
        .with_attribute(("kind", kind.to_string().as_str()))
        .with_attribute(("name", d.name.as_str()))
        .with_attribute(("indexing", "os"))
        .write_inner_content(|w| {
            write_array(w, "indexes", &indexes)?;
            write_array(w, "u64values", &values)
        })?;
    Ok(())
}

/// hwloc's CPU kinds, with their efficiency where known and their infos.
fn write_cpukinds(w: &mut Writer<Vec<u8>>, t: &Topology) -> io::Result<()> {
    for k in &t.cpu_kinds {
        let cpus = bitmap(&k.cpus.iter().copied().collect());
        let mut el = w
            .create_element("cpukind")
            .with_attribute(("cpuset", cpus.as_str()));
        let efficiency = k.efficiency.map(|e| e.to_string());
        if let Some(e) = &efficiency {
            el = el.with_attribute(("forced_efficiency", e.as_str()));
        }
        if k.infos.is_empty() {
            el.write_empty()?;
            continue;
        }
        el.write_inner_content(|w| {
            for (name, value) in &k.infos {
                w.create_element("info")
                    .with_attribute(("name", name.as_str()))
                    .with_attribute(("value", value.as_str()))
                    .write_empty()?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Objects the rebuilt tree left out of `t` (their CPUs cross another's); 0 for
/// every topology hwloc itself produced.
pub fn dropped_objects(t: &Topology) -> usize {
    build_tree(t).dropped
}
