/* The search loop: propose a batch -> evaluate -> keep/revert -> log every trial (the rows of
 * a batch go out in one locked append, fsynced at most LOOP_SYNC_EVERY_S later and before
 * best.json or the summary names them) -> best.json whenever the incumbent changes.
 * Stops on budget, time limit or an exhausted strategy; resumes from results.tsv. */
#include "search_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_MAX_BATCH 65536
#define LOOP_MAX_REPEATS 100000 /* consecutive already-seen proposals before giving up */
/* Group commit: a model or sim trial costs less than an fsync, so rows reach the disk at
 * most this long after they are written (each is written whole before the next trial) and
 * before best.json or the summary names them; a slower loop fsyncs every batch. best.json,
 * two fsyncs a rewrite, is rewritten at most this often too, and once at the end. */
#define LOOP_SYNC_EVERY_S 0.1

/* One run of the loop: its options, the strategy, the history and the batch's buffers. */
typedef struct loop_run {
    const amk_loop_opts *o;
    const amk_strategy_type *st;
    amk_loop_result *out;
    const amk_space *sp;
    char shape[160], device[64];
    int batch, simulated;
    double t0, sim_s, min_gain;
    amk_tsv *tsv;
    double best_at;   /* when best.json was last rewritten */
    int best_pending; /* the best changed since */
    amk_history *h;
    amk__peer_frame frame; /* the clock state the strategy is shown latencies in */
    void *state;
    int state_ok;
    amk_proposal *props;
    amk_verdict *verdicts;
    amk_row *rows;
    const amk_config **cfgs;
    char (*ids)[17];
} loop_run;

static int write_best(const char *path, const amk_row *row, const amk_incumbent *best,
                      amk_diag *d)
{
    char *text = best->has ? amk_config_canonical(&best->config) : NULL;
    if (best->has && !text)
        return amk_diag_set(d, AMK_ENOMEM, "%s: out of memory", path);
    int rc = amk_best_write(path, row, text, d);
    free(text);
    return rc;
}

