//! Tidy CSV export (one row per observation, pandas-friendly): every series
//! point with its 95 % interval and count, every repetition behind it,
//! distribution summary (with the median's interval), histogram bin, pair,
//! matrix cell, timeline span and free table, plus one small file per series.
//!
//! Every file is streamed to disk row by row (a 1 M-point series is never one
//! string in memory) through the writer [`write_dir`] is given (`report --csv`
//! gives `store::write_atomic_with`: a temporary file created exclusively
//! beside the name, then renamed over it, so a link planted under a name is
//! replaced, never followed).
//!
//! Written with the `csv` crate (quoting of commas, quotes, CR and LF done by a
//! maintained writer, not by hand). Text cells that a spreadsheet would run as
//! a formula (starting with `=`, `+`, `-`, `@`, a tab or CR) get a leading `'`
//! (the OWASP rule); numbers are written as they are. Strings are kept whole.

use crate::model::RunFile;
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// One CSV document being written to `out`, row by row; every row starts with
/// the cells of [`Sheet::tagged`] (host and run), when given.
struct Sheet<W: Write>(csv::Writer<W>, Vec<String>);

/// The columns that say whose a row is, first in every file: concatenated files
/// of many machines (or runs) keep who is who.
pub const WHO_COLUMNS: [&str; 2] = ["host", "run"];

/// The [`WHO_COLUMNS`] cells of a run: its host name and its start time (UTC).
fn who(run: &RunFile) -> Vec<String> {
    vec![cell(&run.host.hostname), cell(&run.started_utc)]
}

impl<W: Write> Sheet<W> {
    fn new<S: AsRef<[u8]>>(out: W, header: &[S]) -> io::Result<Self> {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .flexible(true)
            .from_writer(out);
        w.write_record(header)?;
        Ok(Self(w, Vec::new()))
    }

    /// A sheet of `run` whose rows start with its host and run ([`WHO_COLUMNS`]).
    fn tagged<S: AsRef<[u8]>>(run: &RunFile, out: W, header: &[S]) -> io::Result<Self> {
        let mut full: Vec<Vec<u8>> = WHO_COLUMNS.iter().map(|c| c.as_bytes().to_vec()).collect();
        full.extend(header.iter().map(|h| h.as_ref().to_vec()));
        let mut s = Self::new(out, &full)?;
        s.1 = who(run);
        Ok(s)
    }

    fn row<I, S>(&mut self, cells: I) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<[u8]>,
    {
        for c in &self.1 {
            self.0.write_field(c)?;
        }
        Ok(self.0.write_record(cells)?)
    }

