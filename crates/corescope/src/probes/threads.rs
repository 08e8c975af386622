//! `threads`: what `pthread_create` costs (seed 000 §6.1), joinable and detached, by
//! where the child runs relative to the parent.
//!
//! Per sample: the parent (pinned) stamps the counter, calls `pthread_create` through
//! libc (not `std::thread`, which adds its own allocation and bookkeeping), stamps
//! again when the call returns: A = the call. The child's first instruction stamps the
//! counter: B = call start → child running. The child is placed with
//! `pthread_attr_setaffinity_np`, so it starts on its CPU without a system call of
//! its own. Every joinable child is joined and every detached child has finished its
//! work before the next sample: nothing is left behind.
//!
//! Repetition and comparison: one case measures every variant (joinable and detached,
//! each relation), in [`pair::CHUNKS`] chunks taken in rotated order, so drift hits
//! all variants alike. Findings compare medians through their 95 % intervals
//! (joinable vs detached; other core vs same CPU) and state a difference only when
//! it is significant.

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::analysis::pairs as pair_stats;
use crate::clock::ticks;
use crate::harness::pair;
use crate::model::{Measurement, ProbeResult, SampleStop, Sensitivity, Warning};
use crate::placement::pairs::{self, Relation};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The probe.
pub struct Threads;

/// Longest wait for a child to start or finish before the probe gives up on it.
pub const CHILD_TIMEOUT_S: f64 = 5.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Variant {
    detached: bool,
    relation: Relation,
    parent: Option<u32>,
    child: Option<u32>,
}

impl Variant {
    fn name(&self) -> String {
        let kind = if self.detached {
            "detached"
        } else {
            "joinable"
        };
        format!("create/{kind}/{}", self.relation.name())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseParams {
    variants: Vec<Variant>,
    /// Samples per variant (taken in chunks).
    samples: usize,
}

#[derive(Default)]
struct Slot {
    start: AtomicU64,
    done: AtomicBool,
}

extern "C" fn child_main(arg: *mut libc::c_void) -> *mut libc::c_void {
    let t = ticks();
    // SAFETY: arg came from Arc::into_raw(Arc<Slot>) in `sample`; this thread owns
    // that reference and drops it here.
    let slot = unsafe { Arc::from_raw(arg as *const Slot) };
    slot.start.store(t.max(1), Ordering::Release);
    slot.done.store(true, Ordering::Release);
    std::ptr::null_mut()
}

/// A pthread attribute set, destroyed on drop.
struct Attr(libc::pthread_attr_t);

/// Why an attribute set could not be made.
#[derive(Debug, thiserror::Error)]
enum AttrError {
    /// `pthread_attr_init` failed.
    #[error("pthread_attr_init failed")]
    Init,
    /// The CPU could not be set.
    #[error("pthread_attr_setaffinity_np(CPU {cpu}) failed: {rc}")]
    Affinity {
        /// The CPU.
        cpu: u32,
        /// The return code.
        rc: i32,
    },
}

impl From<AttrError> for SampleStop {
    fn from(e: AttrError) -> Self {
        match e {
            AttrError::Init => SampleStop::AttrInit,
            AttrError::Affinity { cpu, rc } => SampleStop::AttrAffinity { cpu, rc },
        }
    }
}

impl Attr {
    fn new(detached: bool, cpu: Option<u32>) -> Result<Self, AttrError> {
        // SAFETY: pthread_attr_init initialises the zeroed storage we own.
        let mut a = Attr(unsafe { std::mem::zeroed() });
        // SAFETY: a.0 is valid storage for an attribute object.
        if unsafe { libc::pthread_attr_init(&mut a.0) } != 0 {
            return Err(AttrError::Init);
        }
        let state = if detached {
            libc::PTHREAD_CREATE_DETACHED
        } else {
            libc::PTHREAD_CREATE_JOINABLE
        };
        // SAFETY: a.0 was initialised above.
        unsafe { libc::pthread_attr_setdetachstate(&mut a.0, state) };
        if let Some(cpu) = cpu {
            // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for cpu < CPU_SETSIZE.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            if (cpu as usize) < libc::CPU_SETSIZE as usize {
                // SAFETY: bound checked above.
                unsafe { libc::CPU_SET(cpu as usize, &mut set) };
                // SAFETY: a.0 is initialised; set is a valid cpu_set_t of the given size.
                let rc = unsafe {
                    libc::pthread_attr_setaffinity_np(
                        &mut a.0,
                        std::mem::size_of::<libc::cpu_set_t>(),
                        &set,
                    )
                };
                if rc != 0 {
                    return Err(AttrError::Affinity { cpu, rc });
                }
            }
        }
        Ok(a)
    }
}

impl Drop for Attr {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::pthread_attr_destroy(&mut self.0) };
    }
}

/// What the parent saw: (A, B) tick pairs, and why it stopped early, if it did.
type Samples = (Vec<u64>, Vec<u64>, Option<SampleStop>);

