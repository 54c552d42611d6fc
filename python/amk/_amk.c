/* amk._amk: the CPython extension behind the Python package. It calls libamk's public API
 * (amk_*.h) only and speaks plain Python values (str, int, float, dict, list); every
 * Python-level convenience (spaces built in Python, pandas, tune_kernel) is in the .py files.
 * A failing call raises amk._amk.Error(message, code, exit_code, step); __init__.py turns it
 * into the exception class of its exit-code category. amk.torch's launcher is _launch.c. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_launch.h"
#include "amk_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static PyObject *amk_error; /* amk._amk.Error */

PyObject *amk__py_raise(const char *msg, int code, int exit_code, const char *step)
{
    PyObject *args = Py_BuildValue("(siis)", msg, code, exit_code, step ? step : "");
    if (args) {
        PyErr_SetObject(amk_error, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* Raises Error from a diagnostic: (message, code, exit_code, step). exit_code -1 = by code. */
static PyObject *raise_diag(int code, const amk_diag *d, int exit_code, const char *step)
{
    const char *msg = d && d->msg[0] ? d->msg : amk_strerror(code);
    if (exit_code < 0)
        exit_code = amk_err_exit_code(code);
    return amk__py_raise(msg, code, exit_code, step);
}

static PyObject *num_or_none(double v)
{
    if (isnan(v) || isinf(v))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(v);
}

/* Sets key of dict to v and drops the reference; returns -1 on failure (v NULL too). */
static int put(PyObject *dict, const char *key, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(dict, key, v);
    Py_DECREF(v);
    return rc;
}

/* A list of str from a Python sequence (None = empty) into a malloc'd array of borrowed
 * UTF-8 pointers (valid while seq lives). */
static int str_list(PyObject *seq, const char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!seq || seq == Py_None)
        return 0;
    PyObject *fast = PySequence_Fast(seq, "expected a list of str");
    if (!fast)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    const char **v = calloc((size_t)len + 1, sizeof *v);
    if (!v) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!v[i]) {
            free(v);
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast); /* items stay alive through seq (a list or tuple) */
    *out = v;
    *n = (int)len;
    return 0;
}

/* ---------- kernels: the registry, the spec, its space ------------------------------------ */

typedef struct kernel_obj {
    PyObject_HEAD
    amk_registry *reg;
    const amk_spec *spec; /* borrowed from reg */
    amk_target target;    /* with measured ceilings, as the CLI resolves it */
    int target_named;     /* target=, or $AMK_TARGET (amk_target_named): the backend's */
} kernel_obj;

static void kernel_dealloc(kernel_obj *k)
{
    amk_registry_free(k->reg);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

/* Kernel(name, spec_dirs=None, target=None): a kernel of the registry (the built-ins plus
 * spec_dirs, as --spec-dir), on a target (None: $AMK_TARGET or the default). */
static int kernel_init(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "spec_dirs", "target", NULL};
    const char *name, *target = NULL;
    PyObject *dirs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|Oz", kwlist, &name, &dirs, &target))
        return -1;
    const char **dv;
    int nd;
    if (str_list(dirs, &dv, &nd))
        return -1;
    amk_diag d = {0};
    amk_registry_free(k->reg);
    k->reg = NULL;
    int e = amk_registry_open(dv, nd, &k->reg, &d);
    free(dv);
    const amk_target *t = NULL;
    if (!e)
        e = amk_registry_lookup(k->reg, name, &k->spec, &d);
    if (!e)
        e = amk_target_resolve(target, &t, &d);
    if (e) {
        raise_diag(e, &d, -1, "kernel");
        return -1;
    }
    amk_target_with_ceilings(t, &k->target);
    k->target_named = amk_target_named(target) != NULL;
    return 0;
}

static int kernel_shape(kernel_obj *k, const char *text, amk_shape *sh)
{
    if (!text || !*text) {
        amk_spec_shape(k->spec, 0, sh);
        return 0;
    }
    amk_diag d = {0};
    int e = amk_shape_parse(k->spec, text, sh, &d);
    if (e) {
        amk_diag_prefix(&d, "shape '%s' for kernel %s", text, amk_spec_name(k->spec));
        raise_diag(e, &d, -1, "shape");
        return -1;
    }
    return 0;
}

static PyObject *params_dict(const amk_config *c)
{
    const amk_spec *s = c->spec;
    PyObject *p = PyDict_New();
    for (int i = 0; p && i < amk_spec_n_params(s); i++) {
        const char *label = amk_spec_param_label(s, i, c->choice[i]);
        PyObject *v = label ? PyUnicode_FromString(label)
                            : PyLong_FromLongLong((long long)amk_config_param(c, i));
        if (put(p, amk_spec_param_name(s, i), v)) {
            Py_DECREF(p);
            return NULL;
        }
    }
    return p;
}

/* info(): name, description, dir, params {name: [values]}, defaults, docs, restrictions,
 * derived, dims, dtypes, shapes {name: text}, raw_size, target. */
static PyObject *kernel_info(kernel_obj *k, PyObject *unused)
{
    (void)unused;
    const amk_spec *s = k->spec;
    PyObject *o = PyDict_New(), *params = PyDict_New(), *defs = PyDict_New(),
             *rs = PyList_New(0), *der = PyDict_New(), *dims = PyList_New(0),
             *dts = PyList_New(0), *shapes = PyDict_New();
    if (!o || !params || !defs || !rs || !der || !dims || !dts || !shapes)
        goto fail;
    for (int i = 0; i < amk_spec_n_params(s); i++) {
        PyObject *vals = PyList_New(0);
        if (!vals)
            goto fail;
        for (int c = 0; c < amk_spec_param_n_choices(s, i); c++) {
            const char *label = amk_spec_param_label(s, i, c);
            PyObject *v = label ? PyUnicode_FromString(label)
                                : PyLong_FromLongLong((long long)amk_spec_param_value(s, i, c));
            if (!v || PyList_Append(vals, v)) {
                Py_XDECREF(v);
                Py_DECREF(vals);
                goto fail;
            }
            Py_DECREF(v);
        }
        int dc = amk_spec_param_default(s, i);
        PyObject *dv = PyList_GetItem(vals, dc);
        Py_XINCREF(dv);
        if (put(params, amk_spec_param_name(s, i), vals) ||
            put(defs, amk_spec_param_name(s, i), dv))
            goto fail;
    }
    for (int i = 0; i < amk_spec_n_restrictions(s); i++) {
        amk_spec_named_expr ne;
        if (amk_spec_restriction(s, i, &ne) == AMK_OK) {
            PyObject *t = PyUnicode_FromString(amk_expr_source(ne.expr));
            if (!t || PyList_Append(rs, t)) {
                Py_XDECREF(t);
                goto fail;
            }
            Py_DECREF(t);
        }
    }
    for (int i = 0; i < amk_spec_n_derived(s); i++) {
        amk_spec_named_expr ne;
        if (amk_spec_derived(s, i, &ne) == AMK_OK &&
            put(der, ne.name, PyUnicode_FromString(amk_expr_source(ne.expr))))
            goto fail;
    }
    for (int i = 0; i < amk_spec_n_dims(s); i++) {
        PyObject *t = PyUnicode_FromString(amk_spec_dim_name(s, i));
        if (!t || PyList_Append(dims, t)) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    for (int i = 0; i < amk_spec_n_dtypes(s); i++) {
        PyObject *t = PyUnicode_FromString(amk_spec_dtype_name(s, i));
        if (!t || PyList_Append(dts, t)) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    for (int i = 0; i < amk_spec_n_shapes(s); i++) {
        amk_shape sh;
        char txt[256];
        amk_spec_shape(s, i, &sh);
        amk_shape_format(s, &sh, txt, sizeof txt);
        if (put(shapes, amk_spec_shape_name(s, i), PyUnicode_FromString(txt)))
            goto fail;
    }
    if (put(o, "name", PyUnicode_FromString(amk_spec_name(s))) ||
        put(o, "description", PyUnicode_FromString(amk_spec_description(s))) ||
        put(o, "dir", PyUnicode_FromString(amk_spec_dir(s))) ||
        put(o, "raw_size", PyFloat_FromDouble(amk_spec_raw_size(s))) ||
        put(o, "target", PyUnicode_FromString(k->target.key)) || put(o, "params", params) ||
        put(o, "defaults", defs) || put(o, "restrictions", rs) || put(o, "derived", der) ||
        put(o, "dims", dims) || put(o, "dtypes", dts) || put(o, "shapes", shapes)) {
        params = defs = rs = der = dims = dts = shapes = NULL; /* put dropped them */
        goto fail;
    }
    return o;
fail:
    Py_XDECREF(o);
    Py_XDECREF(params);
    Py_XDECREF(defs);
    Py_XDECREF(rs);
    Py_XDECREF(der);
    Py_XDECREF(dims);
    Py_XDECREF(dts);
    Py_XDECREF(shapes);
    return NULL;
}

static int make_space(kernel_obj *k, const char *shape, amk_space **sp)
{
    amk_shape sh;
    if (kernel_shape(k, shape, &sh))
        return -1;
    amk_diag d = {0};
    int e = amk_space_create(k->spec, &sh, &k->target.limits, sp, &d);
    if (e) {
        raise_diag(e, &d, -1, "space");
        return -1;
    }
    return 0;
}

/* size(shape=None, exact=True): {"shape", "raw", "valid", "feasible", "exact"} as `amk space`. */
static PyObject *kernel_size(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "exact", NULL};
    const char *shape = NULL;
    int exact = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zp", kwlist, &shape, &exact))
        return NULL;
    amk_space *sp = NULL;
    if (make_space(k, shape, &sp))
        return NULL;
    amk_space_counts n;
    amk_diag d = {0};
    int e;
    Py_BEGIN_ALLOW_THREADS
    e = amk_space_size_on(sp, &k->target, exact, &n, &d);
    Py_END_ALLOW_THREADS
    char txt[256];
    amk_shape_format(k->spec, amk_space_shape(sp), txt, sizeof txt);
    amk_space_free(sp);
    if (e)
        return raise_diag(e, &d, -1, "space");
    return Py_BuildValue("{s:s,s:d,s:d,s:d,s:O}", "shape", txt, "raw", n.raw, "valid", n.valid,
                         "feasible", n.feasible, "exact", n.exact ? Py_True : Py_False);
}

typedef struct enum_walk {
    PyObject *list;
    Py_ssize_t limit;
    int failed;
} enum_walk;

static int enum_one(const amk_config *c, void *ud)
{
    enum_walk *w = ud;
    char id[17];
    amk_config_id(c, id);
    PyObject *p = params_dict(c);
    PyObject *t = p ? Py_BuildValue("(sN)", id, p) : NULL;
    if (!t || PyList_Append(w->list, t)) {
        Py_XDECREF(t);
        w->failed = 1;
        return 1;
    }
    Py_DECREF(t);
    return w->limit > 0 && PyList_GET_SIZE(w->list) >= w->limit;
}

/* configs(shape=None, limit=0): [(config_id, {param: value}), ...] of the valid configs
 * (restrictions; not the cost model's feasibility), in amk's odometer order. */
static PyObject *kernel_configs(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "limit", NULL};
    const char *shape = NULL;
    Py_ssize_t limit = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zn", kwlist, &shape, &limit))
        return NULL;
    amk_space *sp = NULL;
    if (make_space(k, shape, &sp))
        return NULL;
    enum_walk w = {PyList_New(0), limit, 0};
    int e = w.list ? amk_space_enumerate(sp, enum_one, &w) : AMK_ENOMEM;
    amk_space_free(sp);
    if (w.failed || !w.list) {
        Py_XDECREF(w.list);
        return NULL;
    }
    if (e) {
        Py_DECREF(w.list);
        amk_diag d = {0};
        return raise_diag(e, &d, -1, "space");
    }
    return w.list;
}

/* A config of this kernel from {param: value} (every param given) at shape. */
static int config_from(kernel_obj *k, PyObject *params, const char *shape, amk_config *c)
{
    amk_shape sh;
    if (kernel_shape(k, shape, &sh))
        return -1;
    PyObject *json = PyImport_ImportModule("json");
    PyObject *text = json ? PyObject_CallMethod(json, "dumps", "O", params) : NULL;
    Py_XDECREF(json);
    const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!t) {
        Py_XDECREF(text);
        return -1;
    }
    amk_diag d = {0};
    int e = amk_config_from_params_json(k->spec, &sh, t, c, &d);
    Py_DECREF(text);
    if (e) {
        raise_diag(e, &d, -1, "config");
        return -1;
    }
    return 0;
}

