//! Settling a step's choice (docs/channel.md, `tune channel`): the step's
//! fastest few configurations and its incumbent run again in rotated rounds until
//! the paired intervals separate the fastest from each other one or show them
//! equivalent, or the budget ends. The step leaves its incumbent only for a
//! contender faster beyond the noise, and then takes the fewest buffer bytes among
//! the fastest and those equivalent to it ([`choose`]).

use super::{Budget, Note, Row, Step, StepNote, TuneError};
use crate::harness::race::race;
use crate::model::tuning::{self, Tuned};
use crate::model::Outcome;
use crate::stats::{compare_paired, median, Comparison};

/// Most configurations a step settles between (fewer when its share of the
/// budget cannot pay for [`SETTLE_ROUNDS`]`.0` rounds of them; see [`affordable`]).
pub const CONTENDERS: usize = 4;
/// A configuration is a contender when its sweep run took at most this factor of
/// the fastest one's time per event (single runs on a shared VM swing by up to
/// about 30 %; further behind than this, one run is enough to drop it).
pub const CONTENDER_SPAN: f64 = 1.5;
/// Rounds of the contenders: at least 6 (the exact signed-rank interval at 95 %
/// cannot exclude 1 with fewer), at most 12.
pub const SETTLE_ROUNDS: (usize, usize) = (6, 12);

/// What [`settle`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// Row of the choice: the incumbent, or, among the contenders faster than it
    /// beyond the noise, the one with the fewest bytes of buffers of the fastest
    /// and those equivalent to it (see [`choose`]).
    pub faster: usize,
    /// The choice is the incumbent: no contender was faster beyond the noise.
    pub kept: bool,
    /// Row of the least median among the candidates (the choice itself unless
    /// the parsimony rule chose a smaller configuration it could not tell apart).
    pub fastest: usize,
    /// Each other contender against the choice.
    pub others: Vec<Versus>,
    /// Rows run once (not contenders) whose run lies within the spread the
    /// repeats showed for one configuration (`band` × the choice's median): one
    /// run cannot separate them from the choice.
    pub unrepeated: Vec<usize>,
    /// The largest ratio of one contender's slowest repeat to its median.
    pub band: f64,
    /// How many configurations were repeated (the choice among them).
    pub contenders: usize,
}

/// One contender against the choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Versus {
    /// Its row.
    pub row: usize,
    /// Its time per event ÷ the choice's, paired by round over the rounds both ran.
    pub comparison: Comparison,
}

impl Versus {
    /// The contender is slower than the row it was compared with, beyond the noise.
    fn slower_beyond_noise(&self) -> bool {
        self.comparison.outcome == Outcome::Different && self.comparison.ratio.value > 1.0
    }

    /// The contender is faster than the row it was compared with, beyond the noise.
    fn faster_beyond_noise(&self) -> bool {
        self.comparison.outcome == Outcome::Different && self.comparison.ratio.value < 1.0
    }
}

/// How many contenders a step can afford: [`SETTLE_ROUNDS`]`.0` rounds of them,
/// each run as long as `run_s`, should fit in `window_s`; at least 2, at most
/// [`CONTENDERS`].
fn affordable(window_s: f64, run_s: f64) -> usize {
    let n = (window_s / (SETTLE_ROUNDS.0 as f64 * run_s.max(1e-6))).floor();
    if run_s.is_finite() && n.is_finite() && n >= 2.0 {
        (n as usize).min(CONTENDERS)
    } else {
        2
    }
}

