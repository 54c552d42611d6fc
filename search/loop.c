/* The search loop: propose a batch -> evaluate -> keep/revert -> log every trial (the rows of
 * a batch go out in one locked, fsynced append) -> best.json whenever the incumbent changes.
 * Stops on budget, time limit or an exhausted strategy; resumes from results.tsv. */
#include "search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_MAX_BATCH 65536
#define LOOP_MAX_REPEATS 100000 /* consecutive already-seen proposals before giving up */

typedef struct loop_key {
    char kernel[64];
    char shape[160];
    char device[64];
    amk_idset *seen;
    int oom;
} loop_key;

/* Pre-fills `seen` with the config ids of this kernel/shape/device in the results file. */
static int seen_row(const amk_row *r, void *ud)
{
    loop_key *k = ud;
    if (strcmp(r->kernel, k->kernel) != 0 || strcmp(r->shape, k->shape) != 0 ||
        strcmp(r->device, k->device) != 0 || !r->config_id[0])
        return 0;
    if (amk_idset_add(k->seen, r->config_id) < 0) {
        k->oom = 1;
        return 1;
    }
    return 0;
}

/* Restores the incumbent from a resume state: the config is rebuilt from the row's params.
 * A row whose params no longer parse (the spec changed) is ignored with a warning. */
static void restore_incumbent(const amk_resume *rs, const amk_space *sp, amk_incumbent *inc,
                              amk_row *inc_row)
{
    const amk_row *r = amk_resume_incumbent(rs);
    if (!r)
        return;
    amk_diag d = {0};
    amk_config c;
    if (amk_config_from_params_json(amk_space_spec(sp), amk_space_shape(sp), r->params, &c,
                                    &d) != AMK_OK) {
        amk_log(AMK_LOG_WARN, "resume: trial %lld: incumbent not restored: %s",
                (long long)r->trial, d.msg);
        return;
    }
    char id[17];
    amk_config_id(&c, id);
    if (strcmp(id, r->config_id) != 0)
        amk_log(AMK_LOG_WARN, "resume: trial %lld: config_id %s recomputes as %s",
                (long long)r->trial, r->config_id, id);
    inc->has = 1;
    inc->config = c;
    inc->latency_us = r->latency_us;
    inc->spread = r->spread;
    inc->kind = r->latency_kind;
    inc->trial = r->trial;
    *inc_row = *r;
}

static int write_best(const char *path, const amk_row *row, const amk_incumbent *inc,
                      amk_diag *d)
{
    char *text = amk_config_canonical(&inc->config);
    if (!text)
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    int rc = amk_best_write(path, row, text, d);
    free(text);
    return rc;
}

/* A close call between two measured configs is re-measured interleaved in one window
 * (DESIGN §3) when the backend can: the incumbent's latency is refreshed and the decision
 * uses the candidate's re-measured median. The row keeps the candidate's first measurement
 * and says in its note what the re-measure found. Backends that cannot re-measure (or a
 * re-measure that fails) leave the decision to the first measurements. */
static void remeasure_close(amk_evaluator *ev, amk_incumbent *inc, const amk_config *cand,
                            amk_verdict *decide, amk_verdict *logged)
{
    double lat[2], spread[2];
    amk_diag d = {0};
    int rc = amk_evaluator_remeasure(ev, &inc->config, cand, lat, spread, &d);
    if (rc == AMK_EUNSUPPORTED)
        return;
    size_t len = strlen(logged->notes);
    char *tail = logged->notes + len;
    size_t cap = sizeof logged->notes - len;
    if (rc != AMK_OK) {
        snprintf(tail, cap, "%sre-measure failed: %s", len ? "; " : "", d.msg);
        return;
    }
    /* An incumbent kept earlier in this batch has no trial number until the batch is
     * appended (numbers are taken under the append's lock). */
    char which[48] = "kept earlier in this batch";
    if (inc->trial > 0)
        snprintf(which, sizeof which, "trial %lld", (long long)inc->trial);
    snprintf(tail, cap, "%sre-measured interleaved with incumbent (%s): incumbent "
             "%.3f us, candidate %.3f us", len ? "; " : "", which, lat[0], lat[1]);
    inc->latency_us = lat[0];
    inc->spread = spread[0];
    decide->latency_us = lat[1];
    decide->spread = spread[1];
}

