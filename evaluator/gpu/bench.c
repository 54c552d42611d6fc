/* The benchmark (run worker side): device events around each kernel launch only, an untimed
 * warm-up, repetitions until a minimum measured window, cold L2 by rotating input sets (or an
 * explicit flush outside the timed region), and median / IQR statistics. The stream is held
 * by a host-function gate while a chunk of launches is queued, so the host never races the
 * GPU and no launch gap lands between a start event and its kernel. */
#include "gpu_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 64     /* timed launches queued behind one gate, per kernel */
#define WARMUP_MAX 200

/* ---------- options and statistics (host only) ----------------------------------------- */

static double env_double(const char *name, double dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    return (end != s && *end == '\0' && isfinite(v) && v >= 0) ? v : dflt;
}

void amk__bench_opts_default(amk__bench_opts *o)
{
    o->cold = 1;
    o->reps_min = 20;
    o->reps_max = 2000;
    o->window_s = 0.100;
    o->max_s = 1.0;
    o->warmup_s = 0.020;
    o->mem_cap = (int64_t)4 << 30;
    o->window_s = env_double("AMK_BENCH_WINDOW_MS", o->window_s * 1e3) / 1e3;
    o->reps_min = (int)env_double("AMK_BENCH_MIN_REPS", o->reps_min);
    if (o->reps_min < 3)
        o->reps_min = 3;
    if (o->reps_max < o->reps_min)
        o->reps_max = o->reps_min;
    const char *warm = getenv("AMK_BENCH_WARM");
    if (warm && strcmp(warm, "1") == 0)
        o->cold = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double f = pos - lo;
    return sorted[lo] * (1 - f) + sorted[hi] * f;
}

void amk__bench_summarize(double *s, int n, amk__bench_stats *out)
{
    out->median_us = out->q1_us = out->q3_us = NAN;
    out->min_us = out->max_us = out->mean_us = out->spread = NAN;
    out->reps = n;
    if (n <= 0)
        return;
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    out->median_us = quantile(s, n, 0.5);
    out->q1_us = quantile(s, n, 0.25);
    out->q3_us = quantile(s, n, 0.75);
    out->min_us = s[0];
    out->max_us = s[n - 1];
    out->mean_us = sum / n;
    out->spread = out->median_us > 0 ? (out->q3_us - out->q1_us) / out->median_us : NAN;
}

int amk__bench_sets(int64_t footprint, int64_t l2_bytes, int64_t mem_cap, int *flush)
{
    *flush = 0;
    if (footprint <= 0)
        return 1;
    if (l2_bytes <= 0)
        l2_bytes = 64 << 20; /* unknown L2: assume a large one */
    int64_t want = 1 + (2 * l2_bytes + footprint - 1) / footprint;
    if (want > 64)
        want = 64;
    int64_t fit = mem_cap > 0 ? mem_cap / footprint : want;
    if (fit < 1)
        fit = 1;
    int64_t n = want < fit ? want : fit;
    if ((n - 1) * footprint < 2 * l2_bytes)
        *flush = 1;
    return (int)n;
}

/* ---------- the timed loops (run worker only) ------------------------------------------ */

typedef struct gate {
    atomic_int open;
} gate;

/* Host function queued at the head of a chunk: holds the stream until the host has queued
 * every launch of the chunk (5 s at most, so a full launch queue cannot deadlock). */
static void gate_wait(void *p)
{
    gate *g = p;
    struct timespec ts = {0, 20000};
    for (int i = 0; i < 250000 && !atomic_load(&g->open); i++)
        nanosleep(&ts, NULL);
}

#define TRY(call)                                                                          \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            snprintf(msg, cap, "%s: %s (%s)", #call, hipGetErrorString(e_),                \
                     hipGetErrorName(e_));                                                 \
            err = e_;                                                                      \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)

static hipError_t launch(const amk__bench_kernel *k, int set, hipStream_t s)
{
    const amk_launch *l = &k->launch;
    return hipModuleLaunchKernel(k->fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                                 (unsigned)l->grid[2], (unsigned)l->block[0],
                                 (unsigned)l->block[1], (unsigned)l->block[2],
                                 (unsigned)l->shared_bytes, s, k->argv[set], NULL);
}

