//! Topology discovery: synthetic specs, the hwloc XML exports in
//! `shared/topologies/`, and this machine.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use corescope::placement::{assign, order, PlacementError, Strategy};
use corescope::render::topo::topo_table;
use corescope::topology::{detect, from_synthetic, from_xml_file, Topology, TopologyError};

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

/// Every XML export, or `None` (with a note) if the directory is absent.
fn xml_files() -> Option<Vec<PathBuf>> {
    let dir_path = xml_dir();
    let Ok(dir) = std::fs::read_dir(&dir_path) else {
        println!(
            "note: {} not found; skipping the XML topology tests",
            dir_path.display()
        );
        return None;
    };
    let mut files: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    Some(files)
}

/// One XML export by name, or `None` (with a note).
fn xml(name: &str) -> Option<Topology> {
    let path = xml_dir().join(name);
    if !path.exists() {
        println!("note: {} not found; skipping", path.display());
        return None;
    }
    Some(from_xml_file(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Structural invariants every topology must satisfy.
fn check_invariants(t: &Topology, what: &str) {
    assert!(!t.pus.is_empty(), "{what}: no PUs");
    let last = t
        .levels
        .last()
        .unwrap_or_else(|| panic!("{what}: no levels"));
    assert_eq!(last.name, "pu", "{what}");
    let mut paths = HashSet::new();
    let mut ids = HashSet::new();
    for p in &t.pus {
        assert!(ids.insert(p.os_index), "{what}: CPU {} twice", p.os_index);
        assert_eq!(p.path.len(), t.levels.len(), "{what}: CPU {}", p.os_index);
        for (k, (&d, l)) in p.path.iter().zip(&t.levels).enumerate() {
            assert!(
                (d as usize) < l.arity,
                "{what}: CPU {} level {k}",
                p.os_index
            );
        }
        assert!(
            paths.insert(p.path.clone()),
            "{what}: path {:?} twice",
            p.path
        );
        assert!((p.core as usize) < t.cores, "{what}");
        assert!(!t.unavailable.contains(&p.os_index), "{what}");
    }
    let packages: HashSet<u32> = t.pus.iter().map(|p| p.package).collect();
    assert!(packages.len() <= t.packages, "{what}: {packages:?}");
    assert!(
        t.levels[..t.levels.len() - 1].iter().all(|l| l.arity > 1),
        "{what}: {:?}",
        t.levels
    );
    for c in &t.caches {
        assert!(
            c.pus.iter().all(|cpu| ids.contains(cpu)),
            "{what}: cache with unknown CPU"
        );
    }
}

/// Each named strategy yields every allowed CPU exactly once per round, and
/// nothing else; two rounds repeat the first.
fn check_rounds(t: &Topology, what: &str) {
    let allowed: Vec<u32> = t.allowed_os_indices();
    assert!(!allowed.is_empty(), "{what}");
    for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
        let one = order(t, &s);
        let mut sorted = one.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, allowed, "{what}: {s:?}");
        let n = one.len();
        let two: Vec<u32> = assign(t, &s, 2 * n + 1)
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(two.len(), 2 * n + 1);
        assert_eq!(&two[..n], &one[..], "{what}: {s:?}");
        assert_eq!(&two[n..2 * n], &one[..], "{what}: {s:?}");
        assert_eq!(two[2 * n], one[0]);
    }
}

#[test]
fn every_xml_export_loads_and_places() {
    let Some(files) = xml_files() else { return };
    assert!(!files.is_empty());
    for f in &files {
        let t = from_xml_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let what = f.display().to_string();
        check_invariants(&t, &what);
        check_rounds(&t, &what);
        assert!(t.source.starts_with("xml: "), "{what}");
        let json = serde_json::to_string(&t).unwrap();
        let back: Topology = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t, "{what}: JSON round trip");
        let table = topo_table(&t);
        assert!(table.starts_with(&t.summary()), "{what}");
        let width = table
            .lines()
            .filter(|l| l.starts_with(['│', '┌', '╞', '└', '├']))
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        assert!(width <= 100, "{what}: table {width} columns wide");
        let rows = table.lines().filter(|l| l.starts_with('│')).count();
        assert_eq!(
            rows,
            1 + t.pus.len() + t.unavailable.len(),
            "{what}: one row per CPU"
        );
    }
}

