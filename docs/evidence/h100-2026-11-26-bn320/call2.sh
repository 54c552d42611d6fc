#!/usr/bin/env bash
# s32 call 2 (H100): diagnostic probes (main loop alone: the epilogue skipped) to size what the epilogue costs at the LLM shape, c0 vs BN 320 vs clusters; then amk's loop in burst at the LLM shape over the space with BN 320.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# probeN: 0 c0, 1 c0 no-epi, 2 BN320-E2, 3 BN320-E2 no-epi, 4 c1 (CM2) no-epi, 5 BN320 CM2 no-epi, 6 256x128 CN2 no-epi, 7 256x128 no-epi
REGIMES="burst sustained" SHAPES="8192x14336x4096 8192x8192x8192" PROBES=$PWD/.probes4 timeout 200 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 1" "128 320 64 3 2 1 1 1 1 16 2" "128 320 64 3 2 1 1 1 1 16 2" "128 256 64 3 2 1 2 1 1 16 1" "128 320 64 3 2 1 2 1 1 16 2" "256 128 64 3 2 1 1 2 1 16 1" "256 128 64 3 2 1 1 1 1 16 1" > $R/diag.txt 2>&1
el "diag rc $?"
timeout 300 .dbuild3/amk loop gemm_hopper --shape llm --regime burst --results $R/burst_llm.tsv --budget 40 --jobs 16 --seed 1 --backend gpu > $R/loop.json 2> $R/loop.err
el "loop rc $?"
cd $OUT && rm -rf r