    fn finish(mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// What writes one CSV document to a stream.
type Fill<'a> = dyn Fn(&mut dyn Write) -> io::Result<()> + 'a;

/// A CSV document as text (for tests and callers that want it in memory).
fn to_text(fill: &Fill<'_>) -> String {
    let mut bytes = Vec::new();
    // Writing into a Vec fails only on a bug in the writer: then the text is
    // what was written up to it.
    let _ = fill(&mut bytes);
    String::from_utf8(bytes).unwrap_or_default()
}

/// A text cell made safe for spreadsheets: a leading `'` when it would start
/// a formula. Text that is a plain number (`-1.5`) is left alone.
pub fn cell(s: &str) -> String {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && s.trim().parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// A value of an optional per-point column (`y_lo`, `y_hi`, `n`): empty where the
/// file has none (version 1 files).
fn opt<T: ToString>(v: Option<&T>) -> String {
    v.map(ToString::to_string).unwrap_or_default()
}

/// The interval columns of point `i` of a series: `y_lo`, `y_hi`, `n` (empty
/// when the file holds no interval for it).
fn interval_cells(s: &crate::model::Series, i: usize) -> [String; 3] {
    [opt(s.y_lo.get(i)), opt(s.y_hi.get(i)), opt(s.n.get(i))]
}

/// Tidy CSV of every series: `probe,series,x_name,x,y_name,y,y_lo,y_hi,n`, where
/// `y` is the median of the repetitions, `[y_lo, y_hi]` its 95 % confidence
/// interval and `n` the number of repetitions (the last three empty for version 1
/// files).
pub fn series_csv(run: &RunFile) -> String {
    to_text(&|w| write_series(run, w))
}

/// [`series_csv`] written to `out`, row by row.
fn write_series(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe", "series", "x_name", "x", "y_name", "y", "y_lo", "y_hi", "n",
        ],
    )?;
    for p in &run.probes {
        for s in &p.series {
            let (id, name, xn, yn) = (cell(&p.id), cell(&s.name), cell(&s.x_name), cell(&s.y_name));
            for (i, (x, y)) in s.x.iter().zip(&s.y).enumerate() {
                let [lo, hi, n] = interval_cells(s, i);
                o.row([
                    &id,
                    &name,
                    &xn,
                    &x.to_string(),
                    &yn,
                    &y.to_string(),
                    &lo,
                    &hi,
                    &n,
                ])?;
            }
        }
    }
    o.finish()
}

/// Tidy CSV of every repetition behind the series points:
/// `probe,series,x_name,x,y_name,repetition,y` (empty for version 1 files, which
/// kept no repetitions).
pub fn samples_csv(run: &RunFile) -> String {
    to_text(&|w| write_samples(run, w))
}

/// [`samples_csv`] written to `out`, row by row.
fn write_samples(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe",
            "series",
            "x_name",
            "x",
            "y_name",
            "repetition",
            "y",
        ],
    )?;
    for p in &run.probes {
        for s in &p.series {
            let (id, name, xn, yn) = (cell(&p.id), cell(&s.name), cell(&s.x_name), cell(&s.y_name));
            for (x, reps) in s.x.iter().zip(&s.samples) {
                let x = x.to_string();
                for (k, y) in reps.iter().enumerate() {
                    o.row([&id, &name, &xn, &x, &yn, &k.to_string(), &y.to_string()])?;
                }
            }
        }
    }
    o.finish()
}

/// Tidy CSV of every distribution's summary.
pub fn distributions_csv(run: &RunFile) -> String {
    to_text(&|w| write_distributions(run, w))
}

/// [`distributions_csv`] written to `out`, row by row.
fn write_distributions(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe",
            "distribution",
            "unit",
            "count",
            "min",
            "p50",
            "p90",
            "p99",
            "p999",
            "max",
            "mean",
            "stddev",
            "p50_lo",
            "p50_hi",
        ],
    )?;
    for p in &run.probes {
        for d in &p.distributions {
            let s = &d.summary;
            let mut r = vec![
                cell(&p.id),
                cell(&d.name),
                cell(&d.unit),
                s.count.to_string(),
            ];
            r.extend(
                [s.min, s.p50, s.p90, s.p99, s.p999, s.max, s.mean, s.stddev]
                    .map(|v| v.to_string()),
            );
            // The median's interval; empty where the file has none (version 1).
            let has = s.p50_lo != 0.0 || s.p50_hi != 0.0;
            r.extend([s.p50_lo, s.p50_hi].map(|v| if has { v.to_string() } else { String::new() }));
            o.row(r)?;
        }
    }
    o.finish()
}

/// Tidy CSV of every histogram bin.
pub fn histograms_csv(run: &RunFile) -> String {
    to_text(&|w| write_histograms(run, w))
}

/// [`histograms_csv`] written to `out`, row by row.
fn write_histograms(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe",
            "distribution",
            "unit",
            "bin_low",
            "bin_high",
            "count",
        ],
    )?;
    for p in &run.probes {
        for d in &p.distributions {
            let h = &d.histogram;
            let (id, name, unit) = (cell(&p.id), cell(&d.name), cell(&d.unit));
            for (c, e) in h.counts.iter().zip(h.edges.windows(2)) {
                o.row([
                    &id,
                    &name,
                    &unit,
                    &e[0].to_string(),
                    &e[1].to_string(),
                    &c.to_string(),
                ])?;
            }
        }
    }
    o.finish()
}

