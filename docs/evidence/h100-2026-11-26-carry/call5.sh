#!/usr/bin/env bash
# s36 call 5 (H100), issue 21: carried blocks' round delayed GH_CARRY_GAP K steps (0, 2, 4) for 128x320 E2/E3
# and 128x256 4-stage E2 P4; c0-P4 beside them (probe, LLM shape, burst and sustained, 2 rounds).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
C=("128 320 64 3 2 1 1 1 1 16 2" "128 320 64 3 2 1 1 1 1 16 3" "128 256 64 4 2 1 1 1 4 16 2")
for round in 1 2; do
  echo "#### round $round gap 2 (+ c0-P4 first)"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes15g2 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 4 16 1" "${C[@]}"
  echo "#### round $round gap 0"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes15g0 bash bench/gemm_hopper_probe.sh "${C[@]}"
  echo "#### round $round gap 4"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes15g4 bash bench/gemm_hopper_probe.sh "${C[@]}"
done
echo "#### correctness gap 2"
SHAPES="257x520x200 4096x4096x72 2113x1800x1000" PROBES=.probes15g2 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 4 16 1" "${C[@]}" | grep -c "^ok"
