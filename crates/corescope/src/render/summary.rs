//! The one-screen summary a run ends with: the machine, then per probe its key
//! results with their intervals in labelled words, then the warnings that matter.
//! A pure function of the run file (typed findings and series estimates); it
//! never measures. Lines wrap at the width with a hanging indent and are never
//! cut: when the screen is full a probe's last items are left out whole and
//! counted. The full tables are `corescope report` (and `run --verbose`).

use super::summary_headline::{headlines, restated, Restated};
use super::summary_items::probe_items;
use super::terminal::wrap;
use super::warning_overview;
use crate::model::{ProbeResult, RunFile, Status, SummaryShape};
use crate::probes::AnyProbe;

/// Most lines the summary aims for (one screen); more only when the probes alone
/// need more than one line each.
pub const MAX_LINES: usize = 40;
/// Width of the probe-name column (the hanging indent of a probe's lines).
const NAME_COLS: usize = 14;
/// Most lines one probe gets when the screen has room.
const MAX_PROBE_LINES: usize = 3;
/// Most lines one probe gets when the screen has room to spare (few probes).
const MAX_PROBE_LINES_ROOMY: usize = 8;
/// The warnings take at most this many lines: the count, the machine's state, and
/// the first warnings (every warning is in `corescope report`).
const MAX_WARNING_LINES: usize = 6;
/// Indent of a wrapped header or warning line.
const HANG: usize = 2;

/// What `±` and `(n=1)` mean, said once under the machine.
const LEGEND: &str = "± = 95 % CI of the median (when over 1 %); (n=1) = measured once; full \
                      tables: corescope report";

/// The summary of `run` in lines of at most `width` columns (at least 40), at
/// most [`MAX_LINES`] of them while the probes fit one line each; no line is cut.
/// Each probe is drawn by the summary shape its registry entry states.
pub fn summary(run: &RunFile, width: usize) -> Vec<String> {
    summary_in(run, width, &crate::probes::registry())
}

/// [`summary`] with the probes of `registry`: a probe's result is drawn by the
/// shape its probe states ([`crate::probes::Probe::summary_shape`]); a result whose probe is not
/// in the registry (an older run file's) by the default shape.
pub fn summary_in(run: &RunFile, width: usize, registry: &[Box<dyn AnyProbe>]) -> Vec<String> {
    let width = width.max(40);
    let run = super::for_display(run);
    let mut out = wrap("", &machine_line(&run), HANG, width);
    out.extend(wrap("", LEGEND, HANG, width));
    let probes: Vec<ProbeText> = run
        .probes
        .iter()
        .map(|p| probe_text(p, &shape_of(registry, &p.id), &run))
        .collect();
    let warnings = warning_blocks(&run, width);
    let budget = MAX_LINES.saturating_sub(out.len());
    let (blocks, warn_cap) = fit(&probes, &warnings, width, budget);
    out.extend(blocks.into_iter().flatten());
    out.extend(take_warnings(&warnings, warn_cap));
    out
}

/// The summary shape of the probe `id` in `registry`; the default shape for a
/// probe it does not know.
pub fn shape_of(registry: &[Box<dyn AnyProbe>], id: &str) -> SummaryShape {
    registry
        .iter()
        .find(|p| p.id() == id)
        .map_or(SummaryShape::FirstItem, |p| p.summary_shape())
}

/// What the summary can say of one probe: its headline wordings (richest first),
/// the items after it, and how many more lines than the others it gets (the
/// scaling probes lead).
struct ProbeText<'r> {
    id: &'r str,
    heads: Vec<String>,
    items: Vec<String>,
    /// Items left out after a headline that states them already.
    restated: Vec<Restated>,
    extra: usize,
}

/// The probe's headline and items; without a headline its first item leads.
fn probe_text<'r>(p: &'r ProbeResult, shape: &SummaryShape, run: &RunFile) -> ProbeText<'r> {
    // A probe that did not complete leads with why, not with a figure.
    let mut heads = if p.status == Status::Completed {
        headlines(p, shape)
    } else {
        Vec::new()
    };
    let mut items = probe_items(p, shape, run);
    items.retain(|i| !heads.contains(i));
    let restated = if heads.is_empty() {
        Vec::new()
    } else {
        restated(p, shape)
    };
    if heads.is_empty() && !items.is_empty() {
        // The first item leads; in few columns, without what its head repeats of the
        // probe (`time per increment: packed … as long as padded …`).
        let first = items.remove(0);
        let rest = first.split_once(": ").map(|(_, r)| r.to_string());
        heads.push(first);
        heads.extend(rest.filter(|r| r.chars().any(char::is_numeric)));
    }
    ProbeText {
        id: p.id.as_str(),
        heads,
        items,
        restated,
        extra: shape.extra_lines(),
    }
}

