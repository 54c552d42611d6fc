/* FMA throughput for calibration. Element i is owned by thread i / ILP; a thread keeps ILP
 * independent chains v = fmaf(v, a, b) so the FMA pipes stay full. ITERS is a run-time
 * argument, so the compiler cannot fold the chain. */
AMK_KERNEL void fma_kernel(const float *__restrict__ x, float *__restrict__ y, int N, int ITERS)
{
    const long long base = ((long long)blockIdx.x * THREADS + threadIdx.x) * ILP;
    float v[ILP];
#pragma unroll
    for (int j = 0; j < ILP; ++j)
        v[j] = base + j < N ? x[base + j] : 0.0f;
    for (int k = 0; k < ITERS; ++k) {
#pragma unroll
        for (int j = 0; j < ILP; ++j)
            v[j] = fmaf(v[j], 0.9999f, 0.0001f);
    }
#pragma unroll
    for (int j = 0; j < ILP; ++j)
        if (base + j < N)
            y[base + j] = v[j];
}
