/* Correctness gate, host side: element types (f32, f16, bf16, fp8e4m3, int8, ...) as bit
 * patterns, deterministic never-zero inputs from a seed, the NaN poison pattern, and the
 * CK-style tolerance comparison that reports the worst element; large buffers are filled and
 * compared by a few threads, with results that do not depend on their number. No GPU call
 * and nothing of the evaluator: the run worker (../gpu/runtime.c, ../gpu/run_eval.c) moves
 * the bytes, this file decides what they must be. */
#include "numeric_int.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The inputs must be the same bytes on every machine: no fused multiply-add where the
 * compiler would choose it (GCC does not contract in ISO C mode; clang would). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---------- element types ------------------------------------------------------------- */

static const struct {
    const char *name;
    size_t size;
    int is_float;
    double eps; /* distance from 1 to the next value; 1 for integers */
} dtypes[AMK__DT_COUNT] = {
    [AMK__DT_F32] = {"f32", 4, 1, 0x1p-23},
    [AMK__DT_F16] = {"f16", 2, 1, 0x1p-10},
    [AMK__DT_BF16] = {"bf16", 2, 1, 0x1p-7},
    [AMK__DT_FP8E4M3] = {"fp8e4m3", 1, 1, 0x1p-3},
    [AMK__DT_INT8] = {"int8", 1, 0, 1.0},
    [AMK__DT_F64] = {"f64", 8, 1, 0x1p-52},
    [AMK__DT_I32] = {"i32", 4, 0, 1.0},
};

int amk__dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < AMK__DT_COUNT; i++)
        if (strcmp(name, dtypes[i].name) == 0)
            return i;
    if (strcmp(name, "int32") == 0)
        return AMK__DT_I32;
    return -1;
}

const char *amk__dtype_name(int dt)
{
    return (unsigned)dt < AMK__DT_COUNT ? dtypes[dt].name : "?";
}

size_t amk__dtype_size(int dt)
{
    return (unsigned)dt < AMK__DT_COUNT ? dtypes[dt].size : 0;
}

double amk__dtype_eps(int dt)
{
    return (unsigned)dt < AMK__DT_COUNT ? dtypes[dt].eps : 1.0;
}

int amk__dtype_is_float(int dt)
{
    return (unsigned)dt < AMK__DT_COUNT && dtypes[dt].is_float;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* f32 -> f16 with round-to-nearest-even, overflow to inf, NaN kept quiet. */
uint16_t amk__f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xffu)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return sign;
        man |= 0x800000u;
        int shift = 14 - e; /* 14..24 */
        uint32_t half = 1u << (shift - 1), rest = man & ((1u << shift) - 1);
        uint32_t m = man >> shift;
        if (rest > half || (rest == half && (m & 1u)))
            m++;
        return (uint16_t)(sign | m);
    }
    uint32_t m = man >> 13, rest = man & 0x1fffu;
    uint32_t h = ((uint32_t)e << 10) | m;
    if (rest > 0x1000u || (rest == 0x1000u && (m & 1u)))
        h++; /* may carry into the exponent, up to inf: correct */
    return (uint16_t)(sign | h);
}

float amk__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu)
        return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t amk__f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
        return (uint16_t)((x >> 16) | 0x40u);
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return (uint16_t)(x >> 16);
}

float amk__bf16_to_f32(uint16_t b)
{
    return bits_f32((uint32_t)b << 16);
}

/* OCP fp8 E4M3 ("fn"): bias 7, no infinities, 0x7f/0xff are NaN, max finite 448.
 * Saturates finite values beyond 448 to 448 (the usual conversion for data). */