int amk_loop_run(const amk_loop_opts *o, amk_loop_result *out, amk_diag *d)
{
    if (!o || !o->space || !o->ev || !o->results_path || !out)
        return amk_diag_set(d, AMK_EINVAL, "loop: space, evaluator, results path and "
                                           "result are required");
    if (o->budget < 0 || o->time_limit_s < 0 || isnan(o->time_limit_s) ||
        o->batch < 0 || o->batch > LOOP_MAX_BATCH)
        return amk_diag_set(d, AMK_EINVAL, "loop: budget %lld, time limit %g s, batch %d: "
                            "out of range (batch 0..%d)", (long long)o->budget,
                            o->time_limit_s, o->batch, LOOP_MAX_BATCH);
    if (o->n_exclude && !o->exclude)
        return amk_diag_set(d, AMK_EINVAL, "loop: %zu excluded config ids but no list",
                            o->n_exclude);
    const char *sname = o->strategy ? o->strategy : "hillclimb";
    const amk_strategy_type *st = amk_strategy_find(sname);
    if (!st) {
        amk_sb names = {0};
        for (int i = 0; amk_strategies[i]; i++)
            amk_sb_printf(&names, "%s%s", i ? ", " : "", amk_strategies[i]->name);
        amk_diag_set(d, AMK_EINVAL, "unknown strategy '%s' (known: %s)", sname,
                     names.p ? names.p : "");
        amk_sb_free(&names);
        return AMK_EINVAL;
    }

    memset(out, 0, sizeof *out);
    const double t0 = amk_now_s();
    /* A replay of recorded trial costs runs the time limit on a simulated clock: the sum of
     * what the trials cost when recorded (the strategy's own time is not added, so that a
     * seed gives the same trials on any machine). Otherwise the wall clock. */
    const int simulated = amk_evaluator_simulated_clock(o->ev);
    double sim_s = 0;
    const amk_space *sp = o->space;
    const amk_spec *spec = amk_space_spec(sp);
    /* Default batch: twice what the backend evaluates at once, so every device stays busy
     * while the slowest of a batch finishes. */
    const int par = amk_evaluator_parallelism(o->ev);
    const int batch = o->batch > 0 ? o->batch : par > 1 ? 2 * par : 1;
    const double min_gain = o->min_gain > 0 ? o->min_gain : o->min_gain < 0 ? 0 : AMK_HISTORY_MIN_GAIN;
    const amk_limits *lim = amk_space_limits(sp);

    loop_key key = {0};
    snprintf(key.kernel, sizeof key.kernel, "%s", amk_spec_name(spec));
    amk_shape_format(spec, amk_space_shape(sp), key.shape, sizeof key.shape);
    const char *dev = amk_evaluator_device(o->ev);
    snprintf(key.device, sizeof key.device, "%s", dev ? dev : "");

    amk_tsv *tsv = NULL;
    amk_resume *rs = NULL;
    void *state = NULL;
    int state_ok = 0;
    amk_proposal *props = NULL;
    amk_verdict *verdicts = NULL;
    amk_row *rows = NULL;
    const amk_config **cfgs = NULL;
    char (*ids)[17] = NULL;
    amk_incumbent inc = {0};
    amk_row inc_row;
    amk_row_init(&inc_row);
    int rc;

    key.seen = amk_idset_create();
    props = calloc((size_t)batch, sizeof *props);
    verdicts = calloc((size_t)batch, sizeof *verdicts);
    rows = calloc((size_t)batch, sizeof *rows);
    cfgs = calloc((size_t)batch, sizeof *cfgs);
    ids = calloc((size_t)batch, sizeof *ids);
    state = calloc(1, st->state_size ? st->state_size : 1);
    if (!key.seen || !props || !verdicts || !rows || !cfgs || !ids || !state) {
        rc = amk_diag_set(d, AMK_ENOMEM, "loop: out of memory");
        goto done;
    }

    rc = amk_tsv_open(o->results_path, &tsv, d);
    if (rc < 0)
        goto done;

    if (o->resume) {
        rc = amk_resume_load(o->results_path, key.kernel, key.shape, key.device,
                             &amk_history_rule, &rs, d);
        if (rc < 0)
            goto done;
        rc = amk_tsv_read(o->results_path, seen_row, &key, NULL, d);
        if (key.oom)
            rc = amk_diag_set(d, AMK_ENOMEM, "loop: out of memory reading seen configs");
        if (rc < 0)
            goto done;
        restore_incumbent(rs, sp, &inc, &inc_row);
        amk_log(AMK_LOG_INFO, "resume: %s: %zu rows for %s %s on %s, %zu configs seen, "
                "last trial %lld, incumbent %s", o->results_path, amk_resume_rows(rs),
                key.kernel, key.shape, key.device, amk_idset_size(key.seen),
                (long long)amk_resume_last_trial(rs), inc.has ? inc_row.config_id : "none");
    }

    for (size_t i = 0; i < o->n_exclude; i++) {
        rc = amk_idset_add(key.seen, o->exclude[i]);
        if (rc < 0) {
            amk_diag_set(d, rc, "loop: excluded config id %zu (\"%.16s\"): %s", i,
                         o->exclude[i], amk_strerror(rc));
            goto done;
        }
    }

    amk_strategy_opts sopts = o->strategy_opts;
    if (!sopts.target)
        sopts.target = amk_evaluator_target(o->ev);
    rc = st->init(state, sp, &sopts);
    if (rc < 0) {
        amk_diag_set(d, rc, "strategy %s: init failed: %s", st->name, amk_strerror(rc));
        goto done;
    }
    state_ok = 1;
    if (inc.has) {
        amk_verdict v;
        amk_verdict_from_row(&inc_row, &v);
        st->observe(state, &inc.config, &v, 1);
    }

    out->first_trial = out->last_trial = 0;
    for (;;) {
        if (o->budget > 0 && out->trials >= o->budget)
            break;
        double elapsed = simulated ? sim_s : amk_now_s() - t0;
        if (o->time_limit_s > 0 && elapsed >= o->time_limit_s)
            break;
        int want = batch;
        if (o->budget > 0 && o->budget - out->trials < want)
            want = (int)(o->budget - out->trials);

        /* Proposals: drop repeats (the strategy should not make them), mark the rest seen
         * right away so the strategy avoids them within this batch too. */
        int n = 0;
        long repeats = 0;
        while (n < want) {
            rc = st->next(state, key.seen, &props[n]);
            if (rc < 0) {
                amk_diag_set(d, rc, "strategy %s: %s", st->name, amk_strerror(rc));
                goto done;
            }
            if (rc == 0) {
                out->exhausted = 1;
                break;
            }
            amk_config_id(&props[n].config, ids[n]);
            int added = amk_idset_add(key.seen, ids[n]);
            if (added < 0) {
                rc = amk_diag_set(d, AMK_ENOMEM, "loop: out of memory");
                goto done;
            }
            if (added == 0) {
                if (++repeats > LOOP_MAX_REPEATS) {
                    amk_log(AMK_LOG_WARN, "strategy %s proposed %d seen configs in a row; "
                            "treating the space as exhausted", st->name, LOOP_MAX_REPEATS);
                    out->exhausted = 1;
                    break;
                }
                continue;
            }
            repeats = 0;
            cfgs[n] = &props[n].config;
            n++;
        }
        if (n == 0)
            break;

        rc = amk_evaluator_run(o->ev, sp, cfgs, (size_t)n,
                               inc.has ? inc.latency_us : NAN, verdicts);
        if (rc < 0) {
            amk_diag_set(d, rc, "evaluator %s: %s", amk_evaluator_backend(o->ev),
                         amk_strerror(rc));
            goto done;
        }
        for (int i = 0; simulated && i < n; i++)
            if (isfinite(verdicts[i].cost_s))
                sim_s += verdicts[i].cost_s;

        /* Keep/revert in proposal order; the batch's rows go out in one durable append
         * before best.json, so best.json never names a trial the log does not hold. */
        int changed = 0, kept_at = -1;
        for (int i = 0; i < n; i++) {
            amk_verdict decide = verdicts[i]; /* what keep/revert judges (maybe re-measured) */
            if (amk__keep_close(&inc, &props[i].config, &decide, min_gain))
                remeasure_close(o->ev, &inc, &props[i].config, &decide, &verdicts[i]);
            int keep = amk__keep_decide_lim(&inc, &props[i].config, &decide, min_gain, lim);
            rc = amk_verdict_to_row(&verdicts[i], &props[i].config, 0, key.shape,
                                    props[i].source, key.device, keep, &rows[i], d);
            if (rc < 0)
                goto done;
            if (keep) {
                inc.has = 1;
                inc.config = props[i].config;
                inc.latency_us = decide.latency_us;
                inc.spread = decide.spread;
                inc.kind = verdicts[i].latency_kind;
                inc.trial = 0; /* numbered by the append below */
                kept_at = i;
                changed = 1;
            }
        }
        /* Trial numbers are taken under the append's lock: they continue the file, and a
         * concurrent writer never gets the same ones. */
        rc = amk_tsv_append_next(tsv, rows, (size_t)n, d);
        if (rc < 0)
            goto done;
        if (kept_at >= 0) {
            inc.trial = rows[kept_at].trial;
            inc_row = rows[kept_at];
        }
        if (out->trials == 0)
            out->first_trial = rows[0].trial;
        out->last_trial = rows[n - 1].trial;
        out->trials += n;
        if (changed && o->best_path) {
            rc = write_best(o->best_path, &inc_row, &inc, d);
            if (rc < 0)
                goto done;
        }
        for (int i = 0; i < n; i++) {
            st->observe(state, &props[i].config, &verdicts[i], rows[i].kept);
            if (o->progress) {
                amk_loop_progress p = {
                    .trial = rows[i].trial,
                    .budget = o->budget,
                    .elapsed_s = simulated ? sim_s : amk_now_s() - t0,
                    .time_limit_s = o->time_limit_s,
                    .last = &verdicts[i],
                    .best = &inc,
                };
                o->progress(&p, o->progress_ud);
            }
        }
        if (out->exhausted)
            break;
    }
    rc = AMK_OK;

done:
    out->best = inc;
    out->elapsed_s = simulated ? sim_s : amk_now_s() - t0;
    if (state_ok && st->clear)
        st->clear(state);
    free(state);
    free(ids);
    free(cfgs);
    free(rows);
    free(verdicts);
    free(props);
    amk_resume_free(rs);
    amk_tsv_close(tsv);
    amk_idset_free(key.seen);
    return rc;
}

