/* One search of one kernel at one shape on an evaluator, as `amk loop` runs it: the space
 * on the evaluator's target, the results file checked before anything is appended, the
 * configs a sampled sweep cannot answer left out, the loop, and the summary's comparison
 * with the spec's default config; and amk_tune_groups, which runs that once per device model
 * on an evaluator it creates (MPI's under mpirun). The caller parses and prints. */
#include "amk_search.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note(const amk_tune_opts *o, int warning, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(const amk_tune_opts *o, int warning, const char *fmt, ...)
{
    if (!o->note)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->note(msg, warning, o->ud);
}

/* A fresh run still reads an existing file: a hand-edited or foreign file is refused before
 * anything is appended, and an earlier run of the same search is pointed out. */
static int check_fresh_file(const amk_tune_opts *o, const amk_tune_result *r, amk_diag *d)
{
    if (o->resume || !amk_fs_exists(o->results_path))
        return AMK_OK;
    const char *kernel = amk_spec_name(o->spec);
    amk_history *prev = NULL;
    amk_backend_opts bo = {0};
    amk_history_opts ho = {.kernel = kernel, .shape = r->shape, .device = r->device,
                           .objective = amk_backend_opts_objective(&bo, o->objective)};
    int e = amk_history_load(o->results_path, &ho, &prev, d);
    if (e != AMK_OK) {
        if (!d->msg[0])
            amk_diag_set(d, e, "%s: %s", o->results_path, amk_strerror(e));
        else if (!strstr(d->msg, o->results_path))
            amk_diag_prefix(d, "%s", o->results_path);
        return e;
    }
    if (amk_history_rows(prev) > 0)
        note(o, 0, "note: %s already holds %zu trial(s) of %s at %s on %s; they are kept, but this "
             "run starts a fresh search (use --resume to continue it)", o->results_path,
             amk_history_rows(prev), kernel, r->shape, r->device);
    amk_history_free(prev);
    return AMK_OK;
}

/* The loop itself, over the configs the evaluator can answer. */
static int run_loop(const amk_tune_opts *o, amk_tune_result *r, const amk_space *sp,
                    amk_diag *d)
{
    amk_loop_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.space = sp;
    lo.ev = o->ev;
    lo.strategy = o->strategy;
    lo.strategy_opts.seed = o->seed;
    lo.strategy_opts.no_default = o->no_default;
    lo.budget = o->budget;
    lo.time_limit_s = o->time_limit_s;
    lo.batch = o->batch;
    lo.min_gain = o->min_gain;
    lo.results_path = o->results_path;
    lo.best_path = o->best_path;
    lo.resume = o->resume;
    lo.progress = o->progress;
    lo.progress_ud = o->ud;
    amk_backend_opts bo = {0};
    lo.objective = amk_backend_opts_objective(&bo, o->objective);
    /* A sampled sweep (sim): search only the configs it recorded. */
    char (*unrecorded)[17] = NULL;
    size_t n_unrecorded = 0;
    int e = amk_loop_unrecorded(sp, o->ev, &unrecorded, &n_unrecorded, d);
    if (e == AMK_OK && n_unrecorded)
        note(o, 1, "note: %s cannot answer %zu valid config(s) of %s at %s; the search covers the "
             "configs it recorded", r->backend, n_unrecorded, amk_spec_name(o->spec), r->shape);
    /* The caller's exclusions join them (one list: the loop takes one). */
    if (e == AMK_OK && o->n_exclude && !o->exclude)
        e = amk_diag_set(d, AMK_EINVAL, "%zu excluded config ids but no list", o->n_exclude);
    if (e == AMK_OK && o->n_exclude) {
        char (*all)[17] = realloc(unrecorded, (n_unrecorded + o->n_exclude) * sizeof *all);
        if (!all)
            e = amk_diag_set(d, AMK_ENOMEM, "out of memory");
        else {
            memcpy(all + n_unrecorded, o->exclude, o->n_exclude * sizeof *all);
            unrecorded = all;
        }
    }
    lo.exclude = (const char (*)[17])unrecorded;
    lo.n_exclude = n_unrecorded + (e == AMK_OK ? o->n_exclude : 0);
    if (e == AMK_OK)
        e = amk_loop_run(&lo, &r->loop, d);
    free(unrecorded);
    if (e != AMK_OK && !d->msg[0])
        amk_diag_set(d, e, "%s", amk_strerror(e));
    return e;
}

