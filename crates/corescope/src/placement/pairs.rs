//! Shared by the primitive probes (`threads`, `mutex`, `condvar`): where the second
//! thread of a pair sits relative to the first, latency samples → distributions with
//! paired samples, findings in the seeds' words, and bounded waiting.

use crate::clock::{ticks, Clock};
use crate::model::{Distribution, Measurement};
use crate::stats;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};

/// Where the second thread of a pair runs, relative to the first.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The same CPU.
    SameCpu,
    /// Another hardware thread of the same core.
    SmtSibling,
    /// Another core (of the same package where there is one).
    OtherCore,
    /// A CPU of another package.
    OtherPackage,
    /// Not pinned: the OS decides.
    Unpinned,
}

impl Relation {
    /// Name in series and distributions.
    pub fn name(self) -> &'static str {
        match self {
            Relation::SameCpu => "same-cpu",
            Relation::SmtSibling => "smt-sibling",
            Relation::OtherCore => "other-core",
            Relation::OtherPackage => "other-package",
            Relation::Unpinned => "unpinned",
        }
    }

    /// All relations, nearest first.
    pub const ALL: [Relation; 5] = [
        Relation::SameCpu,
        Relation::SmtSibling,
        Relation::OtherCore,
        Relation::OtherPackage,
        Relation::Unpinned,
    ];
}

/// CPUs of a pair: `(first, second)`; `None` = unpinned.
pub type PairCpus = (Option<u32>, Option<u32>);

/// The pair for each relation the topology has, and for each it lacks the reason.
pub fn pairs(topo: &Topology) -> Vec<(Relation, Result<PairCpus, String>)> {
    let allowed: Vec<_> = topo.allowed_pus().collect();
    let Some(first) = allowed.first() else {
        return Relation::ALL
            .iter()
            .map(|&r| (r, Err("no allowed CPU".to_string())))
            .collect();
    };
    let a = first.os_index;
    Relation::ALL
        .iter()
        .map(|&r| {
            let found = match r {
                Relation::SameCpu => Ok(Some(a)),
                Relation::Unpinned => Ok(None),
                Relation::SmtSibling => allowed
                    .iter()
                    .find(|p| p.os_index != a && p.core == first.core && p.package == first.package)
                    .map(|p| Some(p.os_index))
                    .ok_or_else(|| "no SMT sibling (one hardware thread per core)".to_string()),
                Relation::OtherCore => allowed
                    .iter()
                    .find(|p| p.package == first.package && p.core != first.core)
                    .or_else(|| allowed.iter().find(|p| p.core != first.core))
                    .map(|p| Some(p.os_index))
                    .ok_or_else(|| "only one core allowed".to_string()),
                Relation::OtherPackage => allowed
                    .iter()
                    .find(|p| p.package != first.package)
                    .map(|p| Some(p.os_index))
                    .ok_or_else(|| "one package".to_string()),
            };
            (
                r,
                found.map(|b| {
                    (
                        if r == Relation::Unpinned {
                            None
                        } else {
                            Some(a)
                        },
                        b,
                    )
                }),
            )
        })
        .collect()
}

/// Samples per pair for a profile (seed 000: 10^5 at full size).
pub fn samples(profile: crate::model::Profile) -> usize {
    profile.pick(300, 5_000, 100_000)
}

/// A distribution in ns from tick samples, with its cycle-based mode range kept in
/// the name's finding by [`mode_finding`].
pub fn dist_ns(name: &str, clock: &Clock, tick_samples: &[u64]) -> Distribution {
    let ns: Vec<f64> = tick_samples.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    stats::distribution(name, "ns", &ns)
}

/// Two paired distributions (A and B of the same samples): B keeps the pairs (A, B).
pub fn paired(
    a_name: &str,
    b_name: &str,
    clock: &Clock,
    a: &[u64],
    b: &[u64],
) -> [Distribution; 2] {
    let da = dist_ns(a_name, clock, a);
    let mut db = dist_ns(b_name, clock, b);
    let an: Vec<f64> = a.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    let bn: Vec<f64> = b.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    db.pairs = stats::downsample_pairs(&an, &bn, stats::MAX_PAIRS);
    db.paired_with = Some(a_name.to_string());
    [da, db]
}

