#!/usr/bin/env bash
# Fleet step: `corescope fleet run` under mpirun, 4 ranks standing for 4 nodes
# (the test-only name override), rank 2 handicapped (its figures halved by the
# test-only switch); the report and `--check` must name exactly node2. Each rank
# measures `compute --quick`, one rank at a time (`--serial`: 4 ranks share 2
# CPUs here). No timing thresholds.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=.ci/lib/fleet_checks.sh
. .ci/lib/fleet_checks.sh

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
# Every outlier of the report is node2's, and there is one.
fleet_report_names_only_node2 "$dir/report.txt"
# The fleet page beside the fleet file names node2 and no other node as outlying.
grep -q "node2" "$dir/fleet.html"
grep -q "<svg" "$dir/fleet.html"
# The health check: one line, node2's, exit status 3; node1 alone: 0, no line.
fleet_check_names_only_node2 "$bin" "$dir/fleet.json" "$dir/check.txt"
fleet_check_node1_is_silent "$bin" "$dir/fleet.json" "$dir/one.txt"
# The gathered run files merge offline into the same verdict.
"$bin" fleet merge "$dir"/runs/*.json --out "$dir/merged.json" 2>/dev/null
rc=0; "$bin" fleet report "$dir/merged.json" --check >"$dir/check2.txt" || rc=$?
test "$rc" = 3
grep -q "^node2: " "$dir/check2.txt"
test "$(wc -l <"$dir/check2.txt")" = 1
echo "fleet step ok"
rm -rf "$dir"