/* Appends "; text" (printf) to a verdict's notes, as far as they have room. */
static void add_note(amk_verdict *v, const char *fmt, ...)
{
    size_t len = strnlen(v->notes, sizeof v->notes);
    if (len + 3 >= sizeof v->notes)
        return;
    if (len) {
        memcpy(v->notes + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->notes + len, sizeof v->notes - len, fmt, ap);
    va_end(ap);
}

/* A close call between two measured configs is re-measured interleaved in one window
 * (DESIGN §3) when the backend can, and the decision uses the window's two medians: without
 * a common peer the incumbent's latency is refreshed; with one the candidate is put in the
 * incumbent's clock state by the window's ratio. The row keeps the candidate's first measurement
 * and says in its note what the re-measure found. Backends that cannot re-measure (or a
 * re-measure that fails) leave the decision to the first measurements. */
static void remeasure_close(amk_evaluator *ev, amk_incumbent *inc, const amk_config *cand,
                            double min_gain, amk_verdict *decide, amk_verdict *logged)
{
    double lat[2], spread[2], sm_mhz;
    amk_diag d = {0};
    /* The window may end once the keep rule's answer at min_gain is known (its margin is
     * min_gain unless the spreads are wider). */
    int rc = amk_evaluator_remeasure(ev, &inc->config, cand, min_gain, lat, spread, &sm_mhz, &d);
    if (rc == AMK_EUNSUPPORTED)
        return;
    if (inc->sm_mhz > 0 && decide->sm_mhz > 0)
        add_note(logged, "SM clock %.0f MHz (incumbent %.0f MHz)", decide->sm_mhz, inc->sm_mhz);
    if (rc != AMK_OK) {
        add_note(logged, "re-measure failed: %s", d.msg);
        return;
    }
    /* An incumbent kept earlier in this batch has no trial number until the batch is
     * appended (numbers are taken under the append's lock). */
    char which[48] = "kept earlier in this batch";
    if (inc->trial > 0)
        snprintf(which, sizeof which, "trial %lld", (long long)inc->trial);
    add_note(logged, "re-measured interleaved with incumbent (%s): incumbent %.3f us, "
             "candidate %.3f us", which, lat[0], lat[1]);
    if (amk__keep_peered(inc, decide) && lat[0] > 0 && lat[1] > 0) {
        /* The incumbent keeps its measurement and peer (one clock state); the candidate is
         * put in that state by the window's ratio, which the keep rule then judges at the
         * window's precision (spread[]: the medians' CIs, not the launches' spread). */
        decide->latency_us = inc->latency_us * lat[1] / lat[0];
        inc->spread = spread[0];
        decide->spread = spread[1];
        decide->peer_us = inc->peer_us;
        decide->vs_peer = inc->peer_us / decide->latency_us;
        decide->sm_mhz = inc->sm_mhz;
        return;
    }
    /* Both are now timed in one state, the window's clock: the next candidate's clock is
     * held against it (the candidate's first clock here made every later call look moved). */
    inc->latency_us = lat[0];
    inc->spread = spread[0];
    inc->sm_mhz = sm_mhz;
    decide->latency_us = lat[1];
    decide->spread = spread[1];
    decide->sm_mhz = sm_mhz;
}

/* Timed beside the same peer at clocks more than min_gain apart: no re-measure, the note
 * says the clock moved and what the keep rule judged (the candidate in the incumbent's
 * clock state). */
static void note_clock_state(const amk_incumbent *inc, const amk_verdict *decide,
                             amk_verdict *logged, double min_gain)
{
    if (!amk__keep_peered(inc, decide) || !(inc->sm_mhz > 0) || !(decide->sm_mhz > 0) ||
        !(fabs(decide->sm_mhz - inc->sm_mhz) > min_gain * inc->sm_mhz))
        return;
    add_note(logged, "SM clock %.0f MHz (incumbent %.0f MHz): held in the incumbent's clock "
             "state beside %s, %.3f us", decide->sm_mhz, inc->sm_mhz, decide->peer,
             amk_peer_scaled(decide->latency_us, decide->peer, decide->peer_us, inc->peer,
                             inc->peer_us));
}

/* The options, and the strategy they name. */
static int check_opts(const amk_loop_opts *o, amk_loop_result *out,
                      const amk_strategy_type **st, amk_diag *d)
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
    const char *sname = o->strategy ? o->strategy : amk_strategies[0]->name;
    if ((*st = amk_strategy_find(sname)))
        return AMK_OK;
    amk_sb names = {0};
    for (int i = 0; amk_strategies[i]; i++)
        amk_sb_printf(&names, "%s%s", i ? ", " : "", amk_strategies[i]->name);
    amk_diag_set(d, AMK_EINVAL, "unknown strategy '%s' (known: %s)", sname,
                 names.p ? names.p : "");
    amk_sb_free(&names);
    return AMK_EINVAL;
}

/* A resumed run's strategy hears every recorded row of the search, as `amk propose`'s does. */
static void observe_row(const amk_row *r, const amk_config *c, void *ud)
{
    loop_run *L = ud;
    if (!c)
        return;
    amk_verdict v;
    amk_verdict_from_row(r, &v);
    amk__verdict_for_strategy(L->o->objective, &L->frame, &v);
    L->st->observe(L->state, c, &v, r->kept == 1);
}

/* The strategy, then the history (the results file on --resume, read once, every row heard
 * by the strategy; empty otherwise) and the excluded ids. */
