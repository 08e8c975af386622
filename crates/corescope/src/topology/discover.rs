//! Discovery through hwloc: the real machine, synthetic specs and XML exports.
//!
//! Everything hwloc-specific stays in this file: it loads an hwloc topology and
//! converts it into the plain-data [`Topology`] the rest of corescope reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use hwlocality::errors::{FlagsError, HybridError, RawHwlocError};
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::depth::NormalDepth;
use hwlocality::object::types::{CacheType, ObjectType};
use hwlocality::object::TopologyObject;
use hwlocality::topology::builder::{BuildFlags, StringInputError, TopologyBuilder};

use super::{Cache, CpuKind, Level, Pu, Topology};

/// What hwloc's synthetic syntax accepts, for error messages.
const SYNTHETIC_HELP: &str = "expected hwloc synthetic syntax: levels from the outside in, \
     separated by spaces, each TYPE:COUNT with TYPE one of pack|package, die, group, l3, l2, \
     l1, core, pu (PUs last), e.g. \"pack:2 core:8 pu:2\", \"pack:4 core:16 group:2 pu:4\", \
     or OS numbering with \"pack:2 core:4 pu:2(indexes=2*8:1*2)\"";

/// Largest number of PUs a synthetic spec may describe: [`super::MAX_PUS`],
/// checked on the spec before hwloc builds it (a typo such as `core:6400000` would
/// exhaust memory, and hwloc's build grows faster than the PUs).
const MAX_SYNTHETIC_PUS: u64 = super::MAX_PUS as u64;

/// Largest CPU index read from an hwloc set: hwloc sets may be infinite
/// (`0xf...f`), and no machine has a million CPUs.
const MAX_SET_INDEX: usize = 1 << 20;

/// Environment variables through which hwloc reads another machine than this
/// one: a way round the guards of `--synthetic` and `--xml`, refused.
const HWLOC_OVERRIDES: [&str; 3] = ["HWLOC_SYNTHETIC", "HWLOC_XMLFILE", "HWLOC_FSROOT"];

/// Deepest nesting of elements an XML topology may have (real exports nest
/// about 12 deep; hwloc's importer recurses once per level).
const MAX_XML_DEPTH: usize = 256;

/// Characters of a bad `os_index` quoted in a message (the message is
/// sanitised for the terminal where it is printed).
const MAX_QUOTED_INDEX_CHARS: usize = 24;

/// Why a topology could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// hwloc rejected a synthetic description.
    #[error("invalid synthetic topology \"{spec}\": {reason}; {SYNTHETIC_HELP}")]
    InvalidSynthetic {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        #[source]
        reason: SyntheticRefusal,
    },
    /// The XML file could not be opened.
    #[error("cannot read topology XML {}: {source}", path.display())]
    XmlRead {
        /// The file.
        path: PathBuf,
        /// Why it could not be read (I/O, not a regular file, too large).
        source: crate::input::Problem,
    },
    /// hwloc rejected the XML file.
    #[error(
        "{} is not an hwloc XML topology that this hwloc can read ({reason}); \
         export one with `lstopo FILE.xml`",
        path.display()
    )]
    InvalidXml {
        /// The file.
        path: PathBuf,
        /// What hwloc said.
        #[source]
        reason: XmlRejection,
    },
    /// An XML file with what hwloc's importer must not see (see `xml_guard`).
    #[error(
        "{} is not an hwloc XML topology that this hwloc can read ({reason}); \
         export one with `lstopo FILE.xml`",
        path.display()
    )]
    UnsafeXml {
        /// The file.
        path: PathBuf,
        /// What it holds.
        #[source]
        reason: XmlRefusal,
    },
    /// Discovery of this machine failed.
    #[error("hwloc could not discover this machine's topology: {0}")]
    Detect(#[source] DetectFailure),
    /// The topology says what no machine has (see [`Topology::check`]).
    #[error("the topology from {source_name} is not plausible: {reason}")]
    Implausible {
        /// Where it came from.
        source_name: String,
        /// What is wrong.
        #[source]
        reason: super::Implausible,
    },
    /// The topology has no processing unit with an OS index.
    #[error("the topology from {source_name} has no processing units")]
    Empty {
        /// Where it came from (`synthetic: ...`, `xml: ...`, `hwloc`).
        source_name: String,
    },
}

