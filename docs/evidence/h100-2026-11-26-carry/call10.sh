#!/usr/bin/env bash
# s36 call 10 (H100), issue 21: the fourth-stage config (128x256, 4 stages, EPILOGUE 2, P4) against c0-P4 at the
# LLM shape through bench/regimes.sh: amk's harness and the probe, both regimes (second harness for calls 1/9).
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
OUT=$OUT/r PROBES=$PWD/.probes20 AMK=.dbuild7/amk SHAPES="8192x14336x4096" timeout 280 bash bench/regimes.sh \
  "128 256 64 4 2 1 1 1 4 16 2" "128 256 64 3 2 1 1 1 4 16 1" > /dev/null 2>&1
echo "regimes rc $?"; cat $OUT/r/regimes_table.md
