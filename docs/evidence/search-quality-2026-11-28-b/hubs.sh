#!/bin/bash
# usage: hubs.sh NAME BIN [ENV=VAL ...]: convolution A100 on hub1-6 at TEND_SCALE 0.3, seeds 201-220
mkdir -p /tmp/isl
NAME=$1; BIN=$2; shift 2
for h in 1 2 3 4 5 6; do
  env "$@" TEND_SCALE=0.3 /work/main/build/bench-venv/bin/python /tmp/benchx.py --amk $BIN --hub /work/main/space_defs/data/benchmark_hub \
    --cachefiles /tmp/px/hub$h/cachefiles --pairs convolution_milo/A100 --seeds 20 --first-seed 201 \
    --amk-strategies evolve --kt-strategies "" --no-package --work /tmp/isl/hw-$NAME-$h --out /tmp/isl/hub-${NAME}-$h --jobs 2 > /tmp/isl/hub-${NAME}-$h.log 2>&1
  echo "$(date +%T) hub-${NAME}-$h rc=$?"
done
