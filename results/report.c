/* The report: one streaming pass over one or more results files, rows grouped by
 * (kernel, shape, device) in order of first appearance, each group feeding the statistic
 * type objects of amk__report_stats (counts by status, best measured, best predicted). */
#include "results_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics -------------------------------------------------------------------- */

static int counts_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_counts *c = state;
    (void)file;
    if ((unsigned)r->status < AMK_STATUS_COUNT)
        c->status[r->status]++;
    c->kept += r->kept == 1;
    c->trials++;
    return AMK_OK;
}

static void counts_json(const void *state, const amk_report *rep, cJSON *group)
{
    const amk__stat_counts *c = state;
    (void)rep;
    cJSON *o = cJSON_AddObjectToObject(group, "counts");
    if (!o)
        return;
    for (int i = 0; i < AMK_STATUS_COUNT; i++)
        cJSON_AddNumberToObject(o, amk_status_name((amk_status)i), (double)c->status[i]);
    cJSON_AddNumberToObject(o, "kept", (double)c->kept);
    cJSON_AddNumberToObject(o, "trials", (double)c->trials);
}

static void counts_print(const void *state, const amk_report *rep, FILE *f)
{
    const amk__stat_counts *c = state;
    const char *sep = "";
    (void)rep;
    fputs("    statuses:", f);
    for (int i = 0; i < AMK_STATUS_COUNT; i++)
        if (c->status[i]) {
            fprintf(f, "%s %s %zu", sep, amk_status_name((amk_status)i), c->status[i]);
            sep = ",";
        }
    fprintf(f, "%s kept %zu\n", sep, c->kept);
}

const amk__report_stat_type amk__stat_counts_type = {
    1, "counts", sizeof(amk__stat_counts), counts_add, counts_json, counts_print, NULL,
};

/* Best = what the caller's rule (the one definition of best) picks from the group's
 * measured (or replayed) rows; best_predicted asks the same rule about the predicted rows:
 * the report never shows a prediction as the best. */
static int best_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_best *b = state;
    if (b->predicted_only == (r->latency_kind == AMK_LAT_PREDICTED))
        b->rule->add(b->rs, r, file);
    return AMK_OK;
}

static void best_clear(void *state)
{
    free(((amk__stat_best *)state)->rs);
}

const amk_row *amk__stat_best_row(const amk__stat_best *b, size_t *file)
{
    return b && b->rule ? b->rule->best(b->rs, file) : NULL;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *best_row_json(const amk__stat_best *b, const amk_report *rep)
{
    size_t file = 0;
    const amk_row *r = amk__stat_best_row(b, &file);
    if (!r)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "trial", (double)r->trial);
    cJSON_AddStringToObject(o, "time", r->time);
    cJSON_AddStringToObject(o, "config_id", r->config_id);
    cJSON *p = cJSON_Parse(r->params);
    if (p)
        cJSON_AddItemToObject(o, "params", p);
    else
        cJSON_AddStringToObject(o, "params", r->params);
    cJSON_AddStringToObject(o, "source", r->source);
    add_num(o, "latency_us", r->latency_us);
    cJSON_AddStringToObject(o, "latency_kind", amk_latency_kind_name(r->latency_kind));
    add_num(o, "spread", r->spread);
    add_num(o, "predicted_us", r->predicted_us);
    add_num(o, "bound_us", r->bound_us);
    add_num(o, "pct_of_roofline", r->pct_of_roofline);
    cJSON_AddStringToObject(o, "clock_regime", r->clock_regime);
    add_num(o, "sm_mhz", r->sm_mhz);
    add_num(o, "power_w", r->power_w);
    add_num(o, "energy_uj", r->energy_uj);
    add_num(o, "energy_window_ms", r->energy_window_ms);
    add_num(o, "energy_ticks", r->energy_ticks > 0 ? r->energy_ticks : NAN);
    cJSON_AddStringToObject(o, "objective", amk_objective_name(r->objective));
    if (r->peer[0] && r->peer_us > 0) { /* timed beside it by amk's harness, same regime */
        cJSON *vp = cJSON_AddObjectToObject(o, "vs_peer");
        cJSON_AddStringToObject(vp, "peer", r->peer);
        add_num(vp, "peer_us", r->peer_us);
        add_num(vp, "speedup", r->vs_peer);
    } else {
        cJSON_AddNullToObject(o, "vs_peer");
    }
    cJSON_AddStringToObject(o, "file", amk__report_file(rep, file));
    return o;
}

