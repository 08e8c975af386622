//! Tidy CSV export (one row per observation, pandas-friendly): every series,
//! distribution summary, histogram bin, pair, matrix cell, timeline span and
//! free table, plus one small file per series.

use crate::model::RunFile;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Tidy CSV of every series: `probe,series,x_name,x,y_name,y`.
pub fn series_csv(run: &RunFile) -> String {
    let mut o = String::from("probe,series,x_name,x,y_name,y\n");
    for p in &run.probes {
        for s in &p.series {
            for (x, y) in s.x.iter().zip(&s.y) {
                let _ = writeln!(
                    o,
                    "{},{},{},{x},{},{y}",
                    csv(&p.id),
                    csv(&s.name),
                    csv(&s.x_name),
                    csv(&s.y_name)
                );
            }
        }
    }
    o
}

/// Tidy CSV of every distribution's summary.
pub fn distributions_csv(run: &RunFile) -> String {
    let mut o =
        String::from("probe,distribution,unit,count,min,p50,p90,p99,p999,max,mean,stddev\n");
    for p in &run.probes {
        for d in &p.distributions {
            let s = &d.summary;
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                csv(&p.id),
                csv(&d.name),
                csv(&d.unit),
                s.count,
                s.min,
                s.p50,
                s.p90,
                s.p99,
                s.p999,
                s.max,
                s.mean,
                s.stddev
            );
        }
    }
    o
}

/// A CSV field, quoted when needed.
pub fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Tidy CSV of every histogram bin.
pub fn histograms_csv(run: &RunFile) -> String {
    let mut o = String::from("probe,distribution,unit,bin_low,bin_high,count\n");
    for p in &run.probes {
        for d in &p.distributions {
            let h = &d.histogram;
            for (i, c) in h.counts.iter().enumerate() {
                if let (Some(a), Some(b)) = (h.edges.get(i), h.edges.get(i + 1)) {
                    let _ = writeln!(
                        o,
                        "{},{},{},{a},{b},{c}",
                        csv(&p.id),
                        csv(&d.name),
                        csv(&d.unit)
                    );
                }
            }
        }
    }
    o
}

/// Tidy CSV of the paired samples (A, B) of distributions that have them.
pub fn pairs_csv(run: &RunFile) -> String {
    let mut o = String::from("probe,distribution,paired_with,unit,index,a,b\n");
    for p in &run.probes {
        for d in &p.distributions {
            let with = d.paired_with.as_deref().unwrap_or("");
            for (i, [a, b]) in d.pairs.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "{},{},{},{},{i},{a},{b}",
                    csv(&p.id),
                    csv(&d.name),
                    csv(with),
                    csv(&d.unit)
                );
            }
        }
    }
    o
}

/// Tidy CSV of every matrix cell (unmeasured cells are left out).
pub fn matrices_csv(run: &RunFile) -> String {
    let mut o = String::from("probe,matrix,unit,row,col,value\n");
    for p in &run.probes {
        for m in &p.matrices {
            for (r, row) in m.values.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    if let Some(v) = v {
                        let rl = m.rows.get(r).map(String::as_str).unwrap_or("");
                        let cl = m.cols.get(c).map(String::as_str).unwrap_or("");
                        let _ = writeln!(
                            o,
                            "{},{},{},{},{},{v}",
                            csv(&p.id),
                            csv(&m.name),
                            csv(&m.unit),
                            csv(rl),
                            csv(cl)
                        );
                    }
                }
            }
        }
    }
    o
}

/// Tidy CSV of every timeline span.
pub fn timelines_csv(run: &RunFile) -> String {
    let mut o = String::from("probe,timeline,lane,start_ns,end_ns,kind\n");
    for p in &run.probes {
        for t in &p.timelines {
            for l in &t.lanes {
                for s in &l.spans {
                    let _ = writeln!(
                        o,
                        "{},{},{},{},{},{}",
                        csv(&p.id),
                        csv(&t.name),
                        csv(&l.label),
                        s.start_ns,
                        s.end_ns,
                        csv(&s.kind)
                    );
                }
            }
        }
    }
    o
}

/// A name made safe as one path component.
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
    if out.is_empty() || out.starts_with('.') {
        format!("_{out}")
    } else {
        out
    }
}

/// Write every CSV into `dir` (created if missing); returns the files written.
pub fn write_dir(run: &RunFile, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut put = |name: String, text: String| -> std::io::Result<()> {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        written.push(path);
        Ok(())
    };
    put("series.csv".into(), series_csv(run))?;
    put("distributions.csv".into(), distributions_csv(run))?;
    put("histograms.csv".into(), histograms_csv(run))?;
    put("pairs.csv".into(), pairs_csv(run))?;
    put("matrices.csv".into(), matrices_csv(run))?;
    put("timelines.csv".into(), timelines_csv(run))?;
    for p in &run.probes {
        for s in &p.series {
            let mut t = format!("{},{}\n", csv(&s.x_name), csv(&s.y_name));
            for (x, y) in s.x.iter().zip(&s.y) {
                let _ = writeln!(t, "{x},{y}");
            }
            put(
                format!("{}--{}.csv", file_name(&p.id), file_name(&s.name)),
                t,
            )?;
        }
        for tb in &p.tables {
            let mut t = tb
                .columns
                .iter()
                .map(|c| csv(c))
                .collect::<Vec<_>>()
                .join(",");
            t.push('\n');
            for r in &tb.rows {
                let cells: Vec<String> = r
                    .iter()
                    .map(|v| match v {
                        serde_json::Value::String(s) => csv(s),
                        other => csv(&other.to_string()),
                    })
                    .collect();
                let _ = writeln!(t, "{}", cells.join(","));
            }
            put(
                format!("{}--table-{}.csv", file_name(&p.id), file_name(&tb.name)),
                t,
            )?;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_and_names_are_safe() {
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv("plain"), "plain");
        assert_eq!(file_name("int/linear"), "int_linear");
        assert_eq!(file_name("../x"), "_.._x");
        assert_eq!(file_name(""), "_");
    }
}
