//! Text a newcomer reads: `compare` fits the width it is given and words a
//! ratio's direction from the ratio (which side is better by the unit), `reference
//! compare` keeps three digits of a ratio and cites each source once, and the
//! glossary in `docs/glossary.md` is the one the HTML report embeds.

use assert_cmd::Command;
use corescope::model::{Estimate, Finding, Outcome, Point, ProbeResult, RunFile, Status};
use corescope::render::{compare, glossary, html};
use corescope::store;
use corescope::units::direction;
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

fn e(value: f64, lo: f64, hi: f64) -> Estimate {
    Estimate {
        value,
        lo,
        hi,
        n: 12,
    }
}

/// A run of one probe `p` on the quick fixture's machine: a time series
/// (`wait/linear`, ns) and a rate series (`rate/linear`, ops/s), each at 1 thread
/// with 12 samples around `time` and `rate` (± 1 %), and a comparison
/// of two loop orders' times with ratio `ratio` (normal ÷ transposed), told apart
/// or not.
fn run(host: &str, time: f64, rate: f64, ratio: Estimate, apart: bool) -> RunFile {
    let mut r = load("quick.json");
    r.host.hostname = host.into();
    r.schema_version = corescope::model::SCHEMA_VERSION;
    let mut p = ProbeResult::new("p", "synthetic", Status::Completed);
    for (name, unit, base) in [
        ("wait/linear", "ns", time),
        ("rate/linear", "ops_per_s", rate),
    ] {
        let samples = (0..12)
            .map(|k| base * (1.0 + 0.01 * (f64::from(k % 5) - 2.0) / 2.0))
            .collect();
        p.push_point(Point::samples(name, "threads", 1.0, unit, samples));
    }
    p.findings.push(Finding::Comparison {
        what: "multiply n = 256".into(),
        unit: "ns".into(),
        a: "normal".into(),
        a_value: e(920.0, 910.0, 930.0),
        b: "transposed".into(),
        b_value: e(1000.0, 990.0, 1010.0),
        ratio,
        significant: apart,
        outcome: if apart {
            Outcome::Different
        } else {
            Outcome::Inconclusive
        },
        context: None,
    });
    r.probes = vec![p];
    r
}

