/* gemm: C[M,N] = A[M,K] * B[K,N], row-major f32, SIMT register tiling.
 * One block computes a BM x BN tile of C; each of its (BM/TM)*(BN/TN) threads owns TM x TN
 * outputs. K is walked in BK slices staged through shared memory: the A slice is stored
 * transposed (As[k][m], rows padded by 4 floats so the transposed stores spread over banks),
 * the B slice as is (Bs[k][n]). Global loads are VEC floats wide when the row length allows
 * it; STAGES=2 double-buffers shared memory and prefetches the next slice into registers
 * while the current one is multiplied. Every load and store is bounds-checked, so any
 * M, N, K >= 1 is computed correctly. Knobs: BM BN BK TM TN VEC STAGES (all -D). */

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(TM) || !defined(TN) || \
    !defined(VEC) || !defined(STAGES)
#error "gemm needs -DBM -DBN -DBK -DTM -DTN -DVEC -DSTAGES"
#endif

#define GEMM_TX (BN / TN)                   /* threads along N */
#define GEMM_TY (BM / TM)                   /* threads along M */
#define GEMM_THREADS (GEMM_TX * GEMM_TY)
#define GEMM_TM_V (TM < 4 ? TM : 4)         /* width of one shared-memory read of A */
#define GEMM_TN_V (TN < 4 ? TN : 4)         /* width of one shared-memory read of B */
#define GEMM_LDA (BM + 4)                   /* As row pitch (floats) */
#define GEMM_LDB (BN)                       /* Bs row pitch (floats) */
#define GEMM_A_VECS (BM * BK / VEC)         /* VEC-wide loads per A slice */
#define GEMM_B_VECS (BK * BN / VEC)
#define GEMM_A_ITERS ((GEMM_A_VECS + GEMM_THREADS - 1) / GEMM_THREADS)
#define GEMM_B_ITERS ((GEMM_B_VECS + GEMM_THREADS - 1) / GEMM_THREADS)

/* What the code below relies on; spec.json's restrictions say the same. */
static_assert(BM % TM == 0 && BN % TN == 0, "thread tile must divide the block tile");
static_assert(TM == 1 || TM == 2 || TM % 4 == 0, "TM must be 1, 2 or a multiple of 4");
static_assert(TN == 1 || TN == 2 || TN % 4 == 0, "TN must be 1, 2 or a multiple of 4");
static_assert(BM % 4 == 0 && BN % 4 == 0, "BM and BN must be multiples of 4");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(BK % VEC == 0, "BK must be a multiple of VEC");
static_assert(STAGES == 1 || STAGES == 2, "STAGES must be 1 or 2");

/* V-wide float moves between a register array and aligned global/shared memory. */
template <int V> struct gemm_vio;
template <> struct gemm_vio<1> {
    static AMK_INLINE void ld(float *d, const float *s) { d[0] = s[0]; }
    static AMK_INLINE void st(float *d, const float *s) { d[0] = s[0]; }
};
template <> struct gemm_vio<2> {
    static AMK_INLINE void ld(float *d, const float *s)
    {
        float2 t = *reinterpret_cast<const float2 *>(s);
        d[0] = t.x;
        d[1] = t.y;
    }
    static AMK_INLINE void st(float *d, const float *s)
    {
        *reinterpret_cast<float2 *>(d) = make_float2(s[0], s[1]);
    }
};
template <> struct gemm_vio<4> {
    static AMK_INLINE void ld(float *d, const float *s)
    {
        float4 t = *reinterpret_cast<const float4 *>(s);
        d[0] = t.x;
        d[1] = t.y;
        d[2] = t.z;
        d[3] = t.w;
    }
    static AMK_INLINE void st(float *d, const float *s)
    {
        *reinterpret_cast<float4 *>(d) = make_float4(s[0], s[1], s[2], s[3]);
    }
};

/* Global -> registers for the slice starting at column k0 of A / row k0 of B. Elements
 * outside the matrices read as 0, so a partial slice contributes nothing. The wide path
 * needs the row length to be a multiple of VEC (alignment, and no vector straddles the
 * edge); otherwise each element is loaded and checked on its own. */
AMK_INLINE void gemm_load(float (&ra)[GEMM_A_ITERS][VEC], float (&rb)[GEMM_B_ITERS][VEC],
                          const float *__restrict__ A, const float *__restrict__ B, int M,
                          int N, int K, int m0, int n0, int k0, bool a_wide, bool b_wide)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int it = 0; it < GEMM_A_ITERS; ++it) {
        const int i = tid + it * GEMM_THREADS;
        if (GEMM_A_VECS % GEMM_THREADS == 0 || i < GEMM_A_VECS) {
            const int gm = m0 + i / (BK / VEC);
            const int gk = k0 + (i % (BK / VEC)) * VEC;
            const float *p = A + (size_t)gm * K + gk;
            if (a_wide && gm < M && gk < K) {
                gemm_vio<VEC>::ld(ra[it], p);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    ra[it][v] = (gm < M && gk + v < K) ? p[v] : 0.0f;
            }
        }
    }
#pragma unroll
    for (int it = 0; it < GEMM_B_ITERS; ++it) {
        const int i = tid + it * GEMM_THREADS;
        if (GEMM_B_VECS % GEMM_THREADS == 0 || i < GEMM_B_VECS) {
            const int gk = k0 + i / (BN / VEC);
            const int gn = n0 + (i % (BN / VEC)) * VEC;
            const float *p = B + (size_t)gk * N + gn;
            if (b_wide && gk < K && gn < N) {
                gemm_vio<VEC>::ld(rb[it], p);
            } else {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    rb[it][v] = (gk < K && gn + v < N) ? p[v] : 0.0f;
            }
        }
    }
}

