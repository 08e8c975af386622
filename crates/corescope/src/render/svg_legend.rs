//! The legend of a line chart: each curve's key (colour, dash pattern, marker
//! shape) and its name as drawn. Names lose the prefix every curve of the chart
//! shares (the chart's title carries it), wrap over up to [`MAX_LINES`] lines
//! instead of being cut, are cut in the middle (keeping the tail that tells them
//! apart) only when still too long, and no two entries read alike. Curves with
//! identical points share one entry (`linear = compact = scatter`).
//! Also the colour scales of heat maps and their legend (the colour bar).

use super::{esc, fmt_value};
use std::collections::HashSet;
use std::fmt::Write;

/// Colours of series (colour-blind friendly, Okabe–Ito; the yellow darkened to
/// read on white).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A200",
];
/// Dash patterns (SVG `stroke-dasharray`): the second eight series are dashed,
/// the third dotted, so colour and dash tell 32 series apart.
pub const DASHES: [&str; 4] = ["", "7 3", "2 2", "9 3 2 3"];

/// Colour and dash pattern of series `i`: no two of the first 32 share both.
pub fn series_style(i: usize) -> (&'static str, &'static str) {
    (
        PALETTE[i % PALETTE.len()],
        DASHES[(i / PALETTE.len()) % DASHES.len()],
    )
}

/// The marker of series `style.1` at `(x, y)`: a circle, square, diamond or
/// triangle (by series, so that overlaid curves stay apart), with a tooltip.
pub fn marker(x: f64, y: f64, style: (&str, usize), tip: &str) -> String {
    let (color, i) = style;
    let title = if tip.is_empty() {
        String::new()
    } else {
        format!("<title>{}</title>", esc(tip))
    };
    match i % 4 {
        0 => format!("<circle cx='{x:.1}' cy='{y:.1}' r='2.6' fill='{color}'>{title}</circle>"),
        1 => format!(
            "<rect x='{:.1}' y='{:.1}' width='5' height='5' fill='{color}'>{title}</rect>",
            x - 2.5,
            y - 2.5
        ),
        2 => format!(
            "<path d='M{x:.1},{:.1}l3.2,3.2l-3.2,3.2l-3.2,-3.2z' fill='{color}'>{title}</path>",
            y - 3.2
        ),
        _ => format!(
            "<path d='M{x:.1},{:.1}l3.2,5.6h-6.4z' fill='{color}'>{title}</path>",
            y - 3.4
        ),
    }
}

/// Characters of one legend line (what the right margin holds at 10 px).
pub const LINE_CHARS: usize = 27;
/// Most lines one legend entry takes.
pub const MAX_LINES: usize = 3;
/// Height of a legend line and the gap below an entry, in px (one line and its
/// gap: 15 px).
const LINE_PX: f64 = 11.0;
const GAP_PX: f64 = 4.0;

/// Where a name may break over lines, and where a shared prefix may end.
fn is_break(c: char) -> bool {
    matches!(c, ' ' | '/' | ':' | ',')
}

/// The prefix every name shares, ending at a break (`throughput ` of
/// `throughput 8B other-core/hspc` and `throughput 64B same-cpu/rtrb`), when
/// every name keeps something after it; empty otherwise.
pub fn shared_prefix<'a>(names: &[&'a str]) -> &'a str {
    let Some(first) = names.first() else {
        return "";
    };
    let mut len = first.len();
    for n in &names[1..] {
        len = first
            .char_indices()
            .zip(n.chars())
            .take_while(|((i, a), b)| *i < len && a == b)
            .map(|((i, a), _)| i + a.len_utf8())
            .last()
            .unwrap_or(0);
    }
    let mut cut = after_last_break(&first[..len]);
    // Every name keeps a label; back off to an earlier break if one would not
    // (breaks are ASCII: `cut - 1` is on a character boundary).
    while cut > 0 && names.iter().any(|n| n[cut..].trim().is_empty()) {
        cut = after_last_break(&first[..cut - 1]);
    }
    &first[..cut]
}

/// The byte index just after the last break character of `s`, or 0.
fn after_last_break(s: &str) -> usize {
    s.char_indices()
        .rev()
        .find(|&(_, c)| is_break(c))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0)
}

