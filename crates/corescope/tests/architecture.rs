//! The rooms below the commands do not import the renderer: `render/` is a leaf that
//! only the commands use (see docs/architecture.md). A plain text scan of the sources,
//! comments left out.

use std::path::{Path, PathBuf};

/// Files and folders (under `src/`) that must not import `render`.
const BELOW_THE_RENDERER: [&str; 13] = [
    "probes",
    "analysis",
    "stats.rs",
    "model",
    "placement",
    "runner",
    "memguard.rs",
    "drift.rs",
    "units.rs",
    "clock.rs",
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
