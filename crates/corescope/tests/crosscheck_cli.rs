//! `corescope crosscheck` with no tool installed: it exits 0, every row of a tool says
//! how to install it, and the run file holds the rows for `report` to show again.
//! Nothing here times anything; the rows that need a tool are never measured.

use assert_cmd::Command;

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

#[test]
fn with_no_tool_installed_every_row_says_how_to_install_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty-path");
    std::fs::create_dir(&empty).expect("dir");
    let out = dir.path().join("cc.json");
    let assert = corescope()
        .args([
            "crosscheck",
            "memory",
            "mutex",
            "c2c",
            "syscall",
            "--no-progress",
        ])
        .arg("--out")
        .arg(&out)
        // No tool on the PATH, and no cargo bin directory with the crate in it.
        .env("PATH", &empty)
        .env("HOME", dir.path())
        .env("CARGO_HOME", dir.path())
        .env("COLUMNS", "160")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    for install in [
        "install likwid",
        "install rt-tests",
        "cargo install core-to-core-latency",
        "install linux-perf",
    ] {
        assert!(text.contains(install), "no '{install}' in:\n{text}");
    }

    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("run file")).expect("json");
    let rows = run["crosscheck"]["rows"].as_array().expect("rows");
    assert!(rows.len() >= 5, "{rows:?}");
    for r in rows {
        let state = r["status"]["state"].as_str().expect("a state");
        assert!(
            state == "not_installed" || state == "skipped",
            "{}: {state}",
            r["id"]
        );
        if state == "not_installed" {
            assert!(r["status"]["install"]
                .as_str()
                .is_some_and(|i| i.contains("install")));
        }
        assert!(r.get("ratio").is_none(), "no ratio without a tool: {r}");
    }
    // Every row is one line of the terminal table's notes.
    for r in rows {
        let id = r["id"].as_str().expect("id");
        assert!(text.contains(&format!("\n{id} (")), "no note for {id}");
    }

    // `report` shows the rows again, and the HTML holds them.
    let again = corescope()
        .arg("report")
        .arg(&out)
        .env("COLUMNS", "160")
        .assert()
        .success();
    let again = String::from_utf8_lossy(&again.get_output().stdout).to_string();
    assert!(
        again.contains("cross-check against established tools"),
        "{again}"
    );
    assert!(again.contains("install rt-tests"), "{again}");
    let html = std::fs::read_to_string(dir.path().join("cc.html")).expect("html next to it");
    assert!(html.contains("<section id='crosscheck'>"));
}

#[test]
fn unknown_probes_and_bad_rounds_are_refused() {
    let out = corescope()
        .args(["crosscheck", "nonesuch"])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("no rows for 'nonesuch'") && err.contains("memory"),
        "{err}"
    );
    for bad in ["1", "0", "51", "-3", "x"] {
        corescope()
            .args(["crosscheck", "--rounds", bad])
            .assert()
            .failure();
    }
}

/// A stand-in for a tool: a shell script printing a recorded output.
fn fake_tool(dir: &std::path::Path, name: &str, fixture: &str, code: i32) {
    use std::os::unix::fs::PermissionsExt;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/crosscheck")
        .join(fixture);
    let script = dir.join(name);
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat '{}'\nexit {code}\n", fixture.display()),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_tools_output_becomes_a_ratio_and_its_failure_a_failed_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("dir");
    fake_tool(&bin, "perf", "perf-syscall.txt", 0);
    fake_tool(&bin, "ptsematest", "ptsematest-bad-cpu.txt", 1);
    let out = dir.path().join("cc.json");
    corescope()
        .args([
            "crosscheck",
            "syscall",
            "mutex",
            "--rounds",
            "2",
            "--no-progress",
            "--no-html",
        ])
        .arg("--out")
        .arg(&out)
        .env("PATH", format!("{}:/bin:/usr/bin", bin.display()))
        .env("HOME", dir.path())
        .env("CARGO_HOME", dir.path())
        .assert()
        .success();
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("run file")).expect("json");
    let rows = run["crosscheck"]["rows"].as_array().expect("rows");
    let row = |id: &str| {
        rows.iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no row {id} in {rows:?}"))
    };
    let sys = row("syscall/getpid");
    assert_eq!(sys["status"]["state"], "measured", "{sys}");
    // The recorded output says 0.350852 µs per call: the tool's side of every round.
    let theirs = sys["theirs"].as_array().expect("theirs");
    assert_eq!(theirs.len(), 2);
    assert!(theirs
        .iter()
        .all(|t| (t.as_f64().unwrap() - 350.852).abs() < 1e-6));
    let ours = sys["ours"].as_array().expect("ours");
    assert_eq!(ours.len(), 2);
    let ratio = &sys["ratio"];
    let expect = ours
        .iter()
        .map(|o| o.as_f64().unwrap() / 350.852)
        .collect::<Vec<_>>();
    let (lo, hi) = (expect[0].min(expect[1]), expect[0].max(expect[1]));
    assert!(
        ratio["lo"].as_f64().unwrap() <= lo + 1e-9 && ratio["hi"].as_f64().unwrap() >= hi - 1e-9,
        "{ratio}"
    );
    assert!(sys["command"]
        .as_str()
        .unwrap()
        .contains("bench syscall basic"));
    let mutex = row("mutex/wake/same-cpu");
    assert_eq!(mutex["status"]["state"], "failed", "{mutex}");
    let why = mutex["status"]["why"].as_str().unwrap();
    assert!(why.contains("exit 1") && why.contains("CPU #7"), "{why}");
    assert!(mutex.get("ratio").is_none());
    assert!(
        mutex["tool"].as_str().unwrap().ends_with("-i 1000"),
        "{mutex}"
    );
    // Its experiment: the tool at corescope's settle time; it fails with the same
    // recorded tool.
    let r = row("mutex/wake/same-cpu/tool-at-settle");
    assert_eq!(r["status"]["state"], "failed", "{r}");
    assert!(r["tool"].as_str().unwrap().ends_with("-i 50"), "{r}");
    // The second: corescope's holder blocking as the tool's does, against the tool at
    // corescope's settle time; it names what it changes.
    let r = row("mutex/wake/same-cpu/holder-blocks");
    assert_eq!(r["status"]["state"], "failed", "{r}");
    assert!(r["tool"].as_str().unwrap().ends_with("-i 50"), "{r}");
    assert!(
        r["what"].as_str().unwrap().contains("holder blocking"),
        "{r}"
    );
}
