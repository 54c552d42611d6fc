/* What cuBLAS would run for gemm_hopper's problem, to know which schedule amk's kernel is up
 * against: cuBLASLt's heuristic candidates for C = A B (row-major bf16, f32 accumulation, the
 * call gemm_hopper's peer makes through cublasGemmEx), each with its config attributes (tile,
 * stages, cluster shape, split-K, swizzle: cuBLASLt's enum values, decoded against
 * cublasLt.h by bench/cublas_algos.py) and a plain back-to-back time, and cublasGemmEx timed
 * the same way beside them. A diagnostic, not a comparison: amk's ratios come from
 * bench/regimes.sh.
 *
 * build (no GPU needed): nvcc -O2 -std=c++17 bench/cublas_algos.cu -lcublasLt -lcublas -o cublas_algos
 * run:   ./cublas_algos M N K [candidates] > algos.txt; python3 bench/cublas_algos.py algos.txt */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                      \
    do {                                                                           \
        int e_ = (int)(x);                                                         \
        if (e_) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, e_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* Mean microseconds of one call over 50 back-to-back calls after 10 warm-ups. */
template <typename F> static float time_us(F call)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; i++)
        call();
    CK(cudaEventRecord(a));
    for (int i = 0; i < 50; i++)
        call();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1000.0f / 50;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s M N K [candidates]\n", argv[0]);
        return 2;
    }
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
    const int want = argc > 4 ? atoi(argv[4]) : 8;
    const size_t ws_bytes = 32u << 20;
    __nv_bfloat16 *A, *B, *C;
    void *ws;
    CK(cudaMalloc(&A, (size_t)M * K * 2));
    CK(cudaMalloc(&B, (size_t)K * N * 2));
    CK(cudaMalloc(&C, (size_t)M * N * 2));
    CK(cudaMalloc(&ws, ws_bytes));
    CK(cudaMemset(A, 0x3c, (size_t)M * K * 2));
    CK(cudaMemset(B, 0x3c, (size_t)K * N * 2));
    const float alpha = 1.0f, beta = 0.0f;

    /* Row-major C = A B is column-major C^T = B^T A^T: m = N, n = M, B's data first. */
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, N, K, N));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[32];
    int n = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, want > 32 ? 32 : want, res,
                                      &n));
    const double fl = 2.0 * M * N * K;
    printf("shape M=%d N=%d K=%d bf16, %d heuristic candidates\n", M, N, K, n);
    static const struct {
        cublasLtMatmulAlgoConfigAttributes_t attr;
        const char *name;
    } attrs[] = {{CUBLASLT_ALGO_CONFIG_ID, "algo"},
                 {CUBLASLT_ALGO_CONFIG_TILE_ID, "tile"},
                 {CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages"},
                 {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster"},
                 {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "inner"},
                 {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "splitk"},
                 {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "reduction"},
                 {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "swizzle"},
                 {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "custom"}};
    for (int i = 0; i < n; i++) {
        printf("candidate %d:", i);
        for (size_t a = 0; a < sizeof attrs / sizeof attrs[0]; a++) {
            /* the buffer's size must be the attribute's own (asked first): integers of 2-8 bytes */
            size_t size = 0;
            unsigned long long v = 0;
            if (cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, attrs[a].attr, NULL, 0,
                                                     &size) != CUBLAS_STATUS_SUCCESS ||
                size > sizeof v ||
                cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, attrs[a].attr, &v, size,
                                                     &size) != CUBLAS_STATUS_SUCCESS)
                printf(" %s=?", attrs[a].name);
            else
                printf(" %s=%llu", attrs[a].name, v); /* little-endian: v holds the value */
        }
        float us = time_us([&] {
            CK(cublasLtMatmul(lt, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &res[i].algo,
                              ws, ws_bytes, 0));
        });
        printf(" ws=%zu time_us=%.1f tflops=%.1f\n", res[i].workspaceSize, us, fl / us / 1e6);
    }
    cublasHandle_t h;
    CK(cublasCreate(&h));
    float us = time_us([&] {
        CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, N, A,
                        CUDA_R_16BF, K, &beta, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
    });
    printf("cublasGemmEx time_us=%.1f tflops=%.1f\n", us, fl / us / 1e6);
    return 0;
}
