/* The export database: best config per vendor → arch → device → kernel → shape from results
 * files, a default at every level, nearest-shape fallback; the lookup over it and the
 * self-contained C header with the same data and rules. Format and rules: docs/EXPORT.md. */
#include "amk_results.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DB_FORMAT "amk-tuned-db"
#define DB_VERSION 1
#define MAX_DIMS 16
#define MISSING_DIM_PENALTY (64LL * 65536) /* a dimension one side lacks: 64 octaves */

/* ---- shapes and the distance ---------------------------------------------------------- */

typedef struct shp {
    int n;
    char name[MAX_DIMS][32];
    long long val[MAX_DIMS];
    char dtype[32]; /* "" = none */
} shp;

/* "M=4096,N=4096,dtype=f16" → dims (positive integers) and dtype. AMK_EINVAL otherwise. */
static int shape_parse(const char *text, shp *s, amk_diag *d)
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
                if (s->n == MAX_DIMS)
                    return amk_diag_set(d, AMK_EINVAL, "shape '%s': more than %d dimensions",
                                        text, MAX_DIMS);
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
static long long lg_fixed(long long x)
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

static int dtype_matches(const char *query, const char *entry)
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
static const amk_export_target *resolve(const amk_export_target *t, size_t n, const char *dev)
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

/* ---- building ------------------------------------------------------------------------------ */

typedef struct ent {
    char kernel[64], device[64], shape[160], params[1024], config_id[17];
    double latency, spread;
    amk_latency_kind kind;
    int64_t trial;
    size_t file;
    shp s;
    long long lgvol;
    const char *vendor, *arch;
} ent;

typedef struct build {
    const amk_export_opts *o;
    size_t file;
    ent *e;
    size_t n, cap;
    size_t *slot; /* open addressing: index + 1, 0 = empty */
    size_t nslot;
    size_t kernel_rows, skipped, replayed_left_out;
    int oom;
} build;

/* The device key of a row: the sim backend writes "NAME (replayed)" so the log says where
 * a number came from; the database keys devices by name (latency_kind keeps the rest). */
static void device_key(const char *dev, char *out, size_t cap)
{
    static const char suffix[] = " (replayed)";
    size_t n = strlen(dev), sl = sizeof suffix - 1;
    if (n > sl && !strcmp(dev + n - sl, suffix))
        n -= sl;
    snprintf(out, cap, "%.*s", (int)n, dev);
}

static uint64_t ent_hash(const char *k, const char *dev, const char *sh)
{
    uint64_t h = amk_hash64_update(AMK_HASH64_INIT, k, strlen(k) + 1);
    h = amk_hash64_update(h, dev, strlen(dev) + 1);
    return amk_hash64_update(h, sh, strlen(sh) + 1);
}

static int grow(build *b)
{
    if (b->n < b->cap && b->n * 2 < b->nslot)
        return 0;
    size_t cap = b->cap ? b->cap * 2 : 64;
    ent *e = realloc(b->e, cap * sizeof *e);
    if (!e)
        return -1;
    b->e = e;
    b->cap = cap;
    size_t nslot = cap * 4;
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < b->n; i++) {
        size_t j = ent_hash(e[i].kernel, e[i].device, e[i].shape) & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = i + 1;
    }
    free(b->slot);
    b->slot = slot;
    b->nslot = nslot;
    return 0;
}

static int on_row(const amk_row *r, void *ud)
{
    build *b = ud;
    if (b->o->kernel && strcmp(r->kernel, b->o->kernel))
        return 0;
    b->kernel_rows++;
    if (r->status != AMK_STATUS_OK || !r->params[0] || !r->kernel[0])
        return 0;
    if (!isfinite(r->latency_us) || r->latency_us <= 0)
        return 0;
    if (r->latency_kind == AMK_LAT_REPLAYED && !b->o->include_replayed) {
        b->replayed_left_out++;
        return 0;
    }
    if (r->latency_kind != AMK_LAT_MEASURED && r->latency_kind != AMK_LAT_REPLAYED)
        return 0;
    char device[sizeof r->device];
    device_key(r->device, device, sizeof device);
    shp s;
    if (shape_parse(r->shape, &s, NULL) != AMK_OK) {
        b->skipped++;
        return 0;
    }
    ent *e = NULL;
    if (b->nslot) {
        size_t j = ent_hash(r->kernel, device, r->shape) & (b->nslot - 1);
        for (; b->slot[j]; j = (j + 1) & (b->nslot - 1)) {
            ent *x = &b->e[b->slot[j] - 1];
            if (!strcmp(x->kernel, r->kernel) && !strcmp(x->device, device) &&
                !strcmp(x->shape, r->shape)) {
                if (r->latency_us >= x->latency)
                    return 0; /* ties keep the earlier row */
                e = x;
                break;
            }
        }
    }
    if (!e) {
        if (grow(b)) {
            b->oom = 1;
            return AMK_ENOMEM;
        }
        size_t j = ent_hash(r->kernel, device, r->shape) & (b->nslot - 1);
        while (b->slot[j])
            j = (j + 1) & (b->nslot - 1);
        b->slot[j] = ++b->n;
        e = &b->e[b->n - 1];
        memset(e, 0, sizeof *e);
        snprintf(e->kernel, sizeof e->kernel, "%s", r->kernel);
        snprintf(e->device, sizeof e->device, "%s", device);
        snprintf(e->shape, sizeof e->shape, "%s", r->shape);
        e->s = s;
        for (int i = 0; i < s.n; i++)
            e->lgvol += lg_fixed(s.val[i]);
        const amk_export_target *t = resolve(b->o->targets, b->o->n_targets, device);
        e->vendor = t ? t->vendor : "unknown";
        e->arch = t ? t->arch : "unknown";
    }
    snprintf(e->params, sizeof e->params, "%s", r->params);
    snprintf(e->config_id, sizeof e->config_id, "%s", r->config_id);
    e->latency = r->latency_us;
    e->spread = r->spread;
    e->kind = r->latency_kind;
    e->trial = r->trial;
    e->file = b->file;
    return 0;
}

