//! `corescope fleet merge | report [--check]` on copies of a real quick run file
//! (tests/fixtures/quick.json) with altered host names and, on one node, a figure
//! scaled down: the merge names exactly that node, with its evidence; `--check`
//! prints its drain reason and exits 3; the analysis scales as the docs say.

use assert_cmd::Command;
use corescope::fleet::{analyse, cmd, figures, file, html};
use corescope::model::RunFile;
use corescope::store;
use std::path::{Path, PathBuf};

fn fixture() -> RunFile {
    store::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick.json"))
        .expect("fixture loads")
}

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

/// A node: the fixture named `name`, its `int/linear` series (every point)
/// multiplied by `factor`, and every other value by a per-node factor close to 1
/// (so the fleet has a spread).
fn node(name: &str, factor: f64, wobble: f64) -> RunFile {
    let mut run = fixture();
    run.host.hostname = name.into();
    for p in &mut run.probes {
        for s in &mut p.series {
            let f = if p.id == "compute" && s.name == "int/linear" {
                factor
            } else {
                wobble
            };
            for y in &mut s.y {
                *y *= f;
            }
        }
    }
    run
}

/// Five nodes, node3's `compute int/linear` at 0.71×.
fn five_nodes() -> Vec<RunFile> {
    (0..5)
        .map(|i| {
            let factor = if i == 3 { 0.71 } else { 1.0 };
            node(&format!("node{i}"), factor, 1.0 + 0.002 * f64::from(i))
        })
        .collect()
}

/// A fleet merged by the binary in a temporary directory: each node's run file
/// saved as `HOST.json`, then `corescope fleet merge HOST.json… --out fleet.json`.
struct Fleet {
    dir: tempfile::TempDir,
    runs: Vec<PathBuf>,
    file: PathBuf,
}

impl Fleet {
    fn merged(nodes: &[RunFile]) -> Fleet {
        Fleet::merged_with(nodes, "--out")
    }

    /// The same, naming the output with `out_flag` (`--out` or `-o`).
    fn merged_with(nodes: &[RunFile], out_flag: &str) -> Fleet {
        let dir = tempfile::tempdir().expect("temp dir");
        let runs: Vec<PathBuf> = nodes
            .iter()
            .map(|run| {
                let path = dir.path().join(format!("{}.json", run.host.hostname));
                store::save(run, &path).expect("saved");
                path
            })
            .collect();
        let file = dir.path().join("fleet.json");
        corescope()
            .args(["fleet", "merge"])
            .args(&runs)
            .arg(out_flag)
            .arg(&file)
            .assert()
            .success();
        Fleet { dir, runs, file }
    }

    fn load(&self) -> file::FleetFile {
        cmd::load(&self.file).expect("fleet file loads")
    }
}

#[test]
fn merge_report_and_check_name_the_slow_node() {
    let merged = Fleet::merged(&five_nodes());
    let f = merged.load();
    let fleet = &merged.file;
    assert_eq!(f.nodes.len(), 5);
    assert_eq!(f.analysis.groups.len(), 1);
    let g = &f.analysis.groups[0];
    assert_eq!(g.model, "AMD EPYC, 2 cores");
    // Exactly node3, on every point of int/linear and nothing else.
    assert!(!g.outliers.is_empty());
    for o in &g.outliers {
        assert_eq!(o.node, "node3");
        let k = &f.figures[o.figure];
        assert_eq!(
            (k.probe.as_str(), k.name.as_str()),
            ("compute", "int/linear")
        );
        assert!((o.ratio.value - 0.71).abs() < 0.01, "{o:?}");
    }
    let report = corescope()
        .args(["fleet", "report"])
        .arg(fleet)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&report.get_output().stdout).into_owned();
    assert!(text.contains("fleet of 5 nodes"), "{text}");
    assert!(text.contains("model AMD EPYC, 2 cores: 5 nodes"), "{text}");
    assert!(
        text.contains("node3: compute int/linear at 1 thread 0.710× the fleet median, 95 % CI"),
        "{text}"
    );
    assert!(text.contains("  compute\n"), "{text}");
    // --check: one line, node3, exit 3.
    let check = corescope()
        .args(["fleet", "report", "--check"])
        .arg(fleet)
        .assert()
        .code(3);
    let out = String::from_utf8_lossy(&check.get_output().stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("node3: corescope fleet: compute int/linear at"),
        "{out}"
    );
    assert!(
        lines[0].contains("0.710x fleet median (low; 95% CI"),
        "{out}"
    );
    assert!(lines[0].is_ascii());
    // A node's own health check: a good node exits 0 and prints nothing.
    corescope()
        .args(["fleet", "report", "--check", "--node", "node1"])
        .arg(fleet)
        .assert()
        .code(0)
        .stdout("");
    corescope()
        .args(["fleet", "report", "--check", "--node", "node3"])
        .arg(fleet)
        .assert()
        .code(3);
    corescope()
        .args(["fleet", "report", "--check", "--node", "nodeX"])
        .arg(fleet)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no such node"));
}

