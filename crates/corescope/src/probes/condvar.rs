//! `condvar`: `pthread_cond_signal` and `pthread_cond_broadcast` to one waiter (seed
//! 000 §6.3): how long the call takes and how long until the waiter runs, by where
//! the waiter sits.
//!
//! Per sample the waiter holds the mutex, announces itself and waits on the condition
//! variable (which releases the mutex). The signaller takes the mutex — possible only
//! once the waiter is inside the wait — sets the predicate, releases the mutex, and
//! waits [`super::mutex::SETTLE_US`] so the waiter is asleep in the kernel, and then
//! stamps, signals (or broadcasts), stamps. The waiter stamps as soon as the wait
//! returns. So the wake-up latency is not inflated by the signaller holding the mutex.
//! Waits are timed (100 ms slices), so a lost wake-up cannot hang the probe.
//!
//! Repetition and comparison: one case measures every variant (signal and broadcast,
//! each relation) in [`pair::CHUNKS`] chunks taken in rotated order, so drift hits
//! all variants alike. Findings compare medians through their 95 % intervals (signal
//! vs broadcast; other core vs same CPU) and state a difference only when it is
//! significant.

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::analysis::pairs as pair_stats;
use crate::clock::ticks;
use crate::harness::pair::{self, PthreadCond, PthreadMutex};
use crate::model::{Measurement, ProbeResult, SampleStop, Sensitivity, Warning};
use crate::placement::pairs::{self, Relation};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Longest wait for the partner before the probe gives up on a case.
pub const PARTNER_TIMEOUT_S: f64 = 5.0;
/// Slice of a timed wait, in ms: the waiter re-checks the abort flag this often.
pub const WAIT_SLICE_MS: u64 = 100;

/// The probe.
pub struct Condvar;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Variant {
    broadcast: bool,
    relation: Relation,
    signaller: Option<u32>,
    waiter: Option<u32>,
}

