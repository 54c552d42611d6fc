/* The report's analysis statistics (type objects listed in amk__report_stats): speedup over
 * the spec's default config, compile times, convergence (trials to within 1% of the best,
 * best so far per file) and the cost model's rank correlation with the measurements. */
#include "results_int.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Grows a vector of elements of size sz to hold one more; AMK_OK or AMK_ENOMEM. */
static int vec_reserve(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return AMK_OK;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, c * sz);
    if (!q)
        return AMK_ENOMEM;
    *p = q;
    *cap = c;
    return AMK_OK;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* The one best row (and its file) of the group whose statistic `type` has `state`, when
 * its latency is evidence; NULL otherwise: a prediction is never shown as a measurement. */
static const amk_row *group_best(const amk_report *rep, const amk__report_stat_type *type,
                                 const void *state, size_t *file)
{
    for (size_t g = 0; g < amk__report_groups(rep); g++)
        if (amk__report_state(rep, g, type) == state) {
            const amk_row *b = amk__stat_best_row(amk__report_state(rep, g,
                                                                    &amk__stat_best_type), file);
            return amk_row_has_evidence(b) ? b : NULL;
        }
    return NULL;
}

/* ---- speedup over the spec's default config ------------------------------------------- */

static int speedup_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_speedup *s = state;
    uint64_t id;
    (void)file; /* best_us comes from the best statistic once every row is read */
    if (amk__id_parse(r->config_id, &id) != AMK_OK)
        return AMK_OK;
    if (vec_reserve((void **)&s->pts, &s->cap, s->n, sizeof *s->pts) != AMK_OK)
        return AMK_ENOMEM;
    s->pts[s->n].id = id;
    s->pts[s->n].trial = r->trial;
    s->pts[s->n].status = (uint8_t)r->status;
    s->pts[s->n].latency_us = amk_row_has_evidence(r) ? r->latency_us : NAN;
    snprintf(s->pts[s->n].peer, sizeof s->pts[s->n].peer, "%s", r->peer);
    s->pts[s->n].peer_us = r->peer_us;
    s->n++;
    return AMK_OK;
}

void amk__speedup_compute(const amk__stat_speedup *s, amk__speedup *out)
{
    memset(out, 0, sizeof *out);
    out->default_us = out->speedup = NAN;
    out->best_us = s->has_best ? s->best_us : NAN;
    if (!s->has_default) {
        snprintf(out->reason, sizeof out->reason, "%s",
                 s->why[0] ? s->why : "the spec's default config is not known");
        return;
    }
    uint64_t id = 0;
    amk__id_parse(s->default_id, &id);
    int seen = 0, last_status = -1;
    double held = NAN; /* the default's latency in the best's clock state (as the best rule) */
    for (size_t i = 0; i < s->n; i++) {
        if (s->pts[i].id != id)
            continue;
        seen++;
        last_status = s->pts[i].status;
        double lat = s->pts[i].latency_us;
        double in_best = amk_peer_scaled(lat, s->pts[i].peer, s->pts[i].peer_us, s->best_peer,
                                         s->best_peer_us);
        if (!isfinite(in_best))
            in_best = lat;
        if (isfinite(lat) && (!isfinite(held) || in_best < held)) {
            held = in_best;
            snprintf(out->beside, sizeof out->beside, "%s", in_best != lat ? s->pts[i].peer : "");
            out->default_us = lat;
            out->default_trial = s->pts[i].trial;
        }
    }
    if (isfinite(out->default_us)) {
        out->speedup = held / out->best_us;
        return;
    }
    if (seen)
        snprintf(out->reason, sizeof out->reason,
                 "the default config %s was tried but has no measured latency (status %s)",
                 s->default_id, amk_status_name((amk_status)last_status));
    else
        snprintf(out->reason, sizeof out->reason,
                 "the default config %s was not measured in these files", s->default_id);
}

static void speedup_json(const void *state, const amk_report *rep, cJSON *group)
{
    const amk__stat_speedup *s = state;
    amk__speedup v;
    (void)rep;
    amk__speedup_compute(s, &v);
    cJSON *o = cJSON_AddObjectToObject(group, "vs_default");
    if (!o)
        return;
    if (s->has_default)
        cJSON_AddStringToObject(o, "config_id", s->default_id);
    else
        cJSON_AddNullToObject(o, "config_id");
    add_num(o, "default_latency_us", v.default_us);
    if (isfinite(v.default_us))
        cJSON_AddNumberToObject(o, "default_trial", (double)v.default_trial);
    else
        cJSON_AddNullToObject(o, "default_trial");
    add_num(o, "speedup", v.speedup);
    if (v.beside[0])
        cJSON_AddStringToObject(o, "beside", v.beside);
    else
        cJSON_AddNullToObject(o, "beside");
    if (v.reason[0])
        cJSON_AddStringToObject(o, "reason", v.reason);
    else
        cJSON_AddNullToObject(o, "reason");
}

