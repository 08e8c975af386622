//! Command-line definitions and their validation into typed options. No measuring.

use crate::model::Profile;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod values;
pub use values::*;

/// Characterize a multicore, multithreaded machine: placement, throughput vs
/// threads, the cost of thread primitives, coherence, channels, thread pools,
/// and more.
///
/// Without a command, runs every probe with the default profile and writes
/// `corescope-<host>-<UTC time>.json` and the HTML report `….html` next to it
/// in the current directory.
#[derive(Debug, Parser)]
#[command(name = "corescope", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do (default: `run`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of `run`, when no command is given.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run probes and write a run file (JSON) plus tables on stdout.
    Run(RunArgs),
    /// List the probes this build knows.
    List,
    /// Show how OS CPU ids map onto packages, NUMA nodes, cores and hardware threads.
    Topo(TopoArgs),
    /// Print the CPUs a placement strategy gives N threads (comma-separated OS ids).
    ///
    /// Strategies: `linear` (OS id order), `compact` (fill a core, then the next;
    /// NUMA node by NUMA node), `scatter` (each thread as far from the others as
    /// the machine allows: a new NUMA node first, then a new Group, package, die,
    /// shared cache, core), `unbound` (the OS decides), or a CPU list (`0,2,4-7`).
    ///
    /// Expressions: `N0:0-3` (the first 4 allowed CPUs of NUMA node 0), `S1:0-7`
    /// (package 1), `kind:P` / `kind:E` (P- or E-cores), `N0` (all of node 0),
    /// joined by `@` (`N0:0-1@N1:0-1`). Node and package numbers are the OS's, as
    /// `corescope topo` shows them; indexes count a domain's allowed CPUs in
    /// topology order.
    ///
    /// compact and scatter fill the most performant CPU kind first (P before E);
    /// offline and disallowed CPUs are never chosen. More threads than CPUs wrap
    /// around. See docs/placement.md.
    Place(PlaceArgs),
    /// Show, without measuring, every probe's cases (threads, CPUs, sizes) and an
    /// estimate of how long a run takes, for this machine or a topology file; the
    /// estimate's constants come from a short calibration (under 2 s) of this
    /// machine. See docs/plan.md.
    Plan(PlanArgs),
    /// Render a run file again: tables on the terminal, or an HTML report, CSV or Markdown.
    Report(ReportArgs),
    /// Put run files of several machines side by side (one column per machine).
    Compare(CompareArgs),
    /// The papers' machines (SPARC T3-4, X4470, Magny Cours, E6900, T3E, Origin2000):
    /// the numbers the seeds state, each with its source, and a run beside them.
    #[command(subcommand)]
    Reference(ReferenceCmd),
    /// Tune a component for this machine and write its best configuration.
    Tune(TuneArgs),
    /// List what blurs the figures on this machine (governor, boost, SMT, isolated
    /// CPUs, IRQs, THP, load, steal, the hypervisor, counters, NUMA balancing),
    /// the probes each one affects and what to do; `--tune` sets what it can
    /// after asking, `--reset` restores it. See docs/doctor.md.
    Doctor(DoctorArgs),
    /// Measure corescope beside the established tools installed here (likwid-bench,
    /// rt-tests ptsematest, core-to-core-latency, perf bench) and the FMA units'
    /// limit: same CPUs, sizes and definitions, interleaved rounds, one row per
    /// measurement with the ratio and its 95 % interval. A missing tool's row says how
    /// to install it. Writes a run file (and its HTML report) whose rows `corescope
    /// report` shows again. See docs/verification.md.
    Crosscheck(CrosscheckArgs),
    /// MPI ping-pong, Allreduce and a Jacobi halo exchange; start it under mpirun,
    /// e.g. `mpirun -np 4 corescope mpi all` (needs a build with `--features mpi`).
    Mpi(MpiArgs),
    /// Fleet mode: many nodes' run files in one fleet file, each figure's
    /// distribution over the nodes of one model, the outliers named with their
    /// evidence, and `--check` lines for Slurm / NHC. See docs/fleet.md.
    Fleet(FleetArgs),
}

