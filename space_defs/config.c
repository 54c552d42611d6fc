/* Configs: parsing from JSON (strictly: every value must be a declared choice), the
 * canonical form and config_id, compiler defines, and evaluation of a config's
 * restrictions, launch geometry and cost terms. */
#include "space_defs_int.h"

#include "amk_record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void amk_config_default(const amk_spec *s, const amk_shape *sh, amk_config *out)
{
    memset(out, 0, sizeof *out);
    out->spec = s;
    out->shape = sh ? *sh : s->shapes[0];
    for (int i = 0; i < s->nparams; i++)
        out->choice[i] = (uint8_t)s->params[i].def;
}

int64_t amk_config_param(const amk_config *c, int i)
{
    const amk_spec *s = c->spec;
    if (i < 0 || i >= s->nparams || c->choice[i] >= s->params[i].n)
        return 0;
    return s->params[i].values[c->choice[i]];
}

int amk_config_equal(const amk_config *a, const amk_config *b)
{
    if (a->spec != b->spec)
        return 0;
    const amk_spec *s = a->spec;
    if (!s)
        return 1;
    if (a->shape.dtype != b->shape.dtype)
        return 0;
    for (int i = 0; i < s->ndims; i++)
        if (a->shape.dims[i] != b->shape.dims[i])
            return 0;
    for (int i = 0; i < s->nparams; i++)
        if (a->choice[i] != b->choice[i])
            return 0;
    return 1;
}

int amk__config_choices_ok(const amk_config *c, amk_diag *d)
{
    if (!c || !c->spec)
        return amk_diag_set(d, AMK_EINVAL, "config has no spec");
    const amk_spec *s = c->spec;
    for (int i = 0; i < s->nparams; i++)
        if (c->choice[i] >= s->params[i].n)
            return amk_diag_set(d, AMK_ECONFIG, "param %s: choice index %d out of range (%d "
                                "choices)", s->params[i].name, c->choice[i], s->params[i].n);
    if (c->shape.dtype < 0 || c->shape.dtype >= s->ndtypes)
        return amk_diag_set(d, AMK_ECONFIG, "shape: dtype index %d out of range",
                            c->shape.dtype);
    for (int i = 0; i < s->ndims; i++)
        if (c->shape.dims[i] < 1)
            return amk_diag_set(d, AMK_ECONFIG, "shape: %s=%lld is not >= 1", s->dims[i],
                                (long long)c->shape.dims[i]);
    return AMK_OK;
}

/* "32, 64, 128" or "\"row\", \"col\"" for error messages. */
static void list_choices(const amk__param *p, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int j = 0; j < p->n; j++) {
        size_t l = strlen(buf);
        if (p->is_enum)
            snprintf(buf + l, cap - l, "%s\"%s\"", j ? ", " : "", p->labels[j]);
        else
            snprintf(buf + l, cap - l, "%s%lld", j ? ", " : "", (long long)p->values[j]);
    }
}

/* Describes a JSON value for a message: strings quoted (truncated), numbers with %.17g. */
static void describe(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsString(v))
        snprintf(buf, cap, "\"%.80s\"", v->valuestring);
    else if (cJSON_IsNumber(v) && v->valuestring) /* as written: 64.0, 1.28e2 */
        snprintf(buf, cap, "%.80s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, cap, "%.15g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, cap, "null");
    else if (cJSON_IsArray(v))
        snprintf(buf, cap, "an array");
    else
        snprintf(buf, cap, "an object");
}

/* fill != 0: a param obj does not name takes its default (counted in *filled) instead of
 * being an error. */
static int params_from_json(const amk_spec *s, const cJSON *obj, uint8_t *choice, int fill,
                            int *filled, amk_diag *d)
{
    if (!cJSON_IsObject(obj))
        return amk_diag_set(d, AMK_ECONFIG, "params: expected an object of name: value");
    int seen[AMK_MAX_PARAMS] = {0};
    for (const cJSON *c = obj->child; c; c = c->next) {
        int i = amk_spec_param_index(s, c->string);
        if (i < 0) {
            char names[1024] = "";
            for (int k = 0; k < s->nparams; k++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         k ? ", " : "", s->params[k].name);
            return amk_diag_set(d, AMK_ECONFIG, "params: unknown param '%.100s' (kernel %s has "
                                "%s)", c->string, s->name, names);
        }
        if (seen[i])
            return amk_diag_set(d, AMK_ECONFIG, "params: %s given twice", c->string);
        seen[i] = 1;
        const amk__param *p = &s->params[i];
        int hit = -1;
        for (int j = 0; j < p->n && hit < 0; j++) {
            if (p->is_enum) {
                if (cJSON_IsString(c) && !strcmp(c->valuestring, p->labels[j]))
                    hit = j;
            } else if (amk_json_integer_text(c) && isfinite(c->valuedouble) &&
                       c->valuedouble == (double)p->values[j]) {
                /* 64.0 and 1.28e2 are not integers as written: refused like 64.5 */
                hit = j; /* values are int32, so the double comparison is exact */
            }
        }
        if (hit < 0) {
            char got[128], allowed[1024];
            describe(c, got, sizeof got);
            list_choices(p, allowed, sizeof allowed);
            return amk_diag_set(d, AMK_ECONFIG, "params.%s: %s is not one of the allowed "
                                "choices (%s)", p->name, got, allowed);
        }
        choice[i] = (uint8_t)hit;
    }
    for (int i = 0; i < s->nparams; i++)
        if (!seen[i] && fill) {
            choice[i] = (uint8_t)s->params[i].def;
            ++*filled;
        } else if (!seen[i]) {
            char allowed[1024];
            list_choices(&s->params[i], allowed, sizeof allowed);
            return amk_diag_set(d, AMK_ECONFIG, "params: missing param %s (choices: %s)",
                                s->params[i].name, allowed);
        }
    return AMK_OK;
}

