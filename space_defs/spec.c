/* Kernel spec loading and validation (space_defs/SPEC.md), spec accessors and shapes.
 * A spec is validated completely at load so that nothing downstream has to re-check it:
 * every field, every name, every expression, derived-value cycles, and the default config
 * evaluated on the default shape. */
#include "space_defs_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const amk__dtype_names[] = {"f32", "f16", "bf16", "fp8e4m3", "int8", NULL};
const int amk__dtype_sizes[] = {4, 2, 2, 1, 1, 0};

const char *const amk__limit_names[AMK__N_LIMITS] = {
#define XX(name, doc) #name,
    AMK_LIMITS_MAP(XX)
#undef XX
};

int amk__dtype_index(const char *name)
{
    for (int i = 0; name && amk__dtype_names[i]; i++)
        if (!strcmp(name, amk__dtype_names[i]))
            return i;
    return -1;
}

int amk_dtype_size(const char *dtype)
{
    int i = amk__dtype_index(dtype);
    return i < 0 ? 0 : amk__dtype_sizes[i];
}

const amk_limits *amk__limits_generous(void)
{
    static const amk_limits lim = {
        .max_threads = 1024,
        .max_smem = 49152,
        .max_smem_optin = 232448,
        .smem_per_sm = 233472,
        .warp = 32,
        .sm_count = 132,
        .regs_per_sm = 65536,
        .max_regs_per_thread = 255,
        .max_blocks_per_sm = 32,
        .max_threads_per_sm = 2048,
        .max_grid_x = 2147483647,
        .max_grid_yz = 65535,
        .l2_bytes = 52428800,
    };
    return &lim;
}

static int name_eq(const char *a, const char *name, size_t len)
{
    return strlen(a) == len && memcmp(a, name, len) == 0;
}

int amk__spec_resolve(void *spec, const char *name, size_t len)
{
    const amk_spec *s = spec;
    for (int i = 0; i < s->ndims; i++)
        if (name_eq(s->dims[i], name, len))
            return i;
    if (name_eq("dtype", name, len))
        return s->slot_dtype;
    if (name_eq("elt", name, len))
        return s->slot_elt;
    for (int i = 0; i < AMK__N_LIMITS; i++)
        if (name_eq(amk__limit_names[i], name, len))
            return s->slot_limits + i;
    for (int i = 0; i < s->nparams; i++)
        if (name_eq(s->params[i].name, name, len))
            return s->slot_params + i;
    for (int i = 0; i < s->nderived; i++)
        if (name_eq(s->derived[i].name, name, len))
            return s->slot_derived + i;
    return -1;
}

void amk__slots_base(const amk_spec *s, const amk_shape *sh, const amk_limits *lim,
                     int64_t *slots)
{
    if (!lim)
        lim = amk__limits_generous();
    for (int i = 0; i < s->ndims; i++)
        slots[i] = sh->dims[i];
    slots[s->slot_dtype] = sh->dtype;
    int dt = sh->dtype >= 0 && sh->dtype < s->ndtypes ? s->dtypes[sh->dtype] : 0;
    slots[s->slot_elt] = amk__dtype_sizes[dt];
    int64_t *l = slots + s->slot_limits;
    int k = 0;
#define XX(name, doc) l[k++] = lim->name;
    AMK_LIMITS_MAP(XX)
#undef XX
    (void)k;
}

int amk__slots_derived(const amk_spec *s, int64_t *slots, amk_diag *d)
{
    for (int k = 0; k < s->nderived; k++) {
        const amk__derived *dv = &s->derived[s->dorder[k]];
        int pc = 0;
        int rc = amk__expr_run(dv->e, slots, &slots[dv->slot], &pc);
        if (rc) {
            amk__expr_error(dv->e, slots, rc, pc, d);
            amk_diag_prefix(d, "derived value '%s'", dv->name);
            return rc;
        }
    }
    return AMK_OK;
}

/* ------------------------------------------------------------------------------------ */
/* loader */

typedef struct loader {
    amk_spec *s;
    amk_diag *d;
    int err;
} loader;

static int fail(loader *L, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(loader *L, int code, const char *path, const char *fmt, ...)
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

static const char *json_type(const cJSON *j)
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

static int is_identifier(const char *n)
{
    if (!n || !(isalpha((unsigned char)n[0]) || n[0] == '_'))
        return 0;
    for (const char *p = n; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return strlen(n) < AMK_NAME_MAX;
}

/* Integral JSON number in [lo, hi] (hi <= 2^53 so the double is exact). */
static int json_int(const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    if (!amk_json_integer_text(j)) /* not a number, or written 64.0 / 1.28e2 */
        return 0;
    double v = j->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi)
        return 0;
    *out = (int64_t)v;
    return 1;
}

#define JSON_INT_MAX ((int64_t)1 << 53)

/* Rejects keys outside `allowed`, duplicate keys, and missing `required` keys. */
static int check_keys(loader *L, const cJSON *obj, const char *path, const char *const *allowed,
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
            return fail(L, AMK_ESPEC, path, "unknown field '%s' (allowed: %s)", c->string, list);
        }
        for (const cJSON *p = obj->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return fail(L, AMK_ESPEC, path, "duplicate field '%s'", c->string);
    }
    for (const char *const *r = required; r && *r; r++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, *r))
            return fail(L, AMK_ESPEC, path, "missing required field '%s'", *r);
    return 0;
}

static const char *const reserved[] = {"elt", "dtype", "min", "max", "cdiv", "log2", "ispow2",
                                       "pow", "floordiv", "floormod", NULL};

/* A new name for a dim, param or derived value: identifier, not reserved, not taken. */
static int check_new_name(loader *L, const char *path, const char *name)
{
    amk_spec *s = L->s;
    if (!is_identifier(name))
        return fail(L, AMK_ESPEC, path, "'%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, "
                    "at most %d characters)", name, AMK_NAME_MAX - 1);
    for (const char *const *r = reserved; *r; r++)
        if (!strcmp(name, *r))
            return fail(L, AMK_ESPEC, path, "'%s' is a reserved name", name);
    for (int i = 0; i < AMK__N_LIMITS; i++)
        if (!strcmp(name, amk__limit_names[i]))
            return fail(L, AMK_ESPEC, path, "'%s' is the name of a device limit", name);
    if (!strncmp(name, "AMK_", 4))
        return fail(L, AMK_ESPEC, path, "'%s': names starting with AMK_ are reserved", name);
    for (int i = 0; i < s->ndims; i++)
        if (!strcmp(name, s->dims[i]))
            return fail(L, AMK_ESPEC, path, "'%s' is already declared as a dim", name);
    for (int i = 0; i < s->nparams; i++)
        if (!strcmp(name, s->params[i].name))
            return fail(L, AMK_ESPEC, path, "'%s' is already declared as a param", name);
    for (int i = 0; i < s->nderived; i++)
        if (!strcmp(name, s->derived[i].name))
            return fail(L, AMK_ESPEC, path, "'%s' is already declared as a derived value",
                        name);
    return 0;
}

