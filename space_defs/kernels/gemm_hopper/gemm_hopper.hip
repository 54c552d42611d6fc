/* gemm_hopper: C[M,N] = A[M,K] * B[K,N]; A, B, C row-major f16 or bf16 (C in the input dtype);
 * fp8 e4m3 with per-tensor scales and B as N x K (spec gemm_hopper_fp8, bf16 C, see below),
 * products and sums in f32 on Hopper's warpgroup matrix units. NVIDIA sm_90a only (the spec
 * "requires" {"nvidia": "sm_90a"}).
 *
 * Warp-specialised: warpgroup 0 is the producer (one thread issues every TMA load), warpgroups
 * 1..CONSUMERS compute. Consumer w owns rows [w*WG_M, (w+1)*WG_M) of the BM x BN tile (WG_M =
 * BM/CONSUMERS, MT = WG_M/64 m64nBNk16 wgmmas per 16-wide K step; BN 320: an n256 and an
 * n64 each). Operands reach shared memory only through TMA (cp.async.bulk.tensor, tensor
 * maps built by amk from the spec's "tensor_maps", passed as __grid_constant__ parameters)
 * into a STAGES-deep ring guarded by two mbarriers per stage: full[s] (the producer's
 * arrive.expect_tx + the copies' complete_tx) and empty[s] (one arrival per consumer warp of
 * every CTA of the cluster).
 *
 * Shared memory layouts are the 128-byte swizzle ("SW128") the TMA writes and wgmma reads:
 *   A, per stage: BK/64 chunks of BM rows x 128 bytes (64 K values), row m at m*128; the
 *     descriptor of K step s of a chunk starts 32*s bytes in, SBO 1024 (8 rows), LBO unused.
 *   B, per stage: BN/64 column blocks of BK rows x 128 bytes (64 N values, the K x N global
 *     layout as is: MN-major), block j at j*BK*128; wgmma reads it transposed (imm-trans-b 1)
 *     with LBO = BK*128 (next 64 N values) and SBO = 1024 (next 8 K rows); K step s at
 *     s*2048.
 * Every region starts on a 1024-byte boundary (the swizzle atom), so the XOR the TMA applies
 * on address bits matches the one wgmma undoes.
 *
 * Clusters (CLUSTER_M x CLUSTER_N, 1x1, 2x1 or 1x2 CTAs along the 1-D grid): with CLUSTER_M =
 * 2 the two CTAs compute vertically adjacent tiles and share B: each loads half the K rows of
 * every B block and multicasts it to both; with CLUSTER_N = 2 they share A (half the rows
 * each). A stage of a CTA is free only when the consumers of both CTAs are done with it, so
 * consumers arrive on the empty barrier of every CTA in the cluster.
 *
 * Scheduling: tiles are grouped into cluster tiles (CLUSTER_M x CLUSTER_N tiles), ordered in
 * groups of GROUP_M cluster-tile rows walked column by column (L2 reuse); cluster c takes
 * cluster tiles c, c + clusters, ... (PERSISTENT = 1 launches at most one CTA per SM; 0, one
 * cluster per cluster tile, the same loop run once). PERSISTENT = 2 ("ping-pong", 2 consumers
 * only): the producer still feeds the ring tile by tile, but each consumer owns whole BM x BN
 * tiles (WG_M = BM) and the two take the CTA's tiles alternately (consumer w the CTA's w-th,
 * (w+2)-th, ...): one's epilogue runs while the other's wgmmas go on, and the ring order
 * staggers their main loops (consumer 1's first stage of a tile is loaded only once the
 * consumer of the tile before has freed STAGES stages of its own). Each consumer skips the
 * ring stages of the other's tiles (ktiles a tile); a stage has one consumer, so its empty
 * barrier counts 4 warps per CTA of the cluster. The main loops take turns by two more
 * mbarriers, order[w] (consumer 1-w arrives once it has waited on the last stage of its
 * tile): mbarrier waits name a phase only by its parity, so a consumer that ran ahead into
 * its next tile's stages while the other's fills of the same stages were still pending would
 * take a fill two phases early (seen on the H100: hangs, launch failures). In turn, each
 * consumer's next fill of a stage is at most one phase ahead of the barrier (checked in a
 * protocol model with random interleavings: python/tests/test_core_gemm_hopper_pingpong.py).
 *
 * PERSISTENT = 3 (stream-K tail): one CTA per SM, all of them; whole tiles as PERSISTENT 1
 * except those of the partial last wave (all tiles when there are fewer than clusters),
 * whose K iterations are split in equal contiguous ranges over all clusters. PERSISTENT = 4:
 * the same, but each split tile in p equal pieces that never cross a tile (p the largest
 * divisor of the K tiles that the clusters can hold; none split when that is 1). A piece of a
 * tile goes as f32 to the scratch buffer sk; a counter per tile (ws) tells the last piece
 * to arrive, which adds all pieces in piece order and writes the tile (gh_sk_fixup).
 *
 * Epilogue: EPILOGUE = 0 stores pairs of converted values straight from the accumulators
 * (bounds-checked); 1 writes them into a 128B-swizzled staging tile (conflict-free) and one
 * thread per consumer stores it with TMA (cp.async.bulk.tensor; rows and columns past M, N
 * are clipped by the copy engine), one 64-column block in each of the next tile's first K
 * steps rather than all at once (the rest when the staging tile is next needed, or at exit;
 * on the H100 at 8192 x 14336 x 4096, +0.5 % against all at once, +0.2 % more for a tile's
 * first wgmma overwriting the accumulators, scale-d 0, instead of zeroing them); 2 and 3 do
 * the same through EPILOGUE staging slots of 64 columns (320-wide tiles need it for a third
 * stage: the whole 128 x 320 tile is 80 KB; 256-wide ones for a fourth): the epilogue fills
 * the slots and packs the tile's other blocks into registers (GH_CARRY of them, 16 registers
 * a block), which go into the slots in the next main loop once the first stores have read
 * them. Before, the epilogue waited for those reads between rounds of EPILOGUE blocks (the
 * stores drain at the write rate when a whole wave stores at once): on the H100 at
 * 8192 x 14336 x 4096, 128 x 320 EPILOGUE 3 +0.2 % (+0.8 % with PERSISTENT 4); 128 x 320
 * EPILOGUE 2 reads as 128 x 256 EPILOGUE 1 PERSISTENT 4 does (0.990-0.998 of cuBLAS in burst).
 * REGS: 0 leaves register allocation alone; 1 and 2 move registers from the producer to the
 * consumers with setmaxnreg (producer 40 / consumers 232, producer 24 / consumers 240). Only
 * with 2 consumers: __launch_bounds__(384, 1) makes ptxas allocate 168 per thread, and an
 * increase blocks until a decrease has freed the registers, so the split must balance
 * exactly ((168 - 40) * 128 = (232 - 168) * 256); 32 / 240 deadlocked on the H100.
 * Bounds: TMA zero-fills every element outside [0,M) x [0,K) and [0,K) x [0,N), so ragged M,
 * N and K need no masking in the main loop; the tensor maps need 16-byte row strides (K and N
 * multiples of 8), which the spec restricts. */

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(STAGES) || !defined(CONSUMERS) || \
    !defined(REGS) || !defined(CLUSTER_M) || !defined(CLUSTER_N) || !defined(GROUP_M) ||        \
    !defined(EPILOGUE)
