//! The tuner's findings in words: its notes ([`Note`]), where each configuration
//! stands against a step's settled choice, and what the choice could not be told
//! from. The measuring code records numbers and typed notes; every sentence the
//! report (`result.rs`) keeps is worded here. (The run file stores these
//! sentences, and `probes/` may not import `render/`, so they live beside the
//! tuner's data types rather than in a renderer.)

use super::grid::GRID_ROUNDS;
use super::roadmap::HAND_PAD_BYTES;
use super::stage_two::LINE_ROUNDS;
use super::{affinity_name, Note, Report, Row, Settled, Step};
use super::{BUFFER_COUNTS, STAGE_ONE_BUFFER_BYTES, WORK_STEPS};
use crate::model::Outcome;
use crate::stats::Comparison;

/// A step's note in words.
pub(super) fn note(step: &Step, n: &Note) -> String {
    match n {
        Note::Settled { contenders } => match &step.settled {
            Some(s) => settled_note(step, s, *contenders),
            None => String::new(),
        },
        Note::NotRepeated { contenders, runs } => format!(
            "{contenders} contenders were not repeated enough (budget): the choice rests on {runs} run{} each",
            if *runs == 1 { "" } else { "s" }
        ),
        Note::AgainstNotRun {
            name,
            why,
            event_bytes,
        } => format!("--against {name}: not run: {why} ({event_bytes}-byte events)"),
        Note::AgainstUnpinned { name } => {
            format!("--against {name}: run unpinned (no CPU pair to pin to here)")
        }
        Note::SweepCut { measured, of } => {
            format!("budget: measured {measured} of {of} configurations (spread over the grid)")
        }
        Note::GridCut { round, runs } => {
            format!("budget: round {round} of {GRID_ROUNDS} stopped after {runs} runs")
        }
        Note::SmtSkipped(why) => format!("SMT baseline: {why}"),
        Note::Offloaded {
            what,
            t_s,
            producer_s,
            consumer_s,
        } => offloaded(what, *t_s, *producer_s, *consumer_s),
        Note::StackOffset => "stack +N B: the producer's loop runs N bytes lower on its stack \
             than the consumer's (harness::stack::with_stack_offset; seed 004 p4_adjuststack)"
            .into(),
        Note::Switches => "ctx sw: context switches of each thread (getrusage RUSAGE_THREAD) \
             from the start gate to its last event, per 10^6 events, voluntary ones in \
             parentheses; spinlock, spin_backoff and spin_pause make no system call, so theirs \
             are the OS taking the CPU"
            .into(),
        _ => measured_note(n),
    }
}

