#!/usr/bin/env bash
# The bench tools that compile a kernel template outside amk still build against it:
# bench/quant_phases.sh (BUILD_ONLY=1: nvcc for sm_90, no GPU needed) for fp8 and int8 and a
# second config, and it names what is wrong in bad input; bench/gemm_hopper_probe.sh likewise
# (sm_90a, bf16 and f16, a cluster and a TMA-store config). Skips (77) where there is no nvcc.
# Run as: bash bench_tools.sh SOURCE_DIR
set -euo pipefail
SRC=$1
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if ! command -v "$NVCC" >/dev/null; then
    echo "skip: $(basename "$0"): no nvcc (looked for $NVCC)"
    exit 77
fi
fail() { echo "FAIL: $(basename "$0"): $*" >&2; exit 1; }
QP=$SRC/bench/quant_phases.sh
export NVCC ARCH=sm_90 BUILD_ONLY=1
out=$(bash "$QP" 2>&1) || fail "default build: $out"
grep -qF "built for sm_90 (fp8e4m3" <<<"$out" || fail "default build said: $out"
out=$(DTYPE=int8 PARAMS="THREADS=512 VEC=8 BPS=2 KEEP=8 SMEM=1 LOADS=4" bash "$QP" 2>&1) ||
    fail "int8 build: $out"
grep -qF "built for sm_90 (int8, THREADS=512" <<<"$out" || fail "int8 build said: $out"
# Bad input: a clear message and exit 1, before any compile.
if out=$(PARAMS="THREADS=1024 VEC=8" bash "$QP" 2>&1); then fail "five knobs missing, yet exit 0"; fi
grep -qF "PARAMS needs all six knobs" <<<"$out" || fail "missing knobs said: $out"
if out=$(PARAMS="THREADS=1024 VEC=8 BPS=1 KEEP=0 SMEM=0 WARPS=4" bash "$QP" 2>&1); then
    fail "unknown knob, yet exit 0"; fi
grep -qF "'WARPS=4' is not one of" <<<"$out" || fail "unknown knob said: $out"
if out=$(DTYPE=f32 bash "$QP" 2>&1); then fail "DTYPE f32, yet exit 0"; fi
grep -qF "DTYPE is fp8e4m3 or int8" <<<"$out" || fail "bad dtype said: $out"

GP=$SRC/bench/gemm_hopper_probe.sh
out=$(bash "$GP" "128 256 64 3 2 1 1 1 0 16 1" "128 256 64 4 2 2 2 1 1 8 0" 2>&1) ||
    fail "gemm_hopper_probe bf16 build: $out"
grep -qF "built 2 configs (bf16)" <<<"$out" || fail "gemm_hopper_probe bf16 build said: $out"
out=$(DTYPE=f16 bash "$GP" "64 128 64 5 1 0 1 2 0 1 0" 2>&1) || fail "gemm_hopper_probe f16: $out"
grep -qF "built 1 configs (f16)" <<<"$out" || fail "gemm_hopper_probe f16 build said: $out"
if out=$(bash "$GP" "128 256 64 3 2 1 1 1 0 16" 2>&1); then fail "10 knobs, yet exit 0"; fi
grep -qF "needs 11 numbers" <<<"$out" || fail "short config said: $out"
if out=$(bash "$GP" "128 256 64 3 1 1 1 1 0 16 1" 2>&1); then
    fail "REGS 1 with one consumer (a static_assert), yet exit 0"; fi
grep -qF "setmaxnreg split needs 2 consumers" <<<"$out" || fail "REGS/CONSUMERS said: $out"
if out=$(DTYPE=f32 bash "$GP" 2>&1); then fail "gemm_hopper_probe DTYPE f32, yet exit 0"; fi
grep -qF "DTYPE is bf16 or f16" <<<"$out" || fail "gemm_hopper_probe bad dtype said: $out"
# bench/cublas_algos.cu builds against the toolkit's cuBLASLt, and its decoder names the enum
# values from the toolkit's own cublasLt.h (tile 23 is 128x256 there; an unknown value stays).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NVCC" -O2 -std=c++17 -gencode=arch=compute_90,code=sm_90 "$SRC/bench/cublas_algos.cu" \
    -lcublasLt -lcublas -o "$tmp/cublas_algos" >"$tmp/log" 2>&1 || fail "cublas_algos build: $(cat "$tmp/log")"
hdr=$(dirname "$(dirname "$(readlink -f "$(command -v "$NVCC")")")")/include/cublasLt.h
echo "candidate 0: algo=66 tile=23 stages=9999 cluster=3 splitk=1 time_us=1.0" >"$tmp/out"
out=$(python3 "$SRC/bench/cublas_algos.py" "$tmp/out" --header "$hdr" 2>&1) || fail "decoder: $out"
grep -qF "tile=128x256 stages=9999 cluster=2x1x1 splitk=1" <<<"$out" || fail "decoder said: $out"
echo "ok: $(basename "$0"): quant_phases builds for fp8 and int8, gemm_hopper_probe for bf16" \
    "and f16, cublas_algos builds and decodes; bad input named"
