//! Ping-pong between rank 0 and a partner: `MPI_Send`, `MPI_Ssend` and
//! `MPI_Isend` + `MPI_Wait`, each answered the same way (seed 002 §3.2).
//!
//! Every round trip is timed on rank 0 on its own; one-way latency is half of it.
//! Warm-up round trips run first and are dropped. Ranks that are not in the
//! current pair sleep (polling for a control message every 200 µs) instead of
//! spinning in MPI, so on a node with few CPUs they do not steal the pair's time.

use super::ctrl::{wait_ctrl, TAG_CTRL};
use crate::model::{Point, ProbeResult, Profile, Summary};
use crate::stats;
use ::mpi::topology::{Process, SimpleCommunicator};
use ::mpi::traits::*;
use serde_json::json;
use std::time::Instant;

/// How the ping and the pong are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `MPI_Send` (the library picks eager or rendezvous by size).
    Send,
    /// `MPI_Ssend`: completes only once the receive has started.
    Ssend,
    /// `MPI_Isend` followed at once by `MPI_Wait`.
    Isend,
}

impl Mode {
    /// All modes, in measuring order.
    pub const ALL: [Mode; 3] = [Mode::Send, Mode::Ssend, Mode::Isend];

    /// Name used in series (`latency/ssend`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Send => "send",
            Mode::Ssend => "ssend",
            Mode::Isend => "isend",
        }
    }

    /// The MPI call (`MPI_Ssend`).
    pub fn mpi_name(self) -> &'static str {
        match self {
            Mode::Send => "MPI_Send",
            Mode::Ssend => "MPI_Ssend",
            Mode::Isend => "MPI_Isend",
        }
    }

    fn send(self, to: &Process<'_>, buf: &[u8]) {
        match self {
            Mode::Send => to.send(buf),
            Mode::Ssend => to.synchronous_send(buf),
            Mode::Isend => ::mpi::request::scope(|scope| {
                to.immediate_send(scope, buf).wait();
            }),
        }
    }
}

/// Which pairs were measured and how; filled on rank 0.
struct PairResult {
    partner: i32,
    mode: Mode,
    bytes: usize,
    /// One-way latencies in ns.
    samples: Vec<f64>,
}

/// Run the ping-pong on every rank; rank 0 adds its results to `out`.
/// `partners` are the ranks paired with 0, one after the other.
pub fn run(
    world: &SimpleCommunicator,
    profile: Profile,
    partners: &[i32],
    hosts: &[String],
    out: &mut ProbeResult,
) {
    let sizes = super::pingpong_sizes(profile);
    let max = sizes.iter().copied().max().unwrap_or(0);
    let sbuf = vec![0xa5u8; max];
    let mut rbuf = vec![0u8; max];
    let rank = world.rank();
    if rank != 0 {
        let zero = world.process_at_rank(0);
        // Pong whenever rank 0 says so; stop at a 0.
        while wait_ctrl(&zero) != 0 {
            for mode in Mode::ALL {
                for &n in &sizes {
                    let (warm, reps) = super::pingpong_reps(profile, n);
                    for _ in 0..warm + reps {
                        zero.receive_into(&mut rbuf[..n]);
                        mode.send(&zero, &sbuf[..n]);
                    }
                }
            }
        }
        return;
    }

    let mut results = Vec::new();
    for &r in partners {
        let partner = world.process_at_rank(r);
        partner.send_with_tag(&[1u8][..], TAG_CTRL);
        for mode in Mode::ALL {
            for &n in &sizes {
                let (warm, reps) = super::pingpong_reps(profile, n);
                let mut samples = Vec::with_capacity(reps);
                for k in 0..warm + reps {
                    let t = Instant::now();
                    mode.send(&partner, &sbuf[..n]);
                    partner.receive_into(&mut rbuf[..n]);
                    let rtt = t.elapsed().as_nanos() as f64;
                    if k >= warm {
                        samples.push(rtt / 2.0);
                    }
                }
                results.push(PairResult {
                    partner: r,
                    mode,
                    bytes: n,
                    samples,
                });
            }
        }
    }
    for r in 1..world.size() {
        world.process_at_rank(r).send_with_tag(&[0u8][..], TAG_CTRL);
    }
    record(&results, partners, hosts, out);
}

