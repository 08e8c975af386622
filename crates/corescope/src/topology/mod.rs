//! The machine's CPUs, cores, packages, NUMA nodes and caches.
//!
//! This module is the only code that asks the OS or hwloc about the hardware. It
//! produces a plain-data [`Topology`] that the rest of corescope (placement, probes,
//! renderers) reads; the same type is stored in every run file.

use serde::{Deserialize, Serialize};

mod discover;
pub mod host;
pub mod knobs;

pub use discover::{
    detect, from_synthetic, from_xml_file, restrict_to, DetectFailure, SyntheticRefusal,
    TextRefusal, TopologyError, XmlRefusal, XmlRejection,
};

/// Largest cache a topology may report (1 TiB; the largest today hold about 1 GiB).
pub const MAX_CACHE_BYTES: u64 = 1 << 40;
/// Largest memory a topology may report (1 EiB).
pub const MAX_MEMORY_BYTES: u64 = 1 << 60;
/// Most PUs a topology may have: twice the 8,192 CPUs of Linux's largest build
/// (`NR_CPUS` with `MAXSMP`). `plan` and placement grow as n · log n, but hwloc's
/// own construction of a synthetic machine grows faster (on the 2-CPU reference VM:
/// 0.5 s at 16,384 PUs, 3.5 s at 32,768, over 25 s at 65,536), and its per-object
/// bitmaps take memory quadratic in the PUs: the 2^20 PUs of a typo would take
/// hours and gigabytes. Checked before hwloc builds a synthetic spec or parses an
/// XML export, and for every topology (run files too) by [`Topology::check`].
pub const MAX_PUS: usize = 16_384;
/// The cache line size assumed where the machine reports none: the line of x86
/// cores and of most Arm cores.
pub const DEFAULT_LINE_BYTES: u32 = 64;

/// The reason a topology of `pus` PUs (above [`MAX_PUS`]) is refused.
pub fn too_many_pus(pus: impl std::fmt::Display) -> String {
    format!(
        "{pus} PUs, more than the {MAX_PUS} PUs corescope accepts (twice the 8192 CPUs of \
         Linux's largest build); describe a part of the machine, e.g. one package"
    )
}

/// What no machine has, found by [`Topology::check`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Implausible {
    /// More than [`MAX_PUS`] PUs.
    #[error("{}", too_many_pus(.0))]
    TooManyPus(usize),
    /// An OS CPU number listed twice.
    #[error("PU {0} is listed twice (each OS CPU number names one PU)")]
    PuTwice(u32),
    /// A cache beyond [`MAX_CACHE_BYTES`].
    #[error("an L{level} cache of {bytes} bytes, above the {MAX_CACHE_BYTES} corescope accepts")]
    Cache {
        /// The cache's level.
        level: u8,
        /// Its size.
        bytes: u64,
    },
    /// Memory beyond [`MAX_MEMORY_BYTES`].
    #[error("{0} bytes of memory, above the {MAX_MEMORY_BYTES} corescope accepts")]
    Memory(u64),
}

