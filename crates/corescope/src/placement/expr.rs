//! Placement expressions in the spirit of likwid-pin's: select CPUs by NUMA
//! node, package or CPU kind.
//!
//! | expression  | CPUs |
//! |-------------|------|
//! | `N0`        | every allowed CPU of NUMA node 0 |
//! | `N0:0-3`    | the first four allowed CPUs of NUMA node 0 |
//! | `S1:0-7`    | the first eight allowed CPUs of package 1 |
//! | `kind:P`    | every allowed P-core CPU (`kind:E`: E-cores) |
//! | `kind:E:0,2`| the first and third allowed E-core CPUs |
//! | `N0:0-1@N1:0-1` | two CPUs of node 0, then two of node 1 |
//!
//! Domain numbers are the ones `corescope topo` shows: the OS index of the
//! NUMA node or package (hwloc `P#`). Indexes count the domain's allowed CPUs
//! from 0 in topology order (hwloc's logical order: every hardware thread of a
//! core, then the next core), so `S0:0-1` on an SMT machine is one core's two
//! threads. Threads take the selected CPUs in the order written and wrap
//! around, like a CPU list.

use crate::topology::{Pu, Topology};

/// A parsed placement expression: selections joined by `@`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    /// The expression in canonical form (what `Strategy::name` returns and
    /// `Strategy::parse` reads back).
    pub text: String,
    /// The selections, in the order written.
    pub parts: Vec<Selection>,
}

/// One `DOMAIN[:INDEXES]` of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Which CPUs.
    pub domain: Domain,
    /// Indexes into the domain's allowed CPUs; `None` = all of them.
    pub indexes: Option<Vec<u32>>,
}

/// A set of CPUs an expression names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Domain {
    /// `N<i>`: the CPUs of NUMA node `i` (OS index).
    Numa(u32),
    /// `S<i>`: the CPUs of package `i` (OS index, as `corescope topo` shows it).
    Package(u32),
    /// `kind:<label>`: the CPUs of a CPU kind (`P`, `E`, ...), any case.
    Kind(String),
}

/// Examples for error messages.
const EXAMPLES: &str = "expected N<node>[:indexes], S<package>[:indexes] or kind:<P|E>[:indexes], \
                        joined by @, e.g. N0:0-3, S1:0-7, kind:P";

/// Whether a placement string is meant as an expression (not a name or list).
pub fn looks_like_expr(s: &str) -> bool {
    let t = s.trim();
    t.contains(':')
        || t.contains('@')
        || (t.len() > 1
            && t.starts_with(['N', 'n', 'S', 's'])
            && t[1..].bytes().all(|b| b.is_ascii_digit()))
}

impl Expr {
    /// Parse `N0:0-3`, `S1`, `kind:P`, `N0:0-1@N1:0-1`, ...
    pub fn parse(s: &str) -> Result<Self, super::PlacementError> {
        let err = |reason: SyntaxError| super::PlacementError::Expr {
            expr: s.trim().to_string(),
            reason,
        };
        let mut parts = Vec::new();
        for part in s.trim().split('@') {
            parts.push(parse_selection(part.trim()).map_err(err)?);
        }
        let text = parts.iter().map(canonical).collect::<Vec<_>>().join("@");
        Ok(Expr { text, parts })
    }