static int ent_cmp(const void *pa, const void *pb)
{
    const ent *a = pa, *b = pb;
    int c;
    if ((c = strcmp(a->kernel, b->kernel)) || (c = strcmp(a->vendor, b->vendor)) ||
        (c = strcmp(a->arch, b->arch)) || (c = strcmp(a->device, b->device)))
        return c;
    return strcmp(a->shape, b->shape);
}

static int entp_shape_cmp(const void *pa, const void *pb)
{
    const ent *a = *(const ent *const *)pa, *b = *(const ent *const *)pb;
    int c = strcmp(a->shape, b->shape);
    if (c)
        return c;
    return (a->latency > b->latency) - (a->latency < b->latency);
}

/* The config best on the most entries; ties: the one best on the largest shape (sum of
 * log2 dims), then the lower latency there, then the smaller params text. */
static const ent *vote(const ent *const *v, size_t n, size_t *wins)
{
    const ent *best = NULL;
    size_t bc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += !strcmp(v[i]->params, v[j]->params);
        int better = !best || c > bc;
        if (!better && c == bc) {
            if (v[i]->lgvol != best->lgvol)
                better = v[i]->lgvol > best->lgvol;
            else if (v[i]->latency != best->latency)
                better = v[i]->latency < best->latency;
            else
                better = strcmp(v[i]->params, best->params) < 0;
        }
        if (better) {
            best = v[i];
            bc = c;
        }
    }
    if (wins)
        *wins = bc;
    return best;
}

static cJSON *entry_json(const ent *e, const char *const *paths)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "shape", e->shape);
    cJSON *dims = cJSON_AddObjectToObject(o, "dims");
    for (int i = 0; i < e->s.n; i++)
        cJSON_AddNumberToObject(dims, e->s.name[i], (double)e->s.val[i]);
    if (e->s.dtype[0])
        cJSON_AddStringToObject(o, "dtype", e->s.dtype);
    else
        cJSON_AddNullToObject(o, "dtype");
    cJSON *p = cJSON_Parse(e->params);
    if (!p || !cJSON_IsObject(p)) {
        cJSON_Delete(p);
        p = cJSON_CreateObject();
    }
    cJSON_AddItemToObject(o, "params", p);
    cJSON_AddStringToObject(o, "config_id", e->config_id);
    cJSON_AddNumberToObject(o, "latency_us", e->latency);
    cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(e->kind));
    if (isfinite(e->spread))
        cJSON_AddNumberToObject(o, "spread", e->spread);
    else
        cJSON_AddNullToObject(o, "spread");
    cJSON_AddStringToObject(o, "device", e->device);
    cJSON_AddNumberToObject(o, "trial", (double)e->trial);
    cJSON_AddStringToObject(o, "source", paths[e->file]);
    return o;
}

/* {default, shapes} of the entries e[0..n) (the device-level bests under one node). */
static cJSON *node_json(const ent *e, size_t n, const char *const *paths)
{
    const ent **v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = &e[i];
    cJSON *o = cJSON_CreateObject();
    size_t wins;
    const ent *dflt = vote(v, n, &wins);
    cJSON *dj = entry_json(dflt, paths);
    cJSON_AddNumberToObject(dj, "wins", (double)wins);
    cJSON_AddNumberToObject(dj, "of", (double)n);
    cJSON_AddItemToObject(o, "default", dj);
    cJSON *shapes = cJSON_AddObjectToObject(o, "shapes");
    qsort(v, n, sizeof *v, entp_shape_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(v[j]->shape, v[i]->shape))
            j++;
        cJSON_AddItemToObject(shapes, v[i]->shape, entry_json(vote(v + i, j - i, NULL), paths));
        i = j;
    }
    free(v);
    return o;
}

static cJSON *child_obj(cJSON *parent, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(parent, key);
    if (!c)
        c = cJSON_AddObjectToObject(parent, key);
    return c;
}

