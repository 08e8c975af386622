//! `corescope doctor` for people: the checks as a table (condition, what was read
//! and where, verdict, the probes it affects, what to do), and the writes of
//! `--tune` / `--reset`. Reads the model only.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, ContentArrangement, Table};

use crate::model::{Checks, TuneWrite, Verdict};

/// Longest text of one cell (the values come from host files).
const MAX_CELL_CHARS: usize = 400;

fn clean(s: &str) -> String {
    super::clean(s, MAX_CELL_CHARS, false)
}

/// The probes a check affects, `every probe` when it is all of them.
fn affects(ids: &[String]) -> String {
    let every = crate::probes::registry();
    if !ids.is_empty() && every.iter().all(|p| ids.iter().any(|i| i == p.id())) {
        "every probe".into()
    } else {
        ids.join(", ")
    }
}

/// The checks as a table `width` columns wide, then one line counting them.
pub fn table(checks: &Checks, width: usize) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_header(
            ["check", "state", "verdict", "affects", "what to do"]
                .into_iter()
                .map(Cell::new),
        );
    for c in &checks.checks {
        t.add_row(vec![
            Cell::new(c.id.name()),
            Cell::new(clean(&c.state)),
            Cell::new(c.verdict.name()),
            Cell::new(affects(&c.affects)),
            Cell::new(clean(&c.advice)),
        ]);
    }
    let read_from: String = checks
        .checks
        .iter()
        .map(|c| format!("  {:<20} {}\n", c.id.name(), clean(&c.source)))
        .collect();
    let n = |v: Verdict| checks.checks.iter().filter(|c| c.verdict == v).count();
    let tunable = checks.checks.iter().filter(|c| !c.tune.is_empty()).count();
    format!(
        "{t}\nread from:\n{read_from}{} of {} conditions blur the figures, {} unknown; \
         `corescope doctor --tune` can set {tunable} (see docs/doctor.md)\n",
        n(Verdict::Blurs),
        checks.checks.len(),
        n(Verdict::Unknown),
    )
}

/// One line per write: `path: old -> new`.
pub fn writes(writes: &[TuneWrite]) -> String {
    writes
        .iter()
        .map(|w| {
            format!(
                "  {}: {} -> {}\n",
                clean(&w.path),
                clean(&w.old),
                clean(&w.new)
            )
        })
        .collect()
}

/// Writes the kernel refused, one line each.
pub fn failures(failed: &[(TuneWrite, String)]) -> String {
    failed
        .iter()
        .map(|(w, e)| {
            format!(
                "  {}: {} not written: {}\n",
                clean(&w.path),
                clean(&w.new),
                clean(e)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Check, CheckId};

    #[test]
    fn a_table_names_each_check_its_verdict_and_the_count() {
        let checks = Checks {
            checks: vec![
                Check {
                    id: CheckId::Thp,
                    source: "/sys/kernel/mm/transparent_hugepage/enabled".into(),
                    state: "[always]".into(),
                    verdict: Verdict::Blurs,
                    affects: vec!["tlb-walk".into(), "page-walk".into()],
                    advice: "set madvise".into(),
                    tune: vec![TuneWrite {
                        path: "/sys/kernel/mm/transparent_hugepage/enabled".into(),
                        old: "always".into(),
                        new: "madvise".into(),
                    }],
                },
                Check {
                    id: CheckId::Load,
                    source: "/proc/loadavg".into(),
                    state: "0.1\u{1b}[31m".into(),
                    verdict: Verdict::Ok,
                    affects: crate::probes::registry()
                        .iter()
                        .map(|p| p.id().to_string())
                        .collect(),
                    advice: String::new(),
                    tune: Vec::new(),
                },
            ],
        };
        let text = table(&checks, 120);
        for want in [
            "thp",
            "[always]",
            "blurs",
            "tlb-walk, page-walk",
            "load",
            "every probe",
            "  load                 /proc/loadavg",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
        assert!(!text.contains('\u{1b}'), "escapes are cleaned");
        assert!(text.contains("1 of 2 conditions blur the figures, 0 unknown"));
        assert!(text.contains("can set 1"));
        assert_eq!(
            writes(&checks.checks[0].tune),
            "  /sys/kernel/mm/transparent_hugepage/enabled: always -> madvise\n"
        );
    }
}
