# shellcheck shell=bash
# The checks of a four-node fleet whose node2 was handicapped (.ci/steps/fleet.sh,
# .ci/steps/slurm.sh source this file). Call each as a plain command, never in an
# `if`, `&&` or `||`: the callers' `set -e` is what stops them at the first failing
# check. One check a line, for the same reason: under `set -e`, `a && b` whose `a`
# fails does not stop the script.

# fleet_report_names_only_node2 REPORT [PREFIX]: a report of 4 nodes naming node2
# and no other node as outlying (PREFIX starts the message when another is named).
fleet_report_names_only_node2() {
    local report=$1 prefix=${2:-}
    grep -q "^fleet of 4 nodes" "$report"
    grep -q "^    node2: compute " "$report"
    if grep -E "^    node[013]: " "$report"; then echo "${prefix}a node other than node2 named"; exit 1; fi
}

# fleet_check_names_only_node2 BIN FLEET OUT: `fleet report --check` prints one line,
# node2's (kept in OUT), and exits 3.
fleet_check_names_only_node2() {
    local bin=$1 fleet=$2 out=$3 rc=0
    "$bin" fleet report "$fleet" --check >"$out" || rc=$?
    cat "$out"
    test "$rc" = 3
    test "$(wc -l <"$out")" = 1
    grep -q "^node2: corescope fleet: compute " "$out"
}

# fleet_check_node1_is_silent BIN FLEET OUT: node1's own health check exits 0 and
# prints nothing (OUT keeps its output).
fleet_check_node1_is_silent() {
    local bin=$1 fleet=$2 out=$3
    "$bin" fleet report "$fleet" --check --node node1 >"$out"
    test ! -s "$out"
}
