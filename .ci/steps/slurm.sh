#!/usr/bin/env bash
# Slurm step: a one-node Slurm cluster, configured and started here (Debian's
# munged, slurmctld and slurmd, .ci/apt/slurm; no systemd: the daemons run in the
# background with their key, state, socket and logs in one temp dir, and stop on
# exit, whatever happens), and the fleet launched through its srun as
# docs/fleet.md says. No timing thresholds.
#
# 0. The pinning `corescope topo --export srun` prints (compact and scatter, 2
#    threads), run by srun under task/affinity: every task must run on exactly its
#    CPU of the map_cpu list (its Cpus_allowed_list). The fleet's own sruns below
#    say --cpu-bind=none: they measure unbound, as on a node of their own.
# 1. Without MPI: `srun -n 4 --overcommit`, four tasks on the one node, each
#    `corescope run compute --quick` (one at a time, by a lock in the temp dir: the
#    four share the machine) writing node$SLURM_PROCID.json. The tasks stand for
#    four nodes as the test-only switches make ranks do in `fleet run` (`run` reads
#    no switch, so this step applies them to the files): each file's host becomes
#    node$SLURM_PROCID, and node2's series are multiplied by 0.5, as
#    CORESCOPE_FLEET_HANDICAP_TEST='2:0.5' does. Then `fleet merge`, and `fleet
#    report --check` must exit 3 with one line, node2's; `--check --node node1`
#    exits 0. Slurm takes that line as a drain reason, as the health-check hook
#    gives it (`scontrol update ... state=drain reason=...`; `sinfo -R` shows it).
# 2. With MPI: `srun --mpi=pmix -n 4 --overcommit corescope fleet run compute
#    --serial` (a `--features mpi` build), with the test-only switches: the same
#    checks as .ci/steps/fleet.sh. Debian's Open MPI and Slurm meet in PMIx (both
#    load libpmix2); `--mpi=pmi2` or `none` stops every rank in MPI_Init ("OMPI was
#    not built with SLURM's PMI support"), so the flag is needed where the
#    cluster's MpiDefault is not pmix.
# About 3.5 minutes on 2 CPUs, nearly all of it the eight `compute --quick` runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=.ci/lib/fleet_checks.sh
. .ci/lib/fleet_checks.sh

if [ "$(id -u)" != 0 ]; then echo "slurm: the Slurm daemons need root (CI runs as root)"; exit 1; fi
for tool in munged mungekey slurmctld slurmd srun sinfo scontrol squeue scancel; do
    command -v "$tool" >/dev/null || { echo "slurm: $tool not installed (.ci/apt/slurm)"; exit 1; }
done
start=$SECONDS
target="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release --locked -p corescope # built by CI's smoke test already
cargo build --locked -p corescope --features mpi # built by .ci/steps/fleet.sh already
bin="$target/release/corescope"
mpibin="$target/debug/corescope"

