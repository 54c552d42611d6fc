/* The `gpu` backend (parent side). init starts one run worker per GPU (a long-lived child
 * that owns that device's context), each fed by a thread of this process, asks every one
 * what device answers (all must be one model), matches a target, then starts the shared
 * compile pool. evaluate submits a whole batch to the compile pool (candidates + references,
 * through the cache) and, as soon as a config's code is final, turns it into a run job
 * (buffers, args, launches, tolerance, the run's seed, the shapes of the check set) that the next
 * free device runs; hangs, crashes and sticky errors come back as run_timeout / run_error and
 * that worker is respawned. Verdicts are filled in proposal order once the batch is done.
 * This process never calls the GPU runtime nor the runtime compiler. */
#include "gpu_int.h"
#include "evaluator_int.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RUN_TIMEOUT_S 30.0
#define QUERY_TIMEOUT_S 90.0
#define MAX_EXTRA_SHAPES 2
#define MAX_DEVICES 64

struct gpu_state;

/* One GPU: its run worker and the thread that feeds it (the thread also replaces the worker
 * when it dies, so the worker lives as long as the thread: see worker_int.h). */
typedef struct gpu_dev {
    struct gpu_state *st;
    int index;                 /* the runtime's device index */
    amk_worker_pool *run;      /* one worker, created by the main thread */
    amk__gpu_info info;        /* what its run worker found */
    int asked;                 /* info is final (guarded by st->mu once the thread runs) */
    int quit;                  /* the thread returns (guarded by st->mu) */
    int has_thread;
    pthread_t thread;
} gpu_dev;

/* A config of the batch whose code is final, on its way to a device. */
typedef struct run_slot {
    struct run_slot *next;     /* queue link */
    amk__run_job *job;         /* NULL when the job could not be set up (setup says why) */
    amk__run_result res;
    int gpu;                   /* device index that ran it */
    char setup[400];
} run_slot;

typedef struct gpu_state {
    gpu_dev *devs[MAX_DEVICES]; /* ascending device index; devs[0] runs re-measures */
    int ndev;
    amk_compiler *cc;
    amk__gpu_info info;        /* devs[0]'s: every device is this model */
    amk_target target;
    char device[64];
    double run_timeout_s;
    amk__bench_opts bench;
    uint64_t seed;             /* inputs of every check of this backend (see gpu_init) */
    int check_threads;         /* host threads of one run worker's check */
    /* The device threads take run slots from a FIFO and count the ones they finish. */
    int sync_ready;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    run_slot *head, *tail;
    size_t finished;
} gpu_state;

/* ---------- helpers --------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void append(char *buf, size_t cap, const char *text)
{
    size_t n = strnlen(buf, cap);
    if (!text || !*text || n + 3 >= cap)
        return;
    snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", text);
}

/* The last non-empty line of a worker's stderr tail (what the run worker was doing). */
static void last_line(const char *tail, char *out, size_t cap)
{
    out[0] = '\0';
    size_t n = strlen(tail);
    while (n && (tail[n - 1] == '\n' || tail[n - 1] == ' '))
        n--;
    size_t b = n;
    while (b && tail[b - 1] != '\n')
        b--;
    snprintf(out, cap, "%.*s", (int)(n - b), tail + b);
}

static int find_buf(const amk__run_case *rc, const char *name)
{
    for (int b = 0; b < rc->nbufs; b++)
        if (strcmp(rc->bufs[b].name, name) == 0)
            return b;
    return -1;
}

static int find_map(const amk__run_case *rc, const char *name)
{
    for (int m = 0; m < rc->nmaps; m++)
        if (strcmp(rc->maps[m].name, name) == 0)
            return m;
    return -1;
}

/* Arguments of a kernel: buffer names become device pointers, tensor-map names the encoded
 * maps (by value), other names int32 values. */
static int build_args(const amk_config *c, const amk_limits *lim, int n,
                      const char *(*arg_at)(const amk_spec *, int), const amk__run_case *rc,
                      amk__run_kernel *k, amk_diag *d)
{
    if (n > AMK__RUN_MAX_ARGS)
        return amk_diag_set(d, AMK_ESPEC, "args: not an array of at most %d names",
                            AMK__RUN_MAX_ARGS);
    k->nargs = n;
    for (int i = 0; i < n; i++) {
        const char *a = arg_at(c->spec, i);
        int b = find_buf(rc, a), m = find_map(rc, a);
        k->args[i].buf = b >= 0 ? b : m >= 0 ? AMK__RUN_ARG_TMAP(m) : -1;
        k->args[i].value = 0;
        if (b >= 0 || m >= 0)
            continue;
        int64_t v;
        if (amk_config_eval(c, lim, a, &v, d) != AMK_OK)
            return amk_diag_prefix(d, "args[%d] '%s'", i, a);
        if (v < INT32_MIN || v > INT32_MAX)
            return amk_diag_set(d, AMK_ECONFIG, "args[%d] '%s' = %lld is outside int32", i, a,
                                (long long)v);
        k->args[i].value = (int32_t)v;
    }
    return AMK_OK;
}

