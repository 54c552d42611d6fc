#!/usr/bin/env bash
# s30 call 1: gemm_hopper PERSISTENT 3 (stream-K tail): correctness through amk's gate at every
# spec shape, then both harnesses in both regimes at the three big shapes.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
# 1. the gate: PERSISTENT 3 configs at every shape (amk evaluate checks against the reference)
for p in '"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1' '"CLUSTER_M":2,"CLUSTER_N":1,"EPILOGUE":1' '"CLUSTER_M":1,"CLUSTER_N":2,"EPILOGUE":0'; do
  for sh in '"M":8192,"N":14336,"K":4096,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":4096,"N":4096,"K":4096,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"PERSISTENT":3,"GROUP_M":16,%s}}\n' "$sh" "$p" > /tmp/c.json
    timeout 60 .dbuild/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err
  done
done
printf '{"kernel":"gemm_hopper_fp8","shape":{"M":8192,"N":14336,"K":4096,"dtype":"fp8e4m3"},"params":{"BM":128,"BN":256,"BK":128,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":3,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/c8.json
timeout 60 .dbuild/amk evaluate /tmp/c8.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err
el "gate done"
python3 -c "
import json
for l in open('$R/gate.jsonl'):
    v=json.loads(l); print(v.get('status'), v.get('shape'), v.get('params',{}).get('CLUSTER_M'), v.get('latency_us'), v.get('vs_peer'), (v.get('notes') or '')[:150])
" > $R/gate.txt 2>&1
# 2. the probe (independent harness): correctness at ragged shapes, plain
SHAPES="257x520x200 3x136x72 16x4096x14336 1000x1000x1000" PROBES=$PWD/.probes timeout 60 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 2 1 3 16 1" "128 256 64 4 2 1 1 1 3 16 1" > $R/probe_small.log 2>&1
el "probe small rc $?"
# 3. both harnesses, both regimes, three big shapes: c0, c0 stream-K, c1 stream-K
OUT=$R/regimes PROBES=$PWD/.probes AMK=.dbuild/amk timeout 300 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 2 1 3 16 1" > $R/regimes.log 2>&1
el "regimes rc $?"
timeout 60 .dbuild/check_gpu_gpu > "$R/check_gpu_gpu.log" 2>&1
el "check_gpu_gpu rc $?"
cd $OUT && rm -rf r
