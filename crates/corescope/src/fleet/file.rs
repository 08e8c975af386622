//! The fleet file: every node's figures (a column per figure, the run file's
//! path beside them) and the analysis, as JSON. A public, versioned contract like
//! the run file: new fields carry `#[serde(default)]`; renaming or removing one
//! bumps [`FLEET_SCHEMA_VERSION`]. No I/O here but the parse of text.

use super::stats::{Side, Spread};
use crate::model::{Estimate, Profile, ToolInfo};
use serde::{Deserialize, Serialize};

/// Version of the fleet-file layout written by this build.
pub const FLEET_SCHEMA_VERSION: u32 = 1;
/// The `kind` that tells a fleet file from a run file.
pub const FLEET_KIND: &str = "fleet";

/// Many nodes' figures and how they compare.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FleetFile {
    /// Layout version; see [`FLEET_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Always `fleet`.
    pub kind: String,
    /// The program that wrote the file.
    pub tool: ToolInfo,
    /// UTC time the file was made, RFC 3339.
    pub created_utc: String,
    /// Every figure any node has, in order of first appearance; a node's `values`
    /// are aligned with this list.
    pub figures: Vec<FigureKey>,
    /// The nodes, in the order given (merge) or by rank (gather).
    pub nodes: Vec<Node>,
    /// How the nodes compare, by model.
    pub analysis: Analysis,
}

/// What one figure is: a series point, a distribution's median, or a matrix's
/// median entry or one of its rows' median (`x_name` `matrix` or `matrix row`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FigureKey {
    /// Probe id (`compute`).
    pub probe: String,
    /// Series or distribution name (`int/linear`).
    pub name: String,
    /// The point's x; absent for a distribution's median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// Name of the x axis (`threads`); empty for a distribution; [`MATRIX`] for a
    /// matrix's median entry, [`MATRIX_ROW`] for the median of one of its rows.
    #[serde(default)]
    pub x_name: String,
    /// The row's label (a CPU) of a [`MATRIX_ROW`] figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// Unit of the value (`ops_per_s`, `ns`).
    pub unit: String,
}

/// `x_name` of a matrix's median entry.
pub const MATRIX: &str = "matrix";
/// `x_name` of the median of one row of a matrix (its `row` names the row).
pub const MATRIX_ROW: &str = "matrix row";

/// One node's value of one figure: `[value, lo, hi, n]` (the 95 % interval and
/// the samples behind it, as in the run file).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct NodeValue(pub f64, pub f64, pub f64, pub usize);

impl NodeValue {
    /// As an estimate.
    pub fn estimate(self) -> Estimate {
        Estimate {
            value: self.0,
            lo: self.1,
            hi: self.2,
            n: self.3,
        }
    }
}

impl From<Estimate> for NodeValue {
    fn from(e: Estimate) -> Self {
        Self(e.value, e.lo, e.hi, e.n)
    }
}

/// One node of the fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    /// Node name: the run file's host name, made unique (`n1`, `n1#2`).
    pub name: String,
    /// Path of the node's full run file, as given or as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_file: Option<String>,
    /// CPU model string.
    pub cpu_model: String,
    /// Cores of the machine.
    pub cores: usize,
    /// CPUs the run could use.
    pub cpus: usize,
    /// Profile the node ran.
    pub profile: Profile,
    /// When its run started.
    pub started_utc: String,
    /// Probes that failed on this node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// One entry per figure of [`FleetFile::figures`]; `null` where the node lacks it.
    pub values: Vec<Option<NodeValue>>,
}

impl Node {
    /// The model key nodes are grouped by: CPU model and core count.
    pub fn model(&self) -> String {
        let model = if self.cpu_model.is_empty() {
            "unknown CPU"
        } else {
            self.cpu_model.as_str()
        };
        let s = if self.cores == 1 { "" } else { "s" };
        format!("{model}, {} core{s}", self.cores)
    }
}

