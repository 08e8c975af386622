//! Recursive radix-2 FFT whose every step is a family (seed 000 §7.1).
//!
//! `fft` of 2^s points splits into the FFTs of the even and the odd samples
//! (a family of 2, recursively down to single points) and then combines them
//! with n/2 butterflies (a family of n/2 tiny threads). A transform of 2^s
//! points thus creates 2^s − 1 recursion families and as many butterfly
//! families, with s·2^(s−1) butterflies in all: the number of threads grows
//! exponentially with the size, which is what the seed measures. The
//! performance of this FFT is not the point (a real FFT would stop recursing
//! long before single points); how a runtime copes with it is.

use std::ops::{Add, Mul, Sub};

use crate::error::KernelError;
use crate::shared::{Executor, SharedMut};

/// A complex number of two `f64`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// `re + i·im`.
    pub const fn new(re: f64, im: f64) -> Self {
        Complex { re, im }
    }

    /// `e^(i·theta)`.
    pub fn cis(theta: f64) -> Self {
        let (sin, cos) = theta.sin_cos();
        Complex { re: cos, im: sin }
    }

    /// Modulus `|z|`.
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
}

impl Add for Complex {
    type Output = Complex;
    fn add(self, rhs: Complex) -> Complex {
        Complex::new(self.re + rhs.re, self.im + rhs.im)
    }
}

impl Sub for Complex {
    type Output = Complex;
    fn sub(self, rhs: Complex) -> Complex {
        Complex::new(self.re - rhs.re, self.im - rhs.im)
    }
}

impl Mul for Complex {
    type Output = Complex;
    fn mul(self, rhs: Complex) -> Complex {
        Complex::new(
            self.re * rhs.re - self.im * rhs.im,
            self.re * rhs.im + self.im * rhs.re,
        )
    }
}

/// Forward transform `output[k] = Σ_j input[j]·e^(−2πi·jk/n)` of
/// `n = input.len()` points (a power of two), on `exec`.
///
/// # Errors
/// [`KernelError::NotPowerOfTwo`] or [`KernelError::LengthMismatch`].
///
/// # Examples
/// ```
/// use taskpool::fft::{dft_reference, fft, max_abs_error, test_signal, Complex};
/// use taskpool::Executor;
/// let input = test_signal(16);
/// let mut output = vec![Complex::default(); 16];
/// fft(Executor::Sequential, &input, &mut output).unwrap();
/// assert!(max_abs_error(&output, &dft_reference(&input)) < 1e-9);
/// ```
pub fn fft(
    exec: Executor<'_>,
    input: &[Complex],
    output: &mut [Complex],
) -> Result<(), KernelError> {
    fft_with_cutoff(exec, input, output, 1)
}

/// [`fft`] with a sequential cutoff: sub-transforms of at most `cutoff`
/// points (and their butterflies) run as plain loops on the calling thread,
/// so families are only made where there is enough work to share. `cutoff`
/// 1 is [`fft`] itself (a family at every level, as in seed 000); 0 is taken
/// as 1. The result is the same for every cutoff.
///
/// # Errors
/// As [`fft`].
///
/// # Examples
/// ```
/// use taskpool::fft::{dft_reference, fft_with_cutoff, max_abs_error, test_signal, Complex};
/// use taskpool::Executor;
/// let input = test_signal(64);
/// let mut output = vec![Complex::default(); 64];
/// fft_with_cutoff(Executor::Sequential, &input, &mut output, 16).unwrap();
/// assert!(max_abs_error(&output, &dft_reference(&input)) < 1e-9);
/// ```
pub fn fft_with_cutoff(
    exec: Executor<'_>,
    input: &[Complex],
    output: &mut [Complex],
    cutoff: usize,
) -> Result<(), KernelError> {
    let n = input.len();
    if !n.is_power_of_two() {
        return Err(KernelError::NotPowerOfTwo { len: n });
    }
    if output.len() != n {
        return Err(KernelError::LengthMismatch {
            input: n,
            output: output.len(),
        });
    }
    let twiddles = twiddles(n);
    recurse(&exec, input, 1, output, &twiddles, cutoff.max(1));
    Ok(())
}