static void kernel_info(cJSON *info, const ent *e, size_t n)
{
    cJSON *k = cJSON_AddObjectToObject(info, e[0].kernel);
    cJSON *dims = cJSON_AddArrayToObject(k, "dims");
    cJSON *params = cJSON_AddObjectToObject(k, "params");
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < e[i].s.n; j++) {
            int have = 0;
            cJSON *x;
            cJSON_ArrayForEach(x, dims) have |= !strcmp(x->valuestring, e[i].s.name[j]);
            if (!have)
                cJSON_AddItemToArray(dims, cJSON_CreateString(e[i].s.name[j]));
        }
        cJSON *p = cJSON_Parse(e[i].params), *x;
        cJSON_ArrayForEach(x, p)
        {
            cJSON *t = cJSON_GetObjectItemCaseSensitive(params, x->string);
            int is_int = cJSON_IsNumber(x) && x->valuedouble == floor(x->valuedouble) &&
                         fabs(x->valuedouble) < 9e15;
            if (!t)
                cJSON_AddStringToObject(params, x->string, is_int ? "int" : "string");
            else if (!is_int && !strcmp(t->valuestring, "int"))
                cJSON_ReplaceItemInObjectCaseSensitive(params, x->string,
                                                       cJSON_CreateString("string"));
        }
        cJSON_Delete(p);
    }
    /* params sorted by name, as in results rows. */
    int np = cJSON_GetArraySize(params);
    for (int a = 0; a < np; a++)
        for (int b = 0; b + 1 < np - a; b++) {
            cJSON *x = cJSON_GetArrayItem(params, b), *y = cJSON_GetArrayItem(params, b + 1);
            if (strcmp(x->string, y->string) > 0) {
                cJSON_DetachItemViaPointer(params, y);
                cJSON_InsertItemInArray(params, b, y);
            }
        }
}

int amk_export_build(const char *const *paths, size_t n, const amk_export_opts *opts,
                     cJSON **out, amk_diag *d)
{
    build b;
    memset(&b, 0, sizeof b);
    b.o = opts;
    int rc = AMK_OK;
    cJSON *db = NULL;
    for (size_t f = 0; f < n; f++) {
        b.file = f;
        rc = amk_tsv_read(paths[f], on_row, &b, NULL, d);
        if (b.oom)
            rc = amk_diag_set(d, AMK_ENOMEM, "out of memory reading %s", paths[f]);
        if (rc != AMK_OK)
            goto done;
    }
    if (opts->kernel && !b.kernel_rows) {
        rc = amk_diag_set(d, AMK_ENOENT, "no row of kernel '%s' in the results file%s",
                          opts->kernel, n > 1 ? "s" : "");
        goto done;
    }
    char hint[160] = "";
    if (b.replayed_left_out)
        snprintf(hint, sizeof hint, "; %zu ok row(s) replayed by the sim backend were left out "
                 "(--include-replayed exports them)", b.replayed_left_out);
    if (!b.n) {
        rc = amk_diag_set(d, AMK_EEMPTY,
                          "nothing to export: no row with status ok and latency_kind measured%s"
                          "%s%s (predicted rows are never exported)%s",
                          opts->include_replayed ? " or replayed" : "",
                          opts->kernel ? " for kernel " : "", opts->kernel ? opts->kernel : "",
                          hint);
        goto done;
    }
    if (hint[0])
        amk_log(AMK_LOG_WARN, "export: %s", hint + 2);
    if (b.skipped)
        amk_log(AMK_LOG_WARN, "export: %zu row(s) skipped: shape is not NAME=INTEGER,...",
                b.skipped);
    qsort(b.e, b.n, sizeof *b.e, ent_cmp);

    db = cJSON_CreateObject();
    cJSON_AddStringToObject(db, "format", DB_FORMAT);
    cJSON_AddNumberToObject(db, "version", DB_VERSION);
    cJSON_AddStringToObject(db, "amk_version", AMK_VERSION);
    cJSON_AddBoolToObject(db, "include_replayed", opts->include_replayed != 0);
    cJSON *src = cJSON_AddArrayToObject(db, "sources");
    for (size_t f = 0; f < n; f++)
        cJSON_AddItemToArray(src, cJSON_CreateString(paths[f]));
    cJSON *tg = cJSON_AddArrayToObject(db, "targets");
    for (size_t i = 0; i < opts->n_targets; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", opts->targets[i].key);
        cJSON_AddStringToObject(t, "name", opts->targets[i].name);
        cJSON_AddStringToObject(t, "vendor", opts->targets[i].vendor);
        cJSON_AddStringToObject(t, "arch", opts->targets[i].arch);
        cJSON_AddItemToArray(tg, t);
    }
    cJSON *info = cJSON_AddObjectToObject(db, "kernel_info");
    cJSON *top = cJSON_AddObjectToObject(db, "kernels");
    cJSON *vendors = cJSON_AddObjectToObject(db, "vendors");
    for (size_t k = 0; k < b.n;) {
        size_t k2 = k;
        while (k2 < b.n && !strcmp(b.e[k2].kernel, b.e[k].kernel))
            k2++;
        const char *kn = b.e[k].kernel;
        kernel_info(info, b.e + k, k2 - k);
        cJSON_AddItemToObject(top, kn, node_json(b.e + k, k2 - k, paths));
        for (size_t v = k; v < k2;) {
            size_t v2 = v;
            while (v2 < k2 && !strcmp(b.e[v2].vendor, b.e[v].vendor))
                v2++;
            cJSON *vo = child_obj(vendors, b.e[v].vendor);
            cJSON_AddItemToObject(child_obj(vo, "kernels"), kn,
                                  node_json(b.e + v, v2 - v, paths));
            cJSON *archs = child_obj(vo, "archs");
            for (size_t a = v; a < v2;) {
                size_t a2 = a;
                while (a2 < v2 && !strcmp(b.e[a2].arch, b.e[a].arch))
                    a2++;
                cJSON *ao = child_obj(archs, b.e[a].arch);
                cJSON_AddItemToObject(child_obj(ao, "kernels"), kn,
                                      node_json(b.e + a, a2 - a, paths));
                cJSON *devs = child_obj(ao, "devices");
                for (size_t x = a; x < a2;) {
                    size_t x2 = x;
                    while (x2 < a2 && !strcmp(b.e[x2].device, b.e[x].device))
                        x2++;
                    cJSON *dobj = child_obj(devs, b.e[x].device);
                    cJSON_AddItemToObject(child_obj(dobj, "kernels"), kn,
                                          node_json(b.e + x, x2 - x, paths));
                    x = x2;
                }
                a = a2;
            }
            v = v2;
        }
        k = k2;
    }
    /* cJSON reports allocation failures only through NULL results: check the tree once. */
    if (amk_export_check(db, NULL) != AMK_OK) {
        cJSON_Delete(db);
        db = NULL;
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory building the export database");
    }
done:
    free(b.e);
    free(b.slot);
    if (rc == AMK_OK)
        *out = db;
    return rc;
}

