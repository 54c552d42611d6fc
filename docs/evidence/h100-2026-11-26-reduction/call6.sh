#!/usr/bin/env bash
# s30 call 6: main + flush-aware bench costs: the GPU tests, then Kernel Tuner's reduction
# example calls 2..12 complete (call 1 as a 1-config smoke; it ran complete in call 3).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
timeout 70 .dbuild/check_gpu_gpu > "$R/check_gpu_gpu.log" 2>&1
el "check_gpu_gpu rc $?"
timeout 120 bash bench/python_device.sh .dbuild/libamk.a /tmp/pyd > "$R/py.log" 2>&1
export PYTHONPATH=/tmp/pyd
timeout 90 python3 python/tests/run.py gpu > "$R/pygpu.log" 2>&1
el "python gpu rc $?"
left=$(( 585 - ($(date +%s) - S) ))
( export AMK_CACHE_DIR=$(mktemp -d) AMK_BUILD=/nonexistent AMK_LOG=debug KT_SMOKE=1 KT_FULL="2 3 4 5 6 7 8 9 10 11 12"
  KT_DEADLINE_S=$((left - 15)) KT_EXAMPLES=reduction timeout $left bash bench/kt_examples.sh run .ktsrc $R/kt_reduction_2_12.json > $R/kt_reduction.log 2>&1 )
el "kt reduction rc $?"
cd $OUT && rm -rf r