static int start_search(loop_run *L, amk_diag *d)
{
    const amk_loop_opts *o = L->o;
    amk_strategy_opts sopts = o->strategy_opts;
    if (!sopts.target)
        sopts.target = amk_evaluator_target(o->ev);
    sopts.budget = o->budget;
    sopts.time_limit_s = o->time_limit_s;
    int rc = L->st->init(L->state, L->sp, &sopts);
    if (rc < 0)
        return amk_diag_set(d, rc, "strategy %s: init failed: %s", L->st->name,
                            amk_strerror(rc));
    L->state_ok = 1;
    const amk_spec *spec = amk_space_spec(L->sp);
    amk_history_opts ho = {.shape = L->shape, .device = L->device, .spec = spec,
                           .at = amk_space_shape(L->sp), .limits = amk_space_limits(L->sp),
                           .min_gain = L->min_gain, .each = observe_row, .ud = L,
                           .objective = o->objective};
    rc = amk_history_load(o->resume ? o->results_path : NULL, &ho, &L->h, d);
    if (rc < 0)
        return rc;
    if (o->resume) {
        const amk_incumbent *inc = amk_history_incumbent(L->h);
        amk_log(AMK_LOG_INFO, "resume: %s: %zu rows for %s %s on %s, %zu configs seen, "
                "last trial %lld, incumbent trial %lld", o->results_path,
                amk_history_rows(L->h), amk_spec_name(spec), L->shape, L->device,
                amk_idset_size(amk_history_seen(L->h)),
                (long long)amk_history_last_trial(L->h), (long long)inc->trial);
    }
    for (size_t i = 0; i < o->n_exclude; i++)
        if ((rc = amk_history_see(L->h, o->exclude[i])) < 0)
            return amk_diag_set(d, rc, "loop: excluded config id %zu (\"%.16s\"): %s", i,
                                o->exclude[i], amk_strerror(rc));
    return AMK_OK;
}

static int open_run(loop_run *L, const amk_loop_opts *o, const amk_strategy_type *st,
                    amk_loop_result *out, amk_diag *d)
{
    memset(L, 0, sizeof *L);
    memset(out, 0, sizeof *out);
    out->setup_s = NAN;
    L->o = o;
    L->st = st;
    L->out = out;
    L->sp = o->space;
    L->t0 = amk_now_s();
    /* A replay of recorded trial costs runs the time limit on a simulated clock: the sum of
     * what the trials cost when recorded (the strategy's own time is not added, so that a
     * seed gives the same trials on any machine). Otherwise the wall clock. */
    L->simulated = amk_evaluator_simulated_clock(o->ev);
    /* Default batch: twice what the backend evaluates at once, so every device stays busy
     * while the slowest of a batch finishes. */
    const int par = amk_evaluator_parallelism(o->ev);
    L->batch = o->batch > 0 ? o->batch : par > 1 ? 2 * par : 1;
    L->min_gain = o->min_gain > 0 ? o->min_gain : 0;
    const amk_spec *spec = amk_space_spec(L->sp);
    amk_shape_format(spec, amk_space_shape(L->sp), L->shape, sizeof L->shape);
    const char *dev = amk_evaluator_device(o->ev);
    snprintf(L->device, sizeof L->device, "%s", dev ? dev : "");
    size_t b = (size_t)L->batch;
    L->props = calloc(b, sizeof *L->props);
    L->verdicts = calloc(b, sizeof *L->verdicts);
    L->rows = calloc(b, sizeof *L->rows);
    L->cfgs = calloc(b, sizeof *L->cfgs);
    L->ids = calloc(b, sizeof *L->ids);
    L->state = calloc(1, st->state_size ? st->state_size : 1);
    if (!L->props || !L->verdicts || !L->rows || !L->cfgs || !L->ids || !L->state)
        return amk_diag_set(d, AMK_ENOMEM, "loop: out of memory");
    int rc = amk_tsv_open(o->results_path, &L->tsv, d);
    if (rc == AMK_OK)
        rc = amk_tsv_check_objective(L->tsv, o->objective, d); /* before any work */
    amk_tsv_sync_every(L->tsv, LOOP_SYNC_EVERY_S);
    L->best_at = -INFINITY;
    return rc < 0 ? rc : start_search(L, d);
}

static double elapsed(const loop_run *L)
{
    return L->simulated ? L->sim_s : amk_now_s() - L->t0;
}