static void best_json(const void *state, const amk_report *rep, cJSON *group)
{
    cJSON_AddItemToObject(group, "best", best_row_json(state, rep));
}

static void best_predicted_json(const void *state, const amk_report *rep, cJSON *group)
{
    cJSON_AddItemToObject(group, "best_predicted", best_row_json(state, rep));
}

static void best_line(const amk__stat_best *b, const amk_report *rep, FILE *f,
                      const char *label)
{
    size_t file = 0;
    const amk_row *r = amk__stat_best_row(b, &file);
    if (!r)
        return;
    fprintf(f, "    %s: %.6g us %s, trial %lld of %s, config %s %s\n", label, r->latency_us,
            amk_latency_kind_name(r->latency_kind), (long long)r->trial,
            amk__report_file(rep, file), r->config_id[0] ? r->config_id : "-", r->params);
    /* J/launch next to the time: measured over a counter window, or an estimate. */
    if (isfinite(r->energy_uj))
        fprintf(f, "    energy: %.6g J/launch (%s), objective %s\n", r->energy_uj * 1e-6,
                r->energy_ticks > 0 ? "counter window" : "estimate: power x latency",
                amk_objective_name(r->objective));
    else if (r->objective != AMK_OBJ_TIME)
        fprintf(f, "    objective %s\n", amk_objective_name(r->objective));
    if (r->peer[0] && r->peer_us > 0)
        fprintf(f, "    vs peer: %.3fx %s (%.6g us, timed beside it, %s regime, SM %.0f MHz)\n",
                r->vs_peer, r->peer, r->peer_us, r->clock_regime[0] ? r->clock_regime : "?",
                r->sm_mhz);
}

static void best_print(const void *state, const amk_report *rep, FILE *f)
{
    best_line(state, rep, f, "best");
}

static void best_predicted_print(const void *state, const amk_report *rep, FILE *f)
{
    best_line(state, rep, f, "best predicted (cost model only, never measured)");
}

const amk__report_stat_type amk__stat_best_type = {
    1, "best", sizeof(amk__stat_best), best_add, best_json, best_print, best_clear,
};
const amk__report_stat_type amk__stat_best_predicted_type = {
    1,    "best_predicted", sizeof(amk__stat_best), best_add, best_predicted_json,
    best_predicted_print, best_clear,
};

const amk__report_stat_type *const amk__report_stats[] = {
    &amk__stat_counts_type,
    &amk__stat_best_type,
    &amk__stat_best_predicted_type,
    &amk__stat_speedup_type,
    &amk__stat_compile_type,
    &amk__stat_trace_type,
    &amk__stat_model_type,
    NULL,
};

/* ---- the report -------------------------------------------------------------------- */

typedef struct group {
    char kernel[64], shape[160], device[64];
    uint64_t hash;
    void **state; /* one per statistic */
} group;

typedef struct file_info {
    char *path;
    amk_tsv_stats st;
} file_info;

struct amk_report {
    const amk_best_rule *rule;
    file_info *files;
    size_t nfiles;
    size_t nstats;
    group *groups;
    size_t ngroups, gcap;
    size_t *index; /* open addressing over groups: group index + 1, 0 = empty */
    size_t icap;   /* power of two */
};

const char *amk__report_file(const amk_report *rep, size_t file)
{
    return rep && file < rep->nfiles ? rep->files[file].path : "";
}

size_t amk__report_groups(const amk_report *rep)
{
    return rep ? rep->ngroups : 0;
}

size_t amk__report_nfiles(const amk_report *rep)
{
    return rep ? rep->nfiles : 0;
}

size_t amk_report_ngroups(const amk_report *rep)
{
    return amk__report_groups(rep);
}

int amk_report_group(const amk_report *rep, size_t g, const char **kernel, const char **shape,
                     const char **device)
{
    if (!rep || g >= rep->ngroups)
        return AMK_EINVAL;
    if (kernel)
        *kernel = rep->groups[g].kernel;
    if (shape)
        *shape = rep->groups[g].shape;
    if (device)
        *device = rep->groups[g].device;
    return AMK_OK;
}