/// The step's contenders, fastest first: configured rows that moved events, within
/// [`CONTENDER_SPAN`] of the fastest, at most `most`; the incumbent always (in
/// place of the last when they are too many), and every `forced` row (the
/// configurations a user asked to race, `tune channel --against`) beyond `most`.
fn contenders(step: &Step, incumbent: Option<usize>, forced: &[usize], most: usize) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..step.rows.len())
        .filter(|&i| step.rows[i].config.is_some() && step.rows[i].events > 0)
        .collect();
    ranked.sort_by(|&x, &y| {
        step.rows[x]
            .per_event()
            .total_cmp(&step.rows[y].per_event())
    });
    let Some(&first) = ranked.first() else {
        return ranked;
    };
    let limit = step.rows[first].per_event() * CONTENDER_SPAN;
    let is_forced = |i: usize| forced.contains(&i) && Some(i) != incumbent;
    let mut picked: Vec<usize> = ranked
        .iter()
        .copied()
        .filter(|&i| !is_forced(i))
        .filter(|&i| step.rows[i].per_event() <= limit || Some(i) == incumbent)
        .collect();
    if let Some(inc) = incumbent.filter(|i| picked.contains(i)) {
        picked.retain(|&i| i != inc);
        picked.truncate(most.saturating_sub(1));
        picked.push(inc);
    }
    picked.truncate(most);
    picked.extend(ranked.into_iter().filter(|&i| is_forced(i)));
    picked
}

/// Of `live` (rows that ran every round so far), the one with the least median of
/// its repeats.
fn leader(step: &Step, live: &[usize]) -> usize {
    let med = |i: usize| median(&step.rows[i].repeats);
    live.iter()
        .copied()
        .min_by(|&x, &y| med(x).total_cmp(&med(y)))
        .unwrap_or(live[0])
}

/// Every row of `rows` but `lead` against `lead`, over the rounds both ran.
fn versus(step: &Step, lead: usize, rows: &[usize]) -> Vec<Versus> {
    rows.iter()
        .filter(|&&i| i != lead)
        .filter_map(|&i| {
            let comparison = compare_paired(&step.rows[i].repeats, &step.rows[lead].repeats)?;
            Some(Versus { row: i, comparison })
        })
        .collect()
}

/// Bytes a configuration's buffers take, with their padding: what the
/// parsimony rule of [`choose`] weighs (rows without a configuration weigh most).
fn footprint_bytes(row: &Row) -> usize {
    row.config.map_or(usize::MAX, |c| {
        c.buffers
            .max(1)
            .saturating_mul(c.buffer_bytes.saturating_add(c.padding_bytes))
    })
}

/// The choice after the rounds. The candidates are the contenders faster than
/// the incumbent beyond the noise (the incumbent is kept when there are none, or
/// when it leads), or, with no incumbent, the contenders still running. Of the
/// fastest candidate and those shown equivalent to it (not merely not separated),
/// the one whose buffers take the fewest bytes wins, then the earliest in the
/// grid: the parsimony rule of docs/channel.md.
fn choose(step: &Step, incumbent: Option<usize>, live: &[usize]) -> Chosen {
    let lead = leader(step, live);
    let candidates: Vec<usize> = match incumbent {
        Some(inc) if inc == lead => return Chosen::kept(inc),
        Some(inc) => versus(step, inc, live)
            .iter()
            .filter(|v| v.faster_beyond_noise())
            .map(|v| v.row)
            .collect(),
        None => live.to_vec(),
    };
    if candidates.is_empty() {
        return Chosen::kept(incumbent.unwrap_or(lead));
    }
    let fastest = leader(step, &candidates);
    let alike: Vec<usize> = versus(step, fastest, &candidates)
        .iter()
        .filter(|v| v.comparison.outcome == Outcome::Equivalent)
        .map(|v| v.row)
        .chain(std::iter::once(fastest))
        .collect();
    let row = alike
        .iter()
        .copied()
        .min_by_key(|&i| (footprint_bytes(&step.rows[i]), i))
        .unwrap_or(fastest);
    Chosen {
        row,
        kept: false,
        fastest,
    }
}

/// What [`choose`] picked: the row chosen, whether it is the incumbent kept, and
/// the row of the fastest median (two row numbers, named so they cannot swap).
struct Chosen {
    row: usize,
    kept: bool,
    fastest: usize,
}

impl Chosen {
    /// `row` kept: the choice and the fastest.
    fn kept(row: usize) -> Self {
        Self {
            row,
            kept: true,
            fastest: row,
        }
    }
}