/// Why a synthetic spec is refused.
#[derive(Debug, thiserror::Error)]
pub enum SyntheticRefusal {
    /// Nothing but white space.
    #[error("the spec is empty")]
    Empty,
    /// More PUs than [`super::MAX_PUS`] (their product, if it fits a `u64`).
    #[error("{}", match pus {
        Some(n) => super::too_many_pus(n),
        None => super::too_many_pus("too many"),
    })]
    TooManyPus {
        /// The product of the counts, `None` beyond `u64`.
        pus: Option<u64>,
    },
    /// hwloc could not be given the text, or its parser refused it.
    #[error(transparent)]
    Text(#[from] TextRefusal),
    /// hwloc parsed it but could not build the topology.
    #[error("hwloc could not build it ({0})")]
    Build(#[source] RawHwlocError),
}

/// Why hwloc's string input (a synthetic spec, an XML text) refused a text.
#[derive(Debug, thiserror::Error)]
pub enum TextRefusal {
    /// A NUL character, which hwloc cannot be passed.
    #[error("it contains a NUL character")]
    ContainsNul,
    /// hwloc's parser refused it.
    #[error("hwloc rejected it")]
    Rejected,
}

impl From<StringInputError> for TextRefusal {
    fn from(e: StringInputError) -> Self {
        match e {
            StringInputError::ContainsNul => Self::ContainsNul,
            StringInputError::Invalid => Self::Rejected,
        }
    }
}

/// Why hwloc cannot read an XML file.
#[derive(Debug, thiserror::Error)]
pub enum XmlRejection {
    /// The bytes are not UTF-8 text.
    #[error("{0}")]
    Encoding(#[source] crate::input::Encoding),
    /// No `<topology` anywhere in the text.
    #[error("no <topology> element")]
    NoTopology,
    /// hwloc could not be given the text, or its parser refused it.
    #[error(transparent)]
    Text(#[from] TextRefusal),
    /// hwloc refused the build flags.
    #[error("{0}")]
    Flags(#[source] HybridError<FlagsError<BuildFlags>>),
    /// hwloc parsed it but could not build the topology.
    #[error("{0}")]
    Build(#[source] RawHwlocError),
}

/// Why hwloc could not discover this machine.
#[derive(Debug, thiserror::Error)]
pub enum DetectFailure {
    /// An environment variable that makes hwloc read another machine.
    #[error(
        "{0} is set, so hwloc would describe another machine without corescope's \
         checks; unset it (--synthetic and --xml look at another machine)"
    )]
    Override(&'static str),
    /// hwloc refused the build flags.
    #[error("{0}")]
    Flags(#[source] HybridError<FlagsError<BuildFlags>>),
    /// hwloc could not build the topology.
    #[error("{0}")]
    Build(#[source] RawHwlocError),
}

/// The machine this process runs on.
///
/// PUs that a cgroup cpuset forbids, or that the affinity mask this process
/// started with leaves out (`taskset -c 0-3 corescope`), are included with
/// `allowed == false`; offline CPUs are listed in [`Topology::unavailable`].
pub fn detect() -> Result<Topology, TopologyError> {
    if let Some(var) = HWLOC_OVERRIDES
        .iter()
        .find(|v| std::env::var_os(v).is_some())
    {
        return Err(TopologyError::Detect(DetectFailure::Override(var)));
    }
    let topo = TopologyBuilder::new()
        .with_flags(BuildFlags::INCLUDE_DISALLOWED)
        .map_err(|e| TopologyError::Detect(DetectFailure::Flags(e)))?
        .build()
        .map_err(|e| TopologyError::Detect(DetectFailure::Build(e)))?;
    let mut t = convert(&topo, "hwloc".into())?;
    if let Ok(mask) = crate::affinity::allowed_current() {
        restrict_to(&mut t, &mask);
    }
    Ok(t)
}

/// Mark every PU outside `cpus` as not allowed, unless that would leave none
/// (a mask naming no CPU of the topology says nothing useful).
pub fn restrict_to(t: &mut Topology, cpus: &[u32]) {
    let cpus: std::collections::HashSet<u32> = cpus.iter().copied().collect();
    if !t
        .pus
        .iter()
        .any(|p| p.allowed && cpus.contains(&p.os_index))
    {
        return;
    }
    for p in &mut t.pus {
        if !cpus.contains(&p.os_index) {
            p.allowed = false;
        }
    }
}

/// A synthetic machine from an hwloc synthetic string (`pack:4 core:16 pu:8`).
pub fn from_synthetic(spec: &str) -> Result<Topology, TopologyError> {
    let invalid = |reason: SyntheticRefusal| TopologyError::InvalidSynthetic {
        spec: spec.to_string(),
        reason,
    };
    let trimmed = spec.trim();
    if trimmed.is_empty() {
        return Err(invalid(SyntheticRefusal::Empty));
    }
    let estimate = synthetic_pu_estimate(trimmed);
    if estimate > MAX_SYNTHETIC_PUS {
        let pus = (estimate != u64::MAX).then_some(estimate);
        return Err(invalid(SyntheticRefusal::TooManyPus { pus }));
    }
    let builder = TopologyBuilder::new()
        .from_synthetic(trimmed)
        .map_err(|e| invalid(SyntheticRefusal::Text(e.into())))?;
    let topo = builder
        .build()
        .map_err(|e| invalid(SyntheticRefusal::Build(e)))?;
    let mut t = convert(&topo, format!("synthetic: {trimmed}"))?;
    // hwloc gives a synthetic NUMA node 1 GiB unless the spec says `memory=`: that
    // default is no fact about any machine, so the memory stays unknown.
    if !trimmed.contains("memory=") {
        t.memory_bytes = None;
    }
    Ok(t)
}

/// A machine from an hwloc XML export.
///
/// PUs present in the export but outside its allowed cpuset get `allowed ==
/// false`; CPUs of the complete cpuset that are not in the tree (offline, or
/// dropped from the export because they were disallowed) are listed in
/// [`Topology::unavailable`].
pub fn from_xml_file(path: &Path) -> Result<Topology, TopologyError> {
    if path.is_dir() {
        return Err(TopologyError::XmlRead {
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::IsADirectory).into(),
        });
    }
    // Read once, as every input file is (crate::input: a regular file, not a
    // FIFO or a device, of bounded size, UTF-8), and hand hwloc the text: hwloc
    // never opens the path itself (on a pipe it seeked, and hwlocality panicked).
    let invalid = |reason: XmlRejection| TopologyError::InvalidXml {
        path: path.to_path_buf(),
        reason,
    };
    let text = crate::input::read_text(path).map_err(|e| match e.problem {
        crate::input::Problem::Encoding(what) => invalid(XmlRejection::Encoding(what)),
        source => TopologyError::XmlRead {
            path: path.to_path_buf(),
            source,
        },
    })?;
    // Reject what is plainly not an hwloc export before the XML parser sees it
    // (it would print its own complaints on stderr). The whole text is
    // searched: a long leading comment does not hide the element.
    if !text.contains("<topology") {
        return Err(invalid(XmlRejection::NoTopology));
    }
    xml_guard(&text).map_err(|reason| TopologyError::UnsafeXml {
        path: path.to_path_buf(),
        reason,
    })?;
    let topo = TopologyBuilder::new()
        .with_flags(BuildFlags::INCLUDE_DISALLOWED)
        .map_err(|e| invalid(XmlRejection::Flags(e)))?
        .from_xml(&text)
        .map_err(|e| invalid(XmlRejection::Text(e.into())))?
        .build()
        .map_err(|e| invalid(XmlRejection::Build(e)))?;
    convert(&topo, format!("xml: {}", path.display()))
}

/// What [`xml_guard`] refuses in an XML file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XmlRefusal {
    /// A DTD with an internal subset or entities.
    #[error(
        "it declares a DTD with an internal subset or entities, \
         which corescope refuses before hwloc parses it"
    )]
    Dtd,
    /// Entities outside a DTD.
    #[error("it declares entities, which corescope refuses")]
    Entities,
    /// Too many PUs.
    #[error(transparent)]
    Pus(super::Implausible),
    /// Elements nested too deep.
    #[error("elements nest more than {MAX_XML_DEPTH} deep")]
    Depth,
    /// An `os_index` outside a C `int` (its first characters).
    #[error("an os_index \"{0}\" that is not a number from 0 to {max}", max = i32::MAX)]
    OsIndex(String),
}

/// What hwloc's XML importer must not see: a DTD with an internal subset or
/// entities (entity expansion), elements nested deeper than [`MAX_XML_DEPTH`],
/// or an `os_index` beyond a C `int`. The plain `<!DOCTYPE topology SYSTEM
/// "hwloc2.dtd">` line of an lstopo export is let through.
fn xml_guard(text: &str) -> Result<(), XmlRefusal> {
    if let Some(at) = text.find("<!DOCTYPE") {
        let decl = text[at..].split('>').next().unwrap_or_default();
        if decl.contains('[') || text.contains("<!ENTITY") {
            return Err(XmlRefusal::Dtd);
        }
    }
    if text.contains("<!ENTITY") {
        return Err(XmlRefusal::Entities);
    }
    // PUs, counted before hwloc builds them ([`super::MAX_PUS`]).
    let pus = text.matches("type=\"PU\"").count() + text.matches("type='PU'").count();
    if pus > super::MAX_PUS {
        return Err(XmlRefusal::Pus(super::Implausible::TooManyPus(pus)));
    }
    // Depth: opening tags less closing and self-closing ones.
    let mut depth: usize = 0;
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        if tag.starts_with('/') {
            depth = depth.saturating_sub(1);
        } else if !(tag.starts_with('?') || tag.starts_with('!') || tag.ends_with('/')) {
            depth += 1;
            if depth > MAX_XML_DEPTH {
                return Err(XmlRefusal::Depth);
            }
        }
    }
    for part in text.split("os_index=\"").skip(1) {
        let digits: String = part.chars().take_while(|c| *c != '"').collect();
        let in_c_int = digits
            .parse::<u32>()
            .is_ok_and(|v| i32::try_from(v).is_ok());
        if !in_c_int {
            return Err(XmlRefusal::OsIndex(
                digits.chars().take(MAX_QUOTED_INDEX_CHARS).collect(),
            ));
        }
    }
    Ok(())
}

/// Product of the `TYPE:COUNT` counts of a synthetic spec (an upper bound guard;
/// saturates; tokens without a count, such as attached memory, count as 1).
/// Bare arities (`2 4 2`), hex (`core:0x10`) and signed (`core:+8`) counts are
/// counted as hwloc reads them; a count too large for `u64` counts as `u64::MAX`.
fn synthetic_pu_estimate(spec: &str) -> u64 {
    spec.split_whitespace()
        .filter(|tok| !tok.starts_with('['))
        .filter_map(|tok| {
            let count = tok.split_once(':').map_or(tok, |(_, rest)| rest);
            let count = count.trim_start_matches('+');
            let (digits, radix) = match count
                .strip_prefix("0x")
                .or_else(|| count.strip_prefix("0X"))
            {
                Some(hex) => (
                    hex.chars()
                        .take_while(char::is_ascii_hexdigit)
                        .collect::<String>(),
                    16,
                ),
                None => (
                    count
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>(),
                    10,
                ),
            };
            if digits.is_empty() {
                return None;
            }
            Some(u64::from_str_radix(&digits, radix).unwrap_or(u64::MAX))
        })
        .fold(1u64, u64::saturating_mul)
}

/// Normal depth of an object as a plain index, if it is a normal object.
fn normal_depth(obj: &TopologyObject) -> Option<usize> {
    NormalDepth::try_from(obj.depth()).ok().map(usize::from)
}

/// Whether objects of this type form a placement level (see [`Topology::levels`]).
fn is_level_type(t: ObjectType) -> bool {
    matches!(
        t,
        ObjectType::Package
            | ObjectType::Die
            | ObjectType::Group
            | ObjectType::L1Cache
            | ObjectType::L2Cache
            | ObjectType::L3Cache
            | ObjectType::L4Cache
            | ObjectType::L5Cache
            | ObjectType::Core
    )
}

/// Level name of an hwloc type.
fn level_name(t: ObjectType) -> &'static str {
    match t {
        ObjectType::Package => "package",
        ObjectType::Die => "die",
        ObjectType::Group => "group",
        ObjectType::L1Cache => "l1",
        ObjectType::L2Cache => "l2",
        ObjectType::L3Cache => "l3",
        ObjectType::L4Cache => "l4",
        ObjectType::L5Cache => "l5",
        ObjectType::Core => "core",
        ObjectType::PU => "pu",
        _ => "other",
    }
}

