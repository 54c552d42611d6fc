/* Kernel spec loading and validation (space_defs/SPEC.md): the space part of spec.json
 * (dims, dtypes, shapes, params, derived values, restrictions), the default-config check and
 * amk_spec_load itself. A spec is validated completely at load so that nothing downstream has
 * to re-check it: every field, every name, every expression, derived-value cycles, and the
 * default config evaluated on the default shape. The kernel part: spec_kernel.c. */
#include "spec_load_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* ------------------------------------------------------------------------------------ */
/* loader */


int amk__ld_fail(loader *L, int code, const char *path, const char *fmt, ...)
{
    if (L->err)
        return L->err;
    char m[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    L->err = code;
    if (path && *path)
        amk_diag_set(L->d, code, "%s: %s: %s", L->s->path, path, m);
    else
        amk_diag_set(L->d, code, "%s: %s", L->s->path, m);
    return code;
}

const char *amk__ld_json_type(const cJSON *j)
{
    if (!j) return "missing";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "invalid";
}

int amk__ld_is_identifier(const char *n)
{
    if (!n || !(isalpha((unsigned char)n[0]) || n[0] == '_'))
        return 0;
    for (const char *p = n; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return strlen(n) < AMK_NAME_MAX;
}

/* Integral JSON number in [lo, hi] (hi <= 2^53 so the double is exact). */
int amk__ld_json_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    if (!amk_json_integer_text(j)) /* not a number, or written 64.0 / 1.28e2 */
        return 0;
    double v = j->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi)
        return 0;
    *out = (int64_t)v;
    return 1;
}


/* Rejects keys outside `allowed`, duplicate keys, and missing `required` keys. */
int amk__ld_check_keys(loader *L, const cJSON *obj, const char *path, const char *const *allowed,
                       const char *const *required)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(c->string, *a))
                ok = 1;
        if (!ok) {
            char list[512] = "";
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         a == allowed ? "" : ", ", *a);
            return amk__ld_fail(L, AMK_ESPEC, path, "unknown field '%s' (allowed: %s)", c->string,
                                list);
        }
        for (const cJSON *p = obj->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return amk__ld_fail(L, AMK_ESPEC, path, "duplicate field '%s'", c->string);
    }
    for (const char *const *r = required; r && *r; r++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, *r))
            return amk__ld_fail(L, AMK_ESPEC, path, "missing required field '%s'", *r);
    return 0;
}

static const char *const reserved[] = {"elt", "dtype", "min", "max", "cdiv", "log2", "ispow2",
                                       "pow", "floordiv", "floormod", NULL};

/* A new name for a dim, param or derived value: identifier, not reserved, not taken. */
int amk__ld_check_new_name(loader *L, const char *path, const char *name)
{
    amk_spec *s = L->s;
    if (!amk__ld_is_identifier(name))
        return amk__ld_fail(L, AMK_ESPEC, path,
                            "'%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, "
                            "at most %d characters)", name, AMK_NAME_MAX - 1);
    for (const char *const *r = reserved; *r; r++)
        if (!strcmp(name, *r))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is a reserved name", name);
    for (int i = 0; i < AMK__N_LIMITS; i++)
        if (!strcmp(name, amk__limit_names[i]))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is the name of a device limit", name);
    if (!strncmp(name, "AMK_", 4))
        return amk__ld_fail(L, AMK_ESPEC, path, "'%s': names starting with AMK_ are reserved",
                            name);
    for (int i = 0; i < s->ndims; i++)
        if (!strcmp(name, s->dims[i]))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is already declared as a dim", name);
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(name, s->params[i].name))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is already declared as a param", name);
    for (int i = 0; i < s->nderived; i++)
        if (!strcmp(name, s->derived[i].name))
            return amk__ld_fail(L, AMK_ESPEC, path, "'%s' is already declared as a derived value",
                                name);
    return 0;
}

char *amk__ld_dup_or_fail(loader *L, const char *src)
{
    char *p = strdup(src);
    if (!p)
        amk__ld_fail(L, AMK_ENOMEM, NULL, "out of memory");
    return p;
}

