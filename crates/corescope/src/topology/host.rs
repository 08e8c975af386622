//! Host facts and run-time environment (CPU model, kernel, governor, THP, load).
//!
//! Every read is best-effort: a file that is missing or unreadable, or a value
//! that does not parse, gives `None` (or an empty string), never an error or a
//! panic. Parsing is done by small pure functions, tested on fixed text.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::{CpuMax, EnvInfo, HostInfo};

use super::Topology;

/// How long [`env_info`] samples `/proc/stat` to estimate steal time.
pub const STEAL_SAMPLE: Duration = Duration::from_millis(100);

/// Where the cgroup file systems are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The default CFS bandwidth period (100 ms; Documentation/scheduler/sched-bwc.rst),
/// assumed when `cpu.max` gives a quota alone.
const CPU_MAX_DEFAULT_PERIOD_US: u64 = 100_000;

/// cgroup v1 reports "no limit" as a huge number (`PAGE_COUNTER_MAX` × page size,
/// 9223372036854771712 on 4 KiB pages); anything at or above 2^60 means unlimited.
const CGROUP_V1_UNLIMITED: u64 = 1 << 60;

/// Facts about this host.
pub fn host_info() -> HostInfo {
    let cpuinfo = read("/proc/cpuinfo");
    let mut cpu_model = cpuinfo
        .as_deref()
        .and_then(cpu_model_from_cpuinfo)
        .unwrap_or_default();
    if cpu_model.is_empty() {
        cpu_model = super::discover::hwloc_cpu_model().unwrap_or_default();
    }
    let nominal_hz = read_trim("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|khz| *khz > 0.0)
        .map(|khz| khz * 1e3)
        .or_else(|| ghz_from_model(&cpu_model));
    HostInfo {
        hostname: hostname().unwrap_or_default(),
        cpu_model,
        arch: std::env::consts::ARCH.to_string(),
        os: read("/etc/os-release")
            .as_deref()
            .and_then(pretty_name)
            .or_else(|| uname().map(|u| u.sysname))
            .unwrap_or_default(),
        kernel: uname().map(|u| u.release).unwrap_or_default(),
        virtualized: hypervisor(cpuinfo.as_deref()),
        nominal_hz,
        memory_bytes: read("/proc/meminfo")
            .as_deref()
            .and_then(|m| meminfo_bytes(m, "MemTotal")),
    }
}

/// Conditions right now. Takes about [`STEAL_SAMPLE`] (it samples steal time).
pub fn env_info() -> EnvInfo {
    EnvInfo {
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        // The kernel writes `notsupported` / `notimplemented`; keep words readable.
        smt: read_trim("/sys/devices/system/cpu/smt/control").map(|s| match s.as_str() {
            "notsupported" => "not supported".to_string(),
            "notimplemented" => "not implemented".to_string(),
            _ => s,
        }),
        thp: read("/sys/kernel/mm/transparent_hugepage/enabled")
            .as_deref()
            .and_then(bracketed),
        cpuset: crate::affinity::allowed_current()
            .ok()
            .map(|c| Topology::format_cpu_list(&c))
            .unwrap_or_default(),
        loadavg: read("/proc/loadavg").as_deref().and_then(loadavg),
        steal_fraction: steal_fraction(STEAL_SAMPLE),
        mem_available_bytes: read("/proc/meminfo")
            .as_deref()
            .and_then(|m| meminfo_bytes(m, "MemAvailable")),
        cgroup_memory_limit_bytes: cgroup_memory_limit(),
        target_features: target_features(),
        cgroup_cpu_max: cgroup_cpu_max(),
        isolated_cpus: isolated_cpus("isolated", "isolcpus"),
        nohz_full_cpus: isolated_cpus("nohz_full", "nohz_full"),
        numa_balancing: read_trim("/proc/sys/kernel/numa_balancing").and_then(|s| s.parse().ok()),
    }
}

/// `MemAvailable` from /proc/meminfo, in bytes.
pub fn mem_available_bytes() -> Option<u64> {
    read("/proc/meminfo")
        .as_deref()
        .and_then(|m| meminfo_bytes(m, "MemAvailable"))
}

/// Memory this process's cgroups still allow (limit − usage), the least along
/// the path from its cgroup to the root, with the file it came from; `None`
/// when no cgroup on the path has a limit.
pub fn cgroup_memory_left() -> Option<(u64, String)> {
    let cgroup = read("/proc/self/cgroup")?;
    let root = Path::new(CGROUP_ROOT);
    let (v2, v1) = cgroup_paths(&cgroup, "memory");
    let mut dirs: Vec<(PathBuf, &str, &str, &str)> = Vec::new();
    if let Some(p) = v2 {
        for d in ancestors_within(&v2_root(), &p) {
            dirs.push((d, "memory.max", "memory.current", "cgroup v2 memory.max"));
        }
    }
    if let Some(p) = v1 {
        for d in ancestors_within(&root.join("memory"), &p) {
            dirs.push((
                d,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "cgroup v1 memory.limit_in_bytes",
            ));
        }
    }
    dirs.into_iter()
        .filter_map(|(dir, limit, usage, what)| {
            let limit = read_trim(dir.join(limit)).and_then(|s| parse_limit(&s))?;
            let usage: u64 = read_trim(dir.join(usage))?.parse().ok()?;
            Some((
                limit.saturating_sub(usage),
                format!("{what} of {}", dir.display()),
            ))
        })
        .min_by_key(|(left, _)| *left)
}

/// The tightest CPU bandwidth limit on the path from this process's cgroup to
/// the root (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`).
fn cgroup_cpu_max() -> Option<CpuMax> {
    let cgroup = read("/proc/self/cgroup")?;
    let root = Path::new(CGROUP_ROOT);
    let (v2, v1) = cgroup_paths(&cgroup, "cpu");
    let mut limits = Vec::new();
    if let Some(p) = v2 {
        for dir in ancestors_within(&v2_root(), &p) {
            limits.extend(read_trim(dir.join("cpu.max")).and_then(|s| parse_cpu_max(&s)));
        }
    }
    if let Some(p) = v1 {
        for base in ["cpu,cpuacct", "cpu"] {
            for dir in ancestors_within(&root.join(base), &p) {
                let quota = read_trim(dir.join("cpu.cfs_quota_us"));
                let period = read_trim(dir.join("cpu.cfs_period_us"));
                if let (Some(q), Some(p)) = (quota, period) {
                    limits.extend(parse_cpu_max(&format!("{q} {p}")));
                }
            }
        }
    }
    limits
        .into_iter()
        .min_by(|a, b| a.cpus().total_cmp(&b.cpus()))
}

/// Isolated CPUs from `/sys/devices/system/cpu/<sys_file>`, else from the kernel
/// command line's `<param>=`; `Some("")` when the kernel says none.
fn isolated_cpus(sys_file: &str, param: &str) -> Option<String> {
    if let Some(s) = read(Path::new("/sys/devices/system/cpu").join(sys_file)) {
        return Some(s.trim().to_string());
    }
    read("/proc/cmdline").map(|c| cmdline_cpus(&c, param).unwrap_or_default())
}

/// Rust target features this binary was compiled with, from a fixed list.
pub fn target_features() -> Vec<String> {
    let mut v = Vec::new();
    let mut add = |on: bool, name: &str| {
        if on {
            v.push(name.to_string());
        }
    };
    add(cfg!(target_feature = "sse2"), "sse2");
    add(cfg!(target_feature = "sse4.2"), "sse4.2");
    add(cfg!(target_feature = "avx"), "avx");
    add(cfg!(target_feature = "avx2"), "avx2");
    add(cfg!(target_feature = "fma"), "fma");
    add(cfg!(target_feature = "avx512f"), "avx512f");
    add(cfg!(target_feature = "neon"), "neon");
    add(cfg!(target_feature = "lse"), "lse");
    v
}

// ---------------------------------------------------------------- reading

/// A whole file, or `None`.
fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A file's trimmed content, `None` if missing or empty.
fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    read(path)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `gethostname(2)`.
fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for `buf.len()` bytes; gethostname writes at most
    // that many and we read only up to the first NUL (or the whole buffer).
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast::<libc::c_char>(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let s = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!s.is_empty()).then_some(s)
}

