//! The probe contract: a probe states its case parameters and the facts its plan
//! learned as types of its own ([`Probe`]); the registry, the runner and the cost
//! model hold every probe as one object type ([`AnyProbe`]), which a blanket impl
//! gives every [`Probe`]. A plan's typed cases stay behind the object
//! ([`Planned`]): the runner asks it to run case `i` of its own plan, so the
//! parameters reach the probe as the type they were planned with, with no
//! downcast and no JSON round trip.

use super::cost::Cost;
use super::{PlanCtx, ProbeError, Rounds, RunCtx};
use crate::model::{
    Finding, Matrix, Measurement, Notes, Point, ProbeResult, SameQuantity, Sensitivity, Series,
    SummaryShape, Table, View, Warning,
};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// What a probe is, with its own types: [`Probe::Params`], one case of its sweep,
/// and [`Probe::Facts`], what its plan learned for [`Probe::analyze`].
pub trait Probe: Send + Sync {
    /// One case's parameters: handed back to [`Probe::run`] and
    /// [`Probe::run_cost_s`] as planned; their JSON form is what `corescope plan`
    /// and cross-checks read.
    type Params: Serialize + Clone + Send + Sync + 'static;
    /// What the plan learned that the analysis needs (the CPUs of a matrix, the
    /// nodes measured); `()` for none.
    type Facts: Send + Sync + 'static;
    /// Short id used on the command line and in run files (`compute`).
    fn id(&self) -> &'static str;
    /// One line for `corescope list`.
    fn title(&self) -> &'static str;
    /// The parameter sweep for this profile and machine. `Err(ProbeError::Skipped)`
    /// when the probe cannot run here at all.
    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<Self::Params, Self::Facts>, ProbeError>;
    /// Measure one case of the probe's own plan.
    fn run(&self, case: &Case<Self::Params>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError>;
    /// What the merged result says: findings, tables, derived points (pure; the
    /// runner files it, [`Analysis`]). Default: nothing.
    fn analyze(&self, _result: &ProbeResult, _facts: &Self::Facts, _ctx: &PlanCtx) -> Analysis {
        Analysis::default()
    }
    /// Seconds one run of a case takes on this machine (`corescope plan`'s model,
    /// `estimate.rs`): its parameters, priced with the machine's measured speed
    /// ([`Cost`]). `None` (the default): the model does not know the probe and
    /// prices a run at `estimate::UNKNOWN_RUN_S`, and `plan` says so.
    fn run_cost_s(&self, _params: &Self::Params, _cost: &Cost) -> Option<f64> {
        None
    }
    /// The shape of the probe's headline and items in the terminal summary
    /// (`render/summary.rs` draws by shape, never by id). Default: no headline of
    /// its own; its first item leads.
    fn summary_shape(&self) -> SummaryShape {
        SummaryShape::FirstItem
    }
    /// The conditions of the machine its figures depend on beyond those that blur
    /// every probe (the clock, load, steal): `doctor` lists the probe under each
    /// condition it is sensitive to, looked up in the registry, never by id.
    /// Default: none.
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[]
    }
    /// The special charts and sections of the report its results get besides the
    /// generic ones: the renderers look them up in the registry by the run file's
    /// probe id, never by testing the id. Default: none.
    fn views(&self) -> &'static [View] {
        &[]
    }
    /// Its figures that another probe measures too (same quantity, same size, same
    /// method): every report puts each pair side by side with their ratio
    /// (`analysis::consistency`). Default: none.
    fn same_quantities(&self) -> &'static [SameQuantity] {
        &[]
    }
}

/// Any probe, its types behind the object: what the registry lists and the runner,
/// the cost model, `doctor` and the renderers use. Every [`Probe`] is one.
pub trait AnyProbe: Send + Sync {
    /// [`Probe::id`].
    fn id(&self) -> &'static str;
    /// [`Probe::title`].
    fn title(&self) -> &'static str;
    /// [`Probe::plan`], its typed cases kept behind the [`Planned`].
    fn plan(&self, ctx: &PlanCtx) -> Result<Planned<'_>, ProbeError>;
    /// [`AnyProbe::plan`] owning the probe, for a case run apart from the runner
    /// (`crosscheck`).
    fn plan_owned(self: Box<Self>, ctx: &PlanCtx) -> Result<Planned<'static>, ProbeError>;
    /// [`Probe::summary_shape`].
    fn summary_shape(&self) -> SummaryShape;
    /// [`Probe::sensitive_to`].
    fn sensitive_to(&self) -> &'static [Sensitivity];
    /// [`Probe::views`].
    fn views(&self) -> &'static [View];
    /// [`Probe::same_quantities`].
    fn same_quantities(&self) -> &'static [SameQuantity];
}

