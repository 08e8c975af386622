#!/usr/bin/env bash
# Miri step: run the small tests of hspc and taskpool (tests/miri.rs in each)
# under Miri, which reports undefined behaviour in their `unsafe` parts (out
# of bounds, use after free, data races, misaligned or invalid values) on the
# interleavings its scheduler picks. Miri needs the nightly toolchain's
# `miri` component, which it asks rustup for when missing (the toolchain too);
# where `cargo +nightly miri` still does not work (no way to download it), this
# step prints one line saying so and passes.
# See docs/verification.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Fetch the component if rustup can (bounded: a machine without the network
# must not hang here); a failure only means the skip below.
if ! cargo +nightly miri --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
    if rustup toolchain list | grep -q '^nightly'; then
        timeout 300 rustup component add miri rust-src --toolchain nightly >/dev/null 2>&1 || true
    else
        timeout 300 rustup toolchain install nightly --profile minimal \
            --component miri,rust-src >/dev/null 2>&1 || true
    fi
fi
if ! version="$(cargo +nightly miri --version 2>&1)"; then
    echo "miri: skipped: $(printf '%s\n' "$version" | grep -m1 . || echo "cargo +nightly miri failed")"
    exit 0
fi
echo "$version"

start=$SECONDS
# cargo-miri keeps its artifacts in target/miri, apart from the normal build.
cargo +nightly miri test --locked -p hspc -p taskpool --test miri
echo "miri: passed in $((SECONDS - start)) s"