uint8_t amk__f32_to_fp8e4m3(float f)
{
    uint8_t sign = (uint8_t)(signbit(f) ? 0x80u : 0);
    double a = fabs((double)f);
    if (isnan(f))
        return (uint8_t)(sign | 0x7fu);
    if (a >= 448.0)
        return (uint8_t)(sign | 0x7eu);
    if (a < 0x1p-10) /* below half the smallest subnormal (2^-9) */
        return sign;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5,1) -> unbiased exponent e-1 */
    int ue = e - 1;
    if (ue < -6)
        ue = -6; /* subnormal range: spacing 2^-9 */
    double q = ldexp(a, 3 - ue);  /* 3 mantissa bits */
    double r = nearbyint(q);      /* round-half-even in the default rounding mode */
    if (r >= 16.0) {              /* carried into the next binade */
        r /= 2;
        ue++;
    }
    unsigned m = (unsigned)r;
    if (m < 8) /* subnormal (only possible at ue == -6) */
        return (uint8_t)(sign | m);
    unsigned be = (unsigned)(ue + 7);
    if (be > 15 || (be == 15 && (m & 7u) == 7u))
        return (uint8_t)(sign | 0x7eu);
    return (uint8_t)(sign | (be << 3) | (m & 7u));
}

float amk__fp8e4m3_to_f32(uint8_t b)
{
    unsigned e = (b >> 3) & 0xfu, m = b & 7u;
    float v;
    if (e == 15 && m == 7)
        return NAN;
    if (e == 0)
        v = ldexpf((float)m, -9);
    else
        v = ldexpf((float)(8 + m), (int)e - 10);
    return (b & 0x80u) ? -v : v;
}

/* Element access, inlined into the fill and compare loops (which call them with a constant
 * type, so each loop is compiled once per type without a switch per element). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE double elt_get(int dt, const void *base, int64_t i)
{
    switch (dt) {
    case AMK__DT_F32: {
        float f;
        memcpy(&f, (const char *)base + 4 * i, 4);
        return f;
    }
    case AMK__DT_F16: {
        uint16_t h;
        memcpy(&h, (const char *)base + 2 * i, 2);
        return amk__f16_to_f32(h);
    }
    case AMK__DT_BF16: {
        uint16_t h;
        memcpy(&h, (const char *)base + 2 * i, 2);
        return amk__bf16_to_f32(h);
    }
    case AMK__DT_FP8E4M3: return amk__fp8e4m3_to_f32(((const uint8_t *)base)[i]);
    case AMK__DT_INT8: return ((const int8_t *)base)[i];
    case AMK__DT_F64: {
        double v;
        memcpy(&v, (const char *)base + 8 * i, 8);
        return v;
    }
    case AMK__DT_I32: {
        int32_t v;
        memcpy(&v, (const char *)base + 4 * i, 4);
        return v;
    }
    default: return NAN;
    }
}

ALWAYS_INLINE void elt_put(int dt, void *base, int64_t i, double v)
{
    switch (dt) {
    case AMK__DT_F32: {
        float f = (float)v;
        memcpy((char *)base + 4 * i, &f, 4);
        break;
    }
    case AMK__DT_F16: {
        uint16_t h = amk__f32_to_f16((float)v);
        memcpy((char *)base + 2 * i, &h, 2);
        break;
    }
    case AMK__DT_BF16: {
        uint16_t h = amk__f32_to_bf16((float)v);
        memcpy((char *)base + 2 * i, &h, 2);
        break;
    }
    case AMK__DT_FP8E4M3: ((uint8_t *)base)[i] = amk__f32_to_fp8e4m3((float)v); break;
    case AMK__DT_INT8: {
        double r = nearbyint(v);
        ((int8_t *)base)[i] = (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
        break;
    }
    case AMK__DT_F64: memcpy((char *)base + 8 * i, &v, 8); break;
    case AMK__DT_I32: {
        double r = nearbyint(v);
        int32_t x = (int32_t)(r > 2147483647.0 ? 2147483647.0 : r < -2147483648.0 ? -2147483648.0 : r);
        memcpy((char *)base + 4 * i, &x, 4);
        break;
    }
    default: break;
    }
}

double amk__dtype_get(int dt, const void *base, int64_t i)
{
    return elt_get(dt, base, i);
}

void amk__dtype_put(int dt, void *base, int64_t i, double v)
{
    elt_put(dt, base, i, v);
}

/* ---------- threads -------------------------------------------------------------------- */

