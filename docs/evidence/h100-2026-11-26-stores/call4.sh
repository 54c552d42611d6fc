#!/usr/bin/env bash
# s35 call 4 (H100), issue 21: c0's epilogue, probe only (scratch flags in the kernel of branch epi):
# GH_C_EVICT_FIRST (C stores with an L2 evict-first policy), GH_ZERO_SCALE (a tile's first wgmma with scale-d 0 instead of zeroing), GH_LAZY_STORE 1.
# probe0..7: c0, c0+EF, c0+ZS, c0+L1, c0+EF+ZS+L1, c0-P4, c0-P4+EF, c0-P4+EF+ZS+L1.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
C0="128 256 64 3 2 1 1 1 1 16 1"; P4="128 256 64 3 2 1 1 1 4 16 1"
CF=("$C0" "$C0" "$C0" "$C0" "$C0" "$P4" "$P4" "$P4")
PROBES=$PWD/.probes11 SHAPES="2113x1800x1000 257x520x200 4096x4096x72" timeout 90 bash bench/gemm_hopper_probe.sh "${CF[@]}" > $R/check.txt 2>&1
el "check rc $?"
PROBES=$PWD/.probes11 SHAPES="8192x14336x4096 8192x8192x8192" REGIMES="burst sustained" timeout 280 bash bench/gemm_hopper_probe.sh "${CF[@]}" > $R/round1.txt 2>&1
el "round1 rc $?"
PROBES=$PWD/.probes11 SHAPES="8192x14336x4096" REGIMES="burst sustained" timeout 180 bash bench/gemm_hopper_probe.sh "${CF[@]}" > $R/round2.txt 2>&1
el "round2 rc $?"
PROBES=$PWD/.probes11 SHAPES="8192x14336x4096" REGIMES="burst" timeout 100 bash bench/gemm_hopper_probe.sh "${CF[@]}" > $R/round3.txt 2>&1
el "round3 rc $?"
cd $OUT && rm -rf r
