/* gemm_hopper outside amk: the template (one config, -D knobs) with amk's NVIDIA prelude,
 * its tensor maps encoded here, launched with its cluster, checked against the spec's
 * reference kernel on fresh random inputs and timed against cuBLAS (cublasGemmEx, same
 * dtypes, f32 compute) in the same process. bench/gemm_hopper_probe.sh builds and runs it;
 * it exists to see the kernel's own speed and correctness without the search around it.
 * usage: gemm_hopper_probe M N K [REGIME]
 *   prints one line: status, us, TFLOP/s, cuBLAS us, ratio. With REGIME (sustained | burst)
 *   the two are timed interleaved, launch by launch, with identical code, the way amk's run
 *   worker times a candidate and its peer (written separately here): cold L2 by rotating
 *   copies of A, B and C (1 + ceil(2 L2 / footprint) sets); chunks of launches queued behind
 *   a host-function gate, each launch between its own two events, no host wait inside a
 *   chunk; which of the two goes first flips every pair and every chunk. sustained = 2 s of
 *   back-to-back chunks first, then 12 chunks of 16 pairs; burst = 12 rounds of (200 ms
 *   idle, then one chunk of 8 pairs). This is the independent check of amk's own peer rows
 *   (bench/regimes.sh compares the two). */
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <vector>

#include "prelude.h"
#include GH_KERNEL
#include GH_REFERENCE

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#if defined(AMK_T_BF16)
static const CUtensorMapDataType TM_DT = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
static const cudaDataType CB_DT = CUDA_R_16BF;
#else
static const CUtensorMapDataType TM_DT = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
static const cudaDataType CB_DT = CUDA_R_16F;
#endif

/* 2-D row-major rows x cols map with a box of box_cols x box_rows, 128B swizzle. */
static amk_tensor_map tmap(void *p, int rows, int cols, int box_cols, int box_rows)
{
    amk_tensor_map m;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
    cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows}, es[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled((CUtensorMap *)&m, TM_DT, 2, p, dims, strides, box, es,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("FAIL cuTensorMapEncodeTiled: %d\n", (int)r);
        exit(1);
    }
    return m;
}

/* A host function at the head of a chunk holds the stream until the host has queued every
 * launch of the chunk (cuBLAS's host cost included), so no launch gap lands inside it. */
