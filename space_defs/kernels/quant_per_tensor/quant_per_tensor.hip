/* quant_per_tensor: dynamic per-tensor quantisation of bf16 x[total] to amk_t (fp8 e4m3 or
 * int8) in ONE launch: scale = max(absmax(x) / qmax, 1e-12) (qmax 448 or 127) and
 * q = saturate(round_half_even(x / scale)), all in f32 (the reference divides; this kernel
 * gets the same correctly rounded quotient from a reciprocal and two fmas, see qt_div, so
 * int8 must match bit for bit; fp8 converts in pairs with the prelude's
 * amk_fp8e4m3x2_from_float, one instruction on sm_89+, the reference's software conversion
 * elsewhere: bench/fp8_cvt_check.sh checks on a GPU that both give the same codes; int8
 * converts four at a time, two instructions on sm_75+, see qt_i8x4).
 *
 * Grid: a persistent grid of at most sm_count * BPS blocks; __launch_bounds__(THREADS, BPS)
 * makes the registers fit BPS blocks per SM, so every block is resident and the grid
 * barrier cannot deadlock. Each thread walks vectors of VEC elements at i = tid + k * stride:
 * the first KEEP of its walk are kept in registers from phase 1 to phase 2, the next `skeep`
 * in dynamic shared memory (SMEM=1: as many as fit BPS blocks per SM; skeep and the launch's
 * shared bytes come from the spec; the first QT_HEAD bytes hold the block's reduction slots
 * and scale), the rest is streamed and read again in phase 2.
 *
 * Phase 1 (absmax): the shared keep is filled and the streamed part read LOADS independent
 * vector loads at a time (one load per iteration leaves too little in flight for the HBM),
 * then the register keep is loaded, all KEEP at once and last, so the loops before it have
 * the registers. (cp.async for the shared keep was tried: 7-19% slower, with a wider spread
 * of the blocks' arrival at the barrier.) The block's absmax goes out with atomicMax on the
 * float's bits (non-negative floats order like their bit patterns).
 * Barrier: a workspace counter ws[1] counts arrivals (released after the atomicMax); thread
 * 0 of each block polls it with acquire loads (atomics would queue in front of the arrivals
 * at the counter's L2 slice), then reads the absmax ws[0]. A second arrival, released after
 * that read, lets the last block reset ws to zero at the end of the kernel (its round trip
 * overlaps phase 2), so the next launch starts clean; the spec declares ws as an inout
 * buffer with init "zero" that must come back zero. The release/acquire pair took the
 * barrier from 2.5 to 1.4 us on the H100 (fences on both sides before).
 * Phase 2 (quantise): the streamed part in REVERSE order, LOADS at a time, so what phase 1
 * read last (most likely still in L2) is read again first, then the shared and register
 * copies, which need no read (streamed part last instead: 1-7 us slower).
 * L2 hints (NVIDIA): the kept vectors are loaded evict-first and the second read of the
 * streamed part and the stores of q are evict-first too, so the L2 spends itself on the
 * streamed part of x that phase 2 reads again (without them: 4 us slower at 8192x4096). No
 * evict-last: lines that outlived the launch would warm the next benchmark repetition.
 * Any total >= 1: the tail past the last whole vector is done element by element.
 * Knobs: THREADS VEC BPS KEEP SMEM LOADS. */
#if !defined(THREADS) || !defined(VEC) || !defined(BPS) || !defined(KEEP) || !defined(SMEM) || \
    !defined(LOADS)
#error "quant_per_tensor needs -DTHREADS -DVEC -DBPS -DKEEP -DSMEM -DLOADS"
#endif
#if defined(AMK_T_FP8E4M3)
#define QT_QMAX 448.0f
#elif defined(AMK_T_INT8)
#define QT_QMAX 127.0f
#else
#error "quant_per_tensor needs the output dtype: -DAMK_T_FP8E4M3 or -DAMK_T_INT8"
#endif

