//! The injectors' traffic of `loaded-latency`: the kinds of traffic, the ladder of
//! delays between two cache lines, the delay loop, and the injector's stream.

use crate::model::Profile;
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

/// Lines an injector touches between two looks at the stop flag.
pub const LINES_PER_CHECK: u64 = 256;

/// What the injectors do per cache line.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Traffic {
    /// One load per line.
    Read,
    /// A load and a store to the same word: the line is read, dirtied, written back.
    ReadWrite,
}

impl Traffic {
    /// Both kinds, in the order measured.
    pub const ALL: [Traffic; 2] = [Traffic::Read, Traffic::ReadWrite];

    /// Series variant.
    pub fn name(self) -> &'static str {
        match self {
            Traffic::Read => "read",
            Traffic::ReadWrite => "read-write",
        }
    }

    /// Bytes of memory traffic one touched line of `line_bytes` makes.
    pub fn bytes_per_line(self, line_bytes: u64) -> u64 {
        match self {
            Traffic::Read => line_bytes,
            Traffic::ReadWrite => 2 * line_bytes,
        }
    }
}

/// The delays of the ladder, in turns of [`delay_loop`] (about a core cycle each)
/// between two lines, from the lightest traffic to none (saturation); MLC's
/// default ladder runs from 20,000 cycles to 0 over 19 steps, these take every
/// second or third of its decades. The idle machine is step 0, before these.
pub fn ladder(profile: Profile) -> Vec<u32> {
    profile.pick(
        vec![1000, 100, 0],
        vec![10_000, 2000, 1000, 500, 250, 100, 50, 0],
        vec![
            20_000, 10_000, 5000, 2000, 1000, 500, 300, 200, 100, 50, 25, 0,
        ],
    )
}

/// The nominal per-injector rate of a delay at `hz`, in lines per second (the pure
/// arithmetic of the ladder; the run records the measured rate, never this):
/// `None` for a delay of 0, whose rate is what the memory gives.
pub fn nominal_lines_per_s(delay: u32, hz: f64) -> Option<f64> {
    (delay > 0 && hz > 0.0).then(|| hz / delay as f64)
}

/// Spin `turns` turns of a one-instruction dependent loop (`dec` + `jnz` on
/// x86_64, `subs` + `b.ne` on aarch64: one turn per core cycle on cores that take
/// a taken branch per cycle), the injectors' delay between two lines; MLC's delay
/// is such a loop too. Elsewhere a loop the compiler cannot remove.
#[inline(never)]
pub fn delay_loop(turns: u64) {
    if turns == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic on one operand that starts ≥ 1 and counts down to
    // 0; no memory, no stack; `dec` changes flags, which asm! assumes.
    unsafe {
        core::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) turns => _, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as on x86_64: one register counted down from ≥ 1 to 0.
    unsafe {
        core::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) turns => _, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for k in 0..turns {
        black_box(k);
    }
}

/// Stream over `words` one cache line (`stride` words) at a time until `stop`,
/// with `delay` turns of [`delay_loop`] between two lines (on a register of their
/// own, not on the loaded values); returns the lines touched.
pub fn inject(
    words: &mut [u64],
    stride: usize,
    traffic: Traffic,
    delay: u32,
    stop: &AtomicBool,
) -> u64 {
    let stride = stride.max(1);
    let lines = (words.len() / stride).max(1);
    let (mut i, mut n, mut acc) = (0usize, 0u64, 0u64);
    loop {
        for _ in 0..LINES_PER_CHECK {
            let Some(w) = words.get_mut(i * stride) else {
                break;
            };
            match traffic {
                Traffic::Read => acc = acc.wrapping_add(*w),
                Traffic::ReadWrite => *w = w.wrapping_add(1),
            }
            delay_loop(u64::from(delay));
            i += 1;
            if i == lines {
                i = 0;
            }
        }
        n += LINES_PER_CHECK;
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    black_box(acc);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_runs_from_light_traffic_to_none() {
        for p in [Profile::Quick, Profile::Default, Profile::Full] {
            let l = ladder(p);
            assert!(l.len() >= 2, "{p:?}");
            assert!(
                l.windows(2).all(|w| w[0] > w[1]),
                "decreasing delays: {l:?}"
            );
            assert_eq!(l.last(), Some(&0), "ends at saturation");
            assert!(l[0] > 0);
        }
        assert!(ladder(Profile::Quick).len() < ladder(Profile::Default).len());
        // Nominal rates grow along the ladder; the last (no delay) has none.
        let hz = 3e9;
        let rates: Vec<Option<f64>> = ladder(Profile::Default)
            .iter()
            .map(|&d| nominal_lines_per_s(d, hz))
            .collect();
        assert_eq!(rates[0], Some(3e9 / 10_000.0));
        assert!(rates.windows(2).all(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            _ => false,
        }));
        assert_eq!(nominal_lines_per_s(0, hz), None);
        assert_eq!(Traffic::Read.bytes_per_line(64), 64);
        assert_eq!(Traffic::ReadWrite.bytes_per_line(64), 128);
    }

    #[test]
    fn injectors_count_the_lines_they_touch_and_stop() {
        let mut words = vec![0u64; 64];
        let stop = AtomicBool::new(true);
        let n = inject(&mut words, 8, Traffic::ReadWrite, 1, &stop);
        assert_eq!(n, LINES_PER_CHECK);
        // 8 lines, each written LINES_PER_CHECK / 8 times.
        assert!(words.iter().step_by(8).all(|&w| w == LINES_PER_CHECK / 8));
        assert!(words.iter().skip(1).step_by(8).all(|&w| w == 0));
    }
}