#[test]
fn classic_x86_numbering() {
    let Some(t) = xml("16em64t-4s2c2t.xml") else {
        return;
    };
    assert_eq!(t.summary(), "4 packages × 2 cores × 2 threads = 16 CPUs");
    assert_eq!((t.packages, t.cores, t.pus.len()), (4, 8, 16));
    let levels: Vec<(&str, usize)> = t
        .levels
        .iter()
        .map(|l| (l.name.as_str(), l.arity))
        .collect();
    assert_eq!(levels, [("package", 4), ("core", 2), ("pu", 2)]);
    // SMT siblings are numbered 8 apart: slot 1 of each core is slot 0 + 8.
    for core in 0..8 {
        let mut ids: Vec<u32> = t
            .pus
            .iter()
            .filter(|p| p.core == core)
            .map(|p| p.os_index)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[1], ids[0] + 8, "core {core}");
    }
    assert_eq!(order(&t, &Strategy::Scatter)[..4], [0, 1, 2, 3]);
    let compact = order(&t, &Strategy::Compact);
    assert_eq!(compact[1], compact[0] + 8);
    // Caches: L1d and L2 per core (shared by 2), L3 per package (shared by 4).
    let sharing: Vec<(u8, usize)> = t
        .caches_of(0)
        .iter()
        .map(|c| (c.level, c.pus.len()))
        .collect();
    assert_eq!(sharing, [(1, 2), (2, 2), (3, 4)]);
}

#[test]
fn big_smp_siblings_192_apart() {
    let Some(t) = xml("192em64t-24n8c2t.xml") else {
        return;
    };
    assert_eq!(
        t.summary(),
        "24 packages × 8 cores × 2 threads = 384 CPUs, 24 NUMA nodes"
    );
    let p = t.pu(0).unwrap();
    assert!(t.pus.iter().any(|q| q.core == p.core && q.os_index == 192));
}

#[test]
fn disallowed_cpus_are_never_assigned_and_lists_naming_them_are_rejected() {
    let Some(t) = xml("16amd64-8n2c-cpusets.xml") else {
        return;
    };
    let allowed = t.allowed_os_indices();
    assert_eq!(allowed, [0, 1, 2, 3, 5, 6, 12, 13, 14, 15]);
    assert_eq!(t.unavailable, [4, 7, 8, 9, 10, 11]);
    // Every CPU shows its NUMA node, also where the node lies outside the allowed
    // node set (1-5); packages keep their OS numbers (CPU 12 is package 6).
    let where_: Vec<(u32, u32, Option<u32>)> = t
        .pus
        .iter()
        .map(|p| (p.os_index, p.package, p.numa_node))
        .collect();
    assert_eq!(
        where_,
        [
            (0, 0, Some(0)),
            (1, 0, Some(0)),
            (2, 1, Some(1)),
            (3, 1, Some(1)),
            (5, 2, Some(2)),
            (6, 3, Some(3)),
            (12, 6, Some(6)),
            (13, 6, Some(6)),
            (14, 7, Some(7)),
            (15, 7, Some(7)),
        ]
    );
    assert!(t.summary().contains("8 NUMA nodes"), "{}", t.summary());
    let forbidden: HashSet<u32> = [4, 7, 8, 9, 10, 11].into();
    for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
        let got = assign(&t, &s, 64).unwrap();
        assert!(
            got.iter().flatten().all(|c| !forbidden.contains(c)),
            "{s:?}: {got:?}"
        );
    }
    let e = Strategy::parse("0,4").unwrap().validate(&t).unwrap_err();
    assert!(
        matches!(e, PlacementError::NotAllowed { cpu: 4, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("CPU 4") && msg.contains("0-3,5-6,12-15"),
        "{msg}"
    );
    assert!(assign(&t, &Strategy::List(vec![0, 4]), 2).is_err());
    let e = Strategy::List(vec![16]).validate(&t).unwrap_err();
    assert!(
        matches!(e, PlacementError::NoSuchCpu { cpu: 16, .. }),
        "{e:?}"
    );
    assert!(Strategy::parse("12-15,0").unwrap().validate(&t).is_ok());
}

#[test]
fn pus_outside_the_allowed_cpuset_are_marked() {
    // A synthetic machine restricted by an XML-like allowed set is not expressible
    // in synthetic syntax; build one by hand from a loaded machine instead.
    let mut t = from_synthetic("pack:2 core:2 pu:2").unwrap();
    for p in t.pus.iter_mut().filter(|p| p.os_index % 2 == 1) {
        p.allowed = false;
    }
    assert_eq!(t.allowed_os_indices(), [0, 2, 4, 6]);
    assert!(t.summary().ends_with(", 4 allowed"), "{}", t.summary());
    assert_eq!(order(&t, &Strategy::Scatter), [0, 4, 2, 6]);
    assert_eq!(order(&t, &Strategy::Compact), [0, 2, 4, 6]);
    let e = Strategy::List(vec![3]).validate(&t).unwrap_err();
    assert!(
        matches!(e, PlacementError::NotAllowed { cpu: 3, .. }),
        "{e:?}"
    );
    assert!(topo_table(&t).contains("┆ no "));
}

#[test]
fn offline_cpus_are_never_assigned() {
    let Some(t) = xml("16em64t-4s2c2t-offlines.xml") else {
        return;
    };
    assert_eq!(t.allowed_os_indices(), [0, 1, 3, 4, 6, 12, 15]);
    assert_eq!(t.unavailable, [2, 5, 7, 8, 9, 10, 11, 13, 14]);
    assert!(
        t.summary().ends_with(", 9 offline or disallowed"),
        "{}",
        t.summary()
    );
    let offline: HashSet<u32> = t.unavailable.iter().copied().collect();
    for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
        assert!(assign(&t, &s, 30)
            .unwrap()
            .iter()
            .flatten()
            .all(|c| !offline.contains(c)));
    }
    let e = Strategy::List(vec![2]).validate(&t).unwrap_err();
    assert!(e.to_string().contains("offline"), "{e}");

    let Some(t) = xml("offline-cpu0-node0.xml") else {
        return;
    };
    assert!(t.pu(0).is_none() && t.unavailable.contains(&0));
    assert_eq!(order(&t, &Strategy::Linear)[0], 4);
}