/* check(params, shape=None): (config_id, None) when valid, else (config_id, reason);
 * raises for a param that is unknown or not among its values. */
static PyObject *kernel_check(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"params", "shape", NULL};
    PyObject *params;
    const char *shape = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|z", kwlist, &params, &shape))
        return NULL;
    amk_config c;
    if (config_from(k, params, shape, &c))
        return NULL;
    char id[17];
    amk_config_id(&c, id);
    amk_diag d = {0};
    if (amk_config_check(&c, &k->target.limits, &d) == AMK_OK &&
        amk_cost_feasible(&c, &k->target, &d) == AMK_OK)
        return Py_BuildValue("(sO)", id, Py_None);
    return Py_BuildValue("(ss)", id, d.msg);
}

/* config_json(params, shape=None): the canonical config JSON text (amk evaluate's input). */
static PyObject *kernel_config_json(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"params", "shape", NULL};
    PyObject *params;
    const char *shape = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|z", kwlist, &params, &shape))
        return NULL;
    amk_config c;
    if (config_from(k, params, shape, &c))
        return NULL;
    char *t = amk_config_canonical(&c);
    if (!t)
        return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(t);
    free(t);
    return r;
}

/* ---------- the search: tune (amk loop) and propose ---------------------------------------- */

typedef struct tune_ctx {
    PyObject *progress, *note, *groups;
    PyObject *verify; /* verify(config_id, prefix) -> (ok, why), or NULL */
    const amk_spec *spec;
    int failed; /* a Python callback raised: the error is kept and re-raised at the end */
    PyObject *exc_type, *exc, *exc_tb;
} tune_ctx;