/// Fields of `uname(2)` that we use.
struct Uname {
    sysname: String,
    release: String,
}

/// `uname(2)`.
fn uname() -> Option<Uname> {
    // SAFETY: `utsname` is plain data (arrays of c_char); all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `utsname` that outlives the call.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| -> String {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(Uname {
        sysname: field(&u.sysname),
        release: field(&u.release),
    })
}

/// The hypervisor vendor, if this machine is virtualised.
fn hypervisor(cpuinfo: Option<&str>) -> Option<String> {
    if let Some(t) = read_trim("/sys/hypervisor/type") {
        return Some(t);
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = cpuid_hypervisor() {
        return Some(v);
    }
    let flagged = cpuinfo.is_some_and(|c| {
        c.lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
    });
    flagged.then(|| "unknown hypervisor".to_string())
}

/// The hypervisor vendor from CPUID (leaf 1 ECX bit 31, then leaf 0x4000_0000).
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    use core::arch::x86_64::__cpuid;
    /// CPUID.1:ECX bit 31: "hypervisor present" (reserved 0 on bare metal).
    const HYPERVISOR_BIT: u32 = 1 << 31;
    // `__cpuid` is an unsafe fn on older toolchains and safe on newer ones.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and only reads identification data.
    let leaf1 = unsafe { __cpuid(1) };
    if leaf1.ecx & HYPERVISOR_BIT == 0 {
        return None;
    }
    #[allow(unused_unsafe)]
    // SAFETY: as above; leaf 0x4000_0000 is reserved for hypervisors and
    // returns zeros or the vendor signature.
    let hv = unsafe { __cpuid(0x4000_0000) };
    let mut sig = Vec::with_capacity(12);
    for r in [hv.ebx, hv.ecx, hv.edx] {
        sig.extend_from_slice(&r.to_le_bytes());
    }
    Some(hypervisor_name(&sig))
}

