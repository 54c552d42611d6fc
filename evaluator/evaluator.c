/* The evaluator: the backend table, backend selection (`auto` included) and the pipeline
 * validate -> feasibility -> estimate -> roofline screen -> backend (one batch) -> floor
 * guard, which turns every config into exactly one verdict. */
#include "evaluator_int.h"

#include "numeric/numeric_int.h" /* the regime names */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_SCREEN_MARGIN 0.02

struct amk_evaluator {
    const amk_backend_type *type;
    void *state;
    double margin;
    amk_target target; /* the backend's target with measured ceilings (amk calibrate) */
    /* The judge of outputs checked outside amk (amk_backend_opts.verify). */
    int (*verify)(const amk_config *c, const char *prefix, char *why, size_t cap, void *ud);
    void *verify_ud;
    char outputs_dir[200];
};

const amk_backend_type *const amk_backends[] = {
#ifdef AMK_HAVE_GPU
    &amk_backend_gpu,
#endif
    &amk_backend_model,
    &amk_backend_sim,
    NULL,
};

#ifndef AMK_HAVE_GPU
int amk_gpu_devices(amk_gpu_device *out, int cap, int *n, amk_diag *d)
{
    (void)out;
    (void)cap;
    if (n)
        *n = 0;
    return amk_diag_set(d, AMK_EUNSUPPORTED, "gpu backend: this amk was built without a GPU "
                        "vendor layer (rebuild with -DAMK_CUDA=ON or -DAMK_HIP=ON)");
}
#endif