/// `e^(−2πi·k/n)` for `k < n/2`: every size-m step uses every (n/m)-th.
fn twiddles(n: usize) -> Vec<Complex> {
    (0..n / 2)
        .map(|k| Complex::cis(-2.0 * std::f64::consts::PI * k as f64 / n as f64))
        .collect()
}

/// Transforms the `out.len()` samples `input[0], input[stride], …` into `out`.
fn recurse(
    exec: &Executor<'_>,
    input: &[Complex],
    stride: usize,
    out: &mut [Complex],
    twiddles: &[Complex],
    cutoff: usize,
) {
    let n = out.len();
    if n == 1 {
        out[0] = input[0];
        return;
    }
    if n <= cutoff && !matches!(exec, Executor::Sequential) {
        recurse(&Executor::Sequential, input, stride, out, twiddles, cutoff);
        return;
    }
    let half = n / 2;
    {
        let halves = SharedMut::new(out);
        // Family of 2: the even samples into the low half, the odd into the high.
        exec.fork(2, &|h| {
            // SAFETY: h is 0 or 1 and each index runs once, so the two halves
            // handed out are disjoint.
            let part = unsafe { halves.part(h * half, half) };
            recurse(
                exec,
                &input[h * stride..],
                stride * 2,
                part,
                twiddles,
                cutoff,
            );
        });
    }
    // Step between the twiddles of this size: w_n^k = w_N^(k·N/n).
    let twiddle_step = 2 * twiddles.len() / n;
    let (low, high) = out.split_at_mut(half);
    let (low, high) = (SharedMut::new(low), SharedMut::new(high));
    // Family of n/2 butterflies.
    exec.for_each(half, &|k| {
        // SAFETY: butterfly k alone touches element k of each half, and each
        // index runs once.
        let (even, odd) = unsafe { (&mut low.part(k, 1)[0], &mut high.part(k, 1)[0]) };
        let t = twiddles[k * twiddle_step] * *odd;
        let e = *even;
        *even = e + t;
        *odd = e - t;
    });
}

/// The direct O(n²) discrete Fourier transform (any length): the reference
/// the FFT is checked against.
pub fn dft_reference(input: &[Complex]) -> Vec<Complex> {
    let n = input.len();
    (0..n)
        .map(|k| {
            input
                .iter()
                .enumerate()
                .fold(Complex::default(), |acc, (j, &x)| {
                    // (j·k) mod n keeps the angle small, hence accurate.
                    let angle = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    acc + x * Complex::cis(angle)
                })
        })
        .collect()
}