/* A string field (required or optional). Returns the borrowed text or NULL. */
const char *amk__ld_get_string(loader *L, const cJSON *obj, const char *key, const char *path,
                               int required)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required)
            amk__ld_fail(L, AMK_ESPEC, path, "missing required field '%s'", key);
        return NULL;
    }
    if (!cJSON_IsString(j)) {
        amk__ld_fail(L, AMK_ESPEC, path, "%s: expected a string, got %s", key,
                     amk__ld_json_type(j));
        return NULL;
    }
    return j->valuestring;
}

/* Parses an expression given as a string (or an integer literal) at `path`. */
amk_expr *amk__ld_get_expr(loader *L, const cJSON *j, const char *path)
{
    if (L->err)
        return NULL;
    char buf[32];
    const char *text;
    int64_t v;
    if (cJSON_IsString(j))
        text = j->valuestring;
    else if (amk__ld_json_int(j, -JSON_INT_MAX, JSON_INT_MAX, &v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)v);
        text = buf;
    } else {
        amk__ld_fail(L, AMK_ESPEC, path, "expected an expression (string), got %s",
                     amk__ld_json_type(j));
        return NULL;
    }
    amk_expr *e = NULL;
    amk_diag ed = {0};
    int rc = amk_expr_parse(text, amk__spec_resolve, L->s, &e, &ed);
    if (rc) {
        amk__ld_fail(L, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, path, "%s", ed.msg);
        return NULL;
    }
    return e;
}

static int load_dims(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(root, "dims");
    if (!cJSON_IsArray(dims))
        return amk__ld_fail(L, AMK_ESPEC, "dims", "expected an array of names, got %s",
                            amk__ld_json_type(dims));
    int n = cJSON_GetArraySize(dims);
    if (n < 1 || n > AMK_MAX_DIMS)
        return amk__ld_fail(L, AMK_ESPEC, "dims", "expected 1 to %d names, got %d", AMK_MAX_DIMS,
                            n);
    int i = 0;
    for (const cJSON *c = dims->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "dims[%d]", i);
        if (!cJSON_IsString(c))
            return amk__ld_fail(L, AMK_ESPEC, path, "expected a name, got %s",
                                amk__ld_json_type(c));
        if (amk__ld_check_new_name(L, path, c->valuestring))
            return L->err;
        snprintf(s->dims[s->ndims++], AMK_NAME_MAX, "%s", c->valuestring);
    }
    return 0;
}

static int load_dtypes(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtypes");
    if (!cJSON_IsArray(dt))
        return amk__ld_fail(L, AMK_ESPEC, "dtypes", "expected an array of dtype names, got %s",
                            amk__ld_json_type(dt));
    int n = cJSON_GetArraySize(dt);
    if (n < 1 || n > AMK__MAX_DTYPES)
        return amk__ld_fail(L, AMK_ESPEC, "dtypes", "expected 1 to %d dtypes, got %d",
                            AMK__MAX_DTYPES,
                            n);
    int i = 0;
    for (const cJSON *c = dt->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "dtypes[%d]", i);
        int k = cJSON_IsString(c) ? amk__dtype_index(c->valuestring) : -1;
        if (k < 0)
            return amk__ld_fail(L, AMK_ESPEC, path, "unknown dtype %s%s%s (known: f32 f16 bf16 "
                                "fp8e4m3 int8)", cJSON_IsString(c) ? "'" : "",
                                cJSON_IsString(c) ? c->valuestring : amk__ld_json_type(c),
                                cJSON_IsString(c) ? "'" : "");
        for (int j = 0; j < s->ndtypes; j++)
            if (s->dtypes[j] == k)
                return amk__ld_fail(L, AMK_ESPEC, path, "dtype '%s' listed twice", c->valuestring);
        s->dtypes[s->ndtypes++] = k;
    }
    return 0;
}

