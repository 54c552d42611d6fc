/* gemm_tc: C[M,N] = A[M,K] * B[K,N]; A, B row-major f16 or bf16, C row-major f32, products
 * and sums in f32 on the matrix units.
 *
 * One block computes a BM x BN tile of C with (BM/WM)*(BN/WN) warps (wavefronts on AMD),
 * each owning a WM x WN warp tile. K is walked in BK slices through a STAGES-deep ring of
 * shared-memory buffers: As[BM][BK+8] and Bs[BK][BN+8] (rows padded by 16 bytes, so the 8
 * row addresses of one ldmatrix phase land in distinct bank groups). The ring is filled
 * STAGES-1 slices ahead; one barrier per slice orders both the refill of the buffer read in
 * the previous iteration and the visibility of the slice about to be read.
 *   NVIDIA: 16-byte cp.async.cg copies (src-size 0 zero-fills chunks outside the matrix),
 *           commit_group / wait_group STAGES-2; fragments by ldmatrix (.trans for B, which
 *           is K-major in shared memory); mma.sync.aligned.m16n8k16.row.col f32 += bf16/f16.
 *   AMD:    the same ring filled with ordinary 16-byte loads/stores; fragments read from LDS
 *           and fed to __builtin_amdgcn_mfma_f32_16x16x16f16 / _16x16x16bf16_1k (gfx90a).
 * When K (for A) or N (for B) is not a multiple of 8, 16-byte chunks would be misaligned or
 * straddle the edge, so that operand is staged element by element with bounds checks
 * (ordinary shared stores, covered by the same barrier). C stores are bounds-checked. Any
 * M, N, K >= 1 is computed correctly.
 * Block raster: a 1-D grid remapped in groups of GROUP_M block rows (L2 reuse of B tiles).
 * Split-K (SPLIT_K > 1; serial split-K with fixup, one launch): SPLIT_K blocks per C tile,
 * split s walking K slices [s*kc, (s+1)*kc), kc = cdiv(cdiv(K, BK), SPLIT_K) (a split may be
 * empty). Each block stores its f32 partial tile in the workspace `ws` and counts itself in
 * on the tile's counter; the last to arrive adds the partials in split order 0..SPLIT_K-1
 * (its own from registers), so C does not depend on the arrival order, writes C, and puts
 * the partials and the counter back to zero for the next launch (the run worker checks that
 * `ws` comes back as it went in: zero). SPLIT_K = 1 compiles to the plain kernel; `ws` is
 * then unused.
 * Knobs: BM BN BK WM WN STAGES GROUP_M SPLIT_K (all -D). */

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) || \
    !defined(STAGES) || !defined(GROUP_M) || !defined(SPLIT_K)
#error "gemm_tc needs -DBM -DBN -DBK -DWM -DWN -DSTAGES -DGROUP_M -DSPLIT_K"
#endif
#if !defined(AMK_T_F16) && !defined(AMK_T_BF16)
#error "gemm_tc needs -DAMK_T_F16=1 or -DAMK_T_BF16=1"
#endif

#define TC_WARPS ((BM / WM) * (BN / WN))
#define TC_THREADS (TC_WARPS * AMK_WARP)
#define TC_LDA (BK + 8) /* As row pitch, elements */
#define TC_LDB (BN + 8) /* Bs row pitch, elements */
#define TC_A_ELEMS (BM * TC_LDA)
#define TC_B_ELEMS (BK * TC_LDB)
#define TC_A_CHUNKS (BM * BK / 8) /* 16-byte chunks per A slice */
#define TC_B_CHUNKS (BK * BN / 8)
#define TC_A_ITERS ((TC_A_CHUNKS + TC_THREADS - 1) / TC_THREADS)
#define TC_B_ITERS ((TC_B_CHUNKS + TC_THREADS - 1) / TC_THREADS)
#define TC_MI (WM / 16) /* 16-row matrix ops per warp tile */

