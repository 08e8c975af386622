//! `channel`: how fast one thread hands events to another through hspc (seed 004),
//! next to every maintained SPSC a Rust user would pick (rtrb, ringbuf, heapless)
//! and crossbeam's `ArrayQueue` and std's `sync_channel`.
//!
//! A producer thread and a consumer thread are pinned on a pair of CPUs: the SMT
//! sibling (`same-core`, where the machine has SMT) and another core (`other-core`);
//! with a single CPU allowed, both share it (`same-cpu`, time-sliced). Every
//! implementation runs the same harness code (`harness::spsc`, each crate made to
//! look alike in `harness::spsc::adapters`): non-blocking calls, a spin hint when
//! full or empty and a `yield` after [`YIELD_EVERY`] failed calls in a row (so a
//! partner on the same CPU, or preempted by the OS, gets to run), and the same channel memory
//! ([`CHANNEL_BYTES`]). The round trip polls again at once, without the hint, and
//! yields after [`ROUNDTRIP_YIELD_EVERY`] failed polls (a hint's rhythm against the
//! line's arrival moved it with the build; docs/channel.md).
//!
//! - Throughput: `events` events of 8 or 64 bytes, sent one at a time (batch 1) or
//!   in batches; events per second from the start gate to the consumer's last
//!   receive, median of the repetitions. Batches are the batch calls where the
//!   implementation has them (hspc slices, rtrb chunks, ringbuf slices) and loops of
//!   single calls otherwise (heapless, crossbeam, std); those move an eighth of the
//!   events ([`SINGLE_CALL_EVENTS_DIVISOR`]).
//! - Round trip: a ping-pong over two channels (one each way), 8-byte events; one
//!   sample per round trip, in ns. hspc's n-buffer producer flushes after each push.
//!
//! Every event carries its sequence number (and, at 64 bytes, a filler derived from
//! it): the consumer checks count, order and content, so a broken channel fails the
//! case instead of producing a number.

