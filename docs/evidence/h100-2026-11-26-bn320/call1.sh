#!/usr/bin/env bash
# s32 call 1 (H100): gemm_hopper BN 320 (an n256 + n64 wgmma a K step; EPILOGUE 2 blockwise staging back for it) against c0 and cuBLAS, both harnesses, both regimes; gate shapes.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
for p in '"BM":128,"BN":320,"STAGES":3,"PERSISTENT":1,"CLUSTER_M":1,"EPILOGUE":2' '"BM":128,"BN":320,"STAGES":3,"PERSISTENT":3,"CLUSTER_M":2,"EPILOGUE":2' '"BM":64,"BN":320,"STAGES":4,"PERSISTENT":2,"CLUSTER_M":1,"EPILOGUE":2' '"BM":128,"BN":320,"STAGES":4,"PERSISTENT":0,"CLUSTER_M":1,"EPILOGUE":0'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{%s,"BK":64,"CONSUMERS":2,"REGS":1,"CLUSTER_N":1,"GROUP_M":16}}\n' "$sh" "$p" > /tmp/c.json
    timeout 60 .dbuild3/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
el "gate"
C0="128 256 64 3 2 1 1 1 1 16 1"
SHAPES="8192x14336x4096" OUT=$R/llm PROBES=$PWD/.probes3 AMK=.dbuild3/amk timeout 300 bash bench/regimes.sh "$C0" "128 320 64 3 2 1 1 1 1 16 2" "128 320 64 3 2 1 2 1 1 16 2" "128 320 64 4 2 1 1 1 1 16 0" "128 320 64 4 2 1 2 1 1 16 0" "128 320 64 3 2 1 1 1 3 16 2" "128 320 64 2 2 1 1 1 1 16 1" "64 320 64 4 2 1 1 1 2 16 2" > $R/llm.log 2>&1
el "regimes llm rc $?"
mkdir -p .p3b && cp .probes3/probe0 .p3b/probe0 && cp .probes3/probe1 .p3b/probe1 && cp .probes3/probe2 .p3b/probe2
SHAPES="8192x8192x8192" OUT=$R/big PROBES=$PWD/.p3b AMK=.dbuild3/amk timeout 170 bash bench/regimes.sh "$C0" "128 320 64 3 2 1 1 1 1 16 2" "128 320 64 3 2 1 2 1 1 16 2" > $R/big.log 2>&1
el "regimes big rc $?"
cd $OUT && rm -rf r
