#!/usr/bin/env bash
# gemm_hopper outside the search: builds bench/gemm_hopper_probe.cu once per config (the
# template + amk's NVIDIA prelude, nvcc for sm_90a, in parallel), then for each config and
# shape checks it against the reference kernel and times it against cuBLAS in one process.
# One line per run: ok/WRONG, us, TFLOP/s, cuBLAS us, ratio (cuBLAS / gemm_hopper time).
#
# usage: bench/gemm_hopper_probe.sh [CONFIG ...]     from the repository root
#   CONFIG  "BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE"
#           (default: the spec default and a few others)
# env: SHAPES ("MxNxK ..."; default 4096x4096x4096 8192x8192x8192 257x520x200 3x136x72),
#      DTYPE (bf16 | f16, default bf16), NVCC, BUILD_ONLY=1 (build, do not run: the CPU test),
#      SAVE_PRELUDE=FILE (keep amk's prelude), PRELUDE=FILE (use it: the GPU machine has no
#      cJSON headers to build it; make it here with SAVE_PRELUDE and carry it),
#      REGIMES ("plain" by default: each side timed alone, back to back; "sustained burst":
#      both sides interleaved with identical timing in that clock/power regime),
#      KEEP=DIR (leave the built probes there: build here, carry DIR, run with PROBES=DIR),
#      PROBES=DIR (run probes built earlier instead of building)
# Device command:
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH; bench/gemm_hopper_probe.sh
set -eu
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
DTYPE=${DTYPE:-bf16}
SHAPES=${SHAPES:-"4096x4096x4096 8192x8192x8192 257x520x200 3x136x72"}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/..
KDIR=$SRC/space_defs/kernels/gemm_hopper
command -v "$NVCC" >/dev/null || { echo "gemm_hopper_probe: no nvcc ($NVCC)" >&2; exit 1; }
case $DTYPE in bf16) dt=AMK_T_BF16 ;; f16) dt=AMK_T_F16 ;;
    *) echo "gemm_hopper_probe: DTYPE is bf16 or f16, not '$DTYPE'" >&2; exit 1 ;; esac
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(
    "128 256 64 4 2 1 1 1 1 8 0"
    "128 256 64 3 2 1 1 1 1 8 1"
    "128 256 64 4 2 1 2 1 1 8 0"
    "128 256 64 4 2 1 1 2 1 8 0"
    "128 128 64 5 1 0 1 1 0 8 0")
names=(BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gemm_hopper_probe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "${PROBES:-}" ]; then
    : # built earlier (KEEP=DIR): nothing to build
elif [ -n "${PRELUDE:-}" ]; then # made elsewhere: the GPU machine has no cJSON headers
    cp "$PRELUDE" "$tmp/prelude.h"
else
    printf '#include <stdio.h>\nconst char *amk_prelude(const char *vendor);\nint main(void) { fputs(amk_prelude("nvidia"), stdout); return 0; }\n' >"$tmp/prelude_main.c"
    cc -std=c11 -I"$SRC/evaluator" -I"$SRC/common" -I"$SRC/cost_model" -I"$SRC/space_defs" \
        -I"$SRC/results" -I"$SRC/search" "$tmp/prelude_main.c" "$SRC/evaluator/compile/prelude.c" \
        -o "$tmp/prelude"
    "$tmp/prelude" >"$tmp/prelude.h"
    [ -n "${SAVE_PRELUDE:-}" ] && cp "$tmp/prelude.h" "$SAVE_PRELUDE"
fi

i=0
[ -n "${PROBES:-}" ] && { i=${#configs[@]}; tmp_bin=$PROBES; } || tmp_bin=$tmp
for c in "${configs[@]}"; do
    [ -n "${PROBES:-}" ] && break
    read -r -a v <<<"$c"
    [ ${#v[@]} -eq 11 ] || { echo "gemm_hopper_probe: config '$c' needs 11 numbers (${names[*]})" >&2; exit 1; }
    defs=()
    for k in "${!names[@]}"; do defs+=("-D${names[$k]}=${v[$k]}"); done
    ( "$NVCC" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$tmp" -D"$dt"=1 "${defs[@]}" \
        -DGH_KERNEL="\"$KDIR/gemm_hopper.hip\"" -DGH_REFERENCE="\"$KDIR/reference.hip\"" \
        "$HERE/gemm_hopper_probe.cu" -o "$tmp/probe$i" -lcuda -lcublas >"$tmp/build$i.log" 2>&1 ||
        { echo "build of config $i ($c) failed:"; cat "$tmp/build$i.log"; } ) &
    i=$((i + 1))
done
wait
if [ -n "${KEEP:-}" ] && [ -z "${PROBES:-}" ]; then
    mkdir -p "$KEEP" && cp "$tmp"/probe[0-9]* "$KEEP"/ 2>/dev/null || true
fi
if [ "${BUILD_ONLY:-0}" = 1 ]; then
    for ((j = 0; j < i; j++)); do [ -x "$tmp/probe$j" ] || exit 1; done
    echo "gemm_hopper_probe: built ${#configs[@]} configs ($DTYPE)"
    exit 0
fi
bash "$HERE/card.sh"
for ((j = 0; j < i; j++)); do
    echo "== config: ${configs[$j]} ($DTYPE)"
    [ -x "$tmp_bin/probe$j" ] || { echo "   (not built)"; continue; }
    for s in $SHAPES; do
        IFS=x read -r m n k <<<"$s"
        for r in ${REGIMES:-plain}; do
            timeout 60 "$tmp_bin/probe$j" "$m" "$n" "$k" "$r" || echo "   exit $? at $s ($r)"
        done
    done
done