/// After a round: drop from `live` every row slower than its leader beyond the
/// noise; whether the ones left are all shown equivalent to the leader.
fn drop_separated(step: &Step, live: &mut Vec<usize>) -> bool {
    let lead = leader(step, live);
    let against = versus(step, lead, live);
    live.retain(|&i| {
        i == lead
            || !against
                .iter()
                .any(|v| v.row == i && v.slower_beyond_noise())
    });
    against
        .iter()
        .filter(|v| live.contains(&v.row))
        .all(|v| v.comparison.outcome == Outcome::Equivalent)
}

/// Settle a step's choice: the contenders, `incumbent` (a row) and the `forced`
/// rows race ([`race`]) until each one still running is separated from the
/// leader or equivalent to it, or [`SETTLE_ROUNDS`]`.1` rounds ran; after
/// [`SETTLE_ROUNDS`]`.0` rounds, also when the budget reaches `share`. The repeats
/// go into the rows, the verdict into `step.settled`, the place of its finding
/// into the notes ([`Note::Settled`]).
pub(super) fn settle(
    step: &mut Step,
    incumbent: Option<usize>,
    forced: &[usize],
    budget: &Budget,
    share: f64,
    run: &mut dyn FnMut(&Row) -> Result<f64, TuneError>,
) -> Result<(), TuneError> {
    let sweep_s: Vec<f64> = step
        .rows
        .iter()
        .filter(|r| r.config.is_some())
        .map(|r| r.secs)
        .collect();
    let most = affordable(budget.left_s_until(share), median(&sweep_s));
    let all = contenders(step, incumbent, forced, most);
    if all.len() < 2 {
        return Ok(());
    }
    let mut live = all.clone();
    let rounds = race(
        step,
        &mut live,
        SETTLE_ROUNDS.1,
        |_, rounds| budget.left_until(if rounds < SETTLE_ROUNDS.0 { 1.0 } else { share }),
        |step, i| {
            let v = run(&step.rows[i])?;
            step.rows[i].repeats.push(v);
            Ok::<(), TuneError>(())
        },
        |step, live, rounds| drop_separated(step, live) && rounds >= 2,
    )?;
    if rounds < 2 {
        step.note(StepNote::NotRepeated {
            contenders: all.len(),
            runs: rounds + 1,
        });
        return Ok(());
    }
    let Chosen { row, kept, fastest } = choose(step, incumbent, &live);
    let band = spread(step, &all);
    let settled = Settled {
        faster: row,
        kept,
        fastest,
        others: versus(step, row, &all),
        unrepeated: within_one_run(step, row, band),
        band,
        contenders: all.len(),
    };
    step.notes.push(Note::Settled);
    step.settled = Some(settled);
    Ok(())
}

/// How far one run strays from its configuration's median here: the largest
/// ratio of a contender's slowest repeat to the median of its repeats (at least 1).
fn spread(step: &Step, contenders: &[usize]) -> f64 {
    contenders
        .iter()
        .map(|&i| &step.rows[i].repeats)
        .filter(|r| r.len() >= 2)
        .map(|r| r.iter().copied().fold(f64::MIN, f64::max) / median(r))
        .filter(|x| x.is_finite())
        .fold(1.0, f64::max)
}

/// Rows run once (configured, moved events, never repeated) whose run took at
/// most `band` × the choice's median time per event.
fn within_one_run(step: &Step, choice: usize, band: f64) -> Vec<usize> {
    let limit = band * median(&step.rows[choice].repeats);
    (0..step.rows.len())
        .filter(|&i| {
            let r = &step.rows[i];
            i != choice
                && r.config.is_some()
                && r.events > 0
                && r.repeats.is_empty()
                && r.per_event() <= limit
        })
        .collect()
}

/// Row `i` of a step as the findings name it: its label, and its affinity where
/// the step ran both.
pub(super) fn tuned(step: &Step, i: usize) -> Tuned {
    let row = step.rows.get(i);
    Tuned {
        label: row.map(|r| r.label.clone()).unwrap_or_default(),
        affinity: row.and_then(|r| r.pinned),
    }
}

