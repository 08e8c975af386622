//! What several integration tests share: a probe that exists only in the tests,
//! stating what a test gives it (the conditions it is sensitive to, its views, its
//! summary shape) and nothing else. Its plan is empty and its run skips, so it is
//! only ever looked up in a registry of a test's own, never measured.
//!
//! Each test file includes this module with `mod support;`; everything here is used
//! by every one of them, so no `dead_code` allowance is needed.

use corescope::model::{Measurement, Sensitivity, SummaryShape, View};
use corescope::probes::{Case, Plan, PlanCtx, Probe, ProbeError, RunCtx};

/// A test probe: `TestProbe { views: &[View::StreamChart], ..TestProbe::new("id") }`.
#[derive(Debug, Clone, Copy)]
pub struct TestProbe {
    pub id: &'static str,
    pub sensitive_to: &'static [Sensitivity],
    pub views: &'static [View],
    pub summary_shape: SummaryShape,
}

impl TestProbe {
    /// A probe stating nothing beyond its id (the trait's defaults).
    pub const fn new(id: &'static str) -> Self {
        TestProbe {
            id,
            sensitive_to: &[],
            views: &[],
            summary_shape: SummaryShape::FirstItem,
        }
    }
}

impl Probe for TestProbe {
    type Params = ();
    type Facts = ();
    fn id(&self) -> &'static str {
        self.id
    }
    fn title(&self) -> &'static str {
        "a probe of this test only"
    }
    fn plan(&self, _ctx: &PlanCtx) -> Result<Plan<()>, ProbeError> {
        Ok(Plan::new(Vec::new()))
    }
    fn run(&self, _case: &Case<()>, _ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        Err(ProbeError::Skipped("never run here".into()))
    }
    fn summary_shape(&self) -> SummaryShape {
        self.summary_shape
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        self.sensitive_to
    }
    fn views(&self) -> &'static [View] {
        self.views
    }
}
