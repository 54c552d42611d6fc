#!/usr/bin/env bash
# Search quality against the field: amk's strategies and Kernel Tuner 1.5's, replayed on the
# community's recorded spaces (space_defs/data/benchmark_hub), scored with the community's
# method (autotuning-methodology). Writes table.md, scores.json, curves.png and curves.svg
# to $OUT (default build/search_vs_kerneltuner). Results: docs/PERFORMANCE.md, "Search
# quality". Works from a clean clone after `make run` (it builds amk itself when missing).
#   bench/search_vs_kerneltuner.sh [--quick] [--seeds N] [--cachefiles DIR] [--pairs all|K/G,...]
#                                  [--kt-cache DIR] [--amk-strategies L] [--kt-strategies L]
#                                  [--kt-evals-only L] [--kt-cached-only] [--replay-partial]
#                                  [--sweeps all|K,...] [--sweeps-dir DIR] [--values-reversed]
# --cachefiles: a benchmark_hub snapshot's cachefiles/ (fetched at run time; default the
# shipped subset); --pairs: which KERNEL/GPU pairs (partial cachefiles are left out, listed,
# unless --replay-partial: then replayed as their recorded configs);
# --kt-cache: keeps Kernel Tuner's simulated runs so they run once per pair, strategy, seed
# (a seed's run is the same on every machine: the Latin hypercube samples of bayes_opt and
# diff_evo, which Kernel Tuner 1.5 draws unseeded, follow the seed here; those runs are
# cached as "-lhs"); --kt-cached-only scores only what is there. --kt-evals-only: these
# Kernel Tuner strategies (STRATEGY, or STRATEGY@KERNEL/GPU for one pair) run 200
# evaluations only, scored on the time budget up to where their recorded cost ends (between
# a lower and an upper bound, marked). --sweeps: amk's strategies on amk's recorded sweeps instead
# (space_defs/data/*.tsv, or --sweeps-dir; sweeps.md), over evaluations and, for a sweep
# whose rows record their trials' cost (results v4, e.g. bench/record_sweeps.sh's), over
# time too. Every cachefile table scores both budgets: time and evaluations. Kernel Tuner's
# strategies beside amk's on those sweeps: bench/sweeps_to_hub.py SWEEPS_DIR HUB, then
# --cachefiles HUB/cachefiles --replay-partial (each sweep a pair of its recorded configs).
# --values-reversed: each T1 space with every param's values listed in reverse order (same
# cachefiles, same Default): amk sorts numeric values on import and scores the same; a
# strategy that reads the listing order does not (bench/presentations.py puts two runs side
# by side).
# --quick: a smoke test (one space, 2 seeds, 3 Kernel Tuner strategies; about 10 s).
# Environment: BUILD (build/), AMK ($BUILD/amk), VENV ($BUILD/bench-venv, built with pip from
# bench/search_vs_kerneltuner.requirements.txt), OUT, JOBS (one per core),
# VENV_FAIL_RC (exit status when the venv cannot be built: default 1; the CTest passes 77).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
AMK=${AMK:-$BUILD/amk}
VENV=${VENV:-$BUILD/bench-venv}
OUT=${OUT:-$BUILD/search_vs_kerneltuner}
REQ="$ROOT/bench/search_vs_kerneltuner.requirements.txt"

if [ ! -x "$AMK" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$BUILD" -j "$(nproc)"
fi
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$VENV/requirements.txt"; then
    echo "search_vs_kerneltuner: building the Python venv $VENV (pip, PyPI)" >&2
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" >&2 || ! "$VENV/bin/pip" install -q -r "$REQ" >&2; then
        rm -rf "$VENV"
        echo "search_vs_kerneltuner: cannot build the venv (python3 -m venv and pip from PyPI" \
             "are needed: network, python3-venv)" >&2
        exit "${VENV_FAIL_RC:-1}"
    fi
    cp "$REQ" "$VENV/requirements.txt"
fi
mkdir -p "$OUT"
exec "$VENV/bin/python" "$ROOT/bench/search_vs_kerneltuner.py" --amk "$AMK" \
    --hub "$ROOT/space_defs/data/benchmark_hub" --work "$OUT/work" --out "$OUT" \
    --jobs "${JOBS:-$(nproc)}" "$@"
