//! A probe that exists only in this file, registered in a registry of its own,
//! appears in the terminal summary with its own headline, with no other edit: the
//! summary draws a probe by the shape the probe states (`Probe::summary_shape`),
//! never by its id (issue 38). A result whose probe the registry does not know (an
//! older run file's) gets the default shape.

mod support;

use corescope::model::{ProbeResult, RunFile, Status, SummaryShape};
use corescope::probes::AnyProbe;
use corescope::render::summary::{summary, summary_in};
use corescope::store;
use std::path::Path;
use support::TestProbe;

/// The test's probe: how long a doorbell takes to ring and the door to open, per
/// where the visitor stands, as distributions.
const DOORBELL: TestProbe = TestProbe {
    summary_shape: SummaryShape::PlacedMedians {
        prefix: "visit/",
        head_part: "open",
        head_lead: "the door opens after",
        item_lead: "visitor at",
        item_parts: &[
            ("ring", "the bell rings in"),
            ("open", "the door opens after"),
        ],
    },
    ..TestProbe::new("doorbell")
};

/// A recorded run with the doorbell's result in place of its probes.
fn run_with_doorbell() -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick.json");
    let mut run = store::load(&path).expect("fixture loads");
    let mut p = ProbeResult::new("doorbell", "a probe of this test only", Status::Completed);
    for (name, ns) in [
        ("visit/front/ring", 1_000.0),
        ("visit/front/open", 2_000.0),
        ("visit/back/ring", 4_000.0),
        ("visit/back/open", 9_000.0),
    ] {
        let samples = vec![ns; 50];
        p.distributions
            .push(corescope::stats::distribution(name, "ns", &samples));
    }
    run.probes = vec![p];
    run
}

#[test]
fn a_probe_of_one_file_heads_the_summary_by_its_own_shape() {
    let registry: Vec<Box<dyn AnyProbe>> = vec![Box::new(DOORBELL)];
    let text = summary_in(&run_with_doorbell(), 200, &registry).join("\n");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "doorbell the door opens after 2.000 µs on front, 9.000 µs on back; visitor at \
             front: the bell rings in 1.000 µs, the door opens after 2.000 µs; visitor at back: \
             the bell rings in 4.000 µs, the door opens after 9.000 µs"
        ),
        "{text}"
    );
}

#[test]
fn a_probe_the_registry_does_not_know_gets_the_default_shape() {
    let text = summary(&run_with_doorbell(), 200).join("\n");
    let line = text
        .lines()
        .find(|l| l.starts_with("doorbell "))
        .unwrap_or_else(|| panic!("no doorbell line:\n{text}"));
    assert!(!line.contains("the door opens after"), "{text}");
    assert!(line.contains("no key result recorded"), "{text}");
}
