#!/usr/bin/env bash
# s35 call 8 (H100), issue 21: what amk's default search hands back at the LLM shape in burst on this main:
# c0-P4 evaluated first, then `amk loop` (evolve, the default) resumed from it for 80 trials; the best and
# c0-P4 through bench/regimes.sh (both harnesses, both regimes; probes built here with a carried prelude).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,serial --format=csv > "$R/gpu.txt" 2>&1
printf '{"kernel":"gemm_hopper","shape":{"M":8192,"N":14336,"K":4096,"dtype":"bf16"},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":4,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/p4.json
timeout 60 .dbuild6/amk evaluate /tmp/p4.json --backend gpu --regime burst --results $R/burst_llm.tsv --quiet > $R/p4.json 2>&1
el "evaluate rc $?"
timeout 200 .dbuild6/amk loop gemm_hopper --shape llm --regime burst --resume --budget 80 --jobs 16 --seed 1 --backend gpu --results $R/burst_llm.tsv --best $R/best.json > $R/loop.json 2> $R/loop.err
el "loop rc $?"
BEST=$(python3 -c "
import json; p=json.load(open('$R/best.json'))['config']['params']
print(' '.join(str(p[k]) for k in 'BM BN BK STAGES CONSUMERS REGS CLUSTER_M CLUSTER_N PERSISTENT GROUP_M EPILOGUE'.split()))")
echo "best: $BEST" | tee -a $R/steps.txt
OUT=$R/regimes PRELUDE=$PWD/.probes12/prelude.h AMK=.dbuild6/amk SHAPES="8192x14336x4096" timeout 240 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 1" "$BEST" > $R/regimes.log 2>&1
el "regimes rc $?"
cd $OUT && rm -rf r
