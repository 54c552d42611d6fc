#!/usr/bin/env bash
# `amk import`: a T1 space (tests/fixtures/t1/semantics.json: negatives under // and %, **,
# chained comparisons, and/or as values, comprehensions, list + list, an exact '/') imports
# and `amk space --exact` counts exactly the configs Python's own evaluation accepts; every
# construct outside the subset is refused with its name and column, and nothing is written.
# Run as: bash cli_import.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
T1="$SRC/tests/fixtures/t1"

run import --help
expect_rc 0
expect_out "usage: amk import SPACE.json -o DIR"

# --- the semantics fixture: count equals Python's --------------------------------------------
run import "$T1/semantics.json" -o sem
expect_rc 0
expect_py "$WORK/out" 'd["kernel"] == "semantics" and d["raw_size"] == 9984 and d["restrictions"] == 10'
expect_err "param e: Default 99 is not one of its values"
expect_py sem/spec.json 'list(d["params"]) == ["a", "b", "c", "d", "e", "f"]'
expect_py sem/spec.json 'd["params"]["d"]["values"] == [1, 4, 7, 10] and d["params"]["d"]["default"] == 7'
expect_py sem/spec.json 'd["params"]["b"]["default"] == 1 and d["params"]["e"]["default"] == 0'
expect_py sem/spec.json 'd["shapes"]["default"] == {"problem_size_x": 1024, "problem_size_y": 512}'
expected=$(python3 "$T1/count_valid.py" "$T1/semantics.json")
run space semantics --spec-dir sem --exact
expect_rc 0
expect_py "$WORK/out" "d['valid_count'] == $expected"
# a space-only folder: a GPU compile fails with the reason, not with a made-up kernel
grep -q 'imported without --kernel' sem/no_kernel.cu || fail "no_kernel.cu lacks its reason"

# --- refused: an existing folder, bad constructs (nothing written) ---------------------------
run import "$T1/semantics.json" -o sem
expect_rc 2
expect_err "sem already exists"
bad() { # bad CONDITION|VALUES TEXT EXPECTED...
    local field=$1 text=$2
    shift 2
    python3 - "$T1/semantics.json" "$field" "$text" >bad.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
if sys.argv[2] == "values":
    t1["ConfigurationSpace"]["TuningParameters"][0]["Values"] = sys.argv[3]
else:
    t1["ConfigurationSpace"]["Conditions"][0]["Expression"] = sys.argv[3]
json.dump(t1, sys.stdout)
PY
    run import bad.json -o out_dir
    expect_rc 2
    expect_err "$@"
    [ ! -e out_dir ] || fail "'$LAST' wrote out_dir"
    ! ls -d out_dir.tmp-* >/dev/null 2>&1 || fail "'$LAST' left a temporary folder"
}
bad cond "lambda: a" "Conditions[0].Expression: 'lambda' here at column 1"
bad cond "a if b else c" "conditional expression 'x if c else y' at column 3"
bad cond "a in [1, 2]" "operator 'in' / 'is' / 'not in'"
bad cond "a ^ b == 0" "operator '^' at column 3"
bad cond "~a == 0" "operator '~' at column 1"
bad cond "a / 4 < 1" "'/' gives the float -6/4" "(with a=-6)"
bad cond "a < 1.5" "float literal" "column 5"
bad cond "zz > 1" "unknown name 'zz' (not a tuning parameter) at column 1"
bad cond "a.real > 1" "attribute access at column 2"
bad cond "abs(a) > 1" "function call"
bad cond "(a, b) == 0" "tuple at column 3"
bad cond "a[0] > 1" "subscript"
bad cond "2 ** a > 1" "'**' with the negative exponent"
bad values "[1, 2, 2]" "Values: value 2 is listed twice"
bad values "[0.5, 1]" "float literal (amk params and expressions are integers) at column 2"
bad values "[i for i in range(3) for j in range(2)]" "nested 'for' in a list comprehension"
bad values "[1] + range(3)" "a range in arithmetic"
bad values "list(range(0, 100))" "gives 100 values; amk takes 1 to 64"
bad values "{1, 2}" "dict or set display at column 1"
bad values "[2 ** 40]" "value 1099511627776 is outside the int32 range"
# Issue 24 item 1: a long flat chain nests as deep as it is long (left- or right-associative),
# whatever its brackets: refused as too deeply nested, nothing written; 200 terms import, and so does
# a flat 'and' (one node, however many operands).
chain() { # chain OP TERM COUNT: semantics.json with Conditions[0] "TERM OP TERM ... > 0"
    python3 - "$T1/semantics.json" "$@" >chain.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
e = (" %s " % sys.argv[2]).join([sys.argv[3]] * int(sys.argv[4])) + " > -100000"
t1["ConfigurationSpace"]["Conditions"][0]["Expression"] = e
json.dump(t1, sys.stdout)
PY
    run import chain.json -o out_dir
}
for c in "+ a 50000" "* a 100000" "** a 100000" "- -a 30000"; do
    set -f; chain $c; set +f # (the words hold a "*")
    expect_rc 2
    expect_err "too deeply nested"
    [ ! -e out_dir ] || fail "'$LAST' ($c) wrote out_dir"
