#!/usr/bin/env bash
# s34 call 2 (H100), issue 21: stream-K's tail split into at most GH_SK_SPLIT pieces a tile
# (scratch -D, probe only): c0, c0-P3 (all clusters), P3 with 2, 3, 4 pieces; two rounds.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; }
C0="128 256 64 3 2 1 1 1 1 16 1"; P3="128 256 64 3 2 1 1 1 3 16 1"
for round in 1 2; do
  PROBES=$PWD/.probes8 REGIMES="burst sustained" SHAPES="8192x14336x4096 8192x14336x8192 2113x1800x1000 1031x3000x840" \
    timeout 280 bash bench/gemm_hopper_probe.sh "$C0" "$P3" "$P3" "$P3" "$P3" > $R/probe$round.txt 2>&1
  el "round $round rc $?"
done