/* One case of a job: c's buffers, candidate and reference kernels, tolerance. */
static int build_case(const amk_config *c, const amk_limits *lim, int code_cand, int code_ref,
                      amk__run_case *rc, amk_diag *d)
{
    const amk_spec *sp = c->spec;
    amk_spec_tolerance tol;
    amk_spec_get_tolerance(sp, &tol);
    memset(rc, 0, sizeof *rc);
    amk_shape_format(sp, &c->shape, rc->label, sizeof rc->label);
    int nb = amk_spec_n_buffers(sp);
    if (nb < 1 || nb > AMK__RUN_MAX_BUFS)
        return amk_diag_set(d, AMK_ESPEC, "buffers: 1 to %d buffers expected", AMK__RUN_MAX_BUFS);
    int64_t red_all = 1;
    if (amk_config_eval_expr(c, lim, tol.reduction, &red_all, d) != AMK_OK)
        return amk_diag_prefix(d, "tolerance.reduction");
    rc->rtol_scale = tol.rtol_scale;
    rc->atol = tol.atol;
    rc->nbufs = nb;
    static const int roles[] = {[AMK_BUFFER_IN] = AMK__ROLE_IN, [AMK_BUFFER_OUT] = AMK__ROLE_OUT,
                                [AMK_BUFFER_INOUT] = AMK__ROLE_INOUT};
    for (int i = 0; i < nb; i++) {
        amk_spec_buffer b;
        amk_spec_buffer_at(sp, i, &b);
        amk__run_buf *rb = &rc->bufs[i];
        snprintf(rb->name, sizeof rb->name, "%s", b.name);
        const char *dname = strcmp(b.dtype, "input") == 0
                                ? amk_spec_dtype_name(sp, c->shape.dtype)
                                : b.dtype;
        rb->dtype = amk__dtype_from_name(dname);
        if (rb->dtype < 0)
            return amk_diag_set(d, AMK_EUNSUPPORTED, "buffers[%d] %s: dtype '%s' is not "
                                "supported by the gpu backend", i, rb->name, dname);
        rb->role = roles[b.role];
        rb->init = amk__init_from_name(b.init);
        if (rb->init < 0)
            return amk_diag_set(d, AMK_ESPEC, "buffers[%d] %s: unknown init '%s'", i, rb->name,
                                b.init);
        if (amk_config_eval_expr(c, lim, b.count, &rb->count, d) != AMK_OK)
            return amk_diag_prefix(d, "buffers[%d] %s: count", i, rb->name);
        if (rb->count < 1 || rb->count > ((int64_t)1 << 40) / (int64_t)amk__dtype_size(rb->dtype))
            return amk_diag_set(d, AMK_ECONFIG, "buffers[%d] %s: %lld elements is out of range",
                                i, rb->name, (long long)rb->count);
        int64_t r = red_all;
        if (b.tolerance_reduction &&
            amk_config_eval_expr(c, lim, b.tolerance_reduction, &r, d) != AMK_OK)
            return amk_diag_prefix(d, "buffers[%d] %s: tolerance_reduction", i, rb->name);
        rb->reduction = (double)(r < 1 ? 1 : r);
    }
    /* Tensor maps (validated for this config and shape by amk_config_tensor_map). */
    rc->nmaps = amk_spec_n_tensor_maps(sp);
    if (rc->nmaps > AMK__RUN_MAX_TMAPS)
        return amk_diag_set(d, AMK_ESPEC, "tensor_maps: at most %d", AMK__RUN_MAX_TMAPS);
    for (int m = 0; m < rc->nmaps; m++) {
        amk_tensor_map tm;
        amk__run_tmap *rt = &rc->maps[m];
        if (amk_config_tensor_map(c, lim, m, &tm, d) != AMK_OK)
            return d ? d->code : AMK_ECONFIG;
        snprintf(rt->name, sizeof rt->name, "%s", tm.name);
        rt->buf = find_buf(rc, tm.buffer);
        rt->dtype = amk__dtype_from_name(tm.dtype);
        if (rt->buf < 0 || rt->dtype < 0)
            return amk_diag_set(d, AMK_ESPEC, "tensor map '%s': buffer %s (%s) unknown to the "
                                "gpu backend", tm.name, tm.buffer, tm.dtype);
        rt->rank = tm.rank;
        for (int i = 0; i < tm.rank; i++) {
            rt->dims[i] = tm.dims[i];
            rt->box[i] = tm.box[i];
            if (i + 1 < tm.rank)
                rt->strides[i] = tm.strides[i];
        }
        rt->swizzle = tm.swizzle;
        rt->l2_promotion = tm.l2_promotion;
        rt->oob = 0;
    }
    /* Candidate. */
    rc->cand.code = code_cand;
    snprintf(rc->cand.entry, sizeof rc->cand.entry, "%s", amk_spec_entry(sp));
    if (amk_config_launch(c, lim, &rc->cand.launch, d) != AMK_OK)
        return amk_diag_prefix(d, "launch");
    if (build_args(c, lim, amk_spec_n_args(sp), amk_spec_arg, rc, &rc->cand, d) != AMK_OK)
        return d ? d->code : AMK_ESPEC;
    /* Reference. */
    rc->ref.code = code_ref;
    if (code_ref >= 0) {
        amk_spec_reference ref;
        amk_spec_get_reference(sp, &ref);
        snprintf(rc->ref.entry, sizeof rc->ref.entry, "%s", ref.entry);
        if (amk_config_reference_launch(c, lim, &rc->ref.launch, d) != AMK_OK)
            return d ? d->code : AMK_ESPEC;
        if (build_args(c, lim, amk_spec_n_reference_args(sp), amk_spec_reference_arg, rc,
                       &rc->ref, d) != AMK_OK)
            return amk_diag_prefix(d, "reference");
    }
    return AMK_OK;
}

static int64_t case_bytes(const amk__run_case *rc)
{
    int64_t s = 0;
    for (int b = 0; b < rc->nbufs; b++)
        s += rc->bufs[b].count * (int64_t)amk__dtype_size(rc->bufs[b].dtype);
    return s;
}

/* The check set: c's own shape (benchmarked), then up to MAX_EXTRA_SHAPES named shapes of
 * the spec with the same dtype, valid for c's params, and at most a quarter of c's bytes
 * (small odd shapes catch edge handling cheaply), smallest first. */
static int build_cases(gpu_state *st, const amk_config *c, amk__run_job *j, amk_diag *d)
{
    const amk_limits *lim = &st->target.limits;
    int rc = build_case(c, lim, 0, 1, &j->cases[0], d);
    if (rc != AMK_OK)
        return rc;
    j->cases[0].bench = 1;
    j->ncases = 1;
    int64_t main_bytes = case_bytes(&j->cases[0]);
    amk__run_case *extra = malloc(sizeof *extra);
    if (!extra)
        return amk_diag_set(d, AMK_ENOMEM, "out of memory");
    int ns = amk_spec_n_shapes(c->spec);
    for (int pass = 0; pass < MAX_EXTRA_SHAPES; pass++) {
        int best = -1;
        int64_t best_bytes = 0;
        amk__run_case best_case;
        for (int i = 0; i < ns; i++) {
            amk_config c2 = *c;
            amk_diag dd = {0};
            amk_spec_shape(c->spec, i, &c2.shape);
            if (c2.shape.dtype != c->shape.dtype)
                continue;
            char label[160];
            amk_shape_format(c->spec, &c2.shape, label, sizeof label);
            int seen = 0;
            for (int k = 0; k < j->ncases; k++)
                seen |= strcmp(j->cases[k].label, label) == 0;
            if (seen || amk_config_check(&c2, lim, &dd) != AMK_OK ||
                build_case(&c2, lim, 0, 1, extra, &dd) != AMK_OK)
                continue;
            int64_t bytes = case_bytes(extra);
            if (bytes * 4 > main_bytes || (best >= 0 && bytes >= best_bytes))
                continue;
            best = i;
            best_bytes = bytes;
            best_case = *extra;
        }
        if (best < 0)
            break;
        j->cases[j->ncases++] = best_case;
    }
    free(extra);
    return AMK_OK;
}