done
chain + a 200
expect_rc 0
rm -rf out_dir
chain and a 100000 # one node of 100000 operands: no nesting at all
expect_rc 0
rm -rf out_dir
# Issue 24 item 2: what Python would answer differently is refused at import (exit 2,
# nothing written): a 64-bit overflow where Python computes the big integer, conditions no
# config satisfies (Kernel Tuner's space would be empty: a search could only fail later),
# and a Parameters list naming what is not a tuning parameter.
bad cond "a ** 99999999 > 1" "outside 64-bit integers" "Python computes the big integer" "(with a=-6)"
bad cond "a << 70 > 1" "Python computes the big integer"
bad cond "a > 100" "no config satisfies the conditions" "9984 combinations"
bad cond "a > 3 and a < 2" "no config satisfies the conditions"
edit() { # edit PYTHON-EDIT-OF-t1: semantics.json edited, imported into out_dir
    python3 - "$T1/semantics.json" "$1" >edit.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
conds = t1["ConfigurationSpace"]["Conditions"]
exec(sys.argv[2])
json.dump(t1, sys.stdout)
PY
    run import edit.json -o out_dir
}
edit 'conds[0]["Parameters"] = ["a", "zz"]'
expect_rc 2
expect_err "Conditions[0].Parameters: 'zz' is not a tuning parameter"
[ ! -e out_dir ] || fail "'$LAST' wrote out_dir"
edit 'conds[1]["Parameters"] = ["a", 3]'
expect_rc 2
expect_err "Conditions[1].Parameters: expected an array of parameter names"
[ ! -e out_dir ] || fail "'$LAST' wrote out_dir"
# a condition that no config of its own params satisfies alone, but one config in all: fine
edit 'conds[:] = [{"Expression": "a == 6", "Parameters": ["a"]}]'
expect_rc 0
rm -rf out_dir

# --- --kernel: a Kernel Tuner style matmul (plain __global__, no extern "C") -------------------
MM="$T1/matmul"
run import "$MM/matmul.json" --kernel "$MM/matmul.cu" -o mm
expect_rc 0
expect_py "$WORK/out" 'd["kernel"] == "matmul" and d["kernel_source"].endswith("matmul.cu")'
expect_py mm/spec.json 'd["entry"] == "matmul_kernel" and d["source"] == "matmul.cu" and d["args"] == ["C", "A", "B"]'
expect_py mm/spec.json 'd["launch"]["block"] == ["block_size_x", "block_size_y", "1"]'
expect_py mm/spec.json 'd["launch"]["grid"][0] == "cdiv(problem_size_x, (block_size_x) * (tile_size_x))"'
expect_py mm/spec.json '[b["role"] for b in d["buffers"]] == ["out", "in", "in"] and d["buffers"][0]["count"] == "problem_size_x * problem_size_y"'
expect_py mm/spec.json 'd["reference"]["default_config"] is True and d["reference"]["launch"]["block"] == ["16", "16", "1"]'
cmp -s "$MM/matmul.cu" mm/matmul.cu || fail "the kernel was not copied unmodified"
grep -q '^#define block_size_y 16$' mm/reference.cu || fail "reference.cu lacks the default config"
# launch limits count in the space: the conditions allow 64 x 32 threads, the target does not
run space matmul --spec-dir mm --exact
expect_rc 0
expected=$(python3 - "$MM/matmul.json" "$T1/count_valid.py" <<'PY'
import json, itertools, sys
t1 = json.load(open(sys.argv[1]))
ps = t1["ConfigurationSpace"]["TuningParameters"]
names = [p["Name"] for p in ps]
conds = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
n = 0
for combo in itertools.product(*[eval(p["Values"]) for p in ps]):
    env = dict(zip(names, combo))
    if all(eval(c, {}, env) for c in conds) and env["block_size_x"] * env["block_size_y"] <= 1024:
        n += 1
print(n)
PY
)
all=$(python3 "$T1/count_valid.py" "$MM/matmul.json")
[ "$all" -gt "$expected" ] || fail "the fixture should hold configs over 1024 threads ($all, $expected)"
expect_py "$WORK/out" "d['valid_count'] == $expected and d['feasible_count'] == $expected"
# it compiles through the runtime compiler's name lowering (or this build has none: exit 4)
run compile matmul --spec-dir mm --random 3 --jobs 2 --cache-dir "$WORK/cc"
if [ "$RC" -eq 4 ] && grep -qF "hiprtc" "$WORK/err"; then # a HIP build: an AMD arch
    run compile matmul --spec-dir mm --random 3 --jobs 2 --cache-dir "$WORK/cc" --arch gfx90a
