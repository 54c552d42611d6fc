#!/usr/bin/env bash
# s30 call 5: branch tail (scratch role; gemm_hopper PERSISTENT 3 one-wave stream-K), its own tree.
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
T=/tmp/src2; mkdir -p $T; tar xzf .dsess/src2.tgz -C $T
ln -s $PWD/.device-libs $T/.device-libs; ln -s $PWD/.dbuild2 $T/.dbuild; ln -s $PWD/.probes2 $T/.probes
cd $T
export LD_LIBRARY_PATH=$T/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$T/space_defs/kernels AMK_DATA_DIR=$T/space_defs/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
for p in '"PERSISTENT":3,"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1' '"PERSISTENT":3,"CLUSTER_M":2,"CLUSTER_N":1,"EPILOGUE":1' '"PERSISTENT":3,"CLUSTER_M":1,"CLUSTER_N":2,"EPILOGUE":0' '"PERSISTENT":1,"CLUSTER_M":1,"CLUSTER_N":1,"EPILOGUE":1'; do
  for sh in '"M":16,"N":4096,"K":14336,"dtype":"bf16"' '"M":8192,"N":14336,"K":4096,"dtype":"bf16"' '"M":257,"N":520,"K":200,"dtype":"bf16"' '"M":3,"N":136,"K":72,"dtype":"f16"' '"M":1000,"N":1000,"K":1000,"dtype":"bf16"'; do
    printf '{"kernel":"gemm_hopper","shape":{%s},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"GROUP_M":16,%s}}\n' "$sh" "$p" > /tmp/c.json
    timeout 60 .dbuild/amk evaluate /tmp/c.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err; echo >> $R/gate.jsonl
  done
done
printf '{"kernel":"gemm_hopper_fp8","shape":{"M":8192,"N":14336,"K":4096,"dtype":"fp8e4m3"},"params":{"BM":128,"BN":256,"BK":128,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":3,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/c8.json
timeout 60 .dbuild/amk evaluate /tmp/c8.json --backend gpu --results $R/gate.tsv --quiet >> $R/gate.jsonl 2>>$R/gate.err
el "gate"
SHAPES="257x520x200 3x136x72 16x4096x14336 1000x1000x1000" PROBES=$T/.probes timeout 60 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 2 1 3 16 1" > $R/probe_small.log 2>&1
el "probe small rc $?"
OUT=$R/regimes PROBES=$T/.probes AMK=.dbuild/amk timeout 200 bash bench/regimes.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 2 1 3 16 1" > $R/regimes.log 2>&1
el "regimes rc $?"
timeout 60 .dbuild/check_gpu_gpu > "$R/check_gpu_gpu.log" 2>&1
el "check_gpu_gpu rc $?"
timeout 120 bash bench/python_device.sh .dbuild/libamk.a /tmp/pyd > "$R/py.log" 2>&1
export PYTHONPATH=/tmp/pyd
timeout 90 python3 python/tests/run.py gpu > "$R/pygpu.log" 2>&1
el "python gpu rc $?"
timeout 100 .dbuild/amk loop gemm_hopper --shape llm --budget 40 --jobs 16 --seed 1 --backend gpu --results $R/loop_llm.tsv > $R/loop_llm.json 2> $R/loop_llm.err
el "loop llm rc $?"
cd $OUT && rm -rf r