/// The probes' blocks and the warnings' share that fit `budget` lines: every probe
/// gets 3 lines (or 8 when there is room to spare), else 2, else 1, the warnings
/// 6 lines, else fewer; lines still free go to the probes one more each, in order,
/// then back to the warnings.
fn fit(
    probes: &[ProbeText],
    warnings: &[Vec<String>],
    width: usize,
    budget: usize,
) -> (Vec<Vec<String>>, usize) {
    let lay = |p: &ProbeText, cap: usize| layout_probe(p, width, cap);
    let lay_all =
        |cap: usize| -> Vec<Vec<String>> { probes.iter().map(|p| lay(p, cap + p.extra)).collect() };
    let total = |blocks: &[Vec<String>], wc: usize| {
        blocks.iter().map(Vec::len).sum::<usize>() + take_warnings(warnings, wc).len()
    };
    let mut cap = MAX_PROBE_LINES;
    let mut warn_cap = MAX_WARNING_LINES;
    let mut blocks = lay_all(cap);
    // Shrink the probes' share (3 lines each, then 2, then 1) and the warnings
    // until everything fits one screen.
    while total(&blocks, warn_cap) > budget {
        if warn_cap > 4 {
            warn_cap -= 1;
        } else if cap > 1 {
            cap -= 1;
            blocks = lay_all(cap);
        } else if warn_cap > 0 {
            warn_cap -= 1;
        } else {
            break;
        }
    }
    if cap == MAX_PROBE_LINES {
        // Room left on the screen: give every probe more lines while all still fit.
        while cap < MAX_PROBE_LINES_ROOMY && warn_cap == MAX_WARNING_LINES {
            let more = lay_all(cap + 1);
            if total(&more, warn_cap) > budget {
                break;
            }
            cap += 1;
            blocks = more;
        }
        return (blocks, warn_cap);
    }
    // The shares shrank: each probe in turn gets one more line while the screen has
    // one, then the warnings get back what fits.
    let mut caps: Vec<usize> = probes.iter().map(|p| cap + p.extra).collect();
    loop {
        let mut grew = false;
        for (i, p) in probes.iter().enumerate() {
            if caps[i] >= MAX_PROBE_LINES + p.extra {
                continue;
            }
            let more = lay(p, caps[i] + 1);
            let used = total(&blocks, warn_cap);
            if more.len() > blocks[i].len() && used - blocks[i].len() + more.len() <= budget {
                caps[i] += 1;
                blocks[i] = more;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    while warn_cap < MAX_WARNING_LINES && total(&blocks, warn_cap + 1) <= budget {
        warn_cap += 1;
    }
    (blocks, warn_cap)
}

/// The summary as one string (lines joined, each ending in a newline).
pub fn render(run: &RunFile, width: usize) -> String {
    summary(run, width).into_iter().map(|l| l + "\n").collect()
}

/// One probe's answer for a page that lays the summary out itself: its richest
/// headline (or why it did not complete) and the items after it.
pub struct ProbeAnswer {
    /// The probe's id.
    pub id: String,
    /// The headline, richest wording.
    pub head: Option<String>,
    /// The items after it.
    pub items: Vec<String>,
}

/// The summary's parts, unwrapped: the machine line, the machine's state during
/// the run, and every probe's answer (the HTML report's first screen).
pub struct Answers {
    /// `AMD EPYC (x86_64, KVM) · … · measured core clock 4.21 GHz · …`.
    pub machine: String,
    /// The CPUs' round trip, load and steal during the run, when recorded.
    pub state: Option<String>,
    /// One answer a probe, in run order.
    pub probes: Vec<ProbeAnswer>,
}

/// The [`Answers`] of a run (already prepared for display).
pub fn answers(run: &RunFile) -> Answers {
    answers_in(run, &crate::probes::registry())
}

/// [`answers`] with the probes of `registry`: each headline drawn by the shape its
/// probe states there, as in [`summary_in`].
pub fn answers_in(run: &RunFile, registry: &[Box<dyn AnyProbe>]) -> Answers {
    let probes = run
        .probes
        .iter()
        .map(|p| {
            let t = probe_text(p, &shape_of(registry, &p.id), run);
            let mut heads = t.heads.into_iter();
            let head = match (p.status, &p.reason) {
                (crate::model::Status::Completed, _) | (_, None) => heads.next(),
                (st, Some(why)) => Some(format!("{}: {why}", st.name().replace('_', " "))),
            };
            ProbeAnswer {
                id: p.id.clone(),
                head,
                items: t.items,
            }
        })
        .collect();
    Answers {
        machine: machine_line(run),
        state: state_line(run),
        probes,
    }
}

/// `AMD EPYC (x86_64, KVM) · 1 package × 2 cores … · measured core clock 4.21 GHz
/// · default run of 2026-11-23`
fn machine_line(run: &RunFile) -> String {
    let h = &run.host;
    let mut s = if h.cpu_model.is_empty() {
        "unknown CPU".to_string()
    } else {
        h.cpu_model.clone()
    };
    match &h.virtualized {
        Some(v) => s.push_str(&format!(" ({}, {v})", h.arch)),
        None => s.push_str(&format!(" ({})", h.arch)),
    }
    s.push_str(&format!(" · {}", run.topology.summary()));
    if let Some(hz) = run.clock.core_hz_one {
        s.push_str(&format!(" · measured core clock {:.2} GHz", hz / 1e9));
    }
    s.push_str(&format!(
        " · {} run of {}",
        run.profile.name(),
        run.started_utc.get(..10).unwrap_or(&run.started_utc)
    ));
    s
}

/// A probe's block in at most `cap` lines: the richest headline that fits, then as
/// many of its items as fit, the rest counted (`2 more in corescope report`, or
/// `2 more`); never a cut line. When no headline fits with a count, the headline
/// alone, before a shorter wording; when none fits at all, the shortest one's first sentence, else a pointer to the full
/// report.
fn layout_probe(p: &ProbeText, width: usize, cap: usize) -> Vec<String> {
    let (id, heads) = (p.id, &p.heads);
    // An id as wide as the name column stands alone on its line: that line
    // carries no result, so the probe gets one more.
    let cap = cap + usize::from(id.chars().count() >= NAME_COLS);
    for head in heads {
        // The richest headline that fits leads, with as many items as fit after it,
        // less those it states already.
        let items: Vec<&String> = p
            .items
            .iter()
            .filter(|i| !p.restated.iter().any(|r| r.by(head, i)))
            .collect();
        for k in (0..=items.len()).rev() {
            let left = items.len() - k;
            let tails = if left == 0 {
                vec![None]
            } else {
                vec![
                    Some(format!("{left} more in `corescope report`")),
                    Some(format!("{left} more")),
                ]
            };
            for tail in tails {
                let mut shown = vec![head.clone()];
                shown.extend(items[..k].iter().map(|i| (*i).clone()));
                shown.extend(tail);
                let lines = pack(id, &shown, width);
                if lines.len() <= cap {
                    return lines;
                }
            }
        }
        let lines = pack(id, std::slice::from_ref(head), width);
        if lines.len() <= cap {
            return lines;
        }
    }
    // Not even the shortest headline fits: its first sentence, when that does.
    if let Some(first) = heads.last().and_then(|i| first_sentence(i)) {
        let lines = pack(
            id,
            &[first, "more in `corescope report`".to_string()],
            width,
        );
        if lines.len() <= cap {
            return lines;
        }
    }
    pack(id, &["see `corescope report`".to_string()], width)
}

/// The text up to its first sentence or clause break (`. `, `; `, ` — `), when
/// it has one.
fn first_sentence(text: &str) -> Option<String> {
    let end = [". ", "; ", " — "]
        .iter()
        .filter_map(|sep| text.find(sep))
        .min()?;
    Some(text[..end].to_string())
}

/// `compute       item; item` with the items packed into lines of `width`
/// columns: an item starts a new line when it does not fit the current one, a
/// long item wraps with two more spaces of indent; every line after the first is
/// indented under the first item (the probe's id stands alone on the first line
/// when it is wider than the name column).
fn pack(id: &str, items: &[String], width: usize) -> Vec<String> {
    let room = width.saturating_sub(NAME_COLS);
    let len = |s: &str| textwrap::core::display_width(s);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (k, item) in items.iter().enumerate() {
        let text = if k + 1 < items.len() {
            format!("{item};")
        } else {
            item.clone()
        };
        let mut item_lines = wrap("", &text, HANG, room);
        if item_lines.len() == 1 && !cur.is_empty() && len(&cur) + 1 + len(&item_lines[0]) <= room {
            cur.push(' ');
            cur.push_str(&item_lines[0]);
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        cur = item_lines.pop().unwrap_or_default();
        lines.extend(item_lines);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    let indent = " ".repeat(NAME_COLS);
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 1);
    let id_alone = len(id) >= NAME_COLS;
    if id_alone {
        out.extend(wrap("", id, HANG, width));
    }
    for (i, l) in lines.into_iter().enumerate() {
        out.push(if i == 0 && !id_alone {
            format!("{id:<w$}{l}", w = NAME_COLS)
        } else {
            format!("{indent}{l}")
        });
    }
    out
}

/// The warnings as blocks of wrapped lines: the count (or `no warnings`), the
/// machine's state when recorded, then one sentence a cause
/// (`analysis::warning_groups`, worded by `warning_overview`), `! sentence`.
fn warning_blocks(run: &RunFile, width: usize) -> Vec<Vec<String>> {
    let groups = crate::analysis::warning_groups::groups(run);
    let mut blocks = vec![wrap("", &warning_overview::heading(&groups), HANG, width)];
    blocks.extend(state_line(run).map(|l| wrap("", &l, HANG, width)));
    blocks.extend(
        groups
            .iter()
            .map(|g| wrap("! ", &warning_overview::group_line(g), HANG, width)),
    );
    blocks
}

/// The first blocks of [`warning_blocks`] that fit `cap` lines, whole, and a line
/// counting the warnings left out; nothing when not even the count fits.
fn take_warnings(blocks: &[Vec<String>], cap: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // The count and the state are not warnings; the rest are, one block each.
    let fixed = blocks
        .len()
        .min(if blocks.len() > 1 && blocks[1][0].starts_with("machine") {
            2
        } else {
            1
        });
    for b in &blocks[..fixed] {
        if out.len() + b.len() <= cap {
            out.extend(b.iter().cloned());
        }
    }
    if out.is_empty() {
        return out;
    }
    let rest = &blocks[fixed..];
    for (k, b) in rest.iter().enumerate() {
        let left_after = rest.len() - k - 1;
        let tail = usize::from(left_after > 0);
        if out.len() + b.len() + tail > cap {
            if out.len() < cap {
                out.push(format!(
                    "+ {} more warnings in `corescope report`",
                    rest.len() - k
                ));
            }
            return out;
        }
        out.extend(b.iter().cloned());
    }
    out
}

/// One line on the machine's state over the run: how often the watched round trip
/// changed state during a group, how many points were state-dependent, and the
/// most the hypervisor stole and other programs used; `None` when nothing was
/// recorded (older run files, probes without groups).
fn state_line(run: &RunFile) -> Option<String> {
    let states: Vec<&crate::model::GroupState> =
        run.probes.iter().flat_map(|p| &p.machine_states).collect();
    if states.is_empty() {
        return None;
    }
    let moved = states.iter().filter(|s| s.round_trip_changed).count();
    let top = |get: fn(&crate::model::GroupState) -> Option<f64>| {
        states.iter().filter_map(|s| get(s)).fold(0.0f64, f64::max) * 100.0
    };
    let dependent: usize = run
        .probes
        .iter()
        .flat_map(|p| &p.series)
        .map(|s| s.states.iter().filter(|v| !v.is_empty()).count())
        .sum();
    let mut parts = Vec::new();
    let again = states.iter().filter(|s| s.measured_again).count();
    if let Some((lo, hi)) = crate::model::round_trip_span(states.iter().copied()) {
        parts.push(format!(
            "CPU round trip {lo:.0}–{hi:.0} ns, changed state during {moved} of {} group \
             measurements ({again} measured again, {} kept with the change)",
            states.len(),
            moved - again
        ));
    }
    parts.push(format!("{dependent} state-dependent points"));
    parts.push(format!(
        "other programs ≤ {:.0} % of the CPUs, steal ≤ {:.0} %",
        top(|s| s.others_cpu_fraction),
        top(|s| s.steal_fraction)
    ));
    Some(format!("machine: {}", parts.join("; ")))
}