#define MAX_THREADS 64
#define GRAIN 65536 /* elements: a part smaller than this costs more to hand out than it saves */

/* AMK_CHECK_THREADS when it is a number >= 1 (at most 64); else the cores this process may
 * run on shared by `sharers` processes that check at the same time, at most 16. */
int amk__check_threads_for(int sharers)
{
    const char *env = getenv("AMK_CHECK_THREADS");
    if (env && *env) {
        char *end;
        long n = strtol(env, &end, 10);
        if (*end == '\0' && n >= 1)
            return n > MAX_THREADS ? MAX_THREADS : (int)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < n)
        n = CPU_COUNT(&set);
    if (sharers > 1)
        n /= sharers;
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

int amk__check_threads(void)
{
    return amk__check_threads_for(1);
}

typedef void (*range_fn)(void *ud, int part, int64_t lo, int64_t hi);

typedef struct part_task {
    range_fn fn;
    void *ud;
    int part;
    int64_t lo, hi;
} part_task;

static void *part_main(void *arg)
{
    part_task *t = arg;
    t->fn(t->ud, t->part, t->lo, t->hi);
    return NULL;
}

/* Start of part k of n elements cut in `parts` (aligned to 64 elements). */
static int64_t part_start(int64_t n, int k, int parts)
{
    return k == 0 ? 0 : k == parts ? n : (n * k / parts) & ~(int64_t)63;
}

/* Runs fn over [0, n) cut into contiguous parts, one thread each (the caller runs part 0),
 * and returns the number of parts: at most `threads`, one per GRAIN elements. Threads are
 * started and joined within the call, so no thread outlives it (the run worker is a fork).
 * A thread that cannot start has its part run by the caller: the result is the same. */
static int parallel_for(int64_t n, int threads, range_fn fn, void *ud)
{
    int64_t most = (n + GRAIN - 1) / GRAIN;
    int parts = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (parts > most)
        parts = most < 1 ? 1 : (int)most;
    part_task t[MAX_THREADS] = {{0}};
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int k = 0; k < parts; k++)
        t[k] = (part_task){fn, ud, k, part_start(n, k, parts), part_start(n, k + 1, parts)};
    pthread_attr_t attr;
    int have_attr = parts > 1 && pthread_attr_init(&attr) == 0;
    if (have_attr)
        (void)pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    for (int k = 1; k < parts; k++)
        started[k] = pthread_create(&th[k], have_attr ? &attr : NULL, part_main, &t[k]) == 0;
    part_main(&t[0]);
    for (int k = 1; k < parts; k++) {
        if (started[k])
            (void)pthread_join(th[k], NULL);
        else
            part_main(&t[k]);
    }
    if (have_attr)
        (void)pthread_attr_destroy(&attr);
    return parts;
}

/* ---------- inputs --------------------------------------------------------------------- */

int amk__init_from_name(const char *name)
{
    if (!name || strcmp(name, "uniform") == 0)
        return AMK__INIT_UNIFORM;
    if (strcmp(name, "normal") == 0)
        return AMK__INIT_NORMAL;
    if (strcmp(name, "positive") == 0)
        return AMK__INIT_POSITIVE;
    if (strcmp(name, "zero") == 0) /* workspace (inout) only; the spec loader enforces it */
        return AMK__INIT_ZERO;
    if (strcmp(name, "constant") == 0) /* the value travels beside it (amk__run_buf.fill) */
        return AMK__INIT_CONSTANT;
    return -1;
}

/* ---------- the generator --------------------------------------------------------------
 * Counter-based, so any element can be computed without the ones before it and the threads
 * that fill a buffer need not agree on anything: draw j (0, 1) of attempt a of element (or
 * normal pair) idx is splitmix64's output number ctr + 1 from the stream's key, with
 * ctr = idx << 7 | a << 1 | j. The key mixes (seed, stream). */

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define ATTEMPTS 64 /* a: 0 first, then redraws of an element that converted to zero */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t stream_key(uint64_t seed, uint64_t stream)
{
    return mix64(seed ^ (UINT64_C(0xd1b54a32d192ed03) * (stream + 1)));
}

