//! The rooms below the commands do not import the renderer (`render/` is a leaf that
//! only the commands use), and the rooms table of docs/architecture.md is the import
//! graph of `src/`, and no code outside `probes/` names a probe by its id. Plain text
//! scans of the sources, comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files and folders (under `src/`) that must not import `render`.
const BELOW_THE_RENDERER: [&str; 18] = [
    "compare",
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
    "counters",
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

/// The code of a file without comments and without the unit-test module at its end.
fn code_of(text: &str) -> String {
    let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..code_end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file under `src/`: `["probes", "c2c"]` for
/// `probes/c2c.rs`, `["probes"]` for `probes/mod.rs`, `[]` for `lib.rs`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// The paths a use-tree names, from just after `crate::` or `super::`: `a::b`,
/// `a::{b, c::{d, e}}` give `a::b`, and `a::b`, `a::c::d`, `a::c::e`.
fn use_tree_paths(text: &str) -> Vec<Vec<String>> {
    fn ident(s: &str) -> (&str, &str) {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (&s[..end], &s[end..])
    }
    fn tree<'a>(s: &'a str, prefix: &[String], out: &mut Vec<Vec<String>>) -> &'a str {
        let mut path = prefix.to_vec();
        let mut s = s.trim_start();
        loop {
            if let Some(group) = s.strip_prefix('{') {
                let mut rest = group;
                loop {
                    rest = tree(rest, &path, out).trim_start();
                    if let Some(r) = rest.strip_prefix(',') {
                        rest = r.trim_start();
                        if let Some(end) = rest.strip_prefix('}') {
                            return end;
                        }
                    } else {
                        return rest.strip_prefix('}').unwrap_or(rest);
                    }
                }
            }
            let (name, rest) = ident(s);
            if name.is_empty() {
                if path.len() > prefix.len() {
                    out.push(path);
                }
                return s;
            }
            if name != "self" {
                path.push(name.to_string());
            }
            match rest.strip_prefix("::") {
                Some(more) => s = more.trim_start(),
                None => {
                    out.push(path);
                    return rest;
                }
            }
        }
    }
    let mut out = Vec::new();
    tree(text, &[], &mut out);
    out
}

/// Each file's files it names through `crate::…` or `super::…` paths (the longest
/// module prefix of each path that is a file), itself left out.
fn file_imports(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let by_module: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap_or(f).to_path_buf();
            (module_of(&rel), rel)
        })
        .collect();
    let resolve = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|k| by_module.get(&path[..k]).cloned())
    };
    let mut out = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap_or(f).to_path_buf();
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let code = code_of(&text);
        let module = module_of(&rel);
        let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
        let mut imports = BTreeSet::new();
        for (marker, base) in [("crate::", Vec::new()), ("super::", parent)] {
            let mut rest = code.as_str();
            while let Some(i) = rest.find(marker) {
                let boundary = rest[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                rest = &rest[i + marker.len()..];
                if !boundary {
                    continue;
                }
                for p in use_tree_paths(rest) {
                    let full: Vec<String> = base.iter().cloned().chain(p).collect();
                    if let Some(target) = resolve(&full).filter(|t| *t != rel) {
                        imports.insert(target);
                    }
                }
            }
        }
        out.insert(rel, imports);
    }
    out
}

#[test]
fn the_use_tree_scan_reads_nested_groups() {
    let paths = use_tree_paths("a::{b, c::{d, self}, e::F}; rest");
    let got: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(got, ["a::b", "a::c::d", "a::c", "a::e::F"]);
    assert_eq!(use_tree_paths("model::Estimate;")[0], ["model", "Estimate"]);
}

