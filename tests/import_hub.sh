#!/usr/bin/env bash
# The community's T1 spaces (benchmark_hub: convolution_milo, dedispersion_milo, gemm_milo,
# hotspot_milo) import with `amk import`, and `amk space --exact` counts exactly the valid
# configs that Python's own evaluation of their conditions gives (full cartesian product).
# The data: $AMK_BENCHMARK_HUB, else the repository's copy (space_defs/data/benchmark_hub).
# Exits 77 (CTest skip) when it is not there.
# Run as: bash import_hub.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
HUB=${AMK_BENCHMARK_HUB:-$SRC/space_defs/data/benchmark_hub}
if ! ls "$HUB"/spaces/*.json >/dev/null 2>&1; then
    echo "import_hub: SKIP: no T1 spaces in $HUB/spaces (set AMK_BENCHMARK_HUB)"
    exit 77
fi
n=0
for f in "$HUB"/spaces/*.json; do
    k=$(basename "$f" .json)
    run import "$f" -o "$k"
    expect_rc 0
    python3 - "$f" "$k/spec.json" <<'PY' || fail "$k: params differ from the T1 order"
import json, sys
t1 = [p["Name"] for p in json.load(open(sys.argv[1]))["ConfigurationSpace"]["TuningParameters"]]
sys.exit(0 if list(json.load(open(sys.argv[2]))["params"]) == t1 else 1)
PY
    expected=$(python3 "$SRC/tests/fixtures/t1/count_valid.py" "$f")
    start=$(date +%s.%N)
    run space "$k" --spec-dir "$k" --exact
    expect_rc 0
    secs=$(python3 -c "import time; print(round(time.time() - $start, 2))")
    got=$(jget "$WORK/out" 'd["valid_count"]')
    [ "$got" = "$expected" ] || fail "$k: amk counts $got valid configs, Python $expected"
    echo "import_hub: $k: raw $(jget "$WORK/out" 'int(d["raw_size"])'), valid $got (Python: $expected), amk space ${secs}s"
    n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "expected the four benchmark_hub spaces, found $n"
done_ok