static char *dup_or_fail(loader *L, const char *src)
{
    char *p = strdup(src);
    if (!p)
        fail(L, AMK_ENOMEM, NULL, "out of memory");
    return p;
}

/* A string field (required or optional). Returns the borrowed text or NULL. */
static const char *get_string(loader *L, const cJSON *obj, const char *key, const char *path,
                              int required)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required)
            fail(L, AMK_ESPEC, path, "missing required field '%s'", key);
        return NULL;
    }
    if (!cJSON_IsString(j)) {
        fail(L, AMK_ESPEC, path, "%s: expected a string, got %s", key, json_type(j));
        return NULL;
    }
    return j->valuestring;
}

/* Parses an expression given as a string (or an integer literal) at `path`. */
static amk_expr *get_expr(loader *L, const cJSON *j, const char *path)
{
    if (L->err)
        return NULL;
    char buf[32];
    const char *text;
    int64_t v;
    if (cJSON_IsString(j))
        text = j->valuestring;
    else if (json_int(j, -JSON_INT_MAX, JSON_INT_MAX, &v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)v);
        text = buf;
    } else {
        fail(L, AMK_ESPEC, path, "expected an expression (string), got %s", json_type(j));
        return NULL;
    }
    amk_expr *e = NULL;
    amk_diag ed = {0};
    int rc = amk_expr_parse(text, amk__spec_resolve, L->s, &e, &ed);
    if (rc) {
        fail(L, rc == AMK_ENOMEM ? AMK_ENOMEM : AMK_ESPEC, path, "%s", ed.msg);
        return NULL;
    }
    return e;
}

static int load_dims(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(root, "dims");
    if (!cJSON_IsArray(dims))
        return fail(L, AMK_ESPEC, "dims", "expected an array of names, got %s", json_type(dims));
    int n = cJSON_GetArraySize(dims);
    if (n < 1 || n > AMK_MAX_DIMS)
        return fail(L, AMK_ESPEC, "dims", "expected 1 to %d names, got %d", AMK_MAX_DIMS, n);
    int i = 0;
    for (const cJSON *c = dims->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "dims[%d]", i);
        if (!cJSON_IsString(c))
            return fail(L, AMK_ESPEC, path, "expected a name, got %s", json_type(c));
        if (check_new_name(L, path, c->valuestring))
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
        return fail(L, AMK_ESPEC, "dtypes", "expected an array of dtype names, got %s",
                    json_type(dt));
    int n = cJSON_GetArraySize(dt);
    if (n < 1 || n > AMK__MAX_DTYPES)
        return fail(L, AMK_ESPEC, "dtypes", "expected 1 to %d dtypes, got %d", AMK__MAX_DTYPES,
                    n);
    int i = 0;
    for (const cJSON *c = dt->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "dtypes[%d]", i);
        int k = cJSON_IsString(c) ? amk__dtype_index(c->valuestring) : -1;
        if (k < 0)
            return fail(L, AMK_ESPEC, path, "unknown dtype %s%s%s (known: f32 f16 bf16 "
                        "fp8e4m3 int8)", cJSON_IsString(c) ? "'" : "",
                        cJSON_IsString(c) ? c->valuestring : json_type(c),
                        cJSON_IsString(c) ? "'" : "");
        for (int j = 0; j < s->ndtypes; j++)
            if (s->dtypes[j] == k)
                return fail(L, AMK_ESPEC, path, "dtype '%s' listed twice", c->valuestring);
        s->dtypes[s->ndtypes++] = k;
    }
    return 0;
}

