#!/usr/bin/env bash
# The H100 check of this session's redesign steps (issue 14), from the repository root with
# build/ and .device-libs (GSL, cJSON, libsubunit.so.0) carried:
#   OUT=DIR bash docs/evidence/h100-2026-11-25-b/check.sh
# 1. the earlier session's whole check (gpu tests, gemm_hopper's gate, one best across
#    loop/best.json/report/propose/export, evaluate --results, calibrate, compile --all);
# 2. `amk loop`'s device groups now in the library (amk_tune_groups): --devices 0, all, a
#    device that is not there, and the summary's devices member.
set -u
bash docs/evidence/h100-2026-11-25/redesign_check.sh
A=$PWD/build/amk
mkdir -p /tmp/g && cd /tmp/g
{
echo "== 7. amk loop's device groups on the GPU"
for devs in 0 all; do
  $A loop rmsnorm --backend gpu --devices $devs --budget 8 --results r_$devs.tsv \
      --best b_$devs.json --quiet > l_$devs.json; echo "--devices $devs rc=$?"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d.get(k) for k in ("device","devices","parallelism","trials")}, "best", d["best"]["config_id"], d["best"]["latency_kind"])' l_$devs.json
done
$A loop rmsnorm --backend gpu --devices 7 --budget 2 --results r_7.tsv --quiet > l_7.json 2> l_7.err
echo "--devices 7 rc=$? stdout bytes=$(wc -c < l_7.json) rows=$( [ -f r_7.tsv ] && grep -vc '^#' r_7.tsv || echo none)"; cat l_7.err
echo "== 8. evaluate --devices 0 and calibrate on the default device (library policy)"
$A propose rmsnorm --quiet | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["config"]))' > c.json
$A evaluate c.json --backend gpu --devices 0 --quiet | python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["status"], v["latency_kind"])'
} 2>&1 | tee -a $OUT/gpu_r15.txt
