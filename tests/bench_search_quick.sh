#!/usr/bin/env bash
# Smoke test of bench/search_vs_kerneltuner.sh --quick: it builds its venv (kernel_tuner and
# autotuning-methodology from PyPI) and writes a table with amk's default strategy and Kernel
# Tuner's random_sample scored, and the plot. SKIPs (77) when the venv cannot be built here
# (no network, no python3-venv).
# Run as: bash bench_search_quick.sh AMK_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
AMK=$1 SRC=$2 BUILD=$3
OUT=$(mktemp -d "${TMPDIR:-/tmp}/amk-bench-search.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
set +e
AMK="$AMK" BUILD="$BUILD" OUT="$OUT" VENV_FAIL_RC=77 JOBS=2 \
    bash "$SRC/bench/search_vs_kerneltuner.sh" --quick >"$OUT.log" 2>&1
rc=$?
set -e
cat "$OUT.log"
rm -f "$OUT.log"
if [ "$rc" -eq 77 ]; then
    echo "bench_search_quick: SKIP: the bench venv cannot be built here"
    exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: search_vs_kerneltuner.sh --quick exited $rc"; exit 1; }
for f in table.md scores.json curves.png curves.svg; do
    [ -s "$OUT/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
grep -q '^| amk evolve (default) | -\?[0-9.]* ± ' "$OUT/table.md" ||
    { echo "FAIL: table.md lacks amk's default strategy's score"; exit 1; }
grep -q '^| KT random_sample | -\?[0-9.]* ± ' "$OUT/table.md" ||
    { echo "FAIL: table.md lacks Kernel Tuner random_sample's score"; exit 1; }
echo "ok: bench_search_quick"
