//! Recursive block matrix multiply whose levels are families (seed 000 §7.2).
//!
//! `C = A·B` of n×n matrices splits each into four (n/2)×(n/2) quadrants and
//! runs the eight products `A_rm·B_mc` as one family — four into the
//! quadrants of C, four into a temporary T — then the four additions
//! `C_rc += T_rc` as a second family. Each product recurses the same way, so
//! `levels` recursions give 8^levels leaf products of order n/2^levels,
//! each a plain cache-friendly i-k-j loop.

use crate::error::KernelError;
use crate::shared::Executor;

/// A square matrix of `f64`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    order: usize,
    /// `order²` values, row after row.
    data: Vec<f64>,
}

impl Matrix {
    /// The `order`×`order` zero matrix.
    pub fn zeros(order: usize) -> Self {
        Matrix {
            order,
            data: vec![0.0; order * order],
        }
    }

    /// The matrix whose entry (i, j) is `f(i, j)`.
    pub fn from_fn(order: usize, mut f: impl FnMut(usize, usize) -> f64) -> Self {
        let mut data = Vec::with_capacity(order * order);
        for i in 0..order {
            for j in 0..order {
                data.push(f(i, j));
            }
        }
        Matrix { order, data }
    }

    /// A deterministic matrix of small non-trivial values (`seed` varies it).
    pub fn test_matrix(order: usize, seed: u64) -> Self {
        Matrix::from_fn(order, |i, j| {
            let x = (i * 31 + j * 17) as u64 + seed * 7919;
            (x % 23) as f64 / 8.0 - 1.25
        })
    }

    /// Number of rows (and of columns).
    pub fn order(&self) -> usize {
        self.order
    }

    /// Entry (i, j).
    ///
    /// # Panics
    /// If `i` or `j` is not below the order.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(
            i < self.order && j < self.order,
            "({i}, {j}) outside a {0}x{0} matrix",
            self.order
        );
        self.data[i * self.order + j]
    }

    /// All entries, row after row.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// Largest `|self(i, j) − other(i, j)|`; infinite if the orders differ.
    pub fn max_abs_diff(&self, other: &Matrix) -> f64 {
        if self.order != other.order {
            return f64::INFINITY;
        }
        self.data
            .iter()
            .zip(&other.data)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }

    fn view(&self) -> View {
        View {
            ptr: self.data.as_ptr(),
            stride: self.order,
            order: self.order,
        }
    }

    fn view_mut(&mut self) -> ViewMut {
        ViewMut {
            ptr: self.data.as_mut_ptr(),
            stride: self.order,
            order: self.order,
        }
    }
}

/// Number of leaf products of a recursion of `levels` levels: 8^levels.
pub fn leaf_tasks(levels: u32) -> u64 {
    8u64.saturating_pow(levels)
}

/// Floating-point operations of `C = A·B` of order n: 2n³ for the products
/// (a multiply and an add per term) plus the additions of the recursion,
/// n² per level.
pub fn flops(order: usize, levels: u32) -> u64 {
    let n = order as u64;
    2 * n * n * n + u64::from(levels) * n * n
}

/// `A·B` by the textbook triple loop: the reference.
///
/// # Errors
/// [`KernelError::OrderMismatch`] if A and B differ in order.
pub fn matmul_reference(a: &Matrix, b: &Matrix) -> Result<Matrix, KernelError> {
    if a.order != b.order {
        return Err(KernelError::OrderMismatch {
            a: a.order,
            b: b.order,
            c: a.order,
        });
    }
    let n = a.order;
    Ok(Matrix::from_fn(n, |i, j| {
        (0..n).map(|k| a.get(i, k) * b.get(k, j)).sum()
    }))
}