static int load_params(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (!cJSON_IsObject(ps))
        return fail(L, AMK_ESPEC, "params", "expected an object, got %s", json_type(ps));
    static const char *const allowed[] = {"values", "default", "doc", NULL};
    static const char *const required[] = {"values", "default", NULL};
    if (cJSON_GetArraySize(ps) > AMK_MAX_PARAMS)
        return fail(L, AMK_ESPEC, "params", "at most %d params, got %d", AMK_MAX_PARAMS,
                    cJSON_GetArraySize(ps));
    for (const cJSON *p = ps->child; p; p = p->next) {
        char path[160];
        snprintf(path, sizeof path, "params.%s", p->string);
        for (const cJSON *q = ps->child; q != p; q = q->next)
            if (!strcmp(q->string, p->string))
                return fail(L, AMK_ESPEC, "params", "duplicate param '%s'", p->string);
        if (check_new_name(L, path, p->string))
            return L->err;
        if (!cJSON_IsObject(p))
            return fail(L, AMK_ESPEC, path, "expected an object with values and default, got %s",
                        json_type(p));
        if (check_keys(L, p, path, allowed, required))
            return L->err;
        amk__param *pm = &s->params[s->nparams];
        memset(pm, 0, sizeof *pm);
        snprintf(pm->name, sizeof pm->name, "%s", p->string);
        s->nparams++; /* counted now so spec_free releases labels on failure */
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(p, "values");
        char vpath[200];
        snprintf(vpath, sizeof vpath, "%s.values", path);
        if (!cJSON_IsArray(vals))
            return fail(L, AMK_ESPEC, vpath, "expected an array, got %s", json_type(vals));
        int n = cJSON_GetArraySize(vals);
        if (n < 1 || n > AMK_MAX_CHOICES)
            return fail(L, AMK_ESPEC, vpath, "expected 1 to %d values, got %d", AMK_MAX_CHOICES,
                        n);
        pm->is_enum = cJSON_IsString(vals->child);
        int i = 0;
        for (const cJSON *v = vals->child; v; v = v->next, i++) {
            snprintf(vpath, sizeof vpath, "%s.values[%d]", path, i);
            if (pm->is_enum) {
                if (!cJSON_IsString(v))
                    return fail(L, AMK_ESPEC, vpath, "not a string (values[0] is a string, so "
                                "this param is an enum)");
                const char *lab = v->valuestring;
                if (!*lab || strlen(lab) >= AMK_NAME_MAX)
                    return fail(L, AMK_ESPEC, vpath, "enum label must have 1 to %d characters",
                                AMK_NAME_MAX - 1);
                for (const char *c = lab; *c; c++)
                    if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
                        return fail(L, AMK_ESPEC, vpath, "enum label '%s' may only contain "
                                    "letters, digits, '_', '-' and '.'", lab);
                for (int j = 0; j < pm->n; j++)
                    if (!strcmp(pm->labels[j], lab))
                        return fail(L, AMK_ESPEC, vpath, "duplicate value '%s'", lab);
                if (!(pm->labels[pm->n] = dup_or_fail(L, lab)))
                    return L->err;
                pm->values[pm->n++] = i;
            } else {
                int64_t x;
                if (!json_int(v, INT32_MIN, INT32_MAX, &x)) {
                    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble))
                        return fail(L, AMK_ESPEC, vpath, "%g is outside the int32 range",
                                    v->valuedouble);
                    return fail(L, AMK_ESPEC, vpath, "not an integer (%s%s)",
                                cJSON_IsNumber(v) ? "" : "got ",
                                cJSON_IsNumber(v) ? "has a fraction" : json_type(v));
                }
                for (int j = 0; j < pm->n; j++)
                    if (pm->values[j] == x)
                        return fail(L, AMK_ESPEC, vpath, "duplicate value %lld", (long long)x);
                pm->values[pm->n++] = x;
            }
        }
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
        snprintf(vpath, sizeof vpath, "%s.default", path);
        pm->def = -1;
        int64_t x;
        for (int j = 0; j < pm->n; j++) {
            if (pm->is_enum ? (cJSON_IsString(def) && !strcmp(def->valuestring, pm->labels[j]))
                            : (json_int(def, INT32_MIN, INT32_MAX, &x) && x == pm->values[j]))
                pm->def = j;
        }
        if (pm->def < 0)
            return fail(L, AMK_ESPEC, vpath, "default is not one of the values");
        const cJSON *doc = cJSON_GetObjectItemCaseSensitive(p, "doc");
        if (doc && !cJSON_IsString(doc)) {
            snprintf(vpath, sizeof vpath, "%s.doc", path);
            return fail(L, AMK_ESPEC, vpath, "expected a string, got %s", json_type(doc));
        }
        if (doc && !(pm->doc = dup_or_fail(L, doc->valuestring)))
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
        return fail(L, AMK_ESPEC, "derived", "expected an object of name: expression, got %s",
                    json_type(dv));
    if (cJSON_GetArraySize(dv) > AMK__MAX_DERIVED)
        return fail(L, AMK_ESPEC, "derived", "at most %d derived values", AMK__MAX_DERIVED);
    for (const cJSON *c = dv->child; c; c = c->next) {
        char path[160];
        snprintf(path, sizeof path, "derived.%s", c->string);
        if (check_new_name(L, path, c->string))
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
        return fail(L, AMK_ESPEC, path, "expected an object of dim: value, got %s",
                    json_type(obj));
    memset(out, 0, sizeof *out);
    if (base)
        *out = *base;
    int seen[AMK_MAX_DIMS] = {0}, seen_dtype = 0;
    for (const cJSON *c = obj->child; c; c = c->next) {
        char fpath[200];
        snprintf(fpath, sizeof fpath, "%s.%s", path, c->string);
        for (const cJSON *p = obj->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return fail(L, AMK_ESPEC, path, "duplicate field '%s'", c->string);
        if (!strcmp(c->string, "dtype")) {
            int k = -1;
            for (int i = 0; cJSON_IsString(c) && i < s->ndtypes; i++)
                if (!strcmp(amk__dtype_names[s->dtypes[i]], c->valuestring))
                    k = i;
            if (k < 0)
                return fail(L, AMK_ESPEC, fpath, "not one of the spec's dtypes");
            out->dtype = k;
            seen_dtype = 1;
            continue;
        }
        int k = -1;
        for (int i = 0; i < s->ndims; i++)
            if (!strcmp(s->dims[i], c->string))
                k = i;
        if (k < 0)
            return fail(L, AMK_ESPEC, path, "unknown dim '%s'", c->string);
        int64_t v;
        if (!json_int(c, 1, JSON_INT_MAX, &v))
            return fail(L, AMK_ESPEC, fpath, "expected an integer >= 1, got %s%s",
                        cJSON_IsNumber(c) ? "" : json_type(c),
                        cJSON_IsNumber(c) ? "a non-integer or out-of-range number" : "");
        out->dims[k] = v;
        seen[k] = 1;
    }
    if (!base) {
        for (int i = 0; i < s->ndims; i++)
            if (!seen[i])
                return fail(L, AMK_ESPEC, path, "the default shape must give dim '%s'",
                            s->dims[i]);
        if (s->ndtypes > 1 && !seen_dtype)
            return fail(L, AMK_ESPEC, path, "the default shape must give 'dtype' (the spec "
                        "declares several)");
    }
    return 0;
}

static int load_shapes(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, "shapes");
    if (!cJSON_IsObject(sh))
        return fail(L, AMK_ESPEC, "shapes", "expected an object of named shapes, got %s",
                    json_type(sh));
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(sh, "default");
    if (!def)
        return fail(L, AMK_ESPEC, "shapes", "missing required shape 'default'");
    if (cJSON_GetArraySize(sh) > AMK__MAX_SHAPES)
        return fail(L, AMK_ESPEC, "shapes", "at most %d shapes", AMK__MAX_SHAPES);
    if (load_shape(L, def, "shapes.default", NULL, &s->shapes[0]))
        return L->err;
    snprintf(s->shape_names[0], AMK_NAME_MAX, "default");
    s->nshapes = 1;
    for (const cJSON *c = sh->child; c; c = c->next) {
        char path[160];
        snprintf(path, sizeof path, "shapes.%s", c->string);
        for (const cJSON *p = sh->child; p != c; p = p->next)
            if (!strcmp(p->string, c->string))
                return fail(L, AMK_ESPEC, "shapes", "duplicate shape '%s'", c->string);
        if (!strcmp(c->string, "default"))
            continue;
        if (!is_identifier(c->string))
            return fail(L, AMK_ESPEC, path, "shape name '%s' is not an identifier", c->string);
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
        return fail(L, AMK_ECYCLE, "derived", "cycle among derived values: %s", path);
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
        if (!(d->e = get_expr(L, c, path)))
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
        return fail(L, AMK_ESPEC, "restrictions", "expected an array of expressions, got %s",
                    json_type(rs));
    if (cJSON_GetArraySize(rs) > AMK__MAX_RESTRICT)
        return fail(L, AMK_ESPEC, "restrictions", "at most %d restrictions", AMK__MAX_RESTRICT);
    int i = 0;
    for (const cJSON *c = rs->child; c; c = c->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "restrictions[%d]", i);
        amk__restrict *r = &s->restrict_[i];
        if (!(r->e = get_expr(L, c, path)))
            return L->err;
        r->written_as_number = cJSON_IsNumber(c);
        s->nrestrict++;
        unsigned char used[AMK__MAX_SLOTS] = {0};
        amk_expr_slots(r->e, used, s->nslots);
        r->level = deps_level(s, used);
    }
    return 0;
}

