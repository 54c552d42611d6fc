#!/usr/bin/env bash
# Scale-out of `amk loop` over MPI ranks, simulated on one machine (no GPU): the sim backend
# with an injected per-config delay (AMK_SIM_DELAY_MS) stands in for compile + run on a GPU.
# For each delay and rank count: trials/s of the loop (rank 0's elapsed_s, MPI start-up
# excluded), the speedup over 2 ranks (1 worker), the efficiency against the ideal
# workers x 1000 / delay trials/s, rank 0's own time per batch (search loop: proposals,
# keep/revert, the fsynced append; messaging: chunks out, verdicts in) and the CPU cores the
# whole job kept busy. Where rank 0's busy time approaches a batch's duration, rank 0 is the
# bottleneck; where the job's CPU use reaches the machine's cores, the machine is.
#
# The replayed sweep is synthetic: the model backend's predictions for every gemm config,
# relabelled as measurements, so that every proposal replays (latencies do not matter here).
# Budgets are scaled so that each point takes about AMK_MPI_POINT_S seconds at ideal speed.
#
# usage: bench/mpi_scaling.sh [BUILD_DIR]     (a build with -DAMK_MPI=ON; default build-mpi)
#   AMK_MPI_DELAYS="1 10 100"  AMK_MPI_RANKS="2 4 8 16 32 64"  AMK_MPI_POINT_S=3
set -euo pipefail
build=${1:-build-mpi}
amk=$build/amk
delays=${AMK_MPI_DELAYS:-1 10 100}
ranks_list=${AMK_MPI_RANKS:-2 4 8 16 32 64}
point_s=${AMK_MPI_POINT_S:-3}
max_budget=6000
[ -x "$amk" ] || { echo "mpi_scaling: no $amk (cmake -S . -B $build -DAMK_MPI=ON && cmake --build $build)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpi_scaling: no mpirun (apt-get install openmpi-bin)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sweep=$work/gemm-sweep.tsv
"$amk" loop gemm --backend model --strategy exhaustive --budget 0 --batch 512 \
    --results "$work/model.tsv" --best "$work/model.json" >/dev/null 2>&1
awk -F'\t' -v OFS='\t' '/^#/ || $1 == "trial" { print; next } { $10 = "measured"; print }' \
    "$work/model.tsv" >"$sweep"
echo "mpi_scaling: $(grep -vc '^#' "$sweep") rows in the synthetic gemm sweep; $(nproc) CPU core(s); $(mpirun --version | head -1)"
echo
echo "| delay ms | ranks | workers | budget | batch | trials/s | ideal | efficiency | speedup vs 2 | rank 0 loop ms/batch | rank 0 msg ms/batch | batch ms | CPU cores busy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for d in $delays; do
    base=""
    for r in $ranks_list; do
        w=$((r - 1))
        budget=$(awk -v s="$point_s" -v w="$w" -v d="$d" -v m="$max_budget" \
            'BEGIN { b = int(s * w * 1000 / d); if (b < 4 * w) b = 4 * w; if (b > m) b = m; print b }')
        rm -f "$work/r.tsv" "$work/b.json"
        TIMEFORMAT='%R %U %S'
        { time AMK_LOG=info AMK_SIM_DELAY_MS=$d mpirun --oversubscribe -np "$r" "$amk" loop gemm \
              --backend "sim:$sweep" --strategy random --seed 1 --budget "$budget" \
              --results "$work/r.tsv" --best "$work/b.json" >"$work/out.json" 2>"$work/err"; } \
            2>"$work/time"
        read -r real user sys <"$work/time"
        grep -q '"backend": "mpi"' "$work/out.json" ||
            { cat "$work/err" >&2; echo "mpi_scaling: rank 0 did not use the mpi backend (build without -DAMK_MPI=ON?)" >&2; exit 1; }
        python3 - "$work/out.json" "$work/err" "$d" "$r" "$w" "$budget" "$real" "$user" "$sys" "${base:-}" \
            >"$work/row" <<'PY'
import json, re, sys
out, err, d, r, w, budget, real, user, sys_t, base = sys.argv[1:]
s = json.load(open(out))
m = re.search(r"mpi: (\d+) batch\(es\).*rank 0 per batch: ([\d.]+) ms search loop \+ "
              r"([\d.]+) ms messaging, ([\d.]+) ms waiting", open(err).read())
batches, loop_ms, msg_ms, wait_ms = int(m[1]), float(m[2]), float(m[3]), float(m[4])
d, w = float(d), int(w)
tps = s["trials"] / s["elapsed_s"]
ideal = w * 1000.0 / d
base = float(base) if base else tps
cores = (float(user) + float(sys_t)) / float(real)
batch = -(-s["trials"] // batches)
print(f"| {d:g} | {r} | {w} | {s['trials']} | {batch} | {tps:.0f} | {ideal:.0f} | "
      f"{100 * tps / ideal:.0f}% | {tps / base:.2f} | {loop_ms:.2f} | {msg_ms:.2f} | "
      f"{1000 * s['elapsed_s'] / batches:.1f} | {cores:.2f} |")
PY
        cat "$work/row"
        [ -n "$base" ] || base=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["trials"]/s["elapsed_s"])' "$work/out.json")
    done
done
