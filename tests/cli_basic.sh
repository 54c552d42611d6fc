#!/usr/bin/env bash
# CLI happy paths of the read-only subcommands: help of every subcommand, version, list,
# space, devices, usage errors and exit codes. Run as: bash cli_basic.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"

# --- help: global, `amk help CMD`, `CMD --help`, `--help CMD` ---------------------------
run help
expect_rc 0
expect_out "usage: amk" "exit codes" "list" "space" "propose" "evaluate" "loop" "report" \
    "devices" "--spec-dir"
for code in "0  " "1  usage" "2  bad input" "3  results file" "4  no device" "5  internal"; do
    expect_out "$code"
done
run --help
expect_rc 0
expect_out "usage: amk [GLOBAL OPTIONS] COMMAND"
for cmd in list space propose evaluate loop report devices calibrate help; do
    run "$cmd" --help
    expect_rc 0
    expect_out "usage: amk $cmd"
    cp "$WORK/out" "$WORK/help1"
    run help "$cmd"
    expect_rc 0
    cmp -s "$WORK/out" "$WORK/help1" || fail "amk help $cmd differs from amk $cmd --help"
    run "$cmd" -h
    expect_rc 0
    expect_out "usage: amk $cmd"
done
# compile (cmd_compile.c) has its own parser; its help is reachable both ways.
run compile --help
expect_rc 0
expect_out "usage: amk compile"
run help compile
expect_rc 0
expect_out "usage: amk compile"
run --help loop
expect_rc 0
expect_out "usage: amk loop"
run loop --help
expect_out "--budget" "--time" "--strategy" "--seed" "--backend" "--results" "--resume" \
    "--best" "--batch" "--jobs"
run evaluate --help
expect_out "Exit status: 0 whenever a verdict is printed"
run --version
expect_rc 0
expect_out "amk 0."

# --- usage errors: exit 1, message names the culprit -----------------------------------
run
expect_rc 1
expect_err "no command given"
run frobnicate
expect_rc 1
expect_err "unknown command 'frobnicate'"
run list --bogus
expect_rc 1
expect_err "unknown option '--bogus'" "amk list --help"
run help frobnicate
expect_rc 1
expect_err "unknown command 'frobnicate'"
run space
expect_rc 1
expect_err "missing KERNEL"
run space gemm --shape
expect_rc 1
expect_err "option --shape needs a value"
run list --tables=yes
expect_rc 1
expect_err "--tables takes no value"
run --bogus list
expect_rc 1
expect_err "unknown option '--bogus'"

# --- list ---------------------------------------------------------------------------------
run list
expect_rc 0
expect_json
expect_py "$WORK/out" 'isinstance(d, list) and len(d) >= 2'
expect_py "$WORK/out" '{"gemm", "rmsnorm"} <= {k["name"] for k in d}'
expect_py "$WORK/out" 'all(set(k) >= {"name", "description", "dims", "dtypes", "n_params", "raw_size"} for k in d)'
expect_py "$WORK/out" '[k for k in d if k["name"] == "gemm"][0]["dims"] == ["M", "N", "K"]'
expect_py "$WORK/out" 'all(k["raw_size"] >= 1 and k["n_params"] >= 1 for k in d)'
[ ! -s "$WORK/err" ] || fail "amk list printed on stderr when it is not a terminal"
pass
run list --tables
expect_rc 0
expect_err "KERNEL" "gemm" "rmsnorm"
# --spec-dir before or after the command adds user kernels.
run list --spec-dir "$TOY"
expect_rc 0
expect_py "$WORK/out" '"toy" in [k["name"] for k in d]'
expect_py "$WORK/out" '[k for k in d if k["name"] == "toy"][0]["raw_size"] == 48'
run --spec-dir "$TOY" list
expect_rc 0
expect_py "$WORK/out" '"toy" in [k["name"] for k in d]'
run list --spec-dir "$FIX/specs"
expect_rc 0
expect_py "$WORK/out" '"toy" in [k["name"] for k in d]'

