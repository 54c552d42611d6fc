#!/usr/bin/env bash
# s37 call 11 (H100, a fresh machine), issue 21: the loops' pick (128x256 3 stages E3 P4) beside c0-P4 and 4-stage E2 P4
# on whichever card comes (probe, interleaved with cuBLAS, LLM shape, both regimes, two rounds).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
bash bench/card.sh
C=("128 256 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 1 1 4 16 2")
for round in 1 2; do
  echo "#### round $round"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probesU timeout 120 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA\|max active"
done