/// Tidy CSV of the paired samples (A, B) of distributions that have them.
pub fn pairs_csv(run: &RunFile) -> String {
    to_text(&|w| write_pairs(run, w))
}

/// [`pairs_csv`] written to `out`, row by row.
fn write_pairs(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe",
            "distribution",
            "paired_with",
            "unit",
            "index",
            "a",
            "b",
        ],
    )?;
    for p in &run.probes {
        for d in &p.distributions {
            let with = cell(d.paired_with.as_deref().unwrap_or(""));
            let (id, name, unit) = (cell(&p.id), cell(&d.name), cell(&d.unit));
            for (i, [a, b]) in d.pairs.iter().enumerate() {
                o.row([
                    &id,
                    &name,
                    &with,
                    &unit,
                    &i.to_string(),
                    &a.to_string(),
                    &b.to_string(),
                ])?;
            }
        }
    }
    o.finish()
}

/// Tidy CSV of every matrix cell (unmeasured cells are left out).
pub fn matrices_csv(run: &RunFile) -> String {
    to_text(&|w| write_matrices(run, w))
}

/// [`matrices_csv`] written to `out`, row by row.
fn write_matrices(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &["probe", "matrix", "unit", "row", "col", "value"],
    )?;
    for p in &run.probes {
        for m in &p.matrices {
            let (id, name, unit) = (cell(&p.id), cell(&m.name), cell(&m.unit));
            for (r, row) in m.values.iter().enumerate() {
                let rl = cell(m.rows.get(r).map(String::as_str).unwrap_or(""));
                for (c, v) in row.iter().enumerate() {
                    if let Some(v) = v {
                        let cl = cell(m.cols.get(c).map(String::as_str).unwrap_or(""));
                        o.row([&id, &name, &unit, &rl, &cl, &v.to_string()])?;
                    }
                }
            }
        }
    }
    o.finish()
}

/// Tidy CSV of every timeline span.
pub fn timelines_csv(run: &RunFile) -> String {
    to_text(&|w| write_timelines(run, w))
}

/// [`timelines_csv`] written to `out`, row by row.
fn write_timelines(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(
        run,
        out,
        &["probe", "timeline", "lane", "start_ns", "end_ns", "kind"],
    )?;
    for p in &run.probes {
        for t in &p.timelines {
            let (id, name) = (cell(&p.id), cell(&t.name));
            for l in &t.lanes {
                let label = cell(&l.label);
                for s in &l.spans {
                    o.row([
                        &id,
                        &name,
                        &label,
                        &s.start_ns.to_string(),
                        &s.end_ns.to_string(),
                        &cell(&s.kind),
                    ])?;
                }
            }
        }
    }
    o.finish()
}

/// Every finding of every probe, one row each: `probe,kind,what,unit,value,lo,hi,
/// n,a,b,verdict,text`. `value`/`lo`/`hi`/`n` are the key figure (a scaling's
/// peak, a comparison's or slowdown's ratio a ÷ b, a value); `verdict` is the one
/// [`super::words::verdict`] words the sentence from; `text` is the sentence.
pub fn findings_csv(run: &RunFile) -> String {
    to_text(&|w| write_findings(run, w))
}

