#!/usr/bin/env bash
# Issue 21's repeatability check: N independent `amk loop gemm_hopper --budget B` runs at
# 8192^3 bf16 (fresh results and best files, one shared compile cache), one regime, then
# the best each handed back, its latency, and its vs_peer (cuBLAS timed beside it by amk's
# own harness), with the spread across runs; then the bests side by side: each run's best
# evaluated again, round robin, ROUNDS times, by the same harness in the same regime. At the
# power cap the clock moves a config's latency by 5-14 % between evaluations (evidence
# h100-2026-11-26-stores, calls 3 and 6), seconds apart as much as minutes, so the figure
# that says whether the picks differ is vs_peer (cuBLAS timed beside each), side by side.
# Two builds of amk compared on the same wall-clock budget (AMKS="old new", TIME=60s,
# CACHE=run): for each seed every build in turn, each run compiling from scratch so that
# its trials cost what they cost; the side-by-side rounds use the first build for all.
# usage: bench/loop_repeat.sh            from the repository root
# env: AMK (build/amk), AMKS ("$AMK": the builds compared), OUT (/tmp/amk-repeat), RUNS
#      (3: seeds per build, from SEED0, default 1), BUDGET (48), TIME ("": a wall-clock
#      limit such as 60s instead of BUDGET), CACHE (shared | run: fresh compile caches per
#      run, amk's and NVRTC's), SHAPE (big), REGIME (sustained), KERNEL (gemm_hopper),
#      ROUNDS (3; 0: no side-by-side re-measure)
set -u
AMK=${AMK:-build/amk}
AMKS=${AMKS:-$AMK}
OUT=${OUT:-/tmp/amk-repeat}
RUNS=${RUNS:-3} BUDGET=${BUDGET:-48} SHAPE=${SHAPE:-big} REGIME=${REGIME:-sustained}
KERNEL=${KERNEL:-gemm_hopper} ROUNDS=${ROUNDS:-3} TIME=${TIME:-} CACHE=${CACHE:-shared}
SEED0=${SEED0:-1}
read -r -a builds <<<"$AMKS"
limit=(--budget "$BUDGET")
[ -n "$TIME" ] && limit=(--time "$TIME" --budget 0)
mkdir -p "$OUT"
: >"$OUT/runs.txt"
i=0
for ((seed = SEED0; seed < SEED0 + RUNS; seed++)); do
    for b in "${builds[@]}"; do
        i=$((i + 1))
        # NVRTC (CUDA 12.9+) keeps its own cache of compiles in the driver's compute cache
        # (~/.nv/ComputeCache, across processes): amk's cache says miss, the compile is one
        [ "$CACHE" = run ] && export AMK_CACHE_DIR="$OUT/cache$i" CUDA_CACHE_PATH="$OUT/nvcache$i"
        t0=$(date +%s.%N)
        "$b" loop "$KERNEL" --shape "$SHAPE" "${limit[@]}" --backend gpu --regime "$REGIME" \
            --seed "$seed" --results "$OUT/r$i.tsv" --best "$OUT/b$i.json" --quiet \
            >"$OUT/l$i.json" 2>"$OUT/l$i.err"
        echo "run $i ($b, seed $seed) rc=$? $(python3 -c "import sys; print('%.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")"
        echo "$i $seed $b" >>"$OUT/runs.txt"
    done
done
unset AMK_CACHE_DIR CUDA_CACHE_PATH
runs=$i
for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 1; i <= runs; i++)); do
        [ -s "$OUT/b$i.json" ] || continue
        "${builds[0]}" evaluate "$OUT/b$i.json" --backend gpu --regime "$REGIME" \
            --results "$OUT/side.tsv" --quiet >"$OUT/s$i-$r.json" 2>>"$OUT/side.err"
    done
done
{ bash "$(dirname "$0")/card.sh"; echo; } | tee "$OUT/repeat_table.md"
python3 - "$OUT" "$runs" "$ROUNDS" <<'PY' | tee -a "$OUT/repeat_table.md"
import csv, datetime, json, statistics, sys
out, runs, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
who = {int(l.split()[0]): (l.split()[1], l.split(None, 2)[2].strip()) for l in open(f"{out}/runs.txt")}
bests, ratios = [], []
print("| run | build | seed | best config_id | latency us | TFLOP/s | cuBLAS us | vs_peer | SM MHz "
      "| W | trials | s to the best | s in all |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for i in range(1, runs + 1):
    try:
        s = json.load(open(f"{out}/l{i}.json"))
    except (OSError, ValueError):
        print(f"| {i} | (no summary) |||||||")
        continue
    b = s.get("best") or {}
    every = list(csv.DictReader((l for l in open(f"{out}/r{i}.tsv") if not l.startswith("#")),
                                delimiter="\t"))
    rows = [r for r in every if r["config_id"] == b.get("config_id") and r["status"] == "ok"]
    r = rows[-1] if rows else {}
    # the rows' times (whole seconds): from the first row to the best's, and to the last
    at = lambda row: datetime.datetime.fromisoformat(row["time"].replace("Z", "+00:00"))
    to_best = (at(rows[0]) - at(every[0])).total_seconds() if rows else float("nan")
    span = (at(every[-1]) - at(every[0])).total_seconds() if every else float("nan")
    sh = dict(kv.split("=") for kv in s["shape"].split(","))
    fl = 2.0 * int(sh["M"]) * int(sh["N"]) * int(sh["K"])
    lat = b.get("latency_us")
    bests.append(lat)
    if r.get("vs_peer"):
        ratios.append(float(r["vs_peer"]))
    print(f"| {i} | {who[i][1]} | {who[i][0]} | {b.get('config_id')} | {lat:.1f} | "
          f"{fl / lat / 1e6:.1f} | {r.get('peer_us', '')} | {r.get('vs_peer', '')} | "
          f"{r.get('sm_mhz', '')} | {r.get('power_w', '')} | {s.get('trials')} | {to_best:.0f} | "
          f"{span:.0f} |")
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
    print("| run | build | seed | latency us | vs_peer | SM MHz | rounds |")
    print("|---|---|---|---|---|---|---|")
    med = {}
    for i, v in sorted(side.items()):
        lat = statistics.median(x[0] for x in v)
        vp = [x[1] for x in v if x[1] is not None]
        mhz = [x[2] for x in v if x[2] is not None]
        med[i] = (lat, statistics.median(vp) if vp else None)
        print(f"| {i} | {who[i][1]} | {who[i][0]} | {lat:.1f} | {'%.3f' % med[i][1] if vp else ''} | "
              f"{'%.0f' % statistics.median(mhz) if mhz else ''} | {len(v)} |")
    if len(med) > 1:
        lats = [m[0] for m in med.values()]
        print(f"\nside-by-side latency spread: {100 * (max(lats) / min(lats) - 1):.2f}% "
              f"(max/min of the medians over {len(med)} bests)")
        vps = [m[1] for m in med.values() if m[1] is not None]
        if len(vps) > 1:
            print(f"side-by-side vs_peer spread: {100 * (max(vps) / min(vps) - 1):.2f}%")
PY
