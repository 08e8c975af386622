//! The differences beyond the noise between two runs (pure; `render::compare`
//! words them on the first screen of `corescope compare`):
//!
//! - a series point both runs measured with an interval whose two 95 % intervals do
//!   not overlap, unless both runs mark it state-dependent (the rule of
//!   [`super::model::run_agreement`], which counts the same points);
//! - a finding with a verdict (a comparison, a slowdown, a core-sharing pair) that
//!   says something different in the two runs: told apart in one and not in the
//!   other, or in favour of another side;
//! - a probe both runs hold whose status differs (completed in one, failed in the
//!   other).
//!
//! Ranked by size: statuses first, then by how far the second run's value (or
//! ratio) is from the first's, `|ln(b ÷ a)|`.

use crate::model::{Estimate, Finding, Outcome, ProbeResult, RunFile, Series, Status};

/// One series point that both runs measured with an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPair<'r> {
    /// Probe id.
    pub probe: &'r str,
    /// The first run's series (name, axes, unit).
    pub series: &'r Series,
    /// The x of the point.
    pub x: f64,
    /// The first run's estimate.
    pub a: Estimate,
    /// The second run's estimate.
    pub b: Estimate,
    /// Whether the first run marks the point state-dependent.
    pub dependent_a: bool,
    /// Whether the second run does.
    pub dependent_b: bool,
}

impl PointPair<'_> {
    /// Whether the two 95 % intervals overlap.
    pub fn overlap(&self) -> bool {
        self.a.lo <= self.b.hi && self.b.lo <= self.a.hi
    }

    /// Whether the runs tell the point apart: no overlap, and not state-dependent
    /// in both runs (then each run saw two states and the split says so).
    pub fn apart(&self) -> bool {
        !(self.overlap() || (self.dependent_a && self.dependent_b))
    }
}

/// Every series point both runs hold with an interval (`n` > 1 in both), in the
/// first run's order; copies of a point measured under another variant's name are
/// left out.
pub fn point_pairs<'r>(a: &'r RunFile, b: &'r RunFile) -> Vec<PointPair<'r>> {
    let mut out = Vec::new();
    for pa in &a.probes {
        let Some(pb) = b.probes.iter().find(|p| p.id == pa.id) else {
            continue;
        };
        for sa in &pa.series {
            let Some(sb) = pb.series(&sa.name) else {
                continue;
            };
            for (i, &x) in sa.x.iter().enumerate() {
                // A copy of another variant's point (the same configuration,
                // measured once) is not a point of its own.
                if pa
                    .aliases
                    .iter()
                    .any(|al| al.series == sa.name && al.x == x)
                {
                    continue;
                }
                let Some(j) = sb.index_of(x) else { continue };
                let (Some(ea), Some(eb)) = (sa.estimate(i), sb.estimate(j)) else {
                    continue;
                };
                if ea.n < 2 || eb.n < 2 || !(ea.lo <= ea.hi && eb.lo <= eb.hi) {
                    continue;
                }
                let dependent =
                    |s: &Series, k: usize| s.states.get(k).is_some_and(|v| !v.is_empty());
                out.push(PointPair {
                    probe: &pa.id,
                    series: sa,
                    x,
                    a: ea,
                    b: eb,
                    dependent_a: dependent(sa, i),
                    dependent_b: dependent(sb, j),
                });
            }
        }
    }
    out
}

/// What a finding concludes, as far as a comparison of runs is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Told apart, in favour of the named side: the larger variant of a
    /// comparison (`scatter`), `slower` or `faster` for a slowdown, `shared` or
    /// `separate` for a core-sharing pair.
    Says(String),
    /// Shown equivalent within the minimum effect.
    Equivalent,
    /// Neither told apart nor shown equivalent.
    Undecided,
}

/// Which kind of finding a verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictKind {
    /// `Finding::Comparison`: `a ÷ b` of two variants.
    Comparison,
    /// `Finding::Slowdown`: time with the cause ÷ without.
    Slowdown,
    /// `Finding::CoreSharing`: throughput together ÷ alone.
    CoreSharing,
}

/// One finding's verdict, keyed so that the two runs' findings can be matched.
#[derive(Debug, Clone, PartialEq)]
struct Judged {
    key: String,
    kind: VerdictKind,
    /// The sides of the ratio, in the order `ratio` divides them.
    sides: (String, String),
    /// Unit of the values the ratio divides (which side is better).
    unit: String,
    ratio: Estimate,
    verdict: Verdict,
}

