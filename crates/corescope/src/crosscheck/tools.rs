//! The established tools `crosscheck` compares with: where each is found, how it is
//! installed, how it is run, and the parsers of its output (pure functions, tested on
//! recorded outputs in `tests/fixtures/crosscheck/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// An established tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// likwid-bench (Debian package `likwid`): assembly kernels per instruction set.
    LikwidBench,
    /// rt-tests `ptsematest`: the wake-up of a thread blocked on a POSIX mutex.
    Ptsematest,
    /// The `core-to-core-latency` crate (crates.io): CAS and read/write ping-pong.
    CoreToCore,
    /// `perf bench syscall basic` (Linux perf).
    PerfBench,
}

/// The version of `core-to-core-latency` whose output the parser knows.
pub const CORE_TO_CORE_VERSION: &str = "1.2.0";

impl Tool {
    /// The program's file name.
    pub fn program(self) -> &'static str {
        match self {
            Tool::LikwidBench => "likwid-bench",
            Tool::Ptsematest => "ptsematest",
            Tool::CoreToCore => "core-to-core-latency",
            Tool::PerfBench => "perf",
        }
    }

    /// The command that installs the tool on a system like `os` (the run header's
    /// operating-system line).
    pub fn install(self, os: &str) -> String {
        let lower = os.to_ascii_lowercase();
        let Some((apt, dnf)) = self.packages(lower.contains("ubuntu")) else {
            return format!("cargo install core-to-core-latency --version {CORE_TO_CORE_VERSION}");
        };
        if ["fedora", "red hat", "rhel", "centos", "rocky", "alma"]
            .iter()
            .any(|d| lower.contains(d))
        {
            format!("dnf install {dnf}")
        } else if lower.contains("suse") {
            format!("zypper install {dnf}")
        } else {
            format!("apt-get install {apt}")
        }
    }

    /// The package names (Debian/Ubuntu, Fedora/SUSE); None for the crate, which
    /// cargo installs.
    fn packages(self, ubuntu: bool) -> Option<(&'static str, &'static str)> {
        match self {
            Tool::LikwidBench => Some(("likwid", "likwid")),
            Tool::Ptsematest => Some(("rt-tests", "realtime-tests")),
            Tool::PerfBench if ubuntu => Some(("linux-tools-generic", "perf")),
            Tool::PerfBench => Some(("linux-perf", "perf")),
            Tool::CoreToCore => None,
        }
    }

    /// Where the program is: `PATH`, then cargo's bin directory for the crate.
    pub fn find(self) -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        if self == Tool::CoreToCore {
            if let Some(home) = std::env::var_os("CARGO_HOME") {
                dirs.push(PathBuf::from(home).join("bin"));
            }
            if let Some(home) = std::env::var_os("HOME") {
                dirs.push(PathBuf::from(home).join(".cargo/bin"));
            }
        }
        dirs.into_iter()
            .map(|d| d.join(self.program()))
            .find(|p| is_executable(p))
    }
}

