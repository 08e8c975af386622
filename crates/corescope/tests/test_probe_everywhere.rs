//! A probe defined in this file only, registered in a registry of this test's own,
//! appears wherever a probe appears, with no other edit (issue 38): in `plan`,
//! priced by its own cost (`Probe::run_cost_s`); in the terminal summary and the
//! HTML report's answers with its own headline (`Probe::summary_shape`); and in
//! every renderer of a run file (the terminal report, the HTML report, Markdown,
//! the CSV export, the warnings' overview, `compare`) with its id, title, series,
//! distribution, finding and warning, and, where a report shows them, the pair of
//! one quantity it declares (`Probe::same_quantities`). The same result drawn
//! with the build's registry, which does not know the probe, gets neither its
//! headline nor its pair: what shows is this registry's doing.

use corescope::estimate::{plan_all, plan_ctx, Calibration, PlanReport, STARTUP_S};
use corescope::model::{
    Measurement, Pick, Point, ProbeResult, Profile, RunFile, SameQuantity, Status, SummaryShape,
};
use corescope::probes::cost::Cost;
use corescope::probes::{AnyProbe, Case, Plan, PlanCtx, Probe, ProbeError, Rounds, RunCtx};
use corescope::render::plan::{self, duration};
use corescope::render::{compare, csv, html, summary, terminal, warning_overview};
use serde::Serialize;

/// The probe's title, as it records it in its results.
const TITLE: &str = "a kettle of this test only";
/// Its finding and its warning, as the run file holds them.
const FINDING: &str = "the water was hot before the whistle";
const WARNING: &str = "the lid was left open";
/// Its headline: the median of `boil/<where>/whistle` per where.
const HEADLINE: &str = "the kettle whistles after 3.000 µs on kitchen";
/// What its pair of one quantity measures.
const PAIR: &str = "a pour, linear or scattered";

/// The test's probe: pours of some steps by a team of threads. `priced`: whether
/// it states what a run costs (a twin that does not is priced by the model's guess).
struct Kettle {
    id: &'static str,
    priced: bool,
}

/// One case: a team pours this many steps.
#[derive(Debug, Clone, Serialize)]
struct Pour {
    threads: usize,
    steps: u64,
}

/// Its one figure measured two ways, compared in every report that shows pairs.
const SAME_POUR: [SameQuantity; 1] = [SameQuantity {
    what: PAIR,
    series: "pour/linear",
    x: Pick::First,
    other_probe: "kettle",
    other_series: "pour/scatter",
    other_x: Pick::First,
    other_param: None,
    tolerance: 0.10,
}];

impl Probe for Kettle {
    type Params = Pour;
    type Facts = ();
    fn id(&self) -> &'static str {
        self.id
    }
    fn title(&self) -> &'static str {
        TITLE
    }
    fn plan(&self, _ctx: &PlanCtx) -> Result<Plan<Pour>, ProbeError> {
        let pour = |label: &str, threads, steps| Case::new(label, &Pour { threads, steps });
        Ok(Plan::new(vec![
            pour("one pour", 1, 500),
            pour("four pourers", 4, 1_500),
            pour("a pour again", 1, 300).with_rounds(Rounds::REPEATED),
        ]))
    }
    fn run(&self, _case: &Case<Pour>, _ctx: &mut RunCtx) -> Result<Measurement, ProbeError> {
        Err(ProbeError::Skipped("never run here".into()))
    }
    /// A step takes a millisecond; a team larger than the CPUs pours in waves.
    fn run_cost_s(&self, pour: &Pour, cost: &Cost) -> Option<f64> {
        let one_wave_s = pour.steps as f64 / 1000.0;
        self.priced.then(|| one_wave_s * cost.waves(pour.threads))
    }
    fn summary_shape(&self) -> SummaryShape {
        SummaryShape::PlacedMedians {
            prefix: "boil/",
            head_part: "whistle",
            head_lead: "the kettle whistles after",
            item_lead: "kettle in",
            item_parts: &[("whistle", "it whistles after")],
        }
    }
    fn same_quantities(&self) -> &'static [SameQuantity] {
        &SAME_POUR
    }
}

const KETTLE: Kettle = Kettle {
    id: "kettle",
    priced: true,
};

fn registry() -> Vec<Box<dyn AnyProbe>> {
    vec![Box::new(KETTLE)]
}

