//! Stage One of seed 004: an ideal producer and consumer, the layout loops of its
//! Figure 2 (padding, stack offset, buffer sizes and counts), then the wait strategies.

use super::roadmap::{baselines, offloaded, roadmap_step, Road, Roadmap, HAND_PAD_BYTES};
use super::*;
use crate::harness::stack::{with_stack_offset, STACK_OFFSETS};
use std::hint::black_box;

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

/// Stage One channel run: `m` events through a channel made with `config`,
/// blocking calls; the time from the start gate to the consumer's last event, and
/// the events moved (fewer than `m` when the producer stopped at `cut`).
fn channel_run<const N: usize>(
    config: Config,
    m: u64,
    cpus: Pair<'_>,
    cut: Instant,
) -> Result<Run, TuneError> {
    let (mut tx, mut rx) = hspc::channel::<Ev<N>>(config)?;
    // The producer's loop runs `stack_offset_bytes` lower on its stack than the
    // consumer's (seed 004 `p4_adjuststack`).
    let producer = || {
        Switches::during(|| {
            with_stack_offset(config.stack_offset_bytes, move || {
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
            })
        })
    };
    let consumer = || {
        Switches::during(|| {
            let t = Instant::now();
            let (mut k, mut bad, mut sum) = (0u64, 0u64, 0u64);
            while let Ok(e) = rx.pop() {
                bad += u64::from(!e.matches(k));
                sum = sum.wrapping_mul(31).wrapping_add(e.word());
                k += 1;
            }
            let secs = t.elapsed().as_secs_f64();
            black_box(sum);
            (secs, k, bad)
        })
    };
    let names = ["the producer", "the consumer"];
    let ((sent, psw), ((secs, got, bad), csw)) = cpus.both(true, names, producer, consumer)?;
    if got != sent || bad != 0 {
        return Err(TuneError::Lost {
            run: describe(&config),
            got,
            sent,
            bad,
        });
    }
    Ok(Run {
        secs,
        moved: got,
        cut: got < m,
        switches: psw.zip(csw).map(|(p, c)| [p, c]),
        cpu_share: None,
    })
}

/// Events to move so that every buffer is handed over a few times.
fn events_for<const N: usize>(config: &Config, m: u64) -> u64 {
    let cap = config
        .geometry_for(N, 1)
        .map(|g| g.capacity() as u64)
        .unwrap_or(0);
    m.max(4 * cap)
}
/// One run of a configuration.
type RunOf<'r> = dyn FnMut(&Config) -> Result<Run, TuneError> + 'r;

/// What every sweep of Stage One shares: the events per run, the pair, the budget.
struct Sweeper<'a, 'p> {
    m: u64,
    cpus: Pair<'a>,
    budget: &'a Budget,
    progress: &'p mut dyn FnMut(&str),
}

impl Sweeper<'_, '_> {
    /// Step `i` on hspc channels (see [`Sweeper::step_by`]).
    fn step<const N: usize>(
        &mut self,
        title: impl Into<String>,
        incumbent: Config,
        configs: &[Config],
        i: usize,
    ) -> Result<Step, TuneError> {
        let (m, cpus, budget) = (self.m, self.cpus, self.budget);
        self.step_by(title, incumbent, configs, i, &mut |c| {
            channel_run::<N>(*c, events_for::<N>(c, m), cpus, budget.run_cut())
        })
    }

