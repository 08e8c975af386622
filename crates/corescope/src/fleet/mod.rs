//! Fleet mode: many nodes' run files side by side, judged against each other
//! (docs/fleet.md).
//!
//! - `stats.rs`: one figure's fleet median, robust spread and each node's place
//!   in it (pure);
//! - `figures.rs`: run files → nodes and one table of figures (pure);
//! - `analyse.rs`: nodes grouped by model, every figure's spread and outliers (pure);
//! - `file.rs`: the fleet file's serde types, version and parse;
//! - `report.rs`: the report and the check lines in words (pure);
//! - `html.rs`: the fleet page, a node × probe heat map and the outliers' tables
//!   (a renderer);
//! - `cost.rs`: a fleet run's bytes and seconds before it starts (`plan --fleet`);
//! - `cmd.rs`: `corescope fleet merge | report`, the room's file I/O;
//! - `node.rs`: one node's measurement for `fleet run` and its test-only switches;
//! - `gather.rs` (feature `mpi`): `fleet run`, rank 0 gathering the run files.

pub mod analyse;
pub mod cmd;
pub mod cost;
pub mod figures;
pub mod file;
#[cfg(feature = "mpi")]
mod gather;
pub mod html;
pub mod node;
pub mod report;
pub mod stats;

pub use cmd::{BadNodes, EXIT_BAD_NODES};

use crate::cli::{FleetArgs, FleetCmd};

/// Run a `fleet` subcommand.
pub fn main(a: FleetArgs) -> anyhow::Result<()> {
    match a.command {
        FleetCmd::Run(r) => run(r),
        other => cmd::main(FleetArgs { command: other }),
    }
}

/// `fleet run` under MPI.
#[cfg(feature = "mpi")]
fn run(a: crate::cli::FleetRunArgs) -> anyhow::Result<()> {
    crate::mpi::launcher::require("fleet run")?;
    gather::main(a)
}

/// Without the `mpi` feature: say how to get it, and how to do without.
#[cfg(not(feature = "mpi"))]
fn run(_a: crate::cli::FleetRunArgs) -> anyhow::Result<()> {
    anyhow::bail!(
        "{}\nWithout MPI: run `corescope run --quick --out DIR/$(hostname).json` on every node \
         and `corescope fleet merge DIR/*.json --out fleet.json` (docs/fleet.md)",
        crate::mpi::NOT_BUILT
    )
}
