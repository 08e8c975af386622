//! Measuring `pool`'s kernels: an FFT size on one runtime (given up when the size
//! below took too long, stopped at its deadline), an FFT with a sequential cutoff,
//! a recursive matmul; every result checked, each case's samples returned.

use super::error::PoolFailure;
use super::limits::{bound_stop, Limits};
use super::runtime::{executor, pool_for, Exec};
use crate::counters::SharedCounters;
use crate::model::{Measurement, Point, SizeStop, Table, Warning};
use crate::probes::ProbeError;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;
use taskpool::fft::{dft_reference, fft, fft_with_cutoff, max_abs_error, test_signal, Complex};
use taskpool::matmul::{rmatmul, Matrix};
use taskpool::{Executor, Stop};

/// Sizes up to this are checked against the direct DFT.
pub const CHECK_FFT_MAX_LOG2: u32 = 10;
/// Largest FFT error accepted against the direct DFT.
pub const FFT_TOLERANCE: f64 = 1e-6;
/// A sample of a short transform repeats it until it lasts this long (the time per
/// call is the sample), so timer resolution and wake-up costs stay small.
pub const MIN_SAMPLE_S: f64 = 0.002;
/// Entries of each rmatmul product checked against a dot product, every run.
pub const CHECKED_ENTRIES: usize = 16;

/// How far a kernel got before its deadline, in words.
fn progress(stop: &Stop) -> String {
    format!(
        "stopped at its deadline after {} families; {} abandoned",
        stop.families_run(),
        stop.families_abandoned()
    )
}

thread_local! {
    /// Per FFT executor and size, the latest time per call in this run
    /// (`f64::INFINITY` for a size stopped at its deadline or given up): the next
    /// size looks at the one below it, whenever it runs (the epochs of a run
    /// measure every size again, minutes later). `plan` clears it.
    static FFT_TIMES_S: RefCell<Vec<(Exec, u32, f64)>> = const { RefCell::new(Vec::new()) };
}

/// Forgets every FFT time of this run (`plan`).
pub(super) fn clear_fft_times() {
    FFT_TIMES_S.with(|l| l.borrow_mut().clear());
}

/// The latest time per call of `exec` at size `log2` (0 before any).
pub(super) fn fft_time_s(exec: Exec, log2: u32) -> f64 {
    FFT_TIMES_S.with(|l| {
        l.borrow()
            .iter()
            .find(|(e, k, _)| *e == exec && *k == log2)
            .map_or(0.0, |x| x.2)
    })
}

pub(super) fn set_fft_time_s(exec: Exec, log2: u32, secs: f64) {
    FFT_TIMES_S.with(|l| {
        let mut l = l.borrow_mut();
        l.retain(|(e, k, _)| !(*e == exec && *k == log2));
        l.push((exec, log2, secs));
    });
}

