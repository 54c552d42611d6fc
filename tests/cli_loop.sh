#!/usr/bin/env bash
# `amk loop`, `amk report` and the sim backend: the summary JSON, results.tsv and best.json,
# resume continuing trial numbers, seeds, budgets, batches, exhaustion, replay of a fixture
# sweep, several processes sharing one file. Run as: bash cli_loop.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
S=(--spec-dir "$TOY")

# --- a loop with the model backend --------------------------------------------------------
run loop toy "${S[@]}" --backend model --budget 12 --results r.tsv --best b.json
expect_rc 0
expect_json
cp "$WORK/out" l1.json
expect_py l1.json 'd["kernel"] == "toy" and d["backend"] == "model" and d["trials"] == 12'
expect_py l1.json 'd["first_trial"] == 1 and d["last_trial"] == 12 and d["resumed"] is False'
expect_py l1.json 'd["best"] is not None and d["best"]["latency_kind"] == "predicted" and d["best"]["latency_us"] > 0'
expect_py l1.json 'd["results"] == "r.tsv" and d["best_file"] == "b.json" and d["strategy"] == "evolve"'
[ "$(tsv_rows r.tsv)" = 12 ] || fail "loop --budget 12 logged $(tsv_rows r.tsv) rows"
[ "$(tsv_col r.tsv trial | tr '\n' ' ')" = "$(seq -s ' ' 1 12) " ] || fail "trials are not 1..12"
[ "$(tsv_col r.tsv config_id | sort | uniq -d | wc -l)" = 0 ] || fail "loop repeated a config"
pass
python3 -m json.tool b.json >/dev/null || fail "best.json is not valid JSON"
expect_py b.json 'd["config_id"] == json.load(open("l1.json"))["best"]["config_id"]'
expect_py b.json 'd["config"]["kernel"] == "toy" and d["latency_kind"] == "predicted"'
# The kept row with the lowest latency is the summary's best.
python3 - r.tsv l1.json <<'EOF' || fail "summary best is not the best ok row of r.tsv"
import csv, json, sys
rows = [r for r in csv.DictReader((l for l in open(sys.argv[1]) if not l.startswith("#")), delimiter="\t")]
best = json.load(open(sys.argv[2]))["best"]
ok = [r for r in rows if r["status"] == "ok"]
assert ok
low = min(float(r["latency_us"]) for r in ok)
assert abs(best["latency_us"] - low) <= 0.02 * low, (best, low)
kept = [r for r in rows if r["kept"] == "1"]
assert kept and kept[-1]["config_id"] == best["config_id"], (kept[-1], best)
EOF
pass
# Columns as documented. That pandas reads them is check_results_pandas (a skip without it).
python3 - r.tsv <<'EOF' || fail "r.tsv columns differ from the documented v4 columns"
import sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
cols = lines[0].rstrip("\n").split("\t")
want = ("trial time kernel shape config_id params source status latency_us latency_kind spread "
        "predicted_us bound_us pct_of_roofline compile_ms cache_hit kept device note "
        "clock_regime sm_mhz sm_mhz_min sm_mhz_max mem_mhz power_w temp_c throttle energy_uj "
        "peer peer_us vs_peer objective energy_window_ms energy_ticks cost_s").split()
assert cols == want, cols
assert all(len(l.rstrip("\n").split("\t")) == len(want) for l in lines[1:])
EOF
pass

# --- resume: trial numbers continue, nothing repeated, incumbent kept ---------------------
snapshot r.tsv
run loop toy "${S[@]}" --backend model --budget 5 --results r.tsv --best b.json --resume
expect_rc 0
expect_appended r.tsv
expect_py "$WORK/out" 'd["first_trial"] == 13 and d["last_trial"] == 17 and d["trials"] == 5 and d["resumed"] is True'
# (a restored incumbent's latency is read back from the log's text: compare with a tolerance)
expect_py "$WORK/out" 'd["best"]["latency_us"] <= (1 + 1e-8) * '"$(jget l1.json 'd["best"]["latency_us"]')"
[ "$(tsv_col r.tsv trial | tr '\n' ' ')" = "$(seq -s ' ' 1 17) " ] || fail "resumed trials are not 13..17"
[ "$(tsv_col r.tsv config_id | sort | uniq -d | wc -l)" = 0 ] || fail "resume repeated a config"
pass

# --- a killed loop resumes without losing or duplicating a row -------------------------
set +e
"$AMK" loop gemm --backend model --budget 0 --time 30s --results k.tsv --best kb.json \
    >/dev/null 2>k.err &
pid=$!
set -e
for _ in $(seq 1 100); do
    [ -f k.tsv ] && [ "$(tsv_rows k.tsv)" -ge 20 ] && break
    sleep 0.05
