#!/usr/bin/env bash
# s35 call 3 (H100), issue 21: repeatability, three loops of 48 at 8192^3 in sustained regime, then the
# three bests side by side (bench/loop_repeat.sh, main's tree; amk built from main's harness).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
AMK=.dbuild6/amk OUT=$R/rep timeout 560 bash bench/loop_repeat.sh > $R/repeat.log 2>&1
el "repeat rc $?"
cd $OUT && rm -rf r