/// Vendor name for a CPUID hypervisor signature (12 bytes).
fn hypervisor_name(sig: &[u8]) -> String {
    let s: String = String::from_utf8_lossy(sig)
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .into();
    match s.as_str() {
        "KVMKVMKVM" => "KVM".into(),
        "Microsoft Hv" => "Hyper-V".into(),
        "VMwareVMware" => "VMware".into(),
        "XenVMMXenVMM" => "Xen".into(),
        "TCGTCGTCGTCG" => "QEMU (TCG)".into(),
        "bhyve bhyve" => "bhyve".into(),
        "lrpepyh  vr" | "prl hyperv" => "Parallels".into(),
        "ACRNACRNACRN" => "ACRN".into(),
        "VBoxVBoxVBox" => "VirtualBox".into(),
        "" => "unknown hypervisor".into(),
        other if other.chars().all(|c| c.is_ascii_graphic() || c == ' ') => other.into(),
        _ => "unknown hypervisor".into(),
    }
}

/// Transparent huge pages mode from /sys (`always`, `madvise`, `never`), if readable.
pub fn thp_mode() -> Option<String> {
    let s = read("/sys/kernel/mm/transparent_hugepage/enabled")?;
    let start = s.find('[')?;
    let end = s[start..].find(']')?;
    Some(s[start + 1..start + end].to_string())
}

/// Whether the TSC is invariant (Linux `constant_tsc` and `nonstop_tsc` flags of
/// /proc/cpuinfo); `None` off x86_64 or when unreadable.
pub fn invariant_tsc() -> Option<bool> {
    if !cfg!(target_arch = "x86_64") {
        return None;
    }
    let cpuinfo = read("/proc/cpuinfo")?;
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags"))?;
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    Some(has("constant_tsc") && has("nonstop_tsc"))
}

/// `kernel.perf_event_paranoid`, as the kernel writes it.
pub fn perf_event_paranoid() -> Option<String> {
    read_trim("/proc/sys/kernel/perf_event_paranoid")
}

/// The system limits on creating threads, as read now (`None` where unreadable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadLimits {
    /// Scheduling entities that exist now ("running/total" of /proc/loadavg).
    pub tasks_now: usize,
    /// Memory mappings of this process now (lines of /proc/self/maps).
    pub maps_now: usize,
    /// `vm.max_map_count`.
    pub max_map_count: Option<usize>,
    /// `kernel.threads-max`.
    pub threads_max: Option<usize>,
    /// `kernel.pid_max`.
    pub pid_max: Option<usize>,
    /// `RLIMIT_NPROC` (ulimit -u), when finite.
    pub nproc: Option<usize>,
    /// `RLIMIT_AS` (ulimit -v) in bytes, when finite.
    pub address_space_bytes: Option<usize>,
    /// `MemAvailable` in bytes.
    pub mem_available_bytes: Option<usize>,
}