#define QT_WARPS (THREADS / AMK_WARP > 0 ? THREADS / AMK_WARP : 1)
static_assert(VEC == 8 || VEC == 16 || VEC == 32, "VEC must be 8, 16 or 32");
static_assert(THREADS % AMK_WARP == 0 || THREADS < AMK_WARP, "THREADS: whole warps");
static_assert(KEEP >= 0 && (SMEM == 0 || SMEM == 1) && LOADS >= 1,
              "KEEP >= 0, SMEM 0 or 1, LOADS >= 1");
/* Timing marks at the phase boundaries for bench/quant_phases.sh (which defines QT_MARK);
 * nothing here. */
#ifndef QT_MARK
#define QT_MARK(k)
#endif
/* Bytes at the start of the dynamic shared memory for wmax[QT_WARPS], the scale and its
 * reciprocal; the spec's smem_bytes adds the same 256. */
#define QT_HEAD 256
static_assert(4 * (QT_WARPS + 2) <= QT_HEAD, "QT_HEAD too small");

/* L2 eviction hints and the release/acquire barrier: NVIDIA sm_70+. */
#if defined(AMK_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#define QT_NV70 1
#else
#define QT_NV70 0
#endif


/* VEC bf16 in: 16-byte chunks (VEC >= 8). VEC outputs: one 8-byte chunk (VEC 8) or 16-byte
 * chunks. */
template <int NB> struct qt_chunk;
template <> struct qt_chunk<8> { typedef uint2 type; };
template <> struct qt_chunk<16> { typedef uint4 type; };
struct qt_in {
    enum { NC = 2 * VEC / 16 };
    typedef uint4 chunk;
    union {
        chunk c[NC];
        amk_bf16 e[VEC];
    };
};
struct qt_out {
    enum { CB = VEC > 16 ? 16 : VEC, NC = VEC / CB };
    typedef qt_chunk<CB>::type chunk;
    union {
        chunk c[NC];
        unsigned short pair[VEC / 2];
        unsigned int quad[VEC / 4];
        amk_t e[VEC];
    };
};

/* Loads of x: QT_NORMAL allocates in L2 as usual (the streamed part, read again in phase 2);
 * QT_ONCE is evict-first in L2 (data kept on chip, or read for the last time). */
enum { QT_NORMAL = 0, QT_ONCE = 1 };
AMK_INLINE void qt_load(qt_in &u, const qt_in::chunk *xv, int i, int hint)
{
#pragma unroll
    for (int c = 0; c < qt_in::NC; ++c) {
        const qt_in::chunk *p = xv + (size_t)i * qt_in::NC + c;
#if QT_NV70
        u.c[c] = hint == QT_ONCE ? __ldcs(p) : __ldg(p);
#else
        (void)hint;
        u.c[c] = *p;
#endif
    }
}

/* The grid barrier's memory operations: release the arrival after the block's atomicMax,
 * acquire every arrival before reading the absmax. */
AMK_INLINE void qt_arrive(unsigned int *count)
{
#if QT_NV70
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
#else
    __threadfence();
    atomicAdd(count, 1u);
#endif
}

AMK_INLINE unsigned int qt_arrive_again(unsigned int *count)
{
#if QT_NV70
    unsigned int v;
    asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(count) : "memory");
    return v;
#else
    __threadfence();
    return atomicAdd(count, 1u);
#endif
}

AMK_INLINE unsigned int qt_arrivals(const unsigned int *count)
{
#if QT_NV70
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(count) : "memory");
    return v;
#else
    const unsigned int v = *(const volatile unsigned int *)count;
    __threadfence();
    return v;
#endif
}

AMK_INLINE float qt_absmax(const qt_in &u, float a)
{
#pragma unroll
    for (int v = 0; v < VEC; ++v)
        a = fmaxf(a, fabsf(amk_to_float(u.e[v])));
    return a;
}

