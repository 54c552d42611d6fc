#!/usr/bin/env bash
# gemm_wgmma on an H100 (sm_90, compiled for sm_90a): is it correct, and how fast against
# torch.matmul? Under 4 minutes:
#   1. compile     the default + 4 random configs (warms the cache; HGMMA count in the SASS
#                  when cuobjdump is on PATH)
#   2. evaluate    the default config at 4096^3 bf16, 4096^3 f16 and 257x511x129 bf16 (the
#                  zero-fill / element-staging / guarded-store paths): status and TFLOP/s
#   3. loop        `amk loop gemm_wgmma` at 4096^3 bf16 (hillclimb, BUDGET trials or 100 s)
#                  and a random loop at 257x511x129 (12 trials or 40 s); statuses and best
#   4. torch       torch.matmul bf16 4096^3, and the ratio best gemm_wgmma / torch
# usage: bench/wgmma_check.sh        (from the repository root; env: AMK (default build/amk),
#        OUT (default /tmp/amk-wgmma), BUDGET (default 24), JOBS (default nproc))
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-wgmma}
BUDGET=${BUDGET:-24}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
export AMK_CACHE_DIR=${AMK_CACHE_DIR:-$OUT/cache}
BIG='"M":4096,"N":4096,"K":4096'
SMALL='"M":257,"N":511,"K":129'
DEF='"params":{"BM":128,"BN":256,"STAGES":4,"GROUP_M":8}'

echo "== device"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader 2>&1 | head -2

echo "== 1. compile (sm_90 -> sm_90a)"
timeout 120 "$AMK" compile gemm_wgmma --arch sm_90 --random 4 --jobs "$JOBS" 2>&1 | tail -8
if command -v cuobjdump >/dev/null; then
    obj=$(find "$AMK_CACHE_DIR/objects" -name '*.bin' -size +20k | head -1)
    if [ -n "$obj" ]; then
        # cache entry = 64-byte header + 1 kind byte + the CUBIN
        tail -c +66 "$obj" >"$OUT/wgmma.cubin"
        echo "HGMMA in SASS: $(cuobjdump -sass "$OUT/wgmma.cubin" | grep -c HGMMA)," \
             "LDL/STL: $(cuobjdump -sass "$OUT/wgmma.cubin" | grep -cE 'LDL|STL')"
    fi
fi

# Prints "status latency_us TFLOP/s reason" of a verdict JSON ($1) for m*n*k ($2).
verdict() {
    python3 - "$1" "$2" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print("no verdict:", e); sys.exit()
lat = v.get("latency_us")
tf = "%.1f TFLOP/s" % (2 * float(sys.argv[2]) / (lat * 1e-6) / 1e12) if lat else "-"
print("%-12s %10s us  %s  %s" % (v["status"], "%.1f" % lat if lat else "-", tf,
                                 (v.get("reason") or "")[:300]))
PY
}

echo "== 2. evaluate the default config"
for s in "$BIG,\"dtype\":\"bf16\"" "$BIG,\"dtype\":\"f16\"" "$SMALL,\"dtype\":\"bf16\""; do
    echo "{\"kernel\":\"gemm_wgmma\",\"shape\":{$s},$DEF}" >"$OUT/cfg.json"
    timeout 90 "$AMK" evaluate "$OUT/cfg.json" --backend gpu --results "$OUT/evaluate.tsv" \
        >"$OUT/verdict.json" 2>"$OUT/verdict.err"
    mnk=$(python3 -c "import json;s=json.load(open('$OUT/cfg.json'))['shape'];print(s['M']*s['N']*s['K'])")
    printf '%-40s ' "$s"; verdict "$OUT/verdict.json" "$mnk"
    [ -s "$OUT/verdict.json" ] || tail -3 "$OUT/verdict.err"
done

echo "== 3. loops"
rm -f "$OUT/loop_big.tsv" "$OUT/loop_small.tsv"
timeout 130 "$AMK" loop gemm_wgmma --shape M=4096,N=4096,K=4096,dtype=bf16 --backend gpu \
    --budget "$BUDGET" --time 100s --batch 8 --jobs "$JOBS" --results "$OUT/loop_big.tsv" \
    --best "$OUT/best_big.json" >"$OUT/loop_big.json" 2>"$OUT/loop_big.err"
timeout 60 "$AMK" loop gemm_wgmma --shape M=257,N=511,K=129,dtype=bf16 --backend gpu \
    --strategy random --budget 12 --time 40s --batch 6 --jobs "$JOBS" \
    --results "$OUT/loop_small.tsv" --best "$OUT/best_small.json" >"$OUT/loop_small.json" \
    2>"$OUT/loop_small.err"
python3 - "$OUT" <<'PY' | tee "$OUT/best_tflops.txt"
import csv, sys, collections
out = sys.argv[1]
for name, mnk in (("loop_big", 4096 ** 3), ("loop_small", 257 * 511 * 129)):
    try:
        rows = list(csv.DictReader((l for l in open(f"{out}/{name}.tsv") if not l.startswith("#")),
                                   delimiter="\t"))
    except OSError as e:
        print(name, "no results:", e); continue
    print(name, dict(collections.Counter(r["status"] for r in rows)))
    for r in rows:
        if r["status"] not in ("ok", "screened"):
            print("   ", r["status"], r["params"], (r.get("note") or "")[:200])
    ok = [r for r in rows if r["status"] == "ok" and r["latency_us"]]
    if ok:
        b = min(ok, key=lambda r: float(r["latency_us"]))
        lat = float(b["latency_us"])
        print(f"   best {b['params']} {lat:.1f} us = {2 * mnk / (lat * 1e-6) / 1e12:.1f} TFLOP/s")
        if name == "loop_big":
            open(f"{out}/best_big_tflops", "w").write("%.3f" % (2 * mnk / (lat * 1e-6) / 1e12))
PY

echo "== 4. torch.matmul bf16 4096^3"
python3 - "$OUT" <<'PY'
import sys
try:
    import torch
except ImportError:
    print("no torch"); sys.exit()
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(10):
    torch.matmul(a, b)
torch.cuda.synchronize()
ts = []
for _ in range(50):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize()
    ts.append(s.elapsed_time(e))
ms = sorted(ts)[len(ts) // 2]
tf = 2 * n ** 3 / (ms * 1e-3) / 1e12
print(f"torch.matmul bf16 4096^3: {ms * 1e3:.1f} us = {tf:.1f} TFLOP/s")
try:
    ours = float(open(f"{sys.argv[1]}/best_big_tflops").read())
    print(f"gemm_wgmma best / torch = {ours / tf:.2f}")
except OSError:
    print("no ok gemm_wgmma result at 4096^3")
PY
echo "raw files: $OUT"
