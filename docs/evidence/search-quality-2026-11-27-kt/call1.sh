#!/bin/bash
# Kernel Tuner's runs on the device machine's CPU cores (no GPU used): three batches side by
# side, each into its own cache, packed for the trip back. Scored here with --kt-cached-only.
# Needs .ktwheels (bench/kt_wheels.sh fetch) and .kthub (the 12 cachefiles, budgets.json of
# a scoring run) carried. Arguments: SKOPT_FIRST SKOPT_SEEDS LIMIT_S
cd "$(dirname "$0")/../../.."
F=${1:-1} N=${2:-3} L=${3:-540}
nproc; python3 --version
bash bench/kt_wheels.sh install .ktwheels /tmp/ktpy > /dev/null || exit 1
export PYTHONPATH=/tmp/ktpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
run() { # NAME JOBS ARGS...
    local n=$1 j=$2; shift 2
    timeout "$L" python3 bench/search_vs_kerneltuner.py --kt-runs-only --hub space_defs/data/benchmark_hub \
        --cachefiles .kthub/cachefiles --kt-budgets .kthub/budgets.json --kt-cache "$OUT/$n" \
        --work "/tmp/ktw-$n" --out "/tmp/kto-$n" --jobs "$j" "$@" > "$OUT/$n.log" 2>&1
    echo "$n: rc $? $(grep -c distinct "$OUT/$n.log") runs"
}
run skopt 36 --pairs all --kt-strategies skopt --first-seed "$F" --seeds "$N" &
run bo 12 --pairs convolution_milo/A100,dedispersion_milo/A100,dedispersion_milo/W7800 \
    --kt-strategies bayes_opt,hybrid_vndx --seeds 20 &
run fast 16 --pairs all --seeds 20 --kt-strategies \
    random_sample,genetic_algorithm,dual_annealing,simulated_annealing,diff_evo,pso,firefly_algorithm,basinhopping,greedy_ils,mls,adaptive_tabu_greywolf &
wait
for n in skopt bo fast; do
    [ -d "$OUT/$n" ] && tar cJf "$OUT/$n.txz" -C "$OUT" "$n" && rm -rf "${OUT:?}/$n"
done
ls -la "$OUT"
