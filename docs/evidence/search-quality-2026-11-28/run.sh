#!/bin/bash
# usage: run.sh NAME BIN [ENV=VAL ...]   FIRST (401), SEEDS (40), PAIRS (dev), CF (cachefiles)
NAME=$1; BIN=$2; shift 2
FIRST=${FIRST:-401}; SEEDS=${SEEDS:-40}
DEV=convolution_milo/A100,convolution_milo/MI250X,convolution_milo/W6600,dedispersion_milo/A100,dedispersion_milo/MI250X
PAIRS=${PAIRS:-$DEV}; CF=${CF:-/work/shared/benchmark_hub/cachefiles}
cd /work/main
env "$@" AMK=$BIN VENV=/work/main/build/bench-venv JOBS=2 OUT=/tmp/isl/${NAME}_$FIRST /usr/bin/time -o /tmp/isl/${NAME}_$FIRST.time bash bench/search_vs_kerneltuner.sh \
  --cachefiles $CF --pairs $PAIRS --seeds $SEEDS --first-seed $FIRST \
  --amk-strategies ${STRATS:-evolve} --kt-strategies "" --no-package > /tmp/isl/${NAME}_$FIRST.log 2>&1
echo "$(date +%T) ${NAME}_$FIRST rc=$?" >> /tmp/isl/runs.txt