int amk_report_set_default(amk_report *rep, size_t g, const char *config_id, const char *why)
{
    uint64_t id;
    amk__stat_speedup *s = (amk__stat_speedup *)amk__report_state(rep, g,
                                                                  &amk__stat_speedup_type);
    if (!s || (config_id && amk__id_parse(config_id, &id) != AMK_OK))
        return AMK_EINVAL;
    s->has_default = config_id != NULL;
    snprintf(s->default_id, sizeof s->default_id, "%s", config_id ? config_id : "");
    snprintf(s->why, sizeof s->why, "%s", config_id || !why ? "" : why);
    return AMK_OK;
}

const void *amk__report_state(const amk_report *rep, size_t g,
                              const amk__report_stat_type *type)
{
    if (!rep || g >= rep->ngroups)
        return NULL;
    for (size_t i = 0; i < rep->nstats; i++)
        if (amk__report_stats[i] == type)
            return rep->groups[g].state[i];
    return NULL;
}

static uint64_t key_hash(const amk_row *r)
{
    uint64_t h = AMK_HASH64_INIT;
    h = amk_hash64_update(h, r->kernel, strlen(r->kernel) + 1);
    h = amk_hash64_update(h, r->shape, strlen(r->shape) + 1);
    return amk_hash64_update(h, r->device, strlen(r->device) + 1);
}

static int index_grow(amk_report *rep)
{
    size_t cap = rep->icap ? rep->icap * 2 : 64;
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return AMK_ENOMEM;
    for (size_t g = 0; g < rep->ngroups; g++) {
        size_t i = (size_t)rep->groups[g].hash & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = g + 1;
    }
    free(rep->index);
    rep->index = idx;
    rep->icap = cap;
    return AMK_OK;
}

/* The group of r's key, created on first sight. NULL on allocation failure. */
static group *group_of(amk_report *rep, const amk_row *r)
{
    uint64_t h = key_hash(r);
    size_t mask = rep->icap - 1, i = (size_t)h & mask;
    for (; rep->index[i]; i = (i + 1) & mask) {
        group *g = &rep->groups[rep->index[i] - 1];
        if (g->hash == h && !strcmp(g->kernel, r->kernel) && !strcmp(g->shape, r->shape) &&
            !strcmp(g->device, r->device))
            return g;
    }
    if (rep->ngroups == rep->gcap) {
        size_t cap = rep->gcap ? rep->gcap * 2 : 8;
        group *gs = realloc(rep->groups, cap * sizeof *gs);
        if (!gs)
            return NULL;
        rep->groups = gs;
        rep->gcap = cap;
    }
    group *g = &rep->groups[rep->ngroups];
    memset(g, 0, sizeof *g);
    snprintf(g->kernel, sizeof g->kernel, "%s", r->kernel);
    snprintf(g->shape, sizeof g->shape, "%s", r->shape);
    snprintf(g->device, sizeof g->device, "%s", r->device);
    g->hash = h;
    if (!(g->state = calloc(rep->nstats, sizeof *g->state)))
        return NULL;
    for (size_t s = 0; s < rep->nstats; s++) {
        const amk__report_stat_type *t = amk__report_stats[s];
        size_t sz = t->state_size;
        int ok = (g->state[s] = calloc(1, sz ? sz : 1)) != NULL;
        if (ok && t == &amk__stat_trace_type)
            ((amk__stat_trace *)g->state[s])->rule = rep->rule;
        if (ok && (t == &amk__stat_best_type || t == &amk__stat_best_predicted_type)) {
            amk__stat_best *b = g->state[s]; /* the rule's state, zeroed as it asks */
            b->rule = rep->rule;
            b->predicted_only = t == &amk__stat_best_predicted_type;
            ok = (b->rs = calloc(1, rep->rule->state_size ? rep->rule->state_size : 1)) != NULL;
        }
        if (!ok) {
            for (size_t k = 0; k <= s; k++) {
                if (g->state[k] && amk__report_stats[k]->clear)
                    amk__report_stats[k]->clear(g->state[k]);
                free(g->state[k]);
            }
            free(g->state);
            return NULL;
        }
    }
    rep->ngroups++;
    rep->index[i] = rep->ngroups;
    if (rep->ngroups * 2 > rep->icap && index_grow(rep) != AMK_OK) {
        rep->ngroups--; /* keep the report consistent: the group was never seen */
        for (size_t s = 0; s < rep->nstats; s++)
            free(g->state[s]);
        free(g->state);
        rep->index[i] = 0;
        return NULL;
    }
    return g;
}

