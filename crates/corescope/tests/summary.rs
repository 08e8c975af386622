//! The one-screen summary (`render/summary.rs`) on the recorded quick run and on
//! synthetic runs shaped as a default run records them: one screen, no line wider
//! than the width or cut, every probe present, every item shown whole or counted,
//! each probe's headline drawn by its shape.

use corescope::model::{
    Estimate, Finding, NoiseCause, Outcome, Point, ProbeResult, RunFile, Status, Warning,
};
use corescope::render::for_display;
use corescope::render::summary::{shape_of, summary, MAX_LINES};
use corescope::render::summary_headline::restated;
use corescope::render::summary_items::probe_items;

fn fixture() -> RunFile {
    serde_json::from_str(include_str!("fixtures/quick.json")).unwrap()
}

/// Whitespace collapsed, so a wrapped text can be searched for an item.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The summary at `width`: one screen, no line wider than `width`, none cut,
/// every probe present, and every item either shown whole or counted.
fn check(run: &RunFile, width: usize) -> Vec<String> {
    let lines = summary(run, width);
    let text = lines.join("\n");
    assert!(lines.len() <= MAX_LINES, "{} lines:\n{text}", lines.len());
    for l in &lines {
        assert!(
            l.chars().count() <= width,
            "wider than {width}: {l}\n{text}"
        );
        assert!(!l.contains('…'), "cut at {width}: {l}\n{text}");
    }
    let all = flat(&text);
    let shown = for_display(run);
    for p in &shown.probes {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{} ", p.id)) || *l == p.id),
            "{} missing at width {width}:\n{text}",
            p.id
        );
        let shape = shape_of(&corescope::probes::registry(), &p.id);
        let items = probe_items(p, &shape, &shown);
        let restated = restated(p, &shape);
        let whole = items
            .iter()
            .filter(|i| all.contains(&flat(i)) || restated.iter().any(|r| r.by(&all, i)))
            .count();
        assert!(
            whole == items.len() || all.contains("more in `corescope report`"),
            "{} of {} items of {} shown at {width}, the rest not counted:\n{text}",
            whole,
            items.len(),
            p.id
        );
    }
    lines
}

#[test]
fn the_recorded_run_fits_80_and_100_columns_uncut() {
    let run = fixture();
    for width in [100, 80, 60, 40] {
        check(&run, width);
    }
    let text = check(&run, 80).join("\n");
    assert!(text.contains("1 pair of CPUs"), "{text}");
    assert!(!text.contains("1 CPU pairs"), "{text}");
}

#[test]
fn many_probes_and_warnings_still_fit_one_screen() {
    let mut run = fixture();
    let base = run.probes.clone();
    for k in 0..3 {
        for p in &base {
            let mut q = p.clone();
            q.id = format!("{}-{k}", p.id);
            for (i, cause) in [
                NoiseCause::RoundTrip,
                NoiseCause::Load,
                NoiseCause::Drift,
                NoiseCause::Unknown,
                NoiseCause::Epochs,
            ]
            .into_iter()
            .enumerate()
            {
                q.warnings.push(Warning::Noisy {
                    detail: format!("load {i} {}", "x".repeat(200)),
                    cause,
                });
            }
            q.warnings.push(Warning::Migrated {
                case: format!("{} ×2", "y".repeat(80)),
                migrations: 3,
                rounds: 9,
            });
            q.warnings.push(Warning::TimerStep {
                series: "z".repeat(90),
                median_ns: 10.0,
                step_ns: 0.4,
            });
            run.probes.push(q);
        }
    }
    let lines = check(&run, 100);
    assert!(lines.iter().any(|l| l.starts_with("warnings: ")));
    let lines = check(&run, 80);
    assert!(lines.iter().any(|l| l.contains("more warnings in")));
}

fn e(value: f64, lo: f64, hi: f64) -> Estimate {
    Estimate {
        value,
        lo,
        hi,
        n: 8,
    }
}