/// The key figure, the two sides and the verdict of a finding (empty where it
/// has none).
fn finding_cells(f: &crate::model::Finding) -> (Option<crate::model::Estimate>, [String; 3]) {
    use crate::model::Finding as F;
    let verdict = |r: &crate::model::Estimate, o: crate::model::Outcome| {
        super::words::verdict(r, o).name().to_string()
    };
    match f {
        F::Scaling { peak, .. } => (Some(*peak), Default::default()),
        F::Comparison {
            a,
            b,
            ratio,
            outcome,
            ..
        } => (Some(*ratio), [cell(a), cell(b), verdict(ratio, *outcome)]),
        F::Slowdown {
            cause,
            ratio,
            outcome,
            ..
        } => (
            Some(*ratio),
            [String::new(), cell(cause), verdict(ratio, *outcome)],
        ),
        F::CoreSharing { a, b, ratio, .. } => {
            (Some(*ratio), [a.to_string(), b.to_string(), String::new()])
        }
        F::Value { value, .. } => (Some(*value), Default::default()),
        F::SameConfiguration { .. }
        | F::TunerChoice { .. }
        | F::TuneStep { .. }
        | F::Note { .. } => (None, Default::default()),
    }
}

/// [`findings_csv`] written to `out`, row by row.
fn write_findings(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    use crate::model::Finding as F;
    let mut o = Sheet::tagged(
        run,
        out,
        &[
            "probe", "kind", "what", "unit", "value", "lo", "hi", "n", "a", "b", "verdict", "text",
        ],
    )?;
    for p in &run.probes {
        for f in &p.findings {
            let kind = serde_json::to_value(f)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(String::from))
                .unwrap_or_default();
            let (what, unit) = match f {
                F::Scaling { what, unit, .. }
                | F::Comparison { what, unit, .. }
                | F::Value { what, unit, .. } => (what.as_str(), unit.as_str()),
                F::Slowdown { what, .. } | F::SameConfiguration { what, .. } => (what.as_str(), ""),
                F::CoreSharing { kernel, .. } => (kernel.as_str(), ""),
                F::TunerChoice { step, .. } | F::TuneStep { step, .. } => (step.as_str(), ""),
                F::Note { .. } => ("", ""),
            };
            let (fig, [a, b, verdict]) = finding_cells(f);
            let nums = fig.map_or_else(Default::default, |e| {
                [
                    e.value.to_string(),
                    e.lo.to_string(),
                    e.hi.to_string(),
                    e.n.to_string(),
                ]
            });
            let [value, lo, hi, n]: [String; 4] = nums;
            o.row([
                cell(&p.id),
                kind,
                cell(what),
                cell(unit),
                value,
                lo,
                hi,
                n,
                a,
                b,
                verdict,
                cell(&super::words::finding(f)),
            ])?;
        }
    }
    o.finish()
}

/// Every warning of every probe, one row each: `probe,kind,text`.
pub fn warnings_csv(run: &RunFile) -> String {
    to_text(&|w| write_warnings(run, w))
}

/// [`warnings_csv`] written to `out`, row by row.
fn write_warnings(run: &RunFile, out: &mut dyn Write) -> io::Result<()> {
    let mut o = Sheet::tagged(run, out, &["probe", "kind", "text"])?;
    for p in &run.probes {
        for w in &p.warnings {
            let kind = serde_json::to_value(w)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(String::from))
                .unwrap_or_default();
            o.row([cell(&p.id), kind, cell(&super::words::warning(w))])?;
        }
    }
    o.finish()
}

/// Longest part of a file name taken from a name in the run file, in bytes
/// (two of them and a suffix stay under the 255 bytes a file name may have).
const MAX_NAME_PART_BYTES: usize = 100;

/// A name made safe as one path component, at most [`MAX_NAME_PART_BYTES`]
/// long (a cut name ends in a hash of the whole, so names stay distinct).
pub fn file_name(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let out = if out.is_empty() || out.starts_with('.') {
        format!("_{out}")
    } else {
        out
    };
    if out.len() <= MAX_NAME_PART_BYTES {
        return out;
    }
    // FNV-1a of the original name: stable across runs and platforms.
    let hash = s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}~{hash:016x}", &out[..MAX_NAME_PART_BYTES - 17])
}

/// What receives each CSV file: its name and what writes its rows.
type SheetSink<'a> = dyn FnMut(String, &Fill<'_>) -> io::Result<()> + 'a;

