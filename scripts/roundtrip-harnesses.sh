#!/usr/bin/env bash
# The round trip of one 8-byte event over two SPSC channels, measured by three
# harnesses in one sitting, interleaved round by round:
#   probe  - `corescope run channel --quick`: the median over 75 blocks of a
#            block's mean round trip (64 trips per block, the clock read once per
#            block; distribution `roundtrip/<crate>/other-core`);
#   bench  - hspc's criterion bench, group `roundtrip_8B`: criterion's median over its
#            samples of a sample's mean round trip (estimates.json), samples taken on one pair
#            of threads and channels kept for the crate's whole bench (pinned to
#            CPUs 0 and 1); a sample is 32 untimed trips, then its timed trips with
#            the clock read once before and once after them;
#   plain  - `cargo run -p hspc --example pingpong`: the median over blocks of
#            the mean round trip of a block (pinned to CPUs 0 and 1).
# Each round runs the three in a rotated order. Prints one CSV row per
# (round, harness, crate) to the file given (default roundtrip-harnesses.csv),
# then, per crate, each harness's median over the rounds and the medians of the
# per-round ratios bench/probe and plain/probe (docs/channel.md, "three harnesses").
#
# Usage: scripts/roundtrip-harnesses.sh [ROUNDS] [CSV]   (from the repository root;
# ROUNDS defaults to 8; the CSV must not exist yet; the machine should be otherwise idle: 2 CPUs at least,
# the probe's other-core pair being CPUs 0 and 1).
set -euo pipefail
rounds=${1:-8}
csv=${2:-roundtrip-harnesses.csv}
case $rounds in '' | *[!0-9]*) echo "rounds must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "rounds must be at least 1" >&2; exit 2; }
[ ! -e "$csv" ] || { echo "$csv exists; give another CSV path or remove it first" >&2; exit 2; }
command -v jq > /dev/null || { echo "needs jq (apt-get install jq)" >&2; exit 2; }

cargo build --release --locked -p corescope -p hspc --bins --examples
bench=$(cargo bench -p hspc --bench throughput --locked --no-run --message-format=json 2> /dev/null |
    jq -r 'select(.executable != null and .target.name == "throughput") | .executable' | tail -1)
[ -x "$bench" ] || { echo "could not find the criterion bench's executable" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The criterion bench's names for the probe's crates.
bench_name() {
    case $1 in
        hspc) echo hspc_nbuffer4 ;; hspc-ring) echo hspc_ring ;;
        crossbeam) echo crossbeam_array_queue ;; std) echo std_sync_channel ;; *) echo "$1" ;;
    esac
}
crates="hspc hspc-ring rtrb ringbuf heapless crossbeam std"

probe() { # round
    ./target/release/corescope run channel --quick --no-progress --no-html \
        -o "$work/probe.json" > /dev/null 2>&1
    jq -r --arg r "$1" '.probes[].distributions[]? | select(.name | startswith("roundtrip/"))
        | [$r, "probe", (.name | split("/")[1]), .summary.p50] | @csv' "$work/probe.json"
}
bench() { # round
    # criterion's median over its samples of a sample's mean round trip (each sample
    # times its own trips), the counterpart of the others' median over blocks; its
    # printed estimate is a slope or a mean, which outliers pull up.
    CRITERION_HOME="$work/criterion" "$bench" --bench roundtrip_8B --noplot \
        --warm-up-time 0.2 --measurement-time 0.5 > "$work/bench.txt" 2>&1
    for c in $crates; do
        est="$work/criterion/roundtrip_8B/$(bench_name "$c")/new/estimates.json"
        [ -f "$est" ] || continue
        jq -r --arg r "$1" --arg c "$c" '[$r, "bench", $c, .median.point_estimate] | @csv' "$est"
    done
}
plain() { # round
    ./target/release/examples/pingpong 0 1 7 5000 | tail -n +2 |
        awk -F, -v r="$1" '{ printf "\"%s\",\"plain\",\"%s\",%s\n", r, $1, $2 }'
}

echo '"round","harness","crate","ns"' > "$csv"
for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds ($(date -u +%T))" >&2
    order=(probe bench plain)
    for k in 0 1 2; do
        "${order[$(((k + r) % 3))]}" "$r" >> "$csv"
    done
done

# Medians over the rounds, and of the per-round ratios to the probe.
awk -F, -v crates="$crates" '
    NR > 1 { gsub(/"/, ""); v[$2, $3, $1] = $4; rounds[$1] = 1 }
    function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
        printf "%-10s %9s %9s %9s %12s %12s\n", "crate", "probe ns", "bench ns", "plain ns", "bench/probe", "plain/probe"
        split(crates, cs, " ")
        for (ci = 1; ci in cs; ci++) {
            c = cs[ci]; np = nb = nl = nrb = nrl = 0
            for (r in rounds) {
                if ((("probe", c, r) in v)) P[++np] = v["probe", c, r]
                if ((("bench", c, r) in v)) B[++nb] = v["bench", c, r]
                if ((("plain", c, r) in v)) L[++nl] = v["plain", c, r]
                if ((("probe", c, r) in v) && (("bench", c, r) in v)) RB[++nrb] = v["bench", c, r] / v["probe", c, r]
                if ((("probe", c, r) in v) && (("plain", c, r) in v)) RL[++nrl] = v["plain", c, r] / v["probe", c, r]
            }
            printf "%-10s %9.0f %9.0f %9.0f %12.2f %12.2f\n", c, median(P, np), median(B, nb), median(L, nl), median(RB, nrb), median(RL, nrl)
        }
    }' "$csv"
