#!/usr/bin/env bash
# s30 call 9: can the search find >= 1.0x cuBLAS in burst at the LLM shape from c0-P3?
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
printf '{"kernel":"gemm_hopper","shape":{"M":8192,"N":14336,"K":4096,"dtype":"bf16"},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":3,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/c.json
.dbuild/amk evaluate /tmp/c.json --backend gpu --regime burst --results $R/burst_llm.tsv > $R/start.json 2> $R/start.err
el "start rc $?"
timeout 330 .dbuild/amk loop gemm_hopper --shape llm --regime burst --resume --results $R/burst_llm.tsv --budget 60 --jobs 16 --strategy hillclimb --backend gpu > $R/loop.json 2> $R/loop.err
el "loop rc $?"
cd $OUT && rm -rf r