/* Python 3.8+: PyErr_Fetch (PyErr_GetRaisedException is 3.12's). */
static void keep_exc(tune_ctx *t)
{
    if (!t->failed)
        PyErr_Fetch(&t->exc_type, &t->exc, &t->exc_tb);
    else
        PyErr_Clear();
    t->failed = 1;
}

static PyObject *incumbent_dict(const amk_incumbent *b)
{
    if (!b->has)
        Py_RETURN_NONE;
    char id[17];
    amk_config_id(&b->config, id);
    char sh[256];
    amk_shape_format(b->config.spec, &b->config.shape, sh, sizeof sh);
    return Py_BuildValue("{s:s,s:s,s:N,s:N,s:s,s:N,s:L,s:N,s:N}", "config_id", id, "shape", sh,
                         "params", params_dict(&b->config), "latency_us",
                         num_or_none(b->latency_us), "latency_kind",
                         amk_latency_kind_name(b->kind), "spread", num_or_none(b->spread),
                         "trial", (long long)b->trial, "energy_uj", num_or_none(b->energy_uj),
                         "energy_ticks",
                         num_or_none(b->energy_ticks > 0 ? b->energy_ticks : NAN));
}

static void on_progress(const amk_loop_progress *p, void *ud)
{
    tune_ctx *t = ud;
    if (!t->progress)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!t->failed) {
        const amk_verdict *v = p->last;
        PyObject *r = PyObject_CallFunction(
            t->progress, "LLddsNN", (long long)p->trial, (long long)p->budget, p->elapsed_s,
            p->time_limit_s, v ? amk_status_name(v->status) : "",
            v ? num_or_none(v->latency_us) : (Py_INCREF(Py_None), Py_None),
            p->best && p->best->has ? num_or_none(p->best->latency_us)
                                    : (Py_INCREF(Py_None), Py_None));
        if (!r)
            keep_exc(t);
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
}

static void on_note(const char *msg, int warning, void *ud)
{
    tune_ctx *t = ud;
    if (!t->note)
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!t->failed) {
        PyObject *r = PyObject_CallFunction(t->note, "si", msg, warning);
        if (!r)
            keep_exc(t);
        Py_XDECREF(r);
    }
    PyGILState_Release(g);
}

/* The judge of the outputs checked outside amk (amk_tune_opts.verify): the Python callable
 * verify(config_id, prefix) -> (ok, why), where prefix + buffer name is the file of each
 * output: ok true 1 (correct), false 0 (wrong), None -1 (could not judge: run_error); -1
 * also when the callable raised (kept, raised after the search) or returned no such pair. */
static int on_verify(const amk_config *c, const char *prefix, char *why, size_t cap, void *ud)
{
    tune_ctx *t = ud;
    char id[17];
    int r = -1;
    amk_config_id(c, id);
    snprintf(why, cap, "the verify callback failed");
    PyGILState_STATE g = PyGILState_Ensure();
    if (!t->failed) {
        PyObject *res = PyObject_CallFunction(t->verify, "ss", id, prefix);
        PyObject *ok = NULL, *text = NULL;
        if (res && PyArg_ParseTuple(res, "OU", &ok, &text)) {
            const char *w = PyUnicode_AsUTF8(text);
            int b = ok == Py_None ? -1 : PyObject_IsTrue(ok);
            if (w && !PyErr_Occurred()) {
                snprintf(why, cap, "%s", w);
                r = b;
            }
        }
        if (PyErr_Occurred())
            keep_exc(t);
        Py_XDECREF(res);
    }
    PyGILState_Release(g);
    return r;
}

/* One search's summary, as `amk loop` prints it. */
static void on_done(const amk_tune_result *r, const amk_device_group *g, void *ud)
{
    tune_ctx *t = ud;
    PyGILState_STATE gs = PyGILState_Ensure();
    const amk_vs_default *vd = &r->vs_default;
    PyObject *devs = PyList_New(0);
    for (int i = 0; devs && i < g->n; i++) {
        PyObject *x = PyLong_FromLong(g->idx[i]);
        if (!x || PyList_Append(devs, x))
            Py_CLEAR(devs);
        Py_XDECREF(x);
    }
    PyObject *s = devs ? Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:s,s:N,s:i,s:L,s:L,s:L,s:O,s:d,s:N,s:N,s:{s:s,s:N,s:N,s:s,s:s},"
        "s:s}",
        "kernel", amk_spec_name(t->spec), "shape", r->shape, "backend", r->backend,
        "device", r->device, "target", r->target ? r->target->key : "", "devices", devs,
        "parallelism", r->parallelism, "trials", (long long)r->loop.trials, "first_trial",
        (long long)r->loop.first_trial, "last_trial", (long long)r->loop.last_trial,
        "exhausted", r->loop.exhausted ? Py_True : Py_False, "elapsed_s", r->loop.elapsed_s,
        "setup_s", num_or_none(r->loop.setup_s), "best", incumbent_dict(&r->loop.best),
        "vs_default", "config_id", vd->config_id,
        "default_latency_us", num_or_none(vd->default_us), "speedup",
        num_or_none(vd->speedup), "reason", isfinite(vd->speedup) ? "" : vd->reason, "beside",
        vd->beside,
        "best_file", r->loop.best.has && amk_fs_exists(r->best_file) ? r->best_file : "")
        : NULL;
    if (!s || PyList_Append(t->groups, s))
        keep_exc(t);
    Py_XDECREF(s);
    PyGILState_Release(gs);
}

/* The exit code of a failed search by its step, as `amk loop` gives it. */
static int tune_exit(int e, amk_tune_stage st)
{
    switch (st) {
    case AMK_TUNE_ON_DEVICES: return e == AMK_ENOMEM ? 5 : 2;
    case AMK_TUNE_ON_MPI: return 5;
    case AMK_TUNE_ON_RANKS: return e == AMK_ENOMEM ? 5 : 4;
    case AMK_TUNE_ON_BACKEND:
        return e == AMK_ENOMEM ? 5
               : (e == AMK_ENODEV || e == AMK_EUNSUPPORTED || e == AMK_EBACKEND ||
                  e == AMK_EWORKER)
                   ? 4
                   : amk_err_exit_code(e);
    case AMK_TUNE_ON_RESULTS: return e == AMK_ENOMEM ? 5 : 3;
    case AMK_TUNE_ON_RUN:
        return e == AMK_EBACKEND || e == AMK_EWORKER ? 5 : amk_err_exit_code(e);
    default: return amk_err_exit_code(e);
    }
}

static const char *tune_step(amk_tune_stage st)
{
    static const char *const names[] = {"setup", "results", "run",     "devices",
                                        "mpi",   "ranks",   "backend", "done"};
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "?";
}

/* --objective TEXT for backend: time, energy or edp, or (sim:FILE only) a Kernel Tuner field,
 * as `amk loop` and `amk evaluate` check it. 0, or -1 with the usage error raised. */
