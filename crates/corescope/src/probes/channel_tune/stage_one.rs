//! Stage One of seed 004: an ideal producer and consumer, the layout loops of its
//! Figure 2 (padding, stack offset, buffer sizes and counts), then the wait strategies.

use super::*;
use hspc::stack::{with_stack_offset, STACK_OFFSETS};
use std::hint::black_box;
use std::sync::Barrier;

#[derive(Clone, Copy)]
struct Ev<const N: usize>([u8; N]);

impl<const N: usize> Ev<N> {
    #[inline(always)]
    fn new(seq: u64) -> Self {
        let mut b = [0u8; N];
        let k = N.min(8);
        b[..k].copy_from_slice(&seq.to_le_bytes()[..k]);
        Self(b)
    }
    #[inline(always)]
    fn word(&self) -> u64 {
        let mut w = [0u8; 8];
        let k = N.min(8);
        w[..k].copy_from_slice(&self.0[..k]);
        u64::from_le_bytes(w)
    }
    #[inline(always)]
    fn matches(&self, seq: u64) -> bool {
        let k = N.min(8);
        self.0[..k] == seq.to_le_bytes()[..k]
    }
}

/// Stage One's baseline producer: `m` events into a 1 KiB local buffer.
fn baseline_producer<const N: usize>(m: u64) -> f64 {
    let mut buf = vec![Ev::<N>::new(0); (1024 / N).max(1)];
    let t = Instant::now();
    let mut i = 0;
    for k in 0..m {
        buf[i] = Ev::new(k);
        i += 1;
        if i == buf.len() {
            i = 0;
            black_box(&mut buf);
        }
    }
    black_box(&buf);
    t.elapsed().as_secs_f64()
}

/// Stage One's baseline consumer: `m` events read from a 1 KiB local buffer.
fn baseline_consumer<const N: usize>(m: u64) -> f64 {
    let buf: Vec<Ev<N>> = (0..(1024 / N).max(1) as u64).map(Ev::new).collect();
    let t = Instant::now();
    let mut sum = 0u64;
    let mut i = 0;
    for _ in 0..m {
        sum = sum.wrapping_mul(31).wrapping_add(black_box(&buf[i]).word());
        i += 1;
        if i == buf.len() {
            i = 0;
        }
    }
    black_box(sum);
    t.elapsed().as_secs_f64()
}

/// Both baselines at once on the pair (`p0_add_parallel`): the later end.
fn baseline_parallel<const N: usize>(m: u64, cpus: Pair<'_>) -> f64 {
    let gate = Barrier::new(2);
    std::thread::scope(|s| {
        let p = s.spawn(|| {
            cpus.pin_producer();
            gate.wait();
            baseline_producer::<N>(m)
        });
        let c = s.spawn(|| {
            cpus.pin_consumer();
            gate.wait();
            baseline_consumer::<N>(m)
        });
        let a = p.join().unwrap_or(f64::NAN);
        let b = c.join().unwrap_or(f64::NAN);
        a.max(b)
    })
}

/// Stage One channel run: `m` events through a channel made with `config`,
/// blocking calls; the time from the start gate to the consumer's last event, and
/// the events moved (fewer than `m` when the producer stopped at `cut`).
fn channel_run<const N: usize>(
    config: Config,
    m: u64,
    cpus: Pair<'_>,
    cut: Instant,
) -> Result<Run, String> {
    let (mut tx, mut rx) = hspc::channel::<Ev<N>>(config).map_err(|e| e.to_string())?;
    let gate = Barrier::new(2);
    let counted = CountedRun::default();
    let out = std::thread::scope(|s| {
        let p = s.spawn(|| {
            let mut counter = cpus.pin_counted(cpus.cpus.0);
            gate.wait();
            counter.start();
            let before = Switches::of_this_thread();
            // The producer's loop runs `stack_offset_bytes` lower on its stack
            // than the consumer's (seed 004 `p4_adjuststack`).
            let sent = with_stack_offset(config.stack_offset_bytes, move || {
                let mut sent = 0;
                for k in 0..m {
                    if (k & CUT_CHECK_MASK == CUT_CHECK_MASK && Instant::now() >= cut)
                        || tx.push(Ev::new(k)).is_err()
                    {
                        break;
                    }
                    sent += 1;
                }
                drop(tx);
                sent
            });
            let switches = switches_between(before, Switches::of_this_thread());
            counter.stop_into(&counted);
            (sent, switches)
        });
        let c = s.spawn(|| {
            let mut counter = cpus.pin_counted(cpus.cpus.1);
            gate.wait();
            counter.start();
            let before = Switches::of_this_thread();
            let t = Instant::now();
            let (mut k, mut bad, mut sum) = (0u64, 0u64, 0u64);
            while let Ok(e) = rx.pop() {
                bad += u64::from(!e.matches(k));
                sum = sum.wrapping_mul(31).wrapping_add(e.word());
                k += 1;
            }
            let secs = t.elapsed().as_secs_f64();
            black_box(sum);
            let sw = switches_between(before, Switches::of_this_thread());
            counter.stop_into(&counted);
            (secs, k, bad, sw)
        });
        let (secs, got, bad, csw) = c.join().map_err(|_| "the consumer panicked".to_string())?;
        let (sent, psw) = p.join().map_err(|_| "the producer panicked".to_string())?;
        if got != sent || bad != 0 {
            return Err(format!(
                "{}: {got} of {sent} events arrived, {bad} out of order",
                describe(&config)
            ));
        }
        Ok(Run {
            secs,
            moved: got,
            switches: psw.zip(csw).map(|(p, c)| [p, c]),
        })
    });
    cpus.record(counted);
    out
}

