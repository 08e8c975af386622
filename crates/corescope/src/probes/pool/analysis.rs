//! `pool`'s findings from a merged result (pure): the free lists and runtimes
//! compared best against best, the uncapped pool against the capped one, and how
//! far each FFT executor got.

use super::runtime::Exec;
use crate::analysis;
use crate::model::{Finding, ProbeResult};

/// How far each FFT executor got: the sizes it gave up (not started, or stopped at
/// the deadline), for the parameter `fft_gave_up`, and one finding per executor.
pub(super) fn given_up(result: &ProbeResult) -> (Option<serde_json::Value>, Vec<Finding>) {
    let mut rows: Vec<(u64, String, String)> = Vec::new();
    for t in result.tables.iter().filter(|t| t.name == "fft given up") {
        for r in &t.rows {
            if let (Some(size), Some(exec), Some(how)) = (
                r.first().and_then(|v| v.as_u64()),
                r.get(1).and_then(|v| v.as_str()),
                r.get(2).and_then(|v| v.as_str()),
            ) {
                rows.push((size, exec.to_string(), how.to_string()));
            }
        }
    }
    if rows.is_empty() {
        return (None, Vec::new());
    }
    rows.sort();
    let param = serde_json::json!(rows
        .iter()
        .map(|(size, exec, how)| serde_json::json!({"exec": exec, "size_log2": size, "how": how}))
        .collect::<Vec<_>>());
    let mut out = Vec::new();
    for exec in Exec::FFT.map(Exec::name) {
        if let Some((size, _, how)) = rows.iter().find(|r| r.1 == exec) {
            out.push(Finding::Note {
                text: format!(
                    "fft/{exec}: sizes up to 2^{} measured; {} at 2^{size} ({how})",
                    size.saturating_sub(1),
                    if how.contains("deadline") || how.contains("bound") {
                        "stopped"
                    } else {
                        "gave up"
                    }
                ),
            });
        }
    }
    (Some(param), out)
}

/// The x with the smallest central value of a series (times: the best setting).
fn best_x(result: &ProbeResult, series: &str) -> Option<f64> {
    let s = result.series(series)?;
    s.x.iter()
        .zip(&s.y)
        .filter(|(_, y)| y.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(&x, _)| x)
}

