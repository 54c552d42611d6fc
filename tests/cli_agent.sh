#!/usr/bin/env bash
# The agent contract (HARNESS.md): propose -> edit -> evaluate -> verdict with the model
# backend, logging with --results, and the copy-pasteable loop of HARNESS.md extracted and
# run exactly as written. Run as: bash cli_agent.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"

# --- propose with no history: the default config ----------------------------------------
run propose gemm
expect_rc 0
expect_json
cp "$WORK/out" p0.json
expect_py p0.json 'set(d) >= {"kernel", "shape", "config", "search_space", "incumbent"}'
expect_py p0.json 'd["kernel"] == "gemm" and d["incumbent"] is None and d["source"] == "default"'
expect_py p0.json 'd["config"]["kernel"] == "gemm" and set(d["config"]) >= {"kernel", "shape", "params"}'
expect_py p0.json 'set(d["config"]["params"]) == set(d["search_space"]["params"])'
expect_py p0.json 'all(d["config"]["params"][k] == v["default"] for k, v in d["search_space"]["params"].items())'
expect_py p0.json 'all(v["default"] in v["choices"] for v in d["search_space"]["params"].values())'
expect_py p0.json 'd["config"]["shape"]["M"] == 4096 and d["exhausted"] is False'
run propose gemm --shape M=1024,N=512,K=256
expect_rc 0
expect_py "$WORK/out" 'd["config"]["shape"]["M"] == 1024 and d["config"]["shape"]["K"] == 256'
expect_py "$WORK/out" 'd["shape"].startswith("M=1024,N=512,K=256")'

# --- evaluate: the whole propose output, a bare config, stdin ---------------------------
run evaluate p0.json --backend model
expect_rc 0
expect_json
cp "$WORK/out" v0.json
expect_py v0.json 'd["status"] == "ok" and d["valid"] is True and d["latency_kind"] == "predicted"'
expect_py v0.json 'd["latency_us"] > 0 and d["bound_us"] > 0 and d["latency_us"] >= d["bound_us"]'
expect_py v0.json 'd["correct"] is None and d["rejected_reason"] is None'
expect_py v0.json 'set(d) >= {"status", "valid", "rejected_reason", "correct", "latency_us", "latency_kind", "predicted_us", "bound_us", "pct_of_roofline", "config_id", "notes"}'
# The verdict has exactly the fields of space_defs/schema/verdict.schema.json, and the
# proposal's config only fields of config.schema.json.
VSCHEMA="$SRC/space_defs/schema/verdict.schema.json"
CSCHEMA="$SRC/space_defs/schema/config.schema.json"
# The schemas are part of the source tree: missing, the checkout is broken (a failure).
[ -f "$VSCHEMA" ] || fail "missing $VSCHEMA"
[ -f "$CSCHEMA" ] || fail "missing $CSCHEMA"
expect_py v0.json 'set(d) == set(json.load(open("'"$VSCHEMA"'"))["properties"])'
expect_py p0.json 'set(json.load(open("'"$CSCHEMA"'"))["required"]) <= set(d["config"]) <= set(json.load(open("'"$CSCHEMA"'"))["properties"])'
id0=$(jget p0.json 'd["config_id"]')
[ "$(jget v0.json 'd["config_id"]')" = "$id0" ] || fail "verdict config_id differs from the proposal's"
pass
jget p0.json 'd["config"]' > c0.json
run evaluate c0.json
expect_rc 0
expect_py "$WORK/out" 'd["config_id"] == "'"$id0"'" and d["status"] == "ok"'
run_in c0.json evaluate -
expect_rc 0
expect_py "$WORK/out" 'd["config_id"] == "'"$id0"'"'
# The model backend is deterministic: same config, same numbers.
expect_py "$WORK/out" 'd["latency_us"] == '"$(jget v0.json 'd["latency_us"]')"
# Another target gives another prediction.
run evaluate c0.json --target mi300x
expect_rc 0
expect_py "$WORK/out" 'd["latency_us"] != '"$(jget v0.json 'd["latency_us"]')"
run evaluate c0.json --tables
expect_rc 0
expect_err "gemm" "ok"

# --- a restriction violated is a verdict (exit 0), not an input error ------------------
cat > bad_restr.json <<'EOF'
{"kernel": "toy", "shape": {"N": 4096}, "params": {"BLOCK": 256, "VEC": 8, "UNROLL": 1}}
EOF
run evaluate bad_restr.json --spec-dir "$TOY"
expect_rc 0
expect_json
expect_py "$WORK/out" 'd["status"] == "rejected" and d["valid"] is False'
expect_py "$WORK/out" '"(UNROLL * 4) % VEC == 0" in d["rejected_reason"]'
expect_py "$WORK/out" 'd["latency_us"] is None and d["latency_kind"] is None'