/* x / sc correctly rounded (as the reference's division) in 3 instructions, given
 * rc = 1 / sc correctly rounded: q0 = x * rc is within an ulp or so of x / sc, the residual
 * q0 * sc - x is exact in an fma (it is representable when |x| >= 2^-125), and one Newton
 * step q0 - residual * rc rounds to RN(x / sc) (Markstein's theorem; no overflow: |x| <=
 * absmax, so |x / sc| <= qmax). Where the residual or the quotient underflows, |x| < 2^-125
 * or |x / sc| < 2^-126, the quotient is below 2^-85 and both quantise to a zero of x's sign
 * (the sign of x is kept: this form gives -0 for x = -0, the form x - q0 * sc would give
 * +0). tests/check_kernels.c checks the codes against true division for every bf16 x over
 * thousands of scales. A real division is ~8-10 instructions with a range check. */
AMK_INLINE float qt_div(float x, float sc, float rc)
{
    const float q0 = x * rc;
    return fmaf(-fmaf(q0, sc, -x), rc, q0);
}

#if defined(AMK_T_INT8)
/* round half to even, saturated to [-128, 127] (the reference's rintf and clamp). */
AMK_INLINE unsigned int qt_i8(float v)
{
    float r = rintf(v);
    r = r > 127.0f ? 127.0f : (r < -128.0f ? -128.0f : r);
    return (unsigned int)(unsigned char)(signed char)r;
}

/* Four codes packed as stored (a in bits 0-7). sm_75+: cvt.rni.s32.f32 rounds half to even
 * (out-of-range values saturate to the int32 limits) and cvt.pack.sat.s8 clamps to
 * [-128, 127] while packing two; ptxas fuses each pair into one F2IP.S8.F32. Same codes as
 * qt_i8 for every non-NaN v (a NaN gives 0 here; x / sc is NaN only for a NaN x). */
AMK_INLINE unsigned int qt_i8x4(float a, float b, float c, float d)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    unsigned int hi, r;
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, 0;"
        : "=r"(hi) : "r"(__float2int_rn(d)), "r"(__float2int_rn(c)));
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;"
        : "=r"(r) : "r"(__float2int_rn(b)), "r"(__float2int_rn(a)), "r"(hi));
    return r;
#else
    return qt_i8(a) | (qt_i8(b) << 8) | (qt_i8(c) << 16) | (qt_i8(d) << 24);
#endif
}
#endif

/* One element (the tail past the last whole vector). */
AMK_INLINE amk_t qt_quant(float v)
{
#if defined(AMK_T_FP8E4M3)
    return amk_fp8e4m3_from_float(v);
#else
    return (signed char)qt_i8(v);
#endif
}

/* Quantises vector u and stores it as output vector i; fp8 converts in pairs, int8 in
 * fours. */
AMK_INLINE void qt_store(qt_out::chunk *qv, int i, const qt_in &u, float sc, float rc)
{
    qt_out o;
    float f[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v)
        f[v] = qt_div(amk_to_float(u.e[v]), sc, rc);
#if defined(AMK_T_FP8E4M3)
#pragma unroll
    for (int p = 0; p < VEC / 2; ++p)
        o.pair[p] = amk_fp8e4m3x2_from_float(f[2 * p], f[2 * p + 1]);
#else
#pragma unroll
    for (int p = 0; p < VEC / 4; ++p)
        o.quad[p] = qt_i8x4(f[4 * p], f[4 * p + 1], f[4 * p + 2], f[4 * p + 3]);
#endif
#pragma unroll
    for (int c = 0; c < qt_out::NC; ++c)
#if QT_NV70
        __stcs(qv + (size_t)i * qt_out::NC + c, o.c[c]); /* evict-first: keep x in L2 */
#else
        qv[(size_t)i * qt_out::NC + c] = o.c[c];
#endif
}

/* Phase 2's second read of the streamed part of this thread's walk (vectors first, first +
 * stride, ... below nvec), newest first, LOADS at a time. */