impl Variant {
    fn name(&self) -> String {
        let kind = if self.broadcast {
            "broadcast"
        } else {
            "signal"
        };
        format!("{kind}/{}", self.relation.name())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    variants: Vec<Variant>,
    /// Samples per variant (taken in chunks).
    samples: usize,
}

struct Shared {
    m: Box<PthreadMutex>,
    c: Box<PthreadCond>,
    /// Predicate: the sample number the signaller released (read under the mutex).
    flag: AtomicU64,
    ready: AtomicU64,
    woke: AtomicU64,
    abort: AtomicBool,
    /// Signaller and waiter share a CPU: the signaller yields at every poll.
    same_cpu: bool,
}

type Calls = (Vec<u64>, Vec<u64>, Option<SampleStop>);

fn run_pair(
    sh: &Shared,
    me: usize,
    broadcast: bool,
    samples: usize,
    settle: u64,
    limit: u64,
    deadline: std::time::Instant,
) -> Calls {
    let (mut call, mut wake) = (Vec::new(), Vec::new());
    if me == 1 {
        // The waiter.
        for k in 1..=samples as u64 {
            sh.m.lock();
            sh.ready.store(k, Ordering::Release);
            while sh.flag.load(Ordering::Acquire) != k {
                if sh.abort.load(Ordering::Acquire) {
                    sh.m.unlock();
                    return (call, wake, None);
                }
                sh.c.wait_ms(&sh.m, WAIT_SLICE_MS);
            }
            let t = ticks();
            sh.m.unlock();
            sh.woke.store(t.max(1), Ordering::Release);
        }
        return (call, wake, None);
    }
    // The signaller.
    let mut stop = None;
    for k in 1..=samples as u64 {
        if k % 64 == 0 && std::time::Instant::now() >= deadline {
            stop = Some(SampleStop::Budget {
                samples: Some(k - 1),
            });
            break;
        }
        if !pair::wait_until(limit, || sh.ready.load(Ordering::Acquire) == k) {
            stop = Some(SampleStop::PartnerNotReady {
                timeout_s: PARTNER_TIMEOUT_S,
            });
            break;
        }
        // Succeeds only once the waiter is inside the wait (it released the mutex there).
        sh.m.lock();
        sh.woke.store(0, Ordering::Release);
        sh.flag.store(k, Ordering::Release);
        sh.m.unlock();
        // Let the waiter fall asleep: between releasing the mutex and sleeping in the
        // kernel it is still awake, and a signal then would find it running.
        let t = ticks();
        while ticks().wrapping_sub(t) < settle {
            std::thread::yield_now();
        }
        let t0 = ticks();
        if broadcast {
            sh.c.broadcast();
        } else {
            sh.c.signal();
        }
        let t1 = ticks();
        let woke = || sh.woke.load(Ordering::Acquire) != 0;
        let waited = if sh.same_cpu {
            pair::wait_for_same_cpu(limit, woke)
        } else {
            pair::wait_until(limit, woke)
        };
        if !waited {
            stop = Some(SampleStop::PartnerNotWoken {
                timeout_s: PARTNER_TIMEOUT_S,
            });
            break;
        }
        call.push(t1.wrapping_sub(t0));
        wake.push(sh.woke.load(Ordering::Acquire).wrapping_sub(t0));
    }
    sh.abort.store(true, Ordering::Release);
    sh.m.lock();
    sh.c.broadcast();
    sh.m.unlock();
    (call, wake, stop)
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "condvar";

impl Probe for Condvar {
    type Params = CaseParams;
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Summary: when a signalled waiter wakes, per placement of the waiter.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::PlacedMedians {
            prefix: "signal/",
            head_part: "wake",
            head_lead: "a signalled waiter wakes after",
            item_lead: "waiter on",
            item_parts: &[
                ("call", "pthread_cond_signal returns in"),
                ("wake", "the waiter wakes after"),
            ],
        }
    }
    fn run_cost_s(&self, _params: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.12, 2.1, 42.0]))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "condition variable signal and broadcast to one waiter: call duration and wake-up latency"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let n = pair::samples(ctx.profile);
        let mut variants = Vec::new();
        let mut skipped = Vec::new();
        for (relation, pair) in pairs::pairs(&ctx.topo) {
            match pair {
                Ok((signaller, waiter)) => {
                    for broadcast in [false, true] {
                        variants.push(Variant {
                            broadcast,
                            relation,
                            signaller,
                            waiter,
                        });
                    }
                }
                Err(why) => skipped.push(format!("{}: skipped: {why}", relation.name())),
            }
        }
        let cases = vec![Case::new(
            format!("signal/broadcast ×{} variants", variants.len()),
            &CaseParams {
                variants,
                samples: n,
            },
        )];
        Ok(Plan::new(cases)
            .param("samples", n)
            .param("chunks", pair::CHUNKS)
            .skipping(skipped))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let clock = ctx.plan.clock.clone();
        let (per_variant, stop) = pair::interleaved(c.variants.len(), c.samples, |v, n| {
            chunk_of(ctx, &c.variants[v], n)
        })?;
        let mut m = Measurement::default();
        if let Some(why) = stop {
            m.warnings.push(why);
        }
        for (var, cw) in c.variants.iter().zip(per_variant) {
            if cw.is_empty() {
                continue;
            }
            let base = var.name();
            let (call, wake): (Vec<u64>, Vec<u64>) = cw.into_iter().unzip();
            let ds = pair_stats::paired(
                &format!("{base}/call"),
                &format!("{base}/wake"),
                &clock,
                &call,
                &wake,
            );
            pair_stats::push_dists(&mut m, &clock, ds);
        }
        if m.distributions.is_empty() {
            return Err(ProbeError::GaveUp("condvar: no sample".into()));
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let ds = &result.distributions;
        let mut found = pair_stats::relation_findings(ds, "signal wake-up", "signal", "/wake");
        for rel in ["other-core", "same-cpu", "unpinned"] {
            let (s, b) = (
                format!("signal/{rel}/call"),
                format!("broadcast/{rel}/call"),
            );
            if let Some(f) = pair_stats::compare_dists(
                ds,
                &format!("the call with one waiter on {rel}"),
                ("signal", &s),
                ("broadcast", &b),
                None,
            ) {
                found.push(f);
                break;
            }
        }
        found.extend(
            ds.iter()
                .filter(|d| d.name.starts_with("signal/") && d.name.ends_with("/wake"))
                .map(|d| pair_stats::median_finding(d, &ctx.clock)),
        );
        Analysis::findings(found)
    }
}

/// One chunk of one variant: (call, wake) tick pairs and why it stopped early, if it did.
fn chunk_of(
    ctx: &mut RunCtx,
    var: &Variant,
    samples: usize,
) -> Result<pair::PairChunk, ProbeError> {
    let clock = ctx.plan.clock.clone();
    let sh = Shared {
        m: PthreadMutex::new(),
        c: PthreadCond::new(),
        flag: AtomicU64::new(0),
        ready: AtomicU64::new(0),
        woke: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        same_cpu: var.relation == Relation::SameCpu,
    };
    let limit = clock.ns_to_ticks(PARTNER_TIMEOUT_S * 1e9) as u64;
    let settle = clock.ns_to_ticks(super::mutex::SETTLE_US * 1e3) as u64;
    let deadline = ctx.deadline;
    let broadcast = var.broadcast;
    let out = ctx.team_uncounted(
        &[var.signaller, var.waiter],
        1,
        |_| (),
        |me, _| run_pair(&sh, me, broadcast, samples, settle, limit, deadline),
    )?;
    let (call, wake, stop) = out
        .results
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .ok_or(NotRun::Signaller)?;
    let stop = stop
        .or_else(|| {
            ctx.expired()
                .then_some(SampleStop::Budget { samples: None })
        })
        .map(|stop| Warning::SamplingStopped {
            variant: var.name(),
            stop,
        });
    Ok((call.into_iter().zip(wake).collect(), stop))
}