typedef struct unrecorded_ctx {
    const amk_evaluator *ev;
    char (*ids)[17];
    size_t n, cap;
    int oom;
} unrecorded_ctx;

static int collect_unrecorded(const amk_config *c, void *ud)
{
    unrecorded_ctx *u = ud;
    char id[17];
    amk_config_id(c, id);
    if (amk_evaluator_recorded(u->ev, id))
        return 0;
    if (u->n == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 1024;
        char (*p)[17] = realloc(u->ids, cap * sizeof *p);
        if (!p) {
            u->oom = 1;
            return 1;
        }
        u->ids = p;
        u->cap = cap;
    }
    memcpy(u->ids[u->n++], id, 17);
    return 0;
}

int amk_loop_unrecorded(const amk_space *sp, const amk_evaluator *ev, char (**out)[17],
                        size_t *n, amk_diag *d)
{
    *out = NULL;
    *n = 0;
    if (!amk_evaluator_restricted(ev))
        return AMK_OK;
    unrecorded_ctx u = {ev, NULL, 0, 0, 0};
    int rc = amk_space_enumerate(sp, collect_unrecorded, &u);
    if (u.oom)
        rc = AMK_ENOMEM;
    if (rc < 0) {
        free(u.ids);
        return amk_diag_set(d, rc, "loop: listing the configs %s cannot answer: %s",
                            amk_evaluator_backend(ev), amk_strerror(rc));
    }
    *out = u.ids;
    *n = u.n;
    return AMK_OK;
}