static int load_params(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (!cJSON_IsObject(ps))
        return amk__ld_fail(L, AMK_ESPEC, "params", "expected an object, got %s",
                            amk__ld_json_type(ps));
    static const char *const allowed[] = {"values", "default", "doc", NULL};
    static const char *const required[] = {"values", "default", NULL};
    if (cJSON_GetArraySize(ps) > AMK_MAX_PARAMS)
        return amk__ld_fail(L, AMK_ESPEC, "params", "at most %d params, got %d", AMK_MAX_PARAMS,
                            cJSON_GetArraySize(ps));
    for (const cJSON *p = ps->child; p; p = p->next) {
        char path[160];
        snprintf(path, sizeof path, "params.%s", p->string);
        for (const cJSON *q = ps->child; q != p; q = q->next)
            if (!strcmp(q->string, p->string))
                return amk__ld_fail(L, AMK_ESPEC, "params", "duplicate param '%s'", p->string);
        if (amk__ld_check_new_name(L, path, p->string))
            return L->err;
        if (!cJSON_IsObject(p))
            return amk__ld_fail(L, AMK_ESPEC, path,
                                "expected an object with values and default, got %s",
                                amk__ld_json_type(p));
        if (amk__ld_check_keys(L, p, path, allowed, required))
            return L->err;
        amk__param *pm = &s->params[s->nparams];
        memset(pm, 0, sizeof *pm);
        snprintf(pm->name, sizeof pm->name, "%s", p->string);
        s->nparams++; /* counted now so spec_free releases labels on failure */
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(p, "values");
        char vpath[200];
        snprintf(vpath, sizeof vpath, "%s.values", path);
        if (!cJSON_IsArray(vals))
            return amk__ld_fail(L, AMK_ESPEC, vpath, "expected an array, got %s",
                                amk__ld_json_type(vals));
        int n = cJSON_GetArraySize(vals);
        if (n < 1 || n > AMK_MAX_CHOICES)
            return amk__ld_fail(L, AMK_ESPEC, vpath, "expected 1 to %d values, got %d",
                                AMK_MAX_CHOICES,
                                n);
        pm->is_enum = cJSON_IsString(vals->child);
        int i = 0;
        for (const cJSON *v = vals->child; v; v = v->next, i++) {
            snprintf(vpath, sizeof vpath, "%s.values[%d]", path, i);
            if (pm->is_enum) {
                if (!cJSON_IsString(v))
                    return amk__ld_fail(L, AMK_ESPEC, vpath,
                                        "not a string (values[0] is a string, so "
                                        "this param is an enum)");
                const char *lab = v->valuestring;
                if (!*lab || strlen(lab) >= AMK_NAME_MAX)
                    return amk__ld_fail(L, AMK_ESPEC, vpath,
                                        "enum label must have 1 to %d characters",
                                        AMK_NAME_MAX - 1);
                for (const char *c = lab; *c; c++)
                    if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
                        return amk__ld_fail(L, AMK_ESPEC, vpath, "enum label '%s' may only contain "
                                            "letters, digits, '_', '-' and '.'", lab);
                for (int j = 0; j < pm->n; j++)
                    if (!strcmp(pm->labels[j], lab))
                        return amk__ld_fail(L, AMK_ESPEC, vpath, "duplicate value '%s'", lab);
                if (!(pm->labels[pm->n] = amk__ld_dup_or_fail(L, lab)))
                    return L->err;
                pm->values[pm->n++] = i;
            } else {
                int64_t x;
                if (!amk__ld_json_int(v, INT32_MIN, INT32_MAX, &x)) {
                    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble))
                        return amk__ld_fail(L, AMK_ESPEC, vpath, "%g is outside the int32 range",
                                            v->valuedouble);
                    return amk__ld_fail(L, AMK_ESPEC, vpath, "not an integer (%s%s)",
                                        cJSON_IsNumber(v) ? "" : "got ",
                                        cJSON_IsNumber(v) ? "has a fraction" : amk__ld_json_type(v));
                }
                for (int j = 0; j < pm->n; j++)
                    if (pm->values[j] == x)
                        return amk__ld_fail(L, AMK_ESPEC, vpath, "duplicate value %lld",
                                            (long long)x);
                pm->values[pm->n++] = x;
            }
        }
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
        snprintf(vpath, sizeof vpath, "%s.default", path);
        pm->def = -1;
        int64_t x;
        for (int j = 0; j < pm->n; j++) {
            if (pm->is_enum ? (cJSON_IsString(def) && !strcmp(def->valuestring, pm->labels[j]))
                            : (amk__ld_json_int(def, INT32_MIN, INT32_MAX,
                                                &x) && x == pm->values[j]))
                pm->def = j;
        }
        if (pm->def < 0)
            return amk__ld_fail(L, AMK_ESPEC, vpath, "default is not one of the values");
        const cJSON *doc = cJSON_GetObjectItemCaseSensitive(p, "doc");
        if (doc && !cJSON_IsString(doc)) {
            snprintf(vpath, sizeof vpath, "%s.doc", path);
            return amk__ld_fail(L, AMK_ESPEC, vpath, "expected a string, got %s",
                                amk__ld_json_type(doc));
        }
        if (doc && !(pm->doc = amk__ld_dup_or_fail(L, doc->valuestring)))
            return L->err;
    }
    return 0;
}