/// Read [`ThreadLimits`] now.
pub fn thread_limits() -> ThreadLimits {
    let num = |p: &str| -> Option<usize> { read_trim(p)?.parse().ok() };
    let rlimit = |res| {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit into the struct we own.
        let ok = unsafe { libc::getrlimit(res, &mut r) } == 0;
        (ok && r.rlim_cur != libc::RLIM_INFINITY)
            .then(|| usize::try_from(r.rlim_cur).unwrap_or(usize::MAX))
    };
    ThreadLimits {
        tasks_now: read("/proc/loadavg")
            .and_then(|l| l.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok())
            .unwrap_or(0),
        maps_now: read("/proc/self/maps").map_or(0, |m| m.lines().count()),
        max_map_count: num("/proc/sys/vm/max_map_count"),
        threads_max: num("/proc/sys/kernel/threads-max"),
        pid_max: num("/proc/sys/kernel/pid_max"),
        nproc: rlimit(libc::RLIMIT_NPROC),
        address_space_bytes: rlimit(libc::RLIMIT_AS),
        mem_available_bytes: mem_available_bytes()
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
    }
}

/// Steal and total jiffies since boot (the aggregate `cpu` line of `/proc/stat`):
/// two readings give the steal share between them.
pub fn cpu_jiffies() -> Option<(u64, u64)> {
    read("/proc/stat").as_deref().and_then(stat_steal_total)
}

/// The text of `/proc/stat` now (`state::Snapshot` parses its `cpu` line).
pub fn proc_stat_text() -> Option<String> {
    read("/proc/stat")
}

/// The text of `/proc/pressure/cpu` now (pressure stall information; absent on
/// kernels built without PSI).
pub fn cpu_pressure_text() -> Option<String> {
    read("/proc/pressure/cpu")
}

/// The 1, 5 and 15-minute load averages now.
pub fn loadavg_now() -> Option<[f64; 3]> {
    read("/proc/loadavg").as_deref().and_then(loadavg)
}

/// `/proc/stat` aggregate `cpu` line: (steal, total) jiffies.
fn steal_fraction(sample: Duration) -> Option<f64> {
    let a = read("/proc/stat").as_deref().and_then(stat_steal_total)?;
    std::thread::sleep(sample);
    let b = read("/proc/stat").as_deref().and_then(stat_steal_total)?;
    steal_between(a, b)
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), the smallest along the path to the root.
fn cgroup_memory_limit() -> Option<u64> {
    let cgroup = read("/proc/self/cgroup")?;
    let root = Path::new(CGROUP_ROOT);
    let (v2, v1) = cgroup_paths(&cgroup, "memory");
    let mut limits = Vec::new();
    if let Some(p) = v2 {
        for dir in ancestors_within(&v2_root(), &p) {
            if let Some(l) = read_trim(dir.join("memory.max")).and_then(|s| parse_limit(&s)) {
                limits.push(l);
            }
        }
    }
    if let Some(p) = v1 {
        for dir in ancestors_within(&root.join("memory"), &p) {
            if let Some(l) =
                read_trim(dir.join("memory.limit_in_bytes")).and_then(|s| parse_limit(&s))
            {
                limits.push(l);
            }
        }
    }
    limits.into_iter().min()
}

/// Where the cgroup v2 hierarchy is mounted: `/sys/fs/cgroup`, or
/// `/sys/fs/cgroup/unified` on hosts that mount v1 controllers beside it (systemd's
/// hybrid mode).
fn v2_root() -> PathBuf {
    let hybrid = Path::new(CGROUP_ROOT).join("unified");
    if hybrid.join("cgroup.controllers").exists() {
        hybrid
    } else {
        PathBuf::from(CGROUP_ROOT)
    }
}

/// `base/a/b/c`, `base/a/b`, `base/a`, `base` for cgroup path `/a/b/c`.
fn ancestors_within(base: &Path, cgroup_path: &str) -> Vec<PathBuf> {
    let parts: Vec<&str> = cgroup_path
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    (0..=parts.len())
        .rev()
        .map(|n| parts[..n].iter().fold(base.to_path_buf(), |d, p| d.join(p)))
        .collect()
}

// ---------------------------------------------------------------- parsing (pure)

