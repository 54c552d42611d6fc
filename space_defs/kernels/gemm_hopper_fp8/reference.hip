/* gemm_hopper_fp8 reference: one thread per output element, A (M x K) and B (N x K) e4m3
 * converted exactly to float by the prelude, products and sum in double, scaled by SA * SB,
 * C rounded once to bf16. Shares nothing with gemm_hopper.hip (no tiling, no TMA, no matrix
 * instructions, no knobs). */

#if !defined(AMK_T_FP8E4M3)
#error "gemm_hopper_fp8 reference needs -DAMK_T_FP8E4M3=1"
#endif

AMK_KERNEL void gemm_hopper_fp8_reference(const amk_t *A, const amk_t *B, amk_bf16 *C, int M,
                                          int N, int K, const float *SA, const float *SB)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N)
        return;
    const amk_t *a = A + (size_t)m * K, *b = B + (size_t)n * K;
    double s = 0.0;
    for (int k = 0; k < K; ++k)
        s += (double)amk_to_float(a[k]) * (double)amk_to_float(b[k]);
    C[(size_t)m * N + n] = amk_from_float<amk_bf16>((float)(s * (double)SA[0] * (double)SB[0]));
}