static void speedup_print(const void *state, const amk_report *rep, FILE *f)
{
    amk__speedup v;
    (void)rep;
    amk__speedup_compute(state, &v);
    if (isfinite(v.speedup))
        fprintf(f, "    vs default: speedup %.3fx over the spec's default config (%.6g us, "
                "trial %lld%s%s%s)\n", v.speedup, v.default_us, (long long)v.default_trial,
                v.beside[0] ? "; each relative to " : "", v.beside,
                v.beside[0] ? " timed beside it" : "");
    else
        fprintf(f, "    vs default: - (%s)\n", v.reason);
}

static void speedup_clear(void *state)
{
    free(((amk__stat_speedup *)state)->pts);
}

const amk__report_stat_type amk__stat_speedup_type = {
    1, "vs_default", sizeof(amk__stat_speedup), speedup_add, speedup_json, speedup_print,
    speedup_clear,
};

/* ---- compile times --------------------------------------------------------------------- */

/* A compiled row: its compile_ms is recorded and it was not a cache hit. */
static int compile_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_compile *c = state;
    (void)file;
    if (r->cache_hit == 1) {
        c->cache_hits++;
        return AMK_OK;
    }
    if (!isfinite(r->compile_ms))
        return AMK_OK;
    if (vec_reserve((void **)&c->ms, &c->cap, c->n, sizeof *c->ms) != AMK_OK)
        return AMK_ENOMEM;
    c->ms[c->n++] = r->compile_ms;
    return AMK_OK;
}

void amk__compile_compute(const amk__stat_compile *c, double *median, double *p90,
                          double *max)
{
    *median = *p90 = *max = NAN;
    if (!c->n)
        return;
    double *v = malloc(c->n * sizeof *v);
    if (!v)
        return;
    memcpy(v, c->ms, c->n * sizeof *v);
    gsl_sort(v, 1, c->n);
    *median = gsl_stats_quantile_from_sorted_data(v, 1, c->n, 0.5);
    *p90 = gsl_stats_quantile_from_sorted_data(v, 1, c->n, 0.9);
    *max = v[c->n - 1];
    free(v);
}

static void compile_json(const void *state, const amk_report *rep, cJSON *group)
{
    const amk__stat_compile *c = state;
    double med, p90, max;
    (void)rep;
    amk__compile_compute(c, &med, &p90, &max);
    cJSON *o = cJSON_AddObjectToObject(group, "compile");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "compiled", (double)c->n);
    add_num(o, "median_ms", med);
    add_num(o, "p90_ms", p90);
    add_num(o, "max_ms", max);
    cJSON_AddNumberToObject(o, "cache_hits", (double)c->cache_hits);
}

static void compile_print(const void *state, const amk_report *rep, FILE *f)
{
    const amk__stat_compile *c = state;
    double med, p90, max;
    (void)rep;
    if (!c->n && !c->cache_hits)
        return;
    amk__compile_compute(c, &med, &p90, &max);
    fprintf(f, "    compile: %zu compiled", c->n);
    if (c->n)
        fprintf(f, ", median %.4g ms, p90 %.4g ms, max %.4g ms", med, p90, max);
    fprintf(f, "; %zu cache hit%s\n", c->cache_hits, c->cache_hits == 1 ? "" : "s");
}

static void compile_clear(void *state)
{
    free(((amk__stat_compile *)state)->ms);
}

const amk__report_stat_type amk__stat_compile_type = {
    1, "compile", sizeof(amk__stat_compile), compile_add, compile_json, compile_print,
    compile_clear,
};

/* ---- convergence: every row's status and latency, in file order ------------------------- */

/* The rule's state of file f, created on first sight; NULL when out of memory. */
static void *trace_rule_state(amk__stat_trace *t, size_t f)
{
    if (f >= t->nrs) {
        void **p = realloc(t->rs, (f + 1) * sizeof *p);
        if (!p)
            return NULL;
        for (size_t i = t->nrs; i <= f; i++)
            p[i] = NULL;
        t->rs = p;
        t->nrs = f + 1;
    }
    if (!t->rs[f])
        t->rs[f] = calloc(1, t->rule->state_size ? t->rule->state_size : 1);
    return t->rs[f];
}