/* ---- checking ------------------------------------------------------------------------------ */

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

int amk_export_check(const cJSON *db, amk_diag *d)
{
    const cJSON *x, *y, *z;
    int rc;
    if (!cJSON_IsObject(db))
        return bad(d, "top level", "not a JSON object");
    x = cJSON_GetObjectItemCaseSensitive(db, "format");
    if (!cJSON_IsString(x) || strcmp(x->valuestring, DB_FORMAT))
        return bad(d, "format", "expected \"" DB_FORMAT "\"");
    x = cJSON_GetObjectItemCaseSensitive(db, "version");
    if (!cJSON_IsNumber(x) || x->valuedouble != DB_VERSION)
        return amk_diag_set(d, AMK_EPARSE, "unsupported export database version (this amk "
                                           "reads version %d)", DB_VERSION);
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
        if (cJSON_GetArraySize(dims) > MAX_DIMS)
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

static int known_kernel(const cJSON *db, const char *kernel, const cJSON **info, amk_diag *d)
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

static const cJSON *kernel_node(const cJSON *node, const char *kernel)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "kernels"),
                                            kernel);
}

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
            dist += MISSING_DIM_PENALTY;
        } else {
            long long a = lg_fixed(q[i]), b = lg_fixed((long long)v->valuedouble);
            dist += a > b ? a - b : b - a;
        }
        i++;
    }
    return dist;
}

