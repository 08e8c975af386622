//! Terminal tables of a run file, by result shape: series as threads × variant
//! tables (seed 000 Figure 3), distributions as percentile tables, matrices as
//! grids, then findings and warnings. Reads only the model.

use super::fmt_num;
use super::words;
use crate::model::{
    Distribution, Estimate, Matrix, ProbeResult, RunFile, Series, Status, Table as ModelTable, View,
};
use crate::probes::AnyProbe;
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table,
    Width,
};
use std::collections::HashMap;

/// Width used when stdout is not a terminal and `COLUMNS` is unset.
pub const DEFAULT_WIDTH: u16 = 100;
/// A fixed width for tables whose renderers do not ask [`width`] yet.
pub const WIDTH: u16 = 80;
/// Narrowest width we lay tables out for.
const MIN_WIDTH: u16 = 40;

/// A width given on the command line (`report --width`); 0 when none was.
static WIDTH_OVERRIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Lay out at `columns` from now on, whatever the terminal and `COLUMNS` say
/// (`corescope report --width N`); at least 40.
pub fn set_width(columns: u16) {
    WIDTH_OVERRIDE.store(
        usize::from(columns.max(MIN_WIDTH)),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Widest line we aim for: `--width` when given, else `COLUMNS` when set (as `ls`
/// does), else the terminal's width when stdout is one, else [`DEFAULT_WIDTH`].
pub fn width() -> usize {
    let forced = WIDTH_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed);
    if forced > 0 {
        return forced;
    }
    let cols = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    width_from(terminal_size::terminal_size().map(|(w, _)| w.0), cols)
}

/// `text` in lines of at most `width` columns, broken between words: the first
/// line starts with `first`, the others with `indent` spaces (a hanging indent).
/// Nothing is cut: a word longer than a line (a path) is broken across lines.
/// Names with hyphens (`other-core`) are never split at their hyphens, and a
/// number stays on the line of the unit after it (`8.987 µs`, `95 %`).
pub fn wrap(first: &str, text: &str, indent: usize, width: usize) -> Vec<String> {
    let rest = " ".repeat(indent);
    let opts = textwrap::Options::new(width.max(indent + 20))
        .initial_indent(first)
        .subsequent_indent(&rest)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(&glue_units(text), opts)
        .into_iter()
        .map(|l| l.trim_end().replace(GLUE, " "))
        .collect()
}

/// A space that the wrapper does not break at (it breaks at ASCII spaces
/// only); turned back into a space once the lines are cut.
const GLUE: char = '\u{a0}';
/// Longest word taken for a unit after a number (`GFLOP/s`, `kcycles`).
const UNIT_CHARS: usize = 8;

/// `text` with the space between a number and a short word after it (its
/// unit) replaced by [`GLUE`], so that no line ends on a bare number.
fn glue_units(text: &str) -> String {
    let is_number = |w: &str| {
        let w = w.trim_start_matches(['(', '~', '≈', '-', '−', '+', '±']);
        // A number that ends a clause (`4.92,`) is not followed by its unit.
        w.starts_with(|c: char| c.is_ascii_digit()) && w.ends_with(|c: char| c.is_ascii_digit())
    };
    let is_unit = |w: &str| {
        !w.is_empty()
            && w.chars().count() <= UNIT_CHARS
            && !w.starts_with(|c: char| c.is_ascii_digit() || c == '(')
    };
    let mut out = String::with_capacity(text.len());
    let mut words = text.split(' ').peekable();
    while let Some(w) = words.next() {
        out.push_str(w);
        match words.peek() {
            Some(next) if is_number(w) && is_unit(next) => out.push(GLUE),
            Some(_) => out.push(' '),
            None => {}
        }
    }
    out
}

/// [`wrap`] as one string, each line ending in a newline.
pub fn wrapped(first: &str, text: &str, indent: usize, width: usize) -> String {
    wrap(first, text, indent, width)
        .into_iter()
        .map(|l| l + "\n")
        .collect()
}

/// [`width`] from what the terminal and `COLUMNS` say (pure, for tests).
pub fn width_from(terminal: Option<u16>, columns: Option<u16>) -> usize {
    usize::from(columns.or(terminal).unwrap_or(DEFAULT_WIDTH).max(MIN_WIDTH))
}

fn new_table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width()).unwrap_or(DEFAULT_WIDTH));
    t
}