typedef struct build_ctx {
    amk_report *rep;
    size_t file;
    const amk_row_upgrader *up;
    amk_diag *d;
} build_ctx;

static int on_row(const amk_row *r, void *ud)
{
    build_ctx *c = ud;
    amk_row today;
    if (c->up && c->up->fn) {
        today = *r;
        c->up->fn(&today, c->up->ud);
        r = &today;
    }
    group *g = group_of(c->rep, r);
    if (!g)
        return amk_diag_set(c->d, AMK_ENOMEM, "%s: out of memory",
                            amk__report_file(c->rep, c->file));
    for (size_t s = 0; s < c->rep->nstats; s++) {
        int rc = amk__report_stats[s]->add(g->state[s], r, c->file);
        if (rc < 0)
            return amk_diag_set(c->d, rc, "%s: trial %lld: statistic %s: %s",
                                amk__report_file(c->rep, c->file), (long long)r->trial,
                                amk__report_stats[s]->name, amk_strerror(rc));
    }
    return 0;
}

/* vs_default compares the default with the group's best, as the rule chose it. */
static void speedup_from_best(amk_report *rep)
{
    for (size_t g = 0; g < rep->ngroups; g++) {
        const amk_row *b = amk__stat_best_row(amk__report_state(rep, g, &amk__stat_best_type),
                                              NULL);
        amk__stat_speedup *s = (amk__stat_speedup *)amk__report_state(rep, g,
                                                                      &amk__stat_speedup_type);
        s->has_best = amk_row_has_evidence(b);
        s->best_us = s->has_best ? b->latency_us : NAN;
        snprintf(s->best_peer, sizeof s->best_peer, "%s", s->has_best ? b->peer : "");
        s->best_peer_us = s->has_best ? b->peer_us : NAN;
    }
}

int amk_report_build(const char *const *paths, size_t n, const amk_best_rule *rule,
                     const amk_row_upgrader *up, amk_report **out, amk_diag *d)
{
    if (!out || (!paths && n) || !rule)
        return amk_diag_set(d, AMK_EINVAL, "amk_report_build: NULL argument");
    *out = NULL;
    if (n == 0)
        return amk_diag_set(d, AMK_EINVAL, "report: no results file given");
    amk_report *rep = calloc(1, sizeof *rep);
    int rc = AMK_ENOMEM;
    if (!rep || !(rep->files = calloc(n, sizeof *rep->files)) || index_grow(rep) != AMK_OK)
        goto oom;
    rep->rule = rule;
    while (amk__report_stats[rep->nstats])
        rep->nstats++;
    for (size_t i = 0; i < n; i++) {
        if (!paths[i]) {
            rc = amk_diag_set(d, AMK_EINVAL, "report: results file %zu is NULL", i);
            goto fail;
        }
        if (!(rep->files[i].path = strdup(paths[i])))
            goto oom;
        rep->nfiles++;
        build_ctx c = {rep, i, up, d};
        rc = amk_tsv_read(paths[i], on_row, &c, &rep->files[i].st, d);
        if (rc)
            goto fail;
    }
    speedup_from_best(rep);
    *out = rep;
    return AMK_OK;
oom:
    rc = amk_diag_set(d, AMK_ENOMEM, "report: out of memory");
fail:
    amk_report_free(rep);
    return rc;
}

void amk_report_free(amk_report *rep)
{
    if (!rep)
        return;
    for (size_t g = 0; g < rep->ngroups; g++) {
        for (size_t s = 0; s < rep->nstats; s++) {
            if (amk__report_stats[s]->clear)
                amk__report_stats[s]->clear(rep->groups[g].state[s]);
            free(rep->groups[g].state[s]);
        }
        free(rep->groups[g].state);
    }
    for (size_t i = 0; i < rep->nfiles; i++)
        free(rep->files[i].path);
    free(rep->files);
    free(rep->groups);
    free(rep->index);
    free(rep);
}

