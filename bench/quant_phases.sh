#!/usr/bin/env bash
# Where quant_per_tensor's time goes, on an NVIDIA GPU: builds bench/quant_phases.cu with the
# kernel template and amk's prelude, and times the phases inside the kernel (phase 1 reduce,
# grid barrier, phase 2 quantise) from each block's %globaltimer marks, next to the launch's
# event time. docs/PERFORMANCE.md uses it to say why quant is short of the copy bandwidth.
#
# usage: bench/quant_phases.sh [MxN ...]        from the repository root
#   MxN      shapes (default 16384x4096 8192x4096)
# env:   PARAMS  the config (default: the recorded sweep's best,
#                "THREADS=1024 VEC=16 BPS=1 KEEP=4 SMEM=1 LOADS=1")
#        DTYPE   fp8e4m3 (default) or int8;  ARCH sm_NN (default: the GPU's);  NVCC (nvcc)
#        KERNEL  the template (the spec's);  BUILD_ONLY=1: build the timer and stop (tests/
#        bench_tools.sh does, without a GPU, so the timer and the template cannot drift apart)
# Device command:
#   export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH; bench/quant_phases.sh
set -eu
PARAMS=${PARAMS:-"THREADS=1024 VEC=16 BPS=1 KEEP=4 SMEM=1 LOADS=1"}
DTYPE=${DTYPE:-fp8e4m3}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=${KERNEL:-$HERE/../space_defs/kernels/quant_per_tensor/quant_per_tensor.hip}
if [ -z "${ARCH:-}" ]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
    ARCH=sm_${cap:-90}
fi
command -v "$NVCC" >/dev/null || { echo "quant_phases: no nvcc ($NVCC)" >&2; exit 1; }
case $DTYPE in fp8e4m3) dt=AMK_T_FP8E4M3 ;; int8) dt=AMK_T_INT8 ;;
    *) echo "quant_phases: DTYPE is fp8e4m3 or int8, not '$DTYPE'" >&2; exit 1 ;; esac
defs=()
for p in $PARAMS; do
    case $p in
        THREADS=[0-9]*|VEC=[0-9]*|BPS=[0-9]*|KEEP=[0-9]*|SMEM=[0-9]*|LOADS=[0-9]*) defs+=("-D$p") ;;
        *) echo "quant_phases: PARAMS: '$p' is not one of THREADS VEC BPS KEEP SMEM LOADS=N" >&2; exit 1 ;;
    esac
done
[ ${#defs[@]} -eq 6 ] || { echo "quant_phases: PARAMS needs all six knobs" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/quant_phases.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# amk's NVIDIA prelude, as the run-time compiler sees it (evaluator/compile/prelude.c, built here).
SRC=$HERE/..
printf '#include <stdio.h>\nconst char *amk_prelude(const char *vendor);\nint main(void) { fputs(amk_prelude("nvidia"), stdout); return 0; }\n' >"$tmp/prelude_main.c"
cc -std=c11 -I"$SRC/evaluator" -I"$SRC/common" -I"$SRC/cost_model" -I"$SRC/space_defs" \
    -I"$SRC/results" -I"$SRC/search" "$tmp/prelude_main.c" "$SRC/evaluator/compile/prelude.c" \
    -o "$tmp/prelude"
"$tmp/prelude" >"$tmp/prelude.h"
"$NVCC" -std=c++17 -O3 -arch="$ARCH" -I"$tmp" -D"$dt" "${defs[@]}" \
    -DQP_KERNEL="\"$KERNEL\"" "$HERE/quant_phases.cu" -o "$tmp/quant_phases"
if [ "${BUILD_ONLY:-0}" = 1 ]; then
    echo "quant_phases: built for $ARCH ($DTYPE, $PARAMS)"
    exit 0
fi

shapes=("$@")
[ ${#shapes[@]} -eq 0 ] && shapes=(16384x4096 8192x4096)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true
for s in "${shapes[@]}"; do
    case $s in [0-9]*x[0-9]*) ;; *) echo "quant_phases: shape '$s' is not MxN" >&2; exit 1 ;; esac
    "$tmp/quant_phases" "${s%x*}" "${s#*x}"
done