static void CUDART_CB gate_wait(void *p)
{
    std::atomic<int> *open = (std::atomic<int> *)p;
    auto t0 = std::chrono::steady_clock::now(); /* 5 s at most: a full queue cannot deadlock */
    while (!open->load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
        std::this_thread::yield();
}

static unsigned short to16(float f)
{
#if defined(AMK_T_BF16)
    unsigned int u;
    memcpy(&u, &f, 4);
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
    return __half_as_ushort(__float2half_rn(f));
#endif
}

static float from16(unsigned short h)
{
#if defined(AMK_T_BF16)
    unsigned int u = (unsigned int)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
#else
    return __half2float(__ushort_as_half(h));
#endif
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s M N K\n", argv[0]);
        return 2;
    }
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<unsigned short> ha((size_t)M * K), hb((size_t)K * N);
    srand(1234 + M + N + K);
    for (auto &x : ha) x = to16((float)rand() / RAND_MAX * 2.0f - 1.0f);
    for (auto &x : hb) x = to16((float)rand() / RAND_MAX * 2.0f - 1.0f);
    /* Sets of A, B, C rotated from launch to launch (amk's cold L2: between two uses of a
     * set at least twice the L2 has moved); set 0 is the one checked. */
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    const double footprint = ((double)M * K + (double)K * N + (double)M * N) * 2;
    const int nsets = std::min(64, 1 + (int)ceil(2.0 * l2 / footprint));
    std::vector<amk_t *> As(nsets), Bs(nsets), Cs(nsets);
    std::vector<amk_tensor_map> tas(nsets), tbs(nsets), tcs(nsets);
    for (int s = 0; s < nsets; s++) {
        CK(cudaMalloc(&As[s], ha.size() * 2));
        CK(cudaMalloc(&Bs[s], hb.size() * 2));
        CK(cudaMalloc(&Cs[s], (size_t)M * N * 2));
        CK(cudaMemcpy(As[s], ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(Bs[s], hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
        CK(cudaMemset(Cs[s], 0xff, (size_t)M * N * 2)); /* NaN poison */
        tas[s] = tmap(As[s], M, K, 64, BM / CLUSTER_N);
        tbs[s] = tmap(Bs[s], K, N, 64, BK / CLUSTER_M);
        tcs[s] = tmap(Cs[s], M, N, 64, GH_WG_M);
    }
    /* PERSISTENT 3 (stream-K): each set's counters, zeroed once (the kernel leaves them zero
     * again: checked below), and the pieces' scratch. */
    const int csize = GH_CSIZE;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int ctiles = ((tiles_m + CLUSTER_M - 1) / CLUSTER_M) * ((tiles_n + CLUSTER_N - 1) / CLUSTER_N);
    const int grid = GH_STREAMK   ? sms / csize * csize
                     : PERSISTENT ? std::min(ctiles, sms / csize) * csize
                                  : ctiles * csize;
    const size_t ws_count = GH_STREAMK ? 2 * (size_t)grid : 1;
    const size_t sk_count = GH_STREAMK ? (size_t)grid * 2 * BM * BN : 1;
    std::vector<float *> Ws(nsets), Sks(nsets);
    for (int s = 0; s < nsets; s++) {
        CK(cudaMalloc(&Ws[s], ws_count * 4));
        CK(cudaMemset(Ws[s], 0, ws_count * 4));
        CK(cudaMalloc(&Sks[s], sk_count * 4));
        CK(cudaMemset(Sks[s], 0xff, sk_count * 4)); /* NaN: read only what was written */
    }
    amk_t *A = As[0], *B = Bs[0], *C = Cs[0], *R;
    CK(cudaMalloc(&R, (size_t)M * N * 2));
    const size_t smem = (size_t)STAGES * GH_STAGE + GH_C_BYTES + 1024 + 16 * STAGES +
                        16 * (GH_PINGPONG || GH_STREAMK);
    CK(cudaFuncSetAttribute(gemm_hopper_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = csize;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(GH_THREADS);
    cfg.dynamicSmemBytes = smem;
    cfg.attrs = attr;
    /* A cluster launch only for a cluster of more than one CTA, as amk launches: the 1x1
     * persistent config launched with a 1-CTA cluster attribute ran 2.5-8.8 % slower at
     * 8192^3 and 8192x14336x4096 on the H100 (2026-11-26). */
    cfg.numAttrs = csize > 1 ? 1 : 0;
    if (csize > 1) {
        int active = 0;
        CK(cudaOccupancyMaxActiveClusters(&active, gemm_hopper_kernel, &cfg));
        printf("max active clusters of %d: %d (grid %d CTAs)\n", csize, active, grid);
    }
    auto launch_set = [&](int s) {
        return cudaLaunchKernelEx(&cfg, gemm_hopper_kernel, tas[s], tbs[s], tcs[s], Cs[s], M, N,
                                  K, Ws[s], Sks[s]);
    };
    auto launch = [&]() { return launch_set(0); };
    CK(launch());
    CK(cudaDeviceSynchronize());
    gemm_hopper_reference<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(A, B, R, M, N, K);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned short> hc((size_t)M * N), hr((size_t)M * N);
    CK(cudaMemcpy(hc.data(), C, hc.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), R, hr.size() * 2, cudaMemcpyDeviceToHost));
    double maxerr = 0, maxref = 0;
    size_t bad = 0, first_bad = (size_t)-1;
    const double tol = 2.0 * sqrt((double)K) * (1.0 / 256) + 1e-2; /* |a|,|b| <= 1 */
    for (size_t i = 0; i < hc.size(); i++) {
        double c = from16(hc[i]), r = from16(hr[i]);
        double e = fabs(c - r);
        if (!(e <= tol + fabs(r) / 128)) { /* + one rounding of C to 16 bits, both sides */
            if (!bad) first_bad = i;
            bad++;
        }
        if (e > maxerr || e != e) maxerr = e;
        maxref = std::max(maxref, fabs(r));
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto time_it = [&](auto fn) {
        std::vector<float> t;
        for (int i = 0; i < 3; i++) fn();
        for (int i = 0; i < 25; i++) {
            CK(cudaEventRecord(e0));
            fn();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms * 1000.0f);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    cublasHandle_t h;
    cublasCreate(&h);
    const float alpha = 1.0f, beta = 0.0f;
    auto blas_set = [&](int s) {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, Bs[s], CB_DT, N, As[s], CB_DT,
                     K, &beta, Cs[s], CB_DT, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    auto blas = [&]() {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CB_DT, N, A, CB_DT, K, &beta,
                     R, CB_DT, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    float us, cb;
    const char *regime = argc > 4 ? argv[4] : "plain";
    if (strcmp(regime, "plain") == 0) {
        us = time_it([&]() { CK(launch()); });
        cb = time_it(blas);
    } else {
        /* Interleaved, identical timing for both: chunks of pairs behind a gate, each launch
         * between its own two events, the set rotating from launch to launch. On a stream
         * of its own (the legacy stream syncs with every allocation, and a gated stream
         * never would), and both run once first so that nothing in a gated chunk allocates
         * (cuBLAS's workspace). */
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cublasSetStream(h, st);
        cfg.stream = st;
        for (int s = 0; s < nsets; s++) {
            CK(launch_set(s));
            blas_set(s);
        }
        CK(cudaStreamSynchronize(st));
        std::vector<float> tk, tb;
        std::vector<cudaEvent_t> ev(64);
        for (auto &e : ev)
            CK(cudaEventCreate(&e));
        long launches = 0;
        auto chunk = [&](int pairs, int nchunk, bool timed) {
            std::atomic<int> open(0);
            CK(cudaLaunchHostFunc(st, gate_wait, &open));
            for (int r = 0; r < pairs; r++)
                for (int j = 0; j < 2; j++) {
                    int which = ((nchunk + r) & 1) ? 1 - j : j; /* who goes first flips */
                    int set = (int)(launches++ % nsets);
                    CK(cudaEventRecord(ev[2 * (2 * r + which)], st));
                    if (which == 0) CK(launch_set(set)); else blas_set(set);
                    CK(cudaEventRecord(ev[2 * (2 * r + which) + 1], st));
                }
            open.store(1);
            CK(cudaStreamSynchronize(st));
            for (int r = 0; timed && r < pairs; r++)
                for (int which = 0; which < 2; which++) {
                    float ms;
                    CK(cudaEventElapsedTime(&ms, ev[2 * (2 * r + which)],
                                            ev[2 * (2 * r + which) + 1]));
                    (which == 0 ? tk : tb).push_back(ms * 1000.0f);
                }
        };
        if (strcmp(regime, "sustained") == 0) {
            auto t0 = std::chrono::steady_clock::now();
            int n = 0;
            while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2))
                chunk(16, n++, false);
            for (int c = 0; c < 12; c++)
                chunk(16, n++, true);
        } else {
            for (int r = 0; r < 12; r++) {
                CK(cudaStreamSynchronize(st));
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                chunk(8, r, true); /* who follows the gap alternates by round */
            }
        }
        std::sort(tk.begin(), tk.end());
        std::sort(tb.begin(), tb.end());
        us = tk[tk.size() / 2];
        cb = tb[tb.size() / 2];
        printf("%s: ", regime);
    }
    CK(cudaDeviceSynchronize());
    /* Every launch of every set must have left its workspace zero (PERSISTENT 3). */
    size_t ws_left = 0;
    for (int s = 0; GH_STREAMK && s < nsets; s++) {
        std::vector<float> hw(ws_count);
        CK(cudaMemcpy(hw.data(), Ws[s], ws_count * 4, cudaMemcpyDeviceToHost));
        for (float x : hw) ws_left += x != 0.0f;
    }
    bad += ws_left;
    const double fl = 2.0 * M * N * K;
    printf("%s M=%d N=%d K=%d grid=%d smem=%zu: %.1f us %.1f TFLOP/s | cuBLAS %.1f us %.1f "
           "TFLOP/s | ratio %.3f | maxerr %.3g (tol %.3g, max|ref| %.3g) bad %zu",
           bad ? "WRONG" : "ok", M, N, K, grid, smem, us, fl / us / 1e6, cb, fl / cb / 1e6,
           cb / us, maxerr, tol, maxref, bad);
    if (ws_left)
        printf(" (%zu workspace values left non-zero)", ws_left);
    if (bad)
        printf(" first at (%zu, %zu): %g vs %g", first_bad / N, first_bad % N,
               from16(hc[first_bad]), from16(hr[first_bad]));
    printf("\n");
    return bad ? 3 : 0;
}
