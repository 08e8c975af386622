//! The STREAM-style kernels over a block: `read` (sum), `write` (fill), `copy`,
//! `triad`. What each compiles to is said in the memory probe's documentation
//! (`probes/memory/`), which times them; the NUMA, workload and false-sharing
//! probes run `read_sum` too.

use std::hint::black_box;

/// Wrapping sum of every word (8 independent accumulators so LLVM vectorises); on
/// x86_64 with AVX2 the same loop compiled for 256-bit loads.
pub fn read_sum(words: &[u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { read_sum_avx2(words) };
    }
    read_sum_generic(words)
}

#[inline(never)]
fn read_sum_generic(words: &[u64]) -> u64 {
    read_sum_body(words)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn read_sum_avx2(words: &[u64]) -> u64 {
    read_sum_body(words)
}

#[inline(always)]
fn read_sum_body(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            acc[i] = acc[i].wrapping_add(c[i]);
        }
    }
    let mut s = acc.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    for &w in rest {
        s = s.wrapping_add(w);
    }
    s
}

/// The word `write` stores: the byte 0x5A in every position, so `fill` becomes a
/// `memset` of a non-zero byte.
pub const WRITE_WORD: u64 = 0x5A5A_5A5A_5A5A_5A5A;

/// Fill every word with [`WRITE_WORD`]. On x86_64 with AVX and a 32-byte aligned
/// block: 256-bit non-temporal (streaming) stores, which skip the read-for-ownership
/// of every line (as likwid-bench's `store_mem_avx`: what the machine does best for a
/// pure write). Elsewhere `slice::fill` (glibc `memset`, whose choice of stores
/// depends on the glibc version: `rep stosb` in 2.36, streaming stores from 2.40).
#[inline(never)]
pub fn write_fill(words: &mut [u64]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if words.as_ptr() as usize % 32 == 0 && std::arch::is_x86_feature_detected!("avx") {
        done = words.len() / 16 * 16;
        // SAFETY: the slice holds at least `done` words and is 32-byte aligned
        // (checked); the CPU has AVX (checked).
        unsafe { fill_nt_avx(words.as_mut_ptr(), done) };
    }
    words[done..].fill(WRITE_WORD);
    black_box(words.as_ptr());
}

/// `words` (a multiple of 16) copies of [`WRITE_WORD`] with 256-bit streaming stores.
///
/// # Safety
/// `dst` must be valid for `words` words and 32-byte aligned; the CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn fill_nt_avx(dst: *mut u64, words: usize) {
    use std::arch::x86_64::{__m256i, _mm256_set1_epi64x, _mm256_stream_si256, _mm_sfence};
    let v = _mm256_set1_epi64x(WRITE_WORD as i64);
    let d = dst as *mut __m256i;
    let mut i = 0;
    while i < words / 4 {
        // SAFETY: i + 3 < words / 4 vectors, inside the block (caller's contract),
        // 32-byte aligned.
        unsafe {
            _mm256_stream_si256(d.add(i), v);
            _mm256_stream_si256(d.add(i + 1), v);
            _mm256_stream_si256(d.add(i + 2), v);
            _mm256_stream_si256(d.add(i + 3), v);
        }
        i += 4;
    }
    // Streaming stores are weakly ordered: fence before anyone reads the block.
    _mm_sfence();
}

