#!/usr/bin/env bash
# s33 call 2 (H100, probe only): L2 cache hints (diagnostic GH_L2HINT 0 none, 1 C stores evict-first, 2 + operand loads evict-last) on c0 and 128x320 E3; rotated order, 3 rounds, burst; then one sustained round.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
C="128 256 64 3 2 1 1 1 1 16 1"; D="128 320 64 3 2 1 1 1 1 16 3"
for order in "0 1 2" "2 0 1" "1 2 0"; do
  for h in $order; do
    REGIMES="burst" SHAPES="8192x14336x4096 8192x8192x8192 257x520x200" PROBES=$PWD/.probes6/h$h timeout 150 bash bench/gemm_hopper_probe.sh "$C" "$D" > $R/burst-h$h-$(echo $order | tr -d ' ').txt 2>&1
    el "burst h$h ($order) rc $?"
  done
done
for h in 0 1 2; do
  REGIMES="sustained" SHAPES="8192x14336x4096 8192x8192x8192" PROBES=$PWD/.probes6/h$h timeout 150 bash bench/gemm_hopper_probe.sh "$C" "$D" > $R/sust-h$h.txt 2>&1
  el "sustained h$h rc $?"
done
cd $OUT && rm -rf r