/* Name of a dim or derived value passed as an int argument, or of a buffer. */
static int arg_known(const amk_spec *s, const char *name)
{
    for (int i = 0; i < s->nbuffers; i++)
        if (!strcmp(s->buffers[i].name, name))
            return 1;
    for (int i = 0; i < s->ndims; i++)
        if (!strcmp(s->dims[i], name))
            return 1;
    for (int i = 0; i < s->nderived; i++)
        if (!strcmp(s->derived[i].name, name))
            return 1;
    for (int i = 0; i < s->ntmaps; i++)
        if (!strcmp(s->tmaps[i].name, name))
            return 1;
    return 0;
}

static int load_buffers(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(root, "buffers");
    if (!cJSON_IsArray(bs))
        return fail(L, AMK_ESPEC, "buffers", "expected an array of buffer objects, got %s",
                    json_type(bs));
    int n = cJSON_GetArraySize(bs);
    if (n < 1 || n > AMK__MAX_BUFFERS)
        return fail(L, AMK_ESPEC, "buffers", "expected 1 to %d buffers, got %d",
                    AMK__MAX_BUFFERS, n);
    static const char *const allowed[] = {"name", "dtype", "count", "role", "init",
                                          "tolerance_reduction", NULL};
    static const char *const required[] = {"name", "dtype", "count", "role", NULL};
    int i = 0, nout = 0;
    for (const cJSON *b = bs->child; b; b = b->next, i++) {
        char path[64], fpath[96];
        snprintf(path, sizeof path, "buffers[%d]", i);
        if (!cJSON_IsObject(b))
            return fail(L, AMK_ESPEC, path, "expected an object, got %s", json_type(b));
        if (check_keys(L, b, path, allowed, required))
            return L->err;
        amk__buffer *bf = &s->buffers[s->nbuffers];
        const char *name = get_string(L, b, "name", path, 1);
        if (!name)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.name", path);
        if (!is_identifier(name))
            return fail(L, AMK_ESPEC, fpath, "'%s' is not an identifier", name);
        if (amk__spec_resolve(s, name, strlen(name)) >= 0)
            return fail(L, AMK_ESPEC, fpath, "'%s' is already a dim, param, derived value or "
                        "reserved name", name);
        for (int j = 0; j < s->nbuffers; j++)
            if (!strcmp(s->buffers[j].name, name))
                return fail(L, AMK_ESPEC, fpath, "duplicate buffer '%s'", name);
        snprintf(bf->name, sizeof bf->name, "%s", name);
        const char *dt = get_string(L, b, "dtype", path, 1);
        if (!dt)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.dtype", path);
        if (!strcmp(dt, "input"))
            bf->dtype = -1;
        else if ((bf->dtype = amk__dtype_index(dt)) < 0)
            return fail(L, AMK_ESPEC, fpath, "unknown dtype '%s' (\"input\" or one of f32 f16 "
                        "bf16 fp8e4m3 int8)", dt);
        const char *role = get_string(L, b, "role", path, 1);
        if (!role)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.role", path);
        if (!strcmp(role, "in")) bf->role = AMK__ROLE_IN;
        else if (!strcmp(role, "out")) bf->role = AMK__ROLE_OUT;
        else if (!strcmp(role, "inout")) bf->role = AMK__ROLE_INOUT;
        else return fail(L, AMK_ESPEC, fpath, "unknown role '%s' (in, out, inout)", role);
        if (bf->role != AMK__ROLE_IN)
            nout++;
        const char *init = get_string(L, b, "init", path, 0);
        if (L->err)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.init", path);
        if (init && bf->role == AMK__ROLE_OUT)
            return fail(L, AMK_ESPEC, fpath, "an output buffer has no initial distribution");
        if (!init)
            init = "uniform";
        if (strcmp(init, "uniform") && strcmp(init, "normal") && strcmp(init, "positive") &&
            strcmp(init, "zero"))
            return fail(L, AMK_ESPEC, fpath, "unknown init '%s' (uniform, normal, positive, "
                        "zero)", init);
        /* "zero" is for workspace (counters, atomics) only: real inputs are never zero. */
        if (!strcmp(init, "zero") && bf->role != AMK__ROLE_INOUT)
            return fail(L, AMK_ESPEC, fpath, "init 'zero' is for inout workspace buffers only");
        snprintf(bf->init, sizeof bf->init, "%s", init);
        s->nbuffers++;
        snprintf(fpath, sizeof fpath, "%s.count", path);
        if (!(bf->count = get_expr(L, cJSON_GetObjectItemCaseSensitive(b, "count"), fpath)))
            return L->err;
        const cJSON *tr = cJSON_GetObjectItemCaseSensitive(b, "tolerance_reduction");
        if (tr) {
            snprintf(fpath, sizeof fpath, "%s.tolerance_reduction", path);
            if (bf->role == AMK__ROLE_IN)
                return fail(L, AMK_ESPEC, fpath, "only outputs have a tolerance");
            if (!(bf->tol_reduction = get_expr(L, tr, fpath)))
                return L->err;
        }
    }
    if (nout == 0)
        return fail(L, AMK_ESPEC, "buffers", "no output buffer (role out or inout): nothing "
                    "could be checked");
    return 0;
}

