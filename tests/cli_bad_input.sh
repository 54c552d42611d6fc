#!/usr/bin/env bash
# Bad input gets a clear message naming the culprit and a documented exit code, and never
# corrupts or drops rows already in results.tsv (unchanged, or only appended to).
# Run as: bash cli_bad_input.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
S=(--spec-dir "$TOY")
BAD="$FIX/bad"

# A good results file every case below must leave alone.
run loop toy "${S[@]}" --backend model --budget 8 --results r.tsv --best b.json
expect_rc 0
[ "$(tsv_rows r.tsv)" = 8 ] || fail "setup: 8 rows expected"
snapshot r.tsv
cp b.json b.json.snapshot

# Config from the proposal, to be broken one way at a time.
run propose toy "${S[@]}" --shape small
expect_rc 0
jget "$WORK/out" 'd["config"]' > good.json
# mk NAME PYTHON: writes NAME.json from good.json after running PYTHON on c (the config).
mk() {
    python3 -c 'import json, sys
c = json.load(open("good.json"))
exec(sys.argv[2])
open(sys.argv[1] + ".json", "w").write(json.dumps(c))' "$1" "$2"
}

# evaluate_bad NAME CODE TEXT...: evaluate NAME.json with --results r.tsv; expect exit CODE,
# every TEXT on stderr, nothing on stdout, and r.tsv untouched.
evaluate_bad() {
    local name=$1 code=$2
    shift 2
    run evaluate "$name.json" "${S[@]}" --results r.tsv
    expect_rc "$code"
    expect_err "$@"
    expect_no_out
    expect_unchanged r.tsv
}

# --- malformed JSON ------------------------------------------------------------------------
printf '{"kernel": "toy",\n "shape": {"N": 4096},\n "params": {"BLOCK": 256,, "VEC": 1}}\n' > malformed.json
evaluate_bad malformed 2 "malformed.json:3:" "malformed JSON"
printf '' > empty.json
evaluate_bad empty 2 "empty.json" "malformed JSON"
printf '{"kernel": "toy", "shape": {"N": 4096}, "params": {"BLOCK": 256' > truncated.json
evaluate_bad truncated 2 "truncated.json" "malformed JSON"
printf '[1, 2, 3]\n' > array.json
evaluate_bad array 2 "array.json" "expected a JSON object"
printf '{"kernel": "toy"} trailing\n' > trailing.json
evaluate_bad trailing 2 "trailing.json" "malformed JSON"
run_in malformed.json evaluate - "${S[@]}" --results r.tsv
expect_rc 2
expect_err "<stdin>:3:"
expect_unchanged r.tsv
run evaluate no-such-config.json "${S[@]}"
expect_rc 2
expect_err "no-such-config.json" "no such file"

# --- unknown kernel / param / dimension, missing param -------------------------------
mk unknown_kernel 'c["kernel"] = "nosuchkernel"'
evaluate_bad unknown_kernel 2 "unknown kernel 'nosuchkernel'" "toy"
mk unknown_param 'c["params"]["WIBBLE"] = 4'
evaluate_bad unknown_param 2 "WIBBLE"
mk missing_param 'del c["params"]["VEC"]'
evaluate_bad missing_param 2 "VEC"
mk unknown_dim 'c["shape"]["Q"] = 7'
evaluate_bad unknown_dim 2 "Q"

# --- values: outside the choices, non-integer, huge, negative, injection -----------------
mk not_choice 'c["params"]["BLOCK"] = 96'
evaluate_bad not_choice 2 "BLOCK" "96"
mk non_integer 'c["params"]["BLOCK"] = 256.5'
evaluate_bad non_integer 2 "BLOCK"
mk float_text 'c["params"]["BLOCK"] = "256"'
evaluate_bad float_text 2 "BLOCK"
mk huge 'c["params"]["BLOCK"] = 10**30'
evaluate_bad huge 2 "BLOCK"
mk huge_int64 'c["params"]["BLOCK"] = 2**63 + 256'
evaluate_bad huge_int64 2 "BLOCK"
mk negative 'c["params"]["BLOCK"] = -256'
evaluate_bad negative 2 "BLOCK"
mk devil 'c["params"]["VEC"] = "4 -DEVIL"'
evaluate_bad devil 2 "VEC"
grep -q "DEVIL" r.tsv && fail "a '-DEVIL' string reached results.tsv"
mk devil_kernel 'c["kernel"] = "toy -DEVIL"'
evaluate_bad devil_kernel 2 "toy -DEVIL"
mk null_param 'c["params"]["BLOCK"] = None'
evaluate_bad null_param 2 "BLOCK"
mk bad_shape 'c["shape"]["N"] = -5'
evaluate_bad bad_shape 2 "N"
mk zero_shape 'c["shape"]["N"] = 0'
evaluate_bad zero_shape 2 "N"
mk huge_shape 'c["shape"]["N"] = 10**25'
evaluate_bad huge_shape 2 "N"

