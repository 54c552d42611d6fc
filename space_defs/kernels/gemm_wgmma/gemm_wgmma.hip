/* gemm_wgmma: C[M,N] = A[M,K] * B[K,N]; A, B row-major f16 or bf16, C row-major f32, products
 * and sums in f32 on Hopper's warpgroup matrix units (wgmma.mma_async, sm_90a only: the spec
 * "requires" {"nvidia": "sm_90a"}, so amk compiles this for sm_90a and rejects other targets).
 *
 * One block computes a BM x BN tile of C with BM/64 warpgroups (128 threads each); warpgroup w
 * owns rows [64w, 64w+64) of the tile and issues one m64nBNk16 wgmma per 16-wide K step with
 * both operands read from shared memory through matrix descriptors. K is walked in BK = 64
 * slices (64 bf16/f16 = one 128-byte swizzle row) through a STAGES-deep ring filled by 16-byte
 * cp.async copies from every thread (no TMA: a tensor map must be built on the host).
 *
 * Shared memory, per stage, 128-byte swizzle ("SW128": within each 1024-byte atom of 8 rows x
 * 128 bytes, the 16-byte chunk c of row r is stored at chunk c ^ r):
 *   A tile, K-major (k contiguous), BM x 64:  row m at byte m*128, chunk c = k/8 of the row
 *     at (c ^ (m % 8)) * 16.  Atoms (8 rows) are 1024 bytes apart along M.
 *     Descriptor: start = tile + 64w*128 (warpgroup rows) + 32*s (K step s: 16 elements = 32
 *     bytes inside the swizzled row; the hardware applies the XOR on the address bits, which
 *     is why every atom must sit on a 1024-byte boundary, base_offset 0), LBO unused for
 *     swizzled K-major (encoded 1), SBO = 1024 (next 8 rows of M).
 *   B tile, MN-major (n contiguous, the row-major K x N global layout as is), 64 x BN:
 *     atom (j, g) holds n in [64j, 64j+64) and k in [8g, 8g+8): row r = k % 8 of the atom is
 *     the 128 bytes of those 64 n values, chunk c = (n % 64)/8 at (c ^ r) * 16. Atom (j, g)
 *     sits at j*8192 + g*1024, i.e. byte (n/64)*8192 + k*128 + (((n%64)/8) ^ (k%8))*16.
 *     wgmma with imm-trans-b = 1 reads B MN-major; for swizzled MN-major layouts the PTX ISA
 *     defines LBO as the stride between swizzle atoms along N (here 8192) and SBO as the
 *     stride between groups of 8 along K (here 1024). K step s starts at tile + s*2048.
 * Descriptor bits: [0,14) start>>4, [16,30) LBO>>4, [32,46) SBO>>4, [49,52) base offset 0,
 * [62,64) swizzle mode 1 = 128B.
 *
 * Accumulator (m64nNk16, f32 D, N/2 registers per thread): warp q of the warpgroup owns rows
 * 16q..16q+15; lane l holds, for each 8-column group j, d[4j+0], d[4j+1] at row l/4, columns
 * 8j + 2(l%4) + {0,1}, and d[4j+2], d[4j+3] at row l/4 + 8, same columns (the mma.sync
 * m16n8 C layout repeated along N).
 *
 * Pipeline, per K slice kt (W = 1 wgmma group left in flight when STAGES >= 3, else 0;
 * AHEAD = STAGES-1-W slices loaded ahead):
 *   cp.async.wait_group(AHEAD-1)          this thread's copies of slice kt have landed
 *   fence.proxy.async.shared::cta         ...and are visible to the async proxy (wgmma)
 *   __syncthreads()                       every thread's copies; every warpgroup has passed
 *                                         its wait_group(W) of slice kt-1, so the wgmmas of
 *                                         slice kt-1-W are done and their buffer is free
 *   cp.async slice kt+AHEAD into buffer (kt+AHEAD) % STAGES (= the buffer of kt-1-W)
 *   wgmma.fence; 4 x wgmma (k 0,16,32,48); commit_group; wait_group(W)
 * Bounds: 16-byte copies with src-size 0 zero-fill chunks outside the matrix; when K (for A)
 * or N (for B) is not a multiple of 8 a chunk could straddle the edge or be misaligned, so
 * that operand is staged element by element (ordinary stores, made visible to wgmma by the
 * same proxy fence). C stores are bounds-checked. Any M, N, K >= 1 is computed correctly.
 * Block raster: a 1-D grid remapped in groups of GROUP_M block rows (L2 reuse of B tiles).
 * Dynamic shared memory is rounded up to a 1024-byte boundary here (the spec asks 1024 more).
 * Knobs: BM (64, 128, 256 = warpgroups x 64), BN (64, 128, 256 = the wgmma N), STAGES,
 * GROUP_M (all -D). */

