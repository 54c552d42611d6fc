#!/usr/bin/env bash
# Kernel Tuner's own CUDA examples run by amk: only `import kernel_tuner` is rewritten into
# `import amk as kernel_tuner` (and `from kernel_tuner...` into `from amk...`); each tune_kernel
# call is then re-run exhaustively by amk and the example's best compared with it (issue 22:
# within 5 %). The examples are fetched at run time, never committed.
#
#   bash bench/kt_examples.sh fetch DIR      on a machine with network: Kernel Tuner's source
#                                            into DIR (GitHub tarball of $KT_VERSION, default
#                                            1.0; or $KT_SRC: a checkout, a bare git
#                                            directory (its HEAD), or a source tarball)
#   bash bench/kt_examples.sh run DIR [OUT]  on the GPU machine (no network needed): runs the
#                                            examples of DIR/examples/cuda with the amk of
#                                            $AMK_BUILD/python (default build/) or the one
#                                            installed, writes OUT (default kt_examples.json)
#   bash bench/kt_examples.sh [OUT]          both, in a temporary folder
# Environment: PYTHON (default python3; needs numpy), KT_EXAMPLES (default: vector_add matmul
# convolution reduction pnpoly). AMK_TUNE_KERNEL_BACKEND=model runs every call on amk's cost
# model (no GPU: checks that the examples' arguments reach the engine). KT_SMOKE=N tunes a
# fixed sample of N configs per call (drawn with seed KT_SEED, default 1, from the valid
# configs of at most 1024 threads; brute force over it, not the example's strategy) and
# skips the exhaustive re-run (a quick check, not a result); KT_FULL="1 2" leaves those calls
# (1-based) as written. A call that is brute force without a budget (Kernel Tuner's default:
# reduction's 12 calls) is its own exhaustive run: not re-run. Each call prints a line on
# stderr as it ends (configs, wall seconds, seconds per config, best). KT_DEADLINE_S=S kills
# an example still running S seconds after the start and keeps the calls it finished
# (status "timeout"): for a device call with a time limit.
# AMK_LOG=debug: each example's JSON gets amk's engine_log (the run worker's phases summed
# over its jobs, each backend opening and closing and device query, in seconds).
# KT_COMPARE=1 also runs the unmodified example under Kernel Tuner (it must import: see
# bench/kt_wheels.sh for a machine without a registry) and prints per call both tuners'
# seconds per config: each call of both runs brute force over the same list (KT_SMOKE's
# sample, else every valid config), given to both as one more restriction; amk's
# exhaustive re-run is skipped. KT_LANG=cupy passes lang="cupy" to Kernel Tuner's calls (its
# CuPy backend; the only other change to the example). KT_SIMULATE=1 (with KT_COMPARE=1, no
# GPU needed): amk writes a cachefile per call, Kernel Tuner replays it in simulation_mode,
# which exercises the comparison's code and Kernel Tuner's side of the restriction.
# Exit 0 when every example ran and reached 5 % of the exhaustive best (KT_COMPARE: ran under
# both with the same configs); 1 otherwise (the JSON says which and why: an unsupported
# argument is named).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
PYTHON=${PYTHON:-python3}
KT_VERSION=${KT_VERSION:-1.0}

fetch() {
    local dir=$1
    mkdir -p "$dir"
    if [ -n "${KT_SRC:-}" ]; then
        if [ -f "$KT_SRC/HEAD" ] && [ -d "$KT_SRC/objects" ]; then  # a git directory
            git --git-dir="$KT_SRC" archive HEAD | tar x -C "$dir"
        elif [ -d "$KT_SRC" ]; then
            cp -r "$KT_SRC"/. "$dir"/
        else
            tar xzf "$KT_SRC" -C "$dir" --strip-components=1
        fi
    elif curl -fsSL "https://codeload.github.com/KernelTuner/kernel_tuner/tar.gz/refs/tags/$KT_VERSION" \
            -o "$dir/kt.tar.gz" 2>/dev/null; then
        tar xzf "$dir/kt.tar.gz" -C "$dir" --strip-components=1
        rm -f "$dir/kt.tar.gz"
    else
        # PyPI's sdists carry no examples (checked for 0.2.0 to 1.5.0); say what to do.
        echo "kt_examples: cannot download Kernel Tuner $KT_VERSION from GitHub; set KT_SRC to a" \
             "kernel_tuner checkout or source tarball" >&2
        return 1
    fi
    [ -d "$dir/examples/cuda" ] ||
        { echo "kt_examples: $dir has no examples/cuda" >&2; return 1; }
    echo "kt_examples: Kernel Tuner's examples in $dir/examples/cuda" >&2
}

run() {
    local dir=$1 out=${2:-kt_examples.json}
    local build=${AMK_BUILD:-$root/build}
    if [ -d "$build/python/amk" ]; then
        export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
    fi
    "$PYTHON" -c 'import amk, numpy' ||
        { echo "kt_examples: $PYTHON cannot import amk and numpy (build amk, or pip install .)" >&2
          return 1; }
    if [ "${KT_COMPARE:-}" = 1 ]; then
        "$PYTHON" -c 'import kernel_tuner' ||
            { echo "kt_examples: KT_COMPARE=1 but $PYTHON cannot import kernel_tuner (offline:" \
                   "bench/kt_wheels.sh)" >&2; return 1; }
    fi
    "$PYTHON" "$here/kt_examples.py" "$dir/examples/cuda" "$out" ${KT_EXAMPLES:-}
}

case "${1:-}" in
fetch) fetch "$2" ;;
run) run "$2" "${3:-}" ;;
*)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    fetch "$tmp/kt"
    run "$tmp/kt" "${1:-kt_examples.json}"
    ;;
esac