    /// The CPUs (OS indices) this expression selects here, in order.
    pub fn resolve(&self, topo: &Topology) -> Result<Vec<u32>, super::PlacementError> {
        let mut out = Vec::new();
        for sel in &self.parts {
            let cpus =
                domain_cpus(topo, &sel.domain).map_err(|reason| super::PlacementError::Domain {
                    expr: self.text.clone(),
                    reason,
                })?;
            match &sel.indexes {
                None => out.extend(cpus.iter().map(|p| p.os_index)),
                Some(idx) => {
                    for &i in idx {
                        let Some(p) = cpus.get(i as usize) else {
                            return Err(super::PlacementError::Domain {
                                expr: self.text.clone(),
                                reason: DomainError::IndexOutOfRange {
                                    index: i,
                                    domain: describe(&sel.domain),
                                    cpus: cpus.len(),
                                },
                            });
                        };
                        out.push(p.os_index);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Why a selection of an expression does not parse (the reason only).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    /// Nothing between two `@`.
    #[error("an empty selection; {EXAMPLES}")]
    Empty,
    /// `kind:` without a label.
    #[error("'{0}': the kind needs a label such as P or E, e.g. kind:P")]
    KindLabel(String),
    /// Not `N`, `S` or `kind:`, or a number out of range.
    #[error("unknown domain '{0}'; {EXAMPLES}")]
    UnknownDomain(String),
    /// `N` or `S` without its number.
    #[error("domain '{head}' needs a number, e.g. {letter}0")]
    DomainNumber {
        /// The domain as given.
        head: String,
        /// Its letter.
        letter: char,
    },
    /// The index list after `:`.
    #[error("bad index list '{0}'; expected indexes like 0-3 or 0,2,4-7")]
    IndexList(String),
}

/// Why an expression's domain or index is not on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// The domain's CPUs are all outside the cpuset.
    #[error("{domain} has no CPU this process may use (its CPUs {cpus} are outside the cpuset)")]
    OutsideCpuset {
        /// The domain in words.
        domain: String,
        /// Its CPUs in list syntax.
        cpus: String,
    },
    /// No such domain here.
    #[error("{domain} has no CPU here; {there}")]
    Missing {
        /// The domain in words.
        domain: String,
        /// What there is instead.
        there: String,
    },
    /// An index past the domain's allowed CPUs.
    #[error(
        "index {index} is out of range: {domain} has {cpus} allowed CPU{} (indexes 0-{})",
        if *cpus == 1 { "" } else { "s" },
        cpus.saturating_sub(1)
    )]
    IndexOutOfRange {
        /// The index given.
        index: u32,
        /// The domain in words.
        domain: String,
        /// Its allowed CPUs.
        cpus: usize,
    },
}

/// `N0:0-3` → a selection; the error is the reason only.
fn parse_selection(part: &str) -> Result<Selection, SyntaxError> {
    if part.is_empty() {
        return Err(SyntaxError::Empty);
    }
    let (domain, rest) = if let Some(rest) = strip_prefix_ci(part, "kind:") {
        let (label, idx) = match rest.split_once(':') {
            Some((l, i)) => (l.trim(), Some(i)),
            None => (rest.trim(), None),
        };
        if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(SyntaxError::KindLabel(part.to_string()));
        }
        (Domain::Kind(label.to_string()), idx)
    } else {
        let (head, idx) = match part.split_once(':') {
            Some((h, i)) => (h.trim(), Some(i)),
            None => (part, None),
        };
        let mut chars = head.chars();
        let letter = chars.next().map(|c| c.to_ascii_uppercase());
        let num = chars.as_str();
        let make: fn(u32) -> Domain = match letter {
            Some('N') => Domain::Numa,
            Some('S') => Domain::Package,
            _ => return Err(SyntaxError::UnknownDomain(head.to_string())),
        };
        if num.is_empty() {
            return Err(SyntaxError::DomainNumber {
                head: head.to_string(),
                letter: letter.unwrap_or('N'),
            });
        }
        let n = num
            .parse::<u32>()
            .ok()
            .filter(|_| num.bytes().all(|b| b.is_ascii_digit()))
            .filter(|&n| n <= super::MAX_CPU_INDEX)
            .ok_or_else(|| SyntaxError::UnknownDomain(head.to_string()))?;
        (make(n), idx)
    };
    let indexes = match rest {
        None => None,
        Some(list) => Some(
            super::parse_cpu_list(list).ok_or_else(|| SyntaxError::IndexList(list.to_string()))?,
        ),
    };
    Ok(Selection { domain, indexes })
}

/// `s` without a case-insensitive ASCII prefix.
fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Canonical text of a selection: `N0:0-3`, `S1`, `kind:P:0,2`.
fn canonical(sel: &Selection) -> String {
    let head = match &sel.domain {
        Domain::Numa(n) => format!("N{n}"),
        Domain::Package(n) => format!("S{n}"),
        Domain::Kind(k) => format!("kind:{k}"),
    };
    match &sel.indexes {
        None => head,
        Some(idx) => format!("{head}:{}", list_in_order(idx)),
    }
}

/// Indexes as written (order kept), consecutive runs as ranges: `0-3,8,5`.
fn list_in_order(idx: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let start = idx[i];
        let mut end = start;
        while i + 1 < idx.len() && idx[i + 1] == end.wrapping_add(1) {
            i += 1;
            end = idx[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// `NUMA node 0`, `package 1`, `CPU kind P`.
fn describe(d: &Domain) -> String {
    match d {
        Domain::Numa(n) => format!("NUMA node {n}"),
        Domain::Package(n) => format!("package {n}"),
        Domain::Kind(k) => format!("CPU kind {k}"),
    }
}

/// The allowed PUs of a domain in topology order, or why there are none.
fn domain_cpus<'t>(topo: &'t Topology, d: &Domain) -> Result<Vec<&'t Pu>, DomainError> {
    let member = |p: &Pu| match d {
        Domain::Numa(n) => p.numa_node == Some(*n),
        Domain::Package(n) => p.package == *n,
        Domain::Kind(k) => p.kind.as_deref().is_some_and(|l| l.eq_ignore_ascii_case(k)),
    };
    let all: Vec<&Pu> = topo.pus.iter().filter(|p| member(p)).collect();
    let allowed: Vec<&Pu> = all.iter().copied().filter(|p| p.allowed).collect();
    if !allowed.is_empty() {
        return Ok(allowed);
    }
    if !all.is_empty() {
        return Err(DomainError::OutsideCpuset {
            domain: describe(d),
            cpus: Topology::format_cpu_list(&all.iter().map(|p| p.os_index).collect::<Vec<_>>()),
        });
    }
    let there = match d {
        Domain::Numa(_) => {
            let mut v: Vec<u32> = topo.allowed_pus().filter_map(|p| p.numa_node).collect();
            v.sort_unstable();
            v.dedup();
            format!("NUMA nodes with allowed CPUs: {}", list_or_none(&v))
        }
        Domain::Package(_) => {
            let mut v: Vec<u32> = topo.allowed_pus().map(|p| p.package).collect();
            v.sort_unstable();
            v.dedup();
            format!("packages with allowed CPUs: {}", list_or_none(&v))
        }
        Domain::Kind(_) if topo.cpu_kinds.is_empty() => {
            "hwloc reports one kind of CPU on this machine".to_string()
        }
        Domain::Kind(_) => format!(
            "CPU kinds: {}",
            topo.cpu_kinds
                .iter()
                .map(|k| k.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(DomainError::Missing {
        domain: describe(d),
        there,
    })
}

/// `0-3,8` or `none`.
fn list_or_none(v: &[u32]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        Topology::format_cpu_list(v)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlacementError, Strategy};
    use super::*;

    fn expr(s: &str) -> Expr {
        match Strategy::parse(s) {
            Ok(Strategy::Expr(e)) => e,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn expressions_parse_and_print_back() {
        let e = expr("N0:0-3");
        assert_eq!(
            e.parts,
            [Selection {
                domain: Domain::Numa(0),
                indexes: Some(vec![0, 1, 2, 3])
            }]
        );
        assert_eq!(e.text, "N0:0-3");
        assert_eq!(expr("s1:0-7").text, "S1:0-7");
        assert_eq!(expr("S1").parts[0].indexes, None);
        assert_eq!(expr("kind:P").parts[0].domain, Domain::Kind("P".into()));
        assert_eq!(expr("KIND:e:0,2").text, "kind:e:0,2");
        assert_eq!(expr("N0:0-1@N1:3,2").text, "N0:0-1@N1:3,2");
        for s in ["N0:0-3", "S1:0-7", "kind:P", "N0:0-1@N1:3,2", "N2"] {
            let e = expr(s);
            assert_eq!(expr(&e.text), e, "{s} round trip");
            assert_eq!(Strategy::Expr(e.clone()).name(), e.text);
        }
    }

    #[test]
    fn bad_expressions_say_what_is_wrong_in_one_line() {
        for (bad, says) in [
            ("X0:1", "unknown domain 'X0'"),
            ("N:0-3", "needs a number"),
            ("N0:3-1", "bad index list '3-1'"),
            ("N0:", "bad index list ''"),
            ("kind:", "needs a label"),
            ("kind:P-1", "needs a label"),
            ("N0@", "an empty selection"),
            ("Nx:1", "unknown domain 'Nx'"),
            ("N99999999999:0", "unknown domain"),
        ] {
            let e = Strategy::parse(bad).unwrap_err();
            assert!(matches!(e, PlacementError::Expr { .. }), "{bad}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(says), "{bad}: {msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn names_and_lists_are_not_expressions() {
        for s in ["scatter", "0,2,4-7", "5", "zigzag", "N", "S"] {
            assert!(!looks_like_expr(s), "{s}");
        }
        for s in ["N0", "s12", "kind:P", "N0@N1", "N0:0"] {
            assert!(looks_like_expr(s), "{s}");
        }
    }
}