/// `model name` (x86), else `Model`/`cpu model`/`Processor` (ARM, MIPS, ...).
fn cpu_model_from_cpuinfo(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "cpu model", "Processor", "cpu"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

/// `... @ 2.40GHz` in a model name → 2.4e9.
fn ghz_from_model(model: &str) -> Option<f64> {
    let (_, after) = model.rsplit_once('@')?;
    let t = after.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("GHz") {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix("MHz") {
        (n, 1e6)
    } else {
        return None;
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0)
        .map(|v| v * mult)
}

/// `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"` → `Debian GNU/Linux 12 (bookworm)`.
fn pretty_name(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|l| {
        let v = l.strip_prefix("PRETTY_NAME=")?.trim();
        let v = v.trim_matches('"').trim_matches('\'').trim();
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// `always [madvise] never` → `madvise`.
pub(crate) fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')? + 1;
    let end = start + s[start..].find(']')?;
    Some(s[start..end].to_string()).filter(|v| !v.is_empty())
}

/// A `/proc/meminfo` field (`MemTotal:  16318412 kB`) in bytes.
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut it = v.split_whitespace();
        let n: u64 = it.next()?.parse().ok()?;
        match it.next() {
            Some("kB") => n.checked_mul(1024),
            None => Some(n),
            _ => None,
        }
    })
}

/// `/proc/loadavg` → the three load averages.
pub(crate) fn loadavg(s: &str) -> Option<[f64; 3]> {
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The aggregate `cpu` line of `/proc/stat` → (steal, total) jiffies. `total` sums
/// user, nice, system, idle, iowait, irq, softirq and steal (guest time is
/// already counted in user). `None` if the kernel does not report steal.
pub(crate) fn stat_steal_total(stat: &str) -> Option<(u64, u64)> {
    let f = stat_cpu_fields(stat)?;
    Some((f[7], f.iter().sum()))
}

/// The first eight fields of the aggregate `cpu` line of `/proc/stat` (user, nice,
/// system, idle, iowait, irq, softirq, steal, in jiffies); `None` if the kernel
/// does not report steal.
pub fn stat_cpu_fields(stat: &str) -> Option<[u64; 8]> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|x| x.parse().ok())
        .collect();
    fields.get(..8)?.try_into().ok()
}

/// Steal share between two samples, `None` when no time passed.
fn steal_between(a: (u64, u64), b: (u64, u64)) -> Option<f64> {
    let steal = b.0.checked_sub(a.0)?;
    let total = b.1.checked_sub(a.1)?;
    (total > 0).then(|| steal as f64 / total as f64)
}

/// `memory.max` / `memory.limit_in_bytes` value → bytes; `max` or huge → `None`.
fn parse_limit(s: &str) -> Option<u64> {
    if s == "max" {
        return None;
    }
    s.parse::<u64>().ok().filter(|&v| v < CGROUP_V1_UNLIMITED)
}

/// `cpu.max` (`200000 100000`, `max 100000`) → the limit; `max` → `None`.
/// A v1 quota of `-1` (no limit) is given as `-1 <period>` and also gives `None`.
fn parse_cpu_max(s: &str) -> Option<CpuMax> {
    let mut it = s.split_whitespace();
    let quota_us: u64 = it.next()?.parse().ok()?;
    let period_us: u64 = it
        .next()
        .map_or(Some(CPU_MAX_DEFAULT_PERIOD_US), |p| p.parse().ok())?;
    (quota_us > 0 && period_us > 0).then_some(CpuMax {
        quota_us,
        period_us,
    })
}