static int trace_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_trace *t = state;
    void *rs = t->rule ? trace_rule_state(t, file) : NULL;
    if ((t->rule && !rs) ||
        vec_reserve((void **)&t->pts, &t->cap, t->n, sizeof *t->pts) != AMK_OK)
        return AMK_ENOMEM;
    if (rs)
        t->rule->add(rs, r, 0);
    amk__trace_pt *p = &t->pts[t->n++];
    p->trial = r->trial;
    p->file = (uint32_t)file;
    p->status = (uint8_t)r->status;
    p->kind = (uint8_t)r->latency_kind;
    p->latency_us = r->latency_us;
    snprintf(p->peer, sizeof p->peer, "%s", r->peer);
    p->peer_us = r->peer_us;
    p->cost_s = r->cost_s;
    p->measured = (uint8_t)amk_row_has_evidence(r);
    return AMK_OK;
}

size_t amk__trace_to_within(const amk__stat_trace *t, size_t f, const amk_row *ref,
                            int64_t *trial, double *cost_s)
{
    size_t k = 0;
    double ref_us = amk_row_has_evidence(ref) ? ref->latency_us : NAN, cost = 0;
    if (cost_s)
        *cost_s = NAN;
    for (size_t i = 0; i < t->n && isfinite(ref_us); i++) {
        const amk__trace_pt *p = &t->pts[i];
        if (p->file != f)
            continue;
        k++;
        cost += p->cost_s; /* NAN once one is unknown */
        /* in the best's clock state when both were timed beside its peer, as the rule */
        double held = amk_peer_scaled(p->latency_us, p->peer, p->peer_us, ref->peer, ref->peer_us);
        if (p->measured && (isfinite(held) ? held : p->latency_us) <= ref_us * 1.01) {
            *trial = p->trial;
            if (cost_s)
                *cost_s = cost;
            return k;
        }
    }
    return 0;
}

/* Each file's best is the report's rule's choice over that file's rows (the one
 * definition of best), when it has evidence: never the raw minimum. */
int amk__trace_files(const amk__stat_trace *t, size_t nfiles_max, amk__convergence *out)
{
    int n = 0;
    for (size_t f = 0; f < nfiles_max; f++) {
        amk__convergence *c = &out[n];
        memset(c, 0, sizeof *c);
        c->file = f;
        c->best_us = NAN;
        c->cost_s = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->pts[i].file == f) {
                c->rows++;
                c->cost_s += t->pts[i].cost_s; /* NAN once one is unknown */
            }
        if (!c->rows)
            continue;
        const amk_row *b = t->rule && f < t->nrs && t->rs[f] ? t->rule->best(t->rs[f], NULL)
                                                             : NULL;
        if (amk_row_has_evidence(b))
            c->best_us = b->latency_us;
        c->to_within_1pct = amk__trace_to_within(t, f, b, &c->trial, &c->cost_to_within_s);
        n++;
    }
    return n;
}

static void trace_json(const void *state, const amk_report *rep, cJSON *group)
{
    const amk__stat_trace *t = state;
    size_t nf = amk__report_nfiles(rep);
    amk__convergence *cv = calloc(nf ? nf : 1, sizeof *cv);
    cJSON *arr = cJSON_AddArrayToObject(group, "convergence");
    if (!cv || !arr) {
        free(cv);
        return;
    }
    int n = amk__trace_files(t, nf, cv);
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            break;
        }
        cJSON_AddStringToObject(o, "file", amk__report_file(rep, cv[i].file));
        cJSON_AddNumberToObject(o, "trials", (double)cv[i].rows);
        add_num(o, "best_us", cv[i].best_us);
        add_num(o, "cost_s", cv[i].cost_s);
        if (cv[i].to_within_1pct) {
            cJSON_AddNumberToObject(o, "trials_to_within_1pct", (double)cv[i].to_within_1pct);
            cJSON_AddNumberToObject(o, "trial", (double)cv[i].trial);
        } else {
            cJSON_AddNullToObject(o, "trials_to_within_1pct");
            cJSON_AddNullToObject(o, "trial");
        }
        add_num(o, "cost_s_to_within_1pct", cv[i].cost_to_within_s);
    }
    /* The group's number: the file that holds the group's best, against that best. */
    size_t bf = 0;
    const amk_row *b = group_best(rep, &amk__stat_trace_type, state, &bf);
    int64_t trial = 0;
    if (b)
        cJSON_AddNumberToObject(group, "trials_to_within_1pct",
                                (double)amk__trace_to_within(t, bf, b, &trial, NULL));
    else
        cJSON_AddNullToObject(group, "trials_to_within_1pct");
    free(cv);
}

