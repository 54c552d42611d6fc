/* Shapes of a spec: named shapes, parsing "M=4096,dtype=bf16", the canonical text and the
 * JSON form of results files. */
#include "spec_load_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* shapes */

int amk_spec_n_shapes(const amk_spec *s) { return s->nshapes; }

const char *amk_spec_shape_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nshapes ? s->shape_names[i] : NULL;
}

void amk_spec_shape(const amk_spec *s, int i, amk_shape *out)
{
    *out = s->shapes[i >= 0 && i < s->nshapes ? i : 0];
}

static int dim_index(const amk_spec *s, const char *name, size_t len)
{
    for (int i = 0; i < s->ndims; i++)
        if (amk__ld_name_eq(s->dims[i], name, len))
            return i;
    return -1;
}

static int dtype_index_in(const amk_spec *s, const char *name, size_t len)
{
    for (int i = 0; i < s->ndtypes; i++)
        if (amk__ld_name_eq(amk__dtype_names[s->dtypes[i]], name, len))
            return i;
    return -1;
}

static void list_dims(const amk_spec *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < s->ndims; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", s->dims[i]);
}

static void list_dtypes(const amk_spec *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < s->ndtypes; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "",
                 amk__dtype_names[s->dtypes[i]]);
}

int amk_shape_parse(const amk_spec *s, const char *text, amk_shape *out, amk_diag *d)
{
    if (!text)
        return amk_diag_set(d, AMK_EINVAL, "shape text is NULL");
    while (isspace((unsigned char)*text))
        text++;
    for (int i = 0; i < s->nshapes; i++)
        if (!strcmp(text, s->shape_names[i])) {
            *out = s->shapes[i];
            return AMK_OK;
        }
    amk_shape sh = s->shapes[0];
    const char *p = text;
    uint64_t given = 0; /* bit di: dim di was named (bit 63: dtype) */
    if (!*p)
        return amk_diag_set(d, AMK_EPARSE, "empty shape (kernel %s)", s->name);
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t tl = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', tl);
        if (!eq) {
            if (!strchr(text, '='))
                return amk_diag_set(d, AMK_ENOENT, "kernel %s has no shape named '%s'",
                                    s->name, text);
            return amk_diag_set(d, AMK_EPARSE, "shape '%s': expected NAME=VALUE, got '%.*s'",
                                text, (int)tl, p);
        }
        const char *k = p, *ke = eq;
        while (k < ke && isspace((unsigned char)*k)) k++;
        while (ke > k && isspace((unsigned char)ke[-1])) ke--;
        const char *v = eq + 1, *ve = p + tl;
        while (v < ve && isspace((unsigned char)*v)) v++;
        while (ve > v && isspace((unsigned char)ve[-1])) ve--;
        char val[64];
        snprintf(val, sizeof val, "%.*s", (int)(ve - v < 63 ? ve - v : 63), v);
        int bit = amk__ld_name_eq("dtype", k, (size_t)(ke - k))
                      ? 63
                      : dim_index(s, k, (size_t)(ke - k));
        if (bit >= 0 && (given >> bit & 1)) /* refused, as a JSON shape's duplicate key is */
            return amk_diag_set(d, AMK_EPARSE, "shape '%s': dim '%.*s' given twice", text,
                                (int)(ke - k), k);
        if (bit >= 0)
            given |= (uint64_t)1 << bit;
        if (bit == 63) {
            int t = dtype_index_in(s, v, (size_t)(ve - v));
            if (t < 0) {
                char l[256];
                list_dtypes(s, l, sizeof l);
                return amk_diag_set(d, AMK_EPARSE, "shape '%s': dtype '%s' is not supported by "
                                    "kernel %s (%s)", text, val, s->name, l);
            }
            sh.dtype = t;
        } else {
            int di = dim_index(s, k, (size_t)(ke - k));
            if (di < 0) {
                char l[256];
                list_dims(s, l, sizeof l);
                return amk_diag_set(d, AMK_EPARSE, "shape '%s': unknown dim '%.*s' (kernel %s "
                                    "has %s, dtype)", text, (int)(ke - k), k, s->name, l);
            }
            int64_t x;
            if ((size_t)(ve - v) >= sizeof val || amk_parse_i64(val, &x) || x < 1 ||
                x > JSON_INT_MAX)
                return amk_diag_set(d, AMK_EPARSE, "shape '%s': %s=%s is not an integer in 1..2^53",
                                    text, s->dims[di], val);
            sh.dims[di] = x;
        }
        p += tl;
        if (*p == ',')
            p++;
    }
    *out = sh;
    return AMK_OK;
}

void amk_shape_format(const amk_spec *s, const amk_shape *sh, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = '\0';
    size_t n = 0;
    for (int i = 0; i < s->ndims && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s=%lld,", s->dims[i],
                              (long long)sh->dims[i]);
    if (n < cap)
        snprintf(out + n, cap - n, "dtype=%s",
                 sh->dtype >= 0 && sh->dtype < s->ndtypes ? amk__dtype_names[s->dtypes[sh->dtype]]
                                                          : "?");
}

int amk_shape_from_json(const amk_spec *s, const cJSON *obj, amk_shape *out, amk_diag *d)
{
    if (!cJSON_IsObject(obj))
        return amk_diag_set(d, AMK_ECONFIG, "shape: expected an object of dim: value, got %s",
                            amk__ld_json_type(obj));
    amk_shape sh = s->shapes[0];
    for (const cJSON *c = obj->child; c; c = c->next) {
        for (const cJSON *p = obj->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return amk_diag_set(d, AMK_ECONFIG, "shape: duplicate key '%s'", c->string);
        if (!strcmp(c->string, "dtype")) {
            int t = cJSON_IsString(c) ? dtype_index_in(s, c->valuestring,
                                                       strlen(c->valuestring)) : -1;
            if (t < 0) {
                char l[256];
                list_dtypes(s, l, sizeof l);
                return amk_diag_set(d, AMK_ECONFIG, "shape.dtype: expected one of kernel %s's "
                                    "dtypes (%s)", s->name, l);
            }
            sh.dtype = t;
            continue;
        }
        int di = dim_index(s, c->string, strlen(c->string));
        if (di < 0) {
            char l[256];
            list_dims(s, l, sizeof l);
            return amk_diag_set(d, AMK_ECONFIG, "shape: unknown dim '%s' (kernel %s has %s, "
                                "dtype)", c->string, s->name, l);
        }
        int64_t x;
        if (!amk__ld_json_int(c, 1, JSON_INT_MAX, &x))
            return amk_diag_set(d, AMK_ECONFIG, "shape.%s: expected an integer in 1..2^53",
                                c->string);
        sh.dims[di] = x;
    }
    *out = sh;
    return AMK_OK;
}

cJSON *amk_shape_to_json(const amk_spec *s, const amk_shape *sh)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    for (int i = 0; i < s->ndims; i++)
        if (!cJSON_AddNumberToObject(o, s->dims[i], (double)sh->dims[i]))
            goto fail;
    if (!cJSON_AddStringToObject(o, "dtype", amk_spec_dtype_name(s, sh->dtype) ?
                                 amk_spec_dtype_name(s, sh->dtype) : "?"))
        goto fail;
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}