ALWAYS_INLINE uint64_t bits64(uint64_t key, int64_t idx, unsigned a, unsigned j)
{
    uint64_t ctr = (uint64_t)idx << 7 | a << 1 | j;
    return mix64(key + GOLDEN * (ctr + 1));
}

/* Uniform in [0, 1) with 53 bits. */
ALWAYS_INLINE double unit01(uint64_t key, int64_t idx, unsigned a, unsigned j)
{
    return (double)(bits64(key, idx, a, j) >> 11) * 0x1p-53;
}

/* cos and sin of 2*pi*k/2^ANGLE_BITS: the angle of a Box-Muller pair is a table entry plus a
 * small rest whose cos and sin are short series (libm's sin and cos would triple the cost of
 * a normal fill). Built once, before the threads start. */
#define ANGLE_BITS 10
#define TWO_PI 6.283185307179586
static double cos_tab[1 << ANGLE_BITS], sin_tab[1 << ANGLE_BITS];
static pthread_once_t angle_once = PTHREAD_ONCE_INIT;

static void angle_init(void)
{
    for (int k = 0; k < 1 << ANGLE_BITS; k++) {
        cos_tab[k] = cos(TWO_PI * k / (1 << ANGLE_BITS));
        sin_tab[k] = sin(TWO_PI * k / (1 << ANGLE_BITS));
    }
}

/* Box-Muller: normal pair p of attempt a (element 2p gets g[0], 2p+1 gets g[1]). The angle
 * is 2*pi times a 53-bit uniform: its top ANGLE_BITS pick the table entry, the other 43 give
 * the rest d < 2*pi/1024, where the series below are off by less than 1e-16. */
ALWAYS_INLINE void gauss_pair(uint64_t key, int64_t p, unsigned a, double g[2])
{
    double u1 = unit01(key, p, a, 0);
    uint64_t z = bits64(key, p, a, 1) >> 11;
    unsigned k = (unsigned)(z >> (53 - ANGLE_BITS));
    double d = (double)(z & ((UINT64_C(1) << (53 - ANGLE_BITS)) - 1)) * (TWO_PI * 0x1p-53);
    double d2 = d * d;
    double cd = 1.0 - d2 * (0.5 - d2 * (1.0 / 24.0));
    double sd = d * (1.0 - d2 * (1.0 / 6.0 - d2 * (1.0 / 120.0)));
    double rad = sqrt(-2.0 * log(1.0 - u1)); /* 1 - u1 in (0, 1] */
    g[0] = rad * (cos_tab[k] * cd - sin_tab[k] * sd);
    g[1] = rad * (sin_tab[k] * cd + cos_tab[k] * sd);
}

/* Integer types get small exact values, so that products and sums stay exact: uniform
 * round(8u) in [-8, 8], normal round(8g) (saturated by the type), positive 1 or 2. */
ALWAYS_INLINE double int_value(int init, double v)
{
    return init == AMK__INIT_POSITIVE ? floor(1.0 + 2.0 * (v - 0.5)) + 0.0 : nearbyint(v * 8.0);
}

/* Element i of attempt a as a double, before conversion to the type. */
ALWAYS_INLINE double draw(int init, int is_float, uint64_t key, int64_t i, unsigned a)
{
    double v;
    if (init == AMK__INIT_NORMAL) {
        double g[2];
        gauss_pair(key, i >> 1, a, g);
        v = g[i & 1];
    } else {
        double u = unit01(key, i, a, 0);
        v = init == AMK__INIT_POSITIVE ? 0.5 + u : 2.0 * u - 1.0;
    }
    return is_float ? v : int_value(init, v);
}

/* Stores v as element i; 1 when the stored element is not zero. */
ALWAYS_INLINE int put_nonzero(int dt, void *dst, int64_t i, double v)
{
    elt_put(dt, dst, i, v);
    return elt_get(dt, dst, i) != 0.0;
}

