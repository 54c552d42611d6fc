#!/usr/bin/env bash
# The engine's own speed (issue 2), on any machine, no GPU:
#   enumerate  a 10^7-point raw space with 3 restrictions        (target <= 2 s)
#   resume     amk_history_load over a 10^6-row results.tsv        (target <= 3 s)
#   overhead   engine cost per trial, model backend, 20000 trials  (target <= 100 us)
# usage: bench/engine.sh [BUILD_DIR]     (default build/, configured RelWithDebInfo by default)
set -euo pipefail
build=${1:-build}
cmake --build "$build" -j2 --target bench_enumerate bench_resume bench_overhead >/dev/null
echo "== enumerate"; "$build/bench_enumerate"
echo "== resume";    "$build/bench_resume"
echo "== overhead";  "$build/bench_overhead"
