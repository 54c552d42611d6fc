/* The lookup over an export database: the device's level (device, arch, vendor, default)
 * and within it the nearest shape of the same dtype. docs/EXPORT.md. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Distance of the query q (all of the kernel's dims, in kernel_info order) to an entry. */
static long long distance(const cJSON *dims, const long long *q, const cJSON *entry)
{
    const cJSON *ed = cJSON_GetObjectItemCaseSensitive(entry, "dims"), *x;
    long long dist = 0;
    int i = 0;
    cJSON_ArrayForEach(x, dims)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ed, x->valuestring);
        if (!v) {
            dist += AMK__EXPORT_MISSING_DIM_PENALTY;
        } else {
            long long a = amk__export_lg_fixed(q[i]);
            long long b = amk__export_lg_fixed((long long)v->valuedouble);
            dist += a > b ? a - b : b - a;
        }
        i++;
    }
    return dist;
}

int amk__export_lookup(const cJSON *db, const char *kernel, const char *device_name,
                      const char *shape, const char *dtype, cJSON **out, amk_diag *d)
{
    const cJSON *info, *x;
    int rc;
    if ((rc = amk__export_check(db, d)) || (rc = amk__export_known_kernel(db, kernel, &info, d)))
        return rc;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(info, "dims");
    amk__export_shape s;
    if ((rc = amk__export_shape_parse(shape, &s, d)))
        return rc;
    if (dtype)
        snprintf(s.dtype, sizeof s.dtype, "%s", dtype);
    long long q[AMK__EXPORT_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < s.n; i++) {
        int found = 0;
        cJSON_ArrayForEach(x, dims) found |= !strcmp(x->valuestring, s.name[i]);
        if (!found) {
            amk_sb sb = {0};
            cJSON_ArrayForEach(x, dims) amk_sb_printf(&sb, "%s%s", sb.len ? ", " : "",
                                                      x->valuestring);
            amk_diag_set(d, AMK_EINVAL, "shape '%s': unknown dimension %s (kernel %s has %s)",
                         shape, s.name[i], kernel, sb.p ? sb.p : "none");
            amk_sb_free(&sb);
            return AMK_EINVAL;
        }
    }
    cJSON_ArrayForEach(x, dims)
    {
        int i;
        for (i = 0; i < s.n && strcmp(s.name[i], x->valuestring); i++)
            ;
        if (i == s.n)
            return amk_diag_set(d, AMK_EINVAL, "shape '%s': missing dimension %s of kernel %s",
                                shape ? shape : "", x->valuestring, kernel);
        q[nd++] = s.val[i];
    }

    /* Level: the device itself, else its arch, else its vendor, else the default. */
    const cJSON *node = NULL, *vo, *ao, *dv;
    const char *level = "default", *mv = NULL, *ma = NULL, *md = NULL;
    cJSON_ArrayForEach(vo, cJSON_GetObjectItemCaseSensitive(db, "vendors"))
    {
        cJSON_ArrayForEach(ao, cJSON_GetObjectItemCaseSensitive(vo, "archs"))
        {
            cJSON_ArrayForEach(dv, cJSON_GetObjectItemCaseSensitive(ao, "devices"))
            {
                if (!node && device_name && !strcasecmp(dv->string, device_name) &&
                    amk__export_kernel_node(dv, kernel)) {
                    node = amk__export_kernel_node(dv, kernel);
                    level = "device";
                    mv = vo->string, ma = ao->string, md = dv->string;
                }
            }
        }
    }
    if (!node) {
        const cJSON *tj = cJSON_GetObjectItemCaseSensitive(db, "targets");
        size_t nt = (size_t)cJSON_GetArraySize(tj), i = 0;
        amk_export_target *t = calloc(nt + 1, sizeof *t);
        if (!t)
            return amk_diag_set(d, AMK_ENOMEM, "out of memory");
        cJSON_ArrayForEach(x, tj)
        {
            t[i].key = cJSON_GetObjectItemCaseSensitive(x, "key")->valuestring;
            t[i].name = cJSON_GetObjectItemCaseSensitive(x, "name")->valuestring;
            t[i].vendor = cJSON_GetObjectItemCaseSensitive(x, "vendor")->valuestring;
            t[i].arch = cJSON_GetObjectItemCaseSensitive(x, "arch")->valuestring;
            i++;
        }
        const amk_export_target *r = amk__export_resolve(t, nt, device_name);
        if (r) {
            vo = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(db, "vendors"),
                                                  r->vendor);
            ao = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vo, "archs"),
                                                  r->arch);
            if (ao && amk__export_kernel_node(ao, kernel)) {
                node = amk__export_kernel_node(ao, kernel);
                level = "arch";
                mv = vo->string, ma = ao->string;
            } else if (vo && amk__export_kernel_node(vo, kernel)) {
                node = amk__export_kernel_node(vo, kernel);
                level = "vendor";
                mv = vo->string;
            }
        }
        free(t);
    }
    if (!node)
        node = amk__export_kernel_node(db, kernel);

    /* Nearest shape of the same dtype within the level; its default when there is none. */
    const cJSON *best = NULL;
    long long bestd = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(node, "shapes"))
    {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(x, "dtype");
        if (!amk__export_dtype_matches(s.dtype, cJSON_IsString(dt) ? dt->valuestring : NULL))
            continue;
        long long dist = distance(dims, q, x);
        if (!best || dist < bestd) {
            best = x;
            bestd = dist;
        }
    }
    int nearest = !best || bestd != 0;
    const cJSON *hit = best ? best : cJSON_GetObjectItemCaseSensitive(node, "default");

    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kernel", kernel);
    if (device_name)
        cJSON_AddStringToObject(o, "device", device_name);
    else
        cJSON_AddNullToObject(o, "device");
    cJSON *qj = cJSON_AddObjectToObject(o, "query");
    for (int i = 0; i < nd; i++)
        cJSON_AddNumberToObject(qj, cJSON_GetArrayItem(dims, i)->valuestring, (double)q[i]);
    if (s.dtype[0])
        cJSON_AddStringToObject(qj, "dtype", s.dtype);
    else
        cJSON_AddNullToObject(qj, "dtype");
    cJSON *m = cJSON_AddObjectToObject(o, "matched");