/// Keep every word of every cell whole: each column is at least as wide as its
/// longest word (a table wider than the terminal beats a name cut in two).
fn keep_words_whole(t: &mut Table) {
    let mut longest: Vec<usize> = Vec::new();
    let words = |s: &str| s.split_whitespace().map(|w| w.chars().count()).max();
    let mut see = |i: usize, s: &str| {
        if longest.len() <= i {
            longest.resize(i + 1, 0);
        }
        longest[i] = longest[i].max(words(s).unwrap_or(0));
    };
    if let Some(h) = t.header() {
        for (i, c) in h.cell_iter().enumerate() {
            see(i, &c.content());
        }
    }
    for row in t.row_iter() {
        for (i, c) in row.cell_iter().enumerate() {
            see(i, &c.content());
        }
    }
    // Borders and padding: one bar before each column and one at the end, one
    // space of padding each side of a cell.
    let needed = longest.iter().map(|w| w + 3).sum::<usize>() + 1;
    let needed = u16::try_from(needed).unwrap_or(u16::MAX);
    if t.width().is_some_and(|w| w < needed) {
        t.set_width(needed);
    }
    for (i, w) in longest.into_iter().enumerate() {
        if let Some(col) = t.column_mut(i) {
            // A constraint's width counts the cell's padding (one space each side).
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                u16::try_from(w + 2).unwrap_or(u16::MAX),
            )));
        }
    }
}

/// A finished table as text, its words kept whole.
fn table_text(mut t: Table) -> String {
    keep_words_whole(&mut t);
    t.to_string()
}

/// The measured core clock, one line; empty when the file has none (older files).
fn core_clock_line(c: &crate::model::ClockInfo) -> String {
    let ghz = |hz: f64| hz / 1e9;
    match (c.core_hz_one, c.core_hz_all, &c.core_hz_skipped) {
        (Some(one), Some(all), _) => {
            let [o_lo, o_hi] = c.core_hz_one_range.unwrap_or([one, one]);
            let [a_lo, a_hi] = c.core_hz_all_range.unwrap_or([all, all]);
            format!(
                "core clock: {:.3} GHz one thread ({:.3}–{:.3}), {:.3} GHz with {} CPUs busy ({:.3}–{:.3}); per-cycle figures use it\n",
                ghz(one),
                ghz(o_lo),
                ghz(o_hi),
                ghz(all),
                c.core_hz_all_cpus.unwrap_or(0),
                ghz(a_lo),
                ghz(a_hi)
            )
        }
        (_, _, Some(why)) => {
            format!("core clock: not measured ({why}); per-cycle figures use the counter rate\n")
        }
        _ => String::new(),
    }
}

/// The machine summary shown above the probes, each line wrapped to [`width`]
/// under its label.
pub fn header(run: &RunFile) -> String {
    header_lines(run)
        .lines()
        .map(|l| {
            let indent = l.find(": ").map_or(2, |i| i + 2).min(12);
            wrapped("", l, indent, width())
        })
        .collect()
}

/// The machine summary, one long line per subject.
fn header_lines(run: &RunFile) -> String {
    let run = &super::header_for_display(run);
    let h = &run.host;
    let mut s = format!(
        "corescope {} · {} · {} profile · {}\n",
        run.tool.version,
        h.hostname,
        run.profile.name(),
        run.started_utc
    );
    s.push_str(&format!(
        "cpu: {} ({})",
        or_unknown(&h.cpu_model),
        or_unknown(&h.arch)
    ));
    if let Some(v) = &h.virtualized {
        s.push_str(&format!(", virtualised ({v})"));
    }
    s.push('\n');
    s.push_str(&format!("topology: {}\n", run.topology.summary()));
    s.push_str(&format!(
        "clock: {} at {:.3} GHz, read {:.1} ns, step {:.1} ns; CLOCK_MONOTONIC read {:.1} ns, step {:.1} ns\n",
        run.clock.source,
        run.clock.ticks_hz / 1e9,
        run.clock.read_overhead_ns,
        run.clock.step_ns,
        run.clock.monotonic_overhead_ns,
        run.clock.monotonic_step_ns
    ));
    s.push_str(&core_clock_line(&run.clock));
    let e = &run.env;
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".into());
    s.push_str(&format!(
        "env: kernel {}, governor {}, SMT {}, THP {}, cpuset {}",
        or_unknown(&h.kernel),
        opt(&e.governor),
        opt(&e.smt),
        opt(&e.thp),
        e.cpuset
    ));
    if let Some(l) = e.loadavg {
        s.push_str(&format!(", load {:.2}", l[0]));
    }
    if let Some(st) = e.steal_fraction {
        s.push_str(&format!(", steal {:.1} %", st * 100.0));
    }
    for extra in super::env_extras(e) {
        s.push_str(&format!(", {extra}"));
    }
    s.push('\n');
    s
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "unknown"
    } else {
        s
    }
}