static int load_args(loader *L, const cJSON *arr, const char *path, char (*out)[AMK_NAME_MAX],
                     int *nout)
{
    amk_spec *s = L->s;
    if (!cJSON_IsArray(arr))
        return fail(L, AMK_ESPEC, path, "expected an array of names, got %s", json_type(arr));
    if (cJSON_GetArraySize(arr) > AMK__MAX_ARGS)
        return fail(L, AMK_ESPEC, path, "at most %d arguments", AMK__MAX_ARGS);
    int i = 0;
    *nout = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char ipath[96];
        snprintf(ipath, sizeof ipath, "%s[%d]", path, i);
        if (!cJSON_IsString(c))
            return fail(L, AMK_ESPEC, ipath, "expected a name, got %s", json_type(c));
        if (!arg_known(s, c->valuestring))
            return fail(L, AMK_ESPEC, ipath, "unknown argument '%s' (must name a buffer, a dim, "
                        "a derived value or a tensor map)", c->valuestring);
        snprintf(out[(*nout)++], AMK_NAME_MAX, "%s", c->valuestring);
    }
    return 0;
}

/* A file named by the spec: relative, inside the folder, a regular file. */
/* Does the relative path have a ".." component? */
static int has_dotdot(const char *rel)
{
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        p += n;
        while (*p == '/')
            p++;
    }
    return 0;
}

static int check_file(loader *L, const char *path, const char *rel)
{
    if (!*rel || rel[0] == '/' || has_dotdot(rel))
        return fail(L, AMK_ESPEC, path, "'%s' must be a relative path inside the kernel folder",
                    rel);
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", L->s->dir, rel);
    struct stat st;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
        return fail(L, AMK_ESPEC, path, "file '%s' not found in %s", rel, L->s->dir);
    return 0;
}

static int load_launch(loader *L, const cJSON *j, const char *path, amk__launch_exprs *out)
{
    static const char *const keys[] = {"grid", "block", "shared_bytes", "cluster", NULL};
    static const char *const required[] = {"grid", "block", "shared_bytes", NULL};
    if (!cJSON_IsObject(j))
        return fail(L, AMK_ESPEC, path, "expected an object with grid, block, shared_bytes, "
                    "got %s", json_type(j));
    if (check_keys(L, j, path, keys, required))
        return L->err;
    static const char *const dims[] = {"grid", "block", "cluster"};
    for (int k = 0; k < 3; k++) {
        char fpath[128];
        snprintf(fpath, sizeof fpath, "%s.%s", path, dims[k]);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, dims[k]);
        if (k == 2 && !a)
            break; /* no cluster: 1 x 1 x 1 */
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
            return fail(L, AMK_ESPEC, fpath, "expected an array of 3 expressions");
        amk_expr **dst = k == 0 ? out->grid : k == 1 ? out->block : out->cluster;
        int i = 0;
        for (const cJSON *c = a->child; c; c = c->next, i++) {
            char ipath[160];
            snprintf(ipath, sizeof ipath, "%s[%d]", fpath, i);
            if (!(dst[i] = get_expr(L, c, ipath)))
                return L->err;
        }
    }
    char fpath[128];
    snprintf(fpath, sizeof fpath, "%s.shared_bytes", path);
    out->shared = get_expr(L, cJSON_GetObjectItemCaseSensitive(j, "shared_bytes"), fpath);
    return L->err;
}

/* An expression array of exactly n entries at obj[key] into out[]. */
static int load_expr_array(loader *L, const cJSON *obj, const char *key, const char *path,
                           int n, amk_expr **out)
{
    char fpath[160];
    snprintf(fpath, sizeof fpath, "%s.%s", path, key);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return fail(L, AMK_ESPEC, fpath, "expected an array of %d expression%s (one per "
                    "dim%s), got %s", n, n == 1 ? "" : "s",
                    strcmp(key, "strides") ? "" : " after the innermost",
                    cJSON_IsArray(a) ? "another length" : json_type(a));
    int i = 0;
    for (const cJSON *c = a->child; c; c = c->next, i++) {
        char ipath[192];
        snprintf(ipath, sizeof ipath, "%s[%d]", fpath, i);
        if (!(out[i] = get_expr(L, c, ipath)))
            return L->err;
    }
    return 0;
}

/* Optional "tensor_maps": {"tmA": {"buffer", "dims", "strides", "box", "swizzle",
 * "l2_promotion", "oob"}}: TMA descriptors the GPU layer encodes; args may name them. Their
 * per-config rules are amk_config_tensor_map's. */
