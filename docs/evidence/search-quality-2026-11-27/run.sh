#!/bin/bash
# usage: run.sh NAME [ENV=VAL ...]   (seeds from FIRST, default 21)
NAME=$1; shift
FIRST=${FIRST:-21}
DEV=convolution_milo/A100,convolution_milo/MI250X,convolution_milo/W6600,dedispersion_milo/A100,dedispersion_milo/MI250X
cd /work/wt25
env "$@" AMK=${AMKBIN:-build/amk} VENV=/tmp/venv25 JOBS=1 OUT=/tmp/b25s/${NAME}_$FIRST /usr/bin/time -o /tmp/b25s/${NAME}_$FIRST.time nice -n 19 bash bench/search_vs_kerneltuner.sh \
  --cachefiles /work/shared/benchmark_hub/cachefiles --pairs $DEV --seeds 40 --first-seed $FIRST \
  --amk-strategies evolve --kt-strategies "" --no-package > /tmp/b25s/${NAME}_$FIRST.log 2>&1
echo "done rc=$?" >> /tmp/b25s/${NAME}_$FIRST.log