/* ---------- running a job --------------------------------------------------------------- */

/* Sends a job to a run worker and turns every outcome into a result: a timeout is
 * RUN_TIMEOUT, a dead worker RUN_ERROR (the pool has already respawned it). */
static void send_job(amk_worker_pool *run, double timeout_s, const amk__run_job *j,
                     amk__run_result *res)
{
    void *req = NULL;
    size_t len = 0;
    memset(res, 0, sizeof *res);
    res->status = AMK_STATUS_RUN_ERROR;
    int rc = amk__run_job_encode(j, &req, &len);
    if (rc != AMK_OK) {
        snprintf(res->reason, sizeof res->reason, "cannot encode the run job: %s",
                 amk_strerror(rc));
        return;
    }
    amk_worker_job wj;
    memset(&wj, 0, sizeof wj);
    wj.req = req;
    wj.req_len = len;
    wj.timeout_s = timeout_s;
    amk_diag d = {0};
    rc = amk__worker_pool_run(run, &wj, 1, &d);
    free(req);
    char last[200];
    last_line(wj.stderr_tail, last, sizeof last);
    if (rc != AMK_OK && wj.rc == AMK_OK)
        wj.rc = rc;
    if (wj.rc == AMK_OK && wj.resp && wj.resp_len == sizeof *res) {
        memcpy(res, wj.resp, sizeof *res);
    } else if (wj.rc == AMK_ETIMEDOUT) {
        res->status = AMK_STATUS_RUN_TIMEOUT;
        snprintf(res->reason, sizeof res->reason,
                 "no answer within %.0f s (%s): the kernel did not finish; run worker killed "
                 "and respawned", timeout_s, last[0] ? last : "no stage reported");
    } else if (wj.rc == AMK_OK) {
        snprintf(res->reason, sizeof res->reason, "run worker answered %zu bytes, expected %zu",
                 wj.resp_len, sizeof *res);
    } else {
        snprintf(res->reason, sizeof res->reason, "run worker died: %s%s%s; respawned",
                 wj.reason[0] ? wj.reason : d.msg, last[0] ? "; last: " : "", last);
    }
    amk__worker_job_clear(&wj);
}

/* ---------- target ---------------------------------------------------------------------- */

/* Per-kernel hang limit: opts->run_timeout_s, else $AMK_RUN_TIMEOUT (a duration), else
 * DEFAULT_RUN_TIMEOUT_S. */
static double run_timeout_s(const amk_backend_opts *opts)
{
    if (opts && opts->run_timeout_s > 0)
        return opts->run_timeout_s;
    const char *s = getenv("AMK_RUN_TIMEOUT");
    double v;
    if (s && *s && amk_parse_duration(s, &v) == AMK_OK && v > 0)
        return v;
    return DEFAULT_RUN_TIMEOUT_S;
}

double amk__gpu_slot_seconds(const amk_backend_opts *opts)
{
    return amk__compile_cap_s(opts) + AMK__GPU_CONFIGS_PER_DEVICE * 2 * run_timeout_s(opts);
}

/* Copies the matched target and overrides its limits with what the device reports. */
static void make_target(gpu_state *st)
{
    const amk__gpu_info *in = &st->info;
    const amk_target *t = amk_target_find(in->name);
    if (!t) {
        t = amk_target_find(in->arch);
        amk_log(AMK_LOG_WARN, "gpu: device '%s' (%s) is not in the target table; using the "
                "ceilings of %s (run `amk calibrate` to measure this device's)", in->name,
                in->arch, t ? t->name : amk_target_default()->name);
        if (!t)
            t = amk_target_default();
        st->target = *t;
        snprintf(st->target.name, sizeof st->target.name, "%s", in->name);
        snprintf(st->target.arch, sizeof st->target.arch, "%s", in->arch);
    } else {
        st->target = *t;
    }
    amk_limits *l = &st->target.limits;
    if (in->max_threads > 0)
        l->max_threads = in->max_threads;
    if (in->max_smem > 0)
        l->max_smem = in->max_smem;
    if (in->max_smem_optin > 0)
        l->max_smem_optin = in->max_smem_optin;
    if (in->smem_per_sm > 0)
        l->smem_per_sm = in->smem_per_sm;
    if (in->warp > 0)
        l->warp = in->warp;
    if (in->sm_count > 0)
        l->sm_count = in->sm_count;
    if (in->regs_per_sm > 0)
        l->regs_per_sm = in->regs_per_sm;
    if (in->max_blocks_per_sm > 0)
        l->max_blocks_per_sm = in->max_blocks_per_sm;
    if (in->max_threads_per_sm > 0)
        l->max_threads_per_sm = in->max_threads_per_sm;
    if (in->max_grid_x > 0)
        l->max_grid_x = in->max_grid_x;
    if (in->max_grid_yz > 0)
        l->max_grid_yz = in->max_grid_yz;
    if (in->l2_bytes > 0)
        l->l2_bytes = in->l2_bytes;
    char path[4096];
    amk_ceilings_path(&st->target, path, sizeof path);
    if (amk_fs_exists(path)) {
        amk_diag d = {0};
        if (amk_ceilings_load(&st->target, path, &d) != AMK_OK)
            amk_log(AMK_LOG_WARN, "gpu: ignoring measured ceilings: %s", d.msg);
    }
}

/* ---------- devices: run workers, their threads, the query --------------------------------- */

/* Asks g's run worker what device g->index is; on failure info->ok = 0 and info->error says
 * why (the runtime's message, or how the worker failed). */
static void query_device(gpu_dev *g, amk__gpu_info *info)
{
    void *req = NULL;
    size_t len = 0;
    memset(info, 0, sizeof *info);
    info->device = g->index;
    if (amk__run_query_encode(g->index, &req, &len) != AMK_OK) {
        snprintf(info->error, sizeof info->error, "out of memory");
        return;
    }
    amk_worker_job wj;
    memset(&wj, 0, sizeof wj);
    wj.req = req;
    wj.req_len = len;
    wj.timeout_s = QUERY_TIMEOUT_S;
    amk_diag d = {0};
    int rc = amk__worker_pool_run(g->run, &wj, 1, &d);
    free(req);
    if (rc == AMK_OK && wj.rc == AMK_OK && wj.resp_len == sizeof *info) {
        memcpy(info, wj.resp, sizeof *info);
    } else {
        char last[200];
        last_line(wj.stderr_tail, last, sizeof last);
        snprintf(info->error, sizeof info->error, "the device query %s%s%s",
                 wj.rc == AMK_ETIMEDOUT ? "did not answer in time"
                                        : (wj.reason[0] ? wj.reason
                                                        : (d.msg[0] ? d.msg : "failed")),
                 last[0] ? ": " : "", last);
    }
    amk__worker_job_clear(&wj);
}

