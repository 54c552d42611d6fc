// Times the phases of quant_per_tensor inside the kernel (bench/quant_phases.sh builds and
// runs this): the kernel file is included with QT_MARK defined, so each block's thread 0
// writes %globaltimer at the start, after its phase-1 reduction (arrival at the grid
// barrier), after the barrier and at the end. Reported per shape, medians over the reps:
//   event     launch to completion (CUDA events around one launch, as amk's benchmark)
//   in-kernel first start .. last end;  phase 1 first start .. last arrival (and the spread
//   of the arrivals);  barrier last arrival .. last release;  phase 2 first release .. last end
// Before every launch a 256 MiB memset evicts the L2 (its dirty lines are written back
// during the launch, as the previous launch's output is in amk's benchmark).
// The launch follows the spec's derived values (blocks, skeep, smem_bytes) on this device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "prelude.h"

__device__ unsigned long long *qp_marks;
__device__ __forceinline__ void qp_mark(int k)
{
    if (k == 3)
        __syncthreads(); // the block's end: every thread is done
    if (threadIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        qp_marks[blockIdx.x * 4 + k] = t;
    }
}
#define QT_MARK(k) qp_mark(k)
#include QP_KERNEL

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "quant_phases: %s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

// Finite bf16 over a few binades, both signs (a hash of the index: no host transfer).
__global__ void qp_fill(unsigned short *x, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        x[i] = (unsigned short)((((h >> 20) & 1) << 15) | ((120 + h % 11) << 7) | ((h >> 8) & 0x7f));
    }
}
static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: quant_phases M N\n");
        return 1;
    }
    const long M = atol(argv[1]), N = atol(argv[2]), total = M * N;
    const int reps = 40, warm = 3;
    if (M < 1 || N < 1 || total > 2147483647L || total % 8) {
        fprintf(stderr, "quant_phases: M*N must be a multiple of 8 in [8, 2^31)\n");
        return 1;
    }
    int sms, optin, per_sm;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    // The spec's derived values.
    const long blocks = std::min((total + THREADS * VEC - 1) / (THREADS * VEC), (long)sms * BPS);
    const long fill = SMEM ? (std::min(optin, per_sm / BPS - 1024) - 256) / (THREADS * VEC * 2) : 0;
    const long walk = (total / VEC + blocks * THREADS - 1) / (blocks * THREADS);
    const int skeep = (int)std::min(fill, std::max(0L, walk - KEEP));
    const int smem = 256 + skeep * THREADS * VEC * 2;

    unsigned short *x;
    unsigned char *q, *flush;
    float *scale, *ws;
    unsigned long long *marks;
    const size_t flush_bytes = 256ull << 20;
    CK(cudaMalloc(&x, total * 2));
    CK(cudaMalloc(&q, total));
    CK(cudaMalloc(&scale, 4));
    CK(cudaMalloc(&ws, 8));
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMalloc(&marks, blocks * 4 * sizeof *marks));
    CK(cudaMemset(ws, 0, 8));
    CK(cudaMemcpyToSymbol(qp_marks, &marks, sizeof marks));
    CK(cudaFuncSetAttribute(quant_per_tensor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    qp_fill<<<1024, 256>>>(x, total);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    std::vector<double> ev, all, p1, skew, bar, p2;
    std::vector<unsigned long long> h(blocks * 4);
    auto timed = [&](auto launch) { // microseconds of one launch after an L2 eviction
        CK(cudaMemsetAsync(flush, 0, flush_bytes));
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1e3;
    };
    for (int r = 0; r < warm + reps; r++) {
        const double us = timed([&] {
            quant_per_tensor_kernel<<<blocks, THREADS, smem>>>((const amk_bf16 *)x, (amk_t *)q, scale, ws,
                                                              (int)total, skeep);
        });
        CK(cudaMemcpy(h.data(), marks, h.size() * sizeof h[0], cudaMemcpyDeviceToHost));
        unsigned long long start = ~0ull, arrive_first = ~0ull, arrive_last = 0, go_first = ~0ull,
                           go_last = 0, end = 0;
        for (long b = 0; b < blocks; b++) {
            start = std::min(start, h[b * 4]);
            arrive_first = std::min(arrive_first, h[b * 4 + 1]);
            arrive_last = std::max(arrive_last, h[b * 4 + 1]);
            go_first = std::min(go_first, h[b * 4 + 2]);
            go_last = std::max(go_last, h[b * 4 + 2]);
            end = std::max(end, h[b * 4 + 3]);
        }
        if (r < warm)
            continue;
        ev.push_back(us);
        all.push_back((end - start) / 1e3);
        p1.push_back((arrive_last - start) / 1e3);
        skew.push_back((arrive_last - arrive_first) / 1e3);
        bar.push_back((go_last - arrive_last) / 1e3);
        p2.push_back((end - go_first) / 1e3);
    }
    unsigned ws_after[2];
    CK(cudaMemcpy(ws_after, ws, 8, cudaMemcpyDeviceToHost));
    const double mib = 1048576.0;
    printf("M=%ld N=%ld THREADS=%d VEC=%d BPS=%d KEEP=%d SMEM=%d LOADS=%d: %ld blocks, skeep %d, %d B shared\n",
           M, N, THREADS, VEC, BPS, KEEP, SMEM, LOADS, blocks, skeep, smem);
    printf("  event %.2f us (%.2f TB/s of min_bytes %.0f MiB)\n", median(ev), total * 3 / median(ev) / 1e6,
           total * 3 / mib);
    printf("  in-kernel %.2f us = phase 1 %.2f (arrivals spread over %.2f) + barrier %.2f + phase 2 %.2f\n",
           median(all), median(p1), median(skew), median(bar), median(p2));
    if (ws_after[0] || ws_after[1]) {
        fprintf(stderr, "quant_phases: the workspace did not come back zero\n");
        return 1;
    }
    return 0;
}