int amk__params_from_json(const amk_spec *s, const cJSON *obj, uint8_t *choice, amk_diag *d)
{
    return params_from_json(s, obj, choice, 0, NULL, d);
}

int amk_config_from_json(const amk_registry *r, const cJSON *obj, amk_config *out, amk_diag *d)
{
    if (!cJSON_IsObject(obj))
        return amk_diag_set(d, AMK_ECONFIG, "config: expected a JSON object {kernel, shape, "
                            "params}");
    const cJSON *kernel = NULL, *shape = NULL, *params = NULL;
    for (const cJSON *c = obj->child; c; c = c->next) {
        const cJSON **slot = NULL;
        if (!strcmp(c->string, "kernel")) slot = &kernel;
        else if (!strcmp(c->string, "shape")) slot = &shape;
        else if (!strcmp(c->string, "params")) slot = &params;
        else if (!strcmp(c->string, "config_id")) {
            /* informational (printed by propose); ignored so an edited config still parses */
            if (!cJSON_IsString(c))
                return amk_diag_set(d, AMK_ECONFIG, "config: config_id must be a string");
            continue;
        } else {
            return amk_diag_set(d, AMK_ECONFIG, "config: unknown key '%.100s' (expected "
                                "kernel, shape, params)", c->string);
        }
        if (*slot)
            return amk_diag_set(d, AMK_ECONFIG, "config: duplicate key '%s'", c->string);
        *slot = c;
    }
    if (!kernel)
        return amk_diag_set(d, AMK_ECONFIG, "config: missing 'kernel'");
    if (!cJSON_IsString(kernel))
        return amk_diag_set(d, AMK_ECONFIG, "config: 'kernel' must be a string");
    const amk_spec *s = r ? amk_registry_find(r, kernel->valuestring) : NULL;
    if (!s) {
        char names[512] = "";
        for (int i = 0; r && i < amk_registry_count(r); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     amk_spec_name(amk_registry_at(r, i)));
        return amk_diag_set(d, AMK_ENOENT, "config: unknown kernel '%.100s' (known: %s; add "
                            "your own with --spec-dir DIR)", kernel->valuestring,
                            names[0] ? names : "none");
    }
    if (!shape)
        return amk_diag_set(d, AMK_ECONFIG, "config: missing 'shape'");
    if (!params)
        return amk_diag_set(d, AMK_ECONFIG, "config: missing 'params'");
    amk_config c;
    amk_config_default(s, NULL, &c);
    int rc = amk_shape_from_json(s, shape, &c.shape, d);
    if (rc)
        return rc;
    rc = amk__params_from_json(s, params, c.choice, d);
    if (rc)
        return rc;
    *out = c;
    return AMK_OK;
}

/* One config document: a config, or the whole output of `amk propose` (its "config"). */
static int config_doc(const amk_registry *r, const char *name, const cJSON *obj,
                      amk_config *out, amk_diag *d)
{
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(obj, "config");
    if (!cJSON_GetObjectItemCaseSensitive(obj, "params") && inner) {
        if (!cJSON_IsObject(inner))
            return amk_diag_set(d, AMK_ECONFIG, "%s: config: expected an object", name);
        obj = inner;
    }
    int e = amk_config_from_json(r, obj, out, d);
    if (e != AMK_OK) {
        if (!d->msg[0])
            amk_diag_set(d, e, "%s", amk_strerror(e));
        amk_diag_prefix(d, "%s", name);
    }
    return e;
}