/// Everything: header, then every probe, each with the special views its
/// registry entry declares.
pub fn render_run(run: &RunFile) -> String {
    render_run_in(run, &crate::probes::registry())
}

/// [`render_run`] with the probes of `registry`: a result gets the special views
/// its probe declares there ([`AnyProbe::views`]) and the pairs of the same quantity
/// its probes declare ([`AnyProbe::same_quantities`]); a result whose probe
/// `registry` does not know, neither.
pub fn render_run_in(run: &RunFile, registry: &[Box<dyn AnyProbe>]) -> String {
    let mut out = header(run);
    for p in &run.probes {
        out.push('\n');
        out.push_str(&render_probe_in(p, registry));
    }
    if let Some(cc) = &run.crosscheck {
        out.push_str("\ncross-check against established tools:\n");
        out.push_str(&super::crosscheck::table(cc, width()));
    }
    let same = super::consistency::of_run(run, registry);
    out.push_str(&consistency_text(&super::consistency::lines(run, &same)));
    out.push_str(&drift_summary(run));
    out
}

/// The pairs of probes that measure one quantity: the heading, a sentence a pair
/// (hanging), the note; empty without pairs.
fn consistency_text(lines: &[String]) -> String {
    let Some((head, rest)) = lines.split_first() else {
        return String::new();
    };
    let mut out = format!("\n{head}\n");
    for (k, l) in rest.iter().enumerate() {
        let indent = if k + 1 == rest.len() { 1 } else { 3 };
        out.push_str(&wrapped(" ", l, indent, width()));
    }
    out
}

/// The machine during the run, from the checks between probes: the reference
/// kernel at the start and the end, the round trips between the first two CPUs
/// that were seen, and the probes flagged noisy. Empty for version 1 files.
pub fn drift_summary(run: &RunFile) -> String {
    let (Some(first), Some(last)) = (run.drift.first(), run.drift.last()) else {
        return String::new();
    };
    let mut out = String::from("\nmachine during the run:\n");
    if let (Some(a), Some(b)) = (first.reference_ns, last.reference_ns) {
        out.push_str(&format!(
            " reference kernel {} at the start, {} at the end ({} %)\n",
            crate::units::fmt_value("ns", a.value),
            crate::units::fmt_value("ns", b.value),
            crate::units::fmt_percent((b.value / a.value - 1.0) * 100.0, true)
        ));
    }
    let mut trips: Vec<f64> = run.drift.iter().filter_map(|d| d.round_trip_ns).collect();
    trips.sort_by(f64::total_cmp);
    if let (Some(lo), Some(hi)) = (trips.first(), trips.last()) {
        out.push_str(&format!(
            " round trip between the first two CPUs: {lo:.0}–{hi:.0} ns over {} checks\n",
            trips.len()
        ));
    }
    let noisy: Vec<&str> = run
        .probes
        .iter()
        .filter(|p| {
            p.warnings
                .iter()
                .any(|w| matches!(w, crate::model::Warning::Noisy { .. }))
        })
        .map(|p| p.id.as_str())
        .collect();
    out.push_str(&if noisy.is_empty() {
        " no probe was flagged noisy\n".to_string()
    } else {
        format!(" noisy during: {}\n", noisy.join(", "))
    });
    super::clean(&out, 8 * super::MAX_TEXT_CHARS, true)
}

/// One probe's section (strings cleaned and cut for the terminal), with the
/// special views its registry entry declares.
pub fn render_probe(p: &ProbeResult) -> String {
    render_probe_in(p, &crate::probes::registry())
}

/// [`render_probe`] with the special views its probe declares in `registry`.
pub fn render_probe_in(p: &ProbeResult, registry: &[Box<dyn AnyProbe>]) -> String {
    let views = super::views_of(registry, &p.id);
    probe_section(&super::probe_for_display(p), views)
}