fn undecided_or_equivalent(o: Outcome) -> Verdict {
    match o {
        Outcome::Equivalent => Verdict::Equivalent,
        _ => Verdict::Undecided,
    }
}

fn judged(f: &Finding) -> Option<Judged> {
    match f {
        Finding::Comparison {
            what,
            unit,
            a,
            b,
            ratio,
            significant,
            outcome,
            ..
        } => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let verdict = if *significant {
                Verdict::Says(if ratio.value >= 1.0 { a } else { b }.clone())
            } else {
                undecided_or_equivalent(*outcome)
            };
            Some(Judged {
                key: format!("{what}: {lo} vs {hi}"),
                kind: VerdictKind::Comparison,
                sides: (a.clone(), b.clone()),
                unit: unit.clone(),
                ratio: *ratio,
                verdict,
            })
        }
        Finding::Slowdown {
            what,
            cause,
            ratio,
            outcome,
            ..
        } => Some(Judged {
            key: format!("{what} with {cause}"),
            kind: VerdictKind::Slowdown,
            sides: ("with".into(), "without".into()),
            // Times: with ÷ without.
            unit: "ns".into(),
            ratio: *ratio,
            verdict: match outcome {
                Outcome::Different => Verdict::Says(
                    if ratio.value >= 1.0 {
                        "slower"
                    } else {
                        "faster"
                    }
                    .into(),
                ),
                o => undecided_or_equivalent(*o),
            },
        }),
        Finding::CoreSharing {
            a,
            b,
            shared,
            ratio,
            ..
        } => Some(Judged {
            key: format!("CPUs {} and {}", a.min(b), a.max(b)),
            kind: VerdictKind::CoreSharing,
            sides: ("together".into(), "alone".into()),
            // Throughputs: together ÷ alone.
            unit: "per_s".into(),
            ratio: *ratio,
            verdict: match shared {
                Some(true) => Verdict::Says("shared".into()),
                Some(false) => Verdict::Says("separate".into()),
                None => Verdict::Undecided,
            },
        }),
        _ => None,
    }
}

/// `1 ÷ e`, its interval turned round.
fn inverse(e: Estimate) -> Estimate {
    Estimate {
        value: 1.0 / e.value,
        lo: 1.0 / e.hi,
        hi: 1.0 / e.lo,
        n: e.n,
    }
}

/// One difference beyond the noise between the first run and another.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// A series point whose intervals do not overlap.
    Point {
        /// Probe id.
        probe: String,
        /// Series name.
        series: String,
        /// Name of the x axis (`threads`).
        x_name: String,
        /// The x of the point.
        x: f64,
        /// Unit of the values (`ops_per_s`).
        unit: String,
        /// The first run's value.
        a: Estimate,
        /// The other run's value.
        b: Estimate,
    },
    /// A finding whose verdict differs.
    Verdict {
        /// Probe id.
        probe: String,
        /// What the finding is about (`int with 2 threads: linear vs scatter`).
        what: String,
        /// The kind of finding.
        kind: VerdictKind,
        /// The sides of both ratios (`scatter`, `linear`): each ratio is the first
        /// side ÷ the second, in the first run's order.
        sides: (String, String),
        /// Unit of the values the ratios divide (`ns` for a slowdown's times,
        /// `per_s` for core sharing's throughputs): which side is better.
        unit: String,
        /// The first run's verdict and ratio.
        a: (Verdict, Estimate),
        /// The other run's, its ratio turned to the first run's order.
        b: (Verdict, Estimate),
    },
    /// A probe whose status differs.
    Status {
        /// Probe id.
        probe: String,
        /// The first run's status.
        a: Status,
        /// The other run's.
        b: Status,
    },
}

impl Difference {
    /// The probe it belongs to.
    pub fn probe(&self) -> &str {
        match self {
            Difference::Point { probe, .. }
            | Difference::Verdict { probe, .. }
            | Difference::Status { probe, .. } => probe,
        }
    }

    /// The other run ÷ the first: its value at a point, its ratio for a verdict;
    /// `None` for a status.
    pub fn ratio(&self) -> Option<f64> {
        match self {
            Difference::Point { a, b, .. } => Some(b.value / a.value),
            Difference::Verdict { a, b, .. } => Some(b.1.value / a.1.value),
            Difference::Status { .. } => None,
        }
    }

    /// How large the difference is: `|ln ratio|`, infinite for a status or a
    /// ratio that is not positive.
    pub fn size(&self) -> f64 {
        match self.ratio() {
            Some(r) if r > 0.0 && r.is_finite() => r.ln().abs(),
            _ => f64::INFINITY,
        }
    }
}