/// Preference when several hwloc levels merge into one (lower wins).
fn name_rank(name: &str) -> u8 {
    match name {
        "package" => 0,
        "core" => 1,
        "die" => 2,
        "l5" | "l4" | "l3" | "l2" | "l1" => 3,
        "group" => 4,
        _ => 5,
    }
}

/// Identity of a tree object: (normal depth, logical index); unique in a topology.
type ObjId = (usize, usize);

/// One PU as read from hwloc, before levels are computed.
struct RawPu<'t> {
    obj: &'t TopologyObject,
    os_index: u32,
}

/// One convention per level: the OS index, unless some object of the level has
/// none (then the logical index for every object of that level). Returns whether
/// packages and cores use OS indexes, and the levels numbered logically.
fn numbering(topo: &hwlocality::Topology) -> (bool, bool, Vec<String>) {
    let os_numbered = |ty: ObjectType| topo.objects_with_type(ty).all(|o| o.os_index().is_some());
    let (package_os, core_os) = (
        os_numbered(ObjectType::Package),
        os_numbered(ObjectType::Core),
    );
    let mut logical_levels = Vec::new();
    if !package_os {
        logical_levels.push("package".to_string());
    }
    if !core_os {
        logical_levels.push("core".to_string());
    }
    (package_os, core_os, logical_levels)
}

