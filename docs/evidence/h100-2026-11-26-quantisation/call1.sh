#!/usr/bin/env bash
# s34 call 1 (H100), issue 21: is the LLM shape's burst deficit wave quantisation or per-tile cost?
# c0, c0-P3 (stream-K tail) and 128x320 E3 against cublasGemmEx, both harnesses, both regimes, at
# the LLM shape (c0: 27.15 tiles an SM, 28 rounds), 8448x14336x4096 (c0: exactly 28 rounds),
# 8192x14336x8192 (K doubled: the same rounds, half the tiles' share of fixed cost) and 8192^3.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
AMK=.dbuild5/amk OUT=$R/reg PROBES=$PWD/.probes7 \
  SHAPES="8192x14336x4096 8448x14336x4096 8192x14336x8192 8192x8192x8192" \
  timeout 540 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" \
  "128 320 64 3 2 1 1 1 1 16 3" > $R/regimes.log 2>&1
el "regimes rc $?"