/// STREAM copy. On x86_64 with aligned arrays: vector loads and non-temporal
/// (streaming) stores, which skip the read-for-ownership of the destination — what
/// the machine does best for arrays larger than the caches — 256-bit with AVX and
/// 32-byte alignment (as likwid-bench's `copy_mem_avx`), 128-bit SSE2 otherwise
/// (`copy_mem_sse`). Elsewhere glibc `memcpy`.
#[inline(never)]
pub fn copy(dst: &mut [u64], src: &[u64]) {
    let n = dst.len().min(src.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if (dst.as_ptr() as usize | src.as_ptr() as usize) % 32 == 0
        && std::arch::is_x86_feature_detected!("avx")
    {
        done = n / 16 * 16;
        // SAFETY: both slices hold at least `done` words, are 32-byte aligned (checked)
        // and do not overlap (`&mut` vs `&`); the CPU has AVX (checked).
        unsafe { copy_nt_avx(dst.as_mut_ptr(), src.as_ptr(), done) };
    } else if (dst.as_ptr() as usize | src.as_ptr() as usize) % 16 == 0 {
        done = n / 8 * 8;
        // SAFETY: both slices hold at least `done` words, are 16-byte aligned (checked)
        // and do not overlap (`&mut` vs `&`); SSE2 is part of the x86_64 baseline.
        unsafe { copy_nt_sse2(dst.as_mut_ptr(), src.as_ptr(), done) };
    }
    dst[done..n].copy_from_slice(&src[done..n]);
    black_box(dst.as_ptr());
}

/// `words` (a multiple of 8) words from `src` to `dst` with streaming stores.
///
/// # Safety
/// `dst` and `src` must be valid for `words` words, 16-byte aligned, not overlapping.
#[cfg(target_arch = "x86_64")]
unsafe fn copy_nt_sse2(dst: *mut u64, src: *const u64, words: usize) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_sfence, _mm_stream_si128};
    let (d, s) = (dst as *mut __m128i, src as *const __m128i);
    let mut i = 0;
    while i < words / 2 {
        // SAFETY: i + 3 < words / 2 vectors, inside both arrays (caller's contract).
        unsafe {
            let a = _mm_load_si128(s.add(i));
            let b = _mm_load_si128(s.add(i + 1));
            let c = _mm_load_si128(s.add(i + 2));
            let e = _mm_load_si128(s.add(i + 3));
            _mm_stream_si128(d.add(i), a);
            _mm_stream_si128(d.add(i + 1), b);
            _mm_stream_si128(d.add(i + 2), c);
            _mm_stream_si128(d.add(i + 3), e);
        }
        i += 4;
    }
    // Streaming stores are weakly ordered: fence before anyone reads the result.
    // SAFETY: SSE is part of the x86_64 baseline.
    unsafe { _mm_sfence() };
}

/// `words` (a multiple of 16) words from `src` to `dst`: 256-bit loads and streaming
/// stores.
///
/// # Safety
/// `dst` and `src` must be valid for `words` words, 32-byte aligned, not overlapping;
/// the CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy_nt_avx(dst: *mut u64, src: *const u64, words: usize) {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_stream_si256, _mm_sfence};
    let (d, s) = (dst as *mut __m256i, src as *const __m256i);
    let mut i = 0;
    while i < words / 4 {
        // SAFETY: i + 3 < words / 4 vectors, inside both arrays (caller's contract),
        // 32-byte aligned.
        unsafe {
            let a = _mm256_load_si256(s.add(i));
            let b = _mm256_load_si256(s.add(i + 1));
            let c = _mm256_load_si256(s.add(i + 2));
            let e = _mm256_load_si256(s.add(i + 3));
            _mm256_stream_si256(d.add(i), a);
            _mm256_stream_si256(d.add(i + 1), b);
            _mm256_stream_si256(d.add(i + 2), c);
            _mm256_stream_si256(d.add(i + 3), e);
        }
        i += 4;
    }
    // Streaming stores are weakly ordered: fence before anyone reads the result.
    _mm_sfence();
}

/// STREAM triad `a[i] = b[i] + s·c[i]`. On x86_64 with 16-byte aligned arrays the
/// stores are non-temporal (as likwid-bench's `triad_mem`), elsewhere ordinary.
#[inline(never)]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    let n = a.len().min(b.len()).min(c.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if (a.as_ptr() as usize | b.as_ptr() as usize | c.as_ptr() as usize) % 16 == 0 {
        done = n / 4 * 4;
        // SAFETY: all three slices hold at least `done` elements, are 16-byte aligned
        // (checked) and `a` overlaps neither `b` nor `c` (`&mut` vs `&`).
        unsafe { triad_nt_sse2(a.as_mut_ptr(), b.as_ptr(), c.as_ptr(), s, done) };
    }
    for ((a, &b), &c) in a[done..n].iter_mut().zip(&b[done..n]).zip(&c[done..n]) {
        *a = b + s * c;
    }
    black_box(a.as_ptr());
}