static int check_objective(const char *objective, const char *backend)
{
    amk_objective o;
    if (!objective || amk_objective_parse(objective, &o) == AMK_OK ||
        amk_backend_sim_file(backend))
        return 0;
    amk_diag d = {0};
    amk_diag_set(&d, AMK_EINVAL, "objective '%s': not time, energy or edp; another name chooses "
                 "the field a Kernel Tuner file replays, and needs backend sim:FILE", objective);
    raise_diag(AMK_EINVAL, &d, 1, "usage");
    return -1;
}

/* tune(shape, backend, strategy, seed, budget, time_limit_s, batch, min_gain, results, best,
 * resume, jobs, devices, exclude, progress, note, regime, objective, verify, outputs): all of
 * `amk loop` (amk_tune_groups), and the judge of outputs checked outside amk (on_verify;
 * outputs: the folder the run workers write them to); the list of the searches' summaries
 * (one per device model). */
static PyObject *kernel_tune(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape",  "backend", "strategy", "seed",    "budget",
                             "time_limit_s", "batch", "min_gain", "results", "best",
                             "resume", "jobs",    "devices",  "exclude", "progress",
                             "note",   "regime",  "objective", "verify", "outputs", NULL};
    const char *shape = NULL, *backend = "auto", *strategy = amk_strategies[0]->name,
               *results = "results.tsv", *best = NULL, *regime = NULL, *objective = NULL,
               *outputs = NULL;
    unsigned long long seed = 1;
    long long budget = 100;
    double time_limit = 0, min_gain = 0.01;
    int batch = 0, resume = 0, jobs = 0;
    PyObject *devices = NULL, *exclude = NULL, *progress = NULL, *note = NULL, *verify = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zssKLdidszpiOOOOzzOz", kwlist, &shape,
                                     &backend, &strategy, &seed, &budget, &time_limit, &batch,
                                     &min_gain, &results, &best, &resume, &jobs, &devices,
                                     &exclude, &progress, &note, &regime, &objective, &verify,
                                     &outputs))
        return NULL;
    if (verify == Py_None)
        verify = NULL;
    if (verify && (!PyCallable_Check(verify) || !outputs)) {
        PyErr_SetString(PyExc_TypeError, "tune: verify must be callable, with outputs");
        return NULL;
    }
    if (check_objective(objective, backend))
        return NULL;
    amk_diag d = {0};
    if (amk_regime_check_name(regime, &d))
        return raise_diag(AMK_EINVAL, &d, 1, "usage");
    if (!amk_strategy_find(strategy)) {
        amk_diag_set(&d, AMK_EINVAL, "unknown strategy '%s'", strategy);
        return raise_diag(AMK_EINVAL, &d, 1, "usage");
    }
    int e = amk_backend_check_name(backend, &d);
    if (e)
        return raise_diag(e, &d, 1, "usage");
    amk_shape sh;
    if (kernel_shape(k, shape, &sh))
        return NULL;
    int devs[AMK_MAX_DEVICES], ndev = 0;
    if (devices && devices != Py_None) {
        PyObject *fast = PySequence_Fast(devices, "devices: expected a list of int");
        if (!fast)
            return NULL;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && ndev < AMK_MAX_DEVICES; i++)
            devs[ndev++] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        Py_DECREF(fast);
        if (PyErr_Occurred())
            return NULL;
    }
    const char **ex = NULL;
    int nex = 0;
    char (*ids)[17] = NULL;
    if (str_list(exclude, &ex, &nex))
        return NULL;
    if (nex) {
        ids = calloc((size_t)nex, sizeof *ids);
        if (!ids) {
            free(ex);
            return PyErr_NoMemory();
        }
        for (int i = 0; i < nex; i++)
            snprintf(ids[i], sizeof ids[i], "%s", ex[i]);
    }
    free(ex);
    tune_ctx t = {progress != Py_None ? progress : NULL, note != Py_None ? note : NULL,
                  PyList_New(0), verify, k->spec, 0, NULL, NULL, NULL};
    if (!t.groups) {
        free(ids);
        return NULL;
    }
    amk_tune_opts o = {.spec = k->spec, .shape = sh, .target = &k->target,
                       .target_named = k->target_named, .backend = backend,
                       .strategy = strategy, .seed = seed, .budget = budget,
                       .time_limit_s = time_limit, .batch = batch, .min_gain = min_gain,
                       .results_path = results, .best_path = best, .resume = resume,
                       .progress = on_progress, .note = on_note, .ud = &t, .jobs = jobs,
                       .devices = ndev ? devs : NULL, .ndevices = ndev, .done = on_done,
                       .regime = regime, .objective = objective,
                       .exclude = (const char (*)[17])ids, .n_exclude = (size_t)nex,
                       .outputs_dir = outputs, .verify = verify ? on_verify : NULL,
                       .verify_ud = &t};
    amk_tune_result r;
    Py_BEGIN_ALLOW_THREADS
    e = amk_tune_groups(&o, &r, &d);
    Py_END_ALLOW_THREADS
    free(ids);
    if (t.failed) {
        Py_DECREF(t.groups);
        PyErr_Restore(t.exc_type, t.exc, t.exc_tb);
        return NULL;
    }
    if (e) {
        Py_DECREF(t.groups);
        return raise_diag(e, &d, tune_exit(e, r.failed_on), tune_step(r.failed_on));
    }
    return t.groups;
}

/* propose(shape=None, strategy="evolve", seed=1, results=None, objective=None): amk
 * propose's answer. */
static PyObject *kernel_propose(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"shape", "strategy", "seed", "results", "objective", NULL};
    const char *shape = NULL, *strategy = amk_strategies[0]->name, *results = NULL,
               *objective = NULL;
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zsKzz", kwlist, &shape, &strategy, &seed,
                                     &results, &objective))
        return NULL;
    amk_diag d = {0};
    amk_objective obj = AMK_OBJ_TIME;
    if (objective && amk_objective_parse(objective, &obj) != AMK_OK) {
        amk_diag_set(&d, AMK_EINVAL, "objective '%s': not time, energy or edp", objective);
        return raise_diag(AMK_EINVAL, &d, 1, "usage");
    }
    const amk_strategy_type *st = amk_strategy_find(strategy);
    if (!st) {
        amk_diag_set(&d, AMK_EINVAL, "unknown strategy '%s'", strategy);
        return raise_diag(AMK_EINVAL, &d, 1, "usage");
    }
    amk_shape sh;
    if (kernel_shape(k, shape, &sh))
        return NULL;
    amk_propose_opts po = {k->spec, sh, &k->target, st, seed, results, obj};
    amk_proposal_result p;
    int e;
    Py_BEGIN_ALLOW_THREADS
    e = amk_propose(&po, &p, &d);
    Py_END_ALLOW_THREADS
    if (e)
        return raise_diag(e, &d, p.failed_on == AMK_PROPOSE_ON_RESULTS ? 3 : -1,
                          p.failed_on == AMK_PROPOSE_ON_RESULTS ? "results" : "setup");
    char *cfg = amk_config_canonical(&p.config);
    char id[17], txt[256];
    amk_config_id(&p.config, id);
    amk_shape_format(k->spec, &p.config.shape, txt, sizeof txt);
    PyObject *inc = Py_None;
    Py_INCREF(inc);
    if (p.has_incumbent) {
        Py_DECREF(inc);
        inc = Py_BuildValue("{s:s,s:N,s:s,s:L}", "config_id", p.incumbent.config_id,
                            "latency_us", num_or_none(p.incumbent.latency_us), "latency_kind",
                            amk_latency_kind_name(p.incumbent.latency_kind), "trial",
                            (long long)p.incumbent.trial);
    }
    PyObject *o = cfg && inc ? Py_BuildValue(
        "{s:s,s:s,s:s,s:N,s:s,s:O,s:n,s:n,s:N}", "config", cfg, "config_id", id, "shape", txt,
        "params", params_dict(&p.config), "source", p.source, "exhausted",
        p.exhausted ? Py_True : Py_False, "history_rows", (Py_ssize_t)p.history_rows,
        "skipped", (Py_ssize_t)p.skipped, "incumbent", inc) : NULL;
    free(cfg);
    if (!o && !PyErr_Occurred())
        PyErr_NoMemory();
    return o;
}

