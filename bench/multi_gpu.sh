#!/usr/bin/env bash
# Every GPU of one host at once: the same `amk loop` on `--devices 0` and then on
# `--devices 0,1` (one run worker per GPU, one shared compile pool), each with a fresh, cold
# compile cache. Prints the trials per minute of each run and their ratio (the issue's bar:
# >= 1.8 on 2 x H200), and checks that both results files hold the same config_id sequence
# and the same kept flags (the loop decides in proposal order, whatever GPU finishes first).
#
# The default strategy is `random`: its proposals do not depend on measured latencies, so the
# config sequence must match exactly; kept flags follow the measured latencies and can differ
# only on a close call (the script then names the trial and both latencies).
#
# usage: bench/multi_gpu.sh            (from the repository root, a prebuilt build/amk)
# env:   AMK (build/amk), KERNEL (gemm_tc), SHAPE (the spec's default), STRATEGY (random),
#        SEED (1), BATCH (16), BUDGET (64), JOBS (nproc), MULTI (0,1: the devices of run 2),
#        LOOP_TIME (200s: a loop also stops there), OUT (multi-gpu: summary, TSVs, JSON, logs),
#        BACKEND (gpu; `BACKEND=model` dry-runs the script anywhere)
# Fits one device call: two loops of at most LOOP_TIME each, plus start-up (< 9 min).
set -u
AMK=${AMK:-build/amk}
KERNEL=${KERNEL:-gemm_tc}
SHAPE=${SHAPE:-}
STRATEGY=${STRATEGY:-random}
SEED=${SEED:-1}
BATCH=${BATCH:-16}
BUDGET=${BUDGET:-64}
JOBS=${JOBS:-$(nproc)}
MULTI=${MULTI:-0,1}
LOOP_TIME=${LOOP_TIME:-200s}
OUT=${OUT:-multi-gpu}
BACKEND=${BACKEND:-gpu}
mkdir -p "$OUT"
SUM=$OUT/summary.txt
: >"$SUM"
say() { echo "$*" | tee -a "$SUM"; }

[ -x "$AMK" ] || { echo "multi_gpu: $AMK is not an executable (build first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "multi_gpu: needs python3" >&2; exit 2; }
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader >"$OUT/nvidia-smi.txt" 2>&1
"$AMK" devices >"$OUT/devices.json" 2>"$OUT/devices.err"
say "multi_gpu: $(date -u +%FT%TZ) $(uname -n)"
say "devices: $(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print("; ".join("%d %s" % (x["index"], x["name"]) for x in d["devices"]) or "none: " + str(d["gpu"]["reason"]))' "$OUT/devices.json")"
say "loop: $KERNEL ${SHAPE:-(default shape)} --strategy $STRATEGY --seed $SEED --batch $BATCH --budget $BUDGET --jobs $JOBS (cold compile cache each run)"

# run_loop NAME DEVICES: one loop into $OUT/NAME.{tsv,json,err}; its own empty cache.
run_loop() {
    local name=$1 devs=$2 cache t0 t1
    cache=$(mktemp -d "${TMPDIR:-/tmp}/amk-multi-gpu-cache.XXXXXX")
    rm -f "$OUT/$name.tsv" "$OUT/$name.best.json"
    t0=$(date +%s.%N)
    AMK_CACHE_DIR=$cache AMK_LOG=info "$AMK" loop "$KERNEL" ${SHAPE:+--shape "$SHAPE"} \
        --backend "$BACKEND" --devices "$devs" --strategy "$STRATEGY" --seed "$SEED" \
        --batch "$BATCH" --budget "$BUDGET" --time "$LOOP_TIME" --jobs "$JOBS" \
        --results "$OUT/$name.tsv" --best "$OUT/$name.best.json" \
        >"$OUT/$name.json" 2>"$OUT/$name.err"
    local rc=$?
    t1=$(date +%s.%N)
    rm -rf "$cache"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$OUT/$name.wall"
    if [ $rc -ne 0 ]; then
        say "$name: amk loop exited $rc; last lines of $OUT/$name.err:"
        tail -5 "$OUT/$name.err" | tee -a "$SUM"
        return 1
    fi
    grep -m1 "gpu: .* device" "$OUT/$name.err" | sed "s/^/$name: /" | tee -a "$SUM"
    return 0
}

ok=1
run_loop one 0 || ok=0
run_loop multi "$MULTI" || ok=0
[ $ok = 1 ] || { say "multi_gpu: a loop failed; see $OUT"; exit 1; }

python3 - "$OUT" "$MULTI" <<'PY' | tee -a "$SUM"
import csv, json, sys
out, multi = sys.argv[1], sys.argv[2]

def rows(name):
    with open("%s/%s.tsv" % (out, name)) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))