static void trace_print(const void *state, const amk_report *rep, FILE *f)
{
    size_t nf = amk__report_nfiles(rep);
    amk__convergence *cv = calloc(nf ? nf : 1, sizeof *cv);
    if (!cv)
        return;
    int n = amk__trace_files(state, nf, cv);
    for (int i = 0; i < n; i++) {
        if (!cv[i].to_within_1pct)
            continue;
        fprintf(f, "    within 1%% of the best (%.6g us) after %zu of %zu trials (trial %lld)",
                cv[i].best_us, cv[i].to_within_1pct, cv[i].rows, (long long)cv[i].trial);
        if (isfinite(cv[i].cost_to_within_s) && isfinite(cv[i].cost_s))
            fprintf(f, ", %.4g s of the trials' %.4g s recorded cost", cv[i].cost_to_within_s,
                    cv[i].cost_s);
        else if (isfinite(cv[i].cost_to_within_s))
            fprintf(f, ", %.4g s of recorded cost", cv[i].cost_to_within_s);
        fprintf(f, "%s%s\n", nf > 1 ? " in " : "", nf > 1 ? amk__report_file(rep, cv[i].file) : "");
    }
    free(cv);
}

static void trace_clear(void *state)
{
    amk__stat_trace *t = state;
    for (size_t i = 0; i < t->nrs; i++)
        free(t->rs[i]);
    free(t->rs);
    free(t->pts);
}

const amk__report_stat_type amk__stat_trace_type = {
    1, "convergence", sizeof(amk__stat_trace), trace_add, trace_json, trace_print,
    trace_clear,
};

/* ---- the cost model against the measurements ------------------------------------------- */

static int model_add(void *state, const amk_row *r, size_t file)
{
    amk__stat_model *m = state;
    if (!amk_row_has_evidence(r) || !isfinite(r->predicted_us))
        return AMK_OK;
    if (vec_reserve((void **)&m->pts, &m->cap, m->n, sizeof *m->pts) != AMK_OK)
        return AMK_ENOMEM;
    m->pts[m->n].file = (uint32_t)file;
    m->pts[m->n].measured_us = r->latency_us;
    m->pts[m->n].kind = (uint8_t)r->latency_kind;
    m->pts[m->n].predicted_us = r->predicted_us;
    m->n++;
    return AMK_OK;
}

double amk__spearman(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double *a = malloc(2 * n * sizeof *a), *w = malloc(2 * n * sizeof *w);
    double rho = NAN;
    if (a && w) {
        memcpy(a, x, n * sizeof *a);
        memcpy(a + n, y, n * sizeof *a);
        rho = gsl_stats_spearman(a, 1, a + n, 1, n, w);
    }
    free(a);
    free(w);
    return isfinite(rho) ? rho : NAN;
}

double amk__model_spearman(const amk__stat_model *m)
{
    if (m->n < 2)
        return NAN;
    double *x = malloc(2 * m->n * sizeof *x);
    if (!x)
        return NAN;
    for (size_t i = 0; i < m->n; i++) {
        x[i] = m->pts[i].measured_us;
        x[m->n + i] = m->pts[i].predicted_us;
    }
    double rho = amk__spearman(x, x + m->n, m->n);
    free(x);
    return rho;
}

static const amk_row *measured_best(const amk_report *rep, const void *state)
{
    return group_best(rep, &amk__stat_model_type, state, NULL);
}

static void model_json(const void *state, const amk_report *rep, cJSON *group)
{
    const amk__stat_model *m = state;
    const amk_row *b = measured_best(rep, state);
    cJSON *o = cJSON_AddObjectToObject(group, "model");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "pairs", (double)m->n);
    add_num(o, "spearman", amk__model_spearman(m));
    if (b) {
        add_num(o, "best_predicted_us", b->predicted_us);
        add_num(o, "best_measured_us", b->latency_us);
        add_num(o, "best_measured_over_predicted", b->latency_us / b->predicted_us);
    } else {
        cJSON_AddNullToObject(o, "best_predicted_us");
        cJSON_AddNullToObject(o, "best_measured_us");
        cJSON_AddNullToObject(o, "best_measured_over_predicted");
    }
}

static void model_print(const void *state, const amk_report *rep, FILE *f)
{
    const amk__stat_model *m = state;
    const amk_row *b = measured_best(rep, state);
    if (!m->n)
        return;
    double rho = amk__model_spearman(m);
    if (isfinite(rho))
        fprintf(f, "    model: Spearman %.3f over %zu measured rows", rho, m->n);
    else
        fprintf(f, "    model: Spearman n/a over %zu measured rows (too few, or the predictions "
                "or measurements are all equal)", m->n);
    if (b && isfinite(b->predicted_us))
        fprintf(f, "; best measured %.6g us vs predicted %.6g us", b->latency_us,
                b->predicted_us);
    if (b && isfinite(b->pct_of_roofline))
        fprintf(f, ", %.1f%% of roofline", b->pct_of_roofline);
    fputc('\n', f);
}

static void model_clear(void *state)
{
    free(((amk__stat_model *)state)->pts);
}

const amk__report_stat_type amk__stat_model_type = {
    1, "model", sizeof(amk__stat_model), model_add, model_json, model_print, model_clear,
};
