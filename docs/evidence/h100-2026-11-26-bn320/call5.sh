#!/usr/bin/env bash
# s32 call 5 (H100): consumer 1 starting GH_STAGGER (0, 1, 2) stages behind consumer 0 so the two epilogues of a tile do not coincide (scratch patch, probe only), c0 and 128x320 with 3 staging blocks; the ragged shapes for correctness.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# probeN: 0-2 c0 stagger 0,1,2; 3-5 128x320 E3 stagger 0,1,2
REGIMES="burst sustained" SHAPES="8192x14336x4096 8192x8192x8192 257x520x200 3x136x72 4096x4096x72" PROBES=$PWD/.probes4 timeout 400 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 1 16 3" > $R/stag.txt 2>&1
el "stagger rc $?"
cd $OUT && rm -rf r
