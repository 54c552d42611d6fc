#!/usr/bin/env bash
# Exhaustive check of the prelude's packed fp8 e4m3 conversion on an sm_89+ GPU: for every
# f32 bit pattern f (paired with a second pattern g), amk_fp8e4m3x2_from_float(f, g) (the
# hardware cvt.rn.satfinite.e4m3x2.f32 path) against two calls of the software
# amk_fp8e4m3_from_float that the reference kernel uses. Prints the mismatches, split into
# pairs with a NaN (expected: the hardware NaN code may lose the sign) and all others (must
# be 0: finite values, +-inf, saturation, ties, subnormals), then exits 1 if any "other".
# usage: bench/fp8_cvt_check.sh   (from the repository root, after the build; needs nvcc;
#        env OUT, ARCH=sm_90, BUILD=build: the folder with libamk.so)
set -eu
OUT=${OUT:-/tmp/amk-fp8cvt}
ARCH=${ARCH:-sm_90}
BUILD=${BUILD:-build}
mkdir -p "$OUT"
command -v nvcc >/dev/null || { echo "fp8_cvt_check: no nvcc on PATH" >&2; exit 4; }
[ -e "$BUILD/libamk.so" ] || { echo "fp8_cvt_check: no $BUILD/libamk.so (set BUILD)" >&2; exit 4; }

# The prelude text, exactly as the evaluator prepends it to every kernel, from the built
# library: prelude.c's headers need cJSON's, which a device machine may lack; the library's
# own dependencies resolve at run time (LD_LIBRARY_PATH there).
cat >"$OUT/dump.c" <<'EOF'
#include <stdio.h>
const char *amk_prelude(const char *vendor);
int main(void) { fputs(amk_prelude("nvidia"), stdout); return 0; }
EOF
lib=$(cd "$BUILD" && pwd)
cc -O1 -o "$OUT/dump" "$OUT/dump.c" -L"$lib" -lamk -Wl,-rpath,"$lib" \
    -Wl,--allow-shlib-undefined
"$OUT/dump" >"$OUT/check.cu"
cat >>"$OUT/check.cu" <<'EOF'
#include <cstdio>
#include <cstring>
#if defined(__CUDA_ARCH__) && !defined(AMK__FP8E4M3X2_HW)
#error "the prelude took the software path: compile for sm_89 or newer"
#endif
__global__ void check(unsigned long long *n_nan, unsigned long long *n_other, unsigned *first)
{
    const unsigned long long n = 1ull << 32, step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; t < n;
         t += step) {
        const unsigned uf = (unsigned)t, ug = uf * 2654435761u + 0x9e3779b9u;
        const float f = __uint_as_float(uf), g = __uint_as_float(ug);
        const unsigned short hw = amk_fp8e4m3x2_from_float(f, g);
        const unsigned short sw = (unsigned short)(amk_fp8e4m3_from_float(f).bits |
                                                   (amk_fp8e4m3_from_float(g).bits << 8));
        if (hw == sw)
            continue;
        if (f != f || g != g) {
            atomicAdd(n_nan, 1ull);
        } else {
            atomicAdd(n_other, 1ull);
            atomicCAS(first, 0xffffffffu, uf);
        }
    }
}
int main()
{
    unsigned long long *c;
    unsigned *first;
    if (cudaMallocManaged(&c, 2 * sizeof *c) != cudaSuccess ||
        cudaMallocManaged(&first, sizeof *first) != cudaSuccess) {
        printf("fp8_cvt_check: no GPU memory (is there a GPU?)\n");
        return 2;
    }
    c[0] = c[1] = 0;
    *first = 0xffffffffu;
    check<<<132 * 16, 256>>>(c, c + 1, first);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("fp8_cvt_check: kernel failed\n");
        return 2;
    }
    printf("pairs checked: 2^32; mismatches with a NaN: %llu; other mismatches: %llu\n", c[0],
           c[1]);
    if (c[1]) {
        const unsigned uf = *first;
        float f;
        memcpy(&f, &uf, 4);
        printf("first other mismatch: f = %a (0x%08x)\n", f, uf);
    }
    return c[1] ? 1 : 0;
}
EOF
nvcc -O2 -arch="$ARCH" -o "$OUT/check" "$OUT/check.cu"
"$OUT/check"
