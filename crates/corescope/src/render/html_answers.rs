//! The HTML report's first screen: the machine and its measured clock, each
//! probe's answer with its interval (the terminal summary's headline, linked to
//! the probe's section), the machine's state during the run, and the warnings by
//! cause, each naming the sections it touches and what to do.

use super::summary::{Answers, ProbeAnswer};
use super::svg::esc;
use super::warning_overview;
use crate::analysis::warning_groups::{groups, WarningGroup};
use crate::model::RunFile;
use std::fmt::Write;

/// The answers section (`<section id='answers'>`) of `run`, whose answers
/// (`summary::answers`) are `a`.
pub fn section(run: &RunFile, a: &Answers) -> String {
    // The glossary is collapsed at the end of the page: the link opens it.
    let mut o = String::from(
        "<section id='answers'><h2>Answers <a class='more' href='#glossary' \
         onclick=\"document.getElementById('glossary').open=true\">glossary</a></h2>",
    );
    let _ = write!(o, "<p><strong>{}</strong></p>", esc(&a.machine));
    o.push_str("<div class='scroll'><table class='answers'><tr><th>probe</th><th>answer</th></tr>");
    for p in &a.probes {
        row(&mut o, p);
    }
    o.push_str("</table></div>");
    if a.probes
        .iter()
        .any(|p| p.head.as_deref().is_some_and(|h| h.contains('±')))
    {
        o.push_str("<p class='more'>± = 95 % CI of the median</p>");
    }
    if let Some(state) = &a.state {
        let _ = write!(o, "<p>{}</p>", esc(state));
    }
    warnings(&mut o, &groups(run));
    o.push_str("</section>");
    o
}

/// One probe's row: its id (a link to its section), its headline and first items.
fn row(o: &mut String, p: &ProbeAnswer) {
    let id = esc(&p.id);
    let _ = write!(o, "<tr><td><a href='#{id}'>{id}</a></td><td>");
    match &p.head {
        Some(h) => {
            let _ = write!(o, "{}", esc(h));
        }
        None => o.push_str("no summary: see its section"),
    }
    if !p.items.is_empty() {
        // The rest collapsed: the first screen holds every probe's headline.
        let _ = write!(o, " <details><summary>{} more</summary>", p.items.len());
        for item in &p.items {
            let _ = write!(o, "<br><span class='more'>{}</span>", esc(item));
        }
        o.push_str("</details>");
    }
    o.push_str("</td></tr>");
}

/// The warnings by cause, each with the sections it touches as links.
fn warnings(o: &mut String, gs: &[WarningGroup]) {
    let _ = write!(
        o,
        "<h3>Warnings</h3><p>{}</p>",
        esc(&warning_overview::heading(gs))
    );
    if gs.is_empty() {
        return;
    }
    o.push_str("<ul class='warn'>");
    for g in gs {
        let links: Vec<String> = g
            .probes
            .iter()
            .map(|p| format!("<a href='#{0}'>{0}</a>", esc(p)))
            .collect();
        let _ = write!(
            o,
            "<li>{} <span class='more'>(sections: {})</span></li>",
            esc(&warning_overview::group_sentence(g)),
            links.join(", ")
        );
    }
    o.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NoiseCause, ProbeResult, Status, Warning};

    #[test]
    fn the_first_screen_links_every_probe_and_every_warning_to_its_section() {
        let mut run: RunFile =
            serde_json::from_str(include_str!("../../tests/fixtures/quick.json"))
                .unwrap_or_else(|e| panic!("{e}"));
        let mut a = ProbeResult::new("alpha", "t", Status::Completed);
        a.warnings.push(Warning::Noisy {
            detail: "moved".into(),
            cause: NoiseCause::RoundTrip,
        });
        let mut b = ProbeResult::new("beta", "t", Status::Skipped);
        b.reason = Some("no PMU <here>".into());
        run.probes = vec![a, b];
        let html = section(&run, &crate::render::summary::answers(&run));
        assert!(html.starts_with("<section id='answers'>"));
        assert!(html.contains("<a href='#alpha'>alpha</a>"), "{html}");
        assert!(html.contains("skipped: no PMU &lt;here&gt;"), "{html}");
        assert!(html.contains("the machine changed state"), "{html}");
        assert!(
            html.contains("(sections: <a href='#alpha'>alpha</a>)"),
            "{html}"
        );
    }
}