fi
if [ "$RC" -eq 4 ]; then
    expect_err "without a GPU vendor layer"
    echo "cli_import: no runtime compiler in this build: the compile of the import is not tried"
else
    expect_rc 0
    [ "$(grep -c ' ok ' "$WORK/out")" -eq 5 ] || fail "expected 5 ok units (4 configs + reference)"
fi
# refused with --kernel
badk() { # badk PYTHON-EDIT EXPECTED...
    local edit=$1
    shift
    python3 - "$MM/matmul.json" "$edit" >badk.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
ks = t1["KernelSpecification"]
exec(sys.argv[2])
json.dump(t1, sys.stdout)
PY
    run import badk.json --kernel "$MM/matmul.cu" -o out_dir
    expect_rc 2
    expect_err "$@"
    [ ! -e out_dir ] || fail "'$LAST' wrote out_dir"
}
badk 'ks["Language"] = "OpenCL"' "KernelSpecification.Language: 'OpenCL': only CUDA kernels"
badk 'ks["Arguments"].append({"Name": "alpha", "Type": "char*", "MemoryType": "Scalar", "FillValue": 0.5})' \
    "alpha: a scalar of type 'char*' is not supported"
badk 'ks["Arguments"][1]["MemType"] = "Texture"' "A: MemType 'Texture' is not supported"
badk 'ks["Arguments"][1]["FillType"] = "BinaryRaw"' "A: FillType 'BinaryRaw' is not supported"
badk 'ks["Arguments"][1]["FillType"] = "Constant"; ks["Arguments"][1].pop("FillValue", None)' \
    "A: FillType Constant needs a numeric FillValue"
badk 'ks["Arguments"][0]["MemType"] = "Constant"' "C: an output cannot live in constant memory"
# accepted with --kernel: what Kernel Tuner's T1 reader does with them (SPEC.md)
okk() { # okk PYTHON-EDIT PYTHON-CHECK-OF-spec.json (d) [EXPECTED-STDERR]
    python3 - "$MM/matmul.json" "$1" >okk.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
ks = t1["KernelSpecification"]
exec(sys.argv[2])
json.dump(t1, sys.stdout)
PY
    rm -rf okk_dir
    run import okk.json --kernel "$MM/matmul.cu" -o okk_dir
    expect_rc 0
    expect_py okk_dir/spec.json "$2"
    [ -z "${3:-}" ] || expect_err "$3"
}
okk 'ks["Arguments"].append({"Name": "alpha", "Type": "float", "MemoryType": "Scalar", "FillValue": 0.5})' \
    'd["scalars"] == {"alpha": {"dtype": "f32", "value": 0.5}} and d["args"][-1] == "alpha"'
okk 'ks["Arguments"].append({"Name": "beta", "Type": "double", "MemoryType": "Scalar", "FillValue": -2.25})' \
    'd["scalars"]["beta"] == {"dtype": "f64", "value": -2.25}'
okk 'ks["Arguments"][1]["FillType"] = "Constant"; ks["Arguments"][1]["FillValue"] = 3.5' \
    'd["buffers"][1]["init"] == "constant" and d["buffers"][1]["value"] == 3.5'
okk 'ks["Arguments"][1]["MemType"] = "Constant"' \
    '"memory" not in d["buffers"][1] and d["args"] == ["C", "A", "B"]' \
    "MemType Constant, but the kernel declares no __constant__ 'A': passed as a kernel argument only"
expect_py okk_dir/spec.json 'd["defines"] == {"kernel_tuner": 1}'
badk 'ks["Arguments"][1]["Type"] = "double"' "element type 'double' is not supported"
badk 'ks["Arguments"][0]["Output"] = 0; ks["Arguments"][0]["FillType"] = "Random"' "no argument has Output set"
badk 'ks["KernelName"] = "mat<float>"' "KernelSpecification.KernelName: expected the kernel's function name"
badk 'ks["GridDivX"] = ["block_size_q"]' "GridDivX[0]: unknown name 'block_size_q'"
badk 't1["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 64; t1["ConfigurationSpace"]["TuningParameters"][1]["Default"] = 32' \
    "the default config is not valid" "2048 threads"