/* A device thread: asks its device (unless the main thread already did), then runs the
 * slots of the queue one at a time on its run worker until told to quit. */
static void *device_main(void *arg)
{
    gpu_dev *g = arg;
    gpu_state *st = g->st;
    pthread_mutex_lock(&st->mu);
    if (!g->asked) {
        amk__gpu_info info;
        pthread_mutex_unlock(&st->mu);
        query_device(g, &info);
        pthread_mutex_lock(&st->mu);
        g->info = info;
        g->asked = 1;
        pthread_cond_broadcast(&st->done);
    }
    for (;;) {
        while (!g->quit && !st->head)
            pthread_cond_wait(&st->work, &st->mu);
        if (g->quit)
            break;
        run_slot *s = st->head;
        st->head = s->next;
        if (!st->head)
            st->tail = NULL;
        pthread_mutex_unlock(&st->mu);
        s->job->device = g->index;
        s->gpu = g->index;
        send_job(g->run, st->run_timeout_s, s->job, &s->res);
        pthread_mutex_lock(&st->mu);
        st->finished++;
        pthread_cond_broadcast(&st->done);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* Starts the run worker of device `index` (from the main thread, before its thread). */
static int add_device(gpu_state *st, int index, amk_diag *d)
{
    if (st->ndev >= MAX_DEVICES)
        return amk_diag_set(d, AMK_EINVAL, "gpu backend: at most %d devices", MAX_DEVICES);
    gpu_dev *g = calloc(1, sizeof *g);
    if (!g)
        return amk_diag_set(d, AMK_ENOMEM, "gpu backend: out of memory");
    g->st = st;
    g->index = index;
    amk_worker_opts wo = {0};
    wo.name = "run";
    wo.n_workers = 1;
    int rc = amk__worker_pool_create(&wo, amk__run_worker_handle, &g->run, d);
    if (rc != AMK_OK) {
        free(g);
        return rc;
    }
    st->devs[st->ndev++] = g;
    return AMK_OK;
}

/* The thread of g, with every signal blocked (signals are the main thread's business). */
static int start_thread(gpu_dev *g, amk_diag *d)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&g->thread, NULL, device_main, g);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0)
        return amk_diag_set(d, AMK_EBACKEND, "gpu backend: cannot start the thread of device "
                            "%d: %s", g->index, strerror(e));
    g->has_thread = 1;
    return AMK_OK;
}

/* Stops g's thread (idle between batches) and its run worker; frees g. */
static void drop_device(gpu_state *st, gpu_dev *g)
{
    if (g->has_thread) {
        pthread_mutex_lock(&st->mu);
        g->quit = 1;
        pthread_cond_broadcast(&st->work);
        pthread_mutex_unlock(&st->mu);
        pthread_join(g->thread, NULL);
    }
    amk__worker_pool_free(g->run);
    free(g);
}

static int same_model(const amk__gpu_info *a, const amk__gpu_info *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->arch, b->arch) == 0;
}

