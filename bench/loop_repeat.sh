#!/usr/bin/env bash
# Issue 21's repeatability check: N independent `amk loop gemm_hopper --budget B` runs at
# 8192^3 bf16 (fresh results and best files, one shared compile cache), one regime, then
# the best each handed back, its latency, and its vs_peer (cuBLAS timed beside it by amk's
# own harness), with the spread across runs; then the bests side by side: each run's best
# evaluated again, round robin, ROUNDS times, by the same harness in the same regime. At the
# power cap the clock moves a config's latency by 5-14 % between evaluations (evidence
# h100-2026-11-26-stores, calls 3 and 6), seconds apart as much as minutes, so the figure
# that says whether the picks differ is vs_peer (cuBLAS timed beside each), side by side.
# usage: bench/loop_repeat.sh            from the repository root
# env: AMK (build/amk), OUT (/tmp/amk-repeat), RUNS (3), BUDGET (48), SHAPE (big),
#      REGIME (sustained), KERNEL (gemm_hopper), ROUNDS (3; 0: no side-by-side re-measure)
set -u
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-repeat}
RUNS=${RUNS:-3} BUDGET=${BUDGET:-48} SHAPE=${SHAPE:-big} REGIME=${REGIME:-sustained}
KERNEL=${KERNEL:-gemm_hopper} ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
for ((i = 1; i <= RUNS; i++)); do
    t0=$(date +%s.%N)
    "$AMK" loop "$KERNEL" --shape "$SHAPE" --budget "$BUDGET" --backend gpu --regime "$REGIME" \
        --seed "$i" --results "$OUT/r$i.tsv" --best "$OUT/b$i.json" --quiet >"$OUT/l$i.json" \
        2>"$OUT/l$i.err"
    echo "run $i rc=$? $(python3 -c "import sys; print('%.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")"
done
for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 1; i <= RUNS; i++)); do
        [ -s "$OUT/b$i.json" ] || continue
        "$AMK" evaluate "$OUT/b$i.json" --backend gpu --regime "$REGIME" --results "$OUT/side.tsv" \
            --quiet >"$OUT/s$i-$r.json" 2>>"$OUT/side.err"
    done
done
{ bash "$(dirname "$0")/card.sh"; echo; } | tee "$OUT/repeat_table.md"
python3 - "$OUT" "$RUNS" "$ROUNDS" <<'PY' | tee -a "$OUT/repeat_table.md"
import csv, json, statistics, sys
out, runs, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
side = {}  # run -> [(latency, vs_peer, sm_mhz)] of its best, evaluated again
for i in range(1, runs + 1):
    for r in range(1, rounds + 1):
        try:
            e = json.load(open(f"{out}/s{i}-{r}.json"))
        except (OSError, ValueError):
            continue
        if e.get("status") == "ok" and e.get("latency_kind") == "measured":
            side.setdefault(i, []).append((e["latency_us"], e.get("vs_peer"), e.get("sm_mhz")))
if side:
    print(f"\nThe bests side by side ({rounds} rounds, round robin, one regime; medians):\n")
    print("| run | latency us | vs_peer | SM MHz | rounds |")
    print("|---|---|---|---|---|")
    med = {}
    for i, v in sorted(side.items()):
        lat = statistics.median(x[0] for x in v)
        vp = [x[1] for x in v if x[1] is not None]
        mhz = [x[2] for x in v if x[2] is not None]
        med[i] = (lat, statistics.median(vp) if vp else None)
        print(f"| {i} | {lat:.1f} | {'%.3f' % med[i][1] if vp else ''} | "
              f"{'%.0f' % statistics.median(mhz) if mhz else ''} | {len(v)} |")
    if len(med) > 1:
        lats = [m[0] for m in med.values()]
        print(f"\nside-by-side latency spread: {100 * (max(lats) / min(lats) - 1):.2f}% "
              f"(max/min of the medians over {len(med)} bests)")
        vps = [m[1] for m in med.values() if m[1] is not None]
        if len(vps) > 1:
            print(f"side-by-side vs_peer spread: {100 * (max(vps) / min(vps) - 1):.2f}%")
PY