static_assert(BM % WM == 0 && BN % WN == 0, "warp tile must divide the block tile");
static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile must be a multiple of 16");
static_assert(BK % 16 == 0, "BK must be a multiple of 16");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES must be 2..4");
static_assert(GROUP_M >= 1, "GROUP_M must be >= 1");
static_assert(SPLIT_K >= 1, "SPLIT_K must be >= 1");

typedef unsigned short tc_u16;

/* ---------- staging: global -> shared, one slice ----------------------------------------- */

/* One 16-byte chunk; ok=false writes zeros (src not read). */
AMK_INLINE void tc_copy16(tc_u16 *dst, const tc_u16 *src, bool ok)
{
#if defined(AMK_VENDOR_NVIDIA)
    unsigned int d;
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
                 : "=r"(d)
                 : "l"(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                 "r"(ok ? 16 : 0));
#else
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (ok)
        v = *reinterpret_cast<const uint4 *>(src);
    *reinterpret_cast<uint4 *>(dst) = v;
#endif
}

AMK_INLINE void tc_load_slice(tc_u16 *As, tc_u16 *Bs, const tc_u16 *__restrict__ A,
                              const tc_u16 *__restrict__ B, int M, int N, int K, int m0,
                              int n0, int k0, bool a_vec, bool b_vec)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int it = 0; it < TC_A_ITERS; ++it) {
        const int i = tid + it * TC_THREADS;
        if (TC_A_CHUNKS % TC_THREADS == 0 || i < TC_A_CHUNKS) {
            const int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
            const int gm = m0 + r, gk = k0 + c;
            tc_u16 *dst = As + r * TC_LDA + c;
            if (a_vec) {
                const bool ok = gm < M && gk < K;
                tc_copy16(dst, ok ? A + (size_t)gm * K + gk : A, ok);
            } else {
#pragma unroll
                for (int v = 0; v < 8; ++v)
                    dst[v] = (gm < M && gk + v < K) ? A[(size_t)gm * K + gk + v] : (tc_u16)0;
            }
        }
    }
#pragma unroll
    for (int it = 0; it < TC_B_ITERS; ++it) {
        const int i = tid + it * TC_THREADS;
        if (TC_B_CHUNKS % TC_THREADS == 0 || i < TC_B_CHUNKS) {
            const int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            const int gk = k0 + r, gn = n0 + c;
            tc_u16 *dst = Bs + r * TC_LDB + c;
            if (b_vec) {
                const bool ok = gk < K && gn < N;
                tc_copy16(dst, ok ? B + (size_t)gk * N + gn : B, ok);
            } else {
#pragma unroll
                for (int v = 0; v < 8; ++v)
                    dst[v] = (gk < K && gn + v < N) ? B[(size_t)gk * N + gn + v] : (tc_u16)0;
            }
        }
    }
}

AMK_INLINE void tc_commit()
{
#if defined(AMK_VENDOR_NVIDIA)
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

AMK_INLINE void tc_wait_stages()
{
#if defined(AMK_VENDOR_NVIDIA)
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
#endif
}

/* ---------- the matrix-unit part, per vendor -------------------------------------------- */

#if defined(AMK_VENDOR_NVIDIA)

#define TC_NI (WN / 8) /* n8 matrix ops per warp tile */
typedef float tc_acc_t[TC_MI][TC_NI][4];

AMK_INLINE unsigned int tc_smem_addr(const void *p)
{
    unsigned int a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

AMK_INLINE void tc_mma(float (&c)[4], const unsigned int (&a)[4], unsigned int b0,
                       unsigned int b1)
{
#if defined(AMK_T_BF16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* acc += As[wm0.., :] * Bs[:, wn0..] over one slice. */
AMK_INLINE void tc_compute(tc_acc_t &acc, const tc_u16 *As, const tc_u16 *Bs, int wm0, int wn0,
                           int lane)
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        unsigned int af[TC_MI][4], bf[TC_NI][2];
#pragma unroll
        for (int mi = 0; mi < TC_MI; ++mi) {
            /* lanes 0-15: rows 0-15 at k 0; lanes 16-31: rows 0-15 at k 8 -> a0..a3 */
            const unsigned int p =
                tc_smem_addr(As + (wm0 + mi * 16 + (lane & 15)) * TC_LDA + kk + (lane >> 4) * 8);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(af[mi][0]), "=r"(af[mi][1]), "=r"(af[mi][2]), "=r"(af[mi][3])
                         : "r"(p));
        }
#pragma unroll
        for (int ni = 0; ni < TC_NI; ni += 2) {
            /* lanes 0-15: k rows 0-15 at n 0; lanes 16-31: k rows 0-15 at n 8; transposed */
            const unsigned int p =
                tc_smem_addr(Bs + (kk + (lane & 15)) * TC_LDB + wn0 + ni * 8 + (lane >> 4) * 8);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(bf[ni][0]), "=r"(bf[ni][1]), "=r"(bf[ni + 1][0]),
                           "=r"(bf[ni + 1][1])
                         : "r"(p));
        }
#pragma unroll
        for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < TC_NI; ++ni)
                tc_mma(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
}

