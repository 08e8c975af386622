//! `MPI_Allreduce` (sum of f64) of 8 B … 1 MiB on every rank.
//!
//! Each rank times every call on its own clock. Per call, rank 0 keeps the
//! maximum over ranks (how long the collective held up the slowest rank) and the
//! mean over ranks (the seed's t̄1, "the average time one of the processors spends
//! in MPI_Allreduce()"). Warm-up calls run first; a barrier starts each size.

use crate::model::{Point, ProbeResult, Profile, Table};
use crate::stats;
use ::mpi::collective::SystemOperation;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use serde_json::json;
use std::time::Instant;

/// Run the Allreduce sweep on every rank; rank 0 adds results to `out`.
pub fn run(world: &SimpleCommunicator, profile: Profile, out: &mut ProbeResult) {
    let p = world.size() as usize;
    let sizes = super::allreduce_sizes();
    let max_elems = sizes.iter().copied().max().unwrap_or(8) / 8;
    let send = vec![1.0f64; max_elems];
    let mut recv = vec![0.0f64; max_elems];
    let mut rows = Vec::new();
    let mut t1_8b = None;
    for &bytes in &sizes {
        let n = bytes / 8;
        let (warm, reps) = super::allreduce_reps(profile, bytes);
        let mut local = Vec::with_capacity(reps);
        world.barrier();
        for k in 0..warm + reps {
            let t = Instant::now();
            world.all_reduce_into(&send[..n], &mut recv[..n], SystemOperation::sum());
            let dt = t.elapsed().as_nanos() as f64;
            if k >= warm {
                local.push(dt);
            }
        }
        debug_assert!(recv[..n].iter().all(|&v| v == p as f64));
        let mut max = vec![0.0f64; reps];
        let mut sum = vec![0.0f64; reps];
        world.all_reduce_into(&local[..], &mut max[..], SystemOperation::max());
        world.all_reduce_into(&local[..], &mut sum[..], SystemOperation::sum());
        if world.rank() != 0 {
            continue;
        }
        let mean_rank: Vec<f64> = sum.iter().map(|s| s / p as f64).collect();
        let s = stats::summary(&max);
        let t1 = stats::mean(&mean_rank);
        out.push_point(Point::new(
            "allreduce/max",
            "bytes",
            bytes as f64,
            "ns",
            s.p50,
        ));
        // Both curves are medians over calls (of the slowest rank's time, and of
        // the ranks' mean time), so they compare; t̄1 for B1 is the plain mean.
        out.push_point(Point::new(
            "allreduce/mean-rank",
            "bytes",
            bytes as f64,
            "ns",
            stats::summary(&mean_rank).p50,
        ));
        if bytes == 8 {
            out.distributions
                .push(stats::distribution("allreduce/max/8B", "ns", &max));
            t1_8b = Some(t1);
        }
        rows.push(vec![
            json!(bytes),
            json!(s.count),
            json!(s.mean),
            json!(s.p50),
            json!(s.p99),
            json!(s.stddev),
            json!(t1),
        ]);
    }
    if world.rank() != 0 {
        return;
    }
    out.tables.push(Table {
        name: "allreduce".into(),
        columns: [
            "bytes",
            "n",
            "max_mean_ns",
            "max_p50_ns",
            "max_p99_ns",
            "max_stddev_ns",
            "mean_rank_ns",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    if let Some(t1) = t1_8b {
        let b1 = super::b1_bytes_per_s(8.0, p, t1 * 1e-9);
        out.params.insert("allreduce_t1_8B_ns".into(), json!(t1));
        out.params
            .insert("allreduce_b1_bytes_per_s".into(), json!(b1));
        let b1_text = b1
            .map(|b| format!("B1 = 2·8·(p−1)/t̄1 = {:.0} KB/s", b / 1e3))
            .unwrap_or_else(|| "B1 needs at least 2 ranks".into());
        out.findings.push(format!(
            "8-byte MPI_Allreduce on {p} ranks: t̄1 = {:.2} µs per call (mean over ranks); \
             {b1_text} (seed 002 at p = 50: T3E-900 1100 KB/s, Origin2000 480 KB/s)",
            t1 / 1e3
        ));
    }
}
