//! Whether this process was started by an MPI launcher, read from the environment
//! the launchers set for every rank (pure: the caller passes the variable names).
//!
//! Started by hand, `corescope mpi` would initialise MPI as a singleton: one rank,
//! nothing to measure between, and (for `fleet run`) a fleet of one node. It says
//! how to start it instead.

/// A launcher recognised by the variables it sets for each rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// Open MPI's `mpirun` / `mpiexec` (`OMPI_COMM_WORLD_SIZE`, set by its ORTE/PRRTE).
    OpenMpi,
    /// A PMIx server: Open MPI 5, `srun --mpi=pmix`, PRRTE (`PMIX_RANK`).
    Pmix,
    /// MPICH's Hydra and other PMI-1/2 launchers, `srun --mpi=pmi2` (`PMI_RANK`,
    /// `PMI_SIZE`).
    Pmi,
    /// Slurm's `srun` (`SLURM_STEP_ID` with `SLURM_PROCID`): a task of a job step.
    Srun,
}

/// The variables each launcher sets for every rank, most specific first.
const MARKERS: [(&str, Launcher); 5] = [
    ("OMPI_COMM_WORLD_SIZE", Launcher::OpenMpi),
    ("PMIX_RANK", Launcher::Pmix),
    ("PMI_RANK", Launcher::Pmi),
    ("PMI_SIZE", Launcher::Pmi),
    ("SLURM_STEP_ID", Launcher::Srun),
];

/// The launcher whose variables are among `names`, if any. `SLURM_STEP_ID`
/// counts only with `SLURM_PROCID`, the task's rank in its step.
pub fn detect<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Launcher> {
    let names: Vec<&str> = names.into_iter().collect();
    let has = |n: &str| names.contains(&n);
    MARKERS
        .iter()
        .find(|(var, l)| has(var) && (*l != Launcher::Srun || has("SLURM_PROCID")))
        .map(|&(_, l)| l)
}

/// The launcher of this process, from its environment.
pub fn from_env() -> Option<Launcher> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    detect(names.iter().map(String::as_str))
}

/// What to say when `corescope <what>` was started without a launcher.
pub fn how_to_start(what: &str) -> String {
    format!(
        "`corescope {what}` runs as MPI ranks: start it under a launcher, for example\n  \
         mpirun -np 2 corescope {what}                 (one machine; as root add --allow-run-as-root)\n  \
         mpirun --map-by ppr:1:node --hostfile hosts corescope {what}   (one rank per node)\n  \
         srun --mpi=pmix --nodes=N --ntasks-per-node=1 corescope {what} (Slurm; Open MPI needs PMIx)\n\
         (docs/mpi.md, docs/fleet.md)"
    )
}

/// Fails with [`how_to_start`]'s advice unless this process was started by a
/// launcher: the first step of `corescope mpi` and `corescope fleet run`.
pub fn require(what: &str) -> anyhow::Result<()> {
    if from_env().is_none() {
        anyhow::bail!("{}", how_to_start(what));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_launcher_is_known_by_its_variables() {
        assert_eq!(
            detect(["HOME", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"]),
            Some(Launcher::OpenMpi)
        );
        assert_eq!(
            detect(["PMIX_RANK", "PMIX_NAMESPACE"]),
            Some(Launcher::Pmix)
        );
        assert_eq!(detect(["PMI_RANK", "PMI_SIZE"]), Some(Launcher::Pmi));
        assert_eq!(
            detect(["SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID"]),
            Some(Launcher::Srun)
        );
        // Open MPI under srun sets both: the MPI library's own marker wins.
        assert_eq!(
            detect(["SLURM_STEP_ID", "SLURM_PROCID", "PMIX_RANK"]),
            Some(Launcher::Pmix)
        );
    }

    #[test]
    fn a_shell_by_hand_or_a_batch_script_has_no_launcher() {
        assert_eq!(detect(["HOME", "PATH", "SHELL"]), None);
        assert_eq!(detect(std::iter::empty()), None);
        // Inside a Slurm allocation but not a task of a step (salloc's shell).
        assert_eq!(detect(["SLURM_JOB_ID", "SLURM_NODELIST"]), None);
        assert_eq!(detect(["SLURM_JOB_ID", "SLURM_STEP_ID"]), None);
    }

    #[test]
    fn require_fails_with_the_advice_only_without_a_launcher() {
        match from_env() {
            None => assert_eq!(
                require("fleet run").map_err(|e| e.to_string()),
                Err(how_to_start("fleet run"))
            ),
            Some(_) => assert!(require("fleet run").is_ok()),
        }
    }

    #[test]
    fn the_advice_names_the_command_and_both_launchers() {
        let s = how_to_start("mpi pingpong");
        assert!(s.contains("mpirun -np 2 corescope mpi pingpong"), "{s}");
        assert!(s.contains("srun"), "{s}");
    }
}
