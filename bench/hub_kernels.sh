#!/usr/bin/env bash
# benchmark_hub's CUDA kernels as their authors wrote them (issue 22): hotspot_milo,
# convolution_milo and dedispersion_milo imported with `amk import --kernel` and tuned on
# the GPU, then the imported convolution against the hand-written spec of the same kernel
# (bench/hub/convolution_hand: independent reference, cost model): each spec's best, and
# each best config measured under the other spec (the same config, two specs: its latency
# must agree within noise).
#
# Usage (on the GPU machine, from the repository root, after building into build/):
#   bash bench/hub_kernels.sh [BUDGET]          BUDGET trials per kernel (default 100)
# Environment: AMK (default build/amk), OUT (default bench-out/hub_kernels), DDATA
# (default bench-out/hub_dedisp_data: dedispersion's data, made once), STRATEGY
# (default hillclimb), BACKEND (default gpu; model: a dry run), HUB_KERNELS (default bench/hub_kernels: convolution_milo.cu,
# hotspot_milo.cu, dedisp_milo/dedispersion.cu and dedisp_milo/dedispersion.h, unmodified
# from the benchmark_hub repository, commit 8eeb99e; not committed here). To fill it from
# a clone or mirror of AutoTuningAssociation/benchmark_hub (no network needed on the GPU
# machine: the folder travels with the working tree):
#   bash bench/hub_kernels.sh --fetch PATH_TO_BENCHMARK_HUB_GIT
# dedispersion's T1 file sizes every input 1 element, so its data come from
# bench/hub_dedisp_data.c (built and run here: input bytes, shifts, and the CPU answer that
# checks every config, as the hub's own script does with its .npy files).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${HUB_KERNELS:-$ROOT/bench/hub_kernels}
HUB_COMMIT=8eeb99e7179e6838af95d392ac6c60cebfd8c434
FILES="convolution_milo.cu hotspot_milo.cu dedisp_milo/dedispersion.cu dedisp_milo/dedispersion.h"
if [ "${1:-}" = "--fetch" ]; then
    [ -n "${2:-}" ] || { echo "usage: $0 --fetch BENCHMARK_HUB_GIT" >&2; exit 2; }
    mkdir -p "$K/dedisp_milo"
    for f in $FILES; do
        git --git-dir="$2" show "$HUB_COMMIT:kernels/$f" >"$K/$f" 2>/dev/null ||
            git -C "$2" show "$HUB_COMMIT:kernels/$f" >"$K/$f"
    done
    echo "hub_kernels: wrote $FILES into $K (benchmark_hub $HUB_COMMIT)"
    exit 0
fi
BUDGET=${1:-100}
AMK=${AMK:-$ROOT/build/amk}
OUT=${OUT:-$ROOT/bench-out/hub_kernels}
STRATEGY=${STRATEGY:-hillclimb}
BACKEND=${BACKEND:-gpu} # model: a dry run of everything but the measurements
HUB=${AMK_BENCHMARK_HUB:-$ROOT/space_defs/data/benchmark_hub}/spaces
for f in $FILES; do
    [ -f "$K/$f" ] || { echo "hub_kernels: $K/$f missing: run $0 --fetch BENCHMARK_HUB_GIT" >&2; exit 2; }
