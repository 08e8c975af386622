//! Hostile inputs (issue 15): bad command lines, CPU lists, synthetic specs,
//! XML, run files, outputs and signals, each with its expected outcome (exit
//! code and a message fragment). None may panic, hang past 10 s, or succeed
//! wrongly. `docs/safety.md` has the table of outcomes.
//!
//! No real measurement runs here: runs use `--quick` with the `timers` probe,
//! which takes well under a second.

use assert_cmd::Command;
use corescope::model::RunFile;
use corescope::render::{compare, csv, html, svg, terminal, MAX_TABLE_ROWS};
use corescope::store;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// No case may take longer than this: a hang check, not a speed target (a debug
/// build on a loaded 2-CPU machine took 10 s over a 100k-point compare once).
const TIMEOUT: Duration = Duration::from_secs(30);

fn corescope() -> Command {
    let mut c = Command::cargo_bin("corescope").expect("binary built");
    c.timeout(TIMEOUT);
    c
}

/// What a case must end with.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exit status and a fragment of stderr (one clear line).
    Fail(i32, &'static str),
    /// Exit 0 and a fragment of stdout.
    Ok(&'static str),
}

/// One hostile input: the arguments and what must happen.
struct Case {
    what: String,
    args: Vec<String>,
    expect: Expect,
}

fn case(what: impl Into<String>, args: &[&str], expect: Expect) -> Case {
    Case {
        what: what.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        expect,
    }
}

/// Run one case in `dir`; returns stdout for further checks.
fn check(dir: &Path, c: &Case) -> String {
    let started = Instant::now();
    let out = corescope()
        .current_dir(dir)
        .args(&c.args)
        .output()
        .unwrap_or_else(|e| panic!("{}: could not run: {e}", c.what));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    let code = out.status.code();
    assert!(
        started.elapsed() < TIMEOUT,
        "{}: hung ({:?})",
        c.what,
        started.elapsed()
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{}: panicked: {stderr}",
        c.what
    );
    assert!(
        !stderr.contains('\u{1b}') && !stdout.contains('\u{1b}'),
        "{}: an ESC byte reached the terminal",
        c.what
    );
    match c.expect {
        Expect::Fail(want, needle) => {
            assert_eq!(code, Some(want), "{}: stderr: {stderr}", c.what);
            assert!(
                stderr.contains(needle),
                "{}: expected '{needle}' in stderr: {stderr}",
                c.what
            );
            let lines = stderr.trim().lines().count();
            // clap adds a usage line and a hint; ours are one line.
            // clap and the MPI build hint say more; ours are one line.
            let most = match want {
                2 => 8,
                _ if c.what.starts_with("mpi") => 8,
                _ => 1,
            };
            assert!(lines <= most, "{}: not one clear line: {stderr}", c.what);
        }
        Expect::Ok(needle) => {
            assert_eq!(code, Some(0), "{}: stderr: {stderr}", c.what);
            assert!(
                stdout.contains(needle),
                "{}: expected '{needle}' in stdout",
                c.what
            );
        }
    }
    stdout
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn quick_value() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("quick.json")).unwrap()).unwrap()
}

/// Write `quick.json` changed by `f` to `dir/name`; returns the path as a string.
fn variant(dir: &Path, name: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v = quick_value();
    f(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

fn raw(dir: &Path, name: &str, text: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn command_line_cases() -> Vec<Case> {
    use Expect::*;
    vec![
        case(
            "misspelt command",
            &["reprot"],
            Fail(1, "did you mean `corescope report`"),
        ),
        case(
            "swapped letters",
            &["rpeort", "x.json"],
            Fail(1, "`corescope report`"),
        ),
        case(
            "misspelt compare",
            &["comapre", "a", "b"],
            Fail(1, "`corescope compare`"),
        ),
        case("misspelt list", &["lsit"], Fail(1, "`corescope list`")),
        case("misspelt topo", &["tpoo"], Fail(1, "`corescope topo`")),
        case(
            "misspelt probe",
            &["run", "computee", "--quick"],
            Fail(1, "did you mean 'compute'"),
        ),
        case(
            "unknown probe",
            &["run", "nosuchprobe", "--quick"],
            Fail(1, "unknown probe 'nosuchprobe'"),
        ),
        case(
            "unknown probe after a good one",
            &["run", "timers", "zzzzzz", "--quick"],
            Fail(1, "unknown probe 'zzzzzz'"),
        ),
        case(
            "control characters in a probe name",
            &["run", "\u{1b}[2J\u{7}", "--quick"],
            Fail(1, "unknown probe"),
        ),
        case(
            "quick and full",
            &["run", "timers", "--quick", "--full"],
            Fail(2, "cannot be used with"),
        ),
        case(
            "unknown flag",
            &["--bogus-flag"],
            Fail(2, "unexpected argument"),
        ),
        case("report without a file", &["report"], Fail(2, "required")),
        case(
            "compare with one file",
            &["compare", "a.json"],
            Fail(2, "required"),
        ),
        case(
            "unknown tuning target",
            &["tune", "nothing"],
            Fail(1, "unknown tuning target"),
        ),
        case(
            "event bytes 0",
            &["tune", "channel", "--event-bytes", "0"],
            Fail(2, "'--event-bytes <N>': an event needs at least 1 byte"),
        ),
        case(
            "event bytes too large",
            &["tune", "channel", "--event-bytes", "5000"],
            Fail(2, "'--event-bytes <N>': at most 1024 bytes"),
        ),
        case(
            "event bytes negative",
            &["tune", "channel", "--event-bytes", "-5"],
            Fail(
                2,
                "invalid value '-5' for '--event-bytes <N>': expected a number of bytes",
            ),
        ),
        case(
            "tune budget 0",
            &["tune", "channel", "--budget", "0"],
            Fail(2, "invalid value '0' for '--budget <SECONDS>'"),
        ),
        case(
            "tune out into /proc",
            &["tune", "channel", "--out", "/proc/corescope-h.json"],
            Fail(1, "cannot write"),
        ),
        case(
            "mpi without the feature or mpirun",
            &["mpi", "pingpong", "--quick"],
            Fail(1, "without MPI support"),
        ),
    ]
}

/// Bad values of `place` and `run --threads/--placement/--budget/--out`.
fn option_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    let out = dir.join("never.json");
    let o = out.to_str().unwrap().to_string();
    for (t, needle) in [
        ("0", "thread count 0"),
        ("-1", "negative"),
        ("-0", "negative"),
        ("65537", "above the limit of 65536"),
        ("4294967296", "above the limit"),
        ("99999999999999999999999", "above the limit"),
        ("abc", "not a positive integer"),
        ("", "not a positive integer"),
        ("1.5", "not a positive integer"),
        ("1e3", "not a positive integer"),
        ("0x10", "not a positive integer"),
    ] {
        v.push(case(
            format!("place -n {t:?}"),
            &["place", "scatter", "-n", t],
            Fail(2, needle),
        ));
    }
    // Refused by clap (2), but for a count the system cannot create now (1).
    for (t, code, needle) in [
        ("0", 2, "thread count 0"),
        ("-1", 2, "negative"),
        ("1,,2", 2, "not a positive integer"),
        ("1,-2", 2, "negative"),
        ("two", 2, "not a positive integer"),
        ("65537", 2, "above the limit"),
        ("65536", 1, "this system can create about"),
        ("1,2,99999", 2, "above the limit"),
    ] {
        v.push(case(
            format!("run --threads {t:?}"),
            &["run", "compute", "--quick", "--threads", t, "--out", &o],
            Fail(code, needle),
        ));
    }
    let cpu_lists = [
        ("1-0", "range 1-0 is reversed; write 0-1"),
        ("7-4", "write 4-7"),
        ("0-4000000000", "4000000000 is above the largest CPU id"),
        ("4294967295", "4294967295 is above the largest CPU id"),
        ("4294967296", "is above the largest CPU id"),
        ("99999999999999999999999", "is above the largest CPU id"),
        ("0-1048577", "1048577 is above"),
        ("-1", "negative CPU id -1"),
        ("0,-1", "negative CPU id"),
        ("0,,1", "empty item"),
        (",", "empty item"),
        ("0-", "empty item"),
        ("-", "negative CPU id"),
        ("0-1-2", "'1-2' is not a CPU id"),
        ("zigzag", "invalid placement 'zigzag'"),
        ("scater", "did you mean 'scatter'"),
        ("lineer", "did you mean 'linear'"),
        ("0x1", "invalid placement"),
        ("1.5", "invalid placement"),
        ("", "invalid placement"),
    ];
    for (p, needle) in cpu_lists {
        v.push(case(
            format!("place {p:?}"),
            &["place", p, "-n", "2"],
            Fail(1, needle),
        ));
    }
    for (p, needle) in [
        ("1-0", "reversed"),
        ("0-4000000000", "4000000000 is above"),
        ("4294967295", "4294967295 is above"),
        ("-1", "negative CPU id"),
        ("4096", "CPU 4096 does not exist"),
        ("scatter,zigzag", "zigzag"),
    ] {
        v.push(case(
            format!("run --placement {p:?}"),
            &["run", "timers", "--quick", "--placement", p, "--out", &o],
            Fail(1, needle),
        ));
    }
    v.push(case(
        "place on a CPU the synthetic machine lacks",
        &[
            "place",
            "99",
            "-n",
            "1",
            "--synthetic",
            "pack:1 core:2 pu:1",
        ],
        Fail(1, "CPU 99 does not exist"),
    ));
    for b in ["0", "-1", "nan", "inf", "abc", "1e400", ""] {
        v.push(case(
            format!("run --budget {b:?}"),
            &["run", "timers", "--quick", "--budget", b, "--out", &o],
            Fail(2, "for '--budget <SECONDS>'"),
        ));
    }
    let d = dir.to_str().unwrap();
    for (out, needle) in [
        ("/nonexistent-dir/r.json", "does not exist"),
        ("/proc/corescope-r.json", "cannot write"),
        (d, "it is a directory"),
        ("/dev/full", "No space left on device"),
    ] {
        v.push(case(
            format!("run --out {out}"),
            &["run", "timers", "--quick", "--no-progress", "--out", out],
            Fail(1, needle),
        ));
    }
    v
}

fn topology_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    for (spec, needle) in [
        ("", "the spec is empty"),
        ("   ", "the spec is empty"),
        ("bogus:3 pu:x", "bogus"),
        ("pack:0 pu:1", "hwloc rejected it"),
        ("pack:-1 pu:2", "hwloc rejected it"),
        ("pu:0", "hwloc rejected it"),
        ("pack:2 core:2 pu:2 extra", "hwloc rejected it"),
        ("\u{1b}[31mred", "hwloc rejected it"),
        (
            "pack:99999999 core:99999 pu:9999",
            "more than the 16384 PUs",
        ),
        (
            "pack:18446744073709551615 pu:2",
            "invalid synthetic topology",
        ),
    ] {
        v.push(case(
            format!("synthetic {spec:?}"),
            &["topo", "--synthetic", spec],
            Fail(1, needle),
        ));
    }
    let long = "pack:2 ".repeat(2000);
    v.push(case(
        "a 14 KB synthetic spec",
        &["topo", "--synthetic", &long],
        Fail(1, "invalid synthetic topology"),
    ));
    v.push(case(
        "synthetic with place and a bad list",
        &[
            "place",
            "0,9",
            "-n",
            "2",
            "--synthetic",
            "pack:1 core:4 pu:1",
        ],
        Fail(1, "CPU 9 does not exist"),
    ));
    v.push(case(
        "synthetic and xml together",
        &["topo", "--synthetic", "pu:2", "--xml", "x.xml"],
        Fail(2, "cannot be used with"),
    ));
    let bomb = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\"><!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\"><!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\"><!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">]><topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" name=\"&g;\"><object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/></object></topology>";
    let mut garbage = vec![0u8; 4096];
    for (i, b) in garbage.iter_mut().enumerate() {
        *b = (i * 7919 % 251) as u8;
    }
    let xmls: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.xml", vec![], "not an hwloc XML topology"),
        ("hello.xml", b"hello".to_vec(), "not an hwloc XML topology"),
        (
            "trunc.xml",
            b"<topology>".to_vec(),
            "not an hwloc XML topology",
        ),
        (
            "html.xml",
            b"<html><body/></html>".to_vec(),
            "not an hwloc XML topology",
        ),
        ("bin.xml", garbage, "not an hwloc XML topology"),
        (
            "bomb.xml",
            bomb.as_bytes().to_vec(),
            "not an hwloc XML topology",
        ),
        (
            "nopu.xml",
            b"<?xml version=\"1.0\"?><topology version=\"2.0\"></topology>".to_vec(),
            "",
        ),
    ];
    for (name, bytes, needle) in xmls {
        let p = raw(dir, name, &bytes);
        v.push(case(
            format!("xml {name}"),
            &["topo", "--xml", &p],
            Fail(1, needle),
        ));
    }
    v.push(case(
        "xml that does not exist",
        &["topo", "--xml", "/nonexistent/t.xml"],
        Fail(1, "No such file"),
    ));
    v.push(case(
        "xml is a directory",
        &["topo", "--xml", dir.to_str().unwrap()],
        Fail(1, "is a directory"),
    ));
    v.push(case(
        "xml from stdin (a device here)",
        &["topo", "--xml", "/proc/self/fd/0"],
        Fail(1, "not a regular file"),
    ));
    let fifo = dir.join("xml.fifo");
    let c_fifo = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o644) }, 0);
    v.push(case(
        "xml from a FIFO (hwlocality panicked on ESPIPE; open waited for a writer)",
        &["topo", "--xml", fifo.to_str().unwrap()],
        Fail(1, "not a regular file"),
    ));
    v.push(case(
        "xml is /dev/null",
        &["topo", "--xml", "/dev/null"],
        Fail(1, "not a regular file"),
    ));
    v.push(case(
        "place with an xml that does not exist",
        &["place", "scatter", "-n", "2", "--xml", "/nonexistent/t.xml"],
        Fail(1, "No such file"),
    ));
    v
}

