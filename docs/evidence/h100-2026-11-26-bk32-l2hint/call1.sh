#!/usr/bin/env bash
# s33 call 1 (H100): gemm_hopper BK 32 (branch bk32 merged): gate shapes of the BK 32 configs, then both harnesses, both regimes, at the LLM shape and 8192^3 against c0 and 128x320 E3.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
for p in '"BM":128,"BN":320,"STAGES":5,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1' '"BM":128,"BN":320,"STAGES":5,"PERSISTENT":1,"CLUSTER_M":2,"CLUSTER_N":1' '"BM":128,"BN":320,"STAGES":5,"PERSISTENT":3,"CLUSTER_M":1,"CLUSTER_N":1' '"BM":128,"BN":256,"STAGES":6,"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":2'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"' '"M":4096,"N":4096,"K":4096,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{%s,"BK":32,"CONSUMERS":2,"REGS":1,"GROUP_M":16,"EPILOGUE":1}}\n' "$sh" "$p" > /tmp/c.json
    timeout 60 .dbuild4/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet > /dev/null 2>>$R/gate.err
  done
done
el "gate"
SHAPES="8192x14336x4096 8192x8192x8192" OUT=$R/reg PROBES=$PWD/.probes5 AMK=.dbuild4/amk timeout 500 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 320 32 5 2 1 1 1 1 16 1" "128 320 32 5 2 1 2 1 1 16 1" "128 320 64 3 2 1 1 1 1 16 3" "128 256 32 6 2 1 1 1 1 16 1" "128 320 32 5 2 1 1 1 3 16 1" > $R/reg.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
