//! A probe that exists only in this file, registered in a registry of its own,
//! appears in `doctor`'s "affects" of the condition it declares itself sensitive
//! to, and of the conditions that blur every probe, with no other edit: the doctor
//! looks the affected probes up by what each probe states
//! (`Probe::sensitive_to`), never by id (issue 38).

mod support;

use corescope::doctor::{read, read_in, Options};
use corescope::model::{CheckId, Checks, Sensitivity};
use corescope::probes::{registry, AnyProbe};
use corescope::topology::knobs::HostFiles;
use support::TestProbe;

const TLB: TestProbe = TestProbe {
    sensitive_to: &[Sensitivity::PageSize],
    ..TestProbe::new("tlb-walk")
};
const QUIET: TestProbe = TestProbe::new("quiet");

fn affects(checks: &Checks, id: CheckId) -> Vec<String> {
    checks
        .get(id)
        .unwrap_or_else(|| panic!("no {id:?} check"))
        .affects
        .clone()
}

/// The checks of an empty fake tree (every check is made, most unread).
fn checks_in(registry: &[Box<dyn AnyProbe>]) -> Checks {
    let dir = tempfile::tempdir().expect("temporary directory");
    read_in(&HostFiles::under(dir.path()), &Options::default(), registry)
}

#[test]
fn a_probe_of_one_file_is_affected_by_the_condition_it_declares() {
    let mine: Vec<Box<dyn AnyProbe>> = vec![Box::new(QUIET), Box::new(TLB)];
    let c = checks_in(&mine);
    assert_eq!(affects(&c, CheckId::Thp), ["tlb-walk"]);
    for other in [CheckId::Smt, CheckId::NumaBalancing, CheckId::VcpuPlacement] {
        assert!(affects(&c, other).is_empty(), "{other:?}: {c:?}");
    }
    // Conditions of the clock and of stolen time blur every probe, declared or not.
    for every in [CheckId::Governor, CheckId::Load, CheckId::Hypervisor] {
        assert_eq!(affects(&c, every), ["quiet", "tlb-walk"], "{every:?}");
    }
}

#[test]
fn a_probe_added_to_the_registry_joins_the_probes_already_affected() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let files = HostFiles::under(dir.path());
    let builtin = read(&files, &Options::default());
    let mut more = registry();
    more.push(Box::new(TLB));
    let with_tlb = read_in(&files, &Options::default(), &more);
    let mut want = affects(&builtin, CheckId::Thp);
    assert!(
        !want.is_empty(),
        "some built-in probe depends on page sizes"
    );
    want.push("tlb-walk".into());
    assert_eq!(affects(&with_tlb, CheckId::Thp), want);
    assert_eq!(
        affects(&with_tlb, CheckId::Smt),
        affects(&builtin, CheckId::Smt)
    );
}
