/* Building the export database: the best ok row per (kernel, device, shape) of the results
 * files, grouped vendor → arch → device with a voted default at every level. docs/EXPORT.md. */
#include "export_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ent {
    char kernel[64], device[64], shape[160], params[1024], config_id[17];
    double latency, spread;
    amk_latency_kind kind;
    int64_t trial;
    char clock_regime[16], peer[32]; /* how the best was measured; its peer, "" none */
    double peer_us, vs_peer;
    amk_objective objective;        /* what the search that chose it minimised */
    double energy_uj;               /* its energy per launch; NAN when not recorded */
    int energy_ticks;               /* > 0: over a counter window; 0: an estimate */
    size_t file;
    amk__export_shape s;
    long long lgvol;
    const char *vendor, *arch;
    void *rs; /* the best rule's state for this group (freed once the row is copied) */
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

/* A group's row is the caller's rule's choice (the one definition of best) among its
 * eligible rows; copied into the entry once every file is read. */
static void take_rule_best(ent *e, const amk_best_rule *rule)
{
    size_t file = 0;
    const amk_row *r = rule->best(e->rs, &file);
    if (r) {
        snprintf(e->params, sizeof e->params, "%s", r->params);
        snprintf(e->config_id, sizeof e->config_id, "%s", r->config_id);
        e->latency = r->latency_us;
        e->spread = r->spread;
        e->kind = r->latency_kind;
        e->trial = r->trial;
        e->file = file;
        snprintf(e->clock_regime, sizeof e->clock_regime, "%s", r->clock_regime);
        snprintf(e->peer, sizeof e->peer, "%s", r->peer);
        e->peer_us = r->peer_us;
        e->vs_peer = r->vs_peer;
        e->objective = r->objective;
        e->energy_uj = r->energy_uj;
        e->energy_ticks = r->energy_ticks;
    }
    free(e->rs);
    e->rs = NULL;
}

static int on_row(const amk_row *r, void *ud)
{
    build *b = ud;
    amk_row today;
    if (b->o->upgrade && b->o->upgrade->fn) {
        today = *r;
        b->o->upgrade->fn(&today, b->o->upgrade->ud);
        r = &today;
    }
    if (b->o->kernel && strcmp(r->kernel, b->o->kernel))
        return 0;
    b->kernel_rows++;
    if (!amk_row_has_evidence(r) || !r->params[0] || !r->kernel[0])
        return 0;
    if (r->latency_kind == AMK_LAT_REPLAYED && !b->o->include_replayed) {
        b->replayed_left_out++;
        return 0;
    }
    char device[sizeof r->device];
    device_key(r->device, device, sizeof device);
    amk__export_shape s;
    if (amk__export_shape_parse(r->shape, &s, NULL) != AMK_OK) {
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
            e->lgvol += amk__export_lg_fixed(s.val[i]);
        const amk_export_target *t = amk__export_resolve(b->o->targets, b->o->n_targets, device);
        e->vendor = t ? t->vendor : "unknown";
        e->arch = t ? t->arch : "unknown";
        size_t sz = b->o->rule->state_size;
        if (!(e->rs = calloc(1, sz ? sz : 1))) {
            b->n--; /* never seen: the slot is taken back below */
            b->slot[j] = 0;
            b->oom = 1;
            return AMK_ENOMEM;
        }
    }
    b->o->rule->add(e->rs, r, b->file);
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
    cJSON_AddStringToObject(o, "clock_regime", e->clock_regime);
    cJSON_AddStringToObject(o, "objective", amk_objective_name(e->objective));
    if (isfinite(e->energy_uj)) {
        cJSON_AddNumberToObject(o, "energy_uj", e->energy_uj);
        cJSON_AddBoolToObject(o, "energy_measured", e->energy_ticks > 0);
    } else {
        cJSON_AddNullToObject(o, "energy_uj");
        cJSON_AddNullToObject(o, "energy_measured");
    }
    if (e->peer[0] && e->peer_us > 0) { /* timed beside it by amk's harness, same regime */
        cJSON *vp = cJSON_AddObjectToObject(o, "vs_peer");
        cJSON_AddStringToObject(vp, "peer", e->peer);
        cJSON_AddNumberToObject(vp, "peer_us", e->peer_us);
        cJSON_AddNumberToObject(vp, "speedup", e->vs_peer);
    } else {
        cJSON_AddNullToObject(o, "vs_peer");
    }
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

int amk__export_build(const char *const *paths, size_t n, const amk_export_opts *opts,
                     cJSON **out, amk_diag *d)
{
    build b;
    memset(&b, 0, sizeof b);
    b.o = opts;
    int rc = AMK_OK;
    cJSON *db = NULL;
    if (!opts->rule)
        return amk_diag_set(d, AMK_EINVAL, "export: no best rule given");
    for (size_t f = 0; f < n; f++) {
        b.file = f;
        rc = amk_tsv_read(paths[f], on_row, &b, NULL, d);
        if (b.oom)
            rc = amk_diag_set(d, AMK_ENOMEM, "out of memory reading %s", paths[f]);
        if (rc != AMK_OK)
            goto done;
    }
    for (size_t i = 0; i < b.n; i++)
        take_rule_best(&b.e[i], opts->rule);
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
    cJSON_AddStringToObject(db, "format", AMK__EXPORT_DB_FORMAT);
    cJSON_AddNumberToObject(db, "version", AMK__EXPORT_DB_VERSION);
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
    if (amk__export_check(db, NULL) != AMK_OK) {
        cJSON_Delete(db);
        db = NULL;
        rc = amk_diag_set(d, AMK_ENOMEM, "out of memory building the export database");
    }
done:
    for (size_t i = 0; i < b.n; i++)
        free(b.e[i].rs); /* NULL once taken; set when reading stopped early */
    free(b.e);
    free(b.slot);
    if (rc == AMK_OK)
        *out = db;
    return rc;
}