/* plan(params, shape=None, arch=None): what a launch of the config needs, for amk.torch:
 * {"source": {text, options, entry, arch}, "launch": {grid, block, shared_bytes, cluster},
 *  "buffers": [{name, dtype, role, count, bytes}], "tensor_maps": [{name, buffer, dtype, dims,
 *  strides, box, swizzle, l2_promotion}], "args": [{name, kind: buffer|tensor_map|value,
 *  value}]} (values: 32-bit ints, as the gpu backend passes them; kind scalar: a "scalars"
 *  entry, with its dtype and value). Buffers also say how they are filled (init, value, data,
 *  answer) and where they live (memory, symbol). */
static PyObject *kernel_plan(kernel_obj *k, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"params", "shape", "arch", NULL};
    PyObject *params;
    const char *shape = NULL, *arch = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zz", kwlist, &params, &shape, &arch))
        return NULL;
    amk_config c;
    if (config_from(k, params, shape, &c))
        return NULL;
    const amk_spec *s = k->spec;
    const amk_limits *lim = &k->target.limits;
    amk_diag d = {0};
    int e = amk_config_check(&c, lim, &d);
    if (e)
        return raise_diag(e, &d, -1, "config");
    amk_launch l;
    if ((e = amk_config_launch(&c, lim, &l, &d)))
        return raise_diag(e, &d, -1, "launch");
    amk_compile_source src;
    if ((e = amk_compile_source_get(&c, arch ? arch : k->target.arch, &src, &d)))
        return raise_diag(e, &d, -1, "source");
    const char *dt = amk_spec_dtype_name(s, c.shape.dtype);
    PyObject *o = NULL, *opts = PyList_New(0), *bufs = PyList_New(0), *maps = PyList_New(0),
             *al = PyList_New(0);
    if (!opts || !bufs || !maps || !al)
        goto done;
    for (int i = 0; i < src.n_options; i++) {
        PyObject *t = PyUnicode_FromString(src.options[i]);
        if (!t || PyList_Append(opts, t)) {
            Py_XDECREF(t);
            goto done;
        }
        Py_DECREF(t);
    }
    for (int i = 0; i < amk_spec_n_buffers(s); i++) {
        amk_spec_buffer b;
        int64_t n = 0;
        if (amk_spec_buffer_at(s, i, &b) || (e = amk_config_eval_expr(&c, lim, b.count, &n, &d)))
            goto fail_diag;
        static const char *const roles[] = {"in", "out", "inout", "scratch"};
        const char *bdt = strcmp(b.dtype, "input") ? b.dtype : dt;
        PyObject *x = Py_BuildValue(
            "{s:s,s:s,s:s,s:L,s:L,s:s,s:d,s:z,s:z,s:s,s:z}", "name", b.name, "dtype", bdt,
            "role", roles[b.role], "count", (long long)n, "bytes",
            (long long)n * amk_dtype_size(bdt), "init", b.init ? b.init : "uniform", "value",
            b.value, "data", b.data, "answer", b.answer, "memory",
            b.constant_memory ? "constant" : "global", "symbol", b.symbol);
        if (!x || PyList_Append(bufs, x)) {
            Py_XDECREF(x);
            goto done;
        }
        Py_DECREF(x);
    }
    for (int i = 0; i < amk_spec_n_tensor_maps(s); i++) {
        amk_tensor_map t;
        if ((e = amk_config_tensor_map(&c, lim, i, &t, &d)))
            goto fail_diag;
        PyObject *dims = PyList_New(0), *st = PyList_New(0), *box = PyList_New(0);
        for (int r = 0; dims && st && box && r < t.rank; r++) {
            PyObject *a = PyLong_FromLongLong((long long)t.dims[r]);
            PyObject *b2 = PyLong_FromLongLong((long long)t.box[r]);
            PyObject *c2 = r + 1 < t.rank ? PyLong_FromLongLong((long long)t.strides[r]) : NULL;
            if (!a || !b2 || PyList_Append(dims, a) || PyList_Append(box, b2) ||
                (r + 1 < t.rank && (!c2 || PyList_Append(st, c2))))
                Py_CLEAR(dims);
            Py_XDECREF(a);
            Py_XDECREF(b2);
            Py_XDECREF(c2);
        }
        PyObject *x = dims && st && box
                          ? Py_BuildValue("{s:s,s:s,s:s,s:O,s:O,s:O,s:i,s:i}", "name", t.name,
                                          "buffer", t.buffer, "dtype", t.dtype, "dims", dims,
                                          "strides", st, "box", box, "swizzle", t.swizzle,
                                          "l2_promotion", t.l2_promotion)
                          : NULL;
        Py_XDECREF(dims);
        Py_XDECREF(st);
        Py_XDECREF(box);
        if (!x || PyList_Append(maps, x)) {
            Py_XDECREF(x);
            goto done;
        }
        Py_DECREF(x);
    }
    for (int i = 0; i < amk_spec_n_args(s); i++) {
        const char *name = amk_spec_arg(s, i);
        const char *kind = "value";
        int64_t v = 0;
        for (int b = 0; b < amk_spec_n_buffers(s); b++) {
            amk_spec_buffer sb;
            if (!amk_spec_buffer_at(s, b, &sb) && !strcmp(sb.name, name))
                kind = "buffer";
        }
        for (int m = 0; m < amk_spec_n_tensor_maps(s); m++)
            if (!strcmp(amk_spec_tensor_map_name(s, m), name))
                kind = "tensor_map";
        amk_spec_scalar sc = {0};
        for (int j = 0; j < amk_spec_n_scalars(s); j++)
            if (!amk_spec_scalar_at(s, j, &sc) && !strcmp(sc.name, name)) {
                kind = "scalar";
                break;
            }
        if (!strcmp(kind, "value") && (e = amk_config_eval(&c, lim, name, &v, &d)))
            goto fail_diag;
        PyObject *x;
        if (!strcmp(kind, "scalar") && sc.dtype[0] == 'f')
            x = Py_BuildValue("{s:s,s:s,s:s,s:d}", "name", name, "kind", kind, "dtype",
                              sc.dtype, "value", sc.value);
        else if (!strcmp(kind, "scalar"))
            x = Py_BuildValue("{s:s,s:s,s:s,s:N}", "name", name, "kind", kind, "dtype",
                              sc.dtype, "value",
                              !strcmp(sc.dtype, "u64")
                                  ? PyLong_FromUnsignedLongLong((unsigned long long)sc.ivalue)
                                  : PyLong_FromLongLong((long long)sc.ivalue));
        else
            x = Py_BuildValue("{s:s,s:s,s:L}", "name", name, "kind", kind, "value",
                              (long long)v);
        if (!x || PyList_Append(al, x)) {
            Py_XDECREF(x);
            goto done;
        }
        Py_DECREF(x);
    }
    o = Py_BuildValue(
        "{s:{s:s,s:O,s:s,s:s},s:{s:(LLL),s:(LLL),s:L,s:(LLL)},s:O,s:O,s:O,s:s}", "source",
        "text", src.text, "options", opts, "entry", src.entry, "arch", src.arch, "launch",
        "grid", (long long)l.grid[0], (long long)l.grid[1], (long long)l.grid[2], "block",
        (long long)l.block[0], (long long)l.block[1], (long long)l.block[2], "shared_bytes",
        (long long)l.shared_bytes, "cluster", (long long)l.cluster[0], (long long)l.cluster[1],
        (long long)l.cluster[2], "buffers", bufs, "tensor_maps", maps, "args", al, "dtype", dt);
    goto done;
