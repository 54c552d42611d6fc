#!/bin/bash
# skopt's time-limited runs (Kernel Tuner 1.5, simulation mode, the recorded clock) on the
# device machine's CPU cores, no GPU used: the pairs whose budget lets a run end within a
# call. Only the new runs come back ($OUT/new.txz, for --kt-cache).
# Arguments: LIMIT_S PAIRS JOBS HUB (a copy of .kthub holding these pairs' cachefiles and budgets.json)
cd "$(dirname "$0")/../../.."
L=${1:-560} P=$2 J=${3:-64} H=${4:-.kthub}
nproc; python3 --version
bash bench/kt_wheels.sh install .ktwheels /tmp/ktpy > /dev/null || exit 1
C=/tmp/ktcache; mkdir -p $C; touch /tmp/marker
export PYTHONPATH=/tmp/ktpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
timeout "$L" python3 bench/search_vs_kerneltuner.py --kt-runs-only --hub space_defs/data/benchmark_hub \
    --cachefiles $H/cachefiles --kt-budgets $H/budgets.json --kt-cache $C \
    --work /tmp/ktw --out /tmp/kto --jobs "$J" --pairs "$P" --kt-strategies skopt --seeds 20 \
    > "$OUT/skopt.log" 2>&1
echo "rc $? $(grep -c distinct "$OUT/skopt.log") runs"
(cd $C && find . -name '*.json' -newer /tmp/marker | tar cf - -T - | xz -T0 -3 > "$OUT/new.txz")
echo "new runs: $(xz -dc "$OUT/new.txz" | tar tf - | wc -l)"
tail -5 "$OUT/skopt.log"