#[test]
fn like_nodes_give_no_line_and_bad_input_one_error() {
    let nodes: Vec<RunFile> = (0..4).map(|i| node(&format!("n{i}"), 1.0, 1.0)).collect();
    let merged = Fleet::merged_with(&nodes, "-o");
    let (runs, fleet) = (&merged.runs, &merged.file);
    corescope()
        .args(["fleet", "report", "--check"])
        .arg(fleet)
        .assert()
        .code(0)
        .stdout("");
    // A run file is not a fleet file; the output may not be an input.
    corescope()
        .args(["fleet", "report"])
        .arg(&runs[0])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not a corescope fleet file"));
    corescope()
        .arg("fleet")
        .arg("merge")
        .args(runs)
        .arg("--out")
        .arg(&runs[0])
        .assert()
        .code(1);
}

#[test]
fn two_nodes_are_not_judged() {
    let f = cmd::build([(node("a", 1.0, 1.0), None), (node("b", 0.5, 1.0), None)]);
    assert!(f.analysis.groups[0].outliers.is_empty());
    assert!(corescope::fleet::report::render(&f).contains("not judged: fewer than 3 nodes"));
    // The file round-trips through its parser.
    let back = file::parse(&serde_json::to_string(&f).unwrap()).unwrap();
    assert_eq!(back.figures, f.figures);
    assert_eq!(back.analysis.groups, f.analysis.groups);
    assert_eq!(back.nodes.len(), 2);
}

/// `fleet report --html`: a page that names the outlier, has one heat-map cell per
/// node × probe, and never overwrites the fleet file it reads.
#[test]
fn the_fleet_page_names_the_outlier_and_guards_its_input() {
    let merged = Fleet::merged(&five_nodes());
    let fleet = &merged.file;
    let page_path = merged.dir.path().join("fleet.html");
    corescope()
        .args(["fleet", "report"])
        .arg(fleet)
        .arg("--html")
        .arg(&page_path)
        .assert()
        .success()
        .stdout("");
    let page = std::fs::read_to_string(&page_path).expect("page written");
    let f = merged.load();
    let probes = html::probes(&f);
    assert!(probes.len() >= 3, "{probes:?}");
    assert_eq!(page.matches("class='cell'").count(), 5 * probes.len());
    // The outlier: on the first screen, in its own table, marked in the map.
    assert!(page.contains("<h2>Outlying nodes</h2>"), "{page}");
    assert!(page.contains("node3: compute int/linear at"), "{page}");
    assert!(page.contains("<h3 id='node-node3'>node3: "), "{page}");
    assert!(page.contains("stroke='#000'"), "{page}");
    assert!(!page.contains("id='node-node1'"));
    // Self-contained: nothing fetched.
    assert!(!page.contains("src=") && !page.contains("href='http"));
    assert!(!page.contains("<script"));
    // An output never overwrites an input.
    let before = std::fs::read(fleet).expect("fleet file");
    corescope()
        .args(["fleet", "report"])
        .arg(fleet)
        .arg("--html")
        .arg(fleet)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("nothing was written"));
    assert_eq!(std::fs::read(fleet).expect("fleet file"), before);
}

/// A hostile node name is escaped wherever the page shows it.
#[test]
fn the_fleet_page_escapes_node_names() {
    let evil = "<script>alert('x')</script>&\"n";
    let f = cmd::build((0..4).map(|i| {
        let (name, factor) = if i == 2 {
            (evil.to_string(), 0.6)
        } else {
            (format!("n{i}"), 1.0)
        };
        (node(&name, factor, 1.0 + 0.002 * f64::from(i)), None)
    }));
    assert!(f.analysis.groups[0].outliers.iter().any(|o| o.node == evil));
    let page = html::render(&f);
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains("alert('x')"));
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;n"));
}

/// A node: the fixture named `name` with an 8 × 8 c2c matrix (about 100 ns off
/// the diagonal, a small per-node wobble) whose row `slow_row` is `factor` ×
/// slower.
fn matrix_node(name: &str, wobble: f64, slow_row: usize, factor: f64) -> RunFile {
    let mut run = node(name, 1.0, wobble);
    let c2c = run
        .probes
        .iter_mut()
        .find(|p| p.id == "c2c")
        .expect("the fixture has c2c");
    let labels: Vec<String> = (0..8).map(|i| i.to_string()).collect();
    for m in &mut c2c.matrices {
        m.rows = labels.clone();
        m.cols = labels.clone();
        m.values = (0..8)
            .map(|r| {
                (0..8)
                    .map(|c| {
                        let f = if r == slow_row { factor } else { 1.0 };
                        (r != c).then(|| (100.0 + (r + c) as f64) * wobble * f)
                    })
                    .collect()
            })
            .collect();
    }
    run
}