use super::{Analysis, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use crate::analysis;
use crate::analysis::pairs as pair_stats;
use crate::clock::Clock;
pub use crate::harness::spsc::adapters::Impl;
use crate::harness::spsc::adapters::{hspc_config, roundtrip_of, transfer_of, CHANNEL_BYTES};
use crate::harness::spsc::{PairLog, RunFail, ROUNDTRIP_BLOCK, ROUNDTRIP_YIELD_EVERY, YIELD_EVERY};
use crate::model::{Finding, Measurement, Point, ProbeResult, Profile, Sensitivity, Table};
use crate::placement::pairs::{self, PairCpus, Relation};
use crate::units::fmt_value;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Events per batch: 1 (per item), then batches.
pub const BATCHES: [usize; 3] = [1, 16, 256];
/// Longest one run (a throughput transfer or a round-trip series) may take before
/// it counts as stalled.
pub const RUN_LIMIT_S: f64 = 30.0;

/// The probe.
pub struct ChannelProbe;

/// The crates without batch calls (heapless, crossbeam, std) move this many times
/// fewer events a run. One event a call, a run of theirs took 60–235 ns per event
/// (summed over the three batch sizes) where hspc's took 6–46 (the default run
/// behind [`round_trips_per_event`]), and with all crates at one count they held
/// two thirds of the probe's time. An eighth keeps their runs at 20–60 ms a batch
/// at the default profile (2^18 events), far above the clock's step, and the
/// default profile's plan within ten minutes on the 2,048-strand topology
/// (`tests/plan.rs`).
pub const SINGLE_CALL_EVENTS_DIVISOR: u64 = 8;

/// Events a run of a crate without batch calls moves when the profile's count is
/// `events` (see [`SINGLE_CALL_EVENTS_DIVISOR`]).
fn single_call_events(events: u64) -> u64 {
    (events / SINGLE_CALL_EVENTS_DIVISOR).max(1)
}

/// Events a throughput run of `impl_` moves when the profile's count is `events`.
fn events_of(impl_: Impl, events: u64) -> u64 {
    if impl_.batch_calls() {
        events
    } else {
        single_call_events(events)
    }
}

/// A channel round trip of the probe in calibrated cache-line round trips (the
/// plan's unit, `Calibration::round_trip_ns`): the seven crates' medians were
/// 1.5–2.5× it, 2.0× on average (a default run on a 2-vCPU KVM guest, Intel
/// family 6 model 207, 2026-11-28: 366–607 ns where the CPUs' own round trip,
/// measured by the probe's steady checks, was 231–249 ns).
const TRIP_PER_CALIBRATED: f64 = 2.0;

/// The time one event of a throughput run takes, summed over the batch sizes of
/// [`BATCHES`], in calibrated cache-line round trips: the plan's price of a run.
/// From the same default run as [`TRIP_PER_CALIBRATED`] (each crate's three
/// medians, 2^21 events each, ÷ the 240 ns round trip): 6.3 ns (hspc, 8 B) to
/// 235 ns (std, 64 B) an event. A plan is an estimate: the crates keep their
/// order on other hosts better than their figures.
fn round_trips_per_event(impl_: Impl, event_bytes: usize) -> f64 {
    let [small, large] = match impl_ {
        Impl::Hspc => [0.026, 0.19],
        Impl::HspcRing => [0.042, 0.37],
        Impl::Rtrb => [0.13, 0.45],
        Impl::Ringbuf => [0.13, 0.38],
        Impl::Heapless => [0.36, 0.80],
        Impl::Crossbeam => [0.31, 0.79],
        Impl::Std => [0.26, 0.98],
    };
    if event_bytes <= 8 {
        small
    } else {
        large
    }
}

/// Where the pair runs: the relation's name in series (`same-core` for the SMT
/// sibling), its CPUs, and the L1 data cache of the producer's CPU, which hspc's
/// n-buffer sizes its buffers to ([`hspc_config`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Placement {
    name: String,
    cpus: PairCpus,
    #[serde(default)]
    l1d_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub enum CaseParams {
    Throughput {
        placement: Placement,
        impl_: Impl,
        event_bytes: usize,
        events: u64,
    },
    /// A ping-pong of `blocks` timed blocks of `ROUNDTRIP_BLOCK` round trips.
    Roundtrip {
        placement: Placement,
        impl_: Impl,
        blocks: usize,
    },
}

/// The placements measured on this machine, and the reasons for those skipped.
fn placements(ctx: &PlanCtx) -> (Vec<Placement>, Vec<String>) {
    let all = pairs::pairs(&ctx.topo);
    let placement = |name: &str, cpus: PairCpus| Placement {
        name: name.into(),
        l1d_bytes: cpus.0.and_then(|cpu| ctx.topo.l1d_bytes(cpu)),
        cpus,
    };
    let get = |r: Relation| {
        all.iter()
            .find(|(x, _)| *x == r)
            .map(|(_, p)| p.clone())
            .unwrap_or(Err(pairs::NoPair::NoAllowedCpu))
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    match get(Relation::SmtSibling) {
        Ok(cpus) => out.push(placement("same-core", cpus)),
        Err(why) => skipped.push(format!("same-core: skipped: no SMT ({why})")),
    }
    match get(Relation::OtherCore) {
        Ok(cpus) => out.push(placement("other-core", cpus)),
        Err(why) => skipped.push(format!("other-core: skipped: {why}")),
    }
    if out.is_empty() {
        // One CPU: both threads share it, time-sliced (the harness yields).
        if let Ok(cpus) = get(Relation::SameCpu) {
            out.push(placement("same-cpu", cpus));
        }
    }
    (out, skipped)
}

fn fail(impl_: Impl, what: &str, f: RunFail, ctx: &RunCtx) -> ProbeError {
    match f {
        RunFail::Deadline { received } if ctx.expired() => ProbeError::GaveUp(format!(
            "{} {what}: the budget ran out after {received} events",
            impl_.name()
        )),
        RunFail::Deadline { received } => ProbeError::Stalled {
            run: format!("{} {what}", impl_.name()),
            received,
            limit_s: RUN_LIMIT_S,
        },
        RunFail::Corrupt(why) => ProbeError::step(format!("{} {what}", impl_.name()), why),
    }
}

/// Hand a run's pinning warnings and counts to the probe's context.
fn absorb(log: PairLog, ctx: &mut RunCtx) {
    let (team, warnings) = log.finish();
    ctx.counted.extend(team);
    for w in warnings {
        if !ctx.warnings.contains(&w) {
            ctx.warnings.push(w);
        }
    }
}

fn run_deadline(ctx: &RunCtx) -> Instant {
    ctx.deadline
        .min(Instant::now() + Duration::from_secs_f64(RUN_LIMIT_S))
}

/// The comparison (and series stem) of a throughput race: `throughput 8B other-core`;
/// its series end in the implementation (`…/rtrb`), x the batch.
pub fn throughput_what(event_bytes: usize, place: &str) -> String {
    format!("throughput {event_bytes}B {place}")
}

/// Timed blocks of a round trip run ([`ROUNDTRIP_BLOCK`] round trips each): 4,800,
/// 80,000 and 320,000 round trips, a few ms to a few tenths of a second per
/// implementation.
fn roundtrip_blocks(profile: Profile) -> usize {
    profile.pick(75, 1_250, 5_000)
}

/// Rounds of a throughput race: those of a compared variant, fewer in the quick
/// profile (every round runs every batch of every implementation).
fn throughput_rounds(profile: Profile) -> Rounds {
    Rounds {
        min: profile.pick(
            6,
            crate::probes::MIN_COMPARED_ROUNDS,
            crate::probes::MIN_COMPARED_ROUNDS,
        ),
        max: profile.pick(6, 16, crate::probes::MAX_ROUNDS),
        ..Rounds::COMPARED
    }
}

/// `case`, kept only for rounds during which the round trip between its two CPUs
/// stayed the same (the placement check: this VM moves its vCPUs between
/// host cores, and a hand-off's cost follows the host cores it lands on).
fn steady(case: Case<CaseParams>, cpus: PairCpus) -> Case<CaseParams> {
    match cpus {
        (Some(a), Some(b)) => case.kept_when_steady(a, b),
        _ => case,
    }
}

/// The SPSC crates hspc races (crossbeam's MPMC queue and std's channel are shown,
/// not raced).
const SPSC_PEERS: [Impl; 3] = [Impl::Rtrb, Impl::Ringbuf, Impl::Heapless];

/// Id of the probe and of its run-file entry.
pub const ID: &str = "channel";

impl Probe for ChannelProbe {
    type Params = CaseParams;
    type Facts = ();

    /// Summary: hspc against its strongest rival per group of events.
    fn summary_shape(&self) -> crate::model::SummaryShape {
        crate::model::SummaryShape::Race {
            ours: "hspc",
            rates: "throughput/",
            round_trips: "roundtrip/",
        }
    }

    /// A run's time from what it moves, in the machine's calibrated cache-line
    /// round trips: a throughput run moves `events` once per batch size of
    /// [`BATCHES`] ([`round_trips_per_event`]), a round-trip series times
    /// `blocks` × [`ROUNDTRIP_BLOCK`] trips of [`TRIP_PER_CALIBRATED`] each; two
    /// threads start for each transfer.
    fn run_cost_s(&self, params: &CaseParams, c: &crate::probes::cost::Cost) -> Option<f64> {
        let round_trip_s = c.cal.round_trip_ns * 1e-9;
        Some(match params {
            CaseParams::Throughput {
                impl_,
                event_bytes,
                events,
                ..
            } => {
                let per_event = round_trips_per_event(*impl_, *event_bytes) * round_trip_s;
                *events as f64 * per_event + c.spawn_s(2.0 * BATCHES.len() as f64)
            }
            CaseParams::Roundtrip { blocks, .. } => {
                let trips = (*blocks * ROUNDTRIP_BLOCK) as f64;
                trips * TRIP_PER_CALIBRATED * round_trip_s + c.spawn_s(2.0)
            }
        })
    }

    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "producer/consumer channel: hspc raced against rtrb, ringbuf, heapless, crossbeam and std, per item, batched, round trip"
    }
    fn sensitive_to(&self) -> &'static [Sensitivity] {
        &[Sensitivity::CrossCpu]
    }

    fn plan(&self, ctx: &PlanCtx) -> Result<Plan<CaseParams>, ProbeError> {
        let events: u64 = ctx.profile.pick(1 << 18, 1 << 21, 1 << 24);
        let rounds = throughput_rounds(ctx.profile);
        let blocks = roundtrip_blocks(ctx.profile);
        let (places, skipped) = placements(ctx);
        if places.is_empty() {
            return Err(ProbeError::Skipped("no allowed CPU".into()));
        }
        let mut cases = Vec::new();
        for p in &places {
            for event_bytes in [8usize, 64] {
                // The implementations race in rounds, in an order rotated each
                // round, so drift hits every one alike; a round runs every batch.
                for impl_ in Impl::ALL {
                    cases.push(steady(
                        Case::new(
                            format!("{} {event_bytes}B {}", impl_.name(), p.name),
                            &CaseParams::Throughput {
                                placement: p.clone(),
                                impl_,
                                event_bytes,
                                events: events_of(impl_, events),
                            },
                        )
                        .compared(
                            throughput_what(event_bytes, &p.name),
                            impl_.name(),
                            format!("{} on {:?}", impl_.name(), p.cpus),
                        )
                        .with_rounds(rounds),
                        p.cpus,
                    ));
                }
            }
            for impl_ in Impl::ALL {
                cases.push(steady(
                    Case::new(
                        format!("{} round trip {}", impl_.name(), p.name),
                        &CaseParams::Roundtrip {
                            placement: p.clone(),
                            impl_,
                            blocks,
                        },
                    ),
                    p.cpus,
                ));
            }
        }
        let configs: serde_json::Map<String, serde_json::Value> = Impl::ALL
            .iter()
            .filter_map(|&i| {
                hspc_config(i, places[0].l1d_bytes).map(|c| {
                    (
                        i.name().to_string(),
                        serde_json::to_value(c).unwrap_or_default(),
                    )
                })
            })
            .collect();
        Ok(Plan::new(cases)
            .param(
                "implementations",
                Impl::ALL.iter().map(|i| i.name()).collect::<Vec<_>>(),
            )
            .param("hspc_configs", configs)
            .param("channel_bytes", CHANNEL_BYTES)
            .param("batches", BATCHES)
            .param("events_per_run", events)
            .param("events_per_run_single_call", single_call_events(events))
            .param("rounds_min", rounds.min)
            .param("rounds_max", rounds.max)
            .param("roundtrip_blocks", blocks)
            .param("roundtrip_trips_per_block", ROUNDTRIP_BLOCK)
            .param("roundtrip_event_bytes", 8)
            .param("yield_every_failed_calls", YIELD_EVERY)
            .param("roundtrip_spin_hint", false)
            .param("roundtrip_yield_every_failed_polls", ROUNDTRIP_YIELD_EVERY)
            .skipping(skipped))
    }

    fn run(&self, case: &Case<CaseParams>, ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        let mut m = Measurement::default();
        match case.params.clone() {
            CaseParams::Throughput {
                placement,
                impl_,
                event_bytes,
                events,
            } => {
                for batch in BATCHES {
                    let d = run_deadline(ctx);
                    let (cpus, log) = (placement.cpus, PairLog::default());
                    let l1d = placement.l1d_bytes;
                    let run = match event_bytes {
                        8 => transfer_of::<u64>(impl_, l1d, events, batch, cpus, d, &log),
                        _ => transfer_of::<[u64; 8]>(impl_, l1d, events, batch, cpus, d, &log),
                    };
                    absorb(log, ctx);
                    let run = run?;
                    let what = format!("{event_bytes}B batch {batch}");
                    let elapsed = run.map_err(|f| fail(impl_, &what, f, ctx))?;
                    m.points.push(Point::new(
                        format!(
                            "{}/{}",
                            throughput_what(event_bytes, &placement.name),
                            impl_.name()
                        ),
                        "batch",
                        batch as f64,
                        "events_per_s",
                        events as f64 / elapsed.as_secs_f64().max(1e-9),
                    ));
                }
            }
            CaseParams::Roundtrip {
                placement,
                impl_,
                blocks,
            } => {
                let (d, log) = (run_deadline(ctx), PairLog::default());
                let ticks = roundtrip_of::<u64>(
                    impl_,
                    placement.l1d_bytes,
                    blocks,
                    placement.cpus,
                    d,
                    &log,
                );
                absorb(log, ctx);
                let ticks = ticks?.map_err(|f| fail(impl_, "round trip", f, ctx))?;
                let clock: &Clock = &ctx.plan.clock;
                let per_trip_ns: Vec<f64> = ticks
                    .iter()
                    .map(|&t| clock.ticks_to_ns(t) / ROUNDTRIP_BLOCK as f64)
                    .collect();
                let name = format!("roundtrip/{}/{}", impl_.name(), placement.name);
                let dist = crate::stats::distribution(&name, "ns", &per_trip_ns);
                pair_stats::push_dists(&mut m, clock, [dist]);
            }
        }
        Ok(m)
    }

    fn analyze(&self, result: &ProbeResult, _facts: &(), _ctx: &PlanCtx) -> Analysis {
        let mut out = Analysis::default();
        let mut places: Vec<String> = Vec::new();
        for d in &result.distributions {
            if let Some(p) = d.name.rsplit('/').next() {
                if !places.iter().any(|x| x == p) {
                    places.push(p.to_string());
                }
            }
        }
        for place in &places {
            let table = throughput_table(result, place);
            out.tables.push(table);
            for bytes in [8usize, 64] {
                let found = race_findings(result, bytes, place);
                out.findings.extend(found);
            }
            let rt: Vec<String> = Impl::ALL
                .iter()
                .filter_map(|i| {
                    let name = format!("roundtrip/{}/{place}", i.name());
                    let d = result.distributions.iter().find(|d| d.name == name)?;
                    Some(format!("{} {}", i.name(), fmt_value("ns", d.summary.p50)))
                })
                .collect();
            let span = Impl::ALL
                .iter()
                .filter_map(|i| steady_span(result, &format!("{} round trip {place}", i.name())))
                .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
            if !rt.is_empty() {
                let state = span
                    .map(|(lo, hi)| format!(" (CPUs' round trip {lo:.0}–{hi:.0} ns)"))
                    .unwrap_or_default();
                out.findings.push(format!(
                    "round trip (8B, {place}), median: {}{state}",
                    rt.join(", ")
                ));
            }
        }
        out
    }
}

