//! `corescope tune channel` through the binary: a small budget still ends in a
//! configuration file that `hspc::Config` reads; bad input is refused in one clear
//! line with a non-zero exit and no file. No timing thresholds.

use assert_cmd::Command;

fn corescope() -> Command {
    Command::cargo_bin("corescope").expect("binary built")
}

/// The tuner pins a producer and a consumer to two CPUs and spins; two tuners at
/// once would each measure the other (and starve each other's budget), so the
/// tests that tune take turns.
static ONE_TUNER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `tune channel` with `args` and a budget of `budget_s` into `dir`: its stdout,
/// the configuration file and the run file it wrote.
fn tune(
    dir: &std::path::Path,
    budget_s: &str,
    args: &[&std::ffi::OsStr],
) -> (String, std::path::PathBuf, std::path::PathBuf) {
    let out = dir.join("hspc.json");
    let run_file = dir.join("run.json");
    let _turn = ONE_TUNER.lock().unwrap_or_else(|e| e.into_inner());
    let assert = corescope()
        .args(["tune", "channel", "--budget", budget_s])
        .args(args)
        .arg("--out")
        .arg(&out)
        .arg("--run-file")
        .arg(&run_file)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    (stdout, out, run_file)
}

#[test]
fn a_small_budget_writes_a_config_hspc_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, out, run_file) = tune(dir.path(), "3", &[]);
    for line in [
        "stage one: roadmap (seed 004 Figure 1)",
        "stage one: padding on p3 (loop 1)",
        "stage one: producer stack offset (loop 2)",
        "stage one: buffer count × buffer size (loop 3)",
        "stage two: fib, 128-byte events",
        "stage two: fib, 24-byte events",
        "best:",
    ] {
        assert!(stdout.contains(line), "missing '{line}' in:\n{stdout}");
    }
    let text = std::fs::read_to_string(&out).expect("config written");
    let config: hspc::Config = serde_json::from_str(&text).expect("hspc::Config parses it");
    config
        .validate::<[u64; 3]>()
        .expect("valid for 24-byte events");
    // The run file holds every step as a table and the same best configuration.
    let run = corescope::store::load(&run_file).expect("run file loads");
    let entry = &run.probes[0];
    assert_eq!(entry.id, "channel-tune");
    // Its findings are data, not sentences: the choice first, then the steps'
    // notes, each worded by the renderer as the terminal printed it.
    use corescope::model::Finding;
    assert!(
        entry
            .findings
            .iter()
            .all(|f| !matches!(f, Finding::Note { .. })),
        "a finding in words: {:?}",
        entry.findings
    );
    assert!(matches!(
        entry.findings.iter().next(),
        Some(Finding::TunerChoice { .. })
    ));
    let words: Vec<String> = entry
        .findings
        .iter()
        .map(corescope::render::words::finding)
        .collect();
    assert!(words[0].starts_with("best: "), "{}", words[0]);
    for (f, w) in entry.findings.iter().zip(&words) {
        if let Finding::TuneStep { step, .. } = f {
            assert!(
                w.starts_with(&format!("{step}: ")) && w.len() > step.len() + 2,
                "{w}"
            );
        }
    }
    assert!(
        words
            .iter()
            .any(|w| w.contains("work offloaded by p8_rmfalsesharing")),
        "{words:?}"
    );
    // The rows the seed names: the baselines and Stage Two's three limit lines.
    let labels: Vec<&str> = entry
        .tables
        .iter()
        .flat_map(|t| t.rows.iter().filter_map(|r| r.first()?.as_str()))
        .collect();
    for row in [
        "baseline producer",
        "baseline consumer",
        "p0_add_parallel",
        "p1_singlealloc",
        "SMT baseline",
        "p2_ADD_shareddatastructure",
        "p3_rmfalsesharing",
        "p5_ADD_sharedbuffer",
        "p6_rmfalsesharing",
        "p7_ADD_sync",
        "p8_rmfalsesharing",
        "Container: HashMap",
        "Container: BTreeMap",
        "Optimal",
        "Achievable",
        "Upper bound",
    ] {
        assert!(
            labels.iter().any(|l| l.starts_with(row)),
            "no row '{row}' in {labels:?}"
        );
    }
    // Stage Two is drawn as seed 004's Figures 3–8: time per event vs buffer size,
    // one curve per wait strategy and the three limit lines.
    let curves: Vec<&str> = entry
        .series
        .iter()
        .filter(|s| s.name.starts_with("fib, 24-byte events/"))
        .map(|s| s.name.as_str())
        .collect();
    for line in ["Optimal", "Achievable", "Upper bound"] {
        assert!(
            curves.iter().any(|c| c.ends_with(line)),
            "no {line} line among {curves:?}"
        );
    }
    assert!(entry
        .tables
        .iter()
        .any(|t| t.name == "stage one: roadmap (seed 004 Figure 1)"));
    assert!(
        stdout.contains("work offloaded by p8_rmfalsesharing"),
        "no work offloaded in:\n{stdout}"
    );
    assert!(entry
        .tables
        .iter()
        .any(|t| t.name == "stage one: producer stack offset (loop 2)" && !t.rows.is_empty()));
    assert!(entry
        .tables
        .iter()
        .any(|t| t.name == "stage two: fib, 24-byte events" && !t.rows.is_empty()));
    // The wait-strategy step counts context switches per thread.
    assert!(
        stdout.contains("ctx sw: context switches"),
        "no ctx sw note in:\n{stdout}"
    );
    let waits = entry
        .tables
        .iter()
        .find(|t| t.name == "stage one: wait strategy")
        .expect("wait-strategy table");
    assert!(waits.columns.iter().any(|c| c == "producer_ctx_sw_per_1e6"));
    // Stage Two runs each configuration with affinity on (pinned) and off.
    assert!(
        stdout.contains("affinity"),
        "no affinity column in:\n{stdout}"
    );
    for t in entry
        .tables
        .iter()
        .filter(|t| t.name.starts_with("stage two"))
    {
        let col = t
            .columns
            .iter()
            .position(|c| c == "affinity")
            .unwrap_or_else(|| panic!("{}: no affinity column", t.name));
        for row in &t.rows {
            assert!(
                row[col] == "on" || row[col] == "off",
                "{}: affinity {:?}",
                t.name,
                row[col]
            );
        }
    }
    let affinity = entry.params["best_affinity"]
        .as_str()
        .expect("best_affinity");
    assert!(affinity == "on" || affinity == "off", "{affinity}");
    let best: hspc::Config =
        serde_json::from_value(entry.params["best_config"].clone()).expect("best_config");
    assert_eq!(best, config);
    // And the channel it describes works.
    let (mut tx, mut rx) = hspc::channel::<u64>(config).unwrap();
    std::thread::scope(|s| {
        s.spawn(move || {
            for i in 0..10_000u64 {
                tx.push(i).unwrap();
            }
        });
        assert!(rx.by_ref().eq(0..10_000u64));
    });
}