/// Run files that must be refused by `report` with a message naming the fault.
fn bad_run_file_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let mut files: Vec<(String, String, &str)> = Vec::new();
    let mut add = |what: &str, path: String, needle: &'static str| {
        files.push((what.to_string(), path, needle));
    };
    add(
        "missing",
        dir.join("missing.json").to_string_lossy().into(),
        "missing.json",
    );
    add(
        "a directory",
        dir.to_string_lossy().into(),
        "Is a directory",
    );
    add("empty", raw(dir, "empty.json", b""), "JSON error");
    add(
        "null",
        raw(dir, "null.json", b"null"),
        "top level is not an object",
    );
    add(
        "array",
        raw(dir, "arr.json", b"[]"),
        "top level is not an object",
    );
    add("empty object", raw(dir, "obj.json", b"{}"), "no \"tool\"");
    add(
        "another tool",
        raw(dir, "other.json", b"{\"tool\":{\"name\":\"x\"}}"),
        "no \"tool\"",
    );
    add(
        "truncated",
        raw(
            dir,
            "trunc.json",
            b"{\"schema_version\": 1, \"tool\": {\"name\": \"corescope\"",
        ),
        "JSON error",
    );
    add(
        "binary",
        raw(dir, "bin.json", &[0xff, 0xfe, 0x00, 0x81, 0x7b]),
        "valid UTF-8",
    );
    add(
        "nested 10 000 deep",
        raw(dir, "deep.json", "[".repeat(10_000).as_bytes()),
        "recursion limit",
    );
    add(
        "NaN literal",
        raw(dir, "nan.json", b"{\"schema_version\": NaN}"),
        "JSON error",
    );
    add(
        "schema 999",
        variant(dir, "s999.json", |v| v["schema_version"] = json!(999)),
        "schema version 999",
    );
    add(
        "schema 0",
        variant(dir, "s0.json", |v| v["schema_version"] = json!(0)),
        "schema_version 0",
    );
    add(
        "schema -1",
        variant(dir, "sneg.json", |v| v["schema_version"] = json!(-1)),
        "non-integer \"schema_version\"",
    );
    add(
        "schema as a string",
        variant(dir, "sstr.json", |v| v["schema_version"] = json!("1")),
        "non-integer \"schema_version\"",
    );
    add(
        "schema 1.5",
        variant(dir, "sfrac.json", |v| v["schema_version"] = json!(1.5)),
        "non-integer \"schema_version\"",
    );
    add(
        "no probes field",
        variant(dir, "noprobes.json", |v| {
            v.as_object_mut().unwrap().remove("probes");
        }),
        "missing field `probes`",
    );
    add(
        "unknown status",
        variant(dir, "status.json", |v| {
            v["probes"][0]["status"] = json!("exploded")
        }),
        "unknown variant",
    );
    add(
        "series x longer than y",
        variant(dir, "xy.json", |v| {
            v["probes"][0]["series"][0]["x"]
                .as_array_mut()
                .unwrap()
                .push(json!(99.0))
        }),
        "probe 'compute', series 'int/linear': x has",
    );
    add(
        "series y longer than x",
        variant(dir, "yx.json", |v| {
            v["probes"][0]["series"][1]["y"]
                .as_array_mut()
                .unwrap()
                .push(json!(1.0))
        }),
        "y has",
    );
    add(
        "series with a string value",
        variant(dir, "xstr.json", |v| {
            v["probes"][0]["series"][0]["x"][0] = json!("one")
        }),
        "invalid type",
    );
    add(
        "series value 1e400",
        raw(
            dir,
            "big.json",
            quick_value()
                .to_string()
                .replacen("\"x\":[", "\"x\":[1e400,", 1)
                .as_bytes(),
        ),
        "JSON error",
    );
    add(
        "jagged matrix",
        variant(dir, "jag.json", |v| {
            v["probes"][3]["matrices"][0]["values"][0]
                .as_array_mut()
                .unwrap()
                .pop();
        }),
        "not rectangular",
    );
    add(
        "matrix with a missing row label",
        variant(dir, "rows.json", |v| {
            v["probes"][3]["matrices"][0]["rows"]
                .as_array_mut()
                .unwrap()
                .pop();
        }),
        "row labels",
    );
    add(
        "matrix with an extra column label",
        variant(dir, "cols.json", |v| {
            v["probes"][3]["matrices"][0]["cols"]
                .as_array_mut()
                .unwrap()
                .push(json!("x"));
        }),
        "not rectangular",
    );
    add(
        "histogram edges = counts",
        variant(dir, "edges.json", |v| {
            v["probes"][1]["distributions"][0]["histogram"]["edges"]
                .as_array_mut()
                .unwrap()
                .pop();
        }),
        "probe 'threads', distribution",
    );
    add(
        "histogram edges decreasing",
        variant(dir, "dec.json", |v| {
            let e = v["probes"][1]["distributions"][0]["histogram"]["edges"]
                .as_array_mut()
                .unwrap();
            e.reverse();
        }),
        "histogram edges decrease",
    );
    add(
        "histogram counts without edges",
        variant(dir, "noedges.json", |v| {
            v["probes"][1]["distributions"][0]["histogram"]["edges"] = json!([]);
        }),
        "edges for",
    );
    add(
        "negative histogram count",
        variant(dir, "negcount.json", |v| {
            v["probes"][1]["distributions"][0]["histogram"]["counts"][0] = json!(-1);
        }),
        "invalid value",
    );
    add(
        "table row wider than the columns",
        variant(dir, "table.json", |v| {
            v["probes"][2]["tables"][0]["rows"][0]
                .as_array_mut()
                .unwrap()
                .push(json!("extra"));
        }),
        "row 0 has",
    );
    add(
        "a pair with three values",
        variant(dir, "pair.json", |v| {
            let d = &mut v["probes"][1]["distributions"][0];
            d["pairs"] = json!([[1.0, 2.0, 3.0]]);
        }),
        "invalid length",
    );
    let mut cases: Vec<Case> = files
        .into_iter()
        .map(|(what, path, needle)| {
            case(
                format!("run file: {what}"),
                &["report", &path],
                Fail(1, needle),
            )
        })
        .collect();
    let good = fixture("quick.json").to_string_lossy().into_owned();
    let bad = variant(dir, "xy2.json", |v| {
        v["probes"][0]["series"][0]["y"] = json!([]);
    });
    cases.push(case(
        "compare with one bad file",
        &["compare", &good, &bad],
        Fail(1, "xy2.json"),
    ));
    let s0 = dir.join("s0.json").to_string_lossy().into_owned();
    cases.push(case(
        "compare with schema 0",
        &["compare", &good, &s0],
        Fail(1, "schema_version 0"),
    ));
    cases.push(case(
        "compare --probes naming no probe",
        &["compare", &good, &good, "--probes", "nosuch"],
        Fail(1, "in none of the run files"),
    ));
    cases
}

/// Run files that are valid but hostile: they must render, safely.
/// A further check of a case's stdout and output files.
type After = fn(&str, &Path);

