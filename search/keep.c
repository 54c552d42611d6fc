/* Keep/revert (DESIGN §3): the one keep rule. amk__keep_rule is a pure function of the two
 * latencies, the noise of their comparison and the margin asked for; everything that keeps
 * or replays an incumbent (the loop, `amk evaluate`, the history rule) goes through it. */
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

double amk__measured_noise(amk_objective objective, amk_latency_kind kind, double spread,
                           int energy_ticks)
{
    /* A replayed or predicted number comes back the same every time: comparing two of them
     * is exact, whatever spread the original measurement had. */
    return kind == AMK_LAT_MEASURED ? amk_objective_noise(objective, spread, energy_ticks) : 0;
}

double amk__keep_margin(double noise, double min_gain)
{
    double g = isfinite(min_gain) && min_gain > 0 ? min_gain : 0;
    return noise > g ? noise : g;
}

int amk__keep_rule(double inc_us, double cand_us, double noise, double min_gain)
{
    if (!isfinite(cand_us) || cand_us <= 0)
        return AMK__KEEP_REVERT; /* "ok" without a usable latency is never trusted */
    if (!isfinite(inc_us) || inc_us <= 0)
        return AMK__KEEP_FASTER; /* an incumbent without a latency loses to any measured one */
    double margin = amk__keep_margin(noise, min_gain);
    double gain = (inc_us - cand_us) / inc_us; /* >0: the candidate is faster */
    if (gain > margin)
        return AMK__KEEP_FASTER;
    if (gain < -margin)
        return AMK__KEEP_REVERT;
    /* Inside the noise the simpler config wins, but not one measured slower by more than
     * min_gain: with wide spreads (a noisy interleaved re-measure, 9% IQR seen with
     * gemm_hopper on the H100) that walked the incumbent uphill, 183 -> 233 us in 72 trials.
     * (Such a step moves the search; the best handed back never gets slower: history.c.
     * Refusing every slower step cost hillclimb on quant_per_tensor's sweep 15 -> 40.5
     * median trials to within 3% of the optimum.) */
    return gain < -(isfinite(min_gain) && min_gain > 0 ? min_gain : 0) ? AMK__KEEP_REVERT
                                                                       : AMK__KEEP_TIE;
}

/* The noise of comparing a candidate's verdict with the incumbent in the incumbent's
 * objective: the larger of the two. */
static double pair_noise(const amk_incumbent *inc, const amk_verdict *v)
{
    return fmax(amk_objective_noise(inc->objective, inc->spread, inc->energy_ticks),
                amk_objective_noise(inc->objective, v->spread, v->energy_ticks));
}

/* What the candidate is held to the incumbent by: under objective time, when both were
 * timed beside the same peer, its latency in the incumbent's clock state (amk_peer_scaled:
 * *peered 1); else its objective score (*peered 0). */
static double cand_score_vs(const amk_incumbent *inc, const amk_verdict *v, int *peered)
{
    double s = inc->objective == AMK_OBJ_TIME
                   ? amk_peer_scaled(v->latency_us, v->peer, v->peer_us, inc->peer, inc->peer_us)
                   : NAN;
    *peered = isfinite(s);
    return *peered ? s : amk_objective_score(inc->objective, v->latency_us, v->energy_uj,
                                             v->energy_ticks);
}

int amk__keep_peered(const amk_incumbent *inc, const amk_verdict *v)
{
    int peered = 0;
    if (inc && inc->has && v)
        (void)cand_score_vs(inc, v, &peered);
    return peered;
}

int amk__keep_close(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                    double min_gain)
{
    /* Under energy or edp the energy window decides: a re-measure compares latencies only. */
    if (!inc || !inc->has || inc->objective != AMK_OBJ_TIME || inc->kind != AMK_LAT_MEASURED ||
        !v || v->status != AMK_STATUS_OK || v->latency_kind != AMK_LAT_MEASURED ||
        !(inc->latency_us > 0) || !(v->latency_us > 0) || amk_config_equal(&inc->config, cand))
        return 0;
    int peered;
    double gain = (inc->latency_us - cand_score_vs(inc, v, &peered)) / inc->latency_us;
    return fabs(gain) <= 2 * amk__keep_margin(pair_noise(inc, v), min_gain);
}

