//! Renderers: read the model, never measure. Imported only by the commands.

pub mod csv;
pub mod html;
pub mod svg;
pub mod terminal;
pub mod topo;
pub mod words;

pub use crate::units::{fmt_num, fmt_value, fmt_x, unit_scale};

/// The rows and unit of one table of several series sharing an x axis: every x
/// any of them has (sorted, each once), and the scale and label of the y values
/// (chosen from the largest y, named by the first series' `y_name`).
pub fn table_axes(series: &[&crate::model::Series]) -> (Vec<f64>, f64, String) {
    let magnitude = series
        .iter()
        .flat_map(|s| s.y.iter().copied())
        .fold(0.0, f64::max);
    let y_name = series.first().map(|s| s.y_name.as_str()).unwrap_or("");
    let (scale, label) = unit_scale(y_name, magnitude);
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.x.iter().copied()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    (xs, scale, label)
}

/// What shapes a big run, in words, for the environment line: the cgroup CPU
/// limit, isolated and `nohz_full` CPUs, NUMA balancing. Only what was recorded
/// (older run files have none of it).
pub fn env_extras(e: &crate::model::EnvInfo) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = e.cgroup_cpu_max {
        out.push(format!(
            "cgroup CPU limit {:.2} CPUs ({} µs per {} µs)",
            m.cpus(),
            m.quota_us,
            m.period_us
        ));
    }
    if let Some(c) = e.isolated_cpus.as_deref().filter(|c| !c.is_empty()) {
        out.push(format!("isolated CPUs {c}"));
    }
    if let Some(c) = e.nohz_full_cpus.as_deref().filter(|c| !c.is_empty()) {
        out.push(format!("nohz_full CPUs {c}"));
    }
    if let Some(b) = e.numa_balancing {
        out.push(format!(
            "NUMA balancing {}",
            match b {
                0 => "off".to_string(),
                1 => "on".to_string(),
                2 => "memory tiering".to_string(),
                3 => "on + memory tiering".to_string(),
                other => format!("mode {other}"),
            }
        ));
    }
    out
}

#[cfg(test)]
mod env_tests {
    use super::*;
    use crate::model::{CpuMax, EnvInfo};

    #[test]
    fn env_extras_only_say_what_was_recorded() {
        assert!(env_extras(&EnvInfo::default()).is_empty());
        let e = EnvInfo {
            cgroup_cpu_max: Some(CpuMax {
                quota_us: 150_000,
                period_us: 100_000,
            }),
            isolated_cpus: Some("2-5".into()),
            nohz_full_cpus: Some(String::new()),
            numa_balancing: Some(1),
            ..EnvInfo::default()
        };
        assert_eq!(
            env_extras(&e),
            [
                "cgroup CPU limit 1.50 CPUs (150000 µs per 100000 µs)",
                "isolated CPUs 2-5",
                "NUMA balancing on"
            ]
        );
    }
}
