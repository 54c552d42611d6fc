#!/usr/bin/env bash
# s35 call 7 (H100), issue 21: main (stores spread, scale-d 0): amk's gate for the paths call 5 left out
# (PERSISTENT 3, 128x320 with EPILOGUE 3, 1x2 clusters with EPILOGUE 1, f16, fp8 P1/P0) at odd shapes;
# bench/regimes.sh c0-P4 and 128x320 E3 at the LLM shape, both regimes.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,serial --format=csv > "$R/gpu.txt" 2>&1
for p in '"PERSISTENT":3' '"PERSISTENT":1,"BN":320,"EPILOGUE":3' '"PERSISTENT":1,"CLUSTER_N":2' '"PERSISTENT":3,"CLUSTER_M":2'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"f16"' '"M":3,"N":136,"K":72,"dtype":"bf16"' '"M":1000,"N":1000,"K":1000,"dtype":"f16"' '"M":2113,"N":1800,"K":1000,"dtype":"bf16"' '"M":4096,"N":4096,"K":72,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"GROUP_M":16,"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1,%s}}\n' "$sh" "$p" > /tmp/c.json
    python3 -c "import json; d=json.load(open('/tmp/c.json')); json.dump(d,open('/tmp/c.json','w'))"
    timeout 60 .dbuild6/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
for p in '"PERSISTENT":1,"EPILOGUE":1' '"PERSISTENT":0,"EPILOGUE":0' '"PERSISTENT":3,"EPILOGUE":1'; do
  for sh in '"M":8192,"N":14336,"K":4096' '"M":1000,"N":1000,"K":1008' '"M":16,"N":4096,"K":14336' '"M":4096,"N":4096,"K":128'; do
    printf '{"kernel":"gemm_hopper_fp8","shape":{%s,"dtype":"fp8e4m3"},"params":{"BM":128,"BN":256,"BK":128,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"GROUP_M":16,%s}}\n' "$sh" "$p" > /tmp/c8.json
    timeout 60 .dbuild6/amk evaluate /tmp/c8.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
el "gate"
OUT=$R/regimes PROBES=$PWD/.probes12 AMK=.dbuild6/amk SHAPES="8192x14336x4096" timeout 200 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 3 2 1 2 1 1 16 1" "128 320 64 3 2 1 1 1 1 16 3" > $R/regimes.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
