//! Memory bound to one NUMA node for `numa` (and `c2c`): an anonymous mapping bound
//! with `mbind` before its first touch, and `move_pages`' report of where a sample of
//! its pages went (the binding is never assumed).

use crate::memguard;
use crate::model::Warning;
use std::sync::Arc;

/// Pages per buffer whose node `move_pages` reports (spread evenly over it).
pub const CHECKED_PAGES: usize = 64;
/// `MPOL_BIND` (linux/mempolicy.h): allocate only on the nodes of the mask.
const MPOL_BIND: libc::c_int = 2;
/// `MPOL_MF_STRICT` (linux/mempolicy.h): fail if pages already exist elsewhere.
const MPOL_MF_STRICT: libc::c_uint = 1;

/// An anonymous private mapping of 64-bit words, bound to one NUMA node with
/// `mbind` before its first touch (where the OS allows it).
pub struct NodeBuffer {
    ptr: std::ptr::NonNull<u64>,
    words: usize,
    bytes: usize,
    /// `ok`, or why `mbind` failed (then the memory follows first touch).
    mbind: String,
    node: u32,
}

// SAFETY: a NodeBuffer owns its mapping exclusively (like a Vec<u64>); moving it to
// another thread moves that ownership.
unsafe impl Send for NodeBuffer {}
// SAFETY: `&NodeBuffer` hands out only `&[u64]` (shared reads).
unsafe impl Sync for NodeBuffer {}

/// Why a node's buffer could not be mapped, bound or located (the OS errors are
/// shared so the team's workers can each report them).
#[derive(Debug, Clone, thiserror::Error)]
pub enum NumaError {
    /// `mmap` failed.
    #[error("mmap of {}: {source}", memguard::human(*bytes as u64))]
    Map {
        /// The bytes asked for.
        bytes: usize,
        /// What the OS said.
        source: Arc<std::io::Error>,
    },
    /// `mmap` returned NULL.
    #[error("mmap returned NULL")]
    Null,
    /// `mbind` refused the node.
    #[error("mbind to node {node}: {source}")]
    Bind {
        /// The node.
        node: u32,
        /// What the OS said.
        source: Arc<std::io::Error>,
    },
    /// `move_pages` could not say where the pages are.
    #[error("move_pages: {source}")]
    Query {
        /// What the OS said.
        source: Arc<std::io::Error>,
    },
}

/// The calling thread's last OS error, to share.
fn last_os_error() -> Arc<std::io::Error> {
    Arc::new(std::io::Error::last_os_error())
}

impl NodeBuffer {
    /// Map `words` words (at least one page), bind them to `node` (when known), and
    /// ask for transparent huge pages when `huge`. Nothing is touched yet.
    pub fn new(words: usize, node: Option<u32>, huge: bool) -> Result<Self, NumaError> {
        let page = page_bytes();
        let bytes = (words.max(1) * 8).div_ceil(page) * page;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing;
        // no existing memory is affected. The result is checked against MAP_FAILED.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(NumaError::Map {
                bytes,
                source: last_os_error(),
            });
        }
        let ptr = std::ptr::NonNull::new(raw.cast::<u64>()).ok_or(NumaError::Null)?;
        if huge {
            // SAFETY: ptr..ptr+bytes is our own mapping; madvise only changes how the
            // kernel backs it. A failure (THP off) is harmless.
            unsafe {
                libc::madvise(raw, bytes, libc::MADV_HUGEPAGE);
            }
        }
        let mbind = match node.map(|n| bind(raw, bytes, n)) {
            Some(Ok(())) => "ok".to_string(),
            Some(Err(e)) => e.to_string(),
            None => "not bound: the OS reports no NUMA node".to_string(),
        };
        Ok(Self {
            ptr,
            words: words.max(1),
            bytes,
            mbind,
            node: node.unwrap_or(0),
        })
    }

    /// The words (zero until written).
    pub fn as_slice(&self) -> &[u64] {
        // SAFETY: the mapping holds at least `words` u64, zero-filled by the kernel
        // on first touch, and `&self` rules out a concurrent `&mut`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.words) }
    }

    /// Start of the mapping (page-aligned).
    pub fn as_ptr(&self) -> *const u64 {
        self.ptr.as_ptr()
    }

    /// The words, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: as in `as_slice`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }

    /// Where `samples` pages spread over the buffer are (touch it first).
    pub fn check(&self, samples: usize) -> Binding {
        let page = page_bytes();
        let pages = self.bytes / page;
        let n = samples.clamp(1, pages.max(1));
        let addrs: Vec<*mut libc::c_void> = (0..n)
            .map(|k| {
                // SAFETY: k·pages/n < pages, so the address lies inside the mapping.
                unsafe { self.ptr.as_ptr().cast::<u8>().add(k * pages / n * page) }.cast()
            })
            .collect();
        let mut b = Binding {
            mbind: self.mbind.clone(),
            checked: n as u64,
            ..Binding::default()
        };
        match page_nodes(&addrs) {
            Ok(status) => {
                for s in status {
                    if s == self.node as i32 {
                        b.on_node += 1;
                    } else if s >= 0 {
                        b.add_elsewhere(s as u32);
                    } else {
                        b.unknown += 1;
                    }
                }
            }
            Err(e) => {
                b.unknown = n as u64;
                b.query_error = Some(e.to_string());
            }
        }
        b
    }
}

