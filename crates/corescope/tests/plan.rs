//! `corescope plan`: the default profile's estimate on every topology file, the
//! 512-strand T3-4 and a 2,048-strand synthetic machine stays within 10 minutes;
//! the plan of this machine lists every registered probe. Estimates use the
//! reference calibration so they do not depend on the machine the tests run on.

use corescope::estimate::{plan_all, plan_ctx, Calibration, PlanReport};
use corescope::model::Profile;
use corescope::probes::registry;
use corescope::topology::{from_synthetic, from_xml_file, Topology};
use std::path::PathBuf;

/// The default profile's promise (DESIGN.md: "≤ 10 min on any machine").
const DEFAULT_LIMIT_S: f64 = 600.0;

fn xml_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("CORESCOPE_TOPOLOGIES").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies"),
        PathBuf::from,
    );
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "note: {} not found; skipping the topology files",
            dir.display()
        );
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    v.sort();
    v
}

fn plan(topo: Topology) -> PlanReport {
    plan_profile(topo, Profile::Default)
}

fn plan_profile(topo: Topology, profile: Profile) -> PlanReport {
    let ctx = plan_ctx(topo, profile, corescope::cli::default_budget_s(profile));
    plan_all(&registry(), &ctx, &Calibration::reference())
}

/// FNV-1a (64 bits): a fingerprint of text, recorded in a test.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn total(what: &str, r: &PlanReport) -> f64 {
    let per: Vec<String> = r
        .probes
        .iter()
        .map(|p| format!("{} {:.0} s", p.id, p.seconds))
        .collect();
    println!("{what}: {:.0} s ({})", r.total_s, per.join(", "));
    r.total_s
}

fn check_over(results: &[(String, f64)]) {
    let over: Vec<String> = results
        .iter()
        .filter(|(_, t)| *t > DEFAULT_LIMIT_S)
        .map(|(w, t)| format!("{w}: {t:.0} s"))
        .collect();
    assert!(
        over.is_empty(),
        "default profile estimated over {DEFAULT_LIMIT_S} s on: {over:?} (docs/plan.md says what the profile scales down on big machines)"
    );
}

#[test]
fn default_profile_fits_ten_minutes_on_every_topology_file() {
    let mut results = Vec::new();
    for f in xml_files() {
        let t = from_xml_file(&f).unwrap();
        let w = f.display().to_string();
        let s = total(&w, &plan(t));
        results.push((w, s));
    }
    check_over(&results);
}

#[test]
fn default_profile_fits_ten_minutes_on_the_t3_4_and_2048_strands() {
    let mut results = Vec::new();
    for spec in ["pack:4 core:16 group:2 pu:4", "pack:8 numa:2 core:32 pu:4"] {
        let t = from_synthetic(spec).unwrap();
        let r = plan(t);
        assert!(r.cpus == 512 || r.cpus == 2048, "{spec}: {}", r.cpus);
        results.push((spec.to_string(), total(spec, &r)));
    }
    check_over(&results);
}

#[test]
fn plan_structure_is_sound() {
    let t = from_synthetic("pack:2 core:4 pu:2").unwrap();
    let r = plan(t);
    let ids: Vec<&str> = r.probes.iter().map(|p| p.id.as_str()).collect();
    let reg: Vec<&'static str> = registry().iter().map(|p| p.id()).collect();
    assert_eq!(ids, reg);
    let sum: f64 = r.probes.iter().map(|p| p.seconds).sum();
    assert!(r.total_s >= sum && r.total_s.is_finite());
    for p in &r.probes {
        assert!(
            p.seconds >= 0.0 && p.seconds <= p.budget_s + 1.0,
            "{}",
            p.id
        );
        if p.status == "planned" {
            assert!(!p.cases.is_empty(), "{}", p.id);
            assert!(p.modelled, "{}: no cost model", p.id);
            for c in &p.cases {
                assert!(
                    c.threads >= 1 && c.runs >= 0.0 && c.seconds >= 0.0,
                    "{}",
                    c.label
                );
            }
        } else {
            assert!(p.reason.is_some(), "{}", p.id);
        }
    }
    // Thread sweeps show their CPUs.
    let compute = r.probes.iter().find(|p| p.id == "compute").unwrap();
    assert!(compute.cases.iter().all(|c| !c.cpus.is_empty()));
    // JSON round trip.
    let j = serde_json::to_string(&r).unwrap();
    let back: PlanReport = serde_json::from_str(&j).unwrap();
    assert_eq!(back.probes.len(), r.probes.len());
}

