/* rmsnorm reference: one thread per row, sum of squares and the scaling done in double,
 * plain element-by-element global reads. Shares nothing with rmsnorm.hip (no vectors,
 * no shuffles, no knobs). Needs the dtype define (-DAMK_T_F32/-DAMK_T_F16/-DAMK_T_BF16). */

AMK_KERNEL void rmsnorm_reference(const amk_t *x, const amk_t *w, amk_t *y, int M, int N)
{
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M)
        return;
    const amk_t *xr = x + (size_t)m * N;
    amk_t *yr = y + (size_t)m * N;
    double ss = 0.0;
    for (int n = 0; n < N; ++n) {
        const double v = (double)amk_to_float(xr[n]);
        ss += v * v;
    }
    const double inv = 1.0 / sqrt(ss / (double)N + 1e-6);
    for (int n = 0; n < N; ++n)
        yr[n] = amk_from_float<amk_t>(
            (float)((double)amk_to_float(xr[n]) * inv * (double)amk_to_float(w[n])));
}