int amk_export_lookup(const cJSON *db, const char *kernel, const char *device_name,
                      const char *shape, const char *dtype, cJSON **out, amk_diag *d)
{
    const cJSON *info, *x;
    int rc;
    if ((rc = amk_export_check(db, d)) || (rc = known_kernel(db, kernel, &info, d)))
        return rc;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(info, "dims");
    shp s;
    if ((rc = shape_parse(shape, &s, d)))
        return rc;
    if (dtype)
        snprintf(s.dtype, sizeof s.dtype, "%s", dtype);
    long long q[MAX_DIMS];
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
                    kernel_node(dv, kernel)) {
                    node = kernel_node(dv, kernel);
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
        const amk_export_target *r = resolve(t, nt, device_name);
        if (r) {
            vo = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(db, "vendors"),
                                                  r->vendor);
            ao = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vo, "archs"),
                                                  r->arch);
            if (ao && kernel_node(ao, kernel)) {
                node = kernel_node(ao, kernel);
                level = "arch";
                mv = vo->string, ma = ao->string;
            } else if (vo && kernel_node(vo, kernel)) {
                node = kernel_node(vo, kernel);
                level = "vendor";
                mv = vo->string;
            }
        }
        free(t);
    }
    if (!node)
        node = kernel_node(db, kernel);

    /* Nearest shape of the same dtype within the level; its default when there is none. */
    const cJSON *best = NULL;
    long long bestd = 0;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(node, "shapes"))
    {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(x, "dtype");
        if (!dtype_matches(s.dtype, cJSON_IsString(dt) ? dt->valuestring : NULL))
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

/* ---- the C header -------------------------------------------------------------------------- */

/* A C identifier from a name: other characters become '_', a leading digit gets one. */
static void c_ident(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (isdigit((unsigned char)*s) && n + 1 < cap)
        out[n++] = '_';
    for (; *s && n + 1 < cap; s++)
        out[n++] = isalnum((unsigned char)*s) ? *s : '_';
    out[n] = 0;
    if (!n)
        snprintf(out, cap, "_");
}

/* A C string literal (or NULL). Octal escapes for anything unusual; "" ends one after an
 * escape so a following digit is not taken into it. */
static void c_str(amk_sb *sb, const char *s)
{
    if (!s) {
        amk_sb_printf(sb, "NULL");
        return;
    }
    amk_sb_printf(sb, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            amk_sb_printf(sb, "\\%c", c);
        else if (c < 32 || c >= 127 || c == '?')
            amk_sb_printf(sb, "\\%03o\"\"", c);
        else
            amk_sb_printf(sb, "%c", c);
    }
    amk_sb_printf(sb, "\"");
}

static const char c_common_head[] =
    "#ifndef AMK_TUNED_COMMON_V1\n"
    "#define AMK_TUNED_COMMON_V1\n"
    "#include <stddef.h>\n"
    "#include <string.h>\n"
    "\n"
    "/* Which part of the database answered a lookup. */\n"
    "typedef struct amk_tuned_match {\n"
    "    const char *level;  /* \"device\", \"arch\", \"vendor\" or \"default\" */\n"
    "    const char *vendor; /* of the level that answered; NULL above it */\n"
    "    const char *arch;\n"
    "    const char *device;\n"
    "    const char *shape;  /* the tuned shape whose config is returned */\n"
    "    int nearest;        /* 1 when that shape is not the one asked for */\n"
    "    double distance;    /* sum over dims of |log2 ratio|; -1 = the level's default */\n"
    "} amk_tuned_match;\n"
    "\n"
    "typedef struct amk_tuned__node {\n"
    "    int level; /* 3 device, 2 arch, 1 vendor, 0 default */\n"
    "    const char *vendor, *arch, *device, *dflt_shape;\n"
    "    int dflt, first, count;\n"
    "} amk_tuned__node;\n"
    "\n"
    "typedef struct amk_tuned__shape {\n"
    "    const char *shape, *dtype;\n"
    "    int cfg;\n"
    "} amk_tuned__shape;\n"
    "\n"
    "static inline int amk_tuned__lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }\n"
    "\n"
    "static inline int amk_tuned__ieq(const char *a, const char *b)\n"
    "{\n"
    "    for (; *a && *b; a++, b++)\n"
    "        if (amk_tuned__lower((unsigned char)*a) != amk_tuned__lower((unsigned char)*b))\n"
    "            return 0;\n"
    "    return *a == *b;\n"
    "}\n"
    "\n"
    "static inline int amk_tuned__icontains(const char *hay, const char *needle)\n"
    "{\n"
    "    size_t n = strlen(needle), i;\n"
    "    if (!n)\n"
    "        return 0;\n"
    "    for (; *hay; hay++) {\n"
    "        for (i = 0; i < n && hay[i]; i++)\n"
    "            if (amk_tuned__lower((unsigned char)hay[i]) !=\n"
    "                amk_tuned__lower((unsigned char)needle[i]))\n"
    "                break;\n"
    "        if (i == n)\n"
    "            return 1;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* log2(x) in units of 1/65536 (x >= 1), exactly as amk computes it. */\n"
    "static inline long long amk_tuned__lg(long long x)\n"
    "{\n"
    "    long long e = 0, f = 0;\n"
    "    unsigned long long u;\n"
    "    double y;\n"
    "    int i;\n"
    "    if (x < 1)\n"
    "        x = 1;\n"
    "    for (u = (unsigned long long)x; u >> 1; u >>= 1)\n"
    "        e++;\n"
    "    y = (double)x / (double)(1ULL << e);\n"
    "    for (i = 15; i >= 0; i--) {\n"
    "        y = y * y;\n"
    "        if (y >= 2.0) {\n"
    "            y = y / 2.0;\n"
    "            f |= 1LL << i;\n"
    "        }\n"
    "    }\n"
    "    return e * 65536 + f;\n"
    "}\n"
    "\n"
    "/* Device name -> vendor/arch: exact key or name, then arch, then a key inside the name\n"
    " * (case-insensitive). Unknown devices get NULLs. */\n"
    "static inline void amk_tuned__resolve(const char *dev, const char **vendor, const char **arch)\n"
    "{\n"
    "    static const char *const t[][4] = {\n";

static const char c_common_tail[] =
    "        {NULL, NULL, NULL, NULL}};\n"
    "    int i;\n"
    "    *vendor = *arch = NULL;\n"
    "    if (!dev || !*dev)\n"
    "        return;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__ieq(dev, t[i][0]) || amk_tuned__ieq(dev, t[i][1]))\n"
    "            goto found;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__ieq(dev, t[i][3]))\n"
    "            goto found;\n"
    "    for (i = 0; t[i][0]; i++)\n"
    "        if (amk_tuned__icontains(dev, t[i][0]))\n"
    "            goto found;\n"
    "    return;\n"
    "found:\n"
    "    *vendor = t[i][2];\n"
    "    *arch = t[i][3];\n"
    "}\n"
    "\n"
    "/* Level: the device, else its arch, else its vendor, else the default; then the nearest\n"
    " * shape of the same dtype (NULL or \"\" = any) at that level, else the level's default.\n"
    " * Returns the index of the config. */\n"
    "static inline int amk_tuned__lookup(const amk_tuned__node *nodes, int n_nodes,\n"
    "                                    const amk_tuned__shape *shapes, const long long *dims,\n"
    "                                    int nd, const char *device, const long long *q,\n"
    "                                    const char *dtype, amk_tuned_match *m)\n"
    "{\n"
    "    static const char *const names[] = {\"default\", \"vendor\", \"arch\", \"device\"};\n"
    "    const char *vendor = NULL, *arch = NULL;\n"
    "    int i, k, ni = -1, best = -1;\n"
    "    long long bestd = 0;\n"
    "    for (i = 0; device && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 3 && amk_tuned__ieq(nodes[i].device, device))\n"
    "            ni = i;\n"
    "    if (ni < 0)\n"
    "        amk_tuned__resolve(device, &vendor, &arch);\n"
    "    for (i = 0; vendor && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 2 && !strcmp(nodes[i].vendor, vendor) &&\n"
    "            !strcmp(nodes[i].arch, arch))\n"
    "            ni = i;\n"
    "    for (i = 0; vendor && ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 1 && !strcmp(nodes[i].vendor, vendor))\n"
    "            ni = i;\n"
    "    for (i = 0; ni < 0 && i < n_nodes; i++)\n"
    "        if (nodes[i].level == 0)\n"
    "            ni = i;\n"
    "    for (k = nodes[ni].first; k < nodes[ni].first + nodes[ni].count; k++) {\n"
    "        long long dist = 0;\n"
    "        if (dtype && *dtype && shapes[k].dtype && *shapes[k].dtype &&\n"
    "            strcmp(dtype, shapes[k].dtype))\n"
    "            continue;\n"
    "        for (i = 0; i < nd; i++) {\n"
    "            long long v = dims[k * nd + i];\n"
    "            if (v < 1) {\n"
    "                dist += 64LL * 65536;\n"
    "            } else {\n"
    "                long long a = amk_tuned__lg(q[i]), b = amk_tuned__lg(v);\n"
    "                dist += a > b ? a - b : b - a;\n"
    "            }\n"
    "        }\n"
    "        if (best < 0 || dist < bestd) {\n"
    "            best = k;\n"
    "            bestd = dist;\n"
    "        }\n"
    "    }\n"
    "    if (m) {\n"
    "        m->level = names[nodes[ni].level];\n"
    "        m->vendor = nodes[ni].vendor;\n"
    "        m->arch = nodes[ni].arch;\n"
    "        m->device = nodes[ni].device;\n"
    "        m->shape = best >= 0 ? shapes[best].shape : nodes[ni].dflt_shape;\n"
    "        m->nearest = best < 0 || bestd != 0;\n"
    "        m->distance = best >= 0 ? (double)bestd / 65536.0 : -1.0;\n"
    "    }\n"
    "    return best >= 0 ? shapes[best].cfg : nodes[ni].dflt;\n"
    "}\n"
    "#endif /* AMK_TUNED_COMMON_V1 */\n";

typedef struct cgen {
    amk_sb cfg, shapes, dims, nodes;
    char **cfg_keys; /* canonical params text of each config */
    int n_cfg, cap_cfg, n_shapes, n_nodes;
    const cJSON *info;
    int oom;
} cgen;

/* Index of the config of entry e, adding its initializer the first time. */
static int cgen_cfg(cgen *g, const cJSON *e)
{
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(e, "params"), *t;
    char *key = cJSON_PrintUnformatted(params);
    if (!key) {
        g->oom = 1;
        return 0;
    }
    for (int i = 0; i < g->n_cfg; i++)
        if (!strcmp(g->cfg_keys[i], key)) {
            free(key);
            return i;
        }
    if (g->n_cfg == g->cap_cfg) {
        int cap = g->cap_cfg ? 2 * g->cap_cfg : 16;
        char **k = realloc(g->cfg_keys, (size_t)cap * sizeof *k);
        if (!k) {
            free(key);
            g->oom = 1;
            return 0;
        }
        g->cfg_keys = k;
        g->cap_cfg = cap;
    }
    g->cfg_keys[g->n_cfg] = key;
    amk_sb_printf(&g->cfg, "        {");
    int first = 1;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(g->info, "params"))
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, t->string);
        amk_sb_printf(&g->cfg, "%s", first ? "" : ", ");
        first = 0;
        if (!strcmp(t->valuestring, "int")) {
            amk_sb_printf(&g->cfg, "%lldLL", v ? (long long)v->valuedouble : 0LL);
        } else if (cJSON_IsString(v)) {
            c_str(&g->cfg, v->valuestring);
        } else if (v) {
            char num[64];
            snprintf(num, sizeof num, "%.17g", v->valuedouble);
            c_str(&g->cfg, num);
        } else {
            amk_sb_printf(&g->cfg, "NULL");
        }
    }
    if (first)
        amk_sb_printf(&g->cfg, "0");
    amk_sb_printf(&g->cfg, "}, /* %d */\n", g->n_cfg);
    return g->n_cfg++;
}