/// The analysis of a fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Analysis {
    /// How the figures were compared (see docs/fleet.md).
    pub method: String,
    /// The threshold in between-node sigmas.
    pub outlier_sigmas: f64,
    /// The smallest relative difference called an outlier.
    pub min_effect: f64,
    /// Fewest nodes of a model that are judged.
    pub min_nodes: usize,
    /// One entry per node model.
    pub groups: Vec<Group>,
}

/// Nodes of one model, judged against each other.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Group {
    /// `AMD EPYC 9R45, 96 cores`.
    pub model: String,
    /// Names of its nodes.
    pub nodes: Vec<String>,
    /// Each figure at least `min_nodes` of them have: its spread.
    pub figures: Vec<FigureSpread>,
    /// Every (node, figure) judged an outlier.
    pub outliers: Vec<Outlier>,
}

/// The fleet's distribution of one figure within a group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FigureSpread {
    /// Index into [`FleetFile::figures`].
    pub figure: usize,
    /// Median, spread, threshold.
    pub spread: Spread,
}

/// One node's figure beyond the fleet's spread.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outlier {
    /// Node name.
    pub node: String,
    /// Index into [`FleetFile::figures`].
    pub figure: usize,
    /// Lower or higher than the fleet.
    pub side: Side,
    /// The node's value, in the figure's unit.
    pub value: f64,
    /// The fleet median, in the figure's unit.
    pub fleet_median: f64,
    /// Node ÷ fleet median with its 95 % interval.
    pub ratio: Estimate,
}

/// Why a fleet file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FleetFileError {
    /// Not JSON or not shaped like a fleet file.
    #[error("not a corescope fleet file: {0}")]
    Invalid(String),
    /// Written by a newer corescope.
    #[error(
        "fleet-file schema version {0}, but this corescope reads up to version \
         {FLEET_SCHEMA_VERSION}; upgrade corescope to read it"
    )]
    TooNew(u64),
}

/// The fields read first: kind and version.
#[derive(Deserialize)]
struct Preamble {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    schema_version: Option<u64>,
}

/// Whether JSON text is a fleet file (its `kind` says so).
pub fn is_fleet_text(text: &str) -> bool {
    serde_json::from_str::<Preamble>(text).is_ok_and(|p| p.kind.as_deref() == Some(FLEET_KIND))
}

/// Parse fleet-file text, checking its kind, version and shape.
pub fn parse(text: &str) -> Result<FleetFile, FleetFileError> {
    let pre: Preamble =
        serde_json::from_str(text).map_err(|e| FleetFileError::Invalid(e.to_string()))?;
    if pre.kind.as_deref() != Some(FLEET_KIND) {
        return Err(FleetFileError::Invalid(format!(
            "no \"kind\": \"{FLEET_KIND}\" entry (a run file? `corescope fleet merge` makes a fleet file of run files)"
        )));
    }
    match pre.schema_version {
        None | Some(0) => return Err(FleetFileError::Invalid("missing schema_version".into())),
        Some(v) if v > u64::from(FLEET_SCHEMA_VERSION) => return Err(FleetFileError::TooNew(v)),
        Some(_) => {}
    }
    let f: FleetFile =
        serde_json::from_str(text).map_err(|e| FleetFileError::Invalid(e.to_string()))?;
    let n = f.figures.len();
    if let Some(bad) = f.nodes.iter().find(|node| node.values.len() != n) {
        return Err(FleetFileError::Invalid(format!(
            "node {} has {} values for {n} figures",
            bad.name,
            bad.values.len()
        )));
    }
    let known = |i: usize| i < n;
    let all_known = f.analysis.groups.iter().all(|g| {
        g.figures.iter().all(|s| known(s.figure)) && g.outliers.iter().all(|o| known(o.figure))
    });
    if !all_known {
        return Err(FleetFileError::Invalid(
            "the analysis names a figure the file does not list".into(),
        ));
    }
    Ok(f)
}
