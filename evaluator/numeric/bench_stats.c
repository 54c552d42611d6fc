/* The benchmark's host side (no GPU call, nothing of the evaluator): options from the
 * environment, median / quartile / CI statistics of the timed samples, the stopping rule
 * (adaptive CI stop, screening against the incumbent, window and caps), how many launches to
 * queue next, and how many input sets rotate for a cold L2. The timed loops on the device
 * are ../gpu/bench.c. */
#include "numeric_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_STEP 16 /* adaptive: launches between two looks at the CI past the minimums, */
#define STEP_MS 1.0   /* and at least this much work, so short kernels batch round trips */

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
    /* The check ran this kernel moments before (module loaded, code cached, clocks up): the
     * warm-up only bridges the host-side compare's idle gap and estimates the launch time. */
    o->warmup_s = 0.005;
    o->mem_cap = (int64_t)4 << 30;
    o->min_window_s = 0.010;
    o->ci_rel = 0.01;
    o->beat_us = NAN;
    o->screen_margin = 0.10;
    o->regime = AMK__REGIME_SUSTAINED;
    o->settle_max_s = 2.0;
    o->sustain_s = 1.0;
    o->burst_gap_s = 0.200;
    o->energy_window_s = 0; /* set by the gpu backend for objective energy or edp */
    o->decide_gain = 0;     /* set by a re-measure */
    o->settle_max_s = env_double("AMK_BENCH_SETTLE_MS", o->settle_max_s * 1e3) / 1e3;
    o->sustain_s = env_double("AMK_BENCH_SUSTAIN_MS", o->sustain_s * 1e3) / 1e3;
    o->burst_gap_s = env_double("AMK_BENCH_BURST_GAP_MS", o->burst_gap_s * 1e3) / 1e3;
    int regime = amk__regime_from_name(getenv("AMK_BENCH_REGIME"));
    if (regime >= 0)
        o->regime = regime;
    o->window_s = env_double("AMK_BENCH_WINDOW_MS", o->window_s * 1e3) / 1e3;
    o->min_window_s = env_double("AMK_BENCH_MIN_WINDOW_MS", o->min_window_s * 1e3) / 1e3;
    o->warmup_s = env_double("AMK_BENCH_WARMUP_MS", o->warmup_s * 1e3) / 1e3;
    o->ci_rel = env_double("AMK_BENCH_CI", o->ci_rel);
    o->reps_min = (int)env_double("AMK_BENCH_MIN_REPS", o->reps_min);
    if (o->reps_min < 3)
        o->reps_min = 3;
    if (o->reps_max < o->reps_min)
        o->reps_max = o->reps_min;
    const char *warm = getenv("AMK_BENCH_WARM");
    if (warm && strcmp(warm, "1") == 0)
        o->cold = 0;
    const char *screen = getenv("AMK_BENCH_SCREEN");
    if (screen && strcmp(screen, "0") == 0)
        o->screen_margin = INFINITY;
}

int amk__bench_cmp_double(const void *a, const void *b)
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

int amk__bench_median_ci(const double *sorted, int n, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n < 1)
        return 0;
    /* The count of samples below the true median is Binomial(n, 1/2): mean n/2, sd sqrt(n)/2,
     * so +-1.96 sd = +-0.98 sqrt(n) ranks cover it 95% of the time, whatever the distribution. */
    double h = 0.98 * sqrt((double)n);
    int j = (int)floor(n / 2.0 - h);    /* 1-based ranks */
    int k = (int)ceil(n / 2.0 + h) + 1;
    if (j < 1 || k > n)
        return 0;
    *lo = sorted[j - 1];
    *hi = sorted[k - 1];
    return 1;
}

void amk__bench_summarize(double *s, int n, amk__bench_stats *out)
{
    out->median_us = out->q1_us = out->q3_us = NAN;
    out->min_us = out->max_us = out->mean_us = out->spread = NAN;
    out->ci_lo_us = out->ci_hi_us = NAN;
    out->reps = n;
    out->stop = AMK__STOP_NONE;
    out->regime = AMK__REGIME_SUSTAINED;
    out->settle_ms = out->loaded_before_s = out->energy_uj = out->energy_window_ms = out->energy_launches = NAN;
    out->energy_ticks = 0;
    out->energy_why[0] = '\0';
    amk__obs_init(&out->obs);
    if (n <= 0)
        return;
    qsort(s, (size_t)n, sizeof *s, amk__bench_cmp_double);
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
    amk__bench_median_ci(s, n, &out->ci_lo_us, &out->ci_hi_us);
}

/* ---------- the stopping rule (host only) ---------------------------------------------- */

static int screening(const amk__bench_opts *o)
{
    return isfinite(o->beat_us) && o->beat_us > 0 && isfinite(o->screen_margin);
}

static int adaptive(const amk__bench_opts *o)
{
    return o->ci_rel > 0 || screening(o);
}

const char *amk__bench_stop_name(int stop)
{
    switch (stop) {
    case AMK__STOP_CI: return "ci";
    case AMK__STOP_BEATEN: return "beaten";
    case AMK__STOP_WINDOW: return "window";
    case AMK__STOP_CAP: return "cap";
    case AMK__STOP_DECIDED: return "decided";
    default: return "none";
    }
}

