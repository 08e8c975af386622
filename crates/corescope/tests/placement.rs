//! Placement strategies on synthetic machines: exact CPU lists per strategy.

use corescope::placement::{assign, format_assignment, order, PlacementError, Strategy};
use corescope::topology::{from_synthetic, Topology};

/// The SPARC T3-4 of seed 000: 4 packages × 16 cores × 2 integer pipelines × 4 strands.
const T3_4: &str = "pack:4 core:16 group:2 pu:4";
/// A two-socket x86: 2 × 4 cores × 2 SMT, SMT siblings numbered 8 apart.
const X86_2S: &str = "pack:2 core:4 pu:2(indexes=2*8:1*2)";

fn topo(spec: &str) -> Topology {
    from_synthetic(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn cpus(t: &Topology, s: &str, threads: usize) -> Vec<u32> {
    assign(t, &Strategy::parse(s).unwrap(), threads)
        .unwrap()
        .into_iter()
        .map(|c| c.expect("bound"))
        .collect()
}

#[test]
fn t3_4_shape() {
    let t = topo(T3_4);
    assert_eq!(t.summary(), "4 packages × 16 cores × 8 threads = 512 CPUs");
    let levels: Vec<(&str, usize)> = t
        .levels
        .iter()
        .map(|l| (l.name.as_str(), l.arity))
        .collect();
    assert_eq!(
        levels,
        [("package", 4), ("core", 16), ("group", 2), ("pu", 4)]
    );
    // OS CPU 100: package 0, core 12, second pipeline, first strand.
    let p = t.pu(100).unwrap();
    assert_eq!((p.package, p.core, p.slot), (0, 12, 4));
    assert_eq!(p.path, [0, 12, 1, 0]);
}

#[test]
fn t3_4_linear_and_compact_follow_the_ids() {
    let t = topo(T3_4);
    let all: Vec<u32> = (0..512).collect();
    assert_eq!(cpus(&t, "linear", 512), all);
    assert_eq!(cpus(&t, "compact", 512), all);
}

#[test]
fn t3_4_scatter_is_the_seeds_round_robin() {
    let t = topo(T3_4);
    let got = cpus(&t, "scatter", 512);
    assert_eq!(&got[..8], &[0, 128, 256, 384, 8, 136, 264, 392]);
    assert_eq!(&got[60..68], &[120, 248, 376, 504, 4, 132, 260, 388]);
    assert_eq!(&got[128..132], &[1, 129, 257, 385]);
    assert_eq!(&got[192..196], &[5, 133, 261, 389]);
    // Digit reversal over (package, core, pipeline, strand), package fastest.
    for (i, &cpu) in got.iter().enumerate() {
        let (pkg, core, pipe, strand) = (i % 4, (i / 4) % 16, (i / 64) % 2, (i / 128) % 4);
        assert_eq!(
            cpu as usize,
            pkg * 128 + core * 8 + pipe * 4 + strand,
            "thread {i}"
        );
    }
    // Threads 0-63: slot 0 of every core; 64-127 slot 4; 128-191 slot 1; 192-255 slot 5.
    for (range, slot) in [(0..64, 0), (64..128, 4), (128..192, 1), (192..256, 5)] {
        let mut cores: Vec<u32> = got[range.clone()]
            .iter()
            .map(|&c| {
                let p = t.pu(c).unwrap();
                assert_eq!(p.slot, slot, "thread range {range:?}");
                p.core
            })
            .collect();
        cores.sort_unstable();
        assert_eq!(cores, (0..64).collect::<Vec<u32>>());
    }
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..512).collect::<Vec<u32>>());
}

#[test]
fn t3_4_wraps_around() {
    let t = topo(T3_4);
    let got = cpus(&t, "scatter", 515);
    assert_eq!(&got[512..], &[0, 128, 256]);
    assert_eq!(cpus(&t, "linear", 514)[512..], [0, 1]);
}

