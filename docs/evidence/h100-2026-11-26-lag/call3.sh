#!/usr/bin/env bash
# s37 call 3 (H100), issue 21: (1) 120 random gemm_hopper configs through amk's gate at 1000x1032x1000 (ragged M
# and N, 16 K steps of 64: STAGGER acts) - every config ok or an explained status; (2) what amk's own search
# hands back at the LLM shape in burst now that STAGGER is in the space: `amk loop --budget 64`, then the best
# re-evaluated beside c0-P4 in both harnesses (bench/regimes.sh).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
export AMK_CACHE_DIR=$OUT/cache
bash bench/card.sh
A=.dbuild8/amk
timeout 200 $A loop gemm_hopper --shape M=1000,N=1032,K=1000,dtype=bf16 --strategy random --seed 11 --budget 120 \
  --backend gpu --jobs 16 --results $OUT/random.tsv --quiet > /dev/null 2> $OUT/random.err
echo "random exit $?"
awk -F'\t' 'NR > 2 && NF >= 10 { n[$8]++; if ($6 ~ /"STAGGER":1/) s[$8]++ } END { for (k in n) printf "%s=%d (STAGGER 1: %d) ", k, n[k], s[k]; print "" }' $OUT/random.tsv
awk -F'\t' 'NR > 2 && $8 != "ok" && $8 != "" { print "   " $8 ": " substr($19, 1, 140) }' $OUT/random.tsv | sort | uniq -c | head -8
timeout 260 $A loop gemm_hopper --shape llm --regime burst --budget 64 --jobs 16 --seed 1 --backend gpu \
  --results $OUT/loop_llm.tsv --best $OUT/loop_llm.best.json --quiet > $OUT/loop.json 2> $OUT/loop.err
echo "loop exit $?"; python3 -c "
import json; b=json.load(open('$OUT/loop_llm.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
grep -E '"(vs_peer|vs_default|peer_us|best_us|trials|statuses)"' $OUT/loop.json | head -12
python3 bench/perf_table.py best $OUT/loop_llm.tsv 2>&1 | head -8