def run(name):
    s = json.load(open("%s/%s.json" % (out, name)))
    r = rows(name)
    wall = float(open("%s/%s.wall" % (out, name)).read())
    rate = 60.0 * s["trials"] / s["elapsed_s"] if s["elapsed_s"] > 0 else float("nan")
    st = {}
    for x in r:
        st[x["status"]] = st.get(x["status"], 0) + 1
    gpus = {}
    for x in r:
        for part in (x.get("note") or "").split("; "):
            if part.startswith("gpu "):
                gpus[part] = gpus.get(part, 0) + 1
    best = s.get("best") or {}
    print("%-5s devices %-7s parallelism %s: %3d trials in %6.1f s (wall %5.1f s) = %6.1f "
          "trials/min; best %s us; statuses %s; trials per gpu %s" % (
              name, s.get("devices"), s.get("parallelism"), s["trials"], s["elapsed_s"], wall,
              rate, "%.2f" % best["latency_us"] if best.get("latency_us") else "-",
              " ".join("%s=%d" % kv for kv in sorted(st.items())),
              " ".join("%s:%d" % kv for kv in sorted(gpus.items())) or "-"))
    return rate, r

r1, one = run("one")
r2, two = run("multi")
ratio = r2 / r1 if r1 > 0 else float("nan")
print("ratio trials/min (devices %s vs 0): %.2f  (bar: >= 1.8 on 2 GPUs): %s" % (
    multi, ratio, "PASS" if ratio >= 1.8 else "BELOW"))

n = min(len(one), len(two))
ids_same = [a["config_id"] for a in one[:n]] == [b["config_id"] for b in two[:n]]
print("config_id sequence (%d trials%s): %s" % (
    n, "" if len(one) == len(two) else ", runs of %d and %d rows" % (len(one), len(two)),
    "same" if ids_same else "DIFFERENT"))
if not ids_same:
    k = next(i for i in range(n) if one[i]["config_id"] != two[i]["config_id"])
    print("  first difference at trial %s: %s vs %s" % (one[k]["trial"], one[k]["config_id"],
                                                      two[k]["config_id"]))
diff = [i for i in range(n) if one[i]["kept"] != two[i]["kept"]]
status_diff = [i for i in range(n) if one[i]["status"] != two[i]["status"]]
print("kept flags: %s" % ("same (%d kept)" % sum(x["kept"] == "1" for x in one[:n])
                          if not diff else "DIFFER at %d trial(s)" % len(diff)))
for i in diff[:10]:
    print("  trial %s %s: one gpu kept=%s %s us, %s gpus kept=%s %s us" % (
        one[i]["trial"], one[i]["config_id"], one[i]["kept"], one[i]["latency_us"] or "-",
        multi, two[i]["kept"], two[i]["latency_us"] or "-"))
print("statuses: %s" % ("same" if not status_diff else "differ at trials " +
                        ", ".join(one[i]["trial"] for i in status_diff[:10])))
PY
say "outputs: $OUT (summary.txt, one.tsv, multi.tsv, *.json, *.err)"