#[test]
fn x86_two_sockets_siblings_eight_apart() {
    let t = topo(X86_2S);
    assert_eq!(t.summary(), "2 packages × 4 cores × 2 threads = 16 CPUs");
    // Core 0 holds CPUs 0 and 8.
    assert_eq!(t.pu(8).map(|p| (p.core, p.slot)), Some((0, 1)));
    assert_eq!(cpus(&t, "linear", 16), (0..16).collect::<Vec<u32>>());
    assert_eq!(
        cpus(&t, "compact", 16),
        [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]
    );
    assert_eq!(
        cpus(&t, "scatter", 16),
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
    );
    assert_eq!(
        cpus(&t, "scatter", 20),
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4, 1, 5]
    );
    assert_eq!(cpus(&t, "compact", 18)[16..], [0, 8]);
    assert_eq!(cpus(&t, "0,2,4-7", 8), [0, 2, 4, 5, 6, 7, 0, 2]);
    assert_eq!(cpus(&t, "9,3", 3), [9, 3, 9]);
}

#[test]
fn one_cpu_machine() {
    let t = topo("pu:1");
    assert_eq!(t.summary(), "1 package × 1 core × 1 thread = 1 CPU");
    for s in ["linear", "compact", "scatter", "0"] {
        assert_eq!(cpus(&t, s, 3), [0, 0, 0], "{s}");
    }
    assert_eq!(assign(&t, &Strategy::Unbound, 2).unwrap(), [None, None]);
    assert!(assign(&t, &Strategy::List(vec![1]), 1).is_err());
}

#[test]
fn unbound_binds_nothing() {
    let t = topo(X86_2S);
    let got = assign(&t, &Strategy::Unbound, 4).unwrap();
    assert_eq!(got, [None; 4]);
    assert_eq!(format_assignment(&got), "-,-,-,-");
    assert_eq!(
        format_assignment(&assign(&t, &Strategy::Scatter, 3).unwrap()),
        "0,4,1"
    );
}

#[test]
fn zero_threads_give_an_empty_list() {
    let t = topo(X86_2S);
    assert_eq!(assign(&t, &Strategy::Scatter, 0).unwrap(), []);
}

#[test]
fn parse_rejects_garbage() {
    assert_eq!(
        Strategy::parse("0,2,4-7").unwrap(),
        Strategy::List(vec![0, 2, 4, 5, 6, 7])
    );
    for bad in ["", "7-4", "1,,2", "zigzag", "1-x", "-", "4-", "1 2"] {
        let e = Strategy::parse(bad).unwrap_err();
        assert!(matches!(e, PlacementError::Parse(_)), "{bad:?}");
        assert!(
            e.to_string().contains("linear, compact, scatter, unbound"),
            "{e}"
        );
    }
}

#[test]
fn validate_names_the_bad_cpu_and_the_allowed_set() {
    let t = topo(X86_2S);
    assert!(Strategy::parse("0-15").unwrap().validate(&t).is_ok());
    assert!(Strategy::Scatter.validate(&t).is_ok());
    let e = Strategy::parse("3,16").unwrap().validate(&t).unwrap_err();
    assert!(
        matches!(e, PlacementError::NoSuchCpu { cpu: 16, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("CPU 16") && msg.contains("0-15"), "{msg}");
    assert!(assign(&t, &Strategy::List(vec![16]), 1).is_err());
}

#[test]
fn every_strategy_gives_each_cpu_once_per_round() {
    for spec in [
        T3_4,
        X86_2S,
        "pu:1",
        "pack:2 l3:2 core:3 pu:2",
        "core:5 pu:1",
    ] {
        let t = topo(spec);
        let n = t.pus.len();
        for s in [Strategy::Linear, Strategy::Compact, Strategy::Scatter] {
            let one = order(&t, &s);
            let mut sorted = one.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), n, "{spec} {s:?}");
            let two: Vec<u32> = assign(&t, &s, 2 * n)
                .unwrap()
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(&two[..n], &one[..]);
            assert_eq!(&two[n..], &one[..]);
        }
    }
}