#if !defined(BM) || !defined(BN) || !defined(STAGES) || !defined(GROUP_M)
#error "gemm_wgmma needs -DBM -DBN -DSTAGES -DGROUP_M"
#endif
#if !defined(AMK_VENDOR_NVIDIA)
#error "gemm_wgmma uses wgmma.mma_async: NVIDIA sm_90a only"
#endif
#if defined(AMK_T_BF16)
#define WG_AB "bf16"
#elif defined(AMK_T_F16)
#define WG_AB "f16"
#else
#error "gemm_wgmma needs -DAMK_T_F16=1 or -DAMK_T_BF16=1"
#endif

#define WG_BK 64                    /* K slice: one 128-byte swizzle row of 16-bit elements */
#define WG_GROUPS (BM / 64)         /* warpgroups */
#define WG_THREADS (WG_GROUPS * 128)
#define WG_NACC (BN / 2)            /* f32 accumulators per thread */
#define WG_A_BYTES (BM * 128)       /* one stage of A: BM rows x 128 bytes */
#define WG_B_BYTES (BN * 128)       /* one stage of B: BN/64 atom columns x 8 atoms x 1024 */
#define WG_A_CHUNKS (BM * 8)        /* 16-byte chunks per A slice */
#define WG_B_CHUNKS (BN * 8)
#define WG_A_ITERS (WG_A_CHUNKS / WG_THREADS)
#define WG_B_ITERS (WG_B_CHUNKS / WG_THREADS)
#define WG_W (STAGES >= 3 ? 1 : 0)  /* wgmma groups left in flight across slices */
#define WG_AHEAD (STAGES - 1 - WG_W) /* slices loaded ahead of the one computed */

static_assert(BM == 64 || BM == 128 || BM == 256, "BM must be 64, 128 or 256");
static_assert(BN == 64 || BN == 128 || BN == 256, "BN must be 64, 128 or 256");
static_assert(STAGES >= 2 && STAGES <= 5, "STAGES must be 2..5");
static_assert(GROUP_M >= 1, "GROUP_M must be >= 1");
static_assert(WG_A_CHUNKS % WG_THREADS == 0 && WG_B_CHUNKS % WG_THREADS == 0,
              "copies must divide evenly among the threads");

typedef unsigned short wg_u16;

AMK_INLINE unsigned int wg_smem_addr(const void *p)
{
    unsigned int a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

/* ---------- staging: global -> swizzled shared memory, one K slice ------------------------ */

/* 16 bytes at shared address dst; ok=false writes zeros (src not read). */
AMK_INLINE void wg_copy16(unsigned int dst, const wg_u16 *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0));
}

/* Byte offset of A chunk (row m, k chunk c = k/8) inside an A stage (K-major SW128). */
AMK_INLINE unsigned int wg_a_off(int m, int c)
{
    return (unsigned int)(m * 128 + ((c ^ (m & 7)) << 4));
}

/* Byte offset of B chunk (k, n chunk nc = n/8) inside a B stage (MN-major SW128). */
AMK_INLINE unsigned int wg_b_off(int k, int nc)
{
    return (unsigned int)((nc >> 3) * 8192 + k * 128 + (((nc & 7) ^ (k & 7)) << 4));
}

