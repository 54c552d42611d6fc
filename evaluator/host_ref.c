/* Built-in host references: the outputs of the built-in kernels computed on the CPU in double
 * precision, for tests without a GPU and for cross-checking the reference kernels. Buffers
 * are matched by the names their spec gives them; f16/bf16 data are uint16_t bit patterns,
 * converted here with round-to-nearest-even (no dependence on compiler half types). */
#include "amk_evaluator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- IEEE-style binary formats ---------------------------------------------------- */

/* Value of a (1, ebits, mbits) bit pattern: subnormals, infinities and NaN included. */
static double decode_bits(uint32_t bits, int ebits, int mbits)
{
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t emax = (1u << ebits) - 1;
    const uint32_t m = bits & ((1u << mbits) - 1);
    const uint32_t e = (bits >> mbits) & emax;
    double v;
    if (e == emax)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
    return (bits >> (ebits + mbits)) & 1u ? -v : v;
}

/* Nearest (ties to even) (1, ebits, mbits) pattern of v, straight from double so there is
 * no double rounding. Overflow gives infinity, NaN a quiet NaN, tiny values subnormals. */
static uint32_t encode_bits(double v, int ebits, int mbits)
{
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0u;
    const uint32_t inf = ((1u << ebits) - 1) << mbits;
    if (isnan(v))
        return sign | inf | (1u << (mbits - 1));
    double a = fabs(v);
    if (isinf(a))
        return sign | inf;
    int e2;
    (void)frexp(a, &e2); /* a = f * 2^e2, f in [0.5, 1): leading bit weighs 2^(e2-1) */
    int exp = e2 - 1;
    if (exp < 1 - bias)
        exp = 1 - bias; /* subnormal range: fixed exponent, no hidden bit */
    /* Scaling by a power of two is exact; nearbyint rounds half to even. */
    double q = nearbyint(ldexp(a, mbits - exp));
    const double hidden = ldexp(1.0, mbits);
    if (q >= 2 * hidden) { /* rounded up to the next binade */
        q /= 2;
        exp += 1;
    }
    if (q < hidden) /* subnormal (or zero) */
        return sign | (uint32_t)q;
    if (exp + bias >= (1 << ebits) - 1)
        return sign | inf;
    return sign | ((uint32_t)(exp + bias) << mbits) | ((uint32_t)(q - hidden));
}

typedef enum { HT_F32, HT_F16, HT_BF16 } htype;

static int parse_type(const amk_host_buffer *b, htype *out, amk_diag *d)
{
    if (b->dtype && !strcmp(b->dtype, "f32"))
        *out = HT_F32;
    else if (b->dtype && !strcmp(b->dtype, "f16"))
        *out = HT_F16;
    else if (b->dtype && !strcmp(b->dtype, "bf16"))
        *out = HT_BF16;
    else
        return amk_diag_set(d, AMK_EINVAL, "buffer %s: dtype '%s' is not supported by the host "
                            "reference (f32 f16 bf16)", b->name, b->dtype ? b->dtype : "(null)");
    return AMK_OK;
}

static double load(const amk_host_buffer *b, htype t, int64_t i)
{
    switch (t) {
    case HT_F32:
        return ((const float *)b->data)[i];
    case HT_F16:
        return decode_bits(((const uint16_t *)b->data)[i], 5, 10);
    case HT_BF16:
        return decode_bits(((const uint16_t *)b->data)[i], 8, 7);
    }
    return NAN;
}

static void store(amk_host_buffer *b, htype t, int64_t i, double v)
{
    switch (t) {
    case HT_F32:
        ((float *)b->data)[i] = (float)v;
        break;
    case HT_F16:
        ((uint16_t *)b->data)[i] = (uint16_t)encode_bits(v, 5, 10);
        break;
    case HT_BF16:
        ((uint16_t *)b->data)[i] = (uint16_t)encode_bits(v, 8, 7);
        break;
    }
}

/* ---------- lookups ------------------------------------------------------------------------ */

static int find_dim(const amk_config *c, const char *name, int64_t *out, amk_diag *d)
{
    for (int i = 0; i < amk_spec_n_dims(c->spec); i++)
        if (!strcmp(amk_spec_dim_name(c->spec, i), name)) {
            if (c->shape.dims[i] < 1)
                return amk_diag_set(d, AMK_EINVAL, "dim %s = %lld is not positive", name,
                                    (long long)c->shape.dims[i]);
            *out = c->shape.dims[i];
            return AMK_OK;
        }
    return amk_diag_set(d, AMK_EINVAL, "kernel %s has no dim %s", amk_spec_name(c->spec), name);
}

