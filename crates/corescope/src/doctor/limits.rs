//! The limits that turn what a check read into its verdict.

/// run one thread per CPU and share them with that load. (Half a CPU's worth:
/// pyperf's `system show` warns on any visible load; a loaded 2-CPU VM idles near 0.1.)
pub const LOAD_BLURS_PER_CPU: f64 = 0.5;
/// Steal above this share of CPU time (since boot, or in the sampled window) blurs:
/// any steal means the host ran something else on the cores behind these vCPUs.
pub const STEAL_BLURS: f64 = 0.0;
/// `perf_event_paranoid` above this keeps unprivileged users from any
/// `perf_event_open` (Debian's and Android's level 3; the kernel knows -1 to 2,
/// Documentation/admin-guide/sysctl/kernel.rst).
pub const PARANOID_COUNTERS_OFF: i64 = 2;
/// The value `--tune` writes: user-space counters of one's own threads allowed.
pub(super) const PARANOID_TUNED: &str = "2";
/// Round trips of a cache line below this are most likely between two hardware
/// threads of one host core (this VM: 63 ns in that state, see `drift.rs`; the
/// SMT siblings of current x86 cores measure 40-90 ns in `c2c`).
pub const SAME_CORE_NS: f64 = 90.0;
/// Below this (and above [`SAME_CORE_NS`]), two cores sharing a last-level cache;
/// above it, farther (another die or socket). This VM's other states: 326 and 480 ns.
pub const SAME_CACHE_NS: f64 = 250.0;