fail_diag:
    raise_diag(e ? e : AMK_ESPEC, &d, -1, "plan");
done:
    amk_compile_source_clear(&src);
    Py_XDECREF(opts);
    Py_XDECREF(bufs);
    Py_XDECREF(maps);
    Py_XDECREF(al);
    return o;
}

static PyMethodDef kernel_methods[] = {
    {"plan", (PyCFunction)(void (*)(void))kernel_plan, METH_VARARGS | METH_KEYWORDS,
     "what a launch of a config needs"},
    {"info", (PyCFunction)kernel_info, METH_NOARGS, "the spec as a dict"},
    {"size", (PyCFunction)(void (*)(void))kernel_size, METH_VARARGS | METH_KEYWORDS,
     "raw, valid and feasible counts at a shape"},
    {"configs", (PyCFunction)(void (*)(void))kernel_configs, METH_VARARGS | METH_KEYWORDS,
     "[(config_id, params)] of the valid configs"},
    {"check", (PyCFunction)(void (*)(void))kernel_check, METH_VARARGS | METH_KEYWORDS,
     "(config_id, reason or None)"},
    {"config_json", (PyCFunction)(void (*)(void))kernel_config_json,
     METH_VARARGS | METH_KEYWORDS, "canonical config JSON text"},
    {"tune", (PyCFunction)(void (*)(void))kernel_tune, METH_VARARGS | METH_KEYWORDS,
     "amk loop"},
    {"propose", (PyCFunction)(void (*)(void))kernel_propose, METH_VARARGS | METH_KEYWORDS,
     "amk propose"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject kernel_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "amk._amk.Kernel",
    .tp_basicsize = sizeof(kernel_obj),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Kernel(name, spec_dirs=None, target=None): a kernel of amk's registry",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)kernel_init,
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_methods = kernel_methods,
};

/* ---------- module functions --------------------------------------------------------------- */

/* evaluate(config_json, spec_dirs=None, backend="auto", target=None, results=None,
 * devices=None): amk evaluate; the verdict's JSON text and the row's trial (0: not logged). */
static PyObject *mod_evaluate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"config", "spec_dirs", "backend", "target", "results", "devices",
                             "regime", "objective", NULL};
    const char *text, *backend = "model", *target = NULL, *results = NULL, *regime = NULL;
    const char *objective = NULL;
    PyObject *dirs = NULL, *devices = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OszzOzz", kwlist, &text, &dirs, &backend,
                                     &target, &results, &devices, &regime, &objective))
        return NULL;
    if (check_objective(objective, backend))
        return NULL;
    amk_diag d = {0};
    if (amk_regime_check_name(regime, &d))
        return raise_diag(AMK_EINVAL, &d, 1, "usage");
    int e = amk_backend_check_name(backend, &d);
    if (e)
        return raise_diag(e, &d, 1, "usage");
    int devs[AMK_MAX_DEVICES], ndev = 0;
    if (devices && devices != Py_None) {
        PyObject *fast = PySequence_Fast(devices, "devices: expected a list of int");
        if (!fast)
            return NULL;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && ndev < AMK_MAX_DEVICES; i++)
            devs[ndev++] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        Py_DECREF(fast);
        if (PyErr_Occurred())
            return NULL;
    }
    const char **dv;
    int nd;
    if (str_list(dirs, &dv, &nd))
        return NULL;
    amk_registry *reg = NULL;
    e = amk_registry_open(dv, nd, &reg, &d);
    free(dv);
    if (e)
        return raise_diag(e, &d, -1, "kernel");
    amk_config cfg;
    const amk_target *t = NULL;
    amk_target tc;
    e = amk_config_parse(reg, text, &cfg, &d);
    if (!e)
        e = amk_target_resolve(target, &t, &d);
    if (e) {
        amk_registry_free(reg);
        return raise_diag(e, &d, -1, "config");
    }
    amk_target_with_ceilings(t, &tc);
    amk_backend_opts bo = {.target = amk_target_named(target) ? tc.key : NULL,
                           .devices = ndev ? devs : NULL, .ndevices = ndev, .regime = regime};
    amk_backend_opts_objective(&bo, objective);
    amk_evaluate_opts eo = {&cfg, backend, &bo, &tc, results};
    amk_evaluate_result r;
    Py_BEGIN_ALLOW_THREADS
    e = amk_evaluate_one(&eo, &r, &d);
    Py_END_ALLOW_THREADS
    amk_registry_free(reg);
    if (e) {
        int code = r.failed_on == AMK_EVALUATE_ON_RESULTS ? (e == AMK_ENOMEM ? 5 : 3)
                   : r.failed_on == AMK_EVALUATE_ON_BACKEND
                       ? (e == AMK_ENODEV || e == AMK_EUNSUPPORTED || e == AMK_EBACKEND ||
                                  e == AMK_EWORKER
                              ? 4
                              : amk_err_exit_code(e))
                   : r.failed_on == AMK_EVALUATE_ON_RUN ? 5
                                                        : -1;
        static const char *const steps[] = {"backend", "results", "setup", "run", "done"};
        return raise_diag(e, &d, code, steps[r.failed_on]);
    }
    char *vj = amk_verdict_to_json(&r.verdict);
    if (!vj)
        return PyErr_NoMemory();
    PyObject *o = Py_BuildValue("{s:s,s:L,s:s,s:s,s:s}", "verdict", vj, "trial",
                                (long long)(r.logged ? r.row.trial : 0), "backend", r.backend,
                                "device", r.device, "shape", r.shape);
    free(vj);
    return o;
}

/* The results columns (AMK_TSV_COLUMNS), counted. */
#define AMK__PY_ONE(c) +1
enum { NCOLS = 0 AMK_TSV_COLUMNS(AMK__PY_ONE) };
#undef AMK__PY_ONE

