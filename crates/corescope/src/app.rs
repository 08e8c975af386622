//! The commands: validate options, build contexts, run, save, print.
//! Measuring happens in `runner` and `probes`; this layer only orchestrates and
//! writes results to stdout/stderr and files.

use crate::cli::{
    self, Command, CompareArgs, DoctorArgs, PlaceArgs, PlanArgs, ReportArgs, RunArgs, TopoArgs,
    TuneArgs,
};
use crate::clock::{self, Clock};
use crate::model::{Profile, RunFile};
use crate::placement;
use crate::probes::channel_tune as tune;
use crate::probes::{self, AnyProbe, Event, Overrides, PlanCtx};
use crate::render::{csv as csv_out, html, terminal, topo};
use crate::session::{self, default_out_name, hostname_for_file, Session};
use crate::{crosscheck, interrupt, runner, store, topology};
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;

/// Carry out a parsed command line.
pub fn main_with(cli: cli::Cli) -> Result<()> {
    match cli.command {
        None => run(cli.run),
        Some(Command::Run(a)) => run(a),
        Some(Command::List) => list(),
        Some(Command::Topo(a)) => topo_cmd(a),
        Some(Command::Place(a)) => place(a),
        Some(Command::Plan(a)) => plan_cmd(a),
        Some(Command::Report(a)) => report(a),
        Some(Command::Compare(a)) => compare(a),
        Some(Command::Reference(c)) => reference_cmd(c),
        Some(Command::Tune(a)) => tune_cmd(a),
        Some(Command::Mpi(a)) => crate::mpi::main(a),
        Some(Command::Doctor(a)) => doctor_cmd(a),
        Some(Command::Crosscheck(a)) => crosscheck_cmd(a),
        Some(Command::Fleet(a)) => crate::fleet::main(a),
    }
}

/// How long `doctor` samples `/proc/stat` for the steal now (as `env` does).
const DOCTOR_STEAL_WINDOW: std::time::Duration = crate::topology::host::STEAL_SAMPLE;
/// Round trips `doctor --measure` times between the first two CPUs (each about
/// 400 ping-pongs, at most 20 ms; see `drift::round_trip`).
const DOCTOR_ROUND_TRIPS: usize = 8;

fn doctor_cmd(a: DoctorArgs) -> Result<()> {
    use crate::doctor::{self, tune};
    use crate::render::doctor as words;
    use crate::topology::knobs::HostFiles;
    let files = a
        .root
        .clone()
        .map_or_else(HostFiles::live, HostFiles::under);
    let state = tune::state_path();
    // Only the live machine needs root; a tree under --root is the user's own.
    let may_write = !files.is_live() || tune::is_root();
    if a.reset {
        let saved = tune::load(&state)?;
        out_text(&format!(
            "doctor --reset: {} values to write back (saved in {}):\n{}",
            saved.writes.len(),
            state.display(),
            words::writes(&saved.writes)
        ))?;
        if !may_write {
            bail!("not root: nothing written; run `sudo corescope doctor --reset`");
        }
        if !confirm("Write these values back?", a.yes, "--reset")? {
            return out_text("nothing written\n");
        }
        let out = tune::reset(&state)?;
        return report_writes(&out, "restored");
    }
    let round_trips_ns = if a.measure {
        let topo = topology::detect().context("could not read this machine's topology")?;
        Some(doctor::measure_round_trips(&topo, DOCTOR_ROUND_TRIPS))
    } else {
        None
    };
    let opts = doctor::Options {
        steal_window: files.is_live().then_some(DOCTOR_STEAL_WINDOW),
        round_trips_ns,
    };
    let checks = doctor::read(&files, &opts);
    if a.json {
        out_text(&format!("{}\n", serde_json::to_string_pretty(&checks)?))?;
    } else {
        out_text(&words::table(&checks, terminal::width()))?;
    }
    if !a.tune {
        return Ok(());
    }
    let writes: Vec<_> = checks.writes().cloned().collect();
    if writes.is_empty() {
        return out_text("doctor --tune: nothing this machine lets corescope set\n");
    }
    out_text(&format!(
        "\ndoctor --tune would write ({} kept in {} for --reset):\n{}",
        writes.len(),
        state.display(),
        words::writes(&writes)
    ))?;
    if !may_write {
        bail!("not root: nothing written; run `sudo corescope doctor --tune`");
    }
    if !confirm("Write these values?", a.yes, "--tune")? {
        return out_text("nothing written\n");
    }
    let out = tune::tune(&writes, &state)?;
    report_writes(&out, "written")
}