/* Element i converted to zero: attempts 1, 2, ... of the same element. Should all of them
 * convert to zero too (below 2^-180 even for int8), the element is 1. */
static void redraw(int dt, int init, uint64_t key, void *dst, int64_t i)
{
    int is_float = amk__dtype_is_float(dt);
    for (unsigned a = 1; a < ATTEMPTS; a++)
        if (put_nonzero(dt, dst, i, draw(init, is_float, key, i, a)))
            return;
    elt_put(dt, dst, i, 1.0);
}

typedef struct fill_job {
    void *dst;
    int dt, init;
    uint64_t key;
} fill_job;

ALWAYS_INLINE void fill_range(int dt, const fill_job *f, int64_t lo, int64_t hi)
{
    int is_float = amk__dtype_is_float(dt);
    if (f->init == AMK__INIT_NORMAL) { /* one Box-Muller for both elements of a pair */
        for (int64_t i = lo; i < hi;) {
            double g[2];
            gauss_pair(f->key, i >> 1, 0, g);
            for (int h = (int)(i & 1); h < 2 && i < hi; h++, i++)
                if (!put_nonzero(dt, f->dst, i, is_float ? g[h] : int_value(f->init, g[h])))
                    redraw(dt, f->init, f->key, f->dst, i);
        }
        return;
    }
    for (int64_t i = lo; i < hi; i++)
        if (!put_nonzero(dt, f->dst, i, draw(f->init, is_float, f->key, i, 0)))
            redraw(dt, f->init, f->key, f->dst, i);
}

static void fill_part(void *ud, int part, int64_t lo, int64_t hi)
{
    const fill_job *f = ud;
    (void)part;
    switch (f->dt) { /* a constant type per call: each loop is specialised */
    case AMK__DT_F32: fill_range(AMK__DT_F32, f, lo, hi); break;
    case AMK__DT_F16: fill_range(AMK__DT_F16, f, lo, hi); break;
    case AMK__DT_BF16: fill_range(AMK__DT_BF16, f, lo, hi); break;
    case AMK__DT_FP8E4M3: fill_range(AMK__DT_FP8E4M3, f, lo, hi); break;
    case AMK__DT_INT8: fill_range(AMK__DT_INT8, f, lo, hi); break;
    case AMK__DT_F64: fill_range(AMK__DT_F64, f, lo, hi); break;
    case AMK__DT_I32: fill_range(AMK__DT_I32, f, lo, hi); break;
    default: break;
    }
}

/* Deterministic in (seed, stream): element i is a function of (seed, stream, i) alone, so
 * the bytes are the same for any thread count, on any machine. A value that is zero once
 * converted is drawn again (never a zero element, except for init "zero"). */
void amk__check_fill_threads(void *dst, int dt, int64_t count, int init, uint64_t seed,
                             uint64_t stream, int threads)
{
    if (count <= 0 || (unsigned)dt >= AMK__DT_COUNT)
        return;
    if (init == AMK__INIT_ZERO) { /* workspace: zero bytes (0, 0.0f, +0 in every type) */
        memset(dst, 0, (size_t)count * amk__dtype_size(dt));
        return;
    }
    if (init == AMK__INIT_NORMAL)
        (void)pthread_once(&angle_once, angle_init);
    fill_job f = {dst, dt, init, stream_key(seed, stream)};
    parallel_for(count, threads, fill_part, &f);
}

void amk__check_fill_value(void *dst, int dt, int64_t count, double value)
{
    if (count <= 0 || (unsigned)dt >= AMK__DT_COUNT)
        return;
    elt_put(dt, dst, 0, value);
    size_t sz = amk__dtype_size(dt);
    for (int64_t i = 1; i < count; i++)
        memcpy((char *)dst + (size_t)i * sz, dst, sz);
}

void amk__check_fill(void *dst, int dt, int64_t count, int init, uint64_t seed, uint64_t stream)
{
    amk__check_fill_threads(dst, dt, count, init, seed, stream, amk__check_threads());
}