static void cgen_node(cgen *g, int level, const char *vendor, const char *arch,
                      const char *device, const cJSON *kn)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(g->info, "dims"), *s, *x;
    const cJSON *dflt = cJSON_GetObjectItemCaseSensitive(kn, "default");
    int first = g->n_shapes, count = 0;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(kn, "shapes"))
    {
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(s, "dtype");
        const cJSON *ed = cJSON_GetObjectItemCaseSensitive(s, "dims");
        amk_sb_printf(&g->shapes, "        {");
        c_str(&g->shapes, cJSON_GetObjectItemCaseSensitive(s, "shape")->valuestring);
        amk_sb_printf(&g->shapes, ", ");
        c_str(&g->shapes, cJSON_IsString(dt) ? dt->valuestring : NULL);
        amk_sb_printf(&g->shapes, ", %d},\n", cgen_cfg(g, s));
        amk_sb_printf(&g->dims, "       ");
        cJSON_ArrayForEach(x, dims)
        {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(ed, x->valuestring);
            amk_sb_printf(&g->dims, " %lldLL,", v ? (long long)v->valuedouble : -1LL);
        }
        amk_sb_printf(&g->dims, "\n");
        g->n_shapes++;
        count++;
    }
    amk_sb_printf(&g->nodes, "        {%d, ", level);
    c_str(&g->nodes, vendor);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, arch);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, device);
    amk_sb_printf(&g->nodes, ", ");
    c_str(&g->nodes, cJSON_GetObjectItemCaseSensitive(dflt, "shape")->valuestring);
    amk_sb_printf(&g->nodes, ", %d, %d, %d},\n", cgen_cfg(g, dflt), first, count);
    g->n_nodes++;
}