/// Events to move so that every buffer is handed over a few times.
fn events_for<const N: usize>(config: &Config, m: u64) -> u64 {
    let cap = config
        .geometry_for(N, 1)
        .map(|g| g.capacity as u64)
        .unwrap_or(0);
    m.max(4 * cap)
}
/// Runs `configs` while the budget share lasts, the first one first and the
/// rest spread over the grid (see [`spread_order`]); rows go into `step` in the
/// grid's order.
fn sweep<const N: usize>(
    step: &mut Step,
    configs: &[Config],
    m: u64,
    cpus: Pair<'_>,
    budget: &Budget,
    share: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let mut rows: Vec<(usize, Row)> = Vec::new();
    for (i, k) in spread_order(configs.len()).into_iter().enumerate() {
        if !budget.left_until(share) && (i > 0 || !budget.left_until(1.0)) {
            step.notes.push(format!(
                "budget: measured {i} of {} configurations (spread over the grid)",
                configs.len()
            ));
            break;
        }
        let c = &configs[k];
        let events = events_for::<N>(c, m);
        let run = channel_run::<N>(*c, events, cpus, budget.run_cut())?;
        let (secs, moved) = (run.secs, run.moved);
        progress(&format!(
            "{}: {} ({}/{}) {:.1} ms",
            step.title,
            describe(c),
            i + 1,
            configs.len(),
            secs * 1e3
        ));
        rows.push((
            k,
            Row {
                cut: moved < events,
                switches: run.switches,
                ..Row::once(describe(c), Some(*c), moved, secs)
            },
        ));
    }
    rows.sort_by_key(|&(k, _)| k);
    step.rows.extend(rows.into_iter().map(|(_, r)| r));
    Ok(())
}

/// Stage One's baseline step: producer alone, consumer alone (each the better of
/// two runs of `m` events) and both at once sharing nothing (`p0`); its reference
/// is the slower one's time per event.
fn baseline_step<const N: usize>(m: u64, cpus: Pair<'_>, progress: &mut dyn FnMut(&str)) -> Step {
    let mut base = Step::new("stage one: baseline");
    let mut alone = |label: &str, f: fn(u64) -> f64, cpu: Option<u32>| {
        let secs = std::thread::scope(|s| {
            s.spawn(|| {
                cpus.pin_to(cpu);
                f(m).min(f(m))
            })
            .join()
            .unwrap_or(f64::NAN)
        });
        base.rows.push(Row::once(label, None, m, secs));
        secs
    };
    let p = alone("producer alone", baseline_producer::<N>, cpus.cpus.0);
    let c = alone("consumer alone", baseline_consumer::<N>, cpus.cpus.1);
    let baseline = p.max(c);
    // Every row compares its time per event with the baseline's.
    let per_event_base = baseline / m as f64;
    base.reference_s = Some(per_event_base);
    base.notes.push(format!(
        "baseline = the slower of the two ({}): {:.2} ns per event",
        if c > p { "consumer" } else { "producer" },
        baseline / m as f64 * 1e9
    ));
    let par = baseline_parallel::<N>(m, cpus).min(baseline_parallel::<N>(m, cpus));
    base.rows
        .push(Row::once("p0: both at once, sharing nothing", None, m, par));
    progress(&format!(
        "stage one: baseline {:.1} ms, p0 {:.1} ms",
        baseline * 1e3,
        par * 1e3
    ));
    base
}

