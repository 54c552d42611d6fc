#!/usr/bin/env bash
# Do two amk builds propose the same configs? The search's fingerprint: for seeds 1-3, evolve
# on replays of convolution_milo A100 and MI250X and dedispersion_milo A100 (400 trials,
# `--backend sim:` of the shipped cachefiles, their T1 spaces imported as
# bench/search_vs_kerneltuner.py imports them) and on gemm_milo's space with the model backend
# (1500 trials): 12 runs per build. The results.tsv columns config_id and source, in trial
# order, must match run for run. Builds nothing; a change meant to leave every number of the
# search as it was (a faster surrogate, say) is checked with main's amk against its own.
#   bench/fingerprint_search.sh AMK_A AMK_B [WORK]
# Prints IDENTICAL (exit 0) or the first difference (exit 1); 2 on bad use or a failed run.
# The specs are imported by AMK_A, so only the searches are compared. WORK: scratch folder
# (default a temporary one, removed at the end). STRATEGY (default evolve) picks another.
set -euo pipefail
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HUB=$ROOT/space_defs/data/benchmark_hub
A=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
B=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
STRATEGY=${STRATEGY:-evolve}
if [ $# -ge 3 ]; then
    WORK=$3
    mkdir -p "$WORK"
else
    # tmpfs when there is one: every trial's row is made durable (an fsync each)
    WORK=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/amk-fp.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
fi

mkdir -p "$WORK/specs"
for k in convolution_milo dedispersion_milo gemm_milo; do
    if [ ! -f "$WORK/specs/$k/spec.json" ]; then
        if ! "$A" --quiet import "$HUB/spaces/$k.json" -o "$WORK/specs/$k" >/dev/null \
                2>"$WORK/err"; then
            cat "$WORK/err" >&2
            exit 2
        fi
    fi
done

# kernel, backend, trials of each run
RUNS="convolution_milo sim:$HUB/cachefiles/convolution_milo/A100.json.gz 400
convolution_milo sim:$HUB/cachefiles/convolution_milo/MI250X.json.gz 400
dedispersion_milo sim:$HUB/cachefiles/dedispersion_milo/A100.json.gz 400
gemm_milo model 1500"

# config_id and source of each row, in trial order
ids() {
    awk -F'\t' '/^#/ { next } !cols { for (i = 1; i <= NF; i++) c[$i] = i; cols = 1; next }
                { print $c["trial"] "\t" $c["config_id"] "\t" $c["source"] }' "$1"
}

n=0
while read -r kernel backend trials; do
    for seed in 1 2 3; do
        n=$((n + 1))
        name="$kernel ${backend##*/} seed $seed"
        for who in A B; do
            bin=$A
            [ $who = B ] && bin=$B
            out="$WORK/run$n.$who.tsv"
            rm -f "$out" "$WORK/best$n.$who.json"
            if ! "$bin" --quiet loop "$kernel" --spec-dir "$WORK/specs/$kernel" \
                    --backend "$backend" --strategy "$STRATEGY" --seed "$seed" \
                    --budget "$trials" --results "$out" --best "$WORK/best$n.$who.json" \
                    >/dev/null 2>"$WORK/err"; then
                echo "$name: amk $who failed:" >&2
                cat "$WORK/err" >&2
                exit 2
            fi
            ids "$out" >"$WORK/ids$n.$who"
        done
        rows=$(wc -l <"$WORK/ids$n.A")
        if [ "$rows" -ne "$trials" ]; then
            echo "$name: $rows rows, not $trials" >&2
            exit 2
        fi
        if ! cmp -s "$WORK/ids$n.A" "$WORK/ids$n.B"; then
            echo "DIFFERENT: $name, first differing row (trial, config_id, source):"
            diff "$WORK/ids$n.A" "$WORK/ids$n.B" | sed -n '2p;/^---/{n;p;q}' \
                | sed 's/^</  A:/; s/^>/  B:/'
            exit 1
        fi
    done
done <<<"$RUNS"
echo "IDENTICAL ($n runs, $STRATEGY)"