# --- a violated restriction is a verdict: exit 0, logged, file only appended ----------
mk restricted 'c["params"]["VEC"] = 8; c["params"]["UNROLL"] = 3'
run evaluate restricted.json "${S[@]}" --results r.tsv
expect_rc 0
expect_json
expect_py "$WORK/out" 'd["status"] == "rejected" and "VEC" in d["rejected_reason"]'
expect_appended r.tsv
[ "$(tsv_rows r.tsv)" = 9 ] || fail "the rejected verdict was not appended"
snapshot r.tsv

# --- --shape and kernel names on the command line --------------------------------------
for cmd in space propose loop; do
    extra=()
    [ "$cmd" = propose ] && extra=(--results r.tsv)
    [ "$cmd" = loop ] && extra=(--backend model --results r.tsv --best x.json)
    run "$cmd" toy "${S[@]}" "${extra[@]}" --shape Q=5
    expect_rc 2
    expect_err "Q"
    run "$cmd" toy "${S[@]}" "${extra[@]}" --shape "N=64 -DEVIL"
    expect_rc 2
    expect_err "N"
    run "$cmd" toy "${S[@]}" "${extra[@]}" --shape N=-5
    expect_rc 2
    run "$cmd" toy "${S[@]}" "${extra[@]}" --shape N=99999999999999999999999
    expect_rc 2
    run "$cmd" toy "${S[@]}" "${extra[@]}" --shape nosuchshape
    expect_rc 2
    expect_err "nosuchshape"
    run "$cmd" nosuchkernel "${extra[@]}"
    expect_rc 2
    expect_err "unknown kernel 'nosuchkernel'" "gemm"
done
[ ! -e x.json ] || fail "a refused loop wrote a best file"
pass
expect_unchanged r.tsv

# --- usage errors: exit 1 ------------------------------------------------------------------
usage() {
    run "$@"
    expect_rc 1
    expect_no_out
}
usage loop toy "${S[@]}" --budget -5
expect_err "--budget" "-5"
usage loop toy "${S[@]}" --budget abc
expect_err "--budget" "abc"
usage loop toy "${S[@]}" --budget 99999999999999999999999
usage loop toy "${S[@]}" --seed 1.5
expect_err "--seed"
usage loop toy "${S[@]}" --time forever
expect_err "--time" "forever"
usage loop toy "${S[@]}" --batch 0
usage loop toy "${S[@]}" --strategy bogus
expect_err "unknown strategy 'bogus'" "hillclimb"
usage loop toy "${S[@]}" --backend bogus
expect_err "unknown backend 'bogus'"
usage loop toy "${S[@]}" --backend sim
expect_err "sim:FILE"
usage loop toy "${S[@]}" --results
expect_err "--results needs a value"
usage loop toy "${S[@]}" --results r.tsv --best r.tsv
usage loop toy "${S[@]}" --resume=yes
usage loop
expect_err "missing KERNEL"
usage evaluate
expect_err "missing CONFIG.json"
usage evaluate a.json b.json
usage propose toy "${S[@]}" --strategy bogus
usage propose toy "${S[@]}" --seed -1
usage loop toy "${S[@]}" --min-gain 2
expect_unchanged r.tsv

# --- bad specs via --spec-dir: cycle, division by zero, empty space --------------------------
run list --spec-dir "$BAD/cycle"
expect_rc 2
expect_err "cycle" "spec.json"
run space cycle --spec-dir "$BAD/cycle"
expect_rc 2
expect_err "cycle"
run space divzero --spec-dir "$BAD/divzero"
expect_rc 2
expect_err "zero"
run list --spec-dir "$WORK/no-such-dir"
expect_rc 2
expect_err "no-such-dir"
for name in specs/costfix specs/evalfix specs/landscape; do
    # The other modules' fixtures load as user kernels (a sanity check of --spec-dir).
    if [ -f "$SRC/tests/fixtures/$name/spec.json" ]; then
        run list --spec-dir "$SRC/tests/fixtures/$name"
        expect_rc 0
    fi
