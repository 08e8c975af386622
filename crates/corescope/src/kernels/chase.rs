//! The dependent pointer chase: each load's address is the previous load's value,
//! so the loop runs at the latency of the level that holds the chain (seed 001
//! test 2). The memory, NUMA and spin probes use it.

/// Follow `steps` links of a pointer chase starting at slot 0; returns where it ended.
/// `next[i · stride]` holds the slot after slot `i`.
pub fn chase(next: &[u64], stride: usize, steps: u64) -> u64 {
    chase_from(next, stride, 0, steps)
}

/// Follow `steps` links of a pointer chase starting at slot `start`; returns where
/// it ended (where the next walk continues, so repeated walks cover the whole
/// cycle instead of its first `steps` slots again).
#[inline(never)]
pub fn chase_from(next: &[u64], stride: usize, start: u64, steps: u64) -> u64 {
    let mut i = start;
    for _ in 0..steps {
        i = next[i as usize * stride];
    }
    i
}

/// A random cyclic permutation of `n` slots (Sattolo's algorithm), written into
/// `next[i · stride]`: from any slot the chase visits all `n` before returning.
pub fn build_chase(next: &mut [u64], stride: usize, n: usize, seed: u64) {
    let mut order: Vec<u64> = (0..n as u64).collect();
    let mut rng = SplitMix(seed);
    for i in (1..n).rev() {
        let j = (rng.next() % i as u64) as usize; // j < i: one cycle
        order.swap(i, j);
    }
    for k in 0..n {
        let from = order[k] as usize;
        let to = order[(k + 1) % n];
        next[from * stride] = to;
    }
}

/// SplitMix64: a small, good-enough generator for shuffling.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_is_one_cycle_over_every_slot() {
        for n in [2usize, 3, 64, 1000] {
            let stride = 8;
            let mut next = vec![u64::MAX; n * stride];
            build_chase(&mut next, stride, n, 42);
            let mut seen = vec![false; n];
            let mut i = 0u64;
            for _ in 0..n {
                assert!(!seen[i as usize], "slot {i} visited twice (n = {n})");
                seen[i as usize] = true;
                i = next[i as usize * stride];
            }
            assert_eq!(i, 0, "back at the start after n steps");
            assert!(seen.iter().all(|&s| s));
            assert_eq!(chase(&next, stride, n as u64), 0);
            // Walks that continue where the last ended meet every slot once too.
            let half = chase(&next, stride, n as u64 / 2);
            assert_eq!(chase_from(&next, stride, half, n as u64 - n as u64 / 2), 0);
        }
    }
}
