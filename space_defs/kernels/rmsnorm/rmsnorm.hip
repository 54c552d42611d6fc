/* rmsnorm: y[m,:] = x[m,:] * rsqrt(mean(x[m,:]^2) + 1e-6) * w[:], rows of N elements of
 * amk_t (f32, f16 or bf16), accumulated in f32. A block of THREADS threads normalises ROWS
 * rows; each row belongs to a group of THREADS/ROWS threads that reads it VEC elements at a
 * time (16-byte or narrower loads). When the row fits in the group's registers it is read
 * once; otherwise it is streamed twice (the second read mostly hits L2). The sum of squares
 * is reduced by warp shuffles, then through shared memory when a group spans warps.
 * Any M, N >= 1 is handled: a row whose length is not a multiple of VEC is read element by
 * element (its start is not VEC-aligned), and the row tail is guarded. Knobs: THREADS VEC ROWS. */

#if !defined(THREADS) || !defined(VEC) || !defined(ROWS)
#error "rmsnorm needs -DTHREADS -DVEC -DROWS"
#endif
#if !defined(AMK_T_F32) && !defined(AMK_T_F16) && !defined(AMK_T_BF16)
#error "rmsnorm needs the shape's dtype: -DAMK_T_F32, -DAMK_T_F16 or -DAMK_T_BF16"
#endif

#define RMS_GROUP (THREADS / ROWS)          /* threads per row */
#define RMS_CACHE 32                        /* floats per thread kept for the one-pass path */
#define RMS_CV (RMS_CACHE / VEC)            /* cached vectors per thread */
#define RMS_EPS 1e-6f
#if RMS_GROUP > AMK_WARP
#define RMS_GROUP_WARPS (RMS_GROUP / AMK_WARP)
#endif

static_assert(THREADS % ROWS == 0, "ROWS must divide THREADS");
static_assert((RMS_GROUP & (RMS_GROUP - 1)) == 0, "THREADS / ROWS must be a power of two");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8");

/* Raw chunk types for vector moves of 2..16 bytes. */
template <int NB> struct rms_chunk;
template <> struct rms_chunk<2> { typedef unsigned short type; };
template <> struct rms_chunk<4> { typedef unsigned int type; };
template <> struct rms_chunk<8> { typedef uint2 type; };
template <> struct rms_chunk<16> { typedef uint4 type; };

/* VEC elements of amk_t viewed as 16-byte (or narrower, when VEC*elt < 16) chunks. */
struct rms_pack {
    enum { BYTES = VEC * (int)sizeof(amk_t), CB = BYTES > 16 ? 16 : BYTES, NC = BYTES / CB };
    typedef typename rms_chunk<CB>::type chunk;
    union {
        chunk c[NC];
        amk_t e[VEC];
    };
};

/* Loads elements [base, base+VEC) of a row as floats; past-the-end elements read as 0.
 * wide: the row length is a multiple of VEC, so base < n implies the whole vector is in. */
AMK_INLINE void rms_load(float (&d)[VEC], const amk_t *__restrict__ p, int base, int n,
                         bool wide)
{
    if (wide && base < n) {
        rms_pack u;
        const rms_pack::chunk *s = reinterpret_cast<const rms_pack::chunk *>(p + base);
#pragma unroll
        for (int c = 0; c < rms_pack::NC; ++c)
            u.c[c] = s[c];
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = amk_to_float(u.e[v]);
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = base + v < n ? amk_to_float(p[base + v]) : 0.0f;
    }
}

/* Stores the in-range part of d to elements [base, base+VEC) of a row. */
AMK_INLINE void rms_store(amk_t *__restrict__ p, const float (&d)[VEC], int base, int n,
                          bool wide)
{
    if (wide && base < n) {
        rms_pack u;
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            u.e[v] = amk_from_float<amk_t>(d[v]);
        rms_pack::chunk *s = reinterpret_cast<rms_pack::chunk *>(p + base);
#pragma unroll
        for (int c = 0; c < rms_pack::NC; ++c)
            s[c] = u.c[c];
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (base + v < n)
                p[base + v] = amk_from_float<amk_t>(d[v]);
    }
}

/* Sum of v over the thread's group. Every thread of the block must call it (shuffles use
 * the whole warp; the cross-warp step has a barrier). */
AMK_INLINE float rms_group_sum(float v, int grp, int lane)
{
#pragma unroll
    for (int o = (RMS_GROUP < AMK_WARP ? RMS_GROUP : AMK_WARP) / 2; o > 0; o >>= 1)
        v += amk_shfl_xor(v, o);
#ifdef RMS_GROUP_WARPS
    __shared__ float part[ROWS][RMS_GROUP_WARPS];
    if (lane % AMK_WARP == 0)
        part[grp][lane / AMK_WARP] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int i = 0; i < RMS_GROUP_WARPS; ++i)
        v += part[grp][i];
#else
    (void)grp;
    (void)lane;
#endif
    return v;
}

AMK_KERNEL void __launch_bounds__(THREADS)
rmsnorm_kernel(const amk_t *__restrict__ x, const amk_t *__restrict__ w,
               amk_t *__restrict__ y, int M, int N)
{
    const int grp = threadIdx.x / RMS_GROUP, lane = threadIdx.x % RMS_GROUP;
    const int row = blockIdx.x * ROWS + grp;
    const bool active = row < M; /* no early return: the reduction needs every thread */
    const bool wide = VEC > 1 && N % VEC == 0;
    const bool cached = N <= RMS_CV * RMS_GROUP * VEC;
    const amk_t *xr = x + (size_t)(active ? row : 0) * N;
    amk_t *yr = y + (size_t)(active ? row : 0) * N;

    float xv[RMS_CV][VEC];
    float ss = 0.0f;
    if (active) {
        if (cached) {
#pragma unroll
            for (int c = 0; c < RMS_CV; ++c) {
                rms_load(xv[c], xr, (c * RMS_GROUP + lane) * VEC, N, wide);
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    ss = fmaf(xv[c][v], xv[c][v], ss);
            }
        } else {
            for (int base = lane * VEC; base < N; base += RMS_GROUP * VEC) {
                float t[VEC];
                rms_load(t, xr, base, N, wide);
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    ss = fmaf(t[v], t[v], ss);
            }
        }
    }
    ss = rms_group_sum(ss, grp, lane);
    if (!active)
        return;
    const float inv = rsqrtf(ss / (float)N + RMS_EPS);

    if (cached) {
#pragma unroll
        for (int c = 0; c < RMS_CV; ++c) {
            const int base = (c * RMS_GROUP + lane) * VEC;
            if (base < N) {
                float wv[VEC], o[VEC];
                rms_load(wv, w, base, N, wide);
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    o[v] = xv[c][v] * inv * wv[v];
                rms_store(yr, o, base, N, wide);
            }
        }
    } else {
        for (int base = lane * VEC; base < N; base += RMS_GROUP * VEC) {
            float t[VEC], wv[VEC], o[VEC];
            rms_load(t, xr, base, N, wide);
            rms_load(wv, w, base, N, wide);
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                o[v] = t[v] * inv * wv[v];
            rms_store(yr, o, base, N, wide);
        }
    }
}