/* How many proposals the next batch may hold: 0 once the budget or the time is spent. */
static int batch_room(const loop_run *L)
{
    const amk_loop_opts *o = L->o;
    if (o->budget > 0 && L->out->trials >= o->budget)
        return 0;
    if (o->time_limit_s > 0 && elapsed(L) >= o->time_limit_s)
        return 0;
    if (o->budget > 0 && o->budget - L->out->trials < L->batch)
        return (int)(o->budget - L->out->trials);
    return L->batch;
}

/* Proposals: repeats are dropped (the strategy should not make them), the rest marked seen
 * right away so the strategy avoids them within this batch too. */
static int propose_batch(loop_run *L, int want, int *n, amk_diag *d)
{
    long repeats = 0;
    *n = 0;
    while (*n < want) {
        amk_proposal *p = &L->props[*n];
        int rc = L->st->next(L->state, amk_history_seen(L->h), p);
        if (rc < 0)
            return amk_diag_set(d, rc, "strategy %s: %s", L->st->name, amk_strerror(rc));
        if (rc == 0) {
            L->out->exhausted = 1;
            break;
        }
        amk_config_id(&p->config, L->ids[*n]);
        int added = amk_history_see(L->h, L->ids[*n]);
        if (added < 0)
            return amk_diag_set(d, AMK_ENOMEM, "loop: out of memory");
        if (added == 0) {
            if (++repeats > LOOP_MAX_REPEATS) {
                amk_log(AMK_LOG_WARN, "strategy %s proposed %d seen configs in a row; "
                        "treating the space as exhausted", L->st->name, LOOP_MAX_REPEATS);
                L->out->exhausted = 1;
                break;
            }
            continue;
        }
        repeats = 0;
        L->cfgs[*n] = &p->config;
        (*n)++;
    }
    return AMK_OK;
}

static int evaluate_batch(loop_run *L, int n, amk_diag *d)
{
    const amk_incumbent *inc = amk_history_incumbent(L->h);
    /* The roofline screen and the early stop compare times: under energy or edp a slower
     * config may still win, so there is nothing to screen against. */
    double beat = inc->has && L->o->objective == AMK_OBJ_TIME ? inc->latency_us : NAN;
    int rc = amk_evaluator_run(L->o->ev, L->sp, L->cfgs, (size_t)n, beat, L->verdicts);
    if (rc < 0)
        return amk_diag_set(d, rc, "evaluator %s: %s", amk_evaluator_backend(L->o->ev),
                            amk_strerror(rc));
    for (int i = 0; L->simulated && i < n; i++)
        if (isfinite(L->verdicts[i].cost_s))
            L->sim_s += L->verdicts[i].cost_s;
    for (int i = 0; i < n; i++)
        if (isfinite(L->verdicts[i].setup_s))
            L->out->setup_s = (isfinite(L->out->setup_s) ? L->out->setup_s : 0) +
                              L->verdicts[i].setup_s;
    return AMK_OK;
}

/* Keep/revert in proposal order (a close call, or one whose SM clock moved beyond the
 * margin, re-measured first), each decision in its row. */
static int keep_batch(loop_run *L, int n, amk_diag *d)
{
    for (int i = 0; i < n; i++) {
        amk_verdict decide = L->verdicts[i]; /* what keep/revert judges (maybe re-measured) */
        amk_incumbent *inc = amk__history_incumbent(L->h);
        if (amk__keep_close(inc, &L->props[i].config, &decide, L->min_gain) ||
            amk__keep_clock_moved(inc, &L->props[i].config, &decide, L->min_gain))
            remeasure_close(L->o->ev, inc, &L->props[i].config, L->min_gain, &decide,
                            &L->verdicts[i]);
        else if (inc && inc->has && !amk_config_equal(&inc->config, &L->props[i].config))
            note_clock_state(inc, &decide, &L->verdicts[i], L->min_gain);
        int keep = amk_history_decide(L->h, &L->props[i].config, &decide);
        int rc = amk_verdict_to_row(&L->verdicts[i], &L->props[i].config, 0, L->shape,
                                    L->props[i].source, L->device, keep, &L->rows[i], d);
        if (rc < 0)
            return rc;
        L->rows[i].objective = L->o->objective;
    }
    return AMK_OK;
}

