//! The renderers on fixed run files (tests/fixtures, from real quick runs):
//! every shape and every status renders, strings from the file are escaped,
//! bad files give one clear error, and `compare` lines machines up.

use assert_cmd::Command;
use corescope::model::{Estimate, Finding, Outcome, Point, ProbeResult, RunFile, Status};
use corescope::render::{compare, csv, html, terminal};
use corescope::store;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load(name: &str) -> RunFile {
    store::load(&fixture(name)).expect("fixture loads")
}

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

#[test]
fn fixtures_cover_every_shape_and_status() {
    let q = load("quick.json");
    let s = load("statuses.json");
    let all: Vec<_> = q.probes.iter().chain(&s.probes).collect();
    assert!(all.iter().any(|p| !p.series.is_empty()));
    assert!(all
        .iter()
        .any(|p| p.distributions.iter().any(|d| !d.pairs.is_empty())));
    assert!(all.iter().any(|p| !p.matrices.is_empty()));
    assert!(all.iter().any(|p| !p.timelines.is_empty()));
    assert!(all.iter().any(|p| !p.tables.is_empty()));
    for st in [
        Status::Completed,
        Status::Skipped,
        Status::GaveUp,
        Status::Failed,
    ] {
        assert!(all.iter().any(|p| p.status == st), "no {st:?} probe");
    }
}

#[test]
fn html_has_a_section_and_a_figure_per_shape() {
    let q = load("quick.json");
    let page = html::render_run(&q);
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>"));
    assert!(
        !page.contains("http://") || !page.contains("src='http"),
        "no network fetches"
    );
    for p in &q.probes {
        assert!(
            page.contains(&format!("<section id='{}'>", p.id)),
            "{}",
            p.id
        );
    }
    let figures = page.matches("<figure>").count();
    // One chart per group of series sharing units; a group of one-point
    // series is a table instead.
    let series_groups: usize = q
        .probes
        .iter()
        .map(|p| {
            html::chart_groups(&p.series)
                .iter()
                .filter(|g| !g.is_points())
                .count()
        })
        .sum();
    let paired: usize = q
        .probes
        .iter()
        .flat_map(|p| &p.distributions)
        .filter(|d| d.paired_with.is_some() && !d.pairs.is_empty())
        .count();
    let hist: usize = q
        .probes
        .iter()
        .flat_map(|p| &p.distributions)
        .filter(|d| !d.histogram.counts.is_empty())
        .count();
    let mats: usize = q.probes.iter().map(|p| p.matrices.len()).sum();
    let tls: usize = q.probes.iter().map(|p| p.timelines.len()).sum();
    // One machine drawing, then one figure per series group, paired
    // distribution, histogram, matrix and timeline.
    assert_eq!(figures, 1 + series_groups + paired + hist + mats + tls);
    assert!(page.contains("y = x"));
    // Every chart has a text alternative.
    assert_eq!(
        page.matches("<svg").count(),
        page.matches("role='img' aria-label=").count()
    );
    // No script source, no external stylesheet.
    assert!(!page.contains("<script src") && !page.contains("<link"));
}

#[test]
fn statuses_show_as_badges_with_reasons() {
    let s = load("statuses.json");
    let page = html::render_run(&s);
    for cls in ["skipped", "gave_up", "failed"] {
        assert!(page.contains(&format!("class='badge {cls}'")), "{cls}");
    }
    for p in &s.probes {
        if let Some(r) = &p.reason {
            assert!(
                page.contains(&corescope::render::svg::esc(r)),
                "reason of {}",
                p.id
            );
        }
    }
    let text = terminal::render_run(&s);
    assert!(text.contains("skipped") && text.contains("gave up") || text.contains("gave_up"));
}

