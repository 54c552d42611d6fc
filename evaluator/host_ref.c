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

/* gemm_tc: C[M,N] (f32) = A[M,K] * B[K,N] with f16/bf16 inputs; the same double-precision
 * sum as gemm_f32, after checking the buffer types the tensor-core spec declares. */
static int ref_gemm_tc(const amk_config *c, amk_host_buffer *bufs, int nbufs, amk_diag *d)
{
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "gemm_tc: no config or buffers");
    for (int i = 0; i < nbufs; i++) {
        htype t;
        int rc;
        if (!bufs[i].name || !bufs[i].data)
            continue;
        const int is_in = !strcmp(bufs[i].name, "A") || !strcmp(bufs[i].name, "B");
        const int is_out = !strcmp(bufs[i].name, "C");
        if (!is_in && !is_out)
            continue;
        if ((rc = parse_type(&bufs[i], &t, d))) {
            amk_diag_prefix(d, "gemm_tc");
            return rc;
        }
        if (is_in && t != HT_F16 && t != HT_BF16)
            return amk_diag_set(d, AMK_EINVAL, "gemm_tc: %s must be f16 or bf16", bufs[i].name);
        if (is_out && t != HT_F32)
            return amk_diag_set(d, AMK_EINVAL, "gemm_tc: C must be f32");
    }
    int rc = ref_gemm_f32(c, bufs, nbufs, d);
    if (rc)
        amk_diag_prefix(d, "gemm_tc");
    return rc;
}

/* softmax: y[m,:] = exp(x[m,:] - max) / sum(exp(x[m,:] - max)), all in double. */
static int ref_softmax(const amk_config *c, amk_host_buffer *bufs, int nbufs, amk_diag *d)
{
    int64_t M, N;
    amk_host_buffer *x, *y;
    htype tx, ty;
    int rc;
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "softmax: no config or buffers");
    if ((rc = find_dim(c, "M", &M, d)) || (rc = find_dim(c, "N", &N, d)))
        return rc;
    if ((rc = find_buf(bufs, nbufs, "x", M, N, &x, &tx, d)) ||
        (rc = find_buf(bufs, nbufs, "y", M, N, &y, &ty, d))) {
        amk_diag_prefix(d, "softmax");
        return rc;
    }
    for (int64_t m = 0; m < M; m++) {
        double mx = load(x, tx, m * N);
        for (int64_t n = 1; n < N; n++) {
            const double v = load(x, tx, m * N + n);
            mx = v > mx ? v : mx;
        }
        double sum = 0.0;
        for (int64_t n = 0; n < N; n++)
            sum += exp(load(x, tx, m * N + n) - mx);
        for (int64_t n = 0; n < N; n++)
            store(y, ty, m * N + n, exp(load(x, tx, m * N + n) - mx) / sum);
    }
    return AMK_OK;
}

/* gemv: y[n] = sum_k W[n,k] * x[k], W[N,K] row-major; sums in double, y rounded once. */
static int ref_gemv(const amk_config *c, amk_host_buffer *bufs, int nbufs, amk_diag *d)
{
    int64_t N, K;
    amk_host_buffer *W, *x, *y;
    htype tw, tx, ty;
    int rc;
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "gemv: no config or buffers");
    if ((rc = find_dim(c, "N", &N, d)) || (rc = find_dim(c, "K", &K, d)))
        return rc;
    if ((rc = find_buf(bufs, nbufs, "W", N, K, &W, &tw, d)) ||
        (rc = find_buf(bufs, nbufs, "x", 1, K, &x, &tx, d)) ||
        (rc = find_buf(bufs, nbufs, "y", 1, N, &y, &ty, d))) {
        amk_diag_prefix(d, "gemv");
        return rc;
    }
    for (int64_t n = 0; n < N; n++) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; k++)
            acc += load(W, tw, n * K + k) * load(x, tx, k);
        store(y, ty, n, acc);
    }
    return AMK_OK;
}

/* OCP fp8 E4M3 bits of a float already within [-448, 448]: nearest, ties to even,
 * subnormals in steps of 2^-9 (the same rounding as the prelude's conversion). */