/// Median events per second of `impl_` at `batch`, if measured.
fn rate(result: &ProbeResult, bytes: usize, place: &str, impl_: Impl, batch: usize) -> Option<f64> {
    let s = result.series(&format!(
        "{}/{}",
        throughput_what(bytes, place),
        impl_.name()
    ))?;
    s.estimate_at(batch as f64).map(|e| e.value)
}

/// One compact table per placement: implementations × (size, batch), medians in
/// M events/s (the series hold every round and the intervals).
fn throughput_table(result: &ProbeResult, place: &str) -> Table {
    let mut columns = vec!["implementation".to_string()];
    for bytes in [8usize, 64] {
        for b in BATCHES {
            columns.push(format!("{bytes}B ×{b} (M events/s)"));
        }
    }
    let rows = Impl::ALL
        .iter()
        .map(|&impl_| {
            let mut row = vec![serde_json::json!(impl_.name())];
            for bytes in [8usize, 64] {
                for b in BATCHES {
                    row.push(match rate(result, bytes, place, impl_, b) {
                        Some(v) => serde_json::json!((v / 1e4).round() / 100.0),
                        None => serde_json::Value::Null,
                    });
                }
            }
            row
        })
        .collect();
    Table {
        name: format!("channel/throughput/{place}"),
        columns,
        rows,
    }
}

