#!/usr/bin/env bash
# s35 call 1 (H100), issue 21: gemm_hopper BK 32 (branch bk32 rebased on main): 128x320 and 128x256 tiles
# with 5-6 stages and the whole tile staged, against c0, c0-P4 and 128x320 E3; then amk's gate for BK 32 configs.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
OUT=$R/regimes PROBES=$PWD/.probes10 AMK=.dbuild6/amk SHAPES="8192x14336x4096 8192x8192x8192" timeout 380 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 4 16 1" "128 320 64 3 2 1 1 1 1 16 3" \
  "128 320 32 5 2 1 1 1 1 16 1" "128 320 32 5 2 2 1 1 1 16 1" "128 320 32 4 2 1 1 1 1 16 1" \
  "128 256 32 6 2 1 1 1 1 16 1" "128 256 32 6 2 1 1 1 4 16 1" "128 320 32 5 2 1 1 1 1 8 1" > $R/regimes.log 2>&1
el "regimes rc $?"
for p in '"BN":320,"STAGES":5,"PERSISTENT":1' '"BN":320,"STAGES":5,"PERSISTENT":3' '"BN":320,"STAGES":5,"PERSISTENT":1,"CLUSTER_M":2' '"BN":256,"STAGES":6,"PERSISTENT":4,"CLUSTER_N":2' '"BM":64,"BN":128,"STAGES":6,"PERSISTENT":0,"EPILOGUE":0,"CONSUMERS":1,"REGS":0'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"' '"M":2113,"N":1800,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{"BM":128,"BK":32,"CONSUMERS":2,"REGS":1,"GROUP_M":16,"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1,%s}}\n' "$sh" "$p" > /tmp/c.json
    python3 - /tmp/c.json <<'PY'
import json,sys; d=json.load(open(sys.argv[1])); json.dump(d,open(sys.argv[1],'w'))
PY
    timeout 60 .dbuild6/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
  [ $(( $(date +%s) - S )) -gt 560 ] && break
done
el "gate"
cd $OUT && rm -rf r
