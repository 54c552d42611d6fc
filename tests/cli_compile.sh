#!/usr/bin/env bash
# `amk compile`: one line per unit, cache hits on the second run, compile_error with the log
# kept, an injected compiler crash and a real compile hang reported (exit 6) without killing
# amk, exit codes. Uses the runtime compiler of the build (NVRTC: sm_90, hipRTC: gfx90a); a
# build without one must say so with exit 4. Run as: bash cli_compile.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
CF="$SRC/tests/fixtures/compile"
CC="$WORK/cc"

# --- which compiler does this build have? -------------------------------------------------
run compile scale --spec-dir "$CF" --cache-dir "$CC" --no-reference
if [ "$RC" -eq 4 ] && grep -qF "without a GPU vendor layer" "$WORK/err"; then
    expect_no_out
    echo "SKIP: $(basename "$0"): no runtime compiler in this build (checked: exit 4 with the reason); the compile cases did not run"
    exit 77
fi
if [ "$RC" -eq 4 ] && grep -qF "hiprtc" "$WORK/err"; then
    ARCH=gfx90a
else
    expect_rc 0
    ARCH=sm_90
fi
rm -rf "$CC"
C=(compile --spec-dir "$CF" --cache-dir "$CC" --arch "$ARCH" --jobs 2)

# --- cold, then cached --------------------------------------------------------------------
run "${C[@]}" scale --random 2 --seed 7
expect_rc 0
expect_out "config_id" "compile_ms" "reference"
[ "$(grep -c ' ok ' "$WORK/out")" -eq 4 ] || fail "expected 4 ok lines (3 configs + reference)"
[ "$(grep -c ' miss$' "$WORK/out")" -eq 4 ] || fail "a cold cache must miss every unit"
expect_err "4 ok" "4 compiled, 0 cache hits" "units/s"
cp "$WORK/out" "$WORK/cold"
run "${C[@]}" scale --random 2 --seed 7
expect_rc 0
[ "$(grep -c ' hit$' "$WORK/out")" -eq 4 ] || fail "the second run must hit the cache for every unit"
expect_err "0 compiled, 4 cache hits"
# --quiet after the command (as every command takes it): the same lines, no summary
run "${C[@]}" scale --random 2 --seed 7 --quiet
expect_rc 0
[ "$(grep -c ' hit$' "$WORK/out")" -eq 4 ] || fail "--quiet must not change the unit lines"
[ ! -s "$WORK/err" ] || fail "--quiet printed on stderr: $(cat "$WORK/err")"
diff <(awk '{print $1, $2, $3, $4}' "$WORK/cold") <(awk '{print $1, $2, $3, $4}' "$WORK/out") \
    >/dev/null || fail "the cached run lists other units than the cold one"
pass
run "${C[@]}" scale --random 2 --seed 7 --json
expect_rc 0
expect_json
expect_py "$WORK/out" 'len(d) == 4 and all(u["status"] == "ok" and u["cache_hit"] for u in d)'
expect_py "$WORK/out" 'sorted(u["kind"] for u in d) == ["config"] * 3 + ["reference"]'
expect_py "$WORK/out" 'all(u["code_bytes"] > 0 and len(u["config_id"]) == 16 for u in d)'

# --- a template that does not compile -----------------------------------------------------
run "${C[@]}" syntax_error
expect_rc 6
expect_out "compile_error" "reason: compiler rejected the source" "syntax_error.hip" "log: "
LOG=$(sed -n 's/^    log: //p' "$WORK/out" | head -1)
[ -s "$LOG" ] || fail "the compiler log $LOG was not kept"
grep -qF "syntax_error.hip" "$LOG" || fail "the kept log lacks the compiler's message"
pass
grep -E '^syntax_error +reference .* ok ' "$WORK/out" >/dev/null || fail "its reference should compile"
pass

# --- an injected compiler crash in a batch, by kernel name ---------------------------------
cat >"$WORK/two.json" <<'EOF'
[{"kernel": "compile_crash", "shape": {"N": 1048576, "dtype": "f32"},
  "params": {"BLOCK": 128, "UNROLL": 2}},
 {"kernel": "scale", "shape": {"N": 1048576, "dtype": "f32"},
  "params": {"BLOCK": 64, "UNROLL": 8}}]
EOF
export AMK_TEST_COMPILE_FAULT=abort:compile_crash
run "${C[@]}" --config "$WORK/two.json" --no-reference
unset AMK_TEST_COMPILE_FAULT
expect_rc 6
expect_out "compile_crash" "killed by signal 6 (Aborted)" "amk test fault: abort"
grep -E '^scale +config .* ok ' "$WORK/out" >/dev/null || fail "the bystander must compile"
pass
expect_err "1 ok, 1 compile_crash"
run "${C[@]}" --config "$WORK/two.json" --no-reference
expect_rc 0

# --- a real compile hang: killed at the timeout, amk goes on --------------------------------
start=$(date +%s)
run "${C[@]}" compile_hang --no-reference --timeout 2s
expect_rc 6
expect_out "compile_timeout" "2 s limit"
[ $(($(date +%s) - start)) -lt 60 ] || fail "the hang was not cut at the timeout"
pass

# --- usage and input errors -----------------------------------------------------------------
run compile
expect_rc 1
expect_err "name a KERNEL"
run compile scale --jobs 0 --spec-dir "$CF"
expect_rc 1
run compile scale --all --spec-dir "$CF"
expect_rc 1
run compile no_such_kernel --cache-dir "$CC"
expect_rc 2
expect_err "unknown kernel"
if [ "$ARCH" = sm_90 ]; then OTHER=gfx90a; else OTHER=sm_90; fi
run compile scale --spec-dir "$CF" --cache-dir "$CC" --arch "$OTHER"
expect_rc 4
expect_err "$OTHER"
run compile scale --spec-dir "$CF" --cache-dir "$CC" --arch "sm_90;-DEVIL"
expect_rc 4
expect_no_out

done_ok