#[test]
fn hybrid_machine_kinds_and_levels() {
    let Some(t) = xml("20em64t-hybrid-1p6c2t+2ca4co1t.xml") else {
        return;
    };
    assert_eq!(t.pus.len(), 20);
    assert_eq!(t.cores, 14);
    assert_eq!(t.pu(0).and_then(|p| p.kind.as_deref()), Some("P"));
    assert_eq!(t.pu(19).and_then(|p| p.kind.as_deref()), Some("E"));
    // Not "1 package × 14 cores × 2 threads": the P- and E-cores each in their terms.
    assert_eq!(
        t.summary(),
        "1 package × (6 P cores × 2 threads + 8 E cores × 1 thread) = 20 CPUs"
    );
    let kinds: Vec<(&str, String)> = t
        .cpu_kinds
        .iter()
        .map(|k| (k.label.as_str(), Topology::format_cpu_list(&k.cpus)))
        .collect();
    assert_eq!(
        kinds,
        [("P", "0-11".to_string()), ("E", "12-19".to_string())]
    );
    let table = topo_table(&t);
    assert!(
        table.contains("CPU kinds, most performant first"),
        "{table}"
    );
    assert!(table.contains("P 0-11 (FrequencyMaxMHz=5000)"), "{table}");
    // E-cores share an L2 by four.
    assert!(t
        .caches_of(12)
        .iter()
        .any(|c| c.level == 2 && c.pus.len() == 4));
    let Some(t) = xml("fakecpukinds.xml") else {
        return;
    };
    assert!(t.pus.iter().all(|p| p.kind.is_some()));
}

#[test]
fn synthetic_specs() {
    let t = from_synthetic("pack:2 core:4 pu:2(indexes=2*8:1*2)").unwrap();
    check_invariants(&t, "x86");
    check_rounds(&t, "x86");
    assert!(t.source.starts_with("synthetic: "));
    let t = from_synthetic("pu:1").unwrap();
    assert_eq!(t.pus.len(), 1);
    assert_eq!(t.levels.len(), 1);
    let t = from_synthetic("pack:4 core:16 group:2 pu:4").unwrap();
    check_invariants(&t, "t3-4");
    let table = topo_table(&t);
    assert_eq!(table.lines().filter(|l| l.starts_with('│')).count(), 513);
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
}