impl<P: Probe + 'static> AnyProbe for P {
    fn id(&self) -> &'static str {
        Probe::id(self)
    }
    fn title(&self) -> &'static str {
        Probe::title(self)
    }
    fn plan(&self, ctx: &PlanCtx) -> Result<Planned<'_>, ProbeError> {
        Ok(Planned::of::<P, _>(self, Probe::plan(self, ctx)?))
    }
    fn plan_owned(self: Box<Self>, ctx: &PlanCtx) -> Result<Planned<'static>, ProbeError> {
        let plan = Probe::plan(self.as_ref(), ctx)?;
        Ok(Planned::of::<P, _>(self, plan))
    }
    fn summary_shape(&self) -> SummaryShape {
        Probe::summary_shape(self)
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        Probe::sensitive_to(self)
    }
    fn views(&self) -> &'static [View] {
        Probe::views(self)
    }
    fn same_quantities(&self) -> &'static [SameQuantity] {
        Probe::same_quantities(self)
    }
}

/// A probe's plan: its cases, the probe-level parameters recorded in the run file,
/// what it leaves out here and why, and the facts its analysis needs.
#[derive(Debug, Clone)]
pub struct Plan<P, F = ()> {
    /// Cases, in the order to run.
    pub cases: Vec<Case<P>>,
    /// Sizes, iterations, repetitions: recorded as `params` of the result.
    pub params: BTreeMap<String, Value>,
    /// Parts of the sweep this machine cannot run, each "name: skipped: why": the
    /// runner records them (`params.skipped`) and states each as a finding.
    pub skipped: Vec<String>,
    /// What the plan chose that a reader must know (a representative subset, a
    /// capped size): the runner stores each as a warning of the result.
    pub warnings: Vec<Warning>,
    /// The plan's own facts for [`Probe::analyze`].
    pub facts: F,
}

impl<P> Plan<P> {
    /// A plan of these cases, with no facts.
    pub fn new(cases: Vec<Case<P>>) -> Self {
        Self {
            cases,
            params: BTreeMap::new(),
            skipped: Vec::new(),
            warnings: Vec::new(),
            facts: (),
        }
    }
}

impl<P, F> Plan<P, F> {
    /// Record a parameter.
    pub fn param(mut self, key: &str, value: impl Serialize) -> Self {
        self.params
            .insert(key.into(), serde_json::to_value(value).unwrap_or_default());
        self
    }

    /// Say what the plan measures less of than the full profile would on this
    /// machine (`scaled_down` in the run file and in `corescope plan`'s note column);
    /// nothing when `what` is `None`.
    pub fn scaled_down(self, what: Option<String>) -> Self {
        match what {
            Some(w) => self.param("scaled_down", w),
            None => self,
        }
    }

    /// Say what this machine cannot run, each line "name: skipped: why".
    pub fn skipping(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        self.skipped.extend(lines);
        self
    }

    /// Store a warning with the result (a choice the plan made that shapes it).
    pub fn warning(mut self, w: Warning) -> Self {
        self.warnings.push(w);
        self
    }

    /// The same plan keeping `facts` for [`Probe::analyze`] (the CPUs of a matrix,
    /// the nodes measured).
    pub fn with_facts<G>(self, facts: G) -> Plan<P, G> {
        Plan {
            cases: self.cases,
            params: self.params,
            skipped: self.skipped,
            warnings: self.warnings,
            facts,
        }
    }
}

/// One point of a probe's sweep: a label for progress, the probe's parameters, and
/// how the runner repeats it and with which other cases it is compared.
///
/// A probe plans `Case<its Params>`; the runner and the cost model see the same
/// case with its parameters in their JSON form (`Case<serde_json::Value>`, the
/// default), what `corescope plan` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Case<P = Value> {
    /// Shown in the progress bar (`int scatter ×8`).
    pub label: String,
    /// The probe's parameters.
    pub params: P,
    /// The comparison this case is a variant of; the runner measures the cases of one
    /// group in interleaved rounds (rotated order), so drift hits every variant alike.
    pub group: Option<String>,
    /// This case's variant within the group: the suffix of its series names after the
    /// last `/` (`linear` in `int/linear`).
    pub variant: Option<String>,
    /// What the case really runs on this machine (`CPUs 0,1`); cases of one group with
    /// equal `config` are measured once and the others get copies (see `Alias`).
    pub config: Option<String>,
    /// How often the runner repeats the case.
    pub rounds: Rounds,
    /// The CPU pair whose round trip the runner reads between the runs of every round
    /// of this case's group: a round during which it moved (`drift::moved_within`) is
    /// measured again rather than kept, and the result says how many were dropped.
    /// For cases whose figure is the pair's own hand-off (the channel race).
    pub steady_pair: Option<(u32, u32)>,
}

