/* softmax: y[m,:] = exp(x[m,:] - max) / sum(exp(x[m,:] - max)), rows of N elements of amk_t
 * (f32, f16 or bf16), accumulated in f32. A block of THREADS threads handles ROWS rows;
 * each row belongs to a group of THREADS/ROWS threads that reads it VEC elements at a time
 * (16-byte or narrower loads). When the row fits in the group's registers (SM_CACHE floats
 * per thread) it is read once: max, then exp and sum kept in registers, then the scaled
 * store. Otherwise the row is streamed twice: an online pass keeps a running (max, sum)
 * per thread (the sum rescaled when the max grows), the group merges the pairs, and a
 * second pass writes exp(x - max) / sum (mostly from L2). Reductions: warp shuffles, then
 * shared memory when a group spans warps. Any M, N >= 1: a row whose length is not a
 * multiple of VEC is read element by element, and the row tail is guarded.
 * Knobs: THREADS VEC ROWS. */

#if !defined(THREADS) || !defined(VEC) || !defined(ROWS)
#error "softmax needs -DTHREADS -DVEC -DROWS"
#endif
#if !defined(AMK_T_F32) && !defined(AMK_T_F16) && !defined(AMK_T_BF16)
#error "softmax needs the shape's dtype: -DAMK_T_F32, -DAMK_T_F16 or -DAMK_T_BF16"
#endif

#define SM_GROUP (THREADS / ROWS)          /* threads per row */
#define SM_CACHE 32                        /* floats per thread kept for the one-pass path */
#define SM_CV (SM_CACHE / VEC)             /* cached vectors per thread */
#define SM_LOW (-3.0e38f)                  /* "no element yet" max: finite, so no inf - inf */
#define SM_MAX 0                           /* sm_group modes */
#define SM_SUM 1
#define SM_MERGE 2
#if SM_GROUP > AMK_WARP
#define SM_GROUP_WARPS (SM_GROUP / AMK_WARP)
#endif

static_assert(THREADS % ROWS == 0, "ROWS must divide THREADS");
static_assert((SM_GROUP & (SM_GROUP - 1)) == 0, "THREADS / ROWS must be a power of two");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

template <int NB> struct sm_chunk;
template <> struct sm_chunk<2> { typedef unsigned short type; };
template <> struct sm_chunk<4> { typedef unsigned int type; };
template <> struct sm_chunk<8> { typedef uint2 type; };
template <> struct sm_chunk<16> { typedef uint4 type; };

struct sm_pack {
    enum { BYTES = VEC * (int)sizeof(amk_t), CB = BYTES > 16 ? 16 : BYTES, NC = BYTES / CB };
    typedef typename sm_chunk<CB>::type chunk;
    union {
        chunk c[NC];
        amk_t e[VEC];
    };
};

/* Elements [base, base+VEC) of a row as floats; past-the-end elements read as `fill`. */
AMK_INLINE void sm_load(float (&d)[VEC], const amk_t *__restrict__ p, int base, int n,
                        bool wide, float fill)
{
    if (wide && base < n) {
        sm_pack u;
        const sm_pack::chunk *s = reinterpret_cast<const sm_pack::chunk *>(p + base);
#pragma unroll
        for (int c = 0; c < sm_pack::NC; ++c)
            u.c[c] = s[c];
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = amk_to_float(u.e[v]);
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = base + v < n ? amk_to_float(p[base + v]) : fill;
    }
}

AMK_INLINE void sm_store(amk_t *__restrict__ p, const float (&d)[VEC], int base, int n,
                         bool wide)
{
    if (wide && base < n) {
        sm_pack u;
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            u.e[v] = amk_from_float<amk_t>(d[v]);
        sm_pack::chunk *s = reinterpret_cast<sm_pack::chunk *>(p + base);
#pragma unroll
        for (int c = 0; c < sm_pack::NC; ++c)
            s[c] = u.c[c];
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (base + v < n)
                p[base + v] = amk_from_float<amk_t>(d[v]);
    }
}

/* Merges running (max, sum) pairs: the sums are rescaled to the larger max. */
AMK_INLINE void sm_merge(float &m, float &s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    s = s * expf(m - mm) + s2 * expf(m2 - mm);
    m = mm;
}

/* Reduces over the thread's group: SM_MAX (m only), SM_SUM (m only, summed) or SM_MERGE
 * ((m, s) running pairs).
 * Every thread of the block must call it (shuffles use the whole warp; the cross-warp step
 * has barriers). */