#[test]
fn strings_from_the_run_file_are_escaped() {
    let mut q = load("quick.json");
    q.host.hostname = "<script>alert(1)</script>".into();
    q.host.cpu_model = "\"><img src=x onerror=alert(2)>".into();
    q.probes[0].findings.push("<b>bold</b> & co");
    q.probes[0].series[0].name = "int/<i>x</i>".into();
    let page = html::render_run(&q);
    assert!(!page.contains("<script>alert(1)"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<img src=x"));
    assert!(!page.contains("<b>bold</b>") && !page.contains("<i>x</i>"));
    // The only script is the report's own legend toggle.
    assert_eq!(page.matches("<script>").count(), 1);
    let cmp = compare::render_html(&[q.clone(), q], None);
    assert!(!cmp.contains("<script>alert(1)") && cmp.contains("&lt;script&gt;"));
}

#[test]
fn large_distributions_are_downsampled_but_histograms_stay_exact() {
    let mut q = load("quick.json");
    let d = q
        .probes
        .iter_mut()
        .flat_map(|p| p.distributions.iter_mut())
        .find(|d| d.paired_with.is_some())
        .expect("a paired distribution");
    let base = d.pairs.clone();
    d.pairs = (0..100_000).map(|i| base[i % base.len()]).collect();
    let t = std::time::Instant::now();
    let page = html::render_run(&q);
    // Not a speed assertion: only that a full-profile-sized file renders at all
    // and stays small; the time is printed for the record.
    eprintln!(
        "rendered 10^5 pairs in {:?}, {} bytes",
        t.elapsed(),
        page.len()
    );
    assert!(page.len() < 5 << 20, "report is {} bytes", page.len());
}

#[test]
fn csv_files_are_tidy() {
    let q = load("quick.json");
    let dir = tempfile::tempdir().unwrap();
    let files = csv::write_dir(&q, dir.path(), &|p, f| store::write_atomic_with(p, f)).unwrap();
    let series = std::fs::read_to_string(dir.path().join("series.csv")).unwrap();
    let rows = series.lines().count() - 1;
    let points: usize = q
        .probes
        .iter()
        .flat_map(|p| &p.series)
        .map(|s| s.x.len())
        .sum();
    assert_eq!(rows, points, "one row per observation");
    for line in series.lines() {
        // host, run, then the nine columns of a series point.
        assert_eq!(line.split(',').count(), 11, "{line}");
    }
    // A version 1 file has no intervals: y_lo, y_hi and n are empty.
    assert!(series.lines().skip(1).all(|l| l.ends_with(",,,")));
    let dists = std::fs::read_to_string(dir.path().join("distributions.csv")).unwrap();
    let nd: usize = q.probes.iter().map(|p| p.distributions.len()).sum();
    assert_eq!(dists.lines().count() - 1, nd);
    let per_series: usize = q.probes.iter().map(|p| p.series.len()).sum();
    let per_table: usize = q.probes.iter().map(|p| p.tables.len()).sum();
    // The seven tidy files, findings.csv and warnings.csv, one per series and table.
    assert_eq!(files.len(), 9 + per_series + per_table);
    for f in &files {
        assert!(f.starts_with(dir.path()), "{f:?} escaped the directory");
    }
}

#[test]
fn terminal_and_markdown_snapshots() {
    let s = load("statuses.json");
    insta::assert_snapshot!("statuses_terminal", terminal::render_run(&s));
    insta::assert_snapshot!("statuses_markdown", html::markdown(&s));
    insta::assert_snapshot!("statuses_series_csv", csv::series_csv(&s));
    let q = load("quick.json");
    insta::assert_snapshot!("compare_text", compare::render_text(&[q, s], None));
    let i = with_intervals();
    insta::assert_snapshot!("intervals_terminal", terminal::render_run(&i));
    insta::assert_snapshot!("intervals_markdown", html::markdown(&i));
}

/// Every key path of a JSON value with the types found there, arrays collapsed to
/// `[]`: the shape of the run file, without its numbers.
fn shape(v: &serde_json::Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
    use serde_json::Value;
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(format!("{path}: {kind}"));
    match v {
        Value::Array(a) => a.iter().for_each(|x| shape(x, &format!("{path}[]"), out)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| shape(x, &format!("{path}.{k}"), out)),
        _ => {}
    }
}

/// The public contract from fixed data: the run file's shape as written today (a
/// changed, added or removed field shows up here and must be reviewed), and the
/// HTML report of a fixture.
#[test]
fn run_file_shape_and_html_snapshots() {
    let mut run = with_intervals();
    run.tool.version = "fixed".into();
    let value = serde_json::to_value(&run).unwrap();
    let mut paths = std::collections::BTreeSet::new();
    shape(&value, "", &mut paths);
    insta::assert_snapshot!(
        "run_file_shape",
        paths.into_iter().collect::<Vec<_>>().join("\n")
    );
    let mut s = load("statuses.json");
    s.tool.version = "fixed".into();
    insta::assert_snapshot!("statuses_html", html::render_run(&s));
}

#[test]
fn report_command_writes_html_csv_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let csvdir = dir.path().join("csv");
    corescope()
        .args(["report"])
        .arg(fixture("quick.json"))
        .arg("--html")
        .arg(&out)
        .arg("--csv")
        .arg(&csvdir)
        .assert()
        .success();
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("<section id='c2c'>"));
    assert!(csvdir.join("series.csv").exists());
    let md = corescope()
        .arg("report")
        .arg(fixture("statuses.json"))
        .arg("--markdown")
        .assert()
        .success();
    let md = String::from_utf8_lossy(&md.get_output().stdout).to_string();
    assert!(md.starts_with("# corescope"));
}

