/* The run worker: a long-lived child process, one per GPU, and the only process of amk that
 * creates a GPU context. It answers a device query, and runs jobs: load code objects (cached
 * by content hash), fill the spec's buffers from the job's seed and run the reference (or
 * find both in the reference cache), poison and run the candidate, compare on the host
 * (../numeric/check.c), and time the benchmarked shape
 * (bench.c). A sticky error (illegal address, ...) makes it answer and then exit, so the pool
 * respawns a fresh context; a hang is the parent's to kill. This file: the worker's state,
 * device query, code objects, job dispatch; run_eval.c: buffers, check, benchmark; the job
 * wire format: ../gpu_wire.c. */
#include "runtime_int.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The process's state (runtime_int.h). */
amk__run_worker amk__rw;

void amk__rw_fail(amk__run_ctx *x, amk_status st, const char *fmt, ...)
{
    va_list ap;
    x->res->status = st;
    va_start(ap, fmt);
    vsnprintf(x->res->reason, sizeof x->res->reason, fmt, ap);
    va_end(ap);
}

void amk__rw_note(amk__run_ctx *x, const char *fmt, ...)
{
    char *n = x->res->notes;
    size_t len = strnlen(n, sizeof x->res->notes);
    if (len + 3 >= sizeof x->res->notes)
        return;
    if (len)
        len += (size_t)snprintf(n + len, sizeof x->res->notes - len, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n + len, sizeof x->res->notes - len, fmt, ap);
    va_end(ap);
}

void amk__rw_stage(const char *label, const char *what)
{
    fprintf(stderr, "amk run worker: %s: %s\n", label, what);
    fflush(stderr);
}

/* After an error: is the context still usable? A sticky error (illegal address, launch
 * failure, ...) keeps failing every later call; a launch refused for its configuration
 * does not. */
int amk__rw_context_broken(void)
{
    (void)hipGetLastError();
    if (hipDeviceSynchronize() != hipSuccess)
        return 1;
    return hipGetLastError() != hipSuccess;
}

const char *amk__rw_errtext(hipError_t e, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s (%s)", hipGetErrorString(e), hipGetErrorName(e));
    return buf;
}


/* "hipGetDeviceCount(&n)" -> "cudaGetDeviceCount" on NVIDIA (the name the user's runtime
 * documents), "hipGetDeviceCount" on AMD. */
static const char *api_name(const char *call, char out[64])
{
    int n = (int)strcspn(call, "(");
    if (strncmp(call, "hip", 3) == 0 && strcmp(amk__rtc_vendor(), "nvidia") == 0)
        snprintf(out, 64, "cuda%.*s", n - 3, call + 3);
    else
        snprintf(out, 64, "%.*s", n, call);
    return out;
}

int amk__gpu_node_present(const char *devdir, const char *vendor, char *out, size_t cap)
{
    char p[512];
    if (vendor && !strcmp(vendor, "amd")) {
        snprintf(p, sizeof p, "%s/kfd", devdir);
        if (access(p, F_OK) == 0) {
            snprintf(out, cap, "%s", p);
            return 1;
        }
        return 0;
    }
    /* nvidiactl exists wherever the driver is loaded; only nvidiaN is a GPU. */
    DIR *dir = opendir(devdir);
    if (!dir)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(dir)) != NULL;) {
        const char *n = e->d_name;
        if (!strncmp(n, "nvidia", 6) && n[6] >= '0' && n[6] <= '9' &&
            strspn(n + 6, "0123456789") == strlen(n + 6)) {
            snprintf(out, cap, "%s/%s", devdir, n);
            found = 1;
        }
    }
    closedir(dir);
    return found;
}

/* When the runtime finds no usable GPU: with no device node at all there is no GPU to find
 * (CUDA's runtime then blames an insufficient driver, which misleads, so its words are left
 * out); with one, the runtime's own message (a driver too old, a device in use, ...) is the
 * reason. */
