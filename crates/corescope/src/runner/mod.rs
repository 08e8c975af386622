//! Runs probes: plans, cases, budgets, statuses, progress events, and the run file
//! written after every probe so a crash or Ctrl-C loses nothing measured.

pub mod team;

use crate::model::{ProbeResult, RunFile, Status};
use crate::probes::{Event, PlanCtx, Probe, ProbeError, RunCtx};
use std::time::{Duration, Instant};

/// Run one probe under its budget. Never fails: every outcome is a status.
pub fn run_probe(probe: &dyn Probe, ctx: &PlanCtx, on_event: &mut dyn FnMut(Event)) -> ProbeResult {
    let started = Instant::now();
    let id = probe.id().to_string();
    let mut result = ProbeResult::new(probe.id(), probe.title(), Status::Completed);
    let plan = match probe.plan(ctx) {
        Ok(p) => p,
        Err(e) => {
            let (status, reason) = status_of(&e);
            result.status = status;
            result.reason = Some(reason);
            on_event(Event::ProbeEnd {
                id,
                status: status.name().into(),
            });
            return result;
        }
    };
    result.params = plan.params;
    result.params.insert("budget_s".into(), ctx.budget_s.into());
    result.cases_planned = plan.cases.len();
    on_event(Event::ProbeStart {
        id: id.clone(),
        cases: plan.cases.len(),
    });
    let deadline = started + Duration::from_secs_f64(ctx.budget_s);
    let mut run_ctx = RunCtx {
        plan: ctx,
        deadline,
        warnings: Vec::new(),
    };
    for (index, case) in plan.cases.iter().enumerate() {
        if let Some(sig) = crate::interrupt::requested() {
            result.status = Status::Interrupted;
            result.reason = Some(format!(
                "{} after {index} of {} cases",
                crate::interrupt::name(sig),
                plan.cases.len()
            ));
            break;
        }
        if Instant::now() >= deadline {
            result.status = Status::GaveUp;
            result.reason = Some(format!(
                "budget of {:.0} s reached after {index} of {} cases; next was '{}'",
                ctx.budget_s,
                plan.cases.len(),
                case.label
            ));
            break;
        }
        on_event(Event::CaseStart {
            id: id.clone(),
            index,
            label: case.label.clone(),
        });
        match probe.run(case, &mut run_ctx) {
            Ok(m) => {
                result.absorb(m);
                result.cases_done += 1;
            }
            Err(e) => {
                let (status, reason) = status_of(&e);
                result.status = status;
                result.reason = Some(match status {
                    Status::Skipped => reason,
                    _ => format!(
                        "case '{}' ({} of {}): {reason}",
                        case.label,
                        index + 1,
                        plan.cases.len()
                    ),
                });
                break;
            }
        }
    }
    for w in std::mem::take(&mut run_ctx.warnings) {
        if !result.warnings.contains(&w) {
            result.warnings.push(w);
        }
    }
    if result.status != Status::Skipped && result.cases_done > 0 {
        probe.finish(&mut result, ctx);
    }
    result.elapsed_s = started.elapsed().as_secs_f64();
    on_event(Event::ProbeEnd {
        id,
        status: result.status.name().into(),
    });
    result
}

fn status_of(e: &ProbeError) -> (Status, String) {
    match e {
        ProbeError::Skipped(r) => (Status::Skipped, r.clone()),
        ProbeError::GaveUp(r) => (Status::GaveUp, r.clone()),
        ProbeError::Failed(r) => (Status::Failed, r.clone()),
    }
}

/// Run probes in order, appending each result to `run` and calling `after_each`
/// (which saves the file) after every probe.
pub fn run_suite<E>(
    probes: &[Box<dyn Probe>],
    ctx: &PlanCtx,
    run: &mut RunFile,
    on_event: &mut dyn FnMut(Event),
    mut after_each: impl FnMut(&RunFile) -> Result<(), E>,
) -> Result<(), E> {
    for probe in probes {
        let result = run_probe(probe.as_ref(), ctx, on_event);
        let interrupted = result.status == Status::Interrupted;
        run.probes.push(result);
        after_each(run)?;
        if interrupted {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::model::{ClockInfo, Measurement, Point, Profile};
    use crate::probes::{Case, Overrides, Plan};

    struct Fake {
        cases: usize,
        fail_at: Option<usize>,
        sleep_ms: u64,
    }

    impl Probe for Fake {
        fn id(&self) -> &'static str {
            "fake"
        }
        fn title(&self) -> &'static str {
            "a fake probe"
        }
        fn plan(&self, _: &PlanCtx) -> Result<Plan, ProbeError> {
            Ok(Plan {
                cases: (0..self.cases)
                    .map(|i| Case::new(format!("case {i}"), &i))
                    .collect(),
                ..Plan::default()
            }
            .param("n", self.cases))
        }
        fn run(&self, case: &Case, _: &mut RunCtx) -> Result<Measurement, ProbeError> {
            let i: usize = case.decode()?;
            if Some(i) == self.fail_at {
                return Err(ProbeError::Failed("boom".into()));
            }
            std::thread::sleep(Duration::from_millis(self.sleep_ms));
            Ok(Measurement::points(vec![Point::new(
                "y/a",
                "x",
                i as f64,
                "v",
                2.0 * i as f64,
            )]))
        }
    }

    fn ctx(budget_s: f64) -> PlanCtx {
        PlanCtx {
            topo: crate::topology::Topology::default(),
            clock: Clock::from_info(ClockInfo {
                ticks_hz: 1e9,
                ..ClockInfo::default()
            }),
            profile: Profile::Quick,
            overrides: Overrides::default(),
            budget_s,
        }
    }

    #[test]
    fn completed_probe_merges_points_into_series() {
        let mut events = vec![];
        let r = run_probe(
            &Fake {
                cases: 3,
                fail_at: None,
                sleep_ms: 0,
            },
            &ctx(10.0),
            &mut |e| events.push(e),
        );
        assert_eq!(r.status, Status::Completed);
        assert_eq!(r.cases_done, 3);
        let s = r.series("y/a").unwrap();
        assert_eq!(s.x, vec![0.0, 1.0, 2.0]);
        assert_eq!(s.y, vec![0.0, 2.0, 4.0]);
        assert_eq!(r.params["n"], 3);
        assert_eq!(events.len(), 5);
    }

    #[test]
    fn budget_gives_up_and_keeps_what_was_measured() {
        let r = run_probe(
            &Fake {
                cases: 50,
                fail_at: None,
                sleep_ms: 20,
            },
            &ctx(0.05),
            &mut |_| {},
        );
        assert_eq!(r.status, Status::GaveUp);
        assert!(r.cases_done >= 1 && r.cases_done < 50, "{}", r.cases_done);
        assert_eq!(r.series("y/a").unwrap().x.len(), r.cases_done);
        assert!(r.reason.unwrap().contains("budget"));
    }

    #[test]
    fn failure_is_recorded_not_propagated() {
        let r = run_probe(
            &Fake {
                cases: 3,
                fail_at: Some(1),
                sleep_ms: 0,
            },
            &ctx(10.0),
            &mut |_| {},
        );
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.cases_done, 1);
        assert!(r.reason.unwrap().contains("boom"));
    }
}