int amk_tune(const amk_tune_opts *o, amk_tune_result *r, amk_diag *d)
{
    memset(r, 0, sizeof *r);
    const amk_spec *s = o->spec;
    amk_shape_format(s, &o->shape, r->shape, sizeof r->shape);
    r->backend = amk_evaluator_backend(o->ev);
    if (!r->backend)
        r->backend = o->backend;
    r->target = amk_evaluator_target(o->ev);
    if (!r->target)
        r->target = o->target;
    const char *dev = amk_evaluator_device(o->ev);
    snprintf(r->device, sizeof r->device, "%s", dev && *dev ? dev : r->target->key);
    r->parallelism = amk_evaluator_parallelism(o->ev);

    r->failed_on = AMK_TUNE_ON_SETUP;
    int e = amk_sim_check_shape(o->backend, amk_spec_name(s), r->shape, d);
    amk_space *sp = NULL;
    if (e == AMK_OK)
        e = amk_space_create(s, &o->shape, &r->target->limits, &sp, d);
    if (e != AMK_OK)
        return e;
    r->failed_on = AMK_TUNE_ON_RESULTS;
    if ((e = check_fresh_file(o, r, d)) != AMK_OK)
        goto out;
    if (o->start)
        o->start(r, o->ud);
    r->failed_on = AMK_TUNE_ON_RUN;
    if ((e = run_loop(o, r, sp, d)) != AMK_OK)
        goto out;
    if (r->loop.trials == 0 && r->loop.exhausted && !o->resume) {
        /* The strategy had nothing at all to propose: no config satisfies the spec here. */
        r->failed_on = AMK_TUNE_ON_SETUP;
        e = amk_diag_set(d, AMK_EEMPTY, "kernel %s at %s on %s: %s (`amk space %s` lists the "
                         "restrictions)", amk_spec_name(s), r->shape, r->target->key,
                         amk_strerror(AMK_EEMPTY), amk_spec_name(s));
        goto out;
    }
    r->failed_on = AMK_TUNE_DONE;
    amk_loop_vs_default(o->results_path, o->ev, sp, r->device, &r->loop.best, &r->vs_default);
out:
    amk_space_free(sp);
    return e;
}

/* One search on g's devices, on the evaluator of this process's place in an MPI job. */
static int tune_group(const amk_tune_opts *o, const amk_device_group *g, const char *best,
                      amk_tune_result *r, amk_diag *d)
{
    amk_backend_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.target = o->target_named ? o->target->key : NULL;
    amk_backend_opts_objective(&bo, o->objective);
    bo.jobs = o->jobs;
    bo.regime = o->regime;
    bo.seed = o->seed;
    bo.devices = g->n ? g->idx : NULL;
    bo.ndevices = g->n;
    bo.outputs_dir = o->outputs_dir;
    bo.verify = o->verify;
    bo.verify_ud = o->verify_ud;
    amk_mpi_opts mo = {o->backend, &bo, o->spec, &o->shape, o->rank_timeout_s};
    amk_evaluator *ev = NULL;
    amk_rank_role role;
    memset(r, 0, sizeof *r);
    /* The backend's start-up and shutdown (gpu: run workers with a driver start-up each,
     * the compile pool) are not in the loop's elapsed_s: timed apart at AMK_LOG=debug. */
    double t0 = amk_now_s();
    int e = amk_evaluator_create_ranked(&mo, &ev, &role, d);
    amk_log(AMK_LOG_DEBUG, "tune: %s backend opened in %.3f s", o->backend, amk_now_s() - t0);
    if (e != AMK_OK) {
        r->failed_on = role == AMK_RANK_NONE   ? AMK_TUNE_ON_MPI
                       : role == AMK_RANK_ZERO ? AMK_TUNE_ON_RANKS
                                               : AMK_TUNE_ON_BACKEND;
        return e;
    }
    if (role == AMK_RANK_WORKER) {
        if (d->code != AMK_OK) /* rank 0 has excluded this rank and goes on */
            note(o, 1, "%s", d->msg);
        amk_diag_clear(d);
        r->failed_on = AMK_TUNE_DONE;
        return AMK_OK;
    }
    amk_tune_opts one = *o;
    one.ev = ev;
    one.best_path = best;
    e = amk_tune(&one, r, d);
    snprintf(r->best_file, sizeof r->best_file, "%s", best ? best : "");
    if (e == AMK_OK && o->done)
        o->done(r, g, o->ud);
    t0 = amk_now_s();
    amk_evaluator_free(ev);
    amk_log(AMK_LOG_DEBUG, "tune: %s backend closed in %.3f s", o->backend, amk_now_s() - t0);
    return e;
}

int amk_tune_groups(const amk_tune_opts *o, amk_tune_result *r, amk_diag *d)
{
    memset(r, 0, sizeof *r);
    r->failed_on = AMK_TUNE_ON_DEVICES;
    amk_device_group *g = calloc(AMK_MAX_DEVICES, sizeof *g);
    if (!g)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    int ng = 0;
    int e = o->ndevices > AMK_MAX_DEVICES
                ? amk_diag_set(d, AMK_EINVAL, "--devices: at most %d devices", AMK_MAX_DEVICES)
                : amk_device_groups(o->backend, o->devices, o->ndevices, g, &ng, d);
    if (e == AMK_OK && ng == 0 && o->ndevices > 0) { /* the backend picks, from the list */
        memcpy(g[0].idx, o->devices, (size_t)o->ndevices * sizeof *o->devices);
        g[0].n = o->ndevices;
    }
    if (e == AMK_OK && ng > 1) {
        char which[2048];
        amk_device_groups_describe(g, ng, which, sizeof which);
        if (amk_evaluator_world_size() > 1)
            e = amk_diag_set(d, AMK_EINVAL, "under MPI every rank tunes one GPU model, but "
                             "these devices are of %d (%s): pass --devices of one model", ng,
                             which);
        else
            note(o, 0, "note: the devices are of %d models (%s): one search per model, one "
                 "after another", ng, which);
    }
    for (int gi = 0; e == AMK_OK && gi < (ng > 1 ? ng : 1); gi++) {
        char best[4096] = "";
        if (ng > 1 && o->best_path)
            amk_best_path_for_model(o->best_path, g[gi].name, best, sizeof best);
        else if (o->best_path)
            snprintf(best, sizeof best, "%s", o->best_path);
        e = tune_group(o, &g[gi], o->best_path ? best : NULL, r, d); /* NULL: no best file */
    }
    r->ngroups = ng;
    free(g);
    return e;
}
