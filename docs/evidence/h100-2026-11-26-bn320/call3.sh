#!/usr/bin/env bash
# s32 call 3 (H100): diagnostic probes, main loop alone with every wgmma's result kept alive (call 2's no-epilogue probes let ptxas drop the wgmmas: 1137 TFLOP/s, above peak); B split by column blocks between the 2 CTAs of a cluster (GH_DIAG_BCOLS) against the K-row split.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# probeN: 0 c0, 1 c0 no-epi, 2 c1 (CM2), 3 c1 no-epi, 4 c1 BCOLS, 5 c1 BCOLS no-epi, 6 BN320 CM2 E2 BCOLS, 7 BN320 E2 no-epi
REGIMES="burst sustained" SHAPES="8192x14336x4096 8192x8192x8192" PROBES=$PWD/.probes4 timeout 400 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 320 64 3 2 1 2 1 1 16 2" "128 320 64 3 2 1 1 1 1 16 2" > $R/diag.txt 2>&1
el "diag rc $?"
cd $OUT && rm -rf r
