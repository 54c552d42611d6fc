#!/usr/bin/env bash
# s37 call 8 (H100), issue 21: the config call 7's LLM loops handed back (128x256, 3 stages, EPILOGUE 3, PERSISTENT 4,
# GROUP_M 16) beside c0-P4 and 4-stage E2 P4, checked by both harnesses (bench/regimes.sh: amk's vs_peer and the probe),
# both regimes, the LLM shape.
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
export AMK_CACHE_DIR=$OUT/cache
OUT=$OUT/r PROBES=$PWD/.probesU AMK=.dbuild10/amk SHAPES="8192x14336x4096" timeout 400 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 4 16 3" "128 256 64 3 2 1 1 1 4 16 1" "128 256 64 4 2 1 1 1 4 16 2" > /dev/null 2>&1
echo "regimes rc $?"; cat $OUT/r/regimes_table.md; cp $OUT/r/regimes.tsv $OUT/call8-regimes.tsv; rm -rf $OUT/cache
