//! Shared by the primitive probes (`threads`, `mutex`, `condvar`): where the second
//! thread of a pair sits relative to the first, latency samples → distributions with
//! paired samples, findings in the seeds' words, and bounded waiting.

use crate::clock::{ticks, Clock};
use crate::model::{Distribution, Estimate, Finding, Measurement};
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

/// Chunks in which a primitive probe's variants take turns: each variant's samples
/// are taken in this many chunks, the variants alternating in an order rotated by one
/// per round, so drift during the case hits every variant alike (never one block
/// after another).
pub const CHUNKS: usize = 8;

/// The order in which `variants` variants run in `rounds` rotated rounds: round `r`
/// runs variant `(k + r) % variants` for `k = 0, 1, ...`.
pub fn rotation(variants: usize, rounds: usize) -> Vec<usize> {
    (0..rounds)
        .flat_map(|r| (0..variants).map(move |k| (k + r) % variants))
        .collect()
}

/// One chunk of a paired measurement: (A, B) tick pairs, and why it stopped early.
pub type PairChunk = (Vec<(u64, u64)>, Option<String>);

/// Samples of chunk `round` (of [`CHUNKS`]) when the chunks together take `samples`.
pub fn chunk_len(samples: usize, round: usize) -> usize {
    samples * (round + 1) / CHUNKS - samples * round / CHUNKS
}

/// Run `variants` in [`CHUNKS`] rotated rounds; `run(v, n)` takes a chunk of `n` of
/// variant `v`'s samples (all chunks together: `samples`) and returns them with the
/// reason it stopped early, if it did. The first stop ends all rounds (the budget or
/// a partner that did not answer): every variant then has the rounds it completed.
/// Returns the samples per variant and the stop reason.
pub fn interleaved<T, E>(
    variants: usize,
    samples: usize,
    mut run: impl FnMut(usize, usize) -> Result<(Vec<T>, Option<String>), E>,
) -> Result<(Vec<Vec<T>>, Option<String>), E> {
    let mut out: Vec<Vec<T>> = (0..variants).map(|_| Vec::new()).collect();
    for (i, v) in rotation(variants, CHUNKS).into_iter().enumerate() {
        let n = chunk_len(samples, i / variants.max(1));
        if n == 0 {
            continue;
        }
        let (chunk, stop) = run(v, n)?;
        out[v].extend(chunk);
        if stop.is_some() {
            return Ok((out, stop));
        }
    }
    Ok((out, None))
}

/// The median of the distribution named `name`, with its interval.
pub fn median_of(ds: &[Distribution], name: &str) -> Option<Estimate> {
    ds.iter()
        .find(|d| d.name == name)
        .map(|d| d.summary.median())
}

/// Compare the medians of two distributions (a time or a cost in ns), through their
/// 95 % intervals (`stats::compare_estimates`, conservative: a difference is stated
/// only when the intervals are disjoint and the ratio is beyond the minimum effect).
/// The larger median is named first. `None` when either is missing or not positive.
pub fn compare_dists(
    ds: &[Distribution],
    what: &str,
    a: (&str, &str),
    b: (&str, &str),
    context: Option<String>,
) -> Option<Finding> {
    let (ea, eb) = (median_of(ds, a.1)?, median_of(ds, b.1)?);
    let c = stats::compare_estimates(ea, eb)?;
    Some(crate::analysis::oriented(
        what,
        "ns",
        (a.0, ea),
        (b.0, eb),
        c,
        context,
    ))
}

/// The median of a distribution as a typed value, its mode range (in cycles and ns)
/// as context: "80 % of samples within 38–44 kcycles (15.5–18.0 µs)".
pub fn median_finding(d: &Distribution, clock: &Clock) -> Finding {
    let context = d.mode_range.as_ref().map(|m| {
        let kc = |ns: f64| clock.ns_to_ticks(ns) / 1000.0;
        format!(
            "{:.0} % of samples within {:.1}–{:.1} kcycles ({}–{})",
            m.fraction * 100.0,
            kc(m.low),
            kc(m.high),
            crate::units::fmt_value("ns", m.low),
            crate::units::fmt_value("ns", m.high),
        )
    });
    Finding::Value {
        what: format!("{} (median)", d.name),
        unit: "ns".into(),
        value: d.summary.median(),
        context,
    }
}

/// Compare the relations of one measured quantity: the distributions
/// `{prefix}/{relation}{suffix}` of same CPU and other core, and of other core and
/// SMT sibling or other package where those exist.
pub fn relation_findings(
    ds: &[Distribution],
    what: &str,
    prefix: &str,
    suffix: &str,
) -> Vec<Finding> {
    let name = |rel: Relation| format!("{prefix}/{}{suffix}", rel.name());
    [
        (Relation::OtherCore, Relation::SameCpu),
        (Relation::OtherCore, Relation::SmtSibling),
        (Relation::OtherPackage, Relation::OtherCore),
    ]
    .iter()
    .filter_map(|&(a, b)| {
        compare_dists(
            ds,
            &format!("{what}, by where the partner runs"),
            (a.name(), &name(a)),
            (b.name(), &name(b)),
            None,
        )
    })
    .collect()
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
    fn variants_take_turns_in_rotated_rounds() {
        assert_eq!(rotation(3, 2), vec![0, 1, 2, 1, 2, 0]);
        let mut order = Vec::new();
        let (out, stop) = interleaved::<usize, ()>(2, 300, |v, n| {
            order.push(v);
            Ok((vec![v; n], None))
        })
        .unwrap();
        assert!(stop.is_none());
        assert_eq!(order.len(), 2 * CHUNKS);
        assert!(order.chunks(2).all(|r| r[0] != r[1]));
        assert_eq!((out[0].len(), out[1].len()), (300, 300));
        let (out, stop) = interleaved::<usize, ()>(2, 300, |v, _| {
            Ok((vec![v], (v == 1).then(|| "late".into())))
        })
        .unwrap();
        assert_eq!(
            (out[0].len(), out[1].len(), stop.as_deref()),
            (1, 1, Some("late"))
        );
        assert_eq!((0..CHUNKS).map(|r| chunk_len(5, r)).sum::<usize>(), 5);
    }

    #[test]
    fn relations_differ_only_when_their_intervals_separate() {
        let d = |name: &str, base: f64| {
            stats::distribution(
                name,
                "ns",
                &(0..200).map(|i| base + (i % 10) as f64).collect::<Vec<_>>(),
            )
        };
        let ds = vec![
            d("w/same-cpu/wake", 1000.0),
            d("w/other-core/wake", 3000.0),
            d("w/other-package/wake", 3001.0),
        ];
        let f = relation_findings(&ds, "wake-up", "w", "/wake");
        assert_eq!(f.len(), 2);
        let Finding::Comparison { a, b, outcome, .. } = &f[0] else {
            panic!("{f:?}")
        };
        assert_eq!((a.as_str(), b.as_str()), ("other-core", "same-cpu"));
        assert_eq!(*outcome, crate::model::Outcome::Different);
        let Finding::Comparison { outcome, .. } = &f[1] else {
            panic!("{f:?}")
        };
        assert_ne!(*outcome, crate::model::Outcome::Different);
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
