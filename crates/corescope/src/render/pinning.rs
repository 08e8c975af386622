//! A placement's CPUs (thread i → CPU, OS indices) in the syntax of the tools
//! people pin with: likwid-pin's `-c` list, OpenMP's `OMP_PLACES` (with
//! `OMP_PROC_BIND=close`, which gives thread i place i), Slurm's
//! `srun --cpu-bind=map_cpu:` and an Open MPI rankfile. Every form lists one
//! entry per thread in thread order, so an oversubscribed placement (more
//! threads than CPUs, wrapping around as corescope's placement does) repeats
//! CPUs exactly where corescope would.

/// A pinning tool's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinSyntax {
    /// `likwid-pin -c 0,2,1,3` (physical, i.e. OS, CPU ids).
    LikwidPin,
    /// `OMP_PLACES="{0},{2},..."` with `OMP_PROC_BIND=close`.
    OmpPlaces,
    /// `srun --cpu-bind=map_cpu:0,2,...` (one CPU per task on the node).
    Srun,
    /// Open MPI rankfile: `rank i=HOST slot=CPU`, physical ids.
    Rankfile,
}

/// The pinning of `cpus` (thread or rank i → `cpus[i]`) in `syntax`; `host` names
/// the node in a rankfile. Ends with a newline.
pub fn pinning(syntax: PinSyntax, cpus: &[u32], host: &str) -> String {
    let list = |sep: &str| {
        cpus.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(sep)
    };
    let n = cpus.len();
    match syntax {
        PinSyntax::LikwidPin => format!("likwid-pin -c {}\n", list(",")),
        PinSyntax::OmpPlaces => {
            let places: Vec<String> = cpus.iter().map(|c| format!("{{{c}}}")).collect();
            format!(
                "OMP_NUM_THREADS={n} OMP_PROC_BIND=close OMP_PLACES=\"{}\"\n",
                places.join(",")
            )
        }
        PinSyntax::Srun => format!("srun --ntasks={n} --cpu-bind=map_cpu:{}\n", list(",")),
        PinSyntax::Rankfile => {
            let mut out = format!(
                "# Open MPI rankfile: physical CPU ids; run with\n\
                 # mpirun --rankfile FILE --mca rmaps_rank_file_physical 1 -np {n} ...\n"
            );
            for (rank, c) in cpus.iter().enumerate() {
                out.push_str(&format!("rank {rank}={host} slot={c}\n"));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_gets_one_entry_per_thread_in_its_syntax() {
        // Parsed back on every topology in tests/topo_export.rs.
        let cpus = [0, 8, 0];
        assert_eq!(
            pinning(PinSyntax::LikwidPin, &cpus, "h"),
            "likwid-pin -c 0,8,0\n"
        );
        assert_eq!(
            pinning(PinSyntax::OmpPlaces, &cpus, "h"),
            "OMP_NUM_THREADS=3 OMP_PROC_BIND=close OMP_PLACES=\"{0},{8},{0}\"\n"
        );
        assert_eq!(
            pinning(PinSyntax::Srun, &cpus, "h"),
            "srun --ntasks=3 --cpu-bind=map_cpu:0,8,0\n"
        );
        let rankfile = pinning(PinSyntax::Rankfile, &cpus, "node1");
        assert!(
            rankfile.ends_with("rank 0=node1 slot=0\nrank 1=node1 slot=8\nrank 2=node1 slot=0\n"),
            "{rankfile}"
        );
    }
}