int amk_configs_read(const amk_registry *r, const char *path, int many, amk_config **out,
                     size_t *n, amk_diag *d)
{
    *out = NULL;
    *n = 0;
    int from_stdin = !strcmp(path, "-");
    const char *name = from_stdin ? "<stdin>" : path;
    char *text = NULL;
    size_t len = 0;
    /* stdin may be a pipe; a named file must be a regular one (a FIFO would block, a device
     * would never end); both are read up to AMK_FS_READ_MAX bytes. */
    int e = from_stdin ? amk_fs_read_fd(0, name, &text, &len, d)
                       : amk_fs_read_all(path, &text, &len, d);
    if (e == AMK_ENOENT)
        return amk_diag_set(d, e, "cannot read config %s: no such file", name);
    if (e != AMK_OK)
        return e;
    cJSON *doc = NULL;
    e = amk_json_parse(name, text, len, &doc, d);
    free(text);
    if (e != AMK_OK)
        return e;
    int is_array = many && cJSON_IsArray(doc);
    size_t count = is_array ? (size_t)cJSON_GetArraySize(doc) : 1;
    if (!is_array && !cJSON_IsObject(doc))
        e = amk_diag_set(d, AMK_ECONFIG, "%s: expected a JSON object {\"kernel\", \"shape\", "
                         "\"params\"}%s or the output of `amk propose`", name,
                         many ? ", an array of them" : "");
    else if (!(*out = calloc(count ? count : 1, sizeof **out)))
        e = amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", name);
    for (size_t i = 0; e == AMK_OK && i < count; i++) {
        char item[4200];
        snprintf(item, sizeof item, is_array ? "%s: config %zu" : "%s", name, i);
        e = config_doc(r, item, is_array ? cJSON_GetArrayItem(doc, (int)i) : doc, &(*out)[i], d);
    }
    cJSON_Delete(doc);
    if (e != AMK_OK) {
        free(*out);
        *out = NULL;
        return e;
    }
    *n = count;
    return AMK_OK;
}

int amk_config_parse(const amk_registry *r, const char *text, amk_config *out, amk_diag *d)
{
    if (!text)
        return amk_diag_set(d, AMK_EINVAL, "config text is NULL");
    cJSON *j = NULL;
    int rc = amk_json_parse("config", text, strlen(text), &j, d);
    if (rc)
        return rc;
    rc = amk_config_from_json(r, j, out, d);
    cJSON_Delete(j);
    return rc;
}

void amk__sb_json_string(amk_sb *sb, const char *s)
{
    amk_sb_putn(sb, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            amk_sb_putn(sb, e, 2);
        } else if (*p < 0x20) {
            amk_sb_printf(sb, "\\u%04x", *p);
        } else {
            amk_sb_putn(sb, (const char *)p, 1);
        }
    }
    amk_sb_putn(sb, "\"", 1);
}

static int cmp_names(const char *a, const char *b) { return strcmp(a, b); }

/* Indices of names sorted bytewise (insertion sort: at most 24 entries). */
static void sorted_order(const char *const *names, int n, int *idx)
{
    for (int i = 0; i < n; i++) {
        int k = i;
        while (k > 0 && cmp_names(names[idx[k - 1]], names[i]) > 0) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
}

static void params_json_sb(const amk_config *c, amk_sb *sb)
{
    const amk_spec *s = c->spec;
    const char *names[AMK_MAX_PARAMS];
    int idx[AMK_MAX_PARAMS];
    for (int i = 0; i < s->nparams; i++)
        names[i] = s->params[i].name;
    sorted_order(names, s->nparams, idx);
    amk_sb_putn(sb, "{", 1);
    for (int k = 0; k < s->nparams; k++) {
        int i = idx[k];
        const amk__param *p = &s->params[i];
        if (k)
            amk_sb_putn(sb, ",", 1);
        amk__sb_json_string(sb, p->name);
        amk_sb_putn(sb, ":", 1);
        int ch = c->choice[i] < p->n ? c->choice[i] : 0;
        if (p->is_enum)
            amk__sb_json_string(sb, p->labels[ch]);
        else
            amk_sb_printf(sb, "%lld", (long long)p->values[ch]);
    }
    amk_sb_putn(sb, "}", 1);
}

char *amk_config_params_json(const amk_config *c)
{
    amk_sb sb = {0};
    params_json_sb(c, &sb);
    return amk_sb_take(&sb);
}

char *amk_config_canonical(const amk_config *c)
{
    const amk_spec *s = c->spec;
    amk_sb sb = {0};
    amk_sb_printf(&sb, "{\"kernel\":");
    amk__sb_json_string(&sb, s->name);
    amk_sb_printf(&sb, ",\"params\":");
    params_json_sb(c, &sb);
    amk_sb_printf(&sb, ",\"shape\":{");
    /* dims and "dtype" sorted together, bytewise */
    const char *names[AMK_MAX_DIMS + 1];
    int idx[AMK_MAX_DIMS + 1];
    for (int i = 0; i < s->ndims; i++)
        names[i] = s->dims[i];
    names[s->ndims] = "dtype";
    sorted_order(names, s->ndims + 1, idx);
    for (int k = 0; k <= s->ndims; k++) {
        int i = idx[k];
        if (k)
            amk_sb_putn(&sb, ",", 1);
        amk__sb_json_string(&sb, names[i]);
        amk_sb_putn(&sb, ":", 1);
        if (i == s->ndims) {
            const char *dt = amk_spec_dtype_name(s, c->shape.dtype);
            amk__sb_json_string(&sb, dt ? dt : "?");
        } else {
            amk_sb_printf(&sb, "%lld", (long long)c->shape.dims[i]);
        }
    }
    amk_sb_printf(&sb, "}}");
    return amk_sb_take(&sb);
}

void amk_config_id(const amk_config *c, char out[17])
{
    char *canon = amk_config_canonical(c);
    if (!canon) {
        /* out of memory: an id that cannot collide with a real FNV-1a hex string */
        memcpy(out, "0000000000000000", 17);
        return;
    }
    amk_hash_hex(amk_hash64(canon, strlen(canon)), out);
    free(canon);
}

cJSON *amk_config_to_json(const amk_config *c)
{
    char *canon = amk_config_canonical(c);
    if (!canon)
        return NULL;
    cJSON *j = cJSON_Parse(canon);
    free(canon);
    return j;
}

/* JSON value of choice k of param i: the integer, or the enum label. */
static cJSON *choice_json(const amk_spec *s, int i, int k)
{
    const char *label = amk_spec_param_label(s, i, k);
    if (label)
        return cJSON_CreateString(label);
    return cJSON_CreateNumber((double)amk_spec_param_value(s, i, k));
}

/* An expression as spec.json wrote it: a string, or an integer literal. */
static cJSON *expr_json(const amk_spec_named_expr *e)
{
    const char *src = amk_expr_source(e->expr);
    return e->written_as_number ? cJSON_CreateNumber((double)strtoll(src, NULL, 10))
                                : cJSON_CreateString(src);
}

cJSON *amk_space_to_json(const amk_spec *s)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *params = cJSON_AddObjectToObject(out, "params");
    for (int i = 0; params && i < amk_spec_n_params(s); i++) {
        cJSON *p = cJSON_AddObjectToObject(params, amk_spec_param_name(s, i));
        if (!p)
            continue;
        cJSON *choices = cJSON_AddArrayToObject(p, "choices");
        for (int k = 0; choices && k < amk_spec_param_n_choices(s, i); k++)
            cJSON_AddItemToArray(choices, choice_json(s, i, k));
        cJSON_AddItemToObject(p, "default", choice_json(s, i, amk_spec_param_default(s, i)));
        const char *doc = amk_spec_param_doc(s, i);
        if (doc)
            cJSON_AddStringToObject(p, "doc", doc);
    }
    cJSON *derived = cJSON_AddObjectToObject(out, "derived");
    cJSON *restr = cJSON_AddArrayToObject(out, "restrictions");
    amk_spec_named_expr e;
    for (int i = 0; derived && amk_spec_derived(s, i, &e) == AMK_OK; i++)
        cJSON_AddItemToObject(derived, e.name, expr_json(&e));
    for (int i = 0; restr && amk_spec_restriction(s, i, &e) == AMK_OK; i++)
        cJSON_AddItemToArray(restr, expr_json(&e));
    return out;
}

