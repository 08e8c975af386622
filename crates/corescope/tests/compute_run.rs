//! A quick compute run on the test machine: structure of the run file, and
//! plausibility only (no timing thresholds).

use assert_cmd::Command;
use corescope::model::Status;

#[test]
fn quick_compute_run_writes_a_valid_run_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let assert = Command::cargo_bin("corescope")
        .unwrap()
        .args([
            "run",
            "compute",
            "--quick",
            "--threads",
            "1,2,3",
            "--no-progress",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    // The run ends with the one-screen summary: a line per probe, no full tables.
    assert!(
        stdout.lines().any(|l| l.starts_with("compute ")),
        "{stdout}"
    );
    assert!(!stdout.contains("== compute"), "{stdout}");
    assert!(stdout.contains("run file:"), "{stdout}");

    let run = corescope::store::load(&out).expect("run file loads");
    assert_eq!(run.schema_version, corescope::model::SCHEMA_VERSION);
    assert_eq!(run.tool.name, "corescope");
    assert!(run.clock.ticks_hz > 0.0);
    // The measured core clock, or why not; plausibility only.
    match (run.clock.core_hz_one, run.clock.core_hz_all) {
        (Some(one), Some(all)) => {
            assert!(one > 1e7 && all > 1e7, "{:?}", run.clock);
            assert!(run.clock.core_hz_method.is_some());
        }
        _ => assert!(run.clock.core_hz_skipped.is_some(), "{:?}", run.clock),
    }
    assert!(!run.topology.pus.is_empty());
    assert_eq!(run.probes.len(), 1);
    let p = &run.probes[0];
    assert_eq!(p.id, "compute");
    assert!(
        matches!(p.status, Status::Completed),
        "{:?} {:?}",
        p.status,
        p.reason
    );
    assert_eq!(p.cases_done, p.cases_planned);
    assert!(p.params.contains_key("per_cycle_clock"));
    for kind in ["int", "fp"] {
        for placement in ["linear", "compact", "scatter", "unbound"] {
            let s = p
                .series(&format!("{kind}/{placement}"))
                .unwrap_or_else(|| panic!("{kind}/{placement}"));
            assert_eq!(s.x, vec![1.0, 2.0, 3.0]);
            assert!(s.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{s:?}");
            assert_eq!(s.y_name, "ops_per_s");
            let per_cycle = p.series(&format!("{kind}-per-cycle/{placement}")).unwrap();
            assert!(per_cycle.y.iter().all(|&y| y > 0.0));
            // Seed 001's MIPS and CPI from the kernel's instruction count (x86_64,
            // where the count was read off the generated code), PMU or not: MIPS is
            // the op rate × 1350 / 1024 instructions per operation.
            if cfg!(target_arch = "x86_64") {
                let mips = p
                    .series(&format!("{kind}-mips-from-count/{placement}"))
                    .unwrap();
                assert_eq!(mips.y_name, "mips_from_kernel_instruction_count");
                assert_eq!(mips.x, s.x);
                for (m, ops) in mips.y.iter().zip(&s.y) {
                    let ratio = m * 1e6 / ops;
                    assert!((ratio - 1350.0 / 1024.0).abs() < 1e-6, "{ratio}");
                }
                let cpi = p
                    .series(&format!("{kind}-cpi-from-count/{placement}"))
                    .unwrap();
                assert!(cpi.y.iter().all(|&y| y > 0.0 && y.is_finite()), "{cpi:?}");
            }
        }
        if cfg!(target_arch = "x86_64") {
            let t = p
                .tables
                .iter()
                .find(|t| t.name.starts_with(&format!("{kind}: seed 001 Table 2 (")))
                .expect("seed 001 table");
            assert_eq!(t.rows.len(), 3, "{t:?}");
        }
        // Plausibility of units and op counts, not of speed (a loaded machine may
        // give 2 threads less than 1): the best 2-thread and 1-thread figures are
        // within a factor of 50 of each other.
        if run.topology.allowed_count() >= 2 {
            let best = |x: f64| {
                p.series
                    .iter()
                    .filter(|s| s.name.starts_with(&format!("{kind}/")))
                    .filter_map(|s| s.x.iter().position(|&v| v == x).map(|i| s.y[i]))
                    .fold(0.0, f64::max)
            };
            let ratio = best(2.0) / best(1.0);
            assert!(
                (0.02..50.0).contains(&ratio),
                "{kind}: 2 threads {} vs 1 thread {}",
                best(2.0),
                best(1.0)
            );
        }
    }
    assert!(!p.findings.is_empty());
    // Every worker counted its events: per case, per round; MIPS / CPI / efficiency
    // columns where a PMU exists, a "skipped: no PMU (…)" note where not.
    use corescope::counters::Availability;
    let pc = p.counters.as_ref().expect("counters recorded");
    assert_eq!(pc.software, Availability::Counted, "{pc:?}");
    let c = pc.cases.iter().find(|c| c.case == "int linear ×2").unwrap();
    assert_eq!(c.threads, 2);
    assert!(c.rounds.iter().all(|r| r.total.task_clock_ns.unwrap() > 0));
    // linear ×2 pins both workers: their migrations are counted, and any the OS
    // made anyway (a loaded VM does) is said in a warning naming the case.
    if run.topology.allowed_count() >= 2 {
        assert!(
            c.rounds.iter().all(|r| r.pinned_migrations.is_some()),
            "{c:?}"
        );
        let moved: u64 = c.rounds.iter().filter_map(|r| r.pinned_migrations).sum();
        let said = p.warnings.iter().find_map(|w| match w {
            corescope::model::Warning::Migrated {
                case, migrations, ..
            } if case == "int linear ×2" => Some(*migrations),
            _ => None,
        });
        assert_eq!(said, (moved > 0).then_some(moved), "{:?}", p.warnings);
    }
    for kind in ["int", "fp"] {
        let name = format!("{kind}: counters per case (medians over rounds)");
        let t = p.tables.iter().find(|t| t.name == name).expect("table");
        assert_eq!(
            t.columns.iter().any(|c| c == "MIPS"),
            pc.hardware == Availability::Counted
        );
    }
    match &pc.hardware {
        Availability::Counted => assert!(c.mips.is_some() && c.cpi.is_some()),
        Availability::Skipped(why) => {
            assert!(why.to_string().contains("perf_event_open"), "{why}");
            assert!(p.findings.iter().any(|f| f
                .to_string()
                .starts_with("MIPS / CPI / efficiency: skipped:")));
        }
    }
}