#[test]
fn compare_lines_up_two_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp.html");
    let a = corescope()
        .arg("compare")
        .arg(fixture("quick.json"))
        .arg(fixture("statuses.json"))
        .arg("--html")
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    // Same host twice: the second column is told apart.
    let q = load("quick.json");
    assert!(text.contains(&format!("{}#2", q.host.hostname)));
    // c2c is in both, with different statuses; memory only in the second.
    assert!(text.contains("== c2c") && text.contains("== memory"));
    assert!(text.contains("not in this run"));
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains("<section id='compute'>") && page.contains("<section id='memory'>"));
    // Only one file: refused clearly.
    let one = corescope()
        .arg("compare")
        .arg(fixture("quick.json"))
        .assert()
        .failure();
    assert!(!String::from_utf8_lossy(&one.get_output().stderr).contains("panicked"));
    // An unknown probe filter: one clear line.
    let bad = corescope()
        .arg("compare")
        .arg(fixture("quick.json"))
        .arg(fixture("statuses.json"))
        .args(["--probes", "nosuch"])
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&bad.get_output().stderr).contains("'nosuch' is in none"));
}

/// `report` and `compare` on a bad file: one clear error naming the file.
#[test]
fn bad_run_files_give_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(fixture("statuses.json")).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated.json",
            full[..full.len() / 2].to_string(),
            "not a valid corescope run file",
        ),
        ("garbage.json", "this is not json".into(), "JSON error"),
        (
            "other.json",
            "{\"name\": \"something else\"}".into(),
            "no \"tool\"",
        ),
        (
            "newer.json",
            full.replacen("\"schema_version\":1", "\"schema_version\":99", 1),
            "schema version 99",
        ),
        (
            "empty.json",
            String::new(),
            "not a valid corescope run file",
        ),
    ];
    for (name, body, needle) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        for args in [
            vec!["report"],
            vec!["report", "--html", "/dev/null"],
            vec!["compare"],
        ] {
            let mut c = corescope();
            c.args(&args).arg(&path);
            if args[0] == "compare" {
                c.arg(fixture("quick.json"));
            }
            let a = c.assert().failure();
            let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
            assert!(
                err.contains(name) && err.contains(needle),
                "{name} {args:?}: {err}"
            );
            assert!(
                !err.contains("panicked") && err.trim().lines().count() <= 2,
                "{err}"
            );
        }
    }
    let missing = corescope()
        .args(["report", "/nonexistent/run.json"])
        .assert()
        .failure();
    assert!(String::from_utf8_lossy(&missing.get_output().stderr).contains("/nonexistent/run.json"));
}

