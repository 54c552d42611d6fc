#!/usr/bin/env bash
# The six development pairs of this folder: the five shipped (convolution_milo A100, MI250X,
# W6600; dedispersion_milo A100, MI250X) and convolution_milo/H200, amk's own sweep.
#   bash docs/evidence/search-quality-2026-11-28-b/dev.sh NAME [ENV=VALUE ...]
# env: AMK (build/amk: a knob build of knobs.diff for the variants), SEEDS (40), FIRST (501).
# Writes /tmp/dev-NAME/ (table.md, scores.json); compare two with
#   python docs/evidence/search-quality-2026-11-27/cmp.py /tmp/dev-main /tmp/dev-NAME
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
name=$1; shift
hub=/tmp/dev-hub/cachefiles
mkdir -p "$hub/convolution_milo" "$hub/dedispersion_milo"
for f in "$ROOT"/space_defs/data/benchmark_hub/cachefiles/*/*.json.gz \
         "$ROOT"/docs/evidence/search-quality-2026-11-28-b/cachefiles/convolution_milo/H200.json.gz; do
    ln -sf "$f" "$hub/$(basename "$(dirname "$f")")/"
done
env "$@" AMK=${AMK:-$ROOT/build/amk} JOBS=${JOBS:-2} OUT=/tmp/dev-$name \
    "$ROOT/bench/search_vs_kerneltuner.sh" --cachefiles "$hub" \
    --pairs convolution_milo/A100,convolution_milo/MI250X,convolution_milo/W6600,dedispersion_milo/A100,dedispersion_milo/MI250X,convolution_milo/H200 \
    --seeds "${SEEDS:-40}" --first-seed "${FIRST:-501}" --amk-strategies evolve \
    --kt-strategies "" --no-package >/tmp/dev-$name.log 2>&1
grep -m1 -A2 '^| strategy | convolution_milo/A100' /tmp/dev-$name/table.md