/// CPUs the machine has but the tree does not show (offline, or outside the
/// export's cpuset).
fn unavailable_cpus(topo: &hwlocality::Topology, pus: &[Pu]) -> Vec<u32> {
    let in_tree: std::collections::HashSet<u32> = pus.iter().map(|p| p.os_index).collect();
    topo.complete_cpuset()
        .iter_set()
        .take_while(|i| usize::from(*i) < MAX_SET_INDEX)
        .filter_map(|i| u32::try_from(usize::from(i)).ok())
        .filter(|i| !in_tree.contains(i))
        .collect()
}

/// Convert a loaded hwloc topology into our plain data.
fn convert(topo: &hwlocality::Topology, source: String) -> Result<Topology, TopologyError> {
    let allowed_set = topo.allowed_cpuset();
    let raw: Vec<RawPu<'_>> = topo
        .objects_with_type(ObjectType::PU)
        .filter_map(|obj| {
            let os = obj.os_index()?;
            Some(RawPu {
                obj,
                os_index: u32::try_from(os).ok()?,
            })
        })
        .collect();
    if raw.is_empty() {
        return Err(TopologyError::Empty {
            source_name: source,
        });
    }

    let package_count = topo.objects_with_type(ObjectType::Package).count();
    let core_count = topo.objects_with_type(ObjectType::Core).count();
    // Nodes outside the allowed node set or offline are missing from exports
    // made without them; the complete node set still counts them.
    let numa_count = topo
        .objects_with_type(ObjectType::NUMANode)
        .count()
        .max(topo.complete_nodeset().weight().unwrap_or(0));

    let cpu_kinds = cpu_kinds(topo);
    let kinds: HashMap<u32, String> = cpu_kinds
        .iter()
        .flat_map(|k| k.cpus.iter().map(|&c| (c, k.label.clone())))
        .collect();
    let (package_os, core_os, logical_levels) = numbering(topo);
    let number = |o: &TopologyObject, os: bool| {
        if os {
            o.os_index().map_or(u32::MAX, index_u32)
        } else {
            index_u32(o.logical_index())
        }
    };

    // Per-core slot counters: the slot is the PU's position among its core's PUs.
    let mut slots: HashMap<u32, u32> = HashMap::new();
    let mut pus: Vec<Pu> = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let package = r
            .obj
            .first_ancestor_with_type(ObjectType::Package)
            .map_or(0, |p| number(p, package_os));
        let core_obj = r.obj.first_ancestor_with_type(ObjectType::Core);
        let core_os_index = core_obj.map(|c| number(c, core_os));
        // A PU without a core object is its own core; numbered after the real cores.
        let core = r
            .obj
            .first_ancestor_with_type(ObjectType::Core)
            .map_or_else(
                || index_u32(core_count + i),
                |c| index_u32(c.logical_index()),
            );
        let slot_counter = slots.entry(core).or_insert(0);
        let slot = *slot_counter;
        *slot_counter += 1;
        // The complete node set keeps nodes outside the allowed node set (and
        // offline ones): where the PU's memory is, whether or not we may use it.
        let numa_node = r
            .obj
            .complete_nodeset()
            .and_then(|ns| ns.first_set())
            .or_else(|| r.obj.nodeset().and_then(|ns| ns.first_set()))
            .and_then(|n| u32::try_from(usize::from(n)).ok());
        pus.push(Pu {
            os_index: r.os_index,
            package,
            numa_node,
            core,
            core_os_index,
            slot,
            path: Vec::new(),
            allowed: allowed_set.is_set(r.os_index as usize),
            kind: kinds.get(&r.os_index).cloned(),
        });
    }
    // Cores of PUs that had no core object were numbered sparsely; make them dense.
    renumber_dense(&mut pus, |p| &mut p.core);

    let levels = compute_levels(topo, &raw, &mut pus);
    let caches = collect_caches(topo);

    let unavailable = unavailable_cpus(topo, &pus);

    let cores = {
        let mut c: Vec<u32> = pus.iter().map(|p| p.core).collect();
        c.sort_unstable();
        c.dedup();
        c.len()
    };
    let t = Topology {
        source,
        packages: package_count.max(1),
        numa_nodes: numa_count.max(1),
        cores,
        pus,
        caches,
        levels,
        unavailable,
        cpu_kinds,
        logical_levels,
        memory_bytes: Some(topo.root_object().total_memory()).filter(|&b| b > 0),
    };
    t.check().map_err(|reason| TopologyError::Implausible {
        source_name: t.source.clone(),
        reason,
    })?;
    Ok(t)
}