static void cgen_kernel(amk_sb *out, const cJSON *db, const char *kernel, const cJSON *info)
{
    cgen g;
    memset(&g, 0, sizeof g);
    g.info = info;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(info, "dims");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(info, "params"), *x, *vo, *ao, *dv;
    int nd = cJSON_GetArraySize(dims);
    char id[160], up[160], f[160];
    c_ident(id, sizeof id, kernel);
    for (size_t i = 0; i <= strlen(id); i++)
        up[i] = (char)toupper((unsigned char)id[i]);

    /* Nodes in the order the JSON lookup visits them: devices, then the rest. */
    cJSON_ArrayForEach(vo, cJSON_GetObjectItemCaseSensitive(db, "vendors"))
        cJSON_ArrayForEach(ao, cJSON_GetObjectItemCaseSensitive(vo, "archs"))
            cJSON_ArrayForEach(dv, cJSON_GetObjectItemCaseSensitive(ao, "devices"))
                if (kernel_node(dv, kernel))
                    cgen_node(&g, 3, vo->string, ao->string, dv->string, kernel_node(dv, kernel));
    cJSON_ArrayForEach(vo, cJSON_GetObjectItemCaseSensitive(db, "vendors"))
    {
        if (kernel_node(vo, kernel))
            cgen_node(&g, 1, vo->string, NULL, NULL, kernel_node(vo, kernel));
        cJSON_ArrayForEach(ao, cJSON_GetObjectItemCaseSensitive(vo, "archs"))
            if (kernel_node(ao, kernel))
                cgen_node(&g, 2, vo->string, ao->string, NULL, kernel_node(ao, kernel));
    }
    cgen_node(&g, 0, NULL, NULL, NULL, kernel_node(db, kernel));

    amk_sb_printf(out, "\n/* ---- kernel %s: %d shape entr%s, %d distinct config%s ---- */\n",
                  kernel, g.n_shapes, g.n_shapes == 1 ? "y" : "ies", g.n_cfg,
                  g.n_cfg == 1 ? "" : "s");
    amk_sb_printf(out, "#ifndef AMK_TUNED_%s_DEFINED\n#define AMK_TUNED_%s_DEFINED\n", up, up);
    amk_sb_printf(out, "typedef struct amk_tuned_%s_params {\n", id);
    cJSON_ArrayForEach(x, params)
    {
        c_ident(f, sizeof f, x->string);
        amk_sb_printf(out, "    %s%s;\n",
                      strcmp(x->valuestring, "int") ? "const char *" : "long long ", f);
    }
    if (!params->child)
        amk_sb_printf(out, "    int amk_no_params_;\n");
    amk_sb_printf(out, "} amk_tuned_%s_params;\n\n", id);

    amk_sb sig = {0}, call = {0};
    cJSON_ArrayForEach(x, dims)
    {
        c_ident(f, sizeof f, x->valuestring);
        if (!strcmp(f, "device_name") || !strcmp(f, "dtype") || !strcmp(f, "match"))
            strcat(f, "_");
        amk_sb_printf(&sig, "long long %s, ", f);
        amk_sb_printf(&call, "%s, ", f);
    }
    amk_sb_printf(out,
                  "/* Tuned params of %s for a device and a shape; never NULL. device_name as\n"
                  " * the runtime reports it; dtype NULL or \"\" matches any. */\n"
                  "static inline const amk_tuned_%s_params *\n"
                  "amk_tuned_%s_ex(const char *device_name, %sconst char *dtype,\n"
                  "    amk_tuned_match *match)\n{\n",
                  kernel, id, id, sig.p ? sig.p : "");
    amk_sb_printf(out, "    static const amk_tuned_%s_params amk__cfg[] = {\n%s    };\n", id,
                  g.cfg.p);
    amk_sb_printf(out, "    static const amk_tuned__shape amk__shapes[] = {\n%s    };\n",
                  g.shapes.p);
    amk_sb_printf(out, "    static const long long amk__dims[] = {\n%s    };\n",
                  nd ? g.dims.p : "        0\n");
    amk_sb_printf(out, "    static const amk_tuned__node amk__nodes[] = {\n%s    };\n",
                  g.nodes.p);
    amk_sb_printf(out, "    const long long amk__q[] = {");
    int first = 1;
    cJSON_ArrayForEach(x, dims)
    {
        c_ident(f, sizeof f, x->valuestring);
        if (!strcmp(f, "device_name") || !strcmp(f, "dtype") || !strcmp(f, "match"))
            strcat(f, "_");
        amk_sb_printf(out, "%s%s", first ? "" : ", ", f);
        first = 0;
    }
    amk_sb_printf(out,
                  "%s};\n"
                  "    return &amk__cfg[amk_tuned__lookup(amk__nodes,\n"
                  "        (int)(sizeof amk__nodes / sizeof amk__nodes[0]), amk__shapes,\n"
                  "        amk__dims, %d, device_name, amk__q, dtype, match)];\n}\n\n",
                  first ? "0" : "", nd);
    amk_sb_printf(out,
                  "static inline const amk_tuned_%s_params *\n"
                  "amk_tuned_%s(const char *device_name, %sconst char *dtype)\n{\n"
                  "    return amk_tuned_%s_ex(device_name, %sdtype, NULL);\n}\n"
                  "#endif /* AMK_TUNED_%s_DEFINED */\n",
                  id, id, sig.p ? sig.p : "", id, call.p ? call.p : "", up);
    if (sig.oom || call.oom || g.cfg.oom || g.shapes.oom || g.dims.oom || g.nodes.oom || g.oom)
        out->oom = 1;
    amk_sb_free(&sig);
    amk_sb_free(&call);
    amk_sb_free(&g.cfg);
    amk_sb_free(&g.shapes);
    amk_sb_free(&g.dims);
    amk_sb_free(&g.nodes);
    for (int i = 0; i < g.n_cfg; i++)
        free(g.cfg_keys[i]);
    free(g.cfg_keys);
}

