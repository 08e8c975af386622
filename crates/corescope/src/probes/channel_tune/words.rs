//! The tuner's findings in words: its notes ([`Note`]), where each configuration
//! stands against a step's settled choice, and what the choice could not be told
//! from. The measuring code records numbers and typed notes; the report
//! (`result.rs`) and the choice's reasons word them here.

use super::{affinity_name, Note, Row, Settled, Step};
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
        Note::Said(text) => text.clone(),
    }
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
