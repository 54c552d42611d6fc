/* The `model` backend: no compile, no run. The latency of a config is the cost model's
 * prediction for the target, labelled `predicted` — never `measured` — and correctness is
 * not checked (correct = -1). Useful without a GPU, and to rank a space before measuring. */
#include "evaluator_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct model_state {
    const amk_target *target;
    char device[96];
} model_state;

static int model_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    model_state *s = state;
    const char *name = opts ? opts->target : NULL;
    if (opts && opts->objective != AMK_OBJ_TIME)
        return amk_diag_set(d, AMK_ENOENERGY, "model backend: --objective %s needs an energy "
                            "per launch measured on a device, and the cost model predicts "
                            "none (use --backend gpu, or sim:FILE of rows measured with "
                            "--objective energy or edp)", amk_objective_name(opts->objective));
    if (name && *name) {
        s->target = amk_target_find(name);
        if (!s->target)
            return amk_diag_set(d, AMK_EINVAL, "model backend: unknown target '%s'", name);
    } else {
        s->target = amk_target_default();
        if (!s->target)
            return amk_diag_set(d, AMK_ENOENT, "model backend: no default target");
    }
    snprintf(s->device, sizeof s->device, "%s (model)", s->target->name);
    return AMK_OK;
}

static int model_evaluate(void *state, const amk_config *const *cfgs, size_t n,
                          amk_verdict *out)
{
    model_state *s = state;
    amk__sim_delay(n);
    for (size_t i = 0; i < n; i++) {
        amk_verdict *v = &out[i];
        if (!isfinite(v->predicted_us)) { /* called outside the pipeline */
            amk_estimate est;
            amk_diag d = {0};
            if (amk_cost_estimate(cfgs[i], s->target, &est, &d) == AMK_OK) {
                v->predicted_us = est.predicted_us;
                v->bound_us = est.bound_us;
            } else {
                v->status = AMK_STATUS_REJECTED;
                v->valid = 0;
                snprintf(v->reason, sizeof v->reason, "cost model: %s", d.msg);
                continue;
            }
        }
        v->status = AMK_STATUS_OK;
        v->correct = -1;
        v->latency_us = v->predicted_us;
        v->latency_kind = AMK_LAT_PREDICTED;
        v->spread = NAN;
        v->compile_ms = NAN;
        v->cache_hit = -1;
        snprintf(v->notes, sizeof v->notes,
                 "predicted by the cost model for %s; not compiled, not measured",
                 s->target->name);
    }
    return AMK_OK;
}

static const amk_target *model_target(void *state)
{
    return ((model_state *)state)->target;
}

static const char *model_device(void *state)
{
    return ((model_state *)state)->device;
}

static void model_clear(void *state)
{
    (void)state; /* owns nothing: targets are static */
}

const amk_backend_type amk_backend_model = {
    .api_version = 1,
    .name = "model",
    .state_size = sizeof(model_state),
    .init = model_init,
    .evaluate = model_evaluate,
    .target = model_target,
    .device = model_device,
    .clear = model_clear,
};
