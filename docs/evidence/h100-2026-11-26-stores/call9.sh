#!/usr/bin/env bash
# s35 call 9 (H100), issue 21: bench/regimes.sh as committed at 46130e2 (its table now names the card), c0 and
# c0-P4 at the LLM shape, both regimes, both harnesses; run inline as the device command:
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export AMK_KERNELS_DIR=$PWD/space_defs/kernels AMK_DATA_DIR=$PWD/space_defs/data
OUT=$OUT/reg PROBES=$PWD/.probes12 AMK=.dbuild6/amk SHAPES="8192x14336x4096" timeout 200 bash bench/regimes.sh \
  "128 256 64 3 2 1 1 1 1 16 1" "128 256 64 3 2 1 1 1 4 16 1"