/// No two files import each other: each such pair exists because a small item sits in
/// the wrong file (four were found and moved: the raw stamps to `timestamp.rs`, the
/// statistics' values to `stats/types.rs`, MPI's control messages to `mpi/ctrl.rs`,
/// the allowed CPUs to `affinity`).
#[test]
fn no_two_files_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let imports = file_imports(&src);
    let mut pairs = Vec::new();
    for (a, targets) in &imports {
        for b in targets {
            if a < b && imports.get(b).is_some_and(|t| t.contains(a)) {
                pairs.push(format!("{} <-> {}", a.display(), b.display()));
            }
        }
    }
    assert!(
        imports.len() > 50 && imports.values().map(BTreeSet::len).sum::<usize>() > 200,
        "the scan found too few files or imports to be trusted"
    );
    assert!(
        pairs.is_empty(),
        "files importing each other:\n{}",
        pairs.join("\n")
    );
}

/// The longest a function may be, in lines from its `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 120;

/// `(first line, lines, name)` of every function in `text` (a brace count that skips
/// comments, char literals and the braces of string literals on one line).
fn functions(text: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let braces = |line: &str| -> (i64, bool) {
        let code = line.split("//").next().unwrap_or("");
        let (mut depth, mut opened, mut in_str) = (0i64, false, false);
        let mut chars = code.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if in_str => {
                    chars.next();
                }
                '"' => in_str = !in_str,
                '\'' if !in_str => {
                    // A char literal ('{', '\'') or a lifetime ('a): skip the literal.
                    let rest: String = chars.clone().take(3).collect();
                    if rest.starts_with('\\') || rest.chars().nth(1) == Some('\'') {
                        while let Some(d) = chars.next() {
                            if d == '\\' {
                                chars.next();
                            } else if d == '\'' {
                                break;
                            }
                        }
                    }
                }
                '{' if !in_str => {
                    depth += 1;
                    opened = true;
                }
                '}' if !in_str => depth -= 1,
                _ => {}
            }
        }
        (depth, opened)
    };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let Some(at) = t.find("fn ") else { continue };
        let head = &t[..at];
        let is_fn = head.split_whitespace().all(|w| {
            w.starts_with("pub")
                || matches!(
                    w,
                    "const" | "async" | "unsafe" | "extern" | "\"C\"" | "default"
                )
        });
        if !is_fn {
            continue;
        }
        let name: String = t[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            let (d, o) = braces(l);
            depth += d;
            opened |= o;
            if !opened && l.split("//").next().unwrap_or("").trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            if opened && depth <= 0 {
                out.push((i + 1, j - i + 1, name.clone()));
                break;
            }
        }
    }
    out
}

#[test]
fn the_function_scan_measures_a_function() {
    let text = "fn a() {\n    let c = '{';\n    let s = \"}\";\n}\n\npub(crate) fn b<'x>(x: &'x str) -> &'x str {\n    x\n}\n";
    assert_eq!(
        functions(text),
        [(1, 4, "a".to_string()), (6, 3, "b".to_string())]
    );
}

