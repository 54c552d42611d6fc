#!/usr/bin/env bash
# s31 call 1: gemm_hopper EPILOGUE 2 (blockwise staging, 4 stages at 128x256x64) against c0 and cuBLAS, both harnesses, both regimes.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
OUT=$R/regimes PROBES=$PWD/.probes AMK=.dbuild/amk timeout 430 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 4 2 1 1 1 1 16 2" "128 256 64 4 2 1 1 1 3 16 2" "128 256 64 4 2 1 2 1 1 16 2" "128 256 64 3 2 1 1 1 1 16 2" > $R/regimes.log 2>&1
el "regimes rc $?"
for p in '"BM":128,"BN":256,"STAGES":4,"PERSISTENT":1,"CLUSTER_M":1' '"BM":128,"BN":256,"STAGES":4,"PERSISTENT":3,"CLUSTER_M":1' '"BM":256,"BN":128,"STAGES":3,"PERSISTENT":0,"CLUSTER_M":1' '"BM":128,"BN":64,"STAGES":4,"PERSISTENT":1,"CLUSTER_M":2'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{%s,"BK":64,"CONSUMERS":2,"REGS":1,"CLUSTER_N":1,"GROUP_M":16,"EPILOGUE":2}}\n' "$sh" "$p" > /tmp/c.json
    timeout 60 .dbuild/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
printf '{"kernel":"gemm_hopper_fp8","shape":{"M":8192,"N":14336,"K":4096,"dtype":"fp8e4m3"},"params":{"BM":128,"BN":256,"BK":128,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":1,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/c8.json
sed 's/"EPILOGUE":1/"EPILOGUE":2/' /tmp/c8.json > /tmp/c82.json
sed 's/"EPILOGUE":1/"EPILOGUE":2/; s/"STAGES":3/"STAGES":4/' /tmp/c8.json > /tmp/c84.json
for f in /tmp/c8.json /tmp/c82.json /tmp/c84.json; do timeout 60 .dbuild/amk evaluate $f --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl; done
el "gate"
timeout 60 .dbuild/check_gpu_gpu > "$R/check_gpu_gpu.log" 2>&1
el "check_gpu_gpu rc $?"
cd $OUT && rm -rf r
