#!/usr/bin/env bash
# Issue 3's evidence for the gpu backend, produced on a GPU machine by one script:
#   info     nvidia-smi + `amk devices`
#   loops    `amk loop gemm --budget 100` and `amk loop rmsnorm --budget 100` (gpu backend)
#   faults   the fault matrix (tests/fixtures/faults/faultmatrix) in ONE exhaustive loop:
#            compile crash (test hook), compile hang, compile error, kernel that never ends,
#            out-of-bounds write, NaN, unwritten output, off by 1.25 x tolerance, early return;
#            each followed by its good config
#   repeat   the same config measured in 5 separate `amk evaluate` runs (gemm, rmsnorm)
#   compile  compile throughput: --jobs 1 vs all cores, cold and cached
#   honesty  early-return kernel alone; cold vs warm L2 on a shape that fits in L2; an
#            independent timing of the same problems with PyTorch (when python3 has torch)
#
# usage: bench/gpu_evidence.sh [SECTION...]      (default: all of them, in that order)
# env:   AMK (default build/amk), OUT (default ./evidence), RAW (default /tmp/amk-evidence:
#        raw files), BUDGET (default 100), LOOP_TIME (default 250s: a loop also stops there),
#        JOBS (default nproc), GPU_BATCH (default 8: proposals compiled together per step)
# Output: $OUT/summary.txt (every number), $OUT/{gemm,rmsnorm,faults}.tsv, and
#         $OUT/evidence.tgz with every raw JSON, TSV and log. Run from the repository root.
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-evidence}
BUDGET=${BUDGET:-100}
JOBS=${JOBS:-$(nproc)}
BATCH=${GPU_BATCH:-8}
LOOP_TIME=${LOOP_TIME:-250s}
EV=${RAW:-/tmp/amk-evidence}/raw
mkdir -p "$EV" "$OUT"
export AMK_CACHE_DIR=${AMK_CACHE_DIR:-$EV/cache}
SUM=$OUT/summary.txt
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(info loops faults repeat compile honesty)
py=python3
command -v python3 >/dev/null || py=""