#[test]
fn invalid_synthetic_spec_is_an_error_not_a_panic() {
    for spec in [
        "",
        "   ",
        "pack:2 foo:3",
        "core:2 pack:2",
        "pack:x",
        "pu:0",
        "pack:4000000 core:4000000 pu:8",
        "pack:2\0core:2",
    ] {
        let e = from_synthetic(spec).expect_err(spec);
        assert!(
            matches!(e, TopologyError::InvalidSynthetic { .. }),
            "{spec:?}: {e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(&format!("\"{spec}\"")), "{msg}");
        assert!(msg.contains("pack:4 core:16 group:2 pu:4"), "{msg}");
    }
}

#[test]
fn topologies_stop_at_max_pus_with_a_reason() {
    use corescope::topology::MAX_PUS;
    // At the limit: built (16 × 128 × 8 = 16,384 PUs).
    let t = from_synthetic("pack:16 core:128 pu:8").unwrap();
    assert_eq!(t.pus.len(), MAX_PUS);
    // Above it: refused before hwloc builds it, saying the limit and what to do.
    for spec in ["pack:16 core:128 pu:9", "pack:1024 core:1024 pu:1"] {
        let e = from_synthetic(spec).expect_err(spec).to_string();
        assert!(e.contains("more than the 16384 PUs"), "{e}");
        assert!(e.contains("one package"), "{e}");
    }
    // Any other way in (a run file, an XML export): `check` says the same.
    let mut big = t.clone();
    big.pus.push(corescope::topology::Pu {
        os_index: u32::try_from(MAX_PUS).unwrap(),
        ..Default::default()
    });
    assert!(big.check().unwrap_err().to_string().contains("16385 PUs"));
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("big.xml");
    let pus: String = (0..=MAX_PUS)
        .map(|i| format!("<object type=\"PU\" os_index=\"{i}\"/>"))
        .collect();
    std::fs::write(
        &xml,
        format!("<?xml version=\"1.0\"?><topology version=\"2.0\"><object type=\"Machine\">{pus}</object></topology>"),
    )
    .unwrap();
    let e = from_xml_file(&xml).unwrap_err().to_string();
    assert!(e.contains("more than the 16384 PUs"), "{e}");
}

#[test]
fn bad_xml_paths_are_errors() {
    let e = from_xml_file(Path::new("/nonexistent/machine.xml")).unwrap_err();
    assert!(matches!(e, TopologyError::XmlRead { .. }), "{e:?}");
    assert!(e.to_string().contains("/nonexistent/machine.xml"));
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.xml");
    std::fs::write(&junk, "this is not XML").unwrap();
    let e = from_xml_file(&junk).unwrap_err();
    assert!(matches!(e, TopologyError::InvalidXml { .. }), "{e:?}");
    assert!(e.to_string().contains("junk.xml"), "{e}");
    let e = from_xml_file(dir.path()).unwrap_err();
    assert!(matches!(e, TopologyError::XmlRead { .. }), "{e:?}");
}

#[test]
fn this_machine() {
    let t = detect().expect("hwloc discovers this machine");
    check_invariants(&t, "this machine");
    check_rounds(&t, "this machine");
    assert_eq!(t.source, "hwloc");
    // As many PUs as the kernel has online CPUs.
    if let Some(online) = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| Strategy::parse(s.trim()).ok())
    {
        let Strategy::List(online) = online else {
            unreachable!()
        };
        assert_eq!(t.pus.len(), online.len());
        let n = online.len();
        let s = t.summary();
        assert!(s.contains(&format!("= {n} CPU")), "{s}");
        println!("this machine: {s}");
    }
    // The CPUs this process may run on are allowed PUs.
    let affinity = corescope::affinity::allowed_current().unwrap_or_default();
    for cpu in affinity {
        assert!(t.pu(cpu).is_some_and(|p| p.allowed), "CPU {cpu}");
    }
    assert!(!t.caches.is_empty() || cfg!(not(target_arch = "x86_64")));
}

#[test]
fn an_affinity_mask_restricts_the_allowed_cpus() {
    let mut t = corescope::topology::from_synthetic("pack:1 core:4 pu:2").unwrap();
    assert_eq!(t.allowed_count(), 8);
    corescope::topology::restrict_to(&mut t, &[0, 1, 5]);
    assert_eq!(t.allowed_os_indices(), vec![0, 1, 5]);
    // A mask naming no CPU of the machine changes nothing.
    let mut u = corescope::topology::from_synthetic("pack:1 core:4 pu:2").unwrap();
    corescope::topology::restrict_to(&mut u, &[99]);
    assert_eq!(u.allowed_count(), 8);
}

