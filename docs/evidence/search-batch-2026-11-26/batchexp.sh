#!/bin/bash
# usage: batchexp.sh AMK OUTFILE BUDGET BATCH ; loops over recorded sweeps, seeds 1-20
A=$1; OUT=$2; B=$3; BATCH=$4
D=/work/main/space_defs/data
T=$(mktemp -d)
for k in gemm_hopper gemm_tc gemm_wgmma gemm gemv softmax rmsnorm quant_per_tensor; do
  for s in $(seq ${SEEDS0:-1} ${SEEDS1:-20}); do
    rm -f $T/r.tsv $T/b.json
    AMK_KERNELS_DIR=/work/main/space_defs/kernels AMK_DATA_DIR=$D $A loop $k --backend sim:$D/$k.tsv --budget $B --batch $BATCH --seed $s --results $T/r.tsv --best $T/b.json --quiet > /dev/null 2>$T/err || { echo "$k $s FAIL $(head -c 200 $T/err)"; continue; }
    python3 -c "import json;b=json.load(open('$T/b.json'));print('$k', $s, b['latency_us'], b['shape'] if isinstance(b['shape'],str) else json.dumps(b['shape'],separators=(',',':')))"
  done
done > $OUT
rm -rf $T
