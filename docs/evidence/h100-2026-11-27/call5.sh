#!/usr/bin/env bash
# s38 call 5 (H100, a fresh machine), issue 21, with 7b2a3c1 and 5804dec: the two harnesses side by side on the
# current kernel at all three target shapes (bench/regimes.sh: c0 = 128x256 3 st E1 P1, c1 = the same with 2x1
# clusters, c0-E3 = EPILOGUE 3 P1; 4096^3, 8192^3, LLM; both regimes), the LLM picks (E3 P4, c0-P4, 4 st E2 P4) on
# this card, and one more 64-trial LLM loop in burst (seed 5).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
bash bench/card.sh
B=.dbuild13; R=$OUT/r; mkdir -p $R
export AMK_CACHE_DIR=/tmp/amkcache
t0=$SECONDS
OUT=/tmp/reg3 PROBES=$PWD/.probesV AMK=$B/amk timeout 300 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 256 64 3 2 1 1 1 1 16 3" > /dev/null 2>&1
echo "regimes (3 shapes) rc $? ($((SECONDS - t0)) s)"; cat /tmp/reg3/regimes_table.md; cp /tmp/reg3/regimes.tsv $R/call5-regimes3.tsv
t0=$SECONDS
OUT=/tmp/regL PROBES=$PWD/.probesU AMK=$B/amk SHAPES="8192x14336x4096" timeout 120 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 1 1 4 16 2" > /dev/null 2>&1
echo "regimes (LLM) rc $? ($((SECONDS - t0)) s)"; cat /tmp/regL/regimes_table.md; cp /tmp/regL/regimes.tsv $R/call5-regimesL.tsv
t0=$SECONDS
timeout 140 $B/amk loop gemm_hopper --shape llm --regime burst --budget 64 --jobs 16 --seed 5 --backend gpu \
  --results $R/loop_burst_s5.tsv --best $R/loop_burst_s5.best.json --quiet > $R/loop_burst_s5.json 2> $R/loop_burst_s5.err
echo "burst seed 5 loop exit $? ($((SECONDS - t0)) s)"
python3 -c "
import json; b=json.load(open('$R/loop_burst_s5.best.json')); print(json.dumps(b['config']['params']), b.get('latency_us'))"
grep -A3 '"vs_peer"' $R/loop_burst_s5.json | grep speedup
echo "re-measured: $(grep -c 're-measured interleaved' $R/loop_burst_s5.tsv), re-measure failed: $(grep -c 're-measure failed' $R/loop_burst_s5.tsv)"
cd $OUT && tar czf r.tgz r && rm -rf r
