//! `corescope fleet run` under `srun` / `mpirun`: every rank measures its node
//! (`node.rs`), rank 0 gathers the run files over MPI (no shared file system
//! needed), writes each node's run file into a directory and the fleet file beside
//! it, and prints the report (or the check lines). One run file is held on rank 0
//! at a time: each is written, reduced to its figures and dropped.

use super::{cmd, figures, node, report};
use crate::cli::FleetRunArgs;
use crate::store;
use ::mpi::traits::*;
use anyhow::{anyhow, Context, Result};

/// Tag of the "your turn" token of `--serial`.
const TAG_TURN: ::mpi::Tag = 78;
/// Tag of a run file sent to rank 0.
const TAG_RUN: ::mpi::Tag = 79;
/// How long a waiting rank sleeps between probes for its message.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(2);

/// Wait for a message with `tag` from `from` by probing and sleeping: a blocking
/// receive spins in most MPI libraries, and a spinning rank would take a CPU from
/// the rank that measures when ranks share a machine.
fn wait_for(from: &::mpi::topology::Process<'_>, tag: ::mpi::Tag) {
    while from.immediate_probe_with_tag(tag).is_none() {
        std::thread::sleep(WAIT_POLL);
    }
}

/// Run `fleet run` on this rank.
pub fn main(a: FleetRunArgs) -> Result<()> {
    let universe = ::mpi::initialize().ok_or_else(|| anyhow!("MPI was already initialised"))?;
    let world = universe.world();
    match run(&world, &a) {
        Err(e) if world.size() > 1 => {
            // Other ranks may wait for this one forever: take the job down.
            eprintln!("corescope: error on rank {}: {e:#}", world.rank());
            world.abort(1)
        }
        r => r,
    }
}

/// This rank's run file, named and (in tests) handicapped.
fn measure_here(a: &FleetRunArgs, rank: usize) -> Result<Vec<u8>> {
    let tmp = tempfile::tempdir().context("a temporary directory for this node's run")?;
    let path = tmp.path().join("node.json");
    let bytes = node::measure(&a.probes, &path)?;
    let text = String::from_utf8(bytes).context("the run file is not UTF-8")?;
    let mut run = store::parse(&text, &path)?;
    let name = std::env::var(node::NAME_ENV).ok();
    let handicap = std::env::var(node::HANDICAP_ENV).ok();
    node::test_overrides(&mut run, rank, name.as_deref(), handicap.as_deref())?;
    Ok(serde_json::to_vec(&run)?)
}

fn run(world: &::mpi::topology::SimpleCommunicator, a: &FleetRunArgs) -> Result<()> {
    let (rank, size) = (world.rank(), world.size());
    let page = a.html.then(|| cmd::page_path_for(&a.out));
    if rank == 0 {
        if let Some(p) = &page {
            store::refuse_aliases(&[], &[("--out", &a.out), ("the fleet page", p)])?;
            store::check_writable(p).map_err(|e| anyhow!("the fleet page: {e}"))?;
        }
    }
    if a.serial && rank > 0 {
        let mut b = [0u8];
        let before = world.process_at_rank(rank - 1);
        wait_for(&before, TAG_TURN);
        before.receive_into_with_tag(&mut b[..], TAG_TURN);
    }
    let mine = measure_here(a, rank as usize)?;
    if a.serial && rank + 1 < size {
        world
            .process_at_rank(rank + 1)
            .send_with_tag(&[1u8][..], TAG_TURN);
    }
    if rank != 0 {
        world.process_at_rank(0).send_with_tag(&mine[..], TAG_RUN);
        return Ok(());
    }
    std::fs::create_dir_all(&a.dir).with_context(|| format!("making {}", a.dir.display()))?;
    let mut t = figures::Table::default();
    let mut keep = |bytes: Vec<u8>, r: i32| -> Result<()> {
        let text = String::from_utf8(bytes).with_context(|| format!("rank {r}'s run file"))?;
        let run = store::parse(&text, std::path::Path::new(&format!("rank {r}")))?;
        let path = a
            .dir
            .join(format!("{}.json", store_name(&run.host.hostname, r)));
        store::write_output(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        t.add(&run, Some(path.display().to_string()));
        Ok(())
    };
    keep(mine, 0)?;
    for r in 1..size {
        let from = world.process_at_rank(r);
        wait_for(&from, TAG_RUN);
        let (bytes, _) = from.receive_vec_with_tag::<u8>(TAG_RUN);
        keep(bytes, r)?;
    }
    let fleet = cmd::from_table(t);
    cmd::save(&fleet, &a.out)?;
    if let Some(p) = &page {
        cmd::save_page(&fleet, p)?;
    }
    eprintln!(
        "fleet: {} nodes gathered: {} (run files in {})",
        fleet.nodes.len(),
        a.out.display(),
        a.dir.display()
    );
    if a.check {
        return cmd::print_check(&fleet, None);
    }
    cmd::print(&report::render(&fleet))
}

/// A file name for a node's run file: its name with anything but letters, digits,
/// `-`, `_` and `.` replaced, and its rank (two ranks may share a host name).
fn store_name(host: &str, rank: i32) -> String {
    let clean: String = host
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{clean}-rank{rank}")
}
