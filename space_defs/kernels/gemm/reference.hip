/* gemm reference: one thread per output element, the dot product accumulated in double,
 * read straight from global memory. Deliberately shares nothing with gemm.hip (no tiling,
 * no shared memory, no knobs) so a bug in the template cannot hide in both. */

AMK_KERNEL void gemm_reference(const float *A, const float *B, float *C, int M, int N, int K)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N)
        return;
    const float *a = A + (size_t)m * K;
    double s = 0.0;
    for (int k = 0; k < K; ++k)
        s += (double)a[k] * (double)B[(size_t)k * N + n];
    C[(size_t)m * N + n] = (float)s;
}