fn probe_section(p: &ProbeResult, views: &[View]) -> String {
    let mut out = wrapped(
        "",
        &format!("== {} — {} [{}]", p.id, p.title, p.status.name()),
        3,
        width(),
    );
    if let Some(r) = &p.reason {
        let what = match p.status {
            Status::Skipped => "skipped",
            Status::GaveUp => "gave up",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
            Status::Completed => "note",
        };
        out.push_str(&wrapped(&format!("   {what}: "), r, 5, width()));
    }
    for f in &p.findings {
        out.push_str(&wrapped(" • ", &super::words::finding(f), 3, width()));
    }
    let peak = views.contains(&View::PeakOverview);
    if let Some(t) = peak.then(|| super::peak_overview::text(p)).flatten() {
        out.push_str(&overview_table(t));
    }
    for group in series_groups(&p.series) {
        out.push_str(&series_table(&group));
        out.push('\n');
    }
    if !p.distributions.is_empty() {
        out.push_str(&distribution_table(&p.distributions));
        out.push('\n');
    }
    for m in &p.matrices {
        out.push_str(&matrix_table(m));
        out.push('\n');
    }
    for tl in &p.timelines {
        let spans: usize = tl.lanes.iter().map(|l| l.spans.len()).sum();
        out.push_str(&format!(
            "timeline {}: {} lanes, {spans} spans (see the HTML report)\n",
            tl.name,
            tl.lanes.len()
        ));
    }
    for t in &p.tables {
        out.push_str(&free_table(t));
        out.push('\n');
    }
    for w in &p.warnings {
        out.push_str(&wrapped(" ! ", &super::words::warning(w), 3, width()));
    }
    out
}

/// Series grouped by the part of their name before the first `/` (`int/scatter`
/// and `int/linear` form group `int`), keeping first-seen order.
pub fn series_groups(series: &[Series]) -> Vec<Vec<&Series>> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut groups: Vec<Vec<&Series>> = Vec::new();
    for s in series {
        let key = s.name.split('/').next().unwrap_or(&s.name);
        match index.get(key) {
            Some(&g) => groups[g].push(s),
            None => {
                index.insert(key, groups.len());
                groups.push(vec![s]);
            }
        }
    }
    groups
}

/// The estimate of each x of a series (see [`super::y_by_x`]: first wins, `-0.0`
/// and `0.0` are one key); exact where the file holds no interval.
pub fn estimates_by_x(s: &Series) -> HashMap<u64, Estimate> {
    let mut m = HashMap::with_capacity(s.x.len());
    for (i, &x) in s.x.iter().enumerate() {
        if let Some(e) = s.estimate(i) {
            m.entry(super::x_key(x)).or_insert(e);
        }
    }
    m
}

/// ` ±3%` after a value whose interval is wider than 1 % (as [`words::cell`] writes
/// it), else nothing.
pub fn plus_minus(e: &Estimate) -> String {
    if e.has_interval() && e.rel_half_width() > words::SHOW_INTERVAL_ABOVE {
        format!(
            " ±{}%",
            crate::units::fmt_percent((e.rel_half_width() * 100.0).ceil(), false)
        )
    } else if e.n == 1 {
        format!(" {}", words::SINGLE_MARK)
    } else {
        String::new()
    }
}

/// How many repetitions are behind these estimates (`7 repetitions`, `5–9
/// repetitions`), and whether any interval is wider than 1 % (shown as `±`);
/// `None` when no estimate has an interval (version 1 files).
pub fn repetitions<'a>(
    estimates: impl IntoIterator<Item = &'a Estimate>,
) -> Option<(String, bool)> {
    let (mut lo_n, mut hi_n, mut any, mut shown) = (usize::MAX, 0, false, false);
    for e in estimates {
        lo_n = lo_n.min(e.n);
        hi_n = hi_n.max(e.n);
        if e.has_interval() {
            any = true;
            shown |= e.rel_half_width() > words::SHOW_INTERVAL_ABOVE;
        }
    }
    if !any {
        return None;
    }
    let reps = if lo_n == hi_n {
        format!("{hi_n} repetitions")
    } else {
        format!("{lo_n}–{hi_n} repetitions")
    };
    Some((reps, shown))
}

/// What the `±` of a table of these estimates means, said once above it:
/// `± = 95 % CI of the median, 5–9 repetitions`, or, when no interval is wider
/// than 1 %, `medians of 7 repetitions, 95 % CI within ±1 %`. `None` when no
/// estimate has an interval (version 1 files).
pub fn interval_note<'a>(estimates: impl IntoIterator<Item = &'a Estimate>) -> Option<String> {
    let (reps, shown) = repetitions(estimates)?;
    Some(if shown {
        format!("± = 95 % CI of the median, {reps}")
    } else {
        format!(
            "medians of {reps}, 95 % CI within ±{:.0} %",
            words::SHOW_INTERVAL_ABOVE * 100.0
        )
    })
}