    /// Step `i`: sweeps `incumbent` (what the steps before chose), then the other
    /// `configs` spread over the grid ([`spread_order`]), each once through
    /// `run_of`, until the budget reaches [`sweep_end`]`(i)` (rows in grid
    /// order); then settles the choice among the fastest few and the incumbent
    /// by [`STEP_ENDS`]`[i]`.
    fn step_by(
        &mut self,
        title: impl Into<String>,
        incumbent: Config,
        configs: &[Config],
        i: usize,
        run_of: &mut RunOf<'_>,
    ) -> Result<Step, TuneError> {
        let mut step = Step::new(title);
        let budget = self.budget;
        let configs: Vec<Config> = std::iter::once(incumbent)
            .chain(configs.iter().copied().filter(|c| *c != incumbent))
            .collect();
        let n = configs.len();
        let share = sweep_end(i);
        let go = |_, i, _| budget.left_until(share) || (i == 0 && budget.left_until(1.0));
        let (runs, stopped) = rounds(
            n,
            1,
            |_| spread_order(n),
            go,
            |_, i, k| {
                let c = &configs[k];
                let run = run_of(c)?;
                (self.progress)(&format!(
                    "{}: {} ({}/{n}) {:.1} ms",
                    step.title,
                    describe(c),
                    i + 1,
                    run.secs * 1e3
                ));
                Ok(Row::of_run(describe(c), *c, &run))
            },
        )?;
        if let Some((_, i)) = stopped {
            step.note(StepNote::SweepCut { measured: i, of: n });
        }
        step.rows.extend(runs.into_iter().flatten());
        let kept = step.row_of(&incumbent, None);
        settle(&mut step, kept, &[], budget, STEP_ENDS[i], &mut |row| {
            let c = row.config.ok_or(TuneError::Unconfigured)?;
            Ok(run_of(&c)?.per_event_s())
        })?;
        Ok(step)
    }
}

/// A step's choice (see [`Step::best`]).
fn chosen(step: &Step) -> Option<Config> {
    step.best().and_then(|r| r.config)
}

/// Loop 1 of seed 004 Figure 2: `p3_rmfalsesharing` of the roadmap with each
/// padding of [`PADDINGS`] (those below a word lay `p3` out as 8 bytes do and
/// are not run); the padding chosen goes into the channel's configuration.
fn padding_step(
    sw: &mut Sweeper<'_, '_>,
    road: &Roadmap<'_>,
    start: Config,
) -> Result<Step, TuneError> {
    let configs: Vec<Config> = PADDINGS
        .iter()
        .filter(|&&p| p >= 8)
        .map(|&p| start.with_padding(p))
        .collect();
    let incumbent = start.with_padding(HAND_PAD_BYTES);
    let mut step = sw.step_by(
        "stage one: padding on p3 (loop 1)",
        incumbent,
        &configs,
        1,
        &mut |c| {
            let r = Roadmap {
                pad_bytes: c.padding_bytes,
                ..*road
            };
            let per_event = r.run(Road::P3)?;
            Ok(Run {
                secs: per_event * r.m as f64,
                moved: r.m,
                ..Run::default()
            })
        },
    )?;
    for row in &mut step.rows {
        if let Some(c) = row.config {
            row.label = format!("p3, padding {} B", c.padding_bytes);
        }
    }
    step.note(StepNote::Padding { events: road.m });
    Ok(step)
}

/// Stage One for N-byte events; returns its steps and its fastest configuration.
pub(super) fn stage_one<const N: usize>(
    run_s: f64,
    cpus: Pair<'_>,
    smt: Result<Pair<'_>, NoSmt>,
    budget: &Budget,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Step>, Config), TuneError> {
    let base = roadmap_step(N, cpus, smt.clone(), budget, STEP_ENDS[0], progress)?;
    let road = Roadmap {
        m: base.rows.first().map_or(1 << 14, |r| r.events),
        event_words: N.div_ceil(8),
        pad_bytes: HAND_PAD_BYTES,
        pair: cpus,
        smt: smt.ok(),
        run_limit_s: budget.run_limit_s,
    };
    // Calibrate the run length on a channel run of the starting configuration
    // (channel runs take several times as long per event as the producer alone,
    // and a run several times `run_s` starves the later steps of their budget).
    let start = Config::n_buffer(3, 4096);
    let probe_m = 1u64 << 18;
    let probe = channel_run::<N>(start, probe_m, cpus, budget.run_cut())?;
    let per_event = probe.secs.max(1e-6) / probe.moved.max(1) as f64;
    let m = ((run_s / per_event) as u64).clamp(1 << 12, 1 << 26);
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
    let pad = padding_step(&mut sw, &road, start)?;
    let padded = chosen(&pad).unwrap_or(start);
    let configs = STACK_OFFSETS.map(|b| padded.with_stack_offset(b));
    let mut stack = sw.step::<N>(
        "stage one: producer stack offset (loop 2)",
        padded,
        &configs,
        2,
    )?;
    stack.note(StepNote::StackOffset);
    let stacked = chosen(&stack).unwrap_or(padded);
    let grid = grid_step::<N>(&mut sw, stacked)?;
    let layout = chosen(&grid).unwrap_or(stacked);
    let mut waits = wait_step::<N>(&mut sw, layout)?;
    let best = chosen(&waits).unwrap_or(layout);
    if let (Some(row), (Some(tp), Some(tc))) = (waits.best(), baselines(&base)) {
        waits.note(offloaded("Stage One's choice", row.per_event(), (tp, tc)));
    }
    let mut steps = vec![base, pad, stack, grid, waits];
    for s in &mut steps[1..] {
        s.reference_s = Some(per_event_base);
    }
    Ok((steps, best))
}

