//! The command line: bad input gives one clear line and a non-zero exit, never a
//! panic and never a partial file; good input produces a valid run file.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

/// Run with args; expect exit status `code` (2: clap refused the command line,
/// 1: corescope did) with stderr containing `needle`, no panic, and that `out`
/// (if given) was not created.
fn fails_with(args: &[&str], code: i32, needle: &str, out: Option<&Path>) {
    let assert = corescope().args(args).assert().code(code);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(
        stderr.contains(needle),
        "args {args:?}: stderr was: {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "args {args:?} panicked: {stderr}"
    );
    // clap ends its line with a blank line and a hint to try `--help`.
    let clap_hint = "For more information, try '--help'.";
    let lines = stderr
        .trim()
        .lines()
        .filter(|l| code != 2 || (!l.trim().is_empty() && *l != clap_hint))
        .count();
    assert!(lines <= 2, "args {args:?}: not one clear line: {stderr}");
    if let Some(out) = out {
        assert!(!out.exists(), "args {args:?} left a file behind");
    }
}

#[test]
fn bad_input_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = out.to_str().unwrap();
    fails_with(
        &["run", "nosuchprobe", "--quick", "--out", o],
        1,
        "unknown probe 'nosuchprobe'",
        Some(&out),
    );
    fails_with(
        &[
            "run",
            "compute",
            "--quick",
            "--placement",
            "zigzag",
            "--out",
            o,
        ],
        1,
        "zigzag",
        Some(&out),
    );
    fails_with(
        &["run", "compute", "--quick", "--threads", "0", "--out", o],
        2,
        "invalid value '0' for '--threads <LIST>': thread count 0: give at least 1",
        Some(&out),
    );
    fails_with(
        &["run", "compute", "--quick", "--threads", "two", "--out", o],
        2,
        "invalid value 'two' for '--threads <LIST>': thread count 'two' is not a positive integer",
        Some(&out),
    );
    fails_with(
        &[
            "run",
            "compute",
            "--quick",
            "--placement",
            "0,4096",
            "--out",
            o,
        ],
        1,
        "4096",
        Some(&out),
    );
    fails_with(
        &["run", "compute", "--quick", "--budget", "0", "--out", o],
        2,
        "invalid value '0' for '--budget <SECONDS>': expected a positive number of seconds",
        Some(&out),
    );
    fails_with(
        &[
            "run",
            "compute",
            "--quick",
            "--out",
            "/nonexistent-dir/r.json",
        ],
        1,
        "does not exist",
        None,
    );
    fails_with(
        &[
            "run",
            "compute",
            "--quick",
            "--out",
            "/proc/corescope-r.json",
        ],
        1,
        "cannot write",
        None,
    );
    fails_with(&["topo", "--synthetic", "bogus:3 pu:x"], 1, "bogus", None);
    fails_with(
        &["place", "scatter", "--threads", "0"],
        2,
        "invalid value '0' for '--threads <N>': thread count 0: give at least 1",
        None,
    );
    fails_with(
        &["report", dir.path().join("missing.json").to_str().unwrap()],
        1,
        "missing.json",
        None,
    );
    let not_ours = dir.path().join("other.json");
    std::fs::write(&not_ours, "{\"hello\": 1}").unwrap();
    fails_with(
        &["report", not_ours.to_str().unwrap()],
        1,
        "not a valid corescope run file",
        None,
    );
    let truncated = dir.path().join("trunc.json");
    std::fs::write(
        &truncated,
        "{\"schema_version\": 1, \"tool\": {\"name\": \"corescope\"",
    )
    .unwrap();
    fails_with(
        &["report", truncated.to_str().unwrap()],
        1,
        "trunc.json",
        None,
    );
    let newer = dir.path().join("newer.json");
    std::fs::write(
        &newer,
        "{\"schema_version\": 999, \"tool\": {\"name\": \"corescope\", \"version\": \"9\"}}",
    )
    .unwrap();
    fails_with(
        &["report", newer.to_str().unwrap()],
        1,
        "schema version 999",
        None,
    );
}

#[test]
fn list_names_every_probe() {
    corescope()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("compute"));
}

#[test]
fn help_explains_commands() {
    corescope()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("topo").and(predicate::str::contains("place")));
}

#[test]
fn place_prints_one_line_of_cpus() {
    let out = corescope()
        .args([
            "place",
            "scatter",
            "--threads",
            "4",
            "--synthetic",
            "pack:2 core:2 pu:2",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let s = String::from_utf8(out).unwrap();
    assert_eq!(s.lines().count(), 1);
    assert_eq!(s.trim().split(',').count(), 4);
}

#[test]
fn topo_of_this_machine() {
    corescope()
        .arg("topo")
        .assert()
        .success()
        .stdout(predicate::str::contains("CPU"));
    let json = corescope()
        .args(["topo", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert!(!v["pus"].as_array().unwrap().is_empty());
}
