/* Checking that a JSON tree is an export database of this version, naming the member at
 * fault. */
#include "export_int.h"

#include <string.h>

static int bad(amk_diag *d, const char *path, const char *what)
{
    return amk_diag_set(d, AMK_EPARSE, "not an amk export database: %s: %s", path, what);
}

static int check_entry(const cJSON *e, const char *path, amk_diag *d)
{
    const cJSON *x;
    if (!cJSON_IsObject(e))
        return bad(d, path, "not an object");
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "shape")))
        return bad(d, path, "shape is not a string");
    x = cJSON_GetObjectItemCaseSensitive(e, "dims");
    if (!cJSON_IsObject(x))
        return bad(d, path, "dims is not an object");
    const cJSON *y;
    cJSON_ArrayForEach(y, x) if (!cJSON_IsNumber(y) || y->valuedouble < 1)
        return bad(d, path, "dims: not a positive number");
    x = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (!cJSON_IsString(x) && !cJSON_IsNull(x))
        return bad(d, path, "dtype is not a string or null");
    x = cJSON_GetObjectItemCaseSensitive(e, "params");
    if (!cJSON_IsObject(x))
        return bad(d, path, "params is not an object");
    cJSON_ArrayForEach(y, x) if (!cJSON_IsNumber(y) && !cJSON_IsString(y))
        return bad(d, path, "params: value is not a number or string");
    if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "latency_us")))
        return bad(d, path, "latency_us is not a number");
    return AMK_OK;
}

static int check_kernels(const cJSON *node, const cJSON *info, const char *path, amk_diag *d)
{
    char p[512];
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(node, "kernels"), *k;
    snprintf(p, sizeof p, "%s.kernels", path);
    if (!cJSON_IsObject(ks))
        return bad(d, p, "missing or not an object");
    cJSON_ArrayForEach(k, ks)
    {
        int rc;
        snprintf(p, sizeof p, "%s.kernels.%s", path, k->string);
        if (!cJSON_GetObjectItemCaseSensitive(info, k->string))
            return bad(d, p, "kernel missing from kernel_info");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(k, "shapes"), *s;
        if ((rc = check_entry(cJSON_GetObjectItemCaseSensitive(k, "default"), p, d)))
            return rc;
        if (!cJSON_IsObject(sh) || !sh->child)
            return bad(d, p, "shapes is missing or empty");
        cJSON_ArrayForEach(s, sh) if ((rc = check_entry(s, p, d))) return rc;
    }
    return AMK_OK;
}

int amk__export_check(const cJSON *db, amk_diag *d)
{
    const cJSON *x, *y, *z;
    int rc;
    if (!cJSON_IsObject(db))
        return bad(d, "top level", "not a JSON object");
    x = cJSON_GetObjectItemCaseSensitive(db, "format");
    if (!cJSON_IsString(x) || strcmp(x->valuestring, AMK__EXPORT_DB_FORMAT))
        return bad(d, "format", "expected \"" AMK__EXPORT_DB_FORMAT "\"");
    x = cJSON_GetObjectItemCaseSensitive(db, "version");
    if (!cJSON_IsNumber(x) || x->valuedouble != AMK__EXPORT_DB_VERSION)
        return amk_diag_set(d, AMK_EPARSE, "unsupported export database version (this amk "
                                           "reads version %d)", AMK__EXPORT_DB_VERSION);
    x = cJSON_GetObjectItemCaseSensitive(db, "targets");
    if (!cJSON_IsArray(x))
        return bad(d, "targets", "not an array");
    cJSON_ArrayForEach(y, x)
    {
        static const char *const keys[] = {"key", "name", "vendor", "arch"};
        for (int i = 0; i < 4; i++)
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(y, keys[i])))
                return bad(d, "targets", "entry lacks key, name, vendor or arch");
    }
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(db, "kernel_info");
    if (!cJSON_IsObject(info))
        return bad(d, "kernel_info", "not an object");
    cJSON_ArrayForEach(x, info)
    {
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(x, "dims");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(x, "params");
        if (!cJSON_IsArray(dims) || !cJSON_IsObject(params))
            return bad(d, "kernel_info", "entry lacks dims (array) or params (object)");
        if (cJSON_GetArraySize(dims) > AMK__EXPORT_MAX_DIMS)
            return bad(d, "kernel_info", "too many dims");
        cJSON_ArrayForEach(y, dims) if (!cJSON_IsString(y))
            return bad(d, "kernel_info", "dims: not a string");
        cJSON_ArrayForEach(y, params) if (!cJSON_IsString(y) ||
                                          (strcmp(y->valuestring, "int") &&
                                           strcmp(y->valuestring, "string")))
            return bad(d, "kernel_info", "params: type is not \"int\" or \"string\"");
        if (!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(db, "kernels"),
                                              x->string))
            return bad(d, "kernels", "a kernel of kernel_info has no default");
    }
    if ((rc = check_kernels(db, info, "", d)))
        return rc;
    x = cJSON_GetObjectItemCaseSensitive(db, "vendors");
    if (!cJSON_IsObject(x))
        return bad(d, "vendors", "not an object");
    cJSON_ArrayForEach(y, x)
    {
        char p[512];
        snprintf(p, sizeof p, "vendors.%s", y->string);
        if ((rc = check_kernels(y, info, p, d)))
            return rc;
        const cJSON *archs = cJSON_GetObjectItemCaseSensitive(y, "archs");
        if (!cJSON_IsObject(archs))
            return bad(d, p, "archs is not an object");
        cJSON_ArrayForEach(z, archs)
        {
            char pa[512];
            snprintf(pa, sizeof pa, "%s.archs.%s", p, z->string);
            if ((rc = check_kernels(z, info, pa, d)))
                return rc;
            const cJSON *devs = cJSON_GetObjectItemCaseSensitive(z, "devices"), *w;
            if (!cJSON_IsObject(devs))
                return bad(d, pa, "devices is not an object");
            cJSON_ArrayForEach(w, devs)
            {
                char pd[512];
                snprintf(pd, sizeof pd, "%s.devices.%s", pa, w->string);
                if ((rc = check_kernels(w, info, pd, d)))
                    return rc;
            }
        }
    }
    return AMK_OK;
}

/* ---- lookup -------------------------------------------------------------------------------- */