AMK_INLINE void sm_group(float &m, float &s, int mode, int grp, int lane)
{
#pragma unroll
    for (int o = (SM_GROUP < AMK_WARP ? SM_GROUP : AMK_WARP) / 2; o > 0; o >>= 1) {
        const float m2 = amk_shfl_xor(m, o), s2 = amk_shfl_xor(s, o);
        if (mode == SM_MAX)
            m = fmaxf(m, m2);
        else if (mode == SM_SUM)
            m += m2;
        else
            sm_merge(m, s, m2, s2);
    }
#ifdef SM_GROUP_WARPS
    __shared__ float pm[ROWS][SM_GROUP_WARPS], ps[ROWS][SM_GROUP_WARPS];
    if (lane % AMK_WARP == 0) {
        pm[grp][lane / AMK_WARP] = m;
        ps[grp][lane / AMK_WARP] = s;
    }
    __syncthreads();
    m = pm[grp][0];
    s = ps[grp][0];
#pragma unroll
    for (int i = 1; i < SM_GROUP_WARPS; ++i) {
        if (mode == SM_MAX)
            m = fmaxf(m, pm[grp][i]);
        else if (mode == SM_SUM)
            m += pm[grp][i];
        else
            sm_merge(m, s, pm[grp][i], ps[grp][i]);
    }
    __syncthreads(); /* the arrays are reused by the next call */
#else
    (void)grp;
    (void)lane;
#endif
}

AMK_KERNEL void __launch_bounds__(THREADS)
softmax_kernel(const amk_t *__restrict__ x, amk_t *__restrict__ y, int M, int N)
{
    const int grp = threadIdx.x / SM_GROUP, lane = threadIdx.x % SM_GROUP;
    const int row = blockIdx.x * ROWS + grp;
    const bool active = row < M; /* no early return: the reductions need every thread */
    const bool wide = VEC > 1 && N % VEC == 0;
    const bool cached = N <= SM_CV * SM_GROUP * VEC;
    const amk_t *xr = x + (size_t)(active ? row : 0) * N;
    amk_t *yr = y + (size_t)(active ? row : 0) * N;

    if (cached) {
        float xv[SM_CV][VEC];
        float mx = SM_LOW, sum = 0.0f;
#pragma unroll
        for (int c = 0; c < SM_CV; ++c) {
            sm_load(xv[c], xr, (c * SM_GROUP + lane) * VEC, active ? N : 0, wide, SM_LOW);
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                mx = fmaxf(mx, xv[c][v]);
        }
        sm_group(mx, sum, SM_MAX, grp, lane);
#pragma unroll
        for (int c = 0; c < SM_CV; ++c)
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                /* padding holds SM_LOW: exp(SM_LOW - mx) is 0 (or 1 for an idle thread
                 * of an inactive row, which never stores). */
                xv[c][v] = expf(xv[c][v] - mx);
                sum += xv[c][v];
            }
        float unused = 0.0f;
        sm_group(sum, unused, SM_SUM, grp, lane);
        if (!active)
            return;
        const float inv = 1.0f / sum;
#pragma unroll
        for (int c = 0; c < SM_CV; ++c) {
            const int base = (c * SM_GROUP + lane) * VEC;
            if (base < N) {
                float o[VEC];
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    o[v] = xv[c][v] * inv;
                sm_store(yr, o, base, N, wide);
            }
        }
    } else {
        float mx = SM_LOW, sum = 0.0f;
        if (active) {
            for (int base = lane * VEC; base < N; base += SM_GROUP * VEC) {
                float t[VEC];
                sm_load(t, xr, base, N, wide, SM_LOW);
                float bm = t[0];
#pragma unroll
                for (int v = 1; v < VEC; ++v)
                    bm = fmaxf(bm, t[v]);
                if (bm > mx) {
                    sum *= expf(mx - bm);
                    mx = bm;
                }
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    sum += expf(t[v] - mx);
            }
        }
        sm_group(mx, sum, SM_MERGE, grp, lane);
        if (!active)
            return;
        const float inv = 1.0f / sum;
        for (int base = lane * VEC; base < N; base += SM_GROUP * VEC) {
            float t[VEC], o[VEC];
            sm_load(t, xr, base, N, wide, SM_LOW);
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                o[v] = expf(t[v] - mx) * inv;
            sm_store(yr, o, base, N, wide);
        }
    }
}
