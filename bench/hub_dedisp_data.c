/* Data for benchmark_hub's dedispersion_milo kernel (bench/hub_kernels.sh): its T1 file
 * gives every input a Size of 1, so the kernel cannot run on T1 data alone; the hub's own
 * script loads .npy inputs and an expected answer instead. This writes the same kind of
 * files, sized by the kernel's dedispersion.h (2048 DMs, 25000 samples, 1536 channels, 650
 * samples of maximum shift):
 *   input.npy   uint8  [channels][samples + max_shift]   random bytes
 *   shifts.npy  float32 [channels]   delay per unit DM, by the cold-plasma dispersion law
 *   answer.npy  float32 [dms][samples]   the dedispersed sums, computed here on the CPU
 * The shift of a channel is computed as the kernel does, in float: (0.0f + dm * 0.02f) *
 * shifts[c], truncated to unsigned; the sums of bytes are exact in float (< 2^24).
 * Build: cc -O2 -fopenmp -ffp-contract=off hub_dedisp_data.c -o hub_dedisp_data
 * Run:   ./hub_dedisp_data OUT_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DMS = 2048, SAMPLES = 25000, CHANNELS = 1536, MAX_SHIFT = 650 };
#define PER_CHANNEL (SAMPLES + MAX_SHIFT)

static int save_npy(const char *dir, const char *name, const char *descr, const char *shape,
                    const void *data, size_t bytes)
{
    char path[4096], hdr[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
    while ((10 + n + 1) % 64)
        hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                             (unsigned char)(n >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)n, f) == (size_t)n &&
             fwrite(data, 1, bytes, f) == bytes;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        perror(path);
    return !ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    unsigned char *in = malloc((size_t)CHANNELS * PER_CHANNEL);
    float *shifts = malloc(CHANNELS * sizeof *shifts);
    float *out = malloc((size_t)DMS * SAMPLES * sizeof *out);
    if (!in || !shifts || !out)
        return 1;
    uint64_t x = 0x9e3779b97f4a7c15u; /* xorshift64: reproducible bytes */
    for (size_t i = 0; i < (size_t)CHANNELS * PER_CHANNEL; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (unsigned char)(x >> 56);
    }
    /* delay (in samples per unit DM) of channel c against the highest frequency */
    const double bw = 0.1953125, tsamp = 0.00004096, fmin = 1425.0;
    const double fmax = fmin + (CHANNELS - 1) * bw, time_unit = SAMPLES * tsamp;
    for (int c = 0; c < CHANNELS; c++) {
        double f = fmin + c * bw;
        shifts[c] = (float)(4148.808 * (1.0 / (f * f) - 1.0 / (fmax * fmax)) * SAMPLES / time_unit);
    }
    shifts[CHANNELS - 1] = 0.0f;
    if ((unsigned)((0.0f + (DMS - 1) * 0.02f) * shifts[0]) >= MAX_SHIFT) {
        fprintf(stderr, "the largest shift exceeds %d samples\n", MAX_SHIFT);
        return 1;
    }
#pragma omp parallel for schedule(dynamic, 8)
    for (int dm = 0; dm < DMS; dm++) {
        float *row = out + (size_t)dm * SAMPLES;
        memset(row, 0, SAMPLES * sizeof *row);
        for (int c = 0; c < CHANNELS; c++) {
            unsigned shift = (unsigned)((0.0f + (float)dm * 0.02f) * shifts[c]);
            const unsigned char *src = in + (size_t)c * PER_CHANNEL + shift;
            for (int s = 0; s < SAMPLES; s++)
                row[s] += (float)src[s];
        }
    }
    char shape[64];
    int rc = 0;
    snprintf(shape, sizeof shape, "(%d,)", CHANNELS * PER_CHANNEL);
    rc |= save_npy(argv[1], "input.npy", "|u1", shape, in, (size_t)CHANNELS * PER_CHANNEL);
    snprintf(shape, sizeof shape, "(%d,)", CHANNELS);
    rc |= save_npy(argv[1], "shifts.npy", "<f4", shape, shifts, CHANNELS * sizeof *shifts);
    snprintf(shape, sizeof shape, "(%d,)", DMS * SAMPLES);
    rc |= save_npy(argv[1], "answer.npy", "<f4", shape, out, (size_t)DMS * SAMPLES * sizeof *out);
    free(in);
    free(shifts);
    free(out);
    return rc;
}
