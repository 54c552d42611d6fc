#!/usr/bin/env bash
# s34 call 6 (H100): issue 21's repeatability again (bench/loop_repeat.sh twice), PERSISTENT 4 now offered only where it splits.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
for k in 1 2; do
  AMK=.dbuild5/amk OUT=$R/repeat$k timeout 250 bash bench/loop_repeat.sh > $R/repeat$k.log 2>&1
  el "loop_repeat $k rc $?"
done
cd $OUT && rm -rf r
