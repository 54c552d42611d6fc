#!/usr/bin/env bash
# s36 call 8 (H100), issue 21: bench/hopper_check.sh on this main (the carried-block epilogue): the default config
# at every named shape, 100 random configs at ragged and tiny_m, the default loop (40 trials), through amk.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
SKIP_TESTS=1 AMK=.dbuild7/amk OUT=$OUT/hc NRANDOM=100 BUDGET=40 timeout 560 bash bench/hopper_check.sh
awk -F'\t' 'NR > 2 && $8 == "ok" { split($6, a, "\"EPILOGUE\":"); e[substr(a[2],1,1)]++ } END { for (k in e) printf "EPILOGUE %s ok: %d\n", k, e[k] }' $OUT/hc/random_*.tsv
cd $OUT && tar czf hc.tgz hc && rm -rf hc