/// Every CSV file of a run in the order it is written: its name (unique, see
/// [`write_dir`]) and what writes its rows. Names come without rendering
/// anything, so a caller can check the paths before a byte is written.
fn each_sheet(run: &RunFile, put: &mut SheetSink<'_>) -> io::Result<()> {
    let mut used: HashSet<String> = HashSet::new();
    let mut unique = |stem: String| -> String {
        let mut name = format!("{stem}.csv");
        let mut k = 2;
        while !used.insert(name.clone()) {
            name = format!("{stem}-{k}.csv");
            k += 1;
        }
        name
    };
    put(unique("series".into()), &|w| write_series(run, w))?;
    put(unique("samples".into()), &|w| write_samples(run, w))?;
    put(unique("distributions".into()), &|w| {
        write_distributions(run, w)
    })?;
    put(unique("histograms".into()), &|w| write_histograms(run, w))?;
    put(unique("pairs".into()), &|w| write_pairs(run, w))?;
    put(unique("matrices".into()), &|w| write_matrices(run, w))?;
    put(unique("timelines".into()), &|w| write_timelines(run, w))?;
    put(unique("findings".into()), &|w| write_findings(run, w))?;
    put(unique("warnings".into()), &|w| write_warnings(run, w))?;
    for p in &run.probes {
        for s in &p.series {
            put(
                unique(format!("{}--{}", file_name(&p.id), file_name(&s.name))),
                &|w| write_one_series(run, s, w),
            )?;
        }
        for tb in &p.tables {
            put(
                unique(format!(
                    "{}--table-{}",
                    file_name(&p.id),
                    file_name(&tb.name)
                )),
                &|w| write_table(run, tb, w),
            )?;
        }
    }
    Ok(())
}

/// One series as its own file: `x_name,y_name,y_lo,y_hi,n`.
fn write_one_series(
    run: &RunFile,
    s: &crate::model::Series,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut t = Sheet::tagged(
        run,
        out,
        &[
            cell(&s.x_name).as_str(),
            cell(&s.y_name).as_str(),
            "y_lo",
            "y_hi",
            "n",
        ],
    )?;
    for (i, (x, y)) in s.x.iter().zip(&s.y).enumerate() {
        let [lo, hi, n] = interval_cells(s, i);
        t.row([x.to_string(), y.to_string(), lo, hi, n])?;
    }
    t.finish()
}

/// A free table as its own file, every row, its own columns.
fn write_table(run: &RunFile, tb: &crate::model::Table, out: &mut dyn Write) -> io::Result<()> {
    let cols: Vec<String> = tb.columns.iter().map(|c| cell(c)).collect();
    let mut t = Sheet::tagged(run, out, &cols)?;
    for r in &tb.rows {
        t.row(r.iter().map(|v| match v {
            serde_json::Value::String(s) => cell(s),
            serde_json::Value::Null => String::new(),
            other => cell(&other.to_string()),
        }))?;
    }
    t.finish()
}

/// The files [`write_dir`] would write into `dir`, without writing (or
/// rendering) anything.
pub fn planned_files(run: &RunFile, dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let _ = each_sheet(run, &mut |name, _| {
        v.push(dir.join(name));
        Ok(())
    });
    v
}

/// What writes one file of the export: its path and what writes its rows
/// (the commands give `store::write_atomic_with`; the renderer does not
/// choose how files are made).
pub type WriteFile<'a> =
    dyn Fn(&Path, &dyn Fn(&mut dyn Write) -> io::Result<()>) -> io::Result<()> + 'a;

