/* gemv reference: one thread per output row, dot product in double, plain element-by-
 * element global reads. Shares nothing with gemv.hip (no vectors, no shuffles, no knobs). */

AMK_KERNEL void gemv_reference(const amk_bf16 *W, const amk_bf16 *x, float *y, int N, int K)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N)
        return;
    const amk_bf16 *wr = W + (size_t)n * K;
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
        acc += (double)amk_to_float(wr[k]) * (double)amk_to_float(x[k]);
    y[n] = (float)acc;
}
