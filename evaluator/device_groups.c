/* GPUs grouped by model: a search keys its results by device model, so a multi-GPU run is
 * one search per model, each over that model's devices. */
#include "amk_evaluator.h"

#include <stdio.h>
#include <string.h>

/* The backend whose devices `backend` would run on: itself when it has devices, for "auto"
 * the first backend that has (auto prefers a device), else NULL. */
static const amk_backend_type *with_devices(const char *backend)
{
    if (strcmp(backend, "auto") != 0) {
        const amk_backend_type *t = amk_backend_find(backend);
        return t && t->devices ? t : NULL;
    }
    for (int i = 0; amk_backends[i]; i++)
        if (amk_backends[i]->devices)
            return amk_backends[i];
    return NULL;
}

int amk_device_groups(const char *backend, const int *want, int nwant, amk_device_group *g,
                      int *ng, amk_diag *d)
{
    *ng = 0;
    const amk_backend_type *bt = with_devices(backend);
    if (!bt)
        return AMK_OK;
    /* One device named on the gpu backend is one model: nothing to split. Asking would cost
     * a run worker and a driver start-up that opening the evaluator pays again (and it says
     * when that device does not answer). */
    if (nwant == 1 && strcmp(backend, "gpu") == 0)
        return AMK_OK;
    amk_gpu_device all[AMK_MAX_DEVICES];
    int n = 0;
    amk_diag quiet;
    amk_diag_clear(&quiet);
    if (bt->devices(all, AMK_MAX_DEVICES, &n, &quiet) != AMK_OK)
        return AMK_OK; /* none answers: creating the evaluator says why */
    if (n > AMK_MAX_DEVICES)
        n = AMK_MAX_DEVICES;
    if (nwant > AMK_MAX_DEVICES)
        return amk_diag_set(d, AMK_EINVAL, "--devices: at most %d devices", AMK_MAX_DEVICES);
    int use[AMK_MAX_DEVICES], nuse = 0;
    for (int k = 0; k < (nwant > 0 ? nwant : n); k++) {
        int found = nwant > 0 ? -1 : k;
        for (int j = 0; j < n && found < 0; j++)
            if (all[j].index == want[k])
                found = j;
        if (found < 0) {
            amk_sb sb = {0};
            for (int j = 0; j < n; j++)
                amk_sb_printf(&sb, "%s%d %s", j ? ", " : "", all[j].index, all[j].name);
            int rc = amk_diag_set(d, AMK_EINVAL, "--devices: device %d does not answer "
                                  "(visible: %s; see `amk devices`)", want[k],
                                  sb.p ? sb.p : "none");
            amk_sb_free(&sb);
            return rc;
        }
        use[nuse++] = found;
    }
    for (int k = 0; k < nuse; k++) {
        const amk_gpu_device *dv = &all[use[k]];
        int j = 0;
        while (j < *ng && (strcmp(g[j].name, dv->name) != 0 || strcmp(g[j].arch, dv->arch) != 0))
            j++;
        if (j == *ng) {
            memset(&g[j], 0, sizeof g[j]);
            snprintf(g[j].name, sizeof g[j].name, "%s", dv->name);
            snprintf(g[j].arch, sizeof g[j].arch, "%s", dv->arch);
            (*ng)++;
        }
        g[j].idx[g[j].n++] = dv->index;
    }
    return AMK_OK;
}

void amk_device_groups_describe(const amk_device_group *g, int ng, char *out, size_t cap)
{
    amk_sb sb = {0};
    for (int gi = 0; gi < ng; gi++) {
        amk_sb_printf(&sb, "%sdevice%s ", gi ? "; " : "", g[gi].n > 1 ? "s" : "");
        for (int j = 0; j < g[gi].n; j++)
            amk_sb_printf(&sb, "%s%d", j ? "," : "", g[gi].idx[j]);
        amk_sb_printf(&sb, ": %s", g[gi].name);
    }
    snprintf(out, cap, "%s", sb.p ? sb.p : "");
    amk_sb_free(&sb);
}

int amk_devices_parse(const char *text, int *out, int *n, amk_diag *d)
{
    const char *p = text;
    *n = 0;
    if (!strcmp(text, "all"))
        return AMK_OK;
    for (;;) {
        char tok[32];
        size_t len = strcspn(p, ",");
        int64_t v;
        if (len == 0 || len >= sizeof tok)
            return amk_diag_set(d, AMK_EINVAL, "'%s' is not a list of device indices (e.g. "
                                "0,1,3) or all", text);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (amk_parse_i64(tok, &v) != AMK_OK || v < 0 || v > 1023)
            return amk_diag_set(d, AMK_EINVAL, "'%s' in '%s' is not a device index (0..1023)",
                                tok, text);
        for (int k = 0; k < *n; k++)
            if (out[k] == (int)v)
                return amk_diag_set(d, AMK_EINVAL, "device %d is listed twice in '%s'", (int)v,
                                    text);
        if (*n >= AMK_MAX_DEVICES)
            return amk_diag_set(d, AMK_EINVAL, "more than %d devices in '%s'", AMK_MAX_DEVICES,
                                text);
        out[(*n)++] = (int)v;
        if (!p[len])
            return AMK_OK;
        p += len + 1;
    }
}