/* Poisoned = every byte 0xFF: NaN for all float types, -1 for integers (which is why
 * integer outputs are also compared against the reference: a left-over -1 is caught
 * whenever the reference differs). */
ALWAYS_INLINE int poisoned(int dt, const void *base, int64_t i)
{
    size_t sz = dtypes[dt].size;
    const unsigned char *e = (const unsigned char *)base + (size_t)i * sz;
    for (size_t k = 0; k < sz; k++)
        if (e[k] != 0xffu)
            return 0;
    return 1;
}

int amk__check_poisoned(int dt, const void *base, int64_t i)
{
    return (unsigned)dt < AMK__DT_COUNT && poisoned(dt, base, i);
}

/* ---------- tolerance ------------------------------------------------------------------ */

/* CK-style bound, per output buffer:
 *   acc  = 4 * eps(f32) * sqrt(reduction)   (f32 accumulation of `reduction` terms)
 *   rtol = scale * (2 * eps(out) + acc)      (two roundings to the output type + acc)
 *   atol = scale * (eps(out) + acc) * max|ref|, or the spec's explicit atol when given.
 * Integer outputs: exact unless the spec gives atol. */
void amk__tolerance_for(int dt, double reduction, double rtol_scale, double atol_override,
                        double max_abs_ref, amk__tolerance *out)
{
    if (!(reduction >= 1.0))
        reduction = 1.0;
    if (!(rtol_scale > 0.0))
        rtol_scale = 1.0;
    if (!amk__dtype_is_float(dt)) {
        out->rtol = 0.0;
        out->atol = isnan(atol_override) ? 0.0 : atol_override;
        return;
    }
    double eps = amk__dtype_eps(dt);
    double acc = 4.0 * 0x1p-23 * sqrt(reduction);
    out->rtol = rtol_scale * (2.0 * eps + acc);
    out->atol = !isnan(atol_override) ? atol_override : rtol_scale * (eps + acc) * max_abs_ref;
}

/* One part of a comparison: pass 1 (reference scan) and pass 2 (classification). */
typedef struct cmp_part {
    int64_t bad_ref;        /* first non-finite reference element, -1 none */
    int64_t skipped;        /* reference elements still holding the poison (float types) */
    double max_ref;
    int64_t bad, unwritten, nonfinite;
    int64_t worst;          /* -1 none */
    int cls;                /* 2 unwritten, 1 non-finite, 0 numeric */
    double ratio, got, want, lim;
} cmp_part;

typedef struct cmp_job {
    int dt;
    const void *got, *want;
    double atol, rtol;
    cmp_part part[MAX_THREADS];
} cmp_job;

ALWAYS_INLINE void ref_range(int dt, cmp_job *j, cmp_part *p, int64_t lo, int64_t hi)
{
    double max_ref = 0.0;
    p->bad_ref = -1;
    p->skipped = 0;
    for (int64_t i = lo; i < hi; i++) {
        double r = elt_get(dt, j->want, i);
        if (!isfinite(r)) {
            if (dtypes[dt].is_float && poisoned(dt, j->want, i)) {
                p->skipped++; /* left unwritten by the reference */
                continue;
            }
            p->bad_ref = i;
            break;
        }
        if (fabs(r) > max_ref)
            max_ref = fabs(r);
    }
    p->max_ref = max_ref;
}