static void no_gpu_reason(amk__gpu_info *info, const char *runtime_says)
{
    char node[600];
    const char *vendor = amk__rtc_vendor();
    if (amk__gpu_node_present("/dev", vendor, node, sizeof node))
        snprintf(info->error, sizeof info->error, "%s", runtime_says);
    else
        snprintf(info->error, sizeof info->error, "no GPU is present (no %s device node)",
                 strcmp(vendor, "amd") ? "/dev/nvidia[0-9]" : "/dev/kfd");
}

/* Fills info from the runtime; on failure info->ok = 0 and error holds the call and the
 * runtime's own message (no driver, no device, ...). */
static void query_device(int dev, amk__gpu_info *info)
{
    char eb[256];
    hipError_t e;
    memset(info, 0, sizeof *info);
    info->device = dev;
/* The runtime's own message, prefixed with the function's name (without arguments). */
#define Q(call)                                                                             \
    do {                                                                                   \
        if ((e = (call)) != hipSuccess) {                                                  \
            char nm_[64];                                                                  \
            snprintf(info->error, sizeof info->error, "%s: %s", api_name(#call, nm_),      \
                     amk__rw_errtext(e, eb, sizeof eb));                                           \
            return;                                                                        \
        }                                                                                  \
    } while (0)
    char says[300], nm[64];
    const char *call = "hipRuntimeGetVersion()";
    e = hipRuntimeGetVersion(&info->runtime_version);
    if (e == hipSuccess) {
        if (hipDriverGetVersion(&info->driver_version) != hipSuccess)
            info->driver_version = 0;
        call = "hipGetDeviceCount()";
        e = hipGetDeviceCount(&info->count);
    }
    if (e != hipSuccess || info->count < 1) {
        if (e != hipSuccess)
            snprintf(says, sizeof says, "%s: %s", api_name(call, nm),
                     amk__rw_errtext(e, eb, sizeof eb));
        else
            snprintf(says, sizeof says, "the runtime reports no GPU device");
        no_gpu_reason(info, says);
        return;
    }
    if (dev < 0 || dev >= info->count) {
        snprintf(info->error, sizeof info->error, "device %d does not exist (%d found)", dev,
                 info->count);
        return;
    }
    Q(hipSetDevice(dev));
    hipDeviceProp_t props;
    Q(hipGetDeviceProperties(&props, dev));
    snprintf(info->name, sizeof info->name, "%s", props.name);
    Q(amk__gpu_arch_name(dev, info->arch, sizeof info->arch));
    int v = 0;
#define A(field, attr)                                                                      \
    do {                                                                                   \
        Q(hipDeviceGetAttribute(&v, attr, dev));                                           \
        info->field = v;                                                                   \
    } while (0)
    A(sm_count, hipDeviceAttributeMultiprocessorCount);
    A(warp, hipDeviceAttributeWarpSize);
    A(max_threads, hipDeviceAttributeMaxThreadsPerBlock);
    A(max_smem, hipDeviceAttributeMaxSharedMemoryPerBlock);
    A(max_smem_optin, hipDeviceAttributeSharedMemPerBlockOptin);
    A(smem_per_sm, hipDeviceAttributeSharedMemPerMultiprocessor);
    A(regs_per_block, hipDeviceAttributeMaxRegistersPerBlock);
    A(regs_per_sm, hipDeviceAttributeMaxRegistersPerMultiprocessor);
    A(max_blocks_per_sm, hipDeviceAttributeMaxBlocksPerMultiProcessor);
    A(max_threads_per_sm, hipDeviceAttributeMaxThreadsPerMultiProcessor);
    A(max_grid_x, hipDeviceAttributeMaxGridDimX);
    A(max_grid_yz, hipDeviceAttributeMaxGridDimY);
    A(l2_bytes, hipDeviceAttributeL2CacheSize);
    A(clock_khz, hipDeviceAttributeClockRate);
    A(mem_clock_khz, hipDeviceAttributeMemoryClockRate);
    A(bus_width, hipDeviceAttributeMemoryBusWidth);
#undef A
    if (info->max_smem_optin < info->max_smem)
        info->max_smem_optin = info->max_smem; /* AMD reports 0: no opt-in */
    info->total_mem = (int64_t)props.totalGlobalMem;
    /* Create the context now: a device that cannot is no device, and the first job then
     * does not pay for it. */
    Q(hipFree(NULL));
    size_t fr = 0, tot = 0;
    Q(hipMemGetInfo(&fr, &tot));
#undef Q
    info->ok = 1;
    /* The energy counter, for objectives that need it: known before any work is done. */
    amk__obs_sample smp;
    if (!amk__obs_open(dev, info->energy_why, sizeof info->energy_why))
        return;
    amk__obs_read(&smp);
    info->energy_counter = isfinite(smp.energy_j);
    if (!info->energy_counter)
        snprintf(info->energy_why, sizeof info->energy_why, "the management library reads no "
                 "energy counter on this device");
}

static int ensure_ready(int dev, amk__run_ctx *x)
{
    char eb[256];
    if (amk__rw.ready && amk__rw.device == dev)
        return 1;
    if (amk__rw.ready) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "run worker owns device %d, job asks for %d",
                     amk__rw.device, dev);
        return 0;
    }
    query_device(dev, &amk__rw.info);
    if (!amk__rw.info.ok) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "no usable GPU: %s", amk__rw.info.error);
        x->recycle = 1;
        return 0;
    }
    hipError_t e = hipStreamCreateWithFlags(&amk__rw.stream, hipStreamNonBlocking);
    if (e != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "hipStreamCreateWithFlags: %s",
                     amk__rw_errtext(e, eb, sizeof eb));
        x->recycle = 1;
        return 0;
    }
    amk__rw.ready = 1;
    amk__rw.device = dev;
    return 1;
}

