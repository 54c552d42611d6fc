/* gemm_hopper reference: one thread per output element, A and B (f16 or bf16 bit containers)
 * converted exactly to float by the prelude, products and sum in double, C rounded once to the
 * input dtype. Shares nothing with gemm_hopper.hip (no tiling, no TMA, no matrix
 * instructions, no knobs) so a bug in the template cannot hide in both. */

#if !defined(AMK_T_F16) && !defined(AMK_T_BF16)
#error "gemm_hopper reference needs -DAMK_T_F16=1 or -DAMK_T_BF16=1"
#endif

AMK_KERNEL void gemm_hopper_reference(const amk_t *A, const amk_t *B, amk_t *C, int M, int N,
                                      int K)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N)
        return;
    const amk_t *a = A + (size_t)m * K;
    double s = 0.0;
    for (int k = 0; k < K; ++k)
        s += (double)amk_to_float(a[k]) * (double)amk_to_float(B[(size_t)k * N + n]);
    C[(size_t)m * N + n] = amk_from_float<amk_t>((float)s);
}