ALWAYS_INLINE void classify_range(int dt, cmp_job *j, cmp_part *p, int64_t lo, int64_t hi)
{
    int is_float = dtypes[dt].is_float;
    p->bad = p->unwritten = p->nonfinite = 0;
    p->worst = -1;
    p->cls = 0;
    p->ratio = -1.0;
    for (int64_t i = lo; i < hi; i++) {
        double g = elt_get(dt, j->got, i), w = elt_get(dt, j->want, i);
        double lim = j->atol + j->rtol * fabs(w);
        int cls = -1;
        double ratio = 0.0;
        if (poisoned(dt, j->got, i) && (is_float || g != w))
            cls = 2;
        else if (!isfinite(g))
            cls = 1;
        else {
            double diff = fabs(g - w);
            if (diff > lim) {
                cls = 0;
                ratio = lim > 0 ? diff / lim : INFINITY;
            }
        }
        /* A non-finite reference element here is one the reference left unwritten (pass 1
         * let no other through): not part of the output. (A finite got passes it anyway:
         * nothing is > a NaN limit.) Tested only on failures, to keep the loop lean. */
        if (cls < 0 || !isfinite(w))
            continue;
        p->bad++;
        if (cls == 2)
            p->unwritten++;
        else if (cls == 1)
            p->nonfinite++;
        /* Unwritten beats non-finite beats numeric; the first of a class is kept,
         * except numeric mismatches, where the largest diff/tol ratio wins. */
        if (p->worst < 0 || cls > p->cls || (cls == p->cls && cls == 0 && ratio > p->ratio)) {
            p->worst = i;
            p->cls = cls;
            p->ratio = ratio;
            p->got = g;
            p->want = w;
            p->lim = lim;
        }
    }
}

#define EACH_DTYPE(F, ...)                                                                 \
    switch (j->dt) {                                                                       \
    case AMK__DT_F32: F(AMK__DT_F32, __VA_ARGS__); break;                                  \
    case AMK__DT_F16: F(AMK__DT_F16, __VA_ARGS__); break;                                  \
    case AMK__DT_BF16: F(AMK__DT_BF16, __VA_ARGS__); break;                                \
    case AMK__DT_FP8E4M3: F(AMK__DT_FP8E4M3, __VA_ARGS__); break;                          \
    case AMK__DT_INT8: F(AMK__DT_INT8, __VA_ARGS__); break;                                \
    case AMK__DT_F64: F(AMK__DT_F64, __VA_ARGS__); break;                                  \
    case AMK__DT_I32: F(AMK__DT_I32, __VA_ARGS__); break;                                  \
    default: break;                                                                        \
    }

static void ref_part(void *ud, int part, int64_t lo, int64_t hi)
{
    cmp_job *j = ud;
    EACH_DTYPE(ref_range, j, &j->part[part], lo, hi)
}

static void classify_part(void *ud, int part, int64_t lo, int64_t hi)
{
    cmp_job *j = ud;
    EACH_DTYPE(classify_range, j, &j->part[part], lo, hi)
}

/* Compares got against want (both of type dt). Non-finite outputs, poisoned (unwritten)
 * elements and a non-finite reference never pass. A float element the reference itself left
 * unwritten (still the 0xFF poison, a NaN no arithmetic produces) is not part of the output:
 * it is skipped (out->skipped), whatever the candidate holds there; a reference that wrote
 * no element at all cannot certify anything (AMK__CMP_REF_UNWRITTEN). Fills *out with the
 * count of failing elements and the worst one: the first unwritten/non-finite element if
 * any, else the element with the largest |diff| / tol (the lowest index among equals). Parts
 * are merged in index order with the same rule, so *out is the same for any thread count.
 * Returns 1 when every element passes, else 0. */
