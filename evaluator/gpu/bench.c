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
#define BURST_CHUNK 8         /* launches per kernel timed after each idle gap */
#define SETTLE_CHUNK_MS 10.0  /* work per sustained warm-up chunk */
#define SETTLE_HOT_CHUNK_MS 5.0 /* the same once the device is loaded already */
#define WARMUP_HOT 3          /* launches per kernel that estimate its time on a loaded device */
#define SETTLE_TOL 0.005      /* the last 3 chunks within 0.5% of the 3 before */
#define SETTLE_MAX_CHUNKS 1024
#define HOT_GAP_S 0.2         /* an idle gap longer than this starts a new load */
#define ENERGY_CHUNK_MS 5.0   /* work between two readings of the energy counter */
#define ENERGY_AHEAD 2        /* chunks queued beyond the one read: the reading may be slow */
#define ENERGY_FIRST_TICK_S 1.0 /* the counter must advance within this (~0.1 s on an H100) */

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
    if (!k->fn)
        return k->run(k->ctx, set, s);
    return amk__gpu_launch(k->fn, &k->launch, s, k->argv[set]);
}

static void sleep_s(double sec)
{
    if (!(sec > 0))
        return;
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* When the device last finished timed work and since when it has been under load without
 * a gap longer than HOT_GAP_S (one run worker per device: process-wide). */
static double busy_since = -1, busy_until = -1;

void amk__bench_loaded(double start, double end)
{
    if (busy_until < 0 || start - busy_until > HOT_GAP_S)
        busy_since = start;
    busy_until = end;
}

/* The sustained regime's warm-up: back-to-back chunks of the kernels (interleaved, rotating
 * sets as the timing will), each about SETTLE_CHUNK_MS of work and timed as a whole, the next
 * one queued before the last is read so the device never idles, until the device has been
 * under load for o->sustain_s and the time per launch has stopped moving
 * (amk__obs_settled), or o->settle_max_s is spent. The device is read at both ends (the
 * energy counter's advance over this load). *settle_ms gets the time it took. */
static hipError_t settle(hipStream_t s, const amk__bench_kernel *k, int nk, int nsets,
                         void *flush_buf, size_t flush_bytes, double est_ms,
                         const amk__bench_opts *o, long *counter, amk__obs *obs,
                         double *settle_ms, double *loaded_before_s, char *msg,
                         size_t cap)
{
    hipError_t err = hipSuccess;
    hipEvent_t ev[2][2] = {{NULL, NULL}, {NULL, NULL}};
    double chunk_us[SETTLE_MAX_CHUNKS];
    double t0 = amk_now_s();
    amk__bench_loaded(t0, t0); /* after a gap long enough to cool, the load starts now */
    double hot_before = t0 - busy_since;
    int per = (int)ceil((hot_before >= o->sustain_s ? SETTLE_HOT_CHUNK_MS : SETTLE_CHUNK_MS) /
                        (est_ms * nk));
    per = per < 2 ? 2 : per > 4096 ? 4096 : per;
    *loaded_before_s = hot_before;
    amk__obs_sample first, last;
    amk__obs_latest(&first);
    for (int b = 0; b < 2; b++)
        for (int e = 0; e < 2; e++)
            TRY(hipEventCreate(&ev[b][e]));
    /* Loaded long enough already: AMK__SETTLE_HOT_CHUNKS settle it (amk__obs_settled);
     * queue no more. */
    int last_chunk = hot_before >= o->sustain_s ? AMK__SETTLE_HOT_CHUNKS : SETTLE_MAX_CHUNKS;
    for (int n = 0; n <= last_chunk; n++) {
        if (n < last_chunk) { /* queue chunk n, then read chunk n - 1 */
            hipEvent_t *e = ev[n & 1];
            TRY(hipEventRecord(e[0], s));
            for (int r = 0; r < per; r++)
                for (int i = 0; i < nk; i++) {
                    if (flush_buf)
                        TRY(hipMemsetAsync(flush_buf, r & 1, flush_bytes, s));
                    TRY(launch(&k[i], (int)((*counter)++ % nsets), s));
                }
            TRY(hipEventRecord(e[1], s));
        }
        if (n == 0)
            continue;
        hipEvent_t *e = ev[(n - 1) & 1];
        TRY(hipEventSynchronize(e[1]));
        float ms = 0;
        TRY(hipEventElapsedTime(&ms, e[0], e[1]));
        chunk_us[n - 1] = ms * 1e3 / per;
        double now = amk_now_s();
        if (amk__obs_settled(chunk_us, n, hot_before, now - busy_since, o->sustain_s,
                             SETTLE_TOL) ||
            now - t0 >= o->settle_max_s || n == last_chunk)
            break;
    }
    TRY(hipStreamSynchronize(s));
    amk__obs_latest(&last);
    amk__obs_add_span(obs, &first, &last);
    *settle_ms = (amk_now_s() - t0) * 1e3;
done:
    for (int b = 0; b < 2; b++)
        for (int e = 0; e < 2; e++)
            if (ev[b][e])
                (void)hipEventDestroy(ev[b][e]);
    return err;
}

/* The energy per launch of kernel k (amk__energy_window, numeric_int.h says how): k runs back
 * to back in chunks of ~ENERGY_CHUNK_MS, ENERGY_AHEAD more queued before one is waited for
 * so the device never idles while the host reads (an idle gap's energy would be counted to
 * the launches), and the energy counter is read after each chunk ends until the window
 * of whole ticks is complete (at most ENERGY_FIRST_TICK_S for the first tick, and the window
 * plus 2 s in all). A flush, when the timing used one, runs before each launch here too (its
 * energy is then included: the note says so). A window that cannot complete leaves the
 * energy NAN with the reason in st->energy_why; only a device error is an error. */
static hipError_t energy_window(hipStream_t s, const amk__bench_kernel *k, int nsets,
                                void *flush_buf, size_t flush_bytes, double est_ms,
                                const amk__bench_opts *o, long *counter,
                                amk__bench_stats *st, char *msg, size_t cap)
{
    hipError_t err = hipSuccess;
    hipEvent_t ev[ENERGY_AHEAD + 1] = {NULL};
    int per = (int)ceil(ENERGY_CHUNK_MS / est_ms);
    per = per < 1 ? 1 : per > 4096 ? 4096 : per;
    amk__obs_sample smp;
    amk__obs_read(&smp);
    amk__energy_window w;
    amk__ewin_start(&w, o->energy_window_s, smp.energy_j);
    double t0 = smp.t_s, done = 0;
    for (int b = 0; b <= ENERGY_AHEAD; b++)
        TRY(hipEventCreate(&ev[b]));
    for (long n = 0; w.state != AMK__EWIN_FAILED; n++) {
        /* queue chunk n, then wait for chunk n - ENERGY_AHEAD and read the counter */
        for (int r = 0; r < per; r++) {
            if (flush_buf)
                TRY(hipMemsetAsync(flush_buf, r & 1, flush_bytes, s));
            TRY(launch(k, (int)((*counter)++ % nsets), s));
        }
        TRY(hipEventRecord(ev[n % (ENERGY_AHEAD + 1)], s));
        if (n < ENERGY_AHEAD)
            continue;
        TRY(hipEventSynchronize(ev[(n - ENERGY_AHEAD) % (ENERGY_AHEAD + 1)]));
        done += per;
        amk__obs_read(&smp);
        int state = amk__ewin_feed(&w, smp.energy_j, smp.t_s, done);
        if (state == AMK__EWIN_DONE)
            break;
        if (state == AMK__EWIN_WAIT && smp.t_s - t0 > ENERGY_FIRST_TICK_S) {
            w.state = AMK__EWIN_FAILED;
            w.why = "the energy counter did not advance within 1 s";
        } else if (smp.t_s - t0 > o->energy_window_s + ENERGY_FIRST_TICK_S + 1.0) {
            w.state = AMK__EWIN_FAILED;
            w.why = "the energy counter's window did not close in time";
        }
    }
    TRY(hipStreamSynchronize(s));
    if (!amk__ewin_result(&w, &st->energy_uj, &st->energy_window_ms, &st->energy_ticks)) {
        st->energy_uj = NAN;
        snprintf(st->energy_why, sizeof st->energy_why, "%s",
                 w.why ? w.why : "no launch between the counter's ticks");
    } else {
        st->energy_launches = w.n1 - w.n0;
    }
done:
    for (int b = 0; b <= ENERGY_AHEAD; b++)
        if (ev[b])
            (void)hipEventDestroy(ev[b]);
    return err;
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

    amk__obs_watch(1);
    /* Warm-up: clocks after the check's idle gap; estimates the time per launch. A device
     * under load for the sustain time already is brought to this workload's state by the
     * settle that follows: WARMUP_HOT launches only estimate (5 ms of launches, each waited
     * for, cost the H100 race 12 ms a config). */
    amk__rw_phase("warm-up");
    double t_start = amk_now_s();
    int hot = o->regime == AMK__REGIME_SUSTAINED && busy_until >= 0 &&
              t_start - busy_until <= HOT_GAP_S && t_start - busy_since >= o->sustain_s;
    double flush_ms = 0; /* the L2 flush before each launch: wall time the chunks pay too */
    int flushes = 0;     /* its fastest over the warm-up of every kernel */
    for (int i = 0; i < nk; i++) {
        double w[WARMUP_MAX], total = 0;
        int n = 0;
        while (n < WARMUP_MAX &&
               (n < 2 || (hot ? n < WARMUP_HOT : total < o->warmup_s * 1e3))) {
            int set = (int)(counter++ % nsets);
            if (flush_buf) {
                TRY(hipEventRecord(ev[2], s));
                TRY(hipMemsetAsync(flush_buf, n & 1, flush_bytes, s));
            }
            TRY(hipEventRecord(ev[0], s));
            TRY(launch(&k[i], set, s));
            TRY(hipEventRecord(ev[1], s));
            TRY(hipEventSynchronize(ev[1]));
            float ms = 0, fms = 0;
            TRY(hipEventElapsedTime(&ms, ev[0], ev[1]));
            if (flush_buf) {
                TRY(hipEventElapsedTime(&fms, ev[2], ev[0]));
                flush_ms = flushes++ ? fmin(flush_ms, fms) : fms;
            }
            w[n++] = ms;
            total += ms + fms;
        }
        qsort(w, (size_t)n, sizeof *w, amk__bench_cmp_double);
        est_ms[i] = w[n / 2] > 1e-4 ? w[n / 2] : 1e-4;
    }

    double slow = est_ms[0] > est_ms[1] ? est_ms[0] : est_ms[1];
    /* What a launch costs in wall time: with a flush before each, a 4 us kernel took 44 us,
     * and chunks, caps and the minimum window counted in kernel time alone ran 10 times
     * their length (Kernel Tuner's reduction example: 200 ms a config, most of it flushes;
     * its 2000-rep cap met before the 10 ms window, so the CI never stopped it). */
    double cost = slow + flush_ms;
    double settle_ms = NAN, loaded_before_s = NAN;
    amk__obs obs;
    amk__obs_init(&obs);
    if (o->regime == AMK__REGIME_SUSTAINED) {
        double warmup_ms = (amk_now_s() - t_start) * 1e3;
        amk__rw_phase("settle");
        err = settle(s, k, nk, nsets, flush_buf, flush_bytes, cost, o, &counter, &obs,
                     &settle_ms, &loaded_before_s, msg, cap);
        if (err != hipSuccess)
            goto done;
        /* A device that was not loaded already pays its warm-up and the settle's load up
         * to o->sustain_s once for the jobs after it (the keeper keeps it loaded): set-up,
         * not this config's cost. The settle's check beyond that is the config's. */
        if (!hot)
            amk__rw_setup_add(warmup_ms + fmin(settle_ms, fmax(0.0, o->sustain_s -
                                                              loaded_before_s) * 1e3));
    }
    int cap_why;
    int reps = amk__bench_reps_cap(cost, o, &cap_why);
    scratch = malloc((size_t)reps * sizeof(double));
    for (int i = 0; i < nk; i++)
        samples[i] = malloc((size_t)reps * sizeof(double));
    if (!scratch || !samples[0] || (nk == 2 && !samples[1])) {
        snprintf(msg, cap, "bench: out of host memory");
        err = hipErrorInvalidValue;
        goto done;
    }

    amk__rw_phase("timed");
    int done_reps = 0, ruled = 0; /* ruled: every kernel met a stopping rule */
    for (int nchunk = 0; !ruled && done_reps < reps; nchunk++) {
        int chunk = amk__bench_next_chunk(done_reps, reps, cost, o);
        if (o->regime == AMK__REGIME_BURST) {
            /* The first-call case: the device idles, then a few launches are timed. */
            if (chunk > BURST_CHUNK)
                chunk = BURST_CHUNK;
            TRY(hipStreamSynchronize(s));
            sleep_s(o->burst_gap_s);
        }
        amk__obs_sample before, after;
        amk__obs_latest(&before);
        gate g;
        atomic_init(&g.open, 0);
        amk__host_call call = {gate_wait, &g};
        int gated = amk__gpu_host_func(s, &call) == hipSuccess;
        if (!gated)
            (void)hipGetLastError(); /* no host functions here: time without the gate */
        hipError_t qe = hipSuccess;
        for (int r = 0; r < chunk && qe == hipSuccess; r++)
            for (int j = 0; j < nk && qe == hipSuccess; j++) {
                /* Two kernels take turns going first, so neither always follows the other
                 * (or, in burst, the idle gap: chunks of 8 began with the candidate every
                 * time while the turn went by the launch count). */
                int i = ((nchunk + r) & 1) ? nk - 1 - j : j;
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
        amk__obs_latest(&after);
        amk__obs_sample mid[8]; /* the readings between the chunk's two ends */
        int nmid = amk__obs_taken_after(before.t_s, mid, 8);
        for (int m = 0; m < nmid; m++)
            if (mid[m].t_s < after.t_s)
                amk__obs_add(&obs, &mid[m]);
        amk__obs_add_span(&obs, &before, &after);
        for (int r = 0; r < chunk; r++)
            for (int i = 0; i < nk; i++) {
                float ms = 0;
                TRY(hipEventElapsedTime(&ms, ev[2 * (r * nk + i)], ev[2 * (r * nk + i) + 1]));
                samples[i][done_reps + r] = ms * 1e3;
                timed_ms[i] += ms;
            }
        /* Stop when every kernel meets a rule (CI pinned or beaten), else at the cap. A
         * peer (a library call beside the candidate) rides along: its median carries the CI
         * of the reps the candidate needed. Waiting for the peer's own CI kept beaten
         * candidates running: 72 reps where 31 decided them, 65 ms a config in the H100
         * race. */
        ruled = 1;
        for (int i = 0; i < nk; i++) {
            double lo, hi;
            amk__bench_merge(samples[i], done_reps, chunk, scratch);
            why[i] = amk__bench_should_stop(samples[i], done_reps + chunk,
                                            timed_ms[i] + (done_reps + chunk) * flush_ms, o, &lo,
                                            &hi);
            ruled &= why[i] != AMK__STOP_NONE || (i > 0 && k[i].run);
        }
        done_reps += chunk;
        /* A re-measure answers the keep rule's question: once the two medians' ratio is
         * clear of its boundaries, more reps cannot change the answer (a close call ran
         * the 100 ms window for a +-0.25% CI: 14 re-measures, 1.9 s of the H100 race). */
        if (!ruled && nk == 2 && o->decide_gain > 0 && done_reps >= o->reps_min &&
            timed_ms[0] + done_reps * flush_ms >= o->min_window_s * 1e3 &&
            amk__bench_pair_decided(samples[0], done_reps, samples[1], done_reps,
                                    o->decide_gain)) {
            ruled = 1;
            why[0] = why[1] = AMK__STOP_DECIDED;
        }
    }
    for (int i = 0; i < nk; i++) {
        amk__bench_summarize(samples[i], done_reps, &stats[i]);
        stats[i].stop = ruled ? why[i] : cap_why;
        stats[i].sets = nsets;
        stats[i].flushed = flush_buf != NULL;
        stats[i].flush_us = flush_ms * 1e3;
        stats[i].regime = o->regime;
        stats[i].settle_ms = settle_ms;
        stats[i].loaded_before_s = loaded_before_s;
        stats[i].obs = obs;
        double watts = amk__obs_mean_power(&obs);
        stats[i].energy_uj = isfinite(watts) ? watts * stats[i].median_us : NAN;
    }
    if (o->energy_window_s > 0) {
        /* Objective energy or edp: the candidate's (kernel 0's) energy is measured, never
         * estimated; its own load follows the timing without a gap. */
        amk__rw_phase("energy");
        err = energy_window(s, &k[0], nsets, flush_buf, flush_bytes, est_ms[0] + flush_ms, o,
                            &counter, &stats[0], msg, cap);
        if (err != hipSuccess)
            goto done;
    }

done:
    amk__obs_watch(0);
    busy_until = amk_now_s();
    for (int i = 0; i < nev; i++)
        (void)hipEventDestroy(ev[i]);
    free(samples[0]);
    free(samples[1]);
    free(scratch);
    return err;
}