# ---- The cluster: MUNGE, the controller and the node, all in $dir -----------------
dir="$(mktemp -d)"
chmod 755 "$dir" # munged wants its socket's directory open to every user
munge_pid="" ctld_pid="" slurmd_pid=""
stop() {
    local rc=$?
    set +e
    if [ -n "$ctld_pid" ]; then
        scancel --quiet --user=root
        for _ in $(seq 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
    fi
    for pid in $slurmd_pid $ctld_pid $munge_pid; do kill "$pid" && wait "$pid"; done 2>/dev/null
    if [ "$rc" != 0 ]; then
        for log in "$dir"/*.log; do echo "---- $log"; tail -n 30 "$log"; done
    fi
    rm -rf "$dir"
    exit "$rc"
}
trap stop EXIT

mungekey --create --keyfile="$dir/munge.key"
munged --foreground --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
    >"$dir/munged.out.log" 2>&1 &
munge_pid=$!
host="$(hostname -s)"
# This machine as slurmd sees it: CPUs=2 Boards=1 ... RealMemory=...
hw="$(slurmd -C | sed -n '1s/^NodeName=[^ ]* //p')"
mkdir "$dir/state" "$dir/spool" "$dir/tmp"
cat >"$dir/slurm.conf" <<CONF
ClusterName=corescope-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
# The daemons in the foreground (-D) of background jobs: their pids are ours to stop.
slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out.log" 2>&1 &
ctld_pid=$!
slurmd -D -N "$host" -f "$SLURM_CONF" >"$dir/slurmd.out.log" 2>&1 &
slurmd_pid=$!
idle() { # wait until sinfo shows the node idle, at most 30 s
    local state=""
    for _ in $(seq 60); do
        state="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
        [ "$state" = idle ] && return 0
        sleep 0.5
    done
    echo "slurm: node $host not idle after 30 s (sinfo: ${state:-no answer})"
    return 1
}
idle
echo "slurm: one-node cluster up in $((SECONDS - start)) s: $(srun --version), node $host $hw"

# ---- 0. The binding corescope exports for srun, applied by srun ---------------------
# `topo --export srun` gives `srun --ntasks=N --cpu-bind=map_cpu:LIST`; under
# task/affinity each task must run on exactly its CPU of the list, in task order.
for placement in compact scatter; do
    line="$("$bin" topo --export srun --threads 2 --placement "$placement")"
    map="${line##*map_cpu:}"
    # shellcheck disable=SC2016,SC2086 # the line's options split as srun's own
    got="$(timeout 60 srun ${line#srun } sh -c \
        'echo "$SLURM_PROCID $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' | sort -n)"
    want="$(echo "$map" | tr ',' '\n' | awk '{print NR - 1, $1}')"
    if [ "$got" != "$want" ]; then
        echo "slurm: '$line' ran tasks on (task cpus):"; echo "$got"; echo "expected:"; echo "$want"
        exit 1
    fi
    echo "slurm: $line: every task on its CPU"
done

# ---- 1. Without MPI: srun tasks, each one corescope run -----------------------------
runs="$dir/runs"
mkdir "$runs"
export CORESCOPE_BIN="$bin" CORESCOPE_RUNS="$runs"
# shellcheck disable=SC2016 # expanded by each task's shell
timeout 600 srun -n 4 --overcommit --cpu-bind=none sh -c 'flock "$CORESCOPE_RUNS/lock" "$CORESCOPE_BIN" run compute \
    --quick --no-progress --no-html --out "$CORESCOPE_RUNS/node$SLURM_PROCID.json" >/dev/null'
unset CORESCOPE_BIN CORESCOPE_RUNS
# The test-only switches, on the files: name each after its task, halve node2.
python3 - "$runs" <<'PY'
import json, sys
for rank in range(4):
    path = f"{sys.argv[1]}/node{rank}.json"
    run = json.load(open(path))
    run["host"]["hostname"] = f"node{rank}"
    if rank == 2:
        for s in (s for p in run["probes"] for s in p.get("series", [])):
            for key in ("y", "y_lo", "y_hi"):
                s[key] = [v * 0.5 if v is not None else v for v in s.get(key, [])]
            s["samples"] = [[v * 0.5 for v in row] for row in s.get("samples", [])]
    json.dump(run, open(path, "w"))
PY
"$bin" fleet merge "$runs"/node*.json --out "$dir/fleet.json" 2>/dev/null
"$bin" fleet report "$dir/fleet.json" >"$dir/report.txt"
grep -E "^fleet of|outliers" "$dir/report.txt"
fleet_report_names_only_node2 "$dir/report.txt" "slurm: "
fleet_check_names_only_node2 "$bin" "$dir/fleet.json" "$dir/check.txt"
fleet_check_node1_is_silent "$bin" "$dir/fleet.json" "$dir/one.txt"
# The hook's drain: the reason without the node name, on this node, then back.
reason="$(sed 's/^[^:]*: //' "$dir/check.txt")"
scontrol update nodename="$host" state=drain reason="$reason"
got="$(sinfo -h -R -n "$host" -o %E)"
if [ "$got" != "$reason" ]; then echo "slurm: drain reason stored as '$got'"; exit 1; fi
echo "slurm: sinfo -R: $host drained for: $got"
scontrol update nodename="$host" state=resume
idle
echo "slurm: srun without MPI: 4 tasks, node2 named, drain reason taken ($((SECONDS - start)) s)"

# ---- 2. With MPI: corescope fleet run under srun --mpi=pmix ------------------------
export CORESCOPE_FLEET_NODE_NAME_TEST='node{rank}' CORESCOPE_FLEET_HANDICAP_TEST='2:0.5'
rc=0
TMPDIR="$dir/tmp" timeout 600 srun -n 4 --overcommit --cpu-bind=none --mpi=pmix "$mpibin" fleet run compute --serial \
    --out "$dir/mpi-fleet.json" --dir "$dir/mpi-runs" >"$dir/mpi-report.txt" 2>"$dir/mpi-err.txt" || rc=$?
unset CORESCOPE_FLEET_NODE_NAME_TEST CORESCOPE_FLEET_HANDICAP_TEST
if [ "$rc" != 0 ]; then
    echo "slurm: srun --mpi=pmix corescope fleet run failed (status $rc):"; cat "$dir/mpi-err.txt"; exit 1
fi
grep -E "^fleet of|outliers" "$dir/mpi-report.txt"
test "$(find "$dir/mpi-runs" -name "*.json" | wc -l)" = 4
fleet_report_names_only_node2 "$dir/mpi-report.txt" "slurm: "
fleet_check_names_only_node2 "$bin" "$dir/mpi-fleet.json" "$dir/mpi-check.txt"
echo "slurm: srun --mpi=pmix corescope fleet run: 4 ranks, node2 named"
echo "slurm step ok in $((SECONDS - start)) s"