AMK_INLINE void tc_store(const tc_acc_t &acc, float *__restrict__ C, int M, int N, int row0,
                         int col0, int lane)
{
    const bool pair = (N & 1) == 0;
#pragma unroll
    for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + mi * 16 + (lane >> 2) + h * 8;
                const int col = col0 + ni * 8 + (lane & 3) * 2;
                if (row >= M)
                    continue;
                float *dst = C + (size_t)row * N + col;
                if (pair && col + 1 < N) {
                    *reinterpret_cast<float2 *>(dst) =
                        make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                } else {
                    if (col < N)
                        dst[0] = acc[mi][ni][2 * h];
                    if (col + 1 < N)
                        dst[1] = acc[mi][ni][2 * h + 1];
                }
            }
}

#else /* AMD: MFMA 16x16x16 on a 64-lane wavefront */

#define TC_NI (WN / 16) /* 16-column matrix ops per warp tile */
typedef float tc_v4f __attribute__((ext_vector_type(4)));
#if defined(AMK_T_BF16)
typedef short tc_v4in __attribute__((ext_vector_type(4)));
#else
typedef _Float16 tc_v4in __attribute__((ext_vector_type(4)));
#endif
typedef tc_v4f tc_acc_t[TC_MI][TC_NI];

/* Operand layout of v_mfma_f32_16x16x16{f16,bf16_1k}: lane l holds A[l%16][4*(l/16)+0..3]
 * and B[4*(l/16)+0..3][l%16]; the result D[4*(l/16)+i][l%16] in element i. */
AMK_INLINE void tc_compute(tc_acc_t &acc, const tc_u16 *As, const tc_u16 *Bs, int wm0, int wn0,
                           int lane)
{
    const int r = lane & 15, q = (lane >> 4) * 4;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        tc_v4in af[TC_MI], bf[TC_NI];
#pragma unroll
        for (int mi = 0; mi < TC_MI; ++mi) {
            const tc_u16 *p = As + (wm0 + mi * 16 + r) * TC_LDA + kk + q;
            uint2 raw = *reinterpret_cast<const uint2 *>(p);
            __builtin_memcpy(&af[mi], &raw, 8);
        }
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni) {
            tc_u16 e[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                e[i] = Bs[(kk + q + i) * TC_LDB + wn0 + ni * 16 + r];
            __builtin_memcpy(&bf[ni], e, 8);
        }
#pragma unroll
        for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < TC_NI; ++ni)
#if defined(AMK_T_BF16)
                acc[mi][ni] =
                    __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(af[mi], bf[ni], acc[mi][ni], 0, 0, 0);
#else
                acc[mi][ni] =
                    __builtin_amdgcn_mfma_f32_16x16x16f16(af[mi], bf[ni], acc[mi][ni], 0, 0, 0);
#endif
    }
}

AMK_INLINE void tc_store(const tc_acc_t &acc, float *__restrict__ C, int M, int N, int row0,
                         int col0, int lane)
{
    const int r = lane & 15, q = (lane >> 4) * 4;
#pragma unroll
    for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int row = row0 + mi * 16 + q + i, col = col0 + ni * 16 + r;
                if (row < M && col < N)
                    C[(size_t)row * N + col] = acc[mi][ni][i];
            }
}