int amk__bench_reps_cap(double est_ms, const amk__bench_opts *o, int *why)
{
    if (!(est_ms > 1e-4))
        est_ms = 1e-4;
    double want = ceil(o->window_s * 1e3 / est_ms);
    *why = AMK__STOP_WINDOW;
    if (want < o->reps_min)
        want = o->reps_min;
    if (want > o->reps_max) {
        want = o->reps_max;
        *why = AMK__STOP_CAP;
    }
    if (want * est_ms > o->max_s * 1e3) {
        want = floor(o->max_s * 1e3 / est_ms);
        *why = AMK__STOP_CAP;
    }
    return want < 3 ? 3 : (int)want;
}

int amk__bench_next_chunk(int done, int cap, double est_ms, const amk__bench_opts *o)
{
    int left = cap - done, n = AMK__BENCH_CHUNK_MAX;
    if (adaptive(o)) {
        if (!(est_ms > 1e-4))
            est_ms = 1e-4;
        /* First the reps a stop needs at least (a screened config may go at reps_min, a
         * CI stop needs the minimum window too), then small steps. */
        double target = o->reps_min;
        if (done >= target || !screening(o))
            target = fmax(target, ceil(o->min_window_s * 1e3 / est_ms));
        double step = fmax(CHUNK_STEP, ceil(STEP_MS / est_ms));
        double want = fmax(target - done, step);
        n = want < AMK__BENCH_CHUNK_MAX ? (int)want : AMK__BENCH_CHUNK_MAX;
    }
    return n < left ? n : left;
}

int amk__bench_should_stop(const double *sorted, int n, double timed_ms,
                           const amk__bench_opts *o, double *ci_lo, double *ci_hi)
{
    if (!amk__bench_median_ci(sorted, n, ci_lo, ci_hi) || n < o->reps_min)
        return AMK__STOP_NONE;
    if (screening(o) && *ci_lo > o->beat_us * (1 + o->screen_margin))
        return AMK__STOP_BEATEN;
    double med = quantile(sorted, n, 0.5);
    if (o->ci_rel > 0 && timed_ms >= o->min_window_s * 1e3 && med > 0 &&
        fmax(med - *ci_lo, *ci_hi - med) <= o->ci_rel * med)
        return AMK__STOP_CI;
    return AMK__STOP_NONE;
}

int amk__bench_pair_decided(const double *a, int na, const double *b, int nb, double g)
{
    double alo, ahi, blo, bhi;
    if (!(g > 0) || !amk__bench_median_ci(a, na, &alo, &ahi) ||
        !amk__bench_median_ci(b, nb, &blo, &bhi) || !(alo > 0) || !(blo > 0))
        return 0;
    double lo = blo / ahi, hi = bhi / alo; /* both CIs at their far ends */
    return hi < 1 - g || (lo >= 1 - g && hi <= 1 + g) || lo > 1 + g;
}

void amk__bench_merge(double *sorted, int n, int add, double *scratch)
{
    double *in = sorted + n;
    qsort(in, (size_t)add, sizeof *in, amk__bench_cmp_double);
    memcpy(scratch, sorted, (size_t)n * sizeof *sorted);
    /* The write index i + j never passes the read index n + j of the new run. */
    int i = 0, j = 0, w = 0;
    while (i < n && j < add)
        sorted[w++] = scratch[i] <= in[j] ? scratch[i++] : in[j++];
    while (i < n)
        sorted[w++] = scratch[i++];
}

double amk__bench_ci_rel(const amk__bench_stats *s)
{
    if (!(s->median_us > 0) || !isfinite(s->ci_lo_us) || !isfinite(s->ci_hi_us))
        return NAN;
    return fmax(s->median_us - s->ci_lo_us, s->ci_hi_us - s->median_us) / s->median_us;
}

void amk__bench_stop_note(const amk__bench_stats *s, const amk__bench_opts *o, char *out,
                          size_t cap)
{
    double rel = amk__bench_ci_rel(s);
    char ci[48] = "";
    if (isfinite(rel))
        snprintf(ci, sizeof ci, ", CI +-%.2f%%", 100 * rel);
    switch (s->stop) {
    case AMK__STOP_CI:
        snprintf(out, cap, "stopped: CI +-%.2f%% after %d reps", 100 * rel, s->reps);
        break;
    case AMK__STOP_BEATEN:
        snprintf(out, cap, "stopped: >= %.2fx the incumbent after %d reps",
                 s->ci_lo_us / o->beat_us, s->reps);
        break;
    case AMK__STOP_WINDOW:
        snprintf(out, cap, "stopped: %g ms window after %d reps%s", o->window_s * 1e3, s->reps,
                 ci);
        break;
    case AMK__STOP_CAP:
        snprintf(out, cap, "stopped: cap after %d reps%s", s->reps, ci);
        break;
    case AMK__STOP_DECIDED:
        snprintf(out, cap, "stopped: decided against +-%g%% after %d reps%s",
                 100 * o->decide_gain, s->reps, ci);
        break;
    default:
        snprintf(out, cap, "%d reps%s", s->reps, ci);
        break;
    }
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