/// "80 % of samples lie within 38–44 kcycles (15.5–18.0 µs)".
pub fn mode_finding(d: &Distribution, clock: &Clock) -> Option<String> {
    let m = d.mode_range.as_ref()?;
    let kc = |ns: f64| clock.ns_to_ticks(ns) / 1000.0;
    Some(format!(
        "{}: {:.0} % of samples within {:.1}–{:.1} kcycles ({}–{}), median {}",
        d.name,
        m.fraction * 100.0,
        kc(m.low),
        kc(m.high),
        crate::units::fmt_value("ns", m.low),
        crate::units::fmt_value("ns", m.high),
        crate::units::fmt_value("ns", d.summary.p50),
    ))
}

/// Warn when the median sample is shorter than 100 timer steps.
pub fn resolution_warning(d: &Distribution, clock: &Clock) -> Option<String> {
    let step = clock.info.step_ns;
    (d.summary.count > 0 && d.summary.p50 < 100.0 * step).then(|| {
        format!(
            "{}: median {} is shorter than 100× the timer step ({}): read it as an upper bound",
            d.name,
            crate::units::fmt_value("ns", d.summary.p50),
            crate::units::fmt_value("ns", step)
        )
    })
}

/// Push distributions into a measurement with their resolution warnings.
pub fn push_dists(m: &mut Measurement, clock: &Clock, ds: impl IntoIterator<Item = Distribution>) {
    for d in ds {
        if let Some(w) = resolution_warning(&d, clock) {
            m.warnings.push(w);
        }
        m.distributions.push(d);
    }
}