/// The notes of a step's set-up and findings (see [`note`]).
fn measured_note(n: &Note) -> String {
    match n {
        Note::Roadmap {
            rounds,
            events,
            consumer_slower,
            baseline_s,
        } => {
            format!(
            "{rounds} rounds of {events} events, every step once per round in a rotated order; \
             baseline = the slower alone ({}): {:.2} ns per event; padding {HAND_PAD_BYTES} B \
             (hand-tuned; loop 1 searches it on p3)",
            if *consumer_slower { "consumer" } else { "producer" },
            baseline_s * 1e9
        )
        }
        Note::Padding { events } => format!(
            "p3_rmfalsesharing with each padding between the indices and the buffers, {events} \
             events a run; 1, 2 and 4 B are not run: the indices are 8-byte words, so they lay \
             p3 out as 8 B does; the padding chosen is the channel's padding between buffers \
             from here on"
        ),
        Note::BufferGrid {
            event_bytes,
            holding,
            measured,
        } => buffer_grid(*event_bytes, *holding, *measured),
        Note::Fib { n, events } => format!(
            "fib({n}): {events} events; {WORK_STEPS} multiply-adds of work per call; the limit \
             lines {LINE_ROUNDS} runs each, interleaved"
        ),
        Note::Container { ratio, rounds } => format!(
            "container (seed 004 §4.1, the consumer's map): a BTreeMap profile takes {:.2}× \
             (95 % interval {:.2}–{:.2}, {rounds} rounds paired) the time per event of a \
             HashMap one, on the same channel; the seed's swap of STL map for a hash table \
             gave 20 %",
            ratio.value, ratio.lo, ratio.hi
        ),
        Note::StageTwoGrid {
            kept,
            all,
            both_affinities,
        } => format!(
            "grid: {kept} of {all} configurations × affinity {}, {GRID_ROUNDS} rounds, every \
             round each run once, affinity on and off next to each other in alternate order \
             (from one configuration and one round to the next); the rest left out for the \
             budget, spread over the grid",
            if *both_affinities { "on, off" } else { "off" }
        ),
        Note::Affinity {
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
fn buffer_grid(event_bytes: usize, holding: usize, measured: usize) -> String {
    let mut note = format!(
        "seed 004's grid: {} buffer counts × {} sizes; {holding} of them hold a \
         {event_bytes}-byte event; measured {measured}",
        BUFFER_COUNTS.len(),
        STAGE_ONE_BUFFER_BYTES.len(),
    );
    if measured < holding {
        note.push_str(
            " (the budget's share ended: the runs are spread over the whole grid, so what \
             was left out is scattered, not one corner)",
        );
    }
    if holding < STAGE_ONE_BUFFER_BYTES.len() * BUFFER_COUNTS.len() {
        note.push_str(&format!(
            "; sizes below {event_bytes} B cannot hold one event and are not run"
        ));
    }
    note
}

/// The work offloaded by a step of `t` seconds per event, in words.
pub(super) fn offloaded(what: &str, t: f64, tp: f64, tc: f64) -> String {
    let share = super::roadmap::work_offloaded(t, tp, tc);
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

/// At most this many names in a list of rows run once.
const NAMES_LISTED: usize = 8;

/// A row's name, with its affinity where the step ran both.
fn name(row: &Row) -> String {
    match row.pinned {
        Some(p) => format!("{}, affinity {}", row.label, affinity_name(p)),
        None => row.label.clone(),
    }
}

/// What one comparison shows: in the note's words, and in the table's
/// `vs_choice` column (see [`standing`]).
pub(super) fn verdict(c: &Comparison) -> [&'static str; 2] {
    match c.outcome {
        Outcome::Different if c.ratio.value > 1.0 => ["slower", "slower"],
        Outcome::Different => [
            "faster by the paired interval, though not by the median",
            "faster (paired)",
        ],
        Outcome::Equivalent => ["indistinguishable (within ±3 %)", "indistinguishable"],
        // The interval excludes 1 but reaches into the ±3 % band: a difference,
        // perhaps smaller than a step moves for.
        Outcome::Inconclusive if c.significant && c.ratio.value > 1.0 => {
            ["slower, but perhaps by less than 3 %", "not told apart"]
        }
        Outcome::Inconclusive if c.significant => {
            ["faster, but perhaps by less than 3 %", "not told apart"]
        }
        Outcome::Inconclusive => ["cannot be told apart with these runs", "not told apart"],
    }
}

/// The settling's note, answer first: the choice, each contender against it,
/// the configurations one run cannot separate from it, then how it was settled.
fn settled_note(step: &Step, s: &Settled, contenders: usize) -> String {
    let mut note = format!(
        "choice {}{} ({} rounds; {contenders} contenders repeated in rotated order)",
        name(&step.rows[s.faster]),
        if s.kept {
            ", the incumbent, kept: no contender was faster beyond the noise".to_string()
        } else if s.fastest != s.faster {
            format!(
                ", the fewest buffer bytes of those equivalent to the fastest median, {}",
                name(&step.rows[s.fastest])
            )
        } else {
            String::new()
        },
        step.rows[s.faster].repeats.len(),
    );
    for v in &s.others {
        let r = v.comparison.ratio;
        note.push_str(&format!(
            "; {}: {:.3}× as long per event (95 % CI {:.3}–{:.3}, {} rounds), {}",
            name(&step.rows[v.row]),
            r.value,
            r.lo,
            r.hi,
            r.n,
            verdict(&v.comparison)[0]
        ));
    }
    if !s.unrepeated.is_empty() {
        let names: Vec<String> = s
            .unrepeated
            .iter()
            .take(NAMES_LISTED)
            .map(|&i| name(&step.rows[i]))
            .collect();
        let more = s.unrepeated.len().saturating_sub(NAMES_LISTED);
        note.push_str(&format!(
            "; {} configuration{} ran once within {:.0} % of the choice's median (the most a contender's runs strayed here), too close for one run to separate: {}{}",
            s.unrepeated.len(),
            if s.unrepeated.len() == 1 { "" } else { "s" },
            (s.band - 1.0) * 100.0,
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

/// Where row `i` stands against the step's settled choice, in a word or two:
/// `choice`, `slower`, `indistinguishable` (within ±3 %), `not told apart`,
/// `one run, within spread` (run once, within the repeats' spread of the choice),
/// `one run, behind`; `None` for rows without a configuration or when nothing was
/// settled.
pub(super) fn standing(step: &Step, i: usize) -> Option<&'static str> {
    let s = step.settled.as_ref()?;
    let row = step.rows.get(i)?;
    row.config?;
    if i == s.faster {
        return Some("choice");
    }
    if let Some(v) = s.others.iter().find(|v| v.row == i) {
        return Some(verdict(&v.comparison)[1]);
    }
    Some(if s.unrepeated.contains(&i) {
        "one run, within spread"
    } else if row.repeats.is_empty() {
        "one run, behind"
    } else {
        // A contender dropped before it shared two rounds with the choice.
        "not told apart"
    })
}

/// The contenders the choice could not be told from, in words, and whether it was
/// kept from the steps before (`None` when it is ahead of every one beyond the
/// noise, or nothing was settled).
pub(super) fn tie(step: &Step) -> Option<String> {
    let s = step.settled.as_ref()?;
    let names = |outcome: Outcome| -> Vec<String> {
        s.others
            .iter()
            .filter(|v| v.comparison.outcome == outcome)
            .filter_map(|v| step.rows.get(v.row).map(name))
            .collect()
    };
    let (same, open) = (names(Outcome::Equivalent), names(Outcome::Inconclusive));
    let mut parts = Vec::new();
    let once = s.unrepeated.len();
    if s.kept && !(same.is_empty() && open.is_empty() && once == 0) {
        parts.push("kept from the steps before (no contender was faster beyond the noise)".into());
    }
    if !same.is_empty() {
        parts.push(format!(
            "indistinguishable here (within ±3 %) from {}",
            same.join("; ")
        ));
    }
    if !open.is_empty() {
        parts.push(format!(
            "not told apart from {} with the runs the budget allowed",
            open.join("; ")
        ));
    }
    if once > 0 {
        parts.push(format!(
            "{once} configuration{} run once lie within the runs' spread of it (the step's table marks them \"one run, within spread\")",
            if once == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", and "))
}

/// Where row `i` (a configuration a user asked to race) stands against the
/// step's choice, in words: the choice itself, or its paired ratio, interval and
/// verdict.
pub(super) fn against(step: &Step, i: usize) -> String {
    let Some(s) = step.settled.as_ref() else {
        return "not repeated: the step settled nothing (budget)".into();
    };
    if i == s.faster {
        return "this run's choice".into();
    }
    match s.others.iter().find(|v| v.row == i) {
        Some(v) => {
            let r = v.comparison.ratio;
            format!(
                "takes {:.3}× as long per event as the choice (95 % CI {:.3}–{:.3}, {} rounds): {}",
                r.value,
                r.lo,
                r.hi,
                r.n,
                verdict(&v.comparison)[0]
            )
        }
        None => "not repeated with the choice (budget)".into(),
    }
}

/// The report's first finding: the configuration chosen and why.
pub(super) fn best(r: &Report) -> String {
    format!("best: {} ({})", super::describe(&r.best), why(r))
}

/// The CPU the best row's producer and consumer used, as seed 004 reports it.
pub(super) fn cpu_note(s: &Step) -> Option<String> {
    let best = s.best()?;
    let [p, c] = best.cpu_share?;
    Some(format!(
        "{}: the fastest run ({}) kept the producer busy {:.0} % and the consumer {:.0} % of the time (thread CPU time ÷ wall time; seed 004: about 100 % and 41 %)",
        s.title,
        best.label,
        p * 100.0,
        c * 100.0
    ))
}

/// The warning about pins the OS refused.
pub(super) fn refused_pins(n: usize) -> String {
    format!(
        "the OS refused {n} pins of the producer or consumer; those runs went where the OS put them"
    )
}

/// Why the tuner chose its configuration: whose choice, its affinity, what it
/// could not be told from, and where each `--against` configuration stands.
pub(super) fn why(r: &Report) -> String {
    let w = &r.why;
    let stage = if w.stage_two {
        "Stage Two"
    } else {
        "Stage One"
    };
    let mut s = format!(
        "{stage}'s choice for {}-byte events, affinity {}",
        w.event_bytes,
        affinity_name(r.best_pinned)
    );
    let Some(step) = r.steps.get(w.step) else {
        return s;
    };
    if let Some(t) = step.tie() {
        // Another run may pick the runner-up: say so rather than claim a winner.
        s.push_str(&format!("; {t}"));
    }
    for a in &w.against {
        let stands = match step.against_row(a) {
            // Stage One does not race them; Stage Two's notes say where they stand.
            _ if !w.stage_two => {
                "not compared with this choice (Stage One's; only Stage Two races them)".into()
            }
            Some(i) => against(step, i),
            None => format!("not run in {} (see its notes)", step.title),
        };
        s.push_str(&format!("; --against {}: {stands}", a.name));
    }
    s
}
