#!/usr/bin/env bash
# s37 call 2 (H100), issue 21: STAGGER as a spec param. (1) amk's correctness gate on STAGGER 1 configs (P0, P1,
# P3, P4; 2-CTA clusters; 128x320 E2/E3; 256x128; E0) at shapes where a tile has more K steps than the ring + 1
# (the stagger acts) with ragged M and N; (2) bench/regimes.sh: c0-P4 and 128x320 E2 P1, STAGGER 0 and 1, amk's
# harness and the probe, both regimes, the LLM shape; then the c0-P4 pair at 8192^3.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
export AMK_CACHE_DIR=$OUT/cache
bash bench/card.sh
A=.dbuild8/amk
base='"BK":64,"BM":128,"BN":256,"CLUSTER_M":1,"CLUSTER_N":1,"CONSUMERS":2,"EPILOGUE":1,"GROUP_M":16,"REGS":1,"STAGES":3,"STAGGER":1'
echo "== gate: STAGGER 1"
for p in '"PERSISTENT":4' '"PERSISTENT":3' '"PERSISTENT":1' '"PERSISTENT":0' '"PERSISTENT":1,"CLUSTER_M":2' '"PERSISTENT":0,"CLUSTER_N":2' \
         '"PERSISTENT":1,"BN":320,"EPILOGUE":2' '"PERSISTENT":4,"BN":320,"EPILOGUE":3' '"PERSISTENT":1,"BM":256,"BN":128,"REGS":2' \
         '"PERSISTENT":1,"EPILOGUE":0' '"PERSISTENT":1,"STAGES":4,"EPILOGUE":2'; do
  for s in 1000x1032x1000 257x520x1016 8192x14336x4096; do
    IFS=x read -r m n k <<<"$s"
    python3 -c "
import json,sys; p=json.loads('{'+sys.argv[1]+'}'); p.update(json.loads('{'+sys.argv[2]+'}'))
print(json.dumps({'kernel':'gemm_hopper','shape':{'M':$m,'N':$n,'K':$k,'dtype':'bf16'},'params':p}))" "$base" "$p" > $OUT/c.json
    timeout 120 $A evaluate $OUT/c.json --backend gpu --regime burst --results $OUT/gate.tsv --quiet > $OUT/v.json 2>>$OUT/gate.err
    python3 -c "
import json,sys; v=json.load(open(sys.argv[1])); print('%-48s %-16s %-10s %s %s' % (sys.argv[2], sys.argv[3], v['status'], v.get('latency_us'), (v.get('reason') or '')[:100]))" $OUT/v.json "$p" "$s"
  done
done
echo "== regimes: LLM"
OUT=$OUT/r1 PROBES=$PWD/.probesS AMK=$A SHAPES="8192x14336x4096" timeout 330 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 1 0" "128 256 64 3 2 1 1 1 4 16 1 1" "128 320 64 3 2 1 1 1 1 16 2 0" "128 320 64 3 2 1 1 1 1 16 2 1" > /dev/null 2>&1
echo "regimes rc $?"; cat $OUT/r1/regimes_table.md