/// Spin (yielding the CPU) until `done()` or until `limit_ticks` pass; false on timeout.
/// Yielding lets a partner pinned to the same CPU run.
pub fn wait_until(limit_ticks: u64, mut done: impl FnMut() -> bool) -> bool {
    let start = ticks();
    let mut n = 0u32;
    loop {
        if done() {
            return true;
        }
        n = n.wrapping_add(1);
        if n % 64 == 0 {
            if ticks().wrapping_sub(start) > limit_ticks {
                return false;
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Threads of this process right now (`Threads:` of /proc/self/status).
pub fn thread_count() -> Option<usize> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

/// Findings comparing relations of one measured quantity: "wake-up on other-core costs
/// 12× same-cpu (28 µs vs 2.3 µs median)".
pub fn relation_findings(ds: &[Distribution], what: &str, suffix: &str) -> Vec<String> {
    let pick = |rel: &str| {
        ds.iter()
            .find(|d| d.name.contains(&format!("/{rel}/")) && d.name.ends_with(suffix))
            .map(|d| d.summary.p50)
    };
    let mut out = Vec::new();
    if let (Some(same), Some(other)) = (pick("same-cpu"), pick("other-core")) {
        if same > 0.0 {
            out.push(format!(
                "{what}: other core {} vs same CPU {} median ({:.1}×)",
                crate::units::fmt_value("ns", other),
                crate::units::fmt_value("ns", same),
                other / same
            ));
        }
    }
    out
}

/// A `pthread_mutex_t` (default kind) in a stable place, shared by reference.
pub struct PthreadMutex(std::cell::UnsafeCell<libc::pthread_mutex_t>);

// SAFETY: a pthread mutex is made to be used from several threads at once; it never
// moves (callers keep it boxed or borrowed).
unsafe impl Sync for PthreadMutex {}

impl PthreadMutex {
    /// A new, unlocked mutex.
    pub fn new() -> Box<Self> {
        Box::new(Self(std::cell::UnsafeCell::new(
            libc::PTHREAD_MUTEX_INITIALIZER,
        )))
    }
    /// Lock (blocking in the kernel when held).
    pub fn lock(&self) {
        // SAFETY: the mutex is initialised and lives as long as `self`.
        unsafe { libc::pthread_mutex_lock(self.0.get()) };
    }
    /// Try to lock without blocking.
    pub fn try_lock(&self) -> bool {
        // SAFETY: as in `lock`.
        unsafe { libc::pthread_mutex_trylock(self.0.get()) == 0 }
    }
    /// Unlock (the caller holds it).
    pub fn unlock(&self) {
        // SAFETY: as in `lock`; callers unlock only what they locked.
        unsafe { libc::pthread_mutex_unlock(self.0.get()) };
    }
    /// The raw pointer, for `pthread_cond_*`.
    pub fn raw(&self) -> *mut libc::pthread_mutex_t {
        self.0.get()
    }
}

/// A `pthread_cond_t` (default attributes) in a stable place.
pub struct PthreadCond(std::cell::UnsafeCell<libc::pthread_cond_t>);

// SAFETY: condition variables are made to be shared between threads; it never moves.
unsafe impl Sync for PthreadCond {}

impl PthreadCond {
    /// A new condition variable.
    pub fn new() -> Box<Self> {
        Box::new(Self(std::cell::UnsafeCell::new(
            libc::PTHREAD_COND_INITIALIZER,
        )))
    }
    /// Wait at most `ms` milliseconds (CLOCK_REALTIME deadline, the default).
    pub fn wait_ms(&self, m: &PthreadMutex, ms: u64) {
        // SAFETY: timespec is plain data filled by clock_gettime.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: ts is valid for writing.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let ns = ts.tv_nsec as u64 + ms * 1_000_000;
        ts.tv_sec += (ns / 1_000_000_000) as libc::time_t;
        ts.tv_nsec = (ns % 1_000_000_000) as _;
        // SAFETY: both objects are initialised; the caller holds `m`.
        unsafe { libc::pthread_cond_timedwait(self.0.get(), m.raw(), &ts) };
    }
    /// Wake one waiter.
    pub fn signal(&self) {
        // SAFETY: initialised.
        unsafe { libc::pthread_cond_signal(self.0.get()) };
    }
    /// Wake all waiters.
    pub fn broadcast(&self) {
        // SAFETY: initialised.
        unsafe { libc::pthread_cond_broadcast(self.0.get()) };
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: nobody holds or waits on it any more (it is being dropped).
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

impl Drop for PthreadCond {
    fn drop(&mut self) {
        // SAFETY: nobody waits on it any more.
        unsafe { libc::pthread_cond_destroy(self.0.get()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_follow_the_topology() {
        // 2 packages × 2 cores × 2 hardware threads.
        let topo = crate::topology::from_synthetic("pack:2 core:2 pu:2").unwrap();
        let p = pairs(&topo);
        let get = |r: Relation| p.iter().find(|(x, _)| *x == r).unwrap().1.clone();
        let first = topo.pus[0].os_index;
        assert_eq!(get(Relation::SameCpu).unwrap(), (Some(first), Some(first)));
        let (_, sib) = get(Relation::SmtSibling).unwrap();
        let sib = topo.pu(sib.unwrap()).unwrap();
        assert_eq!(
            (sib.package, sib.core),
            (topo.pus[0].package, topo.pus[0].core)
        );
        let (_, oc) = get(Relation::OtherCore).unwrap();
        let oc = topo.pu(oc.unwrap()).unwrap();
        assert!(oc.core != topo.pus[0].core && oc.package == topo.pus[0].package);
        let (_, op) = get(Relation::OtherPackage).unwrap();
        assert_ne!(topo.pu(op.unwrap()).unwrap().package, topo.pus[0].package);
        assert_eq!(get(Relation::Unpinned).unwrap(), (None, None));

        // One package, no SMT: those relations say why they are missing.
        let small = crate::topology::from_synthetic("core:2 pu:1").unwrap();
        let p = pairs(&small);
        let get = |r: Relation| p.iter().find(|(x, _)| *x == r).unwrap().1.clone();
        assert!(get(Relation::SmtSibling).unwrap_err().contains("SMT"));
        assert!(get(Relation::OtherPackage)
            .unwrap_err()
            .contains("one package"));
        assert!(get(Relation::OtherCore).is_ok());
    }

    #[test]
    fn waiting_is_bounded() {
        assert!(wait_until(u64::MAX, || true));
        assert!(!wait_until(1000, || false));
    }

    #[test]
    fn the_thread_count_is_readable() {
        assert!(thread_count().unwrap() >= 1);
    }
}