/// Options of `run`.
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Probes to run (default: all; see `corescope list`).
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,
    /// Small sizes: the whole suite in about a minute on 2 CPUs.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The seeds' sizes (10^5 samples, 256 MiB per thread, 10^9 ops per thread).
    #[arg(long)]
    pub full: bool,
    /// Thread counts to measure, e.g. `1,2,4,8` (default: 1,2,3,4,6,8,12,... up to 4× CPUs).
    // `::std::vec::Vec`, spelt out: one value holding a list, not a repeated flag.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse_thread_list)]
    pub threads: Option<::std::vec::Vec<usize>>,
    /// Placements: `linear`, `compact`, `scatter`, `unbound` (comma-separated), one
    /// CPU list such as `0,2,4-7`, or one expression such as `N0:0-3`, `S1:0-7`,
    /// `kind:P` (see `corescope place --help`); repeat the flag for several lists
    /// (one series each, named `list:0,2,4-7`).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub placement: Vec<String>,
    /// Run file to write (default: corescope-<host>-<UTC time>.json).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seconds each probe may take before it stops and records "gave up"
    /// (default: 30 quick, 300 default, 3600 full).
    #[arg(long = "budget", value_name = "SECONDS", allow_hyphen_values = true, value_parser = parse_budget)]
    pub budget_s: Option<f64>,
    /// Epochs: every repeated point is measured in this many separated passes over
    /// its probe, and its interval spans the spread between them (1 to 4; default
    /// 2; 1 gives the within-run interval only, see docs/statistics.md).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = count::<u8>(1, 4))]
    pub epochs: Option<u8>,
    /// No progress bar on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Do not write the HTML report next to the run file.
    #[arg(long)]
    pub no_html: bool,
    /// Print every probe's full tables as it ends (default: one-screen summary at the end).
    #[arg(long, short)]
    pub verbose: bool,
}

/// Options of `topo`.
#[derive(Debug, Args)]
pub struct TopoArgs {
    /// An hwloc synthetic machine instead of this one, e.g. "pack:4 core:16 group:2 pu:4".
    #[arg(long, value_name = "SPEC", conflicts_with = "xml")]
    pub synthetic: Option<String>,
    /// An hwloc XML export instead of this machine.
    #[arg(long, visible_alias = "topology", value_name = "FILE")]
    pub xml: Option<PathBuf>,
    /// Print the topology as JSON (the run file's `topology` object).
    #[arg(long, conflicts_with = "export")]
    pub json: bool,
    /// A run file: show the topology it was measured on, and below it what its
    /// `sharing` probe measured of each pair (shared core or not) next to what the
    /// topology says, and where the measurements and the topology differ.
    #[arg(long, visible_alias = "from", value_name = "RUN.json", conflicts_with_all = ["xml", "synthetic"])]
    pub run: Option<PathBuf>,
    /// Export instead of the table: `hwloc` (hwloc 2 XML, with a run file's
    /// measured latencies and bandwidths as distances), or the pinning of
    /// `--threads` under `--placement` for likwid-pin, OpenMP, srun or an Open MPI
    /// rankfile (docs/topology-export.md).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub export: Option<ExportFormat>,
    /// Threads (or ranks) to pin, for a pinning export.
    #[arg(
        long,
        short = 'n',
        value_name = "N",
        requires = "export",
        allow_hyphen_values = true,
        value_parser = parse_thread_count
    )]
    pub threads: Option<usize>,
    /// Placement of a pinning export, as `corescope place` takes it: `compact`,
    /// `scatter`, `linear`, a CPU list or an expression.
    #[arg(
        long,
        value_name = "P",
        requires = "export",
        allow_hyphen_values = true
    )]
    pub placement: Option<String>,
    /// Write the export to this file instead of stdout.
    #[arg(long, value_name = "FILE", requires = "export")]
    pub out: Option<PathBuf>,
}

/// What `topo --export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// hwloc 2 XML (`lstopo --input FILE`), measured distances included.
    Hwloc,
    /// `likwid-pin -c LIST`, with `OMP_NUM_THREADS=N` in front when threads
    /// outnumber the CPUs and wrap round the list.
    LikwidPin,
    /// `OMP_PLACES` with `OMP_PROC_BIND=close`.
    OmpPlaces,
    /// `srun --cpu-bind=map_cpu:LIST`.
    Srun,
    /// An Open MPI rankfile (`rank i=HOST slot=CPU`).
    Rankfile,
}

