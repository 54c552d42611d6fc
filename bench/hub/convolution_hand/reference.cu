/* Independent reference of convolution_hand: one thread per output pixel, the filter read
 * from its pointer argument (global memory, not the kernel's __constant__ copy), the input
 * padded by fw - 1 columns and fh - 1 rows, f32 products accumulated in f64. */
AMK_KERNEL void convolution_reference(float *out, const float *in, const float *filter, int w,
                                      int h, int fw, int fh)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    int in_w = w + fw - 1;
    double sum = 0.0;
    for (int i = 0; i < fh; i++)
        for (int j = 0; j < fw; j++)
            sum += (double)(in[(y + i) * in_w + x + j] * filter[i * fw + j]);
    out[y * w + x] = (float)sum;
}
