//! The STREAM figure (`View::StreamChart`, which `memory` declares): read, write,
//! copy and triad on one chart, bandwidth against threads, each point the best
//! placement's median with its interval. The per-kernel charts below it keep
//! every placement.

use super::svg::{self, esc, ChartOpts, Curve};
use crate::model::{ProbeResult, Series};

/// The kernels drawn, in STREAM's order (read stands for a load-only stream).
pub const KERNELS: [&str; 4] = ["read", "write", "copy", "triad"];

/// The unit of the bandwidth series drawn.
const UNIT: &str = "bytes_per_s";

/// One curve per kernel that `p` measured: at each thread count, the best
/// placement's median and its interval. Empty for a result without such series.
pub fn curves(p: &ProbeResult) -> Vec<Curve> {
    KERNELS.iter().filter_map(|k| curve(p, k)).collect()
}

/// The placements' series of one kernel: `read/linear`, `read/scatter`, …
/// (never `read-thp/…` or the working sets).
fn placements<'p>(p: &'p ProbeResult, kernel: &str) -> Vec<&'p Series> {
    p.series
        .iter()
        .filter(|s| s.x_name == "threads" && s.y_name == UNIT)
        .filter(|s| {
            s.name
                .split_once('/')
                .is_some_and(|(k, place)| k == kernel && !place.contains('/'))
        })
        .collect()
}

fn curve(p: &ProbeResult, kernel: &str) -> Option<Curve> {
    let series = placements(p, kernel);
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.x.iter().copied())
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut c = Curve::new(kernel, Vec::new(), Vec::new());
    for x in xs {
        let best = series
            .iter()
            .filter_map(|s| s.estimate_at(x))
            .filter(|e| e.value.is_finite())
            .max_by(|a, b| a.value.total_cmp(&b.value));
        if let Some(e) = best {
            c.x.push(x);
            c.y.push(e.value);
            c.ci.push(e.has_interval().then_some((e.lo, e.hi)));
        }
    }
    if c.ci.iter().all(Option::is_none) {
        c.ci.clear();
    }
    (!c.x.is_empty()).then_some(c)
}

/// The figure, when at least two kernels were measured at two thread counts or
/// more; else nothing (the per-kernel tables say it all).
pub fn figure(p: &ProbeResult, opts: ChartOpts) -> String {
    let cs = curves(p);
    if cs.len() < 2 || cs.iter().all(|c| c.x.len() < 2) {
        return String::new();
    }
    let title = format!("{} — STREAM kernels, best placement", p.id);
    format!(
        "<figure>{}<figcaption>{}</figcaption></figure>",
        svg::chart_with(&title, "threads", UNIT, &cs, opts),
        esc(
            "the four kernels side by side: at each thread count the best placement's median \
             (byte counting as STREAM: read and write 8 B, copy 16 B, triad 24 B per element); \
             bars and band: 95 % CI; the charts below show every placement"
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, Status};

    /// read and copy at 1 and 2 threads under two placements (scatter faster at
    /// 2), a THP variant and a working-set series that must stay off the chart.
    fn result() -> ProbeResult {
        let mut p = ProbeResult::new("memory", "t", Status::Completed);
        for (kernel, base) in [("read", 20e9), ("copy", 30e9)] {
            for (place, at2) in [("linear", 1.2), ("scatter", 1.8)] {
                for (x, f) in [(1.0, 1.0), (2.0, at2)] {
                    let v = base * f;
                    let samples = vec![v * 0.98, v, v * 1.02, v];
                    p.push_point(Point::samples(
                        format!("{kernel}/{place}"),
                        "threads",
                        x,
                        UNIT,
                        samples,
                    ));
                }
            }
        }
        p.push_point(Point::samples(
            "read-thp/linear",
            "threads",
            1.0,
            UNIT,
            vec![99e9],
        ));
        p.push_point(Point::samples(
            "ws-read/1t",
            "bytes",
            4096.0,
            UNIT,
            vec![99e9],
        ));
        p
    }

    #[test]
    fn a_curve_per_kernel_the_best_placement_at_each_thread_count() {
        let cs = curves(&result());
        let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["read", "copy"]);
        assert_eq!(cs[0].x, vec![1.0, 2.0]);
        assert_eq!(cs[0].y, vec![20e9, 36e9]);
        assert_eq!(cs[1].y, vec![30e9, 54e9]);
        let (lo, hi) = cs[0].ci[1].expect("an interval from 4 samples");
        assert!(lo < 36e9 && hi > 36e9);
        let html = figure(&result(), ChartOpts::default());
        assert_eq!(html.matches("<figure>").count(), 1);
        assert!(html.contains("STREAM kernels"));
        assert!(!html.contains("NaN"));
    }

    #[test]
    fn nothing_without_bandwidth_series_or_for_a_single_kernel() {
        let mut p = result();
        p.series.retain(|s| s.y_name != UNIT);
        assert!(curves(&p).is_empty());
        let mut one = ProbeResult::new("memory", "t", Status::Completed);
        one.push_point(Point::samples(
            "read/linear",
            "threads",
            1.0,
            UNIT,
            vec![1e9],
        ));
        one.push_point(Point::samples(
            "read/linear",
            "threads",
            2.0,
            UNIT,
            vec![2e9],
        ));
        assert_eq!(figure(&one, ChartOpts::default()), "");
    }
}
