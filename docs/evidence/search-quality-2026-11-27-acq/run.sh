#!/bin/bash
# usage: run.sh NAME [ENV=VAL ...]   (seeds from FIRST, default 101); retried when killed
NAME=$1; shift
FIRST=${FIRST:-101}
DEV=convolution_milo/A100,convolution_milo/MI250X,convolution_milo/W6600,dedispersion_milo/A100,dedispersion_milo/MI250X
cd /work/wt26
for try in 1 2 3; do
env "$@" AMK=${AMKBIN:-build/amk} VENV=/tmp/venv25 JOBS=1 OUT=/tmp/acq/${NAME}_$FIRST /usr/bin/time -o /tmp/acq/${NAME}_$FIRST.time nice -n 19 bash bench/search_vs_kerneltuner.sh \
  --cachefiles /work/shared/benchmark_hub/cachefiles --pairs $DEV --seeds 40 --first-seed $FIRST \
  --amk-strategies evolve --kt-strategies "" --no-package > /tmp/acq/${NAME}_$FIRST.log 2>&1
rc=$?
echo "done rc=$rc try=$try" >> /tmp/acq/${NAME}_$FIRST.log
echo "$(date +%T) ${NAME}_$FIRST rc=$rc try=$try" >> /tmp/acq/runs.txt
[ $rc = 0 ] && break
done