impl Drop for NodeBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with exactly this length and is
        // unmapped once; no slice into it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.bytes);
        }
    }
}

/// Bytes of a base page.
fn page_bytes() -> usize {
    // SAFETY: sysconf has no preconditions; it returns -1 on error.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// `mbind(addr, len, MPOL_BIND, {node}, ..., MPOL_MF_STRICT)`; the error in words.
fn bind(addr: *mut libc::c_void, len: usize, node: u32) -> Result<(), NumaError> {
    let words = node as usize / 64 + 1;
    let mut mask = vec![0u64; words];
    mask[node as usize / 64] |= 1u64 << (node % 64);
    // The kernel reads maxnode − 1 bits (mm/mempolicy.c get_nodes), hence the + 1.
    let maxnode = (words * 64 + 1) as libc::c_ulong;
    // SAFETY: addr..addr+len is a mapping the caller owns; the mask holds `words`
    // u64 = maxnode − 1 bits; mbind only sets the policy of that range.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len as libc::c_ulong,
            MPOL_BIND,
            mask.as_ptr(),
            maxnode,
            MPOL_MF_STRICT,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(NumaError::Bind {
            node,
            source: last_os_error(),
        })
    }
}

/// The node of each page (`move_pages` in query mode: `nodes` NULL moves nothing);
/// a negative entry is −errno (`-ENOENT`: not present).
fn page_nodes(addrs: &[*mut libc::c_void]) -> Result<Vec<i32>, NumaError> {
    let mut status = vec![i32::MIN; addrs.len()];
    // SAFETY: `addrs` and `status` hold `addrs.len()` entries each; with nodes NULL
    // the kernel only writes each page's node into `status`.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            addrs.len() as libc::c_ulong,
            addrs.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if r < 0 {
        return Err(NumaError::Query {
            source: last_os_error(),
        });
    }
    Ok(status)
}

/// Where a buffer's checked pages were.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Binding {
    /// `ok`, or why `mbind` failed.
    pub mbind: String,
    /// Pages asked about.
    pub checked: u64,
    /// Pages on the intended node.
    pub on_node: u64,
    /// (node, pages) for pages on other nodes.
    pub elsewhere: Vec<(u32, u64)>,
    /// Pages whose node could not be read (not present, or the query failed).
    pub unknown: u64,
    /// Why `move_pages` failed, if it did.
    pub query_error: Option<String>,
}

impl Binding {
    fn add_elsewhere(&mut self, node: u32) {
        match self.elsewhere.iter_mut().find(|(n, _)| *n == node) {
            Some((_, k)) => *k += 1,
            None => self.elsewhere.push((node, 1)),
        }
    }