fn hostile_run_file_cases(dir: &Path) -> Vec<(Case, After)> {
    use Expect::*;
    let mut v: Vec<(Case, After)> = Vec::new();
    let none = |_: &str, _: &Path| {};
    let esc = variant(dir, "esc.json", |v| {
        v["host"]["hostname"] = json!("evil\u{1b}]0;pwned\u{7}\u{1b}[2J\r");
        v["probes"][0]["title"] = json!("\u{9b}31m c1 control \u{202e}reversed");
        v["probes"][0]["series"][0]["name"] = json!("int/\u{1b}[31mred");
    });
    v.push((
        case(
            "ESC and BEL in names (terminal)",
            &["report", &esc],
            Ok("evil"),
        ),
        |out, _| {
            assert!(!out.contains('\u{7}') && !out.contains('\u{9b}') && !out.contains('\u{202e}'))
        },
    ));
    v.push((
        case(
            "ESC and BEL in names (compare)",
            &["compare", &esc, &esc],
            Ok("evil"),
        ),
        |out, _| assert!(!out.contains('\u{7}') && !out.contains('\r')),
    ));
    v.push((
        case(
            "ESC and BEL in names (markdown)",
            &["report", &esc, "--markdown"],
            Ok("evil"),
        ),
        |out, _| assert!(!out.contains('\u{7}')),
    ));
    let md = variant(dir, "md.json", |v| {
        v["probes"][0]["title"] = json!("a | b <script>alert(1)</script>\n# heading");
        v["probes"][0]["series"][0]["name"] = json!("int/x|y");
    });
    v.push((
        case(
            "Markdown special characters",
            &["report", &md, "--markdown"],
            Ok("a \\| b &lt;script&gt;"),
        ),
        |out, _| {
            assert!(!out.contains("<script>"));
            assert!(!out.contains("\n# heading"));
            assert!(out.contains("x\\|y"));
        },
    ));
    let csvf = variant(dir, "csv.json", |v| {
        v["probes"][0]["series"][0]["name"] = json!("=HYPERLINK(\"http://x\")");
        v["probes"][0]["series"][1]["name"] = json!("int/a\rb");
        v["probes"][0]["series"][2]["name"] = json!("@SUM(A1)");
        v["probes"][0]["series"][3]["name"] = json!(format!("int/{}", "n".repeat(300)));
        v["probes"][0]["series"][4]["name"] = json!("int/linear");
        v["probes"][0]["series"][5]["name"] = json!("int_linear");
    });
    let csv_dir = dir.join("csvout");
    v.push((
        case(
            "CSV formulas, CR and a 300-byte series name",
            &[
                "report",
                &csvf,
                "--csv",
                csv_dir.to_str().unwrap(),
                "--markdown",
            ],
            Ok(""),
        ),
        |_, dir| {
            let s = std::fs::read_to_string(dir.join("csvout/series.csv")).unwrap();
            assert!(
                s.contains("\"'=HYPERLINK(\"\"http://x\"\")\""),
                "formula kept"
            );
            assert!(s.contains("'@SUM(A1)"));
            assert!(s.contains("\"int/a\rb\""), "CR not quoted");
            assert!(s.contains(&"n".repeat(300)), "long names kept whole in CSV");
            let n = std::fs::read_dir(dir.join("csvout")).unwrap().count();
            assert!(n >= 22, "a file per series, collisions renamed: {n}");
        },
    ));
    let huge_host = variant(dir, "host1m.json", |v| {
        v["host"]["hostname"] = json!("h".repeat(1 << 20));
    });
    v.push((
        case(
            "1 MB host name (terminal)",
            &["report", &huge_host],
            Ok("hhh…"),
        ),
        |out, _| assert!(out.len() < 200_000, "{} bytes", out.len()),
    ));
    let html_out = dir.join("huge.html");
    v.push((
        case(
            "1 MB host name (compare --html)",
            &[
                "compare",
                &huge_host,
                &huge_host,
                "--html",
                html_out.to_str().unwrap(),
            ],
            Ok("hhh…"),
        ),
        |_, dir| {
            let n = std::fs::metadata(dir.join("huge.html")).unwrap().len();
            assert!(n < 2_000_000, "comparison of {n} bytes");
        },
    ));
    let extreme = variant(dir, "extreme.json", |v| {
        v["probes"][0]["series"][0]["y"] =
            json!([1e308, -1e308, 5e-324, 0.0, 1e308, -1e308, 1.0, 2.0]);
        v["probes"][0]["series"][0]["x"] = json!([1e308, -1e308, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        v["probes"][1]["distributions"][0]["histogram"] =
            json!({"edges": [-1e308, 0.0, 1e308], "counts": [1, 2], "log": false});
        v["probes"][1]["distributions"][0]["pairs"] = json!([[1e308, -1e308], [0.0, 1e308]]);
        v["probes"][3]["matrices"][0]["values"][0][0] = json!(1e308);
        v["probes"][3]["matrices"][0]["values"][1][1] = json!(-1e308);
    });
    let ex_html = dir.join("extreme.html");
    v.push((
        case(
            "values of ±1e308 (HTML)",
            &[
                "report",
                &extreme,
                "--html",
                ex_html.to_str().unwrap(),
                "--markdown",
            ],
            Ok(""),
        ),
        |_, dir| {
            let page = std::fs::read_to_string(dir.join("extreme.html")).unwrap();
            assert!(
                !page.contains("NaN") && !page.contains("inf"),
                "non-finite coordinate"
            );
        },
    ));
    v.push((
        case(
            "values of ±1e308 (terminal)",
            &["report", &extreme],
            Ok("compute"),
        ),
        none,
    ));
    v.push((
        case(
            "values of ±1e308 (compare)",
            &["compare", &extreme, &extreme],
            Ok("compute"),
        ),
        none,
    ));
    let dup = variant(dir, "dup.json", |v| {
        v["probes"][0]["series"][0]["x"] = json!([1.0, 1.0, -0.0, 0.0]);
        v["probes"][0]["series"][0]["y"] = json!([1.0, 2.0, 3.0, 4.0]);
    });
    v.push((
        case(
            "repeated and signed-zero x",
            &["report", &dup],
            Ok("compute"),
        ),
        none,
    ));
    let empty = variant(dir, "noprobe.json", |v| v["probes"] = json!([]));
    v.push((
        case("no probes at all", &["report", &empty], Ok("corescope")),
        none,
    ));
    let statuses = variant(dir, "int.json", |v| {
        v["probes"][0]["status"] = json!("interrupted");
        v["probes"][0]["reason"] = json!("SIGINT after 3 of 9 cases");
    });
    v.push((
        case(
            "an interrupted probe",
            &["report", &statuses],
            Ok("interrupted: SIGINT"),
        ),
        none,
    ));
    let extra = variant(dir, "extra.json", |v| {
        v["future_field"] = json!({"a": 1});
        v["probes"][0]["future"] = json!([1, 2]);
    });
    v.push((
        case(
            "unknown fields from a newer minor version",
            &["report", &extra],
            Ok("compute"),
        ),
        none,
    ));
    let empty_shapes = variant(dir, "emptyshapes.json", |v| {
        v["probes"][0]["series"] =
            json!([{"name": "", "x_name": "", "x": [], "y_name": "", "y": []}]);
        v["probes"][3]["matrices"] =
            json!([{"name": "m", "unit": "ns", "rows": [], "cols": [], "values": []}]);
        v["probes"][1]["distributions"][0]["histogram"] =
            json!({"edges": [], "counts": [], "log": true});
        v["probes"][4]["timelines"] =
            json!([{"name": "t", "lanes": [{"label": "l", "spans": []}]}]);
        v["probes"][2]["tables"] = json!([{"name": "t", "columns": [], "rows": [[]]}]);
    });
    let es_html = dir.join("es.html");
    v.push((
        case(
            "empty series, matrix, histogram, timeline, table",
            &[
                "report",
                &empty_shapes,
                "--html",
                es_html.to_str().unwrap(),
                "--markdown",
            ],
            Ok(""),
        ),
        none,
    ));
    v.push((
        case(
            "empty shapes (terminal)",
            &["report", &empty_shapes],
            Ok("compute"),
        ),
        none,
    ));
    let many = variant(dir, "many.json", |v| {
        let n = 100_000;
        let x: Vec<f64> = (0..n).map(f64::from).collect();
        let y: Vec<f64> = (0..n).map(|i| f64::from(i).sin()).collect();
        v["probes"][0]["series"][0]["x"] = json!(x);
        v["probes"][0]["series"][0]["y"] = json!(y);
    });
    let many_html = dir.join("many.html");
    v.push((
        case(
            "a 100k-point series (HTML, was quadratic)",
            &[
                "report",
                &many,
                "--html",
                many_html.to_str().unwrap(),
                "--markdown",
            ],
            Ok(""),
        ),
        |_, dir| {
            let page = std::fs::read_to_string(dir.join("many.html")).unwrap();
            assert!(page.matches("<circle").count() <= 4 * svg::MAX_LINE_POINTS);
        },
    ));
    v.push((
        case(
            "a 100k-point series (compare)",
            &["compare", &many, &many],
            Ok("compute"),
        ),
        none,
    ));
    v
}

/// Output targets: devices, FIFOs, symlinks, full disks, closed pipes.
fn output_cases(dir: &Path) -> usize {
    use std::os::unix::fs::FileTypeExt;
    let run = fixture("quick.json").to_string_lossy().into_owned();
    let mut n = 0;
    let ok = |args: &[&str]| {
        let out = corescope().current_dir(dir).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            stderr,
        )
    };

    // A character device (as root: mknod t c 1 3, i.e. /dev/null) stays a device.
    let dev = dir.join("t");
    let c_dev = std::ffi::CString::new(dev.to_str().unwrap()).unwrap();
    // SAFETY: mknod with a valid NUL-terminated path; it only creates a node.
    let made =
        unsafe { libc::mknod(c_dev.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 3)) } == 0;
    let target = if made {
        dev.clone()
    } else {
        PathBuf::from("/dev/null")
    };
    let (code, _, err) = ok(&["report", &run, "--html", target.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        std::fs::symlink_metadata(&target)
            .unwrap()
            .file_type()
            .is_char_device(),
        "device replaced"
    );
    n += 1;
    let (code, _, err) = ok(&[
        "report",
        &run,
        "--csv",
        dir.join("c").to_str().unwrap(),
        "--html",
        "/dev/null",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    n += 1;

    // /dev/stdout and /proc/self/fd/1: the report arrives on stdout.
    for t in ["/dev/stdout", "/proc/self/fd/1"] {
        let (code, out, err) = ok(&["report", &run, "--html", t]);
        assert_eq!(code, Some(0), "{t}: {err}");
        assert!(out.contains("<!DOCTYPE html>"), "{t}");
        n += 1;
    }

    // A FIFO with a reader gets the report; it stays a FIFO.
    let fifo = dir.join("fifo");
    let c_fifo = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            s
        })
    };
    let (code, _, err) = ok(&["report", &run, "--html", fifo.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(reader.join().unwrap().starts_with("<!DOCTYPE html>"));
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    n += 1;

    // A symlink stays a symlink; its target gets the report.
    let real = dir.join("real.html");
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("link.html");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, _, err) = ok(&["report", &run, "--html", link.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    n += 1;

    // A full disk: one line, status 1.
    let (code, _, err) = ok(&["report", &run, "--html", "/dev/full"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("No space left on device") && err.trim().lines().count() == 1,
        "{err}"
    );
    n += 1;
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"))
        .args(["report", &run])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("writing to stdout: No space left on device"),
        "{err}"
    );
    n += 1;

    // Other bad targets.
    for (args, needle) in [
        (
            vec!["report", &run, "--html", "/nonexistent/r.html"],
            "No such file",
        ),
        (
            vec!["report", &run, "--html", dir.to_str().unwrap()],
            "Is a directory",
        ),
        (
            vec!["report", &run, "--csv", real.to_str().unwrap()],
            "writing CSV files",
        ),
    ] {
        let (code, _, err) = ok(&args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        n += 1;
    }

    // A pipe whose reader has gone before the first write: quiet, status 141.
    // (The reader is closed before the child starts, so a small output cannot
    // slip into the pipe's buffer first.)
    for args in [
        vec!["compare", &run, &run],
        vec!["report", &run],
        vec!["report", &run, "--markdown"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"))
            .args(&args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
        n += 1;
    }

    // A run to /dev/null: the device stays, no HTML is made next to it.
    let (code, out, err) = ok(&[
        "run",
        "timers",
        "--quick",
        "--no-progress",
        "--out",
        "/dev/null",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("not a regular file"), "{out}");
    assert!(std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    n += 1;
    n
}

/// A run in the background whose run file exists (the signal handlers are in).
fn background_run(dir: &Path, name: &str) -> (std::process::Child, PathBuf) {
    let out = dir.join(name);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"))
        .current_dir(dir)
        .args([
            "run", "timers", "timers", "timers", "timers", "timers", "timers", "timers", "timers",
        ])
        .args(["--quick", "--no-progress", "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !out.exists() {
        assert!(t0.elapsed() < TIMEOUT, "run file never appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, out)
}

fn signal_cases(dir: &Path) -> usize {
    let mut n = 0;
    for (sig, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let (child, out) = background_run(dir, &format!("sig{sig}.json"));
        // A second run with the same --out refuses while the first holds the lock.
        let second = corescope()
            .current_dir(dir)
            .args([
                "run",
                "timers",
                "--quick",
                "--no-progress",
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&second.stderr);
        assert_eq!(second.status.code(), Some(1), "{err}");
        assert!(
            err.contains("being written by another corescope run"),
            "{err}"
        );
        n += 1;
        let pid = i32::try_from(child.id()).unwrap();
        // SAFETY: kill() to a child this test spawned and has not reaped yet.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let result = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(code), "{err}");
        assert!(err.contains("stopped by SIG"), "{err}");
        let run = store::load(&out).expect("the run file is valid after a signal");
        let last = run.probes.last().expect("a probe was recorded");
        assert_eq!(last.status, corescope::model::Status::Interrupted);
        assert!(out.with_extension("html").exists(), "the HTML was written");
        assert!(
            !dir.join(format!(".sig{sig}.json.lock")).exists(),
            "lock file removed"
        );
        n += 1;
    }
    n
}

/// A Markdown row: what, the command line (temporary paths shortened), outcome.
fn table_row(dir: &Path, c: &Case) -> String {
    let d = dir.to_string_lossy();
    let fixtures = fixture("");
    let fx = fixtures.to_string_lossy();
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| {
            let a = a.replace(fx.as_ref(), "").replace(d.as_ref(), "TMP");
            let a = corescope::render::clean(&a, 40, false);
            if a.is_empty() || a.contains(' ') {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect();
    let cmd = args.join(" ").replace('|', "\\|").replace('`', "'");
    let outcome = match c.expect {
        Expect::Fail(code, needle) => {
            format!("exit {code}: “{}”", corescope::render::md(needle))
        }
        Expect::Ok(_) => "exit 0, rendered safely".to_string(),
    };
    format!(
        "| {} | `{cmd}` | {outcome} |",
        corescope::render::md(&c.what)
    )
}

#[test]
fn hostile_inputs_have_their_expected_outcomes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut count = 0;
    let mut table: Vec<Case> = Vec::new();
    table.extend(command_line_cases());
    table.extend(option_cases(dir));
    table.extend(topology_cases(dir));
    table.extend(bad_run_file_cases(dir));
    let mut rows: Vec<String> = Vec::new();
    for c in &table {
        check(dir, c);
        rows.push(table_row(dir, c));
        count += 1;
    }
    assert!(
        !dir.join("never.json").exists(),
        "a refused run left a file"
    );
    for (c, extra) in hostile_run_file_cases(dir) {
        let out = check(dir, &c);
        extra(&out, dir);
        rows.push(table_row(dir, &c));
        count += 1;
    }
    // `HOSTILE_TABLE=FILE cargo test --test hostile` writes the table that
    // docs/safety.md quotes.
    if let Some(path) = std::env::var_os("HOSTILE_TABLE") {
        std::fs::write(path, rows.join("\n") + "\n").unwrap();
    }
    count += output_cases(dir);
    count += signal_cases(dir);
    eprintln!("{count} hostile inputs checked");
    assert!(count >= 120, "only {count} cases");
}

#[test]
fn repeated_placement_lists_give_one_series_each() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r.json");
    corescope()
        .args([
            "run",
            "compute",
            "--quick",
            "--no-progress",
            "--no-html",
            "--threads",
            "1",
        ])
        .args(["--placement", "0", "--placement", "1", "--budget", "5"])
        .args(["--out", out.to_str().unwrap()])
        .assert()
        .success();
    let run = store::load(&out).unwrap();
    let names: Vec<&str> = run.probes[0]
        .series
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        names.contains(&"int/list:0") && names.contains(&"int/list:1"),
        "{names:?}"
    );
}

/// A 2 M-point series renders with a bounded chart: the SVG draws at most
/// `MAX_LINE_POINTS` points while the table keeps every value.
#[test]
fn two_million_points_render_bounded() {
    let mut run: RunFile = store::load(&fixture("quick.json")).unwrap();
    let n = 2_000_000;
    let s = &mut run.probes[0].series[0];
    s.x = (0..n).map(f64::from).collect();
    s.y = (0..n).map(|i| f64::from(i % 1000)).collect();
    store::validate(&run).unwrap();
    let page = html::render_run(&run);
    let section = &page[page.find("<section id='compute'>").unwrap()..];
    let chart = &section[section.find("<svg").unwrap()..];
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert!(chart.matches("<circle").count() <= svg::MAX_LINE_POINTS);
    assert!(chart.contains("points thinned for drawing"));
    assert!(page.len() < 400_000_000);
    let csv_text = csv::series_csv(&run);
    assert!(
        csv_text.lines().count() > n as usize,
        "CSV keeps every value"
    );
    let md = html::markdown(&run);
    assert!(
        md.lines().count() < MAX_TABLE_ROWS + 200,
        "the Markdown table is cut"
    );
    assert!(md.contains("… 1,999,000 more rows (1,000 of 2,000,000 shown)"));
}

/// A way to show a run: its name, whether it is HTML, and the renderer.
type View<'a> = (&'a str, bool, &'a dyn Fn(&RunFile) -> String);

/// Class 9: a table or a series of more rows than `MAX_TABLE_ROWS` is shown
/// cut in the terminal, the HTML report, Markdown and `compare`, with a line
/// saying how many rows were left out; the CSV keeps every row. What is shown
/// does not grow with the rows past the cap.
#[test]
fn class9_big_tables_are_shown_cut_and_counted() {
    let with_rows = |n: usize| -> RunFile {
        let mut run: RunFile = store::load(&fixture("quick.json")).unwrap();
        for p in &mut run.probes {
            if let Some(s) = p.series.first_mut() {
                s.x = (0..n).map(|i| i as f64).collect();
                s.y = (0..n).map(|i| (i % 97) as f64 + 1.0).collect();
            }
            if let Some(t) = p.tables.first_mut() {
                t.rows = (0..n)
                    .map(|i| {
                        vec![
                            json!(format!("row {i}")),
                            json!(i % 7),
                            json!(1.5),
                            json!("yes"),
                        ]
                    })
                    .collect();
            }
        }
        store::validate(&run).unwrap();
        run
    };
    let cap = MAX_TABLE_ROWS;
    let small = with_rows(cap + 1);
    let big = with_rows(20 * cap);
    let one_more = "… 1 more row (1,000 of 1,001 shown); the CSV export (--csv DIR) has every row";
    let many_more = "… 19,000 more rows (1,000 of 20,000 shown)";
    let pair = |r: &RunFile| [r.clone(), r.clone()];
    // (what, is it HTML, how it renders)
    let views: [View; 5] = [
        ("terminal", false, &terminal::render_run),
        ("HTML", true, &html::render_run),
        ("Markdown", false, &html::markdown),
        ("compare", false, &|r| compare::render_text(&pair(r), None)),
        ("compare --html", true, &|r| {
            compare::render_html(&pair(r), None)
        }),
    ];
    for (what, is_html, render) in views {
        let (a, b) = (render(&small), render(&big));
        // Series tables everywhere; free tables everywhere but in Markdown.
        let tables = if what == "Markdown" { 1 } else { 2 };
        // The series is in two probes (compute, false-sharing): each says so.
        assert!(a.matches(one_more).count() >= tables, "{what}: {a}");
        assert!(b.matches(many_more).count() >= tables, "{what}");
        assert!(
            !a.contains("row 1000"),
            "{what}: the row past the cap is shown"
        );
        // The rows shown do not grow with the rows past the cap (charts thin
        // to their own bound).
        let rows = |t: &str| {
            if is_html {
                t.matches("<tr").count()
            } else {
                t.lines().count()
            }
        };
        assert_eq!(rows(&a), rows(&b), "{what}: more rows shown past the cap");
    }
    assert_eq!(
        csv::series_csv(&big)
            .matches(",compute,int/linear,")
            .count(),
        20 * cap,
        "the CSV keeps every point"
    );
    // From the command line too.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("big.json");
    std::fs::write(&file, serde_json::to_vec(&small).unwrap()).unwrap();
    let c = case(
        "a table one row over the cap",
        &["report", s(&file)],
        Expect::Ok(one_more),
    );
    check(tmp.path(), &c);
}

fn arb_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1e308),
        Just(-1e308),
        Just(5e-324),
        -1e6..1e6f64,
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
    ]
}

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/_]{0,12}",
        "[\\x00-\\x1f\\x7f<>&|=+@\"',\\r\\n]{0,8}",
        Just("int/linear".to_string()),
        Just("\u{202e}\u{9b}x".to_string()),
    ]
}

/// Arbitrary (often inconsistent) probes as JSON.
fn arb_probe() -> impl Strategy<Value = Value> {
    let series = (arb_text(), prop::collection::vec(arb_f64(), 0..6), prop::collection::vec(arb_f64(), 0..6), arb_text())
        .prop_map(|(name, x, y, unit)| json!({"name": name, "x_name": unit, "x": x, "y_name": unit, "y": y}));
    let hist = (
        prop::collection::vec(arb_f64(), 0..5),
        prop::collection::vec(0u64..1000, 0..5),
        any::<bool>(),
    )
        .prop_map(|(edges, counts, log)| json!({"edges": edges, "counts": counts, "log": log}));
    let dist = (arb_text(), hist, prop::collection::vec((arb_f64(), arb_f64()), 0..5), arb_f64())
        .prop_map(|(name, histogram, pairs, v)| {
            let pairs: Vec<[f64; 2]> = pairs.into_iter().map(|(a, b)| [a, b]).collect();
            json!({"name": name, "unit": "ns", "summary": {"count": 3, "min": v, "p50": v, "p90": v, "p99": v, "p999": v, "max": v, "mean": v, "stddev": 0.0},
                   "histogram": histogram, "pairs": pairs, "paired_with": "b",
                   "mode_range": {"fraction": 0.8, "low": v, "high": v}})
        });
    let matrix = (
        prop::collection::vec(arb_text(), 0..4),
        prop::collection::vec(arb_text(), 0..4),
        prop::collection::vec(prop::collection::vec(prop::option::of(arb_f64()), 0..4), 0..4),
    )
        .prop_map(|(rows, cols, values)| json!({"name": "m", "unit": "ns", "rows": rows, "cols": cols, "values": values}));
    let timeline = prop::collection::vec((arb_f64(), arb_f64()), 0..5).prop_map(|spans| {
        let spans: Vec<Value> = spans
            .into_iter()
            .map(|(a, b)| json!({"start_ns": a, "end_ns": b, "kind": "work"}))
            .collect();
        json!({"name": "t", "lanes": [{"label": "l", "spans": spans}]})
    });
    let table = (
        prop::collection::vec(arb_text(), 0..3),
        prop::collection::vec(prop::collection::vec(arb_text(), 0..4), 0..3),
    )
        .prop_map(|(columns, rows)| json!({"name": "t", "columns": columns, "rows": rows}));
    let status = prop_oneof![
        Just("completed"),
        Just("gave_up"),
        Just("skipped"),
        Just("failed"),
        Just("interrupted")
    ];
    (
        arb_text(),
        status,
        prop::collection::vec(series, 0..4),
        prop::collection::vec(dist, 0..3),
        prop::collection::vec(matrix, 0..2),
        prop::collection::vec(timeline, 0..2),
        prop::collection::vec(table, 0..2),
        prop::collection::vec(arb_text(), 0..2),
    )
        .prop_map(|(id, status, series, distributions, matrices, timelines, tables, notes)| {
            json!({"id": id, "title": notes.first().cloned().unwrap_or_default(), "status": status,
                   "reason": notes.last(), "params": {"k": notes}, "series": series,
                   "distributions": distributions, "matrices": matrices, "timelines": timelines,
                   "tables": tables, "warnings": notes, "findings": notes})
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The loader and every renderer on arbitrary run files: no panic, ever;
    /// no NaN or infinity in an SVG coordinate; no control byte on the terminal.
    #[test]
    fn arbitrary_run_files_never_panic(probes in prop::collection::vec(arb_probe(), 0..4),
                                       host in arb_text(), version in 0u64..3) {
        let mut v = quick_value();
        v["probes"] = Value::Array(probes);
        v["host"]["hostname"] = json!(host);
        v["schema_version"] = json!(version);
        let text = v.to_string();
        let Ok(run) = store::parse(&text, Path::new("p.json")) else {
            return Ok(());
        };
        let term = terminal::render_run(&run);
        prop_assert!(!term.chars().any(|c| c.is_control() && c != '\n'), "control char in terminal output");
        let page = html::render_run(&run);
        prop_assert!(!page.contains("NaN") && !page.contains("inf'"));
        let _ = html::markdown(&run);
        for f in [csv::series_csv, csv::distributions_csv, csv::histograms_csv, csv::pairs_csv,
                  csv::matrices_csv, csv::timelines_csv] {
            let _ = f(&run);
        }
        let runs = vec![run.clone(), run];
        let text = compare::render_text(&runs, None);
        prop_assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
        let _ = compare::render_html(&runs, None);
        let tmp = tempfile::tempdir().unwrap();
        prop_assert!(csv::write_dir(&runs[0], tmp.path(), &|p, f| store::write_atomic_with(p, f)).is_ok());
    }
}

// ---------------------------------------------------------------------------
// Round two (issue 43). Each group below breaks one fix; every case checks the
// exit status, one clear line on stderr, no panic, and what must be left alone.

/// Run corescope in `dir`; (status, stdout, stderr), with the common checks:
/// no panic, no hang, at most one line on stderr when it fails.
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let started = Instant::now();
    let out = corescope()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: could not run: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(started.elapsed() < TIMEOUT, "{args:?}: hung");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{args:?}: panicked: {stderr}"
    );
    if out.status.code() == Some(1) {
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    }
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
    )
}

/// Expect exit 1 with `needle` in the one line on stderr.
fn refused(dir: &Path, args: &[&str], needle: &str) {
    let (code, _, err) = run_in(dir, args);
    assert_eq!(code, Some(1), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}': {err}");
}

/// A regular file's bytes and inode, to see that it was left alone.
fn snapshot(p: &Path) -> (Vec<u8>, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).unwrap();
    (std::fs::read(p).unwrap(), m.ino())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Class 1: an output that is an input, however it is spelt, is refused
/// before anything is written; the input keeps its bytes and its inode.
fn alias_cases(dir: &Path) -> usize {
    let quick = std::fs::read(fixture("quick.json")).unwrap();
    let d = dir.join("alias");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let a = d.join("a.json");
    let b = d.join("b.json");
    std::fs::write(&a, &quick).unwrap();
    std::fs::write(&b, &quick).unwrap();
    let link = d.join("link.html");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let rel_link = d.join("rel-link.html");
    std::os::unix::fs::symlink("b.json", &rel_link).unwrap();
    let hard = d.join("hard.html");
    std::fs::hard_link(&a, &hard).unwrap();
    let chain = d.join("chain.html");
    std::os::unix::fs::symlink(&link, &chain).unwrap();
    let dotdot = d.join("sub/../a.json");
    let dotted = d.join("./sub/.././a.json");
    let in_link = d.join("in-link.json");
    std::os::unix::fs::symlink(&a, &in_link).unwrap();
    // Input names the CSV export writes: an overview file and a per-series file.
    let csvdir = d.join("csv");
    std::fs::create_dir_all(&csvdir).unwrap();
    let named: Vec<PathBuf> = [
        "series.csv",
        "samples.csv",
        "timelines.csv",
        "compute--int_linear.csv",
        "timers--table-timers.csv",
    ]
    .iter()
    .map(|n| {
        let p = csvdir.join(n);
        std::fs::write(&p, &quick).unwrap();
        p
    })
    .collect();
    let before: Vec<(PathBuf, (Vec<u8>, u64))> = [&a, &b]
        .into_iter()
        .chain(&named)
        .map(|p| (p.clone(), snapshot(p)))
        .collect();

    let want = "nothing was written";
    let mut cases: Vec<(Vec<String>, &str)> = Vec::new();
    let mut add = |args: &[&str], needle: &'static str| {
        cases.push((args.iter().map(|x| x.to_string()).collect(), needle));
    };
    let (a_, b_) = (s(&a), s(&b));
    // report: --html as the input, spelt every way.
    add(&["report", a_, "--html", a_], want);
    add(&["report", a_, "--html", "alias/a.json"], want);
    add(&["report", "alias/a.json", "--html", a_], want);
    add(&["report", a_, "--html", s(&dotdot)], want);
    add(&["report", a_, "--html", s(&dotted)], want);
    add(&["report", a_, "--html", s(&link)], want);
    add(&["report", a_, "--html", s(&chain)], want);
    add(&["report", a_, "--html", s(&hard)], want);
    add(&["report", s(&in_link), "--html", a_], want);
    add(&["report", s(&in_link), "--html", s(&hard)], want);
    add(&["report", b_, "--html", s(&rel_link)], want);
    add(&["report", a_, "--html", a_, "--markdown"], want);
    // report: --csv as the input, or writing a file that is the input.
    add(&["report", a_, "--csv", a_], want);
    add(&["report", a_, "--csv", s(&hard)], want);
    for p in &named {
        add(&["report", s(p), "--csv", s(&csvdir)], want);
    }
    add(&["report", s(&named[0]), "--csv", "alias/csv/../csv"], want);
    // report: two outputs that are one file.
    add(
        &[
            "report",
            a_,
            "--csv",
            s(&csvdir),
            "--html",
            s(&csvdir.join("series.csv")),
        ],
        want,
    );
    // compare: --html as either input.
    add(&["compare", a_, b_, "--html", a_], want);
    add(&["compare", a_, b_, "--html", b_], want);
    add(&["compare", a_, b_, "--html", s(&link)], want);
    add(&["compare", a_, b_, "--html", s(&rel_link)], want);
    add(&["compare", a_, b_, "--html", s(&hard)], want);
    add(&["compare", a_, a_, "--html", a_], want);
    add(&["compare", a_, b_, a_, "--html", s(&dotdot)], want);
    // tune: an --against file or two outputs as one (refused before measuring).
    add(&["tune", "channel", "--against", a_, "--out", a_], want);
    add(
        &["tune", "channel", "--against", a_, "--out", s(&link)],
        want,
    );
    add(
        &["tune", "channel", "--against", a_, "--run-file", s(&hard)],
        want,
    );
    add(
        &[
            "tune",
            "channel",
            "--out",
            "alias/t.json",
            "--run-file",
            "alias/t.json",
        ],
        want,
    );
    add(
        &[
            "tune",
            "channel",
            "--out",
            "alias/t.json",
            "--run-file",
            "alias/sub/../t.json",
        ],
        want,
    );
    let n = cases.len();
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(dir, &args, needle);
    }
    for (p, snap) in &before {
        assert_eq!(&snapshot(p), snap, "{} was changed", p.display());
    }
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!d.join("t.json").exists(), "tune wrote its output");

    // run: the HTML beside --out is a link to the run file itself.
    let r = d.join("r.json");
    std::os::unix::fs::symlink("r.json", d.join("r.html")).unwrap();
    refused(
        dir,
        &["run", "timers", "--quick", "--no-progress", "--out", s(&r)],
        want,
    );
    assert!(!r.exists(), "a refused run wrote its run file");
    std::fs::write(&r, &quick).unwrap();
    let snap = snapshot(&r);
    refused(
        dir,
        &["run", "timers", "--quick", "--no-progress", "--out", s(&r)],
        want,
    );
    assert_eq!(snapshot(&r), snap);

    // What is not an alias still works: a CSV directory that holds the input
    // under another name, and an HTML beside the inputs.
    let (code, _, err) = run_in(dir, &["report", a_, "--csv", s(&d)]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = run_in(dir, &["compare", a_, b_, "--html", s(&d.join("c.html"))]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(snapshot(&a), before[0].1);
    n + 4
}

#[test]
fn class1_outputs_never_alias_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let n = alias_cases(tmp.path());
    eprintln!("{n} alias cases checked");
}

/// How a test spells a path to one file.
#[derive(Debug, Clone)]
enum Spelling {
    Plain,
    DotSlash,
    DotDot,
    Link,
    LinkToLink,
    HardLink,
    Relative,
}

fn spell(dir: &Path, file: &Path, how: &Spelling, k: usize) -> PathBuf {
    let name = file.file_name().unwrap();
    match how {
        Spelling::Plain => file.to_path_buf(),
        Spelling::DotSlash => dir.join(".").join(name),
        Spelling::DotDot => dir.join("sub").join("..").join(name),
        Spelling::Link => {
            let l = dir.join(format!("l{k}"));
            let _ = std::os::unix::fs::symlink(file, &l);
            l
        }
        Spelling::LinkToLink => {
            let l = dir.join(format!("l{k}"));
            let ll = dir.join(format!("ll{k}"));
            let _ = std::os::unix::fs::symlink(file, &l);
            let _ = std::os::unix::fs::symlink(&l, &ll);
            ll
        }
        Spelling::HardLink => {
            let h = dir.join(format!("h{k}"));
            let _ = std::fs::hard_link(file, &h);
            h
        }
        Spelling::Relative => {
            // Relative to a directory that is not the working directory: made
            // absolute through the symlinked directory `alias-dir`.
            let l = dir.join(format!("dirlink{k}"));
            let _ = std::os::unix::fs::symlink(dir, &l);
            l.join(name)
        }
    }
}

fn arb_spelling() -> impl Strategy<Value = Spelling> {
    prop_oneof![
        Just(Spelling::Plain),
        Just(Spelling::DotSlash),
        Just(Spelling::DotDot),
        Just(Spelling::Link),
        Just(Spelling::LinkToLink),
        Just(Spelling::HardLink),
        Just(Spelling::Relative),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// However an input and an output are spelt, the output is refused when it
    /// is the input, and accepted when it is another file.
    #[test]
    fn an_output_never_aliases_an_input(input_how in arb_spelling(), output_how in arb_spelling(),
                                        same in any::<bool>(), exists in any::<bool>()) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let input = dir.join("in.json");
        std::fs::write(&input, "{}").unwrap();
        let other = dir.join("other.html");
        if exists {
            std::fs::write(&other, "x").unwrap();
        }
        let i = spell(dir, &input, &input_how, 1);
        let target = if same { &input } else { &other };
        // A hard link to a file not there yet cannot be made: spell it plainly.
        let how = match (&output_how, target.exists()) {
            (Spelling::HardLink, false) => Spelling::Plain,
            (h, _) => h.clone(),
        };
        let o = spell(dir, target, &how, 2);
        let r = store::refuse_aliases(&[("the input", &i)], &[("--html", &o)]);
        prop_assert_eq!(r.is_err(), same, "{:?} {:?} {:?}", i, o, r);
        // Two outputs that are one file are refused too.
        let r = store::refuse_aliases(&[], &[("--out", &o), ("--run-file", target)]);
        prop_assert!(r.is_err(), "{:?}", o);
    }
}

/// Class 2: temporary, probe and lock files are created exclusively, never
/// through a planted link, with names nobody can guess; a lock left by a dead
/// run is taken over.
#[test]
fn class2_temp_and_lock_files_never_follow_links() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let victim = dir.join("victim.txt");
    let keep = b"precious".to_vec();
    std::fs::write(&victim, &keep).unwrap();
    let pid = std::process::id();
    let mut n = 0;

    // The names the old code built from the process id, planted as links to
    // the victim: the atomic write and the writability check go elsewhere.
    let out = dir.join("x.json");
    for planted in [
        format!(".x.json.tmp.{pid}"),
        format!(".corescope-write-test.{pid}"),
        ".x.json.tmp".to_string(),
    ] {
        std::os::unix::fs::symlink(&victim, dir.join(&planted)).unwrap();
    }
    store::write_atomic(&out, b"new").unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"new");
    n += 1;
    store::write_output(&out, b"again").unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"again");
    n += 1;
    store::check_writable(&out).unwrap();
    store::check_writable(&dir.join("new.json")).unwrap();
    n += 2;
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        keep,
        "a planted link was followed"
    );
    // Nothing left behind but the output and what was planted.
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "{names:?}");
    n += 1;
    // A new file gets the usual mode (0666 less the umask), not a temp file's 0600.
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_ne!(mode & 0o077, 0, "mode {mode:o}: others lost access");
    n += 1;
    // Many writes: each temporary name is new (nothing collides or lingers).
    for i in 0..50 {
        store::write_atomic(&out, format!("{i}").as_bytes()).unwrap();
    }
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 5);
    n += 1;
    // A directory nobody may write: the error names the path, nothing is left.
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let writable_as_root = std::fs::write(ro.join("probe"), b"").is_ok();
    let _ = std::fs::remove_file(ro.join("probe"));
    if !writable_as_root {
        assert!(store::write_atomic(&ro.join("r.json"), b"x").is_err());
        assert!(store::check_writable(&ro.join("r.json")).is_err());
        assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
        n += 1;
    }

    // Lock files: a planted link, FIFO or directory is refused in one line; the
    // victim is untouched and no run file is made.
    let run_args = |name: &str| -> Vec<String> {
        [
            "run",
            "timers",
            "--quick",
            "--no-progress",
            "--no-html",
            "--out",
            name,
        ]
        .iter()
        .map(|x| x.to_string())
        .collect()
    };
    let lock_of = |name: &str| dir.join(format!(".{name}.lock"));
    std::os::unix::fs::symlink(&victim, lock_of("a.json")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), lock_of("b.json")).unwrap();
    let c_fifo = std::ffi::CString::new(lock_of("c.json").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o644) }, 0);
    std::fs::create_dir(lock_of("d.json")).unwrap();
    for (name, needle) in [
        ("a.json", "symbolic link"),
        ("b.json", "symbolic link"),
        ("c.json", "lock"),
        ("d.json", "lock"),
    ] {
        let args = run_args(name);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(dir, &args, needle);
        assert!(!dir.join(name).exists(), "{name}: a refused run wrote");
        n += 1;
    }
    assert_eq!(std::fs::read(&victim).unwrap(), keep);
    assert!(
        !dir.join("nowhere").exists(),
        "a dangling lock link was created"
    );
    assert!(std::fs::symlink_metadata(lock_of("c.json"))
        .unwrap()
        .file_type()
        .is_fifo());

    // A lock file left behind (as by a run killed with SIGKILL) is taken over.
    std::fs::write(lock_of("e.json"), b"").unwrap();
    let args = run_args("e.json");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = run_in(dir, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(!lock_of("e.json").exists(), "lock file not removed");
    n += 1;
    let (child, out) = background_run(dir, "killed.json");
    let t0 = Instant::now();
    while !lock_of("killed.json").exists() {
        assert!(t0.elapsed() < TIMEOUT, "no lock file");
        std::thread::sleep(Duration::from_millis(5));
    }
    let cpid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill() to a child this test spawned and has not reaped yet.
    assert_eq!(unsafe { libc::kill(cpid, libc::SIGKILL) }, 0);
    let _ = child.wait_with_output().unwrap();
    assert!(
        lock_of("killed.json").exists(),
        "SIGKILL leaves the lock file"
    );
    let (code, _, err) = run_in(
        dir,
        &[
            "run",
            "timers",
            "--quick",
            "--no-progress",
            "--no-html",
            "--out",
            s(&out),
        ],
    );
    assert_eq!(code, Some(0), "a dead run's lock was not taken over: {err}");
    assert!(store::load(&out).is_ok());
    n += 1;

    // Two runs writing through two links to one file: the second refuses.
    let real = dir.join("real.json");
    std::fs::write(&real, std::fs::read(fixture("quick.json")).unwrap()).unwrap();
    let (l1, l2) = (dir.join("l1.json"), dir.join("l2.json"));
    std::os::unix::fs::symlink(&real, &l1).unwrap();
    std::os::unix::fs::symlink("real.json", &l2).unwrap();
    let first = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"))
        .current_dir(dir)
        .args([
            "run", "timers", "timers", "timers", "timers", "timers", "timers", "timers", "timers",
        ])
        .args(["--quick", "--no-progress", "--out", s(&l1)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !lock_of("real.json").exists() {
        assert!(t0.elapsed() < TIMEOUT, "no lock beside the link's target");
        std::thread::sleep(Duration::from_millis(5));
    }
    for l in [&l2, &l1, &real] {
        refused(
            dir,
            &["run", "timers", "--quick", "--no-progress", "--out", s(l)],
            "being written by another corescope run",
        );
        n += 1;
    }
    let fpid = i32::try_from(first.id()).unwrap();
    // SAFETY: kill() to a child this test spawned and has not reaped yet.
    assert_eq!(unsafe { libc::kill(fpid, libc::SIGTERM) }, 0);
    let _ = first.wait_with_output().unwrap();
    assert!(std::fs::symlink_metadata(&l1)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        store::load(&real).is_ok(),
        "the file behind the link holds a run"
    );
    eprintln!("{n} temp and lock cases checked");
}

/// Class 3: inputs that are not regular files, too large, or not UTF-8,
/// given to every command that reads a file.
fn input_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let d = dir.join("inputs");
    std::fs::create_dir_all(&d).unwrap();
    let quick = std::fs::read(fixture("quick.json")).unwrap();
    let fifo = d.join("in.fifo");
    let c_fifo = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o644) }, 0);
    let zero_link = d.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    let fifo_link = d.join("fifo-link.json");
    std::os::unix::fs::symlink(&fifo, &fifo_link).unwrap();
    let huge = d.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(corescope::input::MAX_INPUT_BYTES + 1)
        .unwrap();
    let utf16 = |be: bool, bom: bool| -> Vec<u8> {
        let text = String::from_utf8(quick.clone()).unwrap();
        let mut v: Vec<u8> = Vec::new();
        if bom {
            v.extend(if be { [0xfe, 0xff] } else { [0xff, 0xfe] });
        }
        for u in text.encode_utf16() {
            v.extend(if be { u.to_be_bytes() } else { u.to_le_bytes() });
        }
        v
    };
    let with = |prefix: &[u8]| -> Vec<u8> {
        let mut v = prefix.to_vec();
        v.extend(&quick);
        v
    };
    let bad: Vec<(&str, String, &'static str)> = vec![
        (
            "a FIFO",
            s(&fifo).into(),
            "not a regular file (it is a FIFO)",
        ),
        (
            "a link to a FIFO",
            s(&fifo_link).into(),
            "not a regular file (it is a FIFO)",
        ),
        (
            "/dev/zero",
            "/dev/zero".into(),
            "not a regular file (it is a character device)",
        ),
        ("/dev/urandom", "/dev/urandom".into(), "character device"),
        ("/dev/null", "/dev/null".into(), "character device"),
        (
            "a link to /dev/zero",
            s(&zero_link).into(),
            "character device",
        ),
        ("/dev/stdin", "/dev/stdin".into(), "not a regular file"),
        (
            "a file over the size cap",
            s(&huge).into(),
            "larger than 256 MiB",
        ),
        (
            "gzip",
            raw(&d, "gz.json", &with(b"\x1f\x8b\x08\x00")),
            "looks like gzip-compressed data; gunzip it first",
        ),
        (
            "xz",
            raw(&d, "xz.json", &with(b"\xfd7zXZ\x00")),
            "xz-compressed",
        ),
        (
            "zstd",
            raw(&d, "zst.json", &with(b"\x28\xb5\x2f\xfd")),
            "zstd-compressed",
        ),
        (
            "bzip2",
            raw(&d, "bz.json", &with(b"BZh9")),
            "bzip2-compressed",
        ),
        (
            "zip",
            raw(&d, "zip.json", &with(b"PK\x03\x04")),
            "zip-compressed",
        ),
        (
            "UTF-16 LE with a BOM",
            raw(&d, "le.json", &utf16(false, true)),
            "UTF-16",
        ),
        (
            "UTF-16 BE with a BOM",
            raw(&d, "be.json", &utf16(true, true)),
            "UTF-16",
        ),
        (
            "UTF-16 LE without a BOM",
            raw(&d, "le0.json", &utf16(false, false)),
            "UTF-16",
        ),
        (
            "UTF-16 BE without a BOM",
            raw(&d, "be0.json", &utf16(true, false)),
            "UTF-16",
        ),
        (
            "UTF-32 with a BOM",
            raw(&d, "u32.json", b"\xff\xfe\x00\x00{\x00\x00\x00"),
            "UTF-32",
        ),
        (
            "Latin-1",
            raw(&d, "latin1.json", b"{\"tool\": \"caf\xe9\"}"),
            "not valid UTF-8 text (an invalid byte at offset 13)",
        ),
    ];
    let mut v = Vec::new();
    let q = fixture("quick.json").to_string_lossy().into_owned();
    for (what, path, needle) in &bad {
        let p = path.as_str();
        let cmds: Vec<(&str, Vec<&str>)> = vec![
            ("report", vec!["report", p]),
            ("compare", vec!["compare", &q, p]),
            ("plan --check", vec!["plan", "--reference", "--check", p]),
            ("reference compare", vec!["reference", "compare", p, "t3-4"]),
            (
                "tune --against",
                vec![
                    "tune",
                    "channel",
                    "--budget",
                    "1",
                    "--out",
                    "never.json",
                    "--against",
                    p,
                ],
            ),
        ];
        for (cmd, args) in cmds {
            v.push(case(format!("{cmd}: {what}"), &args, Fail(1, needle)));
        }
    }
    // XML topologies take the same way in (only the not-regular and size cases:
    // the encodings are refused by the XML check).
    for (what, path, needle) in bad.iter().take(8) {
        v.push(case(
            format!("topo --xml: {what}"),
            &["topo", "--xml", path],
            Fail(1, needle),
        ));
        v.push(case(
            format!("place --xml: {what}"),
            &["place", "scatter", "-n", "2", "--xml", path],
            Fail(1, needle),
        ));
    }
    // A UTF-8 byte-order mark is accepted.
    let bom = raw(&d, "bom.json", &with(b"\xef\xbb\xbf"));
    v.push(case(
        "report: a UTF-8 BOM",
        &["report", &bom],
        Ok("compute"),
    ));
    v.push(case(
        "compare: a UTF-8 BOM",
        &["compare", &bom, &q],
        Ok("compute"),
    ));
    v.push(case(
        "reference compare: a UTF-8 BOM",
        &["reference", "compare", &bom, "t3-4"],
        Ok(""),
    ));
    v
}