static int load_tensor_maps(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    static const char *const keys[] = {"buffer", "dims", "strides", "box", "swizzle",
                                       "l2_promotion", "oob", NULL};
    static const char *const required[] = {"buffer", "dims", "strides", "box", "swizzle", NULL};
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "tensor_maps");
    if (!tm)
        return 0;
    if (!cJSON_IsObject(tm))
        return fail(L, AMK_ESPEC, "tensor_maps", "expected an object (name -> descriptor), got "
                    "%s", json_type(tm));
    if (cJSON_GetArraySize(tm) > AMK__MAX_TMAPS)
        return fail(L, AMK_ESPEC, "tensor_maps", "at most %d tensor maps", AMK__MAX_TMAPS);
    for (const cJSON *m = tm->child; m; m = m->next) {
        char path[128];
        snprintf(path, sizeof path, "tensor_maps.%s", m->string);
        if (check_new_name(L, path, m->string))
            return L->err;
        for (int i = 0; i < s->nbuffers; i++)
            if (!strcmp(s->buffers[i].name, m->string))
                return fail(L, AMK_ESPEC, path, "'%s' is already declared as a buffer",
                            m->string);
        for (int i = 0; i < s->ntmaps; i++)
            if (!strcmp(s->tmaps[i].name, m->string))
                return fail(L, AMK_ESPEC, path, "duplicate tensor map '%s'", m->string);
        if (!cJSON_IsObject(m))
            return fail(L, AMK_ESPEC, path, "expected an object, got %s", json_type(m));
        if (check_keys(L, m, path, keys, required))
            return L->err;
        amk__tmap *t = &s->tmaps[s->ntmaps++];
        snprintf(t->name, sizeof t->name, "%s", m->string);
        const char *buf = get_string(L, m, "buffer", path, 1);
        if (!buf)
            return L->err;
        t->buffer = -1;
        for (int i = 0; i < s->nbuffers; i++)
            if (!strcmp(s->buffers[i].name, buf))
                t->buffer = i;
        char fpath[160];
        snprintf(fpath, sizeof fpath, "%s.buffer", path);
        if (t->buffer < 0)
            return fail(L, AMK_ESPEC, fpath, "unknown buffer '%s'", buf);
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(m, "dims");
        int rank = cJSON_IsArray(dims) ? cJSON_GetArraySize(dims) : 0;
        snprintf(fpath, sizeof fpath, "%s.dims", path);
        if (rank < 1 || rank > AMK_TMAP_MAX_RANK)
            return fail(L, AMK_ESPEC, fpath, "expected an array of 1 to %d expressions "
                        "(elements, innermost dim first), got %s", AMK_TMAP_MAX_RANK,
                        cJSON_IsArray(dims) ? "another length" : json_type(dims));
        t->rank = rank;
        if (load_expr_array(L, m, "dims", path, rank, t->dims) ||
            load_expr_array(L, m, "strides", path, rank - 1, t->strides) ||
            load_expr_array(L, m, "box", path, rank, t->box))
            return L->err;
        int64_t v;
        snprintf(fpath, sizeof fpath, "%s.swizzle", path);
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(m, "swizzle");
        if (!json_int(sw, 0, 128, &v) || (v != 0 && v != 32 && v != 64 && v != 128))
            return fail(L, AMK_ESPEC, fpath, "expected 0 (none), 32, 64 or 128 (bytes)");
        t->swizzle = (int)v;
        t->l2_promotion = 256;
        const cJSON *l2 = cJSON_GetObjectItemCaseSensitive(m, "l2_promotion");
        snprintf(fpath, sizeof fpath, "%s.l2_promotion", path);
        if (l2 && (!json_int(l2, 0, 256, &v) || (v != 0 && v != 64 && v != 128 && v != 256)))
            return fail(L, AMK_ESPEC, fpath, "expected 0 (none), 64, 128 or 256 (bytes)");
        if (l2)
            t->l2_promotion = (int)v;
        const char *oob = get_string(L, m, "oob", path, 0);
        if (L->err)
            return L->err;
        snprintf(fpath, sizeof fpath, "%s.oob", path);
        if (oob && strcmp(oob, "zero"))
            return fail(L, AMK_ESPEC, fpath, "unknown value '%s' (\"zero\": out-of-bounds "
                        "elements load as zero and are not stored)", oob);
    }
    return 0;
}

static int load_cost(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "cost");
    static const char *const allowed[] = {"flops", "min_bytes", "traffic_bytes", "regs", "unit",
                                          "uniform_blocks", "inflight_bytes", "latency_rounds",
                                          "sync_steps", "reread_bytes", "block_footprint",
                                          "segment_bytes", NULL};
    static const char *const required[] = {"flops", "min_bytes", "unit", NULL};
    if (!cJSON_IsObject(c))
        return fail(L, AMK_ESPEC, "cost", "expected an object, got %s", json_type(c));
    if (check_keys(L, c, "cost", allowed, required))
        return L->err;
    /* The memory terms, allowed[6..] in amk_memory_term order. */
    for (int k = 0; k < AMK_MEMORY_TERMS; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, allowed[6 + k]);
        char path[48];
        snprintf(path, sizeof path, "cost.%s", allowed[6 + k]);
        if (m && !(s->memory[k] = get_expr(L, m, path)))
            return L->err;
    }
    if (!(s->flops = get_expr(L, cJSON_GetObjectItemCaseSensitive(c, "flops"), "cost.flops")))
        return L->err;
    if (!(s->min_bytes = get_expr(L, cJSON_GetObjectItemCaseSensitive(c, "min_bytes"),
                                  "cost.min_bytes")))
        return L->err;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "traffic_bytes");
    if (t && !(s->traffic = get_expr(L, t, "cost.traffic_bytes")))
        return L->err;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "regs");
    if (r && !(s->regs = get_expr(L, r, "cost.regs")))
        return L->err;
    const cJSON *ub = cJSON_GetObjectItemCaseSensitive(c, "uniform_blocks");
    if (ub) {
        /* a string only, as SPEC.md has always documented it */
        if (!cJSON_IsString(ub))
            return fail(L, AMK_ESPEC, "cost.uniform_blocks", "expected an expression (string), "
                        "got %s", json_type(ub));
        if (!(s->uniform_blocks = get_expr(L, ub, "cost.uniform_blocks")))
            return L->err;
    }
    const char *unit = get_string(L, c, "unit", "cost", 1);
    if (!unit)
        return L->err;
    static const char *const units[] = {"simt_f32", "tf32", "f16", "bf16", "fp8", "int8",
                                        "none", NULL};
    for (const char *const *u = units; *u; u++)
        if (!strcmp(unit, *u)) {
            snprintf(s->unit, sizeof s->unit, "%s", unit);
            return 0;
        }
    return fail(L, AMK_ESPEC, "cost.unit", "unknown unit '%s' (simt_f32 tf32 f16 bf16 fp8 "
                "int8 none)", unit);
}

static int load_reference(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "reference");
    static const char *const allowed[] = {"source", "entry", "args", "launch", "host",
                                          "default_config", NULL};
    static const char *const required[] = {"source", "entry", "args", "launch", NULL};
    if (!cJSON_IsObject(r))
        return fail(L, AMK_ESPEC, "reference", "expected an object, got %s", json_type(r));
    if (check_keys(L, r, "reference", allowed, required))
        return L->err;
    const cJSON *dc = cJSON_GetObjectItemCaseSensitive(r, "default_config");
    if (dc && !cJSON_IsBool(dc))
        return fail(L, AMK_ESPEC, "reference.default_config", "expected true or false, got %s",
                    json_type(dc));
    s->ref_default_config = cJSON_IsTrue(dc);
    const char *src = get_string(L, r, "source", "reference", 1);
    if (!src || check_file(L, "reference.source", src))
        return L->err;
    const char *entry = get_string(L, r, "entry", "reference", 1);
    if (!entry)
        return L->err;
    if (!is_identifier(entry))
        return fail(L, AMK_ESPEC, "reference.entry", "'%s' is not an identifier", entry);
    const char *host = get_string(L, r, "host", "reference", 0);
    if (L->err)
        return L->err;
    if (host && !is_identifier(host))
        return fail(L, AMK_ESPEC, "reference.host", "'%s' is not an identifier", host);
    if (!(s->ref_source = dup_or_fail(L, src)) || !(s->ref_entry = dup_or_fail(L, entry)) ||
        (host && !(s->ref_host = dup_or_fail(L, host))))
        return L->err;
    if (load_args(L, cJSON_GetObjectItemCaseSensitive(r, "args"), "reference.args", s->ref_args,
                  &s->nref_args))
        return L->err;
    return load_launch(L, cJSON_GetObjectItemCaseSensitive(r, "launch"), "reference.launch",
                       &s->ref_launch);
}

