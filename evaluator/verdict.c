/* The verdict: one config's outcome, its "nothing known" initial value and its JSON form
 * (space_defs/schema/verdict.schema.json). Absent numbers are JSON null, never NaN. */
#include "evaluator_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void amk_verdict_init(amk_verdict *v)
{
    memset(v, 0, sizeof *v);
    /* Nothing is known yet: not ok, not valid, no numbers. The pipeline always overwrites
     * the status; a verdict nobody filled must never read as a success. */
    v->status = AMK_STATUS_NOT_RECORDED;
    v->valid = 0;
    v->correct = -1;
    v->latency_us = NAN;
    v->latency_kind = AMK_LAT_NONE;
    v->spread = NAN;
    v->sm_mhz = v->sm_mhz_min = v->sm_mhz_max = v->mem_mhz = NAN;
    v->power_w = v->temp_c = v->energy_uj = v->peer_us = v->vs_peer = NAN;
    v->energy_window_ms = NAN;
    v->energy_ticks = 0;
    v->predicted_us = NAN;
    v->bound_us = NAN;
    v->pct_of_roofline = NAN;
    v->compile_ms = NAN;
    v->cache_hit = -1;
    v->seed = 0;
    v->cost_s = NAN;
    v->setup_s = NAN;
}

/* Adds a number, or null when it is not finite. Returns 0 on allocation failure. */
static int add_num(cJSON *o, const char *key, double x)
{
    cJSON *item = isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
    return item && cJSON_AddItemToObject(o, key, item);
}

/* Adds a string (bounded by cap, since the verdict's buffers may lack a NUL after a
 * careless strncpy), or null when empty and null_if_empty is set. */
static int add_str(cJSON *o, const char *key, const char *s, size_t cap, int null_if_empty)
{
    size_t n = strnlen(s, cap);
    cJSON *item;
    if (n == 0 && null_if_empty) {
        item = cJSON_CreateNull();
    } else {
        char buf[1024];
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
        item = cJSON_CreateString(buf);
    }
    return item && cJSON_AddItemToObject(o, key, item);
}

static int add_tristate(cJSON *o, const char *key, int x)
{
    cJSON *item = x < 0 ? cJSON_CreateNull() : cJSON_CreateBool(x != 0);
    return item && cJSON_AddItemToObject(o, key, item);
}

cJSON *amk_verdict_json(const amk_verdict *v)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int rejected = v->status == AMK_STATUS_REJECTED;
    const char *kind = amk_latency_kind_name(v->latency_kind);
    int ok = cJSON_AddStringToObject(o, "status", amk_status_name(v->status)) != NULL;
    ok = ok && cJSON_AddBoolToObject(o, "valid", v->valid != 0) != NULL;
    ok = ok && (rejected ? add_str(o, "rejected_reason", v->reason, sizeof v->reason, 1)
                         : cJSON_AddNullToObject(o, "rejected_reason") != NULL);
    ok = ok && add_str(o, "reason", v->reason, sizeof v->reason, 1);
    ok = ok && add_tristate(o, "correct", v->correct);
    ok = ok && add_num(o, "latency_us", v->latency_us);
    ok = ok && add_str(o, "latency_kind", kind ? kind : "", 16, 1);
    ok = ok && add_num(o, "spread", v->spread);
    ok = ok && add_num(o, "predicted_us", v->predicted_us);
    ok = ok && add_num(o, "bound_us", v->bound_us);
    ok = ok && add_num(o, "pct_of_roofline", v->pct_of_roofline);
    ok = ok && add_num(o, "compile_ms", v->compile_ms);
    ok = ok && add_tristate(o, "cache_hit", v->cache_hit);
    ok = ok && add_num(o, "cost_s", v->cost_s);
    ok = ok && add_num(o, "setup_s", v->setup_s);
    /* cJSON numbers are doubles: a seed above 2^53 would be rounded and could no longer
     * reproduce the check, so it is written as its exact integer literal instead. */
    if (v->seed <= (UINT64_C(1) << 53)) {
        ok = ok && cJSON_AddNumberToObject(o, "seed", (double)v->seed) != NULL;
    } else {
        char buf[24];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->seed);
        ok = ok && cJSON_AddRawToObject(o, "seed", buf) != NULL;
    }
    ok = ok && add_str(o, "config_id", v->config_id, sizeof v->config_id, 0);
    ok = ok && add_str(o, "device", v->device, sizeof v->device, 0);
    ok = ok && add_str(o, "regime", v->regime, sizeof v->regime, 0);
    ok = ok && add_str(o, "clock_regime", v->clock_regime, sizeof v->clock_regime, 0);
    ok = ok && add_num(o, "sm_mhz", v->sm_mhz);
    ok = ok && add_num(o, "sm_mhz_min", v->sm_mhz_min);
    ok = ok && add_num(o, "sm_mhz_max", v->sm_mhz_max);
    ok = ok && add_num(o, "mem_mhz", v->mem_mhz);
    ok = ok && add_num(o, "power_w", v->power_w);
    ok = ok && add_num(o, "temp_c", v->temp_c);
    ok = ok && add_str(o, "throttle", v->throttle, sizeof v->throttle, 0);
    ok = ok && add_num(o, "energy_uj", v->energy_uj);
    ok = ok && add_num(o, "energy_window_ms", v->energy_window_ms);
    ok = ok && (v->energy_ticks > 0 ? cJSON_AddNumberToObject(o, "energy_ticks", v->energy_ticks)
                                    : cJSON_AddNullToObject(o, "energy_ticks")) != NULL;
    ok = ok && add_str(o, "peer", v->peer, sizeof v->peer, 0);
    ok = ok && add_num(o, "peer_us", v->peer_us);
    ok = ok && add_num(o, "vs_peer", v->vs_peer);
    ok = ok && add_str(o, "notes", v->notes, sizeof v->notes, 0);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *amk_verdict_to_json(const amk_verdict *v)
{
    cJSON *o = amk_verdict_json(v);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}
