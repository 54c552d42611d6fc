#!/usr/bin/env bash
# s37 call 4 (H100), issue 21: STAGGER 0 against 1, interleaved with cuBLAS in one process each (probe), for five
# configs: c0-P4, 128x256 E1 P1, 128x256 E2 P1, 128x320 E2 P1, 128x256 4 stages E2 P4; LLM shape, burst and
# sustained, two rounds; then 8192^3 burst. (Call 3's P1 comparison came from single trials of a search.)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
bash bench/card.sh
C=("128 256 64 3 2 1 1 1 4 16 1 0" "128 256 64 3 2 1 1 1 4 16 1 1" "128 256 64 3 2 1 1 1 1 16 1 0" "128 256 64 3 2 1 1 1 1 16 1 1"
   "128 256 64 3 2 1 1 1 1 16 2 0" "128 256 64 3 2 1 1 1 1 16 2 1" "128 320 64 3 2 1 1 1 1 16 2 0" "128 320 64 3 2 1 1 1 1 16 2 1"
   "128 256 64 4 2 1 1 1 4 16 2 0" "128 256 64 4 2 1 1 1 4 16 2 1")
for round in 1 2; do
  echo "#### round $round"
  SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probesT timeout 250 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA\|max active"
done
echo "#### 8192^3"
SHAPES=8192x8192x8192 REGIMES="burst" PROBES=.probesT timeout 120 bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA\|max active"