/* Loads (or finds) the module of a code object. Unloads the least recently used one when
 * the cache is full. */
hipError_t amk__rw_module(const amk__run_code *code, hipModule_t *out)
{
    for (int i = 0; i < amk__rw.nmods; i++)
        if (amk__rw.mods[i].hash == code->hash && amk__rw.mods[i].size == code->size) {
            amk__rw.mods[i].used = ++amk__rw.tick;
            *out = amk__rw.mods[i].mod;
            return hipSuccess;
        }
    hipModule_t m;
    hipError_t e = hipModuleLoadData(&m, code->image);
    if (e != hipSuccess)
        return e;
    int slot = amk__rw.nmods;
    if (amk__rw.nmods == MOD_CACHE) {
        slot = 0;
        for (int i = 1; i < amk__rw.nmods; i++)
            if (amk__rw.mods[i].used < amk__rw.mods[slot].used)
                slot = i;
        (void)hipModuleUnload(amk__rw.mods[slot].mod);
    } else {
        amk__rw.nmods++;
    }
    amk__rw.mods[slot].hash = code->hash;
    amk__rw.mods[slot].size = code->size;
    amk__rw.mods[slot].mod = m;
    amk__rw.mods[slot].used = ++amk__rw.tick;
    *out = m;
    return hipSuccess;
}

/* The most dynamic shared memory any kernel of the job asks of k's function (same code
 * object and entry). The opt-in is a property of the function, not of a launch: the cases of
 * a job share one function but may size their shared memory by their own shape, so setting
 * it per case would leave it at the last case's size, too small for a larger one. */
static int64_t job_shared_max(const amk__run_job *j, const amk__run_kernel *k)
{
    int64_t most = k->launch.shared_bytes;
    const amk__run_kernel *all[2 * AMK__RUN_MAX_CASES + 1];
    int n = 0;
    for (int ci = 0; ci < j->ncases; ci++) {
        all[n++] = &j->cases[ci].cand;
        all[n++] = &j->cases[ci].ref;
    }
    all[n++] = &j->other;
    for (int i = 0; i < n; i++)
        if (all[i]->code == k->code && strcmp(all[i]->entry, k->entry) == 0 &&
            all[i]->launch.shared_bytes > most)
            most = all[i]->launch.shared_bytes;
    return most;
}