done
if [ -d "$SRC/tests/fixtures/specs/bad" ]; then
    # Every bad spec the space_defs fixtures hold is refused with exit 2 and its file named.
    for dir in "$SRC"/tests/fixtures/specs/bad/*/; do
        [ -f "$dir/spec.json" ] || continue
        run list --spec-dir "$dir"
        expect_rc 2
        expect_err "spec.json"
    done
fi
# Empty space: `space` reports 0, propose and loop refuse with exit 2 and log nothing.
if run list --spec-dir "$BAD/empty" && [ "$RC" = 0 ]; then
    run space empty --spec-dir "$BAD/empty"
    expect_rc 0
    expect_py "$WORK/out" 'd["valid_count"] == 0'
    run propose empty --spec-dir "$BAD/empty"
    expect_rc 2
    run loop empty --spec-dir "$BAD/empty" --backend model --results r.tsv --best empty.json
    expect_rc 2
    expect_err "empty"
    expect_unchanged r.tsv
else
    expect_rc 2
    expect_err "spec.json"
fi

# --- results files: truncated, hand-edited, foreign, unwritable --------------------------------
# A torn last row (a kill mid-write): readers skip it, appends isolate it, nothing is lost.
cp r.tsv torn.tsv
python3 - torn.tsv <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
start = data.rindex(b"\n", 0, len(data) - 1) + 1
cut = start + (len(data) - start) // 2          # the last row cut in half, no newline
assert data[start:cut].count(b"\t") < 18
open(sys.argv[1], "wb").write(data[:cut])
EOF
snapshot torn.tsv
run report torn.tsv --json
expect_rc 0
expect_unchanged torn.tsv
run loop toy "${S[@]}" --backend model --budget 3 --results torn.tsv --best torn.json --resume
expect_rc 0
expect_appended torn.tsv
expect_py "$WORK/out" 'd["trials"] == 3 and d["first_trial"] == 9'
[ "$(tsv_rows torn.tsv)" = 11 ] || fail "torn.tsv: 8 complete + 3 new rows expected, got $(tsv_rows torn.tsv)"
pass
run evaluate good.json "${S[@]}" --results torn.tsv
expect_rc 0
[ "$(tsv_rows torn.tsv)" = 12 ] || fail "evaluate --results on a torn file did not append"
pass

# A hand-edited row in the middle: refused with file:line and column, file untouched.
cp r.tsv edited.tsv
python3 - edited.tsv <<'EOF'
import sys
lines = open(sys.argv[1]).readlines()
data = [i for i, l in enumerate(lines) if not l.startswith("#") and not l.startswith("trial\t")]
i = data[2]
f = lines[i].split("\t")
f[8] = "fast"          # latency_us
lines[i] = "\t".join(f)
open(sys.argv[1], "w").writelines(lines)
EOF
snapshot edited.tsv
line=$(grep -n "	fast	" edited.tsv | cut -d: -f1)
run report edited.tsv
expect_rc 3
expect_err "edited.tsv:$line" "fast"
run loop toy "${S[@]}" --backend model --budget 2 --results edited.tsv --best edited.json --resume
expect_rc 3
expect_err "edited.tsv"
expect_unchanged edited.tsv
run loop toy "${S[@]}" --backend model --budget 2 --results edited.tsv --best edited.json
expect_rc 3
expect_err "edited.tsv:$line"
expect_unchanged edited.tsv
[ ! -e edited.json ] || fail "a refused loop wrote its best file"
pass
run evaluate good.json "${S[@]}" --results edited.tsv
expect_rc 3
expect_err "edited.tsv"
expect_no_out
expect_unchanged edited.tsv
run propose toy "${S[@]}" --results edited.tsv
expect_rc 3
expect_err "edited.tsv"

# A wrong status word and a missing column, hand-typed.
cp r.tsv edited2.tsv
python3 - edited2.tsv <<'EOF'
import sys
lines = open(sys.argv[1]).readlines()
i = max(i for i, l in enumerate(lines) if not l.startswith("#"))
f = lines[i - 1].split("\t")
f[7] = "great"         # status
lines[i - 1] = "\t".join(f)
open(sys.argv[1], "w").writelines(lines)
EOF
snapshot edited2.tsv
run report edited2.tsv
expect_rc 3
expect_err "edited2.tsv" "great"
run loop toy "${S[@]}" --backend model --budget 2 --results edited2.tsv --best e2.json --resume
expect_rc 3
expect_unchanged edited2.tsv

# A foreign file (a CSV, no amk header): refused, untouched.
printf 'name,value\nfoo,1\nbar,2\n' > foreign.tsv
snapshot foreign.tsv
run loop toy "${S[@]}" --backend model --budget 2 --results foreign.tsv --best f.json
expect_rc 3
expect_err "foreign.tsv"
expect_unchanged foreign.tsv
run loop toy "${S[@]}" --backend model --budget 2 --results foreign.tsv --best f.json --resume
expect_rc 3
expect_unchanged foreign.tsv
run evaluate good.json "${S[@]}" --results foreign.tsv
expect_rc 3
expect_no_out
expect_unchanged foreign.tsv
run report foreign.tsv
expect_rc 3
expect_err "foreign.tsv"
run report no-such-results.tsv
expect_rc 3
expect_err "no-such-results.tsv"
run evaluate good.json "${S[@]}" --backend sim:foreign.tsv
expect_rc 3
expect_err "foreign.tsv"
run evaluate good.json "${S[@]}" --backend sim:no-such-sweep.tsv
expect_rc 3
expect_err "no-such-sweep.tsv"

# A results file that cannot be written (a directory in its place, then a read-only dir).
mkdir adir.tsv
run loop toy "${S[@]}" --backend model --budget 2 --results adir.tsv --best a.json
expect_rc 3
expect_err "adir.tsv"
if [ "$(id -u)" != 0 ]; then
    mkdir ro && chmod 555 ro
    run loop toy "${S[@]}" --backend model --budget 2 --results ro/r.tsv --best a.json
    expect_rc 3
    expect_err "ro/r.tsv"
fi

# After everything: the original file and best.json are exactly as they were.
expect_unchanged r.tsv
cmp -s b.json b.json.snapshot || fail "best.json changed"
pass

done_ok