/// The first `max_groups` groups of items that are alike (curves with
/// identical points), each listed by index in order of its first member; an
/// item never joins a group when `alike` says it is not alike to itself (an
/// empty curve). Items that would start a group past the last are left out
/// (bounded work: at most `max_groups` comparisons an item).
pub fn alike_groups<T>(
    items: &[T],
    alike: impl Fn(&T, &T) -> bool,
    max_groups: usize,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let full = groups.len() >= max_groups;
        match groups
            .iter_mut()
            .find(|g| alike(&items[g[0]], item) && alike(item, item))
        {
            Some(g) => g.push(i),
            None if !full => groups.push(vec![i]),
            None => {}
        }
    }
    groups
}

/// The legend entries of a chart, and its title as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Keys {
    /// The chart's title, with the dropped prefix when the title does not say it.
    pub title: String,
    /// One entry per group of curves, in order.
    pub entries: Vec<Key>,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The full names of its curves (`a = b` for identical curves): tooltips.
    pub name: String,
    /// The label to draw: the names without the shared prefix.
    pub label: String,
}

/// The entries of groups of curve names (each group drawn as one curve): the
/// prefix all names share dropped from the labels and added to the title.
pub fn keys(title: &str, groups: &[Vec<&str>]) -> Keys {
    let all: Vec<&str> = groups.iter().flatten().copied().collect();
    let prefix = shared_prefix(&all);
    let entries = groups
        .iter()
        .map(|g| Key {
            name: g.join(" = "),
            label: g
                .iter()
                .map(|n| n[prefix.len()..].trim())
                .collect::<Vec<_>>()
                .join(" = "),
        })
        .collect();
    let said = prefix.trim_matches(|c: char| is_break(c) || c.is_whitespace());
    let title = if said.is_empty() || title.contains(said) {
        title.to_string()
    } else {
        format!("{title} — {said}")
    };
    Keys { title, entries }
}