int amk_export_c(const cJSON *db, const char *kernel, amk_sb *out, amk_diag *d)
{
    int rc;
    const cJSON *info, *x;
    if ((rc = amk_export_check(db, d)))
        return rc;
    if (kernel && (rc = known_kernel(db, kernel, &info, d)))
        return rc;
    amk_sb_printf(out,
                  "/* Generated by amk %s (`amk export --format c`): tuned configs as a "
                  "dispatch\n * table. Self-contained C99; include it where needed. Lookup "
                  "rules in amk's\n * docs/EXPORT.md: device -> arch -> vendor -> default, "
                  "then the nearest tuned\n * shape of the same dtype (sum over dims of "
                  "|log2 ratio|). Sources:\n",
                  AMK_VERSION);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "sources"))
    {
        if (cJSON_IsString(x) && !strstr(x->valuestring, "*/"))
            amk_sb_printf(out, " *   %s\n", x->valuestring);
    }
    amk_sb_printf(out, " */\n%s", c_common_head);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "targets"))
    {
        static const char *const keys[] = {"key", "name", "vendor", "arch"};
        amk_sb_printf(out, "        {");
        for (int i = 0; i < 4; i++) {
            c_str(out, cJSON_GetObjectItemCaseSensitive(x, keys[i])->valuestring);
            amk_sb_printf(out, "%s", i < 3 ? ", " : "},\n");
        }
    }
    amk_sb_printf(out, "%s", c_common_tail);
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(db, "kernel_info"))
    {
        if (!kernel || !strcmp(kernel, x->string))
            cgen_kernel(out, db, x->string, x);
    }
    if (out->oom)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory writing the C header");
    return AMK_OK;
}