/// The plan of the kettle and its unpriced twin on a 2-CPU machine, one epoch,
/// with the reference calibration (no timing).
fn plan_of_two() -> PlanReport {
    let topo = corescope::topology::from_synthetic("pack:1 core:2 pu:1").expect("a 2-CPU machine");
    let mut ctx = plan_ctx(topo, Profile::Default, 600.0);
    ctx.overrides.epochs = Some(1);
    let twin = Kettle {
        id: "kettle-unpriced",
        priced: false,
    };
    let probes: Vec<Box<dyn AnyProbe>> = vec![Box::new(KETTLE), Box::new(twin)];
    plan_all(&probes, &ctx, &Calibration::reference())
}

#[test]
fn plan_prices_a_probe_of_one_file_by_its_own_cost() {
    let r = plan_of_two();
    let [kettle, twin] = &r.probes[..] else {
        panic!("two probes planned: {:?}", r.probes);
    };
    assert_eq!(
        (kettle.id.as_str(), kettle.status.as_str()),
        ("kettle", "planned")
    );
    assert!(kettle.modelled && !twin.modelled);
    let runs: Vec<f64> = kettle.cases.iter().map(|c| c.runs).collect();
    assert_eq!(runs, [1.0, 1.0, 7.0], "once, once, 6 rounds and a warm-up");
    let seconds: Vec<f64> = kettle.cases.iter().map(|c| c.seconds).collect();
    // 500 steps of 1 ms; 1,500 steps in two waves of 2 CPUs; 300 steps 7 times.
    assert_eq!(seconds, [0.5, 1.5 * 2.0, 7.0 * 0.3]);
    let unknown: Vec<f64> = twin.cases.iter().map(|c| c.seconds).collect();
    assert_eq!(
        unknown,
        [1.0, 1.0, 7.0],
        "the model's 1 s a run for the twin"
    );
    // The probe's seconds are its cases' plus the checks after it, alike for both.
    let checks = |p: &corescope::estimate::ProbeEstimate| {
        p.seconds - p.cases.iter().map(|c| c.seconds).sum::<f64>()
    };
    assert!((checks(kettle) - checks(twin)).abs() < 1e-12);
    assert!(checks(kettle) > 0.0);
    assert_eq!(r.total_s, STARTUP_S + (kettle.seconds + twin.seconds));
}

#[test]
fn plan_shows_the_probes_typed_cases_and_their_prices() {
    let r = plan_of_two();
    let kettle = &r.probes[0];
    let threads: Vec<usize> = kettle.cases.iter().map(|c| c.threads).collect();
    assert_eq!(threads, [1, 4, 1]);
    let sizes: Vec<&str> = kettle.cases.iter().map(|c| c.size.as_str()).collect();
    assert_eq!(sizes, ["steps=500", "steps=1500", "steps=300"]);
    let cases = plan::cases(&r);
    assert!(cases.contains("kettle — 3 cases"), "{cases}");
    for (label, price) in [
        ("one pour", "0.5 s"),
        ("four pourers", "3.0 s"),
        ("a pour again", "2.1 s"),
    ] {
        let row = cases.lines().find(|l| l.contains(label)).unwrap_or("");
        assert!(row.contains(price), "{label}: {price}\n{cases}");
    }
    let table = plan::summary(&r);
    let row = |id: &str| {
        let cell = format!("│ {id} ");
        table
            .lines()
            .find(|l| l.contains(&cell))
            .unwrap_or("")
            .to_string()
    };
    let priced = row("kettle");
    assert!(priced.contains(&duration(kettle.seconds)), "{table}");
    assert!(!priced.contains("no cost model"), "{table}");
    assert!(row("kettle-unpriced").contains("no cost model"), "{table}");
}

/// A recorded run with one result of the kettle in place of its probes: two
/// series, a distribution, a finding and a warning, built by hand.
fn run_with_kettle() -> RunFile {
    let text = include_str!("fixtures/quick.json");
    let mut run: RunFile = serde_json::from_str(text).expect("the fixture loads");
    let mut p = ProbeResult::new("kettle", TITLE, Status::Completed);
    for (variant, bytes_per_s) in [("linear", 20e9), ("scatter", 20.4e9)] {
        for threads in [1.0, 2.0] {
            let samples = vec![bytes_per_s * threads; 6];
            let name = format!("pour/{variant}");
            p.push_point(Point::samples(
                name,
                "threads",
                threads,
                "bytes_per_s",
                samples,
            ));
        }
    }
    let whistle = corescope::stats::distribution("boil/kitchen/whistle", "ns", &[3_000.0; 50]);
    p.distributions.push(whistle);
    p.findings.push(FINDING);
    // A warning in words, as older run files hold it (no code can raise one now).
    p.warnings.push(
        serde_json::from_value::<corescope::model::Warning>(
            serde_json::json!({"kind": "note", "text": WARNING}),
        )
        .expect("an old note reads"),
    );
    run.probes = vec![p];
    run
}