static int load_derived_names(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "derived");
    if (!dv)
        return 0;
    if (!cJSON_IsObject(dv))
        return amk__ld_fail(L, AMK_ESPEC, "derived",
                            "expected an object of name: expression, got %s",
                            amk__ld_json_type(dv));
    if (cJSON_GetArraySize(dv) > AMK__MAX_DERIVED)
        return amk__ld_fail(L, AMK_ESPEC, "derived", "at most %d derived values", AMK__MAX_DERIVED);
    for (const cJSON *c = dv->child; c; c = c->next) {
        char path[160];
        snprintf(path, sizeof path, "derived.%s", c->string);
        if (amk__ld_check_new_name(L, path, c->string))
            return L->err;
        snprintf(s->derived[s->nderived++].name, AMK_NAME_MAX, "%s", c->string);
    }
    return 0;
}

/* Shape objects: `base` NULL for the default shape (every dim required). */
static int load_shape(loader *L, const cJSON *obj, const char *path, const amk_shape *base,
                      amk_shape *out)
{
    amk_spec *s = L->s;
    if (!cJSON_IsObject(obj))
        return amk__ld_fail(L, AMK_ESPEC, path, "expected an object of dim: value, got %s",
                            amk__ld_json_type(obj));
    memset(out, 0, sizeof *out);
    if (base)
        *out = *base;
    int seen[AMK_MAX_DIMS] = {0}, seen_dtype = 0;
    for (const cJSON *c = obj->child; c; c = c->next) {
        char fpath[200];
        snprintf(fpath, sizeof fpath, "%s.%s", path, c->string);
        for (const cJSON *p = obj->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return amk__ld_fail(L, AMK_ESPEC, path, "duplicate field '%s'", c->string);
        if (!strcmp(c->string, "dtype")) {
            int k = -1;
            for (int i = 0; cJSON_IsString(c) && i < s->ndtypes; i++)
                if (!strcmp(amk__dtype_names[s->dtypes[i]], c->valuestring))
                    k = i;
            if (k < 0)
                return amk__ld_fail(L, AMK_ESPEC, fpath, "not one of the spec's dtypes");
            out->dtype = k;
            seen_dtype = 1;
            continue;
        }
        int k = -1;
        for (int i = 0; i < s->ndims; i++)
            if (!strcmp(s->dims[i], c->string))
                k = i;
        if (k < 0)
            return amk__ld_fail(L, AMK_ESPEC, path, "unknown dim '%s'", c->string);
        int64_t v;
        if (!amk__ld_json_int(c, 1, JSON_INT_MAX, &v))
            return amk__ld_fail(L, AMK_ESPEC, fpath, "expected an integer in 1..2^53, got %s%s",
                                cJSON_IsNumber(c) ? "" : amk__ld_json_type(c),
                                cJSON_IsNumber(c) ? "a non-integer or out-of-range number" : "");
        out->dims[k] = v;
        seen[k] = 1;
    }
    if (!base) {
        for (int i = 0; i < s->ndims; i++)
            if (!seen[i])
                return amk__ld_fail(L, AMK_ESPEC, path, "the default shape must give dim '%s'",
                                    s->dims[i]);
        if (s->ndtypes > 1 && !seen_dtype)
            return amk__ld_fail(L, AMK_ESPEC, path, "the default shape must give 'dtype' (the spec "
                                "declares several)");
    }
    return 0;
}

static int load_shapes(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, "shapes");
    if (!cJSON_IsObject(sh))
        return amk__ld_fail(L, AMK_ESPEC, "shapes", "expected an object of named shapes, got %s",
                            amk__ld_json_type(sh));
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(sh, "default");
    if (!def)
        return amk__ld_fail(L, AMK_ESPEC, "shapes", "missing required shape 'default'");
    if (cJSON_GetArraySize(sh) > AMK__MAX_SHAPES)
        return amk__ld_fail(L, AMK_ESPEC, "shapes", "at most %d shapes", AMK__MAX_SHAPES);
    if (load_shape(L, def, "shapes.default", NULL, &s->shapes[0]))
        return L->err;
    snprintf(s->shape_names[0], AMK_NAME_MAX, "default");
    s->nshapes = 1;
    for (const cJSON *c = sh->child; c; c = c->next) {
        char path[160];
        snprintf(path, sizeof path, "shapes.%s", c->string);
        for (const cJSON *p = sh->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return amk__ld_fail(L, AMK_ESPEC, "shapes", "duplicate shape '%s'", c->string);
        if (!strcmp(c->string, "default"))
            continue;
        if (!amk__ld_is_identifier(c->string))
            return amk__ld_fail(L, AMK_ESPEC, path, "shape name '%s' is not an identifier",
                                c->string);
        if (load_shape(L, c, path, &s->shapes[0], &s->shapes[s->nshapes]))
            return L->err;
        snprintf(s->shape_names[s->nshapes++], AMK_NAME_MAX, "%s", c->string);
    }
    return 0;
}

static int slot_level(const amk_spec *s, int slot)
{
    if (slot >= s->slot_params && slot < s->slot_params + s->nparams)
        return slot - s->slot_params;
    if (slot >= s->slot_derived && slot < s->slot_derived + s->nderived)
        return s->derived[slot - s->slot_derived].level;
    return -1;
}

static int deps_level(const amk_spec *s, const unsigned char *used)
{
    int lv = -1;
    for (int k = 0; k < s->nslots; k++)
        if (used[k]) {
            int l = slot_level(s, k);
            if (l > lv)
                lv = l;
        }
    return lv;
}

/* Depth-first topological sort of the derived values; a back edge is a cycle, reported
 * with its path ("a -> b -> a"). */
static int topo_visit(loader *L, int i, int *state, int *stack, int depth, int *order, int *n)
{
    amk_spec *s = L->s;
    if (state[i] == 2)
        return 0;
    if (state[i] == 1) {
        char path[512] = "";
        int from = 0;
        while (stack[from] != i)
            from++;
        for (int k = from; k < depth; k++)
            snprintf(path + strlen(path), sizeof path - strlen(path), "%s -> ",
                     s->derived[stack[k]].name);
        snprintf(path + strlen(path), sizeof path - strlen(path), "%s", s->derived[i].name);
        return amk__ld_fail(L, AMK_ECYCLE, "derived", "cycle among derived values: %s", path);
    }
    state[i] = 1;
    stack[depth] = i;
    for (int j = 0; j < s->nderived; j++)
        if (s->derived[i].deps[s->slot_derived + j])
            if (topo_visit(L, j, state, stack, depth + 1, order, n))
                return L->err;
    state[i] = 2;
    order[(*n)++] = i;
    return 0;
}

static int load_derived_exprs(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "derived");
    int i = 0;
    for (const cJSON *c = dv ? dv->child : NULL; c; c = c->next, i++) {
        char path[160];
        snprintf(path, sizeof path, "derived.%s", c->string);
        amk__derived *d = &s->derived[i];
        d->slot = s->slot_derived + i;
        if (!(d->e = amk__ld_get_expr(L, c, path)))
            return L->err;
        d->written_as_number = cJSON_IsNumber(c);
        amk_expr_slots(d->e, d->deps, s->nslots);
    }
    int state[AMK__MAX_DERIVED] = {0}, stack[AMK__MAX_DERIVED], order[AMK__MAX_DERIVED], n = 0;
    for (int k = 0; k < s->nderived; k++)
        if (topo_visit(L, k, state, stack, 0, order, &n))
            return L->err;
    for (int k = 0; k < n; k++) {
        amk__derived *d = &s->derived[order[k]];
        d->level = deps_level(s, d->deps);
    }
    /* Stable sort of the topological order by level: a value's level is >= its inputs'
     * levels, so the result is still topological, and enumeration can recompute only the
     * values at or after the param that changed. */
    int k2 = 0;
    for (int lv = -1; lv < s->nparams; lv++)
        for (int k = 0; k < n; k++)
            if (s->derived[order[k]].level == lv)
                s->dorder[k2++] = order[k];
    return 0;
}

