//! `mutex`: what a lock costs (seed 000 §6.2).
//!
//! - Uncontended: one thread, [`PAIRS_PER_SAMPLE`] lock+unlock pairs per sample, for
//!   `pthread_mutex_t`, Rust's `std::sync::Mutex` and `parking_lot::Mutex`.
//! - Contended hand-off: the holder unlocks while the waiter is blocked in `lock`
//!   (asleep in the kernel) or spinning on `trylock`. Per sample: how long the unlock
//!   takes, and the time from the start of the unlock until the waiter runs with the
//!   lock. By where the waiter sits relative to the holder.
//!
//! Repetition and comparison: two cases, uncontended and hand-off; each measures all
//! its variants (the three implementations; sleeping and spinning waiters at each
//! relation) in [`pair::CHUNKS`] chunks taken in rotated order, so drift hits all
//! variants alike. Findings compare medians through their 95 % intervals and state a
//! difference only when it is significant.

use super::{Analysis, Case, NotRun, Plan, PlanCtx, Probe, ProbeError, RunCtx};
use crate::analysis::pairs as pair_stats;
use crate::clock::ticks;
use crate::harness::pair::{self, PthreadMutex};
use crate::model::{Measurement, ProbeResult, SampleStop, Sensitivity, Warning};
use crate::placement::pairs::{self, Relation};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Lock+unlock pairs averaged per uncontended sample (seed 000: 1000).
pub const PAIRS_PER_SAMPLE: u64 = 1000;
/// How long the holder lets a sleeping waiter settle into the kernel before it
/// unlocks, in µs.
pub const SETTLE_US: f64 = 50.0;
/// Longest wait for the partner before the probe gives up on a case.
pub const PARTNER_TIMEOUT_S: f64 = 5.0;

/// The probe.
pub struct MutexProbe;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Impl {
    Pthread,
    Std,
    ParkingLot,
}

