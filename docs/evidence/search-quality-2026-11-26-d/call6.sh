#!/usr/bin/env bash
# s31 call 6: seeds 3-5 (call 5 made 1-2 and three of 3), Kernel Tuner 1.5's skopt strategy, max_fevals=200 runs on the 12 convolution/dedispersion pairs, seed by seed, on the GPU machine's 16 cores (scored on the lead's machine with --kt-cached-only).
R=$OUT/r; mkdir -p $R; cp -r .kthub/kt-cache $R/kt-cache
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nproc > $R/cpu.txt; lscpu | grep -i "model name" >> $R/cpu.txt
bash bench/kt_wheels.sh install .ktwheels /tmp/ktpy > $R/ktwheels.log 2>&1
el "wheels rc $?"
export PYTHONPATH=/tmp/ktpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
timeout 530 python3 bench/search_vs_kerneltuner.py --kt-runs-only --hub space_defs/data/benchmark_hub --cachefiles .kthub/cachefiles --pairs all --kt-cache $R/kt-cache --kt-evals-only skopt --first-seed 3 --seeds 3 --jobs 16 --work /tmp/ktw --out /tmp/kto > $R/runs.log 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do sleep 20; (cd $OUT && tar czf r.tgz r); done
wait $pid
el "runs rc $?"
cd $OUT && rm -rf r
