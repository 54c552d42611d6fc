#!/usr/bin/env bash
# Records a sweep of one kernel at one shape on the GPU, in pieces that fit the device tool's
# 10-minute command limit: every call resumes sweeps/<kernel>.tsv (in the repository tree, not
# ignored by git, so the file travels with the tree to the next call) and stops at the time
# limit. Spaces of at most 3600 valid configs are swept exhaustively (every valid config);
# larger ones get 2000 uniform random configs (seed 1: the same sample on every resume).
# EXHAUSTIVE_MAX=N raises (or lowers) that 3600: a space of up to N valid configs is swept
# whole (convolution_milo's 4362 imported from benchmark_hub, say, as a replayable space).
#
# usage: bench/record_sweeps.sh KERNEL [SHAPE] [--time-limit S]      (from the repository root)
#   SHAPE   as `amk space --help` (M=4096,N=4096,dtype=bf16 or a shape name); default: the
#           spec's default shape
#   --time-limit S   seconds after which no new batch starts (default 540); the batch in
#           flight may finish up to 45 s later, then the loop is stopped
# env:   AMK (build/amk), OUT (where the file is copied at the end; default: none),
#        BACKEND (gpu; `model` only to try the script without a GPU, never for data/),
#        JOBS (nproc), GPU_BATCH (8), AMK_BENCH_WINDOW_MS (30), AMK_BENCH_MIN_REPS (10):
#        shorter benchmark windows than a loop's defaults (100 ms, 20 reps); the median of
#        >= 10 cold-L2 launches still ranks configs well apart from their spread.
#        AMK_BENCH_SCREEN=0 always: a recorded sweep is replayed as the truth for every
#        config, so none may be cut short for losing to the loop's incumbent.
# Each call prints: rows done / valid configs (or / 2000 sampled) and whether it is complete.
# After a call, copy $OUT/<kernel>.tsv back to sweeps/<kernel>.tsv before the next one.
set -u
AMK=${AMK:-build/amk}
JOBS=${JOBS:-$(nproc)}
BATCH=${GPU_BATCH:-8}
BACKEND=${BACKEND:-gpu}
export AMK_BENCH_WINDOW_MS=${AMK_BENCH_WINDOW_MS:-30}
export AMK_BENCH_MIN_REPS=${AMK_BENCH_MIN_REPS:-10}
export AMK_BENCH_SCREEN=0
EXHAUSTIVE_MAX=${EXHAUSTIVE_MAX:-3600}
case $EXHAUSTIVE_MAX in ''|*[!0-9]*) echo "record_sweeps: EXHAUSTIVE_MAX wants a count, not '$EXHAUSTIVE_MAX'" >&2; exit 1 ;; esac
RANDOM_COUNT=2000

kernel="" shape="" limit=540
while [ $# -gt 0 ]; do
    case $1 in
        --time-limit) limit=${2:?--time-limit needs seconds}; shift 2 ;;
        --time-limit=*) limit=${1#*=}; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "record_sweeps: unknown option $1" >&2; exit 1 ;;
        *) if [ -z "$kernel" ]; then kernel=$1; elif [ -z "$shape" ]; then shape=$1;
           else echo "record_sweeps: unexpected argument $1" >&2; exit 1; fi; shift ;;
    esac
done
if [ -z "$kernel" ]; then
    echo "usage: bench/record_sweeps.sh KERNEL [SHAPE] [--time-limit S]" >&2
    exit 1
fi
case $limit in ''|*[!0-9]*) echo "record_sweeps: --time-limit wants whole seconds, not '$limit'" >&2; exit 1 ;; esac

mkdir -p sweeps
file=sweeps/$kernel.tsv
shape_args=()
[ -n "$shape" ] && shape_args=(--shape "$shape")

# The valid configs of the space, and the canonical shape string the results rows carry.
space=$("$AMK" space "$kernel" "${shape_args[@]}" --exact --quiet) || {
    echo "record_sweeps: amk space $kernel ${shape_args[*]} failed" >&2; exit 2; }
