#!/usr/bin/env bash
# s30 call 7: main at the end: amk.torch (stream-K config from a database: workspace and
# scratch allocated by amk.torch), python GPU tests, the tuning race against Triton.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
timeout 120 bash bench/python_device.sh .dbuild/libamk.a /tmp/pyd > "$R/py.log" 2>&1
export PYTHONPATH=/tmp/pyd
timeout 150 python3 python/tests/run.py torch > "$R/pytorch.log" 2>&1
el "python torch rc $?"
timeout 90 python3 python/tests/run.py gpu > "$R/pygpu.log" 2>&1
el "python gpu rc $?"
AMK=.dbuild/amk OUT=$R/race TOTAL_S=110 timeout 300 bash bench/perf_all.sh info race triton > "$R/race.log" 2>&1
el "race+triton rc $?"
cd $OUT && rm -rf r