/// Triad over `n` (a multiple of 4) elements with streaming stores.
///
/// # Safety
/// As [`copy_nt_sse2`], for all three arrays.
#[cfg(target_arch = "x86_64")]
unsafe fn triad_nt_sse2(a: *mut f64, b: *const f64, c: *const f64, s: f64, n: usize) {
    use std::arch::x86_64::{
        _mm_add_pd, _mm_load_pd, _mm_mul_pd, _mm_set1_pd, _mm_sfence, _mm_stream_pd,
    };
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let sv = unsafe { _mm_set1_pd(s) };
    let mut i = 0;
    while i < n {
        // SAFETY: i + 3 < n, inside every array (caller's contract), 16-byte aligned.
        unsafe {
            let x = _mm_add_pd(_mm_load_pd(b.add(i)), _mm_mul_pd(sv, _mm_load_pd(c.add(i))));
            let y = _mm_add_pd(
                _mm_load_pd(b.add(i + 2)),
                _mm_mul_pd(sv, _mm_load_pd(c.add(i + 2))),
            );
            _mm_stream_pd(a.add(i), x);
            _mm_stream_pd(a.add(i + 2), y);
        }
        i += 4;
    }
    // SAFETY: as above; the fence orders the streaming stores.
    unsafe { _mm_sfence() };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::buffer::{Block, Pages, HUGE_PAGE_BYTES};

    #[test]
    fn read_sum_is_the_sum() {
        for n in [0usize, 1, 7, 8, 9, 1000, 4099] {
            let v: Vec<u64> = (0..n as u64).collect();
            let expect = (n as u64) * (n as u64).saturating_sub(1) / 2;
            assert_eq!(read_sum(&v), expect, "n = {n}");
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_streaming_paths_write_what_the_plain_ones_do() {
        let src = Block::new(4096, Pages::Default, 3).unwrap();
        let mut a = Block::new(4096, Pages::Default, 0).unwrap();
        // SAFETY: blocks are page-aligned, 4096 words each, distinct; SSE2 is baseline.
        unsafe { copy_nt_sse2(a.as_mut_slice().as_mut_ptr(), src.as_slice().as_ptr(), 4096) };
        assert_eq!(read_sum(a.as_slice()), 3 * 4096);
        if std::arch::is_x86_feature_detected!("avx") {
            let mut b = Block::new(4096, Pages::Default, 0).unwrap();
            // SAFETY: as above; the CPU has AVX (checked).
            unsafe { copy_nt_avx(b.as_mut_slice().as_mut_ptr(), src.as_slice().as_ptr(), 4096) };
            assert_eq!(a.as_slice(), b.as_slice());
            // SAFETY: 4096 words, page-aligned; AVX checked.
            unsafe { fill_nt_avx(b.as_mut_slice().as_mut_ptr(), 4096) };
            assert!(b.as_slice().iter().all(|&w| w == WRITE_WORD));
        }
        // A slice that is not 32-byte aligned takes the plain path for all of it.
        let mut c = Block::new(4096, Pages::Default, 0).unwrap();
        write_fill(&mut c.as_mut_slice()[1..]);
        assert_eq!(c.as_slice()[0], 0);
        assert!(c.as_slice()[1..].iter().all(|&w| w == WRITE_WORD));
        let (d, s) = (&mut a.as_mut_slice()[1..1001], &src.as_slice()[1..1001]);
        copy(d, s);
        assert!(d.iter().all(|&w| w == 3));
    }

    #[test]
    fn blocks_are_filled_aligned_and_kernels_do_their_work() {
        let mut a = Block::new(1000, Pages::Default, 7).unwrap();
        assert_eq!(a.addr() % HUGE_PAGE_BYTES, 0);
        assert!(a.allocated_bytes() >= 8000);
        assert_eq!(read_sum(a.as_slice()), 7000);
        write_fill(a.as_mut_slice());
        assert!(a.as_slice().iter().all(|&w| w == WRITE_WORD));
        let b = Block::new(1000, Pages::Huge, 5).unwrap();
        copy(a.as_mut_slice(), b.as_slice());
        assert_eq!(read_sum(a.as_slice()), 5000);
        let mut x = vec![0.0; 10];
        triad(&mut x, &[1.0; 10], &[2.0; 10], 3.0);
        assert!(x.iter().all(|&v| v == 7.0));
    }
}