/// Runs `tune` with `args` and an `--out` in a fresh directory, expecting `code`
/// (`None`: any failure); its stderr, after checking that nothing panicked and
/// nothing was written.
fn refused_stderr(args: &[&str], code: Option<i32>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hspc.json");
    let run = corescope().args(args).arg("--out").arg(&out).assert();
    let assert = match code {
        Some(c) => run.code(c),
        None => run.failure(),
    };
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(!out.exists(), "{args:?} left a file behind");
    stderr
}

fn refused(args: &[&str], needle: &str) {
    let stderr = refused_stderr(args, None);
    assert!(stderr.contains(needle), "{args:?}: stderr was: {stderr}");
    assert!(
        stderr.trim().lines().count() <= 2,
        "{args:?}: not one clear line: {stderr}"
    );
}

/// A bad number refused by clap: exit 2, the option, the value and why on the
/// first line (then clap's hint to try `--help`), nothing written.
fn refused_by_clap(args: &[&str], needle: &str) {
    let stderr = refused_stderr(args, Some(2));
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.contains(needle), "{args:?}: stderr was: {stderr}");
}

#[test]
fn bad_input_is_refused_clearly() {
    refused_by_clap(
        &["tune", "channel", "--event-bytes", "0"],
        "invalid value '0' for '--event-bytes <N>': an event needs at least 1 byte",
    );
    refused_by_clap(
        &["tune", "channel", "--event-bytes", "x"],
        "invalid value 'x' for '--event-bytes <N>': expected a number of bytes from 1 to 1024",
    );
    refused_by_clap(
        &["tune", "channel", "--event-bytes", "5000"],
        "invalid value '5000' for '--event-bytes <N>': at most 1024 bytes",
    );
    refused_by_clap(
        &["tune", "channel", "--budget", "0"],
        "invalid value '0' for '--budget <SECONDS>': expected a positive number of seconds",
    );
    refused(&["tune", "pool"], "unknown tuning target 'pool'");
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.json");
    let missing = missing.to_str().unwrap();
    refused(&["tune", "channel", "--against", missing], "cannot read it");
    let not_config = dir.path().join("run.json");
    std::fs::write(&not_config, "{\"probes\": []}").unwrap();
    refused(
        &["tune", "channel", "--against", not_config.to_str().unwrap()],
        "not a channel configuration",
    );
    let too_small = dir.path().join("small.json");
    let tiny = hspc::Config::n_buffer(2, 8);
    std::fs::write(&too_small, serde_json::to_string(&tiny).unwrap()).unwrap();
    refused(
        &["tune", "channel", "--against", too_small.to_str().unwrap()],
        "--against",
    );
}

#[test]
fn a_configuration_given_against_is_raced_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let earlier = dir.path().join("earlier.json");
    let c = hspc::Config::n_buffer(3, 16384).with_wait(hspc::WaitStrategy::SpinPause);
    std::fs::write(&earlier, serde_json::to_string(&c).unwrap()).unwrap();
    let (stdout, _, run_file) = tune(dir.path(), "6", &["--against".as_ref(), earlier.as_ref()]);
    // The bullet as one line: the terminal wraps it with a hanging indent.
    let mut lines = stdout.lines().skip_while(|l| !l.contains("best:"));
    let first = lines.next().expect("a best line");
    let rest = lines.take_while(|l| l.starts_with(' ') && !l.trim_start().starts_with('•'));
    let best = std::iter::once(first)
        .chain(rest)
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let named = format!("--against {}: ", earlier.display());
    assert!(best.contains(&named), "{best}");
    let run = corescope::store::load(&run_file).expect("run file loads");
    let against = &run.probes[0].params["against"];
    let recorded: hspc::Config =
        serde_json::from_value(against[earlier.display().to_string()].clone())
            .expect("the raced configuration is recorded");
    assert_eq!(recorded, c);
    // Stage Two ran it (it comes right after the incumbent) under its label.
    let entry = &run.probes[0];
    let labels: Vec<&str> = entry
        .tables
        .iter()
        .filter(|t| t.name.starts_with("stage two"))
        .flat_map(|t| t.rows.iter().filter_map(|r| r.first()?.as_str()))
        .collect();
    assert!(
        labels.iter().any(|l| l.contains("(--against")),
        "{labels:?}"
    );
}