/// A small run with intervals (schema 2), built here rather than measured: one
/// family of two placements over threads with 7 repetitions per point (one
/// placement spread ±11.5 %, the other ±0.3 %), a distribution, and a typed finding.
fn with_intervals() -> RunFile {
    let mut run = load("quick.json");
    run.schema_version = corescope::model::SCHEMA_VERSION;
    run.statistics = Some(Default::default());
    let mut p = ProbeResult::new("memory", "memory bandwidth", Status::Completed);
    for (variant, base, spread) in [("linear", 10e9, 0.115), ("scatter", 20e9, 0.003)] {
        for t in [1.0, 2.0, 4.0] {
            let samples = (0..7)
                .map(|k| base * t * (1.0 + spread * (f64::from(k) - 3.0) / 3.0))
                .collect();
            p.push_point(Point::samples(
                format!("read/{variant}"),
                "threads",
                t,
                "bytes_per_s",
                samples,
            ));
        }
    }
    let wake: Vec<f64> = (0..200).map(|k| 1000.0 + f64::from(k % 50) * 4.0).collect();
    p.distributions
        .push(corescope::stats::distribution("wake/same-cpu", "ns", &wake));
    let e = |value: f64, lo: f64, hi: f64| Estimate {
        value,
        lo,
        hi,
        n: 7,
    };
    p.findings.push(Finding::Comparison {
        what: "read with 2 threads".into(),
        unit: "bytes_per_s".into(),
        a: "scatter".into(),
        a_value: e(40e9, 39.9e9, 40.1e9),
        b: "linear".into(),
        b_value: e(20e9, 18e9, 22e9),
        ratio: e(2.0, 1.8, 2.2),
        significant: true,
        outcome: Outcome::Different,
        context: None,
    });
    run.probes = vec![p];
    corescope::store::validate(&run).expect("the built run is valid");
    run
}

/// The chart of the first series group of a page.
fn first_chart(page: &str) -> &str {
    let section = &page[page
        .find("<section id='memory'>")
        .or(page.find("<section id='compute'>"))
        .unwrap()..];
    let chart = &section[section.find("<svg").unwrap()..];
    &chart[..chart.find("</svg>").unwrap()]
}

