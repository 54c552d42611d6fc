#!/usr/bin/env bash
# The sim backend replays the community's recorded files (space_defs/data/benchmark_hub:
# Kernel Tuner cachefiles and a T4 file, gzipped) on spaces made by `amk import`:
# - exhaustive replay of every file finds and hands back exactly the recorded optimum (with
#   the default --min-gain), with every record
#   replayed once and each recorded failure as its amk status (RuntimeFailedConfig ->
#   run_error, CompilationFailedConfig -> compile_error);
# - latencies are the recorded ms as µs, latency_kind replayed, the device named by the file;
# - --time runs on the simulated clock: the recorded costs of the trials (compile +
#   verification + benchmark + framework), same seed same trials;
# - uncompressed files read the same; a config missing from the file is not_recorded;
#   bad files are clear errors.
# Run as: bash sim_hub.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
HUB="$SRC/space_defs/data/benchmark_hub"

# expected FILE: "n_records best_us best_key n_runtime n_compile n_invalid" from the file.
expected() {
    python3 - "$1" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
if "cache" in d:
    recs = [(v["time"], k) for k, v in d["cache"].items()]
else:
    inv = {"runtime": "RuntimeFailedConfig", "compile": "CompilationFailedConfig",
           "constraints": "InvalidConfig"}
    recs = []
    for i, r in enumerate(d["results"]):
        t = r["invalidity"]
        if t == "correct":
            t = [m["value"] for m in r["measurements"] if m["name"] == "time"][0]
        else:
            t = inv[t]
        recs.append((t, ",".join(str(v) for v in r["configuration"].values())))
ok = [(t, k) for t, k in recs if not isinstance(t, str)]
best = min(ok)
n = lambda e: sum(1 for t, _ in recs if t == e)
print(len(recs), repr(best[0] * 1000.0), best[1], n("RuntimeFailedConfig"),
      n("CompilationFailedConfig"), n("InvalidConfig"))
PY
}