/// No function of the crates' sources is longer than a screen and a half: a longer
/// one is split by meaning (tests and their tables of cases are exempt).
#[test]
fn no_function_is_longer_than_the_limit() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    let mut seen = 0;
    for krate in ["corescope", "hspc", "taskpool"] {
        let src = crates.join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text =
                std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
            for (line, n, name) in functions(&text[..code_end]) {
                seen += 1;
                if n > MAX_FUNCTION_LINES {
                    long.push(format!("{}:{line}: {name}, {n} lines", f.display()));
                }
            }
        }
    }
    assert!(seen > 500, "the scan found only {seen} functions");
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// `(line number, contents)` of every string literal in `code` (plain, byte and raw
/// strings; comments, char literals and lifetimes skipped). Contents are as written,
/// escapes left in.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let c: Vec<char> = code.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let ident = |k: usize| k > 0 && (c[k - 1].is_alphanumeric() || c[k - 1] == '_');
    let until = |from: usize, end: &str| -> usize {
        let end: Vec<char> = end.chars().collect();
        (from..c.len())
            .find(|&k| c[k..].starts_with(&end))
            .unwrap_or(c.len())
    };
    while i < c.len() {
        let raw_hashes = (c[i] == 'r' && !ident(i) || c[i] == 'b' && c.get(i + 1) == Some(&'r'))
            .then(|| {
                let start = i + if c[i] == 'b' { 2 } else { 1 };
                let hashes = c[start..].iter().take_while(|&&h| h == '#').count();
                (c.get(start + hashes) == Some(&'"')).then_some((start + hashes + 1, hashes))
            })
            .flatten();
        if let Some((start, hashes)) = raw_hashes.filter(|_| !ident(i)) {
            let end = until(start, &format!("\"{}", "#".repeat(hashes)));
            let s: String = c[start..end].iter().collect();
            out.push((line, s.clone()));
            line += s.matches('\n').count();
            i = end + 1 + hashes;
        } else if c[i..].starts_with(&['/', '/']) {
            i = until(i, "\n");
        } else if c[i..].starts_with(&['/', '*']) {
            let end = (until(i + 2, "*/") + 2).min(c.len());
            line += c[i..end].iter().filter(|&&x| x == '\n').count();
            i = end;
        } else if c[i] == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            let s: String = c[i + 1..k.min(c.len())].iter().collect();
            out.push((line, s.clone()));
            line += s.matches('\n').count();
            i = k + 1;
        } else if c[i] == '\'' {
            // A char literal ('"', '\'', '\u{7f}') or a lifetime ('a).
            i += match (c.get(i + 1), c.get(i + 2)) {
                (Some('\\'), _) => until(i + 3, "'") - i + 1,
                (Some(_), Some('\'')) => 3,
                _ => 1,
            };
        } else {
            if c[i] == '\n' {
                line += 1;
            }
            i += 1;
        }
    }
    out
}

#[test]
fn the_literal_scan_reads_strings_only() {
    let code = "let a = \"c2c\"; // \"memory\"\n/* \"numa\" */ let b = '\"'; let s: &'static str = r#\"x \"y\"\"#;\nf(\"a\\\"b\", b\"c\", 'x');\n";
    let got = string_literals(code);
    let want: Vec<(usize, String)> = vec![
        (1, "c2c".into()),
        (2, "x \"y\"".into()),
        (3, "a\\\"b".into()),
        (3, "c".into()),
    ];
    assert_eq!(got, want);
}

/// Literals that are a probe's id by chance and name something else, each with the
/// file it is in (`*`: any), a piece of its line, and what it names. A literal equal to
/// an id is allowed on a line of that file containing the piece; `<id>/…` never is.
const NOT_PROBE_IDS: [(&str, &str, &str); 5] = [
    (
        "*",
        "\"threads\"",
        "the thread count: the x axis of sweeps, a case parameter, a table column",
    ),
    ("topology/host.rs", "\"memory\"", "the cgroup controller"),
    (
        "mpi/jacobi.rs",
        "\"compute\"",
        "a span kind of the Jacobi ranks",
    ),
    (
        "render/glossary.rs",
        "\"peak\",",
        "a glossary term: a series' highest rate",
    ),
    (
        "crosscheck/rows.rs",
        "[\"bench\", \"syscall\", \"basic\"",
        "perf's `bench syscall basic`",
    ),
];