/// Ask `question` on stderr and read y/N from stdin; `yes` answers it. Refuses
/// (an error) when stdin is not a terminal to ask on.
fn confirm(question: &str, yes: bool, flag: &str) -> Result<bool> {
    use std::io::IsTerminal;
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        bail!("doctor {flag}: stdin is not a terminal to ask on; nothing written (add --yes to write without asking)");
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ").and_then(|()| err.flush());
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .context("reading the answer")?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// What a tune or reset did; an error when a write was refused.
fn report_writes(out: &crate::doctor::tune::Outcome, verb: &str) -> Result<()> {
    use crate::render::doctor as words;
    let mut text = format!("{verb}: {}\n{}", out.done.len(), words::writes(&out.done));
    if let Some(state) = &out.state {
        text.push_str(&format!(
            "old values kept in {} (`corescope doctor --reset` writes them back)\n",
            state.display()
        ));
    }
    out_text(&text)?;
    if !out.failed.is_empty() {
        bail!(
            "{} writes refused:\n{}",
            out.failed.len(),
            words::failures(&out.failed).trim_end()
        );
    }
    Ok(())
}

/// `corescope crosscheck`: validate, calibrate, run the rows with a progress line,
/// save them in a run file (and its HTML), print the table.
fn crosscheck_cmd(a: cli::CrosscheckArgs) -> Result<()> {
    for p in &a.probes {
        if !crosscheck::PROBES.contains(&p.as_str()) {
            bail!(
                "crosscheck: no rows for '{}'; rows exist for {}",
                crate::render::clean(p, 80, false),
                crosscheck::PROBES.join(", ")
            );
        }
    }
    let rounds = a.rounds.map_or(crosscheck::DEFAULT_ROUNDS, usize::from);
    let out = match &a.out {
        Some(p) => p.clone(),
        None => PathBuf::from(default_out_name(&hostname_for_file()).replacen(
            "corescope-",
            "corescope-crosscheck-",
            1,
        )),
    };
    check_run_outputs(&out, a.no_html)?;
    let topo = topology::detect().context("could not read this machine's topology")?;
    let lock = store::OutputLock::acquire(&out)?;
    interrupt::install().context("installing the SIGINT/SIGTERM/SIGHUP handlers")?;
    let profile = Profile::Default;
    let clock = session::calibrated_clock(profile, &topo, true);
    let header = session::header(topo.clone(), &clock, profile);
    let os = header.host.os.clone();
    let mut session = Session::with_lock(&out, lock, header)?;
    let setup = crosscheck::Setup {
        topo: &topo,
        clock: &clock,
        os: &os,
        rounds,
        probes: &a.probes,
    };
    let progress = !a.no_progress;
    // On a terminal one line redrawn in place; elsewhere (a log) one line per row.
    let redraw = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut on_progress = |p: &crosscheck::Progress| {
        if !progress || (!redraw && p.round.0 != 0) {
            return;
        }
        let round = if p.round.0 == 0 {
            "warm-up".to_string()
        } else {
            format!("round {}/{}", p.round.0, p.round.1)
        };
        let line = format!(
            "crosscheck: row {}/{} {:<28} {round:<12}",
            p.row.0 + 1,
            p.row.1,
            p.id
        );
        if redraw {
            let _ = write!(std::io::stderr(), "\r{line}");
        } else {
            note(&line);
        }
    };
    let cc = crosscheck::run(&setup, &mut on_progress);
    if progress && redraw {
        note("");
    }
    let text = if a.markdown {
        crate::render::crosscheck::markdown(&cc)
    } else {
        crate::render::crosscheck::table(&cc, terminal::width())
    };
    session.run.crosscheck = Some(cc);
    session.save()?;
    let mut screen = Screen::default();
    screen.show(&text)?;
    // Written whatever happened to stdout.
    let html_note = write_run_html(&session.run, &out, a.no_html)?;
    screen.show(&format!(
        "\nrun file: {}\n{html_note}again: corescope report {}\n",
        out.display(),
        out.display()
    ))?;
    if let Some(sig) = interrupt::requested() {
        return Err(interrupt::Interrupted(sig).into());
    }
    screen.finish(&format!("run file: {}", out.display()))
}

fn reference_cmd(c: cli::ReferenceCmd) -> Result<()> {
    use crate::render::reference as text;
    match c {
        cli::ReferenceCmd::List => out_text(&text::list(&crate::reference::all()?)),
        cli::ReferenceCmd::Show { name } => out_text(&text::show(&crate::reference::get(&name)?)),
        cli::ReferenceCmd::Compare { run, name } => {
            let r = crate::reference::get(&name)?;
            let run = store::load(&run)?;
            out_text(&text::compare(&crate::render::for_display(&run), &r))
        }
    }
}

/// Write text to stdout and flush, so that a closed pipe or a full disk
/// (`> /dev/full`) is an error `main` reports, never a panic.
fn out_text(text: &str) -> Result<()> {
    write_stdout(text).context("writing to stdout")
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut so = std::io::stdout().lock();
    so.write_all(text.as_bytes()).and_then(|()| so.flush())
}

/// A line on stderr. A stderr that is closed or a pipe whose reader went
/// away (`corescope run 2>&1 | head -1`) is ignored: `eprintln!` would panic.
fn note(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Stdout for the commands that measure and then write files (`run`, `tune`).
/// A reader that goes away (`corescope run | head -1`) must not end the
/// command before its run file and report are written: after the first
/// broken pipe nothing more is printed, the command goes on, and
/// [`Screen::finish`] says on stderr what was not shown. Other write errors
/// (a full disk) end the command as before.
#[derive(Debug, Default)]
struct Screen {
    closed: bool,
}

impl Screen {
    /// Print `text`, unless stdout has closed.
    fn show(&mut self, text: &str) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        match write_stdout(text) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other.context("writing to stdout"),
        }
    }

    /// At the end: when stdout closed, a line on stderr naming what was
    /// written (`written`) and the broken pipe as the error (status 141);
    /// else nothing.
    fn finish(self, written: &str) -> Result<()> {
        if !self.closed {
            return Ok(());
        }
        note(&format!(
            "corescope: stdout was closed early, so the rest of the output was not shown; \
             {written}"
        ));
        Err(anyhow::Error::new(std::io::Error::from(
            std::io::ErrorKind::BrokenPipe,
        )))
    }
}