#[test]
fn plan_of_this_machine_lists_every_registered_probe() {
    let Ok(t) = corescope::topology::detect() else {
        println!("note: no topology here; skipping");
        return;
    };
    let cal = Calibration::measure(&t);
    assert!(
        cal.calibration_s < 2.0,
        "calibration took {} s",
        cal.calibration_s
    );
    assert!(cal.op_ns > 0.0 && cal.byte_ns > 0.0 && cal.spawn_ns > 0.0);
    let ctx = plan_ctx(t, Profile::Quick, 30.0);
    let r = plan_all(&registry(), &ctx, &cal);
    assert_eq!(r.probes.len(), registry().len());
    for (p, q) in r.probes.iter().zip(registry()) {
        assert_eq!(p.id, q.id());
    }
}

#[test]
fn more_cpus_never_plan_fewer_compute_cases_than_the_thinned_rule() {
    let small = plan(from_synthetic("pack:1 core:2 pu:1").unwrap());
    let big = plan(from_synthetic("pack:4 core:16 group:2 pu:4").unwrap());
    let compute = |r: &PlanReport| r.probes.iter().find(|p| p.id == "compute").unwrap().clone();
    assert!(compute(&big).cases.len() >= compute(&small).cases.len());
    assert!(compute(&big).params.contains_key("scaled_down"));
    assert!(!compute(&small).params.contains_key("scaled_down"));
}

#[test]
fn big_machines_say_what_the_default_profile_scales_down() {
    let r = plan(from_synthetic("pack:8 numa:2 core:32 pu:4").unwrap());
    for id in [
        "compute",
        "peak",
        "memory",
        "atomics",
        "workload",
        "numa",
        "sharing",
        "loaded-latency",
        "loaded-coherence",
        "clock-curve",
    ] {
        let p = r.probes.iter().find(|p| p.id == id).unwrap();
        assert!(
            p.params.get("scaled_down").is_some_and(|v| v.is_string()),
            "{id}: no scaled_down"
        );
    }
    // Above 256 CPUs the ladder steps by four and keeps the CPU count and 2x.
    let compute = r.probes.iter().find(|p| p.id == "compute").unwrap();
    let mut counts: Vec<usize> = compute.cases.iter().map(|c| c.threads).collect();
    counts.sort_unstable();
    counts.dedup();
    assert_eq!(counts, vec![1, 4, 16, 64, 256, 1024, 2048, 4096]);
    // Peak: the widest unit sweeps every count, the narrower ones 1 and 2048 only.
    let peak = r.probes.iter().find(|p| p.id == "peak").unwrap();
    let mut by_kernel: std::collections::BTreeMap<&str, std::collections::BTreeSet<usize>> =
        Default::default();
    for c in &peak.cases {
        let kernel = c.label.split(' ').next().unwrap_or_default();
        by_kernel.entry(kernel).or_default().insert(c.threads);
    }
    let swept = by_kernel.values().filter(|t| t.len() > 2).count();
    assert!(swept <= 2, "{by_kernel:?}"); // f64 and f32 of one unit
    for t in by_kernel.values().filter(|t| t.len() <= 2) {
        assert!(t.iter().all(|&n| n == 1 || n == 2048), "{by_kernel:?}");
    }
}

/// The quick plan of a 256-PU machine with NUMA nodes inside packages and shared L3s
/// (scatter across nodes, the c2c subset, numa's sampled cells), as recorded before
/// planning was made n · log n (issue 43): per probe, a fingerprint of the set of
/// (threads, CPUs) its cases run on, and for the probes whose sweep depends on the
/// topology alone (not on this machine's vector units or huge pages) of every case's
/// label, threads, CPUs and sizes. A change of placement or sweep shows here: record
/// the new fingerprints only when the change is meant.
#[test]
fn a_mid_size_plan_keeps_its_recorded_cases_and_placements() {
    const RECORDED: [(&str, u64, Option<u64>); 10] = [
        ("compute", 0x659036d0dd1d31ca, Some(0x6ee697dfab10058b)),
        ("peak", 0xce50f5b55bad6377, None),
        ("memory", 0xe28cc0089552488d, None),
        ("numa", 0x45f413181892ff3f, Some(0x7e70971ef8293265)),
        ("workload", 0xd3d012a86486af7e, Some(0xab949afeb40da579)),
        ("atomics", 0x7f055c1b89171878, Some(0x611c1ae30a0dcfb1)),
        ("c2c", 0x507c435abc5dba0f, Some(0xd328dc20e1c96dd7)),
        (
            "false-sharing",
            0xbc7119e1ce2d4ce1,
            Some(0x50c6b2077285bd09),
        ),
        ("sharing", 0x507c435abc5dba0f, None),
        ("spin", 0xc00ce98e34abe6a0, Some(0x183989c9bdd33eba)),
    ];
    let r = plan_profile(
        from_synthetic("pack:4 numa:2 l3:2 core:8 pu:2").unwrap(),
        Profile::Quick,
    );
    for (id, placements, cases) in RECORDED {
        let p = r.probes.iter().find(|p| p.id == id).unwrap();
        let places: std::collections::BTreeSet<String> = p
            .cases
            .iter()
            .map(|c| format!("{}\t{}\n", c.threads, c.cpus))
            .collect();
        let got = fnv1a(&places.into_iter().collect::<String>());
        assert_eq!(got, placements, "{id}: placements changed ({got:#018x})");
        if let Some(want) = cases {
            let text: String = p
                .cases
                .iter()
                .map(|c| format!("{}\t{}\t{}\t{}\n", c.label, c.threads, c.cpus, c.size))
                .collect();
            let got = fnv1a(&text);
            assert_eq!(got, want, "{id}: cases changed ({got:#018x})");
        }
    }
}

