//! A tuner's typed findings (`tune channel`, `model::tuning`) in words: the
//! configuration it chose and why, each step's notes, where a configuration
//! stands against a step's choice. Pure: the model in, sentences out.

use crate::model::tuning::{Settled, Stands, StepNote, Tuned};
use crate::model::{Estimate, Finding, Outcome};

/// At most this many names in a list of configurations run once.
const NAMES_LISTED: usize = 8;

/// `on` or `off`: an affinity in the tables' and notes' words.
fn on_off(pinned: bool) -> &'static str {
    if pinned {
        "on"
    } else {
        "off"
    }
}

/// A configuration's name, with its affinity where the step ran both.
fn name(t: &Tuned) -> String {
    match t.affinity {
        Some(p) => format!("{}, affinity {}", t.label, on_off(p)),
        None => t.label.clone(),
    }
}

/// What a paired ratio (a contender's time per event ÷ the choice's) shows, in
/// the notes' words.
pub fn verdict(ratio: &Estimate, significant: bool, outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Different if ratio.value > 1.0 => "slower",
        Outcome::Different => "faster by the paired interval, though not by the median",
        Outcome::Equivalent => "indistinguishable (within ±3 %)",
        // The interval excludes 1 but reaches into the ±3 % band: a difference,
        // perhaps smaller than a step moves for.
        Outcome::Inconclusive if significant && ratio.value > 1.0 => {
            "slower, but perhaps by less than 3 %"
        }
        Outcome::Inconclusive if significant => "faster, but perhaps by less than 3 %",
        Outcome::Inconclusive => "cannot be told apart with these runs",
    }
}

/// A step's note as a sentence, after the step's title.
pub fn step_note(step: &str, n: &StepNote) -> String {
    format!("{step}: {}", note(n))
}

/// A step's note in words.
pub fn note(n: &StepNote) -> String {
    match n {
        StepNote::Settled(s) => settled(s),
        StepNote::NotRepeated { contenders, runs } => format!(
            "{contenders} contenders were not repeated enough (budget): the choice rests on {runs} run{} each",
            if *runs == 1 { "" } else { "s" }
        ),
        StepNote::AgainstNotRun {
            name,
            why,
            event_bytes,
        } => format!("--against {name}: not run: {why} ({event_bytes}-byte events)"),
        StepNote::AgainstUnpinned { name } => {
            format!("--against {name}: run unpinned (no CPU pair to pin to here)")
        }
        StepNote::SweepCut { measured, of } => {
            format!("budget: measured {measured} of {of} configurations (spread over the grid)")
        }
        StepNote::GridCut {
            round,
            rounds,
            runs,
        } => format!("budget: round {round} of {rounds} stopped after {runs} runs"),
        StepNote::SmtSkipped { why } => format!("SMT baseline: {why}"),
        StepNote::Offloaded {
            what,
            t_s,
            producer_s,
            consumer_s,
        } => offloaded(what, *t_s, *producer_s, *consumer_s),
        StepNote::StackOffset => "stack +N B: the producer's loop runs N bytes lower on its stack \
             than the consumer's (harness::stack::with_stack_offset; seed 004 p4_adjuststack)"
            .into(),
        StepNote::Switches => "ctx sw: context switches of each thread (getrusage RUSAGE_THREAD) \
             from the start gate to its last event, per 10^6 events, voluntary ones in \
             parentheses; spinlock, spin_backoff and spin_pause make no system call, so theirs \
             are the OS taking the CPU"
            .into(),
        StepNote::CpuShare {
            run,
            producer_share,
            consumer_share,
        } => format!(
            "the fastest run ({run}) kept the producer busy {:.0} % and the consumer {:.0} % of the time (thread CPU time ÷ wall time; seed 004: about 100 % and 41 %)",
            producer_share * 100.0,
            consumer_share * 100.0
        ),
        // Named, not `_`: a new kind of note must be worded here to compile.
        StepNote::Roadmap { .. }
        | StepNote::Padding { .. }
        | StepNote::BufferGrid { .. }
        | StepNote::Fib { .. }
        | StepNote::Container { .. }
        | StepNote::StageTwoGrid { .. }
        | StepNote::Affinity { .. } => measured_note(n),
    }
}