/// A contender against the choice, as the run file keeps it.
fn versus_note(step: &Step, v: &Versus) -> tuning::Versus {
    tuning::Versus {
        config: tuned(step, v.row),
        ratio: v.comparison.ratio,
        significant: v.comparison.significant,
        outcome: v.comparison.outcome,
    }
}

/// The settling's finding as the run file keeps it, the rows named as the step
/// now labels them.
pub(super) fn settled_note(step: &Step, s: &Settled) -> tuning::Settled {
    tuning::Settled {
        choice: tuned(step, s.faster),
        rounds: step.rows.get(s.faster).map_or(0, |r| r.repeats.len()),
        contenders: s.contenders,
        kept: s.kept,
        fastest: (!s.kept && s.fastest != s.faster).then(|| tuned(step, s.fastest)),
        others: s.others.iter().map(|v| versus_note(step, v)).collect(),
        run_once_within_spread: s.unrepeated.iter().map(|&i| tuned(step, i)).collect(),
        spread: s.band,
    }
}

#[cfg(test)]
mod tests {
    use super::super::result::{against_stands, standing, standing_of};
    use super::super::Step;
    use super::*;
    use crate::model::tuning::{Settled as SettledNote, Stands};
    use hspc::Config;
    use std::time::Instant;

    /// A step whose configurations are `buffer_bytes → sweep seconds per 1000 events`.
    fn configs(sweep: &[(usize, f64)]) -> Step {
        let mut step = Step::new("stage one: test");
        for &(b, secs) in sweep {
            step.rows.push(Row::once(
                format!("{b} B"),
                Some(Config::n_buffer(3, b)),
                1000,
                secs,
            ));
        }
        step
    }

    /// A sweep of four configurations alike, one 5 % behind (not a contender when
    /// four are), one 30 % behind.
    const FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND: [(usize, f64); 6] = [
        (1024, 1.0e-5),
        (2048, 1.0e-5),
        (4096, 1.0e-5),
        (8192, 1.0e-5),
        (16384, 1.05e-5),
        (32768, 1.3e-5),
    ];

    fn budget() -> Budget {
        super::super::fixture::budget(60.0, 1.0)
    }

    /// The step's settling note, as the run file keeps it (its place is the
    /// step's last note).
    fn settled_of(step: &Step) -> SettledNote {
        assert_eq!(step.notes.last(), Some(&Note::Settled), "{:?}", step.notes);
        settled_note(step, step.settled.as_ref().expect("settled"))
    }

    /// What the choice could not be told from, as the tuner's choice states it:
    /// the labels of the contenders equivalent to it and of those not told apart,
    /// and how many run once lie within the spread (`None` when nothing was
    /// settled or it is ahead of every one).
    fn rivals(step: &Step) -> Option<(Vec<String>, Vec<String>, usize)> {
        let n = settled_note(step, step.settled.as_ref()?);
        let of = |o: Outcome| -> Vec<String> {
            n.others
                .iter()
                .filter(|v| v.outcome == o)
                .map(|v| v.config.label.clone())
                .collect()
        };
        let (same, open) = (of(Outcome::Equivalent), of(Outcome::Inconclusive));
        let once = n.run_once_within_spread.len();
        (!same.is_empty() || !open.is_empty() || once > 0).then_some((same, open, once))
    }

    fn bytes(row: &Row) -> usize {
        row.config.map_or(0, |c| c.buffer_bytes)
    }

