#!/usr/bin/env bash
# Session check on the H100 after the CLI/library redesign step (issue 14), run from the
# repository root with build/ and .device-libs carried: OUT=DIR bash docs/evidence/h100-2026-11-25/redesign_check.sh
# (.device-libs needs libsubunit.so.0 beside GSL and cJSON for the Check-based gpu tests).
set -u
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$PWD
echo "== pwd $PWD"
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
nvidia-smi -L
A=$R/build/amk
export AMK_CACHE_DIR=/tmp/amkcache
mkdir -p $OUT
{
echo "== 1. devices, space"
$A devices --quiet | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["gpu"], d["devices"])'
$A space gemm_hopper --quiet | python3 -c 'import json,sys; d=json.load(sys.stdin); print({k:d[k] for k in ("raw_size","valid_count","feasible_count","counted","default_config")})'
echo "== 2. hopper check (gpu tests, default at every shape, random configs, loop)"
OUT=/tmp/hc NRANDOM=16 BUDGET=30 bash bench/hopper_check.sh 2>&1 | tail -40
cp /tmp/hc/gpu_tests.txt $OUT/gpu_tests.txt 2>/dev/null
echo "== 3. one best across commands after GPU loops"
mkdir -p /tmp/w && cd /tmp/w
for k in rmsnorm gemm; do
  $A loop $k --backend gpu --budget 40 --results r_$k.tsv --best best_$k.json --quiet > loop_$k.json; echo "loop $k rc=$?"
  $A report r_$k.tsv --json > rep_$k.json
  $A propose $k --results r_$k.tsv --quiet > prop_$k.json
  $A export r_$k.tsv > db_$k.json
  python3 - $k <<'PY'
import json, sys
k = sys.argv[1]
loop = json.load(open(f"loop_{k}.json")); best = json.load(open(f"best_{k}.json"))
rep = json.load(open(f"rep_{k}.json")); prop = json.load(open(f"prop_{k}.json"))
db = json.load(open(f"db_{k}.json"))
ids = {"loop": loop["best"]["config_id"], "best.json": best["config_id"],
       "report": rep["groups"][0]["best"]["config_id"], "propose": prop["incumbent"]["config_id"]}
def find(o):
    if isinstance(o, dict):
        if isinstance(o.get("config_id"), str):
            yield o["config_id"]
        for v in o.values():
            yield from find(v)
    elif isinstance(o, list):
        for v in o:
            yield from find(v)
ids["export"] = sorted(set(find(db)))
print(k, ids, "vs_default", loop["vs_default"]["speedup"], "trials", loop["trials"])
print(k, "SAME" if len({ids["loop"], ids["best.json"], ids["report"], ids["propose"]}) == 1 and ids["export"] == [ids["loop"]] else "DIFFERENT")
PY
done
echo "== 4. evaluate --results (trial log) on the GPU"
python3 -c 'import json; print(json.dumps(json.load(open("prop_gemm.json"))["config"]))' > cfg.json
$A evaluate cfg.json --backend gpu --results r_gemm.tsv --tables > ev.json; echo "evaluate rc=$?"
python3 -c 'import json; v=json.load(open("ev.json")); print(v["status"], v["latency_us"], v["latency_kind"])'
tail -1 r_gemm.tsv | cut -f1-12
echo "== 5. calibrate (copy + fma exhaustive)"
$A calibrate --results /tmp/w/cal.tsv > cal.json; echo "calibrate rc=$?"; cat cal.json
echo "== 6. compile --all --random 2 (NVRTC, sm_90a kernels too)"
$A compile --all --random 2 --arch sm_90 2>&1 | tail -3
} 2>&1 | tee $OUT/gpu_r15.txt