done
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
before=$(tsv_rows k.tsv)
[ "$before" -ge 1 ] || fail "the loop wrote nothing before SIGKILL"
last=$(tsv_col k.tsv trial | tail -1)
run loop gemm --backend model --budget 10 --results k.tsv --best kb.json --resume
expect_rc 0
expect_py "$WORK/out" 'd["first_trial"] == '"$((last + 1))"
[ "$(tsv_rows k.tsv)" -ge $((before + 10)) ] || fail "resume after SIGKILL lost rows"
[ "$(tsv_col k.tsv config_id | sort | uniq -d | wc -l)" = 0 ] || fail "resume after SIGKILL duplicated a config"
python3 -m json.tool kb.json >/dev/null || fail "best.json after SIGKILL + resume is not valid JSON"
pass

# --- seeds, strategies, batches, budgets ------------------------------------------------
i=0
for seed in 7 7 8; do
    i=$((i + 1))
    run loop gemm --backend model --budget 15 --seed "$seed" --results "seed$i.tsv" --best "seed$i.json"
    expect_rc 0
done
a=$(tsv_col seed1.tsv config_id | tr '\n' ' ')
b=$(tsv_col seed2.tsv config_id | tr '\n' ' ')
c=$(tsv_col seed3.tsv config_id | tr '\n' ' ')
[ "$a" = "$b" ] || fail "same seed gave different trials"
[ "$a" != "$c" ] || fail "seeds 7 and 8 gave identical trials"
pass
for st in evolve hillclimb random exhaustive anneal; do
    run loop toy "${S[@]}" --backend model --budget 6 --strategy "$st" --results "st-$st.tsv" --best "st-$st.json"
    expect_rc 0
    expect_py "$WORK/out" 'd["strategy"] == "'"$st"'" and d["trials"] == 6'
done
run loop toy "${S[@]}" --backend model --budget 8 --batch 4 --results batch.tsv --best batch.json
expect_rc 0
expect_py "$WORK/out" 'd["trials"] == 8'
[ "$(tsv_rows batch.tsv)" = 8 ] || fail "--batch 4 --budget 8 did not log 8 rows"
pass
# Exhaustive with no budget stops when the valid space is exhausted (toy: 40 valid configs).
run loop toy "${S[@]}" --shape small --backend model --budget 0 --strategy exhaustive --results ex.tsv --best ex.json
expect_rc 0
expect_py "$WORK/out" 'd["exhausted"] is True and d["trials"] == 40'
# The default budget is 100 trials.
run loop gemm --backend model --results def.tsv --best def.json
expect_rc 0
expect_py "$WORK/out" 'd["trials"] == 100 and d["budget"] == 100'
# --time stops an unbounded run.
start=$(date +%s)
run loop gemm --backend model --budget 0 --time 1s --results t.tsv --best t.json
expect_rc 0
expect_py "$WORK/out" 'd["trials"] > 0 and d["elapsed_s"] < 5'
[ $(($(date +%s) - start)) -le 10 ] || fail "--time 1s ran for more than 10 s"
pass
# auto: no GPU here (or one): any backend, but the summary names it.
run loop toy "${S[@]}" --backend auto --budget 3 --results auto.tsv --best auto.json
expect_rc 0
expect_py "$WORK/out" 'd["backend"] in ("gpu", "sim", "model") and d["trials"] == 3'

# --- sim: replay a fixture sweep ---------------------------------------------------------
# The sweep: every valid toy config at the small shape, relabelled as measured.
python3 - ex.tsv sweep.tsv <<'EOF'
import sys
out = open(sys.argv[2], "w")
cols = None
for line in open(sys.argv[1]):
    if line.startswith("#"):
        out.write(line)
        continue
    f = line.rstrip("\n").split("\t")
    if cols is None:
        cols = f
    elif f[cols.index("status")] == "ok":
        f[cols.index("latency_kind")] = "measured"
        f[cols.index("device")] = "fixture-gpu"
    out.write("\t".join(f) + "\n")