/// Turn raw samples into series, distributions, a table and findings.
fn record(results: &[PairResult], partners: &[i32], hosts: &[String], out: &mut ProbeResult) {
    let first = partners.first().copied().unwrap_or(1);
    let largest = results.iter().map(|r| r.bytes).max().unwrap_or(0);
    let summaries: Vec<Summary> = results.iter().map(|r| stats::summary(&r.samples)).collect();
    let mut rows = Vec::new();
    for (pr, s) in results.iter().zip(&summaries) {
        let bw = (pr.bytes > 0 && s.p50 > 0.0).then(|| pr.bytes as f64 / (s.p50 * 1e-9));
        let m = pr.mode.name();
        if pr.partner == first {
            out.push_point(Point::new(
                format!("latency/{m}"),
                "bytes",
                pr.bytes as f64,
                "ns",
                s.p50,
            ));
            if let Some(bw) = bw {
                out.push_point(Point::new(
                    format!("bandwidth/{m}"),
                    "bytes",
                    pr.bytes as f64,
                    "bytes_per_s",
                    bw,
                ));
            }
            if pr.bytes == 8 {
                out.distributions.push(stats::distribution(
                    format!("pingpong/{m}/8B"),
                    "ns",
                    &pr.samples,
                ));
            }
        }
        if partners.len() > 1 {
            if pr.bytes == 8 {
                out.push_point(Point::new(
                    format!("latency-8B-by-rank/{m}"),
                    "rank",
                    f64::from(pr.partner),
                    "ns",
                    s.p50,
                ));
            }
            if pr.bytes == largest {
                if let Some(bw) = bw {
                    out.push_point(Point::new(
                        format!("bandwidth-largest-by-rank/{m}"),
                        "rank",
                        f64::from(pr.partner),
                        "bytes_per_s",
                        bw,
                    ));
                }
            }
        }
        let host = hosts.get(pr.partner as usize).cloned().unwrap_or_default();
        rows.push(vec![
            json!(format!("0-{}", pr.partner)),
            json!(host),
            json!(m),
            json!(pr.bytes),
            json!(s.count),
            json!(s.mean),
            json!(s.p50),
            json!(s.p99),
            json!(s.stddev),
            json!(bw),
        ]);
    }
    out.tables.push(crate::model::Table {
        name: "pingpong".into(),
        columns: [
            "pair",
            "partner_host",
            "mode",
            "bytes",
            "n",
            "mean_ns",
            "p50_ns",
            "p99_ns",
            "stddev_ns",
            "bandwidth_bytes_per_s",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    findings(results, &summaries, first, out);
}

fn findings(results: &[PairResult], summaries: &[Summary], first: i32, out: &mut ProbeResult) {
    let of_first = |mode: Mode| {
        results
            .iter()
            .zip(summaries)
            .filter(move |(r, _)| r.partner == first && r.mode == mode)
    };
    let p50 = |mode: Mode, bytes: usize| {
        of_first(mode)
            .find(|(r, _)| r.bytes == bytes)
            .map(|(_, s)| s.p50)
    };
    if let (Some(send), Some(ssend), Some(isend)) =
        (p50(Mode::Send, 8), p50(Mode::Ssend, 8), p50(Mode::Isend, 8))
    {
        out.findings.push(format!(
            "8-byte one-way latency 0 <-> {first} (median): MPI_Send {send:.0} ns, \
             MPI_Ssend {ssend:.0} ns ({:+.0} %), MPI_Isend+Wait {isend:.0} ns",
            (ssend / send - 1.0) * 100.0
        ));
    }
    for mode in Mode::ALL {
        let best = of_first(mode)
            .filter(|(r, s)| r.bytes > 0 && s.p50 > 0.0)
            .map(|(r, s)| (r.bytes, r.bytes as f64 / (s.p50 * 1e-9)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((bytes, bw)) = best {
            out.findings.push(format!(
                "{} peaks at {:.2} GB/s with {} messages",
                mode.mpi_name(),
                bw / 1e9,
                crate::units::fmt_value("bytes", bytes as f64)
            ));
        }
    }
}