/// The tool's version as it states it, when it does (best effort: `None` when it
/// does not say).
pub fn version(tool: Tool, path: &Path) -> Option<String> {
    let limit = Duration::from_secs(5);
    let (program, args): (PathBuf, &[&str]) = match tool {
        Tool::LikwidBench => (path.with_file_name("likwid-perfctr"), &["-v"]),
        Tool::Ptsematest => (path.to_path_buf(), &["--help"]),
        Tool::PerfBench => (path.to_path_buf(), &["--version"]),
        Tool::CoreToCore => return None,
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let out = run(&program, &args, limit).ok()?;
    parse_version(tool, &format!("{}\n{}", out.stdout, out.stderr))
}

/// The version in a tool's `--version` / `-v` / `--help` text.
pub fn parse_version(tool: Tool, text: &str) -> Option<String> {
    let word_after = |marker: &str| -> Option<String> {
        text.lines().find_map(|l| {
            let rest = l.split(marker).nth(1)?;
            rest.split_whitespace().next().map(str::to_string)
        })
    };
    match tool {
        Tool::LikwidBench => word_after("Version "),
        Tool::Ptsematest => word_after("ptsematest V "),
        Tool::PerfBench => word_after("perf version "),
        Tool::CoreToCore => None,
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What a tool printed.
#[derive(Debug, Clone)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit status (None when killed by a signal).
    pub code: Option<i32>,
}

/// The most of each of a tool's output streams that is kept: the parsers need a
/// few kB; a tool that prints more is read to the end, and the rest dropped.
pub const OUTPUT_CAP_BYTES: usize = 1 << 20;

/// How long the output of a tool that has ended may stay open (a child of the tool
/// that still holds the pipe) before it is given up.
const PIPE_GRACE: Duration = Duration::from_secs(5);

/// Why a tool gave no figure: it did not run to its end, or its output does not
/// hold the figure.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The program could not be started.
    #[error("{}: cannot start: {source}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// It ran past its limit and was stopped.
    #[error("{} did not finish within {secs} s and was stopped", program.display())]
    Overran {
        /// The program.
        program: PathBuf,
        /// The limit.
        secs: u64,
    },
    /// Waiting for it failed.
    #[error("{}: {source}", program.display())]
    Wait {
        /// The program.
        program: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// It ended with an error; the line of its output that says so.
    #[error("{0}")]
    Exit(String),
    /// Its output does not hold the figure.
    #[error("{tool}: {what}")]
    Output {
        /// The tool.
        tool: &'static str,
        /// What is missing or wrong.
        what: String,
    },
    /// Its JSON does not parse.
    #[error("{tool}: its JSON does not parse: {source}")]
    Json {
        /// The tool.
        tool: &'static str,
        /// The parser's error.
        source: serde_json::Error,
    },
}

/// A [`ToolError::Output`].
fn unparsed(tool: &'static str, what: impl Into<String>) -> ToolError {
    ToolError::Output {
        tool,
        what: what.into(),
    }
}

/// Run `program args` with a time limit; the child is killed when it overruns.
/// Each output stream keeps its first [`OUTPUT_CAP_BYTES`].
pub fn run(program: &Path, args: &[String], limit: Duration) -> Result<Output, ToolError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| ToolError::Start {
            program: program.to_path_buf(),
            source,
        })?;
    // Read both pipes on threads so a chatty tool never blocks on a full pipe.
    let read_out = read_on_thread(child.stdout.take());
    let read_err = read_on_thread(child.stderr.take());
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(ToolError::Overran {
                    program: program.to_path_buf(),
                    secs: limit.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(source) => {
                break Err(ToolError::Wait {
                    program: program.to_path_buf(),
                    source,
                })
            }
        }
    };
    let until = std::time::Instant::now() + PIPE_GRACE;
    let stdout = read_out.finish(until);
    let stderr = read_err.finish(until);
    let status = status?;
    Ok(Output {
        stdout,
        stderr,
        code: status.code(),
    })
}

/// A pipe read on a thread of its own, to its end; what has arrived can be taken
/// at any time, so a pipe that a left-over child of the tool keeps open only
/// leaves that thread waiting.
struct PipeReader {
    text: std::sync::Arc<std::sync::Mutex<Captured>>,
    done: std::sync::mpsc::Receiver<()>,
}

/// The first `cap` bytes a pipe gave, and how many more it gave.
#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    dropped: u64,
}

impl Captured {
    fn take(&mut self, bytes: &[u8], cap: usize) {
        let n = cap.saturating_sub(self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..n]);
        self.dropped += (bytes.len() - n) as u64;
    }

    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n[{} more bytes of output not kept]\n",
                self.dropped
            ));
        }
        text
    }
}

fn read_on_thread(pipe: Option<impl std::io::Read + Send + 'static>) -> PipeReader {
    let text = std::sync::Arc::new(std::sync::Mutex::new(Captured::default()));
    let (tx, done) = std::sync::mpsc::channel();
    let sink = text.clone();
    std::thread::spawn(move || {
        if let Some(p) = pipe {
            read_capped(p, OUTPUT_CAP_BYTES, &sink);
        }
        let _ = tx.send(());
    });
    PipeReader { text, done }
}

