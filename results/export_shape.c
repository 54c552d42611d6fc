/* The rules every part of the export applies alike: shape text, the log2 distance unit,
 * dtype matching, device → vendor/arch, and finding a kernel in a database. */
#include "export_int.h"

#include <string.h>
#include <strings.h>

/* "M=4096,N=4096,dtype=f16" → dims (positive integers) and dtype. AMK_EINVAL otherwise. */
int amk__export_shape_parse(const char *text, amk__export_shape *s, amk_diag *d)
{
    memset(s, 0, sizeof *s);
    const char *p = text ? text : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len) {
            char item[192];
            if (len >= sizeof item)
                return amk_diag_set(d, AMK_EINVAL, "shape '%s': item too long", text);
            memcpy(item, p, len);
            item[len] = 0;
            char *eq = strchr(item, '=');
            if (!eq || eq == item || strlen(item) - (size_t)(eq - item) - 1 >= 32 ||
                (size_t)(eq - item) >= 32)
                return amk_diag_set(d, AMK_EINVAL, "shape '%s': '%s' is not NAME=VALUE", text,
                                    item);
            *eq = 0;
            const char *v = eq + 1;
            if (!strcmp(item, "dtype")) {
                snprintf(s->dtype, sizeof s->dtype, "%s", v);
            } else {
                int64_t x;
                if (amk_parse_i64(v, &x) != AMK_OK || x < 1)
                    return amk_diag_set(d, AMK_EINVAL,
                                        "shape '%s': dimension %s: '%s' is not a positive "
                                        "integer", text, item, v);
                for (int i = 0; i < s->n; i++)
                    if (!strcmp(s->name[i], item))
                        return amk_diag_set(d, AMK_EINVAL, "shape '%s': dimension %s twice",
                                            text, item);
                if (s->n == AMK__EXPORT_MAX_DIMS)
                    return amk_diag_set(d, AMK_EINVAL, "shape '%s': more than %d dimensions",
                                        text, AMK__EXPORT_MAX_DIMS);
                snprintf(s->name[s->n], sizeof s->name[0], "%s", item);
                s->val[s->n++] = x;
            }
        }
        p += len + (end ? 1 : 0);
    }
    return AMK_OK;
}

/* log2(x) in units of 1/65536, x >= 1: integer part from the top bit, 16 fraction bits by
 * repeated squaring. The generated header carries the same code, so ties break alike. */
long long amk__export_lg_fixed(long long x)
{
    long long e = 0, f = 0;
    unsigned long long u;
    double y;
    int i;
    if (x < 1)
        x = 1;
    for (u = (unsigned long long)x; u >> 1; u >>= 1)
        e++;
    y = (double)x / (double)(1ULL << e);
    for (i = 15; i >= 0; i--) {
        y = y * y;
        if (y >= 2.0) {
            y = y / 2.0;
            f |= 1LL << i;
        }
    }
    return e * 65536 + f;
}

int amk__export_dtype_matches(const char *query, const char *entry)
{
    return !query || !*query || !entry || !*entry || !strcmp(query, entry);
}

/* ---- device → vendor/arch ---------------------------------------------------------------- */

static int icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 0;
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

/* As amk_target_find: exact key or name, then arch, then a key inside the name. NULL when
 * none matches (the device is then under vendor "unknown"). */
const amk_export_target *amk__export_resolve(const amk_export_target *t, size_t n,
                                             const char *dev)
{
    if (!dev || !*dev)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(dev, t[i].key) || !strcasecmp(dev, t[i].name))
            return &t[i];
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(dev, t[i].arch))
            return &t[i];
    for (size_t i = 0; i < n; i++)
        if (icontains(dev, t[i].key))
            return &t[i];
    return NULL;
}

int amk__export_known_kernel(const cJSON *db, const char *kernel, const cJSON **info,
                             amk_diag *d)
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(db, "kernel_info"), *k;
    *info = kernel ? cJSON_GetObjectItemCaseSensitive(all, kernel) : NULL;
    if (*info)
        return AMK_OK;
    amk_sb sb = {0};
    cJSON_ArrayForEach(k, all) amk_sb_printf(&sb, "%s%s", sb.len ? ", " : "", k->string);
    amk_diag_set(d, AMK_ENOENT, "kernel '%s' is not in the database (it has: %s)",
                 kernel ? kernel : "", sb.p ? sb.p : "none");
    amk_sb_free(&sb);
    return AMK_ENOENT;
}

const cJSON *amk__export_kernel_node(const cJSON *node, const char *kernel)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "kernels"),
                                            kernel);
}