/// hwloc-calc's answer (`--intersect LEVEL`) for each `pu:<OS index>`, one
/// string per CPU (empty where hwloc-calc finds no object), or `None` when
/// hwloc-calc cannot be run.
fn hwloc_calc(file: &Path, level: &str, cpus: &[u32], physical: bool) -> Option<Vec<String>> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("hwloc-calc");
    cmd.arg("-i").arg(file).arg("--whole-system");
    if physical {
        cmd.arg("--physical");
    } else {
        cmd.args(["--pi", "--lo"]);
    }
    let mut child = cmd
        .args(["--intersect", level])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let input: String = cpus.iter().map(|c| format!("pu:{c}\n")).collect();
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        // In stdin mode hwloc-calc first says so on stdout.
        .filter(|l| !l.starts_with("Waiting for locations"))
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(
        lines.len(),
        cpus.len(),
        "hwloc-calc {level} on {}",
        file.display()
    );
    Some(lines)
}

/// The first NUMA node in a PU's `complete_nodeset` in an hwloc XML export.
fn xml_complete_node(xml: &str, cpu: u32) -> Option<u32> {
    let tag = format!("type=\"PU\" os_index=\"{cpu}\"");
    let at = xml.find(&tag)?;
    let rest = &xml[at..];
    let rest = &rest[..rest.find('>')?];
    let v = rest
        .split("complete_nodeset=\"")
        .nth(1)?
        .split('"')
        .next()?;
    // hwloc bitmaps: comma-separated 32-bit hex words, most significant first.
    let words: Vec<u32> = v
        .split(',')
        .map(|w| u32::from_str_radix(w.trim_start_matches("0x"), 16).ok())
        .collect::<Option<_>>()?;
    words
        .iter()
        .rev()
        .enumerate()
        .find_map(|(i, &w)| (w != 0).then(|| i as u32 * 32 + w.trailing_zeros()))
}

#[test]
fn one_numbering_convention_checked_against_hwloc_calc() {
    let Some(files) = xml_files() else { return };
    let have = std::process::Command::new("hwloc-calc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        println!("note: hwloc-calc not found (Debian package hwloc); skipping the numbering check");
        return;
    }
    for f in &files {
        let t = from_xml_file(f).unwrap();
        let what = f.display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        let cpus: Vec<u32> = t.pus.iter().map(|p| p.os_index).collect();
        let ours: [(&str, Vec<Option<u32>>); 3] = [
            ("package", t.pus.iter().map(|p| Some(p.package)).collect()),
            ("numa", t.pus.iter().map(|p| p.numa_node).collect()),
            ("core", t.pus.iter().map(|p| p.core_os_index).collect()),
        ];
        for (level, mine) in ours {
            let physical = hwloc_calc(f, level, &cpus, true).unwrap();
            let logical = hwloc_calc(f, level, &cpus, false).unwrap();
            let convention_logical = t.logical_levels.iter().any(|l| l == level);
            for (i, &cpu) in cpus.iter().enumerate() {
                let theirs = if convention_logical {
                    &logical[i]
                } else {
                    &physical[i]
                };
                assert_ne!(theirs, "-1", "{what}: {level} of CPU {cpu} has no OS index");
                let first = theirs.split(',').next().unwrap_or("");
                match first.parse::<u32>() {
                    Ok(n) => assert_eq!(mine[i], Some(n), "{what}: {level} of CPU {cpu}"),
                    // hwloc-calc finds no node object (outside the allowed node
                    // set, or offline): the PU's complete node set still says.
                    Err(_) if level == "numa" => assert_eq!(
                        mine[i],
                        xml_complete_node(&text, cpu),
                        "{what}: NUMA node of CPU {cpu}"
                    ),
                    Err(_) => panic!("{what}: hwloc-calc says {theirs:?} for {level} of CPU {cpu}"),
                }
            }
        }
        let table = topo_table(&t);
        assert!(table.contains("numbering: the OS's (hwloc P#"), "{what}");
        for level in &t.logical_levels {
            assert!(
                table.contains(&format!("{level}: hwloc logical (L#)")),
                "{what}"
            );
        }
    }
}