impl<P: Clone> Case<P> {
    /// A case of these parameters, run once.
    pub fn new(label: impl Into<String>, params: &P) -> Self {
        Self {
            label: label.into(),
            params: params.clone(),
            group: None,
            variant: None,
            config: None,
            rounds: Rounds::ONCE,
            steady_pair: None,
        }
    }
}

impl<P> Case<P> {
    /// Make this case variant `variant` of comparison `group`, running `config`, with
    /// the rounds of a compared variant.
    pub fn compared(
        mut self,
        group: impl Into<String>,
        variant: impl Into<String>,
        config: impl Into<String>,
    ) -> Self {
        self.group = Some(group.into());
        self.variant = Some(variant.into());
        self.config = Some(config.into());
        self.rounds = Rounds::COMPARED;
        self
    }

    /// Repeat with these rounds.
    pub fn with_rounds(mut self, rounds: Rounds) -> Self {
        self.rounds = rounds;
        self
    }

    /// Keep a round of this case's group only if the round trip between CPUs `a`
    /// and `b` stayed the same through it (see [`Case::steady_pair`]). One CPU
    /// (`a == b`) has no round trip to watch and keeps every round.
    pub fn kept_when_steady(mut self, a: u32, b: u32) -> Self {
        self.steady_pair = (a != b).then_some((a, b));
        self
    }

    /// The same case with its parameters in their JSON form.
    pub fn to_json(&self) -> Case
    where
        P: Serialize,
    {
        Case {
            label: self.label.clone(),
            params: serde_json::to_value(&self.params).unwrap_or(Value::Null),
            group: self.group.clone(),
            variant: self.variant.clone(),
            config: self.config.clone(),
            rounds: self.rounds,
            steady_pair: self.steady_pair,
        }
    }
}

/// What a probe's analysis adds to its merged result, filed by the runner in this
/// order: the replacements first, then every list appended to the result's.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Findings, after the result's.
    pub findings: Notes<Finding>,
    /// Tables, after the result's.
    pub tables: Vec<Table>,
    /// Warnings, each unless already there.
    pub warnings: Vec<Warning>,
    /// Series derived from the measured ones (a boost curve), after the result's.
    pub series: Vec<Series>,
    /// Points derived from the measured ones (a slowdown, a speed-up), merged into
    /// the result's series as a measured point would be.
    pub points: Vec<Point>,
    /// Matrices, after the result's.
    pub matrices: Vec<Matrix>,
    /// Parameters the analysis found (how far a sweep got), set in the result's.
    pub params: BTreeMap<String, Value>,
    /// The result's tables replaced by these first (per-case tables merged into
    /// one): `None` keeps them.
    pub replace_tables: Option<Vec<Table>>,
    /// The result's matrices replaced by these first (per-case cells assembled into
    /// full matrices): `None` keeps them.
    pub replace_matrices: Option<Vec<Matrix>>,
}

impl Analysis {
    /// An analysis of findings only.
    pub fn findings(findings: impl IntoIterator<Item = impl Into<Finding>>) -> Self {
        let mut a = Self::default();
        a.findings.extend(findings);
        a
    }

    /// File the analysis in `result`: the replacements, then every list appended.
    pub fn file(self, result: &mut ProbeResult) {
        if let Some(t) = self.replace_tables {
            result.tables = t;
        }
        if let Some(m) = self.replace_matrices {
            result.matrices = m;
        }
        result.series.extend(self.series);
        for p in self.points {
            result.push_point(p);
        }
        result.matrices.extend(self.matrices);
        result.params.extend(self.params);
        result.tables.extend(self.tables);
        result.findings.extend(self.findings);
        for w in self.warnings {
            result.warnings.push_unique(w);
        }
    }
}

/// A plan as the runner sees it: its cases in their JSON form and what it records,
/// with the probe and its typed cases and facts behind them. Case `i` here is case
/// `i` of the probe's own plan.
pub struct Planned<'p> {
    /// The cases, parameters in their JSON form.
    pub cases: Vec<Case>,
    /// [`Plan::params`].
    pub params: BTreeMap<String, Value>,
    /// [`Plan::skipped`].
    pub skipped: Vec<String>,
    /// [`Plan::warnings`].
    pub warnings: Vec<Warning>,
    typed: Box<dyn TypedPlan + 'p>,
}

impl<'p> Planned<'p> {
    /// `plan`, planned by `probe` (borrowed or owned).
    fn of<P: Probe + 'p, H: Borrow<P> + Send + Sync + 'p>(
        probe: H,
        plan: Plan<P::Params, P::Facts>,
    ) -> Self {
        Self {
            cases: plan.cases.iter().map(Case::to_json).collect(),
            params: plan.params,
            skipped: plan.skipped,
            warnings: plan.warnings,
            typed: Box::new(Typed {
                probe,
                cases: plan.cases,
                facts: plan.facts,
                of: PhantomData,
            }),
        }
    }