static int load_tolerance(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    static const char *const allowed[] = {"reduction", "rtol_scale", "atol", NULL};
    static const char *const required[] = {"reduction", NULL};
    if (!cJSON_IsObject(t))
        return fail(L, AMK_ESPEC, "tolerance", "expected an object, got %s", json_type(t));
    if (check_keys(L, t, "tolerance", allowed, required))
        return L->err;
    if (!(s->tol_reduction = get_expr(L, cJSON_GetObjectItemCaseSensitive(t, "reduction"),
                                      "tolerance.reduction")))
        return L->err;
    s->rtol_scale = 1.0;
    s->atol = NAN; /* not given: the check derives it from max|ref| (SPEC.md) */
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(t, "rtol_scale");
    if (rs) {
        if (!cJSON_IsNumber(rs) || !isfinite(rs->valuedouble) || rs->valuedouble <= 0)
            return fail(L, AMK_ESPEC, "tolerance.rtol_scale", "expected a number > 0");
        s->rtol_scale = rs->valuedouble;
    }
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(t, "atol");
    if (at) {
        if (!cJSON_IsNumber(at) || !isfinite(at->valuedouble) || at->valuedouble < 0)
            return fail(L, AMK_ESPEC, "tolerance.atol", "expected a number >= 0");
        s->atol = at->valuedouble;
    }
    return 0;
}

/* Vendors a "requires" object may name, in amk_spec.requires order. */
static const char *const vendors[] = {"nvidia", "amd", NULL};

/* "sm_90", "sm_90a", "sm_100a": an NVIDIA arch, at most one feature letter 'a' at the end. */
static int is_sm_arch(const char *a)
{
    size_t n = 0;
    if (strncmp(a, "sm_", 3) != 0)
        return 0;
    while (isdigit((unsigned char)a[3 + n]))
        n++;
    return n >= 2 && n <= 3 && (a[3 + n] == '\0' || (a[3 + n] == 'a' && a[4 + n] == '\0'));
}

/* "gfx90a", "gfx942", "gfx1100": "gfx" and 3 or 4 lowercase letters or digits. */
static int is_gfx_arch(const char *a)
{
    size_t n = 0;
    if (strncmp(a, "gfx", 3) != 0)
        return 0;
    while (isdigit((unsigned char)a[3 + n]) || islower((unsigned char)a[3 + n]))
        n++;
    return n >= 3 && n <= 4 && a[3 + n] == '\0';
}

/* Optional "requires": {"nvidia": "sm_90a", "amd": "gfx942"}: the exact arch the kernel's
 * code must be compiled for, per supported vendor (e.g. wgmma exists only in sm_90a). */
static int load_requires(loader *L, const cJSON *root)
{
    amk_spec *s = L->s;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "requires");
    if (!r)
        return 0;
    if (!cJSON_IsObject(r) || !r->child)
        return fail(L, AMK_ESPEC, "requires", "expected an object naming at least one vendor "
                    "(\"nvidia\": \"sm_90a\", \"amd\": \"gfx942\"), got %s",
                    cJSON_IsObject(r) ? "an empty object" : json_type(r));
    if (check_keys(L, r, "requires", vendors, NULL))
        return L->err;
    for (int v = 0; vendors[v]; v++) {
        const char *arch = get_string(L, r, vendors[v], "requires", 0);
        if (L->err)
            return L->err;
        if (!arch)
            continue;
        char path[32];
        snprintf(path, sizeof path, "requires.%s", vendors[v]);
        if (v == 0 && !is_sm_arch(arch))
            return fail(L, AMK_ESPEC, path, "'%s' is not an NVIDIA arch (sm_NN or sm_NNa, "
                        "e.g. sm_90a)", arch);
        if (v == 1 && !is_gfx_arch(arch))
            return fail(L, AMK_ESPEC, path, "'%s' is not an AMD arch (gfxNNN, e.g. gfx942)",
                        arch);
        snprintf(s->requires[v], sizeof s->requires[v], "%s", arch);
    }
    s->has_requires = 1;
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
        return fail(L, AMK_ESPEC, path, "%s (default config on the default shape)", ed.msg);
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
            return fail(L, AMK_ESPEC, path, "%s (default config on the default shape)", ed.msg);
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
        "tolerance", "requires", "tensor_maps", NULL};
    static const char *const required[] = {
        "amk_spec", "name", "dims", "dtypes", "shapes", "params", "buffers", "args", "source",
        "entry", "launch", "cost", "reference", "tolerance", NULL};
    if (!cJSON_IsObject(root))
        return fail(L, AMK_ESPEC, NULL, "expected a JSON object at the top level, got %s",
                    json_type(root));
    if (check_keys(L, root, NULL, allowed, NULL))
        return L->err;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "amk_spec");
    int64_t v;
    if (!ver)
        return fail(L, AMK_ESPEC, NULL, "missing required field 'amk_spec' (the format "
                    "version, 1)");
    if (!json_int(ver, 0, 1000000, &v) || v != 1)
        return fail(L, AMK_ESPEC, "amk_spec", "unsupported format version (expected 1)");
    const char *name = get_string(L, root, "name", "", 1);
    if (!name)
        return L->err;
    int okname = name[0] >= 'a' && name[0] <= 'z' && strlen(name) < AMK_NAME_MAX;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            okname = 0;
    if (!okname)
        return fail(L, AMK_ESPEC, "name", "'%s' is not a kernel name ([a-z][a-z0-9_]*)", name);
    snprintf(s->name, sizeof s->name, "%s", name);
    const char *desc = get_string(L, root, "description", "", 0);
    if (L->err)
        return L->err;
    if (!(s->description = dup_or_fail(L, desc ? desc : "")))
        return L->err;
    if (check_keys(L, root, NULL, allowed, required))
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
    if (load_derived_exprs(L, root) || load_restrictions(L, root) || load_buffers(L, root) ||
        load_tensor_maps(L, root))
        return L->err;
    if (load_args(L, cJSON_GetObjectItemCaseSensitive(root, "args"), "args", s->args, &s->nargs))
        return L->err;
    const char *src = get_string(L, root, "source", "", 1);
    if (!src || check_file(L, "source", src))
        return L->err;
    const char *entry = get_string(L, root, "entry", "", 1);
    if (!entry)
        return L->err;
    if (!is_identifier(entry))
        return fail(L, AMK_ESPEC, "entry", "'%s' is not an identifier", entry);
    if (!(s->source = dup_or_fail(L, src)) || !(s->entry = dup_or_fail(L, entry)))
        return L->err;
    if (load_launch(L, cJSON_GetObjectItemCaseSensitive(root, "launch"), "launch", &s->launch) ||
        load_cost(L, root) || load_reference(L, root) || load_tolerance(L, root) ||
        load_requires(L, root))
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