cJSON *amk_spec_summary_json(const amk_spec *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", amk_spec_name(s));
    cJSON_AddStringToObject(o, "description", amk_spec_description(s));
    cJSON *dims = cJSON_AddArrayToObject(o, "dims");
    for (int j = 0; dims && j < amk_spec_n_dims(s); j++)
        cJSON_AddItemToArray(dims, cJSON_CreateString(amk_spec_dim_name(s, j)));
    cJSON *dtypes = cJSON_AddArrayToObject(o, "dtypes");
    for (int j = 0; dtypes && j < amk_spec_n_dtypes(s); j++)
        cJSON_AddItemToArray(dtypes, cJSON_CreateString(amk_spec_dtype_name(s, j)));
    char shape[256];
    amk_shape sh;
    amk_spec_shape(s, 0, &sh);
    amk_shape_format(s, &sh, shape, sizeof shape);
    cJSON_AddStringToObject(o, "default_shape", shape);
    cJSON *shapes = cJSON_AddObjectToObject(o, "shapes");
    for (int j = 0; shapes && j < amk_spec_n_shapes(s); j++) {
        amk_spec_shape(s, j, &sh);
        amk_shape_format(s, &sh, shape, sizeof shape);
        cJSON_AddStringToObject(shapes, amk_spec_shape_name(s, j), shape);
    }
    cJSON_AddNumberToObject(o, "n_params", amk_spec_n_params(s));
    cJSON_AddNumberToObject(o, "raw_size", amk_spec_raw_size(s));
    cJSON_AddStringToObject(o, "dir", amk_spec_dir(s));
    return o;
}

/* The config of params JSON at shape sh; fill: params it does not name take their default
 * (returns how many), else they are an error. */
static int config_from_params(const amk_spec *s, const amk_shape *sh, const char *json,
                              int fill, amk_config *out, amk_diag *d)
{
    if (!json)
        return amk_diag_set(d, AMK_EINVAL, "params JSON is NULL");
    cJSON *j = cJSON_ParseWithOpts(json, NULL, 1);
    if (!j)
        return amk_diag_set(d, AMK_EPARSE, "params: malformed JSON '%.200s'", json);
    amk_config c;
    amk_config_default(s, sh, &c);
    int filled = 0;
    int rc = params_from_json(s, j, c.choice, fill, &filled, d);
    cJSON_Delete(j);
    if (rc != AMK_OK)
        return rc;
    *out = c;
    return filled;
}

int amk_config_from_params_json(const amk_spec *s, const amk_shape *sh, const char *json,
                                amk_config *out, amk_diag *d)
{
    return config_from_params(s, sh, json, 0, out, d);
}

int amk_config_from_recorded(const amk_spec *s, const amk_shape *sh, const char *json,
                             amk_config *out, amk_diag *d)
{
    return config_from_params(s, sh, json, 1, out, d);
}