/// The largest machine a topology may describe plans completely, every case
/// placed (planning grows as n · log n; this test asserts no time).
#[test]
fn the_quick_plan_of_the_largest_accepted_machine_places_every_case() {
    let max = corescope::topology::MAX_PUS;
    let r = plan_profile(
        from_synthetic("pack:16 core:128 pu:8").unwrap(),
        Profile::Quick,
    );
    assert_eq!(r.cpus, max);
    assert_eq!(r.probes.len(), registry().len());
    let compute = r.probes.iter().find(|p| p.id == "compute").unwrap();
    assert_eq!(compute.status, "planned");
    assert_eq!(
        compute.cases.iter().map(|c| c.threads).max(),
        Some(4 * max),
        "compute sweeps to 4x the CPUs"
    );
    for c in &compute.cases {
        let listed = if c.cpus.starts_with("unbound") {
            c.threads
        } else {
            c.cpus.split(',').count()
        };
        assert_eq!(listed, c.threads, "{}: one CPU per thread", c.label);
    }
    // scatter's first threads go to different packages (16 × 1,024 PUs).
    let scatter = compute
        .cases
        .iter()
        .find(|c| c.label == "int scatter ×16")
        .unwrap();
    let packages: std::collections::BTreeSet<u32> = scatter
        .cpus
        .split(',')
        .map(|x| x.parse::<u32>().unwrap() / 1024)
        .collect();
    assert_eq!(packages.len(), 16, "{}", scatter.cpus);
}

/// pool: the seed's uncapped FFT mode is planned beside the capped one at every
/// size up to twice the cap's points, and priced with the workers it starts on
/// demand (and again every call beyond the cap).
#[test]
fn the_pool_plan_prices_the_uncapped_fft_and_the_workers_it_starts() {
    let r = plan_profile(
        from_synthetic("pack:1 core:2 pu:1").unwrap(),
        Profile::Quick,
    );
    let pool = r.probes.iter().find(|p| p.id == "pool").unwrap();
    let case = |label: &str| pool.cases.iter().find(|c| c.label == label);
    let top = pool.params["fft_uncapped_max_log2"].as_u64().unwrap();
    let cap = pool.params["pool_max_threads"].as_u64().unwrap();
    assert_eq!(top, (2 * cap).ilog2().min(10) as u64);
    for log2 in 1..=10 {
        for exec in ["mutex-uncapped", "lockfree-uncapped"] {
            let c = case(&format!("fft 2^{log2} {exec}"));
            assert_eq!(c.is_some(), log2 <= top, "2^{log2} {exec}");
            if let Some(c) = c {
                assert!(c.runs >= 1.0 && c.seconds > 0.0, "{c:?}");
            }
        }
    }
    assert!(pool.params["fft_uncapped_bound"].as_u64().unwrap() >= 1);
    // At 2^top the uncapped pool asks for more workers than the cap and starts
    // them in every run (40 µs each on the reference machine), the ones beyond
    // the cap again every call: dearer than the capped run.
    let per_run = |label: String| {
        let c = case(&label).unwrap();
        c.seconds / c.runs
    };
    let (capped, uncapped) = (
        per_run(format!("fft 2^{top} mutex")),
        per_run(format!("fft 2^{top} mutex-uncapped")),
    );
    let workers = (1u64 << top).min(cap) as f64;
    assert!(
        uncapped >= capped + workers * 40e-6 * 0.9,
        "{capped} {uncapped}"
    );
    assert!(pool.seconds > 0.0 && pool.seconds <= pool.budget_s);
}

