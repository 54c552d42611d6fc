#!/bin/bash
# Kernel Tuner 1.5's bayes_opt and hybrid_vndx runs (the slow ones) on the 12 benchmark_hub
# pairs, 20 seeds, in both presentations of each T1 space (as written, and with
# --values-reversed), on the device machine's CPU cores; no GPU is used. The other 11
# strategies' runs were made here (README.md). Runs carried in .ktdev/carry.txz (an earlier
# call's) are skipped; only new ones come back, in $OUT/new.txz. Calls: `device-kt.sh 540`
# (bayes_opt, hybrid_vndx), `device-kt.sh 380 rest` (the runs the first one's limit cut),
# `device-kt.sh 400 fast-reversed` (the other 11 strategies, reversed presentation).
# Needs, carried (64 MiB with the tree): .ktdev: cf7.txz (the 7 cachefiles the repository
# does not ship, decompressed, xz), budgets-json.json (a scoring run's budgets.json with the
# digests of the decompressed files: Kernel Tuner's runs are cached under the cachefile's
# digest, README.md), the wheels of `bench/kt_wheels.sh fetch .ktdev/wheels` less
# scikit-optimize, pyaml and PyYAML (skopt is not run). Argument: LIMIT_S (each group's).
cd "$(dirname "$0")/../../.."
L=${1:-560}
nproc; python3 --version
bash bench/kt_wheels.sh install .ktdev/wheels /tmp/ktpy > /dev/null || exit 1
C=/tmp/ktcache; mkdir -p $C
CF=/tmp/cf; mkdir -p $CF/convolution_milo $CF/dedispersion_milo
xz -dc .ktdev/cf7.txz | tar xf - -C $CF
for f in space_defs/data/benchmark_hub/cachefiles/*/*.json.gz; do # the 5 shipped
    case $f in *_T4.json.gz) continue ;; esac
    r=${f#space_defs/data/benchmark_hub/cachefiles/}
    gzip -dc "$f" > "$CF/${r%.gz}"
done
ls $CF/*
[ -f .ktdev/carry.txz ] && xz -dc .ktdev/carry.txz | tar xf - -C $C
touch /tmp/marker
echo "carried runs: $(find $C -name '*.json' | wc -l)"
export PYTHONPATH=/tmp/ktpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
run() { # NAME JOBS ARGS...
    local n=$1 j=$2; shift 2
    timeout "$L" python3 bench/search_vs_kerneltuner.py --kt-runs-only --hub space_defs/data/benchmark_hub \
        --cachefiles $CF --kt-budgets .ktdev/budgets-json.json --kt-cache $C \
        --work "/tmp/ktw-$n" --out "/tmp/kto-$n" --jobs "$j" --seeds 20 \
        --kt-strategies bayes_opt,hybrid_vndx "$@" > "$OUT/$n.log" 2>&1
    echo "$n: rc $? $(grep -c distinct "$OUT/$n.log") runs"
}
SLOW=dedispersion_milo/W6600,dedispersion_milo/W7800,convolution_milo/A100,dedispersion_milo/MI250X,dedispersion_milo/A100
SMALL=convolution_milo/A4000,convolution_milo/A6000,convolution_milo/MI250X,convolution_milo/W6600,convolution_milo/W7800,dedispersion_milo/A4000,dedispersion_milo/A6000
EV="--kt-evals-only bayes_opt@dedispersion_milo/W6600"
FAST=random_sample,genetic_algorithm,dual_annealing,simulated_annealing,diff_evo,pso,firefly_algorithm,basinhopping,greedy_ils,mls,adaptive_tabu_greywolf
if [ "${2:-}" = fast-reversed ]; then
    # the third call: the 11 other strategies' runs of the reversed presentation (the ones
    # as written were made here, README.md)
    run fast-reversed "$(nproc)" --pairs all --kt-strategies $FAST --values-reversed &
elif [ "${2:-}" = rest ]; then
    # the second call: the 8 hybrid_vndx runs (120-250 s each) the first one's limit cut
    H="--kt-strategies hybrid_vndx"
    run w66 1 --pairs dedispersion_milo/W6600 --first-seed 20 --seeds 1 $H &
    run w78 3 --pairs dedispersion_milo/W7800 --first-seed 18 --seeds 3 $H &
    run w66-r 1 --pairs dedispersion_milo/W6600 --first-seed 20 --seeds 1 $H --values-reversed &
    run w78-r 2 --pairs dedispersion_milo/W7800 --first-seed 19 --seeds 2 $H --values-reversed &
    run a100-r 1 --pairs convolution_milo/A100 --first-seed 19 --seeds 1 $H --values-reversed &
else
    run slow-as-written 24 --pairs $SLOW $EV &
    run slow-reversed 24 --pairs $SLOW $EV --values-reversed &
    run small-as-written 8 --pairs $SMALL &
    run small-reversed 8 --pairs $SMALL --values-reversed &
fi
wait
(cd $C && find . -name '*.json' -newer /tmp/marker | tar cf - -T - | xz -T0 -3 > "$OUT/new.txz")
echo "new runs: $(xz -dc "$OUT/new.txz" | tar tf - | wc -l)"
