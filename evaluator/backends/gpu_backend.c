/* The `gpu` backend (parent side): devices and the job protocol. init starts one run worker
 * per GPU (a long-lived child that owns that device's context), each fed by a thread of this
 * process, asks every one what device answers (all must be one model), matches a target,
 * then starts the shared compile pool. The device threads take run jobs from the backend's
 * queue and send them to their run worker; hangs, crashes and sticky errors come back as
 * run_timeout / run_error and that worker is respawned. Building the jobs, batching through
 * the compile pool and the verdicts are in evaluator/backends/gpu_pipeline.c.
 * This process never calls the GPU runtime nor the runtime compiler, and includes no GPU
 * header: the run worker (evaluator/gpu/) does both. */
#include "compile/compile_int.h"
#include "evaluator_int.h"
#include "gpu_backend_int.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RUN_TIMEOUT_S 30.0
#define QUERY_TIMEOUT_S 90.0

/* ---------- helpers --------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
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

/* ---------- running a job --------------------------------------------------------------- */

/* Sends a job to a run worker (gpu_backend_int.h). */
void amk__gpu_send_job(amk_worker_pool *run, double timeout_s, const amk__run_job *j,
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

/* The backend's slot_seconds: the compile cap (a parallelism's worth compiles at once) plus,
 * for each of the at most AMK__GPU_CONFIGS_PER_DEVICE configs a device then runs back to back,
 * the run timeout (opts->run_timeout_s, else $AMK_RUN_TIMEOUT, else 30 s) of the check and of
 * the benchmark. */
static double gpu_slot_seconds(const amk_backend_opts *opts)
{
    return amk__compile_cap_s(opts) + AMK__GPU_CONFIGS_PER_DEVICE * 2 * run_timeout_s(opts);
}

/* Copies the matched target and overrides its limits with what the device reports. */
static void make_target(amk__gpu_state *st)
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
static void query_device(amk__gpu_dev *g, amk__gpu_info *info)
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
    amk__gpu_dev *g = arg;
    amk__gpu_state *st = g->st;
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
        amk__run_slot *s = st->head;
        st->head = s->next;
        if (!st->head)
            st->tail = NULL;
        pthread_mutex_unlock(&st->mu);
        s->job->device = g->index;
        s->gpu = g->index;
        double t0 = amk_now_s();
        amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: gpu %d runs a job", t0, g->index);
        amk__gpu_send_job(g->run, st->run_timeout_s, s->job, &s->res);
        s->run_s = amk_now_s() - t0;
        amk_log(AMK_LOG_DEBUG, "gpu: %.3f s: gpu %d done: %s", t0 + s->run_s, g->index,
                s->res.profile);
        pthread_mutex_lock(&st->mu);
        st->finished++;
        pthread_cond_broadcast(&st->done);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* Starts the run worker of device `index` (from the main thread, before its thread). */
static int add_device(amk__gpu_state *st, int index, amk_diag *d)
{
    if (st->ndev >= AMK__GPU_MAX_DEVICES)
        return amk_diag_set(d, AMK_EINVAL, "gpu backend: at most %d devices", AMK__GPU_MAX_DEVICES);
    amk__gpu_dev *g = calloc(1, sizeof *g);
    if (!g)
        return amk_diag_set(d, AMK_ENOMEM, "gpu backend: out of memory");
    g->st = st;
    g->index = index;
    amk_worker_opts wo = {0};
    wo.name = "run";
    wo.n_workers = 1;
    wo.child_idle = amk__run_worker_idle;
    int rc = amk__worker_pool_create(&wo, amk__run_worker_handle, &g->run, d);
    if (rc != AMK_OK) {
        free(g);
        return rc;
    }
    st->devs[st->ndev++] = g;
    return AMK_OK;
}

/* The thread of g, with every signal blocked (signals are the main thread's business). */
static int start_thread(amk__gpu_dev *g, amk_diag *d)
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
static void drop_device(amk__gpu_state *st, amk__gpu_dev *g)
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
    const amk__gpu_dev *x = *(amk__gpu_dev *const *)a, *y = *(amk__gpu_dev *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

/* "devices 0,2: NVIDIA H100 80GB HBM3 (sm_90); device 1: NVIDIA A100-SXM4-80GB (sm_80)" */
static void describe_models(const amk__gpu_state *st, char *out, size_t cap)
{
    int seen[AMK__GPU_MAX_DEVICES] = {0};
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
static void index_list(const amk__gpu_state *st, char *out, size_t cap)
{
    out[0] = '\0';
    for (int k = 0; k < st->ndev; k++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%d", k ? "," : "", st->devs[k]->index);
    }
}

static int sync_init(amk__gpu_state *st, amk_diag *d)
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
static void close_devices(amk__gpu_state *st)
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
static int open_devices(amk__gpu_state *st, const int *want, int nwant, int first, int any_model,
                        amk_diag *d)
{
    int rc = sync_init(st, d);
    if (rc != AMK_OK)
        return rc;
    if (want) {
        if (nwant < 1 || nwant > AMK__GPU_MAX_DEVICES)
            return amk_diag_set(d, AMK_EINVAL, "gpu backend: 1 to %d devices, not %d",
                                AMK__GPU_MAX_DEVICES, nwant);
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
        amk__gpu_dev *g = st->devs[0];
        query_device(g, &g->info);
        g->asked = 1;
        if (!g->info.ok)
            return amk_diag_set(d, AMK_ENODEV, "gpu backend: no GPU device answers: %s",
                                g->info.error);
        int count = g->info.count;
        if (count > AMK__GPU_MAX_DEVICES) {
            amk_log(AMK_LOG_WARN, "gpu: %d devices visible; using the first %d", count,
                    AMK__GPU_MAX_DEVICES);
            count = AMK__GPU_MAX_DEVICES;
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
            amk__gpu_dev *g = st->devs[k];
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
    amk__gpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return amk_diag_set(d, AMK_ENOMEM, "gpu devices: out of memory");
    double t0 = amk_now_s();
    int rc = open_devices(st, NULL, 0, 0, 1, d);
    /* a run worker per device and a driver start-up each: worth seeing in a profile */
    amk_log(AMK_LOG_DEBUG, "gpu: device query took %.3f s (%s)", amk_now_s() - t0,
            rc == AMK_OK ? "answered" : "no answer");
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
    amk__gpu_state *st = state;
    amk__compiler_free(st->cc);
    st->cc = NULL;
    close_devices(st);
}

static int gpu_init(void *state, const amk_backend_opts *opts, amk_diag *d)
{
    amk__gpu_state *st = state;
    amk_backend_opts dflt = {0};
    if (!opts)
        opts = &dflt;
    st->run_timeout_s = run_timeout_s(opts);
    if (opts->outputs_dir && strlen(opts->outputs_dir) >= sizeof st->outputs_dir)
        return amk_diag_set(d, AMK_EINVAL, "outputs_dir '%s': at most %zu bytes",
                            opts->outputs_dir, sizeof st->outputs_dir - 1);
    snprintf(st->outputs_dir, sizeof st->outputs_dir, "%s",
             opts->outputs_dir ? opts->outputs_dir : "");
    amk__bench_opts_default(&st->bench);
    if (opts->regime) {
        int regime = amk__regime_from_name(opts->regime);
        if (regime < 0)
            return amk_diag_set(d, AMK_EINVAL, "unknown regime '%s' (sustained or burst)",
                                opts->regime);
        st->bench.regime = regime;
    }
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
    if (opts->objective != AMK_OBJ_TIME) {
        /* Energy is measured, never guessed: without the counter, nothing is evaluated. */
        for (int k = 0; k < st->ndev; k++)
            if (!st->devs[k]->info.energy_counter) {
                char why[200];
                int idx = st->devs[k]->index;
                snprintf(why, sizeof why, "%s", st->devs[k]->info.energy_why);
                gpu_clear(st);
                return amk_diag_set(d, AMK_ENOENERGY, "gpu backend: --objective %s needs the "
                                    "energy counter of device %d: %s",
                                    amk_objective_name(opts->objective), idx, why);
            }
        st->bench.energy_window_s = amk__energy_window_s();
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
    ((amk__gpu_state *)state)->bench.beat_us = incumbent_us;
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
    amk__gpu_state *st = state;
    return amk__gpu_parallelism_for(st->ndev, amk__worker_pool_size(amk__compiler_pool(st->cc)));
}

static const amk_target *gpu_target(void *state)
{
    return &((amk__gpu_state *)state)->target;
}

static const char *gpu_device(void *state)
{
    return ((amk__gpu_state *)state)->device;
}

const amk_backend_type amk_backend_gpu = {
    .api_version = 1,
    .name = "gpu",
    .state_size = sizeof(amk__gpu_state),
    .init = gpu_init,
    .evaluate = amk__gpu_evaluate,
    .target = gpu_target,
    .device = gpu_device,
    .clear = gpu_clear,
    .remeasure = amk__gpu_remeasure,
    .parallelism = gpu_parallelism,
    .set_incumbent = gpu_set_incumbent,
    .slot_seconds = gpu_slot_seconds,
    .devices = amk_gpu_devices,
};