static int load_restrictions(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "restrictions");
    if (!rs)
        return 0;
    if (!cJSON_IsArray(rs))
        return amk__ld_fail(L, AMK_ESPEC, "restrictions",
                            "expected an array of expressions, got %s",
                            amk__ld_json_type(rs));
    if (cJSON_GetArraySize(rs) > AMK__MAX_RESTRICT)
        return amk__ld_fail(L, AMK_ESPEC, "restrictions", "at most %d restrictions",
                            AMK__MAX_RESTRICT);
    int i = 0;
    for (const cJSON *c = rs->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "restrictions[%d]", i);
        amk__restrict *r = &s->restrict_[i];
        if (!(r->e = amk__ld_get_expr(L, c, path)))
            return L->err;
        r->written_as_number = cJSON_IsNumber(c);
        s->nrestrict++;
        unsigned char used[AMK__MAX_SLOTS] = {0};
        amk_expr_slots(r->e, used, s->nslots);
        r->level = deps_level(s, used);
    }
    return 0;
}

/* Evaluates one expression of the default config; an arithmetic error is a spec error. */
static int eval_default(loader *L, const amk_expr *e, const char *path, const int64_t *slots)
{
    if (!e || L->err)
        return L->err;
    int64_t v;
    amk_diag ed = {0};
    if (amk_expr_eval(e, slots, &v, &ed))
        return amk__ld_fail(L, AMK_ESPEC, path, "%s (default config on the default shape)", ed.msg);
    return 0;
}

