//! The warnings probes and the runner raise while measuring (pins, counters, stops,
//! memory and its placement, the environment), each as the sentence the report shows.
//! `words::warning` words the rest.

use crate::model::{Counted, CpuSubset, SampleStop, SizeStop, Warning};
use crate::units::fmt_value;

/// `1.5 GiB`, `256 MiB`, `4 KiB`.
fn bytes(n: u64) -> String {
    fmt_value("bytes", n as f64)
}

/// One of the measuring warnings as a sentence; `None` for the others (worded by
/// `words::warning`).
pub fn warning(w: &Warning) -> Option<String> {
    Some(match w {
        Warning::Unpinned { cpu, error } => {
            format!("the OS refused to pin a thread to CPU {cpu} ({error}); it ran unpinned")
        }
        Warning::PinnedElsewhere { cpu, now_cpu } => {
            format!("pinned a thread to CPU {cpu} but it runs on CPU {now_cpu}")
        }
        Warning::CountersFailed { op, group, error } => {
            format!("perf counters: {op} the {group} group: {error}")
        }
        Warning::StoppedAtDeadline {
            what,
            done,
            planned,
            unit,
        } => format!(
            "{what}: stopped at the probe's deadline after {done} of {planned} {}",
            counted(*unit)
        ),
        Warning::BudgetReached {
            group,
            rounds_done,
            rounds_min,
        } => format!("{group}: budget reached after {rounds_done} of at least {rounds_min} rounds"),
        Warning::SamplingStopped { variant, stop } => format!("{variant}: {}", sample_stop(stop)),
        Warning::Preempted {
            probe,
            kernel,
            threads,
            results,
            preempted,
        } => format!(
            "{probe}: {preempted} of {results} threads preempted at {} ({kernel}); their chains left out",
            crate::units::threads(*threads as f64)
        ),
        Warning::GaveUp { variant, n, time_s } => format!(
            "{variant}: gave up after n = {n} ({time_s:.1} s; the next size would take about 8× longer)"
        ),
        Warning::NotMonotonic { timer } => {
            format!("{timer}: a read on one CPU was later than the next read on another CPU")
        }
        Warning::FirstTouch { pin } => format!(
            "first touch by one thread: {}",
            warning(pin).unwrap_or_default()
        ),
        Warning::SizeGivenUp {
            series,
            size_log2,
            how,
        } => format!(
            "{series} gave up at size {size_log2}: {}",
            size_stop(how, *size_log2)
        ),
        Warning::MemoryShrunk {
            what,
            asked_bytes_per_thread,
            threads,
            usable_bytes,
            usable_percent,
            available_bytes,
            available_source,
            used_bytes_per_thread,
        } => format!(
            "{what}: {} per thread × {threads} threads does not fit in {} ({usable_percent:.0} % of {} available, {available_source}); used {} per thread",
            bytes(*asked_bytes_per_thread),
            bytes(*usable_bytes),
            bytes(*available_bytes),
            bytes(*used_bytes_per_thread)
        ),
        w => return placement_or_environment(w),
    })
}