#[test]
fn class3_inputs_are_regular_files_of_bounded_size() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = input_cases(dir);
    for c in &cases {
        check(dir, c);
    }
    assert!(!dir.join("never.json").exists());
    if let Some(path) = std::env::var_os("HOSTILE_TABLE_3") {
        let rows: Vec<String> = cases.iter().map(|c| table_row(dir, c)).collect();
        std::fs::write(path, rows.join("\n") + "\n").unwrap();
    }
    eprintln!("{} input cases checked", cases.len());
}

/// Class 4: numbers without bounds. Budgets, CPU lists and placement
/// expressions, tuner configurations and topology sizes, each refused (or
/// bounded) before anything is expanded, allocated or converted.
fn bound_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let mut v = Vec::new();
    let too_big = "at most 604800 seconds";
    let not_positive = "expected a positive number of seconds";
    let budgets: [(&str, &'static str); 16] = [
        ("1e308", too_big),
        ("1e19", too_big),
        ("18446744073709551616", too_big),
        ("9223372036854775807", too_big),
        ("604800.5", too_big),
        ("604801", too_big),
        ("1e10", too_big),
        ("1.7976931348623157e308", too_big),
        ("-inf", not_positive),
        ("+inf", not_positive),
        ("NaN", not_positive),
        ("-0", not_positive),
        ("1e-400", not_positive),
        ("0x10", not_positive),
        ("1_000", not_positive),
        ("  ", not_positive),
    ];
    for (b, needle) in budgets {
        v.push(case(
            format!("run --budget {b}"),
            &[
                "run",
                "timers",
                "--quick",
                "--budget",
                b,
                "--out",
                "never.json",
            ],
            Fail(2, needle),
        ));
        v.push(case(
            format!("plan --budget {b}"),
            &[
                "plan",
                "timers",
                "--quick",
                "--reference",
                "--summary",
                "--budget",
                b,
            ],
            Fail(2, needle),
        ));
        v.push(case(
            format!("tune --budget {b}"),
            &["tune", "channel", "--budget", b, "--out", "never.json"],
            Fail(2, needle),
        ));
    }
    v.push(case(
        "plan --budget at the bound",
        &[
            "plan",
            "timers",
            "--quick",
            "--reference",
            "--summary",
            "--budget",
            "604800",
        ],
        Ok("timers"),
    ));

    // CPU lists and expressions that would expand past every CPU id there is.
    let full = "0-1048576";
    let twice = format!("{full},{full}");
    let many = vec!["0-1048575"; 200].join(",");
    let singles_then_range = format!(
        "{},0-1048576",
        (0..200)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let lists: Vec<(String, &'static str)> = vec![
        (twice.clone(), "more than the 1048577 corescope accepts"),
        (many.clone(), "more than the 1048577"),
        (singles_then_range, "more than the 1048577"),
        (format!("{full},0"), "more than the 1048577"),
    ];
    for (l, needle) in &lists {
        v.push(case(
            format!("place '{}'", &l[..l.len().min(30)]),
            &["place", l, "-n", "2"],
            Fail(1, needle),
        ));
        v.push(case(
            format!("run --placement '{}'", &l[..l.len().min(30)]),
            &[
                "run",
                "timers",
                "--quick",
                "--placement",
                l,
                "--out",
                "never.json",
            ],
            Fail(1, needle),
        ));
    }
    for e in [
        format!("N0:{twice}"),
        format!("S0:{many}"),
        format!("kind:P:{twice}"),
        format!("N0:0@S0:{twice}"),
    ] {
        v.push(case(
            format!(
                "place expression '{}'",
                e.chars().take(24).collect::<String>()
            ),
            &["place", &e, "-n", "2"],
            Fail(1, "bad index list"),
        ));
        v.push(case(
            format!(
                "run --placement expression '{}'",
                e.chars().take(24).collect::<String>()
            ),
            &[
                "run",
                "timers",
                "--quick",
                "--placement",
                &e,
                "--out",
                "never.json",
            ],
            Fail(1, "bad index list"),
        ));
    }

    // Tuner configurations: a channel larger than any raced one may be.
    let d = dir.join("bounds");
    std::fs::create_dir_all(&d).unwrap();
    let tib = raw(
        &d,
        "tib.json",
        br#"{"mode": "ring", "buffers": 1, "buffer_bytes": 1099511627776}"#,
    );
    let nbuf = raw(
        &d,
        "nbuf.json",
        br#"{"mode": "n_buffer", "buffers": 1024, "buffer_bytes": 1073741824}"#,
    );
    let pad = raw(
        &d,
        "pad.json",
        br#"{"mode": "ring", "buffers": 1, "buffer_bytes": 4096, "padding_bytes": 2147483648}"#,
    );
    let huge = raw(
        &d,
        "huge.json",
        br#"{"mode": "ring", "buffers": 1, "buffer_bytes": 18446744073709551615}"#,
    );
    for (what, f, needle) in [
        ("a 1 TiB ring", &tib, "more than the 1073741824"),
        ("1024 buffers of 1 GiB", &nbuf, "more than the 1073741824"),
        ("2 GiB of padding", &pad, "more than the 1073741824"),
        ("a ring of 2^64-1 bytes", &huge, "--against"),
    ] {
        v.push(case(
            format!("tune --against {what}"),
            &[
                "tune",
                "channel",
                "--budget",
                "1",
                "--out",
                "never.json",
                "--against",
                f,
            ],
            Fail(1, needle),
        ));
    }

    // Topologies whose caches or memory are near 2^64 (run files for plan
    // --check, report and compare).
    let sizes: [(&str, u64); 4] = [
        ("2^64-1", u64::MAX),
        ("2^63", 1 << 63),
        ("2^63+2^62", (1 << 63) + (1 << 62)),
        ("1 TiB + 1", (1 << 40) + 1),
    ];
    for (what, size) in sizes {
        let f = variant(&d, &format!("cache-{size}.json"), |v| {
            for c in v["topology"]["caches"].as_array_mut().unwrap() {
                c["size_bytes"] = json!(size);
            }
        });
        v.push(case(
            format!("plan --check, caches of {what} bytes"),
            &["plan", "--reference", "--check", &f],
            Fail(1, "cache of"),
        ));
        v.push(case(
            format!("report, caches of {what} bytes"),
            &["report", &f],
            Fail(1, "above the 1099511627776 corescope accepts"),
        ));
        let m = variant(&d, &format!("mem-{size}.json"), |v| {
            v["topology"]["memory_bytes"] = json!(size);
        });
        if size > 1 << 60 {
            v.push(case(
                format!("plan --check, memory of {what} bytes"),
                &["plan", "--reference", "--check", &m],
                Fail(1, "bytes of memory"),
            ));
        }
    }
    v
}

#[test]
fn class4_numbers_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = bound_cases(dir);
    for c in &cases {
        check(dir, c);
    }
    assert!(!dir.join("never.json").exists());
    if let Some(path) = std::env::var_os("HOSTILE_TABLE_4") {
        let rows: Vec<String> = cases.iter().map(|c| table_row(dir, c)).collect();
        std::fs::write(path, rows.join("\n") + "\n").unwrap();
    }
    // The ladder ends for every maximum, however large.
    for max in [
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
        (1 << 63) + 1,
        1 << 62,
        0,
        1,
    ] {
        for fine in [false, true] {
            let v = corescope::probes::memory::working_sets(max, fine);
            assert!(v.len() < 200, "{max}: {} sizes", v.len());
            assert!(v.windows(2).all(|w| w[0] < w[1]), "{max}: {v:?}");
        }
    }
    let n = cases.len() + 1 + non_utf8_cases(dir);
    eprintln!("{n} bound cases checked");
}

