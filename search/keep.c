/* Keep/revert (DESIGN §3): a correct candidate replaces the incumbent only when it is faster
 * by more than max(min_gain, noise); inside that margin the simpler config wins. */
#include "search_int.h"

#include "amk_cost_model.h"

#include <math.h>

static int launch_size(const amk_config *c, const amk_limits *lim, int64_t *threads,
                       int64_t *smem)
{
    amk_launch l;
    if (!lim || amk_config_launch(c, lim, &l, NULL) != AMK_OK)
        return 0;
    *threads = l.block[0] * l.block[1] * l.block[2];
    *smem = l.shared_bytes;
    return 1;
}

int amk__config_simpler(const amk_config *a, const amk_config *b, const amk_limits *lim)
{
    int64_t ta, sa, tb, sb;
    if (launch_size(a, lim, &ta, &sa) && launch_size(b, lim, &tb, &sb)) {
        if (ta != tb)
            return ta < tb ? -1 : 1;
        if (sa != sb)
            return sa < sb ? -1 : 1;
    }
    int n = a->spec ? amk_spec_n_params(a->spec) : AMK_MAX_PARAMS;
    for (int i = 0; i < n && i < AMK_MAX_PARAMS; i++)
        if (a->choice[i] != b->choice[i])
            return a->choice[i] < b->choice[i] ? -1 : 1;
    return 0;
}

/* A spread as a noise fraction: NAN, negative or infinite count as 0. */
static double noise_of(double spread)
{
    return isfinite(spread) && spread > 0 ? spread : 0;
}

/* The margin a gain must clear: max(min_gain, the larger measured spread). */
static double keep_margin(const amk_incumbent *inc, const amk_verdict *v, double min_gain)
{
    double margin = isfinite(min_gain) && min_gain > 0 ? min_gain : 0;
    double noise = fmax(noise_of(inc->spread), noise_of(v->spread));
    return noise > margin ? noise : margin;
}

int amk__keep_close(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                    double min_gain)
{
    if (!inc || !inc->has || inc->kind != AMK_LAT_MEASURED || !v ||
        v->status != AMK_STATUS_OK || v->latency_kind != AMK_LAT_MEASURED ||
        !(inc->latency_us > 0) || !(v->latency_us > 0) || amk_config_equal(&inc->config, cand))
        return 0;
    double gain = (inc->latency_us - v->latency_us) / inc->latency_us;
    return fabs(gain) <= 2 * keep_margin(inc, v, min_gain);
}

int amk__keep_decide_lim(const amk_incumbent *inc, const amk_config *cand,
                         const amk_verdict *v, double min_gain, const amk_limits *lim)
{
    if (!cand || !v || v->status != AMK_STATUS_OK)
        return 0;
    if (!isfinite(v->latency_us) || v->latency_us <= 0)
        return 0; /* "ok" without a usable latency is never trusted */
    if (!inc || !inc->has)
        return 1;
    if (amk_config_equal(&inc->config, cand))
        return 0;
    if (!isfinite(inc->latency_us) || inc->latency_us <= 0)
        return 1; /* an incumbent without a latency loses to any measured one */
    double margin = keep_margin(inc, v, min_gain);
    double gain = (inc->latency_us - v->latency_us) / inc->latency_us; /* >0: faster */
    if (gain > margin)
        return 1;
    if (gain < -margin)
        return 0;
    /* Inside the noise the simpler config wins, but not one measured slower by more than
     * min_gain: with wide spreads (a noisy interleaved re-measure, 9% IQR seen with
     * gemm_hopper on the H100) that walked the incumbent uphill, 183 -> 233 us in 72 trials. */
    if (gain < -(isfinite(min_gain) && min_gain > 0 ? min_gain : 0))
        return 0;
    return amk__config_simpler(cand, &inc->config, lim) < 0;
}

int amk_keep_decide(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                    double min_gain)
{
    const amk_target *t = amk_target_default();
    return amk__keep_decide_lim(inc, cand, v, min_gain, t ? &t->limits : NULL);
}