read -r canon valid <<<"$(python3 -c 'import json,sys; s = json.load(sys.stdin); print(s["shape"], s["valid_count"])' <<<"$space")"

# Rows already in the file for this kernel and shape (every status counts: a config that
# failed was evaluated, and --resume will not propose it again).
done_rows() {
    [ -s "$file" ] || { echo 0; return; }
    awk -F'\t' -v k="$kernel" -v s="$canon" 'NR > 2 && (NF == 19 || NF == 31 || NF == 34 || NF == 35) && $3 == k && $4 == s' "$file" | wc -l
}

if (( valid <= EXHAUSTIVE_MAX )); then
    strategy=exhaustive target=$valid
else
    # The sample, plus the spec's default config: every sweep holds the default, so a
    # report can say how much tuning gains over it (an exhaustive sweep holds it already).
    strategy=random target=$(( RANDOM_COUNT + 1 ))
    "$AMK" propose "$kernel" "${shape_args[@]}" --quiet >"${TMPDIR:-/tmp}/record_sweeps_$kernel.default.json" || {
        echo "record_sweeps: amk propose $kernel failed" >&2; exit 2; }
    def_id=$(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))
print(p["config_id"] if p["source"] == "default" else "")' "${TMPDIR:-/tmp}/record_sweeps_$kernel.default.json")
    if [ -z "$def_id" ]; then
        echo "record_sweeps: the spec's default config of $kernel is not valid at $canon; not recorded"
        target=$RANDOM_COUNT
    elif ! { [ -s "$file" ] && awk -F'\t' -v id="$def_id" -v s="$canon" '$5 == id && $4 == s { f = 1 } END { exit !f }' "$file"; }; then
        echo "record_sweeps: recording the spec's default config $def_id first"
        "$AMK" evaluate "${TMPDIR:-/tmp}/record_sweeps_$kernel.default.json" --backend "$BACKEND" \
            --results "$file" --quiet >/dev/null ||
            { echo "record_sweeps: amk evaluate of the default config failed" >&2; exit 2; }
    fi
fi
before=$(done_rows)
left=$(( target - before ))
echo "record_sweeps: $kernel at $canon: $valid valid configs -> $strategy, $before/$target rows in $file"
rc=0
if (( left > 0 )); then
    echo "record_sweeps: up to $left trials, --time ${limit}s, window ${AMK_BENCH_WINDOW_MS} ms / >= ${AMK_BENCH_MIN_REPS} reps"
    timeout -k 10 $(( limit + 45 )) "$AMK" loop "$kernel" "${shape_args[@]}" --strategy "$strategy" \
        --budget "$left" --time "${limit}s" --seed 1 --resume --results "$file" \
        --best "${TMPDIR:-/tmp}/record_sweeps_$kernel.best.json" --backend "$BACKEND" \
        --batch "$BATCH" --jobs "$JOBS" --quiet >"${TMPDIR:-/tmp}/record_sweeps_$kernel.json"
    rc=$?
    case $rc in
        0) ;;
        124|137) echo "record_sweeps: stopped at the hard cap ($(( limit + 45 )) s); the batch in flight was lost" ;;
        *) echo "record_sweeps: amk loop exited $rc" ;;
    esac
fi
after=$(done_rows)
if [ -s "$file" ]; then
    awk -F'\t' -v k="$kernel" -v s="$canon" 'NR > 2 && (NF == 19 || NF == 31 || NF == 34 || NF == 35) && $3 == k && $4 == s { n[$8]++ }
        END { printf "record_sweeps: by status:"; for (st in n) printf " %s %d", st, n[st]; print "" }' "$file"
fi
if (( after >= target )); then
    state="complete"
else
    state="incomplete: run the same command again (after copying the file back)"
fi
echo "record_sweeps: $kernel $canon: $after/$target rows (+$(( after - before )) this call), $state"
if [ -n "${OUT:-}" ] && [ -s "$file" ]; then
    mkdir -p "$OUT" && cp "$file" "$OUT/$kernel.tsv" && echo "record_sweeps: copied to $OUT/$kernel.tsv"
fi
exit "$rc"