static int by_index(const void *a, const void *b)
{
    const gpu_dev *x = *(gpu_dev *const *)a, *y = *(gpu_dev *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

/* "devices 0,2: NVIDIA H100 80GB HBM3 (sm_90); device 1: NVIDIA A100-SXM4-80GB (sm_80)" */
static void describe_models(const gpu_state *st, char *out, size_t cap)
{
    int seen[MAX_DEVICES] = {0};
    amk_sb sb = {0};
    for (int i = 0; i < st->ndev; i++) {
        if (seen[i])
            continue;
        int count = 0;
        amk_sb ids = {0};
        for (int k = i; k < st->ndev; k++)
            if (!seen[k] && same_model(&st->devs[i]->info, &st->devs[k]->info)) {
                seen[k] = 1;
                amk_sb_printf(&ids, "%s%d", count++ ? "," : "", st->devs[k]->index);
            }
        amk_sb_printf(&sb, "%sdevice%s %s: %s (%s)", sb.len ? "; " : "", count > 1 ? "s" : "",
                      ids.p ? ids.p : "", st->devs[i]->info.name, st->devs[i]->info.arch);
        amk_sb_free(&ids);
    }
    snprintf(out, cap, "%s", sb.p ? sb.p : "");
    amk_sb_free(&sb);
}

/* "0,1,3" */
static void index_list(const gpu_state *st, char *out, size_t cap)
{
    out[0] = '\0';
    for (int k = 0; k < st->ndev; k++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%d", k ? "," : "", st->devs[k]->index);
    }
}

static int sync_init(gpu_state *st, amk_diag *d)
{
    if (pthread_mutex_init(&st->mu, NULL) != 0)
        return amk_diag_set(d, AMK_ENOMEM, "gpu backend: cannot create a mutex");
    if (pthread_cond_init(&st->work, NULL) != 0) {
        pthread_mutex_destroy(&st->mu);
        return amk_diag_set(d, AMK_ENOMEM, "gpu backend: cannot create a condition variable");
    }
    if (pthread_cond_init(&st->done, NULL) != 0) {
        pthread_cond_destroy(&st->work);
        pthread_mutex_destroy(&st->mu);
        return amk_diag_set(d, AMK_ENOMEM, "gpu backend: cannot create a condition variable");
    }
    st->sync_ready = 1;
    return AMK_OK;
}

/* Stops every device thread and run worker. */
static void close_devices(gpu_state *st)
{
    for (int k = 0; k < st->ndev; k++)
        drop_device(st, st->devs[k]);
    st->ndev = 0;
    if (st->sync_ready) {
        pthread_cond_destroy(&st->done);
        pthread_cond_destroy(&st->work);
        pthread_mutex_destroy(&st->mu);
        st->sync_ready = 0;
    }
}

/* Starts one run worker and thread per device and asks every device (in parallel) what it
 * is. want/nwant: the devices to use, all of one model (AMK_EINVAL naming the models
 * otherwise; AMK_ENODEV when one does not answer). want NULL: every visible device of
 * `first`'s model (any_model: every visible device that answers), in index order. */
static int open_devices(gpu_state *st, const int *want, int nwant, int first, int any_model,
                        amk_diag *d)
{
    int rc = sync_init(st, d);
    if (rc != AMK_OK)
        return rc;
    if (want) {
        if (nwant < 1 || nwant > MAX_DEVICES)
            return amk_diag_set(d, AMK_EINVAL, "gpu backend: 1 to %d devices, not %d",
                                MAX_DEVICES, nwant);
        for (int k = 0; k < nwant; k++) {
            if (want[k] < 0)
                return amk_diag_set(d, AMK_EINVAL, "gpu backend: device index %d is negative",
                                    want[k]);
            for (int j = 0; j < k; j++)
                if (want[j] == want[k])
                    return amk_diag_set(d, AMK_EINVAL, "gpu backend: device %d is listed "
                                        "twice", want[k]);
        }
        for (int k = 0; k < nwant; k++)
            if ((rc = add_device(st, want[k], d)) != AMK_OK)
                return rc;
    } else {
        if (first < 0)
            return amk_diag_set(d, AMK_EINVAL, "gpu backend: device index %d is negative",
                                first);
        /* The first device tells how many there are. */
        if ((rc = add_device(st, first, d)) != AMK_OK)
            return rc;
        gpu_dev *g = st->devs[0];
        query_device(g, &g->info);
        g->asked = 1;
        if (!g->info.ok)
            return amk_diag_set(d, AMK_ENODEV, "gpu backend: no GPU device answers: %s",
                                g->info.error);
        int count = g->info.count;
        if (count > MAX_DEVICES) {
            amk_log(AMK_LOG_WARN, "gpu: %d devices visible; using the first %d", count,
                    MAX_DEVICES);
            count = MAX_DEVICES;
        }
        for (int i = 0; i < count; i++)
            if (i != first && (rc = add_device(st, i, d)) != AMK_OK)
                return rc;
    }
    for (int k = 0; k < st->ndev; k++)
        if ((rc = start_thread(st->devs[k], d)) != AMK_OK)
            return rc;
    pthread_mutex_lock(&st->mu);
    for (int k = 0; k < st->ndev; k++)
        while (!st->devs[k]->asked)
            pthread_cond_wait(&st->done, &st->mu);
    pthread_mutex_unlock(&st->mu);

    if (want) {
        for (int k = 0; k < st->ndev; k++) {
            const amk__gpu_info *in = &st->devs[k]->info;
            if (in->ok)
                continue;
            if (st->ndev == 1)
                return amk_diag_set(d, AMK_ENODEV, "gpu backend: no GPU device answers: %s",
                                    in->error);
            return amk_diag_set(d, AMK_ENODEV, "gpu backend: device %d does not answer: %s",
                                st->devs[k]->index, in->error);
        }
        for (int k = 1; k < st->ndev; k++)
            if (!same_model(&st->devs[0]->info, &st->devs[k]->info)) {
                char groups[700];
                describe_models(st, groups, sizeof groups);
                return amk_diag_set(d, AMK_EINVAL, "gpu backend: the devices are of "
                                    "different models (%s): tune each model separately with "
                                    "--devices", groups);
            }
    } else {
        /* Keep the devices of the first one's model that answer. */
        int kept = 0;
        const amk__gpu_info ref = st->devs[0]->info;
        for (int k = 0; k < st->ndev; k++) {
            gpu_dev *g = st->devs[k];
            if (g->info.ok && (any_model || same_model(&ref, &g->info))) {
                st->devs[kept++] = g;
                continue;
            }
            if (!g->info.ok)
                amk_log(AMK_LOG_WARN, "gpu: device %d does not answer (%s): not used",
                        g->index, g->info.error);
            else
                amk_log(AMK_LOG_INFO, "gpu: device %d is another model (%s, %s): not used "
                        "(tune it with --devices %d)", g->index, g->info.name, g->info.arch,
                        g->index);
            drop_device(st, g);
        }
        st->ndev = kept;
    }
    qsort(st->devs, (size_t)st->ndev, sizeof st->devs[0], by_index);
    return AMK_OK;
}

int amk_gpu_devices(amk_gpu_device *out, int cap, int *n, amk_diag *d)
{
    if ((cap > 0 && !out) || !n)
        return amk_diag_set(d, AMK_EINVAL, "gpu devices: invalid arguments");
    *n = 0;
    gpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return amk_diag_set(d, AMK_ENOMEM, "gpu devices: out of memory");
    int rc = open_devices(st, NULL, 0, 0, 1, d);
    if (rc == AMK_OK) {
        *n = st->ndev;
        for (int k = 0; k < st->ndev && k < cap; k++) {
            memset(&out[k], 0, sizeof out[k]);
            out[k].index = st->devs[k]->index;
            snprintf(out[k].name, sizeof out[k].name, "%s", st->devs[k]->info.name);
            snprintf(out[k].arch, sizeof out[k].arch, "%s", st->devs[k]->info.arch);
        }
    }
    close_devices(st);
    free(st);
    return rc;
}

/* ---------- backend type ---------------------------------------------------------------- */

static void gpu_clear(void *state)
{
    gpu_state *st = state;
    amk__compiler_free(st->cc);
    st->cc = NULL;
    close_devices(st);
}

static int gpu_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    gpu_state *st = state;
    amk_backend_opts dflt = {0};
    if (!opts)
        opts = &dflt;
    st->run_timeout_s = run_timeout_s(opts);
    amk__bench_opts_default(&st->bench);
    /* One seed for the whole run (from opts.seed when given: reproducible; else the clock
     * and pid), so every config is checked on the same inputs per shape and the run worker
     * can keep the reference's outputs (runtime.c, reference cache). Each config is still
     * checked on inputs it was not written for; the verdict's seed reproduces them. Never 0
     * (0 means "no seed" in a verdict). */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    st->seed = mix64(opts->seed ? opts->seed
                                : (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                                      ((uint64_t)getpid() << 40));
    if (!st->seed)
        st->seed = 1;

    /* The run workers first: if no device answers, no compile worker is started. Each is a
     * fork of this process, which never touches the GPU runtime. */
    int rc = open_devices(st, opts->ndevices > 0 ? opts->devices : NULL, opts->ndevices,
                          opts->device_index, 0, d);
    if (rc != AMK_OK) {
        gpu_clear(st);
        return rc;
    }
    st->info = st->devs[0]->info;
    const char *vendor = amk__arch_vendor(st->info.arch);
    if (!vendor || strcmp(vendor, amk__rtc_vendor()) != 0) {
        char arch[32];
        snprintf(arch, sizeof arch, "%s", st->info.arch);
        gpu_clear(st);
        return amk_diag_set(d, AMK_EUNSUPPORTED, "gpu backend: device arch '%s' cannot be "
                            "compiled by this build's %s", arch, amk__rtc_name());
    }
    make_target(st);
    snprintf(st->device, sizeof st->device, "%s", st->info.name);
    /* The run workers check at the same time: they share the cores. */
    st->check_threads = amk__check_threads_for(st->ndev);

    rc = amk__compiler_create(opts, &st->cc, d);
    if (rc != AMK_OK) {
        gpu_clear(st);
        return rc;
    }
    char list[256];
    index_list(st, list, sizeof list);
    amk_log(AMK_LOG_INFO, "gpu: %d device%s (%s) %s (%s, %d SMs, L2 %lld MiB), target %s, run "
            "timeout %.0f s", st->ndev, st->ndev == 1 ? "" : "s", list, st->info.name,
            st->info.arch, st->info.sm_count, (long long)(st->info.l2_bytes >> 20),
            st->target.name, st->run_timeout_s);
    return AMK_OK;
}

/* Every job of the next batch gets the latency to beat (bench.c screening). */
static void gpu_set_incumbent(void *state, double incumbent_us)
{
    ((gpu_state *)state)->bench.beat_us = incumbent_us;
}

/* A GPU runs one config at a time, but a config spends most of its time before that in
 * the compile pool (NVRTC: ~0.7 s for a GEMM, against tens of ms on the device). With only
 * ndev configs per batch, compiling and running alternate instead of overlapping; with a
 * few per device in flight, the next configs compile while one runs. The batch waits for its
 * slowest compile, so a batch should fill the pool: 8 per device gives the default batch of
 * 16 on one GPU, one wave of a 16-core host's compiles (on the H100, 72 cold gemm_wgmma
 * configs took 12.5 s at batch 8, half the compile workers idle, and 10.1 s at 16). More
 * than the pool can compile at once only lengthens the batch, and fewer than one per device
 * would leave a GPU idle. */
int amk__gpu_parallelism_for(int ndev, int jobs)
{
    if (ndev < 1)
        ndev = 1;
    int n = ndev * AMK__GPU_CONFIGS_PER_DEVICE;
    if (jobs > 0 && n > jobs)
        n = jobs;
    return n < ndev ? ndev : n;
}

static int gpu_parallelism(void *state)
{
    gpu_state *st = state;
    return amk__gpu_parallelism_for(st->ndev, amk__worker_pool_size(amk__compiler_pool(st->cc)));
}

/* Where a compile failed: status and the compiler's words. */
static void compile_verdict(const amk_code *code, amk_verdict *v)
{
    v->status = code->status;
    v->correct = -1;
    v->compile_ms = code->compile_ms;
    v->cache_hit = code->cache_hit;
    snprintf(v->reason, sizeof v->reason, "%s", code->reason);
    snprintf(v->notes, sizeof v->notes, "%s", code->notes);
}

/* The name a kernel has in its code object: the compiler's lowered name of the spec's entry
 * (a plain C++ __global__ function is mangled), kept with the code object. */
static void use_lowered_entry(amk__run_kernel *k, const amk_code *const *codes, int n)
{
    if (k->code >= 0 && k->code < n && codes[k->code]->entry[0])
        snprintf(k->entry, sizeof k->entry, "%s", codes[k->code]->entry);
}

/* The run job of a compiled config. On failure s->job stays NULL and s->setup says why. */
static void prepare_run(gpu_state *st, const amk_config *c, const amk_code *cand,
                        const amk_code *ref, run_slot *s)
{
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(s->setup, sizeof s->setup, "gpu backend: out of memory");
        return;
    }
    amk_diag d = {0};
    j->op = AMK__RUN_OP_EVAL;
    j->device = -1; /* the device thread that takes it fills in its own */
    j->bench = st->bench;
    j->ncodes = 2;
    j->codes[0] = (amk__run_code){cand->image, cand->size, amk_hash64(cand->image, cand->size)};
    j->codes[1] = (amk__run_code){ref->image, ref->size, amk_hash64(ref->image, ref->size)};
    if (build_cases(st, c, j, &d) != AMK_OK) {
        snprintf(s->setup, sizeof s->setup, "cannot set up the run: %s", d.msg);
        free(j);
        return;
    }
    const amk_code *codes[2] = {cand, ref};
    for (int k = 0; k < j->ncases; k++) {
        use_lowered_entry(&j->cases[k].cand, codes, 2);
        use_lowered_entry(&j->cases[k].ref, codes, 2);
    }
    j->seed = st->seed;
    j->check_threads = st->check_threads;
    s->job = j;
}

/* The verdict of a config that reached the run stage. */
static void run_verdict(const amk_config *c, const amk_code *cand, const amk_code *ref,
                        const run_slot *s, amk_verdict *v)
{
    v->compile_ms = cand->compile_ms;
    v->cache_hit = cand->cache_hit;
    v->correct = -1;
    if (ref->status != AMK_STATUS_OK) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "cannot check: the spec's reference kernel did "
                 "not compile (%s): %s", amk_status_name(ref->status), ref->reason);
        return;
    }
    if (!s->job) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "%s", s->setup);
        return;
    }
    const amk__run_job *j = s->job;
    const amk__run_result *res = &s->res;
    v->seed = j->seed;
    v->status = (amk_status)res->status;
    v->correct = res->checked == j->ncases ? 1 : 0;
    snprintf(v->reason, sizeof v->reason, "%s", res->reason);
    snprintf(v->regime, sizeof v->regime, "%s", res->regime);
    v->notes[0] = '\0';
    char shapes[200];
    snprintf(shapes, sizeof shapes, "gpu %d", s->gpu); /* which device ran it */
    append(v->notes, sizeof v->notes, shapes);
    snprintf(shapes, sizeof shapes, "checked %d/%d shape%s", res->checked, j->ncases,
             j->ncases == 1 ? "" : "s");
    for (int k = 1; k < j->ncases && k < 3; k++) {
        size_t n = strlen(shapes);
        snprintf(shapes + n, sizeof shapes - n, "%s%s", k == 1 ? " (+" : ", +",
                 j->cases[k].label);
    }
    if (j->ncases > 1)
        strncat(shapes, ")", sizeof shapes - strlen(shapes) - 1);
    append(v->notes, sizeof v->notes, shapes);
    append(v->notes, sizeof v->notes, res->notes);
    amk_spec_reference rj;
    amk_spec_get_reference(c->spec, &rj);
    if (rj.default_config)
        append(v->notes, sizeof v->notes, "reference: the default config's output (no "
               "independent reference: weaker, a config is only checked to agree with the "
               "default)");
    append(v->notes, sizeof v->notes, cand->notes);
    if (res->status == AMK_STATUS_OK && res->nstats >= 1 && isfinite(res->stats[0].median_us)) {
        v->latency_us = res->stats[0].median_us;
        v->latency_kind = AMK_LAT_MEASURED;
        v->spread = res->stats[0].spread;
    } else if (res->status == AMK_STATUS_OK) {
        v->status = AMK_STATUS_RUN_ERROR;
        snprintf(v->reason, sizeof v->reason, "the run worker reported no measurement");
    }
}