/// What every sweep of Stage One shares: the events per run, the pair, the budget.
struct Sweeper<'a, 'p> {
    m: u64,
    cpus: Pair<'a>,
    budget: &'a Budget,
    progress: &'p mut dyn FnMut(&str),
}

impl Sweeper<'_, '_> {
    /// Step `i`: runs `incumbent` (what the steps before chose), then the other
    /// `configs`, until the budget reaches [`sweep_end`]`(i)`, then settles the
    /// choice among the fastest few and the incumbent by [`STEP_ENDS`]`[i]`.
    fn step<const N: usize>(
        &mut self,
        title: impl Into<String>,
        incumbent: Config,
        configs: &[Config],
        i: usize,
    ) -> Result<Step, String> {
        let mut step = Step::new(title);
        let (m, cpus, budget) = (self.m, self.cpus, self.budget);
        let ordered: Vec<Config> = std::iter::once(incumbent)
            .chain(configs.iter().copied().filter(|c| *c != incumbent))
            .collect();
        sweep::<N>(
            &mut step,
            &ordered,
            m,
            cpus,
            budget,
            sweep_end(i),
            self.progress,
        )?;
        let kept = step.row_of(&incumbent, None);
        settle(&mut step, kept, &[], budget, STEP_ENDS[i], &mut |row| {
            let c = row.config.ok_or("settling a row without a configuration")?;
            let run = channel_run::<N>(c, events_for::<N>(&c, m), cpus, budget.run_cut())?;
            Ok(run.secs / run.moved.max(1) as f64)
        })?;
        Ok(step)
    }
}

/// A step's choice (see [`Step::best`]).
fn chosen(step: &Step) -> Option<Config> {
    step.best().and_then(|r| r.config)
}

/// Stage One for N-byte events; returns its steps and its fastest configuration.
pub(super) fn stage_one<const N: usize>(
    run_s: f64,
    cpus: Pair<'_>,
    budget: &Budget,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Step>, Config), String> {
    // Calibrate the run length on a channel run of the starting configuration
    // (channel runs take several times as long per event as the producer alone,
    // and a run several times `run_s` starves the later steps of their budget).
    let start = Config::n_buffer(3, 4096);
    let probe_m = 1u64 << 18;
    let probe = channel_run::<N>(start, probe_m, cpus, budget.run_cut())?;
    let per_event = probe.secs.max(1e-6) / probe.moved.max(1) as f64;
    let m = ((run_s / per_event) as u64).clamp(1 << 12, 1 << 26);
    let base = baseline_step::<N>(m, cpus, progress);
    let per_event_base = base.reference_s.unwrap_or(f64::NAN);
    let mut sw = Sweeper {
        m,
        cpus,
        budget,
        progress,
    };

    // Each step starts from what the steps before chose (seed 004 builds each
    // step on the one before) and leaves it only for a configuration faster
    // beyond the noise (see `settle`).
    let configs = PADDINGS.map(|p| start.with_padding(p));
    let pad = sw.step::<N>(
        "stage one: padding between buffers (loop 1)",
        start,
        &configs,
        0,
    )?;
    let padded = chosen(&pad).unwrap_or(start);
    let configs = STACK_OFFSETS.map(|b| padded.with_stack_offset(b));
    let mut stack = sw.step::<N>(
        "stage one: producer stack offset (loop 2)",
        padded,
        &configs,
        1,
    )?;
    stack.notes.push(
        "stack +N B: the producer's loop runs N bytes lower on its stack than the \
         consumer's (hspc::stack::with_stack_offset; seed 004 p4_adjuststack)"
            .into(),
    );
    let stacked = chosen(&stack).unwrap_or(padded);
    let [sizes, counts] = size_steps::<N>(&mut sw, stacked)?;
    let layout = chosen(&counts).unwrap_or(stacked);
    let waits = wait_step::<N>(&mut sw, layout)?;
    let best = chosen(&waits).unwrap_or(layout);
    let tuned = [stack, sizes, counts, waits];
    let mut steps = vec![base, pad];
    steps.extend(tuned);
    for s in &mut steps[1..] {
        s.reference_s = Some(per_event_base);
    }
    Ok((steps, best))
}