/// A machine's processing units and their hierarchy, as plain data.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Topology {
    /// Where this came from: `hwloc`, `synthetic: <spec>`, `xml: <path>`.
    pub source: String,
    /// Number of packages (sockets).
    pub packages: usize,
    /// Number of NUMA nodes (at least 1), counting nodes outside the allowed
    /// node set and offline ones (hwloc's complete node set).
    pub numa_nodes: usize,
    /// Number of cores.
    pub cores: usize,
    /// Every PU (hardware thread), allowed or not, in hwloc logical (topology) order:
    /// all PUs of core 0, then core 1, ..., package by package.
    pub pus: Vec<Pu>,
    /// Data and unified caches (instruction caches are left out).
    pub caches: Vec<Cache>,
    /// Names of the tree levels from below the machine down to the PU, each with its
    /// arity (children per parent; for irregular machines the largest seen),
    /// e.g. `[("package", 4), ("core", 16), ("group", 2), ("pu", 4)]`.
    /// Levels with arity 1 everywhere are left out, except `pu`.
    ///
    /// Precisely, discovery builds the levels like this:
    /// 1. Candidates are the hwloc tree levels from the first level below the
    ///    machine (Groups above the packages included) down to the
    ///    cores, keeping packages, dies, groups, data/unified caches and cores
    ///    (NUMA nodes, instruction caches and I/O objects are not tree levels here).
    /// 2. Where a PU has no ancestor at a candidate level (a cache that exists in
    ///    one part of a hybrid machine only), the PU's nearest ancestor below that
    ///    level stands in for it.
    /// 3. Adjacent candidates that split the PUs in exactly the same way (an L2
    ///    and an L1 per core, the core itself) are merged into one level, named
    ///    by preference `package`, `core`, `die`, then the cache (`l3`, `l2`,
    ///    `l1`), then `group`.
    /// 4. `pu` is always the last level, even where cores have one PU.
    /// 5. A first level holding a single object (one package) is left out;
    ///    after the merge in step 3 no other level can have arity 1 everywhere.
    ///
    /// Each level's arity is the largest number of children (objects of this
    /// level) that one object of the previous level has; for the first level, the
    /// number of objects. See [`Pu::path`].
    pub levels: Vec<Level>,
    /// OS indices of CPUs that hwloc knows of (the complete cpuset) but that are
    /// not in the tree: offline CPUs, and, in XML exports made without
    /// disallowed objects, also CPUs outside the exporter's cpuset. Where in the
    /// tree they sit is unknown; they are never used for placement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<u32>,
    /// hwloc's CPU kinds (hybrid machines), the most performant first (the
    /// order strategies fill them in); empty when hwloc knows one kind or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_kinds: Vec<CpuKind>,
    /// Levels numbered with hwloc's logical index (`L#`) because the OS gives
    /// their objects no number (`package` on POWER exports, `core` where hwloc
    /// finds no core id). Every other level uses the OS index (`P#`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logical_levels: Vec<String>,
    /// Bytes of memory of every NUMA node hwloc reports (its local memory summed), if
    /// it reports any: what a plan for an XML export sizes its blocks by (on this
    /// machine the memory guard reads what is free instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

/// One kind of CPU core (hwloc cpukinds): P-cores and E-cores on Intel hybrids.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuKind {
    /// `P`, `E`, hwloc's `CoreType`, or `kind<i>` (see [`Pu::kind`]).
    pub label: String,
    /// hwloc's efficiency rank (higher = more performant, less power-efficient),
    /// if hwloc knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<u32>,
    /// OS indices of the CPUs of this kind.
    pub cpus: Vec<u32>,
    /// hwloc's textual attributes of the kind (`CoreType`, `FrequencyMaxMHz`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub infos: Vec<(String, String)>,
}

/// One level of the tree below the machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Level {
    /// `package`, `die`, `group`, `l3`, `l2`, `core`, `pu`, ...
    pub name: String,
    /// Largest number of children of one parent at this level.
    pub arity: usize,
}