say() { echo "$*" | tee -a "$SUM"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

GEMM='{"kernel":"gemm","shape":{"M":4096,"N":4096,"K":4096},"params":{"BM":128,"BN":128,"BK":8,"TM":8,"TN":8,"VEC":4,"STAGES":2}}'
RMS='{"kernel":"rmsnorm","shape":{"M":4096,"N":4096,"dtype":"bf16"},"params":{"THREADS":256,"VEC":8,"ROWS":1}}'
RMS_SMALL='{"kernel":"rmsnorm","shape":{"M":1024,"N":4096,"dtype":"bf16"},"params":{"THREADS":256,"VEC":8,"ROWS":1}}'
fm() { echo "{\"kernel\":\"faultmatrix\",\"shape\":{\"N\":1048576},\"params\":{\"CASE\":\"$1\",\"GOOD\":$2}}"; }

# One line per verdict JSON: status latency spread regime reason.
verdict_line() {
    if [ ! -s "$1" ]; then
        echo "(no verdict printed; see the .err files)"
    elif [ -n "$py" ]; then
        $py - "$1" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
lat = v.get("latency_us")
print("%-10s %12s us  spread %-8s %-8s seed %s  %s%s" % (
    v["status"], "%.3f" % lat if lat is not None else "-",
    "%.4f" % v["spread"] if v.get("spread") is not None else "-", v.get("regime") or "-",
    v.get("seed"), (v.get("reason") or "")[:150], (" | " + v["notes"][:200]) if v.get("notes") else ""))
EOF
    else
        tr -d '\n' <"$1" | head -c 400; echo
    fi
}

# Status counts and best row of a results.tsv.
tsv_summary() {
    if [ ! -s "$1" ]; then
        echo "  (no results file)"
    elif [ -n "$py" ]; then
        $py - "$1" <<'EOF'
import csv, sys, collections
rows = [r for r in csv.DictReader((l for l in open(sys.argv[1]) if not l.startswith("#")), delimiter="\t")]
st = collections.Counter(r["status"] for r in rows)
kinds = collections.Counter(r["latency_kind"] or "(none)" for r in rows)
ok = [r for r in rows if r["status"] == "ok"]
unlabelled = [r for r in rows if r["status"] == "ok" and r["latency_kind"] != "measured"]
print("  rows %d; by status: %s" % (len(rows), dict(st)))
print("  latency_kind: %s; ok rows not measured: %d" % (dict(kinds), len(unlabelled)))
if ok:
    b = min(ok, key=lambda r: float(r["latency_us"]))
    print("  best: %s us (trial %s, %s%% of roofline, spread %s) params %s" % (
        b["latency_us"], b["trial"], b["pct_of_roofline"], b["spread"], b["params"]))
    lats = sorted(float(r["latency_us"]) for r in ok)
    print("  ok latencies: min %.2f  median %.2f  max %.2f us" % (lats[0], lats[len(lats)//2], lats[-1]))
hits = [r for r in rows if r["cache_hit"] in ("0", "1")]
if hits:
    print("  compile cache hits: %d of %d compiled" % (sum(r["cache_hit"] == "1" for r in hits), len(hits)))
EOF
    fi
}

sec_info() {
    say "== info"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu --format=csv 2>&1 | tee -a "$SUM"
    $AMK devices >"$EV/devices.json" 2>&1
    grep -E '"(name|target|arch|available|reason)"' "$EV/devices.json" | head -6 | tee -a "$SUM"
}

sec_loops() {
    for k in gemm rmsnorm; do
        say "== loop $k --budget $BUDGET --backend gpu --batch $BATCH --jobs $JOBS"
        local t0; t0=$(now)
        $AMK loop "$k" --budget "$BUDGET" --time "$LOOP_TIME" --backend gpu --batch "$BATCH" \
            --jobs "$JOBS" --seed 1 \
            --results "$EV/$k.tsv" --best "$EV/${k}_best.json" --quiet \
            >"$EV/loop_$k.json" 2>"$EV/loop_$k.err"
        say "  exit $? after $(elapsed "$t0") s"
        tsv_summary "$EV/$k.tsv" | tee -a "$SUM"
        cp "$EV/$k.tsv" "$OUT/$k.tsv" 2>/dev/null
    done
}

sec_faults() {
    say "== fault matrix: one exhaustive loop over tests/fixtures/faults/faultmatrix"
    local id
    id=$(fm compile_crash 0 | $AMK evaluate - --backend model --spec-dir tests/fixtures/faults 2>/dev/null |
         sed -n 's/.*"config_id": *"\([0-9a-f]*\)".*/\1/p')
    say "  compile_crash config $id gets AMK_TEST_COMPILE_FAULT=abort:$id; run timeout 10 s"
    local t0; t0=$(now)
    AMK_RUN_TIMEOUT=10 AMK_TEST_COMPILE_FAULT="abort:$id" \
        $AMK loop faultmatrix --spec-dir tests/fixtures/faults --strategy exhaustive \
        --budget 18 --backend gpu --jobs "$JOBS" --results "$EV/faults.tsv" --best "$EV/faults_best.json" \
        --quiet >"$EV/loop_faults.json" 2>"$EV/loop_faults.err"
    say "  loop exit $? after $(elapsed "$t0") s"
    if [ -n "$py" ] && [ -s "$EV/faults.tsv" ]; then
        $py - "$EV/faults.tsv" <<'EOF' | tee -a "$SUM"
import csv, sys
rows = [r for r in csv.DictReader((l for l in open(sys.argv[1]) if not l.startswith("#")), delimiter="\t")]
for r in rows:
    print("  %2s %-40s %-16s %10s  %s" % (r["trial"], r["params"], r["status"],
          r["latency_us"] or "-", r["note"][:170]))
EOF
    fi
    cp "$EV/faults.tsv" "$OUT/faults.tsv" 2>/dev/null
}

sec_repeat() {
    for name in GEMM RMS; do
        say "== repeatability: the $name default config in 5 separate amk evaluate runs"
        for i in 1 2 3 4 5; do
            $AMK evaluate - --backend gpu <<<"${!name}" >"$EV/repeat_${name}_$i.json" 2>>"$EV/repeat.err"
            verdict_line "$EV/repeat_${name}_$i.json" | tee -a "$SUM"
        done
        if [ -n "$py" ]; then
            $py - "$EV"/repeat_${name}_*.json <<'EOF' | tee -a "$SUM"
import json, sys, statistics
l = [json.load(open(f))["latency_us"] for f in sys.argv[1:]]
l = [x for x in l if x is not None]
if l:
    m = statistics.mean(l)
    print("  5 runs: mean %.3f us, min %.3f, max %.3f, (max-min)/mean %.3f%%, stdev/mean %.3f%%" % (
        m, min(l), max(l), 100 * (max(l) - min(l)) / m, 100 * (statistics.pstdev(l) / m)))
EOF
        fi
    done
}

sec_compile() {
    say "== compile throughput: amk compile gemm --random 47 (48 configs + reference)"
    for j in 1 "$JOBS"; do
        local dir="$EV/ccache_j$j"
        rm -rf "$dir"
        for pass in cold cached; do
            local t0; t0=$(now)
            $AMK compile gemm --random 47 --seed 7 --jobs "$j" --cache-dir "$dir" \
                >"$EV/compile_j${j}_$pass.txt" 2>"$EV/compile_j${j}_$pass.err"
            local rc=$? secs; secs=$(elapsed "$t0")
            local n; n=$(grep -c . "$EV/compile_j${j}_$pass.txt")
            local okn; okn=$(awk '$4 == "ok"' "$EV/compile_j${j}_$pass.txt" | wc -l)
            local hits; hits=$(awk '$6 == "hit"' "$EV/compile_j${j}_$pass.txt" | wc -l)
            say "  --jobs $j $pass: $n units ($okn ok, $hits cache hits) in $secs s = $(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", n / s }') units/s (exit $rc); $(tail -1 "$EV/compile_j${j}_$pass.err")"
        done
    done
}

sec_honesty() {
    say "== honesty: a kernel that returns early (skips 7/8 of its work), evaluated alone"
    fm early_return 0 | $AMK evaluate - --backend gpu --spec-dir tests/fixtures/faults >"$EV/honesty_early.json" 2>>"$EV/honesty.err"
    verdict_line "$EV/honesty_early.json" | tee -a "$SUM"
    say "== honesty: cold vs warm L2 on rmsnorm 1024x4096 bf16 (16 MiB: fits the 50 MiB L2)"
    $AMK evaluate - --backend gpu <<<"$RMS_SMALL" >"$EV/honesty_cold.json" 2>>"$EV/honesty.err"
    verdict_line "$EV/honesty_cold.json" | tee -a "$SUM"
    AMK_BENCH_WARM=1 $AMK evaluate - --backend gpu <<<"$RMS_SMALL" >"$EV/honesty_warm.json" 2>>"$EV/honesty.err"
    verdict_line "$EV/honesty_warm.json" | tee -a "$SUM"
    if [ -n "$py" ] && $py -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        say "== honesty: the same problems timed independently with PyTorch (events, L2 flushed by a 256 MiB write before each call)"
        $py - <<'EOF' 2>&1 | tee -a "$SUM"
import torch
torch.backends.cuda.matmul.allow_tf32 = False
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
def bench(f, n=30):
    for _ in range(3): f()
    ts = []
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
a = torch.rand(4096, 4096, device="cuda") * 2 - 1; b = torch.rand(4096, 4096, device="cuda") * 2 - 1
t = bench(lambda: a @ b)
print("  torch fp32 matmul 4096^3 (cuBLAS, TF32 off): %.1f us = %.1f TFLOP/s" % (t, 2 * 4096**3 / t / 1e6))
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16); w = torch.rand(4096, device="cuda", dtype=torch.bfloat16) + 0.5
t = bench(lambda: torch.nn.functional.rms_norm(x, (4096,), w, 1e-6))
print("  torch rms_norm 4096x4096 bf16: %.1f us = %.2f TB/s effective" % (t, (2 * 4096 * 4096 + 4096) * 2 / t / 1e6))
EOF
    fi
}

: >"$SUM"
say "amk gpu evidence $(date -u +%FT%TZ) on $(hostname); $($AMK --version 2>&1)"
for s in "${sections[@]}"; do
    t0=$(now)
    "sec_$s"
    say "   ($s: $(elapsed "$t0") s)"
done
tar -czf "$OUT/evidence.tgz" -C "$(dirname "$EV")" --exclude=raw/cache --exclude='raw/ccache_*' raw 2>/dev/null
say "done: $SUM, $OUT/evidence.tgz"