/// The notes of a step's set-up and findings (see [`note`], which hands over
/// only these kinds).
fn measured_note(n: &StepNote) -> String {
    match n {
        StepNote::Roadmap {
            rounds,
            events,
            consumer_slower,
            baseline_s,
            padding_bytes,
        } => {
            format!(
            "{rounds} rounds of {events} events, every step once per round in a rotated order; \
             baseline = the slower alone ({}): {:.2} ns per event; padding {padding_bytes} B \
             (hand-tuned; loop 1 searches it on p3)",
            if *consumer_slower { "consumer" } else { "producer" },
            baseline_s * 1e9
        )
        }
        StepNote::Padding { events } => format!(
            "p3_rmfalsesharing with each padding between the indices and the buffers, {events} \
             events a run; 1, 2 and 4 B are not run: the indices are 8-byte words, so they lay \
             p3 out as 8 B does; the padding chosen is the channel's padding between buffers \
             from here on"
        ),
        StepNote::BufferGrid {
            event_bytes,
            buffer_counts,
            buffer_sizes,
            holding,
            measured,
        } => buffer_grid(
            *event_bytes,
            (*buffer_counts, *buffer_sizes),
            *holding,
            *measured,
        ),
        StepNote::Fib {
            n,
            events,
            work_steps,
            line_runs,
        } => format!(
            "fib({n}): {events} events; {work_steps} multiply-adds of work per call; the limit \
             lines {line_runs} runs each, interleaved"
        ),
        StepNote::Container { ratio, rounds, .. } => format!(
            "container (seed 004 §4.1, the consumer's map): a BTreeMap profile takes {:.2}× \
             (95 % interval {:.2}–{:.2}, {rounds} rounds paired) the time per event of a \
             HashMap one, on the same channel; the seed's swap of STL map for a hash table \
             gave 20 %",
            ratio.value, ratio.lo, ratio.hi
        ),
        StepNote::StageTwoGrid {
            kept,
            all,
            both_affinities,
            rounds,
        } => format!(
            "grid: {kept} of {all} configurations × affinity {}, {rounds} rounds, every \
             round each run once, affinity on and off next to each other in alternate order \
             (from one configuration and one round to the next); the rest left out for the \
             budget, spread over the grid",
            if *both_affinities { "on, off" } else { "off" }
        ),
        StepNote::Affinity {
            configs,
            median,
            least,
            most,
        } => format!(
            "affinity off ÷ on (time per event), {configs} configurations run both ways: median \
             {median:.2}×, {least:.2}–{most:.2}×"
        ),
        _ => String::new(),
    }
}

/// Loop 3's note: how much of seed 004's grid holds an event and ran.
fn buffer_grid(
    event_bytes: usize,
    (counts, sizes): (usize, usize),
    holding: usize,
    measured: usize,
) -> String {
    let mut note = format!(
        "seed 004's grid: {counts} buffer counts × {sizes} sizes; {holding} of them hold a \
         {event_bytes}-byte event; measured {measured}"
    );
    if measured < holding {
        note.push_str(
            " (the budget's share ended: the runs are spread over the whole grid, so what \
             was left out is scattered, not one corner)",
        );
    }
    if holding < counts * sizes {
        note.push_str(&format!(
            "; sizes below {event_bytes} B cannot hold one event and are not run"
        ));
    }
    note
}

/// The work offloaded by a step of `t` seconds per event, in words.
pub fn offloaded(what: &str, t: f64, tp: f64, tc: f64) -> String {
    let share = StepNote::work_offloaded(t, tp, tc);
    let formula = format!(
        "1 − t / (t_producer + t_consumer) = 1 − {:.2} / ({:.2} + {:.2}) ns",
        t * 1e9,
        tp * 1e9,
        tc * 1e9
    );
    if share < 0.0 {
        // Slower than the two sides one after the other: no share to state.
        return format!(
            "work offloaded by {what}: none; the pair takes {}× as long as producer and \
             consumer one after the other ({formula}; seed 004 §3.4)",
            crate::units::fmt_ratio(t / (tp + tc))
        );
    }
    format!(
        "work offloaded by {what}: {:.0} % ({formula}; seed 004 §3.4; 50 % is perfect balancing)",
        share * 100.0
    )
}