/* The buffer called name, which must hold at least a*b elements of a supported dtype. */
static int find_buf(amk_host_buffer *bufs, int nbufs, const char *name, int64_t a, int64_t b,
                    amk_host_buffer **out, htype *t, amk_diag *d)
{
    int64_t need;
    if (__builtin_mul_overflow(a, b, &need))
        return amk_diag_set(d, AMK_EOVERFLOW, "buffer %s: %lld x %lld elements overflow", name,
                            (long long)a, (long long)b);
    for (int i = 0; i < nbufs; i++) {
        if (!bufs[i].name || strcmp(bufs[i].name, name))
            continue;
        if (!bufs[i].data)
            return amk_diag_set(d, AMK_EINVAL, "buffer %s has no data", name);
        if (bufs[i].count < need)
            return amk_diag_set(d, AMK_EINVAL, "buffer %s holds %lld elements, needs %lld",
                                name, (long long)bufs[i].count, (long long)need);
        *out = &bufs[i];
        return parse_type(&bufs[i], t, d);
    }
    return amk_diag_set(d, AMK_EINVAL, "no buffer named %s", name);
}

/* ---------- the references ----------------------------------------------------------------- */

/* gemm: C[M,N] = A[M,K] * B[K,N], row-major; sums in double, C rounded once to its dtype. */
static int ref_gemm_f32(const amk_config *c, amk_host_buffer *bufs, int nbufs, amk_diag *d)
{
    int64_t M, N, K;
    amk_host_buffer *A, *B, *C;
    htype ta, tb, tc;
    int rc;
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "gemm_f32: no config or buffers");
    if ((rc = find_dim(c, "M", &M, d)) || (rc = find_dim(c, "N", &N, d)) ||
        (rc = find_dim(c, "K", &K, d)))
        return rc;
    if ((rc = find_buf(bufs, nbufs, "A", M, K, &A, &ta, d)) ||
        (rc = find_buf(bufs, nbufs, "B", K, N, &B, &tb, d)) ||
        (rc = find_buf(bufs, nbufs, "C", M, N, &C, &tc, d))) {
        amk_diag_prefix(d, "gemm_f32");
        return rc;
    }
    double *row = malloc((size_t)N * sizeof *row);
    if (!row)
        return amk_diag_set(d, AMK_ENOMEM, "gemm_f32: %lld doubles", (long long)N);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++)
            row[n] = 0.0;
        for (int64_t k = 0; k < K; k++) {
            const double a = load(A, ta, m * K + k);
            for (int64_t n = 0; n < N; n++)
                row[n] += a * load(B, tb, k * N + n);
        }
        for (int64_t n = 0; n < N; n++)
            store(C, tc, m * N + n, row[n]);
    }
    free(row);
    return AMK_OK;
}

/* rmsnorm: y[m,:] = x[m,:] / sqrt(mean(x[m,:]^2) + 1e-6) * w[:], all in double. */
static int ref_rmsnorm(const amk_config *c, amk_host_buffer *bufs, int nbufs, amk_diag *d)
{
    int64_t M, N;
    amk_host_buffer *x, *w, *y;
    htype tx, tw, ty;
    int rc;
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "rmsnorm: no config or buffers");
    if ((rc = find_dim(c, "M", &M, d)) || (rc = find_dim(c, "N", &N, d)))
        return rc;
    if ((rc = find_buf(bufs, nbufs, "x", M, N, &x, &tx, d)) ||
        (rc = find_buf(bufs, nbufs, "w", 1, N, &w, &tw, d)) ||
        (rc = find_buf(bufs, nbufs, "y", M, N, &y, &ty, d))) {
        amk_diag_prefix(d, "rmsnorm");
        return rc;
    }
    for (int64_t m = 0; m < M; m++) {
        double ss = 0.0;
        for (int64_t n = 0; n < N; n++) {
            const double v = load(x, tx, m * N + n);
            ss += v * v;
        }
        const double inv = 1.0 / sqrt(ss / (double)N + 1e-6);
        for (int64_t n = 0; n < N; n++)
            store(y, ty, m * N + n, load(x, tx, m * N + n) * inv * load(w, tw, n));
    }
    return AMK_OK;
}

static const struct {
    const char *name;
    amk_host_ref_fn fn;
} host_refs[] = {
    {"gemm_f32", ref_gemm_f32},
    {"rmsnorm", ref_rmsnorm},
};

amk_host_ref_fn amk_host_ref_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof host_refs / sizeof host_refs[0]; i++)
        if (!strcmp(host_refs[i].name, name))
            return host_refs[i].fn;
    return NULL;
}
