#!/usr/bin/env bash
# The Python package on a GPU machine that has no GSL/cJSON headers and another Python than
# the build machine (the device tool's H100: Python 3.12, torch): compiles amk._amk for the
# python3 found there from python/amk/_amk.c and _launch.c (amk.torch's launcher) against a
# libamk.a built elsewhere (carried in LIBDIR with the GSL/cJSON run-time libraries of
# .device-libs), into DEST/amk with the package's .py files; then PYTHONPATH=DEST imports it.
# usage: bench/python_device.sh LIBAMK_A DEST      from the repository root
set -euo pipefail
lib=$1 dest=$2
py=${PYTHON:-python3}
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
[ -f "$inc/Python.h" ] || { echo "python_device: no Python.h under $inc" >&2; exit 1; }
mkdir -p "$dest/amk"
cp python/amk/*.py "$dest/amk/"
dl=$PWD/.device-libs/lib
cuda=${CUDA_LIB:-/usr/local/cuda/lib64}
gcc -O2 -shared -fPIC -std=c11 -D_GNU_SOURCE -I"$inc" -Icommon -Ispace_defs -Icost_model \
    -Ievaluator -Isearch -Iresults python/amk/_amk.c python/amk/_launch.c "$lib" \
    "$dl/libgsl.so.27" "$dl/libgslcblas.so.0" "$dl/libcjson.so.1" -l:libz.so.1 \
    -L"$cuda" -lcudart -lnvrtc -ldl -lpthread -lm -o "$dest/amk/_amk$suffix"
echo "python_device: built $dest/amk/_amk$suffix for $("$py" --version 2>&1)"