/* 1 when row r of s names fewer params than s has, with that config in *c. A row whose
 * params text holds every "NAME": key names them all (inside a JSON string a quote is
 * escaped, so the text matches keys only): no parse, which made a report of 100 000 rows
 * 2.5 times slower. */
static int recorded_before_a_param(const amk_spec *s, const amk_row *r, amk_config *c)
{
    amk_shape sh;
    if (!s || !r->params[0] || strcmp(r->kernel, amk_spec_name(s)) != 0)
        return 0;
    int every = 1;
    for (int i = 0; every && i < amk_spec_n_params(s); i++) {
        char key[80];
        snprintf(key, sizeof key, "\"%s\":", amk_spec_param_name(s, i));
        every = strstr(r->params, key) != NULL;
    }
    return !every && amk_shape_parse(s, r->shape, &sh, NULL) == AMK_OK &&
           amk_config_from_recorded(s, &sh, r->params, c, NULL) > 0;
}

void amk_row_config_id(const amk_spec *s, const amk_row *r, char id[17])
{
    amk_config c;
    snprintf(id, 17, "%s", r->config_id);
    if (recorded_before_a_param(s, r, &c))
        amk_config_id(&c, id);
}

int amk_row_set_config(amk_row *r, const amk_config *c)
{
    char *params = amk_config_params_json(c);
    int fits = params && strlen(params) < sizeof r->params;
    if (fits) {
        amk_config_id(c, r->config_id);
        memcpy(r->params, params, strlen(params) + 1);
    }
    free(params);
    return fits;
}

static void upgrade_row(amk_row *r, const void *reg)
{
    amk_config c;
    if (recorded_before_a_param(reg ? amk_registry_find(reg, r->kernel) : NULL, r, &c))
        amk_row_set_config(r, &c);
}

amk_row_upgrader amk_registry_upgrader(const amk_registry *reg)
{
    return (amk_row_upgrader){reg ? upgrade_row : NULL, reg};
}

int amk_config_defines(const amk_config *c, char out[][96], int cap)
{
    const amk_spec *s = c->spec;
    if (!s)
        return AMK_EINVAL;
    if (cap < s->nparams)
        return AMK_EINVAL;
    /* Validate everything before writing anything: a value that is not a declared choice
     * must never reach a compiler command line. */
    for (int i = 0; i < s->nparams; i++)
        if (c->choice[i] >= s->params[i].n)
            return AMK_ECONFIG;
    for (int i = 0; i < s->nparams; i++)
        snprintf(out[i], 96, "-D%s=%lld", s->params[i].name,
                 (long long)s->params[i].values[c->choice[i]]);
    return s->nparams;
}

/* ------------------------------------------------------------------------------------ */
/* evaluation */

/* Fills slots with only the derived values that `need` (transitively) requires. */
static int fill_needed(const amk_config *c, const amk_limits *lim, unsigned char *need,
                       int64_t *slots, amk_diag *d)
{
    const amk_spec *s = c->spec;
    int rc = amk__config_choices_ok(c, d);
    if (rc)
        return rc;
    amk__slots_base(s, &c->shape, lim, slots);
    for (int i = 0; i < s->nparams; i++)
        slots[s->slot_params + i] = s->params[i].values[c->choice[i]];
    for (int k = s->nderived - 1; k >= 0; k--) {
        const amk__derived *dv = &s->derived[s->dorder[k]];
        if (need[dv->slot])
            for (int j = 0; j < s->nslots; j++)
                if (dv->deps[j])
                    need[j] = 1;
    }
    for (int k = 0; k < s->nderived; k++) {
        const amk__derived *dv = &s->derived[s->dorder[k]];
        if (!need[dv->slot])
            continue;
        int pc = 0;
        rc = amk__expr_run(dv->e, slots, &slots[dv->slot], &pc);
        if (rc) {
            amk__expr_error(dv->e, slots, rc, pc, d);
            amk_diag_prefix(d, "derived value '%s'", dv->name); /* returns 0 when d is NULL */
            return rc;
        }
    }
    return AMK_OK;
}

static int fill_all(const amk_config *c, const amk_limits *lim, int64_t *slots, amk_diag *d)
{
    unsigned char need[AMK__MAX_SLOTS];
    memset(need, 1, sizeof need);
    return fill_needed(c, lim, need, slots, d);
}

static int eval_expr(const amk_expr *e, const int64_t *slots, int64_t *out, const char *what,
                     amk_diag *d);
static int launch_from_slots(const amk_spec *s, const int64_t *slots, amk_launch *out,
                             amk_diag *d);
static int tmap_from_slots(const amk_config *c, const int64_t *slots, int i,
                           amk_tensor_map *out, amk_diag *d);

