//! Transparent huge pages as the kernel granted them: the share of a test block, and
//! of any mapping of this process, backed by huge pages (/proc/self/smaps).

use crate::kernels::buffer::{Block, Pages};

/// Fraction of a freshly touched 8 MiB block with THP requested that the kernel backs
/// with huge pages, if /proc/self/smaps says.
pub fn thp_probe() -> Option<f64> {
    let b = Block::new((8 << 20) / 8, Pages::Huge, 1).ok()?;
    huge_share(&b)
}

/// Fraction of `b`'s allocation backed by huge pages, if /proc/self/smaps says.
pub fn huge_share(b: &Block) -> Option<f64> {
    let huge = huge_bytes_at(b.addr())?;
    Some((huge as f64 / b.allocated_bytes().max(1) as f64).min(1.0))
}

/// `AnonHugePages` of the mapping of /proc/self/smaps that contains `addr`, in bytes.
pub fn huge_bytes_at(addr: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a <= addr && addr < b;
                continue;
            }
        }
        if inside {
            if let Some(v) = line.strip_prefix("AnonHugePages:") {
                let kb: u64 = v.split_whitespace().next()?.parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    None
}
