#!/usr/bin/env bash
# Call 3 (the device tool, from the repository root; build-gpu/amk-old and amk-new built
# here and carried with .device-libs): the race loop with NVRTC's compile cache fresh, warm
# and fresh again, then the 30 s live loops of both builds with fresh caches per run.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
W=/tmp/s14c3; mkdir -p $W
bash bench/card.sh 2>&1 | head -2
for t in fresh1:n1 warm:n1 fresh2:n2; do
    lab=${t%%:*}; nv=${t##*:}; t0=$(date +%s.%N)
    AMK_CACHE_DIR=$W/ac-$lab CUDA_CACHE_PATH=$W/$nv timeout 90 build-gpu/amk-new loop gemm_hopper \
        --shape M=4096,N=4096,K=4096,dtype=f16 --budget 72 --strategy hillclimb --backend gpu \
        --results $W/race-$lab.tsv --best $W/race-$lab.json --quiet >$W/race-$lab.out 2>$W/race-$lab.err
    echo "race $lab rc $? wall $(python3 -c "import sys,time; print('%.1f s' % (time.time() - float(sys.argv[1])))" "$t0")"
done
AMKS="build-gpu/amk-old build-gpu/amk-new" OUT=$W/hop RUNS=2 SEED0=6 TIME=30s CACHE=run \
    SHAPE=default ROUNDS=2 timeout 220 bash bench/loop_repeat.sh
AMKS="build-gpu/amk-new build-gpu/amk-old" OUT=$W/hop2 RUNS=2 SEED0=8 TIME=30s CACHE=run \
    SHAPE=default ROUNDS=2 timeout 220 bash bench/loop_repeat.sh
rm -rf $W/*/cache* $W/*/nvcache* $W/ac-* $W/n1 $W/n2
tar czf $OUT/call3.tgz -C $W .
