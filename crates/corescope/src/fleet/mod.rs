//! Fleet mode: many nodes' run files side by side, judged against each other
//! (docs/fleet.md).
//!
//! - `stats.rs`: one figure's fleet median, robust spread and each node's place
//!   in it (pure);
//! - `figures.rs`: run files → nodes and one table of figures (pure);
//! - `analyse.rs`: nodes grouped by model, every figure's spread and outliers (pure);
//! - `file.rs`: the fleet file's serde types, version and parse;
//! - `report.rs`: the report and the check lines in words (pure);
//! - `cmd.rs`: `corescope fleet merge | report`, the room's only I/O.

pub mod analyse;
pub mod cmd;
pub mod figures;
pub mod file;
pub mod report;
pub mod stats;

pub use cmd::{main, BadNodes, EXIT_BAD_NODES};
