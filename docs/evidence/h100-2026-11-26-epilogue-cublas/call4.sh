#!/usr/bin/env bash
# s31 call 4 (H100): configs of gemm_hopper's space shaped like cuBLASLt's fastest candidates at the LLM shape (256x128 tiles, 2-CTA clusters sharing A) against c0, both harnesses, both regimes.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
SHAPES="8192x14336x4096 8192x8192x8192" OUT=$R/regimes PROBES=$PWD/.probes2 AMK=.dbuild/amk timeout 400 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "256 128 64 3 2 1 1 2 1 16 1" "256 128 64 3 2 1 1 2 3 16 1" "256 128 64 4 2 1 1 2 1 8 0" "128 256 64 3 2 1 2 1 1 16 1" > $R/regimes.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
