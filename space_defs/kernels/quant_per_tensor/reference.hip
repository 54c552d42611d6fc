/* quant_per_tensor reference: ONE block of 1024 threads does everything: a strided absmax
 * reduced through shared memory (a plain tree, no shuffles, no atomics), the scale in f32,
 * then the element-by-element quantisation. Shares nothing with quant_per_tensor.hip (no
 * vectors, no grid barrier, no workspace). The quantisation is defined in f32:
 * scale = max(absmax / qmax, 1e-12), q = saturate(round_half_even(x / scale)), so this
 * computes exactly those f32 operations (the candidate must match it bit for bit on int8;
 * fp8 gets its dtype's tolerance). Needs -DAMK_T_FP8E4M3 or -DAMK_T_INT8. */

AMK_KERNEL void quant_per_tensor_reference(const amk_bf16 *x, amk_t *q, float *scale,
                                           int total)
{
    __shared__ float red[1024];
    float a = 0.0f;
    for (int i = threadIdx.x; i < total; i += blockDim.x) {
        const float v = fabsf(amk_to_float(x[i]));
        a = v > a ? v : a;
    }
    red[threadIdx.x] = a;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s && red[threadIdx.x + s] > red[threadIdx.x])
            red[threadIdx.x] = red[threadIdx.x + s];
        __syncthreads();
    }
#if defined(AMK_T_FP8E4M3)
    const float qmax = 448.0f;
#else
    const float qmax = 127.0f;
#endif
    float sc = red[0] / qmax;
    sc = sc < 1e-12f ? 1e-12f : sc;
    if (threadIdx.x == 0)
        scale[0] = sc;
    for (int i = threadIdx.x; i < total; i += blockDim.x) {
        const float v = amk_to_float(x[i]) / sc;
#if defined(AMK_T_FP8E4M3)
        q[i] = amk_fp8e4m3_from_float(v);
#else
        float r = rintf(v);
        r = r > 127.0f ? 127.0f : (r < -128.0f ? -128.0f : r);
        q[i] = (signed char)r;
#endif
    }
}
