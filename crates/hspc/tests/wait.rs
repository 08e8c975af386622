//! The public wait loop: [`Backoff`]'s contract. No timings.
#![cfg(not(loom))]

use hspc::wait::{Backoff, SPIN_LIMIT, YIELD_LIMIT};

#[test]
fn backoff_contract() {
    let b = Backoff::new();
    assert!(!b.is_completed());
    // `spin` never completes: it is for retrying, not waiting.
    for _ in 0..100 {
        b.spin();
    }
    assert!(!b.is_completed());
    b.reset();
    for _ in 0..=YIELD_LIMIT {
        assert!(!b.is_completed());
        b.snooze();
    }
    assert!(b.is_completed());
    b.snooze(); // still fine to call
    assert!(b.is_completed());
    const { assert!(SPIN_LIMIT < YIELD_LIMIT) };
}