files=0
for f in "$HUB"/cachefiles/*/*.json.gz; do
    k=$(basename "$(dirname "$f")")
    [ -d "$k" ] || { run import "$HUB/spaces/$k.json" -o "$k"; expect_rc 0; }
    tag="$k/$(basename "$f")"
    read -r n best_us best_key n_run n_comp n_inv <<<"$(expected "$f")"
    rm -f r.tsv b.json
    # The default --min-gain: on replayed rows the best handed back is the fastest row
    # whatever the keep margin (some optima lead by under 1 %, and a noisy cachefile's
    # exhaustive replay once handed back trial 1, 1.183x the optimum).
    run loop "$k" --spec-dir "$k" --backend "sim:$f" --strategy exhaustive --budget 0 \
        --results r.tsv --best b.json
    expect_rc 0
    python3 - r.tsv "$n" "$best_us" "$best_key" "$n_run" "$n_comp" "$n_inv" "$f" <<'PY' ||
import csv, json, sys
path, n, best_us, best_key, n_run, n_comp, n_inv, src = sys.argv[1:]
rows = list(csv.DictReader((l for l in open(path) if not l.startswith("#")), delimiter="\t"))
st = lambda s: sum(1 for r in rows if r["status"] == s)
assert len(rows) == int(n), f"{len(rows)} rows, the file holds {n} records"
assert st("not_recorded") == 0, "a config of the imported space is not in the file"
assert st("run_error") == int(n_run), f"run_error {st('run_error')}, recorded {n_run}"
assert st("compile_error") == int(n_comp), f"compile_error {st('compile_error')}, recorded {n_comp}"
assert st("rejected") == int(n_inv), f"rejected {st('rejected')}, recorded InvalidConfig {n_inv}"
ok = [r for r in rows if r["status"] == "ok"]
assert all(r["latency_kind"] == "replayed" for r in ok)
assert all(r["device"].endswith(" (replayed)") for r in rows)
best = min(ok, key=lambda r: float(r["latency_us"]))
assert abs(float(best["latency_us"]) / float(best_us) - 1) < 1e-8, (best["latency_us"], best_us)
b = json.load(open("b.json"))
assert abs(b["latency_us"] / float(best_us) - 1) < 1e-12, (b["latency_us"], best_us)
assert b["config_id"] == best["config_id"]
if "_T4" not in src:
    assert f"cache key {best_key})" in best["note"], best["note"]
PY
        fail "$tag: exhaustive replay"
    pass
    echo "sim_hub: $tag: $n records replayed, optimum $best_us us found"
    files=$((files + 1))
done
[ "$files" -ge 6 ] || fail "expected 6 recorded files, found $files"

# The device comes from the file: device_name, else the file's name (MI250X has none).
k=convolution_milo
run loop $k --spec-dir $k --backend "sim:$HUB/cachefiles/$k/A100.json.gz" --budget 3 \
    --results d.tsv --best d.json
expect_rc 0
expect_out '"NVIDIA A100-PCIE-40GB (replayed)"'
run loop $k --spec-dir $k --backend "sim:$HUB/cachefiles/$k/MI250X.json.gz" --budget 3 \
    --results d2.tsv --best d2.json
expect_rc 0
expect_out '"MI250X (replayed)"'

# --time on the simulated clock: the summary's elapsed_s is the sum of the recorded costs
# of the trials (compile + verification + benchmark + framework, ms in the file), the last
# trial starts before the limit, and the same seed gives the same trials.
A100="$HUB/cachefiles/$k/A100.json.gz"
for i in 1 2; do
    run loop $k --spec-dir $k --backend "sim:$A100" --strategy random --seed 7 --time 300s \
        --results "t$i.tsv" --best "t$i.json"
    expect_rc 0
    cp "$WORK/out" "sum$i.json"
done
python3 - "$A100" t1.tsv sum1.json <<'PY' || fail "simulated clock"
import csv, gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
keys = d["tune_params_keys"]
rows = list(csv.DictReader((l for l in open(sys.argv[2]) if not l.startswith("#")), delimiter="\t"))
cost = []
for r in rows:
    p = json.loads(r["params"])
    e = d["cache"][",".join(str(p[k]) for k in keys)]
    cost.append(sum(e[f] for f in ("compile_time", "verification_time", "benchmark_time",
                                   "framework_time")) / 1000.0)
s = json.load(open(sys.argv[3]))
assert abs(s["elapsed_s"] - sum(cost)) < 2e-3  # printed in ms, (s["elapsed_s"], sum(cost))
assert sum(cost[:-1]) < 300 <= sum(cost), (sum(cost[:-1]), sum(cost))
assert s["trials"] == len(rows) > 10
PY
pass
cut -f5 t1.tsv >ids1
cut -f5 t2.tsv >ids2
cmp -s ids1 ids2 || fail "same seed and --time, different trials"
pass

# Uncompressed, with one record removed: the missing config is not_recorded (evaluate), the
# loop never proposes it; an unknown error name and a missing param are clear errors.
python3 - "$A100" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
gone = "32,4,1,3,1,0,1,1,15,15"  # the optimum
del d["cache"][gone]
json.dump(d, open("trim.json", "w"))
cfg = dict(zip(d["tune_params_keys"], map(int, gone.split(","))))
shape = {"problem_size_x": 4096, "problem_size_y": 4096}
json.dump({"kernel": "convolution_milo", "shape": shape, "params": cfg}, open("gone.json", "w"))
cfg["block_size_x"] = 16
json.dump({"kernel": "convolution_milo", "shape": shape, "params": cfg}, open("there.json", "w"))
k = next(iter(d["cache"]))
d["cache"][k]["time"] = "SomethingElse"
json.dump(d, open("bad_error.json", "w"))
for v in d["cache"].values():
    v.pop("read_only", None)
d["tune_params_keys"].remove("read_only")
json.dump(d, open("no_param.json", "w"))
PY
run evaluate gone.json --spec-dir $k --backend sim:trim.json
expect_rc 0
expect_out '"status": "not_recorded"' "is not in trim.json"
run evaluate there.json --spec-dir $k --backend sim:trim.json
expect_rc 0
expect_out '"status": "ok"' '"latency_kind": "replayed"'
run loop $k --spec-dir $k --backend sim:trim.json --strategy exhaustive --budget 0 \
    --results x.tsv --best x.json
expect_rc 0
python3 - x.tsv <<'PY' || fail "trimmed replay"
import csv
rows = list(csv.DictReader((l for l in open("x.tsv") if not l.startswith("#")), delimiter="\t"))
assert len(rows) == 4361 and not any(r["status"] == "not_recorded" for r in rows), len(rows)
PY
pass
run loop $k --spec-dir $k --backend sim:bad_error.json --budget 1 --results y.tsv
[ "$RC" -ne 0 ] || fail "unknown error name accepted"
expect_err 'unknown error "SomethingElse"'
run loop $k --spec-dir $k --backend sim:no_param.json --budget 1 --results y.tsv
[ "$RC" -ne 0 ] || fail "a file without a param of the spec accepted"
expect_err "param read_only of kernel convolution_milo is not in the file"
done_ok