static const amk_backend_type *find_in(const amk_backend_type *const *table, const char *name)
{
    if (!table || !name)
        return NULL;
    for (size_t i = 0; table[i]; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

const amk_backend_type *amk_backend_find(const char *name)
{
    return find_in(amk_backends, name);
}

int amk_regime_check_name(const char *name, amk_diag *d)
{
    if (!name || amk__regime_from_name(name) >= 0)
        return AMK_OK;
    return amk_diag_set(d, AMK_EINVAL, "unknown regime '%s' (sustained or burst)", name);
}

amk_objective amk_backend_opts_objective(amk_backend_opts *o, const char *text)
{
    amk_objective obj = AMK_OBJ_TIME;
    int named = text && amk_objective_parse(text, &obj) == AMK_OK;
    o->objective = obj;
    o->sim_objective = named ? NULL : text;
    return obj;
}

int amk_backend_check_name(const char *name, amk_diag *d)
{
    /* "gpu" is a valid spelling even in a build without the GPU layer: creating the
     * evaluator then says why it cannot run, with its own exit code. */
    if (!strcmp(name, "model") || !strcmp(name, "auto") || !strcmp(name, "gpu"))
        return AMK_OK;
    const char *sim_file = amk_backend_sim_file(name);
    if (sim_file && *sim_file)
        return AMK_OK;
    if (!strcmp(name, "sim") || sim_file)
        return amk_diag_set(d, AMK_EINVAL, "--backend sim needs the file to replay: "
                            "--backend sim:FILE");
    return amk_diag_set(d, AMK_EINVAL, "unknown backend '%s' (model, sim:FILE, gpu, auto)",
                        name);
}

double amk_backend_slot_seconds(const char *name, const amk_backend_opts *opts)
{
    const amk_backend_type *t = amk_backend_find(name);
    if (t && t->slot_seconds)
        return t->slot_seconds(opts);
    const char *e = getenv("AMK_SIM_DELAY_MS"); /* the delay tests inject into model/sim */
    double ms = e && *e ? strtod(e, NULL) : 0;
    return 1.0 + (isfinite(ms) && ms > 0 ? ms / 1000.0 : 0);
}

/* ---------- creation ------------------------------------------------------------------- */

int amk__evaluator_create_type(const amk_backend_type *type, const amk_backend_opts *opts,
                               amk_evaluator **out, amk_diag *d)
{
    amk_backend_opts defaults = {0};
    amk_evaluator *ev = NULL;
    int rc;
    if (out)
        *out = NULL;
    if (!out || !type || type->api_version < 1 || !type->name || !type->init ||
        !type->evaluate || !type->clear)
        return amk_diag_set(d, AMK_EINVAL, "evaluator: invalid backend type%s%s",
                            type && type->name ? " " : "", type && type->name ? type->name : "");
    if (!opts)
        opts = &defaults;
    ev = calloc(1, sizeof *ev);
    if (!ev)
        goto oom;
    ev->type = type;
    ev->margin = DEFAULT_SCREEN_MARGIN;
    if (opts->verify && !opts->outputs_dir) {
        rc = amk_diag_set(d, AMK_EINVAL, "evaluator: a verify function needs an outputs_dir");
        goto fail;
    }
    if (opts->outputs_dir && strlen(opts->outputs_dir) >= sizeof ev->outputs_dir) {
        rc = amk_diag_set(d, AMK_EINVAL, "evaluator: outputs_dir '%s': at most %zu bytes",
                          opts->outputs_dir, sizeof ev->outputs_dir - 1);
        goto fail;
    }
    ev->verify = opts->verify;
    ev->verify_ud = opts->verify_ud;
    snprintf(ev->outputs_dir, sizeof ev->outputs_dir, "%s",
             opts->outputs_dir ? opts->outputs_dir : "");
    ev->state = calloc(1, type->state_size ? type->state_size : 1);
    if (!ev->state)
        goto oom;
    rc = type->init(ev->state, opts, d);
    if (rc != AMK_OK) {
        if (d && d->code == AMK_OK) /* a backend that forgot to say why */
            amk_diag_set(d, rc, "%s backend: %s", type->name, amk_strerror(rc));
        goto fail;
    }
    const amk_target *bt = type->target ? type->target(ev->state) : NULL;
    amk_target_with_ceilings(bt ? bt : amk_target_default(), &ev->target);
    *out = ev;
    return AMK_OK;
oom:
    rc = amk_diag_set(d, AMK_ENOMEM, "evaluator: out of memory");
fail:
    if (ev)
        free(ev->state);
    free(ev);
    return rc;
}

void amk_evaluator_free(amk_evaluator *ev)
{
    if (!ev)
        return;
    ev->type->clear(ev->state);
    free(ev->state);
    free(ev);
}

/* Creates `type`, logging instead of failing; NULL when it cannot run. */
static amk_evaluator *try_create(const amk_backend_type *type, const amk_backend_opts *opts,
                                 char *why, size_t why_cap)
{
    amk_evaluator *ev = NULL;
    amk_diag d = {0};
    if (amk__evaluator_create_type(type, opts, &ev, &d) != AMK_OK) {
        snprintf(why, why_cap, "%s", d.msg);
        return NULL;
    }
    return ev;
}

/* `auto`: gpu when a device answers; else sim over a recorded sweep of kernel+shape; else
 * model. Each fallback is logged with the reason. */
static int create_auto(const amk_backend_type *const *table, const amk_backend_opts *opts,
                       const amk_spec *kernel, const amk_shape *shape, amk_evaluator **out,
                       amk_diag *d)
{
    const amk_backend_type *gpu = find_in(table, "gpu");
    const amk_backend_type *sim = find_in(table, "sim");
    const amk_backend_type *model = find_in(table, "model");
    char no_gpu[512], why[512], path[4096];
    amk_backend_opts o = {0};
    if (opts)
        o = *opts;
    if (!o.kernel) {
        o.kernel = kernel;
        o.shape = shape;
    }

    if (gpu) {
        *out = try_create(gpu, &o, no_gpu, sizeof no_gpu);
        if (*out) {
            amk_log(AMK_LOG_INFO, "auto: measuring on %s (gpu backend)",
                    amk_evaluator_device(*out));
            return AMK_OK;
        }
        amk_log(AMK_LOG_INFO, "auto: gpu backend unavailable: %s", no_gpu);
    } else {
        snprintf(no_gpu, sizeof no_gpu, "this build has no GPU backend");
    }

    if (!kernel || !shape) {
        snprintf(why, sizeof why, "no kernel and shape given to look up a recorded sweep");
    } else if (!sim) {
        snprintf(why, sizeof why, "no sim backend");
    } else {
        char shape_text[512];
        amk_shape_format(kernel, shape, shape_text, sizeof shape_text);
        if (amk__sim_sweep_find(amk_spec_name(kernel), shape_text, path, sizeof path, why,
                                sizeof why)) {
            o.sim_path = path;
            *out = try_create(sim, &o, why, sizeof why);
            if (*out) {
                amk_log(AMK_LOG_WARN,
                        "auto: %s; replaying the recorded sweep %s (latencies are replayed, "
                        "not measured)", no_gpu, path);
                return AMK_OK;
            }
        }
    }
    amk_log(AMK_LOG_INFO, "auto: no recorded sweep to replay: %s", why);

    if (!model)
        return amk_diag_set(d, AMK_ENODEV, "auto: %s, no recorded sweep (%s), no model backend",
                            no_gpu, why);
    o.sim_path = NULL;
    int rc = amk__evaluator_create_type(model, &o, out, d);
    if (rc != AMK_OK)
        return rc;
    amk_log(AMK_LOG_WARN,
            "auto: %s and no recorded sweep; using the cost model for %s (latencies are "
            "predicted, not measured)", no_gpu, amk_evaluator_target(*out)->name);
    return AMK_OK;
}

int amk__evaluator_create_from(const amk_backend_type *const *table, const char *backend,
                               const amk_backend_opts *opts, const amk_spec *kernel,
                               const amk_shape *shape, amk_evaluator **out, amk_diag *d)
{
    if (!out)
        return amk_diag_set(d, AMK_EINVAL, "evaluator: no output pointer");
    *out = NULL;
    if (!backend || !*backend || strcmp(backend, "auto") == 0)
        return create_auto(table, opts, kernel, shape, out, d);

    amk_backend_opts o = {0};
    if (opts)
        o = *opts;
    if (!o.kernel) {
        o.kernel = kernel;
        o.shape = shape;
    }
    char name[64];
    const char *colon = strchr(backend, ':');
    size_t len = colon ? (size_t)(colon - backend) : strlen(backend);
    if (len >= sizeof name)
        len = sizeof name - 1;
    memcpy(name, backend, len);
    name[len] = '\0';
    if (colon) {
        if (strcmp(name, "sim") != 0 || !colon[1])
            return amk_diag_set(d, AMK_EINVAL,
                                "backend '%s': only sim takes an argument (sim:FILE)", backend);
        o.sim_path = colon + 1;
    }
    const amk_backend_type *type = find_in(table, name);
    if (!type) {
        if (strcmp(name, "gpu") == 0)
            return amk_diag_set(d, AMK_EUNSUPPORTED,
                                "backend 'gpu': this build has no GPU backend (built without "
                                "CUDA or HIP)");
        amk_sb known = {0};
        for (size_t i = 0; table && table[i]; i++)
            amk_sb_printf(&known, "%s, ", table[i]->name);
        amk_diag_set(d, AMK_EINVAL, "unknown backend '%s' (known: %sauto)", backend,
                     known.p ? known.p : "");
        amk_sb_free(&known);
        return AMK_EINVAL;
    }
    return amk__evaluator_create_type(type, &o, out, d);
}

int amk_evaluator_create(const char *backend, const amk_backend_opts *opts,
                         const amk_spec *kernel, const amk_shape *shape, amk_evaluator **out,
                         amk_diag *d)
{
    return amk__evaluator_create_from(amk_backends, backend, opts, kernel, shape, out, d);
}

const char *amk_evaluator_backend(const amk_evaluator *ev)
{
    return ev ? ev->type->name : NULL;
}

const amk_target *amk_evaluator_target(const amk_evaluator *ev)
{
    return ev ? &ev->target : NULL;
}

const char *amk_evaluator_device(const amk_evaluator *ev)
{
    const char *s = NULL;
    if (!ev)
        return NULL;
    if (ev->type->device)
        s = ev->type->device(ev->state);
    return s && *s ? s : ev->type->name;
}

int amk_evaluator_recorded(const amk_evaluator *ev, const char *config_id)
{
    return !ev || !ev->type->recorded || ev->type->recorded(ev->state, config_id);
}

int amk_evaluator_restricted(const amk_evaluator *ev)
{
    return ev && ev->type->recorded;
}

int amk_evaluator_simulated_clock(const amk_evaluator *ev)
{
    return ev && ev->type->simulated_clock && ev->type->simulated_clock(ev->state);
}

int amk_evaluator_parallelism(const amk_evaluator *ev)
{
    int n = ev && ev->type->parallelism ? ev->type->parallelism(ev->state) : 1;
    return n > 0 ? n : 1;
}

int amk_evaluator_remeasure(amk_evaluator *ev, const amk_config *a, const amk_config *b,
                            double decide_gain, double lat_us[2], double spread[2],
                            double *sm_mhz, amk_diag *d)
{
    if (!ev || !ev->type->remeasure)
        return amk_diag_set(d, AMK_EUNSUPPORTED, "backend %s cannot re-measure",
                            ev ? ev->type->name : "(none)");
    return ev->type->remeasure(ev->state, a, b, decide_gain, lat_us, spread, sm_mhz, d);
}

void amk_evaluator_set_screen_margin(amk_evaluator *ev, double margin)
{
    if (ev && isfinite(margin) && margin >= 0)
        ev->margin = margin;
}

/* ---------- the pipeline --------------------------------------------------------------- */

/* Appends "; text" (or text) to a fixed buffer, truncating. */
static void append_text(char *buf, size_t cap, const char *text)
{
    size_t n = strnlen(buf, cap);
    if (n >= cap - 1)
        return;
    snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", text);
}

/* Puts text first in a verdict's notes (what decided the verdict; the run's own notes,
 * which may fill the buffer, follow). */
static void prepend_note(amk_verdict *v, const char *text)
{
    char old[sizeof v->notes];
    memcpy(old, v->notes, sizeof old);
    old[sizeof old - 1] = '\0';
    snprintf(v->notes, sizeof v->notes, "%s", text);
    if (old[0])
        append_text(v->notes, sizeof v->notes, old);
}

/* Same params with the same choices, so choice indices mean the same values. */
static int same_param_space(const amk_spec *a, const amk_spec *b)
{
    int np = amk_spec_n_params(a);
    if (np != amk_spec_n_params(b) || amk_spec_n_dims(a) != amk_spec_n_dims(b))
        return 0;
    for (int i = 0; i < np; i++) {
        int nc = amk_spec_param_n_choices(a, i);
        if (strcmp(amk_spec_param_name(a, i), amk_spec_param_name(b, i)) != 0 ||
            nc != amk_spec_param_n_choices(b, i))
            return 0;
        for (int k = 0; k < nc; k++)
            if (amk_spec_param_value(a, i, k) != amk_spec_param_value(b, i, k))
                return 0;
    }
    return 1;
}

/* Checks that c belongs to the space: same kernel, same shape, choice indices in range.
 * Returns 0 when it does, else 1 with the reason written. */
static int mismatch(const amk_space *sp, const amk_config *c, char *reason, size_t cap)
{
    const amk_spec *ss = amk_space_spec(sp);
    const amk_shape *sh = amk_space_shape(sp);
    if (c->spec != ss) {
        if (strcmp(amk_spec_name(c->spec), amk_spec_name(ss)) != 0) {
            snprintf(reason, cap, "config is for kernel '%s' but the space is of kernel '%s'",
                     amk_spec_name(c->spec), amk_spec_name(ss));
            return 1;
        }
        if (!same_param_space(c->spec, ss)) {
            snprintf(reason, cap, "config's spec of '%s' (%s) declares other params than the "
                     "space's (%s)", amk_spec_name(ss), amk_spec_dir(c->spec), amk_spec_dir(ss));
            return 1;
        }
    }
    int nd = amk_spec_n_dims(ss);
    int same = c->shape.dtype == sh->dtype;
    for (int i = 0; same && i < nd; i++)
        same = c->shape.dims[i] == sh->dims[i];
    if (!same) {
        char a[256], b[256];
        amk_shape_format(ss, &c->shape, a, sizeof a);
        amk_shape_format(ss, sh, b, sizeof b);
        snprintf(reason, cap, "config's shape %s differs from the space's shape %s", a, b);
        return 1;
    }
    for (int i = 0; i < amk_spec_n_params(ss); i++)
        if (c->choice[i] >= amk_spec_param_n_choices(ss, i)) {
            snprintf(reason, cap, "param %s: choice index %d is out of range (%d choices)",
                     amk_spec_param_name(ss, i), c->choice[i],
                     amk_spec_param_n_choices(ss, i));
            return 1;
        }
    return 0;
}

static void reject(amk_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reject(amk_verdict *v, const char *fmt, ...)
{
    va_list ap;
    v->status = AMK_STATUS_REJECTED;
    v->valid = 0;
    va_start(ap, fmt);
    vsnprintf(v->reason, sizeof v->reason, fmt, ap);
    va_end(ap);
}

/* Outputs checked outside amk (spec "check": "external"): a config whose run passed amk's
 * own checks is judged by the caller's verify function before its verdict leaves the
 * pipeline (so no latency of a config it refuses reaches a row, the keep rule or best);
 * without one nothing has judged those outputs, and the verdict cannot stand. The files
 * the run worker wrote for the judge are removed afterwards, whatever the verdict. */
static void judge_external(const amk_evaluator *ev, const amk_config *c, amk_verdict *v)
{
    const amk_spec *sp = c->spec;
    char names[160] = "", prefix[sizeof ev->outputs_dir + 20];
    int n = amk_spec_n_buffers(sp), ext = 0;
    for (int i = 0; i < n; i++) {
        amk_spec_buffer b;
        if (amk_spec_buffer_at(sp, i, &b) == AMK_OK && b.external) {
            append_text(names, sizeof names, b.name);
            ext++;
        }
    }
    if (!ext)
        return;
    snprintf(prefix, sizeof prefix, "%s/%s.", ev->outputs_dir, v->config_id);
    if (v->status == AMK_STATUS_OK && v->correct == 1) {
        char why[400] = "";
        int r = ev->verify ? ev->verify(c, prefix, why, sizeof why, ev->verify_ud) : -1;
        if (!ev->verify)
            snprintf(why, sizeof why, "nothing judges them here (spec \"check\": \"external\": "
                     "Kernel Tuner's verify=, which amk.tune_kernel calls)");
        if (r <= 0) {
            v->status = r == 0 ? AMK_STATUS_WRONG : AMK_STATUS_RUN_ERROR;
            v->correct = r == 0 ? 0 : -1;
            snprintf(v->reason, sizeof v->reason, "%s %s: %s", r == 0 ? "the external check "
                     "of" : "cannot check", names, why[0] ? why : "no reason given");
        } else {
            char passed[sizeof names + 32];
            snprintf(passed, sizeof passed, "%s: passed the external check", names);
            prepend_note(v, passed);
        }
    }
    for (int i = 0; ev->outputs_dir[0] && i < n; i++) {
        amk_spec_buffer b;
        char path[sizeof prefix + AMK_NAME_MAX];
        if (amk_spec_buffer_at(sp, i, &b) == AMK_OK && b.external) {
            snprintf(path, sizeof path, "%s%s", prefix, b.name);
            (void)unlink(path);
        }
    }
}

/* Normalises what a backend returned and applies the floor guard. */
static void finish(const amk_evaluator *ev, amk_verdict *v)
{
    if ((unsigned)v->status >= (unsigned)AMK_STATUS_COUNT) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s backend returned an unknown status %d", ev->type->name,
                 (int)v->status);
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "%s", msg);
    }
    if (v->status == AMK_STATUS_OK &&
        (!isfinite(v->latency_us) || v->latency_us <= 0 || v->latency_kind == AMK_LAT_NONE)) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason,
                 "%s backend reported ok without a usable latency", ev->type->name);
    }
    if (v->status == AMK_STATUS_OK &&
        amk_latency_is_evidence(v->latency_kind) &&
        isfinite(v->bound_us) && v->latency_us < v->bound_us) {
        char note[160];
        const char *kind = amk_latency_kind_name(v->latency_kind);
        snprintf(v->reason, sizeof v->reason,
                 "%s latency %.6g us is below the roofline floor %.6g us: not trusted "
                 "(broken timing, a kernel skipping work, or a wrong device model)", kind,
                 v->latency_us, v->bound_us);
        snprintf(note, sizeof note, "withheld %s latency_us=%.6g", kind, v->latency_us);
        prepend_note(v, note);
        v->status = AMK_STATUS_WITHHELD;
    }
    if (v->status == AMK_STATUS_OK) {
        v->pct_of_roofline = isfinite(v->bound_us)
                                 ? amk_cost_pct_of_roofline(v->bound_us, v->latency_us)
                                 : NAN;
    } else {
        v->latency_us = NAN;
        v->latency_kind = AMK_LAT_NONE;
        v->pct_of_roofline = NAN;
    }
}

