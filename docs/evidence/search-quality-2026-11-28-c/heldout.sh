#!/usr/bin/env bash
# amk's evolve alone on the seven held-out pairs (convolution_milo A4000, A6000, W7800;
# dedispersion_milo A4000, A6000, W6600, W7800), time score and best ÷ optimum handed back.
#   bash docs/evidence/search-quality-2026-11-28-c/heldout.sh NAME HUB [ENV=VALUE ...]
# HUB: a folder with benchmark_hub 8eeb99e's cachefiles/ (convolution_milo/, dedispersion_milo/).
# env: AMK (build/amk), SEEDS (100), FIRST (1). Writes /tmp/heldout-NAME/ (table.md,
# scores.json); compare two with
#   python docs/evidence/search-quality-2026-11-27/cmp.py /tmp/heldout-A /tmp/heldout-B
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
name=$1 hub=$2; shift 2
env "$@" AMK=${AMK:-$ROOT/build/amk} JOBS=${JOBS:-2} OUT=/tmp/heldout-$name \
    "$ROOT/bench/search_vs_kerneltuner.sh" --cachefiles "$hub/cachefiles" \
    --pairs convolution_milo/A4000,convolution_milo/A6000,convolution_milo/W7800,dedispersion_milo/A4000,dedispersion_milo/A6000,dedispersion_milo/W6600,dedispersion_milo/W7800 \
    --seeds "${SEEDS:-100}" --first-seed "${FIRST:-1}" --amk-strategies evolve \
    --kt-strategies "" --no-package >/tmp/heldout-$name.log 2>&1
grep -m1 -A2 '^| strategy |' /tmp/heldout-$name/table.md