/// The span of the CPU pair's round trip over the kept rounds of group `what`
/// (the runner's `steady_round_trip_ns`): the state of the machine the race
/// belongs to (on this VM about 100–140 ns when its vCPUs sit close, 450–490 ns
/// when they do not).
fn steady_span(result: &ProbeResult, what: &str) -> Option<(f64, f64)> {
    let span = result.params.get("steady_round_trip_ns")?.get(what)?;
    Some((span.get(0)?.as_f64()?, span.get(1)?.as_f64()?))
}

/// The race in findings, paired by round: per item, hspc's ring and n-buffer modes
/// against the fastest other SPSC crate; batched, hspc against rtrb and against the
/// fastest other.
fn race_findings(result: &ProbeResult, bytes: usize, place: &str) -> Vec<Finding> {
    let what = throughput_what(bytes, place);
    let series = |i: Impl| format!("{what}/{}", i.name());
    let fastest_peer = |batch: usize| {
        SPSC_PEERS
            .iter()
            .copied()
            .filter_map(|i| rate(result, bytes, place, i, batch).map(|r| (i, r)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    let big = BATCHES[BATCHES.len() - 1];
    let mut races = Vec::new();
    if let Some(peer) = fastest_peer(1) {
        races.push((Impl::HspcRing, peer, 1, "per item, fastest other SPSC"));
        races.push((
            Impl::Hspc,
            peer,
            1,
            "per item (n-buffer: visible per buffer)",
        ));
    }
    races.push((Impl::Hspc, Impl::Rtrb, big, "batched"));
    if let Some(peer) = fastest_peer(big).filter(|&p| p != Impl::Rtrb) {
        races.push((Impl::Hspc, peer, big, "batched, fastest other SPSC"));
    }
    races
        .into_iter()
        .filter_map(|(a, b, batch, how)| {
            let x = batch as f64;
            analysis::compare(
                result,
                &format!("{bytes}B events ×{batch}, {place}"),
                "events_per_s",
                (a.name(), &series(a), x),
                (b.name(), &series(b), x),
                Some(match steady_span(result, &what) {
                    Some((lo, hi)) => format!("{how}; CPUs' round trip {lo:.0}–{hi:.0} ns"),
                    None => how.to_string(),
                }),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_ctx(spec: &str) -> PlanCtx {
        PlanCtx {
            topo: crate::topology::from_synthetic(spec).unwrap(),
            clock: Clock::from_info(crate::model::ClockInfo {
                ticks_hz: 1e9,
                ..Default::default()
            }),
            profile: crate::model::Profile::Quick,
            overrides: super::super::Overrides::default(),
            budget_s: 10.0,
        }
    }

    #[test]
    fn the_single_call_crates_move_an_eighth_of_the_events() {
        let single: Vec<&str> = Impl::ALL
            .iter()
            .filter(|i| !i.batch_calls())
            .map(|i| i.name())
            .collect();
        assert_eq!(single, ["heapless", "crossbeam", "std"]);
        let plan = ChannelProbe.plan(&plan_ctx("core:2 pu:1")).unwrap();
        let quick_events = 1u64 << 18;
        let mut throughput_cases = 0;
        for case in &plan.cases {
            if let CaseParams::Throughput { impl_, events, .. } = &case.params {
                let want = if impl_.batch_calls() {
                    quick_events
                } else {
                    quick_events / SINGLE_CALL_EVENTS_DIVISOR
                };
                assert_eq!(*events, want, "{}", case.label);
                throughput_cases += 1;
            }
        }
        assert_eq!(throughput_cases, 2 * Impl::ALL.len());
        assert_eq!(
            plan.params["events_per_run_single_call"],
            serde_json::json!(quick_events / SINGLE_CALL_EVENTS_DIVISOR)
        );
    }

    #[test]
    fn hspcs_buffers_follow_the_producers_l1d() {
        let geometry = |spec: &str| {
            let plan = ChannelProbe.plan(&plan_ctx(spec)).unwrap();
            let hspc = &plan.params["hspc_configs"]["hspc"];
            (hspc["buffers"].clone(), hspc["buffer_bytes"].clone())
        };
        let json = |b: u64, bytes: u64| (serde_json::json!(b), serde_json::json!(bytes));
        assert_eq!(geometry("l1d:2(size=49152) core:1 pu:1"), json(2, 16 << 10));
        assert_eq!(geometry("l1d:2(size=32768) core:1 pu:1"), json(4, 8 << 10));
        // No cache in the topology: the 4 × 8 KiB of before.
        assert_eq!(geometry("core:2 pu:1"), json(4, 8 << 10));
    }

    #[test]
    fn placements_follow_the_machine() {
        let names = |spec: &str| {
            let (p, skipped) = placements(&plan_ctx(spec));
            (p.into_iter().map(|p| p.name).collect::<Vec<_>>(), skipped)
        };
        let (p, skipped) = names("core:2 pu:2");
        assert_eq!(p, ["same-core", "other-core"]);
        assert!(skipped.is_empty());
        let (p, skipped) = names("core:2 pu:1");
        assert_eq!(p, ["other-core"]);
        assert!(skipped[0].starts_with("same-core: skipped: no SMT"));
        let (p, skipped) = names("core:1 pu:1");
        assert_eq!(p, ["same-cpu"]);
        assert_eq!(skipped.len(), 2);
        // Every planned case names its placement; one CPU still gets every series.
        let plan = ChannelProbe.plan(&plan_ctx("core:1 pu:1")).unwrap();
        assert_eq!(plan.cases.len(), 2 * Impl::ALL.len() + Impl::ALL.len());
        assert!(plan.cases.iter().all(|c| c.label.ends_with("same-cpu")));
        // One CPU has no round trip to watch; a pair's every case watches its own.
        assert!(plan.cases.iter().all(|c| c.steady_pair.is_none()));
        let plan = ChannelProbe.plan(&plan_ctx("core:2 pu:2")).unwrap();
        for c in &plan.cases {
            let want = if c.label.ends_with("same-core") {
                (0, 1)
            } else {
                (0, 2)
            };
            assert_eq!(c.steady_pair, Some(want), "{}", c.label);
        }
    }
}
