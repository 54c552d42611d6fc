#!/usr/bin/env bash
# The sim backend replays every cachefile Kernel Tuner writes (no GPU needed):
# - a file whose objective is not time (GFLOP/s, maximised, as hotspot_milo's) replays the
#   recorded times by default; --objective GFLOP/s replays the objective itself, a maximised
#   one as latency 1e6/value (so the best is the highest GFLOP/s, not the lowest time);
#   NAME:min overrides the direction; a missing field and --objective without sim:FILE are
#   refused;
# - a truncated (gzip or text) or malformed file is bad input, exit 2, naming the byte offset;
# - a cachefile Kernel Tuner left unclosed (records appended, each followed by ",") replays
#   its complete records, as Kernel Tuner's own reader does.
# Files are cut down from space_defs/data/benchmark_hub's convolution_milo W6600 cachefile.
# Run as: bash sim_objective.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
HUB="$SRC/space_defs/data/benchmark_hub"
k=convolution_milo
run import "$HUB/spaces/$k.json" -o $k
expect_rc 0

# 300 records; the fastest by time is not the highest GFLOP/s (one record's GFLOP/s is raised
# above all), and one failed record carries its error in GFLOP/s only (no "time").
python3 - "$HUB/cachefiles/$k/W6600.json.gz" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
keys = list(d["cache"])[:300]
d["cache"] = {key: d["cache"][key] for key in keys}
d["objective"] = "GFLOP/s"
c = d["cache"]
for v in c.values():  # no spread: the best handed back is then the fastest row
    v.pop("times", None)
fast = min(keys, key=lambda q: c[q]["time"])
other = next(q for q in keys if q != fast)
c[other]["GFLOP/s"] = 2 * max(v["GFLOP/s"] for v in c.values())
fail = keys[-1]
del c[fail]["time"]
c[fail]["GFLOP/s"] = "RuntimeFailedConfig"
low = min((q for q in keys if q != fail), key=lambda q: c[q]["GFLOP/s"])
json.dump(d, open("gf.json", "w"), indent=1)
json.dump({"fast": fast, "other": other, "low": low, "fail": fail,
           "t_fast": c[fast]["time"], "g_other": c[other]["GFLOP/s"],
           "g_low": c[low]["GFLOP/s"]}, open("expect.json", "w"))
text = open("gf.json").read()
gzip.open("gf.json.gz", "wt").write(text)
# Unclosed as Kernel Tuner leaves it mid-run: the closing "}\n}" gone, a trailing comma.
body = text.rstrip()[:-1].rstrip()[:-1].rstrip()  # drop the two closing braces
assert body.endswith("}"), body[-20:]
open("unclosed.json", "w").write(body + ",")
# Cut inside a record (a number), and with a stray character.
at = text.index('"time": ', len(text) // 2) + 11
open("cut.json", "w").write(text[:at])
bad = text.index('": ', 4000) + 3
open("bad.json", "w").write(text[:bad] + "@" + text[bad:])
open("bad.at", "w").write(str(bad))
raw = open("gf.json.gz", "rb").read()
open("cut.json.gz", "wb").write(raw[: len(raw) // 2])
PY

# check WHAT FIELD...: the exhaustive replay's best and its latency.
check() {
    python3 - "$@" <<'PY' || fail "replay of $1"
import csv, json, sys
what = sys.argv[1]
e = json.load(open("expect.json"))
rows = list(csv.DictReader((l for l in open("r.tsv") if not l.startswith("#")), delimiter="\t"))
assert len(rows) == 300, len(rows)
assert sum(r["status"] == "run_error" for r in rows) == 1
b = json.load(open("b.json"))
p = b["config"]["params"]
keys = json.load(open("gf.json"))["tune_params_keys"]
key = ",".join(str(int(p[q])) for q in keys)
want, lat = {"time": (e["fast"], e["t_fast"] * 1e3), "max": (e["other"], 1e6 / e["g_other"]),
             "min": (e["low"], e["g_low"])}[what]
assert key == want, (what, key, want)
assert abs(b["latency_us"] / lat - 1) < 1e-9, (b["latency_us"], lat)
PY
    pass
}
loop() {
    rm -f r.tsv b.json
    run loop $k --spec-dir $k --strategy exhaustive --budget 0 --min-gain 0 --results r.tsv \
        --best b.json "$@"
}

loop --backend sim:gf.json
expect_rc 0
check time
loop --backend sim:gf.json.gz --objective GFLOP/s
expect_rc 0
check max
loop --backend sim:gf.json --objective GFLOP/s:min
expect_rc 0
check min
loop --backend sim:gf.json --objective nope
expect_rc 2
expect_err 'has no "nope"'
loop --backend model --objective GFLOP/s
expect_rc 1
expect_err "needs --backend sim:FILE"

# Bad files: exit 2 with the offset.
size=$(wc -c <cut.json)
loop --backend sim:cut.json
expect_rc 2
expect_err "cut.json: truncated: the text ends at byte $size" "inside a record"
loop --backend sim:bad.json
expect_rc 2
expect_err "bad.json: not valid JSON at byte $(cat bad.at) "
loop --backend sim:cut.json.gz
expect_rc 2
expect_err "cut.json.gz: truncated gzip stream" "of the compressed file, after"

# Unclosed: every record replays, the same best as the closed file's.
loop --backend sim:unclosed.json
expect_rc 0
expect_err "is not closed"
check time
done_ok
