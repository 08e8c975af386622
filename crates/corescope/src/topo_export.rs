//! `corescope topo --export FORMAT`: the topology (a run file's, an XML export's or
//! this machine's) as hwloc XML with the run's measured distances, or the CPUs
//! corescope's placement gives `--threads` threads under `--placement`, in a
//! pinning tool's syntax. Builds the text; the command writes it.

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::{self, ExportFormat, TopoArgs};
use crate::measured_topology::measured_distances;
use crate::model::RunFile;
use crate::placement::{self, Strategy};
use crate::render::hwloc_xml::hwloc_xml;
use crate::render::pinning::{likwid_period, pinning, PinSyntax};
use crate::topology::Topology;

/// The export's text: `t` is the topology shown (the run's when `run` is given).
pub fn export_text(
    a: &TopoArgs,
    format: ExportFormat,
    t: &Topology,
    run: Option<&RunFile>,
) -> Result<String> {
    let syntax = match format {
        ExportFormat::Hwloc => {
            let distances = run.map(measured_distances).unwrap_or_default();
            return hwloc_xml(t, &distances).context("could not write the hwloc XML");
        }
        ExportFormat::LikwidPin => PinSyntax::LikwidPin,
        ExportFormat::OmpPlaces => PinSyntax::OmpPlaces,
        ExportFormat::Srun => PinSyntax::Srun,
        ExportFormat::Rankfile => PinSyntax::Rankfile,
    };
    let threads = a
        .threads
        .ok_or_else(|| anyhow!("a pinning export needs --threads N"))?;
    let placement = a.placement.as_deref().ok_or_else(|| {
        anyhow!("a pinning export needs --placement (compact, scatter, linear, a CPU list, ...)")
    })?;
    let strategy = cli::parse_strategy(placement).map_err(|e| anyhow!("--placement: {e}"))?;
    if strategy == Strategy::Unbound {
        bail!("--placement unbound pins nothing: choose compact, scatter, linear or a CPU list");
    }
    let cpus: Vec<u32> = placement::assign(t, &strategy, threads)
        .map_err(|e| anyhow!("--placement: {e}"))?
        .into_iter()
        .flatten()
        .collect();
    let period = likwid_period(&cpus);
    if syntax == PinSyntax::LikwidPin && period > t.pus.len() {
        bail!(
            "likwid-pin keeps no more -c entries than the machine has CPUs ({}), and this \
             placement repeats only after {period} (a CPU named twice in the list?): \
             use omp-places, srun or rankfile, which take one entry per thread",
            t.pus.len()
        );
    }
    let host = match run {
        Some(r) => r.host.hostname.clone(),
        None => crate::topology::host::host_info().hostname,
    };
    let host = if host.is_empty() {
        "localhost".into()
    } else {
        host
    };
    Ok(pinning(syntax, &cpus, &host))
}
