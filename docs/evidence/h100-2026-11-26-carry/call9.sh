#!/usr/bin/env bash
# s36 call 9 (H100), issue 21: 2-CTA clusters with a fourth stage, now that EPILOGUE 2 (2 staging slots) no longer
# waits inside an epilogue: c0-P4 against 128x256 4 stages E2 with CLUSTER_M 2 (P4, P1), CLUSTER_N 2, no cluster
# (probe, LLM shape, burst and sustained, 2 rounds; then 8192^3 burst).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
C=("128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 2 1 4 16 2" "128 256 64 4 2 1 2 1 1 16 2" "128 256 64 4 2 1 1 2 1 16 2" "128 256 64 4 2 1 1 1 4 16 2")
SHAPES="257x520x200 4096x4096x72" PROBES=.probes19 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -c "^ok"
for round in 1 2; do
  echo "#### round $round"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes19 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA\|max active"
done
SHAPES=8192x8192x8192 REGIMES="burst" PROBES=.probes19 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA\|max active"
