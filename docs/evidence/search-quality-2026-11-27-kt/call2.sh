#!/bin/bash
# The second batch on the device machine's CPU cores: the runs call 1 left undone. The runs
# already made (call 1's bayes_opt / hybrid_vndx runs, and this machine's) travel packed in
# .ktcarry/cache.txz and are skipped (call 1's other runs were made again: their pack was cut
# by that call's limit, and all of them would not travel); only the new ones come back.
# Arguments: LIMIT_S (each batch's).
cd "$(dirname "$0")/../../.."
L=${1:-420}
nproc; python3 --version
bash bench/kt_wheels.sh install .ktwheels /tmp/ktpy > /dev/null || exit 1
C=/tmp/ktcache; mkdir -p $C; xz -dc .ktcarry/cache.txz | tar xf - -C $C; touch /tmp/marker
echo "carried runs: $(find $C -name '*.json' | wc -l)"
export PYTHONPATH=/tmp/ktpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
run() { # NAME JOBS ARGS...
    local n=$1 j=$2; shift 2
    timeout "$L" python3 bench/search_vs_kerneltuner.py --kt-runs-only --hub space_defs/data/benchmark_hub \
        --cachefiles .kthub/cachefiles --kt-budgets .kthub/budgets.json --kt-cache $C \
        --work "/tmp/ktw-$n" --out "/tmp/kto-$n" --jobs "$j" "$@" > "$OUT/$n.log" 2>&1
    echo "$n: rc $? $(grep -c distinct "$OUT/$n.log") runs"
}
run fast 20 --pairs all --seeds 20 --kt-strategies \
    random_sample,genetic_algorithm,dual_annealing,simulated_annealing,diff_evo,pso,firefly_algorithm,basinhopping,greedy_ils,mls,adaptive_tabu_greywolf &
run bo 12 --pairs convolution_milo/A100,dedispersion_milo/A100,dedispersion_milo/W7800 \
    --kt-strategies bayes_opt,hybrid_vndx --seeds 20 &
run small 30 --pairs convolution_milo/W6600,convolution_milo/W7800,convolution_milo/MI250X,convolution_milo/A4000,convolution_milo/A6000,dedispersion_milo/A4000,dedispersion_milo/MI250X,dedispersion_milo/A6000,dedispersion_milo/W6600 \
    --kt-strategies bayes_opt,hybrid_vndx --kt-evals-only bayes_opt@dedispersion_milo/W6600 --seeds 20 &
wait
(cd $C && find . -name '*.json' -newer /tmp/marker | tar cf - -T - | xz -T0 -3 > "$OUT/new.txz")
echo "new runs: $(xz -dc "$OUT/new.txz" | tar tf - | wc -l)"