done
[ -x "$AMK" ] || { echo "hub_kernels: no amk at $AMK (build first)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT"
log() { echo "hub_kernels: $*" | tee -a summary.txt; }

# dedispersion's data and answer (made once; DDATA keeps them between runs)
DDATA=${DDATA:-$ROOT/bench-out/hub_dedisp_data}
if [ ! -s "$DDATA/answer.npy" ]; then
    mkdir -p "$DDATA"
    cc -O2 -fopenmp -ffp-contract=off "$ROOT/bench/hub_dedisp_data.c" -o "$DDATA/hub_dedisp_data"
    start=$(date +%s)
    "$DDATA/hub_dedisp_data" "$DDATA"
    log "dedispersion data and CPU answer: $(( $(date +%s) - start )) s"
fi
ln -s "$DDATA" ddata

"$AMK" import "$HUB/convolution_milo.json" --kernel "$K/convolution_milo.cu" -o convolution_milo >/dev/null
# hotspot_milo's T1 file sizes `temp` 4096 * 4096 floats, but the kernel reads a border of
# max_tfactor (10) around the grid: (4096 + 2 * 10)^2 floats, as the hub's own script
# allocates (and as `power` is sized). As written, the last rows would be read past the end
# of the buffer; this run imports a copy with that one Size corrected.
python3 - "$HUB/hotspot_milo.json" >hotspot_milo.t1.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
for a in t1["KernelSpecification"]["Arguments"]:
    if a["Name"] == "temp":
        a["Size"] = "(ProblemSize[0] + 2 * max(max_tfactor)) * (ProblemSize[1] + 2 * max(max_tfactor))"
json.dump(t1, sys.stdout, indent=1)
PY
log "hotspot_milo: T1 Size of temp corrected to (4096 + 2 * 10)^2 floats (the kernel's reads)"
"$AMK" import hotspot_milo.t1.json --kernel "$K/hotspot_milo.cu" --name hotspot_milo -o hotspot_milo >/dev/null
"$AMK" import "$HUB/dedispersion_milo.json" --kernel "$K/dedisp_milo/dedispersion.cu" \
    -o dedispersion_milo --data input_samples=ddata/input.npy,shifts=ddata/shifts.npy \
    --answer output_arr=ddata/answer.npy >/dev/null
mkdir convolution_hand
cp "$ROOT"/bench/hub/convolution_hand/* "$K/convolution_milo.cu" convolution_hand/

tune() { # tune KERNEL DIR
    local t0 t1
    t0=$(date +%s.%N)
    "$AMK" loop "$1" --spec-dir "$2" --backend "$BACKEND" --strategy "$STRATEGY" --budget "$BUDGET" \
        --seed 1 --results "$1.tsv" --best "$1.best.json" >"$1.loop.json" 2>"$1.loop.err" || {
        log "$1: amk loop failed: $(tail -3 "$1.loop.err")"
        return 1
    }
    t1=$(date +%s.%N)
    python3 - "$1" "$t0" "$t1" <<'PY' | tee -a summary.txt
import collections, csv, json, sys
k, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(k + ".loop.json"))
rows = list(csv.DictReader((l for l in open(k + ".tsv") if not l.startswith("#")),
                           delimiter="\t"))
st = collections.Counter(r.get("status", "?") for r in rows)
b = s.get("best") or {}
reasons = collections.Counter((r.get("note") or "")[:110] for r in rows if r.get("status") != "ok")
print(f"{k}: {s['trials']} trials in {t1 - t0:.0f} s ({st}), best {b.get('latency_us')} us "
      f"{b.get('config_id')} {json.dumps((b.get('config') or {}).get('params'))}")
for r, n in reasons.most_common(3):
    print(f"   {n} x {r}")
PY
}
for k in hotspot_milo dedispersion_milo convolution_milo convolution_hand; do
    tune "$k" "$k" || true
done

# the same config under both convolution specs
cross() { # cross FROM_KERNEL TO_KERNEL TO_DIR
    [ -f "$1.best.json" ] || return 0
    python3 - "$1.best.json" "$2" >"cross_$1.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print(json.dumps({"kernel": sys.argv[2], "shape": {}, "params": b["config"]["params"]}))
PY
    "$AMK" evaluate "cross_$1.json" --spec-dir "$3" --backend "$BACKEND" >"cross_$1.verdict.json" ||
        { log "cross $1 -> $2: amk evaluate failed"; return 0; }
    python3 - "$1" "$2" "$1.best.json" "cross_$1.verdict.json" <<'PY' | tee -a summary.txt
import json, sys
a, b = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
la, lb = a.get("latency_us"), b.get("latency_us")
ratio = lb / la if la and lb else float("nan")
print(f"best of {sys.argv[1]} ({la} us) measured as {sys.argv[2]}: {lb} us "
      f"[{b.get('status')}], ratio {ratio:.3f}")
PY
}
cross convolution_milo convolution_hand convolution_hand
cross convolution_hand convolution_milo convolution_milo
log "results in $OUT (summary.txt, *.tsv, *.best.json)"