/// Arguments that are not UTF-8: never a panic; file names recorded lossily.
fn non_utf8_cases(dir: &Path) -> usize {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let mut n = 0;
    let bad = OsStr::from_bytes(b"r\xff\xfe.json");
    let out = corescope()
        .current_dir(dir)
        .args([
            "run",
            "timers",
            "--quick",
            "--no-progress",
            "--no-html",
            "--out",
        ])
        .arg(bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let run = store::load(&dir.join(bad)).unwrap();
    assert!(
        run.command.iter().any(|a| a.contains('\u{fffd}')),
        "{:?}",
        run.command
    );
    n += 1;
    let arg = |v: &[u8]| OsStr::from_bytes(v).to_os_string();
    for (args, code) in [
        (vec![arg(b"report"), arg(b"missing\xff.json")], 1),
        (vec![arg(b"report"), arg(b"\x80")], 1),
        (vec![arg(b"compare"), arg(b"a\xff"), arg(b"b\xfe")], 1),
        (vec![arg(b"run"), arg(b"timers\xff"), arg(b"--quick")], 2),
        (
            vec![arg(b"place"), arg(b"0,\xff"), arg(b"-n"), arg(b"2")],
            2,
        ),
        (
            vec![
                arg(b"run"),
                arg(b"timers"),
                arg(b"--quick"),
                arg(b"--budget"),
                arg(b"1\xff"),
            ],
            2,
        ),
        (
            vec![arg(b"topo"), arg(b"--synthetic"), arg(b"pack:2 \xff")],
            2,
        ),
        (vec![arg(b"topo"), arg(b"--xml"), arg(b"\xff.xml")], 1),
        (
            vec![
                arg(b"tune"),
                arg(b"channel"),
                arg(b"--against"),
                arg(b"\xff.json"),
                arg(b"--out"),
                arg(b"never.json"),
            ],
            1,
        ),
        (vec![arg(b"\xff\xfe")], 2),
    ] {
        let out = corescope().current_dir(dir).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        n += 1;
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Any budget: a value within (0, 7 days] or a message, never a panic, and
    /// always a duration `Duration::from_secs_f64` takes.
    #[test]
    fn any_budget_is_bounded(s in prop_oneof![
        any::<f64>().prop_map(|f| f.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        any::<u64>().prop_map(|u| u.to_string()),
        "[-+0-9eE.a-zA-Z_ ]{0,24}",
    ]) {
        if let Ok(b) = corescope::cli::parse_budget(&s) {
            prop_assert!(b > 0.0 && b <= corescope::cli::MAX_DURATION_S, "{s}: {b}");
            let _ = Duration::from_secs_f64(b * 1.5 + 10.0);
        }
    }

    /// Any CPU list or placement expression: parsed or refused without a panic,
    /// and never expanded beyond the bound.
    #[test]
    fn any_cpu_list_stays_bounded(s in prop_oneof![
        "[0-9,\\- ]{0,40}",
        prop::collection::vec((0u32..2_000_000, 0u32..2_000_000), 1..6).prop_map(|v| {
            v.iter().map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))).collect::<Vec<_>>().join(",")
        }),
        ("[NSns]?[0-9]{0,3}", prop::collection::vec((0u32..2_000_000, 0u32..2_000_000), 1..4)).prop_map(|(d, v)| {
            format!("{d}:{}", v.iter().map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))).collect::<Vec<_>>().join(","))
        }),
        "[a-zA-Z0-9:@,\\-]{0,30}",
    ]) {
        use corescope::placement::{Strategy as Placement, MAX_LIST_CPUS};
        if let Ok(Placement::List(v)) = corescope::cli::parse_strategy(&s) {
            prop_assert!(v.len() <= MAX_LIST_CPUS, "{s}: {}", v.len());
        }
        let _ = corescope::cli::parse_placements(std::slice::from_ref(&s));
    }
}