/// Loop 3 of seed 004 Figure 2: every number of buffers of [`BUFFER_COUNTS`]
/// × every size of [`STAGE_ONE_BUFFER_BYTES`] (at least one event), from
/// `stacked` (the padding and stack offset chosen, 3 × 4096 B), spread over
/// the grid in time; what the budget leaves out is named.
fn grid_step<const N: usize>(sw: &mut Sweeper<'_, '_>, stacked: Config) -> Result<Step, TuneError> {
    let configs = loop_three_grid(stacked, N);
    let mut step = sw.step::<N>(
        "stage one: buffer count × buffer size (loop 3)",
        stacked,
        &configs,
        3,
    )?;
    step.note(StepNote::BufferGrid {
        event_bytes: N,
        buffer_counts: BUFFER_COUNTS.len(),
        buffer_sizes: STAGE_ONE_BUFFER_BYTES.len(),
        holding: configs.len(),
        measured: step.rows.len(),
    });
    Ok(step)
}

/// The configurations of loop 3 (see [`grid_step`]), sizes in the seed's order,
/// each size with every count.
pub(super) fn loop_three_grid(stacked: Config, event_bytes: usize) -> Vec<Config> {
    STAGE_ONE_BUFFER_BYTES
        .iter()
        .filter(|&&b| b >= event_bytes)
        .flat_map(|&b| {
            BUFFER_COUNTS
                .iter()
                .map(move |&n| stacked.with_buffers(n).with_buffer_bytes(b))
        })
        .collect()
}

/// Every wait strategy, and the ring mode, on the fastest layout.
fn wait_step<const N: usize>(sw: &mut Sweeper<'_, '_>, layout: Config) -> Result<Step, TuneError> {
    let mut configs: Vec<Config> = WaitStrategy::ALL
        .iter()
        .map(|&w| layout.with_wait(w))
        .collect();
    // The ring publishes every event; with a sleeping strategy each publication
    // pays a fence, so it is measured with the spinning one.
    configs.push(
        layout
            .with_mode(Mode::Ring)
            .with_wait(WaitStrategy::SpinPause),
    );
    let mut waits = sw.step::<N>("stage one: wait strategy", layout, &configs, 4)?;
    waits.show_switches = true;
    waits.note(StepNote::Switches);
    Ok(waits)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{far, pair};
    use super::*;

    #[test]
    fn a_counting_pair_records_both_threads_of_every_run() {
        let counts = Mutex::new(TuneCounts::default());
        let counting = Pair {
            counts: Some(&counts),
            ..pair()
        };
        let far = far();
        for _ in 0..3 {
            channel_run::<8>(Config::ring(64), 5000, counting, far).unwrap();
        }
        // Not counting: nothing recorded.
        channel_run::<8>(Config::ring(64), 5000, pair(), far).unwrap();
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
        let far = far();
        assert_eq!(
            channel_run::<24>(c, 10_000, pair(), far).unwrap().moved,
            10_000
        );
        assert_eq!(
            channel_run::<1>(Config::ring(64), 1000, pair(), far)
                .unwrap()
                .moved,
            1000
        );
        // Cut at once: fewer events, still checked.
        let run = channel_run::<8>(c, 1 << 20, pair(), Instant::now()).unwrap();
        assert!(run.moved < 1 << 20);
        // Context switches are counted per thread where the OS says.
        assert_eq!(run.switches.is_some(), cfg!(target_os = "linux"));
    }
}