/* Registers -> shared buffer: A transposed into As[k][m], B row-wise into Bs[k][n]. */
AMK_INLINE void gemm_store(const float (&ra)[GEMM_A_ITERS][VEC],
                           const float (&rb)[GEMM_B_ITERS][VEC], float *As, float *Bs)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int it = 0; it < GEMM_A_ITERS; ++it) {
        const int i = tid + it * GEMM_THREADS;
        if (GEMM_A_VECS % GEMM_THREADS == 0 || i < GEMM_A_VECS) {
            const int m = i / (BK / VEC), k = (i % (BK / VEC)) * VEC;
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                As[(k + v) * GEMM_LDA + m] = ra[it][v];
        }
    }
#pragma unroll
    for (int it = 0; it < GEMM_B_ITERS; ++it) {
        const int i = tid + it * GEMM_THREADS;
        if (GEMM_B_VECS % GEMM_THREADS == 0 || i < GEMM_B_VECS) {
            const int k = i / (BN / VEC), n = (i % (BN / VEC)) * VEC;
            gemm_vio<VEC>::st(Bs + k * GEMM_LDB + n, rb[it]);
        }
    }
}

/* acc += As^T * Bs over one slice. A thread's rows are ty*TM_V + c*(TY*TM_V) + v (and the
 * same pattern for columns), so the TM_V/TN_V-wide shared reads of a warp hit distinct banks
 * or broadcast, and a warp's C stores are contiguous runs. */
AMK_INLINE void gemm_compute(float (&acc)[TM][TN], const float *As, const float *Bs, int tx,
                             int ty)
{
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        float a[TM], b[TN];
#pragma unroll
        for (int c = 0; c < TM / GEMM_TM_V; ++c)
            gemm_vio<GEMM_TM_V>::ld(a + c * GEMM_TM_V,
                                   As + k * GEMM_LDA + (c * GEMM_TY + ty) * GEMM_TM_V);
#pragma unroll
        for (int c = 0; c < TN / GEMM_TN_V; ++c)
            gemm_vio<GEMM_TN_V>::ld(b + c * GEMM_TN_V,
                                   Bs + k * GEMM_LDB + (c * GEMM_TX + tx) * GEMM_TN_V);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

AMK_KERNEL void __launch_bounds__(GEMM_THREADS)
gemm_kernel(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
            int M, int N, int K)
{
    /* STAGES x As[BK][LDA], then STAGES x Bs[BK][LDB]: launch.shared_bytes in spec.json. */
    extern __shared__ __attribute__((aligned(16))) float gemm_smem[];
    float *As = gemm_smem;
    float *Bs = gemm_smem + STAGES * BK * GEMM_LDA;

    const int tid = threadIdx.x;
    const int tx = tid % GEMM_TX, ty = tid / GEMM_TX;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const bool a_wide = VEC > 1 && K % VEC == 0;
    const bool b_wide = VEC > 1 && N % VEC == 0;
    const int ktiles = (K + BK - 1) / BK;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;

    float ra[GEMM_A_ITERS][VEC], rb[GEMM_B_ITERS][VEC];

#if STAGES == 1
    for (int kt = 0; kt < ktiles; ++kt) {
        gemm_load(ra, rb, A, B, M, N, K, m0, n0, kt * BK, a_wide, b_wide);
        gemm_store(ra, rb, As, Bs);
        __syncthreads();
        gemm_compute(acc, As, Bs, tx, ty);
        __syncthreads();
    }
#else
    /* One barrier per slice: buffer cur^1 is rewritten only after every thread passed the
     * barrier that ended the previous slice's reads of it. */
    gemm_load(ra, rb, A, B, M, N, K, m0, n0, 0, a_wide, b_wide);
    gemm_store(ra, rb, As, Bs);
    __syncthreads();
    for (int kt = 0; kt < ktiles; ++kt) {
        const int cur = kt & 1;
        const bool more = kt + 1 < ktiles;
        if (more)
            gemm_load(ra, rb, A, B, M, N, K, m0, n0, (kt + 1) * BK, a_wide, b_wide);
        gemm_compute(acc, As + cur * BK * GEMM_LDA, Bs + cur * BK * GEMM_LDB, tx, ty);
        if (more)
            gemm_store(ra, rb, As + (cur ^ 1) * BK * GEMM_LDA, Bs + (cur ^ 1) * BK * GEMM_LDB);
        __syncthreads();
    }
#endif

    const bool c_wide = GEMM_TN_V > 1 && N % GEMM_TN_V == 0;
#pragma unroll
    for (int ci = 0; ci < TM / GEMM_TM_V; ++ci)
#pragma unroll
        for (int vi = 0; vi < GEMM_TM_V; ++vi) {
            const int i = ci * GEMM_TM_V + vi;
            const int row = m0 + (ci * GEMM_TY + ty) * GEMM_TM_V + vi;
            if (row >= M)
                continue;
#pragma unroll
            for (int cj = 0; cj < TN / GEMM_TN_V; ++cj) {
                const int col = n0 + (cj * GEMM_TX + tx) * GEMM_TN_V;
                float *dst = C + (size_t)row * N + col;
                if (c_wide && col < N) {
                    gemm_vio<GEMM_TN_V>::st(dst, &acc[i][cj * GEMM_TN_V]);
                } else {
#pragma unroll
                    for (int vj = 0; vj < GEMM_TN_V; ++vj)
                        if (col + vj < N)
                            dst[vj] = acc[i][cj * GEMM_TN_V + vj];
                }
            }
        }
}