/// Class 5: wrong successes. Run files whose intervals run backwards, whose
/// counts disagree with their repetitions or whose topology lists a PU twice
/// are refused by every command; `--probes` that selects nothing is an error;
/// no infinite, NaN or 309-digit figure is printed.
fn wrong_success_cases(dir: &Path) -> Vec<Case> {
    use Expect::*;
    let d = dir.join("wrong");
    std::fs::create_dir_all(&d).unwrap();
    let q = fixture("quick.json").to_string_lossy().into_owned();
    let with_samples = |v: &mut Value, n: Vec<usize>, reps: Vec<Vec<f64>>, lo: f64, hi: f64| {
        let s = &mut v["probes"][0]["series"][0];
        let len = s["x"].as_array().unwrap().len();
        s["x"] = json!((0..n.len()).map(|i| i as f64).collect::<Vec<_>>());
        s["y"] = json!(vec![1.0; n.len()]);
        s["y_lo"] = json!(vec![lo; n.len()]);
        s["y_hi"] = json!(vec![hi; n.len()]);
        s["n"] = json!(n);
        s["samples"] = json!(reps);
        let _ = len;
    };
    let files: Vec<(&str, String, &'static str)> = vec![
        (
            "y_lo above y_hi",
            variant(&d, "lohi.json", |v| {
                with_samples(v, vec![3], vec![vec![1.0; 3]], 2.0, 0.5)
            }),
            "y_lo 2 is above y_hi 0.5",
        ),
        (
            "y_lo above y_hi by a hair",
            variant(&d, "lohi2.json", |v| {
                with_samples(v, vec![3], vec![vec![1.0; 3]], 1.0000000000000002, 1.0)
            }),
            "is above y_hi",
        ),
        (
            "y_lo above y_hi at the last point",
            variant(&d, "lohi3.json", |v| {
                with_samples(v, vec![2, 2], vec![vec![1.0; 2]; 2], 0.5, 2.0);
                v["probes"][0]["series"][0]["y_lo"][1] = json!(3.0);
            }),
            "point 1: y_lo 3",
        ),
        (
            "n above the repetitions",
            variant(&d, "n1.json", |v| {
                with_samples(v, vec![5], vec![vec![1.0; 3]], 0.5, 2.0)
            }),
            "n is 5 but 3 repetitions",
        ),
        (
            "n below the repetitions",
            variant(&d, "n2.json", |v| {
                with_samples(v, vec![1], vec![vec![1.0; 3]], 0.5, 2.0)
            }),
            "n is 1 but 3",
        ),
        (
            "n of 0 with repetitions",
            variant(&d, "n3.json", |v| {
                with_samples(v, vec![0], vec![vec![1.0; 3]], 0.5, 2.0)
            }),
            "n is 0 but 3",
        ),
        (
            "n with no repetitions behind it",
            variant(&d, "n4.json", |v| {
                with_samples(v, vec![4, 2], vec![vec![1.0; 2], vec![]], 0.5, 2.0)
            }),
            "n is 4 but 2",
        ),
        (
            "n of 2^64-1",
            variant(&d, "n5.json", |v| {
                with_samples(v, vec![1], vec![vec![1.0]], 0.5, 2.0);
                v["probes"][0]["series"][0]["n"] = json!([u64::MAX]);
            }),
            "repetitions are recorded",
        ),
        (
            "a PU listed twice",
            variant(&d, "dup.json", |v| {
                let pus = v["topology"]["pus"].as_array_mut().unwrap();
                let first = pus[0].clone();
                pus.push(first);
            }),
            "PU 0 is listed twice",
        ),
        (
            "the last PU listed twice",
            variant(&d, "dup2.json", |v| {
                let pus = v["topology"]["pus"].as_array_mut().unwrap();
                let k = pus.len() - 1;
                let mut p = pus[0].clone();
                p["os_index"] = pus[k]["os_index"].clone();
                pus.insert(0, p);
            }),
            "is listed twice",
        ),
    ];
    let mut v = Vec::new();
    for (what, f, needle) in &files {
        v.push(case(
            format!("report: {what}"),
            &["report", f],
            Fail(1, needle),
        ));
        v.push(case(
            format!("compare: {what}"),
            &["compare", &q, f],
            Fail(1, needle),
        ));
        v.push(case(
            format!("plan --check: {what}"),
            &["plan", "--reference", "--check", f],
            Fail(1, needle),
        ));
        v.push(case(
            format!("reference compare: {what}"),
            &["reference", "compare", f, "t3-4"],
            Fail(1, needle),
        ));
    }
    // A consistent file with repetitions is still read.
    let good = variant(&d, "good.json", |v| {
        with_samples(v, vec![3, 2], vec![vec![1.0; 3], vec![1.0; 2]], 1.0, 1.0)
    });
    v.push(case(
        "report: consistent repetitions",
        &["report", &good],
        Ok("compute"),
    ));
    for p in ["", ",", " ", " , ,", ",,,"] {
        v.push(case(
            format!("compare --probes '{p}'"),
            &["compare", &q, &q, "--probes", p],
            Fail(1, "names no probe"),
        ));
    }
    v
}