static uint8_t fp8e4m3_bits(float f)
{
    const uint8_t sign = signbit(f) ? 0x80u : 0u;
    double a = fabs((double)f);
    if (a >= 448.0)
        return sign | 0x7eu;
    if (a < 0x1p-6)
        return sign | (uint8_t)nearbyint(a * 512.0);
    int e2;
    (void)frexp(a, &e2);
    int exp = e2 - 1; /* a in [2^exp, 2^(exp+1)) */
    double q = nearbyint(ldexp(a, 3 - exp)); /* 8..16 */
    if (q >= 16.0) {
        q /= 2;
        exp += 1;
    }
    const unsigned b = ((unsigned)(exp + 7) << 3) | ((unsigned)q - 8u);
    return sign | (uint8_t)(b > 0x7eu ? 0x7eu : b);
}

/* quant_per_tensor: absmax over the whole bf16 tensor, scale = max(absmax / qmax, 1e-12)
 * (qmax 448 for fp8 e4m3, 127 for int8), q = saturate(round_half_even(x / scale)). The
 * operation is defined in f32 arithmetic (as serving stacks do it), so this follows it
 * step for step in float: the GPU kernels must match it bit for bit. The workspace ws (if
 * given) must be left at zero. */
static int ref_quant_per_tensor(const amk_config *c, amk_host_buffer *bufs, int nbufs,
                                amk_diag *d)
{
    int64_t M, N, total;
    amk_host_buffer *x = NULL, *q = NULL, *scale = NULL;
    htype tx;
    int rc;
    if (!c || !c->spec || (nbufs > 0 && !bufs))
        return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: no config or buffers");
    if ((rc = find_dim(c, "M", &M, d)) || (rc = find_dim(c, "N", &N, d)))
        return rc;
    total = M * N;
    if ((rc = find_buf(bufs, nbufs, "x", M, N, &x, &tx, d))) {
        amk_diag_prefix(d, "quant_per_tensor");
        return rc;
    }
    if (tx != HT_BF16)
        return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: x must be bf16");
    int is_fp8 = 0;
    for (int i = 0; i < nbufs; i++) {
        if (!bufs[i].name || !bufs[i].data || !bufs[i].dtype)
            continue;
        if (!strcmp(bufs[i].name, "q")) {
            if (!strcmp(bufs[i].dtype, "fp8e4m3"))
                is_fp8 = 1;
            else if (strcmp(bufs[i].dtype, "int8"))
                return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: q must be fp8e4m3 or "
                                    "int8, not %s", bufs[i].dtype);
            if (bufs[i].count < total)
                return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: q holds %lld elements, "
                                    "needs %lld", (long long)bufs[i].count, (long long)total);
            q = &bufs[i];
        } else if (!strcmp(bufs[i].name, "scale")) {
            if (strcmp(bufs[i].dtype, "f32") || bufs[i].count < 1)
                return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: scale must be one f32");
            scale = &bufs[i];
        }
    }
    if (!q || !scale)
        return amk_diag_set(d, AMK_EINVAL, "quant_per_tensor: needs buffers q and scale");
    float amax = 0.0f;
    for (int64_t i = 0; i < total; i++) {
        const float a = fabsf((float)load(x, tx, i));
        amax = a > amax ? a : amax;
    }
    const float qmax = is_fp8 ? 448.0f : 127.0f;
    volatile float sc = amax / qmax; /* one f32 division, as on the device */
    float s = sc < 1e-12f ? 1e-12f : sc;
    ((float *)scale->data)[0] = s;
    for (int64_t i = 0; i < total; i++) {
        volatile float v = (float)load(x, tx, i) / s;
        if (is_fp8) {
            ((uint8_t *)q->data)[i] = fp8e4m3_bits(v);
        } else {
            float r = nearbyintf(v);
            r = r > 127.0f ? 127.0f : (r < -128.0f ? -128.0f : r);
            ((int8_t *)q->data)[i] = (int8_t)r;
        }
    }
    for (int i = 0; i < nbufs; i++)
        if (bufs[i].name && bufs[i].data && !strcmp(bufs[i].name, "ws") && bufs[i].dtype &&
            !strcmp(bufs[i].dtype, "f32"))
            memset(bufs[i].data, 0, (size_t)bufs[i].count * sizeof(float));
    return AMK_OK;
}

static const struct {
    const char *name;
    amk_host_ref_fn fn;
} host_refs[] = {
    {"gemm_f32", ref_gemm_f32},
    {"rmsnorm", ref_rmsnorm},
    {"softmax", ref_softmax},
    {"gemv", ref_gemv},
    {"quant_per_tensor", ref_quant_per_tensor},
    {"gemm_tc", ref_gemm_tc},
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