int amk__check_compare_threads(int dt, const void *got, const void *want, int64_t count,
                               double reduction, double rtol_scale, double atol_override,
                               int threads, amk__compare *out)
{
    memset(out, 0, sizeof *out);
    out->count = count;
    out->worst = -1;
    if (count <= 0 || (unsigned)dt >= AMK__DT_COUNT)
        return count <= 0;
    cmp_job job, *j = &job;
    j->dt = dt;
    j->got = got;
    j->want = want;
    int parts = parallel_for(count, threads, ref_part, j);
    double max_ref = 0.0;
    for (int k = 0; k < parts; k++) {
        const cmp_part *p = &j->part[k];
        if (p->bad_ref >= 0) { /* the first in index order */
            out->kind = AMK__CMP_REF_NONFINITE;
            out->worst = p->bad_ref;
            out->want = amk__dtype_get(dt, want, p->bad_ref);
            out->got = amk__dtype_get(dt, got, p->bad_ref);
            out->bad = 1;
            return 0;
        }
        if (p->max_ref > max_ref)
            max_ref = p->max_ref;
        out->skipped += p->skipped;
    }
    out->max_ref = max_ref;
    if (out->skipped == count) {
        out->kind = AMK__CMP_REF_UNWRITTEN;
        out->bad = count;
        return 0;
    }
    amk__tolerance_for(dt, reduction, rtol_scale, atol_override, max_ref, &out->tol);
    j->atol = out->tol.atol;
    j->rtol = out->tol.rtol;
    parts = parallel_for(count, threads, classify_part, j);
    int worst_cls = 0;
    double worst_ratio = -1.0;
    for (int k = 0; k < parts; k++) {
        const cmp_part *p = &j->part[k];
        out->bad += p->bad;
        out->unwritten += p->unwritten;
        out->nonfinite += p->nonfinite;
        if (p->worst < 0)
            continue;
        if (out->worst < 0 || p->cls > worst_cls ||
            (p->cls == worst_cls && p->cls == 0 && p->ratio > worst_ratio)) {
            worst_cls = p->cls;
            worst_ratio = p->ratio;
            out->worst = p->worst;
            out->got = p->got;
            out->want = p->want;
            out->diff = isfinite(p->got) ? fabs(p->got - p->want) : INFINITY;
            out->limit = p->lim;
            out->kind = p->cls == 2 ? AMK__CMP_UNWRITTEN
                        : p->cls == 1 ? AMK__CMP_NONFINITE
                                      : AMK__CMP_MISMATCH;
        }
    }
    return out->bad == 0;
}

int amk__check_compare(int dt, const void *got, const void *want, int64_t count,
                       double reduction, double rtol_scale, double atol_override,
                       amk__compare *out)
{
    return amk__check_compare_threads(dt, got, want, count, reduction, rtol_scale,
                                      atol_override, amk__check_threads(), out);
}

/* One line for a verdict's reason, e.g.
 * "C[1027] got 1.5 want 1.25 (|diff| 0.25 > tol 3.1e-05); 17 of 1048576 out of tolerance". */
void amk__compare_describe(const amk__compare *c, const char *buf, char *out, size_t cap)
{
    switch (c->kind) {
    case AMK__CMP_OK: snprintf(out, cap, "%s: all %lld elements within tolerance", buf,
                               (long long)c->count); break;
    case AMK__CMP_REF_UNWRITTEN:
        snprintf(out, cap, "%s: the reference left all %lld elements unwritten (still NaN "
                 "poison); cannot check", buf, (long long)c->count);
        break;
    case AMK__CMP_REF_NONFINITE:
        snprintf(out, cap, "%s[%lld]: the reference produced %g; cannot check", buf,
                 (long long)c->worst, c->want);
        break;
    case AMK__CMP_UNWRITTEN:
        snprintf(out, cap, "%s[%lld] left unwritten (still NaN poison), want %.6g; "
                 "%lld of %lld unwritten, %lld bad in all", buf, (long long)c->worst,
                 c->want, (long long)c->unwritten, (long long)c->count, (long long)c->bad);
        break;
    case AMK__CMP_NONFINITE:
        snprintf(out, cap, "%s[%lld] got %g want %.6g; %lld of %lld non-finite, %lld bad in all",
                 buf, (long long)c->worst, c->got, c->want, (long long)c->nonfinite,
                 (long long)c->count, (long long)c->bad);
        break;
    case AMK__CMP_MISMATCH:
        snprintf(out, cap, "%s[%lld] got %.9g want %.9g (|diff| %.3g > tol %.3g = %.2g + "
                 "%.2g*|want|); %lld of %lld out of tolerance", buf, (long long)c->worst,
                 c->got, c->want, c->diff, c->limit, c->tol.atol, c->tol.rtol,
                 (long long)c->bad, (long long)c->count);
        break;
    }
}