/// Buffer sizes with 3 buffers, starting from `stacked` (the padding and stack
/// offset chosen, 3 × 4096 B), then the other buffer counts for the fastest
/// [`KEEP_SIZES`] sizes, starting from the size step's choice.
fn size_steps<const N: usize>(
    sw: &mut Sweeper<'_, '_>,
    stacked: Config,
) -> Result<[Step; 2], String> {
    let laid_out = |buffers: usize, buffer_bytes: usize| Config {
        buffers,
        buffer_bytes,
        ..stacked
    };
    let configs: Vec<Config> = STAGE_ONE_BUFFER_BYTES
        .iter()
        .filter(|&&b| b >= N)
        .map(|&b| laid_out(3, b))
        .collect();
    let sizes = sw.step::<N>("stage one: buffer size, 3 buffers", stacked, &configs, 2)?;
    let sized = chosen(&sizes).unwrap_or(stacked);
    let mut ranked: Vec<(f64, usize)> = sizes
        .rows
        .iter()
        .filter_map(|r| r.config.map(|c| (r.per_event(), c.buffer_bytes)))
        .filter(|&(_, b)| b != sized.buffer_bytes)
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let configs: Vec<Config> = std::iter::once(sized.buffer_bytes)
        .chain(ranked.iter().map(|&(_, b)| b))
        .take(KEEP_SIZES)
        .flat_map(|b| {
            BUFFER_COUNTS
                .iter()
                .filter(|&&n| n != 3)
                .map(move |&n| laid_out(n, b))
        })
        .collect();
    let counts = sw.step::<N>(
        format!("stage one: buffers × the {KEEP_SIZES} fastest sizes"),
        sized,
        &configs,
        3,
    )?;
    Ok([sizes, counts])
}

/// Every wait strategy, and the ring mode, on the fastest layout.
fn wait_step<const N: usize>(sw: &mut Sweeper<'_, '_>, layout: Config) -> Result<Step, String> {
    let mut configs: Vec<Config> = WaitStrategy::ALL
        .iter()
        .map(|&w| layout.with_wait(w))
        .collect();
    // The ring publishes every event; with a sleeping strategy each publication
    // pays a fence, so it is measured with the spinning one.
    configs.push(Config {
        mode: Mode::Ring,
        wait: WaitStrategy::SpinPause,
        ..layout
    });
    let mut waits = sw.step::<N>("stage one: wait strategy", layout, &configs, 4)?;
    waits.show_switches = true;
    waits.notes.push(
        "ctx sw: context switches of each thread (getrusage RUSAGE_THREAD) from the start \
         gate to its last event, per 10^6 events, voluntary ones in parentheses; spinlock, \
         spin_backoff and spin_pause make no system call, so theirs are the OS taking the CPU"
            .into(),
    );
    Ok(waits)
}

#[cfg(test)]
mod tests {
    use super::*;

    static REFUSED: AtomicUsize = AtomicUsize::new(0);

    #[test]
    fn a_counting_pair_records_both_threads_of_every_run() {
        let counts = Mutex::new(TuneCounts::default());
        let pair = Pair::new((None, None), &REFUSED).counting(&counts);
        let far = Instant::now() + std::time::Duration::from_secs(30);
        for _ in 0..3 {
            channel_run::<8>(Config::ring(64), 5000, pair, far).unwrap();
        }
        // Not counting: nothing recorded.
        channel_run::<8>(
            Config::ring(64),
            5000,
            Pair::new((None, None), &REFUSED),
            far,
        )
        .unwrap();
        let counts = counts.into_inner().unwrap();
        assert!(counts.errors.is_empty(), "{:?}", counts.errors);
        assert_eq!(counts.teams.len(), 3);
        for t in &counts.teams {
            assert_eq!(t.threads.len(), 2);
            assert!(t.wall_ns > 0);
        }
    }

    #[test]
    fn stage_one_runs_check_their_events() {
        let c = Config::n_buffer(2, 256);
        let far = Instant::now() + std::time::Duration::from_secs(30);
        assert_eq!(
            channel_run::<24>(c, 10_000, Pair::new((None, None), &REFUSED), far)
                .unwrap()
                .moved,
            10_000
        );
        assert_eq!(
            channel_run::<1>(
                Config::ring(64),
                1000,
                Pair::new((None, None), &REFUSED),
                far
            )
            .unwrap()
            .moved,
            1000
        );
        // Cut at once: fewer events, still checked.
        let run = channel_run::<8>(
            c,
            1 << 20,
            Pair::new((None, None), &REFUSED),
            Instant::now(),
        )
        .unwrap();
        assert!(run.moved < 1 << 20);
        // Context switches are counted per thread where the OS says.
        assert_eq!(run.switches.is_some(), cfg!(target_os = "linux"));
    }
}
