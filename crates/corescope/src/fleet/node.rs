//! One node's part of `corescope fleet run`: measure this node with `corescope run
//! --quick` in a child process (the measuring code as users run it, no MPI in its
//! threads), and the two test-only switches that let ranks on one machine stand
//! for distinct nodes, one of them slow.

use crate::model::RunFile;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Test only: the node name of each rank, `{rank}` replaced by its rank
/// (`node{rank}` → `node0`, `node1`, …), instead of the host name.
pub const NAME_ENV: &str = "CORESCOPE_FLEET_NODE_NAME_TEST";
/// Test only: `RANK:FACTOR` multiplies every series value of that rank's run (its
/// points, intervals and samples) by `FACTOR`, standing for a node that slower (or
/// faster) in CI, where every rank shares one machine.
pub const HANDICAP_ENV: &str = "CORESCOPE_FLEET_HANDICAP_TEST";

/// Apply the test-only switches to rank `rank`'s run.
pub fn test_overrides(
    run: &mut RunFile,
    rank: usize,
    name: Option<&str>,
    handicap: Option<&str>,
) -> Result<()> {
    if let Some(tpl) = name {
        run.host.hostname = tpl.replace("{rank}", &rank.to_string());
    }
    let Some(h) = handicap else {
        return Ok(());
    };
    let (r, f) = h
        .split_once(':')
        .with_context(|| format!("{HANDICAP_ENV}={h}: expected RANK:FACTOR, e.g. 2:0.5"))?;
    let (r, f): (usize, f64) = match (r.trim().parse(), f.trim().parse()) {
        (Ok(r), Ok(f)) if f > 0.0 && f64::is_finite(f) => (r, f),
        _ => bail!("{HANDICAP_ENV}={h}: expected RANK:FACTOR with a positive factor, e.g. 2:0.5"),
    };
    if r != rank {
        return Ok(());
    }
    for s in run.probes.iter_mut().flat_map(|p| &mut p.series) {
        let scaled = s.y.iter_mut().chain(&mut s.y_lo).chain(&mut s.y_hi);
        scaled
            .chain(s.samples.iter_mut().flatten())
            .for_each(|v| *v *= f);
    }
    Ok(())
}

/// Measure this node: `corescope run --quick PROBES… --out OUT` as a child
/// process of this binary; the run file's bytes.
pub fn measure(probes: &[String], out: &Path) -> Result<Vec<u8>> {
    let exe = std::env::current_exe().context("finding the corescope binary")?;
    let status = std::process::Command::new(exe)
        .arg("run")
        .arg("--quick")
        .args(probes)
        .args(["--no-progress", "--no-html", "--out"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .status()
        .context("starting corescope run")?;
    if !status.success() {
        bail!("corescope run --quick on this node failed ({status})");
    }
    std::fs::read(out).with_context(|| format!("reading {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_name_and_slow_down_one_rank() {
        let base: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).expect("fixture");
        let y0 = base.probes[0].series[0].y[0];
        let mut run = base.clone();
        test_overrides(&mut run, 2, Some("node{rank}"), Some("2:0.5")).unwrap();
        assert_eq!(run.host.hostname, "node2");
        assert_eq!(run.probes[0].series[0].y[0], y0 * 0.5);
        let mut other = base.clone();
        test_overrides(&mut other, 1, None, Some("2:0.5")).unwrap();
        assert_eq!(other, base);
        assert!(test_overrides(&mut other, 1, None, Some("2")).is_err());
        assert!(test_overrides(&mut other, 1, None, Some("2:-1")).is_err());
    }
}