/// Largest `|a[i] − b[i]|`; infinite if the lengths differ.
pub fn max_abs_error(a: &[Complex], b: &[Complex]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// A deterministic, non-symmetric test signal of `len` points (no two
/// transforms of it are accidentally equal).
pub fn test_signal(len: usize) -> Vec<Complex> {
    (0..len)
        .map(|j| {
            let x = j as f64;
            Complex::new(
                (0.37 * x).sin() + 0.5 * (x * 0.011).cos(),
                (0.13 * x + 1.0).cos() - 0.25,
            )
        })
        .collect()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{FreeList, Pool, PoolConfig};

    fn executors(pool: &Pool) -> Vec<Executor<'_>> {
        vec![
            Executor::Sequential,
            Executor::taskpool(pool),
            Executor::TaskPool { pool, block: 2 },
            #[cfg(feature = "rayon")]
            Executor::Rayon,
        ]
    }

    #[test]
    fn fft_matches_direct_dft_on_small_sizes() {
        for free_list in FreeList::ALL {
            let pool = Pool::new(PoolConfig::new(free_list).with_max_threads(16)).unwrap();
            for exec in executors(&pool) {
                for s in 0..=9 {
                    let n = 1usize << s;
                    let input = test_signal(n);
                    let mut output = vec![Complex::default(); n];
                    fft(exec, &input, &mut output).unwrap();
                    let err = max_abs_error(&output, &dft_reference(&input));
                    // Round-off grows like log2(n)·ε·Σ|x|; 1e-9 is far above it
                    // and far below any indexing mistake.
                    assert!(err < 1e-9, "{} {free_list} n={n}: error {err}", exec.name());
                }
            }
        }
    }

    #[test]
    fn a_deadline_abandons_the_families_not_yet_started() {
        let pool = Pool::new(PoolConfig::default().with_max_threads(8)).unwrap();
        let inner = Executor::taskpool(&pool);
        let input = test_signal(1 << 8);
        let mut reference = vec![Complex::default(); input.len()];
        fft(Executor::Sequential, &input, &mut reference).unwrap();
        // No deadline: every family runs (n − 1 forks and n − 1 butterfly
        // families), the result is right.
        let never = crate::Stop::never();
        let mut out = vec![Complex::default(); input.len()];
        let exec = Executor::Until {
            inner: &inner,
            stop: &never,
        };
        fft(exec, &input, &mut out).unwrap();
        assert!(!never.stopped());
        assert_eq!(never.families_run(), 2 * ((1 << 8) - 1));
        assert!(max_abs_error(&out, &reference) < 1e-9);
        // A deadline already past: the first family is abandoned, and with it
        // everything below it; how far it got is counted.
        let past = crate::Stop::at(std::time::Instant::now());
        let exec = Executor::Until {
            inner: &inner,
            stop: &past,
        };
        fft(exec, &input, &mut out).unwrap();
        assert!(past.stopped());
        assert_eq!(past.families_run(), 0);
        assert!(past.families_abandoned() >= 1);
    }

    #[test]
    fn every_executor_gives_the_same_larger_transform() {
        let pool = Pool::new(PoolConfig::default().with_max_threads(16)).unwrap();
        let input = test_signal(1 << 12);
        let mut reference = vec![Complex::default(); input.len()];
        fft(Executor::Sequential, &input, &mut reference).unwrap();
        for exec in executors(&pool) {
            let mut output = vec![Complex::default(); input.len()];
            fft(exec, &input, &mut output).unwrap();
            // Same operations in the same order per element: bit-identical.
            assert_eq!(output, reference, "{}", exec.name());
        }
    }

    #[test]
    fn every_cutoff_gives_the_same_transform() {
        let pool = Pool::new(PoolConfig::default().with_max_threads(16)).unwrap();
        let input = test_signal(1 << 10);
        let mut reference = vec![Complex::default(); input.len()];
        fft(Executor::Sequential, &input, &mut reference).unwrap();
        for exec in executors(&pool) {
            for cutoff in [0, 1, 2, 64, 1 << 10, 1 << 12] {
                let mut output = vec![Complex::default(); input.len()];
                fft_with_cutoff(exec, &input, &mut output, cutoff).unwrap();
                assert_eq!(output, reference, "{} cutoff {cutoff}", exec.name());
            }
        }
    }

    #[test]
    fn fft_rejects_bad_lengths() {
        let mut out = vec![Complex::default(); 6];
        assert_eq!(
            fft(Executor::Sequential, &test_signal(6), &mut out),
            Err(KernelError::NotPowerOfTwo { len: 6 })
        );
        assert_eq!(
            fft(Executor::Sequential, &test_signal(0), &mut []),
            Err(KernelError::NotPowerOfTwo { len: 0 })
        );
        assert_eq!(
            fft(Executor::Sequential, &test_signal(8), &mut out),
            Err(KernelError::LengthMismatch {
                input: 8,
                output: 6
            })
        );
    }

    #[test]
    fn a_transform_of_2_to_the_s_creates_two_families_per_inner_node() {
        let pool = Pool::new(PoolConfig::default().with_max_threads(8)).unwrap();
        let s = 6;
        let input = test_signal(1 << s);
        let mut output = vec![Complex::default(); 1 << s];
        fft(Executor::taskpool(&pool), &input, &mut output).unwrap();
        let stats = pool.stats();
        assert_eq!(stats.families, 2 * ((1 << s) - 1));
        // Butterflies s·2^(s−1), plus 2 recursion indices per inner node.
        let indices = s * (1 << (s - 1)) + 2 * ((1 << s) - 1);
        assert_eq!(
            stats.indices_on_workers + stats.indices_on_creators,
            indices as u64
        );
    }
}