/* ------------------------------------------------------------------------------------ */
/* accessors */

const char *amk_spec_name(const amk_spec *s) { return s->name; }
const char *amk_spec_description(const amk_spec *s) { return s->description; }
const char *amk_spec_dir(const amk_spec *s) { return s->dir; }
const char *amk_spec_text(const amk_spec *s) { return s->text; }
int amk_spec_n_params(const amk_spec *s) { return s->nparams; }

const char *amk_spec_param_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].name : NULL;
}

int amk_spec_param_index(const amk_spec *s, const char *name)
{
    for (int i = 0; name && i < s->nparams; i++)
        if (!strcmp(s->params[i].name, name))
            return i;
    return -1;
}

int amk_spec_param_n_choices(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].n : 0;
}

int64_t amk_spec_param_value(const amk_spec *s, int i, int choice)
{
    if (i < 0 || i >= s->nparams || choice < 0 || choice >= s->params[i].n)
        return 0;
    return s->params[i].values[choice];
}

const char *amk_spec_param_label(const amk_spec *s, int i, int choice)
{
    if (i < 0 || i >= s->nparams || choice < 0 || choice >= s->params[i].n)
        return NULL;
    return s->params[i].labels[choice];
}

int amk_spec_param_default(const amk_spec *s, int i)
{
    return i >= 0 && i < s->nparams ? s->params[i].def : 0;
}

int amk_spec_compile_arch(const amk_spec *s, const char *vendor, const char *arch, char *out,
                          size_t cap, amk_diag *d)
{
    if (!arch || !vendor)
        return amk_diag_set(d, AMK_EINVAL, "%s: no target arch/vendor given", s->name);
    /* Tensor maps (TMA) and thread-block clusters exist on NVIDIA sm_90+ only. */
    const char *hopper = s->ntmaps ? "tensor_maps"
                         : s->launch.cluster[0] ? "launch.cluster"
                         : s->ref_launch.cluster[0] ? "reference.launch.cluster" : NULL;
    if (hopper && strcmp(vendor, "nvidia") != 0)
        return amk_diag_set(d, AMK_EUNSUPPORTED, "%s uses %s, an NVIDIA (sm_90+) feature; the "
                            "target is %s %s", s->name, hopper, vendor, arch);
    if (!s->has_requires) {
        snprintf(out, cap, "%s", arch);
        return AMK_OK;
    }
    const char *req = NULL;
    for (int v = 0; vendors[v]; v++)
        if (!strcmp(vendor, vendors[v]))
            req = s->requires[v];
    /* On NVIDIA, code for the arch-specific sm_NNa runs on sm_NN devices only. */
    size_t n = strlen(arch);
    int base = req && !strcmp(vendor, "nvidia") && strlen(req) == n + 1 && req[n] == 'a' &&
               !strncmp(req, arch, n);
    if (!req || !req[0] || (strcmp(req, arch) != 0 && !base)) {
        /* The message only: amk_cost_feasible asks for every config of a space. */
        char want[64] = "";
        for (int v = 0; vendors[v]; v++)
            if (s->requires[v][0])
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s %s",
                         want[0] ? " or " : "", vendors[v], s->requires[v]);
        if (!req || !req[0])
            return amk_diag_set(d, AMK_EUNSUPPORTED, "%s requires %s (spec field "
                                "'requires'); the target is %s %s", s->name, want, vendor,
                                arch);
        return amk_diag_set(d, AMK_EUNSUPPORTED, "%s requires %s (spec field 'requires'); the "
                            "target's arch is %s", s->name, want, arch);
    }
    if (strlen(req) >= cap)
        return amk_diag_set(d, AMK_EINVAL, "%s: arch buffer too small", s->name);
    snprintf(out, cap, "%s", req);
    return AMK_OK;
}

int amk_spec_n_dims(const amk_spec *s) { return s->ndims; }
int amk_spec_n_tensor_maps(const amk_spec *s) { return s->ntmaps; }

const char *amk_spec_tensor_map_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ntmaps ? s->tmaps[i].name : NULL;
}

const char *amk_spec_dim_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ndims ? s->dims[i] : NULL;
}

int amk_spec_n_dtypes(const amk_spec *s) { return s->ndtypes; }

const char *amk_spec_dtype_name(const amk_spec *s, int i)
{
    return i >= 0 && i < s->ndtypes ? amk__dtype_names[s->dtypes[i]] : NULL;
}

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
        if (name_eq(s->dims[i], name, len))
            return i;
    return -1;
}

static int dtype_index_in(const amk_spec *s, const char *name, size_t len)
{
    for (int i = 0; i < s->ndtypes; i++)
        if (name_eq(amk__dtype_names[s->dtypes[i]], name, len))
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
        if (name_eq("dtype", k, (size_t)(ke - k))) {
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
                return amk_diag_set(d, AMK_EPARSE, "shape '%s': %s=%s is not an integer >= 1",
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
                            json_type(obj));
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
        if (!json_int(c, 1, JSON_INT_MAX, &x))
            return amk_diag_set(d, AMK_ECONFIG, "shape.%s: expected an integer >= 1", c->string);
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
