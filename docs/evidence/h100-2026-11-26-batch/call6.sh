#!/usr/bin/env bash
# s37 call 6 (H100), issue 21, after the search change: the tuning race against Triton's autotuner (gemm_hopper
# f16 4096^3, 72 configs; bench/perf_all.sh info race triton: >= 5x faster per config, amk's best >= Triton's).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
timeout 120 bash bench/python_device.sh .dbuild9/libamk.a /tmp/pyd > $OUT/py.log 2>&1
echo "python rc $?"; tail -2 $OUT/py.log
export PYTHONPATH=/tmp/pyd
AMK=.dbuild9/amk OUT=$OUT/race TOTAL_S=110 timeout 330 bash bench/perf_all.sh info race triton > $OUT/race.log 2>&1
echo "race+triton rc $?"; grep -v "^\s*$" $OUT/race.log | tail -40
