//! `topo --export`: the hwloc XML of every topology in `shared/topologies/` loads
//! back (in corescope through hwloc, and in hwloc's own `hwloc-info` and `lstopo`
//! where installed) to the same CPUs, cores, packages, nodes and caches, with the
//! measured distances; every pinning string parses back to the placement's CPUs,
//! oversubscribed counts wrapping around as placement does.

use std::path::{Path, PathBuf};
use std::process::Command;

use corescope::measured_topology::{
    measured_distances, DistanceMeaning, DistanceObjects, MeasuredDistances,
};
use corescope::placement::{assign, Strategy};
use corescope::render::hwloc_xml::{dropped_objects, hwloc_xml};
use corescope::render::pinning::{pinning, PinSyntax};
use corescope::topology::{from_xml_file, Topology};

/// The topology exports: `$CORESCOPE_TOPOLOGIES`, else `shared/topologies` beside the checkout.
fn xml_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("CORESCOPE_TOPOLOGIES").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/topologies"
            ))
        },
        PathBuf::from,
    );
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "note: {} not found; skipping the XML topology exports",
            dir.display()
        );
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

/// Whether an hwloc tool is installed (else the caller prints why it skips).
fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A PU latency matrix over the first CPUs and a NUMA latency matrix over every
/// node, as a run would give them.
fn synthetic_distances(t: &Topology) -> Vec<MeasuredDistances> {
    let pus: Vec<u32> = t.allowed_pus().take(5).map(|p| p.os_index).collect();
    let mut nodes: Vec<u32> = t.pus.iter().filter_map(|p| p.numa_node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let matrix = |ids: &[u32], diagonal: u64| -> Vec<u64> {
        let n = ids.len();
        (0..n * n)
            .map(|k| {
                if k / n == k % n {
                    diagonal
                } else {
                    100 + (k / n + k % n) as u64
                }
            })
            .collect()
    };
    let mut out = vec![MeasuredDistances {
        name: "corescope c2c/cas latency (ns)".into(),
        objects: DistanceObjects::Pu,
        meaning: DistanceMeaning::Latency,
        values: matrix(&pus, 0),
        indexes: pus,
    }];
    if nodes.len() >= 2 {
        out.push(MeasuredDistances {
            name: "corescope numa/latency latency (ns)".into(),
            objects: DistanceObjects::NumaNode,
            meaning: DistanceMeaning::Latency,
            values: matrix(&nodes, 90),
            indexes: nodes,
        });
    }
    out
}

/// What must survive the trip through hwloc XML.
fn shape(t: &Topology) -> impl PartialEq + std::fmt::Debug {
    (
        t.pus.clone(),
        t.caches.clone(),
        t.levels.clone(),
        t.unavailable.clone(),
        t.cpu_kinds
            .iter()
            .map(|k| (k.cpus.clone(), k.efficiency))
            .collect::<Vec<_>>(),
        (t.packages, t.cores),
    )
}

/// The CPUs with their package, node, core number and caches, in no order.
fn unordered(t: &Topology) -> impl PartialEq + std::fmt::Debug {
    let mut pus: Vec<_> = t
        .pus
        .iter()
        .map(|p| {
            (
                p.os_index,
                p.package,
                p.numa_node,
                p.core_os_index,
                p.allowed,
                p.kind.clone(),
            )
        })
        .collect();
    pus.sort_by_key(|p| p.0);
    let mut caches: Vec<_> = t
        .caches
        .iter()
        .map(|c| (c.level, c.pus.clone(), c.size_bytes))
        .collect();
    caches.sort();
    (pus, caches, t.levels.clone(), t.unavailable.clone())
}

/// Load `file` with an hwloc tool; the tool's output.
fn hwloc_tool(tool: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg("--input")
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // hwloc warns on stderr about a file it still loads ("out-of-order XML"): fail on that too.
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{tool} {args:?} --input {}: {}\n{text}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn every_topology_exports_as_hwloc_xml_that_loads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let tools = have("hwloc-info") && have("lstopo-no-graphics");
    if !tools {
        println!("note: hwloc-info or lstopo-no-graphics not installed; checking with the hwloc library only");
    }
    for path in xml_files() {
        let t = from_xml_file(&path).unwrap();
        assert_eq!(dropped_objects(&t), 0, "{}", path.display());
        let distances = synthetic_distances(&t);
        let xml = hwloc_xml(&t, &distances).unwrap();
        let out = dir.path().join(path.file_name().unwrap());
        std::fs::write(&out, &xml).unwrap();
        let back = from_xml_file(&out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if t.unavailable.is_empty() {
            assert_eq!(shape(&back), shape(&t), "{}", path.display());
        } else {
            // hwloc orders objects by their CPUs, offline ones included, whose
            // places the topology does not know: the order may differ, not the CPUs.
            assert_eq!(unordered(&back), unordered(&t), "{}", path.display());
        }
        assert_eq!(
            back.numa_nodes.min(t.numa_nodes),
            back.numa_nodes,
            "{}",
            path.display()
        );
        if tools {
            hwloc_tool("hwloc-info", &[], &out);
            let shown = hwloc_tool("lstopo-no-graphics", &["--distances"], &out);
            for d in &distances {
                assert!(
                    shown.contains(&d.name),
                    "{}: {} missing\n{shown}",
                    path.display(),
                    d.name
                );
            }
        }
    }
}

#[test]
fn a_run_files_c2c_matrix_becomes_pu_distances() {
    let run: corescope::model::RunFile =
        serde_json::from_str(include_str!("fixtures/quick.json")).unwrap();
    let d = measured_distances(&run);
    let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "corescope c2c/cas latency (ns)",
            "corescope c2c/rw latency (ns)"
        ]
    );
    assert_eq!(d[0].indexes, [0, 1]);
    assert_eq!(d[0].values, [0, 116, 116, 0]);
    let xml = hwloc_xml(&run.topology, &d).unwrap();
    assert!(xml.contains(r#"<distances2 type="PU" nbobjs="2" kind="6" name="corescope c2c/cas latency (ns)" indexing="os">"#), "{xml}");
    assert!(
        xml.contains(r#"<u64values length="12">0 116 116 0 </u64values>"#),
        "{xml}"
    );
    if have("lstopo-no-graphics") {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("quick.xml");
        std::fs::write(&f, &xml).unwrap();
        let shown = hwloc_tool("lstopo-no-graphics", &["--distances"], &f);
        assert!(shown.contains("0   116"), "{shown}");
    } else {
        println!("note: lstopo-no-graphics not installed; the XML text is checked only");
    }
}

/// The CPU of each thread, read back from one pinning form.
fn parse_back(syntax: PinSyntax, text: &str) -> Option<Vec<u32>> {
    let list =
        |s: &str| -> Option<Vec<u32>> { s.split(',').map(|c| c.trim().parse().ok()).collect() };
    match syntax {
        PinSyntax::LikwidPin => {
            // `[OMP_NUM_THREADS=N ]likwid-pin -c LIST`: thread i on entry i mod the
            // list's length (likwid-pin's round-robin), N threads or one per entry.
            let text = text.trim();
            let (threads, rest) = match text.strip_prefix("OMP_NUM_THREADS=") {
                Some(t) => {
                    let (n, rest) = t.split_once(' ')?;
                    (Some(n.parse::<usize>().ok()?), rest)
                }
                None => (None, text),
            };
            let entries = list(rest.strip_prefix("likwid-pin -c ")?)?;
            let n = threads.unwrap_or(entries.len());
            Some(entries.iter().copied().cycle().take(n).collect())
        }
        PinSyntax::Srun => list(text.trim().split("map_cpu:").nth(1)?),
        PinSyntax::OmpPlaces => {
            let places = text.split("OMP_PLACES=\"").nth(1)?.split('"').next()?;
            // Each place `{c}` holds one CPU.
            places
                .split(',')
                .map(|p| p.strip_prefix('{')?.strip_suffix('}')?.parse().ok())
                .collect()
        }
        PinSyntax::Rankfile => text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .enumerate()
            .map(|(i, l)| {
                let rest = l.strip_prefix(&format!("rank {i}="))?;
                rest.split(" slot=").nth(1)?.parse().ok()
            })
            .collect(),
    }
}

#[test]
fn every_pinning_parses_back_to_the_placements_cpus_and_wraps_when_oversubscribed() {
    let syntaxes = [
        PinSyntax::LikwidPin,
        PinSyntax::OmpPlaces,
        PinSyntax::Srun,
        PinSyntax::Rankfile,
    ];
    for path in xml_files() {
        let t = from_xml_file(&path).unwrap();
        let cpus_n = t.allowed_count();
        for strategy in [Strategy::Compact, Strategy::Scatter, Strategy::Linear] {
            for n in [1, cpus_n / 2 + 1, cpus_n, cpus_n + 3] {
                let cpus: Vec<u32> = assign(&t, &strategy, n)
                    .unwrap()
                    .into_iter()
                    .flatten()
                    .collect();
                assert_eq!(cpus.len(), n);
                for i in cpus_n..n {
                    assert_eq!(cpus[i], cpus[i - cpus_n], "wraps as placement does");
                }
                for s in syntaxes {
                    let text = pinning(s, &cpus, "node1");
                    let back = parse_back(s, &text);
                    assert_eq!(
                        back.as_deref(),
                        Some(&cpus[..]),
                        "{} {s:?}\n{text}",
                        path.display()
                    );
                }
            }
        }
    }
}

#[test]
fn the_command_exports_and_compares_a_run_file() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json");
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("corescope")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&["topo", "--from", fixture]);
    assert!(
        text.contains("topology says vs measured:\n  cores: not measured in this run"),
        "{text}"
    );
    assert!(text.contains("  NUMA: not measured in this run"), "{text}");
    let places = run(&[
        "topo",
        "--from",
        fixture,
        "--export",
        "omp-places",
        "-n",
        "3",
        "--placement",
        "compact",
    ]);
    assert_eq!(
        places,
        "OMP_NUM_THREADS=3 OMP_PROC_BIND=close OMP_PLACES=\"{0},{1},{0}\"\n"
    );
    let likwid = |n: &str, placement: &str| {
        assert_cmd::Command::cargo_bin("corescope")
            .unwrap()
            .args(["topo", "--from", fixture, "--export", "likwid-pin"])
            .args(["-n", n, "--placement", placement])
            .output()
            .unwrap()
    };
    // Three threads on the run's two CPUs: likwid-pin's list up to where it
    // repeats, the thread count in front (likwid-pin would set it to 2).
    let out = likwid("3", "compact");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "OMP_NUM_THREADS=3 likwid-pin -c 0,1\n"
    );
    // A list that repeats only after three entries cannot be said to likwid-pin
    // on two CPUs (it would keep two entries).
    let out = likwid("3", "1,1,0");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("likwid-pin keeps no more -c entries"));
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("quick.xml");
    run(&[
        "topo",
        "--from",
        fixture,
        "--export",
        "hwloc",
        "--out",
        xml.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&xml)
        .unwrap()
        .contains("corescope c2c/rw latency (ns)"));
    let out = assert_cmd::Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "topo",
            "--from",
            fixture,
            "--export",
            "srun",
            "-n",
            "2",
            "--placement",
            "unbound",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unbound pins nothing"));
}

/// An export never lands on the file it was made from: `--out` naming the run file
/// or the topology XML (also through a symlink) is refused before anything is
/// written, and the input is left as it was.
#[test]
fn an_export_refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json");
    let run_file = dir.path().join("run.json");
    std::fs::copy(fixture, &run_file).unwrap();
    let xml = dir.path().join("machine.xml");
    let made = assert_cmd::Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "topo",
            "--from",
            run_file.to_str().unwrap(),
            "--export",
            "hwloc",
        ])
        .args(["--out", xml.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&run_file, &link).unwrap();
    for (input_flag, input, out) in [
        ("--from", &run_file, &run_file),
        ("--from", &run_file, &link),
        ("--xml", &xml, &xml),
    ] {
        let before = std::fs::read(input).unwrap();
        let out = assert_cmd::Command::cargo_bin("corescope")
            .unwrap()
            .args([
                "topo",
                input_flag,
                input.to_str().unwrap(),
                "--export",
                "hwloc",
            ])
            .args(["--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{input_flag}: {err}");
        assert!(err.contains("--out"), "{input_flag}: {err}");
        assert_eq!(
            std::fs::read(input).unwrap(),
            before,
            "{input_flag}: input changed"
        );
    }
}