#[test]
fn intervals_show_in_every_output() {
    let run = with_intervals();
    // HTML: one error bar per point with an interval, one band per curve.
    let page = html::render_run(&run);
    let chart = first_chart(&page);
    assert_eq!(chart.matches("class='ci'").count(), 6, "{chart}");
    assert_eq!(chart.matches("class='band'").count(), 2);
    assert!(chart.contains("bars, band: 95 % CI"));
    assert!(page.contains("bars and band: 95 % CI of the median, 7 repetitions"));
    assert!(
        page.contains("p50 95 % CI"),
        "distribution table has the median's interval"
    );
    assert!(
        page.contains(" ±12%"),
        "the wide interval shows in the HTML table"
    );
    // Terminal: ± where wider than 1 %, said once per table, lines within the width.
    let text = terminal::render_run(&run);
    assert!(
        text.contains("± = 95 % CI of the median, 7 repetitions"),
        "{text}"
    );
    assert_eq!(
        text.matches("± = 95 % CI of the median").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches(" ±12%").count(), 3, "{text}");
    assert!(
        text.contains("linear is 2.00× (95 % CI 1.80–2.20) scatter")
            || text.contains("scatter is 2.00×"),
        "{text}"
    );
    for line in text
        .lines()
        .filter(|l| l.starts_with(['│', '┌', '└', '╞', '├']))
    {
        assert!(line.chars().count() <= terminal::width(), "{line}");
    }
    // The tight placement (±0.3 %) shows no ±.
    let scatter_row = text
        .lines()
        .find(|l| l.contains("│       2 ┆"))
        .expect("row at 2 threads");
    assert_eq!(scatter_row.matches('±').count(), 1, "{scatter_row}");
    // Markdown like the terminal.
    let md = html::markdown(&run);
    assert!(md.contains("± = 95 % CI of the median, 7 repetitions") && md.contains(" ±12%"));
    assert!(
        md.contains("| wake/same-cpu | ns | 200 | 1000 | 1098 ±2% |"),
        "{md}"
    );
    // CSV: y_lo, y_hi and n filled in, and every repetition in samples.csv.
    let series = csv::series_csv(&run);
    let mut r = ::csv::Reader::from_reader(series.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(head[..2], ["host", "run"]);
    assert_eq!(head[8..], ["y_lo", "y_hi", "n"]);
    for row in r.records() {
        let row = row.unwrap();
        let (y, lo, hi): (f64, f64, f64) = (
            row[7].parse().unwrap(),
            row[8].parse().unwrap(),
            row[9].parse().unwrap(),
        );
        assert!(lo < y && y < hi, "{row:?}");
        assert_eq!(&row[10], "7");
    }
    assert_eq!(csv::samples_csv(&run).lines().count(), 1 + 6 * 7);
    let dists = csv::distributions_csv(&run);
    assert!(dists.lines().next().unwrap().ends_with("p50_lo,p50_hi"));
    assert!(!dists.lines().nth(1).unwrap().ends_with(",,"));
}

#[test]
fn version_1_files_show_no_interval_marks() {
    let q = load("quick.json");
    // The glossary at the end of the page explains `±` and the 95 % CI.
    let page = html::render_run(&q).replace(&corescope::render::glossary::html(), "");
    assert_eq!(page.matches("class='ci'").count(), 0);
    assert_eq!(page.matches("class='band'").count(), 0);
    assert!(!page.contains("95 % CI") && !page.contains('±'));
    assert!(!terminal::render_run(&q).contains('±'));
    assert!(!html::markdown(&q).contains('±'));
    let series = csv::series_csv(&q);
    assert!(series.lines().skip(1).all(|l| l.ends_with(",,,")));
    assert_eq!(csv::samples_csv(&q).lines().count(), 1);
    let cmp = compare::render_text(&[q.clone(), q], None);
    assert!(!cmp.contains('±') && !cmp.contains('≈'));
}

#[test]
fn compare_shows_each_runs_interval_and_overlaps() {
    let a = with_intervals();
    // The second run: linear 1 % higher (inside its ±12 %: indistinguishable),
    // scatter 50 % higher (intervals far apart).
    let mut b = with_intervals();
    b.host.hostname = "other".into();
    for s in &mut b.probes[0].series {
        let f = if s.name.ends_with("linear") {
            1.01
        } else {
            1.5
        };
        for v in s.y.iter_mut().chain(&mut s.y_lo).chain(&mut s.y_hi) {
            *v *= f;
        }
    }
    let text = compare::render_text(&[a.clone(), b.clone()], None);
    // Under the machines, how far the second run agrees with the first: the three
    // linear points overlap, the three scatter points are apart.
    assert!(
        text.contains(
            "other against vm: the 95 % intervals overlap at 3 of 6 series points (50 %)"
        ) && text.contains("3 apart, the farthest: ")
            && text.contains("read/scatter at "),
        "{text}"
    );
    let text = &text[text.find("\n== ").unwrap()..];
    let linear = &text[text.find("read/linear").unwrap()..text.find("read/scatter").unwrap()];
    assert_eq!(linear.matches("1.01× ≈").count(), 3, "{linear}");
    assert!(linear.contains("indistinguishable") && linear.contains("±12%"));
    let scatter = &text[text.find("read/scatter").unwrap()..];
    assert!(
        scatter.contains("1.50×") && !scatter.contains("1.50× ≈"),
        "{scatter}"
    );
    assert!(
        text.contains("peak: vm 80.00 GB/s (95 % CI 79.76–80.24; 40.00 GB/s per CPU)"),
        "{text}"
    );
    // Findings are worded by render::words.
    assert!(text.contains("findings on other:"), "{text}");
    assert!(text.contains("scatter is 2.00× (95 % CI 1.80–2.20) linear"));
    let page = compare::render_html(&[a, b], None);
    assert_eq!(first_chart(&page).matches("class='ci'").count(), 6);
    assert!(page.contains("1.01× ≈") && page.contains("Findings on other"));
}

#[test]
fn compare_opens_with_the_differences_beyond_the_noise() {
    let a = with_intervals();
    let mut same = with_intervals();
    same.host.hostname = "other".into();
    let text = compare::render_text(&[a.clone(), same.clone()], None);
    assert_eq!(
        text.lines().next(),
        Some(
            "other against vm: no differences beyond the noise (6 series points compared, \
             1 finding)"
        ),
        "{text}"
    );
    let page = compare::render_html(&[a.clone(), same], None);
    let top = &page[page.find("<h1>").unwrap()..page.find("id='machines'").unwrap()];
    assert!(top.contains("no differences beyond the noise"), "{top}");
    // Two points move: linear at 1 thread 2×, scatter at 4 threads 1.3×. Both are
    // listed before the machines, the larger first, with each run's value.
    let mut b = with_intervals();
    b.host.hostname = "other".into();
    for s in &mut b.probes[0].series {
        let (x, f) = if s.name == "read/linear" {
            (1.0, 2.0)
        } else {
            (4.0, 1.3)
        };
        let i = s.x.iter().position(|&v| v == x).unwrap();
        for v in [&mut s.y[i], &mut s.y_lo[i], &mut s.y_hi[i]] {
            *v *= f;
        }
    }
    // Wide enough for the heading on one line (at 100 columns it wraps).
    let text = compare::render_text_width(&[a.clone(), b.clone()], None, 120);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "other against vm: 2 differences beyond the noise (6 series points compared, 1 \
         finding), the largest first:"
    );
    let top = &text[..text.find("Machines").unwrap()];
    let (first, second) = top.split_at(top.find("  2. ").unwrap());
    assert!(
        first.starts_with(&format!("{}\n  1. memory read/linear at 1", lines[0]))
            && first.contains("vm 10.00 GB/s (95 % CI")
            && first.contains("2.00×"),
        "{top}"
    );
    assert!(
        second.contains("read/scatter at 4") && second.contains("1.30×"),
        "{top}"
    );
    assert!(top.contains("Beyond the noise: a series point whose two 95 % intervals"));
    let page = compare::render_html(&[a, b], None);
    let li = &page[page.find("<li>").unwrap()..page.find("</li>").unwrap()];
    assert!(
        page.find("id='differences'") < page.find("id='machines'")
            && li.contains("read/linear at 1"),
        "{li}"
    );
}