/// Where memory went, and what the environment left out.
fn placement_or_environment(w: &Warning) -> Option<String> {
    Some(match w {
        Warning::NotBound { probe, mbind } => {
            format!("{probe}: {mbind} (memory placed by first touch)")
        }
        Warning::PagesElsewhere {
            probe,
            cell,
            node,
            checked_pages,
            elsewhere_pages,
            by_node,
        } => {
            let where_: Vec<String> = by_node
                .iter()
                .map(|(n, k)| format!("{k} on node {n}"))
                .collect();
            format!(
                "{probe} {cell}: {elsewhere_pages} of {checked_pages} checked pages not on node {node} ({})",
                where_.join(", ")
            )
        }
        Warning::PagesNodeUnknown {
            probe,
            cell,
            checked_pages,
            unknown_pages,
        } => format!(
            "{probe} {cell}: {unknown_pages} of {checked_pages} checked pages of unknown node (not present)"
        ),
        Warning::BindingUnchecked { probe, error } => format!("{probe}: binding unchecked: {error}"),
        Warning::NoNumaNode => "the OS reports no NUMA node: measured as one node 0".into(),
        Warning::NoHugePages { part, mode } => format!(
            "{part}: skipped: transparent huge pages unavailable (mode: {})",
            mode.as_deref().unwrap_or("not readable")
        ),
        Warning::IoSkipped { error } => format!("io: skipped: {error}"),
        Warning::IoInMemory { dir, filesystem } => format!(
            "io: {dir} is on {filesystem}: the IO units write and fsync memory, no disk; set TMPDIR to a directory on a disk to measure one"
        ),
        Warning::CpuSubset { subset } => cpu_subset(subset),
        Warning::Oversubscribed { host, ranks, cpus } => format!(
            "{host} runs {ranks} ranks on {cpus} CPUs (oversubscribed): ranks time-share CPUs, so \
             times include scheduling delays; compare only runs with ranks <= CPUs"
        ),
        Warning::TooFewRanks { bench, needed, .. } => format!(
            "{bench} skipped: it needs at least {needed} ranks (mpirun -np {needed} ...)"
        ),
        _ => return None,
    })
}

/// How a size of a growing sweep stopped, as the clause after it (`size_log2`: the
/// size given up).
pub fn size_stop(how: &SizeStop, size_log2: u32) -> String {
    let below = size_log2.saturating_sub(1);
    match how {
        SizeStop::BelowTooLong {
            below_s,
            case_budget_s,
        } => format!("size {below} took {below_s:.2} s of a {case_budget_s:.0} s case budget"),
        SizeStop::BelowStopped => {
            format!("size {below} was stopped (at its deadline or its thread bound) or not run")
        }
        SizeStop::Deadline {
            families_run,
            families_abandoned,
        } => format!(
            "stopped at its deadline after {families_run} families; {families_abandoned} abandoned"
        ),
        SizeStop::ThreadBound { max_threads, bound } => format!(
            "stopped at the safety bound: it wanted more than {max_threads} live threads \
             ({bound}), where the seed's pool would start another pthread"
        ),
        SizeStop::Old(text) => text.clone(),
    }
}

/// How a representative subset of the CPUs was chosen, as a sentence.
fn cpu_subset(s: &CpuSubset) -> String {
    let c = match s {
        CpuSubset::Old(text) => return text.clone(),
        CpuSubset::Chosen(c) if c.allowed == 0 => return "no allowed CPU".into(),
        CpuSubset::Chosen(c) => c,
    };
    let mut t = format!(
        "{} CPUs allowed: measured a representative subset of {} CPUs ({} pairs) holding a \
         pair of every level ({}): the SMT siblings of the first core, {} cores of the first \
         package, the first CPU of {} other packages",
        c.allowed,
        c.cpus,
        c.pairs,
        c.levels.join(", "),
        c.cores,
        c.packages
    );
    if let Some(b) = c.by_level {
        t.push_str(&format!(
            "; of these, up to {} pairs of each level ({} pairs; --full measures them all)",
            b.per_level, b.pairs
        ));
    }
    t
}

fn counted(unit: Counted) -> &'static str {
    match unit {
        Counted::Repetitions => "repetitions",
        Counted::Rounds => "rounds",
        Counted::Ns => "ns",
    }
}

