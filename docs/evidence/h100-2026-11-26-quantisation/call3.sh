#!/usr/bin/env bash
# s34 call 3 (H100), issue 21: gemm_hopper PERSISTENT 4 (stream-K in whole pieces a tile), this tree.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# amk's gate: PERSISTENT 4 configs at every shape kind (decode, ragged, tiny f16, 1000^3, 4096^3, LLM)
for p in '"PERSISTENT":4,"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1' '"PERSISTENT":4,"CLUSTER_M":2,"CLUSTER_N":1,"EPILOGUE":1' '"PERSISTENT":4,"CLUSTER_M":1,"CLUSTER_N":2,"EPILOGUE":0' '"PERSISTENT":4,"BN":320,"EPILOGUE":3'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":8192,"N":14336,"K":4096,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"' '"M":4096,"N":4096,"K":4096,"dtype":"bf16"' '"M":2113,"N":1800,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"GROUP_M":16,%s}}\n' "$sh" "$p" | sed 's/"BN":256,\(.*\)"BN":320/\1"BN":320/' > /tmp/c.json
    timeout 60 .dbuild5/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
for sh in '"M":8192,"N":14336,"K":4096' '"M":257,"N":520,"K":200' '"M":16,"N":4096,"K":14336'; do
  printf '{"kernel":"gemm_hopper_fp8","shape":{%s,"dtype":"fp8e4m3"},"params":{"BM":128,"BN":256,"BK":128,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":4,"GROUP_M":16,"EPILOGUE":1}}\n' "$sh" > /tmp/c8.json
  timeout 60 .dbuild5/amk evaluate /tmp/c8.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
done
el "gate"
OUT=$R/regimes PROBES=$PWD/.probes9 AMK=.dbuild5/amk SHAPES="8192x14336x4096 8192x8192x8192 4096x4096x4096" timeout 330 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 3 2 1 2 1 4 16 1" > $R/regimes.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