static int check_default(loader *L)
{
    amk_spec *s = L->s;
    int64_t slots[AMK__MAX_SLOTS] = {0};
    amk_config c;
    amk_config_default(s, NULL, &c);
    amk__slots_base(s, &c.shape, amk__limits_generous(), slots);
    for (int i = 0; i < s->nparams; i++)
        slots[s->slot_params + i] = amk_config_param(&c, i);
    for (int k = 0; k < s->nderived; k++) {
        const amk__derived *dv = &s->derived[s->dorder[k]];
        char path[128];
        snprintf(path, sizeof path, "derived.%s", dv->name);
        int64_t v;
        amk_diag ed = {0};
        if (amk_expr_eval(dv->e, slots, &v, &ed))
            return amk__ld_fail(L, AMK_ESPEC, path, "%s (default config on the default shape)",
                                ed.msg);
        slots[dv->slot] = v;
    }
    char path[128];
    for (int i = 0; i < s->nrestrict; i++) {
        snprintf(path, sizeof path, "restrictions[%d]", i);
        if (eval_default(L, s->restrict_[i].e, path, slots))
            return L->err;
    }
    for (int i = 0; i < s->nbuffers; i++) {
        snprintf(path, sizeof path, "buffers[%d].count", i);
        eval_default(L, s->buffers[i].count, path, slots);
        snprintf(path, sizeof path, "buffers[%d].tolerance_reduction", i);
        eval_default(L, s->buffers[i].tol_reduction, path, slots);
    }
    for (int i = 0; i < s->ndefines; i++) {
        snprintf(path, sizeof path, "defines.%.40s", s->defines[i].name);
        eval_default(L, s->defines[i].e, path, slots);
    }
    const amk__launch_exprs *ls[2] = {&s->launch, &s->ref_launch};
    const char *lname[2] = {"launch", "reference.launch"};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s.grid[%d]", lname[k], i);
            eval_default(L, ls[k]->grid[i], path, slots);
            snprintf(path, sizeof path, "%s.block[%d]", lname[k], i);
            eval_default(L, ls[k]->block[i], path, slots);
        }
        snprintf(path, sizeof path, "%s.shared_bytes", lname[k]);
        eval_default(L, ls[k]->shared, path, slots);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s.cluster[%d]", lname[k], i);
            eval_default(L, ls[k]->cluster[i], path, slots);
        }
    }
    for (int m = 0; m < s->ntmaps; m++) {
        const amk__tmap *t = &s->tmaps[m];
        for (int i = 0; i < t->rank; i++) {
            snprintf(path, sizeof path, "tensor_maps.%s.dims[%d]", t->name, i);
            eval_default(L, t->dims[i], path, slots);
            snprintf(path, sizeof path, "tensor_maps.%s.box[%d]", t->name, i);
            eval_default(L, t->box[i], path, slots);
            if (i + 1 < t->rank) {
                snprintf(path, sizeof path, "tensor_maps.%s.strides[%d]", t->name, i);
                eval_default(L, t->strides[i], path, slots);
            }
        }
    }
    eval_default(L, s->flops, "cost.flops", slots);
    eval_default(L, s->min_bytes, "cost.min_bytes", slots);
    eval_default(L, s->traffic, "cost.traffic_bytes", slots);
    eval_default(L, s->regs, "cost.regs", slots);
    eval_default(L, s->uniform_blocks, "cost.uniform_blocks", slots);
    eval_default(L, s->tol_reduction, "tolerance.reduction", slots);
    return L->err;
}