#error "gemm_hopper needs -DBM -DBN -DBK -DSTAGES -DCONSUMERS -DREGS -DCLUSTER_M -DCLUSTER_N -DGROUP_M -DEPILOGUE"
#endif
#if !defined(AMK_VENDOR_NVIDIA)
#error "gemm_hopper uses TMA, clusters and wgmma.mma_async: NVIDIA sm_90a only"
#endif
/* 16-bit inputs: C in the input dtype. fp8 e4m3 inputs (spec gemm_hopper_fp8): A M x K and B
 * N x K, both K-major (wgmma reads 8-bit operands only K-major), C = SA * SB * A B^T in bf16. */
#if defined(AMK_T_BF16)
#define GH_AB "bf16"
#define GH_CVT2 "cvt.rn.bf16x2.f32"
#define GH_FP8 0
typedef amk_t gh_out_t;
#elif defined(AMK_T_F16)
#define GH_AB "f16"
#define GH_CVT2 "cvt.rn.f16x2.f32"
#define GH_FP8 0
typedef amk_t gh_out_t;
#elif defined(AMK_T_FP8E4M3)
#define GH_AB "e4m3"
#define GH_CVT2 "cvt.rn.bf16x2.f32"
#define GH_FP8 1
typedef amk_bf16 gh_out_t;
#else
#error "gemm_hopper needs -DAMK_T_F16=1, -DAMK_T_BF16=1 or -DAMK_T_FP8E4M3=1"
#endif
#if GH_FP8
#define GH_ELT 1
#define GH_MMA_K "k32"                      /* 32 bytes of K per wgmma, as k16 of 16-bit */
#define GH_MMA_TAIL "p, 1, 1;\n}\n"         /* no transpose immediates for 8-bit types */
#else
#define GH_ELT 2
#define GH_MMA_K "k16"
#define GH_MMA_TAIL "p, 1, 1, 0, 1;\n}\n"   /* imm-trans-a 0, imm-trans-b 1 (B MN-major) */
#endif

#if defined(PERSISTENT) && PERSISTENT == 2
#define GH_PINGPONG 1                      /* consumers alternate whole tiles */
#else
#define GH_PINGPONG 0                      /* consumers split each tile's rows */
#endif
#if defined(PERSISTENT) && (PERSISTENT == 3 || PERSISTENT == 4)
#define GH_STREAMK 1                       /* the last tiles split along K (stream-K) */
#else
#define GH_STREAMK 0
#endif
#if defined(PERSISTENT) && PERSISTENT == 4
#define GH_SK_WHOLE_PIECES 1               /* ... in pieces that never cross a tile */
#else
#define GH_SK_WHOLE_PIECES 0
#endif
#define GH_WG_M (GH_PINGPONG ? BM : BM / CONSUMERS) /* rows of C per consumer warpgroup */
#define GH_MT (GH_WG_M / 64)               /* m64 wgmmas per K step per consumer */
#define GH_NACC (BN / 2)                   /* f32 accumulators per thread per m64 */
#define GH_THREADS ((CONSUMERS + 1) * 128)
#define GH_CSIZE (CLUSTER_M * CLUSTER_N)
#define GH_KC (128 / GH_ELT)               /* K values in one 128-byte swizzle row */
#define GH_KCH (BK / GH_KC)                /* 128-byte K chunks per stage */
#define GH_A_CHUNK (BM * 128)
#define GH_A_BYTES (GH_KCH * GH_A_CHUNK)
#if GH_FP8
#define GH_B_CHUNK (BN * 128)              /* B K-major: BN rows x 128 bytes per K chunk */
#define GH_B_BYTES (GH_KCH * GH_B_CHUNK)
#else
#define GH_B_BLOCK (BK * 128)
#define GH_B_BYTES ((BN / 64) * GH_B_BLOCK)
#endif
#define GH_STAGE (GH_A_BYTES + GH_B_BYTES)
#if GH_FP8
#define GH_B_COL256 (256 * 128)            /* where B's column 256 starts in a stage (BN 320) */
#else
#define GH_B_COL256 (4 * GH_B_BLOCK)
#endif
#define GH_BLK_BYTES (GH_WG_M * 128)      /* one consumer's 64 columns of C (16-bit) */
/* one consumer's staging: its whole tile (EPILOGUE 1) or EPILOGUE 64-column blocks (2, 3) */
#define GH_CW_BYTES (EPILOGUE >= 2 ? EPILOGUE * GH_BLK_BYTES : GH_WG_M * BN * 2)
#define GH_C_BYTES (EPILOGUE ? CONSUMERS * GH_CW_BYTES : 0)
/* 64-column staging slots a consumer; the tile's blocks past them wait in registers, packed
 * (GH_CARRY of them), until the first stores have read their slots */
#define GH_SLOTS (EPILOGUE >= 2 ? EPILOGUE : BN / 64)
#define GH_CARRY (EPILOGUE >= 2 && BN / 64 > EPILOGUE ? BN / 64 - EPILOGUE : 0)

static_assert(BM == 64 || BM == 128 || BM == 256, "BM must be 64, 128 or 256");
static_assert(BN == 64 || BN == 128 || BN == 256 || BN == 320, "BN must be 64, 128, 256 or 320");
static_assert(BK == GH_KC || BK == 2 * GH_KC, "BK must be 1 or 2 128-byte rows of K");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2");
static_assert(GH_MT == 1 || GH_MT == 2, "BM / CONSUMERS must be 64 or 128");
static_assert(GH_MT * GH_NACC <= 128 || (GH_MT * GH_NACC <= 160 && REGS != 0),
              "at most 128 accumulators per thread (160 with the setmaxnreg split)");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES must be 2..8");