/// Text with every run of whitespace one space (wrapping aside).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_summary_leads_with_its_own_headline() {
    let run = run_with_kettle();
    let mine = flat(&summary::summary_in(&run, 200, &registry()).join("\n"));
    assert!(mine.contains(&format!("kettle {HEADLINE}")), "{mine}");
    let build = flat(&summary::summary(&run, 200).join("\n"));
    assert!(!build.contains(HEADLINE), "{build}");
}

#[test]
fn the_terminal_report_shows_its_result_and_its_pair() {
    terminal::set_width(200);
    let run = run_with_kettle();
    let mine = flat(&terminal::render_run_in(&run, &registry()));
    for part in [
        &format!("== kettle — {TITLE} [completed]"),
        &format!("• {FINDING}"),
        "pour (GB/s",
        "boil/kitchen/whistle",
        &format!("! {WARNING}"),
        &format!("{PAIR}: kettle pour/linear 20.00 GB/s ÷ kettle pour/scatter"),
    ] {
        assert!(mine.contains(part), "{part}:\n{mine}");
    }
    let probe = flat(&terminal::render_probe_in(&run.probes[0], &registry()));
    assert!(
        probe.starts_with(&format!("== kettle — {TITLE}")),
        "{probe}"
    );
    assert!(!flat(&terminal::render_run(&run)).contains(PAIR));
}

#[test]
fn the_html_report_answers_with_its_headline_and_shows_its_pair() {
    let run = run_with_kettle();
    let mine = html::render_run_in(&run, &registry());
    for part in [
        HEADLINE,
        "<a href='#kettle'>kettle</a>",
        TITLE,
        FINDING,
        "pour/linear",
        "boil/kitchen/whistle",
        WARNING,
        &format!("<td>{PAIR}</td><td>kettle <code>pour/linear</code>"),
    ] {
        assert!(mine.contains(part), "{part}");
    }
    let build = html::render_run(&run);
    assert!(!build.contains(HEADLINE) && !build.contains(PAIR));
}

#[test]
fn markdown_shows_its_result() {
    let md = html::markdown_in(&run_with_kettle(), &registry());
    for part in [
        &format!("## kettle (completed)\n\n{TITLE}"),
        &format!("- {FINDING}"),
        "| threads | linear | scatter |",
        "boil/kitchen/whistle",
    ] {
        assert!(md.contains(part), "{part}:\n{md}");
    }
}

#[test]
fn the_csv_export_files_its_rows_under_its_id() {
    let run = run_with_kettle();
    let series = csv::series_csv(&run);
    assert!(series.contains("kettle,pour/linear,threads,1,bytes_per_s,20000000000"));
    assert!(series.contains("kettle,pour/scatter,threads,2,bytes_per_s,40800000000"));
    let d = csv::distributions_csv(&run);
    assert!(d.contains("kettle,boil/kitchen/whistle,ns,50,3000"), "{d}");
    let f = csv::findings_csv(&run);
    assert!(f.contains("kettle,note,") && f.contains(FINDING), "{f}");
    let w = csv::warnings_csv(&run);
    assert!(w.contains("kettle,note,") && w.contains(WARNING), "{w}");
    let files = csv::planned_files(&run, std::path::Path::new("out"));
    assert!(files.iter().any(|f| f.ends_with("kettle--pour_linear.csv")));
}

#[test]
fn the_warnings_overview_counts_its_warning() {
    let overview = flat(&warning_overview::render(&run_with_kettle(), 200));
    assert!(overview.contains("1 other warning in kettle"), "{overview}");
}

#[test]
fn compare_shows_its_result_in_both_runs() {
    let run = run_with_kettle();
    let runs = [run.clone(), run];
    let text = compare::render_text_width(&runs, None, 200);
    for part in [
        "== kettle",
        &format!("findings on vm#2:\n   • {FINDING}"),
        "pour/linear (GB/s)",
        "boil/kitchen/whistle",
    ] {
        assert!(text.contains(part), "{part}:\n{text}");
    }
    let page = compare::render_html(&runs, None);
    for part in ["kettle", FINDING, "pour/linear", "boil/kitchen/whistle"] {
        assert!(page.contains(part), "{part}");
    }
}
