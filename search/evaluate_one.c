/* `amk evaluate`: one config through the pipeline on one backend, and with a results file
 * one row for it. The file is opened and read before the evaluation, so a foreign or
 * malformed file is refused before anyone pays for a GPU run; the row is numbered under the
 * append's lock and kept by the history rule (search/trial_log.c). */
#include "amk_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int amk_evaluate_one(const amk_evaluate_opts *o, amk_evaluate_result *r, amk_diag *d)
{
    const amk_config *cfg = o->cfg;
    memset(r, 0, sizeof *r);
    amk_verdict_init(&r->verdict);
    amk_shape_format(cfg->spec, &cfg->shape, r->shape, sizeof r->shape);
    amk_evaluator *ev = NULL;
    amk_trial_log *lg = NULL;
    amk_space *sp = NULL;
    /* A recording that does not hold this kernel at this shape could only answer
     * not_recorded: refused first, as amk loop does, with nothing run or logged. */
    r->failed_on = AMK_EVALUATE_ON_SETUP;
    int e = amk_sim_check_shape(o->backend, amk_spec_name(cfg->spec), r->shape, d);
    if (e != AMK_OK)
        return e;
    r->failed_on = AMK_EVALUATE_ON_BACKEND;
    e = amk_evaluator_create(o->backend, o->backend_opts, cfg->spec, &cfg->shape, &ev, d);
    if (e != AMK_OK)
        return e;
    const amk_target *t = amk_evaluator_target(ev);
    if (!t)
        t = o->target;
    const char *dev = amk_evaluator_device(ev), *used = amk_evaluator_backend(ev);
    snprintf(r->device, sizeof r->device, "%s", dev && *dev ? dev : t->key);
    snprintf(r->backend, sizeof r->backend, "%s", used ? used : o->backend);

    r->failed_on = AMK_EVALUATE_ON_RESULTS;
    if (o->results_path &&
        (e = amk_trial_log_open(o->results_path, cfg, r->device,
                                 o->backend_opts ? o->backend_opts->objective : AMK_OBJ_TIME, &lg,
                                 d)) != AMK_OK)
        goto out;
    r->failed_on = AMK_EVALUATE_ON_SETUP;
    if ((e = amk_space_create(cfg->spec, &cfg->shape, &t->limits, &sp, d)) != AMK_OK)
        goto out;
    r->failed_on = AMK_EVALUATE_ON_RUN;
    if ((e = amk_evaluator_run(ev, sp, &cfg, 1, NAN, &r->verdict)) != AMK_OK) {
        amk_diag_set(d, e, "backend %s failed on %s: %s", r->backend, amk_spec_name(cfg->spec),
                     amk_strerror(e));
        goto out;
    }
    if (!r->verdict.config_id[0])
        amk_config_id(cfg, r->verdict.config_id);
    r->failed_on = AMK_EVALUATE_ON_RESULTS;
    if (lg && (e = amk_trial_log_append(lg, cfg, r->device, &r->verdict, &r->row, d)) != AMK_OK)
        goto out;
    r->logged = lg != NULL;
    r->failed_on = AMK_EVALUATE_DONE;
out:
    amk_space_free(sp);
    amk_trial_log_close(lg);
    amk_evaluator_free(ev);
    return e;
}
