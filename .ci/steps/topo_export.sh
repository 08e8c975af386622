#!/usr/bin/env bash
# Topology export step: `corescope topo --export hwloc` of every topology in
# shared/topologies (when the checkout has them beside it) and of a run file
# (tests/fixtures/quick.json, with its c2c matrix as PU distances) must load in
# hwloc's own tools (`hwloc-info --input`, `lstopo-no-graphics --input`), which
# CI installs from .ci/apt/core, with the measured distances shown. The test
# suite runs the same loads but skips them with a note where the tools are absent;
# here they are required.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in hwloc-info lstopo-no-graphics; do
    command -v "$tool" >/dev/null || { echo "topo_export: $tool not installed (hwloc, .ci/apt/core)"; exit 1; }
done
cargo build --locked -p corescope
bin=./target/debug/corescope
dir="$(mktemp -d)"
fixture=crates/corescope/tests/fixtures/quick.json

"$bin" topo --from "$fixture" --export hwloc --out "$dir/quick.xml"
hwloc-info --input "$dir/quick.xml" >/dev/null
lstopo-no-graphics --input "$dir/quick.xml" --distances >"$dir/quick.txt"
grep -q "corescope c2c/cas latency (ns)" "$dir/quick.txt"
n=1
topologies="${CORESCOPE_TOPOLOGIES:-../shared/topologies}"
if [ -d "$topologies" ]; then
    for f in "$topologies"/*.xml; do
        out="$dir/$(basename "$f")"
        "$bin" topo --topology "$f" --export hwloc --out "$out"
        # hwloc prints its complaints about a file on stderr and loads on: fail on any.
        hwloc-info --input "$out" >/dev/null 2>"$dir/err.txt"
        if [ -s "$dir/err.txt" ]; then cat "$dir/err.txt"; exit 1; fi
        lstopo-no-graphics --input "$out" >/dev/null
        n=$((n + 1))
    done
else
    echo "topo_export: $topologies not found; only the run file's export is checked"
fi
# The tests, with the tools present: the round trips and the pinning strings.
cargo test --locked -p corescope --test topo_export
echo "topo_export: $n exported topologies load in hwloc-info and lstopo"