    /// Every thread's check of one case, added up.
    pub fn sum(all: &[Binding]) -> Binding {
        let mut t = Binding {
            mbind: "ok".into(),
            ..Binding::default()
        };
        for b in all {
            if b.mbind != "ok" {
                t.mbind = b.mbind.clone();
            }
            t.checked += b.checked;
            t.on_node += b.on_node;
            t.unknown += b.unknown;
            for &(n, k) in &b.elsewhere {
                for _ in 0..k {
                    t.add_elsewhere(n);
                }
            }
            if t.query_error.is_none() {
                t.query_error = b.query_error.clone();
            }
        }
        t
    }

    /// Warnings when the memory was not bound, pages were elsewhere, or their node
    /// is unknown. What holds for the whole probe (a refused `mbind`, a refused query)
    /// names only `who` and the node, so it is said once, not once per cell; what is
    /// particular to a cell (pages elsewhere, pages not present) names the cell.
    pub fn warnings(&self, who: &str, cell: &str, node: u32) -> Vec<Warning> {
        let mut out = Vec::new();
        if self.mbind != "ok" {
            out.push(Warning::NotBound {
                probe: who.into(),
                mbind: self.mbind.clone(),
            });
        }
        if !self.elsewhere.is_empty() {
            out.push(Warning::PagesElsewhere {
                probe: who.into(),
                cell: cell.into(),
                node,
                checked_pages: self.checked,
                elsewhere_pages: self.checked - self.on_node - self.unknown,
                by_node: self.elsewhere.clone(),
            });
        }
        if let Some(e) = &self.query_error {
            out.push(Warning::BindingUnchecked {
                probe: who.into(),
                error: e.clone(),
            });
        } else if self.unknown > 0 {
            out.push(Warning::PagesNodeUnknown {
                probe: who.into(),
                cell: cell.into(),
                checked_pages: self.checked,
                unknown_pages: self.unknown,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::cpu_nodes;
    use super::*;

    #[test]
    fn the_binding_is_checked_page_by_page_here() {
        let topo = crate::topology::detect().unwrap();
        let node = cpu_nodes(&topo)[0].0;
        let mut b = NodeBuffer::new(1 << 18, Some(node), false).unwrap();
        b.as_mut_slice().fill(1);
        let c = b.check(CHECKED_PAGES);
        assert_eq!(c.checked, CHECKED_PAGES as u64);
        let elsewhere: u64 = c.elsewhere.iter().map(|e| e.1).sum();
        assert_eq!(c.on_node + elsewhere + c.unknown, c.checked);
        if c.mbind == "ok" && c.query_error.is_none() {
            // Bound and touched: every checked page is on the node, and no warning.
            assert_eq!(c.on_node, c.checked, "{c:?}");
            assert!(c.warnings("numa", "cell", node).is_empty());
        } else {
            // Refused here (a container): the cell says so instead of assuming.
            assert!(!c.warnings("numa", "cell", node).is_empty());
        }
        // Untouched pages are not present: their node is unknown, never assumed.
        let fresh = NodeBuffer::new(1 << 18, Some(node), false).unwrap();
        let u = fresh.check(8);
        assert_eq!(u.on_node, 0, "{u:?}");
        assert!(!u.warnings("numa", "fresh", node).is_empty());
    }

    #[test]
    fn a_node_that_does_not_exist_is_refused_and_said() {
        let mut b = NodeBuffer::new(1 << 12, Some(1000), false).unwrap();
        assert_ne!(b.mbind, "ok");
        b.as_mut_slice().fill(1);
        let c = b.check(4);
        let w = c.warnings("numa", "read CPUs node 0 ← memory node 1000", 1000);
        assert!(
            matches!(&w[0], Warning::NotBound { mbind, .. } if mbind.contains("mbind")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| matches!(
                w,
                Warning::PagesElsewhere { node: 1000, .. } | Warning::BindingUnchecked { .. }
            )),
            "{w:?}"
        );
    }
}