static cJSON *report_tree(const amk_report *rep)
{
    if (!rep)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    cJSON *groups = cJSON_AddArrayToObject(o, "groups");
    if (!files || !groups) {
        cJSON_Delete(o);
        return NULL;
    }
    size_t rows = 0, torn = 0;
    for (size_t i = 0; i < rep->nfiles; i++) {
        cJSON *f = cJSON_CreateObject();
        if (!f || !cJSON_AddItemToArray(files, f)) {
            cJSON_Delete(f);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(f, "path", rep->files[i].path);
        cJSON_AddNumberToObject(f, "rows", (double)rep->files[i].st.rows);
        cJSON_AddNumberToObject(f, "torn", (double)rep->files[i].st.torn);
        rows += rep->files[i].st.rows;
        torn += rep->files[i].st.torn;
    }
    cJSON_AddNumberToObject(o, "rows", (double)rows);
    cJSON_AddNumberToObject(o, "torn", (double)torn);
    for (size_t g = 0; g < rep->ngroups; g++) {
        const group *gr = &rep->groups[g];
        cJSON *j = cJSON_CreateObject();
        if (!j || !cJSON_AddItemToArray(groups, j)) {
            cJSON_Delete(j);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(j, "kernel", gr->kernel);
        cJSON_AddStringToObject(j, "shape", gr->shape);
        cJSON_AddStringToObject(j, "device", gr->device);
        for (size_t s = 0; s < rep->nstats; s++)
            amk__report_stats[s]->json(gr->state[s], rep, j);
    }
    return o;
}

static int width(const char *s, int w)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

void amk_report_print(const amk_report *rep, FILE *f)
{
    if (!rep || !f)
        return;
    size_t rows = 0, torn = 0;
    for (size_t i = 0; i < rep->nfiles; i++) {
        rows += rep->files[i].st.rows;
        torn += rep->files[i].st.torn;
    }
    fprintf(f, "%zu rows from %zu file%s", rows, rep->nfiles, rep->nfiles == 1 ? "" : "s");
    if (torn)
        fprintf(f, " (%zu torn row%s skipped)", torn, torn == 1 ? "" : "s");
    fputs(rep->ngroups ? "\n\n" : "; no trials recorded\n", f);
    if (!rep->ngroups)
        return;
    int wk = 6, ws = 5, wd = 6;
    for (size_t g = 0; g < rep->ngroups; g++) {
        wk = width(rep->groups[g].kernel, wk);
        ws = width(rep->groups[g].shape, ws);
        wd = width(rep->groups[g].device, wd);
    }
    fprintf(f, "%-*s  %-*s  %-*s  %7s  %6s  %5s  %12s  %-9s  %7s  %s\n", wk, "kernel", ws,
            "shape", wd, "device", "trials", "ok", "kept", "best_us", "kind", "trial",
            "config_id");
    for (size_t g = 0; g < rep->ngroups; g++) {
        const group *gr = &rep->groups[g];
        const amk__stat_counts *c = amk__report_state(rep, g, &amk__stat_counts_type);
        const amk__stat_best *b = amk__report_state(rep, g, &amk__stat_best_type);
        fprintf(f, "%-*s  %-*s  %-*s  %7zu  %6zu  %5zu  ", wk, gr->kernel, ws, gr->shape, wd,
                gr->device[0] ? gr->device : "-", c->trials, c->status[AMK_STATUS_OK],
                c->kept);
        const amk_row *br = amk__stat_best_row(b, NULL);
        if (br)
            fprintf(f, "%12.6g  %-9s  %7lld  %s\n", br->latency_us,
                    amk_latency_kind_name(br->latency_kind), (long long)br->trial,
                    br->config_id[0] ? br->config_id : "-");
        else
            fprintf(f, "%12s  %-9s  %7s  %s\n", "-", "-", "-", "-");
        for (size_t s = 0; s < rep->nstats; s++)
            if (amk__report_stats[s]->print)
                amk__report_stats[s]->print(gr->state[s], rep, f);
    }
}

char *amk_report_json(const amk_report *rep)
{
    cJSON *tree = report_tree(rep);
    char *text = tree ? cJSON_PrintUnformatted(tree) : NULL;
    cJSON_Delete(tree);
    return text;
}