int amk_evaluator_run(amk_evaluator *ev, const amk_space *sp, const amk_config *const *cfgs,
                      size_t n, double incumbent_us, amk_verdict *out)
{
    if (!ev || !sp || (n && (!cfgs || !out)))
        return AMK_EINVAL;
    if (n == 0)
        return AMK_OK;
    const amk_target *t = amk_evaluator_target(ev);
    const char *device = amk_evaluator_device(ev);
    size_t *idx = malloc(n * sizeof *idx);
    const amk_config **bcfg = malloc(n * sizeof *bcfg);
    amk_verdict *bv = malloc(n * sizeof *bv);
    size_t nb = 0;
    int rc = AMK_OK;

    for (size_t i = 0; i < n; i++) {
        amk_verdict *v = &out[i];
        const amk_config *c = cfgs[i];
        amk_diag d = {0};
        amk_estimate est;
        amk_verdict_init(v);
        snprintf(v->device, sizeof v->device, "%s", device);
        if (!c || !c->spec) {
            reject(v, "%s", "no config (NULL or without a kernel spec)");
            continue;
        }
        amk_config_id(c, v->config_id);
        if (mismatch(sp, c, v->reason, sizeof v->reason)) {
            v->status = AMK_STATUS_REJECTED;
            continue;
        }
        if (amk_space_valid(sp, c, &d) != AMK_OK) {
            reject(v, "%s", d.msg);
            continue;
        }
        if (amk_cost_feasible(c, t, &d) != AMK_OK) {
            reject(v, "%s", d.msg);
            continue;
        }
        if (amk_cost_estimate(c, t, &est, &d) != AMK_OK) {
            reject(v, "cost model: %s", d.msg);
            continue;
        }
        v->valid = 1;
        v->predicted_us = est.predicted_us;
        v->bound_us = est.bound_us;
        if (isfinite(incumbent_us) && incumbent_us > 0 && isfinite(est.bound_us) &&
            est.bound_us > incumbent_us * (1.0 + ev->margin)) {
            v->status = AMK_STATUS_SCREENED;
            snprintf(v->reason, sizeof v->reason,
                     "roofline floor %.6g us exceeds the incumbent %.6g us by more than "
                     "%.3g%%: cannot win, not compiled", est.bound_us, incumbent_us,
                     100.0 * ev->margin);
            continue;
        }
        v->status = AMK_STATUS_NOT_RECORDED; /* until the backend says */
        if (!idx || !bcfg || !bv) {
            snprintf(v->reason, sizeof v->reason, "evaluator: out of memory");
            rc = AMK_ENOMEM;
            continue;
        }
        idx[nb] = i;
        bcfg[nb] = c;
        bv[nb] = *v;
        nb++;
    }

    if (nb) {
        if (ev->type->set_incumbent)
            ev->type->set_incumbent(ev->state, incumbent_us > 0 ? incumbent_us : NAN);
        int brc = ev->type->evaluate(ev->state, bcfg, nb, bv);
        for (size_t k = 0; k < nb; k++) {
            amk_verdict *v = &out[idx[k]];
            if (brc != AMK_OK) {
                snprintf(v->reason, sizeof v->reason, "%s backend failed: %s (%s)",
                         ev->type->name, amk_strerror(brc), amk_err_name(brc));
                continue;
            }
            amk_verdict keep = *v;
            *v = bv[k];
            /* The pipeline's facts stay the pipeline's. */
            memcpy(v->config_id, keep.config_id, sizeof v->config_id);
            v->bound_us = keep.bound_us;
            if (!isfinite(v->predicted_us))
                v->predicted_us = keep.predicted_us;
            if (!v->device[0])
                memcpy(v->device, keep.device, sizeof v->device);
            judge_external(ev, bcfg[k], v);
            finish(ev, v);
        }
        if (brc != AMK_OK)
            rc = brc;
    }
    free(idx);
    free(bcfg);
    free(bv);
    return rc;
}
