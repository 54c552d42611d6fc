#!/usr/bin/env bash
# Issue 21 item 4 on the GPU: does `--objective energy` find a gemm_hopper config that uses
# less energy per launch than the time-optimal one, and by how much? One device call:
#   1. amk loop gemm_hopper at 8192^3 bf16 with --objective time  (BUDGET trials);
#   2. the same with --objective energy (same seed and compile cache: what run 1 compiled is
#      a cache hit; every trial adds an energy-counter window of AMK_ENERGY_WINDOW_MS);
#   3. both bests re-measured by `amk evaluate --objective energy`, alternating A B B A ...
#      (ROUNDS pairs), each measurement with its own counter window: latency, J/launch (with
#      its quantisation, one counter tick over the window), mean SM clock, power; then the
#      ratios energy-best / time-best.
# At the default budget this takes about a minute of device time (the first config of each
# loop settles the clock for 1 s; each energy trial adds ~1.1 s of window).
#
# usage: bench/energy_objective.sh        from the repository root, on the GPU machine
# env: AMK (build/amk), OUT (/tmp/amk-energy), BUDGET (12), SHAPE (big: 8192^3 bf16),
#      REGIME (sustained), SEED (1), ROUNDS (2), AMK_ENERGY_WINDOW_MS (1000), BACKEND (gpu;
#      sim:FILE of rows with counter energies dry-runs the script anywhere: tests/cli_energy.sh),
#      and whatever amk reads (AMK_KERNELS_DIR, AMK_DATA_DIR, AMK_CACHE_DIR)
# Device command (build/ carried, built with CUDA; .device-libs as for bench/regimes.sh):
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
#   OUT=$OUT bench/energy_objective.sh
set -euo pipefail
AMK=${AMK:-build/amk}
OUT=${OUT:-/tmp/amk-energy}
BUDGET=${BUDGET:-12}
SHAPE=${SHAPE:-big}
REGIME=${REGIME:-sustained}
SEED=${SEED:-1}
ROUNDS=${ROUNDS:-2}
BACKEND=${BACKEND:-gpu}
KERNEL=gemm_hopper
mkdir -p "$OUT"
[ -x "$AMK" ] || { echo "energy_objective: $AMK is not an executable (build first, or AMK=...)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "energy_objective: python3 is needed" >&2; exit 1; }
T0=$SECONDS

# step NAME CMD...: runs CMD with stdout to $OUT/NAME.json and stderr to $OUT/NAME.err; on
# failure prints the end of its stderr and stops.
step() {
    local name=$1 t=$SECONDS rc=0
    shift
    "$@" >"$OUT/$name.json" 2>"$OUT/$name.err" || rc=$?
    echo "energy_objective: $name: exit $rc, $((SECONDS - t)) s (total $((SECONDS - T0)) s)" >&2
    if [ "$rc" -ne 0 ]; then
        echo "--- $OUT/$name.err (last lines):" >&2
        tail -n 20 "$OUT/$name.err" >&2
        exit "$rc"
    fi
}

# 1-2. The two searches (fresh results and best files each).
for obj in time energy; do
    rm -f "$OUT/r-$obj.tsv" "$OUT/b-$obj.json"
    step "loop-$obj" "$AMK" loop "$KERNEL" --shape "$SHAPE" --budget "$BUDGET" --backend "$BACKEND" \
        --regime "$REGIME" --seed "$SEED" --objective "$obj" --results "$OUT/r-$obj.tsv" \
        --best "$OUT/b-$obj.json" --quiet
done

# The two bests as configs for amk evaluate.
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for obj in ("time", "energy"):
    s = json.load(open(f"{out}/loop-{obj}.json"))
    if not s.get("best"):
        sys.exit(f"energy_objective: the {obj} search handed back no best")
    json.dump(s["best"]["config"], open(f"{out}/best-{obj}.json", "w"))
PY

# 3. Both re-measured with the energy window, alternating so that drift hits both alike (one
#    config, once a round, when the two searches handed back the same one).
rm -f "$OUT/remeasure.tsv" "$OUT"/eval-*.json
same=$(python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); print(int(a == b))' \
    "$OUT/best-time.json" "$OUT/best-energy.json")
for ((i = 1; i <= ROUNDS; i++)); do
    if ((i % 2)); then order="time energy"; else order="energy time"; fi
    [ "$same" = 1 ] && order=time
    for obj in $order; do
        step "eval-$obj-$i" "$AMK" evaluate "$OUT/best-$obj.json" --backend "$BACKEND" --regime "$REGIME" \
            --objective energy --results "$OUT/remeasure.tsv" --quiet
    done
done

python3 - "$OUT" "$ROUNDS" "$BUDGET" "$REGIME" <<'PY' | tee "$OUT/energy_table.md"
import json, statistics, sys
out, rounds, budget, regime = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
summ = {o: json.load(open(f"{out}/loop-{o}.json")) for o in ("time", "energy")}
same = summ["time"]["best"]["config_id"] == summ["energy"]["best"]["config_id"]
shape = dict(kv.split("=") for kv in summ["time"]["shape"].split(","))
flop = 2.0 * int(shape["M"]) * int(shape["N"]) * int(shape["K"])
print(f"gemm_hopper {summ['time']['shape']} on {summ['time']['device']}, regime {regime}, "
      f"budget {budget} per search\n")
print("| search | best config_id | trials | loop µs | loop J/launch |")
print("|---|---|---|---|---|")
for o in ("time", "energy"):
    b = summ[o]["best"]
    e = b.get("energy_uj")
    kind = "counter" if b.get("energy_ticks") else "estimate"
    print(f"| --objective {o} | {b['config_id']} | {summ[o]['trials']} | {b['latency_us']:.1f} | "
          + (f"{e * 1e-6:.4f} ({kind})" if e else "-") + " |")
# The energy search's own rows: its lowest-energy configs, with their times (how close the
# runner-up is says by how much the two optima coincide or differ).
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/r-energy.tsv") if not l.startswith("#")]
cols, rows = rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]
ranked = sorted((r for r in rows if r["status"] == "ok" and r["energy_ticks"]),
                key=lambda r: float(r["energy_uj"]))
