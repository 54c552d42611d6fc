#!/usr/bin/env bash
# Install test: configures a fresh Release build of amk (no tests) with a temporary prefix,
# runs `cmake --install`, then checks the installed tree:
#   - every public header compiles on its own with `pkg-config --cflags amk`;
#   - tests/consumer builds and runs against it through find_package(amk) (amk::amk, the
#     shared library, and amk::amk_static) and through `pkg-config --cflags --libs amk`;
#   - the installed `amk` finds the installed kernels (compiled-in share/amk/kernels path);
#   - the man page and the data dir are installed.
# usage: install_consumer.sh SOURCE_DIR WORK_DIR [extra cmake -D options for amk's build]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
shift 2
jobs=${AMK_TEST_JOBS:-2}

fail() { echo "install_consumer: FAIL: $*" >&2; exit 1; }
step() { echo "install_consumer: $*"; }

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
# The shell's own environment must not find another amk or redirect the kernels.
unset AMK_KERNELS_DIR AMK_DATA_DIR
export AMK_CACHE_DIR=$work/cache

step "configure + build amk (Release, no tests) for prefix $prefix"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DAMK_BUILD_TESTS=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" "$@" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/build" -j"$jobs" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log"; fail "build"; }
cmake --install "$work/build" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "install"; }

step "installed tree"
libdir=$(sed -n 's/^libdir=//p' "$work/build/amk.pc")
[ -n "$libdir" ] || fail "no libdir in amk.pc"
for f in "$libdir/libamk.a" "$libdir/libamk.so.0" "$libdir/cmake/amk/amkConfig.cmake" \
         "$libdir/cmake/amk/amkConfigVersion.cmake" "$libdir/cmake/amk/amkTargets.cmake" \
         "$libdir/pkgconfig/amk.pc" "$prefix/bin/amk" "$prefix/share/man/man1/amk.1" \
         "$prefix/share/amk/kernels/gemm/spec.json"; do
    [ -e "$f" ] || fail "not installed: $f"
done
[ -d "$prefix/share/amk/data" ] || fail "not installed: $prefix/share/amk/data"
for h in amk_common amk_space_defs amk_cost_model amk_results amk_evaluator amk_search; do
    [ -f "$prefix/include/amk/$h.h" ] || fail "not installed: include/amk/$h.h"
done

export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cc=${CC:-cc}
cflags=$(pkg-config --cflags amk) || fail "pkg-config --cflags amk"
step "pkg-config --cflags amk: $cflags"

step "public headers speak amk types: no cJSON or GSL include or type"
bad=$(grep -nE '^#include <(cjson|gsl)|cJSON \*|gsl_[a-z_]+ \*' "$prefix"/include/amk/*.h || true)
[ -z "$bad" ] || fail "an installed header exposes cJSON or GSL: $bad"

step "each public header compiles alone"
for h in "$prefix"/include/amk/amk_*.h; do
    printf '#include <%s>\nint main(void) { return 0; }\n' "$(basename "$h")" >"$work/hdr.c"
    # shellcheck disable=SC2086
    "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only $cflags "$work/hdr.c" ||
        fail "$(basename "$h") is not self-contained"
done
# The headers include each other by bare name, so <amk/amk_search.h> with -I<prefix>/include
# works too.
printf '#include <amk/amk_search.h>\nint main(void) { return 0; }\n' >"$work/hdr.c"
# shellcheck disable=SC2086
"$cc" -std=c11 -fsyntax-only -I"$prefix/include" $(pkg-config --cflags gsl libcjson) \
    "$work/hdr.c" || fail "#include <amk/amk_search.h> does not compile"

run_consumer() { # NAME BINARY
    step "run consumer ($1)"
    (cd "$work" && "$2" gemm) >"$work/$1.out" 2>&1 || { cat "$work/$1.out"; fail "consumer ($1)"; }
    cat "$work/$1.out"
    grep -q '^consumer: ok$' "$work/$1.out" || fail "consumer ($1) did not say ok"
    grep -q ' gemm' "$work/$1.out" || fail "consumer ($1) did not list gemm"
}

for kind in shared static; do
    step "consumer via find_package(amk) ($kind)"
    static=OFF
    [ "$kind" = static ] && static=ON
    cmake -S "$src/tests/consumer" -B "$work/consumer-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
        -DAMK_CONSUMER_STATIC=$static -DCMAKE_BUILD_TYPE=Release >"$work/consumer-$kind.log" 2>&1 ||
        { cat "$work/consumer-$kind.log"; fail "consumer configure ($kind)"; }
    cmake --build "$work/consumer-$kind" >>"$work/consumer-$kind.log" 2>&1 ||
        { cat "$work/consumer-$kind.log"; fail "consumer build ($kind)"; }
    run_consumer "cmake-$kind" "$work/consumer-$kind/consumer"
done
if command -v readelf >/dev/null 2>&1; then
    readelf -d "$work/consumer-shared/consumer" | grep -q 'libamk\.so' ||
        fail "amk::amk did not link the shared libamk.so"
fi

step "consumer via pkg-config --cflags --libs amk"
libs=$(pkg-config --libs amk) || fail "pkg-config --libs amk"
step "pkg-config --libs amk: $libs"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror $cflags -o "$work/consumer-pc" \
    "$src/tests/consumer/consumer.c" $libs -lm || fail "consumer build (pkg-config)"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run_consumer pkg-config "$work/consumer-pc"
step "consumer via pkg-config --static --libs amk"
slibs=$(pkg-config --static --libs amk) || fail "pkg-config --static --libs amk"
# shellcheck disable=SC2086
"$cc" -std=c11 $cflags -o "$work/consumer-pc-static" "$src/tests/consumer/consumer.c" \
    "$libdir/libamk.a" $(echo " $slibs " | sed 's/ -lamk / /') || fail "consumer build (pkg-config --static)"
run_consumer pkg-config-static "$work/consumer-pc-static"

step "installed amk list"
(cd "$work" && "$prefix/bin/amk" list) >"$work/list.json" 2>"$work/list.err" ||
    { cat "$work/list.err"; fail "installed amk list"; }
grep -q '"name": *"gemm"' "$work/list.json" || fail "installed amk list has no gemm"
grep -q "\"dir\": *\"$prefix/share/amk/kernels/" "$work/list.json" ||
    { cat "$work/list.json"; fail "installed amk does not read the installed kernels"; }
"$prefix/bin/amk" --version
step "ok"