/* best.json follows the best, naming only rows already on disk (amk_tsv_sync first). */
static int flush_best(loop_run *L, amk_diag *d)
{
    amk_incumbent best;
    const amk_row *row = amk_history_best(L->h, &best);
    int rc = amk_tsv_sync(L->tsv, d);
    if (rc == AMK_OK)
        rc = write_best(L->o->best_path, row, &best, d);
    L->best_at = amk_now_s();
    L->best_pending = 0;
    return rc;
}

/* The batch's rows go out in one locked append, numbered under its lock (they continue the
 * file; a concurrent writer never gets the same numbers); best.json is rewritten after them
 * when the best changed and the last rewrite is LOOP_SYNC_EVERY_S old. */
static int log_batch(loop_run *L, int n, amk_diag *d)
{
    int rc = amk_tsv_append_next(L->tsv, L->rows, (size_t)n, d);
    if (rc < 0)
        return rc;
    if (L->out->trials == 0)
        L->out->first_trial = L->rows[0].trial;
    L->out->last_trial = L->rows[n - 1].trial;
    L->out->trials += n;
    if (amk_history_record(L->h, L->rows, L->cfgs, (size_t)n) && L->o->best_path)
        L->best_pending = 1;
    if (L->best_pending && amk_now_s() - L->best_at >= LOOP_SYNC_EVERY_S)
        return flush_best(L, d);
    return AMK_OK;
}

static void observe_batch(loop_run *L, int n)
{
    amk_incumbent best;
    amk_history_best(L->h, &best);
    for (int i = 0; i < n; i++) {
        amk_verdict v = L->verdicts[i];
        amk__verdict_for_strategy(L->o->objective, &L->frame, &v);
        L->st->observe(L->state, &L->props[i].config, &v, L->rows[i].kept);
        if (!L->o->progress)
            continue;
        amk_loop_progress p = {
            .trial = L->rows[i].trial,
            .budget = L->o->budget,
            .elapsed_s = elapsed(L),
            .time_limit_s = L->o->time_limit_s,
            .last = &L->verdicts[i],
            .best = &best,
        };
        L->o->progress(&p, L->o->progress_ud);
    }
}

static void close_run(loop_run *L)
{
    if (L->h)
        amk_history_best(L->h, &L->out->best);
    L->out->elapsed_s = elapsed(L);
    if (L->state_ok && L->st->clear)
        L->st->clear(L->state);
    free(L->state);
    free(L->ids);
    free(L->cfgs);
    free(L->rows);
    free(L->verdicts);
    free(L->props);
    amk_history_free(L->h);
    amk_tsv_close(L->tsv);
}

int amk_loop_run(const amk_loop_opts *o, amk_loop_result *out, amk_diag *d)
{
    const amk_strategy_type *st = NULL;
    int rc = check_opts(o, out, &st, d);
    if (rc < 0)
        return rc;
    loop_run L;
    rc = open_run(&L, o, st, out, d);
    for (int want; rc == AMK_OK && (want = batch_room(&L)) > 0;) {
        int n;
        rc = propose_batch(&L, want, &n, d);
        if (rc < 0 || n == 0)
            break;
        if ((rc = evaluate_batch(&L, n, d)) < 0 || (rc = keep_batch(&L, n, d)) < 0 ||
            (rc = log_batch(&L, n, d)) < 0)
            break;
        observe_batch(&L, n);
        if (out->exhausted)
            break;
    }
    if (rc == AMK_OK && L.best_pending)
        rc = flush_best(&L, d);
    if (rc == AMK_OK)
        rc = amk_tsv_sync(L.tsv, d); /* the summary reports only rows on disk */
    close_run(&L);
    return rc < 0 ? rc : AMK_OK;
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
