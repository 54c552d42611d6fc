/* A verdict as the record keeps it and back: the results.tsv row of one trial, and the
 * verdict a recorded row stands for (strategies and the keep rule replaying history). Here,
 * in search/, because it is the one place that knows both the evaluator's verdict and the
 * results' row: the evaluator does not know the record, the record does not know verdicts. */
#include "amk_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int amk_verdict_to_row(const amk_verdict *v, const amk_config *c, int64_t trial,
                       const char *shape, const char *source, const char *device, int kept,
                       amk_row *r, amk_diag *d)
{
    amk_row_init(r);
    r->trial = trial;
    amk_time_iso(r->time);
    snprintf(r->kernel, sizeof r->kernel, "%s", amk_spec_name(c->spec));
    snprintf(r->shape, sizeof r->shape, "%s", shape);
    if (v->config_id[0])
        memcpy(r->config_id, v->config_id, sizeof r->config_id);
    else
        amk_config_id(c, r->config_id);
    char *pj = amk_config_params_json(c);
    if (!pj)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory formatting params");
    if (snprintf(r->params, sizeof r->params, "%s", pj) >= (int)sizeof r->params)
        amk_log(AMK_LOG_WARN, "trial %lld: params JSON truncated to %zu bytes",
                (long long)trial, sizeof r->params - 1);
    free(pj);
    snprintf(r->source, sizeof r->source, "%s", source);
    r->status = v->status;
    r->latency_us = v->latency_us;
    r->latency_kind = v->latency_kind;
    r->spread = v->spread;
    r->predicted_us = v->predicted_us;
    r->bound_us = v->bound_us;
    r->pct_of_roofline = v->pct_of_roofline;
    r->compile_ms = v->compile_ms;
    r->cache_hit = v->cache_hit < 0 ? -1 : (v->cache_hit != 0); /* -1: nothing compiled */
    r->kept = kept != 0;
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->note, sizeof r->note, "%s%s%s", v->reason, v->reason[0] && v->notes[0] ? "; " : "",
             v->notes);
    snprintf(r->clock_regime, sizeof r->clock_regime, "%s", v->clock_regime);
    r->sm_mhz = v->sm_mhz;
    r->sm_mhz_min = v->sm_mhz_min;
    r->sm_mhz_max = v->sm_mhz_max;
    r->mem_mhz = v->mem_mhz;
    r->power_w = v->power_w;
    r->temp_c = v->temp_c;
    snprintf(r->throttle, sizeof r->throttle, "%s", v->throttle);
    r->energy_uj = v->energy_uj;
    snprintf(r->peer, sizeof r->peer, "%s", v->peer);
    r->peer_us = v->peer_us;
    r->vs_peer = v->vs_peer;
    r->energy_window_ms = v->energy_window_ms;
    r->energy_ticks = v->energy_ticks > 0 ? v->energy_ticks : 0;
    r->cost_s = isfinite(v->cost_s) && v->cost_s >= 0 ? v->cost_s : NAN;
    return AMK_OK;
}

void amk_verdict_from_row(const amk_row *r, amk_verdict *v)
{
    amk_verdict_init(v);
    v->status = r->status;
    v->valid = r->status != AMK_STATUS_REJECTED;
    if (r->status == AMK_STATUS_OK || r->status == AMK_STATUS_WITHHELD)
        v->correct = r->latency_kind == AMK_LAT_MEASURED ? 1 : -1;
    else if (r->status == AMK_STATUS_WRONG)
        v->correct = 0;
    memcpy(v->config_id, r->config_id, sizeof v->config_id);
    v->latency_us = r->latency_us;
    v->latency_kind = r->latency_kind;
    v->spread = r->spread;
    v->predicted_us = r->predicted_us;
    v->bound_us = r->bound_us;
    v->pct_of_roofline = r->pct_of_roofline;
    v->compile_ms = r->compile_ms;
    v->cache_hit = r->cache_hit;
    snprintf(v->device, sizeof v->device, "%s", r->device);
    snprintf(v->notes, sizeof v->notes, "%s", r->note);
    snprintf(v->clock_regime, sizeof v->clock_regime, "%s", r->clock_regime);
    v->sm_mhz = r->sm_mhz;
    v->sm_mhz_min = r->sm_mhz_min;
    v->sm_mhz_max = r->sm_mhz_max;
    v->mem_mhz = r->mem_mhz;
    v->power_w = r->power_w;
    v->temp_c = r->temp_c;
    snprintf(v->throttle, sizeof v->throttle, "%s", r->throttle);
    v->energy_uj = r->energy_uj;
    snprintf(v->peer, sizeof v->peer, "%s", r->peer);
    v->peer_us = r->peer_us;
    v->vs_peer = r->vs_peer;
    v->energy_window_ms = r->energy_window_ms;
    v->energy_ticks = r->energy_ticks;
    v->cost_s = r->cost_s;
}
