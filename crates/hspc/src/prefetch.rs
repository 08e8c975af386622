//! Asking for a cache line in the writable state before the producer
//! writes it.
//!
//! Every line of a ring that the producer writes was last read by the
//! consumer, one lap earlier. Taking it back is a read-for-ownership: the
//! store waits in the core's store queue until the other core's copy is
//! invalidated, and stores leave that queue in order (x86-TSO), so one slow
//! line holds up every store behind it, `tail`'s included. With the two
//! CPUs close that costs little. With them far apart (another socket or
//! core complex; on the 2-vCPU VM of docs/channel.md, a cache-line round
//! trip of about 460 ns instead of 120) the per-event ring is set by it:
//! there the consumer keeps up and waits, and the producer moves a few
//! lines per round trip. `PREFETCHW` asks for ownership of a line ahead of
//! the producer without waiting for it, so the line is ready by the time
//! the stores reach it. rtrb, ringbuf and heapless do not do this.
//!
//! The n-buffer mode's slice copies use the same instruction, and
//! `PREFETCHT0` on the consumer's side ([`for_read`]), over a window ahead
//! of each copy (`channel::prefetch_window`): there the whole run of lines
//! a copy moves was last held by the other CPU.
//!
//! A prefetch is a hint: it changes no memory, never faults (not even on
//! an unmapped address), and an instruction the CPU lacks is not executed
//! (see [`for_write_supported`]). Under Miri, loom and on other targets it
//! is compiled out.

/// How far ahead of the producer the line is asked for, in bytes: 2 KiB,
/// at most half the ring (`Producer`'s constructor caps it).
///
/// Measured on the 2-vCPU AMD EPYC guest (docs/channel.md, "The ring per
/// event with the vCPUs far apart"), per event at 8 bytes, ring over rtrb,
/// with the vCPUs far apart: no prefetch 0.99–1.06×, 1 KiB ahead 1.82–2.12×,
/// 2 KiB 2.33×, 4 KiB 2.17×. The distance has to cover the line's round
/// trip at the producer's pace (about 460 ns at 2–4 ns per event is some
/// hundreds of events); much more only reaches further into lines the
/// consumer may still be reading.
pub(crate) const AHEAD_BYTES: usize = 2048;

/// The cache line of x86_64 CPUs, the unit a prefetch moves: 64 bytes
/// (Intel SDM vol. 3A §12.1; AMD64 APM vol. 2 §7.1). The channel's
/// [`CACHE_LINE`](crate::pad::CACHE_LINE) is 128 because adjacent lines are
/// fetched in pairs; a prefetch still asks for one line.
#[cfg_attr(loom, allow(dead_code))] // loom's storage has no cache to prefetch into
pub(crate) const LINE_BYTES: usize = 64;

/// True if this CPU executes `PREFETCHW`: CPUID leaf 8000_0001h, ECX bit 8
/// (`PRFCHW`; AMD64 Architecture Programmer's Manual vol. 3, appendix E,
/// and Intel SDM vol. 2A, CPUID). AMD has had it since the K6-2 (3DNow!);
/// Intel since Broadwell.
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) fn for_write_supported() -> bool {
    use core::arch::x86_64::__cpuid;
    /// The highest extended CPUID leaf is reported in EAX of this one.
    const EXTENDED_MAX_LEAF: u32 = 0x8000_0000;
    /// Extended processor feature flags.
    const EXTENDED_FEATURES_LEAF: u32 = 0x8000_0001;
    /// `PRFCHW` in ECX of [`EXTENDED_FEATURES_LEAF`].
    const PRFCHW_ECX_BIT: u32 = 8;
    // SAFETY: CPUID exists on every x86_64 CPU, and leaf 8000_0000h
    // (highest extended leaf) on every one too. (`__cpuid` is a safe
    // function in newer Rust; the block keeps older compilers happy.)
    #[allow(unused_unsafe)]
    let max_leaf = unsafe { __cpuid(EXTENDED_MAX_LEAF) }.eax;
    if max_leaf < EXTENDED_FEATURES_LEAF {
        return false;
    }
    // SAFETY: the leaf is within the range the CPU just reported.
    #[allow(unused_unsafe)]
    let ecx = unsafe { __cpuid(EXTENDED_FEATURES_LEAF) }.ecx;
    ecx & (1 << PRFCHW_ECX_BIT) != 0
}

/// Elsewhere there is no prefetch for writing to use.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
pub(crate) fn for_write_supported() -> bool {
    false
}

/// Asks for the cache line of `p` in the writable state. Call it only when
/// [`for_write_supported`] said yes.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[cfg_attr(loom, allow(dead_code))] // loom's storage has no cache to prefetch into
#[inline(always)]
pub(crate) fn for_write<T>(p: *const T) {
    // SAFETY: PREFETCHW writes no memory, reads none into a register and
    // raises no fault for any address; it only moves a cache line
    // (`readonly`: the compiler may assume it reads, which costs nothing
    // here). The caller checked that the CPU has it.
    unsafe {
        core::arch::asm!(
            "prefetchw [{p}]",
            p = in(reg) p,
            options(nostack, preserves_flags, readonly)
        );
    }
}

/// Asks for the cache line of `p` for reading, into every cache level
/// (`PREFETCHT0`, SSE: on every x86_64 CPU). A hint like [`for_write`]:
/// no memory is changed and no address faults.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[cfg_attr(loom, allow(dead_code))]
#[inline(always)]
pub(crate) fn for_read<T>(p: *const T) {
    // SAFETY: PREFETCHT0 writes no memory, reads none into a register and
    // raises no fault for any address; every x86_64 CPU has it (SSE).
    unsafe {
        core::arch::asm!(
            "prefetcht0 [{p}]",
            p = in(reg) p,
            options(nostack, preserves_flags, readonly)
        );
    }
}

/// True if [`for_read`] prefetches on this target (x86_64 outside Miri).
pub(crate) const FOR_READ: bool = cfg!(all(target_arch = "x86_64", not(miri)));

/// Elsewhere a no-op.
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
#[cfg_attr(loom, allow(dead_code))]
#[inline(always)]
pub(crate) fn for_read<T>(_p: *const T) {}

/// Elsewhere a no-op (never called: [`for_write_supported`] is false).
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
#[cfg_attr(loom, allow(dead_code))]
#[inline(always)]
pub(crate) fn for_write<T>(_p: *const T) {}
