//! `corescope doctor`: it lists this machine's conditions as a table (exit 0), and
//! `--tune` writes nothing without asking. Tuning is exercised on a fake `/sys` +
//! `/proc` tree (`--root`), never on the machine running the tests.

use assert_cmd::Command;
use std::path::Path;

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

/// A fake tree with a powersave governor and NUMA balancing on: two writes to make.
fn fake_tree(root: &Path) {
    let files = [
        ("sys/devices/system/cpu/online", "0\n"),
        (
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        ),
        ("proc/sys/kernel/numa_balancing", "1\n"),
    ];
    for (p, text) in files {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn read(root: &Path, p: &str) -> String {
    std::fs::read_to_string(root.join(p)).unwrap()
}

const GOVERNOR: &str = "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";

#[test]
fn doctor_prints_a_table_of_this_machine() {
    let out = corescope()
        .arg("doctor")
        .env("COLUMNS", "120")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "check",
        "verdict",
        "governor",
        "thp",
        "steal",
        "conditions blur",
    ] {
        assert!(text.contains(want), "{want} missing from:\n{text}");
    }
    let out = corescope().args(["doctor", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["checks"].as_array().map(Vec::len), Some(12), "{v}");
}

#[test]
fn tune_without_a_terminal_or_yes_refuses_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fake_tree(dir.path());
    let state = dir.path().join("state");
    let out = corescope()
        .args(["doctor", "--tune", "--root"])
        .arg(dir.path())
        .env("XDG_STATE_HOME", &state)
        .write_stdin("y\n")
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("stdin is not a terminal"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("performance"),
        "the plan is shown: {stdout}"
    );
    assert_eq!(read(dir.path(), GOVERNOR), "powersave\n");
    assert!(!state.exists(), "no state file without a write");
}

#[test]
fn tune_with_yes_writes_and_reset_restores() {
    let dir = tempfile::tempdir().unwrap();
    fake_tree(dir.path());
    let state = dir.path().join("state");
    let doctor = |args: &[&str]| {
        let mut c = corescope();
        c.arg("doctor")
            .args(args)
            .arg("--root")
            .arg(dir.path())
            .env("XDG_STATE_HOME", &state);
        c
    };
    doctor(&["--tune", "--yes"]).assert().success();
    assert_eq!(read(dir.path(), GOVERNOR), "performance\n");
    assert_eq!(read(dir.path(), "proc/sys/kernel/numa_balancing"), "0\n");
    assert!(state.join("corescope/doctor-saved.json").exists());
    // Something set the governor back: a second tune would save its tuned values
    // as the old ones, so it refuses while the first one's are kept.
    std::fs::write(dir.path().join(GOVERNOR), "schedutil\n").unwrap();
    let out = doctor(&["--tune", "--yes"]).assert().failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("--reset"), "{stderr}");
    doctor(&["--reset", "--yes"]).assert().success();
    assert_eq!(read(dir.path(), GOVERNOR), "powersave\n");
    assert_eq!(read(dir.path(), "proc/sys/kernel/numa_balancing"), "1\n");
    assert!(!state.join("corescope/doctor-saved.json").exists());
    let out = doctor(&["--reset", "--yes"]).assert().failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("nothing saved"), "{stderr}");
}
