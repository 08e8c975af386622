//! `corescope fleet merge` and `corescope fleet report`: read run files or a fleet
//! file, write the fleet file, print the report or the check lines. The only I/O
//! of the room.

use super::file::{self, FleetFile, FLEET_KIND, FLEET_SCHEMA_VERSION};
use super::{analyse, figures, html, report};
use crate::cli::{FleetArgs, FleetCmd, FleetMergeArgs, FleetReportArgs};
use crate::model::ToolInfo;
use crate::store;
use anyhow::{anyhow, Context, Result};
use std::io::Write;
use std::path::Path;

/// Exit status of `fleet report --check` when a node is bad (one line each on stdout).
pub const EXIT_BAD_NODES: u8 = 3;

/// `fleet report --check` found bad nodes; `main` turns it into [`EXIT_BAD_NODES`].
#[derive(Debug, thiserror::Error)]
#[error("{0} bad nodes")]
pub struct BadNodes(pub usize);

/// Run `fleet merge` or `fleet report` (`fleet run` is `gather.rs`'s).
pub fn main(a: FleetArgs) -> Result<()> {
    match a.command {
        FleetCmd::Merge(m) => merge(m),
        FleetCmd::Report(r) => report_cmd(r),
        FleetCmd::Run(_) => anyhow::bail!("fleet run is not a file command"),
    }
}

/// A fleet file from runs already loaded (each with where its file is).
pub fn build(runs: impl IntoIterator<Item = (crate::model::RunFile, Option<String>)>) -> FleetFile {
    let mut t = figures::Table::default();
    for (run, path) in runs {
        t.add(&run, path);
    }
    from_table(t)
}

/// The fleet file of a finished table: its figures, nodes and their analysis.
pub fn from_table(t: figures::Table) -> FleetFile {
    let (figures, nodes) = t.finish();
    let (analysis, _) = analyse::analyse(&nodes, figures.len());
    FleetFile {
        schema_version: FLEET_SCHEMA_VERSION,
        kind: FLEET_KIND.into(),
        tool: ToolInfo::current(),
        created_utc: crate::session::utc_rfc3339(std::time::SystemTime::now()),
        figures,
        nodes,
        analysis,
    }
}

fn merge(a: FleetMergeArgs) -> Result<()> {
    let inputs: Vec<store::Named> = a.runs.iter().map(|p| ("a run file", p.as_path())).collect();
    store::refuse_aliases(&inputs, &[("--out", &a.out)])?;
    store::check_writable(&a.out).map_err(|e| anyhow!("--out: {e}"))?;
    // One run file in memory at a time: each is reduced to its figures and dropped.
    let mut t = figures::Table::default();
    for p in &a.runs {
        let run = store::load(p)?;
        t.add(&run, Some(p.display().to_string()));
    }
    let fleet = from_table(t);
    save(&fleet, &a.out)?;
    let outliers: usize = fleet.analysis.groups.iter().map(|g| g.outliers.len()).sum();
    let _ = writeln!(
        std::io::stderr(),
        "fleet: {} nodes, {} models, {} outlying figures: {}",
        fleet.nodes.len(),
        fleet.analysis.groups.len(),
        outliers,
        a.out.display()
    );
    Ok(())
}

/// Write a fleet file (atomically).
pub fn save(fleet: &FleetFile, out: &Path) -> Result<()> {
    let json = serde_json::to_vec(fleet).context("serialising the fleet file")?;
    store::write_output(out, &json).with_context(|| format!("writing {}", out.display()))
}

/// Read a fleet file.
pub fn load(path: &Path) -> Result<FleetFile> {
    let text = crate::input::read_text(path)?;
    file::parse(&text).with_context(|| path.display().to_string())
}

fn report_cmd(a: FleetReportArgs) -> Result<()> {
    if let Some(out) = &a.html {
        store::refuse_aliases(&[("the fleet file", &a.fleet)], &[("--html", out)])?;
        store::check_writable(out).map_err(|e| anyhow!("--html: {e}"))?;
    }
    let fleet = load(&a.fleet)?;
    if let Some(n) = &a.node {
        if !fleet.nodes.iter().any(|x| &x.name == n) {
            anyhow::bail!(
                "--node {}: no such node in {}",
                crate::render::clean(n, 80, false),
                a.fleet.display()
            );
        }
    }
    if let Some(out) = &a.html {
        save_page(&fleet, out)?;
    }
    if a.check {
        return print_check(&fleet, a.node.as_deref());
    }
    if a.html.is_some() {
        return Ok(());
    }
    print(&report::render(&fleet))
}

/// Where `fleet run --html` writes the page: beside the fleet file
/// (`fleet.json` → `fleet.html`; `x.html` → `x.page.html`).
pub fn page_path_for(fleet_file: &Path) -> std::path::PathBuf {
    if fleet_file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html"))
    {
        fleet_file.with_extension("page.html")
    } else {
        fleet_file.with_extension("html")
    }
}

/// Write the fleet page (atomically) and say where it is on stderr.
pub fn save_page(fleet: &FleetFile, out: &Path) -> Result<()> {
    store::write_output(out, html::render(fleet).as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    let _ = writeln!(std::io::stderr(), "fleet page: {}", out.display());
    Ok(())
}

/// Print the check lines (of one node, or all); [`BadNodes`] when there is one.
pub fn print_check(fleet: &FleetFile, node: Option<&str>) -> Result<()> {
    let lines = report::check_lines(fleet, node);
    let mut t = lines.join("\n");
    if !t.is_empty() {
        t.push('\n');
    }
    print(&t)?;
    if lines.is_empty() {
        Ok(())
    } else {
        Err(BadNodes(lines.len()).into())
    }
}

/// Print text on stdout.
pub fn print(text: &str) -> Result<()> {
    write_stdout(text)
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")
}