/// Time of one call of `f`, or the mean over as many calls as make the sample last
/// [`MIN_SAMPLE_S`]. The first error stops it.
fn time_per_call<E: Into<ProbeError>>(
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<f64, ProbeError> {
    let t0 = Instant::now();
    let mut calls = 0u32;
    loop {
        f().map_err(Into::into)?;
        calls += 1;
        let s = t0.elapsed().as_secs_f64();
        if s >= MIN_SAMPLE_S {
            return Ok(s / calls as f64);
        }
    }
}

/// How far a kernel got before its deadline, as data.
fn deadline_stop(stop: &Stop) -> SizeStop {
    SizeStop::Deadline {
        families_run: stop.families_run(),
        families_abandoned: stop.families_abandoned(),
    }
}

/// How a size stopped, as the probe's table of given-up sizes says it (the
/// report's warning says it in the same words: `render::warning_words`).
fn stop_words(how: &SizeStop, log2: u32) -> String {
    let below = log2.saturating_sub(1);
    match how {
        SizeStop::BelowTooLong {
            below_s,
            case_budget_s,
        } => format!("size {below} took {below_s:.2} s of a {case_budget_s:.0} s case budget"),
        SizeStop::BelowStopped => {
            format!("size {below} was stopped (at its deadline or its thread bound) or not run")
        }
        SizeStop::Deadline {
            families_run,
            families_abandoned,
        } => format!(
            "stopped at its deadline after {families_run} families; {families_abandoned} abandoned"
        ),
        SizeStop::ThreadBound { max_threads, bound } => format!(
            "stopped at the safety bound: it wanted more than {max_threads} live threads \
             ({bound}), where the seed's pool would start another pthread"
        ),
        SizeStop::Old(text) => text.clone(),
    }
}

/// The table row and warning of an FFT size given up (not started, or stopped at its
/// deadline).
pub(super) fn fft_given_up(m: &mut Measurement, exec: Exec, log2: u32, how: SizeStop) {
    m.tables.push(Table {
        name: "fft given up".into(),
        columns: vec!["size_log2".into(), "free list".into(), "time".into()],
        rows: vec![vec![
            serde_json::json!(log2),
            serde_json::json!(exec.name()),
            serde_json::json!(format!("gave up: {}", stop_words(&how, log2))),
        ]],
    });
    m.warnings.push(Warning::SizeGivenUp {
        series: format!("fft/{}", exec.name()),
        size_log2: log2,
        how,
    });
}

/// One FFT size on one executor (a worker per butterfly), unless the size below
/// took more than a third of the case budget (`below_s`, its latest time per call:
/// 0 when not measured, infinite when it was stopped or given up); stopped at the
/// case's deadline (the case budget or the probe's deadline, whichever comes
/// first). The measurement and this size's time per call, for the size above.
pub(super) fn run_fft(
    exec: Exec,
    (log2, below_s): (u32, f64),
    case_budget_s: f64,
    (limits, probe_deadline): (&Limits, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<(Measurement, f64), ProbeError> {
    let mut m = Measurement::default();
    if below_s > case_budget_s / 3.0 {
        let how = if below_s.is_finite() {
            SizeStop::BelowTooLong {
                below_s,
                case_budget_s,
            }
        } else {
            SizeStop::BelowStopped
        };
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    let pool = pool_for(exec, limits, counted)?;
    let inner = executor(exec, pool.as_ref(), 0);
    let case_end = Instant::now() + std::time::Duration::from_secs_f64(case_budget_s);
    let stop = Stop::at(probe_deadline.min(case_end));
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    let n = 1usize << log2;
    let input = test_signal(n);
    let mut output = vec![Complex::default(); n];
    // One untimed call: wakes the pool's workers and gives the result to check.
    fft(ex, &input, &mut output).map_err(PoolFailure::Fft)?;
    // The uncapped mode stops where it would pass its bound (the warm-up call does
    // the same work as a timed one).
    if let Some(how) = pool.as_ref().and_then(|p| bound_stop(&p.stats(), limits)) {
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    let mut calls = 0u32;
    let timed = if stop.stopped() {
        None
    } else {
        if log2 <= CHECK_FFT_MAX_LOG2 {
            let e = max_abs_error(&output, &dft_reference(&input));
            if e > FFT_TOLERANCE {
                return Err(PoolFailure::FftInaccurate { log2, error: e }.into());
            }
        }
        if let Some(p) = &pool {
            p.reset_stats();
        }
        counted.start();
        let r = time_per_call(|| {
            calls += 1;
            fft(ex, &input, &mut output).map_err(PoolFailure::Fft)?;
            if stop.stopped() {
                return Err(ProbeError::GaveUp("stopped".into()));
            }
            Ok(())
        });
        counted.stop();
        match r {
            Err(_) if stop.stopped() => None,
            other => Some(other?),
        }
    };
    let Some(secs) = timed else {
        if Instant::now() >= probe_deadline {
            return Err(ProbeError::GaveUp(format!(
                "fft/{} size {log2}: {}",
                exec.name(),
                progress(&stop)
            )));
        }
        fft_given_up(&mut m, exec, log2, deadline_stop(&stop));
        return Ok((m, f64::INFINITY));
    };
    m.points.push(Point::new(
        format!("fft/{}", exec.name()),
        "size_log2",
        log2 as f64,
        "seconds",
        secs,
    ));
    if let Some(how) = pool.as_ref().and_then(|p| bound_stop(&p.stats(), limits)) {
        fft_given_up(&mut m, exec, log2, how);
        return Ok((m, f64::INFINITY));
    }
    if let (Exec::Lockfree | Exec::LockfreeUncapped, Some(p)) = (exec, &pool) {
        m.points.push(Point::new(
            format!("fft-cas-retries/{}", exec.name()),
            "size_log2",
            log2 as f64,
            "failed_cas",
            p.stats().cas_failures as f64 / calls.max(1) as f64,
        ));
    }
    Ok((m, secs))
}

/// One FFT size with a sequential cutoff: below it the calling thread recurses
/// alone; above it taskpool makes families with block = CPUs (no worker per
/// butterfly) and rayon its tasks. The result must equal the sequential transform's
/// bit for bit.
pub(super) fn run_fft_cutoff(
    exec: Exec,
    log2: u32,
    cutoff: usize,
    cpus: usize,
    (max_threads, deadline): (usize, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<Measurement, ProbeError> {
    let n = 1usize << log2;
    let input = test_signal(n);
    let mut reference = vec![Complex::default(); n];
    fft(Executor::Sequential, &input, &mut reference).map_err(PoolFailure::Fft)?;
    let (series, x_name, x) = if exec == Exec::Sequential {
        (format!("fft-sequential/{log2}"), "size_log2", log2 as f64)
    } else {
        (
            format!("fft-cutoff/{}", exec.runtime()),
            "cutoff_points",
            cutoff as f64,
        )
    };
    let pool = pool_for(exec, &Limits::capped(max_threads), counted)?;
    let inner = executor(exec, pool.as_ref(), cpus);
    let stop = Stop::at(deadline);
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    let mut output = vec![Complex::default(); n];
    counted.start();
    let secs = time_per_call(|| {
        if exec == Exec::Sequential {
            fft(inner, &input, &mut output)
        } else {
            fft_with_cutoff(ex, &input, &mut output, cutoff)
        }
        .map_err(PoolFailure::Fft)?;
        if stop.stopped() {
            return Err(ProbeError::GaveUp(format!("{series}: {}", progress(&stop))));
        }
        Ok(())
    });
    counted.stop();
    let secs = secs.map_err(|e| match e {
        e @ (ProbeError::Pool(_) | ProbeError::Team(_)) if stop.stopped() => {
            ProbeError::GaveUp(e.to_string())
        }
        other => other,
    })?;
    if output != reference {
        return Err(PoolFailure::CutoffDiffers { series, cutoff }.into());
    }
    Ok(Measurement::points(vec![Point::new(
        series, x_name, x, "seconds", secs,
    )]))
}

/// One recursive matmul of order `order` with `levels` levels; a few entries of the
/// product are checked against dot products.
pub(super) fn run_rmatmul(
    exec: Exec,
    order: usize,
    levels: u32,
    (max_threads, deadline): (usize, Instant),
    counted: &Arc<SharedCounters>,
) -> Result<Measurement, ProbeError> {
    let pool = pool_for(exec, &Limits::capped(max_threads), counted)?;
    let inner = executor(exec, pool.as_ref(), 0);
    let stop = Stop::at(deadline);
    let ex = Executor::Until {
        inner: &inner,
        stop: &stop,
    };
    // One untimed product with the same levels on a quarter of the order, as FFT's
    // untimed call: taskpool starts its workers on demand, so without it the timed
    // product would pay for taskpool's thread creation while rayon's threads exist
    // before the clock starts.
    let warm = warmup_order(order, levels);
    let (wa, wb) = (Matrix::test_matrix(warm, 1), Matrix::test_matrix(warm, 2));
    rmatmul(ex, &wa, &wb, &mut Matrix::zeros(warm), levels).map_err(PoolFailure::RmatmulWarmup)?;
    let (a, b) = (Matrix::test_matrix(order, 1), Matrix::test_matrix(order, 2));
    let mut c = Matrix::zeros(order);
    counted.start();
    let t0 = Instant::now();
    let r = rmatmul(ex, &a, &b, &mut c, levels);
    let secs = t0.elapsed().as_secs_f64();
    counted.stop();
    r.map_err(PoolFailure::Rmatmul)?;
    if stop.stopped() {
        return Err(ProbeError::GaveUp(format!(
            "rmatmul N = {order}, k = {levels} on {}: {}",
            exec.runtime(),
            progress(&stop)
        )));
    }
    for e in 0..CHECKED_ENTRIES {
        let (i, j) = ((e * 7919) % order, (e * 104_729 + 3) % order);
        let want: f64 = (0..order).map(|k| a.get(i, k) * b.get(k, j)).sum();
        let d = (c.get(i, j) - want).abs();
        if d > 1e-6 * order as f64 {
            return Err(PoolFailure::EntryDiffers {
                order,
                levels,
                i,
                j,
                diff: d,
            }
            .into());
        }
    }
    Ok(Measurement::points(vec![Point::new(
        format!("rmatmul/{}/{order}", exec.runtime()),
        "levels",
        levels as f64,
        "seconds",
        secs,
    )]))
}

/// The order of rmatmul's untimed warm-up product: a quarter of `order` (1/64 of
/// the work), never below one element per leaf at `levels` levels.
pub fn warmup_order(order: usize, levels: u32) -> usize {
    (order / 4).max(1usize << levels.min(16))
}

#[cfg(test)]
mod tests {
    use super::super::analysis::given_up;
    use super::*;
    use crate::model::{Finding, ProbeResult, Status};

    #[test]
    fn rmatmuls_warm_up_keeps_the_levels_on_a_quarter_of_the_order() {
        assert_eq!(warmup_order(512, 4), 128);
        assert_eq!(warmup_order(2048, 5), 512);
        // Never fewer elements than leaves along a side.
        assert_eq!(warmup_order(64, 5), 32);
        assert_eq!(warmup_order(8, 3), 8);
    }

    #[test]
    fn the_workers_of_a_pool_run_are_counted_around_its_timed_part() {
        let c = Arc::new(SharedCounters::default());
        c.join_this_thread(false);
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        run_rmatmul(Exec::Mutex, 64, 2, (4, far), &c).unwrap();
        let (team, errors) = c.finish();
        assert!(errors.is_empty(), "{errors:?}");
        let team = team.expect("the calling thread joined");
        // The caller and the workers the pool started (up to 4).
        assert!(
            (1..=5).contains(&team.threads.len()),
            "{}",
            team.threads.len()
        );
        assert!(team.wall_ns > 0);
        if team.status.software == crate::counters::Availability::Counted {
            let total = team.total().expect("every thread read");
            assert!(total.task_clock_ns.is_some_and(|ns| ns > 0));
        }
    }

    #[test]
    fn a_running_fft_stops_at_its_deadline_and_says_how_far_it_got() {
        let c = Arc::new(SharedCounters::default());
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        // The case budget ends almost at once: the size is abandoned, not overrun.
        let (m, secs) =
            run_fft(Exec::Mutex, (12, 0.0), 1e-9, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.points.is_empty());
        assert!(secs.is_infinite());
        let row = &m.tables[0].rows[0];
        assert!(
            row[2]
                .as_str()
                .unwrap()
                .contains("stopped at its deadline after"),
            "{row:?}"
        );
        // The next size of that executor is not started, nor the one above it.
        let (m, secs) =
            run_fft(Exec::Mutex, (13, secs), 10.0, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.tables[0].rows[0][2]
            .as_str()
            .unwrap()
            .contains("was stopped"));
        assert!(secs.is_infinite());
        // A size below that took over a third of the case budget: given up too.
        let (m, _) = run_fft(Exec::Mutex, (13, 4.0), 10.0, (&Limits::capped(8), far), &c).unwrap();
        assert!(m.tables[0].rows[0][2]
            .as_str()
            .unwrap()
            .contains("size 12 took 4.00 s"));
        // The probe's own deadline: the case gives up, saying how far it got.
        let e = run_fft(
            Exec::Rayon,
            (12, 0.0),
            10.0,
            (&Limits::capped(8), Instant::now()),
            &c,
        )
        .unwrap_err();
        assert!(
            matches!(&e, ProbeError::GaveUp(m) if m.contains("families")),
            "{e}"
        );
        let e = run_rmatmul(Exec::Mutex, 64, 2, (8, Instant::now()), &c).unwrap_err();
        assert!(
            matches!(&e, ProbeError::GaveUp(m) if m.contains("abandoned")),
            "{e}"
        );
        // Given-up sizes become a parameter and a finding.
        let mut r = ProbeResult::new("pool", "t", Status::Completed);
        let mut m = Measurement::default();
        fft_given_up(
            &mut m,
            Exec::Lockfree,
            14,
            SizeStop::Deadline {
                families_run: 3,
                families_abandoned: 9,
            },
        );
        r.absorb(m);
        let (param, f) = given_up(&r);
        assert_eq!(param.unwrap()[0]["size_log2"], 14);
        assert!(
            matches!(&f[..], [Finding::Note { text }]
                if text.ends_with("up to 2^13 measured; stopped at 2^14 (gave up: stopped \
                                   at its deadline after 3 families; 9 abandoned)")),
            "{f:?}"
        );
        assert!(matches!(
            &r.warnings[..],
            [Warning::SizeGivenUp {
                how: SizeStop::Deadline { .. },
                ..
            }]
        ));
    }

    #[test]
    fn an_uncapped_fft_within_its_bound_is_measured_and_checked() {
        let c = Arc::new(SharedCounters::default());
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        let limits = Limits {
            max_threads: 4096,
            max_idle: 2,
            bound_why: Some("test".into()),
        };
        // 2^4 points cannot ask for 4,096 workers at once.
        let (m, secs) =
            run_fft(Exec::LockfreeUncapped, (4, 0.0), 60.0, (&limits, far), &c).unwrap();
        assert!(secs.is_finite() && m.tables.is_empty(), "{:?}", m.tables);
        let names: Vec<&str> = m.points.iter().map(|p| p.series.as_str()).collect();
        assert_eq!(
            names,
            ["fft/lockfree-uncapped", "fft-cas-retries/lockfree-uncapped"]
        );
    }
}