/// `usize` index to `u32`, saturating (hwloc indices fit easily).
fn index_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Renumber a field 0, 1, 2, ... in order of first appearance.
fn renumber_dense(pus: &mut [Pu], field: impl Fn(&mut Pu) -> &mut u32) {
    let mut map: HashMap<u32, u32> = HashMap::new();
    for p in pus.iter_mut() {
        let next = index_u32(map.len());
        let f = field(p);
        *f = *map.entry(*f).or_insert(next);
    }
}

/// hwloc's CPU kinds, the most performant first; empty when hwloc knows one
/// kind or none. Labels: `P`/`E` for Intel hybrids (hwloc's `CoreType`) and for
/// any two kinds without a `CoreType` (`E` = the more power-efficient), hwloc's
/// `CoreType` otherwise, else `kind<i>` with `i` in hwloc's order (most
/// power-efficient first).
fn cpu_kinds(topo: &hwlocality::Topology) -> Vec<CpuKind> {
    let Ok(kinds) = topo.cpu_kinds() else {
        return Vec::new();
    };
    let kinds: Vec<_> = kinds.collect();
    if kinds.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(kinds.len());
    for (i, kind) in kinds.iter().enumerate() {
        let infos: Vec<(String, String)> = kind
            .infos
            .iter()
            .map(|info| {
                (
                    info.name().to_string_lossy().into_owned(),
                    info.value().to_string_lossy().into_owned(),
                )
            })
            .collect();
        let core_type = infos
            .iter()
            .find(|(name, _)| name == "CoreType")
            .map(|(_, v)| v.as_str());
        let label = match core_type {
            Some("IntelCore") => "P".to_string(),
            Some("IntelAtom") => "E".to_string(),
            Some(other) if !other.is_empty() => other.to_string(),
            // hwloc lists kinds from the most power-efficient to the fastest.
            _ if kinds.len() == 2 => if i == 0 { "E" } else { "P" }.to_string(),
            _ => format!("kind{i}"),
        };
        let cpus = kind
            .cpuset
            .iter_set()
            .take_while(|i| usize::from(*i) < MAX_SET_INDEX)
            .filter_map(|cpu| u32::try_from(usize::from(cpu)).ok())
            .collect();
        out.push(CpuKind {
            label,
            efficiency: kind.efficiency.and_then(|e| u32::try_from(e).ok()),
            cpus,
            infos,
        });
    }
    // hwloc orders kinds by increasing efficiency rank (power-efficient first).
    out.reverse();
    out
}

