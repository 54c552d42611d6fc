#!/usr/bin/env bash
# s32 call 6 (H100): where the epilogue's time goes (probe, burst; scratch patch: the staging writes or the TMA stores left out, or the whole epilogue, every wgmma's result kept alive), c0 and 128x320/E3; then amk's loop in burst at the LLM shape over the space as committed.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# probeN: 0 128x320 E3, 1 no store, 2 no staging writes, 3 no epilogue; 4-7 the same for c0
REGIMES="burst" SHAPES="8192x14336x4096 8192x8192x8192" PROBES=$PWD/.probes4 timeout 150 bash bench/gemm_hopper_probe.sh "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 1 16 3" "128 320 64 3 2 1 1 1 1 16 3" "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" > $R/diag.txt 2>&1
el "diag rc $?"
timeout 150 .dbuild3/amk loop gemm_hopper --shape llm --regime burst --results $R/burst_llm.tsv --budget 80 --jobs 16 --seed 1 --backend gpu > $R/loop.json 2> $R/loop.err
el "loop rc $?"
cd $OUT && rm -rf r
