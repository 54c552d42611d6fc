#!/usr/bin/env bash
# s36 call 3 (H100), issue 21: gemm_hopper EPILOGUE 2/3 with blocks carried in registers: amk's gate at odd
# shapes (bf16, f16, fp8) over E2/E3 configs (BN 320 and 256, P0-P4, clusters, 1 consumer, ping-pong BM 64),
# then bench/regimes.sh (both harnesses, both regimes) for c0-P4 and 128x320 E2 P1 at LLM, 8192^3, 4096^3.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,serial --format=csv > "$R/gpu.txt" 2>&1
B='"BM":128,"BK":64,"CONSUMERS":2,"REGS":1,"GROUP_M":16'
for p in '"BN":320,"STAGES":3,"EPILOGUE":2,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1' \
         '"BN":320,"STAGES":3,"EPILOGUE":3,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1' \
         '"BN":320,"STAGES":3,"EPILOGUE":2,"PERSISTENT":0,"CLUSTER_M":1,"CLUSTER_N":2' \
         '"BN":320,"STAGES":3,"EPILOGUE":3,"PERSISTENT":4,"CLUSTER_M":1,"CLUSTER_N":1' \
         '"BN":320,"STAGES":3,"EPILOGUE":2,"PERSISTENT":3,"CLUSTER_M":2,"CLUSTER_N":1' \
         '"BN":256,"STAGES":4,"EPILOGUE":2,"PERSISTENT":4,"CLUSTER_M":1,"CLUSTER_N":1' \
         '"BN":256,"STAGES":3,"EPILOGUE":3,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1' \
         '"BN":320,"STAGES":3,"EPILOGUE":2,"PERSISTENT":2,"CLUSTER_M":1,"CLUSTER_N":1,"BM":64' \
         '"BN":256,"STAGES":4,"EPILOGUE":2,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1,"BM":64,"CONSUMERS":1,"REGS":0'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"' '"M":2113,"N":1800,"K":1000,"dtype":"f16"' '"M":4096,"N":4096,"K":72,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{%s,%s}}\n' "$sh" "$B" "$p" > /tmp/c.json
    python3 -c "import json; d=json.load(open('/tmp/c.json')); json.dump(d,open('/tmp/c.json','w'))"
    timeout 60 .dbuild7/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
for p in '"BN":320,"STAGES":3,"EPILOGUE":3,"PERSISTENT":1' '"BN":256,"STAGES":4,"EPILOGUE":2,"PERSISTENT":4' '"BN":320,"STAGES":3,"EPILOGUE":2,"PERSISTENT":1'; do
for sh in '"M":8192,"N":14336,"K":4096' '"M":257,"N":520,"K":200' '"M":16,"N":4096,"K":14336' '"M":1000,"N":1000,"K":1008'; do
  printf '{"kernel":"gemm_hopper_fp8","shape":{%s,"dtype":"fp8e4m3"},"params":{"BM":128,"BK":128,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"GROUP_M":16,%s}}\n' "$sh" "$p" > /tmp/c8.json
  timeout 60 .dbuild7/amk evaluate /tmp/c8.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
done; done
el "gate"
OUT=$R/regimes PROBES=$PWD/.probes14 AMK=.dbuild7/amk SHAPES="8192x14336x4096 8192x8192x8192 4096x4096x4096" timeout 360 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 1" "128 320 64 3 2 1 1 1 1 16 2" > $R/regimes.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
