#!/usr/bin/env bash
# s38 call 1 (H100), issue 21: what amk's own search hands back at the LLM shape (8192x14336x4096 bf16) in the
# sustained regime (none measured since PERSISTENT was listed 0, 1, 4, 3, 2) and in burst on another card than
# h100-2026-11-26-batch call 7's; then the pick (128x256 3 st E3 P4) beside c0-P4 and 4-stage E2 P4 in both
# harnesses (bench/regimes.sh: amk's vs_peer and the probe), both regimes.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
AMK=${AMK:-.dbuild11/amk}
export AMK_CACHE_DIR=$OUT/cache
loop() { # regime seed timeout
  local t0=$SECONDS tag=$1_s$2
  timeout $3 $AMK loop gemm_hopper --shape llm --regime $1 --budget 64 --jobs 16 --seed $2 --backend gpu \
    --results $OUT/loop_$tag.tsv --best $OUT/loop_$tag.best.json --quiet > $OUT/loop_$tag.json 2> $OUT/loop_$tag.err
  echo "$1 seed $2 loop exit $? ($((SECONDS - t0)) s)"
  python3 -c "
import json; b=json.load(open('$OUT/loop_$tag.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
  grep -A3 '"vs_peer"' $OUT/loop_$tag.json | grep speedup
  awk -F'\t' 'NR>2{match($6,/"PERSISTENT":[0-9]/); p=substr($6,RSTART+13,1); n[p]++; if (!(p in b) || $9<b[p]) b[p]=$9} END{for(k in n) printf "P%s: %d trials, best %s us; ", k, n[k], b[k]; print ""}' $OUT/loop_$tag.tsv
}
loop sustained 1 230
loop burst 3 170
rm -rf $OUT/cache
t0=$SECONDS
OUT=$OUT/r PROBES=$PWD/.probesU AMK=$AMK SHAPES="8192x14336x4096" timeout 180 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 1 1 4 16 2" > /dev/null 2>&1
echo "regimes rc $? ($((SECONDS - t0)) s)"; cat $OUT/r/regimes_table.md; cp $OUT/r/regimes.tsv $OUT/call1-regimes.tsv
rm -rf $OUT/r/cache
