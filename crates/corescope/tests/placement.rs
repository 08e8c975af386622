//! Placement strategies on synthetic machines: exact CPU lists per strategy.

use corescope::placement::{assign, format_assignment, order, PlacementError, Strategy};
use corescope::topology::{from_synthetic, Topology};

/// The SPARC T3-4 of seed 000: 4 packages × 16 cores × 2 integer pipelines × 4 strands.
const T3_4: &str = "pack:4 core:16 group:2 pu:4";
/// A two-socket x86: 2 × 4 cores × 2 SMT, SMT siblings numbered 8 apart.
const X86_2S: &str = "pack:2 core:4 pu:2(indexes=2*8:1*2)";

fn topo(spec: &str) -> Topology {
    from_synthetic(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn cpus(t: &Topology, s: &str, threads: usize) -> Vec<u32> {
    assign(t, &Strategy::parse(s).unwrap(), threads)
        .unwrap()
        .into_iter()
        .map(|c| c.expect("bound"))
        .collect()
}

#[test]
fn t3_4_shape() {
    let t = topo(T3_4);
    assert_eq!(t.summary(), "4 packages × 16 cores × 8 threads = 512 CPUs");
    let levels: Vec<(&str, usize)> = t
        .levels
        .iter()
        .map(|l| (l.name.as_str(), l.arity))
        .collect();
    assert_eq!(
        levels,
        [("package", 4), ("core", 16), ("group", 2), ("pu", 4)]
    );
    // OS CPU 100: package 0, core 12, second pipeline, first strand.
    let p = t.pu(100).unwrap();
    assert_eq!((p.package, p.core, p.slot), (0, 12, 4));
    assert_eq!(p.path, [0, 12, 1, 0]);
}

#[test]
fn t3_4_linear_and_compact_follow_the_ids() {
    let t = topo(T3_4);
    let all: Vec<u32> = (0..512).collect();
    assert_eq!(cpus(&t, "linear", 512), all);
    assert_eq!(cpus(&t, "compact", 512), all);
}

#[test]
fn t3_4_scatter_is_the_seeds_round_robin() {
    let t = topo(T3_4);
    let got = cpus(&t, "scatter", 512);
    assert_eq!(&got[..8], &[0, 128, 256, 384, 8, 136, 264, 392]);
    assert_eq!(&got[60..68], &[120, 248, 376, 504, 4, 132, 260, 388]);
    assert_eq!(&got[128..132], &[1, 129, 257, 385]);
    assert_eq!(&got[192..196], &[5, 133, 261, 389]);
    // Digit reversal over (package, core, pipeline, strand), package fastest.
    for (i, &cpu) in got.iter().enumerate() {
        let (pkg, core, pipe, strand) = (i % 4, (i / 4) % 16, (i / 64) % 2, (i / 128) % 4);
        assert_eq!(
            cpu as usize,
            pkg * 128 + core * 8 + pipe * 4 + strand,
            "thread {i}"
        );
    }
    // Threads 0-63: slot 0 of every core; 64-127 slot 4; 128-191 slot 1; 192-255 slot 5.
    for (range, slot) in [(0..64, 0), (64..128, 4), (128..192, 1), (192..256, 5)] {
        let mut cores: Vec<u32> = got[range.clone()]
            .iter()
            .map(|&c| {
                let p = t.pu(c).unwrap();
                assert_eq!(p.slot, slot, "thread range {range:?}");
                p.core
            })
            .collect();
        cores.sort_unstable();
        assert_eq!(cores, (0..64).collect::<Vec<u32>>());
    }
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..512).collect::<Vec<u32>>());
}

#[test]
fn t3_4_wraps_around() {
    let t = topo(T3_4);
    let got = cpus(&t, "scatter", 515);
    assert_eq!(&got[512..], &[0, 128, 256]);
    assert_eq!(cpus(&t, "linear", 514)[512..], [0, 1]);
}

