//! The rooms below the commands do not import the renderer (`render/` is a leaf that
//! only the commands use), and the rooms table of docs/architecture.md is the import
//! graph of `src/`. Plain text scans of the sources,
//! comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files and folders (under `src/`) that must not import `render`.
const BELOW_THE_RENDERER: [&str; 17] = [
    "crosscheck",
    "harness",
    "probes",
    "analysis",
    "stats",
    "model",
    "placement",
    "runner",
    "memguard.rs",
    "drift.rs",
    "state.rs",
    "units.rs",
    "clock.rs",
    "timestamp.rs",
    "counters.rs",
    "topology",
    "kernels",
];

/// What an import of the renderer looks like.
const FORBIDDEN: [&str; 2] = ["crate::render", "super::render"];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for e in entries {
            rust_files(&e, out);
        }
    } else if path.extension().is_some_and(|x| x == "rs") {
        out.push(path.to_path_buf());
    }
}

/// `(line number, line)` of every non-comment line of `text` that imports the renderer,
/// including `use crate::{.., render, ..}` on one line.
fn render_imports(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            FORBIDDEN.iter().any(|f| code.contains(f))
                || ((code.contains("crate::{") || code.contains("super::{"))
                    && code
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .any(|w| w == "render"))
        })
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

#[test]
fn the_scan_sees_an_import() {
    assert_eq!(render_imports("use crate::render::fmt_value;").len(), 1);
    assert_eq!(render_imports("    super::render::x()").len(), 1);
    assert_eq!(render_imports("use crate::{model, render};").len(), 1);
    assert!(render_imports("//! words via `crate::render::words`").is_empty());
    assert!(render_imports("use crate::units::fmt_value; // not crate::render").is_empty());
    assert!(render_imports("use crate::{model, units};").is_empty());
}

#[test]
fn nothing_below_the_commands_imports_the_renderer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for room in BELOW_THE_RENDERER {
        let p = src.join(room);
        assert!(p.exists(), "{} is gone: update this test", p.display());
        rust_files(&p, &mut files);
    }
    assert!(files.len() >= 10, "{files:?}");
    let offenders: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text =
                std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            render_imports(&text)
                .into_iter()
                .map(move |(n, l)| format!("{}:{n}: {}", f.display(), l.trim()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "these import the renderer (use crate::units for numbers; findings are typed and \
         worded by render::words):\n{}",
        offenders.join("\n")
    );
}

/// The top-level room a source path (relative to `src/`) belongs to: `probes`
/// for `probes/c2c.rs`, `clock` for `clock.rs`.
fn room_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// The rooms a file's code names as `crate::room…` (also inside `crate::{a, b::c}`),
/// comments and the unit-test module at the end left out.
fn crate_uses(text: &str) -> BTreeSet<String> {
    let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    let code: String = text[..code_end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').collect()
        } else {
            vec![after]
        };
        for n in names {
            let ident: String = n
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !ident.is_empty() && ident != "self" {
                out.insert(ident);
            }
        }
        rest = after;
    }
    out
}

/// Room → the rooms in its "uses" column, from the rooms table of
/// docs/architecture.md (the first backticked name of a row is the room).
fn documented_uses(doc: &str, rooms: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(|t| {
                t.split(['/', ':'])
                    .next()
                    .unwrap_or("")
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect()
    };
    let mut out = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').collect();
        if cells.len() < 6 {
            continue;
        }
        let Some(room) = ticked(cells[1]).into_iter().next() else {
            continue;
        };
        let uses = ticked(cells[4])
            .into_iter()
            .filter(|u| rooms.contains(u))
            .collect();
        out.insert(room, uses);
    }
    out
}

#[test]
fn the_scan_reads_crate_paths_and_groups() {
    let uses = crate_uses(
        "use crate::model::{A, B};\nuse crate::{stats, units::fmt};\n// crate::render\nfn f() { crate::clock::now(); }\n#[cfg(test)]\nmod tests { use crate::store; }",
    );
    let want: BTreeSet<String> = ["clock", "model", "stats", "units"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(uses, want);
}

#[test]
fn the_rooms_table_is_the_import_graph() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut actual: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let room = room_of(rel);
        if room == "main" || room == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let entry = actual.entry(room.clone()).or_default();
        entry.extend(crate_uses(&text).into_iter().filter(|u| *u != room));
    }
    let rooms: BTreeSet<String> = actual.keys().cloned().collect();
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    let documented = documented_uses(&doc, &rooms);
    let mut wrong = Vec::new();
    for (room, uses) in &actual {
        match documented.get(room) {
            None => wrong.push(format!("{room}: no row in the rooms table")),
            Some(d) if d != uses => wrong.push(format!(
                "{room}: imports {:?}, the table says {:?}",
                uses, d
            )),
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md is out of date:\n{}",
        wrong.join("\n")
    );
}

/// Files of the host (not of this process) that only `topology/` reads.
const HOST_FILES: [&str; 7] = [
    "\"/proc/sys",
    "\"/sys/",
    "\"/proc/meminfo\"",
    "\"/proc/cpuinfo\"",
    "\"/proc/loadavg\"",
    "\"/proc/stat\"",
    "\"/proc/cmdline\"",
];

#[test]
fn host_facts_are_read_only_in_topology() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut offenders = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        if room_of(rel) == "topology" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
        for (i, line) in text[..code_end].lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !line.trim_start().starts_with("//") && HOST_FILES.iter().any(|h| code.contains(h)) {
                offenders.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "host facts are read in topology/ only (topology::host):\n{}",
        offenders.join("\n")
    );
}