#endif

/* ---------- split-K fixup ---------------------------------------------------------------- */

#if SPLIT_K > 1
/* A partial tile is stored in register order, not C order: accumulator group g = (mi, ni)
 * (4 floats) of thread t at g * TC_THREADS * 4 + t * 4, so a warp's 16-byte stores and loads
 * are contiguous. Every block maps threads to accumulators alike, so the block that adds the
 * partials reads each group in the thread that holds the same group in registers. */
#define TC_TILE_ELEMS (BM * BN)
static_assert(TC_MI * TC_NI * 4 * TC_THREADS == TC_TILE_ELEMS, "a partial tile is BM*BN floats");

/* A 16-byte group written by another block: past the (incoherent) L1 on NVIDIA; on AMD the
 * acquire fence before the reads has already invalidated the L1. */
AMK_INLINE float4 tc_load_partial(const float *p)
{
#if defined(AMK_VENDOR_NVIDIA)
    return __ldcg(reinterpret_cast<const float4 *>(p));
#else
    return *reinterpret_cast<const float4 *>(p);
#endif
}

/* Stores this block's partial tile (split `split` of C tile `tile`) and counts it in on the
 * tile's counter. Returns true in the last block to arrive, with acc holding the sum of every
 * split's partial in split order 0..SPLIT_K-1, the tile's partials and counter zero again.
 * ws: `tiles * SPLIT_K` partial tiles, then one 32-bit counter per tile. flag: one int of
 * shared memory that no thread reads or writes for anything else meanwhile. */
AMK_INLINE bool tc_split_fixup(tc_acc_t &acc, float *ws, int tiles, int tile, int split,
                               int *flag)
{
    const int tid = threadIdx.x;
    float *part = ws + (size_t)tile * SPLIT_K * TC_TILE_ELEMS + (size_t)tid * 4;
    unsigned int *count =
        reinterpret_cast<unsigned int *>(ws + (size_t)tiles * SPLIT_K * TC_TILE_ELEMS) + tile;
#pragma unroll
    for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni)
            *reinterpret_cast<float4 *>(part + (size_t)split * TC_TILE_ELEMS +
                                        (mi * TC_NI + ni) * TC_THREADS * 4) =
                make_float4(acc[mi][ni][0], acc[mi][ni][1], acc[mi][ni][2], acc[mi][ni][3]);
    /* Release: each thread's partial is visible device-wide before thread 0 counts the
     * block in (the barrier orders every thread's fence before the atomic). */
    __threadfence();
    __syncthreads();
    if (tid == 0)
        *flag = atomicAdd(count, 1u) == SPLIT_K - 1;
    __syncthreads();
    if (!*flag)
        return false;
    /* Acquire: the counts seen by the atomic order the other splits' partials before the
     * reads below. */
    __threadfence();
#pragma unroll
    for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni) {
            const float4 own =
                make_float4(acc[mi][ni][0], acc[mi][ni][1], acc[mi][ni][2], acc[mi][ni][3]);
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int s = 0; s < SPLIT_K; ++s) {
                float *p = part + (size_t)s * TC_TILE_ELEMS + (mi * TC_NI + ni) * TC_THREADS * 4;
                const float4 v = s == split ? own : tc_load_partial(p);
                *reinterpret_cast<float4 *>(p) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (s == 0) {
                    sum = v;
                } else {
                    sum.x += v.x;
                    sum.y += v.y;
                    sum.z += v.z;
                    sum.w += v.w;
                }
            }
            acc[mi][ni][0] = sum.x;
            acc[mi][ni][1] = sum.y;
            acc[mi][ni][2] = sum.z;
            acc[mi][ni][3] = sum.w;
        }
    if (tid == 0)
        *count = 0u; /* the next launch starts from zero; no block reads it again in this one */
    return true;
}
#endif

/* ---------- the kernel ------------------------------------------------------------------- */

/* ws: the split-K workspace (spec buffer `ws`, zero on entry and on exit); unused when
 * SPLIT_K = 1. */
