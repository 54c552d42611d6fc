/* softmax reference: one thread per row, max, sum and quotient in double, plain
 * element-by-element global reads. Shares nothing with softmax.hip (no vectors, no
 * shuffles, no online rescaling, no knobs). Needs the dtype define (-DAMK_T_F32/F16/BF16). */

AMK_KERNEL void softmax_reference(const amk_t *x, amk_t *y, int M, int N)
{
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M)
        return;
    const amk_t *xr = x + (size_t)m * N;
    amk_t *yr = y + (size_t)m * N;
    double mx = (double)amk_to_float(xr[0]);
    for (int n = 1; n < N; ++n) {
        const double v = (double)amk_to_float(xr[n]);
        mx = v > mx ? v : mx;
    }
    double sum = 0.0;
    for (int n = 0; n < N; ++n)
        sum += exp((double)amk_to_float(xr[n]) - mx);
    for (int n = 0; n < N; ++n)
        yr[n] = amk_from_float<amk_t>((float)(exp((double)amk_to_float(xr[n]) - mx) / sum));
}