/* One batch on its way through the compile pool and the devices. */
typedef struct batch {
    gpu_state *st;
    const amk_config *const *cfgs;
    size_t n;
    const amk_code *codes;     /* filled by the compile service */
    const int *unit_of, *ref_of;
    /* Who waits for a unit, so that a final unit costs its own configs, not a scan: */
    const int *cand_cfg;       /* per unit: the config whose candidate it is, -1 */
    const int *ref_first;      /* per unit: the first config checked against it, -1 */
    const int *ref_next;       /* per config: the next one with the same reference, -1 */
    unsigned char *final;      /* per unit: its code is final */
    unsigned char *handled;    /* per config: queued, or nothing to run */
    run_slot *slots;           /* per config */
    size_t queued;
} batch;

/* Config i goes to the devices' queue once its candidate and reference are both final
 * and compiled (once). */
static void try_queue(batch *b, int i)
{
    gpu_state *st = b->st;
    int cu = b->unit_of[i], ru = b->ref_of[i];
    if (b->handled[i] || cu < 0 || ru < 0 || !b->final[cu] || !b->final[ru])
        return;
    b->handled[i] = 1;
    if (b->codes[cu].status != AMK_STATUS_OK || b->codes[ru].status != AMK_STATUS_OK)
        return;
    run_slot *s = &b->slots[i];
    prepare_run(st, b->cfgs[i], &b->codes[cu], &b->codes[ru], s);
    if (!s->job)
        return;
    pthread_mutex_lock(&st->mu);
    s->next = NULL;
    if (st->tail)
        st->tail->next = s;
    else
        st->head = s;
    st->tail = s;
    b->queued++;
    pthread_cond_signal(&st->work);
    pthread_mutex_unlock(&st->mu);
}

