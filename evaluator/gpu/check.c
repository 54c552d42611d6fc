/* Correctness gate, host side: element types (f32, f16, bf16, fp8e4m3, int8, ...) as bit
 * patterns, deterministic never-zero inputs from a seed, the NaN poison pattern, and the
 * CK-style tolerance comparison that reports the worst element. No GPU call lives here: the
 * run worker (runtime.c) moves the bytes; this file decides what they must be. */
#include "gpu_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

double amk__dtype_get(int dt, const void *base, int64_t i)
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

void amk__dtype_put(int dt, void *base, int64_t i, double v)
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
    return -1;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct rng {
    uint64_t s;
    int has_spare;
    double spare;
} rng;

static double unit01(rng *r) /* [0, 1) with 53 bits */
{
    return (double)(splitmix64(&r->s) >> 11) * 0x1p-53;
}

static double draw(int init, rng *r)
{
    switch (init) {
    case AMK__INIT_NORMAL: {
        if (r->has_spare) { /* Box-Muller gives two; use both */
            r->has_spare = 0;
            return r->spare;
        }
        double u1 = unit01(r), u2 = unit01(r);
        if (u1 < 0x1p-53)
            u1 = 0x1p-53;
        double rad = sqrt(-2.0 * log(u1)), ang = 6.283185307179586 * u2;
        r->spare = rad * sin(ang);
        r->has_spare = 1;
        return rad * cos(ang);
    }
    case AMK__INIT_POSITIVE: return 0.5 + unit01(r);
    default: return 2.0 * unit01(r) - 1.0;
    }
}

/* Deterministic in (seed, stream): the same call always writes the same bytes, on any
 * machine. Integers draw small non-zero values (uniform/normal in [-8,8], positive 1..3)
 * so products stay exact. A value that is zero once converted is drawn again. */
void amk__check_fill(void *dst, int dt, int64_t count, int init, uint64_t seed, uint64_t stream)
{
    if (init == AMK__INIT_ZERO) { /* workspace: zero bytes (0, 0.0f, +0 in every type) */
        memset(dst, 0, (size_t)count * amk__dtype_size(dt));
        return;
    }
    rng r = {seed ^ (UINT64_C(0xd1b54a32d192ed03) * (stream + 1)), 0, 0.0};
    splitmix64(&r.s);
    int is_float = amk__dtype_is_float(dt);
    for (int64_t i = 0; i < count; i++) {
        double v;
        for (;;) {
            v = draw(init, &r);
            if (!is_float)
                v = init == AMK__INIT_POSITIVE ? floor(1.0 + 2.0 * (v - 0.5)) + 0.0
                                               : nearbyint(v * 8.0);
            amk__dtype_put(dt, dst, i, v);
            if (amk__dtype_get(dt, dst, i) != 0.0)
                break;
        }
    }
}

/* Poisoned = every byte 0xFF: NaN for all float types, -1 for integers (which is why
 * integer outputs are also compared against the reference: a left-over -1 is caught
 * whenever the reference differs). */
int amk__check_poisoned(int dt, const void *base, int64_t i)
{
    size_t sz = amk__dtype_size(dt);
    const unsigned char *p = (const unsigned char *)base + (size_t)i * sz;
    for (size_t k = 0; k < sz; k++)
        if (p[k] != 0xffu)
            return 0;
    return sz > 0;
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

/* Compares got against want (both of type dt). Non-finite outputs, poisoned (unwritten)
 * elements and a non-finite reference never pass. Fills *out with the count of failing
 * elements and the worst one: the first unwritten/non-finite element if any, else the
 * element with the largest |diff| / tol. Returns 1 when every element passes, else 0. */
int amk__check_compare(int dt, const void *got, const void *want, int64_t count,
                       double reduction, double rtol_scale, double atol_override,
                       amk__compare *out)
{
    memset(out, 0, sizeof *out);
    out->count = count;
    out->worst = -1;
    double max_ref = 0.0;
    for (int64_t i = 0; i < count; i++) {
        double r = amk__dtype_get(dt, want, i);
        if (!isfinite(r)) {
            out->kind = AMK__CMP_REF_NONFINITE;
            out->worst = i;
            out->want = r;
            out->got = amk__dtype_get(dt, got, i);
            out->bad = 1;
            return 0;
        }
        if (fabs(r) > max_ref)
            max_ref = fabs(r);
    }
    out->max_ref = max_ref;
    amk__tolerance_for(dt, reduction, rtol_scale, atol_override, max_ref, &out->tol);
    double worst_ratio = -1.0;
    int worst_class = 0; /* 2 unwritten, 1 non-finite, 0 numeric */
    for (int64_t i = 0; i < count; i++) {
        double g = amk__dtype_get(dt, got, i), w = amk__dtype_get(dt, want, i);
        double lim = out->tol.atol + out->tol.rtol * fabs(w);
        int cls = -1;
        double ratio = 0.0;
        if (amk__check_poisoned(dt, got, i) && (amk__dtype_is_float(dt) || g != w))
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
        if (cls < 0)
            continue;
        out->bad++;
        if (cls == 2)
            out->unwritten++;
        else if (cls == 1)
            out->nonfinite++;
        /* Unwritten beats non-finite beats numeric; the first of a class is kept,
         * except numeric mismatches, where the largest diff/tol ratio wins. */
        int better = out->worst < 0 || cls > worst_class ||
                     (cls == worst_class && cls == 0 && ratio > worst_ratio);
        if (better) {
            worst_class = cls;
            worst_ratio = ratio;
            out->worst = i;
            out->got = g;
            out->want = w;
            out->diff = isfinite(g) ? fabs(g - w) : INFINITY;
            out->limit = lim;
            out->kind = cls == 2 ? AMK__CMP_UNWRITTEN
                        : cls == 1 ? AMK__CMP_NONFINITE
                                   : AMK__CMP_MISMATCH;
        }
    }
    return out->bad == 0;
}

/* One line for a verdict's reason, e.g.
 * "C[1027] got 1.5 want 1.25 (|diff| 0.25 > tol 3.1e-05); 17 of 1048576 out of tolerance". */
void amk__compare_describe(const amk__compare *c, const char *buf, char *out, size_t cap)
{
    switch (c->kind) {
    case AMK__CMP_OK: snprintf(out, cap, "%s: all %lld elements within tolerance", buf,
                               (long long)c->count); break;
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