/// Why a paired measurement stopped, as the clause after its variant.
pub fn sample_stop(s: &SampleStop) -> String {
    match s {
        SampleStop::Budget { samples: None } => "budget reached".into(),
        SampleStop::Budget { samples: Some(n) } => format!("budget reached after {n} samples"),
        SampleStop::PartnerNotReady { timeout_s } => {
            format!("the waiter did not get ready within {timeout_s} s")
        }
        SampleStop::PartnerNotWoken { timeout_s } => {
            format!("the waiter did not wake within {timeout_s} s")
        }
        SampleStop::ChildNotStarted { timeout_s } => {
            format!("a child did not start within {timeout_s} s")
        }
        SampleStop::CreateFailed { samples, error } => {
            format!("pthread_create failed after {samples} samples: {error}")
        }
        SampleStop::AttrInit => "pthread_attr_init failed".into(),
        SampleStop::AttrAffinity { cpu, rc } => {
            format!("pthread_attr_setaffinity_np(CPU {cpu}) failed: {rc}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::words;

    fn os(errno: i32) -> std::io::Error {
        std::io::Error::from_raw_os_error(errno)
    }

    #[test]
    fn pins_and_counters_read_as_their_errors_do() {
        let refused = crate::affinity::PinError::Refused {
            cpu: 7,
            source: os(libc::EINVAL),
        };
        let text = refused.to_string();
        let w = crate::harness::team::pin_warning(refused);
        assert_eq!(words::warning(&w), text);
        let elsewhere = crate::affinity::PinError::Elsewhere { cpu: 3, now: 5 };
        let text = elsewhere.to_string();
        assert_eq!(
            words::warning(&crate::harness::team::pin_warning(elsewhere)),
            text
        );
        let e = crate::counters::CounterError {
            op: "read",
            group: "hardware",
            source: os(libc::EIO).into(),
        };
        let text = e.to_string();
        assert_eq!(words::warning(&Warning::from(e)), text);
    }

    #[test]
    fn measuring_warnings_read_as_their_sentences_did() {
        let cases = [
            (
                Warning::StoppedAtDeadline {
                    what: "c2c 0↔1".into(),
                    done: 3,
                    planned: 8,
                    unit: Counted::Repetitions,
                },
                "c2c 0↔1: stopped at the probe's deadline after 3 of 8 repetitions",
            ),
            (
                Warning::BudgetReached {
                    group: "int ×2".into(),
                    rounds_done: 2,
                    rounds_min: 6,
                },
                "int ×2: budget reached after 2 of at least 6 rounds",
            ),
            (
                Warning::SamplingStopped {
                    variant: "same-cpu".into(),
                    stop: SampleStop::PartnerNotWoken { timeout_s: 5.0 },
                },
                "same-cpu: the waiter did not wake within 5 s",
            ),
            (
                Warning::SamplingStopped {
                    variant: "spawn".into(),
                    stop: SampleStop::CreateFailed {
                        samples: 10,
                        error: os(libc::EAGAIN).into(),
                    },
                },
                "spawn: pthread_create failed after 10 samples: Resource temporarily \
                 unavailable (os error 11)",
            ),
            (
                Warning::Preempted {
                    probe: "clock-curve".into(),
                    kernel: "avx2".into(),
                    threads: 4,
                    results: 4,
                    preempted: 1,
                },
                "clock-curve: 1 of 4 threads preempted at 4 threads (avx2); their chains left out",
            ),
            (
                Warning::GaveUp {
                    variant: "naive".into(),
                    n: 1024,
                    time_s: 2.54,
                },
                "naive: gave up after n = 1024 (2.5 s; the next size would take about 8× longer)",
            ),
            (
                Warning::PagesElsewhere {
                    probe: "numa".into(),
                    cell: "line of 0↔1".into(),
                    node: 0,
                    checked_pages: 16,
                    elsewhere_pages: 3,
                    by_node: vec![(1, 2), (2, 1)],
                },
                "numa line of 0↔1: 3 of 16 checked pages not on node 0 (2 on node 1, 1 on node 2)",
            ),
            (
                Warning::NoHugePages {
                    part: "read-thp".into(),
                    mode: None,
                },
                "read-thp: skipped: transparent huge pages unavailable (mode: not readable)",
            ),
            (
                Warning::FirstTouch {
                    pin: Box::new(Warning::PinnedElsewhere { cpu: 0, now_cpu: 2 }),
                },
                "first touch by one thread: pinned a thread to CPU 0 but it runs on CPU 2",
            ),
            (
                Warning::Oversubscribed {
                    host: "n1".into(),
                    ranks: 8,
                    cpus: 4,
                },
                "n1 runs 8 ranks on 4 CPUs (oversubscribed): ranks time-share CPUs, so times \
                 include scheduling delays; compare only runs with ranks <= CPUs",
            ),
            (
                Warning::TooFewRanks {
                    bench: "pingpong".into(),
                    ranks: 1,
                    needed: 2,
                },
                "pingpong skipped: it needs at least 2 ranks (mpirun -np 2 ...)",
            ),
        ];
        for (w, text) in cases {
            assert_eq!(words::warning(&w), text);
        }
    }

    #[test]
    fn given_up_sizes_and_subsets_read_as_their_sentences_did() {
        use crate::model::{PairsByLevel, SubsetChoice};
        let given_up = |how| {
            words::warning(&Warning::SizeGivenUp {
                series: "fft/lockfree".into(),
                size_log2: 14,
                how,
            })
        };
        let cases = [
            (
                SizeStop::BelowTooLong {
                    below_s: 1.234,
                    case_budget_s: 3.0,
                },
                "size 13 took 1.23 s of a 3 s case budget",
            ),
            (
                SizeStop::BelowStopped,
                "size 13 was stopped (at its deadline or its thread bound) or not run",
            ),
            (
                SizeStop::Deadline {
                    families_run: 3,
                    families_abandoned: 9,
                },
                "stopped at its deadline after 3 families; 9 abandoned",
            ),
            (
                SizeStop::ThreadBound {
                    max_threads: 3,
                    bound: "the harness's thread limit (RLIMIT_NPROC (ulimit -u))".into(),
                },
                "stopped at the safety bound: it wanted more than 3 live threads (the harness's \
                 thread limit (RLIMIT_NPROC (ulimit -u))), where the seed's pool would start \
                 another pthread",
            ),
            (SizeStop::Old("in words".into()), "in words"),
        ];
        for (how, text) in cases {
            assert_eq!(
                given_up(how),
                format!("fft/lockfree gave up at size 14: {text}")
            );
        }
        let mut choice = SubsetChoice {
            allowed: 128,
            cpus: 12,
            pairs: 66,
            levels: vec!["SMT siblings".into(), "same cache".into()],
            cores: 8,
            packages: 1,
            by_level: None,
        };
        let subset = |c: &SubsetChoice| {
            words::warning(&Warning::CpuSubset {
                subset: CpuSubset::Chosen(c.clone()),
            })
        };
        let text = "128 CPUs allowed: measured a representative subset of 12 CPUs (66 pairs) \
                    holding a pair of every level (SMT siblings, same cache): the SMT siblings \
                    of the first core, 8 cores of the first package, the first CPU of 1 other \
                    packages";
        assert_eq!(subset(&choice), text);
        choice.by_level = Some(PairsByLevel {
            per_level: 4,
            pairs: 8,
        });
        assert_eq!(
            subset(&choice),
            format!(
                "{text}; of these, up to 4 pairs of each level (8 pairs; --full measures them all)"
            )
        );
        let old = Warning::CpuSubset {
            subset: CpuSubset::Old("a subset".into()),
        };
        assert_eq!(words::warning(&old), "a subset");
    }

    #[test]
    fn a_shrunk_request_reads_as_the_memory_guard_said_it() {
        let w = Warning::MemoryShrunk {
            what: "a buffer".into(),
            asked_bytes_per_thread: 256 << 20,
            threads: 2048,
            usable_bytes: 12 << 30,
            usable_percent: 50.0,
            available_bytes: 24 << 30,
            available_source: "MemAvailable".into(),
            used_bytes_per_thread: 6 << 20,
        };
        let t = words::warning(&w);
        assert!(
            t.starts_with("a buffer: ")
                && t.contains(" per thread × 2048 threads does not fit in ")
                && t.contains("(50 % of ")
                && t.contains(" available, MemAvailable); used "),
            "{t}"
        );
    }
}