/// FFT at the largest size every executor finished: the two free lists, and the
/// faster of them against rayon, paired by round; the lock-free list's failed CAS.
pub(super) fn fft_findings(result: &ProbeResult) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(size) = ["fft/mutex", "fft/lockfree", "fft/rayon"]
        .iter()
        .map(|n| {
            result
                .series(n)
                .and_then(|s| s.x.iter().copied().reduce(f64::max))
        })
        .try_fold(f64::INFINITY, |m, x| x.map(|x| m.min(x)))
    else {
        return out;
    };
    let what = |s: &str| format!("fft 2^{size} (a worker per butterfly), time, {s}");
    out.extend(analysis::compare(
        result,
        &what("mutex vs lock-free free list"),
        "s",
        ("mutex free list", "fft/mutex", size),
        ("lock-free free list", "fft/lockfree", size),
        None,
    ));
    let faster = ["fft/mutex", "fft/lockfree"]
        .into_iter()
        .filter_map(|n| Some((n, result.estimate(n, size)?.value)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((name, _)) = faster {
        let label = if name == "fft/mutex" {
            "taskpool (mutex free list)"
        } else {
            "taskpool (lock-free free list)"
        };
        out.extend(analysis::compare(
            result,
            &what("taskpool vs rayon"),
            "s",
            (label, name, size),
            ("rayon", "fft/rayon", size),
            None,
        ));
    }
    if let Some(e) = result.estimate("fft-cas-retries/lockfree", size) {
        out.push(Finding::Value {
            what: format!("fft 2^{size}: failed CAS on the lock-free free list per transform"),
            unit: "failed_cas".into(),
            value: e,
            context: None,
        });
    }
    out
}

/// The seed's uncapped pool against the capped one, per free list, at the largest
/// size both measured (paired by round: they ran interleaved).
pub(super) fn uncapped_findings(result: &ProbeResult) -> Vec<Finding> {
    let param = |k: &str| result.params.get(k).and_then(|v| v.as_u64());
    let (cap, bound) = (param("pool_max_threads"), param("fft_uncapped_bound"));
    let mut out = Vec::new();
    for (list, words) in [("mutex", "mutex"), ("lockfree", "lock-free")] {
        let (capped, uncapped) = (format!("fft/{list}"), format!("fft/{list}-uncapped"));
        let Some(size) = result.series(&uncapped).and_then(|s| {
            s.x.iter()
                .copied()
                .filter(|&x| result.estimate(&capped, x).is_some())
                .reduce(f64::max)
        }) else {
            continue;
        };
        let context = match (cap, bound) {
            (Some(c), Some(b)) => Some(format!(
                "capped: at most {c} live workers; uncapped: a new pthread whenever the pool is \
                 empty, up to the safety bound of {b}"
            )),
            _ => None,
        };
        out.extend(analysis::compare(
            result,
            &format!(
                "fft 2^{size} on the {words} free list, time, the seed's uncapped pool vs capped"
            ),
            "s",
            ("uncapped", &uncapped, size),
            ("capped", &capped, size),
            context,
        ));
    }
    out
}

/// taskpool's two settings in the runs against rayon: the series of one kernel under
/// the pool's cap (`prefix` + "taskpool" + `suffix`) and with one thread per CPU.
fn taskpool_settings(prefix: &str, suffix: &str) -> [(String, &'static str); 2] {
    [
        (format!("{prefix}taskpool{suffix}"), "taskpool"),
        (
            format!("{prefix}taskpool-per-cpu{suffix}"),
            "taskpool (one thread per CPU)",
        ),
    ]
}

/// taskpool at its best: the (series, x, label) with the smallest central value over
/// both settings.
fn best_setting(
    result: &ProbeResult,
    settings: &[(String, &'static str)],
) -> Option<(String, f64, &'static str)> {
    settings
        .iter()
        .filter_map(|(name, label)| {
            let x = best_x(result, name)?;
            Some((name.clone(), x, *label, result.estimate(name, x)?.value))
        })
        .min_by(|a, b| a.3.total_cmp(&b.3))
        .map(|(n, x, l, _)| (n, x, l))
}

/// What the taskpool side of a comparison against rayon ran.
const TASKPOOL_SETTINGS: &str =
    "taskpool: mutex free list, the better of the pool's cap and one thread per CPU";

/// FFT with a sequential cutoff: taskpool at its best cutoff (and thread setting)
/// against rayon at its best, and the faster of them against one thread alone.
pub(super) fn cutoff_findings(result: &ProbeResult) -> Vec<Finding> {
    let mut out = Vec::new();
    let size = result
        .params
        .get("fft_cutoff_log2")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let (Some((st, ct, label)), Some(cr)) = (
        best_setting(result, &taskpool_settings("fft-cutoff/", "")),
        best_x(result, "fft-cutoff/rayon"),
    ) else {
        return out;
    };
    let (lt, lr) = (
        format!("{label} at cutoff {ct}"),
        format!("rayon at cutoff {cr}"),
    );
    out.extend(analysis::compare(
        result,
        &format!("fft 2^{size} with a sequential cutoff, time, each runtime at its best cutoff"),
        "s",
        (&lt, &st, ct),
        (&lr, "fft-cutoff/rayon", cr),
        Some(format!("{TASKPOOL_SETTINGS}; block = CPUs")),
    ));
    let faster = [(st.as_str(), ct, &lt), ("fft-cutoff/rayon", cr, &lr)]
        .into_iter()
        .filter_map(|(n, x, l)| Some((n, x, l, result.estimate(n, x)?.value)))
        .min_by(|a, b| a.3.total_cmp(&b.3));
    if let Some((name, x, label, _)) = faster {
        let seq = format!("fft-sequential/{size}");
        out.extend(analysis::compare(
            result,
            &format!("fft 2^{size}, time, the faster runtime vs one thread alone"),
            "s",
            ("one thread alone", &seq, size as f64),
            (label, name, x),
            None,
        ));
    }
    out
}

/// Recursive matmul per order: taskpool at its best k (and thread setting) against
/// rayon at its best k, and both at the largest k both ran.
pub(super) fn rmatmul_findings(result: &ProbeResult, cpus: usize) -> Vec<Finding> {
    let orders: Vec<String> = result
        .series
        .iter()
        .filter_map(|s| s.name.strip_prefix("rmatmul/taskpool/").map(String::from))
        .collect();
    let mut out = Vec::new();
    for order in orders {
        let settings = taskpool_settings("rmatmul/", &format!("/{order}"));
        let sr = format!("rmatmul/rayon/{order}");
        let (Some((st, kt, label)), Some(kr)) =
            (best_setting(result, &settings), best_x(result, &sr))
        else {
            continue;
        };
        out.extend(analysis::compare(
            result,
            &format!("rmatmul N = {order}, time, each runtime at its best k"),
            "s",
            (&format!("{label} at k = {kt}"), &st, kt),
            (&format!("rayon at k = {kr}"), &sr, kr),
            Some(format!(
                "8^k leaf tasks on {cpus} CPUs; {TASKPOOL_SETTINGS}"
            )),
        ));
        // At equal parameters, where the runtimes' overheads show most: the largest
        // k both ran (the most, smallest tasks), taskpool at its better setting there.
        let k_max = result.series(&settings[0].0).and_then(|t| {
            t.x.iter()
                .copied()
                .filter(|&k| result.estimate(&sr, k).is_some())
                .reduce(f64::max)
        });
        let Some(k) = k_max.filter(|&k| k != kt || k != kr) else {
            continue;
        };
        let at_k = settings
            .iter()
            .filter_map(|(name, label)| Some((name, *label, result.estimate(name, k)?.value)))
            .min_by(|a, b| a.2.total_cmp(&b.2));
        if let Some((name, label, _)) = at_k {
            out.extend(analysis::compare(
                result,
                &format!(
                    "rmatmul N = {order}, time at equal k = {k} ({} leaf tasks)",
                    8f64.powf(k)
                ),
                "s",
                (label, name, k),
                ("rayon", &sr, k),
                Some(TASKPOOL_SETTINGS.into()),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Point, Status};

    /// Deterministic ±1 % wiggle around `base`, one value per round.
    fn rounds(base: f64, n: usize, seed: u64) -> Vec<f64> {
        (0..n)
            .map(|i| base * (1.0 + 0.01 * (((i as u64 * 7 + seed) % 5) as f64 - 2.0) / 2.0))
            .collect()
    }

    fn result_with(points: &[(&str, f64, Vec<f64>)]) -> ProbeResult {
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        for (s, x, v) in points {
            r.push_point(Point::samples(*s, "levels", *x, "seconds", v.clone()));
        }
        r
    }

    #[test]
    fn runtimes_are_compared_best_against_best() {
        // taskpool is best at k = 1 (1.0 s), rayon at k = 2 (0.9 s); at k = 1 rayon is
        // slow (1.6 s). The finding must set 1.0 against 0.9, never 1.0 against 1.6.
        let r = result_with(&[
            ("rmatmul/taskpool/512", 1.0, rounds(1.0, 12, 1)),
            ("rmatmul/taskpool/512", 2.0, rounds(1.3, 12, 2)),
            ("rmatmul/rayon/512", 1.0, rounds(1.6, 12, 3)),
            ("rmatmul/rayon/512", 2.0, rounds(0.9, 12, 4)),
        ]);
        let found = rmatmul_findings(&r, 2);
        let Some(Finding::Comparison {
            a,
            b,
            ratio,
            outcome,
            ..
        }) = found.first()
        else {
            panic!("{found:?}");
        };
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("taskpool at k = 1", "rayon at k = 2")
        );
        assert!((ratio.value - 1.0 / 0.9).abs() < 0.02, "{ratio:?}");
        assert_eq!(*outcome, Outcome::Different);
        // And at equal k (the largest both ran), as a second finding.
        assert!(
            matches!(found.get(1), Some(Finding::Comparison { what, .. }) if what.contains("equal k = 2"))
        );
    }

    #[test]
    fn equal_runtimes_are_not_called_different() {
        let r = result_with(&[
            ("rmatmul/taskpool/256", 1.0, rounds(1.0, 12, 1)),
            ("rmatmul/rayon/256", 1.0, rounds(1.0, 12, 3)),
        ]);
        let found = rmatmul_findings(&r, 2);
        assert_eq!(found.len(), 1, "one k: best vs best only");
        assert!(
            matches!(&found[0], Finding::Comparison { outcome, .. } if *outcome != Outcome::Different),
            "{found:?}"
        );
    }
}