/* The grid must be a whole number of clusters (the launch refuses it otherwise). */
static int cluster_ok(const amk_spec *s, const int64_t *slots, amk_diag *d)
{
    amk_launch l;
    int rc = launch_from_slots(s, slots, &l, d);
    if (rc)
        return rc;
    for (int i = 0; i < 3; i++)
        if (l.cluster[i] < 1 || l.cluster[i] > 1024 || l.grid[i] % l.cluster[i] != 0)
            return amk_diag_set(d, AMK_ERESTRICT, "launch.cluster %lld x %lld x %lld: %s "
                                "(grid %lld x %lld x %lld)", (long long)l.cluster[0],
                                (long long)l.cluster[1], (long long)l.cluster[2],
                                l.cluster[i] < 1 || l.cluster[i] > 1024
                                    ? "each dim must be 1..1024"
                                    : "the grid is not a multiple of the cluster",
                                (long long)l.grid[0], (long long)l.grid[1],
                                (long long)l.grid[2]);
    return AMK_OK;
}

int amk__launch_check(const amk_spec *s, const int64_t *slots, const amk_limits *lim,
                      amk_diag *d)
{
    const amk__launch_exprs *l = &s->launch;
    int64_t g[3], b[3], sh, threads = 1;
    int pc = 0, rc;
    for (int i = 0; i < 3; i++) {
        if ((rc = amk__expr_run(l->grid[i], slots, &g[i], &pc))) {
            amk__expr_error(l->grid[i], slots, rc, pc, d);
            amk_diag_prefix(d, "launch.grid[%d]", i);
            return rc;
        }
        if ((rc = amk__expr_run(l->block[i], slots, &b[i], &pc))) {
            amk__expr_error(l->block[i], slots, rc, pc, d);
            amk_diag_prefix(d, "launch.block[%d]", i);
            return rc;
        }
        if (b[i] < 1 || g[i] < 1)
            return amk_diag_set(d, AMK_ERESTRICT, "launch.%s[%d] = %lld is not positive",
                                b[i] < 1 ? "block" : "grid", i,
                                (long long)(b[i] < 1 ? b[i] : g[i]));
        if (__builtin_mul_overflow(threads, b[i], &threads))
            threads = INT64_MAX;
    }
    if (threads > lim->max_threads)
        return amk_diag_set(d, AMK_ERESTRICT, "launch block %lldx%lldx%lld = %lld threads "
                            "exceeds the %lld threads per block of the target (max_threads)",
                            (long long)b[0], (long long)b[1], (long long)b[2],
                            (long long)threads, (long long)lim->max_threads);
    if (g[0] > lim->max_grid_x || g[1] > lim->max_grid_yz || g[2] > lim->max_grid_yz)
        return amk_diag_set(d, AMK_ERESTRICT, "launch grid %lldx%lldx%lld exceeds the target's "
                            "grid limits (max_grid_x, max_grid_yz)", (long long)g[0],
                            (long long)g[1], (long long)g[2]);
    if ((rc = amk__expr_run(l->shared, slots, &sh, &pc))) {
        amk__expr_error(l->shared, slots, rc, pc, d);
        amk_diag_prefix(d, "launch.shared_bytes");
        return rc;
    }
    if (sh < 0 || sh > lim->max_smem_optin)
        return amk_diag_set(d, AMK_ERESTRICT, "launch.shared_bytes = %lld is outside 0..%lld, "
                            "the target's shared memory per block (max_smem_optin)",
                            (long long)sh, (long long)lim->max_smem_optin);
    return AMK_OK;
}

int amk_config_check(const amk_config *c, const amk_limits *lim, amk_diag *d)
{
    int64_t slots[AMK__MAX_SLOTS];
    int rc = fill_all(c, lim, slots, d);
    if (rc)
        return rc;
    const amk_spec *s = c->spec;
    for (int i = 0; i < s->nrestrict; i++) {
        int64_t v;
        rc = amk_expr_eval(s->restrict_[i].e, slots, &v, d);
        if (rc) {
            amk_diag_prefix(d, "restriction '%s'", amk_expr_source(s->restrict_[i].e));
            return rc;
        }
        if (!v)
            return amk_diag_set(d, AMK_ERESTRICT, "restriction '%s' is false",
                                amk_expr_source(s->restrict_[i].e));
    }
    if (s->launch.cluster[0] && (rc = cluster_ok(s, slots, d)))
        return rc;
    for (int i = 0; i < s->ntmaps; i++) {
        amk_tensor_map tm;
        if ((rc = tmap_from_slots(c, slots, i, &tm, d)))
            return rc;
    }
    return amk__launch_check(s, slots, lim ? lim : amk__limits_generous(), d);
}

static int eval_expr(const amk_expr *e, const int64_t *slots, int64_t *out, const char *what,
                     amk_diag *d)
{
    int rc = amk_expr_eval(e, slots, out, d);
    if (rc)
        amk_diag_prefix(d, "%s", what);
    return rc;
}

int amk_config_eval(const amk_config *c, const amk_limits *lim, const char *expr, int64_t *out,
                    amk_diag *d)
{
    if (!c || !c->spec || !expr || !out)
        return amk_diag_set(d, AMK_EINVAL, "amk_config_eval: NULL argument");
    amk_expr *e = NULL;
    int rc = amk_expr_parse(expr, amk__spec_resolve, (void *)c->spec, &e, d);
    if (rc)
        return rc;
    int64_t slots[AMK__MAX_SLOTS];
    unsigned char need[AMK__MAX_SLOTS] = {0};
    amk_expr_slots(e, need, c->spec->nslots);
    rc = fill_needed(c, lim, need, slots, d);
    if (!rc)
        rc = amk_expr_eval(e, slots, out, d);
    amk_expr_free(e);
    return rc;
}

