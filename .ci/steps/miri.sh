#!/usr/bin/env bash
# Miri step: run the small tests of hspc and taskpool (tests/miri.rs in each)
# under Miri, which reports undefined behaviour in their `unsafe` parts (out
# of bounds, use after free, data races, misaligned or invalid values) on the
# interleavings its scheduler picks. Miri needs the nightly toolchain's
# `miri` component; where `cargo +nightly miri` does not work (not installed,
# and no way to download it), this step prints one line saying so and passes.
# See docs/verification.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! version="$(cargo +nightly miri --version 2>&1)"; then
    echo "miri: skipped: $(printf '%s\n' "$version" | grep -m1 . || echo "cargo +nightly miri failed")"
    exit 0
fi
echo "$version"

start=$SECONDS
# cargo-miri keeps its artifacts in target/miri, apart from the normal build.
cargo +nightly miri test --locked -p hspc -p taskpool --test miri
echo "miri: passed in $((SECONDS - start)) s"