EOF
cp sweep.tsv sweep_part.tsv
python3 - sweep_part.tsv <<'EOF'
import sys
lines = open(sys.argv[1]).readlines()
open(sys.argv[1], "w").writelines(lines[:-5])   # drop the last 5 configs
EOF
snapshot sweep.tsv
run loop toy "${S[@]}" --shape small --backend sim:sweep.tsv --budget 0 --strategy exhaustive --results sim.tsv --best sim.json
expect_rc 0
expect_unchanged sweep.tsv
expect_py "$WORK/out" 'd["backend"] == "sim" and d["best"]["latency_kind"] == "replayed"'
python3 - sweep.tsv "$WORK/out" <<'EOF' || fail "sim loop best is not the sweep's fastest config"
import csv, json, sys
rows = [r for r in csv.DictReader((l for l in open(sys.argv[1]) if not l.startswith("#")), delimiter="\t") if r["status"] == "ok"]
best = json.load(open(sys.argv[2]))["best"]
fastest = min(float(r["latency_us"]) for r in rows)
assert abs(best["latency_us"] - fastest) <= 0.02 * fastest, (best, fastest)
EOF
pass
# A sweep recorded on another GPU (an H200, whose bandwidth puts gemv's fastest rows below
# an H100's roofline floor) replays on its own device's target unless --target names one:
# its fastest row is the best. Named h100, those rows are withheld as too fast for it.
H200="$SRC/tests/fixtures/sim/gemv-h200.tsv"
GEMV=(gemv --shape N=14336,K=4096,dtype=bf16 --strategy exhaustive --budget 0)
run loop "${GEMV[@]}" --backend "sim:$H200" --results h200.tsv --best h200.json
expect_rc 0
expect_py "$WORK/out" 'abs(d["best"]["latency_us"] - 30.656) < 1e-3 and d["device"] == "NVIDIA H200 (replayed)"'
run loop "${GEMV[@]}" --backend "sim:$H200" --results h100.tsv --best h100.json --target h100
expect_rc 0
expect_py "$WORK/out" 'd["best"]["latency_us"] > 35'
[ "$(tsv_col h100.tsv status | grep -c withheld)" = 5 ] || fail "--target h100: the H200's 5 fastest rows were not withheld"
pass
# evaluate on sim: a recorded config replays its number; an absent one is not_recorded.
dropped=$(python3 - sweep.tsv <<'EOF'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
cols = rows[0]
last = rows[-1]
print(json.dumps({"kernel": "toy", "shape": {"N": 4096},
                  "params": json.loads(last[cols.index("params")])}))
print(last[cols.index("latency_us")])
EOF
)
echo "$dropped" | sed -n 1p > dropped.json
want=$(echo "$dropped" | sed -n 2p)
run evaluate dropped.json --spec-dir "$TOY" --backend sim:sweep.tsv
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "ok" and d["latency_kind"] == "replayed" and abs(d["latency_us"] - '"$want"') < 1e-3 * '"$want"
run evaluate dropped.json --spec-dir "$TOY" --backend sim:sweep_part.tsv
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "not_recorded" and d["latency_us"] is None'
# A loop on a partial sweep searches only what it recorded: no not_recorded row, and it runs
# out after exactly the recorded configs.
run loop toy "${S[@]}" --shape small --backend sim:sweep_part.tsv --budget 0 --strategy exhaustive --results part.tsv --best part.json
expect_rc 0
grep -q "cannot answer 5 valid config" "$WORK/err" || fail "no note about the 5 configs the partial sweep lacks"
[ "$(tsv_col part.tsv status | grep -vc '^ok$')" = 0 ] || fail "a loop on a partial sweep wrote rows other than ok"
[ "$(tsv_col part.tsv config_id | wc -l)" = "$(( $(tsv_col sweep_part.tsv config_id | wc -l) ))" ] ||
    fail "the loop on a partial sweep did not cover exactly its recorded configs"
pass

# --- several processes appending to one file ---------------------------------------------
pids=()
for shape in N=1024 N=2048 N=8192; do
    "$AMK" loop toy "${S[@]}" --shape "$shape" --backend model --budget 20 --results shared.tsv \
        --best "best-$shape.json" >/dev/null 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent loop failed"; done
[ "$(tsv_rows shared.tsv)" = 60 ] || fail "3 concurrent loops x 20 trials left $(tsv_rows shared.tsv) rows"
python3 - shared.tsv <<'EOF' || fail "shared.tsv has a torn or interleaved row"
import sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
assert all(len(l.rstrip("\n").split("\t")) == 35 for l in lines), "bad row"
EOF
pass

# --- report ----------------------------------------------------------------------------------
run report r.tsv
expect_rc 0
expect_out "toy"
run report r.tsv shared.tsv k.tsv --json
expect_rc 0
expect_json
grep -q '"toy"' "$WORK/out" && grep -q '"gemm"' "$WORK/out" || fail "report --json misses a kernel"
pass
run report --json
expect_rc 1
expect_err "missing FILE"

# --- explicit gpu without a device: exit 4 ------------------------------------------------
run devices
if [ "$(jget "$WORK/out" 'd["gpu"]["available"]')" = false ]; then
    run loop toy "${S[@]}" --backend gpu --budget 1 --results gpu.tsv --best gpu.json
    expect_rc 4
    expect_err "gpu"
    run evaluate dropped.json --spec-dir "$TOY" --backend gpu
    expect_rc 4
fi

done_ok
