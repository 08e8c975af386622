//! `corescope mpi`: message passing between processes, as in seed 002 §3.2–3.4.
//!
//! Three benchmarks run under `mpirun`; rank 0 gathers everything and writes one
//! run file (probe id `mpi`) with the same contract as `corescope run`:
//!
//! * `pingpong` — one-way latency (round trip / 2) and bandwidth of `MPI_Send`,
//!   `MPI_Ssend` and `MPI_Isend` + wait between ranks 0 and 1 (or every pair (0, r)).
//! * `allreduce` — `MPI_Allreduce` of 8 B … 1 MiB; each call's time is the maximum
//!   over ranks.
//! * `jacobi` — the 2-D decomposed Jacobi iteration of Figure 29: per rank time in
//!   compute, `MPI_Sendrecv` and the 8-byte `MPI_Allreduce`, and the seed's
//!   `B1 = 2·l·(p−1)/t̄1`.
//!
//! MPI itself is only linked with the cargo feature `mpi`. Without it the
//! subcommand still exists and says how to get it. The sizes, the Jacobi kernel and
//! the trace format below are pure and tested in every build.

pub mod jacobi;
pub mod launcher;

#[cfg(feature = "mpi")]
mod allreduce;
#[cfg(feature = "mpi")]
mod ctrl;
#[cfg(feature = "mpi")]
mod driver;
#[cfg(feature = "mpi")]
mod pingpong;

use crate::cli::MpiArgs;
use crate::model::{Profile, Timeline};

/// What `corescope mpi` says in a build without the `mpi` feature.
pub const NOT_BUILT: &str = "this corescope was built without MPI support.\n\
To measure MPI, install an MPI library and libclang, then rebuild with the feature:\n  \
apt-get install openmpi-bin libopenmpi-dev libclang-dev clang pkg-config\n  \
cargo install --path crates/corescope --features mpi   (from a checkout)\n\
and start it under mpirun, e.g. `mpirun -np 2 corescope mpi pingpong`\n\
(the README's install command builds it so: docs/mpi.md)";

/// Run `corescope mpi` (under `mpirun`).
#[cfg(feature = "mpi")]
pub fn main(a: MpiArgs) -> anyhow::Result<()> {
    launcher::require("mpi")?;
    driver::main(a)
}

/// Without the `mpi` feature: explain how to enable it and fail.
#[cfg(not(feature = "mpi"))]
pub fn main(_a: MpiArgs) -> anyhow::Result<()> {
    anyhow::bail!("{NOT_BUILT}")
}

/// Message sizes of the ping-pong: 0 B, then powers of two up to 64 KiB (quick)
/// or 4 MiB.
pub fn pingpong_sizes(profile: Profile) -> Vec<usize> {
    let top = profile.pick(16, 22, 22);
    std::iter::once(0)
        .chain((0..=top).map(|k| 1usize << k))
        .collect()
}

/// (warm-up, measured) round trips for one ping-pong size: as many as fit a byte
/// budget, within bounds (the seed's 10^5 samples for short messages in `--full`).
pub fn pingpong_reps(profile: Profile, bytes: usize) -> (usize, usize) {
    let (budget, lo, hi) = profile.pick(
        (4usize << 20, 20, 200),
        (256 << 20, 50, 2_000),
        (4 << 30, 100, 100_000),
    );
    let reps = (budget / bytes.max(1)).clamp(lo, hi);
    ((reps / 10).max(5), reps)
}

/// Allreduce sizes: 8 B … 1 MiB, powers of two (whole f64 elements).
pub fn allreduce_sizes() -> Vec<usize> {
    (3..=20).map(|k| 1usize << k).collect()
}

/// (warm-up, measured) calls for one Allreduce size.
pub fn allreduce_reps(profile: Profile, bytes: usize) -> (usize, usize) {
    let (budget, lo, hi) = profile.pick(
        (16usize << 20, 10, 100),
        (256 << 20, 20, 1_000),
        (4 << 30, 50, 100_000),
    );
    let reps = (budget / bytes.max(1)).clamp(lo, hi);
    ((reps / 10).max(3), reps)
}

