/* best.json: the current best config of a run, replaced atomically every time the
 * incumbent changes, so a kill at any moment leaves a complete, usable answer. */
#include "results_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *str_or_null(const char *s)
{
    return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* The config as JSON: config_json parsed, else {kernel, shape, params} rebuilt from the
 * row (params kept as a string when it is not JSON). NULL on allocation failure or when
 * config_json is not JSON. */
static cJSON *config_of(const amk_row *best, const char *config_json)
{
    if (config_json)
        return cJSON_Parse(config_json);
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return NULL;
    cJSON_AddStringToObject(c, "kernel", best->kernel);
    cJSON_AddStringToObject(c, "shape", best->shape);
    cJSON *p = cJSON_Parse(best->params);
    if (!p)
        p = cJSON_CreateString(best->params);
    if (!p || !cJSON_AddItemToObject(c, "params", p)) {
        cJSON_Delete(p);
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

int amk_best_write(const char *path, const amk_row *best, const char *config_json,
                   amk_diag *d)
{
    if (!path || !best)
        return amk_diag_set(d, AMK_EINVAL, "amk_best_write: NULL argument");
    if (config_json) { /* refused before anything is written; cJSON says no more */
        cJSON *probe = cJSON_Parse(config_json);
        if (!probe)
            return amk_diag_set(d, AMK_EINVAL, "%s: the config is not JSON (or out of memory)",
                                path);
        cJSON_Delete(probe);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON *cfg = o ? config_of(best, config_json) : NULL;
    char *text = NULL;
    int rc = AMK_ENOMEM;
    if (!cfg)
        goto done;
    cJSON_AddItemToObject(o, "kernel", cJSON_CreateString(best->kernel));
    cJSON_AddItemToObject(o, "shape", cJSON_CreateString(best->shape));
    cJSON_AddItemToObject(o, "device", str_or_null(best->device));
    if (!cJSON_AddItemToObject(o, "config", cfg)) {
        cJSON_Delete(cfg);
        goto done;
    }
    cJSON_AddItemToObject(o, "config_id", str_or_null(best->config_id));
    cJSON_AddItemToObject(o, "latency_us", num_or_null(best->latency_us));
    cJSON_AddItemToObject(o, "latency_kind",
                          str_or_null(amk_latency_kind_name(best->latency_kind)));
    cJSON_AddItemToObject(o, "spread", num_or_null(best->spread));
    cJSON_AddItemToObject(o, "trial", cJSON_CreateNumber((double)best->trial));
    cJSON_AddItemToObject(o, "time", str_or_null(best->time));
    cJSON_AddItemToObject(o, "objective", cJSON_CreateString(amk_objective_name(best->objective)));
    cJSON_AddItemToObject(o, "energy_uj", num_or_null(best->energy_uj));
    cJSON_AddItemToObject(o, "energy_window_ms", num_or_null(best->energy_window_ms));
    cJSON_AddItemToObject(o, "energy_ticks",
                          num_or_null(best->energy_ticks > 0 ? best->energy_ticks : NAN));
    /* Every member above is present unless an allocation failed. */
    if (cJSON_GetArraySize(o) != 14 || !(text = cJSON_Print(o)))
        goto done;
    size_t n = strlen(text);
    char *with_nl = realloc(text, n + 2);
    if (!with_nl)
        goto done;
    text = with_nl;
    text[n] = '\n';
    text[n + 1] = '\0';
    rc = amk_fs_write_atomic(path, text, n + 1, d);
    free(text);
    cJSON_Delete(o);
    return rc;
done:
    free(text);
    cJSON_Delete(o);
    return amk_diag_set(d, rc, "%s: out of memory", path);
}

void amk_best_path_for_model(const char *best, const char *model, char *out, size_t cap)
{
    char slug[64];
    size_t n = 0;
    for (const char *p = model; *p && n + 1 < sizeof slug; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c))
            slug[n++] = (char)tolower(c);
        else if (n && slug[n - 1] != '-')
            slug[n++] = '-';
    }
    while (n && slug[n - 1] == '-')
        n--;
    slug[n] = '\0';
    const char *base = strrchr(best, '/');
    const char *dot = strrchr(base ? base : best, '.');
    if (dot && dot != (base ? base + 1 : best))
        snprintf(out, cap, "%.*s.%s%s", (int)(dot - best), best, slug, dot);
    else
        snprintf(out, cap, "%s.%s", best, slug);
}