/// Runs whose intervals and values make infinite, NaN or enormous figures.
fn extreme_figure_files(dir: &Path) -> Vec<String> {
    let d = dir.join("figures");
    std::fs::create_dir_all(&d).unwrap();
    let set = |v: &mut Value, y: f64, lo: f64, hi: f64| {
        for p in v["probes"].as_array_mut().unwrap() {
            for s in p["series"].as_array_mut().unwrap() {
                let n = s["x"].as_array().unwrap().len();
                s["y"] = json!(vec![y; n]);
                s["y_lo"] = json!(vec![lo; n]);
                s["y_hi"] = json!(vec![hi; n]);
                s["n"] = json!(vec![5; n]);
                s["samples"] = json!(vec![vec![y; 5]; n]);
            }
            for dd in p["distributions"].as_array_mut().unwrap() {
                if dd.get("mode_range").is_some_and(|m| !m.is_null()) {
                    dd["mode_range"]["fraction"] = json!(1e308);
                }
            }
        }
    };
    vec![
        variant(&d, "inf.json", |v| set(v, 1.0, -1e308, 1e308)),
        variant(&d, "tiny.json", |v| set(v, 5e-324, 0.0, 1e-300)),
        variant(&d, "big.json", |v| set(v, 1e308, -1e308, 1e308)),
        variant(&d, "neg.json", |v| set(v, -1e308, -1e308, 1e308)),
        variant(&d, "zero.json", |v| set(v, 0.0, -1e-300, 1e-300)),
    ]
}