fn list() -> Result<()> {
    let mut out = std::io::stdout().lock();
    for p in probes::registry() {
        writeln!(out, "{:<14} {}", p.id(), p.title())?;
    }
    Ok(())
}

fn load_topology(synthetic: Option<&str>, xml: Option<&PathBuf>) -> Result<topology::Topology> {
    Ok(match (synthetic, xml) {
        (Some(spec), _) => topology::from_synthetic(spec)?,
        (None, Some(path)) => topology::from_xml_file(path)?,
        (None, None) => topology::detect().context("could not read this machine's topology")?,
    })
}

fn topo_cmd(a: TopoArgs) -> Result<()> {
    if let Some(out) = &a.out {
        let inputs: Vec<store::Named> = [("--from", &a.run), ("--xml", &a.xml)]
            .into_iter()
            .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
            .collect();
        store::refuse_aliases(&inputs, &[("--out", out)])?;
    }
    let run = match &a.run {
        Some(path) => {
            Some(store::load(path).with_context(|| format!("could not read {}", path.display()))?)
        }
        None => None,
    };
    let t = match &run {
        Some(r) => r.topology.clone(),
        None => load_topology(a.synthetic.as_deref(), a.xml.as_ref())?,
    };
    if let Some(format) = a.export {
        let text = crate::topo_export::export_text(&a, format, &t, run.as_ref())?;
        return match &a.out {
            Some(path) => store::write_output(path, text.as_bytes())
                .with_context(|| format!("could not write {}", path.display())),
            None => out_text(&text),
        };
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &t)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", topo::topo_table(&t))?;
        if let Some(r) = &run {
            write!(out, "{}", topo::measured_sharing(r))?;
            write!(out, "{}", topo::topology_vs_measured(r))?;
        }
    }
    Ok(())
}