/// Options of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Probes to plan (default: all; see `corescope list`).
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,
    /// Plan the quick profile.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// Plan the full profile.
    #[arg(long)]
    pub full: bool,
    /// Seconds each probe may take (default: the profile's, as `run`).
    #[arg(long = "budget", value_name = "SECONDS", allow_hyphen_values = true, value_parser = parse_budget)]
    pub budget_s: Option<f64>,
    /// An hwloc synthetic machine instead of this one, e.g. "pack:4 core:16 group:2 pu:4".
    #[arg(long, value_name = "SPEC", conflicts_with = "xml")]
    pub synthetic: Option<String>,
    /// An hwloc XML export instead of this machine.
    #[arg(long, value_name = "FILE")]
    pub xml: Option<PathBuf>,
    /// Only the table of probes, not every case.
    #[arg(long)]
    pub summary: bool,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
    /// Price with the constants of the reference machine the model was fitted on
    /// instead of calibrating this one (reproducible estimates).
    #[arg(long)]
    pub reference: bool,
    /// Compare the estimate with the durations a run file records (planned on the
    /// run's topology, profile and budgets).
    #[arg(long, value_name = "RUN.json", conflicts_with_all = ["xml", "synthetic"])]
    pub check: Option<PathBuf>,
    /// Also price a fleet run of this many nodes of this machine (`corescope fleet
    /// run`): each node's run, then the gather, parse and judgement on rank 0.
    #[arg(
        long,
        value_name = "NODES",
        conflicts_with = "check",
        allow_hyphen_values = true,
        value_parser = count::<u64>(1, 10_000_000)
    )]
    pub fleet: Option<u64>,
}

/// Options of `place`.
#[derive(Debug, Args)]
pub struct PlaceArgs {
    /// `linear`, `compact`, `scatter`, `unbound`, a CPU list such as `0,2,4-7`, or an
    /// expression such as `N0:0-3`, `S1:0-7`, `kind:P`.
    #[arg(allow_hyphen_values = true)]
    pub strategy: String,
    /// Number of threads to place.
    #[arg(long, short = 'n', value_name = "N", allow_hyphen_values = true, value_parser = parse_thread_count)]
    pub threads: usize,
    /// An hwloc synthetic machine instead of this one.
    #[arg(long, value_name = "SPEC", conflicts_with = "xml")]
    pub synthetic: Option<String>,
    /// An hwloc XML export instead of this machine.
    #[arg(long, value_name = "FILE")]
    pub xml: Option<PathBuf>,
}

/// Options of `report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run file written by `corescope run`.
    pub run: PathBuf,
    /// Write the self-contained HTML report (inline SVG charts) to this file.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Write tidy CSV files (series.csv, distributions.csv, samples per
    /// histogram bin, matrices) into this directory.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Print Markdown instead of terminal tables.
    #[arg(long)]
    pub markdown: bool,
    /// Print only the one-screen summary (what `corescope run` ends with).
    #[arg(long, conflicts_with = "markdown")]
    pub summary: bool,
    /// Lay the terminal output out for this many columns (default: `COLUMNS`, else
    /// the terminal's width, else 100; at least 40).
    #[arg(long, value_name = "COLUMNS", allow_hyphen_values = true, value_parser = count::<u16>(0, u16::MAX.into()))]
    pub width: Option<u16>,
}

/// Options of `crosscheck`.
#[derive(Debug, Args)]
pub struct CrosscheckArgs {
    /// Probes whose rows to run: memory, peak, mutex, c2c, syscall (default: all).
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,
    /// Rounds per row, after one warm-up (2 to 50; default 6).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = count::<u16>(2, 50))]
    pub rounds: Option<u16>,
    /// Run file to write (default: corescope-crosscheck-<host>-<UTC time>.json).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Do not write the HTML report next to the run file.
    #[arg(long)]
    pub no_html: bool,
    /// Print the rows as a Markdown table (as in docs/verification.md) instead of the
    /// terminal table.
    #[arg(long)]
    pub markdown: bool,
}

/// Options of `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more run files, one per machine (or per run of one machine).
    #[arg(required = true, num_args = 2.., value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// Also write the comparison as a self-contained HTML file.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Only these probes (comma-separated ids).
    #[arg(long, value_name = "LIST")]
    pub probes: Option<String>,
    /// Lay the terminal output out for this many columns (default: `COLUMNS`, else
    /// the terminal's width, else 100; at least 40).
    #[arg(long, value_name = "COLUMNS", allow_hyphen_values = true, value_parser = count::<u16>(0, u16::MAX.into()))]
    pub width: Option<u16>,
}

