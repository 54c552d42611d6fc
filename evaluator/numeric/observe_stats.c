/* The device's state during a timing, host side: folding the readings gpu/observe.c takes
 * around each timed chunk (clocks, power, temperature, throttle reasons, energy counter),
 * the regime names, and when a sustained warm-up has reached steady state. */
#include "numeric_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const regime_names[AMK__REGIME_COUNT] = {"sustained", "burst"};

const char *amk__regime_name(int regime)
{
    return regime >= 0 && regime < AMK__REGIME_COUNT ? regime_names[regime] : "";
}

int amk__regime_from_name(const char *name)
{
    for (int r = 0; name && r < AMK__REGIME_COUNT; r++)
        if (strcmp(name, regime_names[r]) == 0)
            return r;
    return -1;
}

void amk__obs_init(amk__obs *o)
{
    memset(o, 0, sizeof *o);
    o->sm_mhz = o->sm_mhz_min = o->sm_mhz_max = o->mem_mhz = o->power_w = o->temp_c = NAN;
    o->last_power_w = NAN;
}

/* Running mean of the n-th value (n counted after it). */
static void mean_in(double *mean, int *n, double v)
{
    if (!isfinite(v))
        return;
    (*n)++;
    *mean = *n == 1 ? v : *mean + (v - *mean) / *n;
}

void amk__obs_add(amk__obs *o, const amk__obs_sample *s)
{
    int seen = isfinite(s->sm_mhz) || isfinite(s->mem_mhz) || isfinite(s->power_w) ||
               isfinite(s->temp_c) || isfinite(s->energy_j);
    if (!seen)
        return;
    o->samples++;
    if (isfinite(s->sm_mhz)) {
        o->sm_mhz_min = o->n_clock ? fmin(o->sm_mhz_min, s->sm_mhz) : s->sm_mhz;
        o->sm_mhz_max = o->n_clock ? fmax(o->sm_mhz_max, s->sm_mhz) : s->sm_mhz;
    }
    mean_in(&o->sm_mhz, &o->n_clock, s->sm_mhz);
    mean_in(&o->mem_mhz, &o->n_mem, s->mem_mhz);
    mean_in(&o->power_w, &o->n_power, s->power_w);
    if (isfinite(s->power_w))
        o->last_power_w = s->power_w;
    if (isfinite(s->temp_c)) {
        o->temp_c = o->n_temp ? fmax(o->temp_c, s->temp_c) : s->temp_c;
        o->n_temp++;
    }
    o->throttle |= s->throttle;
}

void amk__obs_add_span(amk__obs *o, const amk__obs_sample *before, const amk__obs_sample *after)
{
    amk__obs_add(o, after);
    double dt = after->t_s - before->t_s, de = after->energy_j - before->energy_j;
    if (isfinite(dt) && isfinite(de) && dt > 0 && de >= 0) {
        o->span_s += dt;
        o->span_j += de;
    }
}

double amk__obs_mean_power(const amk__obs *o)
{
    if (o->span_s >= AMK__OBS_COUNTER_MIN_S && o->span_j > 0)
        return o->span_j / o->span_s;
    return o->n_power ? o->last_power_w : NAN;
}

/* NVML's clock-event reason bits (nvmlClocksEventReason*), by value. */
static const struct {
    uint64_t bit;
    const char *name;
} reasons[] = {
    {0x2, "app_clocks"},       {0x4, "sw_power_cap"},  {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},      {0x20, "sw_thermal"},   {0x40, "hw_thermal"},
    {0x80, "hw_power_brake"},  {0x100, "display_clocks"},
};

void amk__obs_throttle_text(uint64_t r, char *out, size_t cap)
{
    size_t n = 0;
    if (cap)
        out[0] = '\0';
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if ((r & reasons[i].bit) && n < cap) {
            int w = snprintf(out + n, cap - n, "%s%s", n ? "," : "", reasons[i].name);
            n += w > 0 ? (size_t)w : 0;
        }
}