/// The CPU list of a kernel parameter such as `isolcpus=domain,managed_irq,2-5`
/// or `nohz_full=2-5` (flags before the list are dropped).
fn cmdline_cpus(cmdline: &str, param: &str) -> Option<String> {
    let value = cmdline
        .split_whitespace()
        .filter_map(|w| w.strip_prefix(param)?.strip_prefix('='))
        .next_back()?;
    let cpus: Vec<&str> = value
        .split(',')
        .filter(|item| item.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    Some(cpus.join(","))
}

/// `/proc/self/cgroup` → (v2 path, v1 path of `controller`).
fn cgroup_paths(s: &str, controller: &str) -> (Option<String>, Option<String>) {
    let mut v2 = None;
    let mut v1 = None;
    for line in s.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if id == "0" && ctrls.is_empty() {
            v2 = Some(path.to_string());
        } else if ctrls.split(',').any(|c| c == controller) {
            v1 = Some(path.to_string());
        }
    }
    (v2, v1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let cpuinfo = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\nflags\t: fpu hypervisor\n";
        let model = cpu_model_from_cpuinfo(cpuinfo).unwrap();
        assert_eq!(model, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz");
        assert_eq!(ghz_from_model(&model), Some(2.4e9));
        assert_eq!(ghz_from_model("AMD EPYC"), None);
        assert_eq!(cpu_model_from_cpuinfo("processor : 0\n"), None);
        assert_eq!(
            pretty_name("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("never"), None);
        let mi = "MemTotal:       16318412 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(meminfo_bytes(mi, "MemTotal"), Some(16318412 * 1024));
        assert_eq!(meminfo_bytes(mi, "MemAvailable"), Some(1024000));
        assert_eq!(meminfo_bytes(mi, "SwapTotal"), None);
        assert_eq!(loadavg("0.50 1.00 2.25 1/100 42\n"), Some([0.5, 1.0, 2.25]));
        assert_eq!(loadavg("garbage"), None);
    }

    #[test]
    fn steal_from_stat() {
        let a = stat_steal_total("cpu  100 0 50 800 10 0 5 20 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(a, (20, 985));
        let b = (30, 1085);
        assert_eq!(steal_between(a, b), Some(0.1));
        assert_eq!(steal_between(a, a), None);
        assert_eq!(stat_steal_total("cpu  1 2 3\n"), None);
    }

    #[test]
    fn cgroups_and_limits() {
        let (v2, v1) = cgroup_paths("4:memory:/a/b\n0::/user.slice\n", "memory");
        assert_eq!(v2.as_deref(), Some("/user.slice"));
        assert_eq!(v1.as_deref(), Some("/a/b"));
        assert_eq!(parse_limit("max"), None);
        assert_eq!(parse_limit("9223372036854771712"), None);
        assert_eq!(parse_limit("1073741824"), Some(1 << 30));
        let dirs = ancestors_within(Path::new("/sys/fs/cgroup"), "/a/b");
        assert_eq!(dirs[0], Path::new("/sys/fs/cgroup/a/b"));
        assert_eq!(dirs[2], Path::new("/sys/fs/cgroup"));
        assert_eq!(ancestors_within(Path::new("/r"), "/../x").len(), 2);
        let (_, v1) = cgroup_paths("5:cpu,cpuacct:/job\n4:memory:/a\n", "cpu");
        assert_eq!(v1.as_deref(), Some("/job"));
    }

    #[test]
    fn cpu_limits_and_isolated_cpus() {
        let m = parse_cpu_max("150000 100000").unwrap();
        assert_eq!((m.quota_us, m.period_us), (150_000, 100_000));
        assert_eq!(m.cpus(), 1.5);
        assert_eq!(parse_cpu_max("max 100000"), None);
        assert_eq!(parse_cpu_max("-1 100000"), None);
        assert_eq!(parse_cpu_max("50000").map(|m| m.period_us), Some(100_000));
        let cmd = "BOOT_IMAGE=/vmlinuz ro isolcpus=domain,managed_irq,2-5,8 nohz_full=2-5 quiet";
        assert_eq!(cmdline_cpus(cmd, "isolcpus").as_deref(), Some("2-5,8"));
        assert_eq!(cmdline_cpus(cmd, "nohz_full").as_deref(), Some("2-5"));
        assert_eq!(cmdline_cpus("ro quiet", "isolcpus"), None);
        assert_eq!(cmdline_cpus("xisolcpus=3", "isolcpus"), None);
    }

    #[test]
    fn hypervisor_signatures() {
        assert_eq!(hypervisor_name(b"KVMKVMKVM\0\0\0"), "KVM");
        assert_eq!(hypervisor_name(b"Microsoft Hv"), "Hyper-V");
        assert_eq!(hypervisor_name(&[0; 12]), "unknown hypervisor");
    }

    #[test]
    fn live_reads_do_not_panic() {
        let h = host_info();
        assert!(!h.arch.is_empty());
        let e = env_info();
        assert!(e.steal_fraction.is_none_or(|s| (0.0..=1.0).contains(&s)));
        assert!(e.cgroup_cpu_max.is_none_or(|m| m.cpus() > 0.0));
        assert!(mem_available_bytes().is_some_and(|b| b > 0));
        if let Some((left, from)) = cgroup_memory_left() {
            assert!(from.starts_with("cgroup v"), "{left} {from}");
        }
        let cpus = crate::affinity::allowed_current().ok().unwrap_or_default();
        assert!(!cpus.is_empty());
    }
}