/// One processing unit (hardware thread, strand).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Pu {
    /// OS index: the CPU id that `sched_setaffinity` and `taskset` take.
    pub os_index: u32,
    /// The package's OS index (hwloc `P#`, what `hwloc-calc --physical` and
    /// `/sys/.../physical_package_id` say), or its logical index where the OS
    /// gives packages none (then `package` is in [`Topology::logical_levels`]).
    /// Run files written before issue 19 hold the logical index here.
    pub package: u32,
    /// OS index of the NUMA node holding this PU's local memory, if known; taken
    /// from the complete node set, so a node outside the allowed node set (a
    /// cpuset restricting memory) or offline is still shown.
    pub numa_node: Option<u32>,
    /// Logical index of the core, machine-wide (0-based, topology order): a key
    /// that tells cores apart. The OS's own core number, which repeats across
    /// packages and dies, is [`Pu::core_os_index`].
    pub core: u32,
    /// The core's OS index (hwloc `P#`, `/sys/.../core_id`), unique only within
    /// its package (or die); `None` where the OS gives cores no number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_os_index: Option<u32>,
    /// Position of this PU within its core (0 = first hardware thread).
    pub slot: u32,
    /// Child index at each entry of [`Topology::levels`], outermost first:
    /// the PU's address in the tree (what `scatter` placement enumerates).
    ///
    /// `path[0]` is the index of the PU's first-level object among all of them
    /// (e.g. the package's logical index); `path[k]` for `k > 0` is the index of
    /// its level-`k` object among the level-`k` children of its level-`k-1`
    /// object, in topology order; the last entry is the PU's position among the
    /// PUs of its last non-PU object. Disallowed PUs are in the tree and take
    /// their positions; offline ones are not. `path.len() == levels.len()` and
    /// `path[k] < levels[k].arity`. On `pack:4 core:16 group:2 pu:4`, OS CPU 100
    /// (package 0, core 12, pipeline 1, strand 0) has path `[0, 12, 1, 0]`.
    pub path: Vec<u32>,
    /// Whether this process may run on it (allowed cpuset, online).
    pub allowed: bool,
    /// CPU kind for hybrid machines (`P`/`E`, or hwloc's kind info), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// One cache instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    /// Level (1, 2, 3, ...).
    pub level: u8,
    /// `data` or `unified`.
    pub kind: String,
    /// Capacity.
    pub size_bytes: u64,
    /// Line size.
    pub line_bytes: u32,
    /// Associativity (0 = unknown, -1 = fully associative as hwloc says).
    pub associativity: i32,
    /// OS indices of the PUs sharing this cache.
    pub pus: Vec<u32>,
}

impl Topology {
    /// Whether this topology was discovered on the running machine (not an XML export
    /// or a synthetic spec).
    pub fn is_this_machine(&self) -> bool {
        self.source == "hwloc"
    }

    /// The PUs this process may run on, in topology order.
    pub fn allowed_pus(&self) -> impl Iterator<Item = &Pu> {
        self.pus.iter().filter(|p| p.allowed)
    }

    /// Number of PUs this process may run on (at least 1).
    pub fn allowed_count(&self) -> usize {
        self.allowed_pus().count().max(1)
    }

    /// The PU with this OS index.
    pub fn pu(&self, os_index: u32) -> Option<&Pu> {
        self.pus.iter().find(|p| p.os_index == os_index)
    }

    /// Hardware threads per core (largest seen).
    pub fn threads_per_core(&self) -> usize {
        self.pus
            .iter()
            .map(|p| p.slot as usize + 1)
            .max()
            .unwrap_or(1)
    }

    /// Whether any core has more than one PU.
    pub fn has_smt(&self) -> bool {
        self.threads_per_core() > 1
    }

