#!/usr/bin/env bash
# The sweep of this folder: benchmark_hub's convolution_milo kernel, unmodified (commit 8eeb99e,
# fetched with bench/hub_kernels.sh --fetch), imported with its T1 space and swept whole on one
# GPU by bench/record_sweeps.sh. Three device calls (device tool, nvidia-h200); after each,
# copy $OUT/convolution_milo.tsv back to sweeps/ before the next. Carry: build/amk,
# .device-libs (../shared/device/stage-libs.sh), .convspec, bench/hub_kernels, sweeps.
#   here, once:  bash bench/hub_kernels.sh --fetch BENCHMARK_HUB_GIT
#                build/amk import space_defs/data/benchmark_hub/spaces/convolution_milo.json \
#                    --kernel bench/hub_kernels/convolution_milo.cu -o .convspec/convolution_milo
#   on the GPU:  bash docs/evidence/search-quality-2026-11-28-b/record.sh
# Then, here, the pair (cachefiles/convolution_milo/H200.json; this folder holds it gzipped):
#   AMK_KERNELS_DIR=$PWD/.convspec python3 bench/sweeps_to_hub.py sweeps OUT --gpu H200 \
#       --t1 space_defs/data/benchmark_hub/spaces/convolution_milo.json
# The first call ran with GPU_BATCH=8 (712 configs in 470 s: 8 compiles at a time, each 2-3 s
# of NVRTC for this kernel's unrolled 15x15 filter); the other two with 64 (about 3.2 configs/s).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export AMK_DATA_DIR=$PWD/space_defs/data AMK_KERNELS_DIR=$PWD/.convspec
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
GPU_BATCH=64 JOBS=16 EXHAUSTIVE_MAX=5000 AMK=build/amk OUT=${OUT:-/tmp/sweep-out} \
    bash bench/record_sweeps.sh convolution_milo --time-limit 525