impl PipeReader {
    /// What arrived, once the pipe ended or `until` passed.
    fn finish(self, until: std::time::Instant) -> String {
        let _ = self
            .done
            .recv_timeout(until.saturating_duration_since(std::time::Instant::now()));
        let captured = self.text.lock().unwrap_or_else(|e| e.into_inner());
        captured.text()
    }
}

/// Read `pipe` to its end into `sink`, which keeps the first `cap` bytes.
fn read_capped(mut pipe: impl std::io::Read, cap: usize, sink: &std::sync::Mutex<Captured>) {
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(k) => sink
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(&chunk[..k], cap),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
}

/// The first line of a failed tool's output that says what went wrong.
pub fn failure_line(out: &Output) -> String {
    let text = format!("{}\n{}", out.stderr, out.stdout);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            [
                "error",
                "cannot",
                "unknown",
                "not found",
                "panicked",
                "invalid",
            ]
            .iter()
            .any(|w| lower.contains(w))
        })
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("no output");
    let code = out
        .code
        .map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
    format!("{code}: {line}")
}

/// What likwid-bench reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Likwid {
    /// `MByte/s` (10^6 B/s).
    pub mbyte_per_s: f64,
    /// `MFlops/s` (10^6 FLOP/s).
    pub mflop_per_s: f64,
    /// The hardware threads its threads ran on, in thread order.
    pub hwthreads: Vec<u32>,
}

/// Parse likwid-bench's report; an error names the line that says what went wrong.
pub fn parse_likwid(text: &str) -> Result<Likwid, ToolError> {
    if let Some(l) = text
        .lines()
        .find(|l| l.starts_with("Error") || l.starts_with("ERROR") || l.starts_with("Cannot"))
    {
        return Err(unparsed("likwid-bench", l.trim()));
    }
    let field = |name: &str| -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let mbyte_per_s = field("MByte/s:")
        .ok_or_else(|| unparsed("likwid-bench", "no 'MByte/s:' line in its output"))?;
    let mflop_per_s = field("MFlops/s:").unwrap_or(0.0);
    let hwthreads = text
        .lines()
        .filter(|l| l.starts_with("Group:"))
        .filter_map(|l| {
            l.split("running on hwthread ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect();
    Ok(Likwid {
        mbyte_per_s,
        mflop_per_s,
        hwthreads,
    })
}

/// Parse ptsematest's `--json` file: the receiver's average latency, in µs.
pub fn parse_ptsematest_json(text: &str) -> Result<f64, ToolError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|source| ToolError::Json {
        tool: "ptsematest",
        source,
    })?;
    let threads = v
        .get("thread")
        .and_then(|t| t.as_object())
        .ok_or_else(|| unparsed("ptsematest", "no 'thread' object in its JSON"))?;
    let avg: Vec<f64> = threads
        .values()
        .filter_map(|t| t.get("receiver")?.get("avg")?.as_f64())
        .collect();
    match avg.as_slice() {
        [a] if a.is_finite() && *a >= 0.0 => Ok(*a),
        [] => Err(unparsed("ptsematest", "no receiver average in its JSON")),
        _ => Err(unparsed(
            "ptsematest",
            format!("{} thread pairs where one was asked for", avg.len()),
        )),
    }
}

/// Parse ptsematest's summary line (`#1 -> #0, Min 2, Cur 3, Avg 4, Max 8`): the
/// average in whole µs, for versions without `--json`.
pub fn parse_ptsematest_text(text: &str) -> Result<f64, ToolError> {
    text.lines()
        .find(|l| l.contains("->") && l.contains("Avg"))
        .and_then(|l| {
            let rest = l.split("Avg").nth(1)?;
            rest.trim_start()
                .split(|c: char| c == ',' || c.is_whitespace())
                .next()?
                .parse()
                .ok()
        })
        .ok_or_else(|| {
            let first = text
                .lines()
                .find(|l| l.contains("ERROR") || l.contains("rror"))
                .unwrap_or("no 'Avg' line in its output");
            unparsed("ptsematest", first.trim())
        })
}

/// Parse `core-to-core-latency --csv` for two cores: the one cell of the lower
/// triangle, the mean one-way latency in ns.
pub fn parse_core_to_core_csv(text: &str) -> Result<f64, ToolError> {
    let cells: Vec<f64> = text
        .lines()
        .flat_map(|l| l.split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            c.parse::<f64>()
                .map_err(|_| unparsed("core-to-core-latency", format!("'{c}' is not a number")))
        })
        .collect::<Result<_, _>>()?;
    match cells.as_slice() {
        [v] if v.is_finite() && *v > 0.0 => Ok(*v),
        [] => Err(unparsed(
            "core-to-core-latency",
            "no latency in its CSV output",
        )),
        _ => Err(unparsed(
            "core-to-core-latency",
            format!("{} cells where one pair was asked for", cells.len()),
        )),
    }
}