/// `reference` subcommands.
#[derive(Debug, Subcommand)]
pub enum ReferenceCmd {
    /// List the reference machines.
    List,
    /// Every number of one reference machine with its source.
    Show {
        /// Its name (`t3-4`, see `corescope reference list`).
        name: String,
    },
    /// Put a run beside a reference machine where the same quantity exists
    /// (per core and per cycle where both clocks are known).
    Compare {
        /// A run file written by `corescope run`.
        run: PathBuf,
        /// The reference machine (`t3-4`).
        name: String,
    },
}

/// Options of `tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// What to tune: `channel` (the hspc producer/consumer channel, seed 004).
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Bytes per event of Stage One, 1 to 1024 (default 24, the seed's shrunk
    /// profiling event); other sizes round up to 1, 2, 4, 8, 16, 24, 32, 64, 128, ...
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_event_bytes)]
    pub event_bytes: Option<usize>,
    /// Seconds the whole tuning may take (default 60); steps that run out of time
    /// say how many configurations they measured.
    #[arg(long = "budget", value_name = "SECONDS", allow_hyphen_values = true, value_parser = parse_budget)]
    pub budget_s: Option<f64>,
    /// File for the best configuration, JSON that `hspc::Config` reads
    /// (default: hspc-<host>.json).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write a run file (as `corescope run` does) holding every step as a
    /// table, for `corescope report`.
    #[arg(long, value_name = "FILE")]
    pub run_file: Option<PathBuf>,
    /// A configuration file (as `tune channel` writes, or the one in use) to race
    /// in Stage Two beside the tuner's own contenders; the last line says how it
    /// compares with this run's choice (e.g. an earlier run's pick, to see whether
    /// two runs disagree or only cannot tell their picks apart). May be repeated.
    #[arg(long, value_name = "FILE")]
    pub against: Vec<PathBuf>,
}

/// Options of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Write the values the checks propose (asks first; root only), keeping the
    /// old ones for `--reset`.
    #[arg(long, conflicts_with = "reset")]
    pub tune: bool,
    /// Write back the values an earlier `--tune` changed (asks first).
    #[arg(long)]
    pub reset: bool,
    /// Do not ask before writing (for scripts; stdin need not be a terminal).
    #[arg(long, short)]
    pub yes: bool,
    /// Also time the round trip of a cache line between the first two CPUs a few
    /// times and class it (same host core, same cache, farther) on a VM.
    #[arg(long)]
    pub measure: bool,
    /// Print the checks as JSON (the run file's `doctor` object).
    #[arg(long)]
    pub json: bool,
    /// Read (and tune) the /sys and /proc files under this directory instead of
    /// `/` (for tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
}

/// Which MPI benchmark `corescope mpi` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum MpiBench {
    /// Ranks 0 and 1 (or every pair (0, r)): MPI_Send, MPI_Ssend, MPI_Isend round trips.
    Pingpong,
    /// MPI_Allreduce of 8 B … 1 MiB, time per call as the maximum over ranks.
    Allreduce,
    /// 2-D decomposed Jacobi iteration: Sendrecv halos + 8-byte Allreduce per step.
    Jacobi,
    /// All three, in that order.
    #[default]
    All,
}

/// Which rank pairs the ping-pong measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum MpiPairs {
    /// Ranks 0 and 1 only.
    #[default]
    First,
    /// (0, r) for every rank r > 0, one pair at a time.
    All,
}

