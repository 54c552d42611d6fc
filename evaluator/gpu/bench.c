/* The benchmark's timed loops (run worker side): device events around each kernel launch
 * only, a short untimed warm-up, then chunks of timed launches until the median is pinned
 * (adaptive stop) or the window is spent, cold L2 by rotating input sets (or an explicit
 * flush outside the timed region). The stream is held by a host-function gate while a chunk
 * of launches is queued, so the host never races the GPU and no launch gap lands between a
 * start event and its kernel. Options, statistics and the stopping rule (host only):
 * ../numeric/bench_stats.c. */
#include "gpu_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP_MAX 200

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
    return amk__gpu_launch(k->fn, &k->launch, s, k->argv[set]);
}

hipError_t amk__bench_run(hipStream_t s, const amk__bench_kernel *k, int nk, int nsets,
                          void *flush_buf, size_t flush_bytes, const amk__bench_opts *o,
                          amk__bench_stats *stats, char *msg, size_t cap)
{
    hipError_t err = hipSuccess;
    hipEvent_t ev[2 * AMK__BENCH_CHUNK_MAX * 2];
    int nev = 0;
    double *samples[2] = {NULL, NULL}; /* kept sorted: the stopping rule reads ranks */
    double *scratch = NULL;
    double est_ms[2] = {0, 0}, timed_ms[2] = {0, 0};
    int why[2] = {AMK__STOP_NONE, AMK__STOP_NONE};
    long counter = 0; /* launches so far: picks the set, so consecutive launches differ */
    msg[0] = '\0';
    if (nk < 1 || nk > 2 || nsets < 1 || nsets > 64) {
        snprintf(msg, cap, "bench: bad arguments (%d kernels, %d sets)", nk, nsets);
        return hipErrorInvalidValue;
    }
    for (nev = 0; nev < 2 * AMK__BENCH_CHUNK_MAX * nk; nev++)
        TRY(hipEventCreate(&ev[nev]));

    /* Warm-up: clocks after the check's idle gap; estimates the time per launch. */
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
        qsort(w, (size_t)n, sizeof *w, amk__bench_cmp_double);
        est_ms[i] = w[n / 2] > 1e-4 ? w[n / 2] : 1e-4;
    }

    double slow = est_ms[0] > est_ms[1] ? est_ms[0] : est_ms[1];
    int cap_why;
    int reps = amk__bench_reps_cap(slow, o, &cap_why);
    scratch = malloc((size_t)reps * sizeof(double));
    for (int i = 0; i < nk; i++)
        samples[i] = malloc((size_t)reps * sizeof(double));
    if (!scratch || !samples[0] || (nk == 2 && !samples[1])) {
        snprintf(msg, cap, "bench: out of host memory");
        err = hipErrorInvalidValue;
        goto done;
    }

    int done_reps = 0, ruled = 0; /* ruled: every kernel met a stopping rule */
    while (!ruled && done_reps < reps) {
        int chunk = amk__bench_next_chunk(done_reps, reps, slow, o);
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
                timed_ms[i] += ms;
            }
        /* Stop when every kernel meets a rule (CI pinned or beaten), else at the cap. */
        ruled = 1;
        for (int i = 0; i < nk; i++) {
            double lo, hi;
            amk__bench_merge(samples[i], done_reps, chunk, scratch);
            why[i] = amk__bench_should_stop(samples[i], done_reps + chunk, timed_ms[i], o, &lo,
                                            &hi);
            ruled &= why[i] != AMK__STOP_NONE;
        }
        done_reps += chunk;
    }
    for (int i = 0; i < nk; i++) {
        amk__bench_summarize(samples[i], done_reps, &stats[i]);
        stats[i].stop = ruled ? why[i] : cap_why;
        stats[i].sets = nsets;
        stats[i].flushed = flush_buf != NULL;
    }

done:
    for (int i = 0; i < nev; i++)
        (void)hipEventDestroy(ev[i]);
    free(samples[0]);
    free(samples[1]);
    free(scratch);
    return err;
}
