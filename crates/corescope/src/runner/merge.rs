//! What the runner files into a probe's result: measurements merged with copies for
//! the variants that ran the same configuration (aliases), and the warnings and
//! findings drawn over the whole result when the probe ends.

use super::group::GroupRun;
use crate::model::{Alias, Estimate, Finding, Measurement, ProbeResult, Warning};

impl GroupRun<'_, '_> {
    /// Measured members, and for every member that runs the same configuration as an
    /// earlier one, (alias index, measured index).
    pub(super) fn split_aliases(&mut self) -> (Vec<usize>, Vec<(usize, usize)>) {
        let mut measured: Vec<usize> = Vec::new();
        let mut aliases = Vec::new();
        for &i in self.members {
            let c = &self.plan.cases[i];
            let twin = c.config.as_ref().and_then(|cfg| {
                measured
                    .iter()
                    .copied()
                    .find(|&j| self.plan.cases[j].config.as_ref() == Some(cfg))
            });
            match twin {
                Some(j) => aliases.push((i, j)),
                None => measured.push(i),
            }
        }
        self.record_same_configuration(&measured, &aliases);
        (measured, aliases)
    }

    fn record_same_configuration(&mut self, measured: &[usize], aliases: &[(usize, usize)]) {
        for &m in measured {
            let twins: Vec<usize> = aliases
                .iter()
                .filter(|(_, j)| *j == m)
                .map(|(i, _)| *i)
                .collect();
            if twins.is_empty() {
                continue;
            }
            let c = &self.plan.cases[m];
            let mut variants = vec![c.variant.clone().unwrap_or_default()];
            variants.extend(
                twins
                    .iter()
                    .map(|&i| self.plan.cases[i].variant.clone().unwrap_or_default()),
            );
            self.result.findings.push(Finding::SameConfiguration {
                what: c.group.clone().unwrap_or_default(),
                variants,
                config: c.config.clone().unwrap_or_default(),
            });
        }
    }

    /// Merge one run's measurement; every point is copied to the aliases of the case.
    /// Only the first round keeps the non-point outputs (tables, distributions, ...).
    pub(super) fn absorb(
        &mut self,
        i: usize,
        mut m: Measurement,
        first_round: bool,
        aliases: &[(usize, usize)],
    ) {
        for p in &mut m.points {
            p.epoch = self.epoch;
        }
        let case = &self.plan.cases[i];
        let mut extra = Vec::new();
        for &(a, _) in aliases.iter().filter(|(_, j)| *j == i) {
            let (Some(from), Some(to)) = (&case.variant, &self.plan.cases[a].variant) else {
                continue;
            };
            for p in &m.points {
                if let Some(stem) = p.series.strip_suffix(from.as_str()) {
                    let mut copy = p.clone();
                    copy.series = format!("{stem}{to}");
                    if first_round {
                        self.result.aliases.push(Alias {
                            series: copy.series.clone(),
                            x: p.x,
                            same_as: p.series.clone(),
                            config: case.config.clone().unwrap_or_default(),
                        });
                    }
                    extra.push(copy);
                }
            }
        }
        if first_round {
            self.result.absorb(m);
        } else {
            for p in m.points {
                self.result.push_point(p);
            }
            for w in m.warnings.0 {
                self.result.warnings.push_unique(w);
            }
        }
        for p in extra {
            self.result.push_point(p);
        }
    }
}

/// One warning for the points (not copies) whose interval stayed wide: the widest,
/// and how many others.
pub(super) fn wide_interval_warnings(result: &mut ProbeResult) {
    let mut found: Vec<(String, f64, Estimate)> = Vec::new();
    for s in &result.series {
        for i in 0..s.x.len() {
            let Some(e) = s.estimate(i) else { continue };
            if e.n > 1
                && e.rel_half_width() > super::WIDE_REL_HALF_WIDTH
                && result.alias_of(&s.name, s.x[i]).is_none()
            {
                found.push((s.name.clone(), s.x[i], e));
            }
        }
    }
    let others = found.len().saturating_sub(1);
    if let Some((series, x, e)) = found
        .into_iter()
        .max_by(|a, b| a.2.rel_half_width().total_cmp(&b.2.rel_half_width()))
    {
        result.warnings.push(Warning::WideInterval {
            series,
            x,
            rel_half_width: e.rel_half_width(),
            n: e.n,
            others,
        });
    }
}

/// One warning naming the points whose epochs disagreed (state-dependent): the
/// first few with each epoch's value, and how many others.
pub(super) fn state_dependent_warning(result: &mut ProbeResult) {
    let mut found: Vec<String> = Vec::new();
    let mut count = 0;
    for s in &result.series {
        for (i, states) in s.states.iter().enumerate() {
            if states.is_empty() || result.alias_of(&s.name, s.x[i]).is_some() {
                continue;
            }
            count += 1;
            if found.len() < STATE_DEPENDENT_NAMED {
                let values: Vec<String> = states
                    .iter()
                    .map(|e| crate::units::fmt_value(&s.y_name, e.value))
                    .collect();
                found.push(format!(
                    "{} at {} ({})",
                    s.name,
                    crate::units::fmt_x(&s.x_name, s.x[i]),
                    values.join(" then ")
                ));
            }
        }
    }
    if count == 0 {
        return;
    }
    let others = count - found.len();
    let more = if others > 0 {
        format!(" and {others} more")
    } else {
        String::new()
    };
    result.warnings.push_unique(Warning::Noisy {
        detail: format!(
            "{count} point{} differed between the two epochs of the run beyond their \
             intervals (state-dependent; each epoch's value is kept in `states`): {}{more}",
            if count == 1 { "" } else { "s" },
            found.join(", ")
        ),
        cause: crate::model::NoiseCause::Epochs,
    });
}

/// State-dependent points named in the probe's warning (the rest are counted).
const STATE_DEPENDENT_NAMED: usize = 3;

/// One `same_configuration` finding per set of variants: "linear = compact = scatter
/// here" once, naming the comparisons, instead of once per thread count.
pub(super) fn merge_same_configurations(result: &mut ProbeResult) {
    let mut merged: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    let mut rest = Vec::new();
    for f in std::mem::take(result.findings.as_mut_vec()) {
        match f {
            Finding::SameConfiguration {
                what,
                variants,
                config,
            } => match merged.iter_mut().find(|m| m.0 == variants) {
                Some(m) => {
                    m.1.push(what);
                    m.2.push(config);
                }
                None => merged.push((variants, vec![what], vec![config])),
            },
            other => rest.push(other),
        }
    }
    for (variants, whats, configs) in merged {
        let what = match whats.as_slice() {
            [one] => one.clone(),
            [first, .., last] if whats.len() > 2 => {
                format!("{} comparisons ({first} … {last})", whats.len())
            }
            _ => whats.join(", "),
        };
        let config = if configs.len() == 1 {
            configs[0].clone()
        } else {
            "the same CPUs in each".into()
        };
        result.findings.push(Finding::SameConfiguration {
            what,
            variants,
            config,
        });
    }
    result.findings.extend(rest);
}
