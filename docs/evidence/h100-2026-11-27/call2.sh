#!/usr/bin/env bash
# s38 call 2 (H100, call 1's machine and card), issue 21, after 7b2a3c1 (a re-measure's buffers fit both configs:
# call 1's loops logged "re-measure failed: ... illegal address" for every PERSISTENT 3/4 candidate re-measured beside
# a P1 incumbent, so those close calls were left to the first measurements): the GPU tests, then call 1's two LLM
# loops again (burst seed 3, sustained seed 1) on the same card.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh; echo "repo at $PWD"
B=.dbuild12
timeout 90 $B/check_gpu_gpu > $OUT/check_gpu_gpu.log 2>&1; echo "check_gpu_gpu rc $?"; tail -4 $OUT/check_gpu_gpu.log
export AMK_CACHE_DIR=/tmp/amkcache
loop() { # regime seed timeout
  local t0=$SECONDS tag=$1_s$2
  timeout $3 $B/amk loop gemm_hopper --shape llm --regime $1 --budget 64 --jobs 16 --seed $2 --backend gpu \
    --results $OUT/loop_$tag.tsv --best $OUT/loop_$tag.best.json --quiet > $OUT/loop_$tag.json 2> $OUT/loop_$tag.err
  echo "$1 seed $2 loop exit $? ($((SECONDS - t0)) s)"
  python3 -c "
import json; b=json.load(open('$OUT/loop_$tag.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
  grep -A3 '"vs_peer"' $OUT/loop_$tag.json | grep speedup
  awk -F'\t' 'NR>2{match($6,/"PERSISTENT":[0-9]/); p=substr($6,RSTART+13,1); n[p]++; if (!(p in b) || $9<b[p]) b[p]=$9} END{for(k in n) printf "P%s: %d trials, best %s us; ", k, n[k], b[k]; print ""}' $OUT/loop_$tag.tsv
  echo "re-measured: $(grep -c 're-measured interleaved' $OUT/loop_$tag.tsv), re-measure failed: $(grep -c 're-measure failed' $OUT/loop_$tag.tsv)"
}
loop burst 3 170
loop sustained 1 230