/* Compile callback (calling thread): unit u is final. The configs waiting for it (its
 * own config for a candidate, every config checked against it for a reference, in
 * proposal order) go to the devices' queue when their other unit is final too. */
static void unit_final(size_t u, void *ud)
{
    batch *b = ud;
    b->final[u] = 1;
    if (b->cand_cfg[u] >= 0)
        try_queue(b, b->cand_cfg[u]);
    for (int i = b->ref_first[u]; i >= 0; i = b->ref_next[i])
        try_queue(b, i);
}

static int gpu_evaluate(void *state, const amk_config *const *cfgs, size_t n, amk_verdict *out)
{
    gpu_state *st = state;
    amk_compile_unit *units = calloc(2 * n + 1, sizeof *units);
    amk_code *codes = calloc(2 * n + 1, sizeof *codes);
    int *unit_of = malloc((n + 1) * sizeof *unit_of); /* candidate unit of config i, -1 */
    int *ref_of = malloc((n + 1) * sizeof *ref_of);   /* reference unit of config i, -1 */
    int *cand_cfg = malloc((2 * n + 1) * sizeof *cand_cfg);
    int *ref_first = malloc((2 * n + 1) * sizeof *ref_first);
    int *ref_next = malloc((n + 1) * sizeof *ref_next);
    unsigned char *final = calloc(2 * n + 1, 1);
    unsigned char *handled = calloc(n + 1, 1);
    run_slot *slots = calloc(n + 1, sizeof *slots);
    size_t nu = 0;
    int rc = AMK_OK;
    if (!units || !codes || !unit_of || !ref_of || !cand_cfg || !ref_first || !ref_next ||
        !final || !handled || !slots) {
        rc = AMK_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        amk_verdict *v = &out[i];
        amk_diag d = {0};
        unit_of[i] = ref_of[i] = -1;
        snprintf(v->device, sizeof v->device, "%s", st->device);
        if (amk__compile_unit_config(cfgs[i], st->info.arch, &units[nu], &d) != AMK_OK) {
            v->status = AMK_STATUS_COMPILE_ERROR;
            v->correct = -1;
            snprintf(v->reason, sizeof v->reason, "cannot build the source: %s", d.msg);
            continue;
        }
        unit_of[i] = (int)nu++;
        /* One reference unit per (spec, dtype) of the batch. */
        for (size_t k = 0; k < i && ref_of[i] < 0; k++)
            if (ref_of[k] >= 0 && cfgs[k]->spec == cfgs[i]->spec &&
                cfgs[k]->shape.dtype == cfgs[i]->shape.dtype)
                ref_of[i] = ref_of[k];
        if (ref_of[i] < 0) {
            if (amk__compile_unit_reference(cfgs[i], st->info.arch, &units[nu], &d) == AMK_OK) {
                ref_of[i] = (int)nu++;
            } else {
                v->status = AMK_STATUS_RUN_ERROR;
                v->correct = -1;
                snprintf(v->reason, sizeof v->reason, "cannot check: cannot build the "
                         "reference source: %s", d.msg);
                amk__compile_unit_clear(&units[unit_of[i]]);
                unit_of[i] = -1;
                nu--;
                continue;
            }
        }
    }
    for (size_t k = 0; k < nu; k++)
        cand_cfg[k] = ref_first[k] = -1;
    for (size_t i = n; i-- > 0;) { /* backwards: the lists come out in proposal order */
        ref_next[i] = -1;
        if (unit_of[i] < 0)
            continue;
        cand_cfg[unit_of[i]] = (int)i;
        ref_next[i] = ref_first[ref_of[i]];
        ref_first[ref_of[i]] = (int)i;
    }
    if (nu) {
        batch b = {.st = st, .cfgs = cfgs, .n = n, .codes = codes, .unit_of = unit_of,
                   .ref_of = ref_of, .cand_cfg = cand_cfg, .ref_first = ref_first,
                   .ref_next = ref_next, .final = final, .handled = handled, .slots = slots};
        amk_diag d = {0};
        pthread_mutex_lock(&st->mu);
        st->finished = 0;
        pthread_mutex_unlock(&st->mu);
        rc = amk__compiler_run_cb(st->cc, units, nu, codes, unit_final, &b, &d);
        /* Whatever happened, the code objects stay until every queued run is over. */
        pthread_mutex_lock(&st->mu);
        while (st->finished < b.queued)
            pthread_cond_wait(&st->done, &st->mu);
        pthread_mutex_unlock(&st->mu);
        if (rc != AMK_OK) {
            amk_log(AMK_LOG_ERROR, "gpu: compile service failed: %s", d.msg);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (unit_of[i] < 0)
            continue;
        const amk_code *cand = &codes[unit_of[i]];
        if (cand->status != AMK_STATUS_OK)
            compile_verdict(cand, &out[i]);
        else
            run_verdict(cfgs[i], cand, &codes[ref_of[i]], &slots[i], &out[i]);
    }
done:
    for (size_t k = 0; k < nu; k++) {
        amk__compile_unit_clear(&units[k]);
        amk__code_clear(&codes[k]);
    }
    for (size_t i = 0; slots && i < n; i++)
        free(slots[i].job);
    free(units);
    free(codes);
    free(unit_of);
    free(ref_of);
    free(cand_cfg);
    free(ref_first);
    free(ref_next);
    free(final);
    free(handled);
    free(slots);
    return rc;
}

static const amk_target *gpu_target(void *state)
{
    return &((gpu_state *)state)->target;
}

static const char *gpu_device(void *state)
{
    return ((gpu_state *)state)->device;
}

const amk__gpu_info *amk__gpu_backend_info(void *state)
{
    return &((gpu_state *)state)->info;
}

int amk__gpu_remeasure(void *state, const amk_config *a, const amk_config *b,
                       double lat_us[2], double spread[2], amk_diag *d)
{
    gpu_state *st = state;
    amk_compile_unit units[2];
    amk_code codes[2];
    int rc = AMK_OK;
    memset(units, 0, sizeof units);
    memset(codes, 0, sizeof codes);
    lat_us[0] = lat_us[1] = spread[0] = spread[1] = NAN;
    if (a->spec != b->spec || a->shape.dtype != b->shape.dtype ||
        memcmp(a->shape.dims, b->shape.dims, sizeof a->shape.dims) != 0)
        return amk_diag_set(d, AMK_EINVAL, "remeasure: configs of different kernels or shapes");
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j)
        return amk_diag_set(d, AMK_ENOMEM, "remeasure: out of memory");
    if ((rc = amk__compile_unit_config(a, st->info.arch, &units[0], d)) != AMK_OK ||
        (rc = amk__compile_unit_config(b, st->info.arch, &units[1], d)) != AMK_OK ||
        (rc = amk__compiler_run(st->cc, units, 2, codes, d)) != AMK_OK)
        goto done;
    for (int i = 0; i < 2; i++)
        if (codes[i].status != AMK_STATUS_OK) {
            rc = amk_diag_set(d, AMK_EBACKEND, "remeasure: config %c: %s: %s", 'a' + i,
                              amk_status_name(codes[i].status), codes[i].reason);
            goto done;
        }
    j->op = AMK__RUN_OP_REMEASURE;
    j->device = st->devs[0]->index; /* re-measures stay on one device */
    j->bench = st->bench;
    /* A re-measure decides a close call: no screening, and both medians pinned to a 95% CI
     * of +-0.25%, a quarter of the default keep margin, or the full window. It used to run
     * the full window always, and 31 of the 72 trials of the H100 race on gemm_hopper were
     * close calls, each waiting for it in the keep step. */
    j->bench.ci_rel = 0.0025;
    j->bench.beat_us = NAN;
    j->ncodes = 2;
    for (int i = 0; i < 2; i++)
        j->codes[i] = (amk__run_code){codes[i].image, codes[i].size,
                                      amk_hash64(codes[i].image, codes[i].size)};
    amk__run_case tmp;
    if ((rc = build_case(a, &st->target.limits, 0, -1, &j->cases[0], d)) != AMK_OK ||
        (rc = build_case(b, &st->target.limits, 1, -1, &tmp, d)) != AMK_OK)
        goto done;
    j->cases[0].bench = 1;
    j->ncases = 1;
    /* b's tensor maps (its own boxes) follow a's in the case; its arguments follow them.
     * With a's maps, b's pipeline waited for boxes it does not load (gemm_hopper: a
     * run_timeout on every re-measure). */
    amk__run_case *c0 = &j->cases[0];
    if (c0->nmaps + tmp.nmaps > AMK__RUN_MAX_TMAPS) {
        rc = amk_diag_set(d, AMK_EINVAL, "remeasure: more than %d tensor maps",
                          AMK__RUN_MAX_TMAPS);
        goto done;
    }
    for (int i = 0; i < tmp.cand.nargs; i++)
        if (tmp.cand.args[i].buf < -1)
            tmp.cand.args[i].buf =
                AMK__RUN_ARG_TMAP(c0->nmaps + AMK__RUN_ARG_TMAP_INDEX(tmp.cand.args[i].buf));
    for (int m = 0; m < tmp.nmaps; m++)
        c0->maps[c0->nmaps++] = tmp.maps[m];
    j->other = tmp.cand;
    const amk_code *cp[2] = {&codes[0], &codes[1]};
    use_lowered_entry(&j->cases[0].cand, cp, 2);
    use_lowered_entry(&j->other, cp, 2);
    j->seed = st->seed;
    j->check_threads = st->check_threads;
    amk__run_result res;
    send_job(st->devs[0]->run, st->run_timeout_s, j, &res);
    if (res.status != AMK_STATUS_OK || res.nstats != 2) {
        rc = amk_diag_set(d, res.status == AMK_STATUS_RUN_TIMEOUT ? AMK_ETIMEDOUT : AMK_EBACKEND,
                          "remeasure: %s: %s", amk_status_name((amk_status)res.status),
                          res.reason);
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        lat_us[i] = res.stats[i].median_us;
        spread[i] = res.stats[i].spread;
    }
done:
    for (int i = 0; i < 2; i++) {
        amk__compile_unit_clear(&units[i]);
        amk__code_clear(&codes[i]);
    }
    free(j);
    return rc;
}

const amk_backend_type amk_backend_gpu = {
    .api_version = 1,
    .name = "gpu",
    .state_size = sizeof(gpu_state),
    .init = gpu_init,
    .evaluate = gpu_evaluate,
    .target = gpu_target,
    .device = gpu_device,
    .clear = gpu_clear,
    .remeasure = amk__gpu_remeasure,
    .parallelism = gpu_parallelism,
    .set_incumbent = gpu_set_incumbent,
};