AMK_INLINE void qt_quant_streamed(const qt_in::chunk *xv, qt_out::chunk *qv, int first, int nvec,
                                  int stride, float sc, float rc)
{
    if (first >= nvec)
        return;
    int j = first + (nvec - 1 - first) / stride * stride;
    for (; j - (LOADS - 1) * stride >= first; j -= LOADS * stride) {
        qt_in u[LOADS];
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            qt_load(u[l], xv, j - l * stride, QT_ONCE);
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            qt_store(qv, j - l * stride, u[l], sc, rc);
    }
    for (; j >= first; j -= stride) {
        qt_in u;
        qt_load(u, xv, j, QT_ONCE);
        qt_store(qv, j, u, sc, rc);
    }
}

AMK_KERNEL void __launch_bounds__(THREADS, BPS)
quant_per_tensor_kernel(const amk_bf16 *__restrict__ x, amk_t *__restrict__ q,
                        float *__restrict__ scale, float *ws, int total, int skeep)
{
    /* [QT_HEAD bytes: wmax, scale, 1/scale][SMEM: skeep][NC][THREADS] chunks]; all dynamic,
     * so the launch's shared bytes are the whole need (a static part on top of 48 KiB of
     * dynamic would need the opt-in the launcher only asks for above 48 KiB). */
    extern __shared__ __attribute__((aligned(16))) unsigned char qt_smem_bytes[];
    float *wmax = reinterpret_cast<float *>(qt_smem_bytes);
    float *s_scale = wmax + QT_WARPS;
    unsigned int *amax_bits = reinterpret_cast<unsigned int *>(ws);
    unsigned int *count = reinterpret_cast<unsigned int *>(ws) + 1;
    const int nvec = total / VEC;
    const int tid = blockIdx.x * THREADS + threadIdx.x, stride = gridDim.x * THREADS;
    const qt_in::chunk *xv = reinterpret_cast<const qt_in::chunk *>(x);
    QT_MARK(0);
#if SMEM
    /* [skeep][NC][THREADS] chunks: a warp touches consecutive 16-byte words; each thread
     * reads back only what it wrote itself, so no block barrier is needed. */
    qt_in::chunk *keep_s = reinterpret_cast<qt_in::chunk *>(qt_smem_bytes + QT_HEAD);
    const int walk = tid < nvec ? (nvec - 1 - tid) / stride + 1 : 0; /* vectors of this thread */
    const int n_smem = min(skeep, max(0, walk - KEEP));
#else
    const int n_smem = 0;
    (void)skeep;
#endif
    /* The walk: registers k < KEEP, shared memory KEEP <= k < KEEP + n_smem, then streamed. */
    const int first_streamed = tid + (KEEP + n_smem) * stride;
    float a = 0.0f;

    /* Phase 1: block absmax. The shared keep, LOADS vectors at a time through registers. */
#if SMEM
    for (int s = 0; s < n_smem; s += LOADS) {
        qt_in u[LOADS];
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            if (s + l < n_smem)
                qt_load(u[l], xv, tid + (KEEP + s + l) * stride, QT_ONCE);
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            if (s + l < n_smem) {
                a = qt_absmax(u[l], a);
#pragma unroll
                for (int c = 0; c < qt_in::NC; ++c)
                    keep_s[((s + l) * qt_in::NC + c) * THREADS + threadIdx.x] = u[l].c[c];
            }
    }
#endif
    /* The streamed part. */
    int i = first_streamed;
    for (; i + (LOADS - 1) * stride < nvec; i += LOADS * stride) {
        qt_in u[LOADS];
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            qt_load(u[l], xv, i + l * stride, QT_NORMAL);
#pragma unroll
        for (int l = 0; l < LOADS; ++l)
            a = qt_absmax(u[l], a);
    }
    for (; i < nvec; i += stride) {
        qt_in u;
        qt_load(u, xv, i, QT_NORMAL);
        a = qt_absmax(u, a);
    }
    /* The register keep, all loads at once. */
#if KEEP > 0
    qt_in keep_r[KEEP];
#pragma unroll
    for (int k = 0; k < KEEP; ++k)
        if (tid + k * stride < nvec)
            qt_load(keep_r[k], xv, tid + k * stride, QT_ONCE);
#pragma unroll
    for (int k = 0; k < KEEP; ++k)
        if (tid + k * stride < nvec)
            a = qt_absmax(keep_r[k], a);
#endif
    for (int e = nvec * VEC + tid; e < total; e += stride)
        a = fmaxf(a, fabsf(amk_to_float(x[e])));
#pragma unroll
    for (int o = AMK_WARP / 2; o > 0; o >>= 1)
        a = fmaxf(a, amk_shfl_xor(a, o));
    if (threadIdx.x % AMK_WARP == 0)
        wmax[threadIdx.x / AMK_WARP] = a;
    __syncthreads();

    QT_MARK(1);
    /* Grid barrier (thread 0 of each block), then the scale. */
    unsigned int second = 0;
    if (threadIdx.x == 0) {
        float b = wmax[0];
        for (int w = 1; w < QT_WARPS; ++w)
            b = fmaxf(b, wmax[w]);
        atomicMax(amax_bits, __float_as_uint(b));
        qt_arrive(count); /* released after the atomicMax */
        /* Poll with loads (from L2; atomics would queue in front of the arrivals at the
         * counter's L2 slice), resting between polls; the load that sees every arrival
         * acquires them, so every block's atomicMax is visible to the read of amax. */
        while (qt_arrivals(count) < gridDim.x) {
#if QT_NV70
            __nanosleep(32);
#elif defined(AMK_VENDOR_AMD)
            __builtin_amdgcn_s_sleep(1);
#endif
        }
        const float amax = __uint_as_float(*(volatile unsigned int *)amax_bits);
        /* Second arrival, released after the read of amax; its result is first needed at the
         * end of the kernel, so its round trip overlaps phase 2. */
        second = qt_arrive_again(count);
        float sc = amax / QT_QMAX;
        sc = sc < 1e-12f ? 1e-12f : sc;
        s_scale[0] = sc;
        s_scale[1] = 1.0f / sc; /* correctly rounded: qt_div needs it */
        if (blockIdx.x == 0)
            scale[0] = sc;
    }
    __syncthreads();
    const float sc = s_scale[0], rc = s_scale[1];
    QT_MARK(2);

    /* Phase 2: the streamed part newest first (L2 hits first), then the on-chip copies. */
    qt_out::chunk *qv = reinterpret_cast<qt_out::chunk *>(q);
    qt_quant_streamed(xv, qv, first_streamed, nvec, stride, sc, rc);
#if SMEM
    for (int s = 0; s < n_smem; ++s) {
        qt_in u;
#pragma unroll
        for (int c = 0; c < qt_in::NC; ++c)
            u.c[c] = keep_s[(s * qt_in::NC + c) * THREADS + threadIdx.x];
        qt_store(qv, tid + (KEEP + s) * stride, u, sc, rc);
    }
#endif
#if KEEP > 0
#pragma unroll
    for (int k = 0; k < KEEP; ++k)
        if (tid + k * stride < nvec)
            qt_store(qv, tid + k * stride, keep_r[k], sc, rc);
#endif
    for (int e = nvec * VEC + tid; e < total; e += stride)
        q[e] = qt_quant(qt_div(amk_to_float(x[e]), sc, rc));

    /* The last block to arrive the second time (every block has read amax) resets the
     * workspace for the next launch; the arrival's round trip overlapped phase 2. */
    if (threadIdx.x == 0 && second == 2u * gridDim.x - 1u) {
        __threadfence();
        atomicExch(amax_bits, 0u);
        atomicExch(count, 0u);
    }
    QT_MARK(3);
}