/// A contender's paired ratio to the choice: `1.034× as long per event (95 % CI
/// 1.012–1.051, 8 rounds)`.
fn as_long(r: &Estimate) -> String {
    format!(
        "{:.3}× as long per event (95 % CI {:.3}–{:.3}, {} rounds)",
        r.value, r.lo, r.hi, r.n
    )
}

/// The settling's note, answer first: the choice, each contender against it,
/// the configurations one run cannot separate from it.
fn settled(s: &Settled) -> String {
    let mut note = format!(
        "choice {}{} ({} rounds; {} contenders repeated in rotated order)",
        name(&s.choice),
        if s.kept {
            ", the incumbent, kept: no contender was faster beyond the noise".to_string()
        } else if let Some(f) = &s.fastest {
            format!(
                ", the fewest buffer bytes of those equivalent to the fastest median, {}",
                name(f)
            )
        } else {
            String::new()
        },
        s.rounds,
        s.contenders,
    );
    for v in &s.others {
        note.push_str(&format!(
            "; {}: {}, {}",
            name(&v.config),
            as_long(&v.ratio),
            verdict(&v.ratio, v.significant, v.outcome)
        ));
    }
    let once = &s.run_once_within_spread;
    if !once.is_empty() {
        let names: Vec<String> = once.iter().take(NAMES_LISTED).map(name).collect();
        let more = once.len().saturating_sub(NAMES_LISTED);
        note.push_str(&format!(
            "; {} configuration{} ran once within {:.0} % of the choice's median (the most a contender's runs strayed here), too close for one run to separate: {}{}",
            once.len(),
            if once.len() == 1 { "" } else { "s" },
            (s.spread - 1.0) * 100.0,
            names.join("; "),
            if more > 0 {
                format!("; and {more} more (the table's vs_choice column marks them all)")
            } else {
                String::new()
            }
        ));
    }
    note
}