/// `s` in lines of at most `width` characters, broken after a break character
/// where one is near (a word longer than a line is split); `None` when it takes
/// more than `max_lines` lines. Lines are trimmed; an empty `s` is one empty line.
pub fn wrap(s: &str, width: usize, max_lines: usize) -> Option<Vec<String>> {
    let chars: Vec<char> = s.trim().chars().collect();
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        if lines.len() == max_lines {
            return None;
        }
        let end = if chars.len() - start <= width {
            chars.len()
        } else {
            (start + width / 2..start + width)
                .rev()
                .find(|&e| is_break(chars[e]))
                .map(|e| e + 1)
                .unwrap_or(start + width)
        };
        lines.push(
            chars[start..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_string(),
        );
        start = end;
        while chars.get(start) == Some(&' ') {
            start += 1;
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    Some(lines)
}

/// `s` cut to `budget` characters in the middle: its head, `…`, and its last
/// `tail` characters (the part that tells a series apart: `…/hspc-ring`).
pub fn cut_middle(s: &str, budget: usize, tail: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= budget {
        return s.to_string();
    }
    let tail = tail.min(budget.saturating_sub(1));
    let head = budget.saturating_sub(1 + tail);
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// `name` then `suffix` in at most `max_lines` lines: wrapped whole when it fits,
/// else `name` cut in the middle keeping `tail` characters (then `suffix`).
fn fit(name: &str, suffix: &str, max_lines: usize, tail: usize) -> Vec<String> {
    let whole = format!("{name}{suffix}");
    if let Some(lines) = wrap(&whole, LINE_CHARS, max_lines) {
        return lines;
    }
    let budget = (LINE_CHARS * max_lines).saturating_sub(suffix.chars().count());
    let cut = format!("{}{suffix}", cut_middle(name.trim(), budget, tail));
    wrap(&cut, LINE_CHARS, max_lines).unwrap_or_else(|| {
        let chars: Vec<char> = cut.chars().collect();
        chars
            .chunks(LINE_CHARS)
            .map(|c| c.iter().collect::<String>().trim().to_string())
            .collect()
    })
}

/// How an entry reads: its lines, as one text.
fn reading(lines: &[String]) -> String {
    lines.join("\n")
}

/// The labels as drawn, each in at most `max_lines` lines of [`LINE_CHARS`], no
/// two alike: different labels that are cut and collide keep a longer tail
/// until they differ; any still alike (equal labels) are numbered (`… #2`).
pub fn drawn(labels: &[&str], max_lines: usize) -> Vec<Vec<String>> {
    let max_lines = max_lines.max(1);
    let longest_tail = (LINE_CHARS * max_lines).saturating_sub(1);
    let mut tails = vec![longest_tail / 2; labels.len()];
    let mut out: Vec<Vec<String>> = labels
        .iter()
        .zip(&tails)
        .map(|(l, &t)| fit(l, "", max_lines, t))
        .collect();
    loop {
        let readings: Vec<String> = out.iter().map(|l| reading(l)).collect();
        let grow: Vec<usize> = (0..labels.len())
            .filter(|&i| {
                tails[i] < longest_tail
                    && wrap(labels[i], LINE_CHARS, max_lines).is_none()
                    && (0..labels.len())
                        .any(|j| readings[j] == readings[i] && labels[j] != labels[i])
            })
            .collect();
        if grow.is_empty() {
            break;
        }
        for i in grow {
            tails[i] = (tails[i] + 4).min(longest_tail);
            out[i] = fit(labels[i], "", max_lines, tails[i]);
        }
    }
    number_repeats(labels, &tails, &mut out, max_lines);
    out
}

/// Entries that still read like an earlier one get a number (`hspc #2`) that
/// makes them unlike every other entry.
fn number_repeats(labels: &[&str], tails: &[usize], out: &mut [Vec<String>], max_lines: usize) {
    let all: HashSet<String> = out.iter().map(|l| reading(l)).collect();
    let mut taken: HashSet<String> = HashSet::new();
    let mut k = 1;
    for (i, label) in labels.iter().enumerate() {
        while taken.contains(&reading(&out[i])) {
            k += 1;
            let candidate = fit(label, &format!(" #{k}"), max_lines, tails[i]);
            if !all.contains(&reading(&candidate)) && !taken.contains(&reading(&candidate)) {
                out[i] = candidate;
            }
        }
        taken.insert(reading(&out[i]));
    }
}

/// The lines of each label and the px one line takes: as many lines per entry
/// (up to [`MAX_LINES`]) as fit in `height`; one line each, squeezed, when even
/// that does not fit.
fn layout(labels: &[&str], height: f64) -> (Vec<Vec<String>>, f64) {
    let px = |lines: &[Vec<String>]| {
        lines
            .iter()
            .map(|l| l.len() as f64 * LINE_PX + GAP_PX)
            .sum::<f64>()
    };
    for max_lines in (2..=MAX_LINES).rev() {
        let lines = drawn(labels, max_lines);
        if px(&lines) <= height {
            return (lines, 1.0);
        }
    }
    let lines = drawn(labels, 1);
    let scale = (height / px(&lines).max(1.0)).min(1.0);
    (lines, scale)
}

/// Draws the legend: one entry per key, toggling the curve of the same index
/// (`data-curve`), its line and marker in the curve's style, its full name in the
/// tooltip. Entries run down from `top` over at most `height` px, right of the
/// plot whose right edge is `x1`; returns the y below the last entry.
pub fn draw(out: &mut String, keys: &[Key], x1: f64, (top, height): (f64, f64)) -> f64 {
    let labels: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
    let (lines, scale) = layout(&labels, height);
    let mut y = top;
    for (i, (key, lines)) in keys.iter().zip(&lines).enumerate() {
        let (color, dash) = series_style(i);
        let ly = y + 8.0;
        let _ = write!(
            out,
            "<g class='legend' data-curve='{i}' style='cursor:pointer'><title>{} (click to hide or show)</title><line x1='{}' y1='{ly:.1}' x2='{}' y2='{ly:.1}' stroke='{color}' stroke-width='2.2' stroke-dasharray='{dash}'/>{}",
            esc(&key.name),
            x1 + 6.0,
            x1 + 28.0,
            marker(x1 + 17.0, ly, (color, i), ""),
        );
        for (k, line) in lines.iter().enumerate() {
            let _ = write!(
                out,
                "<text x='{}' y='{:.1}' font-size='10'>{}</text>",
                x1 + 32.0,
                ly + 3.5 + k as f64 * LINE_PX * scale,
                esc(line)
            );
        }
        out.push_str("</g>");
        y += (lines.len() as f64 * LINE_PX + GAP_PX) * scale;
    }
    y
}

/// How a heat map colours its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColourScale {
    /// Light (lowest) to dark blue (highest), linear in the value.
    Sequential,
    /// Ratios around 1 on a log scale: blue below 1, white at 1, red above,
    /// symmetric (the larger of the two excursions sets both ends).
    Ratio,
    /// Counts from 1 to the highest on a log scale, blue (few) to red (many).
    Counts,
}

impl ColourScale {
    /// Position in 0..=1 of `v` on the scale over `lo..=hi`.
    pub fn t(self, v: f64, lo: f64, hi: f64) -> f64 {
        match self {
            ColourScale::Sequential => {
                if hi > lo {
                    ((v / 2.0 - lo / 2.0) / (hi / 2.0 - lo / 2.0)).clamp(0.0, 1.0)
                } else {
                    0.5
                }
            }
            ColourScale::Counts => {
                if hi > 0.0 {
                    (v.max(0.0).ln_1p() / hi.ln_1p()).clamp(0.0, 1.0)
                } else {
                    0.5
                }
            }
            ColourScale::Ratio => {
                let m = ratio_span(lo, hi);
                if v > 0.0 && m > 0.0 {
                    (0.5 + v.ln() / m / 2.0).clamp(0.0, 1.0)
                } else {
                    0.5
                }
            }
        }
    }
    /// The fill at position `t` (0..=1).
    pub fn fill(self, t: f64) -> String {
        match self {
            ColourScale::Sequential => format!("hsl(210,70%,{:.0}%)", 95.0 - 60.0 * t),
            ColourScale::Ratio => {
                let d = (t - 0.5).abs() * 2.0;
                let hue = if t < 0.5 { 210 } else { 10 };
                format!("hsl({hue},75%,{:.0}%)", 97.0 - 50.0 * d)
            }
            ColourScale::Counts => {
                format!("hsl({:.0},80%,{:.0}%)", 220.0 - 200.0 * t, 85.0 - 40.0 * t)
            }
        }
    }
}

/// Half the width of a ratio scale in ln units: the larger excursion from 1.
fn ratio_span(lo: f64, hi: f64) -> f64 {
    let a = if lo > 0.0 { lo.ln().abs() } else { 0.0 };
    let b = if hi > 0.0 { hi.ln().abs() } else { 0.0 };
    a.max(b).max(0.01)
}

/// A vertical colour scale (legend) at `(x, y)`, `h` px tall: 24 steps, the
/// lowest value at the bottom, with tick labels at both ends and the middle.
pub fn colour_bar(
    x: f64,
    y: f64,
    h: f64,
    lo: f64,
    hi: f64,
    scale: ColourScale,
    unit: &str,
) -> String {
    const STEPS: usize = 24;
    let mut o = String::from("<g class='colour-scale'>");
    let step_h = h / STEPS as f64;
    for k in 0..STEPS {
        let t = (k as f64 + 0.5) / STEPS as f64;
        let _ = write!(
            o,
            "<rect x='{x:.1}' y='{:.1}' width='12' height='{:.2}' fill='{}'/>",
            y + h - (k + 1) as f64 * step_h,
            step_h + 0.3,
            scale.fill(t)
        );
    }
    let _ = write!(
        o,
        "<rect x='{x:.1}' y='{y:.1}' width='12' height='{h:.1}' fill='none' stroke='#999'/>"
    );
    let (lo_v, mid_v, hi_v) = match scale {
        ColourScale::Sequential => (lo, (lo + hi) / 2.0, hi),
        ColourScale::Counts => (1.0, (hi.ln_1p() / 2.0).exp_m1().round(), hi),
        ColourScale::Ratio => {
            let m = ratio_span(lo, hi);
            ((-m).exp(), 1.0, m.exp())
        }
    };
    let text = |v: f64| match scale {
        ColourScale::Ratio => format!("{v:.2}×"),
        ColourScale::Sequential => fmt_value(unit, v),
        ColourScale::Counts => format!("{v:.0}"),
    };
    let marks: &[(f64, f64)] = if hi > lo || scale == ColourScale::Ratio {
        &[(hi_v, y + 4.0), (mid_v, y + h / 2.0 + 3.0), (lo_v, y + h)]
    } else {
        &[(hi_v, y + h / 2.0 + 3.0)]
    };
    for &(v, py) in marks {
        let _ = write!(
            o,
            "<text x='{:.1}' y='{py:.1}' font-size='9'>{}</text>",
            x + 16.0,
            esc(&text(v))
        );
    }
    o.push_str("</g>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Channel series as a 2-CPU run names them: two event sizes, two places,
    /// seven implementations.
    fn channel_names() -> Vec<String> {
        let mut v = Vec::new();
        for place in ["other-core", "same-cpu"] {
            for bytes in [8, 64] {
                for i in [
                    "hspc",
                    "hspc-ring",
                    "rtrb",
                    "ringbuf",
                    "heapless",
                    "crossbeam",
                    "std",
                ] {
                    v.push(format!("throughput {bytes}B {place}/{i}"));
                }
            }
        }
        v
    }

    fn readings(lines: &[Vec<String>]) -> Vec<String> {
        lines.iter().map(|l| reading(l)).collect()
    }

    fn assert_unique(lines: &[Vec<String>], max_lines: usize) {
        let r = readings(lines);
        let set: HashSet<&String> = r.iter().collect();
        assert_eq!(set.len(), r.len(), "entries alike: {r:#?}");
        for l in lines {
            assert!(!l.is_empty() && l.len() <= max_lines, "{l:?}");
            assert!(l.iter().all(|s| s.chars().count() <= LINE_CHARS), "{l:?}");
        }
    }

    #[test]
    fn channel_entries_are_unique_without_their_shared_prefix() {
        let names = channel_names();
        let groups: Vec<Vec<&str>> = names.iter().map(|n| vec![n.as_str()]).collect();
        let k = keys("channel — events/s", &groups);
        assert_eq!(k.title, "channel — events/s — throughput");
        assert_eq!(k.entries[0].label, "8B other-core/hspc");
        assert_eq!(k.entries[1].label, "8B other-core/hspc-ring");
        assert_eq!(k.entries[0].name, "throughput 8B other-core/hspc");
        let labels: Vec<&str> = k.entries.iter().map(|e| e.label.as_str()).collect();
        for max_lines in 1..=MAX_LINES {
            let lines = drawn(&labels, max_lines);
            assert_unique(&lines, max_lines);
            // These fit whole on one line: nothing is cut.
            assert!(readings(&lines).iter().all(|r| !r.contains('…')));
        }
        // The full names, cut to one line, still differ (their tails do).
        let full: Vec<&str> = names.iter().map(String::as_str).collect();
        let lines = drawn(&full, 1);
        assert_unique(&lines, 1);
        let ring = readings(&lines)
            .iter()
            .filter(|r| r.ends_with("hspc-ring"))
            .count();
        assert_eq!(ring, 4, "the tail that tells them apart is kept");
        // Over two lines they are whole.
        let lines = drawn(&full, 2);
        assert_unique(&lines, 2);
        assert_eq!(lines[1], ["throughput 8B other-core/", "hspc-ring"]);
    }

    #[test]
    fn one_group_of_names_drops_its_prefix_into_the_title() {
        let names = [
            "throughput 8B other-core/hspc",
            "throughput 8B other-core/rtrb",
        ];
        let groups: Vec<Vec<&str>> = names.iter().map(|n| vec![*n]).collect();
        let k = keys("channel — throughput 8B other-core", &groups);
        assert_eq!(k.title, "channel — throughput 8B other-core");
        assert_eq!(k.entries[1].label, "rtrb");
        // No prefix ending at a break: nothing dropped.
        assert_eq!(shared_prefix(&["read traffic", "read-write traffic"]), "");
        assert_eq!(shared_prefix(&["read", "read/2"]), "");
        assert_eq!(shared_prefix(&["vm", "vm#2"]), "");
        assert_eq!(shared_prefix(&["a/b c", "a/b d"]), "a/b ");
        assert_eq!(shared_prefix(&["a/b/", "a/b/c"]), "a/");
        assert_eq!(shared_prefix(&[]), "");
        assert_eq!(shared_prefix(&["ünï/a", "ünï/b"]), "ünï/");
    }

    #[test]
    fn identical_curves_share_an_entry_naming_them_all() {
        let curves = [
            vec![1.0, 2.0],
            vec![1.0, 2.0],
            vec![1.0, 3.0],
            vec![1.0, 2.0],
            vec![],
            vec![],
        ];
        let groups = alike_groups(&curves, |a, b| a == b && !a.is_empty(), 8);
        assert_eq!(groups, [vec![0, 1, 3], vec![2], vec![4], vec![5]]);
        let first = alike_groups(&curves, |a, b| a == b && !a.is_empty(), 2);
        assert_eq!(first, [vec![0, 1, 3], vec![2]]);
        let names = ["linear", "compact", "unbound", "scatter", "e", "f"];
        let named: Vec<Vec<&str>> = groups
            .iter()
            .map(|g| g.iter().map(|&i| names[i]).collect())
            .collect();
        let k = keys("compute — ops/s", &named);
        assert_eq!(k.entries[0].label, "linear = compact = scatter");
        assert_eq!(k.title, "compute — ops/s");
        let mut out = String::new();
        draw(&mut out, &k.entries, 670.0, (30.0, 300.0));
        assert_eq!(out.matches("<g class='legend'").count(), 4);
        assert!(out.contains(">linear = compact = scatter</text>"));
    }

    #[test]
    fn long_names_wrap_then_cut_in_the_middle() {
        assert_eq!(
            wrap("throughput 8B other-core/hspc-ring", 27, 3),
            Some(vec![
                "throughput 8B other-core/".to_string(),
                "hspc-ring".to_string()
            ])
        );
        assert_eq!(wrap("abc", 27, 1), Some(vec!["abc".to_string()]));
        assert_eq!(wrap("", 27, 1), Some(vec![String::new()]));
        assert_eq!(wrap(&"x".repeat(60), 27, 2), None);
        assert_eq!(
            wrap(&"x".repeat(60), 27, 3).map(|l| l.iter().map(String::len).collect::<Vec<_>>()),
            Some(vec![27, 27, 6])
        );
        assert_eq!(cut_middle("abcdefghij", 5, 2), "ab…ij");
        assert_eq!(cut_middle("abc", 5, 2), "abc");
        // Too long for three lines: cut in the middle, the tail kept.
        let long = format!("{}/tail-that-matters", "very long middle ".repeat(8));
        let lines = drawn(&[long.as_str()], MAX_LINES);
        assert_eq!(lines[0].len(), MAX_LINES);
        assert!(reading(&lines[0]).contains('…'));
        assert!(reading(&lines[0]).ends_with("tail-that-matters"));
    }

    #[test]
    fn entries_are_unique_whatever_the_names() {
        // Long names that differ only at their start, or not at all.
        let head = |c: char| format!("{c}{}", "-same-long-body".repeat(10));
        let names: Vec<String> = vec![
            head('a'),
            head('b'),
            head('a'),
            "x".into(),
            "x".into(),
            "x #2".into(),
            String::new(),
            String::new(),
        ];
        let labels: Vec<&str> = names.iter().map(String::as_str).collect();
        for max_lines in 1..=MAX_LINES {
            assert_unique(&drawn(&labels, max_lines), max_lines);
        }
        // Equal long labels keep their head and are numbered.
        let lines = drawn(&labels, 1);
        assert!(
            lines[2][0].starts_with('a') && lines[2][0].ends_with(" #2"),
            "{lines:?}"
        );
        // Many entries squeeze to one line each, still unique.
        let many: Vec<String> = (0..32).map(|i| format!("{} {i}", "w".repeat(40))).collect();
        let labels: Vec<&str> = many.iter().map(String::as_str).collect();
        let (lines, scale) = layout(&labels, 300.0);
        assert!(scale < 1.0 && lines.iter().all(|l| l.len() == 1));
        assert_unique(&lines, 1);
    }
}