fn place(a: PlaceArgs) -> Result<()> {
    let threads = a.threads;
    let t = load_topology(a.synthetic.as_deref(), a.xml.as_ref())?;
    let strategy = cli::parse_strategy(&a.strategy).map_err(|e| anyhow!(e))?;
    strategy.validate(&t)?;
    let cpus = placement::assign(&t, &strategy, threads)?;
    out_text(&format!("{}\n", placement::format_assignment(&cpus)))
}

fn plan_cmd(a: PlanArgs) -> Result<()> {
    let probes = select_probes(&a.probes)?;
    // The run file first: a bad one fails before the calibration.
    let check_run = a.check.as_deref().map(store::load).transpose()?;
    let here = topology::detect().context("could not read this machine's topology")?;
    let cal = if a.reference {
        crate::estimate::Calibration::reference()
    } else {
        crate::estimate::Calibration::measure(&here)
    };
    if let Some(run) = &check_run {
        let rows = crate::estimate::check(run, &cal);
        return if a.json {
            out_text(&format!("{}\n", serde_json::to_string_pretty(&rows)?))
        } else {
            out_text(&crate::render::plan::check(&rows))
        };
    }
    let topo = match (a.synthetic.as_deref(), a.xml.as_ref()) {
        (None, None) => here,
        (s, x) => load_topology(s, x)?,
    };
    let profile = Profile::from_flags(a.quick, a.full);
    let budget_s = a.budget_s.unwrap_or_else(|| cli::default_budget_s(profile));
    let ctx = crate::estimate::plan_ctx(topo, profile, budget_s);
    let report = crate::estimate::plan_all(&probes, &ctx, &cal);
    let fleet = a
        .fleet
        .map(|n| crate::fleet::cost::price(&report, usize::try_from(n).unwrap_or(usize::MAX)));
    if a.json {
        let json = match &fleet {
            Some(f) => {
                serde_json::to_string_pretty(&serde_json::json!({"node": report, "fleet": f}))?
            }
            None => serde_json::to_string_pretty(&report)?,
        };
        return out_text(&format!("{json}\n"));
    }
    let mut text = crate::render::plan::summary(&report);
    if !a.summary {
        text.push_str(&crate::render::plan::cases(&report));
    }
    if let Some(f) = &fleet {
        text.push_str(&crate::fleet::cost::words(f));
    }
    out_text(&text)
}