#define ADD_STR_OR_NULL(obj, key, val)                 \
    do {                                               \
        if (val)                                       \
            cJSON_AddStringToObject(obj, key, val);    \
        else                                           \
            cJSON_AddNullToObject(obj, key);           \
    } while (0)
    ADD_STR_OR_NULL(m, "vendor", mv);
    ADD_STR_OR_NULL(m, "arch", ma);
    ADD_STR_OR_NULL(m, "device", md);
#undef ADD_STR_OR_NULL
    cJSON_AddStringToObject(m, "shape",
                            cJSON_GetObjectItemCaseSensitive(hit, "shape")->valuestring);
    cJSON_AddStringToObject(m, "level", level);
    cJSON_AddBoolToObject(m, "nearest", nearest);
    if (best)
        cJSON_AddNumberToObject(m, "distance", (double)bestd / 65536.0);
    else
        cJSON_AddNullToObject(m, "distance");
    static const char *const copy[] = {"latency_us", "latency_kind", "config_id", "device",
                                       "trial", "source"};
    cJSON *tuned = cJSON_AddObjectToObject(m, "tuned");
    for (size_t i = 0; i < sizeof copy / sizeof *copy; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hit, copy[i]);
        if (v)
            cJSON_AddItemToObject(tuned, copy[i], cJSON_Duplicate(v, 1));
    }
    cJSON_AddItemToObject(o, "config",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(hit, "params"), 1));
    if (!cJSON_GetObjectItemCaseSensitive(o, "config")) {
        cJSON_Delete(o);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    }
    *out = o;
    return AMK_OK;
}
