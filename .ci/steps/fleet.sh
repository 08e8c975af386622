#!/usr/bin/env bash
# Fleet step: `corescope fleet run` under mpirun, 4 ranks standing for 4 nodes
# (the test-only name override), rank 2 handicapped (its figures halved by the
# test-only switch); the report and `--check` must name exactly node2. Each rank
# measures `compute --quick`, one rank at a time (`--serial`: 4 ranks share 2
# CPUs here). No timing thresholds.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --locked -p corescope --features mpi
bin="${CARGO_TARGET_DIR:-$PWD/target}/debug/corescope"
dir="$(mktemp -d)"
export CORESCOPE_FLEET_NODE_NAME_TEST='node{rank}' CORESCOPE_FLEET_HANDICAP_TEST='2:0.5'
mpirun --allow-run-as-root --oversubscribe -np 4 \
    -x CORESCOPE_FLEET_NODE_NAME_TEST -x CORESCOPE_FLEET_HANDICAP_TEST \
    "$bin" fleet run compute --serial --out "$dir/fleet.json" --dir "$dir/runs" --html >"$dir/report.txt"
unset CORESCOPE_FLEET_NODE_NAME_TEST CORESCOPE_FLEET_HANDICAP_TEST
cat "$dir/report.txt"
test "$(ls "$dir/runs" | wc -l)" = 4
grep -q "^fleet of 4 nodes" "$dir/report.txt"
# Every outlier of the report is node2's, and there is one.
grep -q "^    node2: compute " "$dir/report.txt"
if grep -E "^    node[013]: " "$dir/report.txt"; then echo "a node other than node2 named"; exit 1; fi
# The fleet page beside the fleet file names node2 and no other node as outlying.
grep -q "node2" "$dir/fleet.html" && grep -q "<svg" "$dir/fleet.html"
# The health check: one line, node2's, exit status 3; node1 alone: 0, no line.
rc=0; "$bin" fleet report "$dir/fleet.json" --check >"$dir/check.txt" || rc=$?
cat "$dir/check.txt"
test "$rc" = 3 && test "$(wc -l <"$dir/check.txt")" = 1
grep -q "^node2: corescope fleet: compute " "$dir/check.txt"
"$bin" fleet report "$dir/fleet.json" --check --node node1 >"$dir/one.txt"
test ! -s "$dir/one.txt"
# The gathered run files merge offline into the same verdict.
"$bin" fleet merge "$dir"/runs/*.json --out "$dir/merged.json" 2>/dev/null
rc=0; "$bin" fleet report "$dir/merged.json" --check >"$dir/check2.txt" || rc=$?
test "$rc" = 3 && grep -q "^node2: " "$dir/check2.txt" && test "$(wc -l <"$dir/check2.txt")" = 1
echo "fleet step ok"
rm -rf "$dir"