/// A node whose c2c matrix is 1.5× slower in one row (one CPU's latency to all
/// others) is named, with that row, and no other node or row is.
#[test]
fn a_matrix_row_that_differs_is_named() {
    let nodes: Vec<RunFile> = (0..5)
        .map(|i| {
            let factor = if i == 2 { 1.5 } else { 1.0 };
            matrix_node(&format!("node{i}"), 1.0 + 0.002 * f64::from(i), 3, factor)
        })
        .collect();
    let f = Fleet::merged(&nodes).load();
    let g = &f.analysis.groups[0];
    let rows: Vec<(&str, Option<&str>)> = g
        .outliers
        .iter()
        .map(|o| (o.node.as_str(), f.figures[o.figure].row.as_deref()))
        .collect();
    // node2 only, and only CPU 3's rows of the two matrices (c2c/cas, c2c/rw).
    assert_eq!(
        rows,
        [("node2", Some("3")), ("node2", Some("3"))],
        "{rows:?}"
    );
    assert!((g.outliers[0].ratio.value - 1.5).abs() < 0.01);
    let text = corescope::fleet::report::render(&f);
    assert!(
        text.contains("node2: c2c c2c/cas matrix, CPU 3's row (median) 1.49"),
        "{text}"
    );
    assert!(
        text.contains("node2: its c2c c2c/cas matrix differs in CPU 3's row"),
        "{text}"
    );
    let page = html::render(&f);
    assert!(page.contains("its c2c c2c/cas matrix differs in CPU 3&#39;s row"));
}

/// A fleet file written before matrices were figures (no `row` field) still reads.
#[test]
fn a_fleet_file_without_matrix_rows_still_reads() {
    let f = cmd::build((0..3).map(|i| (node(&format!("n{i}"), 1.0, 1.0), None)));
    let mut v: serde_json::Value = serde_json::to_value(&f).unwrap();
    let old: Vec<bool> = v["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.get("row").is_none() && k["x_name"] != "matrix")
        .collect();
    assert!(old.iter().any(|o| !o), "the fixture has matrix figures");
    let keep = |a: &mut Vec<serde_json::Value>| {
        let mut i = 0;
        a.retain(|_| {
            i += 1;
            old[i - 1]
        });
    };
    keep(v["figures"].as_array_mut().unwrap());
    for n in v["nodes"].as_array_mut().unwrap() {
        keep(n["values"].as_array_mut().unwrap());
    }
    v["analysis"]["groups"][0]["figures"] = serde_json::json!([]);
    v["analysis"]["groups"][0]["outliers"] = serde_json::json!([]);
    let back = file::parse(&v.to_string()).expect("an old fleet file reads");
    assert!(back.figures.iter().all(|k| k.row.is_none()));
}

/// The cost's structure at 10,000 nodes (docs/fleet.md): the merge keeps each
/// node's figures only (a run file is dropped once read), one column at a time
/// is judged, every value is read once, and the analysis does not grow with the
/// node count (the outliers aside).
#[test]
fn ten_thousand_nodes_cost_what_the_docs_say() {
    // One real node's figures, copied to 10,000 nodes with a small spread.
    let mut t = figures::Table::default();
    t.add(&fixture(), None);
    let (figs, base) = t.finish();
    let figures_per_node = figs.len();
    let nodes: Vec<file::Node> = (0..10_000u32)
        .map(|i| {
            let f = 1.0 + 1e-4 * f64::from(i % 97);
            let mut n = base[0].clone();
            n.name = format!("n{i}");
            for v in n.values.iter_mut().flatten() {
                *v = file::NodeValue(v.0 * f, v.1 * f, v.2 * f, v.3);
            }
            n
        })
        .collect();
    let (analysis, cost) = analyse::analyse(&nodes, figs.len());
    assert_eq!(cost.values_read, 10_000 * figures_per_node);
    assert_eq!(cost.largest_column, 10_000);
    assert_eq!(cost.columns, analysis.groups[0].figures.len());
    // The analysis holds one spread per figure, whatever the node count.
    let bytes_10k = serde_json::to_vec(&analysis.groups[0].figures)
        .unwrap()
        .len();
    let (small, _) = analyse::analyse(&nodes[..10], figs.len());
    let bytes_10 = serde_json::to_vec(&small.groups[0].figures).unwrap().len();
    assert!(
        bytes_10k < 2 * bytes_10,
        "spreads: {bytes_10k} B for 10,000 nodes, {bytes_10} B for 10"
    );
    // A node's share of the fleet file: its figures, a few kB.
    let per_node = serde_json::to_vec(&nodes[0]).unwrap().len();
    eprintln!(
        "10,000 nodes: {figures_per_node} figures each, {per_node} B per node in the fleet file, \
         spreads {bytes_10k} B"
    );
    assert!(per_node < 64 * figures_per_node, "{per_node} B per node");
}

/// Without the `mpi` feature, `fleet run` says how to build it and how to do without.
#[cfg(not(feature = "mpi"))]
#[test]
fn fleet_run_without_mpi_says_how() {
    corescope()
        .args(["fleet", "run", "compute"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("built without MPI support"))
        .stderr(predicates::str::contains("corescope fleet merge"));
}