typedef struct rows_walk {
    PyObject *cols[NCOLS];
    int failed;
} rows_walk;

static PyObject *str_or_none(const char *s)
{
    if (!s[0])
        Py_RETURN_NONE;
    return PyUnicode_FromString(s);
}

static int row_one(const amk_row *r, void *ud)
{
    rows_walk *w = ud;
    PyObject *v[] = {
        PyLong_FromLongLong((long long)r->trial), str_or_none(r->time),
        PyUnicode_FromString(r->kernel), PyUnicode_FromString(r->shape),
        PyUnicode_FromString(r->config_id), PyUnicode_FromString(r->params),
        str_or_none(r->source), PyUnicode_FromString(amk_status_name(r->status)),
        num_or_none(r->latency_us), str_or_none(amk_latency_kind_name(r->latency_kind)),
        num_or_none(r->spread), num_or_none(r->predicted_us), num_or_none(r->bound_us),
        num_or_none(r->pct_of_roofline), num_or_none(r->compile_ms),
        r->cache_hit < 0 ? (Py_INCREF(Py_None), Py_None) : PyBool_FromLong(r->cache_hit),
        PyBool_FromLong(r->kept), str_or_none(r->device), str_or_none(r->note),
        str_or_none(r->clock_regime), num_or_none(r->sm_mhz), num_or_none(r->sm_mhz_min),
        num_or_none(r->sm_mhz_max), num_or_none(r->mem_mhz), num_or_none(r->power_w),
        num_or_none(r->temp_c), str_or_none(r->throttle), num_or_none(r->energy_uj),
        str_or_none(r->peer), num_or_none(r->peer_us), num_or_none(r->vs_peer),
        PyUnicode_FromString(amk_objective_name(r->objective)),
        num_or_none(r->energy_window_ms),
        r->energy_ticks > 0 ? PyLong_FromLong(r->energy_ticks) : (Py_INCREF(Py_None), Py_None),
        num_or_none(r->cost_s)};
    /* a new column must be added here too */
    _Static_assert(sizeof v / sizeof *v == NCOLS, "one value per AMK_TSV_COLUMNS column");
    int bad = 0;
    for (int i = 0; i < NCOLS; i++) {
        if (!v[i] || PyList_Append(w->cols[i], v[i]))
            bad = 1;
        Py_XDECREF(v[i]);
    }
    if (bad) {
        w->failed = 1;
        return 1;
    }
    return 0;
}

/* read_results(path): {column: [values]} in AMK_TSV_COLUMNS order, and the torn-row count. */
static PyObject *mod_read_results(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    static const char *const names[NCOLS] = {
#define XX(c) #c,
        AMK_TSV_COLUMNS(XX)
#undef XX
    };
    rows_walk w = {{0}, 0};
    for (int i = 0; i < NCOLS; i++)
        if (!(w.cols[i] = PyList_New(0)))
            w.failed = 1;
    amk_tsv_stats st = {0};
    amk_diag d = {0};
    int e = w.failed ? AMK_ENOMEM : amk_tsv_read(path, row_one, &w, &st, &d);
    PyObject *out = NULL;
    if (!w.failed && e)
        raise_diag(e, &d, e == AMK_ENOMEM ? 5 : 3, "results");
    else if (!w.failed && (out = PyDict_New())) {
        for (int i = 0; i < NCOLS; i++) {
            Py_INCREF(w.cols[i]);
            if (put(out, names[i], w.cols[i]))
                Py_CLEAR(out);
            if (!out)
                break;
        }
    }
    for (int i = 0; i < NCOLS; i++)
        Py_XDECREF(w.cols[i]);
    if (!out)
        return NULL;
    return Py_BuildValue("(Nn)", out, (Py_ssize_t)st.torn);
}

/* report(paths, spec_dirs=None): the report's JSON text (with the speedups over the
 * defaults, as `amk report`) and its human table. */
static PyObject *mod_report(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"paths", "spec_dirs", "svg_dir", NULL};
    PyObject *paths, *dirs = NULL;
    const char *svg = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Oz", kwlist, &paths, &dirs, &svg))
        return NULL;
    const char **pv, **dv;
    int np, nd;
    if (str_list(paths, &pv, &np))
        return NULL;
    if (str_list(dirs, &dv, &nd)) {
        free(pv);
        return NULL;
    }
    amk_diag d = {0}, rd = {0};
    amk_report *rep = NULL;
    /* as `amk report`: specs that fail to load cost the upgrade and the speedups only */
    amk_registry *reg = NULL;
    amk_registry_open(dv, nd, &reg, &rd);
    free(dv);
    amk_row_upgrader up = amk_registry_upgrader(reg);
    int e = amk_report_build(pv, (size_t)np, &amk_history_rule, &up, &rep, &d);
    free(pv);
    if (e) {
        amk_registry_free(reg);
        return raise_diag(e, &d, e == AMK_ENOMEM ? 5 : 3, "results");
    }
    if (amk_report_ngroups(rep))
        amk_report_defaults(rep, reg, rd.msg);
    amk_registry_free(reg);
    if (svg && (e = amk_report_svg(rep, svg, NULL, &d)) != AMK_OK) {
        amk_report_free(rep);
        return raise_diag(e, &d, 3, "svg");
    }
    char *json = amk_report_json(rep);
    char *table = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&table, &tlen);
    if (f) {
        amk_report_print(rep, f);
        fclose(f);
    }
    amk_report_free(rep);
    PyObject *o = json && table ? Py_BuildValue("(ss)", json, table) : PyErr_NoMemory();
    free(json);
    free(table);
    return o;
}

/* export(paths, kernel=None, include_replayed=False, c_header=False, spec_dirs=None): the
 * database's JSON text (or its C header). */
static PyObject *mod_export(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"paths", "kernel", "include_replayed", "c_header", "spec_dirs",
                             NULL};
    PyObject *paths, *dirs = NULL;
    const char *kernel = NULL;
    int replayed = 0, header = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zppO", kwlist, &paths, &kernel, &replayed,
                                     &header, &dirs))
        return NULL;
    const char **pv, **dv;
    int np, nd;
    if (str_list(paths, &pv, &np))
        return NULL;
    if (str_list(dirs, &dv, &nd)) {
        free(pv);
        return NULL;
    }
    amk_diag d = {0}, rd = {0};
    amk_export_db *db = NULL;
    /* as `amk export`: specs that fail to load leave the rows as recorded */
    amk_registry *reg = NULL;
    amk_registry_open(dv, nd, &reg, &rd);
    free(dv);
    int e = amk_export_tuned(pv, (size_t)np, kernel, replayed, reg, &db, &d);
    amk_registry_free(reg);
    free(pv);
    if (e)
        return raise_diag(e, &d, e == AMK_ENOMEM ? 5 : (e == AMK_ENOENT || e == AMK_EEMPTY) ? 2 : 3,
                          "export");
    char *text = NULL;
    if (header) {
        amk_sb sb = {0};
        e = amk_export_db_c_header(db, kernel, &sb, &d);
        text = e == AMK_OK ? amk_sb_take(&sb) : NULL;
        amk_sb_free(&sb);
    } else
        text = amk_export_db_json(db);
    amk_export_db_free(db);
    if (e)
        return raise_diag(e, &d, -1, "export");
    if (!text)
        return PyErr_NoMemory();
    PyObject *o = PyUnicode_FromString(text);
    free(text);
    return o;
}

