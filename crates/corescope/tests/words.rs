//! Text a newcomer reads: `reference compare` keeps three digits of a ratio and
//! cites each source once.

use assert_cmd::Command;
use corescope::model::{Estimate, Finding, ProbeResult, RunFile, Status};
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
