/* Device copy for bandwidth calibration. Each block moves THREADS*VEC*UNROLL consecutive
 * floats; a thread issues UNROLL independent VEC-wide loads before storing, so enough bytes
 * are in flight to saturate HBM. The tail of a ragged N is copied element by element. */
#if VEC == 4
typedef float4 vec_t;
#elif VEC == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

AMK_KERNEL void copy_kernel(const float *__restrict__ x, float *__restrict__ y, int N)
{
    const long long block0 = (long long)blockIdx.x * (THREADS * VEC * UNROLL);
    const long long full = (long long)N / VEC; /* whole vectors in the array */
    const vec_t *xv = (const vec_t *)x;
    vec_t *yv = (vec_t *)y;
    vec_t r[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = block0 / VEC + (long long)u * THREADS + threadIdx.x;
        if (v < full)
            r[u] = xv[v];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long v = block0 / VEC + (long long)u * THREADS + threadIdx.x;
        if (v < full)
            yv[v] = r[u];
    }
    /* Tail: the last N % VEC elements, done by the block that owns them. */
    const long long tail = full * VEC;
    if (tail < N && tail >= block0 && tail < block0 + THREADS * VEC * UNROLL) {
        const long long i = tail + threadIdx.x;
        if (i < N)
            y[i] = x[i];
    }
}