/* lookup(db, kernel, device, shape, dtype=None): amk lookup's answer as JSON text. */
static PyObject *mod_lookup(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"db", "kernel", "device", "shape", "dtype", NULL};
    const char *path, *kernel, *device, *shape, *dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ssss|z", kwlist, &path, &kernel, &device,
                                     &shape, &dtype))
        return NULL;
    amk_diag d = {0};
    amk_export_db *db = NULL;
    int e = amk_export_db_read(path, &db, &d);
    if (e)
        return raise_diag(e, &d, e == AMK_ENOMEM ? 5 : 2, "db");
    char *answer = NULL;
    e = amk_export_db_lookup(db, kernel, device, shape, dtype, &answer, &d);
    amk_export_db_free(db);
    if (e) {
        amk_diag_prefix(&d, "%s", path);
        return raise_diag(e, &d, -1, "lookup");
    }
    PyObject *o = PyUnicode_FromString(answer);
    free(answer);
    return o;
}

/* import_t1(t1_path, out_dir, name=None, kernel_file=None, data=None, answers=None,
 * vary=None, link_data=False): amk import (--kernel, --data, --answer: lists of "ARG=FILE";
 * --vary: a list of param names); link_data: amk_import_opts.link_data. */
static PyObject *mod_import_t1(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"t1", "out_dir", "name", "kernel_file", "data", "answers",
                             "vary", "link_data", NULL};
    const char *t1, *out, *name = NULL, *kfile = NULL;
    PyObject *data = Py_None, *answers = Py_None, *vary = Py_None;
    int link_data = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|zzOOOp", kwlist, &t1, &out, &name, &kfile,
                                     &data, &answers, &vary, &link_data))
        return NULL;
    const char **dl = NULL, **al = NULL, **vl = NULL;
    int nd = 0, na = 0, nv = 0;
    if (str_list(data, &dl, &nd) || str_list(answers, &al, &na) ||
        str_list(vary, &vl, &nv)) {
        free(dl);
        free(al);
        return NULL;
    }
    amk_import_opts io = {.name = name, .kernel_file = kfile, .data = dl, .ndata = nd,
                          .answers = al, .nanswers = na, .vary = vl, .nvary = nv,
                          .link_data = link_data};
    amk_diag d = {0};
    int e;
    Py_BEGIN_ALLOW_THREADS
    e = amk_import_t1(t1, out, &io, &d);
    Py_END_ALLOW_THREADS
    free(dl);
    free(al);
    free(vl);
    if (e)
        return raise_diag(e, &d, -1, "import");
    Py_RETURN_NONE;
}

/* kernels(spec_dirs=None): the names of the known kernels. */
static PyObject *mod_kernels(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"spec_dirs", NULL};
    PyObject *dirs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &dirs))
        return NULL;
    const char **dv;
    int nd;
    if (str_list(dirs, &dv, &nd))
        return NULL;
    amk_registry *reg = NULL;
    amk_diag d = {0};
    int e = amk_registry_open(dv, nd, &reg, &d);
    free(dv);
    if (e)
        return raise_diag(e, &d, -1, "kernel");
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < amk_registry_count(reg); i++) {
        PyObject *s = PyUnicode_FromString(amk_spec_name(amk_registry_at(reg, i)));
        if (!s || PyList_Append(l, s))
            Py_CLEAR(l);
        Py_XDECREF(s);
    }
    amk_registry_free(reg);
    return l;
}

/* gpu_status(): amk devices' GPU side: {vendor, devices: [{index, name, arch, target}],
 * reason}. */
static PyObject *mod_gpu_status(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    amk_gpu_status_info *g = calloc(1, sizeof *g);
    if (!g)
        return PyErr_NoMemory();
    int e;
    Py_BEGIN_ALLOW_THREADS
    e = amk_gpu_status(g);
    Py_END_ALLOW_THREADS
    if (e) {
        free(g);
        return PyErr_NoMemory();
    }
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < g->n; i++) {
        PyObject *x = Py_BuildValue("{s:i,s:s,s:s,s:s}", "index", g->devices[i].index, "name",
                                    g->devices[i].name, "arch", g->devices[i].arch, "target",
                                    g->targets[i] ? g->targets[i]->key : "");
        if (!x || PyList_Append(l, x))
            Py_CLEAR(l);
        Py_XDECREF(x);
    }
    PyObject *o = l ? Py_BuildValue("{s:z,s:N,s:s}", "vendor", g->vendor, "devices", l,
                                    "reason", g->reason)
                    : NULL;
    free(g);
    return o;
}

static PyObject *mod_error_info(PyObject *self, PyObject *args)
{
    (void)self;
    int code;
    if (!PyArg_ParseTuple(args, "i", &code))
        return NULL;
    return Py_BuildValue("(ssi)", amk_err_name(code), amk_strerror(code),
                         amk_err_exit_code(code));
}

static PyMethodDef mod_methods[] = {
    {"evaluate", (PyCFunction)(void (*)(void))mod_evaluate, METH_VARARGS | METH_KEYWORDS,
     "amk evaluate"},
    {"read_results", mod_read_results, METH_VARARGS, "results.tsv columns"},
    {"report", (PyCFunction)(void (*)(void))mod_report, METH_VARARGS | METH_KEYWORDS,
     "amk report"},
    {"export", (PyCFunction)(void (*)(void))mod_export, METH_VARARGS | METH_KEYWORDS,
     "amk export"},
    {"lookup", (PyCFunction)(void (*)(void))mod_lookup, METH_VARARGS | METH_KEYWORDS,
     "amk lookup"},
    {"import_t1", (PyCFunction)(void (*)(void))mod_import_t1, METH_VARARGS | METH_KEYWORDS,
     "amk import"},
    {"kernels", (PyCFunction)(void (*)(void))mod_kernels, METH_VARARGS | METH_KEYWORDS,
     "known kernel names"},
    {"gpu_status", mod_gpu_status, METH_NOARGS, "amk devices (GPU side)"},
    {"error_info", mod_error_info, METH_VARARGS, "(name, message, exit code) of a code"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef amk_module = {PyModuleDef_HEAD_INIT, "_amk",
                                        "amk's engine (libamk's public C API)", -1, mod_methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__amk(void)
{
    if (PyType_Ready(&kernel_type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&amk_module);
    if (!m)
        return NULL;
    amk_error = PyErr_NewException("amk._amk.Error", NULL, NULL);
    Py_INCREF(&kernel_type);
    if (!amk_error || PyModule_AddObject(m, "Error", amk_error) ||
        PyModule_AddObject(m, "Kernel", (PyObject *)&kernel_type) ||
        PyModule_AddStringConstant(m, "VERSION", AMK_VERSION)) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(amk_error);
    if (amk__py_launch_add(m)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