impl Impl {
    fn name(self) -> &'static str {
        match self {
            Impl::Pthread => "pthread",
            Impl::Std => "std",
            Impl::ParkingLot => "parking_lot",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HandoffVariant {
    spinning: bool,
    relation: Relation,
    holder: Option<u32>,
    waiter: Option<u32>,
    /// The holder gives up the CPU after its unlock by blocking on a second mutex
    /// until the waiter has run (rt-tests' `ptsematest`'s sender), instead of polling
    /// and yielding: only in [`case_holder_blocks`], an experiment of `corescope
    /// crosscheck`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    holder_blocks: bool,
}

impl HandoffVariant {
    fn name(&self) -> String {
        let kind = if self.spinning {
            "spinning"
        } else {
            "sleeping"
        };
        let how = if self.holder_blocks {
            "/holder-blocks"
        } else {
            ""
        };
        format!("handoff/{kind}/{}{how}", self.relation.name())
    }
}

/// The distribution of [`case_holder_blocks`]'s wake-ups.
pub const HOLDER_BLOCKS_WAKE: &str = "handoff/sleeping/same-cpu/holder-blocks/wake";

/// The sleeping waiter's hand-off on one CPU with a holder that, right after its
/// unlock, blocks on a second mutex which the waiter holds until it has run with the
/// lock, as rt-tests' `ptsematest` does, where the probe's holder polls for the
/// waiter and yields between polls: `corescope crosscheck`'s experiment for the
/// wake-up row (docs/verification.md). Not part of the probe's plan.
pub fn case_holder_blocks(cpu: u32, profile: crate::model::Profile) -> Case<CaseParams> {
    let samples = pair::samples(profile);
    Case::new(
        "handoff, sleeping waiter, same CPU, holder blocks",
        &CaseParams::Handoff {
            variants: vec![HandoffVariant {
                spinning: false,
                relation: Relation::SameCpu,
                holder: Some(cpu),
                waiter: Some(cpu),
                holder_blocks: true,
            }],
            samples,
        },
    )
}

#[derive(Debug, Clone, Serialize)]
pub enum CaseParams {
    Uncontended {
        imps: Vec<Impl>,
        cpu: Option<u32>,
        samples: usize,
    },
    Handoff {
        variants: Vec<HandoffVariant>,
        samples: usize,
    },
}

struct Shared {
    m: Box<PthreadMutex>,
    /// Held by the waiter from before it blocks until it has run with `m`, when the
    /// holder blocks on it ([`HandoffVariant::holder_blocks`]).
    sync: Box<PthreadMutex>,
    go: AtomicU64,
    ready: AtomicU64,
    woke: AtomicU64,
    abort: AtomicBool,
}

/// Holder's view of one case: unlock durations, wake latencies (ticks), stop reason.
type Handoff = (Vec<u64>, Vec<u64>, Option<SampleStop>);

fn handoff(
    sh: &Shared,
    me: usize,
    var: &HandoffVariant,
    samples: usize,
    settle: u64,
    limit: u64,
    deadline: std::time::Instant,
) -> Handoff {
    let (mut unlock, mut wake) = (Vec::new(), Vec::new());
    let spinning = var.spinning;
    // A holder on the waiter's CPU must let go of it at once for the waiter to run.
    let same_cpu = var.relation == Relation::SameCpu;
    if me == 1 {
        // The waiter.
        for k in 1..=samples as u64 {
            if !pair::wait_until(limit, || {
                sh.go.load(Ordering::Acquire) == k || sh.abort.load(Ordering::Acquire)
            }) || sh.abort.load(Ordering::Acquire)
            {
                break;
            }
            if var.holder_blocks {
                sh.sync.lock();
            }
            sh.ready.store(k, Ordering::Release);
            if spinning {
                while !sh.m.try_lock() {
                    if sh.abort.load(Ordering::Relaxed) {
                        return (unlock, wake, None);
                    }
                    std::hint::spin_loop();
                }
            } else {
                sh.m.lock();
            }
            let t = ticks();
            sh.m.unlock();
            sh.woke.store(t.max(1), Ordering::Release);
            if var.holder_blocks {
                sh.sync.unlock();
            }
        }
        return (unlock, wake, None);
    }
    // The holder.
    let mut stop = None;
    for k in 1..=samples as u64 {
        if k % 64 == 0 && std::time::Instant::now() >= deadline {
            stop = Some(SampleStop::Budget {
                samples: Some(k - 1),
            });
            break;
        }
        sh.m.lock();
        sh.woke.store(0, Ordering::Release);
        sh.go.store(k, Ordering::Release);
        if !pair::wait_until(limit, || sh.ready.load(Ordering::Acquire) == k) {
            sh.m.unlock();
            stop = Some(SampleStop::PartnerNotReady {
                timeout_s: PARTNER_TIMEOUT_S,
            });
            break;
        }
        // Let the waiter reach lock() and fall asleep (or start spinning); yielding so a
        // waiter on the same CPU can run.
        let t = ticks();
        while ticks().wrapping_sub(t) < settle {
            std::thread::yield_now();
        }
        let t0 = ticks();
        sh.m.unlock();
        let t1 = ticks();
        if var.holder_blocks {
            // Asleep until the waiter, having run with the lock, lets go of `sync`.
            if !sh
                .sync
                .lock_within(Duration::from_secs_f64(PARTNER_TIMEOUT_S))
            {
                stop = Some(SampleStop::PartnerNotWoken {
                    timeout_s: PARTNER_TIMEOUT_S,
                });
                break;
            }
            sh.sync.unlock();
        }
        let woke = || sh.woke.load(Ordering::Acquire) != 0;
        let waited = if same_cpu {
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
        unlock.push(t1.wrapping_sub(t0));
        wake.push(sh.woke.load(Ordering::Acquire).wrapping_sub(t0));
    }
    sh.abort.store(true, Ordering::Release);
    (unlock, wake, stop)
}

fn uncontended(imp: Impl, samples: usize) -> Vec<u64> {
    let p = PthreadMutex::new();
    let s = std::sync::Mutex::new(0u64);
    let pl = parking_lot::Mutex::new(0u64);
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t0 = ticks();
        match imp {
            Impl::Pthread => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    black_box(&p).lock();
                    black_box(&p).unlock();
                }
            }
            Impl::Std => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    let g = black_box(&s).lock();
                    drop(black_box(g));
                }
            }
            Impl::ParkingLot => {
                for _ in 0..PAIRS_PER_SAMPLE {
                    let g = black_box(&pl).lock();
                    drop(black_box(g));
                }
            }
        }
        out.push(ticks().wrapping_sub(t0));
    }
    out
}