#[test]
fn x86_two_sockets_siblings_eight_apart() {
    let t = topo(X86_2S);
    assert_eq!(t.summary(), "2 packages × 4 cores × 2 threads = 16 CPUs");
    // Core 0 holds CPUs 0 and 8.
    assert_eq!(t.pu(8).map(|p| (p.core, p.slot)), Some((0, 1)));
    assert_eq!(cpus(&t, "linear", 16), (0..16).collect::<Vec<u32>>());
    assert_eq!(
        cpus(&t, "compact", 16),
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    assert_eq!(
        cpus(&t, "scatter", 16),
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
    );
    assert_eq!(
        cpus(&t, "scatter", 20),
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4, 1, 5]
    );
    assert_eq!(cpus(&t, "compact", 18)[16..], [0, 8]);
    assert_eq!(cpus(&t, "0,2,4-7", 8), [0, 2, 4, 5, 6, 7, 0, 2]);
    assert_eq!(cpus(&t, "9,3", 3), [9, 3, 9]);
}

#[test]
fn one_cpu_machine() {
    let t = topo("pu:1");
    assert_eq!(t.summary(), "1 package × 1 core × 1 thread = 1 CPU");
    for s in ["linear", "compact", "scatter", "0"] {
        assert_eq!(cpus(&t, s, 3), [0, 0, 0], "{s}");
    }
    assert_eq!(assign(&t, &Strategy::Unbound, 2).unwrap(), [None, None]);
    assert!(assign(&t, &Strategy::List(vec![1]), 1).is_err());
}

#[test]
fn unbound_binds_nothing() {
    let t = topo(X86_2S);
    let got = assign(&t, &Strategy::Unbound, 4).unwrap();
    assert_eq!(got, [None; 4]);
    assert_eq!(format_assignment(&got), "-,-,-,-");
    assert_eq!(
        format_assignment(&assign(&t, &Strategy::Scatter, 3).unwrap()),
        "0,4,1"
    );
}

#[test]
fn zero_threads_give_an_empty_list() {
    let t = topo(X86_2S);
    assert_eq!(assign(&t, &Strategy::Scatter, 0).unwrap(), []);
}

#[test]
fn parse_rejects_garbage() {
    assert_eq!(
        Strategy::parse("0,2,4-7").unwrap(),
        Strategy::List(vec![0, 2, 4, 5, 6, 7])
    );
    for bad in ["", "7-4", "1,,2", "zigzag", "1-x", "-", "4-", "1 2"] {
        let e = Strategy::parse(bad).unwrap_err();
        assert!(matches!(e, PlacementError::Parse(_)), "{bad:?}");
        assert!(
            e.to_string().contains("linear, compact, scatter, unbound"),
            "{e}"
        );
    }
}

#[test]
fn validate_names_the_bad_cpu_and_the_allowed_set() {
    let t = topo(X86_2S);
    assert!(Strategy::parse("0-15").unwrap().validate(&t).is_ok());
    assert!(Strategy::Scatter.validate(&t).is_ok());
    let e = Strategy::parse("3,16").unwrap().validate(&t).unwrap_err();
    assert!(
        matches!(e, PlacementError::NoSuchCpu { cpu: 16, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("CPU 16") && msg.contains("0-15"), "{msg}");
    assert!(assign(&t, &Strategy::List(vec![16]), 1).is_err());
}

#[test]
fn every_strategy_gives_each_cpu_once_per_round() {
    for spec in [
        T3_4,
        X86_2S,
        "pu:1",
        "pack:2 l3:2 core:3 pu:2",
        "core:5 pu:1",
    ] {
        let t = topo(spec);
        let n = t.pus.len();
        for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
            let one = order(&t, &s);
            let mut sorted = one.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), n, "{spec} {s:?}");
            let two: Vec<u32> = assign(&t, &s, 2 * n)
                .unwrap()
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(&two[..n], &one[..]);
            assert_eq!(&two[n..], &one[..]);
        }
    }
}

// ------------------------------------------------------------ properties (issue 19)

mod properties {
    use std::collections::HashSet;
    use std::path::PathBuf;

    use corescope::placement::{assign, order, Strategy};
    use corescope::topology::{from_synthetic, from_xml_file, Topology};
    use proptest::prelude::*;
    use proptest::strategy::Strategy as _;