AMK_KERNEL void __launch_bounds__(TC_THREADS)
gemm_tc_kernel(const amk_t *__restrict__ Ap, const amk_t *__restrict__ Bp,
               float *__restrict__ C, int M, int N, int K, float *ws)
{
    /* STAGES x As[BM][LDA], then STAGES x Bs[BK][LDB]: launch.shared_bytes in spec.json. */
    extern __shared__ __attribute__((aligned(16))) tc_u16 tc_smem[];
    tc_u16 *As = tc_smem;
    tc_u16 *Bs = tc_smem + STAGES * TC_A_ELEMS;
    const tc_u16 *A = reinterpret_cast<const tc_u16 *>(Ap);
    const tc_u16 *B = reinterpret_cast<const tc_u16 *>(Bp);

    /* The SPLIT_K blocks of one C tile are neighbours in the grid (they share its A and B
     * rows in L2 and finish close together). Raster swizzle over tiles: GROUP_M tile rows
     * are walked column by column. */
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x / SPLIT_K;
    const int per_group = GROUP_M * grid_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int gsize = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    const int pid_m = first_m + (pid % per_group) % gsize;
    const int pid_n = (pid % per_group) / gsize;
    const int m0 = pid_m * BM, n0 = pid_n * BN;

    const int tid = threadIdx.x;
    const int lane = tid % AMK_WARP, warp_id = tid / AMK_WARP;
    const int wm0 = (warp_id / (BN / WN)) * WM, wn0 = (warp_id % (BN / WN)) * WN;
    const bool a_vec = (K & 7) == 0, b_vec = (N & 7) == 0;
#if SPLIT_K > 1
    /* This split's K slices: [kt0, kt0 + ktiles), possibly none. */
    const int split = blockIdx.x % SPLIT_K;
    const int ktiles_all = (K + BK - 1) / BK;
    const int kchunk = (ktiles_all + SPLIT_K - 1) / SPLIT_K;
    const int kt0 = split * kchunk < ktiles_all ? split * kchunk : ktiles_all;
    const int ktiles = ktiles_all - kt0 < kchunk ? ktiles_all - kt0 : kchunk;
#else
    const int kt0 = 0, ktiles = (K + BK - 1) / BK;
#endif

    tc_acc_t acc;
#pragma unroll
    for (int mi = 0; mi < TC_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < TC_NI; ++ni)
#if defined(AMK_VENDOR_NVIDIA)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[mi][ni][e] = 0.0f;
#else
            acc[mi][ni] = (tc_v4f){0.0f, 0.0f, 0.0f, 0.0f};
#endif

    /* Prologue: slices 0..STAGES-2 in flight (an empty group where K runs out). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles)
            tc_load_slice(As + s * TC_A_ELEMS, Bs + s * TC_B_ELEMS, A, B, M, N, K, m0, n0,
                          (kt0 + s) * BK, a_vec, b_vec);
        tc_commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
        /* Slice kt has landed (at most STAGES-2 newer groups pending); the barrier also
         * retires every thread's reads of the buffer refilled just below. */
        tc_wait_stages();
        __syncthreads();
        const int nxt = kt + STAGES - 1;
        if (nxt < ktiles) {
            const int s = nxt % STAGES;
            tc_load_slice(As + s * TC_A_ELEMS, Bs + s * TC_B_ELEMS, A, B, M, N, K, m0, n0,
                          (kt0 + nxt) * BK, a_vec, b_vec);
        }
        tc_commit();
        const int cur = kt % STAGES;
        tc_compute(acc, As + cur * TC_A_ELEMS, Bs + cur * TC_B_ELEMS, wm0, wn0, lane);
    }

#if SPLIT_K > 1
    /* Every thread is past its last read of the ring (and no real cp.async is pending) before
     * tc_split_fixup's first barrier lets thread 0 reuse its first word as the flag. */
    if (!tc_split_fixup(acc, ws, grid_m * grid_n, pid, split, reinterpret_cast<int *>(tc_smem)))
        return;
#endif
    tc_store(acc, C, M, N, m0 + wm0, n0 + wn0, lane);
}