/// Data and unified caches with the PUs that share each.
fn collect_caches(topo: &hwlocality::Topology) -> Vec<Cache> {
    let mut caches = Vec::new();
    for ty in [
        ObjectType::L1Cache,
        ObjectType::L2Cache,
        ObjectType::L3Cache,
        ObjectType::L4Cache,
        ObjectType::L5Cache,
    ] {
        for obj in topo.objects_with_type(ty) {
            let Some(ObjectAttributes::Cache(attr)) = obj.attributes() else {
                continue;
            };
            let kind = match attr.cache_type() {
                CacheType::Data => "data",
                CacheType::Unified => "unified",
                _ => continue,
            };
            let pus: Vec<u32> = obj
                .cpuset()
                .map(|set| {
                    set.iter_set()
                        .take_while(|i| usize::from(*i) < MAX_SET_INDEX)
                        .filter_map(|i| u32::try_from(usize::from(i)).ok())
                        .collect()
                })
                .unwrap_or_default();
            let associativity = match attr.associativity() {
                hwlocality::object::attributes::CacheAssociativity::Full => -1,
                hwlocality::object::attributes::CacheAssociativity::Unknown => 0,
                hwlocality::object::attributes::CacheAssociativity::Ways(w) => {
                    i32::try_from(w.get()).unwrap_or(i32::MAX)
                }
            };
            caches.push(Cache {
                level: u8::try_from(attr.depth()).unwrap_or(u8::MAX),
                kind: kind.into(),
                size_bytes: attr.size().map_or(0, |s| s.get()),
                line_bytes: attr
                    .line_size()
                    .map_or(0, |l| u32::try_from(l.get()).unwrap_or(u32::MAX)),
                associativity,
                pus,
            });
        }
    }
    caches
}