/// What the choice could not be told from, and whether it was kept from the
/// steps before (`None` when it is ahead of every contender beyond the noise).
pub fn tie(
    kept: bool,
    equivalent: &[Tuned],
    not_told_apart: &[Tuned],
    run_once: usize,
) -> Option<String> {
    let names = |ts: &[Tuned]| ts.iter().map(name).collect::<Vec<_>>().join("; ");
    let mut parts = Vec::new();
    if kept && !(equivalent.is_empty() && not_told_apart.is_empty() && run_once == 0) {
        parts.push("kept from the steps before (no contender was faster beyond the noise)".into());
    }
    if !equivalent.is_empty() {
        parts.push(format!(
            "indistinguishable here (within ±3 %) from {}",
            names(equivalent)
        ));
    }
    if !not_told_apart.is_empty() {
        parts.push(format!(
            "not told apart from {} with the runs the budget allowed",
            names(not_told_apart)
        ));
    }
    if run_once > 0 {
        parts.push(format!(
            "{run_once} configuration{} run once lie within the runs' spread of it (the step's table marks them \"one run, within spread\")",
            if run_once == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", and "))
}

/// Where a configuration given with `--against` stands, in words.
pub fn stands(s: &Stands, step: &str) -> String {
    match s {
        Stands::StageOne => {
            "not compared with this choice (Stage One's; only Stage Two races them)".into()
        }
        Stands::NothingSettled => "not repeated: the step settled nothing (budget)".into(),
        Stands::Choice => "this run's choice".into(),
        Stands::Compared {
            ratio,
            significant,
            outcome,
        } => format!(
            "takes {:.3}× as long per event as the choice (95 % CI {:.3}–{:.3}, {} rounds): {}",
            ratio.value,
            ratio.lo,
            ratio.hi,
            ratio.n,
            verdict(ratio, *significant, *outcome)
        ),
        Stands::NotRepeated => "not repeated with the choice (budget)".into(),
        Stands::NotRun => format!("not run in {step} (see its notes)"),
    }
}

/// The report's first finding, a [`Finding::TunerChoice`]: `best: <configuration>
/// (<why>)` (empty for any other finding).
pub fn choice(f: &Finding) -> String {
    let Finding::TunerChoice {
        config,
        step,
        stage_two,
        event_bytes,
        affinity,
        kept,
        equivalent,
        not_told_apart,
        run_once_within_spread,
        against,
    } = f
    else {
        return String::new();
    };
    let stage = if *stage_two { "Stage Two" } else { "Stage One" };
    let mut why = format!(
        "{stage}'s choice for {event_bytes}-byte events, affinity {}",
        on_off(*affinity)
    );
    if let Some(t) = tie(*kept, equivalent, not_told_apart, *run_once_within_spread) {
        // Another run may pick the runner-up: say so rather than claim a winner.
        why.push_str(&format!("; {t}"));
    }
    for a in against {
        why.push_str(&format!(
            "; --against {}: {}",
            a.name,
            stands(&a.stands, step)
        ));
    }
    format!("best: {config} ({why})")
}

/// The warning about pins the OS refused.
pub fn pins_refused(n: usize) -> String {
    format!(
        "the OS refused {n} pins of the producer or consumer; those runs went where the OS put them"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tuning::{Against, Versus};
    use crate::model::Warning;

    fn e(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 12,
        }
    }

    fn tuned(label: &str, affinity: Option<bool>) -> Tuned {
        Tuned {
            label: label.into(),
            affinity,
        }
    }

    #[test]
    fn a_small_sure_difference_is_worded_as_such() {
        let w = |r: Estimate, significant| verdict(&r, significant, Outcome::Inconclusive);
        assert_eq!(
            w(e(0.975, 0.957, 0.993), true),
            "faster, but perhaps by less than 3 %"
        );
        assert_eq!(
            w(e(1.02, 1.005, 1.06), true),
            "slower, but perhaps by less than 3 %"
        );
        assert_eq!(
            w(e(1.0, 0.9, 1.1), false),
            "cannot be told apart with these runs"
        );
    }

    #[test]
    fn a_pair_slower_than_both_sides_added_offloads_nothing() {
        let slow = offloaded("p8", 481.7e-9, 3.35e-9, 2.08e-9);
        assert!(slow.starts_with("work offloaded by p8: none;"), "{slow}");
        assert!(slow.contains("takes 88.7× as long"), "{slow}");
        assert!(!slow.contains('%'), "no negative share: {slow}");
        let fair = offloaded("p3", 3.5e-9, 3.35e-9, 2.08e-9);
        assert!(fair.starts_with("work offloaded by p3: 36 %"), "{fair}");
    }

    #[test]
    fn a_settling_says_the_choice_each_contender_and_the_runs_once() {
        let once: Vec<Tuned> = (0..10)
            .map(|i| tuned(&format!("{i} B"), Some(false)))
            .collect();
        let n = StepNote::Settled(Settled {
            choice: tuned("3 × 4096 B", Some(true)),
            rounds: 6,
            contenders: 3,
            kept: false,
            fastest: Some(tuned("3 × 65536 B", Some(true))),
            others: vec![Versus {
                config: tuned("3 × 1024 B", Some(true)),
                ratio: e(1.2, 1.1, 1.3),
                significant: true,
                outcome: Outcome::Different,
            }],
            run_once_within_spread: once,
            spread: 1.08,
        });
        let text = step_note("stage two: fib, 24-byte events", &n);
        assert!(
            text.starts_with(
                "stage two: fib, 24-byte events: choice 3 × 4096 B, affinity on, the fewest \
                 buffer bytes of those equivalent to the fastest median, 3 × 65536 B, \
                 affinity on (6 rounds; 3 contenders repeated in rotated order); 3 × 1024 B, \
                 affinity on: 1.200× as long per event (95 % CI 1.100–1.300, 12 rounds), slower; \
                 10 configurations ran once within 8 % of the choice's median"
            ),
            "{text}"
        );
        assert!(
            text.contains("7 B, affinity off; and 2 more (the table's vs_choice column"),
            "{text}"
        );
    }

    #[test]
    fn the_choice_says_why_and_where_each_raced_configuration_stands() {
        let mut f = Finding::TunerChoice {
            config: "3 × 4096 B, pad 128 B, spin_then_park".into(),
            step: "stage two: fib, 24-byte events".into(),
            stage_two: true,
            event_bytes: 24,
            affinity: true,
            kept: true,
            equivalent: vec![tuned("3 × 1024 B", Some(false))],
            not_told_apart: Vec::new(),
            run_once_within_spread: 1,
            against: vec![
                Against {
                    name: "a.json".into(),
                    stands: Stands::Compared {
                        ratio: e(1.05, 1.04, 1.06),
                        significant: true,
                        outcome: Outcome::Different,
                    },
                },
                Against {
                    name: "b.json".into(),
                    stands: Stands::NotRun,
                },
            ],
        };
        assert_eq!(
            crate::render::words::finding(&f),
            "best: 3 × 4096 B, pad 128 B, spin_then_park (Stage Two's choice for 24-byte \
             events, affinity on; kept from the steps before (no contender was faster beyond \
             the noise), and indistinguishable here (within ±3 %) from 3 × 1024 B, affinity \
             off, and 1 configuration run once lie within the runs' spread of it (the step's \
             table marks them \"one run, within spread\"); --against a.json: takes 1.050× as \
             long per event as the choice (95 % CI 1.040–1.060, 12 rounds): slower; --against \
             b.json: not run in stage two: fib, 24-byte events (see its notes))"
        );
        // Ahead of every contender and kept: nothing to add but the stage.
        if let Finding::TunerChoice {
            equivalent,
            run_once_within_spread,
            against,
            ..
        } = &mut f
        {
            equivalent.clear();
            *run_once_within_spread = 0;
            against.clear();
        }
        assert_eq!(
            crate::render::words::finding(&f),
            "best: 3 × 4096 B, pad 128 B, spin_then_park (Stage Two's choice for 24-byte \
             events, affinity on)"
        );
        assert_eq!(
            crate::render::words::warning(&Warning::PinsRefused { pins: 3 }),
            "the OS refused 3 pins of the producer or consumer; those runs went where the OS \
             put them"
        );
    }

    #[test]
    fn the_findings_read_back_from_the_run_file() {
        let notes = [
            StepNote::GridCut {
                round: 2,
                rounds: 3,
                runs: 7,
            },
            StepNote::SmtSkipped {
                why: "skipped: no SMT".into(),
            },
            StepNote::Switches,
            notes_container(),
        ];
        for note in notes {
            let f = Finding::TuneStep {
                step: "stage one: test".into(),
                note,
            };
            let json = serde_json::to_string(&f).unwrap();
            assert!(json.contains("\"kind\":\"tune_step\""), "{json}");
            let back: Finding = serde_json::from_str(&json).unwrap();
            assert_eq!(back, f);
            assert!(crate::render::words::finding(&back).starts_with("stage one: test: "));
        }
        let text = note(&StepNote::GridCut {
            round: 2,
            rounds: 3,
            runs: 7,
        });
        assert_eq!(text, "budget: round 2 of 3 stopped after 7 runs");
        // An older file's container note, without the comparison's verdict, reads
        // and is worded as a new one.
        let old =
            r#"{"note":"container","ratio":{"value":1.2,"lo":1.1,"hi":1.3,"n":6},"rounds":6}"#;
        let old: StepNote = serde_json::from_str(old).unwrap();
        assert_eq!(note(&old), note(&notes_container()));
    }

    /// A container note as a new run file keeps it.
    fn notes_container() -> StepNote {
        StepNote::Container {
            ratio: e(1.2, 1.1, 1.3),
            significant: Some(true),
            outcome: Some(Outcome::Different),
            rounds: 6,
        }
    }
}
