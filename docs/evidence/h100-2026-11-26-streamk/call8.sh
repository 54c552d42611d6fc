#!/usr/bin/env bash
# s30 call 8: the race again on the final main: Triton once, amk three times.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
timeout 120 bash bench/python_device.sh .dbuild/libamk.a /tmp/pyd > "$R/py.log" 2>&1
export PYTHONPATH=/tmp/pyd
AMK=.dbuild/amk OUT=$R/race TOTAL_S=110 timeout 300 bash bench/perf_all.sh info race triton > "$R/race.log" 2>&1
el "race+triton rc $?"
for i in 2 3; do AMK=.dbuild/amk OUT=$R/amkrace$i TOTAL_S=40 timeout 100 bash bench/perf_all.sh race > $R/amkrace$i.log 2>&1; el "amk race $i rc $?"; done
cd $OUT && rm -rf r
