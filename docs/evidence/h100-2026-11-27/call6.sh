#!/usr/bin/env bash
# s38 call 6 (H100, a fresh machine): the GPU tests on the session's final code (check_gpu_gpu: the re-measure
# tests now make the backend state through one helper), and `amk report`/`amk export` over this session's LLM loop.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
timeout 120 .dbuild14/check_gpu_gpu > $OUT/check_gpu_gpu.log 2>&1; echo "check_gpu_gpu rc $?"
grep -E "Checks|F:|E:" $OUT/check_gpu_gpu.log | cut -c1-300
.dbuild14/amk report docs/evidence/h100-2026-11-27/call5-loop_burst_s5.tsv 2>&1 | grep -E "best:|vs default"
