//! A probe that exists only in this file, registered in a registry of its own,
//! gets the special view it declares in the HTML report with no other edit: the
//! renderers look a result's views up in the registry by its probe id
//! (`Probe::views`), never test the id (issue 38). An id the registry does not
//! know gets no special view.

mod support;

use corescope::model::{Point, ProbeResult, RunFile, Status, View};
use corescope::probes::AnyProbe;
use corescope::render::html::render_run_in;
use support::TestProbe;

/// A run file of the fixtures with one result of `id` holding two bandwidth
/// kernels at two thread counts: what the STREAM chart draws.
fn run_with(id: &str) -> RunFile {
    let text = include_str!("fixtures/quick.json");
    let mut run: RunFile = serde_json::from_str(text).expect("the fixture loads");
    let mut p = ProbeResult::new(id, "t", Status::Completed);
    for (kernel, base) in [("read", 20e9), ("copy", 30e9)] {
        for (x, f) in [(1.0, 1.0), (2.0, 1.8)] {
            let v = base * f;
            let samples = vec![v * 0.98, v, v * 1.02, v];
            let name = format!("{kernel}/linear");
            p.push_point(Point::samples(name, "threads", x, "bytes_per_s", samples));
        }
    }
    run.probes = vec![p];
    run
}

#[test]
fn a_probe_of_one_file_gets_the_view_it_declares() {
    let mine: Vec<Box<dyn AnyProbe>> = vec![Box::new(TestProbe {
        views: &[View::StreamChart],
        ..TestProbe::new("stream-like")
    })];
    let html = render_run_in(&run_with("stream-like"), &mine);
    assert!(html.contains("stream-like — STREAM kernels, best placement"));
}

#[test]
fn a_probe_declaring_nothing_or_unknown_gets_no_special_view() {
    let quiet: Vec<Box<dyn AnyProbe>> = vec![Box::new(TestProbe::new("stream-like"))];
    let html = render_run_in(&run_with("stream-like"), &quiet);
    assert!(!html.contains("STREAM kernels"));
    let html = render_run_in(&run_with("from-an-older-build"), &quiet);
    assert!(!html.contains("STREAM kernels"));
}
