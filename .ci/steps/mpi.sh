#!/usr/bin/env bash
# MPI step: build with `--features mpi`, run every benchmark under mpirun with 2
# and 4 ranks (oversubscribed is fine: no timing thresholds), and check the run
# files: every size present, latencies positive, the Jacobi residual decreasing
# and equal to the single-process reference (also from a 1-rank run).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p corescope --all-targets --locked --features mpi -- -D warnings
# A debug build is enough: nothing below checks a timing.
cargo build --locked -p corescope --features mpi
bin="$PWD/target/debug/corescope"
dir="$(mktemp -d)"
mpirun_() { mpirun --allow-run-as-root --oversubscribe "$@"; }

# The single-process Jacobi reference: one rank, no decomposition.
mpirun_ -np 1 "$bin" mpi jacobi --quick --out "$dir/ref.json" >/dev/null
for np in 2 4; do
    for bench in pingpong allreduce jacobi all; do
        echo "mpirun -np $np corescope mpi $bench --quick"
        extra=()
        if [ "$bench" = jacobi ]; then extra=(--trace "$dir/trace-$np.json"); fi
        if [ "$bench" = pingpong ] && [ "$np" = 4 ]; then extra=(--pairs all); fi
        mpirun_ -np "$np" "$bin" mpi "$bench" --quick --out "$dir/$bench-$np.json" "${extra[@]}" >/dev/null
    done
done

python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
ref = json.load(open(f"{d}/ref.json"))["probes"][0]
ref_res = next(s for s in ref["series"] if s["name"] == "residual/mpi")["y"]
pp_sizes = [0] + [1 << k for k in range(17)]         # --quick: 0 B .. 64 KiB
ar_sizes = [1 << k for k in range(3, 21)]            # 8 B .. 1 MiB

def series(p, name):
    return next(s for s in p["series"] if s["name"] == name)

def check_pingpong(p, np, pairs_all):
    for m in ("send", "ssend", "isend"):
        lat = series(p, f"latency/{m}")
        assert lat["x"] == pp_sizes, (m, lat["x"])
        assert all(y > 0 for y in lat["y"]), (m, lat["y"])
        bw = series(p, f"bandwidth/{m}")
        assert bw["x"] == pp_sizes[1:] and all(y > 0 for y in bw["y"]), m
        if pairs_all:
            assert series(p, f"latency-8B-by-rank/{m}")["x"] == list(range(1, np)), m
    assert {d["name"] for d in p["distributions"]} >= {f"pingpong/{m}/8B" for m in ("send", "ssend", "isend")}
    rows = next(t for t in p["tables"] if t["name"] == "pingpong")["rows"]
    assert len(rows) == 3 * len(pp_sizes) * (np - 1 if pairs_all else 1), len(rows)

def check_allreduce(p):
    for name in ("allreduce/max", "allreduce/mean-rank"):
        s = series(p, name)
        assert s["x"] == ar_sizes and all(y > 0 for y in s["y"]), name
    assert any(d["name"] == "allreduce/max/8B" for d in p["distributions"])

def check_jacobi(p, np):
    res = series(p, "residual/mpi")["y"]
    assert len(res) == len(ref_res) == p["params"]["jacobi_iterations"]
    assert all(b < a for a, b in zip(res, res[1:])), "residual not decreasing"
    for got, want in [(res, ref_res), (res, series(p, "residual/reference")["y"])]:
        for a, b in zip(got, want):
            assert abs(a - b) <= 1e-9 * max(abs(b), 1e-300), (a, b)
    lanes = next(t for t in p["timelines"] if t["name"] == "jacobi")["lanes"]
    assert len(lanes) == np and all(l["spans"] for l in lanes)
    assert {s["kind"] for s in lanes[0]["spans"]} == {"compute", "sendrecv", "allreduce"}
    rows = next(t for t in p["tables"] if t["name"] == "jacobi")["rows"]
    assert len(rows) == np and all(0 <= r[5] <= 1 for r in rows)
    assert p["params"]["jacobi_b1_bytes_per_s"] > 0

for np in (2, 4):
    for bench in ("pingpong", "allreduce", "jacobi", "all"):
        run = json.load(open(f"{d}/{bench}-{np}.json"))
        assert run["schema_version"] == 3 and run["tool"]["name"] == "corescope"
        assert len(run["probes"]) == 1
        p = run["probes"][0]
        assert p["id"] == "mpi" and p["status"] == "completed", p.get("reason")
        assert p["params"]["ranks"] == np and len(p["params"]["hosts"]) == np
        if bench in ("pingpong", "all"):
            check_pingpong(p, np, bench == "pingpong" and np == 4)
        if bench in ("allreduce", "all"):
            check_allreduce(p)
        if bench in ("jacobi", "all"):
            check_jacobi(p, np)
    trace = json.load(open(f"{d}/trace-{np}.json"))
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert xs and all({"name", "ts", "dur", "pid", "tid"} <= e.keys() and e["dur"] >= 0 for e in xs)
    assert {e["tid"] for e in xs} == set(range(np))
print("mpi run files ok:", sorted(os.listdir(d)))
PY
# Only rank 0 writes: with the default name, 4 ranks leave exactly one file.
(cd "$dir" && mkdir cwd && cd cwd && mpirun_ -np 4 "$bin" mpi allreduce --quick >/dev/null \
    && test "$(ls | wc -l)" = 1 && ls corescope-*-mpi.json >/dev/null)
# Bad options stop every rank with rank 0's one message, no hang, no file.
if timeout 60 mpirun --allow-run-as-root -np 2 "$bin" mpi jacobi --nx 1 --out "$dir/bad.json" \
    >/dev/null 2>"$dir/err"; then
    echo "mpi jacobi --nx 1 was accepted"; exit 1
fi
test "$(grep -c "too small" "$dir/err")" = 1 && test ! -e "$dir/bad.json"
"$bin" report "$dir/all-4.json" >/dev/null
# Started by hand (no launcher): it says how to start it, and measures nothing.
for cmd in "mpi pingpong" "fleet run"; do
    # shellcheck disable=SC2086
    if (cd "$dir" && env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE \
        -u SLURM_STEP_ID timeout 60 "$bin" $cmd >/dev/null 2>"$dir/err"); then
        echo "corescope $cmd without a launcher was accepted"; exit 1
    fi
    grep -q "start it under a launcher" "$dir/err" || { cat "$dir/err"; exit 1; }
done
# The HTML report and a comparison render an MPI run file too.
"$bin" report "$dir/all-4.json" --html "$dir/mpi.html" 2>/dev/null
grep -q "<section id='mpi'>" "$dir/mpi.html"
"$bin" compare "$dir/all-2.json" "$dir/all-4.json" >/dev/null
rm -rf "$dir"