/// The differences beyond the noise between the first run and another, and what
/// was compared.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunDifferences {
    /// Series points both runs hold with an interval.
    pub points: usize,
    /// Findings with a verdict that both runs hold.
    pub findings: usize,
    /// The differences, the largest first.
    pub list: Vec<Difference>,
    /// Probes only the first run holds.
    pub only_first: Vec<String>,
    /// Probes only the other run holds.
    pub only_other: Vec<String>,
}

/// The differences beyond the noise of run `b` against run `a`, on the probes
/// `only` names (every probe when `None`).
pub fn differences(a: &RunFile, b: &RunFile, only: Option<&[String]>) -> RunDifferences {
    let keep = |id: &str| only.is_none_or(|o| o.iter().any(|k| k == id));
    let mut out = RunDifferences::default();
    for pair in point_pairs(a, b).into_iter().filter(|p| keep(p.probe)) {
        out.points += 1;
        if pair.apart() {
            out.list.push(Difference::Point {
                probe: pair.probe.to_string(),
                series: pair.series.name.clone(),
                x_name: pair.series.x_name.clone(),
                x: pair.x,
                unit: pair.series.y_name.clone(),
                a: pair.a,
                b: pair.b,
            });
        }
    }
    for pa in a.probes.iter().filter(|p| keep(&p.id)) {
        match b.probes.iter().find(|p| p.id == pa.id) {
            Some(pb) => probe_differences(pa, pb, &mut out),
            None => out.only_first.push(pa.id.clone()),
        }
    }
    out.only_other = b
        .probes
        .iter()
        .filter(|p| keep(&p.id) && !a.probes.iter().any(|q| q.id == p.id))
        .map(|p| p.id.clone())
        .collect();
    // Stable: equal sizes keep the runs' order.
    out.list.sort_by(|p, q| q.size().total_cmp(&p.size()));
    out
}