fn report(a: ReportArgs) -> Result<()> {
    if let Some(w) = a.width {
        terminal::set_width(w);
    }
    let run = store::load(&a.run)?;
    let csv_files = a
        .csv
        .as_ref()
        .map(|dir| csv_out::planned_files(&run, dir))
        .unwrap_or_default();
    let mut outputs: Vec<store::Named> = Vec::new();
    if let Some(out) = &a.html {
        outputs.push(("--html", out));
    }
    if let Some(dir) = &a.csv {
        outputs.push(("--csv", dir));
        outputs.extend(csv_files.iter().map(|f| ("--csv", f.as_path())));
    }
    store::refuse_aliases(&[(INPUT_RUN_FILE, &a.run)], &outputs)?;
    let mut wrote = false;
    if let Some(out) = &a.html {
        store::write_output(out, html::render_run(&run).as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        note(&format!("report: {}", out.display()));
        wrote = true;
    }
    if let Some(dir) = &a.csv {
        // Each file made exclusively and renamed over its name: a link planted
        // in the directory under one of the names is replaced, never followed.
        let files = csv_out::write_dir(&run, dir, &|p, fill| store::write_atomic_with(p, fill))
            .with_context(|| format!("writing CSV files into {}", dir.display()))?;
        note(&format!("csv: {} files in {}", files.len(), dir.display()));
        wrote = true;
    }
    if a.markdown {
        out_text(&html::markdown(&run))?;
    } else if a.summary {
        out_text(&crate::render::summary::render(&run, terminal::width()))?;
    } else if !wrote {
        // The answers first (the one-screen summary), the warnings by cause, then
        // every table.
        out_text(&format!(
            "{}\n{}\n{}",
            crate::render::summary::render(&run, terminal::width()),
            crate::render::warning_overview::render(&run, terminal::width()),
            terminal::render_run(&run)
        ))?;
    }
    Ok(())
}

fn compare(a: CompareArgs) -> Result<()> {
    if let Some(w) = a.width {
        terminal::set_width(w);
    }
    let runs = a
        .runs
        .iter()
        .map(|p| store::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let only: Option<Vec<String>> = a.probes.as_deref().map(|l| {
        l.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    });
    if only.as_ref().is_some_and(Vec::is_empty) {
        bail!(
            "--probes '{}' names no probe; give probe ids separated by commas, e.g. \
             compute,memory",
            a.probes.as_deref().unwrap_or_default()
        );
    }
    if let Some(only) = &only {
        let known: Vec<&str> = runs
            .iter()
            .flat_map(|r| r.probes.iter().map(|p| p.id.as_str()))
            .collect();
        if let Some(bad) = only.iter().find(|id| !known.contains(&id.as_str())) {
            bail!(
                "--probes: '{bad}' is in none of the run files (they hold: {})",
                {
                    let mut k = known.clone();
                    k.sort();
                    k.dedup();
                    k.join(", ")
                }
            );
        }
    }
    if let Some(out) = &a.html {
        let inputs: Vec<store::Named> = a
            .runs
            .iter()
            .map(|p| (INPUT_RUN_FILE, p.as_path()))
            .collect();
        store::refuse_aliases(&inputs, &[("--html", out)])?;
        store::write_output(
            out,
            crate::render::compare::render_html(&runs, only.as_deref()).as_bytes(),
        )
        .with_context(|| format!("writing {}", out.display()))?;
        note(&format!("comparison: {}", out.display()));
    }
    out_text(&crate::render::compare::render_text_width(
        &runs,
        only.as_deref(),
        terminal::width(),
    ))
}

/// How messages name a run file a command reads.
const INPUT_RUN_FILE: &str = "the input run file";

/// The HTML report's path for a run file: `x.json` → `x.html`.
pub fn html_path_for(run_file: &std::path::Path) -> PathBuf {
    if run_file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html"))
    {
        run_file.with_extension("report.html")
    } else {
        run_file.with_extension("html")
    }
}

/// Targets `tune` knows.
pub const TUNE_TARGETS: [&str; 1] = [tune::TUNE_TARGET];

fn tune_cmd(a: TuneArgs) -> Result<()> {
    if !TUNE_TARGETS.contains(&a.target.as_str()) {
        bail!(
            "unknown tuning target '{}'; known targets: {}",
            a.target,
            TUNE_TARGETS.join(", ")
        );
    }
    let event_bytes = a.event_bytes.unwrap_or(tune::DEFAULT_EVENT_BYTES);
    tune::event_size_for(event_bytes).map_err(|e| anyhow!(e))?;
    let budget_s = a.budget_s.unwrap_or(tune::DEFAULT_BUDGET_S);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("hspc-{}.json", hostname_for_file())));
    let mut outputs: Vec<store::Named> = vec![("--out", &out)];
    if let Some(rf) = &a.run_file {
        outputs.push(("--run-file", rf));
    }
    let inputs: Vec<store::Named> = a
        .against
        .iter()
        .map(|f| ("--against", f.as_path()))
        .collect();
    store::refuse_aliases(&inputs, &outputs)?;
    store::check_writable(&out).map_err(|e| anyhow!("--out: {e}"))?;
    if let Some(rf) = &a.run_file {
        store::check_writable(rf).map_err(|e| anyhow!("--run-file: {e}"))?;
    }
    let against = a
        .against
        .iter()
        .map(|f| read_against(f))
        .collect::<Result<Vec<_>>>()?;
    let topo = topology::detect().context("could not read this machine's topology")?;
    let clock = session::calibrated_clock(Profile::Quick, &topo, false);
    let header = session::header(topo.clone(), &clock, Profile::Default);
    let mut session = match &a.run_file {
        Some(rf) => Session::open(rf, header)?,
        None => Session::in_memory(header),
    };
    let probe = tune::ChannelTune {
        options: Some(tune::Options {
            event_bytes,
            budget_s,
            against,
        }),
    };
    // The tuner keeps to its own budget; the runner's deadline is a backstop.
    let ctx = PlanCtx {
        topo,
        clock,
        profile: Profile::Default,
        overrides: Overrides::default(),
        budget_s: budget_s * 1.5 + 10.0,
    };
    note(&format!("tune channel: budget {budget_s:.0} s"));
    let started_ns = clock::now_ns();
    let mut check = |at: &str| crate::drift::check(at, &ctx.topo, started_ns);
    let probes: [Box<dyn AnyProbe>; 1] = [Box::new(probe)];
    let mut screen = Screen::default();
    runner::run_suite(
        &probes,
        &ctx,
        &mut session,
        &mut |_| {},
        &mut check,
        |_, p| screen.show(&terminal::render_probe(p)),
    )?;
    let result = session
        .run
        .probes
        .last()
        .ok_or_else(|| anyhow!("tune channel: nothing was measured"))?;
    let best: hspc::Config = result
        .params
        .get("best_config")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .ok_or_else(|| {
            anyhow!(
                "tune channel: {} ({})",
                result.status.name(),
                result.reason.clone().unwrap_or_default()
            )
        })?;
    store::write_output(&out, tune::config_json(&best).as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    let mut lines = format!("config: {}\n", out.display());
    if let Some(rf) = &a.run_file {
        lines.push_str(&format!("run file: {}\n", rf.display()));
    }
    screen.show(&lines)?;
    screen.finish(&lines.trim_end().replace('\n', ", "))
}

/// Largest channel a `--against` configuration may allocate (1 GiB; the
/// tuner's own contenders take a few MiB): a 1 TiB ring is refused here, not
/// by an allocation failure in the middle of a measurement.
pub const MAX_AGAINST_CHANNEL_BYTES: usize = 1 << 30;

/// A configuration file given to `tune channel --against`: JSON that
/// `hspc::Config` reads, valid for the tuner's 24-byte events.
fn read_against(file: &std::path::Path) -> Result<tune::Against> {
    let text = crate::input::read_text(file).map_err(|e| {
        anyhow!(
            "--against {}: cannot read it: {}",
            file.display(),
            e.problem
        )
    })?;
    let config: hspc::Config = serde_json::from_str(&text).with_context(|| {
        format!(
            "--against {}: not a channel configuration (JSON as `tune channel` writes it)",
            file.display()
        )
    })?;
    let geometry = config
        .geometry_for(tune::DEFAULT_EVENT_BYTES, 8)
        .map_err(|e| anyhow!("--against {}: {e}", file.display()))?;
    if geometry.total_bytes() > MAX_AGAINST_CHANNEL_BYTES {
        bail!(
            "--against {}: the channel would take {} bytes, more than the {} a raced \
             configuration may take",
            file.display(),
            geometry.total_bytes(),
            MAX_AGAINST_CHANNEL_BYTES
        );
    }
    Ok(tune::Against {
        name: file.display().to_string(),
        config,
    })
}

/// "unknown probe" with a suggestion: a command when the word is a misspelt
/// one (`corescope reprot` means `report`), else the closest probe.
fn unknown_probe(id: &str, known: &[&str]) -> String {
    if let Some(cmd) = cli::suggest(id, &cli::COMMANDS) {
        return format!("'{id}' is neither a command nor a probe; did you mean `corescope {cmd}`?");
    }
    match cli::suggest(id, known) {
        Some(p) => format!("unknown probe '{id}'; did you mean '{p}'? (see `corescope list`)"),
        None => format!("unknown probe '{id}'; known probes: {}", known.join(", ")),
    }
}

/// The probes named on the command line (all when none is).
fn select_probes(ids: &[String]) -> Result<Vec<Box<dyn AnyProbe>>> {
    if ids.is_empty() {
        return Ok(probes::registry());
    }
    let known: Vec<&str> = probes::registry()
        .iter()
        .map(|p| p.id())
        .collect::<Vec<_>>();
    let mut v = Vec::new();
    for id in ids {
        match probes::find(id) {
            Some(p) => v.push(p),
            None => bail!("{}", unknown_probe(id, &known)),
        }
    }
    Ok(v)
}

/// Validated options of `run`.
struct RunPlan {
    probes: Vec<Box<dyn AnyProbe>>,
    ctx: PlanCtx,
    out: PathBuf,
    progress: bool,
}

fn validate_run(a: &RunArgs, topo: topology::Topology) -> Result<RunPlan> {
    let probes = select_probes(&a.probes)?;
    let threads = a.threads.clone();
    if let Some(&most) = threads.as_ref().and_then(|t| t.last()) {
        let (cap, why) = crate::harness::team::thread_capacity();
        if most > cap {
            bail!(
                "--threads {most}: this system can create about {cap} more threads \
                 (the limit is {why}); ask for at most {cap}"
            );
        }
    }
    let placements = if a.placement.is_empty() {
        None
    } else {
        let p = cli::parse_placements(&a.placement).map_err(|e| anyhow!("--placement: {e}"))?;
        for s in &p {
            s.validate(&topo).map_err(|e| anyhow!("--placement: {e}"))?;
        }
        Some(p)
    };
    let profile = Profile::from_flags(a.quick, a.full);
    let budget_s = a.budget_s.unwrap_or_else(|| cli::default_budget_s(profile));
    let out = match &a.out {
        Some(p) => p.clone(),
        None => PathBuf::from(default_out_name(&hostname_for_file())),
    };
    check_run_outputs(&out, a.no_html)?;
    // The clock is calibrated after validation so bad input fails fast.
    let ctx = PlanCtx {
        topo,
        clock: Clock::from_info(Default::default()),
        profile,
        overrides: Overrides {
            threads,
            placements,
            epochs: a.epochs.map(usize::from),
        },
        budget_s,
    };
    Ok(RunPlan {
        probes,
        ctx,
        out,
        progress: !a.no_progress,
    })
}

fn run(a: RunArgs) -> Result<()> {
    let topo = topology::detect().context("could not read this machine's topology")?;
    let mut plan = validate_run(&a, topo)?;
    // Held until the run ends: a second run with the same --out refuses; the
    // header is saved at once, so a run file exists from the first second.
    let lock = store::OutputLock::acquire(&plan.out)?;
    interrupt::install().context("installing the SIGINT/SIGTERM/SIGHUP handlers")?;
    plan.ctx.clock = session::calibrated_clock(plan.ctx.profile, &plan.ctx.topo, true);
    let header = session::header(plan.ctx.topo.clone(), &plan.ctx.clock, plan.ctx.profile);
    let mut session = Session::with_lock(&plan.out, lock, header)?;
    let mut screen = Screen::default();
    screen.show(&terminal::header(&session.run))?;
    if let Some(d) = &session.run.doctor {
        let blur: Vec<&str> = d.blurring().map(|c| c.id.name()).collect();
        if !blur.is_empty() {
            screen.show(&format!(
                "blurring: {} (see `corescope doctor`)\n",
                blur.join(", ")
            ))?;
        }
    }

    let bar = if plan.progress {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let show_lines = plan.progress && bar.is_hidden();
    let mut on_event = |e: Event| match e {
        Event::ProbeStart { id, cases } => {
            bar.reset();
            bar.set_length(cases as u64);
            bar.set_prefix(id.clone());
            if show_lines {
                note(&format!("corescope: {id}: {cases} cases"));
            }
        }
        Event::CaseStart { index, label, .. } => {
            bar.set_position(index as u64);
            bar.set_message(label);
        }
        Event::ProbeEnd { id, status } => {
            bar.set_position(bar.length().unwrap_or(0));
            if show_lines {
                note(&format!("corescope: {id}: {status}"));
            }
        }
    };
    let verbose = a.verbose;
    let started_ns = clock::now_ns();
    let topo = plan.ctx.topo.clone();
    let mut check = |at: &str| crate::drift::check(at, &topo, started_ns);
    runner::run_suite(
        &plan.probes,
        &plan.ctx,
        &mut session,
        &mut on_event,
        &mut check,
        |_, p| -> Result<()> {
            match verbose {
                true => bar.suspend(|| screen.show(&format!("\n{}", terminal::render_probe(p)))),
                false => Ok(()),
            }
        },
    )?;
    bar.finish_and_clear();
    if a.verbose {
        screen.show(&terminal::drift_summary(&session.run))?;
    } else {
        screen.show(&format!(
            "\n{}",
            crate::render::summary::render(&session.run, terminal::width())
        ))?;
    }
    // Written even when a signal stopped the run or stdout closed: the HTML
    // shows what was measured.
    let html_note = write_run_html(&session.run, &plan.out, a.no_html)?;
    screen.show(&format!(
        "\nrun file: {}\n{html_note}full tables: corescope report {}\n",
        plan.out.display(),
        plan.out.display()
    ))?;
    let written = format!(
        "run file: {}{}",
        plan.out.display(),
        html_output(&plan.out, a.no_html)
            .map(|h| format!(", report: {}", h.display()))
            .unwrap_or_default()
    );
    let shown = screen.finish(&written);
    match interrupt::requested() {
        Some(sig) => Err(interrupt::Interrupted(sig).into()),
        None => shown,
    }
}

/// The run file and the HTML report next to it can be written and are not the same
/// file (checked before anything is measured).
fn check_run_outputs(out: &std::path::Path, no_html: bool) -> Result<()> {
    let html = html_output(out, no_html);
    let mut outputs: Vec<store::Named> = vec![("--out", out)];
    if let Some(h) = &html {
        outputs.push(("the HTML report", h));
    }
    store::refuse_aliases(&[], &outputs)?;
    store::check_writable(out).map_err(|e| anyhow!("--out: {e}"))?;
    Ok(())
}

/// Where `run` writes its HTML report: next to the run file, unless asked not
/// to or the run file is a device, FIFO or symlink (no sibling to write then).
fn html_output(out: &std::path::Path, no_html: bool) -> Option<PathBuf> {
    (!no_html && store::output_kind(out) != store::OutputKind::WriteThrough)
        .then(|| html_path_for(out))
}

/// The HTML report next to the run file (`x.json` → `x.html`), unless asked not
/// to or the run file is a device, FIFO or symlink (no sibling to write then).
/// Returns the line to print about it.
fn write_run_html(run: &RunFile, out: &std::path::Path, no_html: bool) -> Result<String> {
    if no_html {
        return Ok(String::new());
    }
    let Some(path) = html_output(out, no_html) else {
        return Ok(format!(
            "report:   none ({} is not a regular file; use `corescope report --html`)\n",
            out.display()
        ));
    };
    store::write_output(&path, html::render_run(run).as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(format!(
        "report:   {} (open in a browser)\n",
        path.display()
    ))
}
