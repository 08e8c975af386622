//! A placement's CPUs (thread i → CPU, OS indices) in the syntax of the tools
//! people pin with: likwid-pin's `-c` list, OpenMP's `OMP_PLACES` (with
//! `OMP_PROC_BIND=close`, which gives thread i place i), Slurm's
//! `srun --cpu-bind=map_cpu:` and an Open MPI rankfile. Every form but
//! likwid-pin's lists one entry per thread in thread order, so an oversubscribed
//! placement (more threads than CPUs, wrapping around as corescope's placement
//! does) repeats CPUs exactly where corescope would. likwid-pin keeps no more `-c`
//! entries than the machine has CPUs and sets `OMP_NUM_THREADS` to the entries it
//! kept; threads past its list go round-robin over the list, as placement wraps.
//! So its form is the list up to where it repeats, with `OMP_NUM_THREADS=N` in
//! front when threads wrap.

/// A pinning tool's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinSyntax {
    /// `likwid-pin -c 0,2,1,3` (physical, i.e. OS, CPU ids); `OMP_NUM_THREADS=6
    /// likwid-pin -c 0,2,1,3` when six threads wrap around those four CPUs.
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
        PinSyntax::LikwidPin => {
            let period = likwid_period(cpus);
            let list = cpus[..period]
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            if period < n {
                format!("OMP_NUM_THREADS={n} likwid-pin -c {list}\n")
            } else {
                format!("likwid-pin -c {list}\n")
            }
        }
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

/// How many entries likwid-pin's `-c` gets for `cpus`: the shortest prefix that
/// `cpus` repeats (thread i on entry i mod the prefix's length), as likwid-pin pins
/// threads past its list round-robin. All of `cpus` when it does not repeat.
pub fn likwid_period(cpus: &[u32]) -> usize {
    (1..=cpus.len())
        .find(|&p| cpus.iter().enumerate().all(|(i, c)| *c == cpus[i % p]))
        .unwrap_or(cpus.len())
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
            "OMP_NUM_THREADS=3 likwid-pin -c 0,8\n"
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

    #[test]
    fn likwid_pin_gets_the_list_up_to_where_it_repeats_and_the_thread_count_when_threads_wrap() {
        // likwid-pin 5.2 with `-c 0,1,0,1` on two CPUs kept `0,1` and set
        // OMP_NUM_THREADS=2: an OpenMP program ran two threads, not four.
        let line = |cpus: &[u32]| pinning(PinSyntax::LikwidPin, cpus, "h");
        assert_eq!(line(&[0, 1, 0, 1]), "OMP_NUM_THREADS=4 likwid-pin -c 0,1\n");
        assert_eq!(line(&[1, 0, 1]), "OMP_NUM_THREADS=3 likwid-pin -c 1,0\n");
        assert_eq!(line(&[3, 3, 3]), "OMP_NUM_THREADS=3 likwid-pin -c 3\n");
        assert_eq!(line(&[0, 2, 1, 3]), "likwid-pin -c 0,2,1,3\n");
        assert_eq!(line(&[1, 1, 0]), "likwid-pin -c 1,1,0\n");
        assert_eq!(line(&[5]), "likwid-pin -c 5\n");
        assert_eq!(likwid_period(&[]), 0);
    }
}
