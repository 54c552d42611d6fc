#!/usr/bin/env bash
# s37 call 5 (H100), issue 21, after the search change (a GPU loop's first batch climbs from the default): the
# repeatability check (bench/loop_repeat.sh: 3 loops of 48 at 8192^3, sustained) and a 64-trial loop at the LLM
# shape in burst (what amk hands back there; call 3 of h100-2026-11-26-lag, before the change: vs_peer 0.991).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
AMK=.dbuild9/amk OUT=$OUT/repeat timeout 260 bash bench/loop_repeat.sh > $OUT/repeat.log 2>&1
echo "loop_repeat rc $?"; tail -25 $OUT/repeat.log
export AMK_CACHE_DIR=$OUT/cache
timeout 200 .dbuild9/amk loop gemm_hopper --shape llm --regime burst --budget 64 --jobs 16 --seed 1 --backend gpu \
  --results $OUT/loop_llm.tsv --best $OUT/loop_llm.best.json --quiet > $OUT/loop.json 2> $OUT/loop.err
echo "loop exit $?"
python3 -c "
import json; b=json.load(open('$OUT/loop_llm.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
grep -A4 '"vs_peer"' $OUT/loop.json | head -6
awk -F'\t' 'NR>2{print $1, $7, $9}' $OUT/loop_llm.tsv | head -20 | tr '\n' ';'; echo
rm -rf $OUT/cache $OUT/repeat/cache