/* Resolves a kernel of the job: module, function, dynamic shared-memory opt-in. */
static int resolve(const amk__run_job *j, const amk__run_kernel *k, const char *what,
                   hipFunction_t *fn, amk__run_ctx *x)
{
    char eb[256];
    hipModule_t m;
    hipError_t e = amk__rw_module(&j->codes[k->code], &m);
    if (e != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: loading the code object: %s", what,
                     amk__rw_errtext(e, eb, sizeof eb));
        x->recycle = amk__rw_context_broken();
        return 0;
    }
    e = hipModuleGetFunction(fn, m, k->entry);
    if (e != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: no kernel '%s' in the code object: %s", what,
                     k->entry, amk__rw_errtext(e, eb, sizeof eb));
        x->recycle = amk__rw_context_broken();
        return 0;
    }
    if (k->launch.cluster[0] * k->launch.cluster[1] * k->launch.cluster[2] > 8 &&
        (e = amk__gpu_allow_large_clusters(*fn)) != hipSuccess) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR,
                     "%s: cannot allow a cluster of %lld x %lld x %lld blocks "
                     "(above the portable 8): %s",
                     what, (long long)k->launch.cluster[0], (long long)k->launch.cluster[1],
                     (long long)k->launch.cluster[2], amk__rw_errtext(e, eb, sizeof eb));
        x->recycle = amk__rw_context_broken();
        return 0;
    }
    const int64_t shared = job_shared_max(j, k);
    if (shared > 48 * 1024) {
        if (shared > INT_MAX || (e = amk__gpu_set_dynamic_shared(*fn, (int)shared)) != hipSuccess) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: cannot raise dynamic shared memory to %lld "
                         "bytes: %s", what, (long long)shared,
                         shared > INT_MAX ? "too large" : amk__rw_errtext(e, eb, sizeof eb));
            x->recycle = amk__rw_context_broken();
            return 0;
        }
    }
    return 1;
}

static int geometry_ok(const amk__run_kernel *k, const char *what, amk__run_ctx *x)
{
    for (int i = 0; i < 3; i++)
        if (k->launch.grid[i] < 1 || k->launch.grid[i] > UINT_MAX || k->launch.block[i] < 1 ||
            k->launch.block[i] > 1024) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR,
                         "%s: launch geometry out of range: grid %lld x %lld "
                         "x %lld, block %lld x %lld x %lld",
                         what, (long long)k->launch.grid[0], (long long)k->launch.grid[1],
                         (long long)k->launch.grid[2], (long long)k->launch.block[0],
                         (long long)k->launch.block[1], (long long)k->launch.block[2]);
            return 0;
        }
    if (k->launch.shared_bytes < 0 || k->launch.shared_bytes > UINT_MAX) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s: dynamic shared memory %lld out of range", what,
                     (long long)k->launch.shared_bytes);
        return 0;
    }
    for (int i = 0; i < 3; i++)
        if (k->launch.cluster[i] < 1 || k->launch.cluster[i] > 1024 ||
            k->launch.grid[i] % k->launch.cluster[i] != 0) {
            amk__rw_fail(x, AMK_STATUS_RUN_ERROR,
                         "%s: grid %lld x %lld x %lld is not a whole number of "
                         "clusters of %lld x %lld x %lld blocks",
                         what, (long long)k->launch.grid[0], (long long)k->launch.grid[1],
                         (long long)k->launch.grid[2], (long long)k->launch.cluster[0],
                         (long long)k->launch.cluster[1], (long long)k->launch.cluster[2]);
            return 0;
        }
    return 1;
}


