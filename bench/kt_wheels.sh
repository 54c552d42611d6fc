#!/usr/bin/env bash
# Kernel Tuner for a machine without a package registry (the GPU machine), so that
# `KT_COMPARE=1 bench/kt_examples.sh` can run Kernel Tuner beside amk there.
#
#   bash bench/kt_wheels.sh fetch DIR            where PyPI is reachable: the wheels into DIR
#   bash bench/kt_wheels.sh install DIR TARGET   on the machine, offline: the wheels of DIR
#                                                into TARGET; then PYTHONPATH=TARGET
#
# Only what the GPU machine lacks is fetched: Kernel Tuner and the packages its import and
# its brute-force tuning need (python-constraint2, jsonschema and its four dependencies,
# xmltodict), and scikit-optimize with pyaml and PyYAML for its skopt strategy (its runs for
# the search benchmark: bench/search_vs_kerneltuner.py --kt-runs-only on that machine's
# cores). numpy, scipy, scikit-learn, pandas, packaging, attrs, typing_extensions and cupy
# are there. pymoo, which kernel_tuner 1.5.0 declares, is left out with its own
# dependencies: only its pymoo strategies import it. Hence `--no-deps` on both ends. Where
# the target python has no pip, install unpacks the wheels (also with KT_WHEELS_UNZIP=1).
# Environment: KT_WHEELS_PY (the target CPython, default 3.12),
# KT_WHEELS_PLATFORM (default manylinux2014_x86_64 and manylinux_2_17_x86_64), PYTHON
# (default python3).
set -euo pipefail
PYTHON=${PYTHON:-python3}
PY=${KT_WHEELS_PY:-3.12}
PKGS=(kernel_tuner==1.5.0 python-constraint2==2.9.0 jsonschema==4.26.0 referencing==0.37.0
      rpds-py==2026.9.1 jsonschema-specifications==2025.9.1 xmltodict==1.0.4
      scikit-optimize==0.10.2 pyaml==26.7.0 PyYAML==6.0.4)

fetch() {
    local dir=$1 plat=()
    for p in ${KT_WHEELS_PLATFORM:-manylinux2014_x86_64 manylinux_2_17_x86_64}; do
        plat+=(--platform "$p")
    done
    mkdir -p "$dir"
    "$PYTHON" -m pip download --no-deps --only-binary=:all: --implementation cp \
        --python-version "$PY" "${plat[@]}" -d "$dir" "${PKGS[@]}"
    echo "kt_wheels: $(find "$dir" -maxdepth 1 -name "*.whl" | wc -l) wheels, $(du -sh "$dir" | cut -f1) in $dir" >&2
}

install() {
    local dir=$1 target=$2
    if [ -z "${KT_WHEELS_UNZIP:-}" ] && "$PYTHON" -m pip --version >/dev/null 2>&1; then
        "$PYTHON" -m pip install --no-index --no-deps --disable-pip-version-check \
            --target "$target" "$dir"/*.whl
    else
        # A venv made without pip (uv's): these wheels have no .data and no scripts that
        # matter, so unpacking them into TARGET is their installation.
        mkdir -p "$target"
        for w in "$dir"/*.whl; do "$PYTHON" -m zipfile -e "$w" "$target"; done
    fi
    PYTHONPATH="$target${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -c \
        'import kernel_tuner; print("kt_wheels: kernel_tuner", kernel_tuner.__version__, "imports")'
}

case "${1:-}" in
fetch) fetch "$2" ;;
install) install "$2" "$3" ;;
*) sed -n "2,18p" "$0" >&2; exit 2 ;;
esac
