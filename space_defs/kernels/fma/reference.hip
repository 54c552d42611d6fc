/* fma reference: one element per thread, the same chain in the same order (fmaf is
 * correctly rounded, so the result is bit-identical to any correct candidate). */
AMK_KERNEL void fma_reference(const float *x, float *y, int N, int ITERS)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N)
        return;
    float v = x[i];
    for (int k = 0; k < ITERS; ++k)
        v = fmaf(v, 0.9999f, 0.0001f);
    y[i] = v;
}