/// Two runs that differ: the second's times halved and rates doubled; the first
/// tells normal and transposed apart (0.92×), the second does not.
fn differing() -> [RunFile; 2] {
    [
        run("vm", 1000.0, 1e9, e(0.92, 0.90, 0.94), true),
        run("other", 500.0, 2e9, e(0.99, 0.95, 1.03), false),
    ]
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn compare_fits_the_width_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = differing();
    let (pa, pb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&pa, serde_json::to_string(&a).unwrap()).unwrap();
    std::fs::write(&pb, serde_json::to_string(&b).unwrap()).unwrap();
    let pairs = [(fixture("quick.json"), fixture("statuses.json")), (pa, pb)];
    for (first, second) in &pairs {
        for width in [60, 80, 100] {
            let out = corescope()
                .arg("compare")
                .arg(first)
                .arg(second)
                .args(["--width", &width.to_string()])
                .assert()
                .success();
            let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
            assert!(text.contains("Machines"), "{text}");
            assert!(
                widest(&text) <= width,
                "{width} columns: a line of {}:\n{}",
                widest(&text),
                text.lines()
                    .filter(|l| l.chars().count() > width)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
    // The library call takes the width too; under 40 it lays out for 40.
    let text = compare::render_text_width(&differing(), None, 10);
    assert!(widest(&text) <= 40, "{text}");
    // The first screen at 60 columns still names the largest difference first.
    let text = compare::render_text_width(&differing(), None, 60);
    assert!(
        text.starts_with("other against vm: ") && text.contains("\n  1. p "),
        "{text}"
    );
}

#[test]
fn compare_words_each_direction_from_its_ratio() {
    // One function words a ratio: times lower is better, rates higher.
    assert_eq!(direction(0.92, "ns"), "shorter (faster, better)");
    assert_eq!(direction(1.25, "ns"), "longer (slower, worse)");
    assert_eq!(direction(0.5, "seconds"), "shorter (faster, better)");
    assert_eq!(direction(2.0, "ops_per_s"), "higher (better)");
    assert_eq!(direction(0.8, "bytes_per_s"), "lower (worse)");
    assert_eq!(direction(1.5, "bytes"), "larger");
    // Wide enough that no item wraps.
    let text = compare::render_text_width(&differing(), None, 400);
    let top = &text[..text.find("Machines").expect("machines table")];
    // A time at 0.500× the first run is shorter, a rate at 2.00× higher; both better.
    assert!(
        top.contains("0.50×, other shorter (faster, better)")
            || top.contains("0.500×, other shorter (faster, better)"),
        "{top}"
    );
    assert!(top.contains("2.00×, other higher (better)"), "{top}");
    // The verdict: normal ÷ transposed 0.92× of times is normal shorter, never
    // "larger"; the other run does not tell them apart.
    assert!(
        top.contains("(normal ÷ transposed): vm 0.92× (95 % CI 0.90–0.94), normal shorter (faster, better); other 0.99× (95 % CI 0.95–1.03), not told apart"),
        "{top}"
    );
    assert!(top.contains("not told apart"), "{top}");
    assert!(!top.contains("larger"), "{top}");
    // Turned round (a slower normal), the same function says so.
    let slower = [
        run("vm", 1000.0, 1e9, e(1.25, 1.2, 1.3), true),
        run("other", 1000.0, 1e9, e(1.0, 0.97, 1.03), false),
    ];
    let text = compare::render_text_width(&slower, None, 400);
    assert!(
        text.contains("vm 1.25× (95 % CI 1.20–1.30), normal longer (slower, worse)"),
        "{text}"
    );
}

/// `reference compare` of `run` (written to a file) with the machine `name`.
fn reference_compare(run: &RunFile, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(&path, serde_json::to_string(run).unwrap()).unwrap();
    let out = corescope()
        .args(["reference", "compare"])
        .arg(&path)
        .arg(name)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).to_string()
}

/// The rows of a `reference compare` and its list of sources, checked: no row
/// prints a source, each listed once, each cited by a row.
fn rows_and_sources(text: &str) -> (&str, Vec<&str>) {
    let at = text.find("\nsources:\n").expect("sources listed");
    let (rows, sources) = text.split_at(at + 1);
    assert!(!rows.contains("source: "), "{rows}");
    let listed: Vec<&str> = sources.lines().skip(1).collect();
    let unique: std::collections::HashSet<&str> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "{sources}");
    for (k, l) in listed.iter().enumerate() {
        assert!(l.starts_with(&format!("  [{}] seeds/", k + 1)), "{sources}");
        assert!(
            rows.contains(&format!(" [{}]\n", k + 1)),
            "[{}] is cited by no row: {text}",
            k + 1
        );
    }
    (rows, listed)
}

/// The significant digits of each `… × the paper` ratio in `text`.
fn ratio_digits(text: &str) -> Vec<usize> {
    text.match_indices("× the paper")
        .map(|(i, _)| {
            let figure = text[..i].rsplit('(').next().unwrap_or("");
            figure
                .trim_start_matches(['0', '.'])
                .chars()
                .filter(char::is_ascii_digit)
                .count()
        })
        .collect()
}

#[test]
fn reference_compare_keeps_three_digits_and_cites_each_source_once() {
    // The quick run's machine (2 CPUs) with a compute peak per kind of work.
    let mut run = load("quick.json");
    run.clock.core_hz_all = Some(2.6e9);
    let mut p = ProbeResult::new("compute", "compute", Status::Completed);
    for (what, peak) in [("int", 3.969e9), ("fp", 1.135e9)] {
        p.findings.push(Finding::Scaling {
            what: what.into(),
            unit: "ops_per_s".into(),
            peak: Estimate::without_interval(peak),
            peak_threads: 8.0,
            peak_variant: "compact".into(),
            saturation_threads: 8.0,
            one_thread: None,
            cpus: 2,
        });
    }
    run.probes = vec![p];
    let text = reference_compare(&run, "t3-4");
    assert!(
        text.lines().nth(1)
            == Some(
                "2 CPUs beside 512 hardware threads: totals scale with the machine's size; \
                 compare the per-core and per-cycle rows"
            ),
        "{text}"
    );
    // Both per-core rows cite §4 of seed 000: one source, printed once.
    let (rows, listed) = rows_and_sources(&text);
    assert_eq!(listed.len(), 1, "{text}");
    assert_eq!(rows.matches(" [1]\n").count(), 2, "{text}");
    assert_eq!(ratio_digits(&text), [3, 3], "{text}");
    // The timer machines: ratios of a few hundredths keep three digits (the
    // quick run's step is 0.385 ns beside 13.3 ns: 0.0289×, never 0.00× or 0.029×);
    // the paper states no size, so no size line.
    let text = reference_compare(&run, "t3e");
    let (_, listed) = rows_and_sources(&text);
    assert_eq!(listed.len(), 2, "{text}");
    assert!(text.contains("(0.0289× the paper)"), "{text}");
    assert_eq!(ratio_digits(&text), [3, 3], "{text}");
    assert!(!text.contains("totals scale"), "{text}");
}

#[test]
fn the_glossary_file_is_the_table_the_report_embeds() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/glossary.md");
    let want = glossary::markdown();
    if std::env::var_os("UPDATE_GLOSSARY").is_some() {
        std::fs::write(&path, &want).expect("write docs/glossary.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/glossary.md differs from render/glossary.rs: run \
         UPDATE_GLOSSARY=1 cargo test -p corescope --test words"
    );
    // The report page embeds the same terms, collapsed, and links to them from
    // its answers.
    let page = html::render_run(&load("quick.json"));
    assert!(page.contains(&glossary::html()));
    let answers = &page[page.find("<section id='answers'>").unwrap()..];
    assert!(answers[..answers.find("</h2>").unwrap()].contains("href='#glossary'"));
    for (term, _) in glossary::TERMS {
        assert!(
            want.contains(&format!("**{}**", term.replace('*', "\\*"))),
            "{term}"
        );
    }
}