static void run_job(const amk__run_job *j, amk__run_ctx *x)
{
    hipFunction_t fref[AMK__RUN_MAX_CASES], fcand[AMK__RUN_MAX_CASES], fother = NULL;
    int bench_ci = -1;
    amk__rw.jobs++;
    if (!ensure_ready(j->device, x))
        return;
    for (int ci = 0; ci < j->ncases; ci++) {
        const amk__run_case *c = &j->cases[ci];
        if (!geometry_ok(&c->cand, "candidate", x) ||
            (j->op == AMK__RUN_OP_EVAL && !geometry_ok(&c->ref, "reference", x)))
            return;
        if (!resolve(j, &c->cand, "candidate", &fcand[ci], x))
            return;
        if (j->op == AMK__RUN_OP_EVAL && !resolve(j, &c->ref, "reference", &fref[ci], x))
            return;
        if (c->bench && bench_ci < 0)
            bench_ci = ci;
    }
    if (j->op == AMK__RUN_OP_REMEASURE) {
        if (!geometry_ok(&j->other, "other", x) || !resolve(j, &j->other, "other", &fother, x))
            return;
        bench_ci = 0;
    }
    {
        int regs = 0, local = 0;
        if (amk__gpu_kernel_resources(fcand[0], &regs, &local) == hipSuccess)
            amk__rw_note(x, "regs/thread %d, local bytes/thread %d", regs, local);
        else
            (void)hipGetLastError();
    }
    if (j->op == AMK__RUN_OP_EVAL) {
        amk__rw_eval_job(j, fref, fcand, bench_ci, x);
        return;
    }
    /* REMEASURE: the inputs of case 0, as EVAL makes them. */
    amk__rw_phase("inputs");
    const amk__run_case *bc = &j->cases[0];
    void *in[AMK__RUN_MAX_BUFS];
    char err[600];
    if (!amk__rw_cached_inputs(j, 0, in) &&
        !amk__rw_make_inputs(j, bc, 0, amk__rw.host[HOST_MEASURE_IN], in, err, sizeof err)) {
        amk__rw_fail(x, AMK_STATUS_RUN_ERROR, "%s", err);
        return;
    }
    hipFunction_t fns[2] = {fcand[0], fother};
    const amk__run_kernel *ks[2] = {&bc->cand, &j->other};
    if (amk__rw_bench_case(j, bc, fns, ks, 2, in, NULL, NULL, x))
        x->res->status = AMK_STATUS_OK;
}

int amk__run_worker_handle(void *ud, const void *req, size_t req_len, void **resp,
                           size_t *resp_len)
{
    (void)ud;
    *resp = NULL;
    *resp_len = 0;
    amk__run_job *j = malloc(sizeof *j);
    amk__run_result *r = calloc(1, sizeof *r);
    if (!j || !r) {
        free(j);
        free(r);
        return AMK_WORKER_RECYCLE; /* empty answer: the parent reports a broken protocol */
    }
    amk__run_ctx x = {r, 0};
    if (amk__run_job_decode(req, req_len, j) != AMK_OK) {
        amk__rw_fail(&x, AMK_STATUS_RUN_ERROR, "run worker: malformed request (%zu bytes)",
                     req_len);
        free(j);
        *resp = r;
        *resp_len = sizeof *r;
        return AMK_WORKER_CONTINUE;
    }
    if (j->op == AMK__RUN_OP_QUERY) {
        amk__gpu_info *info = calloc(1, sizeof *info);
        if (!info) {
            free(j);
            free(r);
            return AMK_WORKER_RECYCLE;
        }
        int ok = ensure_ready(j->device, &x);
        if (ok) {
            *info = amk__rw.info;
        } else {
            info->ok = 0;
            info->device = j->device;
            snprintf(info->error, sizeof info->error, "%s",
                     amk__rw.info.error[0] ? amk__rw.info.error : r->reason);
        }
        free(j);
        free(r);
        *resp = info;
        *resp_len = sizeof *info;
        /* A failed runtime initialisation can stick in this process: start afresh. */
        return ok ? AMK_WORKER_CONTINUE : AMK_WORKER_RECYCLE;
    }
    r->status = AMK_STATUS_RUN_ERROR;
    int remeasure = j->op == AMK__RUN_OP_REMEASURE;
    amk__rw_phase("keeper disarm");
    (void)amk__rw_setup_take(); /* counts from here: this job's */
    if (!remeasure)
        amk__keep_pause(); /* re-armed after the job; its buffers freed unless memory is ample */
    amk__rw_phase("modules");
    run_job(j, &x);
    if (remeasure)
        amk__keep_resume();
    amk__rw_host_trim();
    amk__rw_phase_text(r->profile, sizeof r->profile); /* the next job's starts here */
    r->setup_ms = amk__rw_setup_take();
    if (r->status != AMK_STATUS_OK && !r->reason[0])
        snprintf(r->reason, sizeof r->reason, "run worker: the job failed without a reason");
    free(j);
    *resp = r;
    *resp_len = sizeof *r;
    return x.recycle ? AMK_WORKER_RECYCLE : AMK_WORKER_CONTINUE;
}