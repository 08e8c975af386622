//! The MPI side of `corescope mpi`: initialise MPI, agree on options, run the
//! benchmarks on every rank, gather on rank 0 and write one run file there.

use super::ctrl::{wait_ctrl, TAG_CTRL};
use super::jacobi::{self, Decomposition, GridTooSmall, SPAN_KINDS};
use super::{allreduce, pingpong};
use crate::cli::{MpiArgs, MpiBench, MpiPairs};
use crate::model::{Lane, Point, ProbeResult, Profile, Span, Status, Table, Timeline, Warning};
use crate::render::terminal;
use crate::session::{self, default_out_name, hostname_for_file, Session};
use crate::{store, topology};
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// Iterations of each rank kept in the run file's Jacobi timeline (the trace file
/// gets them all).
const TIMELINE_ITERATIONS: usize = 20;

/// Facts each rank reports about itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RankInfo {
    rank: usize,
    hostname: String,
    /// CPUs online on the host.
    online_cpus: usize,
    /// CPUs this process may run on (mpirun binds ranks to cores by default).
    allowed: Vec<u32>,
    pid: u32,
}

/// Gather one serialisable value per rank on rank 0 (in rank order); `None` elsewhere.
fn gather<T: Serialize + DeserializeOwned + Clone>(
    world: &SimpleCommunicator,
    mine: &T,
) -> Result<Option<Vec<T>>> {
    if world.rank() != 0 {
        let bytes = serde_json::to_vec(mine)?;
        world.process_at_rank(0).send(&bytes[..]);
        return Ok(None);
    }
    let mut all = vec![mine.clone()];
    for r in 1..world.size() {
        let (bytes, _) = world.process_at_rank(r).receive_vec::<u8>();
        all.push(serde_json::from_slice(&bytes).with_context(|| format!("data of rank {r}"))?);
    }
    Ok(Some(all))
}

/// Options every rank derives from the same command line.
struct Plan {
    profile: Profile,
    bench: MpiBench,
    pairs: MpiPairs,
    nx: usize,
    iterations: usize,
    out: PathBuf,
    trace: Option<PathBuf>,
}

fn plan(a: &MpiArgs) -> Result<Plan> {
    let profile = Profile::from_flags(a.quick, a.full);
    let (nx0, it0) = super::jacobi_defaults(profile);
    let nx = a.nx.unwrap_or(nx0);
    let iterations = a.iterations.unwrap_or(it0);
    if nx == 0 || iterations == 0 {
        bail!("--nx and --iterations must be at least 1");
    }
    let out = match &a.out {
        Some(p) => p.clone(),
        None => PathBuf::from(default_out_name(&hostname_for_file()).replace(".json", "-mpi.json")),
    };
    Ok(Plan {
        profile,
        bench: a.bench,
        pairs: a.pairs,
        nx,
        iterations,
        out,
        trace: a.trace.clone(),
    })
}

/// Entry point of `corescope mpi` with MPI compiled in.
pub fn main(a: MpiArgs) -> Result<()> {
    let universe = ::mpi::initialize().ok_or_else(|| anyhow!("MPI was already initialised"))?;
    let world = universe.world();
    let result = run(&world, &a);
    match result {
        Err(e) if e.is::<Rejected>() => {
            // Every rank knows the options are bad: finish MPI normally; only rank 0
            // says why, the others just exit with failure.
            let rank = world.rank();
            drop(world);
            drop(universe);
            if rank != 0 {
                std::process::exit(1);
            }
            Err(e)
        }
        Err(e) if world.size() > 1 => {
            // Other ranks may wait in a collective forever: take the job down.
            eprintln!("corescope: error on rank {}: {e:#}", world.rank());
            world.abort(1)
        }
        r => r,
    }
}

/// Options every rank knows to be bad; the message is rank 0's.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Rejected(String);

