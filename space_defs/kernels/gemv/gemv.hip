/* gemv: y[n] = sum_k W[n,k] * x[k], W[N,K] row-major bf16, x[K] bf16, y[N] f32, f32
 * accumulation (decode-time, memory-bound: every weight is read once). A block of THREADS
 * threads is split into groups of GROUP threads; a group owns ROWS consecutive rows and
 * walks them together VEC elements per thread per step (16-byte loads at VEC 8), so ROWS
 * independent weight loads are in flight and each x vector is loaded once for all of them.
 * The partial sums are reduced with warp shuffles, then through shared memory when a group
 * spans warps. Any N, K >= 1: a K that is not a multiple of VEC uses scalar loads (the rows
 * are then not VEC-aligned); rows past N are skipped. Knobs: THREADS GROUP VEC ROWS. */

#if !defined(THREADS) || !defined(GROUP) || !defined(VEC) || !defined(ROWS)
#error "gemv needs -DTHREADS -DGROUP -DVEC -DROWS"
#endif

#define GV_GROUPS (THREADS / GROUP)
#define GV_LANES (GROUP < AMK_WARP ? GROUP : AMK_WARP) /* shuffle width */
#if GROUP > AMK_WARP
#define GV_GROUP_WARPS (GROUP / AMK_WARP)
#endif

static_assert(THREADS % GROUP == 0, "GROUP must divide THREADS");
static_assert((GROUP & (GROUP - 1)) == 0, "GROUP must be a power of two");
static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 2, 4 or 8");

template <int NB> struct gv_chunk;
template <> struct gv_chunk<4> { typedef unsigned int type; };
template <> struct gv_chunk<8> { typedef uint2 type; };
template <> struct gv_chunk<16> { typedef uint4 type; };

/* VEC bf16 as one raw load of 2*VEC bytes. */
union gv_pack {
    typename gv_chunk<2 * VEC>::type c;
    amk_bf16 e[VEC];
};

AMK_INLINE void gv_load(float (&d)[VEC], const amk_bf16 *__restrict__ p, int base, int n,
                        bool wide)
{
    if (wide) {
        gv_pack u;
        u.c = *reinterpret_cast<const typename gv_chunk<2 * VEC>::type *>(p + base);
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = amk_to_float(u.e[v]);
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            d[v] = base + v < n ? amk_to_float(p[base + v]) : 0.0f;
    }
}

AMK_KERNEL void __launch_bounds__(THREADS)
gemv_kernel(const amk_bf16 *__restrict__ W, const amk_bf16 *__restrict__ x,
            float *__restrict__ y, int N, int K)
{
    const int g = threadIdx.x / GROUP, lane = threadIdx.x % GROUP;
    const int row0 = (blockIdx.x * GV_GROUPS + g) * ROWS;
    const bool wide = K % VEC == 0;
    const amk_bf16 *wr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
        wr[r] = W + (size_t)(row0 + r < N ? row0 + r : 0) * K;

    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
        acc[r] = 0.0f;
    if (row0 < N) {
        for (int base = lane * VEC; base < K; base += GROUP * VEC) {
            float xv[VEC], wv[ROWS][VEC];
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                gv_load(wv[r], wr[r], base, K, wide);
            gv_load(xv, x, base, K, wide);
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    acc[r] = fmaf(wv[r][v], xv[v], acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int o = GV_LANES / 2; o > 0; o >>= 1)
            acc[r] += amk_shfl_xor(acc[r], o);
#ifdef GV_GROUP_WARPS
    __shared__ float part[GV_GROUPS][ROWS][GV_GROUP_WARPS];
    if (lane % AMK_WARP == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            part[g][r][lane / AMK_WARP] = acc[r];
    __syncthreads();
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float s = 0.0f;
#pragma unroll
            for (int i = 0; i < GV_GROUP_WARPS; ++i)
                s += part[g][r][i];
            acc[r] = s;
        }
#endif
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (row0 + r < N)
                y[row0 + r] = acc[r];
}