/// Write every CSV into `dir` (created if missing) with `write_file`; returns
/// the files written. Names that would collide after [`file_name`] get a `-2`,
/// `-3`, ... suffix. Each file's rows are streamed to `write_file`, never
/// rendered into one string; an error names the file.
pub fn write_dir(
    run: &RunFile,
    dir: &Path,
    write_file: &WriteFile<'_>,
) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    each_sheet(run, &mut |name, fill| {
        let path = dir.join(name);
        write_file(&path, fill)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        written.push(path);
        Ok(())
    })?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(cells: &[&str]) -> String {
        to_text(&|w| {
            let mut s = Sheet::new(w, &["h"])?;
            s.row(cells)?;
            s.finish()
        })
    }

    #[test]
    fn fields_are_quoted_and_names_are_safe() {
        assert_eq!(one(&["a,b"]), "h\n\"a,b\"\n");
        assert_eq!(one(&["say \"hi\""]), "h\n\"say \"\"hi\"\"\"\n");
        assert_eq!(one(&["plain"]), "h\nplain\n");
        assert_eq!(one(&["a\rb"]), "h\n\"a\rb\"\n");
        assert_eq!(file_name("int/linear"), "int_linear");
        assert_eq!(file_name("../x"), "_.._x");
        assert_eq!(file_name(""), "_");
        let long = file_name(&"s".repeat(300));
        assert!(long.len() <= MAX_NAME_PART_BYTES, "{}", long.len());
        assert_ne!(long, file_name(&format!("{}t", "s".repeat(300))));
    }

    fn fixture() -> RunFile {
        serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap()
    }

    #[test]
    fn every_file_says_whose_rows_they_are() {
        let run = fixture();
        let mut files = Vec::new();
        each_sheet(&run, &mut |name, fill| {
            files.push((name, to_text(fill)));
            Ok(())
        })
        .unwrap();
        assert!(files.iter().any(|f| f.0 == "findings.csv"));
        assert!(files.iter().any(|f| f.0 == "warnings.csv"));
        let tag = format!("{},{}", run.host.hostname, run.started_utc);
        for (name, text) in &files {
            let mut lines = text.lines();
            assert!(
                lines.next().unwrap_or("").starts_with("host,run,"),
                "{name}: {text}"
            );
            for l in lines {
                assert!(l.starts_with(&tag), "{name}: {l}");
            }
        }
    }

    #[test]
    fn findings_and_warnings_are_exported_with_their_verdicts() {
        use crate::model::{Estimate, Finding, Outcome, ProbeResult, Status, Warning};
        let mut run = fixture();
        let mut p = ProbeResult::new("threads", "t", Status::Completed);
        let e = |value, lo, hi| Estimate {
            value,
            lo,
            hi,
            n: 8,
        };
        p.findings.push(Finding::Comparison {
            what: "child start, by where".into(),
            unit: "ns".into(),
            a: "other-core".into(),
            a_value: e(104.0, 103.0, 105.0),
            b: "same-cpu".into(),
            b_value: e(100.0, 99.0, 101.0),
            ratio: e(1.04, 1.002, 1.06),
            significant: true,
            outcome: Outcome::Inconclusive,
            context: None,
        });
        p.warnings.push(Warning::Note {
            text: crate::model::OldText::for_test("=cmd, a formula"),
        });
        run.probes = vec![p];
        let f = findings_csv(&run);
        let mut lines = f.lines();
        assert_eq!(
            lines.next(),
            Some("host,run,probe,kind,what,unit,value,lo,hi,n,a,b,verdict,text")
        );
        let row = lines.next().unwrap();
        assert!(
            row.contains(",threads,comparison,\"child start, by where\",ns,1.04,1.002,1.06,8,other-core,same-cpu,small,"),
            "{row}"
        );
        let w = warnings_csv(&run);
        assert!(w.starts_with("host,run,probe,kind,text\n"), "{w}");
        assert!(w.contains(",threads,note,\"'=cmd, a formula\""), "{w}");
    }

    #[test]
    fn formulas_are_neutralised_and_numbers_kept() {
        for f in ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert!(cell(f).starts_with('\''), "{f:?}");
        }
        assert_eq!(cell("-1.5"), "-1.5");
        assert_eq!(cell("plain"), "plain");
    }
}