/// `C = A·B` by recursive block decomposition, `levels` levels deep, on `exec`.
///
/// # Errors
/// [`KernelError::OrderMismatch`] if the orders differ, and
/// [`KernelError::NotDivisible`] if the order is not a multiple of 2^levels.
///
/// # Examples
/// ```
/// use taskpool::matmul::{matmul_reference, rmatmul, Matrix};
/// use taskpool::Executor;
/// let (a, b) = (Matrix::test_matrix(8, 1), Matrix::test_matrix(8, 2));
/// let mut c = Matrix::zeros(8);
/// rmatmul(Executor::Sequential, &a, &b, &mut c, 2).unwrap();
/// assert!(c.max_abs_diff(&matmul_reference(&a, &b).unwrap()) < 1e-12);
/// ```
pub fn rmatmul(
    exec: Executor<'_>,
    a: &Matrix,
    b: &Matrix,
    c: &mut Matrix,
    levels: u32,
) -> Result<(), KernelError> {
    if a.order != b.order || a.order != c.order {
        return Err(KernelError::OrderMismatch {
            a: a.order,
            b: b.order,
            c: c.order,
        });
    }
    let divisor = 1usize.checked_shl(levels).unwrap_or(0);
    if divisor == 0 || a.order % divisor != 0 {
        return Err(KernelError::NotDivisible { n: a.order, levels });
    }
    // SAFETY: the views cover whole matrices; A and B are only read, C is
    // borrowed mutably for the call and written only through `c`.
    unsafe { recurse(&exec, a.view(), b.view(), c.view_mut(), levels) };
    Ok(())
}

/// A read-only square block: `order` rows of `order` values, rows `stride` apart.
#[derive(Clone, Copy)]
struct View {
    ptr: *const f64,
    stride: usize,
    order: usize,
}

/// A writable square block (see [`View`]).
#[derive(Clone, Copy)]
struct ViewMut {
    ptr: *mut f64,
    stride: usize,
    order: usize,
}

// SAFETY: a `View` is a shared borrow of `f64`s that nobody writes while it
// is used (`rmatmul` borrows A and B immutably).
unsafe impl Send for View {}
// SAFETY: as for `Send`.
unsafe impl Sync for View {}
// SAFETY: each `ViewMut` in use covers a block no other thread touches (the
// recursion hands each family index its own quadrant).
unsafe impl Send for ViewMut {}
// SAFETY: as for `Send`.
unsafe impl Sync for ViewMut {}

impl View {
    /// Quadrant (r, c) of an even-order block.
    fn quadrant(self, r: usize, c: usize) -> View {
        let h = self.order / 2;
        View {
            // SAFETY: stays inside the block: at most (order/2) rows and
            // columns from its start.
            ptr: unsafe { self.ptr.add(r * h * self.stride + c * h) },
            stride: self.stride,
            order: h,
        }
    }

    /// Row `i`.
    ///
    /// # Safety
    /// `i < order`, and the block is valid for reads.
    unsafe fn row<'a>(self, i: usize) -> &'a [f64] {
        // SAFETY: row i of a valid block, per the contract.
        unsafe { std::slice::from_raw_parts(self.ptr.add(i * self.stride), self.order) }
    }
}

impl ViewMut {
    fn quadrant(self, r: usize, c: usize) -> ViewMut {
        let h = self.order / 2;
        ViewMut {
            // SAFETY: as in `View::quadrant`.
            ptr: unsafe { self.ptr.add(r * h * self.stride + c * h) },
            stride: self.stride,
            order: h,
        }
    }

    fn read(self) -> View {
        View {
            ptr: self.ptr,
            stride: self.stride,
            order: self.order,
        }
    }

    /// Row `i`, writable.
    ///
    /// # Safety
    /// `i < order`, the block is valid for writes, and nothing else accesses
    /// this row while the slice lives.
    unsafe fn row_mut<'a>(self, i: usize) -> &'a mut [f64] {
        // SAFETY: row i of a valid block, exclusive per the contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * self.stride), self.order) }
    }
}

/// `c = a·b`, recursing `levels` levels.
///
/// # Safety
/// The three blocks have the same order, divisible by 2^levels; `a` and `b`
/// are valid for reads and not written during the call; `c` is valid for
/// writes and accessed by nothing else during the call.
unsafe fn recurse(exec: &Executor<'_>, a: View, b: View, c: ViewMut, levels: u32) {
    if levels == 0 {
        // SAFETY: the caller's contract.
        unsafe { leaf(a, b, c) };
        return;
    }
    let n = c.order;
    let mut temp = Matrix::zeros(n);
    let t = temp.view_mut();
    // Product p computes A(r, m)·B(m, col) into C(r, col) if m = 0, else into
    // T(r, col): eight distinct targets.
    exec.fork(8, &|p| {
        let (r, col, m) = (p >> 2, (p >> 1) & 1, p & 1);
        let target = if m == 0 { c } else { t };
        // SAFETY: the eight indices write eight disjoint quadrants (of C and
        // of the local T) and read A and B only; each index runs once.
        unsafe {
            recurse(
                exec,
                a.quadrant(r, m),
                b.quadrant(m, col),
                target.quadrant(r, col),
                levels - 1,
            )
        };
    });
    // The four additions C(r, col) += T(r, col).
    exec.for_each(4, &|q| {
        let (r, col) = (q >> 1, q & 1);
        let (cq, tq) = (c.quadrant(r, col), t.quadrant(r, col).read());
        for i in 0..cq.order {
            // SAFETY: index q alone touches quadrant q of C and of T; the
            // products are done (the family above synced).
            let (crow, trow) = unsafe { (cq.row_mut(i), tq.row(i)) };
            for (x, y) in crow.iter_mut().zip(trow) {
                *x += y;
            }
        }
    });
    drop(temp);
}