/// A run with typed results of every shape the summary words, long names and
/// long warnings: what a default run of a larger machine gives.
fn synthetic() -> RunFile {
    let mut run = fixture();
    let mut compute = done("compute");
    for (placement, scale) in [("linear", 1.0), ("compact", 1.0), ("scatter", 0.5)] {
        let curve = [1.0f64, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .map(|t| (t, 1e9 * scale * if t <= 16.0 { t } else { 16.0 - t / 64.0 }));
        rates(&mut compute, &format!("int/{placement}"), &curve, 0.1);
    }
    let mut threads = done("threads");
    for w in [
        "same-cpu",
        "other-core",
        "smt-sibling",
        "other-package",
        "unpinned",
    ] {
        for (part, base) in [("call", 7000.0), ("start", 11000.0)] {
            let xs: Vec<f64> = (0..100).map(|i| base + f64::from(i)).collect();
            threads.distributions.push(corescope::stats::distribution(
                format!("create/joinable/{w}/{part}"),
                "ns",
                &xs,
            ));
        }
    }
    threads.findings.push(Finding::Comparison {
        what: "child start, by where the child runs".into(),
        unit: "ns".into(),
        a: "other-core".into(),
        a_value: e(11_440.0, 11_400.0, 11_500.0),
        b: "same-cpu".into(),
        b_value: e(11_000.0, 10_900.0, 11_100.0),
        ratio: e(1.04, 1.002, 1.06),
        significant: true,
        outcome: Outcome::Inconclusive,
        context: None,
    });
    let mut c2c = done("c2c");
    c2c.findings.push(Finding::Value {
        what: "c2c/cas: 1 CPU pairs (same package)".into(),
        unit: "ns".into(),
        value: e(116.0, 110.0, 120.0),
        context: Some("0-1".into()),
    });
    let mut tune = ProbeResult::new("channel-tune-with-a-long-name", "t", Status::Completed);
    tune.findings.push(Finding::Note {
        text: format!(
            "the tuner picked batch 64; {}",
            "because of a reason ".repeat(12)
        ),
    });
    // A warning in words, as an older run file holds it.
    let old: Warning = serde_json::from_value(serde_json::json!({
        "kind": "note",
        "text": format!("wake: median 150.0 ns {}", "is 15 steps of the timer ".repeat(6)),
    }))
    .expect("an old note reads");
    tune.warnings.push(old);
    run.probes = vec![compute, threads, c2c, tune];
    run
}

#[test]
fn a_larger_run_fits_80_and_100_columns_uncut_in_labelled_words() {
    let run = synthetic();
    for width in [100, 80] {
        let text = check(&run, width).join("\n");
        let all = flat(&text);
        assert!(
            all.contains("int peak 16.00 Gops/s ±10% with 16 threads (linear and compact alike)"),
            "{text}"
        );
        assert!(
            all.contains("child on same-cpu: pthread_create returns in"),
            "{text}"
        );
        assert!(all.contains("1 pair of CPUs"), "{text}");
        assert!(all.contains("the tuner picked batch 64"), "{text}");
    }
}

fn scaling(what: &str, unit: &str, peak: Estimate, at: f64, sat: f64) -> Finding {
    Finding::Scaling {
        what: what.into(),
        unit: unit.into(),
        peak,
        peak_threads: at,
        peak_variant: "linear".into(),
        saturation_threads: sat,
        one_thread: None,
        cpus: 2,
    }
}

fn value(what: &str, unit: &str, value: Estimate) -> Finding {
    Finding::Value {
        what: what.into(),
        unit: unit.into(),
        value,
        context: None,
    }
}

fn compare(what: &str, unit: &str, a: &str, b: &str, ratio: Estimate, o: Outcome) -> Finding {
    Finding::Comparison {
        what: what.into(),
        unit: unit.into(),
        a: a.into(),
        a_value: e(2.0, 1.9, 2.1),
        b: b.into(),
        b_value: e(1.0, 0.95, 1.05),
        significant: ratio.lo > 1.0 || ratio.hi < 1.0,
        ratio,
        outcome: o,
        context: None,
    }
}

/// Distributions `name` of 100 samples from `base` ns up.
fn dists(p: &mut ProbeResult, names: &[(&str, f64)]) {
    for (name, base) in names {
        let xs: Vec<f64> = (0..100)
            .map(|i| base * (1.0 + f64::from(i) / 1e4))
            .collect();
        p.distributions
            .push(corescope::stats::distribution(*name, "ns", &xs));
    }
}

/// A tuner step's table: rows of (label, ns per event, lo, hi, events, best).
fn tune_table(name: &str, rows: &[(&str, f64, f64, f64, u64, bool)]) -> corescope::model::Table {
    let columns = [
        "run",
        "events",
        "best",
        "runs",
        "ns_per_event",
        "ns_per_event_lo",
        "ns_per_event_hi",
    ];
    corescope::model::Table {
        name: name.into(),
        columns: columns.iter().map(|c| (*c).to_string()).collect(),
        rows: rows
            .iter()
            .map(|(label, v, lo, hi, events, best)| {
                vec![
                    (*label).into(),
                    (*events).into(),
                    (*best).into(),
                    8.into(),
                    (*v).into(),
                    (*lo).into(),
                    (*hi).into(),
                ]
            })
            .collect(),
    }
}

fn done(id: &str) -> ProbeResult {
    ProbeResult::new(id, "t", Status::Completed)
}

/// A rate per thread count (`ops_per_s`) as series `name`: three repetitions
/// per point, `y` and `y` ± `spread` of it.
fn rates(p: &mut ProbeResult, name: &str, curve: &[(f64, f64)], spread: f64) {
    for &(t, y) in curve {
        let ys = vec![y, (1.0 + spread) * y, (1.0 - spread) * y];
        p.push_point(Point::samples(name, "threads", t, "ops_per_s", ys));
    }
}

/// compute, peak, memory, numa and workload as a default run records them.
fn scaling_probes() -> Vec<ProbeResult> {
    let mut compute = done("compute");
    compute.findings.extend([
        scaling("int", "ops_per_s", e(3.56e9, 3.54e9, 3.58e9), 6.0, 2.0),
        scaling("fp", "ops_per_s", e(2.404e9, 2.37e9, 2.42e9), 6.0, 2.0),
    ]);
    let mut peak = done("peak");
    for (isa, gflops, fpc) in [
        ("scalar-f64", 23.28, 3.197),
        ("avx2-f64", 91.32, 12.66),
        ("avx512-fma-f64", 114.9, 15.67),
        ("avx2-fma-f32", 228.7, 31.43),
        ("sse2-f32", 93.03, 12.69),
    ] {
        let g = gflops * 1e9;
        peak.findings.push(scaling(
            isa,
            "flops_per_s",
            e(g, 0.998 * g, 1.002 * g),
            2.0,
            2.0,
        ));
        peak.findings.push(value(
            &format!("{isa}: FLOP per cycle with one thread"),
            "flops_per_cycle",
            e(fpc, 0.998 * fpc, 1.002 * fpc),
        ));
    }
    let mut memory = done("memory");
    for (what, gbs) in [
        ("read", 29.25),
        ("write", 27.06),
        ("copy", 41.13),
        ("triad", 40.89),
    ] {
        let v = gbs * 1e9;
        memory.findings.push(scaling(
            what,
            "bytes_per_s",
            e(v, 0.96 * v, 1.04 * v),
            4.0,
            2.0,
        ));
    }
    let mut numa = done("numa");
    numa.findings.push(value(
        "read of node 0 from its own CPUs",
        "bytes_per_s",
        e(26.99e9, 26.0e9, 28.2e9),
    ));
    let mut workload = done("workload");
    workload.findings.push(compare(
        "compute: the fewest threads that reach the best rate, vs one thread",
        "units_per_s",
        "2 threads",
        "1 thread",
        e(1.98, 1.95, 2.02),
        Outcome::Different,
    ));
    vec![compute, peak, memory, numa, workload]
}

/// threads, mutex, condvar, timers and syscall as a default run records them.
fn latency_probes() -> Vec<ProbeResult> {
    let mut threads = done("threads");
    let mut mutex = done("mutex");
    let mut condvar = done("condvar");
    let mut syscall = done("syscall");
    dists(
        &mut threads,
        &[
            ("create/joinable/same-cpu/call", 8062.0),
            ("create/joinable/same-cpu/start", 11830.0),
            ("create/joinable/other-core/call", 19850.0),
            ("create/joinable/other-core/start", 35430.0),
            ("create/joinable/unpinned/start", 16900.0),
        ],
    );
    dists(
        &mut mutex,
        &[
            ("uncontended/pthread", 5.408),
            ("uncontended/std", 4.356),
            ("uncontended/parking_lot", 5.138),
            ("handoff/sleeping/same-cpu/wake", 2424.0),
            ("handoff/sleeping/other-core/wake", 20640.0),
            ("handoff/spinning/other-core/wake", 65.48),
        ],
    );
    dists(
        &mut condvar,
        &[
            ("signal/same-cpu/call", 1422.0),
            ("signal/same-cpu/wake", 3165.0),
            ("signal/other-core/call", 7772.0),
            ("signal/other-core/wake", 27990.0),
        ],
    );
    dists(&mut syscall, &[("getpid", 139.1), ("sched_yield", 482.0)]);
    for p in [&mut threads, &mut mutex, &mut condvar, &mut syscall] {
        p.findings.push(Finding::Note {
            text: "other-package: skipped: one package".into(),
        });
    }
    let mut timers = done("timers");
    timers.findings.extend([
        value("tsc (rdtsc): read overhead", "ns", e(9.65, 9.47, 10.22)),
        value("tsc (rdtsc): step", "ns", e(0.39, 0.39, 0.39)),
    ]);
    vec![threads, mutex, condvar, timers, syscall]
}

/// atomics, c2c, false-sharing, sharing and spin as a default run records them.
fn coherence_probes() -> Vec<ProbeResult> {
    let mut atomics = done("atomics");
    atomics.findings.push(compare(
        "with 8 threads (4.0× the CPUs), fastest vs slowest method",
        "increments_per_s",
        "fetch-add",
        "mutex",
        e(4.3, 3.8, 4.9),
        Outcome::Different,
    ));
    let mut c2c = done("c2c");
    for (name, v, lo, hi) in [("cas", 102.6, 98.4, 106.9), ("rw", 209.3, 204.2, 214.5)] {
        c2c.findings.push(value(
            &format!("c2c/{name}: 1 CPU pairs (same cache)"),
            "ns",
            Estimate {
                value: v,
                lo,
                hi,
                n: 1,
            },
        ));
    }
    let mut false_sharing = done("false-sharing");
    false_sharing.findings.push(compare(
        "time per increment, packed vs padded counters",
        "ns",
        "packed (2 B)",
        "padded (128 B)",
        e(3.11, 3.02, 3.2),
        Outcome::Different,
    ));
    let mut sharing = done("sharing");
    sharing.findings.push(Finding::CoreSharing {
        a: 0,
        b: 1,
        shared: None,
        kernel: "l1-load".into(),
        ratio: e(0.97, 0.85, 1.04),
        ratios: Default::default(),
        topology: "same cache".into(),
        topology_same_core: false,
    });
    let mut spin = done("spin");
    spin.findings.push(Finding::Slowdown {
        what: "active thread, spinner other-core".into(),
        cause: "a plain spin loop".into(),
        ratio: e(1.01, 0.975, 1.069),
        outcome: Outcome::Inconclusive,
        context: None,
    });
    vec![atomics, c2c, false_sharing, sharing, spin]
}

/// channel, channel-tune, pool and matmul as a default run records them.
fn runtime_probes() -> Vec<ProbeResult> {
    let mut channel = done("channel");
    for (what, b, r) in [
        ("8B events ×1, other-core", "rtrb", e(1.49, 1.37, 1.61)),
        ("8B events ×256, other-core", "rtrb", e(1.66, 1.5, 1.83)),
        ("8B events ×256, other-core", "ringbuf", e(1.48, 1.33, 1.63)),
    ] {
        channel.findings.push(compare(
            what,
            "events_per_s",
            "hspc",
            b,
            r,
            Outcome::Different,
        ));
    }
    let mut tune = done("channel-tune");
    tune.params.insert("event_bytes".into(), 24.into());
    tune.tables.extend([
        tune_table(
            "stage one: producer stack offset (loop 2)",
            &[(
                "3 × 4096 B, pad 128 B, spin_then_park",
                7.123,
                6.92,
                8.18,
                1000,
                true,
            )],
        ),
        tune_table(
            "stage one: wait strategy",
            &[(
                "4 × 1500000 B, pad 128 B, spin_then_park",
                2.398,
                2.35,
                3.63,
                1000,
                true,
            )],
        ),
        tune_table(
            "stage two: fib, 24-byte events",
            &[(
                "4 × 1500000 B, pad 128 B, spin_then_park",
                109.3,
                108.6,
                116.1,
                30,
                true,
            )],
        ),
    ]);
    tune.findings.push(Finding::Note {
        text: format!("stage one: roadmap: {}", "a long note ".repeat(30)),
    });
    let mut pool = done("pool");
    pool.findings.extend([
        compare(
            "fft 2^14 (a worker per butterfly), time, mutex vs lock-free free list",
            "s",
            "mutex free list",
            "lock-free free list",
            e(1.08, 0.86, 1.3),
            Outcome::Inconclusive,
        ),
        compare(
            "fft 2^14 (a worker per butterfly), time, taskpool vs rayon",
            "s",
            "taskpool (mutex free list)",
            "rayon",
            e(40.8, 36.0, 48.0),
            Outcome::Different,
        ),
    ]);
    let mut matmul = done("matmul");
    matmul.findings.extend([
        compare(
            "matmul n = 512, best vs worst loop order",
            "flops_per_s",
            "ikj/normal",
            "kji/normal",
            e(44.7, 33.8, 57.0),
            Outcome::Different,
        ),
        // Its interval holds 1: the headline must not call it a difference.
        compare(
            "matmul n = 512, the library vs the best loop order",
            "flops_per_s",
            "library (matrixmultiply)",
            "ikj/normal",
            e(1.2, 0.9, 1.5),
            Outcome::Inconclusive,
        ),
    ]);
    vec![channel, tune, pool, matmul]
}

/// The probes of a default run with typed results shaped as a real one records
/// them (19 probes: one line each at 100 columns).
fn default_like() -> RunFile {
    let mut run = fixture();
    run.probes = scaling_probes();
    run.probes.extend(latency_probes());
    run.probes.extend(coherence_probes());
    run.probes.extend(runtime_probes());
    for p in &mut run.probes {
        // More results than one screen holds: every probe is held to one line.
        for k in 0..3 {
            p.findings.push(compare(
                &format!("extra {k}, a longer name for a comparison"),
                "ns",
                "one variant with a long name",
                "another",
                e(2.0, 1.9, 2.1),
                Outcome::Different,
            ));
        }
        p.warnings.push(Warning::Noisy {
            detail: format!("load {}", "x".repeat(60)),
            cause: NoiseCause::Load,
        });
    }
    run
}

/// Each probe's block (its lines up to the next probe's), by id.
fn blocks(lines: &[String], run: &RunFile) -> Vec<(String, String)> {
    let ids: Vec<&str> = run.probes.iter().map(|p| p.id.as_str()).collect();
    let starts = |l: &str| ids.iter().any(|id| l.starts_with(&format!("{id} ")));
    let mut out: Vec<(String, String)> = Vec::new();
    for l in lines {
        if starts(l) {
            let id = l.split(' ').next().unwrap_or_default().to_string();
            out.push((id, l.clone()));
        } else if l.starts_with(' ') {
            if let Some(last) = out.last_mut() {
                last.1.push(' ');
                last.1.push_str(l.trim());
            }
        }
    }
    out
}

#[test]
fn every_probe_leads_with_its_headline_at_100_columns() {
    let run = default_like();
    let lines = check(&run, 100);
    let text = lines.join("\n");
    let shown = blocks(&lines, &run);
    assert_eq!(shown.len(), run.probes.len(), "{text}");
    for (id, block) in &shown {
        assert!(
            !block.contains("see `corescope report`"),
            "{id}: {block}\n{text}"
        );
        assert!(block.chars().any(|c| c.is_ascii_digit()), "{id}: {block}");
    }
    let all = flat(&text);
    for headline in [
        "peak int 3.560 Gops/s, fp 2.404 Gops/s ±2% with 6 threads, 95 % of it already at 2",
        "f64 114.9 GFLOP/s (avx512-fma, 2 threads), one thread 15.67 FLOP per cycle",
        "peak read 29.25 GB/s ±4%, write 27.06 GB/s ±4%",
        "a new thread runs after 11.89 µs on same-cpu, 35.61 µs on other-core",
        "lock+unlock 4.378–5.435 ns uncontended; waking a waiter on other-core: sleeping \
         20.74 µs, spinning 65.80 ns",
        "a signalled waiter wakes after 3.181 µs on same-cpu, 28.13 µs on other-core",
        "compare-and-swap hand-over 102.6 ns (range 98.40–106.9 ns)",
        "CPUs 0 and 1 are not told apart as one core or two",
        "spinner on other-core, a plain spin loop: 1.01× ±5%, no effect shown",
        "8 B events in batches of 256 (other-core): hspc at 1.48× ±11% the rate of ringbuf",
        "pick 4 × 1500000 B, pad 128 B, spin_then_park: 2.398 ns ±27% per event",
        "fft 2^14: taskpool (mutex free list) takes 40.8× ±15% as long as rayon",
        "library (matrixmultiply) vs ikj/normal 1.20× ±25%, no difference shown",
    ] {
        assert!(all.contains(headline), "missing {headline}:\n{text}");
    }
}

#[test]
fn headlines_shorten_to_fit_80_columns() {
    let run = default_like();
    let lines = check(&run, 80);
    let text = lines.join("\n");
    let shown = blocks(&lines, &run);
    assert_eq!(shown.len(), run.probes.len(), "{text}");
    for (id, block) in &shown {
        assert!(
            !block.contains("see `corescope report`"),
            "{id}: {block}\n{text}"
        );
    }
    let all = flat(&text);
    assert!(
        all.contains("batches of 256 × 8 B: hspc at 1.48× ±11%"),
        "{text}"
    );
    assert!(
        all.contains("lock+unlock 4.378–5.435 ns uncontended"),
        "{text}"
    );
}

#[test]
fn scaling_families_show_each_placement_with_its_interval() {
    let mut run = fixture();
    let mut p = done("compute");
    for (placement, scale) in [("linear", 1.0), ("scatter", 0.5)] {
        let curve = [1.0, 2.0, 4.0].map(|t| (t, 1e9 * t * scale));
        rates(&mut p, &format!("int/{placement}"), &curve, 0.1);
    }
    run.probes = vec![p];
    let text = flat(&check(&run, 100).join("\n"));
    assert!(
        text.contains("int peak 4.000 Gops/s ±10% with 4 threads (linear)"),
        "{text}"
    );
    assert!(
        text.contains("int peak 2.000 Gops/s ±10% with 4 threads (scatter)"),
        "{text}"
    );
}

/// Seed 001's Table 2 from one thread to the CPUs filled, with its source.
#[test]
fn seed_001_figures_name_their_source() {
    use corescope::analysis::seed001::{cpi_series, efficiency_series, mips_series};
    let mut run = fixture();
    let cpus = run.topology.allowed_count() as f64;
    let mut p = ProbeResult::new("compute", "t", Status::Completed);
    p.params.insert("machine_max_mips".into(), 38400.0.into());
    for t in [1.0, cpus] {
        let mips = 1597.5 * t;
        for (name, unit, v) in [
            (
                mips_series("int", "unbound"),
                corescope::counters::MIPS_FROM_COUNT,
                mips,
            ),
            (
                cpi_series("int", "unbound"),
                corescope::counters::CPI_FROM_COUNT,
                0.75,
            ),
            (
                efficiency_series("int", "unbound"),
                corescope::counters::PERCENT_OF_MAX_MIPS,
                100.0 * mips / 38400.0,
            ),
        ] {
            p.push_point(Point::samples(name, "threads", t, unit, vec![v; 3]));
        }
    }
    run.probes = vec![p];
    let text = flat(&check(&run, 200).join("\n"));
    if cpus > 1.0 {
        assert!(
            text.contains("int seed 001 (unbound): 1598 → ")
                && text.contains("efficiency 4.160 % → ")
                && text.contains("(from the kernel's instruction count)"),
            "{text}"
        );
    }
}

#[test]
fn saturation_is_said_in_words() {
    let mut run = fixture();
    let mut p = done("compute");
    let curve = [(1.0, 1.5e9), (2.0, 2.997e9 - 0.1e9), (4.0, 2.997e9)];
    rates(&mut p, "int/linear", &curve, 0.0);
    run.probes = vec![p];
    let text = flat(&check(&run, 100).join("\n"));
    assert!(
        text.contains("int peak 2.997 Gops/s with 4 threads, 95 % of it already at 2 (linear)"),
        "{text}"
    );
}

/// The headline's figures are not said again by an item: compute's int family
/// peaks at the figure its headline names, so the placement that reaches it is
/// left out; the other placement stays.
#[test]
fn an_item_the_headline_states_is_left_out() {
    let mut run = fixture();
    let mut p = done("compute");
    for (placement, scale) in [("linear", 1.0), ("scatter", 0.5)] {
        let curve = [(1.0, 1e9), (2.0, 2e9), (4.0, 2e9)].map(|(t, y)| (t, y * scale));
        rates(&mut p, &format!("int/{placement}"), &curve, 0.0);
    }
    p.findings
        .push(scaling("int", "ops_per_s", e(2e9, 2e9, 2e9), 4.0, 2.0));
    run.probes = vec![p];
    let text = flat(&check(&run, 100).join("\n"));
    assert!(
        text.contains("peak int 2.000 Gops/s with 4 threads, 95 % of it already at 2"),
        "{text}"
    );
    assert!(!text.contains("int peak 2.000 Gops/s"), "{text}");
    assert!(
        text.contains("int peak 1.000 Gops/s with 4 threads, 95 % of it already at 2 (scatter)"),
        "{text}"
    );
}

#[test]
fn a_comparison_probe_leads_with_its_first_finding_in_a_shorter_form() {
    // The pool's findings as a default run orders them: the FFT with a cutoff
    // first (too long for one line whole), rmatmul at equal k after (short).
    let mut run = default_like();
    let pool = run
        .probes
        .iter_mut()
        .find(|p| p.id == "pool")
        .expect("the pool probe");
    pool.findings = vec![
        compare(
            "fft 2^12 with a sequential cutoff, time, each runtime at its best cutoff",
            "s",
            "taskpool (one thread per CPU) at cutoff 1024",
            "rayon at cutoff 1024",
            e(1.19, 1.15, 1.23),
            Outcome::Different,
        ),
        compare(
            "rmatmul N = 512, time at equal k = 4 (4096 leaf tasks)",
            "s",
            "taskpool (one thread per CPU)",
            "rayon",
            e(1.01, 0.99, 1.02),
            Outcome::Equivalent,
        ),
    ]
    .into();
    let pool_block = |width| {
        let lines = check(&run, width);
        let (_, block) = blocks(&lines, &run)
            .into_iter()
            .find(|(id, _)| id == "pool")
            .expect("a pool block");
        flat(&block).trim_start_matches("pool ").to_string()
    };
    // At 100 columns the FFT leads, its sides named by their first words.
    let block = pool_block(100);
    assert!(
        block.starts_with("fft 2^12 with a sequential cutoff: taskpool takes 1.19×"),
        "{block}"
    );
    assert!(block.contains("as long as rayon"), "{block}");
    // At 80 no form of it fits the line: the next finding leads.
    let block = pool_block(80);
    assert!(block.starts_with("rmatmul N = 512: taskpool"), "{block}");
}
