#!/usr/bin/env bash
# s34 call 4 (H100), issue 21: can the search reach 1.0x in burst at the LLM shape from c0-P4?
# c0-P4 evaluated in burst, then hillclimb from it (resume) in burst; the probe again (c0, P3, P4).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
R=$OUT/r; mkdir -p $R
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s] $*" | tee -a "$R/steps.txt"; (cd $OUT && tar czf r.tgz r); }
printf '{"kernel":"gemm_hopper","shape":{"M":8192,"N":14336,"K":4096,"dtype":"bf16"},"params":{"BM":128,"BN":256,"BK":64,"STAGES":3,"CONSUMERS":2,"REGS":1,"CLUSTER_M":1,"CLUSTER_N":1,"PERSISTENT":4,"GROUP_M":16,"EPILOGUE":1}}\n' > /tmp/p4.json
timeout 60 .dbuild5/amk evaluate /tmp/p4.json --backend gpu --regime burst --results $R/burst_llm.tsv --quiet > $R/p4.json 2>&1
el "evaluate rc $?"
timeout 150 .dbuild5/amk loop gemm_hopper --shape llm --regime burst --resume --strategy hillclimb --budget 60 --jobs 16 --seed 1 --backend gpu --results $R/burst_llm.tsv > $R/loop.json 2> $R/loop.err
el "loop rc $?"
PROBES=$PWD/.probes9 REGIMES="burst sustained" SHAPES="8192x14336x4096" timeout 150 bash bench/gemm_hopper_probe.sh "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 3 16 1" "128 256 64 3 2 1 1 1 4 16 1" > $R/probe.txt 2>&1
el "probe rc $?"
cd $OUT && rm -rf r