/// A series from `(x, y)` points (no intervals).
fn series(name: &str, x_name: &str, y_name: &str, pts: &[(f64, f64)]) -> corescope::model::Series {
    let mut s = corescope::model::Series::new(name, x_name, y_name);
    s.x = pts.iter().map(|p| p.0).collect();
    s.y = pts.iter().map(|p| p.1).collect();
    s
}

/// The SVG charts of a page, in order.
fn charts(page: &str) -> Vec<&str> {
    page.match_indices("<svg")
        .map(|(i, _)| &page[i..i + page[i..].find("</svg>").unwrap_or(0)])
        .collect()
}

#[test]
fn chart_structure_series_legend_units_and_one_point_tables() {
    let mut p = ProbeResult::new("shapes", "t", Status::Completed);
    // Twelve loop orders and a library share n and FLOP/s: one chart.
    for k in 0..12 {
        // x unsorted on purpose: the line must still run left to right.
        // Each order its own rates (identical curves would share one entry).
        let f = 1.0 + f64::from(k) / 10.0;
        p.series.push(series(
            &format!("o{k}/normal"),
            "n",
            "flops_per_s",
            &[(256.0, 3e9 * f), (32.0, 1e9 * f), (64.0, 2e9 * f)],
        ));
    }
    p.series.push(series(
        "library/x",
        "n",
        "flops_per_s",
        &[(32.0, 5e9), (256.0, 9e9)],
    ));
    // A rate and a dimensionless scalability: two charts, never one axis.
    p.series.push(series(
        "w/rate",
        "threads",
        "units_per_s",
        &[(1.0, 5.0), (2.0, 9.0)],
    ));
    p.series.push(series(
        "w/scalability",
        "threads",
        "x_one_thread",
        &[(1.0, 1.0), (2.0, 1.8)],
    ));
    // One point only: a table, no chart.
    p.series
        .push(series("single/a", "size_log2", "seconds", &[(12.0, 0.5)]));
    let groups = html::chart_groups(&p.series);
    assert_eq!(
        groups.len(),
        4,
        "{:?}",
        groups.iter().map(|g| &g.title).collect::<Vec<_>>()
    );
    assert_eq!(groups[0].series.len(), 13);
    assert!(groups
        .iter()
        .all(|g| g.series.iter().all(|s| s.y_name == g.series[0].y_name)));
    assert!(groups[3].is_points());
    let mut run = load("quick.json");
    run.probes = vec![p];
    let page = html::render_run(&run);
    let section = &page[page.find("<section id='shapes'>").unwrap()..];
    let svgs = charts(section);
    // Three charts (the one-point group is a table row).
    assert_eq!(svgs.len(), 3, "one-point series drawn as a chart");
    assert!(section.contains("<details open><summary>table ("));
    let matmul = svgs[0];
    // Every series drawn, one legend entry each, responsive width.
    assert_eq!(matmul.matches("<g class='curve'").count(), 13);
    assert_eq!(matmul.matches("<g class='legend'").count(), 13);
    assert!(matmul.contains("width='100%'") && matmul.contains("viewBox="));
    assert!(matmul.contains("n (log)"));
    // Colour and dash: no two of the 13 styles alike.
    let styles: std::collections::HashSet<(String, String)> = matmul
        .match_indices("<polyline")
        .map(|(i, _)| {
            let l = &matmul[i..i + matmul[i..].find("/>").unwrap()];
            let attr = |a: &str| {
                let j = l.find(a).unwrap() + a.len();
                l[j..j + l[j..].find('\'').unwrap()].to_string()
            };
            (attr("stroke='"), attr("stroke-dasharray='"))
        })
        .collect();
    assert_eq!(styles.len(), 13);
    // x sorted: each polyline's x coordinates rise.
    for (i, _) in matmul.match_indices("points='") {
        let pts = &matmul[i + 8..i + 8 + matmul[i + 8..].find('\'').unwrap()];
        let xs: Vec<f64> = pts
            .split(' ')
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{xs:?}");
    }
    // Titles drawn; the run's 2 CPUs marked on threads axes only.
    assert!(svgs.iter().all(|s| s.contains("class='chart-title'")));
    assert!(svgs[1].contains(">2 CPUs</text>") && !matmul.contains("class='cpus'"));
    // One unit per axis.
    assert!(svgs[1].contains("units per s") && !svgs[1].contains("x one thread"));
    assert!(svgs[2].contains("x one thread") && !svgs[2].contains("units per s"));
}

