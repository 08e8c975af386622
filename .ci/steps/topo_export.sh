#!/usr/bin/env bash
# Topology export step: `corescope topo --export hwloc` of every topology in
# shared/topologies (when the checkout has them beside it) and of a run file
# (tests/fixtures/quick.json, with its c2c matrix as PU distances) must load in
# hwloc's own tools (`hwloc-info --input`, `lstopo-no-graphics --input`), which
# CI installs from .ci/apt/core, with the measured distances shown. The test
# suite runs the same loads but skips them with a note where the tools are absent;
# here they are required.
#
# Then the pinning strings (`--export likwid-pin|omp-places|srun|rankfile`) go to
# the real tools (.ci/apt/pinning), for compact, scatter, linear and a reversed CPU
# list at 1, 2 and more threads than CPUs, and where each thread or rank ran is
# compared with `corescope place`: likwid-pin and libgomp run an OpenMP program that
# prints every thread's affinity (and OpenMP's places), mpirun runs the rankfile
# with the command its header gives and each rank prints its Cpus_allowed_list.
# srun cannot run without a Slurm cluster: it parses each string (options are
# parsed before the controller is contacted; a broken string is shown refused).
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in hwloc-info lstopo-no-graphics; do
    command -v "$tool" >/dev/null || { echo "topo_export: $tool not installed (hwloc, .ci/apt/core)"; exit 1; }
done
cargo build --locked -p corescope
bin="${CARGO_TARGET_DIR:-target}/debug/corescope"
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
echo "topo_export: $n exported topologies load in hwloc-info and lstopo"
# ---- The pinning strings, in the real tools --------------------------------------
for tool in likwid-pin mpirun gcc srun; do
    command -v "$tool" >/dev/null || { echo "topo_export: $tool not installed (.ci/apt/pinning, .ci/apt/mpi)"; exit 1; }
done
# An OpenMP program: OpenMP's places, then per thread its place and affinity mask
# (CPUs joined by '+'), read after a barrier so likwid-pin has pinned every thread.
cat >"$dir/pinned.c" <<'C'
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void) {
    int places = omp_get_num_places();
    printf("places %d\n", places);
    for (int p = 0; p < places; p++) {
        int ids[CPU_SETSIZE];
        int n = omp_get_place_num_procs(p);
        if (n > CPU_SETSIZE) return 1;
        omp_get_place_proc_ids(p, ids);
        printf("place %d ", p);
        for (int k = 0; k < n; k++) printf(k ? "+%d" : "%d", ids[k]);
        printf("\n");
    }
#pragma omp parallel
    {
#pragma omp barrier
        cpu_set_t set;
        char buf[8192] = "?";
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            size_t at = 0;
            for (int c = 0; c < CPU_SETSIZE && at < sizeof buf - 16; c++)
                if (CPU_ISSET(c, &set)) at += (size_t)snprintf(buf + at, sizeof buf - at, at ? "+%d" : "%d", c);
        }
#pragma omp critical
        printf("thread %d place %d cpus %s\n", omp_get_thread_num(), omp_get_place_num(), buf);
    }
    return 0;
}
C
gcc -fopenmp -O1 -Wall -Werror -o "$dir/pinned" "$dir/pinned.c"
# Field $2 of the lines starting with $1, in order of field $3 ... as a comma list:
# `by_index thread 5` gives each thread's CPUs in thread order.
by_index() { awk -v k="$1" -v f="$2" '$1 == k { v[$2] = $f; if ($2 + 1 > n) n = $2 + 1 }
    END { for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), (i in v ? v[i] : "-") }'; }
fails=0
same() { # what, got, want
    if [ "$2" = "$3" ]; then echo "  ok   $1: $2"; else echo "  FAIL $1: $2, corescope place says $3"; fails=$((fails + 1)); fi
}
asroot=()
if [ "$(id -u)" = 0 ]; then asroot=(--allow-run-as-root); fi
# srun reads a cluster configuration before it parses its options; this one names
# a controller on a closed port, so srun stops at the allocation, right after the
# parse.
cat >"$dir/slurm.conf" <<CONF
ClusterName=check
SlurmctldHost=localhost
SlurmctldPort=9
MessageTimeout=1
TaskPlugin=task/affinity
NodeName=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=localhost Default=YES
CONF
echo "topo_export: pinning strings in the real tools (likwid-pin $(likwid-pin -v | awk 'NR == 1 { print $4 }')," \
    "gcc $(gcc -dumpfullversion), Open MPI $(mpirun --version | head -1 | awk '{print $NF}'), $(SLURM_CONF="$dir/slurm.conf" srun --version))"