static int load_root(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    static const char *const allowed[] = {
        "amk_spec", "name", "description", "dims", "dtypes", "shapes", "params", "derived",
        "restrictions", "buffers", "args", "source", "entry", "launch", "cost", "reference",
        "tolerance", "requires", "tensor_maps", "peer", "scalars", "defines", "headers", NULL};
    static const char *const required[] = {
        "amk_spec", "name", "dims", "dtypes", "shapes", "params", "buffers", "args", "source",
        "entry", "launch", "cost", "reference", "tolerance", NULL};
    if (!cJSON_IsObject(root))
        return amk__ld_fail(L, AMK_ESPEC, NULL, "expected a JSON object at the top level, got %s",
                            amk__ld_json_type(root));
    if (amk__ld_check_keys(L, root, NULL, allowed, NULL))
        return L->err;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "amk_spec");
    int64_t v;
    if (!ver)
        return amk__ld_fail(L, AMK_ESPEC, NULL, "missing required field 'amk_spec' (the format "
                            "version, 1)");
    if (!amk__ld_json_int(ver, 0, 1000000, &v) || v != 1)
        return amk__ld_fail(L, AMK_ESPEC, "amk_spec", "unsupported format version (expected 1)");
    const char *name = amk__ld_get_string(L, root, "name", "", 1);
    if (!name)
        return L->err;
    int okname = name[0] >= 'a' && name[0] <= 'z' && strlen(name) < AMK_NAME_MAX;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            okname = 0;
    if (!okname)
        return amk__ld_fail(L, AMK_ESPEC, "name", "'%s' is not a kernel name ([a-z][a-z0-9_]*)",
                            name);
    snprintf(s->name, sizeof s->name, "%s", name);
    const char *desc = amk__ld_get_string(L, root, "description", "", 0);
    if (L->err)
        return L->err;
    if (!(s->description = amk__ld_dup_or_fail(L, desc ? desc : "")))
        return L->err;
    if (amk__ld_check_keys(L, root, NULL, allowed, required))
        return L->err;
    if (load_dims(L, root) || load_dtypes(L, root) || load_params(L, root) ||
        load_derived_names(L, root) || load_shapes(L, root))
        return L->err;
    s->slot_dtype = s->ndims;
    s->slot_elt = s->ndims + 1;
    s->slot_limits = s->ndims + 2;
    s->slot_params = s->slot_limits + AMK__N_LIMITS;
    s->slot_derived = s->slot_params + s->nparams;
    s->nslots = s->slot_derived + s->nderived;
    if (load_derived_exprs(L, root) || load_restrictions(L, root) || amk__ld_load_buffers(L,
                                                                                          root) ||
        amk__ld_load_tensor_maps(L, root) || amk__ld_load_scalars_defines(L, root))
        return L->err;
    if (amk__ld_load_args(L, cJSON_GetObjectItemCaseSensitive(root, "args"), "args", s->args,
                          &s->nargs))
        return L->err;
    const char *src = amk__ld_get_string(L, root, "source", "", 1);
    if (!src || amk__ld_check_file(L, "source", src))
        return L->err;
    const char *entry = amk__ld_get_string(L, root, "entry", "", 1);
    if (!entry)
        return L->err;
    if (!amk__ld_is_identifier(entry))
        return amk__ld_fail(L, AMK_ESPEC, "entry", "'%s' is not an identifier", entry);
    if (!(s->source = amk__ld_dup_or_fail(L, src)) || !(s->entry = amk__ld_dup_or_fail(L, entry)))
        return L->err;
    if (amk__ld_load_launch(L, cJSON_GetObjectItemCaseSensitive(root, "launch"), "launch",
                            &s->launch) ||
        amk__ld_load_cost(L, root) || amk__ld_load_reference(L, root) ||
        amk__ld_load_tolerance(L, root) || amk__ld_load_peer(L, root) ||
        amk__ld_load_requires(L, root))
        return L->err;
    return check_default(L);
}