/// Id of the probe and of its run-file entry.
pub const ID: &str = "mutex";

impl Probe for MutexProbe {
    type Params = CaseParams;
    type Facts = ();

    /// A fixed time per run for each profile (its samples do not grow with the
    /// machine), measured on the reference runs (`quick.json`, `final1.json`:
    /// elapsed ÷ cases); full scaled from default by its sample counts.
    /// Summary: the uncontended lock+unlock, then the hand-over to a sleeping and a spinning waiter.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::LockHandoff {
            uncontended: "uncontended/",
            sleeping: "handoff/sleeping/",
            spinning: "handoff/spinning/",
            part: "wake",
        }
    }
    fn run_cost_s(&self, _params: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        Some(c.per_profile([1.25, 0.9, 18.0]))
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "mutex lock+unlock cost, and contended hand-off: unlock duration and waiter wake-up"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let n = pair::samples(ctx.profile);
        let first = ctx.topo.allowed_pus().next().map(|p| p.os_index);
        let imps = vec![Impl::Pthread, Impl::Std, Impl::ParkingLot];
        let mut cases = vec![Case::new(
            "uncontended ×3 implementations",
            &CaseParams::Uncontended {
                imps,
                cpu: first,
                samples: n,
            },
        )];
        let mut skipped = Vec::new();
        let mut variants = Vec::new();
        for (relation, pair) in pairs::pairs(&ctx.topo) {
            match pair {
                Ok((holder, waiter)) => {
                    for spinning in [false, true] {
                        if spinning && relation == Relation::SameCpu {
                            skipped.push(
                                "handoff/spinning/same-cpu: skipped: a waiter spinning on the holder's own CPU measures only the scheduler's time slice".to_string(),
                            );
                            continue;
                        }
                        variants.push(HandoffVariant {
                            spinning,
                            relation,
                            holder,
                            waiter,
                            holder_blocks: false,
                        });
                    }
                }
                Err(why) => skipped.push(format!("handoff/{}: skipped: {why}", relation.name())),
            }
        }
        cases.push(Case::new(
            format!("handoff ×{} variants", variants.len()),
            &CaseParams::Handoff {
                variants,
                samples: n,
            },
        ));
        Ok(Plan::new(cases)
            .param("samples", n)
            .param("chunks", pair::CHUNKS)
            .param("pairs_per_uncontended_sample", PAIRS_PER_SAMPLE)
            .param("settle_us", SETTLE_US)
            .skipping(skipped))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let clock = ctx.plan.clock.clone();
        let mut m = Measurement::default();
        match case.params.clone() {
            CaseParams::Uncontended { imps, cpu, samples } => {
                let (per_imp, _) = pair::interleaved(imps.len(), samples, |v, chunk| {
                    let imp = imps[v];
                    let out = ctx.team(&[cpu], 1, |_| (), |_, _| uncontended(imp, chunk))?;
                    let t: Vec<u64> = out.results.into_iter().flatten().flatten().collect();
                    let stop = ctx
                        .expired()
                        .then_some(SampleStop::Budget { samples: None });
                    Ok::<_, ProbeError>((t, stop))
                })?;
                for (imp, t) in imps.iter().zip(per_imp) {
                    if t.is_empty() {
                        continue;
                    }
                    let ns: Vec<f64> = t
                        .iter()
                        .map(|&x| clock.ticks_to_ns(x) / PAIRS_PER_SAMPLE as f64)
                        .collect();
                    m.distributions.push(crate::stats::distribution(
                        format!("uncontended/{}", imp.name()),
                        "ns",
                        &ns,
                    ));
                }
            }
            CaseParams::Handoff { variants, samples } => {
                let (per_variant, stop) =
                    pair::interleaved(variants.len(), samples, |v, chunk| {
                        handoff_chunk(ctx, &variants[v], chunk)
                    })?;
                if let Some(why) = stop {
                    m.warnings.push(why);
                }
                for (var, uw) in variants.iter().zip(per_variant) {
                    if uw.is_empty() {
                        continue;
                    }
                    let base = var.name();
                    let (unlock, wake): (Vec<u64>, Vec<u64>) = uw.into_iter().unzip();
                    let ds = pair_stats::paired(
                        &format!("{base}/unlock"),
                        &format!("{base}/wake"),
                        &clock,
                        &unlock,
                        &wake,
                    );
                    pair_stats::push_dists(&mut m, &clock, ds);
                }
            }
        }
        if m.distributions.is_empty() {
            return Err(ProbeError::GaveUp(format!("{}: no sample", case.label)));
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), ctx: &PlanCtx) -> Analysis {
        let ds = &result.distributions;
        let mut found = Vec::new();
        found.extend(
            ds.iter()
                .filter(|d| d.name.starts_with("uncontended/"))
                .map(|d| pair_stats::median_finding(d, &ctx.clock)),
        );
        for (a, b) in [
            ("pthread", "std"),
            ("pthread", "parking_lot"),
            ("std", "parking_lot"),
        ] {
            let (na, nb) = (format!("uncontended/{a}"), format!("uncontended/{b}"));
            found.extend(pair_stats::compare_dists(
                ds,
                "uncontended lock+unlock (per pair)",
                (a, &na),
                (b, &nb),
                None,
            ));
        }
        for rel in ["other-core", "smt-sibling", "other-package"] {
            let (sl, sp) = (
                format!("handoff/sleeping/{rel}/wake"),
                format!("handoff/spinning/{rel}/wake"),
            );
            found.extend(pair_stats::compare_dists(
                ds,
                &format!("waking the waiter on {rel}"),
                ("sleeping", &sl),
                ("spinning", &sp),
                None,
            ));
        }
        found.extend(pair_stats::relation_findings(
            ds,
            "sleeping waiter wake-up",
            "handoff/sleeping",
            "/wake",
        ));
        found.extend(
            ds.iter()
                .filter(|d| d.name.starts_with("handoff/sleeping/") && d.name.ends_with("/wake"))
                .map(|d| pair_stats::median_finding(d, &ctx.clock)),
        );
        Analysis::findings(found)
    }
}