# without --kernel an invalid default config is only a warning
python3 - "$MM/matmul.json" >baddef.json <<'PY'
import json, sys
t1 = json.load(open(sys.argv[1]))
t1["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 64
t1["ConfigurationSpace"]["TuningParameters"][2]["Default"] = 4
json.dump(t1, sys.stdout)
PY
run import baddef.json -o baddef
expect_rc 0
expect_err "the default config is not valid (restriction '(block_size_y * tile_size_y" "searches that start from it start from another config"
# --- --kernel with what Kernel Tuner kernels use: constant memory, a constant-filled input,
# float/double scalars, a header of the kernel's folder, an invalid T1 default -------------
AS="$SRC/tests/fixtures/t1/asis"
run import "$AS/asis.json" --kernel "$AS/asis.cu" -o as
expect_rc 0
expect_err "so tile_size_x moves from 4 to 2"
expect_py as/spec.json 'd["headers"] == ["asis_coef.h"] and d["defines"] == {"kernel_tuner": 1}'
expect_py as/spec.json '[b.get("memory") for b in d["buffers"]] == [None, None, None, "constant"]'
expect_py as/spec.json 'd["buffers"][2]["init"] == "constant" and d["buffers"][2]["value"] == 0.25'
expect_py as/spec.json 'd["buffers"][0]["role"] == "out" and "init" not in d["buffers"][0]'
expect_py as/spec.json 'd["scalars"] == {"alpha": {"dtype": "f32", "value": 1.5}, "beta": {"dtype": "f64", "value": -0.5}}'
expect_py as/spec.json 'd["derived"] == {"n": "100000"} and d["args"] == ["y", "x", "bias", "coef", "alpha", "beta", "n"]'
expect_py as/spec.json 'd["params"]["tile_size_x"]["default"] == 2'
cmp -s "$AS/asis_coef.h" as/asis_coef.h || fail "the header was not copied unmodified"
run compile asis --spec-dir as --random 2 --jobs 1 --cache-dir "$WORK/cc"
if [ "$RC" -eq 4 ] && grep -qF "hiprtc" "$WORK/err"; then # a HIP build: an AMD arch
    run compile asis --spec-dir as --random 2 --jobs 1 --cache-dir "$WORK/cc" --arch gfx90a
fi
if [ "$RC" -eq 4 ]; then
    echo "cli_import: no runtime compiler in this build: asis is not compiled"
else
    expect_rc 0
    [ "$(grep -c ' ok ' "$WORK/out")" -eq 4 ] || fail "asis: expected 4 ok units (3 configs + reference)"
fi
# --vary: the reference takes tile_size_x from the checked config (-D per config, no
# #define in reference.cu, its name kept in the reference's grid); other names are refused
run import "$AS/asis.json" --kernel "$AS/asis.cu" --vary tile_size_x -o asv
expect_rc 0
expect_py asv/spec.json 'd["reference"]["vary"] == ["tile_size_x"] and d["reference"]["default_config"]'
expect_py asv/spec.json '"tile_size_x" in d["reference"]["launch"]["grid"][0] and d["reference"]["launch"]["block"][0] == "128"'
grep -q '^#define block_size_x 128$' asv/reference.cu || fail "reference.cu lost the default block_size_x"
! grep -q '^#define tile_size_x' asv/reference.cu || fail "reference.cu #defines the varied tile_size_x"
# one reference unit per tile_size_x of the configs (1, 2, 4); at 4 the reference config
# (block_size_x 128 by default) breaks the condition, and the unit says so
run compile asis --spec-dir asv --random 8 --jobs 1 --cache-dir "$WORK/cc"
if [ "$RC" -ne 4 ]; then
    expect_rc 6 # a unit did not compile: that reference
    [ "$(grep -cE '^asis +reference ' "$WORK/out")" -eq 3 ] || fail "asv: expected 3 reference units"
    expect_out "the reference config (the default with tile_size_x=4) is not valid: restriction 'block_size_x * tile_size_x <= 256' is false"
fi
run import "$AS/asis.json" --kernel "$AS/asis.cu" --vary tile_size_x,nope -o out_dir
expect_rc 2
expect_err "--vary: 'nope' is not a tuning parameter"
[ ! -e out_dir ] || fail "a bad --vary wrote out_dir"
run import "$AS/asis.json" --vary tile_size_x -o out_dir
expect_rc 1
expect_err "--vary need --kernel"
run import "$MM/matmul.json" --kernel "$WORK/nothing.cu" -o out_dir
expect_rc 2
expect_err "nothing.cu"
[ ! -e out_dir ] || fail "a missing kernel file wrote out_dir"

printf '{"ConfigurationSpace": {"TuningParameters": [' >bad.json
run import bad.json -o out_dir
expect_rc 2
expect_err "bad.json: malformed JSON"
[ ! -e out_dir ] || fail "a malformed file wrote out_dir"
run import -o out_dir
expect_rc 1
expect_err "missing SPACE.json"
done_ok
