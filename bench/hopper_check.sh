#!/usr/bin/env bash
# gemm_hopper through amk on an H100/H200, one device call (< 6 min): the Hopper evaluator
# features (tensor maps, cluster launch, the mbarrier-deadlock watchdog) by their GPU tests,
# then the kernel's correctness gate on every named shape and over random configs:
#   1. gpu tests   ctest -L gpu (check_gpu_* : cluster, TMA copy, deadlock -> run_timeout)
#   2. evaluate    the spec's default config at every named shape: status, µs, TFLOP/s
#   3. random      NRANDOM configs each at the ragged (257x520x200) and tiny_m (3x136x72)
#                  shapes: every config must end as ok or an explained status (counts)
#   4. hillclimb   `amk loop KERNEL` at its default shape (BUDGET trials): best and statuses
# usage: bench/hopper_check.sh     (from the repository root; env: AMK (build/amk), OUT
#        (/tmp/amk-hopper), KERNEL (gemm_hopper; gemm_hopper_fp8), BUDGET (40), NRANDOM (60),
#        JOBS (nproc), SKIP_TESTS=1)
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-hopper}
BUDGET=${BUDGET:-40}
RANDOM_N=${NRANDOM:-60}
JOBS=${JOBS:-$(nproc)}
KERNEL=${KERNEL:-gemm_hopper}
mkdir -p "$OUT"
export AMK_CACHE_DIR=${AMK_CACHE_DIR:-$OUT/cache}
counts() { # results.tsv -> "status=count ..."
    awk -F'\t' 'NR > 2 && NF >= 10 { n[$8]++ } END { for (s in n) printf "%s=%d ", s, n[s]; print "" }' "$1"
}
echo "== device: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
    echo "== 1. gpu tests"
    ctest --test-dir build -L gpu --output-on-failure >"$OUT/gpu_tests.txt" 2>&1
    grep -E "tests passed|Passed|Failed|Skipped|SKIP" "$OUT/gpu_tests.txt" | tail -12
fi
echo "== 2. evaluate the default config at every named shape"
for s in $(python3 -c 'import json; print(" ".join(json.load(open("space_defs/kernels/'"$KERNEL"'/spec.json"))["shapes"]))'); do
    "$AMK" propose "$KERNEL" --shape "$s" --quiet 2>/dev/null |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["config"]))' >"$OUT/cfg.json" || continue
    timeout 120 "$AMK" evaluate "$OUT/cfg.json" --backend gpu --results "$OUT/evaluate.tsv" \
        >"$OUT/verdict.json" 2>"$OUT/verdict.err"
    python3 - "$OUT/verdict.json" "$s" "$OUT/cfg.json" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print("%-12s no verdict: %s" % (sys.argv[2], e)); sys.exit()
sh = json.load(open(sys.argv[3]))["shape"]
lat = v.get("latency_us")
fl = 2.0 * float(sh.get("M", 0)) * float(sh.get("N", 0)) * float(sh.get("K", 0))
tf = "%.1f TFLOP/s" % (fl / (lat * 1e-6) / 1e12) if lat else "-"
print("%-12s %-10s %10s us  %-16s %s" % (sys.argv[2], v["status"], "%.1f" % lat if lat else "-",
                                          tf, (v.get("reason") or v.get("notes") or "")[:160]))
PY
done
echo "== 3. random configs at the edge shapes"
for s in ragged tiny_m; do
    rm -f "$OUT/random_$s.tsv"
    timeout 200 "$AMK" loop "$KERNEL" --shape "$s" --strategy random --seed 7 \
        --budget "$RANDOM_N" --backend gpu --jobs "$JOBS" --results "$OUT/random_$s.tsv" \
        --best "$OUT/random_$s.best.json" --quiet >"$OUT/random_$s.json" 2>"$OUT/random_$s.err"
    echo "$s (exit $?): $(counts "$OUT/random_$s.tsv")"
    awk -F'\t' 'NR > 2 && $8 != "ok" && $8 != "" { print "   " $8 ": " substr($19, 1, 160) }' "$OUT/random_$s.tsv" | sort | uniq -c | head -8
done
echo "== 4. hillclimb at the default shape"
rm -f "$OUT/loop.tsv"
timeout 240 "$AMK" loop "$KERNEL" --shape default --budget "$BUDGET" --backend gpu \
    --jobs "$JOBS" --seed 1 --results "$OUT/loop.tsv" --best "$OUT/loop.best.json" --quiet \
    >"$OUT/loop.json" 2>"$OUT/loop.err"
echo "exit $?: $(counts "$OUT/loop.tsv")"
python3 bench/perf_table.py best "$OUT/loop.tsv" 2>&1 | head -20