srun_parses() { # the srun line; 0 when srun got past its options, else srun's words in $srun_err
    srun_err="$(SLURM_CONF="$dir/slurm.conf" bash -c "$1 true" 2>&1 || true)"
    case "$srun_err" in *"Unable to allocate resources"*) return 0 ;; *) return 1 ;; esac
}
if srun_parses "srun --ntasks=2 --cpu-bind=map_cpu:0,x"; then
    echo "topo_export: srun accepted a broken map_cpu list; its parse shows nothing"; exit 1
fi
echo "  ok   srun refuses a broken --cpu-bind=map_cpu:0,x: $(grep -o 'Failed to parse.*' <<<"$srun_err")"
ncpus="$(nproc)"
all="$("$bin" place linear --threads "$ncpus")"
placements=(compact scatter linear)
# A CPU list in reverse OS order: the one placement here that is not OS order.
if [ "$ncpus" -ge 2 ]; then placements+=("${all##*,},${all%%,*}"); fi
counts=(1)
if [ "$ncpus" -ge 2 ]; then counts+=(2); fi
if [ "$ncpus" -gt 2 ]; then counts+=("$ncpus"); fi
counts+=($((ncpus + 2)))
for p in "${placements[@]}"; do
    for n in "${counts[@]}"; do
        want="$("$bin" place "$p" --threads "$n")"
        echo "--placement $p --threads $n: corescope place gives $want"
        export_() { "$bin" topo --export "$1" --threads "$n" --placement "$p"; }
        # likwid-pin: every thread's mask, with OpenMP's own binding off.
        line="$(export_ likwid-pin)"
        out="$(unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND; eval "$line -q \"\$dir/pinned\"")"
        same "$line: threads ran on" "$(by_index thread 6 <<<"$out")" "$want"
        # OpenMP: the places libgomp parsed, each thread's place and mask.
        line="$(export_ omp-places)"
        out="$(unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND; eval "$line \"\$dir/pinned\"")"
        same "$line: places" "$(by_index place 3 <<<"$out")" "$want"
        same "  thread i in place" "$(by_index thread 4 <<<"$out")" "$(seq -s, 0 $((n - 1)))"
        same "  threads ran on" "$(by_index thread 6 <<<"$out")" "$want"
        # Open MPI: the command the rankfile's header gives, as root where CI runs.
        export_ rankfile >"$dir/rankfile"
        hdr="$(sed -n 's/^# \(mpirun .*\) \.\.\.$/\1/p' "$dir/rankfile")"
        read -ra cmd <<<"${hdr/FILE/$dir/rankfile}"
        out="$("${cmd[@]}" "${asroot[@]}" sh -c \
            'echo "rank $OMPI_COMM_WORLD_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"')"
        slots="$(grep -v '^#' "$dir/rankfile" | sed 's/.* slot=//' | paste -sd,)"
        same "rankfile slots $slots, $hdr: ranks ran on" "$(by_index rank 3 <<<"$out")" "$want"
        # srun: the list, and that srun parses the line.
        line="$(export_ srun)"
        if srun_parses "$line"; then
            same "$line: parsed by srun, map_cpu" "${line##*map_cpu:}" "$want"
        else
            echo "  FAIL $line: srun refused it: $srun_err"; fails=$((fails + 1))
        fi
    done
done
if [ "$fails" != 0 ]; then echo "topo_export: $fails pinning checks failed"; exit 1; fi
echo "topo_export: likwid-pin, libgomp and mpirun pinned as corescope place says; srun parsed every map_cpu"
echo "topo_export: (srun does not bind here: no Slurm cluster on a CI machine)"
# The tests, with the tools present: the round trips and the pinning strings.
cargo test --locked -p corescope --test topo_export
