#!/usr/bin/env bash
# s36 call 6 (H100), issue 21: EPILOGUE 1 with a tile's second half of columns staged while the next tile's
# first GH_SPLIT_LEAD K steps run their first half (wgmma n128 halves); scratch flags, probe only.
# base = main (n256), halves = every K step as two n128 (no overlap), l1/l2/l3 = lead 1/2/3 K steps.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
C=("128 256 64 3 2 1 1 1 4 16 1" "128 256 64 3 2 1 1 1 1 16 1")
echo "#### correctness l2"
SHAPES="257x520x200 3x136x72 2113x1800x1000 16x4096x14336 4096x4096x72 1000x1000x1000" PROBES=.probes17/l2 bash bench/gemm_hopper_probe.sh "${C[@]}" "128 128 64 4 2 1 1 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" | sed -e 's/ | maxerr.*bad/ bad/'
for round in 1 2; do
  for v in base halves l1 l2 l3; do
    echo "#### round $round $v"
    SHAPES=8192x14336x4096 REGIMES="burst sustained" PROBES=.probes17/$v bash bench/gemm_hopper_probe.sh "${C[@]}" | grep -v "^NVIDIA"
  done
done
