use corescope::topology::*;
#[test]
fn dump() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/topologies");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "xml")).collect();
    files.sort();
    for f in files {
        let t = from_xml_file(&f).unwrap();
        println!("{}\n  {}\n  levels {:?}\n  unavailable {:?}", f.display(), t.summary(), t.levels.iter().map(|l| format!("{}:{}", l.name, l.arity)).collect::<Vec<_>>(), t.unavailable);
        let order = corescope::placement::order(&t, &corescope::placement::Strategy::Scatter);
        println!("  scatter {:?}", &order[..order.len().min(24)]);
        println!("  kinds {:?}", t.pus.iter().filter_map(|p| p.kind.clone()).collect::<std::collections::BTreeSet<_>>());
    }
    for s in ["pack:4 core:16 group:2 pu:4", "pack:2 core:4 pu:2(indexes=2*8:1*2)", "pu:1", "core:2 pu:1", "pack:2 l3:2 l2:2 core:1 pu:2"] {
        let t = from_synthetic(s).unwrap();
        println!("{s}\n  {}\n  levels {:?}", t.summary(), t.levels.iter().map(|l| format!("{}:{}", l.name, l.arity)).collect::<Vec<_>>());
    }
    let t = detect().unwrap();
    println!("detect {} {:?} {:?}", t.summary(), t.levels, t.caches);
    println!("{}", from_synthetic("pack:2 foo:3").unwrap_err());
}
