//! corescope's side of a row: the probe's own case, found in the probe's own plan and
//! run by the probe's own code, so what is compared is what `corescope run` measures.

use super::tools::ToolError;
use crate::clock::Clock;
use crate::kernels::buffer::BlockCache;
use crate::model::{Measurement, Profile};
use crate::placement::{PlacementError, Strategy};
use crate::probes::{AnyProbe, Case, Overrides, PlanCtx, Probe, ProbeError, RunCtx};
use crate::topology::Topology;
use serde_json::Value;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest a probe's case may take in one round before it gives up.
pub const CASE_BUDGET: Duration = Duration::from_secs(60);

/// Runs one case of a probe with its parameters as planned.
type RunFn = Box<dyn Fn(&mut RunCtx) -> Result<Measurement, ProbeError> + Send + Sync>;

/// One probe's case, ready to run again and again.
pub struct OurCase {
    ctx: PlanCtx,
    /// The case, its parameters in their JSON form.
    case: Case,
    /// The probe running its case.
    runs: RunFn,
    /// What the case keeps between its runs, as within a group of `corescope run`
    /// (the memory probe's first-touched blocks), for the row's rounds.
    blocks: Mutex<BlockCache>,
}

/// What a case must hold: `(key, value)` pairs found anywhere in its parameters.
pub type Want<'a> = &'a [(&'a str, Value)];

/// Why one side of a row gave no figure.
#[derive(Debug, thiserror::Error)]
pub enum CrossError {
    /// The probe is not in this build.
    #[error("no probe '{0}' in this build")]
    NoProbe(String),
    /// The CPUs do not make a placement.
    #[error("CPUs {cpus:?}: {source}")]
    Cpus {
        /// The CPUs.
        cpus: Vec<u32>,
        /// Why not.
        source: PlacementError,
    },
    /// The probe could not plan.
    #[error("{probe}: cannot plan: {source}")]
    Plan {
        /// The probe's id.
        probe: String,
        /// Why.
        source: ProbeError,
    },
    /// No case of the plan has the parameters wanted.
    #[error("{probe}: no case with {wanted} on this machine")]
    NoCase {
        /// The probe's id.
        probe: String,
        /// The parameters, `key=value, …`.
        wanted: String,
    },
    /// The case's run failed.
    #[error("{case}: {source}")]
    Run {
        /// The case's label.
        case: String,
        /// Why.
        source: ProbeError,
    },
    /// The measurement lacks the figure (`point of 'read/…'`, `matrix 'cas'`, …).
    #[error("no {0} in the measurement")]
    Missing(String),
    /// The tool gave no figure.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The tool gave no figure, and said something on stderr.
    #[error("{source} (stderr: {stderr})")]
    ToolSaid {
        /// Why no figure.
        source: Box<CrossError>,
        /// Its first line on stderr.
        stderr: String,
    },
    /// The thread could not be pinned.
    #[error(transparent)]
    Pin(#[from] crate::affinity::PinError),
    /// The sustained stream was not measured.
    #[error(transparent)]
    Sustained(#[from] crate::probes::memory::SustainedError),
    /// likwid-bench did not report where its threads ran.
    #[error("likwid-bench did not say where its {0} threads ran")]
    LikwidSilent(usize),
    /// likwid-bench ran elsewhere than corescope.
    #[error("likwid-bench ran on CPUs {theirs:?}, corescope on {ours}")]
    LikwidElsewhere {
        /// likwid's CPUs.
        theirs: Vec<u32>,
        /// corescope's CPU.
        ours: u32,
    },
    /// The case was not built.
    #[error("no case")]
    NotBuilt,
    /// The core clock cannot be measured here.
    #[error("the core clock cannot be measured here")]
    NoCoreClock,
    /// The pinned thread panicked.
    #[error("the pinned thread panicked")]
    PinnedPanic,
    /// The user interrupted the check.
    #[error("interrupted")]
    Interrupted,
}

impl OurCase {
    /// The first case of `probe`'s plan, under `profile`, with these thread counts and
    /// CPUs, whose parameters hold every pair of `want`.
    pub fn find(
        probe_id: &str,
        topo: &Topology,
        clock: &Clock,
        profile: Profile,
        threads: Option<usize>,
        cpus: Option<&[u32]>,
        want: Want,
    ) -> Result<Self, CrossError> {
        let probe = crate::probes::find(probe_id)
            .ok_or_else(|| CrossError::NoProbe(probe_id.to_string()))?;
        let placements = match cpus {
            Some(list) => Some(vec![Strategy::parse(&Topology::format_cpu_list(list))
                .map_err(|source| CrossError::Cpus {
                    cpus: list.to_vec(),
                    source,
                })?]),
            None => None,
        };
        let ctx = PlanCtx {
            topo: topo.clone(),
            clock: clock.clone(),
            profile,
            overrides: Overrides {
                threads: threads.map(|t| vec![t]),
                placements,
                epochs: None,
            },
            budget_s: CASE_BUDGET.as_secs_f64(),
        };
        let plan = AnyProbe::plan_owned(probe, &ctx).map_err(|source| CrossError::Plan {
            probe: probe_id.to_string(),
            source,
        })?;
        let index = plan
            .cases
            .iter()
            .position(|c| want.iter().all(|(k, v)| holds(&c.params, k, v)))
            .ok_or_else(|| {
                let wanted: Vec<String> = want.iter().map(|(k, v)| format!("{k}={v}")).collect();
                CrossError::NoCase {
                    probe: probe_id.to_string(),
                    wanted: wanted.join(", "),
                }
            })?;
        Ok(Self {
            ctx,
            case: plan.cases[index].clone(),
            runs: Box::new(move |ctx| plan.run(index, ctx)),
            blocks: Mutex::default(),
        })
    }

    /// A case made outside the probe's plan (an experiment a probe offers, such as
    /// `c2c::case_without_pause`), run by the probe's own code.
    pub fn with_case<P: Probe + 'static>(
        probe: P,
        topo: &Topology,
        clock: &Clock,
        profile: Profile,
        case: Case<P::Params>,
    ) -> Self {
        let ctx = PlanCtx {
            topo: topo.clone(),
            clock: clock.clone(),
            profile,
            overrides: Overrides::default(),
            budget_s: CASE_BUDGET.as_secs_f64(),
        };
        Self {
            ctx,
            case: case.to_json(),
            runs: Box::new(move |ctx| probe.run(&case, ctx)),
            blocks: Mutex::default(),
        }
    }

    /// The case's parameters.
    pub fn params(&self) -> &Value {
        &self.case.params
    }

    /// Run the case once.
    pub fn run(&self) -> Result<Measurement, CrossError> {
        let mut kept = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        let mut ctx = RunCtx {
            plan: &self.ctx,
            deadline: Instant::now() + CASE_BUDGET,
            warnings: Vec::new(),
            counted: Vec::new(),
            blocks: std::mem::take(&mut *kept),
        };
        let out = (self.runs)(&mut ctx).map_err(|source| CrossError::Run {
            case: self.case.label.clone(),
            source,
        });
        *kept = ctx.blocks;
        out
    }
}

/// Whether `key` holds `want` anywhere in `params` (nested objects included: enum
/// parameters are written as `{"Variant": {...}}`).
pub fn holds(params: &Value, key: &str, want: &Value) -> bool {
    match params {
        Value::Object(map) => {
            map.get(key).is_some_and(|v| v == want) || map.values().any(|v| holds(v, key, want))
        }
        Value::Array(items) => items.iter().any(|v| holds(v, key, want)),
        _ => false,
    }
}

/// The value of `key` anywhere in `params`.
pub fn lookup<'a>(params: &'a Value, key: &str) -> Option<&'a Value> {
    match params {
        Value::Object(map) => map
            .get(key)
            .or_else(|| map.values().find_map(|v| lookup(v, key))),
        Value::Array(items) => items.iter().find_map(|v| lookup(v, key)),
        _ => None,
    }
}

/// The first point of a series whose name starts with `prefix`.
pub fn point(m: &Measurement, prefix: &str) -> Result<f64, CrossError> {
    m.points
        .iter()
        .find(|p| p.series.starts_with(prefix))
        .map(|p| crate::stats::median(&p.samples))
        .ok_or_else(|| CrossError::Missing(format!("point of '{prefix}…'")))
}

/// The mean of a named distribution (ns for the primitive probes).
pub fn distribution_mean(m: &Measurement, name: &str) -> Result<f64, CrossError> {
    m.distributions
        .iter()
        .find(|d| d.name == name && d.summary.count > 0)
        .map(|d| d.summary.mean)
        .ok_or_else(|| CrossError::Missing(format!("distribution '{name}'")))
}

/// The median of a named distribution.
pub fn distribution_median(m: &Measurement, name: &str) -> Result<f64, CrossError> {
    m.distributions
        .iter()
        .find(|d| d.name == name && d.summary.count > 0)
        .map(|d| d.summary.p50)
        .ok_or_else(|| CrossError::Missing(format!("distribution '{name}'")))
}

/// The cell `a`, `b` of a named matrix (the 1×1 matrices of one c2c case).
pub fn cell(m: &Measurement, name: &str) -> Result<f64, CrossError> {
    m.matrices
        .iter()
        .find(|x| x.name == name)
        .and_then(|x| x.values.first()?.first().copied().flatten())
        .ok_or_else(|| CrossError::Missing(format!("matrix '{name}'")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_are_found_inside_enum_variants() {
        let p = json!({"Bandwidth": {"kernel": "read", "threads": 2, "block_bytes": 8}});
        assert!(holds(&p, "kernel", &json!("read")));
        assert!(holds(&p, "threads", &json!(2)));
        assert!(!holds(&p, "threads", &json!(1)));
        assert!(!holds(&p, "placement", &json!("linear")));
        assert_eq!(lookup(&p, "block_bytes"), Some(&json!(8)));
        assert_eq!(lookup(&json!(3), "x"), None);
        let variants = json!({"Handoff": {"variants": [{"relation": "same-cpu"}], "samples": 9}});
        assert!(holds(&variants, "relation", &json!("same-cpu")));
        assert_eq!(lookup(&variants, "relation"), Some(&json!("same-cpu")));
    }
}