/// What rank 0 found wrong with the options.
#[derive(Debug, thiserror::Error)]
enum RankZeroCheck {
    /// `--out` cannot be written.
    #[error("--out: {0}")]
    Out(#[source] store::Unwritable),
    /// `--trace` cannot be written.
    #[error("--trace: {0}")]
    Trace(#[source] store::Unwritable),
    /// The process grid does not fit `--nx`.
    #[error(transparent)]
    Grid(#[from] GridTooSmall),
    /// pingpong without a partner.
    #[error("pingpong needs at least 2 ranks: mpirun -np 2 corescope mpi pingpong")]
    Alone,
}

/// What only rank 0 can check: its files can be written, the process grid fits,
/// pingpong has a partner.
fn check_on_rank_zero(plan: &Plan, size: usize) -> Result<(), RankZeroCheck> {
    store::check_writable(&plan.out).map_err(RankZeroCheck::Out)?;
    if let Some(t) = &plan.trace {
        store::check_writable(t).map_err(RankZeroCheck::Trace)?;
    }
    if matches!(plan.bench, MpiBench::Jacobi | MpiBench::All) {
        Decomposition::new(plan.nx, size, 0)?;
    }
    if plan.bench == MpiBench::Pingpong && size < 2 {
        return Err(RankZeroCheck::Alone);
    }
    Ok(())
}

/// Run the benchmarks the plan asks for on every rank; returns how many were planned
/// (`probe.cases_done` counts those that ran).
fn run_benchmarks(
    world: &SimpleCommunicator,
    plan: &Plan,
    hosts: &[String],
    probe: &mut ProbeResult,
) -> Result<usize> {
    let (rank, size) = (world.rank(), world.size() as usize);
    let mut planned = 0;
    let wants = |b: MpiBench| plan.bench == b || plan.bench == MpiBench::All;

    if wants(MpiBench::Pingpong) {
        planned += 1;
        if size >= 2 {
            let partners: Vec<i32> = match plan.pairs {
                MpiPairs::First => vec![1],
                MpiPairs::All => (1..world.size()).collect(),
            };
            if rank == 0 {
                eprintln!(
                    "corescope mpi: pingpong 0 <-> {} (MPI_Send, MPI_Ssend, MPI_Isend)",
                    partners
                        .iter()
                        .map(i32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            pingpong::run(world, plan.profile, &partners, hosts, probe);
            probe.cases_done += 1;
        } else if rank == 0 {
            probe.warnings.push(Warning::TooFewRanks {
                bench: "pingpong".into(),
                ranks: size,
                needed: 2,
            });
        }
    }
    if wants(MpiBench::Allreduce) {
        planned += 1;
        if rank == 0 {
            eprintln!("corescope mpi: allreduce 8 B .. 1 MiB on {size} ranks");
        }
        allreduce::run(world, plan.profile, probe);
        probe.cases_done += 1;
    }
    if wants(MpiBench::Jacobi) {
        planned += 1;
        jacobi_bench(world, plan, hosts, probe)?;
        probe.cases_done += 1;
    }
    Ok(planned)
}

fn run(world: &SimpleCommunicator, a: &MpiArgs) -> Result<()> {
    let rank = world.rank();
    let size = world.size() as usize;
    // Every rank checks the options (they are the same everywhere); rank 0 also
    // checks that its files can be written, and tells the others.
    let plan = plan(a).map_err(|e| Rejected(format!("{e:#}")))?;
    let mut ok = 1u8;
    let mut problem = None;
    if rank == 0 {
        if let Err(e) = check_on_rank_zero(&plan, size) {
            ok = 0;
            problem = Some(e.to_string());
        }
    }
    world.process_at_rank(0).broadcast_into(&mut ok);
    if ok == 0 {
        return Err(Rejected(problem.unwrap_or_default()).into());
    }

    let me = RankInfo {
        rank: rank as usize,
        hostname: ::mpi::environment::processor_name()
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| topology::host::host_info().hostname),
        // SAFETY: sysconf only reads a system constant.
        online_cpus: usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) })
            .unwrap_or(1)
            .max(1),
        allowed: crate::affinity::allowed_current().unwrap_or_default(),
        pid: std::process::id(),
    };
    let infos = gather(world, &me)?;

    // Rank 0 describes the machine while the others sleep.
    let mut head = None;
    if rank == 0 {
        let topo = topology::detect().context("could not read this machine's topology")?;
        let clock = session::calibrated_clock(plan.profile, &topo, false);
        let header = session::header(topo, &clock, plan.profile);
        head = Some(
            Session::open(&plan.out, header)
                .with_context(|| format!("saving {}", plan.out.display()))?,
        );
        for r in 1..world.size() {
            world.process_at_rank(r).send_with_tag(&[1u8][..], TAG_CTRL);
        }
    } else {
        wait_ctrl(&world.process_at_rank(0));
    }

    let start = Instant::now();
    let mut probe = ProbeResult::new(
        "mpi",
        "MPI ping-pong, Allreduce and Jacobi halo exchange",
        Status::Completed,
    );
    let hosts: Vec<String> = infos
        .as_ref()
        .map(|v| v.iter().map(|i| i.hostname.clone()).collect())
        .unwrap_or_default();
    let planned = run_benchmarks(world, &plan, &hosts, &mut probe)?;

    let Some(mut session) = head else {
        return Ok(());
    };
    let infos = infos.unwrap_or_default();
    probe.cases_planned = planned;
    probe.elapsed_s = start.elapsed().as_secs_f64();
    describe_ranks(&infos, &plan, &mut probe);
    if probe.cases_done < planned {
        probe.reason = Some("some benchmarks could not run; see the warnings".into());
    }
    session
        .push(probe)
        .with_context(|| format!("saving {}", plan.out.display()))?;
    let run = &session.run;
    let mut so = std::io::stdout().lock();
    write!(so, "{}", terminal::header(run))?;
    write!(so, "\n{}", terminal::render_probe(&run.probes[0]))?;
    writeln!(so, "\nrun file: {}", plan.out.display())?;
    if let Some(t) = &plan.trace {
        writeln!(
            so,
            "trace: {} (open in https://ui.perfetto.dev)",
            t.display()
        )?;
    }
    Ok(())
}

/// Host list, ranks per host, oversubscription warnings, parameters.
fn describe_ranks(infos: &[RankInfo], plan: &Plan, probe: &mut ProbeResult) {
    let hosts: Vec<&str> = infos.iter().map(|i| i.hostname.as_str()).collect();
    let mut per_host: Vec<(&str, usize, usize)> = Vec::new();
    for i in infos {
        match per_host.iter_mut().find(|h| h.0 == i.hostname) {
            Some(h) => {
                h.1 += 1;
                h.2 = h.2.max(i.online_cpus);
            }
            None => per_host.push((&i.hostname, 1, i.online_cpus)),
        }
    }
    for &(h, n, cpus) in &per_host {
        if n > cpus {
            probe.warnings.push(crate::model::Warning::Oversubscribed {
                host: h.into(),
                ranks: n,
                cpus,
            });
        }
    }
    probe.findings.as_mut_vec().insert(
        0,
        crate::model::Finding::from(if per_host.len() == 1 {
            format!(
                "{} ranks on one host ({}): messages go through shared memory, not a network",
                infos.len(),
                per_host[0].0
            )
        } else {
            format!(
                "{} ranks on {} hosts ({})",
                infos.len(),
                per_host.len(),
                per_host
                    .iter()
                    .map(|(h, n, _)| format!("{h}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }),
    );
    probe.tables.push(Table {
        name: "ranks".into(),
        columns: ["rank", "host", "pid", "allowed_cpus"]
            .map(String::from)
            .to_vec(),
        rows: infos
            .iter()
            .map(|i| {
                let cpus: Vec<String> = i.allowed.iter().map(u32::to_string).collect();
                vec![
                    json!(i.rank),
                    json!(i.hostname),
                    json!(i.pid),
                    json!(cpus.join(",")),
                ]
            })
            .collect(),
    });
    let p = &mut probe.params;
    p.insert("ranks".into(), json!(infos.len()));
    p.insert("hosts".into(), json!(hosts));
    let name = |v: Option<clap::builder::PossibleValue>| v.map(|v| v.get_name().to_owned());
    p.insert("bench".into(), json!(name(plan.bench.to_possible_value())));
    if matches!(plan.bench, MpiBench::Pingpong | MpiBench::All) {
        let sizes = super::pingpong_sizes(plan.profile);
        let reps: Vec<usize> = sizes
            .iter()
            .map(|&b| super::pingpong_reps(plan.profile, b).1)
            .collect();
        p.insert("pingpong_sizes_bytes".into(), json!(sizes));
        p.insert("pingpong_reps".into(), json!(reps));
        p.insert(
            "pingpong_pairs".into(),
            json!(name(plan.pairs.to_possible_value())),
        );
    }
    if matches!(plan.bench, MpiBench::Allreduce | MpiBench::All) {
        let sizes = super::allreduce_sizes();
        let reps: Vec<usize> = sizes
            .iter()
            .map(|&b| super::allreduce_reps(plan.profile, b).1)
            .collect();
        p.insert("allreduce_sizes_bytes".into(), json!(sizes));
        p.insert("allreduce_reps".into(), json!(reps));
    }
    let (major, minor) = ::mpi::environment::version();
    p.insert("mpi_version".into(), json!(format!("{major}.{minor}")));
    if let Ok(lib) = ::mpi::environment::library_version() {
        let first = lib
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches('\0');
        p.insert("mpi_library".into(), json!(first));
    }
}

fn jacobi_bench(
    world: &SimpleCommunicator,
    plan: &Plan,
    hosts: &[String],
    probe: &mut ProbeResult,
) -> Result<()> {
    let p = world.size() as usize;
    let dec = Decomposition::new(plan.nx, p, world.rank() as usize).map_err(|e| anyhow!(e))?;
    if dec.rank == 0 {
        eprintln!(
            "corescope mpi: jacobi NX={} on {}x{} ranks, {} iterations",
            plan.nx, dec.prow, dec.pcol, plan.iterations
        );
    }
    // The first iterations fault pages in and fill caches; they are in the
    // timeline but not in the sums.
    let skip = (plan.iterations / 10).min(5);
    let (times, residuals) = jacobi::run_mpi(world, &dec, plan.iterations, skip);
    let Some(all) = gather(world, &times)? else {
        return Ok(());
    };

    // The single-process reference, when it is cheap enough (not timed).
    let work = (plan.nx as f64).powi(2) * plan.iterations as f64;
    let reference = (work <= 2e9).then(|| jacobi::reference(plan.nx, plan.iterations));
    for (name, values) in [
        ("residual/mpi", Some(&residuals)),
        ("residual/reference", reference.as_ref()),
    ] {
        for (i, r) in values.into_iter().flatten().enumerate() {
            probe.push_point(Point::new(
                name,
                "iteration",
                (i + 1) as f64,
                "residual",
                *r,
            ));
        }
    }
    let shares = rank_table(&all, hosts, probe);
    let calls: usize = all.iter().map(|t| t.counted).sum();
    let t1_sum: f64 = all.iter().map(|t| t.allreduce_s).sum();
    let t1 = if calls > 0 {
        t1_sum / calls as f64
    } else {
        0.0
    };
    let b1 = super::b1_bytes_per_s(8.0, p, t1);
    let final_res = residuals.last().copied().unwrap_or(f64::NAN);
    let ref_final = reference.as_ref().and_then(|r| r.last().copied());
    let pr = &mut probe.params;
    pr.insert("jacobi_nx".into(), json!(plan.nx));
    pr.insert("jacobi_iterations".into(), json!(plan.iterations));
    pr.insert("jacobi_process_grid".into(), json!([dec.prow, dec.pcol]));
    pr.insert("jacobi_timing_skips_iterations".into(), json!(skip));
    pr.insert("jacobi_final_residual".into(), json!(final_res));
    pr.insert("jacobi_reference_final_residual".into(), json!(ref_final));
    pr.insert("jacobi_t1_allreduce_s".into(), json!(t1));
    pr.insert("jacobi_b1_bytes_per_s".into(), json!(b1));
    pr.insert(
        "jacobi_timeline_iterations".into(),
        json!(TIMELINE_ITERATIONS.min(plan.iterations)),
    );
    probe.findings.push(format!(
        "Jacobi NX={} on {p} ranks ({}×{}), {} iterations: final residual {final_res:.6e}{}",
        plan.nx,
        dec.prow,
        dec.pcol,
        plan.iterations,
        match ref_final {
            Some(r) => format!(
                " (single process: {r:.6e}, difference {:.1e})",
                (final_res - r).abs()
            ),
            None => String::new(),
        }
    ));
    probe.findings.push(time_split(&all, &shares));
    probe.findings.push(match b1 {
        Some(b) => format!(
            "Jacobi's 8-byte MPI_Allreduce: t̄1 = {:.2} µs per call, B1 = 2·8·(p−1)/t̄1 = {:.0} KB/s \
             (seed 002 at p = 50: T3E-900 686 µs → 1100 KB/s, Origin2000 1590 µs → 480 KB/s)",
            t1 * 1e6,
            b / 1e3
        ),
        None => format!(
            "Jacobi's 8-byte MPI_Allreduce: t̄1 = {:.2} µs (B1 needs 2+ ranks)",
            t1 * 1e6
        ),
    });
    jacobi_timelines(&all, hosts, plan, probe)
}

/// One row per rank (its compute, MPI_Sendrecv and MPI_Allreduce seconds and the
/// communication share) and the share as points; returns the shares.
fn rank_table(all: &[jacobi::RankTimes], hosts: &[String], probe: &mut ProbeResult) -> Vec<f64> {
    let mut rows = Vec::new();
    let mut shares = Vec::new();
    for t in all {
        let total = t.compute_s + t.sendrecv_s + t.allreduce_s;
        let share = if total > 0.0 {
            (t.sendrecv_s + t.allreduce_s) / total
        } else {
            0.0
        };
        shares.push(share);
        probe.push_point(Point::new(
            "jacobi-comm-share/rank",
            "rank",
            t.rank as f64,
            "fraction",
            share,
        ));
        rows.push(vec![
            json!(t.rank),
            json!(hosts.get(t.rank).cloned().unwrap_or_default()),
            json!(t.compute_s),
            json!(t.sendrecv_s),
            json!(t.allreduce_s),
            json!(share),
        ]);
    }
    probe.tables.push(Table {
        name: "jacobi".into(),
        columns: [
            "rank",
            "host",
            "compute_s",
            "sendrecv_s",
            "allreduce_s",
            "comm_share",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    shares
}

/// How the ranks' time splits between computing and communicating, in words.
fn time_split(all: &[jacobi::RankTimes], shares: &[f64]) -> String {
    let mean_share = crate::stats::mean(shares);
    let (sum_c, sum_s, sum_a) = all.iter().fold((0.0, 0.0, 0.0), |acc, t| {
        (
            acc.0 + t.compute_s,
            acc.1 + t.sendrecv_s,
            acc.2 + t.allreduce_s,
        )
    });
    let tot = (sum_c + sum_s + sum_a).max(f64::MIN_POSITIVE);
    format!(
        "Jacobi time: {:.0} % communication on average per rank (MPI_Sendrecv {:.0} %, \
         MPI_Allreduce {:.0} %), compute {:.0} %; most communication-bound rank {:.0} %",
        mean_share * 100.0,
        sum_s / tot * 100.0,
        sum_a / tot * 100.0,
        sum_c / tot * 100.0,
        shares.iter().copied().fold(0.0, f64::max) * 100.0
    )
}

/// The timeline of the last iterations into the run file, of all of them into the
/// trace file when one was asked for.
fn jacobi_timelines(
    all: &[jacobi::RankTimes],
    hosts: &[String],
    plan: &Plan,
    probe: &mut ProbeResult,
) -> Result<()> {
    let lanes = |keep: usize| -> Vec<Lane> {
        all.iter()
            .map(|t| {
                let n = t.spans.len();
                let from = n.saturating_sub(keep * SPAN_KINDS.len());
                Lane {
                    label: format!(
                        "rank {} @ {}",
                        t.rank,
                        hosts.get(t.rank).map_or("?", |h| h.as_str())
                    ),
                    spans: t.spans[from..]
                        .iter()
                        .map(|&(s, e, k)| Span {
                            start_ns: s,
                            end_ns: e,
                            kind: SPAN_KINDS[k as usize].into(),
                        })
                        .collect(),
                }
            })
            .collect()
    };
    probe.timelines.push(Timeline {
        name: "jacobi".into(),
        lanes: lanes(TIMELINE_ITERATIONS),
    });
    if let Some(path) = &plan.trace {
        let tl = Timeline {
            name: "jacobi".into(),
            lanes: lanes(plan.iterations),
        };
        let bytes = serde_json::to_vec(&super::chrome_trace(&tl))?;
        store::write_output(path, &bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