/// A table title, `what (unit)`, with the interval note inside the parentheses
/// when it fits the terminal width, else on a line of its own.
fn titled(what: &str, label: &str, note: Option<&str>) -> String {
    match note {
        None => format!("{what} ({label}):\n"),
        Some(n)
            if what.chars().count() + label.chars().count() + n.chars().count() + 6 <= width() =>
        {
            format!("{what} ({label}; {n}):\n")
        }
        Some(n) => format!("{what} ({label}):\n  {n}\n"),
    }
}

fn series_table(group: &[&Series]) -> String {
    let first = group[0];
    let what = first.name.split('/').next().unwrap_or(&first.name);
    let (xs, scale, label) = super::table_axes(group);
    let x_is_bytes = first.x_name == "bytes";
    let mut t = new_table();
    let mut head = vec![Cell::new(&first.x_name)];
    head.extend(
        group
            .iter()
            .map(|s| Cell::new(s.name.split_once('/').map(|(_, v)| v).unwrap_or(&s.name))),
    );
    t.set_header(head);
    let lookups: Vec<_> = group.iter().map(|s| estimates_by_x(s)).collect();
    let shown = super::rows_shown(xs.len());
    for &x in &xs[..shown] {
        let xcell = if x_is_bytes {
            super::fmt_value("bytes", x)
        } else {
            fmt_num_compact(x)
        };
        let mut row = vec![Cell::new(xcell).set_alignment(CellAlignment::Right)];
        for m in &lookups {
            let e = m.get(&super::x_key(x));
            row.push(
                Cell::new(
                    e.map(|e| words::cell(e.value, scale, Some(e)))
                        .unwrap_or_default(),
                )
                .set_alignment(CellAlignment::Right),
            );
        }
        t.add_row(row);
    }
    let note = interval_note(lookups.iter().flat_map(|m| m.values()));
    let t = table_text(t);
    format!(
        "{}{t}\n{}",
        titled(what, &label, note.as_deref()),
        left_out_line(shown, xs.len())
    )
}

/// The line below a table cut at [`super::MAX_TABLE_ROWS`] (with its newline),
/// or nothing.
fn left_out_line(shown: usize, total: usize) -> String {
    super::rows_left_out(shown, total)
        .map(|l| format!("{l}\n"))
        .unwrap_or_default()
}

fn fmt_num_compact(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        fmt_num(x)
    }
}

fn distribution_table(ds: &[Distribution]) -> String {
    let mut t = new_table();
    t.set_header(vec![
        "distribution",
        "unit",
        "n",
        "min",
        "p50",
        "p90",
        "p99",
        "max",
        "80 % within",
    ]);
    let rows = super::rows_shown(ds.len());
    for d in &ds[..rows] {
        let s = &d.summary;
        let mode = d
            .mode_range
            .as_ref()
            .map(|m| {
                format!(
                    "{} % in [{}, {}]",
                    crate::units::fmt_percent(m.fraction * 100.0, false),
                    fmt_num(m.low),
                    fmt_num(m.high)
                )
            })
            .unwrap_or_default();
        t.add_row(vec![
            Cell::new(&d.name),
            Cell::new(&d.unit),
            Cell::new(s.count),
            Cell::new(fmt_num(s.min)),
            Cell::new(words::cell(s.p50, 1.0, Some(&s.median()))),
            Cell::new(fmt_num(s.p90)),
            Cell::new(fmt_num(s.p99)),
            Cell::new(fmt_num(s.max)),
            Cell::new(mode),
        ]);
    }
    let medians: Vec<Estimate> = ds.iter().map(|d| d.summary.median()).collect();
    let shown = medians
        .iter()
        .any(|e| e.has_interval() && e.rel_half_width() > words::SHOW_INTERVAL_ABOVE);
    let note = if shown {
        "± on p50 = 95 % CI of the median\n"
    } else {
        ""
    };
    let t = table_text(t);
    format!("{t}\n{note}{}", left_out_line(rows, ds.len()))
}

/// Largest matrix printed as a grid; bigger ones are summarised.
const MAX_GRID: usize = 16;

