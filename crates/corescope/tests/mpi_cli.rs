//! `corescope mpi` on the command line. The MPI runs themselves need `mpirun` and
//! are checked by `.ci/steps/mpi.sh`; here only what works in every build.

use assert_cmd::Command;
use predicates::prelude::*;

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

#[test]
fn help_lists_mpi() {
    corescope()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("mpi"));
    corescope()
        .args(["mpi", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("pingpong")
                .and(predicate::str::contains("--pairs"))
                .and(predicate::str::contains("--trace")),
        );
}

#[test]
fn bad_mpi_options_are_refused_before_mpi_starts() {
    corescope()
        .args(["mpi", "pingpong", "--pairs", "some"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--pairs"));
}

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_mpi_says_how_to_enable_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let assert = corescope()
        .args(["mpi", "all", "--quick", "--out"])
        .arg(&out)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("--features mpi"), "{stderr}");
    assert!(stderr.contains("without MPI support"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists());
}