    #[test]
    fn settling_separates_a_real_difference_and_keeps_the_runs() {
        // The first single run made the slower configuration look faster.
        let mut step = configs(&[(1024, 1.3e-5), (4096, 1.0e-5)]);
        let mut k = 0u32;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |row| {
            k += 1;
            let wobble = 1.0 + 0.01 * f64::from(k % 3);
            Ok(wobble * if bytes(row) == 1024 { 1.0e-8 } else { 1.2e-8 })
        })
        .unwrap();
        assert!(step.rows.iter().all(|r| r.repeats.len() >= SETTLE_ROUNDS.0));
        assert_eq!(step.best().unwrap().label, "1024 B");
        let note = settled_of(&step);
        assert_eq!(note.choice.label, "1024 B");
        let [other] = &note.others[..] else {
            panic!("{note:?}")
        };
        assert_eq!(other.config.label, "4096 B");
        assert!(
            other.ratio.value >= 1.2 && other.outcome == Outcome::Different,
            "{other:?}"
        );
        assert!(rivals(&step).is_none());
    }

    #[test]
    fn every_contender_the_choice_cannot_be_told_from_is_named() {
        // Three configurations at one speed, one 20 % slower, one far behind (not a
        // contender), one that moved nothing.
        let mut step = configs(&[
            (1024, 1.00e-5),
            (2048, 1.05e-5),
            (4096, 1.10e-5),
            (8192, 1.20e-5),
            (65536, 9.0e-5),
        ]);
        step.rows[4].label = "far behind".into();
        let mut k = 0u64;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |row| {
            k += 1;
            // Deterministic wobble of ±0.5 %, the same mean for the first three.
            let wobble = 1.0 + 0.005 * ((k * 7 % 5) as f64 - 2.0) / 2.0;
            Ok(wobble * if bytes(row) == 8192 { 1.2e-8 } else { 1.0e-8 })
        })
        .unwrap();
        assert!(step.rows[4].repeats.is_empty(), "not a contender");
        let s = step.settled.clone().expect("settled");
        assert_eq!(s.others.len(), CONTENDERS - 1);
        let slow = s.others.iter().find(|v| v.row == 3).unwrap();
        assert_eq!(slow.comparison.outcome, Outcome::Different);
        // The slower one stopped once separated; the equal ones ran on.
        assert!(step.rows[3].repeats.len() < SETTLE_ROUNDS.1);
        let (same, open, _) = rivals(&step).expect("equal configurations are a tie");
        let tie = [same, open].concat();
        let choice = step.best().unwrap().label.clone();
        for label in ["1024 B", "2048 B", "4096 B"] {
            assert!(
                label == choice || tie.iter().any(|t| t == label),
                "{label}: {tie:?}"
            );
        }
        assert!(
            !tie.iter().any(|t| t == "8192 B" || t == "far behind"),
            "{tie:?}"
        );
        // Paired by round: every contender still running ran the same rounds.
        let lens: Vec<usize> = (0..3).map(|i| step.rows[i].repeats.len()).collect();
        assert!(lens.iter().all(|&n| n == lens[0]), "{lens:?}");
    }

    #[test]
    fn a_lucky_single_run_does_not_beat_the_settled_choice() {
        let mut step = configs(&[(1024, 1.0e-5), (4096, 1.01e-5)]);
        settle(&mut step, None, &[], &budget(), 1.0, &mut |_| Ok(1.2e-8)).unwrap();
        // A configuration measured once, by chance faster than both medians.
        let mut lucky = step.rows[0].clone();
        lucky.label = "lucky".into();
        lucky.secs = 0.5e-5;
        lucky.repeats.clear();
        step.rows.push(lucky);
        let best = step.best().unwrap().label.clone();
        assert!(best == "1024 B" || best == "4096 B", "{best}");
        let (same, _, _) = rivals(&step).expect("equal medians are not a winner");
        assert!(!same.is_empty(), "none indistinguishable");
        // Without settling, the least time per event wins.
        let mut plain = configs(&[(1024, 2.0e-5), (4096, 1.0e-5)]);
        plain.settled = None;
        assert_eq!(plain.best().unwrap().label, "4096 B");
        assert!(rivals(&plain).is_none());
    }

    #[test]
    fn settling_says_when_contenders_cannot_be_told_apart() {
        let mut step = configs(&[(1024, 1.0e-5), (4096, 1.1e-5)]);
        let mut k = 0u32;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |_| {
            k += 1;
            Ok(1e-8 * (1.0 + 0.2 * f64::from(k % 5) - 0.4))
        })
        .unwrap();
        let note = settled_of(&step);
        assert!(
            note.others.iter().all(|v| v.outcome != Outcome::Different),
            "{note:?}"
        );
        assert!(step.rows[0].repeats.len() <= SETTLE_ROUNDS.1);
        assert!(rivals(&step).is_some());
    }

    #[test]
    fn an_ended_budget_repeats_nothing_and_says_so() {
        let mut step = configs(&[(1024, 1.0e-5), (4096, 1.1e-5)]);
        let spent = Budget {
            start: Instant::now() - std::time::Duration::from_secs(2),
            total: 1.0,
            run_limit_s: 1.0,
        };
        settle(&mut step, None, &[], &spent, 1.0, &mut |_| Ok(1.0)).unwrap();
        assert!(step.rows.iter().all(|r| r.repeats.is_empty()));
        assert!(step.settled.is_none());
        assert!(
            matches!(
                step.notes.last(),
                Some(Note::Said(StepNote::NotRepeated { contenders: 2, .. }))
            ),
            "{:?}",
            step.notes
        );
        assert_eq!(step.best().unwrap().label, "1024 B");
    }

    /// A wobble of ±1 % that repeats every 5 calls.
    fn wobble(k: &mut u64) -> f64 {
        *k += 1;
        1.0 + 0.01 * ((*k * 3 % 5) as f64 - 2.0) / 2.0
    }

    #[test]
    fn the_incumbent_is_kept_unless_a_contender_beats_it_beyond_the_noise() {
        // Equal speeds; the incumbent's sweep run was unlucky (and outside the span).
        let mut step = configs(&[(1024, 1.0e-5), (2048, 1.05e-5), (4096, 2.0e-5)]);
        let mut k = 0;
        settle(&mut step, Some(2), &[], &budget(), 1.0, &mut |_| {
            Ok(wobble(&mut k) * 1.0e-8)
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        assert!(s.kept && s.faster == 2, "{s:?}");
        assert_eq!(step.best().unwrap().label, "4096 B");
        let note = settled_of(&step);
        assert!(note.choice.label == "4096 B" && note.kept, "{note:?}");
        let (same, open, _) = rivals(&step).unwrap();
        let tie = [same, open].concat();
        assert!(
            tie.contains(&"1024 B".to_string()) && tie.contains(&"2048 B".to_string()),
            "{tie:?}"
        );

        // The same, but 2048 B is 20 % faster: the step leaves its incumbent.
        let mut step = configs(&[(1024, 1.0e-5), (2048, 1.05e-5), (4096, 2.0e-5)]);
        let mut k = 0;
        settle(&mut step, Some(2), &[], &budget(), 1.0, &mut |row| {
            let per = if bytes(row) == 2048 { 0.8e-8 } else { 1.0e-8 };
            Ok(wobble(&mut k) * per)
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        assert!(!s.kept, "{s:?}");
        assert_eq!(step.best().unwrap().label, "2048 B");
        let inc = s.others.iter().find(|v| v.row == 2).unwrap();
        assert_eq!(inc.comparison.outcome, Outcome::Different);
        assert!(rivals(&step).is_none(), "{:?}", rivals(&step));
    }

    #[test]
    fn of_contenders_not_told_apart_the_smallest_buffers_are_chosen() {
        // The incumbent (8192 B) is 30 % behind; 65536 B and 16384 B are alike and
        // fastest; 1024 B beats the incumbent but is 10 % behind the fastest.
        let sweep = [
            (1024, 1.0e-5),
            (8192, 1.3e-5),
            (16384, 1.0e-5),
            (65536, 0.9e-5),
        ];
        let per = |row: &Row| match bytes(row) {
            8192 => 1.3e-8,
            1024 => 1.1e-8,
            _ => 1.0e-8,
        };
        let mut step = configs(&sweep);
        let mut k = 0;
        settle(&mut step, Some(1), &[], &budget(), 1.0, &mut |row| {
            Ok(wobble(&mut k) * per(row))
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        assert!(!s.kept, "{s:?}");
        assert_eq!(step.best().unwrap().label, "16384 B", "{s:?}");
        let small = s.others.iter().find(|v| v.row == 0).unwrap();
        assert_eq!(standing_of(&small.comparison), "slower");
        let note = settled_of(&step);
        assert_eq!(note.choice.label, "16384 B");
        if s.fastest != s.faster {
            assert_eq!(note.fastest.map(|f| f.label).as_deref(), Some("65536 B"));
        } else {
            assert!(note.fastest.is_none());
        }

        // A smaller candidate the runs cannot separate from the fastest, but do
        // not show equivalent either (its runs swing ±8 %), is not enough.
        let mut step = configs(&sweep);
        let (mut k, mut j) = (0, 0u64);
        settle(&mut step, Some(1), &[], &budget(), 1.0, &mut |row| {
            Ok(match bytes(row) {
                8192 => wobble(&mut k) * 1.3e-8,
                1024 => wobble(&mut k) * 1.1e-8,
                65536 => wobble(&mut k) * 0.98e-8,
                _ => {
                    j += 1;
                    (1.0 + 0.08 * ((j * 3 % 5) as f64 - 2.0) / 2.0) * 1.0e-8
                }
            })
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        let swinging = s.others.iter().find(|v| v.row == 2).unwrap();
        assert_eq!(swinging.comparison.outcome, Outcome::Inconclusive, "{s:?}");
        assert_eq!(step.best().unwrap().label, "65536 B", "{s:?}");

        // Without an incumbent, the same rule among the contenders.
        let mut step = configs(&[(65536, 0.9e-5), (16384, 1.0e-5), (4096, 1.0e-5)]);
        let mut k = 0;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |_| {
            Ok(wobble(&mut k) * 1.0e-8)
        })
        .unwrap();
        assert_eq!(step.best().unwrap().label, "4096 B");
        assert!(!step.settled.clone().unwrap().kept);
    }

    #[test]
    fn the_incumbent_takes_the_last_place_among_many_contenders() {
        let sweep: Vec<(usize, f64)> = (0..8).map(|i| (1000 + i, 1.0e-5)).collect();
        let step = configs(&sweep);
        let c = contenders(&step, Some(7), &[], CONTENDERS);
        assert_eq!(c.len(), CONTENDERS);
        assert_eq!(c.last(), Some(&7));
        assert_eq!(contenders(&step, None, &[], CONTENDERS).len(), CONTENDERS);
        let c = contenders(&step, Some(7), &[], 2);
        assert_eq!(c, vec![0, 7]);
    }

    #[test]
    fn a_raced_configuration_is_settled_and_compared_with_the_choice() {
        // Row 5 (32768 B) is far behind in its one sweep run, so only being
        // raced makes it a contender, beyond the most the budget affords.
        let step = configs(&FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND);
        let c = contenders(&step, Some(0), &[5, 0], 2);
        assert_eq!(c, vec![1, 0, 5]);
        let mut step = configs(&FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND);
        let mut k = 0;
        settle(&mut step, Some(0), &[5], &budget(), 1.0, &mut |row| {
            let per = if bytes(row) == 32768 { 1.2e-8 } else { 1.0e-8 };
            Ok(wobble(&mut k) * per)
        })
        .unwrap();
        assert!(step.rows[5].repeats.len() >= 2, "the raced row ran again");
        let stands = against_stands(&step, 5);
        assert!(
            matches!(stands, Stands::Compared { ratio, outcome: Outcome::Different, .. }
                if ratio.value >= 1.2),
            "{stands:?}"
        );
        assert_eq!(
            against_stands(&step, step.settled.as_ref().unwrap().faster),
            Stands::Choice
        );
        let unsettled = configs(&FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND);
        assert_eq!(against_stands(&unsettled, 5), Stands::NothingSettled);
    }

    #[test]
    fn contenders_fit_the_steps_share_of_the_budget() {
        // 6 rounds of 0.1 s runs: 1.2 s pays for 2, 3 s for 4 (the most), none for 2.
        assert_eq!(affordable(1.2, 0.1), 2);
        assert_eq!(affordable(1.9, 0.1), 3);
        assert_eq!(affordable(30.0, 0.1), CONTENDERS);
        assert_eq!(affordable(0.0, 0.1), 2);
        assert_eq!(affordable(1.0, f64::NAN), 2);
    }

    #[test]
    fn configurations_run_once_within_the_runs_spread_are_named() {
        let mut step = configs(&FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND);
        let mut k = 0u64;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |_| {
            k += 1;
            // ±10 %: one configuration's runs stray up to 1.1× their median.
            Ok(1.0e-8 * (1.0 + 0.05 * ((k * 3 % 5) as f64 - 2.0)))
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        assert!(s.band > 1.05 && s.band < 1.2, "{}", s.band);
        assert_eq!(s.unrepeated, vec![4]);
        let note = settled_of(&step);
        let once: Vec<&str> = note
            .run_once_within_spread
            .iter()
            .map(|t| t.label.as_str())
            .collect();
        assert_eq!(once, ["16384 B"]);
        assert_eq!(note.spread, s.band);
        assert_eq!(rivals(&step).map(|r| r.2), Some(1));
    }

    #[test]
    fn every_row_says_where_it_stands_against_the_choice() {
        let mut step = configs(&FOUR_ALIKE_ONE_CLOSE_ONE_BEHIND);
        step.rows.push(Row {
            config: None,
            ..step.rows[0].clone()
        });
        assert_eq!(standing(&step, 0), None, "nothing settled yet");
        let mut k = 0u64;
        settle(&mut step, None, &[], &budget(), 1.0, &mut |row| {
            k += 1;
            let per = if bytes(row) == 8192 { 1.3e-8 } else { 1.0e-8 };
            Ok(per * (1.0 + 0.005 * ((k * 3 % 5) as f64 - 2.0)))
        })
        .unwrap();
        let s = step.settled.clone().unwrap();
        let words: Vec<Option<&str>> = (0..step.rows.len()).map(|i| standing(&step, i)).collect();
        assert_eq!(words[s.faster], Some("choice"));
        assert_eq!(words[3], Some("slower"), "{words:?}");
        assert_eq!(words[5], Some("one run, behind"), "{words:?}");
        assert_eq!(words[6], None, "a line without a configuration");
        for i in [0, 1, 2] {
            if i != s.faster {
                assert!(
                    matches!(words[i], Some("indistinguishable" | "not told apart")),
                    "{words:?}"
                );
            }
        }
    }

    #[test]
    fn a_small_sure_difference_keeps_its_significance_and_is_not_told_apart() {
        let ratio = |value: f64, lo: f64, hi: f64| crate::model::Estimate {
            value,
            lo,
            hi,
            n: 12,
        };
        let small = Comparison {
            ratio: ratio(0.975, 0.957, 0.993),
            significant: true,
            outcome: Outcome::Inconclusive,
        };
        // The table's label is categorical; the note keeps the significance the
        // words tell a small sure difference by (`render::tune_words::verdict`).
        assert_eq!(standing_of(&small), "not told apart");
        let mut step = configs(&[(1024, 1.0e-5), (4096, 1.0e-5)]);
        step.settled = Some(Settled {
            faster: 0,
            kept: false,
            fastest: 0,
            others: vec![Versus {
                row: 1,
                comparison: small,
            }],
            unrepeated: Vec::new(),
            band: 1.0,
            contenders: 2,
        });
        let note = settled_note(&step, step.settled.as_ref().unwrap());
        let v = &note.others[0];
        assert!(v.significant && v.outcome == Outcome::Inconclusive, "{v:?}");
        assert_eq!((v.ratio, v.config.label.as_str()), (small.ratio, "4096 B"));
        let faster = Comparison {
            ratio: ratio(0.8, 0.75, 0.85),
            outcome: Outcome::Different,
            ..small
        };
        assert_eq!(standing_of(&faster), "faster (paired)");
    }
}