int amk__obs_settled(const double *chunk_us, int n, double hot_before_s, double hot_s,
                     double sustain_s, double tol)
{
    if (hot_before_s >= sustain_s) {
        for (int i = 0; i < AMK__SETTLE_HOT_CHUNKS; i++)
            if (i >= n || !(chunk_us[i] > 0))
                return 0;
        return 1;
    }
    if (n < 6 || !(hot_s >= sustain_s))
        return 0;
    double a = (chunk_us[n - 6] + chunk_us[n - 5] + chunk_us[n - 4]) / 3;
    double b = (chunk_us[n - 3] + chunk_us[n - 2] + chunk_us[n - 1]) / 3;
    return a > 0 && b > 0 && fabs(b - a) <= tol * a;
}

void amk__ewin_start(amk__energy_window *w, double want_s, double counter_j)
{
    memset(w, 0, sizeof *w);
    w->want_s = want_s;
    w->last_j = counter_j;
    w->e0_j = w->e1_j = w->t0_s = w->t1_s = w->n0 = w->n1 = NAN;
    w->state = AMK__EWIN_WAIT;
    if (!isfinite(counter_j)) {
        w->state = AMK__EWIN_FAILED;
        w->why = "the energy counter could not be read";
    }
}

int amk__ewin_feed(amk__energy_window *w, double counter_j, double t_s, double done)
{
    if (w->state == AMK__EWIN_DONE || w->state == AMK__EWIN_FAILED)
        return w->state;
    if (!isfinite(counter_j) || !isfinite(t_s)) {
        w->state = AMK__EWIN_FAILED;
        w->why = "the energy counter could not be read";
        return w->state;
    }
    if (counter_j < w->last_j) {
        w->state = AMK__EWIN_FAILED;
        w->why = "the energy counter went backwards";
        return w->state;
    }
    if (counter_j > w->last_j) {
        /* The tick fell between the previous reading and this one. */
        double at = 0.5 * (w->last_done + done);
        if (w->state == AMK__EWIN_WAIT) {
            w->state = AMK__EWIN_OPEN;
            w->e0_j = counter_j;
            w->t0_s = t_s;
            w->n0 = at;
        } else {
            w->ticks++;
            if (t_s - w->t0_s >= w->want_s) {
                w->state = AMK__EWIN_DONE;
                w->e1_j = counter_j;
                w->t1_s = t_s;
                w->n1 = at;
            }
        }
    }
    w->last_j = counter_j;
    w->last_done = done;
    return w->state;
}

int amk__ewin_result(const amk__energy_window *w, double *uj, double *window_ms, int *ticks)
{
    double launches = w->n1 - w->n0;
    if (w->state != AMK__EWIN_DONE || !(launches > 0) || w->ticks < 1)
        return 0;
    *uj = (w->e1_j - w->e0_j) * 1e6 / launches;
    *window_ms = (w->t1_s - w->t0_s) * 1e3;
    *ticks = w->ticks;
    return 1;
}

double amk__energy_window_s(void)
{
    const char *e = getenv("AMK_ENERGY_WINDOW_MS");
    char *end = NULL;
    double ms = e && *e ? strtod(e, &end) : NAN;
    if (!(end && !*end && ms >= 100 && ms <= 60000))
        ms = 1000;
    return ms / 1e3;
}

double amk__obs_dpm_mhz(const char *text)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', len);
        if (colon && memchr(line, '*', len)) {
            char *after = NULL;
            double mhz = strtod(colon + 1, &after);
            /* "1700Mhz" (amdgpu writes "Mhz"; accept any case) */
            if (after != colon + 1 && strncasecmp(after, "mhz", 3) == 0 && mhz > 0)
                return mhz;
            return NAN;
        }
        line = end ? end + 1 : NULL;
    }
    return NAN;
}