static int launch_from_slots(const amk_spec *s, const int64_t *slots, amk_launch *out,
                             amk_diag *d)
{
    const amk__launch_exprs *l = &s->launch;
    amk_launch r;
    int rc;
    for (int i = 0; i < 3; i++) {
        char what[32];
        snprintf(what, sizeof what, "launch.grid[%d]", i);
        if ((rc = eval_expr(l->grid[i], slots, &r.grid[i], what, d)))
            return rc;
        snprintf(what, sizeof what, "launch.block[%d]", i);
        if ((rc = eval_expr(l->block[i], slots, &r.block[i], what, d)))
            return rc;
        r.cluster[i] = 1;
        snprintf(what, sizeof what, "launch.cluster[%d]", i);
        if (l->cluster[i] && (rc = eval_expr(l->cluster[i], slots, &r.cluster[i], what, d)))
            return rc;
    }
    if ((rc = eval_expr(l->shared, slots, &r.shared_bytes, "launch.shared_bytes", d)))
        return rc;
    *out = r;
    return AMK_OK;
}

int amk_config_eval_expr(const amk_config *c, const amk_limits *lim, const amk_expr *e,
                         int64_t *out, amk_diag *d)
{
    if (!c || !c->spec || !e || !out)
        return amk_diag_set(d, AMK_EINVAL, "amk_config_eval_expr: NULL argument");
    int64_t slots[AMK__MAX_SLOTS];
    unsigned char need[AMK__MAX_SLOTS] = {0};
    amk_expr_slots(e, need, c->spec->nslots);
    int rc = fill_needed(c, lim, need, slots, d);
    return rc ? rc : amk_expr_eval(e, slots, out, d);
}

int amk_config_reference_config(const amk_config *c, const amk_limits *lim, amk_config *out,
                                amk_diag *d)
{
    const amk_spec *s = c->spec;
    if (!s->ref_default_config) {
        *out = *c;
        return AMK_OK;
    }
    amk_config r;
    amk_config_default(s, &c->shape, &r);
    for (int k = 0; k < s->nref_vary; k++)
        r.choice[s->ref_vary[k]] = c->choice[s->ref_vary[k]];
    if (s->nref_vary > 0) {
        char with[256] = "";
        size_t n = 0;
        for (int k = 0; k < s->nref_vary && n < sizeof with; k++) {
            int i = s->ref_vary[k];
            n += (size_t)snprintf(with + n, sizeof with - n, "%s%s=%lld", k ? ", " : "",
                                  s->params[i].name, (long long)amk_config_param(&r, i));
        }
        int rc = amk_config_check(&r, lim, d);
        if (rc != AMK_OK) {
            amk_diag_prefix(d, "the reference config (the default with %s) is not valid",
                            with);
            return rc;
        }
    }
    *out = r;
    return AMK_OK;
}

int amk_config_same_reference(const amk_config *a, const amk_config *b)
{
    if (a->spec != b->spec || a->shape.dtype != b->shape.dtype)
        return 0;
    for (int k = 0; a->spec && k < a->spec->nref_vary; k++)
        if (a->choice[a->spec->ref_vary[k]] != b->choice[a->spec->ref_vary[k]])
            return 0;
    return 1;
}

/* Like backend code always did for the reference: no limit checks, errors prefixed
 * "reference.launch". */
int amk_config_reference_launch(const amk_config *c, const amk_limits *lim, amk_launch *out,
                                amk_diag *d)
{
    const amk__launch_exprs *l = &c->spec->ref_launch;
    amk_launch r;
    int rc = AMK_OK;
    for (int i = 0; i < 3 && rc == AMK_OK; i++) {
        rc = amk_config_eval_expr(c, lim, l->grid[i], &r.grid[i], d);
        if (rc == AMK_OK)
            rc = amk_config_eval_expr(c, lim, l->block[i], &r.block[i], d);
        r.cluster[i] = 1;
        if (rc == AMK_OK && l->cluster[i])
            rc = amk_config_eval_expr(c, lim, l->cluster[i], &r.cluster[i], d);
        if (rc != AMK_OK)
            amk_diag_prefix(d, "reference.launch");
    }
    if (rc == AMK_OK && (rc = amk_config_eval_expr(c, lim, l->shared, &r.shared_bytes, d)))
        amk_diag_prefix(d, "reference.launch.shared_bytes");
    if (rc == AMK_OK)
        *out = r;
    return rc;
}

int amk_config_launch(const amk_config *c, const amk_limits *lim, amk_launch *out, amk_diag *d)
{
    int64_t slots[AMK__MAX_SLOTS];
    int rc = fill_all(c, lim, slots, d);
    if (rc)
        return rc;
    return launch_from_slots(c->spec, slots, out, d);
}

/* a * b when it stays below 2^62, else -1 (an extent that large fails every rule anyway). */
static int64_t mul_sat(int64_t a, int64_t b)
{
    if (a < 0 || b < 0 || (a && b > ((int64_t)1 << 62) / a))
        return -1;
    return a * b;
}