    /// Run case `index` of the plan ([`Probe::run`]).
    pub fn run(&self, index: usize, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        self.typed.run(index, ctx)
    }

    /// The probe's analysis of its merged result ([`Probe::analyze`]).
    pub fn analyze(&self, result: &ProbeResult, ctx: &PlanCtx) -> Analysis {
        self.typed.analyze(result, ctx)
    }

    /// Seconds of one run of case `index` ([`Probe::run_cost_s`]).
    pub fn run_cost_s(&self, index: usize, cost: &Cost) -> Option<f64> {
        self.typed.run_cost_s(index, cost)
    }
}

/// A plan's typed side, its types erased.
trait TypedPlan: Send + Sync {
    fn run(&self, index: usize, ctx: &mut RunCtx) -> Result<Measurement, ProbeError>;
    fn analyze(&self, result: &ProbeResult, ctx: &PlanCtx) -> Analysis;
    fn run_cost_s(&self, index: usize, cost: &Cost) -> Option<f64>;
}

/// A probe (borrowed or owned) with its plan's typed cases and facts.
struct Typed<P: Probe, H> {
    probe: H,
    cases: Vec<Case<P::Params>>,
    facts: P::Facts,
    of: PhantomData<fn() -> P>,
}

impl<P: Probe, H: Borrow<P> + Send + Sync> TypedPlan for Typed<P, H> {
    fn run(&self, index: usize, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let case = self.cases.get(index).ok_or(ProbeError::NoSuchCase {
            index,
            cases: self.cases.len(),
        })?;
        self.probe.borrow().run(case, ctx)
    }

    fn analyze(&self, result: &ProbeResult, ctx: &PlanCtx) -> Analysis {
        self.probe.borrow().analyze(result, &self.facts, ctx)
    }

    fn run_cost_s(&self, index: usize, cost: &Cost) -> Option<f64> {
        let case = self.cases.get(index)?;
        self.probe.borrow().run_cost_s(&case.params, cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Profile, Status};

    /// A probe of buffer sizes whose facts are a word for its analysis.
    struct Sizes;

    #[derive(Debug, Clone, PartialEq, Serialize)]
    struct Size {
        bytes: u64,
    }

    impl Probe for Sizes {
        type Params = Size;
        type Facts = &'static str;
        fn id(&self) -> &'static str {
            "sizes"
        }
        fn title(&self) -> &'static str {
            "a probe of this test"
        }
        fn plan(&self, _: &PlanCtx) -> Result<Plan<Size, &'static str>, ProbeError> {
            let cases = [8, 64].map(|bytes| Case::new(format!("{bytes} B"), &Size { bytes }));
            Ok(Plan::new(cases.to_vec()).with_facts("sizes"))
        }
        fn run(&self, case: &Case<Size>, _: &mut RunCtx) -> Result<Measurement, ProbeError> {
            let y = case.params.bytes as f64;
            Ok(Measurement::points(vec![Point::new(
                "b", "x", y, "bytes", y,
            )]))
        }
        fn analyze(&self, result: &ProbeResult, facts: &&'static str, _: &PlanCtx) -> Analysis {
            let mut a = Analysis::findings([format!("{facts}: {}", result.series.len())]);
            a.points.push(Point::new("b", "x", 1.0, "bytes", 1.0));
            a
        }
        fn run_cost_s(&self, size: &Size, _: &Cost) -> Option<f64> {
            Some(size.bytes as f64)
        }
    }

    #[test]
    fn a_planned_case_reaches_its_probe_as_planned_and_readers_as_json() {
        let ctx = crate::estimate::plan_ctx(Default::default(), Profile::Quick, 1.0);
        let planned = AnyProbe::plan(&Sizes, &ctx).unwrap();
        assert_eq!(planned.cases[1].params["bytes"], 64);
        assert_eq!(planned.cases[1].label, "64 B");
        let mut run = RunCtx {
            plan: &ctx,
            deadline: std::time::Instant::now(),
            warnings: Vec::new(),
            counted: Vec::new(),
            blocks: Default::default(),
        };
        let m = planned.run(1, &mut run).unwrap();
        assert_eq!(m.points[0].samples, [64.0]);
        assert!(planned.run(2, &mut run).is_err(), "not a case of the plan");
        let mut r = ProbeResult::new("sizes", "t", Status::Completed);
        r.absorb(m);
        planned.analyze(&r, &ctx).file(&mut r);
        assert!(r.findings.contains("sizes: 1"));
        let mut x = r.series("b").unwrap().x.clone();
        x.sort_by(f64::total_cmp);
        assert_eq!(x, [1.0, 64.0], "the derived point beside the measured one");
    }
}