/// The probes under load (issue 39) on a 2,048-strand machine: each thins itself
/// (loaded-latency one node, a three-step ladder, read/write traffic at saturation;
/// loaded-coherence the other-core and other-package pairs, loaded by their own
/// nodes; clock-curve the vector widths at one thread and the CPU count) and says
/// what it left out; a 64-CPU machine keeps the whole ladder and every pair.
#[test]
fn the_loaded_probes_thin_on_a_2048_strand_machine_and_say_what_they_leave_out() {
    let planned = |spec: &str, id: &str| {
        let ctx = plan_ctx(
            from_synthetic(spec).unwrap(),
            Profile::Default,
            corescope::cli::default_budget_s(Profile::Default),
        );
        let probe = registry().into_iter().find(|p| p.id() == id).unwrap();
        probe.plan_owned(&ctx).unwrap()
    };
    let big = "pack:8 numa:2 core:32 pu:4";
    for id in ["loaded-latency", "loaded-coherence", "clock-curve"] {
        let plan = planned(big, id);
        assert!(!plan.cases.is_empty(), "{id}");
        assert!(
            plan.params
                .get("scaled_down")
                .is_some_and(|v| v.is_string()),
            "{id}: no scaled_down"
        );
        assert!(
            plan.skipped.iter().any(|s| s.contains("not measured")),
            "{id}: {:?}",
            plan.skipped
        );
    }
    // loaded-latency: idle (two page kinds), three read steps, read/write at 0.
    let lat = planned(big, "loaded-latency");
    let labels: Vec<&str> = lat.cases.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels.len(), 6, "{labels:?}");
    assert!(labels.iter().all(|l| l.contains("-node0 ")), "{labels:?}");
    assert!(
        labels.contains(&"latency-node0 read-write step 3"),
        "{labels:?}"
    );
    assert_eq!(
        lat.skipped.iter().filter(|s| s.contains("on node")).count(),
        15,
        "every node but the first listed"
    );
    // loaded-coherence: two pairs, each loaded by at most its two nodes' CPUs.
    let coh = planned(big, "loaded-coherence");
    let pairs = coh.params["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    for p in pairs {
        assert!(
            p["injectors"].as_array().unwrap().len() <= 2 * 128 - 2,
            "{p}"
        );
    }
    // clock-curve: the scalar chain sweeps, every other width at 1 and 2,048 only.
    let clock = planned(big, "clock-curve");
    for c in &clock.cases {
        let threads = c.params["threads"].as_u64().unwrap();
        assert!(
            c.label.starts_with("scalar") || threads == 1 || threads == 2048,
            "{}",
            c.label
        );
    }
    // A 64-CPU machine (thinned, not coarse): the whole ladder, every pair.
    let mid = "pack:2 numa:2 core:8 pu:2";
    let lat = planned(mid, "loaded-latency");
    assert!(
        lat.skipped.iter().all(|s| !s.contains("ladder")),
        "{:?}",
        lat.skipped
    );
    assert_eq!(
        planned(mid, "loaded-coherence").params["pairs"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

/// `plan --fleet N`: a fleet run costs one node's run (all at once) plus the
/// gather, parse and judgement on rank 0, which grow with the nodes; the bytes
/// follow docs/fleet.md ("The cost at scale").
#[test]
fn a_fleet_run_is_priced_from_one_nodes_plan() {
    use corescope::fleet::cost::{price, words};
    let topo = from_synthetic("pack:1 core:2 pu:1").expect("synthetic machine");
    let node = plan_profile(topo, Profile::Quick);
    let costs: Vec<_> = [10, 1_000, 10_000].map(|n| price(&node, n)).into();
    for c in &costs {
        assert_eq!(c.node_run_s, node.total_s);
        assert!(c.figures > 0 && c.run_file_bytes > 0.0);
        assert!((c.gathered_bytes - c.nodes as f64 * c.run_file_bytes).abs() < 1.0);
        assert!(c.total_s > c.node_run_s);
        println!("{}", words(c));
    }
    // Rank 0's work grows with the nodes; a node's run does not.
    assert!(costs[2].parse_s > 100.0 * costs[0].parse_s);
    assert!(costs[2].total_s > costs[1].total_s && costs[1].total_s > costs[0].total_s);
    // The whole quick suite of a small machine: a run file of a few hundred kB
    // (docs/fleet.md: 109 kB for five probes; a few MB for a full profile).
    assert!(
        (50e3..5e6).contains(&costs[0].run_file_bytes),
        "{:?}",
        costs[0]
    );
    assert!(words(&costs[1]).contains("fleet of 1000 nodes"));
}