static int tmap_from_slots(const amk_config *c, const int64_t *slots, int i,
                           amk_tensor_map *out, amk_diag *d)
{
    const amk_spec *s = c->spec;
    const amk__tmap *t = &s->tmaps[i];
    const amk__buffer *b = &s->buffers[t->buffer];
    amk_tensor_map m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", t->name);
    snprintf(m.buffer, sizeof m.buffer, "%s", b->name);
    int dt = b->dtype >= 0 ? b->dtype : s->dtypes[c->shape.dtype];
    snprintf(m.dtype, sizeof m.dtype, "%s", amk__dtype_names[dt]);
    const int64_t elt = amk__dtype_sizes[dt];
    m.rank = t->rank;
    m.swizzle = t->swizzle;
    m.l2_promotion = t->l2_promotion;
    int rc;
    char what[AMK_NAME_MAX + 48];
#define TM_EVAL(field, k)                                                                  \
    do {                                                                                   \
        snprintf(what, sizeof what, "tensor map '%s': " #field "[%d]", t->name, k);        \
        if ((rc = eval_expr(t->field[k], slots, &m.field[k], what, d)))                    \
            return rc;                                                                     \
    } while (0)
#define TM_FAIL(...)                                                                       \
    return amk_diag_set(d, AMK_ERESTRICT, "tensor map '%s': " __VA_ARGS__)
    int64_t count = 0, extent = elt; /* bytes from the first element to past the last */
    if ((rc = eval_expr(b->count, slots, &count, "buffer count", d)))
        return rc;
    for (int k = 0; k < t->rank; k++) {
        TM_EVAL(dims, k);
        TM_EVAL(box, k);
        if (m.dims[k] < 1 || m.dims[k] > ((int64_t)1 << 32))
            TM_FAIL("dims[%d] = %lld is outside 1..2^32", t->name, k, (long long)m.dims[k]);
        if (m.box[k] < 1 || m.box[k] > 256)
            TM_FAIL("box[%d] = %lld is outside 1..256", t->name, k, (long long)m.box[k]);
        int64_t stride = elt;
        if (k > 0) {
            TM_EVAL(strides, k - 1);
            stride = m.strides[k - 1];
            if (stride < 16 || stride % 16 || stride >= ((int64_t)1 << 40))
                TM_FAIL("strides[%d] = %lld bytes is not a multiple of 16 in 16..2^40",
                        t->name, k - 1, (long long)stride);
        }
        int64_t span = mul_sat(m.dims[k] - 1, stride);
        extent = span < 0 || extent > INT64_MAX / 2 - span ? INT64_MAX / 2 : extent + span;
    }
    const int64_t row = m.box[0] * elt;
    if (row % 16)
        TM_FAIL("box[0] * elt = %lld bytes is not a multiple of 16", t->name, (long long)row);
    if (m.swizzle && row > m.swizzle)
        TM_FAIL("box[0] * elt = %lld bytes exceeds the %d-byte swizzle", t->name,
                (long long)row, m.swizzle);
    int64_t have = mul_sat(count, elt);
    if (have < 0 || extent > have)
        TM_FAIL("covers %lld bytes, more than buffer %s holds (%lld elements of %lld bytes)",
                t->name, (long long)extent, b->name, (long long)count, (long long)elt);
#undef TM_EVAL
#undef TM_FAIL
    *out = m;
    return AMK_OK;
}

int amk_config_tensor_map(const amk_config *c, const amk_limits *lim, int i,
                          amk_tensor_map *out, amk_diag *d)
{
    if (!c || !c->spec || i < 0 || i >= c->spec->ntmaps || !out)
        return amk_diag_set(d, AMK_EINVAL, "amk_config_tensor_map: no tensor map %d", i);
    int64_t slots[AMK__MAX_SLOTS];
    int rc = fill_all(c, lim, slots, d);
    if (rc)
        return rc;
    return tmap_from_slots(c, slots, i, out, d);
}

int amk_config_cost(const amk_config *c, const amk_limits *lim, amk_cost_terms *out,
                    amk_diag *d)
{
    int64_t slots[AMK__MAX_SLOTS];
    int rc = fill_all(c, lim, slots, d);
    if (rc)
        return rc;
    const amk_spec *s = c->spec;
    amk_cost_terms t;
    memset(&t, 0, sizeof t);
    if ((rc = eval_expr(s->flops, slots, &t.flops, "cost.flops", d)) ||
        (rc = eval_expr(s->min_bytes, slots, &t.min_bytes, "cost.min_bytes", d)))
        return rc;
    t.traffic_bytes = t.min_bytes;
    if (s->traffic && (rc = eval_expr(s->traffic, slots, &t.traffic_bytes, "cost.traffic_bytes",
                                      d)))
        return rc;
    /* The prediction may not undercut the compulsory traffic the floor is built on. */
    if (t.traffic_bytes < t.min_bytes)
        t.traffic_bytes = t.min_bytes;
    if (s->regs && (rc = eval_expr(s->regs, slots, &t.regs_estimate, "cost.regs", d)))
        return rc;
    snprintf(t.unit, sizeof t.unit, "%s", s->unit);
    *out = t;
    return AMK_OK;
}