/// The status and verdict differences of one probe both runs hold.
fn probe_differences(pa: &ProbeResult, pb: &ProbeResult, out: &mut RunDifferences) {
    if pa.status != pb.status {
        out.list.push(Difference::Status {
            probe: pa.id.clone(),
            a: pa.status,
            b: pb.status,
        });
    }
    let theirs: Vec<Judged> = pb.findings.iter().filter_map(judged).collect();
    let mut seen = std::collections::HashSet::new();
    for ja in pa.findings.iter().filter_map(judged) {
        if !seen.insert(ja.key.clone()) {
            continue;
        }
        let Some(jb) = theirs.iter().find(|j| j.key == ja.key) else {
            continue;
        };
        out.findings += 1;
        let plain = |v: &Verdict| !matches!(v, Verdict::Says(_));
        if ja.verdict == jb.verdict || (plain(&ja.verdict) && plain(&jb.verdict)) {
            continue;
        }
        let b_ratio = if jb.sides == ja.sides {
            jb.ratio
        } else {
            inverse(jb.ratio)
        };
        out.list.push(Difference::Verdict {
            probe: pa.id.clone(),
            what: ja.key,
            kind: ja.kind,
            sides: ja.sides,
            unit: ja.unit,
            a: (ja.verdict, ja.ratio),
            b: (jb.verdict.clone(), b_ratio),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A run of probe `p` with one series of 5 points around 100 (± 2, 12
    /// samples each), the k-th scaled by `scale(k)`, and the given findings.
    fn run(scale: &dyn Fn(usize) -> f64, findings: Vec<Finding>) -> RunFile {
        let mut r: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        let mut s = Series::new("v/linear", "threads", "ops_per_s");
        for k in 0..5 {
            let samples = (0..12)
                .map(|i| scale(k) * (98.0 + (i % 5) as f64))
                .collect();
            s.push_samples(k as f64 + 1.0, samples, 0);
        }
        let mut p: ProbeResult = serde_json::from_value(json!({
            "id": "p", "title": "t", "status": "completed",
            "params": {}, "cases_planned": 1, "cases_done": 1, "elapsed_s": 0.0
        }))
        .unwrap();
        p.series.push(s);
        p.findings = findings.into();
        r.probes = vec![p];
        r
    }

    fn e(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 12,
        }
    }

    fn comparison(a: &str, b: &str, ratio: Estimate, significant: bool) -> Finding {
        Finding::Comparison {
            what: "int with 2 threads".into(),
            unit: "ops_per_s".into(),
            a: a.into(),
            a_value: e(2.0, 1.9, 2.1),
            b: b.into(),
            b_value: e(1.0, 0.9, 1.1),
            ratio,
            significant,
            outcome: if significant {
                Outcome::Different
            } else {
                Outcome::Inconclusive
            },
            context: None,
        }
    }

    #[test]
    fn runs_that_agree_have_no_differences() {
        let f = || vec![comparison("scatter", "linear", e(1.5, 1.4, 1.6), true)];
        let d = differences(&run(&|_| 1.0, vec![]), &run(&|_| 1.01, f()), None);
        let d2 = differences(&run(&|_| 1.0, f()), &run(&|_| 1.01, f()), None);
        assert!(d.list.is_empty() && d2.list.is_empty(), "{d:?} {d2:?}");
        assert_eq!((d2.points, d2.findings), (5, 1));
        assert_eq!(d.findings, 0, "a finding only one run has is not compared");
    }

    #[test]
    fn points_apart_are_ranked_by_ratio() {
        let moved = |k: usize| match k {
            1 => 1.3,
            3 => 0.5,
            _ => 1.0,
        };
        let d = differences(&run(&|_| 1.0, vec![]), &run(&moved, vec![]), None);
        assert_eq!(d.points, 5);
        let xs: Vec<(f64, f64)> = d
            .list
            .iter()
            .map(|p| match p {
                Difference::Point { x, .. } => (*x, p.ratio().unwrap()),
                other => panic!("{other:?}"),
            })
            .collect();
        // 0.5× is farther from 1 than 1.3×.
        assert_eq!(xs.len(), 2);
        assert_eq!(xs[0].0, 4.0);
        assert!((xs[0].1 - 0.5).abs() < 1e-9 && (xs[1].1 - 1.3).abs() < 1e-9);
        // The same points that run_agreement names apart.
        let agree =
            super::super::model::run_agreement(&run(&|_| 1.0, vec![]), &run(&moved, vec![]));
        assert_eq!(agree.apart.len(), 2);
        assert_eq!(d.points, agree.points);
        // Filtered away: nothing compared.
        let none = differences(
            &run(&|_| 1.0, vec![]),
            &run(&moved, vec![]),
            Some(&["q".into()]),
        );
        assert_eq!((none.points, none.list.len()), (0, 0));
    }

    #[test]
    fn verdicts_that_differ_are_listed_with_ratios_in_one_order() {
        // Run a: scatter beats linear 1.5×; run b: the same pair, written the other
        // way round, not told apart.
        let a = run(
            &|_| 1.0,
            vec![comparison("scatter", "linear", e(1.5, 1.4, 1.6), true)],
        );
        let b = run(
            &|_| 1.0,
            vec![comparison("linear", "scatter", e(0.98, 0.9, 1.05), false)],
        );
        let d = differences(&a, &b, None);
        assert_eq!(d.findings, 1);
        assert_eq!(d.list.len(), 1, "{d:?}");
        let Difference::Verdict {
            a: va,
            b: vb,
            sides,
            ..
        } = &d.list[0]
        else {
            panic!("{d:?}");
        };
        assert_eq!(sides.0, "scatter");
        assert_eq!(va.0, Verdict::Says("scatter".into()));
        assert_eq!(vb.0, Verdict::Undecided);
        assert!((vb.1.value - 1.0 / 0.98).abs() < 1e-9);
        // Another winner is a difference too; equivalent against undecided is not.
        let c = run(
            &|_| 1.0,
            vec![comparison("linear", "scatter", e(1.2, 1.1, 1.3), true)],
        );
        let d = differences(&a, &c, None);
        assert!(
            matches!(&d.list[0], Difference::Verdict { b, .. } if b.0 == Verdict::Says("linear".into()))
        );
    }

    #[test]
    fn a_status_that_differs_comes_first() {
        let a = run(&|_| 1.0, vec![]);
        let mut b = run(&|k| if k == 0 { 3.0 } else { 1.0 }, vec![]);
        b.probes[0].status = Status::Failed;
        let mut extra = b.probes[0].clone();
        extra.id = "only-b".into();
        b.probes.push(extra);
        let d = differences(&a, &b, None);
        assert!(
            matches!(
                d.list[0],
                Difference::Status {
                    b: Status::Failed,
                    ..
                }
            ),
            "{d:?}"
        );
        assert!(matches!(d.list[1], Difference::Point { x, .. } if x == 1.0));
        assert_eq!(d.only_other, ["only-b"]);
        assert!(d.only_first.is_empty());
    }
}