# --- space ---------------------------------------------------------------------------------
run space toy --spec-dir "$TOY"
expect_rc 0
expect_json
expect_py "$WORK/out" 'd["kernel"] == "toy" and d["raw_size"] == 48 and d["counted"] == "exact"'
# BLOCK (4, all <= 1024 threads) x valid (VEC, UNROLL) pairs: UNROLL*4 % VEC == 0 holds
# for VEC 1,2,4 with any UNROLL and for VEC 8 only with UNROLL 2: 4 * (3*3 + 1) = 40.
expect_py "$WORK/out" 'd["valid_count"] == 40'
expect_py "$WORK/out" 'd["feasible_count"] <= d["valid_count"]'
expect_py "$WORK/out" 'd["params"]["VEC"]["choices"] == [1, 2, 4, 8] and d["params"]["VEC"]["default"] == 1'
expect_py "$WORK/out" '"(UNROLL * 4) % VEC == 0" in d["restrictions"] and "per_block" in d["derived"]'
expect_py "$WORK/out" 'd["default_config"]["valid"] is True'
expect_py "$WORK/out" 'd["shape"] == "N=1048576,dtype=f32" and d["target"] == "h100"'
run space toy --spec-dir "$TOY" --shape small --target mi300x
expect_rc 0
expect_py "$WORK/out" 'd["shape"] == "N=4096,dtype=f32" and d["target"] == "mi300x"'
run space gemm
expect_rc 0
expect_json
expect_py "$WORK/out" 'd["kernel"] == "gemm" and 0 < d["valid_count"] < d["raw_size"]'
expect_py "$WORK/out" 'set(d["params"]) >= {"BM", "BN", "BK", "TM", "TN"}'
run space gemm --shape M=512,N=256,K=128 --tables
expect_rc 0
expect_py "$WORK/out" 'd["shape"].startswith("M=512,N=256,K=128")'
expect_err "PARAM" "restrictions:" "valid"
run space gemm --target a100
expect_rc 0
a100=$(jget "$WORK/out" 'd["valid_count"]')
run space gemm --target h100
h100=$(jget "$WORK/out" 'd["valid_count"]')
# The A100 has less opt-in shared memory than the H100: never more valid configs.
python3 -c "import sys; sys.exit(0 if $a100 <= $h100 else 1)" || fail "a100 has more valid gemm configs ($a100) than h100 ($h100)"
pass
# A large space is estimated by sampling; the estimate is close to the exact count.
BIG="$SRC/tests/fixtures/specs/good/big"
if [ -f "$BIG/spec.json" ]; then
    run space big --spec-dir "$BIG"
    expect_rc 0
    expect_py "$WORK/out" 'd["counted"] == "estimated" and d["samples"] > 0 and d["raw_size"] > 2e6'
    cp "$WORK/out" big_est.json
    run space big --spec-dir "$BIG" --exact
    expect_rc 0
    expect_py "$WORK/out" 'd["counted"] == "exact"'
    expect_py "$WORK/out" 'abs(json.load(open("big_est.json"))["valid_count"] - d["valid_count"]) <= 0.02 * d["raw_size"]'
fi
run space gemm --target nosuchgpu
expect_rc 2
expect_err "unknown target 'nosuchgpu'" "h100"
AMK_TARGET=mi250x "$AMK" space toy --spec-dir "$TOY" >"$WORK/out" 2>"$WORK/err"
expect_py "$WORK/out" 'd["target"] == "mi250x"'

# --- devices ------------------------------------------------------------------------------
run devices
expect_rc 0
expect_json
expect_py "$WORK/out" 'set(d) >= {"gpu", "devices", "targets"}'
expect_py "$WORK/out" 'isinstance(d["gpu"]["built"], bool) and isinstance(d["gpu"]["available"], bool)'
expect_py "$WORK/out" 'd["gpu"]["available"] or len(d["gpu"]["reason"]) > 10'
expect_py "$WORK/out" 'd["gpu"]["available"] == (len(d["devices"]) > 0)'
expect_py "$WORK/out" '{"h100", "h200", "a100", "mi300x", "mi250x"} <= {t["key"] for t in d["targets"]}'
expect_py "$WORK/out" '[t for t in d["targets"] if t["key"] == "h100"][0]["limits"]["sm_count"] == 132'
expect_py "$WORK/out" '[t for t in d["targets"] if t["key"] == "mi300x"][0]["limits"]["warp"] == 64'
expect_py "$WORK/out" 'all(t["bandwidth_gbps"] > 0 and t["peak_tflops"] for t in d["targets"])'
if [ "$(jget "$WORK/out" 'd["gpu"]["available"]')" = "false" ]; then
    run devices --require
    expect_rc 4
    expect_err "no GPU answers"
fi
run devices --tables
expect_rc 0
expect_err "TARGET" "h100" "mi300x"

done_ok
