#!/usr/bin/env bash
# s30 call 3: ktdata (large inputs kept on the device; arrays written once per process):
# its GPU tests, then Kernel Tuner's reduction example complete under amk, to a deadline.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
timeout 60 .dbuild/check_gpu_gpu > "$R/check_gpu_gpu.log" 2>&1
el "check_gpu_gpu rc $?"
timeout 120 bash bench/python_device.sh .dbuild/libamk.a /tmp/pyd > "$R/py.log" 2>&1
el "python ext rc $?"
export PYTHONPATH=/tmp/pyd
timeout 90 python3 python/tests/run.py gpu > "$R/pygpu.log" 2>&1
el "python gpu rc $?"
left=$(( 585 - ($(date +%s) - S) ))
( export AMK_CACHE_DIR=$(mktemp -d) AMK_BUILD=/nonexistent AMK_LOG=debug
  KT_DEADLINE_S=$((left - 15)) KT_EXAMPLES=reduction timeout $left bash bench/kt_examples.sh run .ktsrc $R/kt_reduction.json > $R/kt_reduction.log 2>&1 )
el "kt reduction rc $?"
cd $OUT && rm -rf r