/// Jacobi grid side and iterations of a profile (seed 002: NX = 1000).
pub fn jacobi_defaults(profile: Profile) -> (usize, usize) {
    profile.pick((64, 50), (1000, 200), (1000, 1000))
}

/// Seed 002's mean per-processor communication rate of an Allreduce:
/// `B1 = 2·l·(p−1) / t̄1` in bytes/s, for `l` bytes, `p` processes and a mean time
/// `t̄1` (seconds) spent in one call. `None` for one process or no time.
pub fn b1_bytes_per_s(l_bytes: f64, p: usize, t1_s: f64) -> Option<f64> {
    (p > 1 && t1_s > 0.0).then(|| 2.0 * l_bytes * (p as f64 - 1.0) / t1_s)
}

/// A timeline as Chrome trace-event JSON (what Perfetto and `chrome://tracing`
/// open): one complete event (`"ph": "X"`, times in µs) per span, thread = lane.
pub fn chrome_trace(tl: &Timeline) -> serde_json::Value {
    use serde_json::json;
    let mut events = vec![json!({
        "name": "process_name", "ph": "M", "pid": 0, "tid": 0,
        "args": {"name": format!("corescope {}", tl.name)}
    })];
    for (tid, lane) in tl.lanes.iter().enumerate() {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": 0, "tid": tid,
            "args": {"name": lane.label}
        }));
        for s in &lane.spans {
            events.push(json!({
                "name": s.kind, "cat": "mpi", "ph": "X",
                "ts": s.start_ns / 1e3, "dur": (s.end_ns - s.start_ns) / 1e3,
                "pid": 0, "tid": tid
            }));
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lane, Span};

    #[test]
    fn sizes() {
        let q = pingpong_sizes(Profile::Quick);
        assert_eq!(q.first(), Some(&0));
        assert_eq!(q.last(), Some(&(64 << 10)));
        assert_eq!(q.len(), 18);
        let d = pingpong_sizes(Profile::Default);
        assert_eq!(d.last(), Some(&(4 << 20)));
        assert_eq!(d.len(), 24);
        let a = allreduce_sizes();
        assert_eq!((a[0], *a.last().unwrap()), (8, 1 << 20));
        for p in [Profile::Quick, Profile::Default, Profile::Full] {
            for &b in &d {
                let (w, r) = pingpong_reps(p, b);
                assert!(w >= 5 && r >= 20, "{p:?} {b}");
            }
        }
        assert_eq!(pingpong_reps(Profile::Full, 8).1, 100_000);
    }

    #[test]
    fn b1_matches_the_seed() {
        // T3E-900: l = 8 B, p = 50, t̄1 = 686 µs → about 1100 KB/s (seed 002 §3.4).
        let b1 = b1_bytes_per_s(8.0, 50, 686e-6).unwrap();
        assert!((b1 / 1e3 - 1143.0).abs() < 1.0, "{b1}");
        assert!(b1_bytes_per_s(8.0, 1, 1e-6).is_none());
    }

    #[test]
    fn trace_events() {
        let tl = Timeline {
            name: "jacobi".into(),
            lanes: vec![Lane {
                label: "rank 0".into(),
                spans: vec![Span {
                    start_ns: 1000.0,
                    end_ns: 3500.0,
                    kind: "compute".into(),
                }],
            }],
        };
        let v = chrome_trace(&tl);
        let ev = v["traceEvents"].as_array().unwrap();
        let x: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x.len(), 1);
        assert_eq!(x[0]["ts"], 1.0);
        assert_eq!(x[0]["dur"], 2.5);
        assert_eq!(x[0]["name"], "compute");
        assert_eq!(x[0]["tid"], 0);
    }
}
