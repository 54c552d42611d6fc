/* The JSON edge of cost_model's targets: measured ceilings files (`amk calibrate`) and a
 * target as `amk devices` lists it. The cost model itself reads only amk_target. */
#include "amk_cost_model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void amk_ceilings_path(const amk_target *t, char *out, size_t cap)
{
    char dir[3072];
    if (amk_fs_cache_dir(dir, sizeof dir) != AMK_OK)
        snprintf(dir, sizeof dir, "/tmp/amk");
    snprintf(out, cap, "%s/ceilings/%s.json", dir, t->key);
}

int amk_ceilings_save(const amk_target *t, const char *path, amk_diag *d)
{
    cJSON *root = cJSON_CreateObject(), *m = cJSON_CreateObject();
    if (!root || !m) {
        cJSON_Delete(root);
        cJSON_Delete(m);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    }
    char when[32];
    amk_time_iso(when);
    cJSON_AddStringToObject(root, "target", t->key);
    cJSON_AddStringToObject(root, "time", when);
    cJSON_AddNumberToObject(root, "bw_measured", t->bw_measured);
    for (int u = 0; u < AMK_UNIT_COUNT; u++)
        if (t->measured[u] > 0)
            cJSON_AddNumberToObject(m, amk_unit_name((amk_unit)u), t->measured[u]);
    cJSON_AddItemToObject(root, "measured", m);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    int rc = AMK_OK;
    if (slash && slash != dir) {
        *slash = '\0';
        rc = amk_fs_mkdir_p(dir, d);
    }
    if (rc == AMK_OK)
        rc = amk_fs_write_atomic(path, text, strlen(text), d);
    free(text);
    return rc;
}

/* A ceiling must be a positive finite number; anything else names the field. */
static int read_rate(const cJSON *item, const char *path, const char *field, double *out,
                     amk_diag *d)
{
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble <= 0)
        return amk_diag_set(d, AMK_EPARSE, "%s: %s: not a positive number", path, field);
    *out = item->valuedouble;
    return AMK_OK;
}

int amk_ceilings_load(amk_target *t, const char *path, amk_diag *d)
{
    char *text = NULL;
    int rc = amk_fs_read_all(path, &text, NULL, d);
    if (rc != AMK_OK)
        return rc;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return amk_diag_set(d, AMK_EPARSE, "%s: not a JSON object", path);
    }
    amk_target tmp = *t; /* all or nothing: t is untouched on error */
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(root, "target");
    if (!cJSON_IsString(key) || strcmp(key->valuestring, t->key) != 0) {
        rc = amk_diag_set(d, AMK_EPARSE, "%s: target: expected \"%s\"", path, t->key);
        goto out;
    }
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(root, "bw_measured");
    if (bw && !(cJSON_IsNumber(bw) && bw->valuedouble == 0) &&
        (rc = read_rate(bw, path, "bw_measured", &tmp.bw_measured, d)) != AMK_OK)
        goto out;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "measured"), *it;
    if (m && !cJSON_IsObject(m)) {
        rc = amk_diag_set(d, AMK_EPARSE, "%s: measured: not an object", path);
        goto out;
    }
    cJSON_ArrayForEach(it, m)
    {
        amk_unit u;
        char field[96];
        snprintf(field, sizeof field, "measured.%s", it->string);
        if (amk_unit_parse(it->string, &u) != AMK_OK || u == AMK_UNIT_NONE) {
            rc = amk_diag_set(d, AMK_EPARSE, "%s: %s: unknown unit", path, field);
            goto out;
        }
        if ((rc = read_rate(it, path, field, &tmp.measured[u], d)) != AMK_OK)
            goto out;
    }
    *t = tmp;
out:
    cJSON_Delete(root);
    return rc;
}

void amk_target_with_ceilings(const amk_target *t, amk_target *out)
{
    *out = *t;
    char path[4096];
    amk_ceilings_path(t, path, sizeof path);
    if (!amk_fs_exists(path))
        return;
    amk_diag d = {0};
    if (amk_ceilings_load(out, path, &d) != AMK_OK)
        amk_log(AMK_LOG_WARN, "ignoring measured ceilings: %s", d.msg);
}

char *amk_target_json(const amk_target *t, int calibrated)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", t->key);
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "vendor", t->vendor);
    cJSON_AddStringToObject(o, "arch", t->arch);
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
#define XX(name, doc) cJSON_AddNumberToObject(lim, #name, (double)t->limits.name);
    AMK_LIMITS_MAP(XX)
#undef XX
    cJSON_AddNumberToObject(o, "bandwidth_gbps", t->bw_peak / 1e9);
    if (t->bw_measured > 0)
        cJSON_AddNumberToObject(o, "bandwidth_measured_gbps", t->bw_measured / 1e9);
    else
        cJSON_AddNullToObject(o, "bandwidth_measured_gbps");
    cJSON *peak = cJSON_AddObjectToObject(o, "peak_tflops");
    cJSON *meas = cJSON_AddObjectToObject(o, "measured_tflops");
    for (int u = 0; u < AMK_UNIT_COUNT; u++) {
        if (u == AMK_UNIT_NONE)
            continue;
        if (t->peak[u] > 0)
            cJSON_AddNumberToObject(peak, amk_unit_name((amk_unit)u), t->peak[u] / 1e12);
        if (t->measured[u] > 0)
            cJSON_AddNumberToObject(meas, amk_unit_name((amk_unit)u), t->measured[u] / 1e12);
    }
    cJSON_AddNumberToObject(o, "launch_overhead_us", t->launch_overhead_us);
    cJSON_AddBoolToObject(o, "calibrated_here", calibrated);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}
