//! The memory probe's bandwidth kernels: what each reads and writes, how many arrays
//! a thread's block is split into, and STREAM's byte counting.

use crate::kernels::buffer::Pages;
use serde::{Deserialize, Serialize};

/// What a case measures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Kernel {
    /// Sum every 64-bit word once.
    Read,
    /// Write every word once (memset of a non-zero byte).
    Write,
    /// STREAM copy `a[i] = b[i]`.
    Copy,
    /// STREAM triad `a[i] = b[i] + s·c[i]`.
    Triad,
    /// Read, with every block allocated and first written by the main thread.
    ReadMainInit,
    /// Read, with transparent huge pages requested for the block (`MADV_HUGEPAGE`).
    ReadThp,
    /// Read, with transparent huge pages refused for the block (`MADV_NOHUGEPAGE`):
    /// the "off" arm of the THP comparison, whatever the system's THP mode.
    ReadNoThp,
}

impl Kernel {
    /// Series prefix.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::Copy => "copy",
            Kernel::Triad => "triad",
            Kernel::ReadMainInit => "read-main-init",
            Kernel::ReadThp => "read-thp",
            Kernel::ReadNoThp => "read-nothp",
        }
    }

    /// Pages the kernel's blocks ask for.
    pub fn pages(self) -> Pages {
        match self {
            Kernel::ReadThp => Pages::Huge,
            Kernel::ReadNoThp => Pages::Small,
            _ => Pages::Default,
        }
    }

    /// Whether the kernel's blocks may be kept between the runs of its group
    /// ([`crate::kernels::buffer::BlockCache`]): the streaming kernels, whose figure
    /// is the pass over memory already placed. The first-touch and huge-page
    /// variants measure what a fresh block's first touch gives, so theirs are new
    /// in every run.
    pub fn keeps_blocks(self) -> bool {
        matches!(
            self,
            Kernel::Read | Kernel::Write | Kernel::Copy | Kernel::Triad
        )
    }

    /// Arrays the block is split into.
    pub fn arrays(self) -> usize {
        match self {
            Kernel::Copy => 2,
            Kernel::Triad => 3,
            _ => 1,
        }
    }

    /// Bytes STREAM counts per element of one array.
    pub fn bytes_per_element(self) -> u64 {
        match self {
            Kernel::Copy => 16,
            Kernel::Triad => 24,
            _ => 8,
        }
    }
}

/// Bytes a kernel moves over one block of `block_bytes` (STREAM counting).
pub fn bytes_moved(kernel: Kernel, block_bytes: u64) -> u64 {
    let elements = block_bytes / 8 / kernel.arrays() as u64;
    elements * kernel.bytes_per_element()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_accounting_is_streams() {
        let block = 3 * 2 * 8 * 1000; // divisible by 1, 2 and 3 arrays of words
        assert_eq!(bytes_moved(Kernel::Read, block), block);
        assert_eq!(bytes_moved(Kernel::Write, block), block);
        // copy: two arrays of block/16 elements, 16 B each → block bytes counted.
        assert_eq!(bytes_moved(Kernel::Copy, block), block);
        // triad: three arrays of block/24 elements, 24 B each.
        assert_eq!(bytes_moved(Kernel::Triad, block), block);
        assert_eq!(Kernel::Copy.bytes_per_element(), 16);
        assert_eq!(Kernel::Triad.bytes_per_element(), 24);
    }
}