static_assert(GH_CSIZE <= 2, "clusters of 1x1, 2x1 or 1x2");
static_assert(REGS >= 0 && REGS <= 2, "REGS must be 0, 1 or 2");
static_assert(EPILOGUE >= 0 && EPILOGUE <= 3, "EPILOGUE must be 0, 1, 2 or 3");
static_assert(REGS == 0 || CONSUMERS == 2, "the setmaxnreg split needs 2 consumers");
static_assert(!GH_PINGPONG || CONSUMERS == 2, "ping-pong (PERSISTENT 2) needs 2 consumers");

typedef unsigned short gh_u16;

AMK_INLINE unsigned int gh_smem_addr(const void *p)
{
    unsigned int a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

/* ---------- mbarriers ----------------------------------------------------------------- */

AMK_INLINE void gh_bar_init(unsigned int bar, unsigned int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* Spins until the phase of parity `parity` of the barrier has completed. */
AMK_INLINE void gh_bar_wait(unsigned int bar, unsigned int parity)
{
    asm volatile("{\n.reg .pred P;\nGH_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
                 "@P bra GH_DONE;\nbra GH_WAIT;\nGH_DONE:\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

AMK_INLINE void gh_bar_expect(unsigned int bar, unsigned int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

/* Arrives on the barrier at the same shared offset in every CTA of the cluster. The arrival
 * publishes nothing (the wgmmas that read the stage have completed), so it keeps the default
 * CTA-scope semantics: with .release.cluster, 2-CTA clusters ran at half the speed on the
 * H100 (4096^3 bf16: 443 us against 214 us). */
AMK_INLINE void gh_bar_release(unsigned int bar)
{
#if GH_CSIZE == 1
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
#else
#pragma unroll
    for (unsigned int r = 0; r < GH_CSIZE; ++r)
        asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                     "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
                     "r"(r)
                     : "memory");
#endif
}

AMK_INLINE void gh_cluster_sync()
{
#if GH_CSIZE > 1
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#else
    __syncthreads();
#endif
}

/* ---------- TMA ----------------------------------------------------------------------- */

/* 2-D box at (c0 innermost, c1) into shared address dst, completing on bar. mask != 0:
 * multicast to the CTAs of the cluster in mask (same offsets there, their barriers). */
AMK_INLINE void gh_tma_load(unsigned int dst, const amk_tensor_map *map, int c0, int c1,
                            unsigned int bar, unsigned short mask)
{
    if (mask)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
                     "l"(map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                     "l"(map), "r"(c0), "r"(c1), "r"(bar)
                     : "memory");
}

AMK_INLINE void gh_tma_store(const amk_tensor_map *map, int c0, int c1, unsigned int src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(map), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

/* Block j of a consumer's tile (64 columns of C), staged in slot j % GH_SLOTS (at stage,
 * GH_WG_M rows of 128 bytes a slot), to C at column n + 64 j, row m, as its own bulk group. */
AMK_INLINE void gh_store_block(const amk_tensor_map *map, int n, int m, unsigned int stage,
                               int j)
{
    gh_tma_store(map, n + j * 64, m, stage + (j % GH_SLOTS) * GH_BLK_BYTES);
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* ---------- wgmma --------------------------------------------------------------------- */

/* Matrix descriptor of a 128-byte-swizzled operand: [0,14) start>>4, [16,30) LBO>>4,
 * [32,46) SBO>>4, base offset 0, [62,64) swizzle mode 1 = 128B. */
AMK_INLINE unsigned long long gh_desc(unsigned int addr, unsigned int lbo, unsigned int sbo)
{
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) |
           ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | (1ull << 62);
}

/* Keeps the compiler from moving accumulator accesses across a wgmma fence or wait. */
AMK_INLINE void gh_fence_acc(float (&d)[GH_NACC])
{
#pragma unroll
    for (int i = 0; i < GH_NACC; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* d[O, O + N/2) = A(64 x 32 bytes of K, K-major, desc da) * B(32 bytes of K x N, desc db)
 * + (sd ? d : 0), one m64nN wgmma (sd: scale-d), no negation; 16-bit B is MN-major
 * (imm-trans-b 1), fp8 B K-major. */
template <int O> AMK_INLINE void gh_mma64(float (&d)[GH_NACC], unsigned long long da,
                                          unsigned long long db, int sd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64" GH_MMA_K ".f32." GH_AB "." GH_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, " GH_MMA_TAIL
                 : "+f"(d[O + 0]), "+f"(d[O + 1]), "+f"(d[O + 2]), "+f"(d[O + 3]),
                   "+f"(d[O + 4]), "+f"(d[O + 5]), "+f"(d[O + 6]), "+f"(d[O + 7]),
                   "+f"(d[O + 8]), "+f"(d[O + 9]), "+f"(d[O + 10]), "+f"(d[O + 11]),
                   "+f"(d[O + 12]), "+f"(d[O + 13]), "+f"(d[O + 14]), "+f"(d[O + 15]),
                   "+f"(d[O + 16]), "+f"(d[O + 17]), "+f"(d[O + 18]), "+f"(d[O + 19]),
                   "+f"(d[O + 20]), "+f"(d[O + 21]), "+f"(d[O + 22]), "+f"(d[O + 23]),
                   "+f"(d[O + 24]), "+f"(d[O + 25]), "+f"(d[O + 26]), "+f"(d[O + 27]),
                   "+f"(d[O + 28]), "+f"(d[O + 29]), "+f"(d[O + 30]), "+f"(d[O + 31])
                 : "l"(da), "l"(db), "r"(sd));
}

template <int O> AMK_INLINE void gh_mma128(float (&d)[GH_NACC], unsigned long long da,
                                           unsigned long long db, int sd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128" GH_MMA_K ".f32." GH_AB "." GH_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, " GH_MMA_TAIL
                 : "+f"(d[O + 0]), "+f"(d[O + 1]), "+f"(d[O + 2]), "+f"(d[O + 3]),
                   "+f"(d[O + 4]), "+f"(d[O + 5]), "+f"(d[O + 6]), "+f"(d[O + 7]),
                   "+f"(d[O + 8]), "+f"(d[O + 9]), "+f"(d[O + 10]), "+f"(d[O + 11]),
                   "+f"(d[O + 12]), "+f"(d[O + 13]), "+f"(d[O + 14]), "+f"(d[O + 15]),
                   "+f"(d[O + 16]), "+f"(d[O + 17]), "+f"(d[O + 18]), "+f"(d[O + 19]),
                   "+f"(d[O + 20]), "+f"(d[O + 21]), "+f"(d[O + 22]), "+f"(d[O + 23]),
                   "+f"(d[O + 24]), "+f"(d[O + 25]), "+f"(d[O + 26]), "+f"(d[O + 27]),
                   "+f"(d[O + 28]), "+f"(d[O + 29]), "+f"(d[O + 30]), "+f"(d[O + 31]),
                   "+f"(d[O + 32]), "+f"(d[O + 33]), "+f"(d[O + 34]), "+f"(d[O + 35]),
                   "+f"(d[O + 36]), "+f"(d[O + 37]), "+f"(d[O + 38]), "+f"(d[O + 39]),
                   "+f"(d[O + 40]), "+f"(d[O + 41]), "+f"(d[O + 42]), "+f"(d[O + 43]),
                   "+f"(d[O + 44]), "+f"(d[O + 45]), "+f"(d[O + 46]), "+f"(d[O + 47]),
                   "+f"(d[O + 48]), "+f"(d[O + 49]), "+f"(d[O + 50]), "+f"(d[O + 51]),
                   "+f"(d[O + 52]), "+f"(d[O + 53]), "+f"(d[O + 54]), "+f"(d[O + 55]),
                   "+f"(d[O + 56]), "+f"(d[O + 57]), "+f"(d[O + 58]), "+f"(d[O + 59]),
                   "+f"(d[O + 60]), "+f"(d[O + 61]), "+f"(d[O + 62]), "+f"(d[O + 63])
                 : "l"(da), "l"(db), "r"(sd));
}

template <int O> AMK_INLINE void gh_mma256(float (&d)[GH_NACC], unsigned long long da,
                                           unsigned long long db, int sd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256" GH_MMA_K ".f32." GH_AB "." GH_AB " {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, " GH_MMA_TAIL
                 : "+f"(d[O + 0]), "+f"(d[O + 1]), "+f"(d[O + 2]), "+f"(d[O + 3]),
                   "+f"(d[O + 4]), "+f"(d[O + 5]), "+f"(d[O + 6]), "+f"(d[O + 7]),
                   "+f"(d[O + 8]), "+f"(d[O + 9]), "+f"(d[O + 10]), "+f"(d[O + 11]),
                   "+f"(d[O + 12]), "+f"(d[O + 13]), "+f"(d[O + 14]), "+f"(d[O + 15]),
                   "+f"(d[O + 16]), "+f"(d[O + 17]), "+f"(d[O + 18]), "+f"(d[O + 19]),
                   "+f"(d[O + 20]), "+f"(d[O + 21]), "+f"(d[O + 22]), "+f"(d[O + 23]),
                   "+f"(d[O + 24]), "+f"(d[O + 25]), "+f"(d[O + 26]), "+f"(d[O + 27]),
                   "+f"(d[O + 28]), "+f"(d[O + 29]), "+f"(d[O + 30]), "+f"(d[O + 31]),
                   "+f"(d[O + 32]), "+f"(d[O + 33]), "+f"(d[O + 34]), "+f"(d[O + 35]),
                   "+f"(d[O + 36]), "+f"(d[O + 37]), "+f"(d[O + 38]), "+f"(d[O + 39]),
                   "+f"(d[O + 40]), "+f"(d[O + 41]), "+f"(d[O + 42]), "+f"(d[O + 43]),
                   "+f"(d[O + 44]), "+f"(d[O + 45]), "+f"(d[O + 46]), "+f"(d[O + 47]),
                   "+f"(d[O + 48]), "+f"(d[O + 49]), "+f"(d[O + 50]), "+f"(d[O + 51]),
                   "+f"(d[O + 52]), "+f"(d[O + 53]), "+f"(d[O + 54]), "+f"(d[O + 55]),
                   "+f"(d[O + 56]), "+f"(d[O + 57]), "+f"(d[O + 58]), "+f"(d[O + 59]),
                   "+f"(d[O + 60]), "+f"(d[O + 61]), "+f"(d[O + 62]), "+f"(d[O + 63]),
                   "+f"(d[O + 64]), "+f"(d[O + 65]), "+f"(d[O + 66]), "+f"(d[O + 67]),
                   "+f"(d[O + 68]), "+f"(d[O + 69]), "+f"(d[O + 70]), "+f"(d[O + 71]),
                   "+f"(d[O + 72]), "+f"(d[O + 73]), "+f"(d[O + 74]), "+f"(d[O + 75]),
                   "+f"(d[O + 76]), "+f"(d[O + 77]), "+f"(d[O + 78]), "+f"(d[O + 79]),
                   "+f"(d[O + 80]), "+f"(d[O + 81]), "+f"(d[O + 82]), "+f"(d[O + 83]),
                   "+f"(d[O + 84]), "+f"(d[O + 85]), "+f"(d[O + 86]), "+f"(d[O + 87]),
                   "+f"(d[O + 88]), "+f"(d[O + 89]), "+f"(d[O + 90]), "+f"(d[O + 91]),
                   "+f"(d[O + 92]), "+f"(d[O + 93]), "+f"(d[O + 94]), "+f"(d[O + 95]),
                   "+f"(d[O + 96]), "+f"(d[O + 97]), "+f"(d[O + 98]), "+f"(d[O + 99]),
                   "+f"(d[O + 100]), "+f"(d[O + 101]), "+f"(d[O + 102]), "+f"(d[O + 103]),
                   "+f"(d[O + 104]), "+f"(d[O + 105]), "+f"(d[O + 106]), "+f"(d[O + 107]),
                   "+f"(d[O + 108]), "+f"(d[O + 109]), "+f"(d[O + 110]), "+f"(d[O + 111]),
                   "+f"(d[O + 112]), "+f"(d[O + 113]), "+f"(d[O + 114]), "+f"(d[O + 115]),
                   "+f"(d[O + 116]), "+f"(d[O + 117]), "+f"(d[O + 118]), "+f"(d[O + 119]),
                   "+f"(d[O + 120]), "+f"(d[O + 121]), "+f"(d[O + 122]), "+f"(d[O + 123]),
                   "+f"(d[O + 124]), "+f"(d[O + 125]), "+f"(d[O + 126]), "+f"(d[O + 127])
                 : "l"(da), "l"(db), "r"(sd));
}

/* The BN-wide product of one K step: one wgmma, or for BN 320 (wider than a wgmma's 256) an
 * n256 and an n64 whose B starts at column 256, a 64-column block boundary (a descriptor's
 * start cannot fall inside a swizzled 128-byte row). Accumulator group j (columns 8j..8j+7)
 * stays at d[4j, 4j + 4) across the two, so the epilogue reads them as one tile. */
AMK_INLINE void gh_mma(float (&d)[GH_NACC], unsigned long long da, unsigned long long db,
                       int sd)
{
#if BN == 64
    gh_mma64<0>(d, da, db, sd);
#elif BN == 128
    gh_mma128<0>(d, da, db, sd);
#elif BN == 256
    gh_mma256<0>(d, da, db, sd);
#else
    gh_mma256<0>(d, da, db, sd);
    gh_mma64<128>(d, da, db + (GH_B_COL256 >> 4), sd); /* the start address field, in 16 bytes */
#endif
}

AMK_INLINE void gh_wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

AMK_INLINE void gh_wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N_PENDING> AMK_INLINE void gh_wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N_PENDING) : "memory");
}

/* Two floats to the output type, packed (lo in the low half); fp8 inputs scale them first. */
AMK_INLINE unsigned int gh_pack(float lo, float hi)
{
    unsigned int r;
    asm(GH_CVT2 " %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* ---------- epilogue (EPILOGUE >= 1) -------------------------------------------------- */

#define GH_STAGED (BN / 64 - GH_CARRY)    /* blocks a tile's epilogue writes into its slots */
/* A thread's share of its consumer's carried blocks: per m64 block and row half, 8 packed
 * column pairs a block. */
typedef unsigned int gh_carry_t[GH_MT][2][8 * (GH_CARRY ? GH_CARRY : 1)];

/* Packed value v of the thread's row r, 8-column group j (of block j / 8), into that block's
 * slot, 128B-swizzled as the TMA store reads it (conflict-free). */
AMK_INLINE void gh_stage(unsigned int cw_s, int r, int j, int lane, unsigned int v)
{
    const unsigned int off = ((j >> 3) % GH_SLOTS) * GH_BLK_BYTES + r * 128 +
                             (((j & 7) ^ (r & 7)) << 4) + (lane & 3) * 4;
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(cw_s + off), "r"(v) : "memory");
}

/* One step of a consumer's pending stores: block st_next of the staged tile (corner st_n,
 * st_m) goes out by TMA. When its slot held an earlier block (a carried one's turn), the
 * oldest stores in flight must have read their slots: then up to GH_SLOTS carried blocks are
 * written into them at once. All 128 threads of the consumer take every step. */
AMK_INLINE void gh_store_step(const amk_tensor_map *tmC, int &st_next, int st_n, int st_m,
                              unsigned int cw_s, const gh_carry_t &cr, int w, int ltid)
{
#if GH_CARRY
    if (st_next >= GH_SLOTS && st_next % GH_SLOTS == 0) {
        const int left = BN / 64 - st_next, n = left < GH_SLOTS ? left : GH_SLOTS;
        if (ltid == 0) { /* at most GH_SLOTS - n of the last GH_SLOTS stores still reading */
            if (GH_SLOTS - n == 2)
                asm volatile("cp.async.bulk.wait_group.read 2;\n" ::: "memory");
            else if (GH_SLOTS - n == 1)
                asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
            else
                asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
        const int warp = ltid >> 5, lane = ltid & 31;
#pragma unroll
        for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int cb = 0; cb < GH_CARRY; ++cb)
                    if (GH_STAGED + cb >= st_next && GH_STAGED + cb < st_next + n)
#pragma unroll
                        for (int j = 0; j < 8; ++j)
                            gh_stage(cw_s, mt * 64 + warp * 16 + (lane >> 2) + 8 * h,
                                     8 * (GH_STAGED + cb) + j, lane, cr[mt][h][8 * cb + j]);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
    }
#else
    (void)cr, (void)w;
#endif
    if (ltid == 0)
        gh_store_block(tmC, st_n, st_m, cw_s, st_next);
    ++st_next;
}

/* ---------- scheduling ---------------------------------------------------------------- */

/* Cluster tile t -> this CTA's tile origin (m0, n0). */
AMK_INLINE void gh_tile(int t, int ctm, int ctn, unsigned int rank, int *m0, int *n0)
{
    const int per_group = GROUP_M * ctn;
    const int first = (t / per_group) * GROUP_M;
    const int gs = ctm - first < GROUP_M ? ctm - first : GROUP_M;
    const int cm = first + (t % per_group) % gs, cn = (t % per_group) / gs;
    *m0 = (cm * CLUSTER_M + (CLUSTER_M == 2 ? (int)rank : 0)) * BM;
    *n0 = (cn * CLUSTER_N + (CLUSTER_N == 2 ? (int)rank : 0)) * BN;
}

/* A cluster's work, unit by unit: a cluster tile and the range [k_lo, k_hi) of its K tiles.
 * Tiles t_first, t_first + t_step, ... below dp_end are whole. With PERSISTENT 3 the tiles
 * of the partial last wave (all tiles when there are fewer than clusters) are split along K
 * instead: their K iterations are cut into equal contiguous ranges, one per cluster
 * (stream-K); a range is at most ktiles long, so it touches at most 2 tiles. Measured on the
 * H100 (bf16, 128 x 256 tiles): splitting one full wave more (longer pieces, more of them)
 * and leaving the pieces zero after use (an inout workspace) each cost 1-2 % at 8192 x
 * 14336 x 4096, and both together 25 % at 4096^3. */
struct gh_work {
    int t, t_step, dp_end, ktiles;
    unsigned int sk_iters, it, it_end; /* stream-K: all split iterations; this cluster's */
    unsigned int sk_ctas;              /* next and end; clusters with a range (>= 1 each) */
};

AMK_INLINE void gh_work_init(gh_work &g, int t_first, int t_step, int ntiles, int ktiles,
                             int cid, int nclusters)
{
    g.t = t_first;
    g.t_step = t_step;
    g.ktiles = ktiles;
    g.dp_end = ntiles;
    g.sk_iters = g.it = g.it_end = 0;
    g.sk_ctas = 1;
#if GH_STREAMK
    const int rem = ntiles % nclusters;
    if (rem && ktiles > 0) { /* K = 0: no iterations to split; every tile is written whole */
        const unsigned int iters = (unsigned int)(rem * ktiles); /* < 2^32: the spec's bound */
        unsigned int ctas = iters < (unsigned int)nclusters ? iters : (unsigned int)nclusters;
#if GH_SK_WHOLE_PIECES
        /* p pieces a tile, p the largest divisor of ktiles with rem * p <= nclusters: every
         * range lies in one tile, so no cluster stores two pieces (at 8192 x 14336 x 4096 the
         * ranges over all 132 clusters, 9.7 K tiles each, cross tiles: LLM burst 0.982 of
         * cuBLAS against 0.989 with p = 4). p = 1: the tiles stay whole, as PERSISTENT 1. */
        int p = nclusters / rem < ktiles ? nclusters / rem : ktiles;
        while (p > 1 && ktiles % p)
            p--;
        if (p < 2)
            return;
        ctas = (unsigned int)(rem * p);
#endif
        g.dp_end = ntiles - rem;
        g.sk_iters = iters;
        g.sk_ctas = ctas;
        if ((unsigned int)cid < g.sk_ctas) {
            g.it = cid * g.sk_iters / g.sk_ctas;
            g.it_end = (cid + 1) * g.sk_iters / g.sk_ctas;
        }
    }
#endif
}

AMK_INLINE bool gh_work_next(gh_work &g, int &tile, int &k_lo, int &k_hi)
{
    if (g.t < g.dp_end) {
        tile = g.t;
        k_lo = 0;
        k_hi = g.ktiles;
        g.t += g.t_step;
        return true;
    }
    if (g.it >= g.it_end)
        return false;
    const unsigned int j = g.it / g.ktiles, j0 = j * g.ktiles;
    const unsigned int e = g.it_end < j0 + g.ktiles ? g.it_end : j0 + g.ktiles;
    tile = g.dp_end + (int)j;
    k_lo = (int)(g.it - j0);
    k_hi = (int)(e - j0);
    g.it = e;
    return true;
}

#if GH_STREAMK
/* Split iterations: cluster c's range starts at sk_begin(c); iteration x is cluster
 * sk_owner(x)'s (the largest c with sk_begin(c) <= x). */
AMK_INLINE unsigned int gh_sk_begin(const gh_work &g, unsigned int c)
{
    return c * g.sk_iters / g.sk_ctas;
}

AMK_INLINE unsigned int gh_sk_owner(const gh_work &g, unsigned int x)
{
    return ((x + 1) * g.sk_ctas + g.sk_iters - 1) / g.sk_iters - 1;
}

AMK_INLINE void gh_st_cg(float *p, float a, float b, float c, float d)
{
    asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b),
                 "f"(c), "f"(d)
                 : "memory");
}

/* The piece of split tile j this consumer warpgroup just accumulated (acc): every piece is
 * stored as f32 to the scratch buffer sk (2 slots of BM x BN per CTA: a range touches at
 * most 2 tiles); the last of the tile's pieces to arrive (a counter per tile, CTA rank and
 * consumer in ws, which it leaves zero for the next launch) adds them all, in piece order
 * (deterministic: the same sum whichever arrives last), into acc and returns true: it writes
 * the tile. Lock-free: nobody waits for a piece. */
AMK_INLINE bool gh_sk_fixup(float (&acc)[GH_MT][GH_NACC], const gh_work &g, int j, int cid,
                            unsigned int rank, int w, int ltid, float *ws, float *sk,
                            unsigned int flag)
{
    const unsigned int j0 = (unsigned int)(j * g.ktiles);
    const unsigned int c_first = gh_sk_owner(g, j0), c_last = gh_sk_owner(g, j0 + g.ktiles - 1);
    unsigned int *count =
        reinterpret_cast<unsigned int *>(ws) + (j * GH_CSIZE + rank) * CONSUMERS + w;
#define GH_SLOT(c)                                                                          \
    (sk + (size_t)((((c) * 2 + j - gh_sk_begin(g, (c)) / g.ktiles) * GH_CSIZE + rank) *     \
                       CONSUMERS + w) * (GH_WG_M * BN) + ltid * 4)
    float *mine = GH_SLOT(cid);
#pragma unroll
    for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
        for (int i = 0; i < GH_NACC; i += 4)
            gh_st_cg(mine + (mt * GH_NACC + i) * 128, acc[mt][i], acc[mt][i + 1], acc[mt][i + 2],
                     acc[mt][i + 3]);
    __threadfence(); /* the piece is visible before the count says so */
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
    if (ltid == 0) {
        const unsigned int last = atomicAdd(count, 1u) == c_last - c_first;
        if (last)
            *count = 0u; /* every piece has arrived: nobody counts on it again this launch */
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(flag), "r"(last) : "memory");
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
    unsigned int last;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(last) : "r"(flag) : "memory");
    if (!last)
        return false;
    __threadfence();
    /* 32 accumulators at a time, over all pieces: the loads of a chunk are consumed (the
     * fence) before the next chunk's are issued, or they would all be in flight at once and
     * need 128 more registers (ptxas spilled). */
#pragma unroll
    for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
        for (int i0 = 0; i0 < GH_NACC; i0 += 32) {
            for (unsigned int c = c_first; c <= c_last; ++c) {
                const float *p = GH_SLOT(c) + (mt * GH_NACC + i0) * 128;
#pragma unroll
                for (int i = i0; i < i0 + 32 && i < GH_NACC; i += 4) {
                    float v0, v1, v2, v3;
                    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                                 : "=f"(v0), "=f"(v1), "=f"(v2), "=f"(v3)
                                 : "l"(p + (i - i0) * 128));
                    acc[mt][i] = c == c_first ? v0 : acc[mt][i] + v0;
                    acc[mt][i + 1] = c == c_first ? v1 : acc[mt][i + 1] + v1;
                    acc[mt][i + 2] = c == c_first ? v2 : acc[mt][i + 2] + v2;
                    acc[mt][i + 3] = c == c_first ? v3 : acc[mt][i + 3] + v3;
                }
#pragma unroll
                for (int i = i0; i < i0 + 32 && i < GH_NACC; ++i)
                    asm volatile("" : "+f"(acc[mt][i])::"memory");
            }
        }
