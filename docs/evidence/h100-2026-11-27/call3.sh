#!/usr/bin/env bash
# s38 call 3 (H100, call 2's machine and card, 1752824023663), issue 21: the GPU tests with 7b2a3c1 (libsubunit
# staged: call 2 could not load check_gpu_gpu), then on this card the loops' picks (E3 P4 in burst, E1 P4 in
# sustained) beside 4-stage E2 P4 in both harnesses (bench/regimes.sh), both regimes, and one more burst loop (seed 4).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
B=.dbuild12; R=$OUT/r; mkdir -p $R
timeout 90 $B/check_gpu_gpu > $R/check_gpu_gpu.log 2>&1; echo "check_gpu_gpu rc $?"; grep -E "remeasure|Checks|SKIP|fail" $R/check_gpu_gpu.log | tail -6
export AMK_CACHE_DIR=/tmp/amkcache
t0=$SECONDS
OUT=/tmp/reg PROBES=$PWD/.probesU AMK=$B/amk SHAPES="8192x14336x4096" timeout 180 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 1 1 4 16 2" > /dev/null 2>&1
echo "regimes rc $? ($((SECONDS - t0)) s)"; cat /tmp/reg/regimes_table.md; cp /tmp/reg/regimes.tsv $R/call3-regimes.tsv
t0=$SECONDS
timeout 150 $B/amk loop gemm_hopper --shape llm --regime burst --budget 64 --jobs 16 --seed 4 --backend gpu \
  --results $R/loop_burst_s4.tsv --best $R/loop_burst_s4.best.json --quiet > $R/loop_burst_s4.json 2> $R/loop_burst_s4.err
echo "burst seed 4 loop exit $? ($((SECONDS - t0)) s)"
python3 -c "
import json; b=json.load(open('$R/loop_burst_s4.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
grep -A3 '"vs_peer"' $R/loop_burst_s4.json | grep speedup
echo "re-measured: $(grep -c 're-measured interleaved' $R/loop_burst_s4.tsv), re-measure failed: $(grep -c 're-measure failed' $R/loop_burst_s4.tsv)"
cd $OUT && tar czf r.tgz r && rm -rf r