    /// The topology exports: `$CORESCOPE_TOPOLOGIES`, else `shared/topologies` beside the checkout.
    fn xml_dir() -> PathBuf {
        std::env::var_os("CORESCOPE_TOPOLOGIES").map_or_else(
            || {
                PathBuf::from(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../../shared/topologies"
                ))
            },
            PathBuf::from,
        )
    }

    /// Every XML export with its name, or none (with a note).
    fn xml_topologies() -> Vec<(String, Topology)> {
        let dir_path = xml_dir();
        let Ok(dir) = std::fs::read_dir(&dir_path) else {
            println!(
                "note: {} not found; skipping the XML placement properties",
                dir_path.display()
            );
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "xml"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                let t = from_xml_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                (f.display().to_string(), t)
            })
            .collect()
    }

    fn xml(name: &str) -> Option<Topology> {
        let path = xml_dir().join(name);
        path.exists()
            .then(|| from_xml_file(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
    }

    /// Synthetic machines: the T3-4, x86 boxes, NUMA nodes inside and above packages.
    const SPECS: &[&str] = &[
        "pack:4 core:16 group:2 pu:4",
        "pack:2 core:4 pu:2(indexes=2*8:1*2)",
        "pack:2 [numa] l3:2 core:4 pu:2",
        "pack:4 numa:2 core:8 pu:1",
        "group:4 numa:2 pack:2 core:4 pu:2",
        "numa:8 pack:8 core:1 pu:4",
        "pack:2 die:2 l3:2 core:3 pu:2",
        "pu:1",
    ];

    fn node(t: &Topology, cpu: u32) -> Option<u32> {
        t.pu(cpu).and_then(|p| p.numa_node)
    }

    fn package(t: &Topology, cpu: u32) -> u32 {
        t.pu(cpu).map_or(u32::MAX, |p| p.package)
    }

    /// The first k threads of scatter touch min(k, nodes) NUMA nodes and
    /// min(k, packages) packages, among the allowed CPUs of the most performant kind.
    fn check_scatter_spreads(t: &Topology, what: &str) {
        let got = order(t, &Strategy::Scatter);
        let top = t.allowed_pus().map(|p| t.kind_rank(p)).min().unwrap_or(0);
        let first_kind: Vec<&corescope::topology::Pu> =
            t.allowed_pus().filter(|p| t.kind_rank(p) == top).collect();
        let nodes: HashSet<Option<u32>> = first_kind.iter().map(|p| p.numa_node).collect();
        let packages: HashSet<u32> = first_kind.iter().map(|p| p.package).collect();
        for k in 1..=first_kind.len() {
            let n: HashSet<Option<u32>> = got[..k].iter().map(|&c| node(t, c)).collect();
            let s: HashSet<u32> = got[..k].iter().map(|&c| package(t, c)).collect();
            assert_eq!(
                n.len(),
                k.min(nodes.len()),
                "{what}: scatter's first {k} threads {:?} touch NUMA nodes {n:?}",
                &got[..k]
            );
            assert_eq!(
                s.len(),
                k.min(packages.len()),
                "{what}: scatter's first {k} threads {:?} touch packages {s:?}",
                &got[..k]
            );
        }
    }

    /// Compact stays within a NUMA node until the node's allowed CPUs are used up,
    /// and never comes back to a node it left.
    fn check_compact_fills_nodes(t: &Topology, what: &str) {
        let got = order(t, &Strategy::Compact);
        let mut left: HashSet<Option<u32>> = HashSet::new();
        for w in got.windows(2) {
            let (a, b) = (node(t, w[0]), node(t, w[1]));
            if a != b {
                let used: usize = got
                    .iter()
                    .take_while(|&&c| c != w[1])
                    .filter(|&&c| node(t, c) == a)
                    .count();
                let size = t.allowed_pus().filter(|p| p.numa_node == a).count();
                assert_eq!(used, size, "{what}: compact left node {a:?} early: {got:?}");
                assert!(left.insert(a), "{what}: compact came back to {a:?}");
                assert!(!left.contains(&b), "{what}: compact came back to {b:?}");
            }
        }
    }

    /// No strategy ever chooses an offline or disallowed CPU; each allowed CPU
    /// is chosen once per round; kinds are filled most performant first.
    fn check_allowed_and_kinds(t: &Topology, what: &str) {
        let allowed: HashSet<u32> = t.allowed_os_indices().into_iter().collect();
        for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
            let got = assign(t, &s, 3 * allowed.len()).unwrap();
            assert!(
                got.iter().flatten().all(|c| allowed.contains(c)),
                "{what}: {s:?} chose a CPU outside {allowed:?}"
            );
            let one: HashSet<u32> = order(t, &s).into_iter().collect();
            assert_eq!(one, allowed, "{what}: {s:?}");
        }
        let ranks = |s: &Strategy| -> Vec<usize> {
            order(t, s)
                .iter()
                .map(|&c| t.kind_rank(t.pu(c).unwrap()))
                .collect()
        };
        let scatter = ranks(&Strategy::Scatter);
        assert!(
            scatter.windows(2).all(|w| w[0] <= w[1]),
            "{what}: scatter {scatter:?}"
        );
        // Compact fills kinds in order within each NUMA node.
        let compact = order(t, &Strategy::Compact);
        for w in compact.windows(2) {
            if node(t, w[0]) == node(t, w[1]) {
                let (a, b) = (t.pu(w[0]).unwrap(), t.pu(w[1]).unwrap());
                assert!(
                    t.kind_rank(a) <= t.kind_rank(b),
                    "{what}: compact {compact:?}"
                );
            }
        }
    }

    /// `N<node>` and `S<package>` expressions select exactly their domain's
    /// allowed CPUs, in topology order.
    fn check_expressions(t: &Topology, what: &str) {
        let mut nodes: Vec<u32> = t.allowed_pus().filter_map(|p| p.numa_node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        for n in nodes {
            let want: Vec<u32> = t
                .allowed_pus()
                .filter(|p| p.numa_node == Some(n))
                .map(|p| p.os_index)
                .collect();
            let s = Strategy::parse(&format!("N{n}")).unwrap();
            assert_eq!(order(t, &s), want, "{what}: N{n}");
            let s = Strategy::parse(&format!("N{n}:0-{}", want.len() - 1)).unwrap();
            assert_eq!(order(t, &s), want, "{what}: N{n}:0-..");
            let s = Strategy::parse(&format!("N{n}:{}", want.len())).unwrap();
            assert!(s.validate(t).is_err(), "{what}: N{n} index past the end");
        }
        let mut pkgs: Vec<u32> = t.allowed_pus().map(|p| p.package).collect();
        pkgs.sort_unstable();
        pkgs.dedup();
        for k in pkgs {
            let want: Vec<u32> = t
                .allowed_pus()
                .filter(|p| p.package == k)
                .map(|p| p.os_index)
                .collect();
            let s = Strategy::parse(&format!("S{k}:0-{}", want.len() - 1)).unwrap();
            assert_eq!(order(t, &s), want, "{what}: S{k}");
        }
    }

    fn check_all(t: &Topology, what: &str) {
        check_scatter_spreads(t, what);
        check_compact_fills_nodes(t, what);
        check_allowed_and_kinds(t, what);
        check_expressions(t, what);
    }

    #[test]
    fn every_xml_export() {
        for (what, t) in xml_topologies() {
            check_all(&t, &what);
        }
    }

    #[test]
    fn synthetic_specs() {
        for spec in SPECS {
            let t = from_synthetic(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            check_all(&t, spec);
        }
    }

    #[test]
    fn scatter_uses_every_memory_controller_first() {
        let Some(t) = xml("256ppc-8n8s4t.xml") else {
            return;
        };
        let got = order(&t, &Strategy::Scatter);
        let nodes: HashSet<Option<u32>> = got[..8].iter().map(|&c| node(&t, c)).collect();
        assert_eq!(nodes.len(), 8, "{:?}", &got[..8]);
        let Some(t) = xml("96em64t-4n4d3ca2co-pci.xml") else {
            return;
        };
        let got = order(&t, &Strategy::Scatter);
        let nodes: HashSet<Option<u32>> = got[..4].iter().map(|&c| node(&t, c)).collect();
        assert_eq!(nodes.len(), 4, "{:?}", &got[..4]);
    }

    #[test]
    fn hybrid_fills_p_cores_first() {
        let Some(t) = xml("20em64t-hybrid-1p6c2t+2ca4co1t.xml") else {
            return;
        };
        let labels: Vec<&str> = t.cpu_kinds.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(labels, ["P", "E"]);
        // 8 threads: the six P-cores, then two P siblings; 12: every P thread.
        assert_eq!(
            order(&t, &Strategy::Scatter)[..8],
            [0, 2, 4, 6, 8, 10, 1, 3]
        );
        let mut twelve = order(&t, &Strategy::Scatter)[..12].to_vec();
        twelve.sort_unstable();
        assert_eq!(twelve, (0..12).collect::<Vec<u32>>());
        assert_eq!(order(&t, &Strategy::Compact), (0..20).collect::<Vec<u32>>());
        let kind = |s: &str| order(&t, &Strategy::parse(s).unwrap());
        assert_eq!(kind("kind:P"), (0..12).collect::<Vec<u32>>());
        assert_eq!(kind("kind:e"), (12..20).collect::<Vec<u32>>());
        assert_eq!(kind("kind:E:0,2@kind:P:0"), [12, 14, 0]);
        let e = Strategy::parse("kind:X").unwrap().validate(&t).unwrap_err();
        assert!(e.to_string().contains("CPU kinds: P, E"), "{e}");
        let Some(t) = xml("fakecpukinds.xml") else {
            return;
        };
        // Three kinds: the most performant (hwloc efficiency 10, CPU 3) first.
        assert_eq!(order(&t, &Strategy::Scatter)[0], 3);
        assert_eq!(order(&t, &Strategy::Compact)[0], 3);
    }

    #[test]
    fn expressions_name_the_bad_domain() {
        let Some(t) = xml("16amd64-8n2c-cpusets.xml") else {
            return;
        };
        // Node 0's memory is outside the allowed node set; its CPUs may be used.
        assert_eq!(order(&t, &Strategy::parse("N0").unwrap()), [0, 1]);
        assert_eq!(order(&t, &Strategy::parse("S6:1").unwrap()), [13]);
        let e = Strategy::parse("N5:0").unwrap().validate(&t).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("NUMA node 5 has no CPU here") && msg.contains("0-3,6-7"),
            "{msg}"
        );
        let e = Strategy::parse("S4").unwrap().validate(&t).unwrap_err();
        assert!(
            e.to_string()
                .contains("packages with allowed CPUs: 0-3,6-7"),
            "{e}"
        );
        assert!(assign(&t, &Strategy::parse("S4").unwrap(), 1).is_err());
    }

    /// A synthetic spec from small random shapes: packages, an optional NUMA
    /// level inside or above them, cores, PUs.
    fn spec() -> impl proptest::strategy::Strategy<Value = String> {
        (1usize..4, 0usize..3, 1usize..4, 1usize..5, 1usize..4).prop_map(
            |(pack, numa, numa_where, core, pu)| match (numa, numa_where % 2) {
                (0, _) => format!("pack:{pack} core:{core} pu:{pu}"),
                (n, 0) => format!("pack:{pack} numa:{} core:{core} pu:{pu}", n + 1),
                (n, _) => format!("numa:{} pack:{pack} core:{core} pu:{pu}", n + 1),
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn placement_properties_on_random_machines(spec in spec(), mask in any::<u64>()) {
            let mut t = from_synthetic(&spec).unwrap();
            // Disallow some CPUs (never all).
            for p in t.pus.iter_mut() {
                if p.os_index < 64 && mask & (1 << p.os_index) != 0 {
                    p.allowed = false;
                }
            }
            if t.allowed_pus().next().is_none() {
                t.pus[0].allowed = true;
            }
            check_allowed_and_kinds(&t, &spec);
            check_compact_fills_nodes(&t, &spec);
            check_expressions(&t, &spec);
            // On the full machine, scatter spreads as far as the tree allows.
            let full = from_synthetic(&spec).unwrap();
            check_scatter_spreads(&full, &spec);
        }
    }
}