/// Options of `mpi`.
#[derive(Debug, Args)]
pub struct MpiArgs {
    /// Benchmark to run.
    #[arg(value_enum, default_value_t = MpiBench::All)]
    pub bench: MpiBench,
    /// Small sizes: messages up to 64 KiB, few repetitions, a small Jacobi grid.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The seeds' sizes: 10^5 repetitions for short messages, NX = 1000.
    #[arg(long)]
    pub full: bool,
    /// Run file rank 0 writes (default: corescope-<host>-<UTC time>-mpi.json).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Ping-pong pairs: `first` (ranks 0 and 1) or `all` ((0, r) for every r).
    #[arg(long, value_enum, default_value_t = MpiPairs::First)]
    pub pairs: MpiPairs,
    /// Jacobi grid: NX × NX interior points, 1 to 16384 (default: 64 quick, 1000 otherwise, as in seed 002).
    #[arg(long, value_name = "NX", allow_hyphen_values = true, value_parser = count::<usize>(1, MAX_JACOBI_NX))]
    pub nx: Option<usize>,
    /// Jacobi iterations, 1 to 100000 (default: 50 quick, 200 default, 1000 full).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = count::<usize>(1, MAX_JACOBI_ITERATIONS))]
    pub iterations: Option<usize>,
    /// Also write the Jacobi timeline as Chrome trace-event JSON (open it in Perfetto).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

/// Options of `fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// What to do with the fleet.
    #[command(subcommand)]
    pub command: FleetCmd,
}

/// `fleet` subcommands.
#[derive(Debug, Subcommand)]
pub enum FleetCmd {
    /// Make a fleet file of run files (one per node; from a shared file system or
    /// copied by hand): every node's figures, their spread over the nodes of each
    /// model, the outliers.
    Merge(FleetMergeArgs),
    /// Print a fleet file: the nodes, per probe each series' distribution over the
    /// nodes, the outliers with their evidence; `--check` prints one line per bad
    /// node and exits 3 when there is one (0: none, 1: an error).
    Report(FleetReportArgs),
    /// Under `srun --ntasks-per-node=1` or `mpirun --map-by ppr:1:node` (a build
    /// with `--features mpi`): every rank measures its node with `run --quick`,
    /// rank 0 gathers the run files over MPI, writes them into `--dir` and the
    /// fleet file to `--out`, and prints the report (or, with `--check`, the lines).
    Run(FleetRunArgs),
}

/// Options of `fleet run`.
#[derive(Debug, Args)]
pub struct FleetRunArgs {
    /// Probes each node runs (default: all, quick profile; a few fast ones make a
    /// fingerprint, e.g. `compute syscall`).
    #[arg(value_name = "PROBE")]
    pub probes: Vec<String>,
    /// The fleet file rank 0 writes.
    #[arg(long, short, value_name = "FLEET.json", default_value = "fleet.json")]
    pub out: PathBuf,
    /// Directory for every node's run file, on rank 0.
    #[arg(long, value_name = "DIR", default_value = "fleet-runs")]
    pub dir: PathBuf,
    /// Measure one node at a time (ranks sharing a machine, as in a test).
    #[arg(long)]
    pub serial: bool,
    /// Print the check lines instead of the report; exit 3 when a node is bad.
    #[arg(long)]
    pub check: bool,
    /// Also write the fleet page beside the fleet file (`fleet.json` → `fleet.html`).
    #[arg(long)]
    pub html: bool,
}

/// Options of `fleet merge`.
#[derive(Debug, Args)]
pub struct FleetMergeArgs {
    /// Run files, one per node (named by their host names; a repeated name gets `#2`).
    #[arg(required = true, value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// The fleet file to write.
    #[arg(long, short, value_name = "FLEET.json")]
    pub out: PathBuf,
}

/// Options of `fleet report`.
#[derive(Debug, Args)]
pub struct FleetReportArgs {
    /// A fleet file written by `corescope fleet merge`.
    #[arg(value_name = "FLEET.json")]
    pub fleet: PathBuf,
    /// Health check: one line per bad node (`NODE: corescope fleet: REASON`, a drain
    /// reason for Slurm and NHC) and exit status 3 when a node is bad; 0 when none is.
    #[arg(long)]
    pub check: bool,
    /// With `--check`: only this node (what a node's own health check asks).
    #[arg(long, value_name = "NAME", requires = "check")]
    pub node: Option<String>,
    /// Write the fleet page: a node × probe heat map of ratios to the fleet median
    /// and each outlier's figures beside the fleet's (one self-contained file).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
}