AMK_INLINE void wg_load_slice(unsigned int as, unsigned int bs, unsigned char *as_p,
                              unsigned char *bs_p, const wg_u16 *__restrict__ A,
                              const wg_u16 *__restrict__ B, int M, int N, int K, int m0, int n0,
                              int k0, bool a_vec, bool b_vec)
{
    const int tid = threadIdx.x;
#pragma unroll
    for (int it = 0; it < WG_A_ITERS; ++it) {
        const int i = tid + it * WG_THREADS;
        const int r = i >> 3, c = i & 7; /* 8 chunks per 64-element row */
        const int gm = m0 + r, gk = k0 + c * 8;
        const unsigned int off = wg_a_off(r, c);
        if (a_vec) {
            const bool ok = gm < M && gk < K;
            wg_copy16(as + off, ok ? A + (size_t)gm * K + gk : A, ok);
        } else {
            wg_u16 *dst = reinterpret_cast<wg_u16 *>(as_p + off);
#pragma unroll
            for (int v = 0; v < 8; ++v)
                dst[v] = (gm < M && gk + v < K) ? A[(size_t)gm * K + gk + v] : (wg_u16)0;
        }
    }
#pragma unroll
    for (int it = 0; it < WG_B_ITERS; ++it) {
        const int i = tid + it * WG_THREADS;
        const int r = i / (BN / 8), nc = i % (BN / 8); /* k row of the slice, n chunk */
        const int gk = k0 + r, gn = n0 + nc * 8;
        const unsigned int off = wg_b_off(r, nc);
        if (b_vec) {
            const bool ok = gk < K && gn < N;
            wg_copy16(bs + off, ok ? B + (size_t)gk * N + gn : B, ok);
        } else {
            wg_u16 *dst = reinterpret_cast<wg_u16 *>(bs_p + off);
#pragma unroll
            for (int v = 0; v < 8; ++v)
                dst[v] = (gk < K && gn + v < N) ? B[(size_t)gk * N + gn + v] : (wg_u16)0;
        }
    }
}

AMK_INLINE void wg_cp_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* ---------- wgmma ----------------------------------------------------------------------- */

/* Matrix descriptor for a 128-byte-swizzled operand at shared address addr. */
AMK_INLINE unsigned long long wg_desc(unsigned int addr, unsigned int lbo, unsigned int sbo)
{
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) |
           ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

/* Keeps the compiler from moving accumulator accesses across a wgmma fence or wait. */
AMK_INLINE void wg_fence_acc(float (&d)[WG_NACC])
{
#pragma unroll
    for (int i = 0; i < WG_NACC; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* d += A(64 x 16, K-major, desc da) * B(16 x BN, N-major, desc db); scale-d = 1, no negation,
 * imm-trans-a = 0 (K-major A), imm-trans-b = 1 (MN-major B). */
#if BN == 64
AMK_INLINE void wg_mma(float (&d)[WG_NACC], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_AB "." WG_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(1));
}
#elif BN == 128
AMK_INLINE void wg_mma(float (&d)[WG_NACC], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_AB "." WG_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
                   "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(1));
}
#elif BN == 256
AMK_INLINE void wg_mma(float (&d)[WG_NACC], unsigned long long da, unsigned long long db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_AB "." WG_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
                   "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
                   "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                   "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
                   "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
                   "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),
                   "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]),
                   "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
                   "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
                   "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
                   "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
                   "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
                   "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
                   "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(da), "l"(db), "r"(1));
}
#endif

AMK_INLINE void wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

AMK_INLINE void wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N_PENDING> AMK_INLINE void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N_PENDING) : "memory");
}

/* ---------- the kernel ------------------------------------------------------------------- */