/// No code outside `probes/` names a probe by its id: each probe's id is its `ID`, in
/// its own file, and the registry holds the probes. A string literal equal to a
/// registered id, or starting with `<id>/` (a series or matrix name built from it),
/// anywhere else in `src/` (comments and the unit-test module at a file's end left out)
/// fails here; words that merely contain an id (`"memory node 1"`) do not count.
#[test]
fn probe_ids_are_named_only_by_their_probes() {
    let ids: Vec<&str> = corescope::probes::registry()
        .iter()
        .map(|p| p.id())
        .collect();
    assert!(ids.len() > 10 && ids.contains(&"c2c"), "{ids:?}");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut offenders, mut used) = (Vec::new(), BTreeSet::new());
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        if room_of(rel) == "probes" {
            continue;
        }
        let rel_name = rel.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
        let lines: Vec<&str> = text.lines().collect();
        for (n, lit) in string_literals(&text[..code_end]) {
            let Some(id) = ids
                .iter()
                .find(|id| lit == **id || lit.starts_with(&format!("{id}/")))
            else {
                continue;
            };
            let line = lines.get(n - 1).copied().unwrap_or("");
            let excused = NOT_PROBE_IDS.iter().position(|(file, piece, _)| {
                lit == *id && (*file == "*" || *file == rel_name) && line.contains(piece)
            });
            match excused {
                Some(k) => {
                    used.insert(k);
                }
                None => offenders.push(format!("{rel_name}:{n}: \"{lit}\": {}", line.trim())),
            }
        }
    }
    let stale: Vec<&str> = (0..NOT_PROBE_IDS.len())
        .filter(|k| !used.contains(k))
        .map(|k| NOT_PROBE_IDS[k].1)
        .collect();
    assert!(
        stale.is_empty(),
        "NOT_PROBE_IDS entries no longer needed: {stale:?}"
    );
    assert!(
        offenders.is_empty(),
        "probe ids named outside their probe (use `probes::<probe>::ID`, or a name the \
         probe's file gives, e.g. `probes::c2c::MATRIX_CAS`):\n{}",
        offenders.join("\n")
    );
}

/// Room → lines of its `.rs` files under `src/` (every line: blank lines, comments and
/// unit tests included), `lib.rs` left out (it has no row).
fn room_lines(src: &Path) -> BTreeMap<String, usize> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = BTreeMap::new();
    for f in &files {
        let room = room_of(f.strip_prefix(src).expect("under src"));
        if room == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        *out.entry(room).or_insert(0) += text.lines().count();
    }
    out
}

/// Whether a size the doc states is near enough to the measured one: within 10 %
/// (and at least 10 lines), so ordinary edits do not make the doc wrong.
fn near(stated: usize, measured: usize) -> bool {
    stated.abs_diff(measured) <= (measured / 10).max(10)
}

/// The longest function of the three crates' sources (unit-test modules left out):
/// `(lines, name, file relative to crates/)`, and the length of every function by
/// file and name (the longest of that name in that file).
type Longest = ((usize, String, String), BTreeMap<(String, String), usize>);

fn longest_function() -> Longest {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut longest = (0, String::new(), String::new());
    let mut by_name: BTreeMap<(String, String), usize> = BTreeMap::new();
    for krate in ["corescope", "hspc", "taskpool"] {
        let mut files = Vec::new();
        rust_files(&crates.join(krate).join("src"), &mut files);
        for f in files {
            let text =
                std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let code_end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
            let file = f.strip_prefix(&crates).unwrap_or(&f).display().to_string();
            for (_, n, name) in functions(&text[..code_end]) {
                let e = by_name.entry((file.clone(), name.clone())).or_insert(0);
                *e = (*e).max(n);
                if n > longest.0 {
                    longest = (n, name, file.clone());
                }
            }
        }
    }
    (longest, by_name)
}

/// Where the doc states the longest function: "The longest function is `NAME` in
/// `FILE`, N lines" (on one line).
const LONGEST_MARKER: &str = "The longest function is `";

/// The byte range of the doc's longest-function statement and what it states:
/// `(range, name, file, lines)`.
fn stated_longest(doc: &str) -> Option<(std::ops::Range<usize>, String, String, usize)> {
    let start = doc.find(LONGEST_MARKER)?;
    let line_end = doc[start..].find('\n').map_or(doc.len(), |i| start + i);
    let line = &doc[start + LONGEST_MARKER.len()..line_end];
    let parts: Vec<&str> = line.splitn(4, '`').collect();
    let [name, " in ", file, rest] = parts[..] else {
        return None;
    };
    let digits = rest.strip_prefix(", ")?;
    let number: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let after = digits[number.len()..].strip_prefix(" lines")?;
    let end = line_end - after.len();
    Some((start..end, name.into(), file.into(), number.parse().ok()?))
}