#undef GH_SLOT
    return true;
}
#endif

/* ---------- the kernel ---------------------------------------------------------------- */

AMK_KERNEL void __launch_bounds__(GH_THREADS, 1)
gemm_hopper_kernel(const __grid_constant__ amk_tensor_map tmA,
                   const __grid_constant__ amk_tensor_map tmB,
                   const __grid_constant__ amk_tensor_map tmC, gh_out_t *__restrict__ C, int M,
                   int N, int K
#if GH_FP8
                   , const float *__restrict__ SA, const float *__restrict__ SB
#endif
                   , float *__restrict__ WS /* PERSISTENT 3: split tiles' counters (zero) */
                   , float *__restrict__ SK /* PERSISTENT 3: their pieces (scratch) */
)
{
    /* STAGES x (A, B), the staging (EPILOGUE >= 1), then full[STAGES], empty[STAGES]. */
    extern __shared__ __attribute__((aligned(1024))) unsigned char gh_smem[];
    const unsigned int raw = gh_smem_addr(gh_smem);
    const unsigned int base = (raw + 1023u) & ~1023u;
    const unsigned int c_s = base + STAGES * GH_STAGE;
    const unsigned int full0 = c_s + GH_C_BYTES, empty0 = full0 + 8 * STAGES;
    const unsigned int order0 = empty0 + 8 * STAGES; /* ping-pong: order[2]; stream-K: flag[2] */

    const int tid = threadIdx.x, wg = tid >> 7;
    unsigned int rank = 0;
#if GH_CSIZE > 1
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int ctm = (tiles_m + CLUSTER_M - 1) / CLUSTER_M;
    const int ctn = (tiles_n + CLUSTER_N - 1) / CLUSTER_N;
    const int ntiles = ctm * ctn;
    const int cid = blockIdx.x / GH_CSIZE, nclusters = gridDim.x / GH_CSIZE;
    const int ktiles = (K + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            gh_bar_init(full0 + 8 * s, 1);
            gh_bar_init(empty0 + 8 * s, (GH_PINGPONG ? 1 : CONSUMERS) * 4 * GH_CSIZE);
        }
#if GH_PINGPONG
        gh_bar_init(order0, 1);
        gh_bar_init(order0 + 8, 1);
#endif
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    gh_cluster_sync();

    if (wg == 0) {
        /* Producer. */
#if REGS == 1
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
#elif REGS == 2
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
#endif
        if (tid == 0) {
            int s = 0;
            unsigned int phase = 0;
            gh_work g;
            gh_work_init(g, cid, nclusters, ntiles, ktiles, cid, nclusters);
            int t, k_lo, k_hi;
            while (gh_work_next(g, t, k_lo, k_hi)) {
                int m0, n0;
                gh_tile(t, ctm, ctn, rank, &m0, &n0);
                for (int kt = k_lo; kt < k_hi; ++kt) {
                    const unsigned int full = full0 + 8 * s;
                    gh_bar_wait(empty0 + 8 * s, phase ^ 1u);
                    gh_bar_expect(full, GH_STAGE);
                    const unsigned int a_s = base + s * GH_STAGE, b_s = a_s + GH_A_BYTES;
                    const int k0 = kt * BK;
#pragma unroll
                    for (int c = 0; c < GH_KCH; ++c) {
                        if (CLUSTER_N == 2)
                            gh_tma_load(a_s + c * GH_A_CHUNK + rank * (BM / 2) * 128, &tmA,
                                        k0 + c * GH_KC, m0 + (int)rank * (BM / 2), full, 3);
                        else
                            gh_tma_load(a_s + c * GH_A_CHUNK, &tmA, k0 + c * GH_KC, m0, full, 0);
                    }
#if GH_FP8
#pragma unroll
                    for (int c = 0; c < GH_KCH; ++c) {
                        if (CLUSTER_M == 2)
                            gh_tma_load(b_s + c * GH_B_CHUNK + rank * (BN / 2) * 128, &tmB,
                                        k0 + c * GH_KC, n0 + (int)rank * (BN / 2), full, 3);
                        else
                            gh_tma_load(b_s + c * GH_B_CHUNK, &tmB, k0 + c * GH_KC, n0, full, 0);
                    }
#else
#pragma unroll
                    for (int j = 0; j < BN / 64; ++j) {
                        if (CLUSTER_M == 2)
                            gh_tma_load(b_s + j * GH_B_BLOCK + rank * (BK / 2) * 128, &tmB,
                                        n0 + j * 64, k0 + (int)rank * (BK / 2), full, 3);
                        else
                            gh_tma_load(b_s + j * GH_B_BLOCK, &tmB, n0 + j * 64, k0, full, 0);
                    }
#endif
                    if (++s == STAGES) {
                        s = 0;
                        phase ^= 1u;
                    }
                }
            }
        }
    } else {
        /* Consumers. */
#if REGS == 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
#elif REGS == 2
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
#endif
        const int w = wg - 1, ltid = tid & 127, warp = ltid >> 5, lane = tid & 31;
#if GH_FP8
        const float scale = SA[0] * SB[0]; /* per-tensor scales of A and B */
#define GH_OUT(x) ((x) * scale)
#else
#define GH_OUT(x) (x)
#endif
        const unsigned int cw_s = c_s + w * GH_CW_BYTES;
        /* This consumer's rows of a tile, its first tile and its stride. */
        const int row_w = GH_PINGPONG ? 0 : w * GH_WG_M;
        const int t_first = GH_PINGPONG ? cid + w * nclusters : cid;
        const int t_step = GH_PINGPONG ? 2 * nclusters : nclusters;
        int s = 0;
        unsigned int phase = 0;
#if GH_PINGPONG
        /* Consumer 1 starts past the ring stages of the CTA's first tile. */
        if (w == 1) {
            s = ktiles % STAGES;
            phase = (unsigned int)(ktiles / STAGES) & 1u;
        }
        unsigned int order_phase = 0;
#endif
        /* Zeroed once: a tile's first wgmma overwrites them (scale-d 0; every tile or piece
         * has at least one K step). */
        float acc[GH_MT][GH_NACC];
#pragma unroll
        for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
            for (int i = 0; i < GH_NACC; ++i)
                acc[mt][i] = 0.0f;
#if EPILOGUE
        /* The staged tile's 64-column blocks not yet stored: st_next .. BN/64 - 1, its
         * corner (st_n, st_m); one goes out in each of the next main loop's first K steps.
         * Blocks past the slots wait in cr (GH_CARRY). */
        int st_next = BN / 64, st_m = 0, st_n = 0;
        gh_carry_t cr;
#endif
        gh_work g;
        gh_work_init(g, t_first, t_step, ntiles, ktiles, cid, nclusters);
        int t, k_lo, k_hi;
        while (gh_work_next(g, t, k_lo, k_hi)) {
            int m0, n0;
            gh_tile(t, ctm, ctn, rank, &m0, &n0);
#if GH_PINGPONG
            /* The other consumer's main loop of the tile before this one has waited on all
             * its stages (consumer 0's first tile has none before it). */
            if (w == 1 || t != t_first) {
                gh_bar_wait(order0 + 8 * w, order_phase);
                order_phase ^= 1u;
                /* All 4 warps are past the wait before warp 0 can let the other consumer
                 * on to its next turn (whose arrival would complete this barrier's next
                 * phase, of the other parity, under a warp still waiting). */
                asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
            }
#endif
            int prev = -1;
            for (int kt = k_lo; kt < k_hi; ++kt) {
                gh_bar_wait(full0 + 8 * s, phase);
                const unsigned int a_s = base + s * GH_STAGE + row_w * 128;
                const unsigned int b_s = base + s * GH_STAGE + GH_A_BYTES;
                gh_wg_fence();
#pragma unroll
                for (int c = 0; c < GH_KCH; ++c)
#pragma unroll
                    for (int ks = 0; ks < 4; ++ks) {
#if GH_FP8
                        const unsigned long long db =
                            gh_desc(b_s + c * GH_B_CHUNK + ks * 32, 16, 1024);
#else
                        const unsigned long long db =
                            gh_desc(b_s + (c * 4 + ks) * 2048, GH_B_BLOCK, 1024);
#endif
#pragma unroll
                        for (int mt = 0; mt < GH_MT; ++mt)
                            gh_mma(acc[mt],
                                   gh_desc(a_s + c * GH_A_CHUNK + mt * 64 * 128 + ks * 32, 16,
                                           1024),
                                   db, kt != k_lo || c || ks);
                    }
                gh_wg_commit();
                gh_wg_wait<1>(); /* the previous stage's wgmmas are done: release it */
                if (prev >= 0 && lane == 0)
                    gh_bar_release(empty0 + 8 * prev);
                prev = s;
#if EPILOGUE
                if (st_next < BN / 64)
                    gh_store_step(&tmC, st_next, st_n, st_m, cw_s, cr, w, ltid);
#endif
                if (++s == STAGES) {
                    s = 0;
                    phase ^= 1u;
                }
            }
#if GH_PINGPONG
            if (ltid == 0) /* this thread has seen every stage of the tile filled */
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(order0 +
                                                                              8 * (1 - w))
                             : "memory");
#endif
            gh_wg_wait<0>();
            if (prev >= 0 && lane == 0)
                gh_bar_release(empty0 + 8 * prev);
#if GH_PINGPONG
            {
                /* Skip the other consumer's next tile: ktiles stages of the ring. */
                const int nx = s + ktiles;
                s = nx % STAGES;
                phase ^= (unsigned int)(nx / STAGES) & 1u;
            }
#endif
#pragma unroll
            for (int mt = 0; mt < GH_MT; ++mt)
                gh_fence_acc(acc[mt]);
#if GH_STREAMK
            /* A piece of a split tile: only the last piece to arrive writes the tile. */
            if (k_hi - k_lo != ktiles &&
                !gh_sk_fixup(acc, g, t - g.dp_end, cid, rank, w, ltid, WS, SK, order0 + 4 * w))
                continue;
#endif

            /* Epilogue: thread (warp, lane) holds, for 8-column group j, rows warp*16 +
             * lane/4 (+8) and columns 8j + 2(lane%4) + {0,1} of each m64 block. */
#if EPILOGUE == 0
            const int col0 = n0 + (lane & 3) * 2;
#pragma unroll
            for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = m0 + row_w + mt * 64 + warp * 16 + (lane >> 2) + 8 * h;
                    if (row < M) {
                        unsigned int *dst =
                            reinterpret_cast<unsigned int *>(C + (size_t)row * N + col0);
#pragma unroll
                        for (int j = 0; j < BN / 8; ++j)
                            if (col0 + j * 8 < N)
                                dst[j * 4] = gh_pack(GH_OUT(acc[mt][4 * j + 2 * h]),
                                                     GH_OUT(acc[mt][4 * j + 2 * h + 1]));
                    }
                }
#else
            /* The previous tile's pending stores go out now (its carried blocks too) and must
             * have read the staging before it is rewritten. */
            while (st_next < BN / 64)
                gh_store_step(&tmC, st_next, st_n, st_m, cw_s, cr, w, ltid);
            if (ltid == 0)
                asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
#pragma unroll
            for (int mt = 0; mt < GH_MT; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = mt * 64 + warp * 16 + (lane >> 2) + 8 * h;
#pragma unroll
                    for (int j = 0; j < 8 * GH_STAGED; ++j)
                        gh_stage(cw_s, r, j, lane,
                                 gh_pack(GH_OUT(acc[mt][4 * j + 2 * h]),
                                         GH_OUT(acc[mt][4 * j + 2 * h + 1])));
#pragma unroll
                    for (int j = 0; j < 8 * GH_CARRY; ++j) {
                        const int a = 4 * (8 * GH_STAGED + j) + 2 * h;
                        cr[mt][h][j] = gh_pack(GH_OUT(acc[mt][a]), GH_OUT(acc[mt][a + 1]));
                    }
                }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
            st_next = 0, st_m = m0 + row_w, st_n = n0; /* stored in the next main loop */
#endif
        }
#if EPILOGUE
        while (st_next < BN / 64)
            gh_store_step(&tmC, st_next, st_n, st_m, cw_s, cr, w, ltid);
        if (ltid == 0)
            asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
    }
    /* No CTA leaves while a peer may still multicast into it or arrive on its barriers. */
    gh_cluster_sync();
}
