#!/usr/bin/env bash
# s35 call 6 (H100), issue 21: main with EPILOGUE 1's stores spread over the next main loop and scale-d 0:
# the LLM shape in burst three times more (c0-P4, both harnesses); the met targets re-checked (repeatability
# with the bests side by side; the tuning race against Triton).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,serial --format=csv > "$R/gpu.txt" 2>&1
for i in 1 2 3; do
  OUT=$R/llm$i PROBES=$PWD/.probes12 AMK=.dbuild6/amk SHAPES="8192x14336x4096" REGIMES="burst" timeout 60 bash bench/regimes.sh \
    "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 4 16 1" > $R/llm$i.log 2>&1
done
el "llm burst x3"
AMK=.dbuild6/amk OUT=$R/repeat timeout 200 bash bench/loop_repeat.sh > $R/repeat.log 2>&1
el "loop_repeat rc $?"
timeout 120 bash bench/python_device.sh .dbuild6/libamk.a /tmp/pyd > "$R/py.log" 2>&1
el "python rc $?"
export PYTHONPATH=/tmp/pyd
AMK=.dbuild6/amk OUT=$R/race TOTAL_S=110 timeout 260 bash bench/perf_all.sh info race triton > "$R/race.log" 2>&1
el "race+triton rc $?"
cd $OUT && rm -rf r