    /// Caches a PU uses, smallest level first.
    pub fn caches_of(&self, os_index: u32) -> Vec<&Cache> {
        let mut v: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.pus.contains(&os_index))
            .collect();
        v.sort_by_key(|c| c.level);
        v
    }

    /// Size of the level-1 data (or unified) cache of PU `os_index`, if known
    /// (instruction caches are not recorded).
    pub fn l1d_bytes(&self, os_index: u32) -> Option<u64> {
        self.caches_of(os_index)
            .into_iter()
            .find(|c| c.level == 1 && c.size_bytes > 0)
            .map(|c| c.size_bytes)
    }

    /// Size of the largest (last-level) data/unified cache, if any is known.
    pub fn llc_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .max_by_key(|c| (c.level, c.size_bytes))
            .map(|c| c.size_bytes)
    }

    /// Check what no machine has, for every way a topology comes in (hwloc,
    /// synthetic specs, XML exports, run files): more than [`MAX_PUS`] PUs, a PU
    /// number listed twice, a cache or memory size beyond
    /// [`MAX_CACHE_BYTES`] / [`MAX_MEMORY_BYTES`] (near 2^64, sizes derived
    /// from them would overflow).
    pub fn check(&self) -> Result<(), Implausible> {
        if self.pus.len() > MAX_PUS {
            return Err(Implausible::TooManyPus(self.pus.len()));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(p) = self.pus.iter().find(|p| !seen.insert(p.os_index)) {
            return Err(Implausible::PuTwice(p.os_index));
        }
        if let Some(c) = self.caches.iter().find(|c| c.size_bytes > MAX_CACHE_BYTES) {
            return Err(Implausible::Cache {
                level: c.level,
                bytes: c.size_bytes,
            });
        }
        if let Some(m) = self.memory_bytes.filter(|&m| m > MAX_MEMORY_BYTES) {
            return Err(Implausible::Memory(m));
        }
        Ok(())
    }

    /// How many caches of the last level (the level [`Topology::llc_bytes`] reads)
    /// the machine has; 0 when it reports none.
    pub fn llc_count(&self) -> usize {
        let Some(level) = self.caches.iter().map(|c| c.level).max() else {
            return 0;
        };
        self.caches.iter().filter(|c| c.level == level).count()
    }

    /// Cache line size of the level-1 data cache, if known.
    pub fn line_bytes(&self) -> Option<u32> {
        self.caches
            .iter()
            .filter(|c| c.level == 1 && c.line_bytes > 0)
            .map(|c| c.line_bytes)
            .next()
    }

    /// The line size to lay buffers out by: [`Topology::line_bytes`], else
    /// [`DEFAULT_LINE_BYTES`]; at least one 8-byte word, so a stride of words per
    /// line is never zero.
    pub fn line_bytes_or_default(&self) -> u32 {
        self.line_bytes().unwrap_or(DEFAULT_LINE_BYTES).max(8)
    }

    /// Rank of a PU's CPU kind in [`Topology::cpu_kinds`] (0 = the most
    /// performant, filled first); 0 where kinds are unknown.
    pub fn kind_rank(&self, pu: &Pu) -> usize {
        pu.kind
            .as_deref()
            .and_then(|k| self.cpu_kinds.iter().position(|c| c.label == k))
            .unwrap_or(0)
    }

    /// One-line summary: `4 packages × 16 cores × 8 threads = 512 CPUs (512 allowed)`;
    /// on hybrids one term per CPU kind:
    /// `1 package × (6 P cores × 2 threads + 8 E cores × 1 thread) = 20 CPUs`.
    pub fn summary(&self) -> String {
        let pkgs = self.packages.max(1);
        let total = self.pus.len();
        let allowed = self.allowed_pus().count();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        // (label, cores per package, threads per core, PUs) per kind, or one term.
        let terms: Vec<(String, usize, usize)> = if self.cpu_kinds.len() > 1 {
            self.cpu_kinds
                .iter()
                .map(|k| {
                    let pus: Vec<&Pu> = self
                        .pus
                        .iter()
                        .filter(|p| p.kind.as_deref() == Some(k.label.as_str()))
                        .collect();
                    let mut cores: Vec<u32> = pus.iter().map(|p| p.core).collect();
                    cores.sort_unstable();
                    cores.dedup();
                    let tpc = pus.iter().map(|p| p.slot as usize + 1).max().unwrap_or(1);
                    (format!("{} core", k.label), cores.len().div_ceil(pkgs), tpc)
                })
                .collect()
        } else {
            let cores_per_pkg = self.cores.max(1).div_ceil(pkgs);
            vec![("core".into(), cores_per_pkg, self.threads_per_core())]
        };
        let regular = terms.iter().map(|(_, c, t)| pkgs * c * t).sum::<usize>() == total;
        let words: Vec<String> = terms
            .iter()
            .map(|(w, c, t)| format!("{} × {}", plural(*c, w), plural(*t, "thread")))
            .collect();
        let body = if words.len() == 1 {
            words[0].clone()
        } else {
            format!("({})", words.join(" + "))
        };
        let mut s = format!(
            "{} × {body} = {}",
            plural(pkgs, "package"),
            plural(total, "CPU")
        );
        if !regular {
            s.push_str(" (irregular)");
        }
        if self.numa_nodes > 1 {
            s.push_str(&format!(", {} NUMA nodes", self.numa_nodes));
        }
        if allowed != total {
            s.push_str(&format!(", {allowed} allowed"));
        }
        if !self.unavailable.is_empty() {
            s.push_str(&format!(
                ", {} offline or disallowed",
                self.unavailable.len()
            ));
        }
        s
    }

    /// Allowed PUs' OS indices in increasing order (what `linear` placement uses).
    pub fn allowed_os_indices(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.allowed_pus().map(|p| p.os_index).collect();
        v.sort_unstable();
        v
    }

    /// Every OS index known: PUs in the tree and [`Topology::unavailable`] ones, sorted.
    pub fn all_os_indices(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.pus.iter().map(|p| p.os_index).collect();
        v.extend(self.unavailable.iter().copied());
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Number of PUs in each core, indexed by [`Pu::core`].
    pub fn pus_per_core(&self) -> Vec<usize> {
        let n = self
            .pus
            .iter()
            .map(|p| p.core as usize + 1)
            .max()
            .unwrap_or(0);
        let mut v = vec![0; n];
        for p in &self.pus {
            v[p.core as usize] += 1;
        }
        v
    }

    /// Comma-separated OS indices with ranges (`0-3,8,10-11`).
    pub fn format_cpu_list(cpus: &[u32]) -> String {
        let mut sorted: Vec<u32> = cpus.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut out = Vec::new();
        let mut i = 0;
        while i < sorted.len() {
            let start = sorted[i];
            let mut end = start;
            while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
                i += 1;
                end = sorted[i];
            }
            out.push(if start == end {
                format!("{start}")
            } else {
                format!("{start}-{end}")
            });
            i += 1;
        }
        out.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_size_falls_back_to_the_default_and_is_at_least_a_word() {
        let l1 = |line_bytes| Cache {
            level: 1,
            line_bytes,
            ..Cache::default()
        };
        let mut t = Topology::default();
        assert_eq!(t.line_bytes_or_default(), DEFAULT_LINE_BYTES);
        t.caches = vec![l1(0)];
        assert_eq!(t.line_bytes_or_default(), DEFAULT_LINE_BYTES);
        t.caches = vec![l1(128)];
        assert_eq!(t.line_bytes_or_default(), 128);
        t.caches = vec![l1(4)];
        assert_eq!(t.line_bytes_or_default(), 8);
    }

    #[test]
    fn the_l1d_is_the_first_level_cache_of_that_cpu_with_a_size() {
        let cache = |level, size_bytes, pus: &[u32]| Cache {
            level,
            size_bytes,
            kind: "data".into(),
            pus: pus.to_vec(),
            ..Cache::default()
        };
        let mut t = Topology::default();
        assert_eq!(t.l1d_bytes(0), None);
        t.caches = vec![
            cache(2, 1 << 20, &[0, 1]),
            cache(1, 48 << 10, &[0]),
            cache(1, 0, &[1]),
            cache(1, 32 << 10, &[2]),
        ];
        assert_eq!(t.l1d_bytes(0), Some(48 << 10));
        assert_eq!(t.l1d_bytes(1), None, "a size of 0 is not known");
        assert_eq!(t.l1d_bytes(2), Some(32 << 10));
        assert_eq!(t.l1d_bytes(3), None);
    }
}