hipError_t amk__bench_run(hipStream_t s, const amk__bench_kernel *k, int nk, int nsets,
                          void *flush_buf, size_t flush_bytes, const amk__bench_opts *o,
                          amk__bench_stats *stats, char *msg, size_t cap)
{
    hipError_t err = hipSuccess;
    hipEvent_t ev[2 * CHUNK * 2];
    int nev = 0;
    double *samples[2] = {NULL, NULL};
    double est_ms[2] = {0, 0};
    long counter = 0; /* launches so far: picks the set, so consecutive launches differ */
    msg[0] = '\0';
    if (nk < 1 || nk > 2 || nsets < 1 || nsets > 64) {
        snprintf(msg, cap, "bench: bad arguments (%d kernels, %d sets)", nk, nsets);
        return hipErrorInvalidValue;
    }
    for (nev = 0; nev < 2 * CHUNK * nk; nev++)
        TRY(hipEventCreate(&ev[nev]));

    /* Warm-up: module load, clocks, caches of the code; estimates the time per launch. */
    for (int i = 0; i < nk; i++) {
        double w[WARMUP_MAX], total = 0;
        int n = 0;
        while (n < WARMUP_MAX && (n < 2 || total < o->warmup_s * 1e3)) {
            int set = (int)(counter++ % nsets);
            if (flush_buf)
                TRY(hipMemsetAsync(flush_buf, n & 1, flush_bytes, s));
            TRY(hipEventRecord(ev[0], s));
            TRY(launch(&k[i], set, s));
            TRY(hipEventRecord(ev[1], s));
            TRY(hipEventSynchronize(ev[1]));
            float ms = 0;
            TRY(hipEventElapsedTime(&ms, ev[0], ev[1]));
            w[n++] = ms;
            total += ms;
        }
        qsort(w, (size_t)n, sizeof *w, cmp_double);
        est_ms[i] = w[n / 2] > 1e-4 ? w[n / 2] : 1e-4;
    }

    double slow = est_ms[0] > est_ms[1] ? est_ms[0] : est_ms[1];
    double want = ceil(o->window_s * 1e3 / slow);
    if (want < o->reps_min)
        want = o->reps_min;
    if (want > o->reps_max)
        want = o->reps_max;
    if (want * slow > o->max_s * 1e3)
        want = floor(o->max_s * 1e3 / slow);
    if (want < 3)
        want = 3;
    int reps = (int)want;
    for (int i = 0; i < nk; i++) {
        samples[i] = malloc((size_t)reps * sizeof(double));
        if (!samples[i]) {
            snprintf(msg, cap, "bench: out of host memory");
            err = hipErrorInvalidValue;
            goto done;
        }
    }

    for (int done_reps = 0; done_reps < reps;) {
        int chunk = reps - done_reps < CHUNK ? reps - done_reps : CHUNK;
        gate g;
        atomic_init(&g.open, 0);
        amk__host_call call = {gate_wait, &g};
        int gated = amk__gpu_host_func(s, &call) == hipSuccess;
        if (!gated)
            (void)hipGetLastError(); /* no host functions here: time without the gate */
        hipError_t qe = hipSuccess;
        for (int r = 0; r < chunk && qe == hipSuccess; r++)
            for (int i = 0; i < nk && qe == hipSuccess; i++) {
                int set = (int)(counter++ % nsets);
                hipEvent_t *pair = &ev[2 * (r * nk + i)];
                if (flush_buf)
                    qe = hipMemsetAsync(flush_buf, r & 1, flush_bytes, s);
                if (qe == hipSuccess)
                    qe = hipEventRecord(pair[0], s);
                if (qe == hipSuccess)
                    qe = launch(&k[i], set, s);
                if (qe == hipSuccess)
                    qe = hipEventRecord(pair[1], s);
            }
        if (qe != hipSuccess) {
            /* Release the stream before reporting, so nothing waits on the gate. */
            atomic_store(&g.open, 1);
            snprintf(msg, cap, "queueing timed launches: %s (%s)", hipGetErrorString(qe),
                     hipGetErrorName(qe));
            err = qe;
            (void)hipStreamSynchronize(s);
            goto done;
        }
        atomic_store(&g.open, 1);
        TRY(hipStreamSynchronize(s));
        for (int r = 0; r < chunk; r++)
            for (int i = 0; i < nk; i++) {
                float ms = 0;
                TRY(hipEventElapsedTime(&ms, ev[2 * (r * nk + i)], ev[2 * (r * nk + i) + 1]));
                samples[i][done_reps + r] = ms * 1e3;
            }
        done_reps += chunk;
    }
    for (int i = 0; i < nk; i++) {
        amk__bench_summarize(samples[i], reps, &stats[i]);
        stats[i].sets = nsets;
        stats[i].flushed = flush_buf != NULL;
    }

done:
    for (int i = 0; i < nev; i++)
        (void)hipEventDestroy(ev[i]);
    free(samples[0]);
    free(samples[1]);
    return err;
}