/// Default per-probe budget of a profile, in seconds.
pub fn default_budget_s(p: Profile) -> f64 {
    p.pick(30.0, 300.0, 3600.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Strategy;

    #[test]
    fn thread_lists() {
        assert_eq!(parse_thread_list("4,1,2,2").unwrap(), vec![1, 2, 4]);
        assert!(parse_thread_list("0")
            .unwrap_err()
            .to_string()
            .contains("0"));
        assert!(parse_thread_list("x")
            .unwrap_err()
            .to_string()
            .contains("not a positive integer"));
        assert!(parse_thread_list("1,,2").is_err());
        assert!(parse_thread_count("99999999").is_err());
        assert!(parse_thread_count("-1")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(parse_thread_count("99999999999999999999999")
            .unwrap_err()
            .to_string()
            .contains("above the limit"));
    }

    #[test]
    fn placements() {
        let p = parse_placements(&["scatter,compact".into(), "0,2,4-5".into()]).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0], Strategy::Scatter);
        assert_eq!(p[2], Strategy::List(vec![0, 2, 4, 5]));
        assert!(parse_placements(&["zigzag".into()]).is_err());
        let p = parse_placements(&["N0:0,2".into(), "scatter,S1".into()]).unwrap();
        assert_eq!(
            p.iter().map(Strategy::name).collect::<Vec<_>>(),
            ["N0:0,2", "scatter", "S1"]
        );
        let e = parse_placements(&["N0:3-1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad index list"), "{e}");
        let e = |v: &str| parse_placements(&[v.into()]).unwrap_err().to_string();
        assert!(e("1-0").contains("reversed; write 0-1"), "{}", e("1-0"));
        assert!(e("0-4000000000").contains("4000000000 is above"));
        assert!(e("4294967295").contains("4294967295 is above"));
        assert!(e("-1").contains("0 or more"));
        assert!(e("0,,1").contains("empty item"));
        assert!(e("scater").contains("did you mean 'scatter'"));
        assert_eq!(suggest("reprot", &COMMANDS), Some("report"));
        assert_eq!(suggest("xyzzy", &COMMANDS), None);
    }

    #[test]
    fn counts() {
        let rounds = count::<u16>(2, 50);
        assert_eq!(rounds(" 6 "), Ok(6));
        assert_eq!(rounds("50"), Ok(50));
        let e = |v: &str| rounds(v).unwrap_err().to_string();
        assert_eq!(e("1"), "at least 2");
        assert_eq!(e("51"), "at most 50");
        assert_eq!(e("99999999999999999999999"), "at most 50");
        assert_eq!(e("-3"), "negative; expected a whole number from 2 to 50");
        assert_eq!(e("x"), "expected a whole number from 2 to 50");
        assert_eq!(e(""), "expected a whole number from 2 to 50");
        assert_eq!(e("2.5"), "expected a whole number from 2 to 50");
        let nx = count::<usize>(1, MAX_USIZE);
        assert_eq!(nx("0").unwrap_err().to_string(), "at least 1");
        assert_eq!(
            nx("x").unwrap_err().to_string(),
            "expected a whole number of 1 or more"
        );
        assert_eq!(nx("1000"), Ok(1000));
        let grid = count::<usize>(1, MAX_JACOBI_NX);
        assert_eq!(grid("16384"), Ok(16_384));
        assert_eq!(grid("16385").unwrap_err().to_string(), "at most 16384");
        let width = count::<u16>(0, u16::MAX.into());
        assert_eq!(width("0"), Ok(0));
        assert_eq!(width("65536").unwrap_err().to_string(), "at most 65535");
    }

    #[test]
    fn event_bytes() {
        assert_eq!(parse_event_bytes("24"), Ok(24));
        assert_eq!(parse_event_bytes("1024"), Ok(MAX_EVENT_BYTES));
        assert_eq!(parse_event_bytes("0"), Err(ArgError::NoEventBytes));
        assert_eq!(parse_event_bytes("1025"), Err(ArgError::EventBytesOver));
        assert_eq!(
            parse_event_bytes("99999999999999999999999"),
            Err(ArgError::EventBytesOver)
        );
        assert_eq!(parse_event_bytes("-5"), Err(ArgError::NotEventBytes));
    }

    #[test]
    fn budgets() {
        assert_eq!(parse_budget("1.5").unwrap(), 1.5);
        assert!(parse_budget("0").is_err());
        assert!(parse_budget("-3").is_err());
        assert!(parse_budget("inf").is_err());
        assert!(parse_budget("1e19")
            .unwrap_err()
            .to_string()
            .contains("at most 604800"));
        assert_eq!(parse_budget("604800").unwrap(), MAX_DURATION_S);
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