/// The rooms table with its `lines` column set from `sizes`.
fn with_room_sizes(doc: &str, sizes: &BTreeMap<String, usize>) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in doc.lines() {
        let mut cells: Vec<String> = line.split('|').map(String::from).collect();
        let room = row_room(line);
        match room.as_ref().and_then(|r| sizes.get(r)) {
            Some(n) if cells.len() >= 6 => {
                cells[2] = format!(" {n} ");
                out.push(cells.join("|"));
            }
            _ => out.push(line.to_string()),
        }
    }
    let mut text = out.join("\n");
    if doc.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The room of a line of the rooms table (its first backticked name), if it is a row.
fn row_room(line: &str) -> Option<String> {
    if !line.starts_with("| `") {
        return None;
    }
    let first = line.split('`').nth(1)?;
    Some(
        first
            .split(['/', ':'])
            .next()?
            .trim_end_matches(".rs")
            .to_string(),
    )
}

#[test]
fn the_doc_parses_a_longest_function_and_rewrites_sizes() {
    let doc = "a\nThe longest function is `f` in `x/src/a.rs`, 97 lines (limit).\n";
    let (range, name, file, n) = stated_longest(doc).expect("parsed");
    assert_eq!((name.as_str(), file.as_str(), n), ("f", "x/src/a.rs", 97));
    assert_eq!(
        &doc[range],
        "The longest function is `f` in `x/src/a.rs`, 97 lines"
    );
    let table = "| `store.rs` | 1 | what | `model` |\n| `x/` |  | y | — |\n";
    let sizes = BTreeMap::from([("store".to_string(), 717), ("x".to_string(), 5)]);
    assert_eq!(
        with_room_sizes(table, &sizes),
        "| `store.rs` | 717 | what | `model` |\n| `x/` | 5 | y | — |\n"
    );
    assert!(near(100, 109) && !near(100, 112) && near(15, 5));
}

/// The `lines` column of the rooms table and the longest function the doc names
/// are measured: within 10 % of the sources. With `UPDATE_ARCHITECTURE_DOC=1` the
/// test writes the measured numbers into the doc instead of failing.
#[test]
fn the_doc_states_the_rooms_sizes_and_the_longest_function() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    let sizes = room_lines(&src);
    let ((max_n, max_name, max_file), by_name) = longest_function();
    if std::env::var_os("UPDATE_ARCHITECTURE_DOC").is_some_and(|v| v == "1") {
        let mut text = with_room_sizes(&doc, &sizes);
        let (range, ..) = stated_longest(&text).expect("the doc states the longest function");
        let sentence = format!("{LONGEST_MARKER}{max_name}` in `{max_file}`, {max_n} lines");
        text.replace_range(range, &sentence);
        std::fs::write(&doc_path, text).unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
        return;
    }
    let mut wrong = Vec::new();
    for line in doc.lines() {
        let Some(room) = row_room(line) else { continue };
        let Some(&measured) = sizes.get(&room) else {
            continue;
        };
        let stated = line.split('|').nth(2).and_then(|c| c.trim().parse().ok());
        if !stated.is_some_and(|s| near(s, measured)) {
            wrong.push(format!(
                "{room}: the table says {stated:?} lines, it has {measured}"
            ));
        }
    }
    match stated_longest(&doc) {
        None => wrong.push(format!(
            "no sentence \"{LONGEST_MARKER}NAME` in `FILE`, N lines\""
        )),
        Some((_, name, file, n)) => {
            let named = by_name.get(&(file.clone(), name.clone()));
            if !near(n, max_n) || !named.is_some_and(|&m| near(m, max_n)) {
                wrong.push(format!(
                    "the doc names `{name}` in {file} ({n} lines) as the longest function; \
                     it is `{max_name}` in {max_file}, {max_n} lines"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md is out of date (UPDATE_ARCHITECTURE_DOC=1 rewrites it):\n{}",
        wrong.join("\n")
    );
}