fn matrix_table(m: &Matrix) -> String {
    let vals: Vec<f64> = m.values.iter().flatten().flatten().copied().collect();
    if m.cols.len() > MAX_GRID {
        let s = crate::stats::summary(&vals);
        return format!(
            "{} ({}): {}×{} matrix, min {} p50 {} max {} (see the HTML report)\n",
            m.name,
            m.unit,
            m.rows.len(),
            m.cols.len(),
            fmt_num(s.min),
            fmt_num(s.p50),
            fmt_num(s.max)
        );
    }
    let mut t = new_table();
    let mut head = vec![Cell::new("")];
    head.extend(m.cols.iter().map(Cell::new));
    t.set_header(head);
    let shown = super::rows_shown(m.rows.len());
    for (r, row) in m.rows.iter().zip(&m.values).take(shown) {
        let mut cells = vec![Cell::new(r)];
        cells.extend(row.iter().map(|v| {
            Cell::new(v.map(fmt_num).unwrap_or_else(|| "·".into()))
                .set_alignment(CellAlignment::Right)
        }));
        t.add_row(cells);
    }
    let t = table_text(t);
    format!(
        "{} ({}):\n{t}\n{}",
        m.name,
        m.unit,
        left_out_line(shown, m.rows.len())
    )
}

/// peak's overview: FLOP per cycle per thread per ISA level against the FMA
/// limit, with its notes.
fn overview_table(t: super::peak_overview::Text) -> String {
    let mut table = new_table();
    table.set_header(t.header);
    for r in t.rows {
        table.add_row(r);
    }
    let mut out = format!("\n{}\n", super::peak_overview::TITLE);
    out.push_str(&table_text(table));
    for n in &t.notes {
        out.push_str(&wrapped("  ", n, 2, width()));
    }
    out.push('\n');
    out
}

fn free_table(mt: &ModelTable) -> String {
    let mut t = new_table();
    t.set_header(mt.columns.iter().map(Cell::new).collect::<Vec<_>>());
    let shown = super::rows_shown(mt.rows.len());
    for row in &mt.rows[..shown] {
        t.add_row(
            row.iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => Cell::new(s),
                    serde_json::Value::Number(n) => {
                        Cell::new(n.as_f64().map(fmt_num).unwrap_or_else(|| n.to_string()))
                            .set_alignment(CellAlignment::Right)
                    }
                    serde_json::Value::Null => Cell::new(""),
                    other => Cell::new(other.to_string()),
                })
                .collect::<Vec<_>>(),
        );
    }
    let t = table_text(t);
    format!("{}:\n{t}\n{}", mt.name, left_out_line(shown, mt.rows.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_follows_columns_then_the_terminal_then_100() {
        assert_eq!(width_from(Some(132), Some(80)), 80);
        assert_eq!(width_from(Some(132), None), 132);
        assert_eq!(width_from(None, Some(80)), 80);
        assert_eq!(width_from(None, None), 100);
        assert_eq!(width_from(Some(10), None), 40);
    }

    #[test]
    fn a_number_stays_with_its_unit() {
        let text = "the pair takes 8.987 µs per event, 95 % of it at 2 threads (1.00–1.06 ×)";
        for width in 20..90 {
            let lines = wrap("", text, 2, width);
            for l in &lines {
                let last = l.split(' ').next_back().unwrap_or_default();
                assert!(
                    !["8.987", "95", "2"].contains(&last),
                    "{width}: a number ends a line: {lines:?}"
                );
                assert!(!l.contains(GLUE));
            }
            // Nothing lost or added but line breaks.
            let joined = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
            assert_eq!(joined, text);
        }
        assert_eq!(glue_units("4 threads and 3"), "4\u{a0}threads and 3");
        assert_eq!(
            glue_units("(12 rounds; 2 of 3)"),
            "(12\u{a0}rounds; 2\u{a0}of 3)"
        );
    }

    #[test]
    fn narrow_tables_never_split_a_word() {
        let words = [
            "create/joinable/other-core/start",
            "handoff/sleeping/unpinned/wake",
            "throughput/crossbeam/64B/other-core",
        ];
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(40);
        t.set_header(vec!["distribution", "unit", "p50 of the samples"]);
        for w in words {
            t.add_row(vec![
                format!("{w} and more words"),
                "ns".into(),
                "12.34 ±3%".into(),
            ]);
        }
        let text = table_text(t);
        for w in words.iter().chain(&["distribution", "12.34"]) {
            assert!(text.contains(w), "{w} split in\n{text}");
        }
    }
}