# --- --results: rows appended with source user, trials continue, kept ------------------
run evaluate p0.json --results r.tsv
expect_rc 0
[ "$(tsv_rows r.tsv)" = 1 ] || fail "evaluate --results did not append exactly one row"
pass
head -1 r.tsv | grep -q '^# amk results v4$' || fail "r.tsv lacks the versioned header"
pass
[ "$(tsv_col r.tsv source)" = user ] || fail "evaluate --results: source is not user"
[ "$(tsv_col r.tsv trial)" = 1 ] || fail "evaluate --results: first trial is not 1"
[ "$(tsv_col r.tsv kept)" = 1 ] || fail "evaluate --results: the first ok trial is not kept"
[ "$(tsv_col r.tsv config_id)" = "$id0" ] || fail "evaluate --results: wrong config_id logged"
[ "$(tsv_col r.tsv latency_kind)" = predicted ] || fail "evaluate --results: latency_kind not predicted"
pass
snapshot r.tsv
run evaluate bad_restr.json --spec-dir "$TOY" --results r.tsv
expect_rc 0
expect_appended r.tsv
[ "$(tsv_rows r.tsv)" = 2 ] || fail "a rejected verdict was not logged"
[ "$(tsv_col r.tsv trial | tr '\n' ' ')" = "1 2 " ] || fail "trial numbers do not continue"
[ "$(tsv_col r.tsv status | tail -1)" = rejected ] || fail "rejected row has the wrong status"
pass

# --- propose learns from the file ------------------------------------------------------
run propose gemm --results r.tsv
expect_rc 0
cp "$WORK/out" p1.json
expect_py p1.json 'd["history_rows"] == 1 and d["incumbent"] is not None'
expect_py p1.json 'd["incumbent"]["config_id"] == "'"$id0"'" and d["incumbent"]["latency_kind"] == "predicted"'
expect_py p1.json 'd["config_id"] != "'"$id0"'" and d["source"] != "default"'
run propose gemm --results r.tsv
cmp -s "$WORK/out" p1.json || fail "propose is not deterministic for the same file and seed"
pass
run propose gemm --results r.tsv --strategy random --seed 5
expect_rc 0
expect_py "$WORK/out" 'd["strategy"] == "random" and d["config_id"] != "'"$id0"'"'
run propose gemm --results does-not-exist.tsv
expect_rc 0
expect_py "$WORK/out" 'd["incumbent"] is None and d["source"] == "default"'
[ ! -e does-not-exist.tsv ] || fail "propose created its --results file"
pass

# Proposals never repeat a logged config until the space is exhausted (toy: 40 valid).
for i in $(seq 1 45); do
    run propose toy --spec-dir "$TOY" --shape small --results toy.tsv
    expect_rc 0
    if grep -q '"exhausted": true' "$WORK/out"; then
        break
    fi
    cp "$WORK/out" prop.json
    run evaluate prop.json --spec-dir "$TOY" --results toy.tsv
    expect_rc 0
done
[ "$(jget "$WORK/out" 'd["exhausted"]')" = true ] || fail "toy space not exhausted after 45 proposals"
n=$(tsv_rows toy.tsv)
[ "$n" -le 40 ] && [ "$n" -ge 30 ] || fail "toy: $n rows logged before exhaustion (expected 30..40)"
[ "$(tsv_col toy.tsv config_id | sort | uniq -d | wc -l)" = 0 ] || fail "propose repeated a config"
pass
expect_py "$WORK/out" 'd["incumbent"] is not None and d["config_id"] == d["incumbent"]["config_id"]'

# --- the HARNESS.md loop, extracted and run exactly as written -------------------------
python3 - "$SRC/HARNESS.md" > harness_loop.sh <<'EOF'
import sys
text = open(sys.argv[1]).read()
marker = text.index("<!-- agent-loop")
start = text.index("```bash\n", marker) + len("```bash\n")
end = text.index("```\n", start)
sys.stdout.write(text[start:end])
EOF
[ -s harness_loop.sh ] || fail "no agent loop found in HARNESS.md"
grep -q "amk propose" harness_loop.sh && grep -q "amk evaluate" harness_loop.sh ||
    fail "the HARNESS.md loop does not call propose and evaluate"
pass
mkdir -p bin harness
ln -s "$AMK" bin/amk
(cd harness && PATH="$WORK/bin:$PATH" bash ../harness_loop.sh) >harness.out 2>harness.err ||
    { cat harness.err >&2; fail "the HARNESS.md loop failed"; }
grep -q "^round 6: [0-9a-f]\{16\} " harness.out || { cat harness.out >&2; fail "the HARNESS.md loop did not print 6 rounds"; }
[ "$(tsv_rows harness/results.tsv)" = 6 ] || fail "the HARNESS.md loop did not log 6 rows"
[ "$(tsv_col harness/results.tsv source | sort -u)" = user ] || fail "HARNESS loop rows are not source user"
[ "$(tsv_col harness/results.tsv trial | tr '\n' ' ')" = "1 2 3 4 5 6 " ] || fail "HARNESS loop trials not 1..6"
grep -q "gemm" harness.out || fail "the HARNESS.md loop's report does not name gemm"
pass

# --- the docs name every status value and every exit code ------------------------------
python3 - "$SRC/common/amk_common.h" "$SRC/HARNESS.md" <<'EOF' || fail "HARNESS.md misses a status value"
import re, sys
hdr = open(sys.argv[1]).read()
block = hdr[hdr.index("#define AMK_STATUS_MAP"):]
block = block[:block.index("typedef enum amk_status")]
names = re.findall(r'XX\(\w+, "(\w+)"', block)
assert len(names) >= 10, names
doc = open(sys.argv[2]).read()
table = doc[doc.index("<!-- statuses"):]
missing = [n for n in names if "| `%s` |" % n not in table]
if missing:
    print("missing statuses:", missing, file=sys.stderr)
    sys.exit(1)
EOF
pass
for f in README.md HARNESS.md; do
    for code in 0 1 2 3 4 5; do
        grep -q "^| $code |" "$SRC/$f" || fail "$f does not document exit code $code"
    done
done
pass

done_ok
