/* copy reference: one element per thread, no vectors. */
AMK_KERNEL void copy_reference(const float *x, float *y, int N)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        y[i] = x[i];
}