#[test]
fn heat_maps_have_colour_scales_and_timelines_a_legend_of_kinds() {
    let q = load("quick.json");
    let page = html::render_run(&q);
    let mats: usize = q.probes.iter().map(|p| p.matrices.len()).sum();
    let paired: usize = q
        .probes
        .iter()
        .flat_map(|p| &p.distributions)
        .filter(|d| d.paired_with.is_some() && !d.pairs.is_empty())
        .count();
    assert!(mats > 0);
    // One colour scale per heat map and per intensity map.
    assert_eq!(page.matches("class='colour-scale'").count(), mats + paired);
    let kinds: std::collections::HashSet<&str> = q
        .probes
        .iter()
        .flat_map(|p| &p.timelines)
        .flat_map(|t| &t.lanes)
        .flat_map(|l| &l.spans)
        .map(|s| s.kind.as_str())
        .collect();
    assert!(!kinds.is_empty());
    assert!(page.matches("<g class='kind'>").count() >= kinds.len());
}

#[test]
fn free_tables_are_readable_with_the_best_row_marked() {
    use serde_json::json;
    let t = corescope::model::Table {
        name: "tune".into(),
        columns: vec!["run".into(), "events_per_s".into(), "step_ns".into()],
        rows: vec![
            vec![json!("a"), json!(9612064.0), json!(3.5)],
            vec![json!("b"), json!(12000000.0), json!(2.0)],
        ],
    };
    assert_eq!(html::column_kind("events_per_s").0, "events/s");
    assert_eq!(
        html::cell_text(&json!(9612064.0), html::ColumnKind::Rate),
        "9.612 M"
    );
    assert_eq!(html::best_row(&t), Some(1));
    let mut p = ProbeResult::new("tune", "t", Status::Completed);
    p.tables.push(t);
    let mut run = load("quick.json");
    run.probes = vec![p];
    let page = html::render_run(&run);
    assert!(page.contains("<th>events/s</th>") && !page.contains("events_per_s"));
    assert!(page.contains("<tr class='best'") && page.contains("b ★"));
    assert!(!page.contains("9612064"));
    assert!(page.contains("<div class='scroll'><table>"));
}