print("\nThe energy search's rows, lowest energy first (counter windows):\n")
print("| config_id | µs | J/launch | ± | vs lowest J |")
print("|---|---|---|---|---|")
for r in ranked[:4]:
    print(f"| {r['config_id']} | {float(r['latency_us']):.1f} | {float(r['energy_uj']) * 1e-6:.4f} | "
          f"{100 / int(r['energy_ticks']):.1f}% | {float(r['energy_uj']) / float(ranked[0]['energy_uj']):.3f}x |")
print(f"\nRe-measured with `amk evaluate --objective energy`, {rounds} alternating rounds "
      "(median over rounds; ± is one counter tick over the window):\n")
print("| best of | config_id | µs | TFLOP/s | J/launch | ± | SM MHz | W | ticks |")
print("|---|---|---|---|---|---|---|---|---|")
med = {}
for o in ("time", "energy"):
    src = "time" if same else o  # the same config was measured once a round, as "time"
    vs = [json.load(open(f"{out}/eval-{src}-{i}.json")) for i in range(1, rounds + 1)]
    ok = [v for v in vs if v["status"] == "ok" and v.get("energy_ticks")]
    if not ok:
        print(f"| {o} | {vs[0]['config_id']} | (no energy measured: {vs[-1]['status']}, "
              f"{vs[-1].get('notes', '')[:120]}) |||||||")
        continue
    us = statistics.median(v["latency_us"] for v in ok)
    uj = statistics.median(v["energy_uj"] for v in ok)
    med_of = lambda k: statistics.median([v[k] for v in ok if v.get(k)] or [float("nan")])
    mhz, w = med_of("sm_mhz"), med_of("power_w")
    ticks = min(v["energy_ticks"] for v in ok)
    med[o] = (us, uj, ticks)
    print(f"| {o} | {ok[0]['config_id']} | {us:.1f} | {flop / us / 1e6:.1f} | {uj * 1e-6:.4f} | "
          f"{100 / ticks:.1f}% | {mhz:.0f} | {w:.0f} | {ticks} |")
if len(med) == 2:
    (tu, te, tt), (eu, ee, et) = med["time"], med["energy"]
    noise = 0 if same else 1 / tt + 1 / et
    print(f"\nenergy-best / time-best: time {eu / tu:.3f}x, energy {ee / te:.3f}x "
          f"(J/launch {ee * 1e-6:.4f} vs {te * 1e-6:.4f}"
          + ("; one config)" if same else f"; energy noise of the pair ±{100 * noise:.1f}%)"))
    if same:
        print("The two searches handed back the same config: energy- and time-optimal coincide "
              "(the runner-ups above say by how much).")
    elif ee < te * (1 - noise):
        print("The energy search found a config with less energy per launch, beyond the noise.")
    else:
        print("The energy-best config is not measurably more frugal than the time-best "
              "(within the counter's noise).")
PY
echo "energy_objective: done in $((SECONDS - T0)) s; files in $OUT" >&2