/// Compute [`Topology::levels`] and every PU's [`Pu::path`] (see their docs).
fn compute_levels(topo: &hwlocality::Topology, raw: &[RawPu<'_>], pus: &mut [Pu]) -> Vec<Level> {
    // Every level below the machine: Groups above the packages count (they
    // hold the memory controllers on POWER and on multi-board x86 exports).
    let top = 1;
    let pu_depth = usize::from(topo.depth()).saturating_sub(1);
    // Candidate depths, outermost first, with their level names.
    let candidates: Vec<(usize, &'static str)> = (top..pu_depth)
        .filter_map(|d| {
            let ty = topo.type_at_depth(d)?;
            is_level_type(ty).then(|| (d, level_name(ty)))
        })
        .collect();

    // ids[c][i]: identity of PU i's object at candidate c. A PU without an
    // ancestor at that depth takes its nearest ancestor below (or itself).
    // Identities are (depth, logical index), unique across the tree.
    let n = raw.len();
    let mut ids: Vec<Vec<ObjId>> = vec![Vec::with_capacity(n); candidates.len()];
    for r in raw {
        let mut by_depth: HashMap<usize, usize> = HashMap::new();
        for anc in r.obj.ancestors() {
            if let Some(d) = normal_depth(anc) {
                by_depth.insert(d, anc.logical_index());
            }
        }
        let mut below = (pu_depth, r.obj.logical_index());
        for (c, &(d, _)) in candidates.iter().enumerate().rev() {
            if let Some(&li) = by_depth.get(&d) {
                below = (d, li);
            }
            ids[c].push(below);
        }
    }

    // Merge adjacent candidates that split the PUs identically. Each level
    // refines the one above, so equal numbers of distinct ids mean equal splits.
    let distinct = |col: &Vec<ObjId>| {
        let mut v = col.clone();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let mut merged: Vec<(String, Vec<ObjId>)> = Vec::new();
    let mut last_count = 0usize;
    for (c, &(_, name)) in candidates.iter().enumerate() {
        let count = distinct(&ids[c]);
        match merged.last_mut() {
            Some((prev_name, col)) if count == last_count => {
                if name_rank(name) < name_rank(prev_name) {
                    *prev_name = name.to_string();
                }
                *col = std::mem::take(&mut ids[c]);
            }
            _ => merged.push((name.to_string(), std::mem::take(&mut ids[c]))),
        }
        last_count = count;
    }
    merged.push((
        "pu".into(),
        raw.iter()
            .map(|r| (pu_depth, r.obj.logical_index()))
            .collect(),
    ));

    // A first level with a single object does not branch: leave it out.
    while merged.len() > 1 && distinct(&merged[0].1) == 1 {
        merged.remove(0);
    }

    // Child indices per level, in topology (PU logical) order.
    let mut levels: Vec<Level> = Vec::with_capacity(merged.len());
    for p in pus.iter_mut() {
        p.path = Vec::with_capacity(merged.len());
    }
    for (k, (name, col)) in merged.iter().enumerate() {
        let mut child_index: HashMap<(ObjId, ObjId), u32> = HashMap::new();
        let mut children_of: HashMap<ObjId, u32> = HashMap::new();
        let mut arity = 0u32;
        for (i, p) in pus.iter_mut().enumerate() {
            let parent = if k == 0 {
                (usize::MAX, 0)
            } else {
                merged[k - 1].1[i]
            };
            let me = col[i];
            let idx = *child_index.entry((parent, me)).or_insert_with(|| {
                let c = children_of.entry(parent).or_insert(0);
                let idx = *c;
                *c += 1;
                idx
            });
            arity = arity.max(idx + 1);
            p.path.push(idx);
        }
        levels.push(Level {
            name: name.clone(),
            arity: arity as usize,
        });
    }
    levels
}

/// hwloc's `CPUModel` info (of the first package, or the machine), if hwloc can
/// discover this machine and reports one.
pub(crate) fn hwloc_cpu_model() -> Option<String> {
    let topo = TopologyBuilder::new().build().ok()?;
    let model = topo
        .objects_with_type(ObjectType::Package)
        .chain(std::iter::once(topo.root_object()))
        .find_map(|o| o.info("CPUModel"))
        .map(|s| s.to_string_lossy().trim().to_string())
        .filter(|s| !s.is_empty());
    model
}