/// The longest run of ASCII digits in `s`.
fn longest_digit_run(s: &str) -> usize {
    s.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn class5_wrong_successes_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = wrong_success_cases(dir);
    for c in &cases {
        check(dir, c);
    }
    let mut n = cases.len();
    if let Some(path) = std::env::var_os("HOSTILE_TABLE_5") {
        let rows: Vec<String> = cases.iter().map(|c| table_row(dir, c)).collect();
        std::fs::write(path, rows.join("\n") + "\n").unwrap();
    }
    for f in extreme_figure_files(dir) {
        let html_out = dir.join("fig.html");
        for args in [
            vec!["report", &f],
            vec!["report", &f, "--summary"],
            vec!["report", &f, "--markdown"],
            vec!["compare", &f, &f],
            vec!["report", &f, "--html", html_out.to_str().unwrap()],
        ] {
            let (code, out, err) = run_in(dir, &args);
            assert_eq!(code, Some(0), "{args:?}: {err}");
            let mut text = out;
            if args.contains(&"--html") {
                text = std::fs::read_to_string(&html_out).unwrap();
            }
            for bad in ["inf %", "inf%", "NaN", "±inf", "±?%"] {
                assert!(!text.contains(bad), "{args:?}: '{bad}' printed");
            }
            assert!(
                longest_digit_run(&text) < 25,
                "{args:?}: a {}-digit figure",
                longest_digit_run(&text)
            );
            n += 1;
        }
    }
    eprintln!("{n} wrong-success cases checked");
}

/// Class 7: topologies through every way in. hwloc's environment variables
/// are refused; synthetic specs are bounded however their counts are written;
/// XML with a DTD subset, entities, deep nesting or huge indexes never reaches
/// hwloc; the plain DOCTYPE line of an lstopo export is accepted.
#[test]
fn class7_topologies_are_checked_at_every_way_in() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut n = 0;
    for (var, value) in [
        ("HWLOC_SYNTHETIC", "pack:99999999 core:99999 pu:9999"),
        ("HWLOC_SYNTHETIC", "pack:1 pu:1"),
        ("HWLOC_XMLFILE", "/dev/zero"),
        ("HWLOC_XMLFILE", "/nonexistent.xml"),
        ("HWLOC_FSROOT", "/nonexistent"),
    ] {
        for args in [
            vec!["topo"],
            vec!["place", "scatter", "-n", "2"],
            vec!["run", "timers", "--quick", "--out", "never.json"],
            vec!["plan", "timers", "--quick", "--reference", "--summary"],
        ] {
            let out = corescope()
                .current_dir(dir)
                .env(var, value)
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{var} {args:?}: {err}");
            assert!(
                err.contains(&format!("{var} is set")),
                "{var} {args:?}: {err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            n += 1;
        }
    }
    assert!(!dir.join("never.json").exists());
    // --synthetic and --xml still work with the variables unset.
    let (code, _, err) = run_in(dir, &["topo", "--synthetic", "pack:2 core:2 pu:2"]);
    assert_eq!(code, Some(0), "{err}");
    n += 1;

    use Expect::*;
    let mut cases = Vec::new();
    for spec in [
        "99999 99999 99999",
        "2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2",
        "pack:0x100000 pu:0x100",
        "pack:0X7fffffff pu:2",
        "pack:+99999999 core:+9999 pu:+99",
        "pack:1024 core:1024 pu:0x10",
        "pack:99999999999999999999999 pu:2",
    ] {
        cases.push(case(
            format!("synthetic '{spec}'"),
            &["topo", "--synthetic", spec],
            Fail(1, "more than the 16384 PUs"),
        ));
    }
    let machine = |inner: &str| {
        format!("<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\">{inner}</object></topology>")
    };
    let pu = "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/>";
    let deep = format!(
        "{}{pu}{}",
        "<object type=\"Group\" cpuset=\"0x1\">".repeat(300),
        "</object>".repeat(300)
    );
    let xmls: Vec<(&str, String, &'static str)> = vec![
        (
            "an internal DTD subset",
            format!(
                "<?xml version=\"1.0\"?><!DOCTYPE topology [<!ELEMENT topology ANY>]>{}",
                &machine(pu)[22..]
            ),
            "internal subset",
        ),
        (
            "entities",
            format!(
                "<?xml version=\"1.0\"?><!DOCTYPE t [<!ENTITY a \"x\">]>{}",
                &machine(pu)[22..]
            ),
            "entities",
        ),
        (
            "an entity without a DOCTYPE",
            format!("<!ENTITY a \"x\">{}", machine(pu)),
            "entities",
        ),
        (
            "300 levels of nesting",
            machine(&deep),
            "nest more than 256",
        ),
        (
            "an os_index beyond c_int",
            machine("<object type=\"PU\" os_index=\"2147483648\" cpuset=\"0x1\"/>"),
            "os_index \"2147483648\"",
        ),
        (
            "an os_index of 2^64",
            machine("<object type=\"PU\" os_index=\"18446744073709551616\" cpuset=\"0x1\"/>"),
            "not a number from 0 to 2147483647",
        ),
        (
            "a negative os_index",
            machine("<object type=\"PU\" os_index=\"-1\" cpuset=\"0x1\"/>"),
            "not a number from 0",
        ),
        (
            "a hex os_index",
            machine("<object type=\"PU\" os_index=\"0x10\" cpuset=\"0x1\"/>"),
            "not a number from 0",
        ),
    ];
    for (i, (what, text, needle)) in xmls.iter().enumerate() {
        let f = raw(dir, &format!("t{i}.xml"), text.as_bytes());
        cases.push(case(
            format!("xml: {what}"),
            &["topo", "--xml", &f],
            Fail(1, needle),
        ));
        cases.push(case(
            format!("place --xml: {what}"),
            &["place", "scatter", "-n", "1", "--xml", &f],
            Fail(1, needle),
        ));
    }
    // The DOCTYPE line lstopo writes, and a long leading comment, are accepted
    // (a real export, where the checkout has them).
    let exports =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/topologies/16em64t-4s2c2t.xml");
    if let Result::Ok(real) = std::fs::read_to_string(exports) {
        let at = real.find("<topology").unwrap();
        let text = format!(
            "{}<!-- {} -->\n{}",
            &real[..at],
            "x".repeat(64 << 10),
            &real[at..]
        );
        let f = raw(dir, "ok.xml", text.as_bytes());
        cases.push(case(
            "xml: lstopo's DOCTYPE line and a 64 KiB comment",
            &["topo", "--xml", &f],
            Ok(""),
        ));
    }
    for c in &cases {
        check(dir, c);
    }
    n += cases.len();
    if let Some(path) = std::env::var_os("HOSTILE_TABLE_7") {
        let rows: Vec<String> = cases.iter().map(|c| table_row(dir, c)).collect();
        std::fs::write(path, rows.join("\n") + "\n").unwrap();
    }
    eprintln!("{n} topology cases checked");
}

/// Class 8: `corescope run | head -1`. A reader of stdout that goes away
/// (before the first line or after it), even with stderr on the same pipe,
/// never costs the run file or the HTML report: the run goes on, both are
/// written, a line on stderr says that the rest was not shown, and the exit
/// status is 141, as for a program SIGPIPE ended. Nothing panics.
#[test]
fn class8_closed_stdout_never_loses_the_run_files() {
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run_args = |out: &Path| -> Vec<String> {
        ["run", "timers", "--quick", "--no-progress", "--out", s(out)]
            .map(String::from)
            .to_vec()
    };
    let written = |out: &Path, what: &str| {
        let run = store::load(out).unwrap_or_else(|e| panic!("{what}: the run file: {e}"));
        assert!(!run.probes.is_empty(), "{what}: nothing measured");
        let html = std::fs::read_to_string(out.with_extension("html"))
            .unwrap_or_else(|e| panic!("{what}: no HTML report: {e}"));
        assert!(html.starts_with("<!DOCTYPE html>"), "{what}");
        let name = out.file_name().unwrap().to_string_lossy();
        assert!(
            !dir.join(format!(".{name}.lock")).exists(),
            "{what}: lock left"
        );
    };
    // The reader gone before the first write; stderr apart, then on the same pipe.
    for (k, stderr_too) in [(0, false), (1, true)] {
        let what = if stderr_too {
            "run 2>&1 | (closed)"
        } else {
            "run | (closed)"
        };
        let out = dir.join(format!("closed{k}.json"));
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"));
        cmd.current_dir(dir)
            .args(run_args(&out))
            .stdout(writer.try_clone().unwrap());
        if stderr_too {
            cmd.stderr(writer);
        } else {
            cmd.stderr(Stdio::piped());
        }
        let result = cmd.spawn().unwrap().wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(141), "{what}: {err}");
        if !stderr_too {
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert!(
                err.contains("stdout was closed early")
                    && err.contains(&format!("run file: {}", out.display()))
                    && err.contains("closed0.html"),
                "{what}: {err}"
            );
        }
        written(&out, what);
    }
    // `| head -1`: the reader takes the first line and goes away.
    let out = dir.join("head.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("corescope"))
        .current_dir(dir)
        .args(run_args(&out))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut first)
            .unwrap();
    }
    assert!(first.starts_with("corescope "), "{first}");
    let result = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // 141 when a later line met the closed pipe (the usual case); 0 if the
    // whole output fitted into the pipe before the reader went.
    match result.status.code() {
        Some(141) => assert!(err.contains("stdout was closed early"), "{err}"),
        Some(0) => {}
        other => panic!("run | head -1: exit {other:?}: {err}"),
    }
    written(&out, "run | head -1");
}

/// A CSV export into a directory where links were planted under the names it
/// writes: every file is made exclusively and renamed over its name, so each
/// link is replaced and its target (a file, a missing file, a directory, a
/// hard-linked file) is left alone; a directory under a name is refused in one
/// line; no temporary file is left.
#[test]
fn class2_csv_export_never_writes_through_planted_links() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run = fixture("quick.json");
    let out = dir.join("csv");
    std::fs::create_dir(&out).unwrap();
    let victims: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("victim{i}.txt"))).collect();
    for v in &victims {
        std::fs::write(v, "precious").unwrap();
    }
    let target_dir = dir.join("target-dir");
    std::fs::create_dir(&target_dir).unwrap();
    let missing = dir.join("never-made.txt");
    // A link to a file, a per-table file linked to another, a dangling link,
    // a link to a directory, a hard link to a third file.
    symlink(&victims[0], out.join("series.csv")).unwrap();
    symlink(&victims[1], out.join("timers--table-timers.csv")).unwrap();
    symlink(&missing, out.join("samples.csv")).unwrap();
    symlink(&target_dir, out.join("histograms.csv")).unwrap();
    std::fs::hard_link(&victims[2], out.join("pairs.csv")).unwrap();
    let (code, _, err) = run_in(dir, &["report", s(&run), "--csv", s(&out)]);
    assert_eq!(code, Some(0), "{err}");
    for v in &victims {
        assert_eq!(
            std::fs::read_to_string(v).unwrap(),
            "precious",
            "{v:?} written through"
        );
    }
    assert!(!missing.exists(), "a dangling link's target was made");
    assert_eq!(std::fs::read_dir(&target_dir).unwrap().count(), 0);
    for name in [
        "series.csv",
        "timers--table-timers.csv",
        "samples.csv",
        "histograms.csv",
        "pairs.csv",
    ] {
        let p = out.join(name);
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert!(m.file_type().is_file(), "{name} is not a regular file now");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.lines().count() >= 1 && !text.contains("precious"),
            "{name}"
        );
    }
    let leftovers: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // A directory under a name the export writes: one line naming it.
    let out2 = dir.join("csv2");
    std::fs::create_dir_all(out2.join("matrices.csv")).unwrap();
    let (code, _, err) = run_in(dir, &["report", s(&run), "--csv", s(&out2)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("matrices.csv"), "{err}");
    // The library call does the same.
    let loaded = store::load(&run).unwrap();
    let out3 = dir.join("csv3");
    std::fs::create_dir(&out3).unwrap();
    symlink(&victims[0], out3.join("distributions.csv")).unwrap();
    let files = csv::write_dir(&loaded, &out3, &|p, f| store::write_atomic_with(p, f)).unwrap();
    assert!(files.iter().any(|f| f.ends_with("distributions.csv")));
    assert_eq!(std::fs::read_to_string(&victims[0]).unwrap(), "precious");
}
