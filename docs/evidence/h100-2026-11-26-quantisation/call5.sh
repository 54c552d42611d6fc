#!/usr/bin/env bash
# s34 call 5 (H100): gemm_hopper gained PERSISTENT 4, so its searches change: issue 21's repeatability (3 loops of 48 at 8192^3, sustained) and the tuning race against Triton again, on this main.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
AMK=.dbuild5/amk OUT=$R/repeat timeout 200 bash bench/loop_repeat.sh > $R/repeat.log 2>&1
el "loop_repeat rc $?"
timeout 120 bash bench/python_device.sh .dbuild5/libamk.a /tmp/pyd > "$R/py.log" 2>&1
el "python rc $?"
export PYTHONPATH=/tmp/pyd
AMK=.dbuild5/amk OUT=$R/race TOTAL_S=110 timeout 260 bash bench/perf_all.sh info race triton > "$R/race.log" 2>&1
el "race+triton rc $?"
cd $OUT && rm -rf r