int amk_spec_load(const char *dir, amk_spec **out, amk_diag *d)
{
    *out = NULL;
    if (!dir)
        return amk_diag_set(d, AMK_EINVAL, "amk_spec_load: dir is NULL");
    amk_spec *s = calloc(1, sizeof *s);
    if (!s)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory loading %s", dir);
    loader L = {.s = s, .d = d};
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    s->dir = strndup(dir, dl);
    s->path = malloc(dl + sizeof "/spec.json");
    if (!s->dir || !s->path) {
        amk_spec_free(s);
        return amk_diag_set(d, AMK_ENOMEM, "out of memory loading %s", dir);
    }
    snprintf(s->path, dl + sizeof "/spec.json", "%s/spec.json", s->dir);
    char *text = NULL;
    size_t len = 0;
    int rc = amk_fs_read_all(s->path, &text, &len, d);
    if (rc) {
        amk_spec_free(s);
        return rc;
    }
    cJSON *json = NULL;
    rc = amk_json_parse(s->path, text, len, &json, d);
    free(text);
    if (rc) {
        amk_spec_free(s);
        return rc;
    }
    /* The JSON is read here and only here; the compiled spec keeps its compact text. */
    if (load_root(&L, json) || !(s->text = cJSON_PrintUnformatted(json))) {
        cJSON_Delete(json);
        amk_spec_free(s);
        return L.err ? L.err : amk_diag_set(d, AMK_ENOMEM, "out of memory loading %s", dir);
    }
    cJSON_Delete(json);
    *out = s;
    return AMK_OK;
}

static void free_launch(amk__launch_exprs *l)
{
    for (int i = 0; i < 3; i++) {
        amk_expr_free(l->grid[i]);
        amk_expr_free(l->block[i]);
        amk_expr_free(l->cluster[i]);
    }
    amk_expr_free(l->shared);
}

void amk_spec_free(amk_spec *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nparams; i++)
        for (int j = 0; j < s->params[i].n; j++)
            free(s->params[i].labels[j]);
    for (int i = 0; i < s->nparams; i++)
        free(s->params[i].doc);
    for (int i = 0; i < s->nderived; i++)
        amk_expr_free(s->derived[i].e);
    for (int i = 0; i < s->nrestrict; i++)
        amk_expr_free(s->restrict_[i].e);
    for (int i = 0; i < s->nbuffers; i++) {
        amk_expr_free(s->buffers[i].count);
        amk_expr_free(s->buffers[i].tol_reduction);
    }
    for (int i = 0; i < s->ndefines; i++)
        amk_expr_free(s->defines[i].e);
    free_launch(&s->launch);
    free_launch(&s->ref_launch);
    for (int m = 0; m < s->ntmaps; m++)
        for (int i = 0; i < AMK_TMAP_MAX_RANK; i++) {
            amk_expr_free(s->tmaps[m].dims[i]);
            amk_expr_free(s->tmaps[m].box[i]);
            if (i < AMK_TMAP_MAX_RANK - 1)
                amk_expr_free(s->tmaps[m].strides[i]);
        }
    amk_expr_free(s->flops);
    amk_expr_free(s->min_bytes);
    amk_expr_free(s->traffic);
    amk_expr_free(s->regs);
    amk_expr_free(s->uniform_blocks);
    amk_expr_free(s->tol_reduction);
    amk_expr_free(s->peer_m);
    amk_expr_free(s->peer_n);
    amk_expr_free(s->peer_k);
    free(s->source);
    free(s->entry);
    free(s->ref_source);
    free(s->ref_entry);
    free(s->ref_host);
    free(s->description);
    free(s->text);
    for (int k = 0; k < AMK_MEMORY_TERMS; k++)
        amk_expr_free(s->memory[k]);
    free(s->dir);
    free(s->path);
    free(s);
}