/// `c = a·b` by the i-k-j loop: the inner loop streams a row of B into a row
/// of C, contiguous and vectorisable.
///
/// # Safety
/// As for [`recurse`].
unsafe fn leaf(a: View, b: View, c: ViewMut) {
    for i in 0..c.order {
        // SAFETY: i < order; c is exclusive to this call, a and b are read-only.
        let (crow, arow) = unsafe { (c.row_mut(i), a.row(i)) };
        crow.fill(0.0);
        for (k, &aik) in arow.iter().enumerate() {
            // SAFETY: k < order.
            let brow = unsafe { b.row(k) };
            for (cij, &bkj) in crow.iter_mut().zip(brow) {
                *cij += aik * bkj;
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{FreeList, Pool, PoolConfig};

    #[test]
    fn rmatmul_matches_the_reference_at_every_level() {
        for free_list in FreeList::ALL {
            let pool = Pool::new(PoolConfig::new(free_list).with_max_threads(32)).unwrap();
            let execs = [
                Executor::Sequential,
                Executor::taskpool(&pool),
                Executor::TaskPool {
                    pool: &pool,
                    block: 1,
                },
                #[cfg(feature = "rayon")]
                Executor::Rayon,
            ];
            let n = 32;
            let (a, b) = (Matrix::test_matrix(n, 1), Matrix::test_matrix(n, 2));
            let reference = matmul_reference(&a, &b).unwrap();
            for exec in execs {
                for levels in 0..=4 {
                    let mut c = Matrix::from_fn(n, |_, _| f64::NAN); // must be overwritten
                    rmatmul(exec, &a, &b, &mut c, levels).unwrap();
                    // Entries are multiples of 1/8 below 2 in size: every
                    // product and sum of 32 of them is exact in f64.
                    assert_eq!(c, reference, "{} {free_list} levels={levels}", exec.name());
                }
            }
        }
    }

    #[test]
    fn rmatmul_counts_its_families() {
        let pool = Pool::new(PoolConfig::default().with_max_threads(8)).unwrap();
        let (a, b) = (Matrix::test_matrix(16, 3), Matrix::test_matrix(16, 4));
        let mut c = Matrix::zeros(16);
        rmatmul(Executor::taskpool(&pool), &a, &b, &mut c, 2).unwrap();
        // Each inner node: one family of 8 products, one of 4 additions.
        let inner_nodes = 1 + 8;
        assert_eq!(pool.stats().families, 2 * inner_nodes);
        assert_eq!(leaf_tasks(2), 64);
    }

    #[test]
    fn rmatmul_rejects_bad_shapes() {
        let (a, b) = (Matrix::zeros(12), Matrix::zeros(12));
        let mut c = Matrix::zeros(12);
        assert_eq!(
            rmatmul(Executor::Sequential, &a, &b, &mut c, 3),
            Err(KernelError::NotDivisible { n: 12, levels: 3 })
        );
        let mut small = Matrix::zeros(4);
        assert_eq!(
            rmatmul(Executor::Sequential, &a, &b, &mut small, 1),
            Err(KernelError::OrderMismatch { a: 12, b: 12, c: 4 })
        );
        assert!(rmatmul(Executor::Sequential, &a, &b, &mut c, 2).is_ok());
        assert!(matches!(
            rmatmul(Executor::Sequential, &a, &b, &mut c, 200),
            Err(KernelError::NotDivisible { .. })
        ));
    }
}