#[test]
fn peak_opens_with_its_overview_and_folds_the_per_level_charts() {
    let mut p = ProbeResult::new("peak", "t", Status::Completed);
    for kernel in ["scalar-f64", "avx2-fma-f64"] {
        for place in ["compact", "scatter"] {
            for (x, v) in [(1.0, 8.0), (2.0, 7.5)] {
                for (suffix, unit, f) in [
                    ("", "flops_per_s", 4e9),
                    ("-per-cycle", "flops_per_cycle_per_thread", 1.0),
                ] {
                    p.push_point(Point::samples(
                        format!("{kernel}{suffix}/{place}"),
                        "threads",
                        x,
                        unit,
                        vec![v * f, v * f * 1.01, v * f * 0.99],
                    ));
                }
            }
        }
    }
    p.tables.push(corescope::model::Table {
        name: "fma-limit".into(),
        columns: ["kernel", "limit_flop_per_cycle_per_core", "source"]
            .map(String::from)
            .to_vec(),
        rows: ["scalar-f64", "avx2-fma-f64"]
            .iter()
            .map(|k| {
                vec![
                    serde_json::json!(k),
                    serde_json::Value::Null,
                    serde_json::json!("FMA units unknown for GenuineIntel family 0x6 model 0xcf (not in the table)"),
                ]
            })
            .collect(),
    });
    let mut run = load("quick.json");
    run.probes = vec![p];
    let page = html::render_run(&run);
    let overview = page.find("against the FMA limit</h3>").expect("overview");
    let folded = page
        .find("<details><summary>per level and placement</summary>")
        .expect("folded charts");
    assert!(overview < folded);
    let first_chart = page.find("peak — avx2-fma-f64").or(page.find("<polyline"));
    assert!(
        first_chart.is_some_and(|c| c > folded),
        "charts inside the fold"
    );
    assert!(page.contains("Limit unknown: FMA units unknown for GenuineIntel"));
    assert!(!page.contains("NaN"));
    let md = html::markdown(&run);
    assert!(md.contains("| unknown | - |"), "{md}");
    // The terminal report opens the section with the same overview.
    let text = terminal::render_probe(&run.probes[0]);
    let at = text
        .find("against the FMA limit")
        .expect("overview in the terminal");
    assert!(at < text.find("fma-limit:").unwrap_or(usize::MAX), "{text}");
    assert!(text.contains("avx2-fma-f64") && text.contains("unknown"));
    assert!(text.contains("Limit unknown: FMA units unknown for GenuineIntel"));
}

#[test]
fn reference_rows_are_never_the_best_row() {
    use serde_json::json;
    // Stage Two: Optimal is the fastest row, but a limit, not a contender.
    let mut t = corescope::model::Table {
        name: "stage two: fib, 24-byte events".into(),
        columns: vec!["run".into(), "events_per_s".into()],
        rows: vec![
            vec![json!("Optimal: fib, no profiling"), json!(9.0e7)],
            vec![
                json!("Achievable: events into a buffer nobody reads"),
                json!(5.0e7),
            ],
            vec![
                json!("Upper bound: fib and profiling in one thread"),
                json!(1.0e7),
            ],
            vec![json!("3 buffers of 4 KiB, spin"), json!(3.0e7)],
            vec![json!("3 buffers of 4 KiB, condvar"), json!(2.0e7)],
        ],
    };
    assert_eq!(html::best_row(&t), Some(3));
    // A table with its own best column: its choice, even when not the fastest.
    t.columns.push("best".into());
    for (i, r) in t.rows.iter_mut().enumerate() {
        r.push(if i < 3 { json!(null) } else { json!(i == 4) });
    }
    assert_eq!(html::best_row(&t), Some(4));
    let mut p = ProbeResult::new("channel-tune", "t", Status::Completed);
    p.tables.push(t.clone());
    let mut run = load("quick.json");
    run.probes = vec![p];
    let page = html::render_run(&run);
    assert!(page.contains("condvar ★") && !page.contains("profiling ★"));
    assert!(page.contains("★ best row: the one the table's best column marks."));
    // No row marked: no star.
    for r in &mut t.rows {
        r[2] = json!(false);
    }
    assert_eq!(html::best_row(&t), None);
}

#[test]
fn compare_draws_matrices_ratios_cdfs_and_aligned_tables() {
    let q = load("quick.json");
    let page = compare::render_html(&[q.clone(), q.clone()], None);
    let mats: usize = q.probes.iter().map(|p| p.matrices.len()).sum();
    // Two machines' maps and one ratio map per matrix, each with its scale.
    assert_eq!(page.matches("class='colour-scale'").count(), 3 * mats);
    assert!(page.contains("cumulative distribution per machine"));
    // Identical runs: the second curve says so in its legend.
    assert!(page.contains("= vm"), "identical runs not marked");
    for t in q.probes.iter().flat_map(|p| &p.tables) {
        assert!(page.contains(&format!("<h3>{}</h3>", t.name)), "{}", t.name);
    }
}
