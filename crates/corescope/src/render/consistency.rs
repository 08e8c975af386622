//! Two probes' measurements of one quantity side by side (`analysis::consistency`),
//! for the terminal report and the HTML one.

use super::crosscheck::{ratio, value};
use super::esc;
use crate::analysis::consistency::{check, Consistency};
use crate::model::{RunFile, SameQuantity};
use std::fmt::Write as _;

/// The run's pairs, from what `registry`'s probes declare.
pub fn of_run(run: &RunFile, registry: &[Box<dyn crate::probes::AnyProbe>]) -> Vec<Consistency> {
    let declared: Vec<(&str, &[SameQuantity])> = registry
        .iter()
        .map(|p| (p.id(), p.same_quantities()))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    check(run, &declared)
}

/// A series of a probe of the run, by the probe's id and the series' name.
fn series_of<'r>(run: &'r RunFile, probe: &str, series: &str) -> Option<&'r crate::model::Series> {
    run.probes.iter().find(|p| p.id == probe)?.series(series)
}

/// The unit both figures share: the declaring probe's series'.
fn unit(run: &RunFile, c: &Consistency) -> String {
    series_of(run, &c.probe, &c.series).map_or_else(String::new, |s| s.y_name.clone())
}

/// One sentence a pair.
pub fn sentence(run: &RunFile, c: &Consistency) -> String {
    let unit = unit(run, c);
    format!(
        "{}: {} {} {} ÷ {} {} at {} {} = {}: {} (within ±{:.0} %)",
        c.what,
        c.probe,
        c.series,
        value(&unit, Some(&c.ours)),
        c.other_probe,
        c.other_series,
        crate::units::fmt_value(&x_unit(run, c), c.other_x),
        value(&unit, Some(&c.theirs)),
        ratio(Some(&c.ratio)),
        c.verdict.word(),
        c.tolerance * 100.0
    )
}

/// The x unit of the other probe's series (`bytes` for a working set).
fn x_unit(run: &RunFile, c: &Consistency) -> String {
    series_of(run, &c.other_probe, &c.other_series).map_or_else(String::new, |s| s.x_name.clone())
}

/// The terminal section's heading, its sentences and its closing note, unwrapped
/// (the terminal renderer wraps them); empty when the run has no pair.
pub fn lines(run: &RunFile, cs: &[Consistency]) -> Vec<String> {
    if cs.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["the same quantity measured by two probes:".to_string()];
    out.extend(cs.iter().map(|c| sentence(run, c)));
    out.push(NOTE.to_string());
    out
}

/// How the ratio's interval is made.
const NOTE: &str = "ratio = first ÷ second; its interval is the conservative bound of the two 95 % intervals (the probes run apart, not interleaved)";

/// The HTML section; empty when the run has no pair.
pub fn html(run: &RunFile, cs: &[Consistency]) -> String {
    if cs.is_empty() {
        return String::new();
    }
    let mut o = String::from(
        "<section id='consistency'><h2>The same quantity measured by two probes</h2>\
         <div class='scroll'><table><tr><th>quantity</th><th>first</th><th>second</th><th>ratio</th><th>verdict</th></tr>",
    );
    for c in cs {
        let unit = unit(run, c);
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{} <code>{}</code>: {}</td><td>{} <code>{}</code> at {}: {}</td><td>{}</td><td>{} (within ±{:.0} %)</td></tr>",
            esc(&c.what),
            esc(&c.probe),
            esc(&c.series),
            esc(&value(&unit, Some(&c.ours))),
            esc(&c.other_probe),
            esc(&c.other_series),
            esc(&crate::units::fmt_value(&x_unit(run, c), c.other_x)),
            esc(&value(&unit, Some(&c.theirs))),
            esc(&ratio(Some(&c.ratio))),
            esc(c.verdict.word()),
            c.tolerance * 100.0
        );
    }
    let _ = write!(o, "</table></div><p>{}.</p></section>", esc(NOTE));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Point, ProbeResult, Status};

    /// A run with a loaded-latency idle step and a memory chase at the size the
    /// step's parameter names, as the registry's declarations read them.
    fn run(idle_ns: f64, chase_ns: f64) -> RunFile {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json")).unwrap();
        let size = 1u64 << 30;
        let mut loaded = ProbeResult::new("loaded-latency", "t", Status::Completed);
        let mut memory = ProbeResult::new("memory", "t", Status::Completed);
        for k in 0..6 {
            let wiggle = 1.0 + 0.01 * k as f64;
            loaded.push_point(Point::new(
                "latency/idle",
                "load_step",
                0.0,
                "ns",
                idle_ns * wiggle,
            ));
            memory.push_point(Point::new(
                "ws-latency/1t",
                "bytes",
                size as f64,
                "ns",
                chase_ns * wiggle,
            ));
        }
        loaded.params.insert("chase_bytes".into(), size.into());
        memory.params.insert(
            "ws_latency_pages".into(),
            crate::probes::memory::WS_LATENCY_PAGES.into(),
        );
        loaded.summarise();
        memory.summarise();
        run.probes = vec![memory, loaded];
        run
    }

    #[test]
    fn the_registry_pairs_the_idle_step_with_the_memory_chase_in_both_reports() {
        let r = run(166.0, 165.0);
        let cs = of_run(&r, &crate::probes::registry());
        assert_eq!(cs.len(), 1, "{cs:?}");
        let t = lines(&r, &cs).join("\n");
        assert!(t.contains("loaded-latency latency/idle"), "{t}");
        assert!(t.contains("memory ws-latency/1t at "), "{t}");
        assert!(
            t.contains(": agrees") && t.contains("(within ±10 %)"),
            "{t}"
        );
        let h = html(&r, &cs);
        assert!(h.starts_with("<section id='consistency'>") && h.ends_with("</section>"));
        assert!(h.contains("agrees"), "{h}");
        // Its cells do not wrap (the page's `td` rule): a wide table scrolls in its
        // own box, as every other table of the page, not the page.
        assert!(h.contains("<div class='scroll'><table>"), "{h}");
    }

    #[test]
    fn a_pair_far_apart_is_said_to_differ_and_no_pair_draws_nothing() {
        let r = run(330.0, 165.0);
        let cs = of_run(&r, &crate::probes::registry());
        assert!(lines(&r, &cs).join(" ").contains("differs"));
        let mut none = r.clone();
        none.probes.truncate(1);
        let cs = of_run(&none, &crate::probes::registry());
        assert!(lines(&none, &cs).is_empty() && html(&none, &cs).is_empty());
    }
}