int amk__keep_clock_moved(const amk_incumbent *inc, const amk_config *cand,
                          const amk_verdict *v, double min_gain)
{
    if (!inc || !inc->has || inc->objective != AMK_OBJ_TIME || inc->kind != AMK_LAT_MEASURED ||
        !v || v->status != AMK_STATUS_OK || v->latency_kind != AMK_LAT_MEASURED ||
        !(inc->sm_mhz > 0) || !(v->sm_mhz > 0) || !(inc->latency_us > 0) ||
        !(v->latency_us > 0) || amk_config_equal(&inc->config, cand) || amk__keep_peered(inc, v))
        return 0; /* timed beside the same peer: the comparison already cancels the clock */
    /* Only a clock that favoured the apparent winner can have decided the call: a candidate
     * that won at the lower clock, or lost at the higher one, would only widen the gap at one
     * clock. (Under the power cap most pairs differ in clock; re-measuring each cost the H100
     * race 27 re-measures of 72 configs.) */
    if ((v->latency_us < inc->latency_us) != (v->sm_mhz > inc->sm_mhz))
        return 0;
    double margin = amk__keep_margin(pair_noise(inc, v), min_gain);
    double moved = fabs(v->sm_mhz - inc->sm_mhz) / inc->sm_mhz;
    double gain = fabs(inc->latency_us - v->latency_us) / inc->latency_us;
    return moved > margin && gain <= 2 * margin + moved;
}

int amk__keep_decide_lim(const amk_incumbent *inc, const amk_config *cand,
                         const amk_verdict *v, double min_gain, const amk_limits *lim)
{
    if (!cand || !v || v->status != AMK_STATUS_OK)
        return 0;
    if (!inc || !inc->has)
        return isfinite(amk_objective_score(inc ? inc->objective : AMK_OBJ_TIME, v->latency_us,
                                            v->energy_uj, v->energy_ticks));
    amk_objective obj = inc->objective;
    int peered;
    double cand_score = cand_score_vs(inc, v, &peered);
    if (amk_config_equal(&inc->config, cand))
        return 0;
    double inc_score =
        amk_objective_score(obj, inc->latency_us, inc->energy_uj, inc->energy_ticks);
    int k = amk__keep_rule(inc_score, cand_score, pair_noise(inc, v), min_gain);
    if (k == AMK__KEEP_TIE)
        return amk__config_simpler(cand, &inc->config, lim) < 0;
    return k == AMK__KEEP_FASTER;
}

int amk_keep_decide(const amk_incumbent *inc, const amk_config *cand, const amk_verdict *v,
                    double min_gain)
{
    const amk_target *t = amk_target_default();
    return amk__keep_decide_lim(inc, cand, v, min_gain, t ? &t->limits : NULL);
}

void amk__verdict_for_strategy(amk_objective objective, amk__peer_frame *frame, amk_verdict *v)
{
    if (objective != AMK_OBJ_TIME) {
        v->latency_us =
            amk_objective_score(objective, v->latency_us, v->energy_uj, v->energy_ticks);
        return;
    }
    if (!frame || v->status != AMK_STATUS_OK || !amk_latency_is_evidence(v->latency_kind))
        return;
    if (!(frame->us > 0) && v->peer[0] && v->peer_us > 0) {
        snprintf(frame->peer, sizeof frame->peer, "%s", v->peer);
        frame->us = v->peer_us;
    }
    double s = amk_peer_scaled(v->latency_us, v->peer, v->peer_us, frame->peer, frame->us);
    if (isfinite(s))
        v->latency_us = s;
}