fn sample(c: &Variant, samples: usize, limit_ticks: u64, deadline: std::time::Instant) -> Samples {
    let (mut a, mut b) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    let attr = match Attr::new(c.detached, c.child) {
        Ok(x) => x,
        Err(e) => return (a, b, Some(e.into())),
    };
    for i in 0..samples {
        if i % 64 == 0 && std::time::Instant::now() >= deadline {
            return (
                a,
                b,
                Some(SampleStop::Budget {
                    samples: Some(i as u64),
                }),
            );
        }
        let slot = Arc::new(Slot::default());
        let raw = Arc::into_raw(slot.clone()) as *mut libc::c_void;
        // SAFETY: pthread_t is plain data, written by pthread_create.
        let mut tid: libc::pthread_t = unsafe { std::mem::zeroed() };
        let t0 = ticks();
        // SAFETY: attr is initialised; child_main has the C ABI and takes ownership of
        // `raw` (one Arc reference) when the thread starts.
        let rc = unsafe { libc::pthread_create(&mut tid, &attr.0, child_main, raw) };
        let t1 = ticks();
        if rc != 0 {
            // SAFETY: the thread was not created, so the reference is still ours.
            drop(unsafe { Arc::from_raw(raw as *const Slot) });
            return (
                a,
                b,
                Some(SampleStop::CreateFailed {
                    samples: i as u64,
                    error: std::io::Error::from_raw_os_error(rc).into(),
                }),
            );
        }
        let started = pair::wait_until(limit_ticks, || slot.start.load(Ordering::Acquire) != 0);
        if c.detached {
            pair::wait_until(limit_ticks, || slot.done.load(Ordering::Acquire));
        } else {
            // SAFETY: tid is a joinable thread we created and join exactly once.
            unsafe { libc::pthread_join(tid, std::ptr::null_mut()) };
        }
        if !started {
            return (
                a,
                b,
                Some(SampleStop::ChildNotStarted {
                    timeout_s: CHILD_TIMEOUT_S,
                }),
            );
        }
        a.push(t1.wrapping_sub(t0));
        b.push(slot.start.load(Ordering::Acquire).wrapping_sub(t0));
    }
    (a, b, None)
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "threads";

impl Probe for Threads {
    type Params = CaseParams;
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Summary: when a new thread starts, per placement of the child.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::PlacedMedians {
            prefix: "create/joinable/",
            head_part: "start",
            head_lead: "a new thread runs after",
            item_lead: "child on",
            item_parts: &[
                ("call", "pthread_create returns in"),
                ("start", "the child runs after"),
            ],
        }
    }
    fn run_cost_s(&self, _params: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([0.07, 1.0, 20.0]))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "pthread_create cost, joinable and detached: call duration and time until the child runs"
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
                Ok((parent, child)) => {
                    for detached in [false, true] {
                        variants.push(Variant {
                            detached,
                            relation,
                            parent,
                            child,
                        });
                    }
                }
                Err(why) => skipped.push(format!("{}: skipped: {why}", relation.name())),
            }
        }
        let cases = vec![Case::new(
            format!("create ×{} variants", variants.len()),
            &CaseParams {
                variants,
                samples: n,
            },
        )];
        Ok(Plan::new(cases)
            .param("samples", n)
            .param("chunks", pair::CHUNKS)
            .skipping(skipped)
            .param(
                "clock",
                "TSC (x86_64) / virtual counter (aarch64), converted to ns",
            ))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let c = case.params.clone();
        let clock = ctx.plan.clock.clone();
        let limit = clock.ns_to_ticks(CHILD_TIMEOUT_S * 1e9) as u64;
        let deadline = ctx.deadline;
        let (per_variant, stop) = pair::interleaved(c.variants.len(), c.samples, |v, chunk| {
            let var = &c.variants[v];
            let out = ctx.team_uncounted(
                &[var.parent],
                1,
                |_| (),
                |_, _| sample(var, chunk, limit, deadline),
            )?;
            let (a, b, stop) = out
                .results
                .into_iter()
                .flatten()
                .next()
                .ok_or(NotRun::ParentThread)?;
            let stop = stop.map(|stop| Warning::SamplingStopped {
                variant: var.name(),
                stop,
            });
            Ok::<_, ProbeError>((a.into_iter().zip(b).collect::<Vec<_>>(), stop))
        })?;
        let mut m = Measurement::default();
        if let Some(why) = stop {
            m.warnings.push(why);
        }
        for (var, ab) in c.variants.iter().zip(per_variant) {
            if ab.is_empty() {
                continue;
            }
            let base = var.name();
            let (a, b): (Vec<u64>, Vec<u64>) = ab.into_iter().unzip();
            let ds = pair_stats::paired(
                &format!("{base}/call"),
                &format!("{base}/start"),
                &clock,
                &a,
                &b,
            );
            pair_stats::push_dists(&mut m, &clock, ds);
        }
        if m.distributions.is_empty() {
            return Err(ProbeError::GaveUp("create: no sample".into()));
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let ds = &result.distributions;
        let mut out = Analysis::default();
        for rel in ["other-core", "same-cpu", "unpinned"] {
            let (j, d) = (
                format!("create/joinable/{rel}/call"),
                format!("create/detached/{rel}/call"),
            );
            if let Some(f) = pair_stats::compare_dists(
                ds,
                &format!("pthread_create call, child on {rel}"),
                ("joinable", &j),
                ("detached", &d),
                None,
            ) {
                out.findings.push(f);
                break;
            }
        }
        let mut found = pair_stats::relation_findings(
            ds,
            "time until the child runs (joinable)",
            "create/joinable",
            "/start",
        );
        found.extend(
            ds.iter()
                .filter(|d| d.name.starts_with("create/joinable/") && d.name.ends_with("/start"))
                .map(|d| pair_stats::median_finding(d, &ctx.clock)),
        );
        out.findings.extend(found);
        out
    }
}