/// Parse `perf bench syscall basic`: ns per call.
pub fn parse_perf_syscall(text: &str) -> Result<f64, ToolError> {
    text.lines()
        .find(|l| l.contains("usecs/op"))
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .map(|us| us * 1e3)
        .ok_or_else(|| {
            let first = text.lines().map(str::trim).find(|l| !l.is_empty());
            unparsed(
                "perf bench",
                format!("no 'usecs/op' line ({})", first.unwrap_or("no output")),
            )
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn output_beyond_the_cap_is_read_and_dropped() {
        use std::io::Read;
        let read = |pipe: &mut dyn Read| {
            let sink = std::sync::Mutex::new(super::Captured::default());
            super::read_capped(pipe, 1 << 20, &sink);
            sink.into_inner().map(|c| c.text()).unwrap_or_default()
        };
        let text = read(&mut std::io::repeat(b'x').take(10 << 20));
        assert!(text.starts_with(&"x".repeat(1 << 20)));
        assert!(text.ends_with("[9437184 more bytes of output not kept]\n"));
        assert_eq!(read(&mut &b"short"[..]), "short");
    }

    #[test]
    fn a_tool_whose_child_keeps_its_output_open_still_returns() {
        let sh = std::path::Path::new("/bin/sh");
        let args = ["-c".to_string(), "echo done; sleep 60 &".to_string()];
        let started = std::time::Instant::now();
        let out = super::run(sh, &args, std::time::Duration::from_secs(30));
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        assert_eq!(out.map(|o| o.stdout).ok().as_deref(), Some("done\n"));
    }

    use super::*;

    fn fixture(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/crosscheck")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn likwid_reports_are_read() {
        let l = parse_likwid(&fixture("likwid-load_avx-2t.txt")).expect("parses");
        assert!(l.mbyte_per_s > 1000.0, "{l:?}");
        assert_eq!(l.hwthreads, vec![0, 1]);
        let p = parse_likwid(&fixture("likwid-peakflops_avx_fma.txt")).expect("parses");
        assert!(p.mflop_per_s > 1000.0, "{p:?}");
        assert_eq!(p.hwthreads, vec![0]);
    }

    #[test]
    fn likwid_failures_say_what_went_wrong() {
        let e = parse_likwid(&fixture("likwid-unknown-test.txt")).expect_err("fails");
        assert!(e.to_string().contains("Unknown test case"), "{e}");
        let e = parse_likwid(&fixture("likwid-bad-domain.txt")).expect_err("fails");
        assert!(e.to_string().contains("S9"), "{e}");
        assert!(parse_likwid("").is_err());
        assert!(parse_likwid("MByte/s:\tlots\n").is_err());
    }

    #[test]
    fn ptsematest_outputs_are_read() {
        let avg = parse_ptsematest_json(&fixture("ptsematest.json")).expect("parses");
        assert!(avg > 0.0 && avg < 1e4, "{avg}");
        let t = parse_ptsematest_text(&fixture("ptsematest.txt")).expect("parses");
        assert!(t > 0.0, "{t}");
        let e = parse_ptsematest_text(&fixture("ptsematest-bad-cpu.txt")).expect_err("fails");
        assert!(e.to_string().contains("CPU #7"), "{e}");
        assert!(parse_ptsematest_json("{").is_err());
        assert!(parse_ptsematest_json("{\"thread\": {}}").is_err());
    }

    #[test]
    fn core_to_core_outputs_are_read() {
        let v = parse_core_to_core_csv(&fixture("c2c-cas.csv")).expect("parses");
        assert!(v > 0.0, "{v}");
        let e = parse_core_to_core_csv(&fixture("c2c-bad.csv")).expect_err("empty");
        assert!(e.to_string().contains("no latency"), "{e}");
        assert!(parse_core_to_core_csv(",\n1,\n2,3,\n").is_err());
        assert!(parse_core_to_core_csv("x,\n").is_err());
    }

    #[test]
    fn perf_bench_outputs_are_read() {
        let ns = parse_perf_syscall(&fixture("perf-syscall.txt")).expect("parses");
        assert!(ns > 1.0 && ns < 1e5, "{ns}");
        let e = parse_perf_syscall(&fixture("perf-bad.txt")).expect_err("fails");
        assert!(e.to_string().contains("Unknown benchmark"), "{e}");
    }

    #[test]
    fn failures_name_their_line_and_exit() {
        let out = Output {
            stdout: String::new(),
            stderr: fixture("c2c-bad.stderr"),
            code: Some(101),
        };
        let f = failure_line(&out);
        assert!(f.starts_with("exit 101"), "{f}");
        assert!(f.contains("panicked") || f.contains("not found"), "{f}");
    }

    #[test]
    fn every_tool_says_how_to_install_it() {
        for t in [
            Tool::LikwidBench,
            Tool::Ptsematest,
            Tool::CoreToCore,
            Tool::PerfBench,
        ] {
            for os in ["Debian GNU/Linux 13", "Fedora Linux 41", "Ubuntu 24.04", ""] {
                let i = t.install(os);
                assert!(
                    i.starts_with("apt-get install ")
                        || i.starts_with("dnf install ")
                        || i.starts_with("cargo install "),
                    "{t:?} {os}: {i}"
                );
            }
        }
        assert_eq!(
            Tool::Ptsematest.install("Fedora Linux 41"),
            "dnf install realtime-tests"
        );
        assert_eq!(
            Tool::PerfBench.install("Ubuntu 24.04"),
            "apt-get install linux-tools-generic"
        );
    }

    #[test]
    fn versions_are_read_from_what_the_tools_say() {
        let v = |t, s| parse_version(t, s);
        assert_eq!(
            v(
                Tool::LikwidBench,
                "likwid-perfctr -- Version 5.2.2 (commit: 233ab94)"
            ),
            Some("5.2.2".into())
        );
        assert_eq!(
            v(Tool::Ptsematest, "ptsematest V 2.40\nUsage:"),
            Some("2.40".into())
        );
        assert_eq!(
            v(Tool::PerfBench, "perf version 6.1.187"),
            Some("6.1.187".into())
        );
        assert_eq!(v(Tool::PerfBench, "no such thing"), None);
    }

    #[test]
    fn a_tool_that_overruns_is_stopped() {
        let out = run(
            Path::new("/bin/sleep"),
            &["5".into()],
            Duration::from_millis(100),
        );
        assert!(out.is_err_and(|e| e.to_string().contains("did not finish")));
        let ok = run(
            Path::new("/bin/echo"),
            &["hi".into()],
            Duration::from_secs(5),
        )
        .expect("echo runs");
        assert_eq!(ok.stdout.trim(), "hi");
        assert_eq!(ok.code, Some(0));
    }
}
