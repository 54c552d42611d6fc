#!/usr/bin/env bash
# s36 call 7 (H100), issue 21: tile order at the LLM shape: c0-P4 with GROUP_M 2, 4, 8, 16, 32, 64 and
# 128x320 E2 GROUP_M 32 (probe, burst and sustained, 3 rounds, c0-P4 GROUP_M 16 first each round).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
C=("128 256 64 3 2 1 1 1 4 16 1" "128 256 64 3 2 1 1 1 4 4 1" "128 256 64 3 2 1 1 1 4 8 1" "128 256 64 3 2 1 1 1 4 32 1" "128 256 64 3 2 1 1 1 4 64 1" "128 320 64 3 2 1 1 1 1 32 2" "128 256 64 3 2 1 1 1 4 2 1")
for round in 1 2 3; do
  echo "#### round $round"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes18 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA"
done
echo "#### 8192^3, 4096^3"
SHAPES="8192x8192x8192 4096x4096x4096" REGIMES="burst" PROBES=.probes18 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA"
