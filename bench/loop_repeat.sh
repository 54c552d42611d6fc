#!/usr/bin/env bash
# Issue 21's repeatability check: N independent `amk loop gemm_hopper --budget B` runs at
# 8192^3 bf16 (fresh results and best files, one shared compile cache), one regime, then
# the best each handed back, its latency, and its vs_peer (cuBLAS timed beside it by amk's
# own harness), with the spread across runs.
# usage: bench/loop_repeat.sh            from the repository root
# env: AMK (build/amk), OUT (/tmp/amk-repeat), RUNS (3), BUDGET (48), SHAPE (big),
#      REGIME (sustained), KERNEL (gemm_hopper)
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-repeat}
RUNS=${RUNS:-3} BUDGET=${BUDGET:-48} SHAPE=${SHAPE:-big} REGIME=${REGIME:-sustained}
KERNEL=${KERNEL:-gemm_hopper}
mkdir -p "$OUT"
for ((i = 1; i <= RUNS; i++)); do
    t0=$(date +%s.%N)
    "$AMK" loop "$KERNEL" --shape "$SHAPE" --budget "$BUDGET" --backend gpu --regime "$REGIME" \
        --seed "$i" --results "$OUT/r$i.tsv" --best "$OUT/b$i.json" --quiet >"$OUT/l$i.json" \
        2>"$OUT/l$i.err"
    echo "run $i rc=$? $(python3 -c "import sys; print('%.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")"
done
python3 - "$OUT" "$RUNS" <<'PY' | tee "$OUT/repeat_table.md"
import csv, json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
bests, ratios = [], []
print("| run | best config_id | latency us | TFLOP/s | cuBLAS us | vs_peer | SM MHz | W | trials |")
print("|---|---|---|---|---|---|---|---|---|")
for i in range(1, runs + 1):
    try:
        s = json.load(open(f"{out}/l{i}.json"))
    except (OSError, ValueError):
        print(f"| {i} | (no summary) |||||||")
        continue
    b = s.get("best") or {}
    rows = [r for r in csv.DictReader((l for l in open(f"{out}/r{i}.tsv") if not l.startswith("#")),
                                      delimiter="\t") if r["config_id"] == b.get("config_id")
            and r["status"] == "ok"]
    r = rows[-1] if rows else {}
    sh = dict(kv.split("=") for kv in s["shape"].split(","))
    fl = 2.0 * int(sh["M"]) * int(sh["N"]) * int(sh["K"])
    lat = b.get("latency_us")
    bests.append(lat)
    if r.get("vs_peer"):
        ratios.append(float(r["vs_peer"]))
    print(f"| {i} | {b.get('config_id')} | {lat:.1f} | {fl / lat / 1e6:.1f} | {r.get('peer_us', '')} | "
          f"{r.get('vs_peer', '')} | {r.get('sm_mhz', '')} | {r.get('power_w', '')} | {s.get('trials')} |")
if len(bests) > 1:
    print(f"\nbest latency spread: {100 * (max(bests) / min(bests) - 1):.2f}% "
          f"(max/min over {len(bests)} runs)")
if len(ratios) > 1:
    print(f"vs_peer spread: {100 * (max(ratios) / min(ratios) - 1):.2f}% "
          f"({', '.join('%.3f' % x for x in ratios)})")
PY
