#!/usr/bin/env bash
# Loom step: model-check the concurrent crates. Under `--cfg loom` the `sync`
# modules of hspc and taskpool swap std's atomics, locks, condition variables
# and (taskpool) worker threads for loom's, and these tests explore every
# interleaving up to a preemption bound (3, set in the test files; override
# with LOOM_MAX_PREEMPTIONS). What each test proves: docs/verification.md.
#
# The cfg change rebuilds everything, so it gets its own target dir (default
# target/loom, or $LOOM_TARGET_DIR) and leaves the normal build cached. The
# release profile without LTO and with parallel codegen: loom needs speed
# at run time, not the last percent that LTO and a single codegen unit give
# at the price of a much longer build.
set -euo pipefail
cd "$(dirname "$0")/../.."

export CARGO_TARGET_DIR="${LOOM_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/loom}"
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export CARGO_PROFILE_RELEASE_LTO=false
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

start=$SECONDS
# The cfg(loom) code (the shims' loom halves, the loom tests) is linted only
# here: the workspace clippy step builds without the cfg.
cargo clippy --release --locked -p hspc -p taskpool --lib --tests -- -D warnings
# One invocation, so both crates share one build of loom and its
# dependencies (features are unified per invocation). hspc: the
# producer/consumer hand-off for each wait strategy (tests/loom.rs).
# taskpool: the Treiber free list (unit tests in src/free_list.rs) and the
# pool's hand-off of lifetime-erased closures (tests/loom.rs). `--lib` also
# runs hspc's two stack-offset unit tests, which touch no atomics.
cargo test --release --locked -p hspc -p taskpool --lib --test loom
echo "loom: passed in $((SECONDS - start)) s"