/// One chunk of hand-offs of one variant: (unlock, wake) tick pairs and why it
/// stopped early, if it did.
fn handoff_chunk(
    ctx: &mut RunCtx,
    var: &HandoffVariant,
    samples: usize,
) -> Result<pair::PairChunk, ProbeError> {
    let clock = ctx.plan.clock.clone();
    let sh = Shared {
        m: PthreadMutex::new(),
        sync: PthreadMutex::new(),
        go: AtomicU64::new(0),
        ready: AtomicU64::new(0),
        woke: AtomicU64::new(0),
        abort: AtomicBool::new(false),
    };
    let settle = clock.ns_to_ticks(SETTLE_US * 1e3) as u64;
    let limit = clock.ns_to_ticks(PARTNER_TIMEOUT_S * 1e9) as u64;
    let deadline = ctx.deadline;
    let out = ctx.team_uncounted(
        &[var.holder, var.waiter],
        1,
        |_| (),
        |me, _| handoff(&sh, me, var, samples, settle, limit, deadline),
    )?;
    let (unlock, wake, stop) = out
        .results
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .ok_or(NotRun::Holder)?;
    let stop = stop
        .or_else(|| {
            ctx.expired()
                .then_some(SampleStop::Budget { samples: None })
        })
        .map(|stop| Warning::SamplingStopped {
            variant: var.name(),
            stop,
        });
    Ok((unlock.into_iter().zip(wake).collect(), stop))
}