AMK_KERNEL void __launch_bounds__(WG_THREADS, 1)
gemm_wgmma_kernel(const amk_t *__restrict__ Ap, const amk_t *__restrict__ Bp,
                  float *__restrict__ C, int M, int N, int K)
{
    /* STAGES x A tiles, then STAGES x B tiles, from the first 1024-byte boundary. */
    extern __shared__ __attribute__((aligned(1024))) unsigned char wg_smem[];
    const unsigned int raw = wg_smem_addr(wg_smem);
    const unsigned int pad = ((raw + 1023u) & ~1023u) - raw;
    unsigned char *a_p = wg_smem + pad;
    unsigned char *b_p = a_p + STAGES * WG_A_BYTES;
    const unsigned int a_s = raw + pad, b_s = a_s + STAGES * WG_A_BYTES;
    const wg_u16 *A = reinterpret_cast<const wg_u16 *>(Ap);
    const wg_u16 *B = reinterpret_cast<const wg_u16 *>(Bp);

    /* Raster swizzle: GROUP_M block rows are walked column by column. */
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int per_group = GROUP_M * grid_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int gsize = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    const int pid_m = first_m + (pid % per_group) % gsize;
    const int pid_n = (pid % per_group) / gsize;
    const int m0 = pid_m * BM, n0 = pid_n * BN;

    const int tid = threadIdx.x;
    const int wg = tid >> 7; /* warpgroup: rows [64 wg, 64 wg + 64) of the tile */
    const bool a_vec = (K & 7) == 0, b_vec = (N & 7) == 0;
    const int ktiles = (K + WG_BK - 1) / WG_BK;

    float acc[WG_NACC];
#pragma unroll
    for (int i = 0; i < WG_NACC; ++i)
        acc[i] = 0.0f;
    wg_fence_acc(acc);

    /* Prologue: slices 0..AHEAD-1 in flight (an empty group where K runs out). */
#pragma unroll
    for (int s = 0; s < WG_AHEAD; ++s) {
        if (s < ktiles)
            wg_load_slice(a_s + s * WG_A_BYTES, b_s + s * WG_B_BYTES, a_p + s * WG_A_BYTES,
                          b_p + s * WG_B_BYTES, A, B, M, N, K, m0, n0, s * WG_BK, a_vec, b_vec);
        wg_cp_commit();
    }

    for (int kt = 0; kt < ktiles; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(WG_AHEAD - 1) : "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        const int nxt = kt + WG_AHEAD;
        if (nxt < ktiles) {
            const int s = nxt % STAGES;
            wg_load_slice(a_s + s * WG_A_BYTES, b_s + s * WG_B_BYTES, a_p + s * WG_A_BYTES,
                          b_p + s * WG_B_BYTES, A, B, M, N, K, m0, n0, nxt * WG_BK, a_vec,
                          b_vec);
        }
        wg_cp_commit();

        const int cur = kt % STAGES;
        const unsigned int a_tile = a_s + cur * WG_A_BYTES + wg * 64 * 128;
        const unsigned int b_tile = b_s + cur * WG_B_BYTES;
        wg_fence();
#pragma unroll
        for (int s = 0; s < WG_BK / 16; ++s)
            wg_mma(acc, wg_desc(a_tile + s * 32, 16, 1024),
                   wg_desc(b_tile + s * 2048, 8192, 1024));
        wg_commit();
        wg_wait<WG_W>(); /* no accumulator access here: a group may still be writing them */
    }
    wg_wait<0>();
    wg_fence_acc(acc);

    /* Epilogue: the m64nN accumulator layout (see the top), bounds-checked f32 stores. */
    const int warp = (tid >> 5) & 3, lane = tid & 31;
    const int row = m0 + wg * 64 + warp * 16 + (lane >> 2);
    const int col0 = n0 + (lane & 3) * 2;
    const bool pair = (N & 1) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = row + h * 8, col = col0 + j * 8;
            if (r >= M)
                continue;
            float *dst = C + (size_t)r * N + col;
            const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
            if (pair && col + 1 < N) {
                *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
            } else {
                if (col < N)
                    dst[0] = v0;
                if (col + 1 < N)
                    dst[1] = v1;
            }
        }
}
