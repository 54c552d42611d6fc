#!/usr/bin/env bash
# s38 call 4 (H100, calls 2-3's machine and card, 1752824023663), issue 21: (1) the new GPU test
# (test_gpu_remeasure_buffers_fit_both_configs) against a build without 7b2a3c1's fix (.dbuild12r: must fail);
# (2) with the fix, the repeatability check (bench/loop_repeat.sh: 3 loops of 48 at 8192^3, sustained; PERSISTENT 3
# re-measures beside P1 failed there too) and (3) the tuning race (gemm_hopper f16 4096^3, 72 configs, vs Triton).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
B=.dbuild12; R=$OUT/r; mkdir -p $R
CK_RUN_CASE=device timeout 90 .dbuild12r/check_gpu_gpu > $R/check_gpu_gpu_nofix.log 2>&1; echo "check_gpu_gpu without the fix rc $?"
grep -E "remeasure_buffers|Checks" $R/check_gpu_gpu_nofix.log | cut -c1-400 | tail -4
AMK=$B/amk OUT=/tmp/repeat timeout 260 bash bench/loop_repeat.sh > $R/repeat.log 2>&1
echo "loop_repeat rc $?"; tail -22 $R/repeat.log
echo "re-measured: $(cat /tmp/repeat/r*.tsv | grep -c 're-measured interleaved'), re-measure failed: $(cat /tmp/repeat/r*.tsv | grep -c 're-measure failed')"
timeout 120 bash bench/python_device.sh $B/libamk.a /tmp/pyd > $R/py.log 2>&1
export PYTHONPATH=/tmp/pyd
AMK=$B/amk OUT=/tmp/race TOTAL_S=110 timeout 200 bash bench/perf_all.sh info race triton > $R/race.log 2>&1
echo "race+triton rc $?"; grep -E "faster than Triton|Triton's\)|amk's best is" $R/race.log
echo "race re-measure failed: $(cat /tmp/race/*.tsv 2>/dev/null | grep -c 're-measure failed')"
cd $OUT && tar czf r.tgz r && rm -rf r
