/* The run worker: a long-lived child process, one per GPU, and the only process of amk that
 * creates a GPU context. It answers a device query, and runs jobs: load code objects (cached
 * by content hash), fill the spec's buffers from the job's seed and run the reference (or
 * find both in the reference cache), poison and run the candidate, compare on the host
 * (check.c), and time the benchmarked shape
 * (bench.c). A sticky error (illegal address, ...) makes it answer and then exit, so the pool
 * respawns a fresh context; a hang is the parent's to kill. Also the job wire format. */
#include "gpu_int.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_MAGIC UINT32_C(0x414d4b52) /* "AMKR" */
#define MOD_CACHE 32

/* ---------- wire format ----------------------------------------------------------------
 * Parent and run worker are the same binary (fork, no exec), so the fixed-size structs
 * travel as bytes: [magic u32][op u32][struct][code images...]. Pointers are re-set and
 * every count and index is validated on decode. */

typedef struct wire_head {
    uint32_t magic, op;
    uint64_t struct_size;
} wire_head;

int amk__run_job_encode(const amk__run_job *j, void **out, size_t *len)
{
    size_t total = sizeof(wire_head) + sizeof *j;
    if (j->ncodes < 0 || j->ncodes > AMK__RUN_MAX_CODES)
        return AMK_EINVAL;
    for (int i = 0; i < j->ncodes; i++) {
        if (j->codes[i].size > AMK_WORKER_MSG_MAX)
            return AMK_EINVAL;
        total += j->codes[i].size;
    }
    if (total > AMK_WORKER_MSG_MAX)
        return AMK_EINVAL;
    unsigned char *p = malloc(total);
    if (!p)
        return AMK_ENOMEM;
    wire_head h = {RUN_MAGIC, (uint32_t)j->op, sizeof *j};
    memcpy(p, &h, sizeof h);
    amk__run_job copy = *j;
    for (int i = 0; i < copy.ncodes; i++)
        copy.codes[i].image = NULL;
    memcpy(p + sizeof h, &copy, sizeof copy);
    size_t off = sizeof h + sizeof copy;
    for (int i = 0; i < j->ncodes; i++) {
        memcpy(p + off, j->codes[i].image, j->codes[i].size);
        off += j->codes[i].size;
    }
    *out = p;
    *len = total;
    return AMK_OK;
}

int amk__run_query_encode(int device, void **out, size_t *len)
{
    amk__run_job *j = calloc(1, sizeof *j);
    if (!j)
        return AMK_ENOMEM;
    j->op = AMK__RUN_OP_QUERY;
    j->device = device;
    int rc = amk__run_job_encode(j, out, len);
    free(j);
    return rc;
}

static int kernel_ok(const amk__run_kernel *k, int ncodes, int nbufs, int nmaps, int need)
{
    if (k->code < 0)
        return !need;
    if (k->code >= ncodes || k->nargs < 0 || k->nargs > AMK__RUN_MAX_ARGS ||
        memchr(k->entry, '\0', sizeof k->entry) == NULL || !k->entry[0])
        return 0;
    for (int i = 0; i < k->nargs; i++)
        if (k->args[i].buf >= nbufs || k->args[i].buf < AMK__RUN_ARG_TMAP(nmaps - 1))
            return 0;
    return 1;
}

static int tmap_ok(const amk__run_tmap *m, int nbufs)
{
    if (m->rank < 1 || m->rank > AMK_TMAP_MAX_RANK || m->buf < 0 || m->buf >= nbufs ||
        m->dtype < 0 || m->dtype >= AMK__DT_COUNT || memchr(m->name, '\0', sizeof m->name) == NULL)
        return 0;
    for (int i = 0; i < m->rank; i++)
        if (m->dims[i] < 1 || m->box[i] < 1 || (i + 1 < m->rank && m->strides[i] < 1))
            return 0;
    return 1;
}

int amk__run_job_decode(const void *buf, size_t len, amk__run_job *j)
{
    const unsigned char *p = buf;
    wire_head h;
    if (len < sizeof h + sizeof *j)
        return AMK_EPARSE;
    memcpy(&h, p, sizeof h);
    if (h.magic != RUN_MAGIC || h.struct_size != sizeof *j)
        return AMK_EPARSE;
    memcpy(j, p + sizeof h, sizeof *j);
    if ((uint32_t)j->op != h.op || j->ncodes < 0 || j->ncodes > AMK__RUN_MAX_CODES ||
        j->ncases < 0 || j->ncases > AMK__RUN_MAX_CASES)
        return AMK_EPARSE;
    size_t off = sizeof h + sizeof *j;
    for (int i = 0; i < j->ncodes; i++) {
        if (j->codes[i].size > len - off)
            return AMK_EPARSE;
        j->codes[i].image = p + off;
        off += j->codes[i].size;
    }
    if (off != len)
        return AMK_EPARSE;
    for (int c = 0; c < j->ncases; c++) {
        amk__run_case *k = &j->cases[c];
        if (k->nbufs < 1 || k->nbufs > AMK__RUN_MAX_BUFS ||
            memchr(k->label, '\0', sizeof k->label) == NULL)
            return AMK_EPARSE;
        for (int b = 0; b < k->nbufs; b++) {
            const amk__run_buf *rb = &k->bufs[b];
            if (rb->dtype < 0 || rb->dtype >= AMK__DT_COUNT || rb->count < 1 ||
                rb->role < AMK__ROLE_IN || rb->role > AMK__ROLE_INOUT ||
                memchr(rb->name, '\0', sizeof rb->name) == NULL)
                return AMK_EPARSE;
        }
        if (k->nmaps < 0 || k->nmaps > AMK__RUN_MAX_TMAPS)
            return AMK_EPARSE;
        for (int m = 0; m < k->nmaps; m++)
            if (!tmap_ok(&k->maps[m], k->nbufs))
                return AMK_EPARSE;
        if (!kernel_ok(&k->cand, j->ncodes, k->nbufs, k->nmaps, 1) ||
            !kernel_ok(&k->ref, j->ncodes, k->nbufs, k->nmaps, j->op == AMK__RUN_OP_EVAL))
            return AMK_EPARSE;
    }
    if (j->op == AMK__RUN_OP_REMEASURE &&
        (j->ncases < 1 ||
         !kernel_ok(&j->other, j->ncodes, j->cases[0].nbufs, j->cases[0].nmaps, 1)))
        return AMK_EPARSE;
    return AMK_OK;
}

/* ---------- run worker state (lives only in the child) --------------------------------- */

/* Host buffers kept across jobs besides the reference cache: the candidate's outputs and
 * the inputs of a re-measure. */
enum { HOST_GOT, HOST_MEASURE_IN, HOST_KINDS };

typedef struct host_buf {
    void *p;
    size_t cap;
    int pinned;        /* from hipHostMalloc (else malloc) */
    unsigned long job; /* the last job that used it */
} host_buf;

/* The reference cache. A case's inputs and its reference's outputs depend only on its
 * amk__ref_key (the backend gives every job of a run one seed), not on the candidate, so
 * the run worker keeps both on the host and skips fill, reference launch and download when
 * the next job checks the same case. One entry per case of a job at least (an entry in use
 * by the current job is never taken for another case). */
#define REF_SLOTS (AMK__RUN_MAX_CASES + 2)

typedef struct ref_entry {
    int valid;         /* in and want hold exactly what key determines */
    uint64_t hash;
    amk__ref_key key;
    host_buf in[AMK__RUN_MAX_BUFS];   /* inputs (in, inout), as filled from the seed */
    host_buf want[AMK__RUN_MAX_BUFS]; /* reference outputs (out, inout), downloaded */
    unsigned long job; /* the last job that used it */
} ref_entry;

static struct {
    int ready, device;
    hipStream_t stream;
    amk__gpu_info info;
    struct {
        uint64_t hash;
        size_t size;
        hipModule_t mod;
        unsigned long used;
    } mods[MOD_CACHE];
    int nmods;
    unsigned long tick;
    host_buf host[HOST_KINDS][AMK__RUN_MAX_BUFS];
    ref_entry refs[REF_SLOTS];
    unsigned long jobs;
} W;

/* The run's failure, built up while unwinding. */
typedef struct run_ctx {
    amk__run_result *res;
    int recycle;
} run_ctx;

static void fail(run_ctx *x, amk_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(run_ctx *x, amk_status st, const char *fmt, ...)
{
    va_list ap;
    x->res->status = st;
    va_start(ap, fmt);
    vsnprintf(x->res->reason, sizeof x->res->reason, fmt, ap);
    va_end(ap);
}

static void note(run_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(run_ctx *x, const char *fmt, ...)
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

static void stage(const char *label, const char *what)
{
    fprintf(stderr, "amk run worker: %s: %s\n", label, what);
    fflush(stderr);
}

/* After an error: is the context still usable? A sticky error (illegal address, launch
 * failure, ...) keeps failing every later call; a launch refused for its configuration
 * does not. */
static int context_broken(void)
{
    (void)hipGetLastError();
    if (hipDeviceSynchronize() != hipSuccess)
        return 1;
    return hipGetLastError() != hipSuccess;
}

static const char *errtext(hipError_t e, char *buf, size_t cap)
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
 * (CUDA's runtime then blames an insufficient driver, which misleads); with one, the
 * runtime's own message (a driver too old, a device in use, ...) is the reason. */
static void no_gpu_reason(amk__gpu_info *info, const char *runtime_says)
{
    char node[600];
    const char *vendor = amk__rtc_vendor();
    if (amk__gpu_node_present("/dev", vendor, node, sizeof node))
        snprintf(info->error, sizeof info->error, "%s", runtime_says);
    else
        snprintf(info->error, sizeof info->error, "no GPU is present: no %s device node (the "
                 "runtime says: %s)", strcmp(vendor, "amd") ? "/dev/nvidia[0-9]" : "/dev/kfd",
                 runtime_says);
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
                     errtext(e, eb, sizeof eb));                                           \
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
            snprintf(says, sizeof says, "%s: %s", api_name(call, nm), errtext(e, eb, sizeof eb));
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
}

static int ensure_ready(int dev, run_ctx *x)
{
    char eb[256];
    if (W.ready && W.device == dev)
        return 1;
    if (W.ready) {
        fail(x, AMK_STATUS_RUN_ERROR, "run worker owns device %d, job asks for %d", W.device,
             dev);
        return 0;
    }
    query_device(dev, &W.info);
    if (!W.info.ok) {
        fail(x, AMK_STATUS_RUN_ERROR, "no usable GPU: %s", W.info.error);
        x->recycle = 1;
        return 0;
    }
    hipError_t e = hipStreamCreateWithFlags(&W.stream, hipStreamNonBlocking);
    if (e != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "hipStreamCreateWithFlags: %s", errtext(e, eb, sizeof eb));
        x->recycle = 1;
        return 0;
    }
    W.ready = 1;
    W.device = dev;
    return 1;
}

/* Loads (or finds) the module of a code object. Unloads the least recently used one when
 * the cache is full. */
static hipError_t get_module(const amk__run_code *code, hipModule_t *out)
{
    for (int i = 0; i < W.nmods; i++)
        if (W.mods[i].hash == code->hash && W.mods[i].size == code->size) {
            W.mods[i].used = ++W.tick;
            *out = W.mods[i].mod;
            return hipSuccess;
        }
    hipModule_t m;
    hipError_t e = hipModuleLoadData(&m, code->image);
    if (e != hipSuccess)
        return e;
    int slot = W.nmods;
    if (W.nmods == MOD_CACHE) {
        slot = 0;
        for (int i = 1; i < W.nmods; i++)
            if (W.mods[i].used < W.mods[slot].used)
                slot = i;
        (void)hipModuleUnload(W.mods[slot].mod);
    } else {
        W.nmods++;
    }
    W.mods[slot].hash = code->hash;
    W.mods[slot].size = code->size;
    W.mods[slot].mod = m;
    W.mods[slot].used = ++W.tick;
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
                   hipFunction_t *fn, run_ctx *x)
{
    char eb[256];
    hipModule_t m;
    hipError_t e = get_module(&j->codes[k->code], &m);
    if (e != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: loading the code object: %s", what,
             errtext(e, eb, sizeof eb));
        x->recycle = context_broken();
        return 0;
    }
    e = hipModuleGetFunction(fn, m, k->entry);
    if (e != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: no kernel '%s' in the code object: %s", what,
             k->entry, errtext(e, eb, sizeof eb));
        x->recycle = context_broken();
        return 0;
    }
    if (k->launch.cluster[0] * k->launch.cluster[1] * k->launch.cluster[2] > 8 &&
        (e = amk__gpu_allow_large_clusters(*fn)) != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: cannot allow a cluster of %lld x %lld x %lld blocks "
             "(above the portable 8): %s", what, (long long)k->launch.cluster[0],
             (long long)k->launch.cluster[1], (long long)k->launch.cluster[2],
             errtext(e, eb, sizeof eb));
        x->recycle = context_broken();
        return 0;
    }
    const int64_t shared = job_shared_max(j, k);
    if (shared > 48 * 1024) {
        if (shared > INT_MAX || (e = amk__gpu_set_dynamic_shared(*fn, (int)shared)) != hipSuccess) {
            fail(x, AMK_STATUS_RUN_ERROR, "%s: cannot raise dynamic shared memory to %lld "
                 "bytes: %s", what, (long long)shared,
                 shared > INT_MAX ? "too large" : errtext(e, eb, sizeof eb));
            x->recycle = context_broken();
            return 0;
        }
    }
    return 1;
}

static int geometry_ok(const amk__run_kernel *k, const char *what, run_ctx *x)
{
    for (int i = 0; i < 3; i++)
        if (k->launch.grid[i] < 1 || k->launch.grid[i] > UINT_MAX || k->launch.block[i] < 1 ||
            k->launch.block[i] > 1024) {
            fail(x, AMK_STATUS_RUN_ERROR, "%s: launch geometry out of range: grid %lld x %lld "
                 "x %lld, block %lld x %lld x %lld", what, (long long)k->launch.grid[0],
                 (long long)k->launch.grid[1], (long long)k->launch.grid[2],
                 (long long)k->launch.block[0], (long long)k->launch.block[1],
                 (long long)k->launch.block[2]);
            return 0;
        }
    if (k->launch.shared_bytes < 0 || k->launch.shared_bytes > UINT_MAX) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: dynamic shared memory %lld out of range", what,
             (long long)k->launch.shared_bytes);
        return 0;
    }
    for (int i = 0; i < 3; i++)
        if (k->launch.cluster[i] < 1 || k->launch.cluster[i] > 1024 ||
            k->launch.grid[i] % k->launch.cluster[i] != 0) {
            fail(x, AMK_STATUS_RUN_ERROR, "%s: grid %lld x %lld x %lld is not a whole number of "
                 "clusters of %lld x %lld x %lld blocks", what, (long long)k->launch.grid[0],
                 (long long)k->launch.grid[1], (long long)k->launch.grid[2],
                 (long long)k->launch.cluster[0], (long long)k->launch.cluster[1],
                 (long long)k->launch.cluster[2]);
            return 0;
        }
    return 1;
}

/* ---------- host buffers kept across jobs ----------------------------------------------
 * A trial on a big shape moves hundreds of MiB through host memory. Fresh malloc'd buffers
 * pay a page fault per 4 KiB in every job, and pageable memory crosses the bus at a fraction
 * of the link's speed, so the run worker keeps its host buffers (pinned where the runtime
 * gives pinned memory) and grows them when a job needs more. Past HOST_KEEP_MAX in all, the
 * ones the last job did not use go (another kernel's or shape's); what one job needs stays.
 * Nothing is read that the job did not write first (inputs filled from the job's seed,
 * outputs downloaded before they are compared), except a reference cache entry, which is
 * read only under a key equal to the job's case (memcmp, not just the hash). */
#define HOST_KEEP_MAX ((size_t)4 << 30)
#define HOST_ROUND ((size_t)64 << 10)

static void host_release(host_buf *h)
{
    if (h->p) {
        if (h->pinned)
            (void)hipHostFree(h->p);
        else
            free(h->p);
    }
    memset(h, 0, sizeof *h);
}

/* h with room for `bytes` (contents kept unless it must grow); NULL when out of memory. */
static void *host_ensure(host_buf *h, size_t bytes)
{
    h->job = W.jobs;
    if (h->p && h->cap >= bytes)
        return h->p;
    host_release(h);
    size_t cap = (bytes + HOST_ROUND - 1) / HOST_ROUND * HOST_ROUND;
    if (hipHostMalloc(&h->p, cap, hipHostMallocDefault) == hipSuccess) {
        h->pinned = 1;
    } else {
        (void)hipGetLastError();
        h->p = malloc(cap);
        if (!h->p)
            return NULL;
    }
    h->cap = cap;
    h->job = W.jobs;
    return h->p;
}

/* Host buffer `kind` number b with room for `bytes`; NULL when out of memory. */
static void *host_get(int kind, int b, size_t bytes)
{
    return host_ensure(&W.host[kind][b], bytes);
}

static void ref_release(ref_entry *e)
{
    for (int b = 0; b < AMK__RUN_MAX_BUFS; b++) {
        host_release(&e->in[b]);
        host_release(&e->want[b]);
    }
    e->valid = 0;
    e->hash = 0;
    e->job = 0;
}

/* Past HOST_KEEP_MAX, every buffer and cache entry the last job did not use goes. */
static void host_trim(void)
{
    size_t kept = 0;
    for (int k = 0; k < HOST_KINDS; k++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            kept += W.host[k][b].cap;
    for (int i = 0; i < REF_SLOTS; i++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            kept += W.refs[i].in[b].cap + W.refs[i].want[b].cap;
    if (kept <= HOST_KEEP_MAX)
        return;
    for (int k = 0; k < HOST_KINDS; k++)
        for (int b = 0; b < AMK__RUN_MAX_BUFS; b++)
            if (W.host[k][b].job != W.jobs)
                host_release(&W.host[k][b]);
    for (int i = 0; i < REF_SLOTS; i++)
        if (W.refs[i].job != W.jobs)
            ref_release(&W.refs[i]);
}

uint64_t amk__ref_key_make(const amk__run_job *j, int ci, amk__ref_key *key)
{
    const amk__run_case *c = &j->cases[ci];
    const amk__run_kernel *r = &c->ref;
    memset(key, 0, sizeof *key);
    key->seed = j->seed;
    key->stream = (uint64_t)ci * AMK__RUN_MAX_BUFS;
    if (r->code >= 0 && r->code < j->ncodes) {
        key->code_hash = j->codes[r->code].hash;
        key->code_size = j->codes[r->code].size;
    }
    snprintf(key->entry, sizeof key->entry, "%s", r->entry);
    for (int i = 0; i < 3; i++) {
        key->grid[i] = r->launch.grid[i];
        key->block[i] = r->launch.block[i];
        key->cluster[i] = r->launch.cluster[i];
    }
    key->shared_bytes = r->launch.shared_bytes;
    key->nargs = r->nargs;
    for (int i = 0; i < r->nargs && i < AMK__RUN_MAX_ARGS; i++) {
        key->args[i].buf = r->args[i].buf;
        key->args[i].value = r->args[i].buf == -1 ? r->args[i].value : 0;
        int m = AMK__RUN_ARG_TMAP_INDEX(r->args[i].buf);
        if (m >= 0 && m < c->nmaps && m < AMK__RUN_MAX_TMAPS) {
            const amk__run_tmap *t = &c->maps[m];
            amk__run_tmap *k = &key->maps[m];
            snprintf(k->name, sizeof k->name, "%s", t->name);
            for (int d = 0; d < AMK_TMAP_MAX_RANK; d++) {
                k->dims[d] = d < t->rank ? t->dims[d] : 0;
                k->box[d] = d < t->rank ? t->box[d] : 0;
                if (d + 1 < AMK_TMAP_MAX_RANK)
                    k->strides[d] = d + 1 < t->rank ? t->strides[d] : 0;
            }
            k->buf = t->buf;
            k->dtype = t->dtype;
            k->rank = t->rank;
            k->swizzle = t->swizzle;
            k->l2_promotion = t->l2_promotion;
            k->oob = t->oob;
        }
    }
    key->nbufs = c->nbufs;
    for (int b = 0; b < c->nbufs && b < AMK__RUN_MAX_BUFS; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        key->bufs[b].count = rb->count;
        snprintf(key->bufs[b].name, sizeof key->bufs[b].name, "%s", rb->name);
        key->bufs[b].dtype = rb->dtype;
        key->bufs[b].role = rb->role;
        key->bufs[b].init = rb->init;
    }
    return amk_hash64(key, sizeof *key);
}

/* The cache entry of case ci: a valid entry with an equal key (*hit = 1); else the entry to
 * refill (*hit = 0): an empty one, else the one used longest ago, never one the current
 * job uses; it is keyed now but stays invalid until the reference outputs are in. */
static ref_entry *ref_lookup(const amk__run_job *j, int ci, int *hit)
{
    amk__ref_key key;
    uint64_t h = amk__ref_key_make(j, ci, &key);
    ref_entry *pick = NULL;
    for (int i = 0; i < REF_SLOTS; i++) {
        ref_entry *e = &W.refs[i];
        if (e->valid && e->hash == h && memcmp(&e->key, &key, sizeof key) == 0) {
            e->job = W.jobs;
            *hit = 1;
            return e;
        }
        if (e->job != W.jobs &&
            (!pick || (pick->valid && (!e->valid || e->job < pick->job))))
            pick = e;
    }
    /* REF_SLOTS > AMK__RUN_MAX_CASES: some entry is not the current job's. */
    pick->valid = 0;
    pick->hash = h;
    pick->key = key;
    pick->job = W.jobs;
    *hit = 0;
    return pick;
}

/* ---------- device buffers --------------------------------------------------------------- */

/* One set of device buffers and the argument arrays of both kernels over it. */
typedef struct dev_set {
    void *ptr[AMK__RUN_MAX_BUFS];
    int32_t ival[2][AMK__RUN_MAX_ARGS];
    void *argv[2][AMK__RUN_MAX_ARGS];
    /* The case's tensor maps encoded over ptr[] (encode_maps), passed by value. */
    unsigned long long tmap[AMK__RUN_MAX_TMAPS][16];
} dev_set;

static void set_args(dev_set *s, int which, const amk__run_kernel *k)
{
    for (int i = 0; i < k->nargs; i++) {
        if (k->args[i].buf >= 0) {
            s->argv[which][i] = &s->ptr[k->args[i].buf];
        } else if (k->args[i].buf < -1) {
            s->argv[which][i] = s->tmap[AMK__RUN_ARG_TMAP_INDEX(k->args[i].buf)];
        } else {
            s->ival[which][i] = k->args[i].value;
            s->argv[which][i] = &s->ival[which][i];
        }
    }
}

/* Encodes case c's tensor maps over set s's buffers (each set has its own addresses). A
 * refused encoding is the config's run error, with the driver's reason. */
static int encode_maps(const amk__run_case *c, dev_set *s, run_ctx *x)
{
    for (int m = 0; m < c->nmaps; m++) {
        const amk__run_tmap *t = &c->maps[m];
        uint64_t dims[AMK_TMAP_MAX_RANK], strides[AMK_TMAP_MAX_RANK - 1];
        uint32_t box[AMK_TMAP_MAX_RANK];
        char err[256];
        for (int i = 0; i < t->rank; i++) {
            dims[i] = (uint64_t)t->dims[i];
            box[i] = (uint32_t)t->box[i];
            if (i + 1 < t->rank)
                strides[i] = (uint64_t)t->strides[i];
        }
        if (amk__gpu_tensor_map_encode(s->tmap[m], amk__dtype_name(t->dtype), t->rank,
                                       s->ptr[t->buf], dims, strides, box, t->swizzle,
                                       t->l2_promotion, err, sizeof err) != 0) {
            fail(x, AMK_STATUS_RUN_ERROR, "%s: tensor map '%s' (buffer %s): %s", c->label,
                 t->name, c->bufs[t->buf].name, err);
            return 0;
        }
    }
    return 1;
}

static void free_set(dev_set *s, int nbufs)
{
    for (int b = 0; b < nbufs; b++)
        if (s->ptr[b]) {
            (void)hipFree(s->ptr[b]);
            s->ptr[b] = NULL;
        }
}

static size_t buf_bytes(const amk__run_buf *b)
{
    return (size_t)b->count * amk__dtype_size(b->dtype);
}

/* Allocates nbufs buffers of bytes[b] each (names[b] for the message). */
static int alloc_bytes(dev_set *s, int nbufs, const size_t *bytes, const char *const *names,
                       const char *label, run_ctx *x)
{
    char eb[256];
    memset(s->ptr, 0, sizeof s->ptr);
    for (int b = 0; b < nbufs; b++) {
        hipError_t e = hipMalloc(&s->ptr[b], bytes[b]);
        if (e != hipSuccess) {
            s->ptr[b] = NULL;
            fail(x, AMK_STATUS_RUN_ERROR, "%s: hipMalloc of buffer %s (%zu bytes): %s", label,
                 names[b], bytes[b], errtext(e, eb, sizeof eb));
            (void)hipGetLastError();
            free_set(s, nbufs);
            return 0;
        }
    }
    return 1;
}

static int alloc_set(dev_set *s, const amk__run_case *c, run_ctx *x)
{
    size_t bytes[AMK__RUN_MAX_BUFS];
    const char *names[AMK__RUN_MAX_BUFS];
    for (int b = 0; b < c->nbufs; b++) {
        bytes[b] = buf_bytes(&c->bufs[b]);
        names[b] = c->bufs[b].name;
    }
    return alloc_bytes(s, c->nbufs, bytes, names, c->label, x);
}

/* The check's device buffers, allocated once per job: buffer b is as large as the largest
 * buffer b of any case. *nbufs gets the most buffers of a case. */
static int alloc_check_set(const amk__run_job *j, dev_set *s, int *nbufs, run_ctx *x)
{
    size_t bytes[AMK__RUN_MAX_BUFS] = {0};
    const char *names[AMK__RUN_MAX_BUFS] = {0};
    *nbufs = 0;
    for (int ci = 0; ci < j->ncases; ci++) {
        const amk__run_case *c = &j->cases[ci];
        for (int b = 0; b < c->nbufs; b++)
            if (!names[b] || buf_bytes(&c->bufs[b]) > bytes[b]) {
                bytes[b] = buf_bytes(&c->bufs[b]);
                names[b] = c->bufs[b].name;
            }
        if (c->nbufs > *nbufs)
            *nbufs = c->nbufs;
    }
    return alloc_bytes(s, *nbufs, bytes, names, "correctness check", x);
}

static hipError_t launch_kernel(hipFunction_t fn, const amk__run_kernel *k, void **argv)
{
    return amk__gpu_launch(fn, &k->launch, W.stream, argv);
}

/* Launches one kernel and waits for it. On failure fills x (RUN_ERROR) and returns 0. */
static int run_once(hipFunction_t fn, const amk__run_kernel *k, void **argv, const char *what,
                    const char *label, run_ctx *x)
{
    char eb[256];
    hipError_t e = launch_kernel(fn, k, argv);
    if (e == hipSuccess)
        e = hipStreamSynchronize(W.stream);
    if (e == hipSuccess)
        e = hipGetLastError();
    if (e != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: %s kernel failed: %s", label, what,
             errtext(e, eb, sizeof eb));
        x->recycle = context_broken();
        if (x->recycle)
            note(x, "sticky error: the run worker's GPU context is lost; worker respawned");
    }
    return e == hipSuccess;
}

#define GPU(call)                                                                          \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            char eb_[256];                                                                 \
            fail(x, AMK_STATUS_RUN_ERROR, "%s: %s: %s", c->label, #call,                   \
                 errtext(e_, eb_, sizeof eb_));                                            \
            x->recycle = context_broken();                                                 \
            goto out;                                                                      \
        }                                                                                  \
    } while (0)

/* Gives set s its pristine inputs (in, inout) and poisons its outputs (out) with 0xFF bytes:
 * NaN in every float type. The inputs come from host (host != NULL) or from set `from`, a
 * set that holds them untouched (device to device: no second trip over the bus). Everything
 * goes through the worker's own stream (non-blocking: it does not order with the legacy
 * default stream). */
static int upload(const amk__run_case *c, dev_set *s, void *const *host, const dev_set *from,
                  run_ctx *x)
{
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        if (rb->role == AMK__ROLE_OUT)
            GPU(hipMemsetAsync(s->ptr[b], 0xff, buf_bytes(rb), W.stream));
        else if (host)
            GPU(hipMemcpyAsync(s->ptr[b], host[b], buf_bytes(rb), hipMemcpyHostToDevice,
                               W.stream));
        else
            GPU(hipMemcpyAsync(s->ptr[b], from->ptr[b], buf_bytes(rb),
                               hipMemcpyDeviceToDevice, W.stream));
    }
    GPU(hipStreamSynchronize(W.stream));
    return 1;
out:
    return 0;
}

static int download(const amk__run_case *c, dev_set *s, void **host, run_ctx *x)
{
    for (int b = 0; b < c->nbufs; b++)
        if (c->bufs[b].role != AMK__ROLE_IN)
            GPU(hipMemcpyAsync(host[b], s->ptr[b], buf_bytes(&c->bufs[b]),
                               hipMemcpyDeviceToHost, W.stream));
    GPU(hipStreamSynchronize(W.stream));
    return 1;
out:
    return 0;
}

static int check_threads(const amk__run_job *j)
{
    return j->check_threads > 0 ? j->check_threads : amk__check_threads();
}

/* Host inputs of case c from the job's seed, in the host buffers hb[]; in[b] gets them
 * (NULL for outputs). 0 when out of host memory. */
static int make_inputs(const amk__run_job *j, const amk__run_case *c, uint64_t stream0,
                       host_buf *hb, void **in)
{
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        in[b] = NULL;
        if (rb->role == AMK__ROLE_OUT)
            continue;
        if (!(in[b] = host_ensure(&hb[b], buf_bytes(rb))))
            return 0;
        amk__check_fill_threads(in[b], rb->dtype, rb->count, rb->init, j->seed,
                                stream0 + (uint64_t)b, check_threads(j));
    }
    return 1;
}

/* The correctness check of case ci on the job's check set s: inputs from the seed,
 * reference into its outputs, candidate into poisoned outputs, host comparison. Inputs and
 * reference outputs come from the reference cache when it holds this case (*cached = 1),
 * else they are made and kept there. The inputs stay in `in` (the entry's buffers, which
 * the rest of this job does not reuse) for the benchmark. Returns 1 when the candidate
 * passed. */
static int check_case(const amk__run_job *j, int ci, hipFunction_t fref, hipFunction_t fcand,
                      dev_set *s, void **in, int *cached, run_ctx *x)
{
    const amk__run_case *c = &j->cases[ci];
    void *want[AMK__RUN_MAX_BUFS] = {0}, *got[AMK__RUN_MAX_BUFS] = {0};
    int hit = 0;
    ref_entry *e = ref_lookup(j, ci, &hit);
    *cached = 0;
    if (hit) {
        for (int b = 0; b < c->nbufs; b++)
            in[b] = c->bufs[b].role == AMK__ROLE_OUT ? NULL : e->in[b].p;
    } else if (!make_inputs(j, c, (uint64_t)ci * AMK__RUN_MAX_BUFS, e->in, in)) {
        goto oom;
    }
    for (int b = 0; b < c->nbufs; b++)
        if (c->bufs[b].role != AMK__ROLE_IN) {
            /* Same key, same sizes: on a hit host_ensure keeps the cached bytes. */
            want[b] = host_ensure(&e->want[b], buf_bytes(&c->bufs[b]));
            got[b] = host_get(HOST_GOT, b, buf_bytes(&c->bufs[b]));
            if (!want[b] || !got[b])
                goto oom;
        }
    if (!encode_maps(c, s, x))
        return 0;
    set_args(s, 0, &c->ref);
    set_args(s, 1, &c->cand);

    if (!hit) {
        /* Reference on pristine inputs; its outputs leave the device before the candidate
         * runs, so nothing the candidate does can change them. The entry becomes valid only
         * once they are all on the host. */
        if (!upload(c, s, in, NULL, x))
            return 0;
        stage(c->label, "reference kernel");
        if (!run_once(fref, &c->ref, s->argv[0], "reference", c->label, x))
            return 0;
        if (!download(c, s, want, x))
            return 0;
        e->valid = 1;
    }
    *cached = hit;
    /* Candidate: every input uploaded again from host (pristine even if the reference wrote
     * one), outputs poisoned. */
    if (!upload(c, s, in, NULL, x))
        return 0;
    stage(c->label, "candidate kernel");
    if (!run_once(fcand, &c->cand, s->argv[1], "candidate", c->label, x))
        return 0;
    if (!download(c, s, got, x))
        return 0;
    stage(c->label, "compare");
    for (int b = 0; b < c->nbufs; b++) {
        const amk__run_buf *rb = &c->bufs[b];
        if (rb->role == AMK__ROLE_IN)
            continue;
        amk__compare cmp;
        if (!amk__check_compare_threads(rb->dtype, got[b], want[b], rb->count, rb->reduction,
                                        c->rtol_scale, c->atol, check_threads(j), &cmp)) {
            char what[400];
            amk__compare_describe(&cmp, rb->name, what, sizeof what);
            fail(x, cmp.kind == AMK__CMP_REF_NONFINITE ? AMK_STATUS_RUN_ERROR
                                                        : AMK_STATUS_WRONG,
                 "%s: %s", c->label, what);
            return 0;
        }
    }
    return 1;
oom:
    fail(x, AMK_STATUS_RUN_ERROR, "%s: out of host memory for the check buffers", c->label);
    return 0;
}

/* Times the bench case's candidate (and `other` for REMEASURE) over rotating copies of the
 * inputs. Set 0 is `first` when given (the job's check set, borrowed: large enough for every
 * case), else allocated; it gets the inputs from host, the other sets copy them from set 0
 * on the device. stats gets one entry per timed kernel. */
static int bench_case(const amk__run_job *j, const amk__run_case *c, hipFunction_t *fns,
                      const amk__run_kernel *const *ks, int nk, void *const *in,
                      const dev_set *first, run_ctx *x)
{
    dev_set *sets = NULL;
    int nsets = 1, flush = 0, made = 0, ok = 0;
    void *flush_buf = NULL;
    size_t flush_bytes = 0;
    int64_t footprint = 0;
    for (int b = 0; b < c->nbufs; b++)
        footprint += (int64_t)buf_bytes(&c->bufs[b]);
    if (j->bench.cold) {
        size_t fr = 0, tot = 0;
        int64_t cap = j->bench.mem_cap;
        if (hipMemGetInfo(&fr, &tot) == hipSuccess && (int64_t)(fr / 2) < cap)
            cap = (int64_t)(fr / 2);
        nsets = amk__bench_sets(footprint, W.info.l2_bytes, cap, &flush);
    }
    sets = calloc((size_t)nsets, sizeof *sets);
    if (!sets) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: out of host memory", c->label);
        return 0;
    }
    for (made = 0; made < nsets; made++) {
        if (made == 0 && first)
            sets[0] = *first;
        else if (!alloc_set(&sets[made], c, x))
            goto out;
        if (!upload(c, &sets[made], made == 0 ? in : NULL, &sets[0], x) ||
            !encode_maps(c, &sets[made], x)) {
            made++; /* freed below (unless borrowed) */
            goto out;
        }
        for (int i = 0; i < nk; i++)
            set_args(&sets[made], i, ks[i]);
    }
    if (flush) {
        flush_bytes = (size_t)(W.info.l2_bytes > 0 ? W.info.l2_bytes : 64 << 20) * 2;
        if (hipMalloc(&flush_buf, flush_bytes) != hipSuccess) {
            (void)hipGetLastError();
            flush_buf = NULL;
            note(x, "no memory for an L2 flush buffer");
        }
    }
    amk__bench_kernel bk[2];
    for (int i = 0; i < nk; i++) {
        bk[i].fn = fns[i];
        bk[i].launch = ks[i]->launch;
        for (int s = 0; s < nsets; s++)
            bk[i].argv[s] = sets[s].argv[i];
    }
    char msg[300];
    stage(c->label, "benchmark");
    hipError_t e = amk__bench_run(W.stream, bk, nk, nsets, flush_buf, flush_bytes, &j->bench,
                                  x->res->stats, msg, sizeof msg);
    if (e != hipSuccess) {
        fail(x, AMK_STATUS_RUN_ERROR, "%s: benchmark: %s", c->label, msg);
        x->recycle = context_broken();
        goto out;
    }
    x->res->nstats = nk;
    int cold = j->bench.cold && (nsets > 1 || flush_buf) && !(flush && !flush_buf);
    snprintf(x->res->regime, sizeof x->res->regime, "%s", cold ? "cold_l2" : "warm_l2");
    note(x, "%s: %d reps, %d input set%s of %.1f MiB%s", x->res->regime, x->res->stats[0].reps,
         nsets, nsets == 1 ? "" : "s", footprint / 1048576.0,
         flush_buf ? " + L2 flush" : nsets > 1 ? " rotated" : "");
    char stopped[128];
    amk__bench_stop_note(&x->res->stats[0], &j->bench, stopped, sizeof stopped);
    note(x, "%s", stopped);
    ok = 1;
out:
    if (flush_buf)
        (void)hipFree(flush_buf);
    for (int s = first ? 1 : 0; s < made; s++)
        free_set(&sets[s], c->nbufs);
    free(sets);
    return ok;
}

/* EVAL: every case checked on one set of device buffers, then the bench case timed (its
 * check set becomes the benchmark's set 0). */
static void eval_job(const amk__run_job *j, const hipFunction_t *fref,
                     const hipFunction_t *fcand, int bench_ci, run_ctx *x)
{
    amk__run_result *r = x->res;
    void *ins[AMK__RUN_MAX_CASES][AMK__RUN_MAX_BUFS];
    dev_set s;
    int nbufs = 0, cached = 0, hits = 0, tried = 0;
    if (!alloc_check_set(j, &s, &nbufs, x))
        return;
    for (int ci = 0; ci < j->ncases; ci++) {
        int ok = check_case(j, ci, fref[ci], fcand[ci], &s, ins[ci], &cached, x);
        hits += cached;
        tried++;
        if (!ok)
            goto out;
        r->checked++;
    }
    if (bench_ci < 0) {
        r->status = AMK_STATUS_OK;
        note(x, "checked only (no benchmarked shape)");
        goto out;
    }
    const amk__run_case *bc = &j->cases[bench_ci];
    hipFunction_t fns[1] = {fcand[bench_ci]};
    const amk__run_kernel *ks[1] = {&bc->cand};
    if (bench_case(j, bc, fns, ks, 1, ins[bench_ci], &s, x))
        r->status = AMK_STATUS_OK;
out:
    if (hits && hits == tried)
        note(x, "reference cached");
    else if (hits)
        note(x, "reference cached for %d of %d shapes", hits, tried);
    free_set(&s, nbufs);
}

static void run_job(const amk__run_job *j, run_ctx *x)
{
    hipFunction_t fref[AMK__RUN_MAX_CASES], fcand[AMK__RUN_MAX_CASES], fother = NULL;
    int bench_ci = -1;
    W.jobs++;
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
            note(x, "regs/thread %d, local bytes/thread %d", regs, local);
        else
            (void)hipGetLastError();
    }
    if (j->op == AMK__RUN_OP_EVAL) {
        eval_job(j, fref, fcand, bench_ci, x);
        return;
    }
    /* REMEASURE: the inputs of case 0, as EVAL makes them. */
    const amk__run_case *bc = &j->cases[0];
    void *in[AMK__RUN_MAX_BUFS];
    if (!make_inputs(j, bc, 0, W.host[HOST_MEASURE_IN], in)) {
        fail(x, AMK_STATUS_RUN_ERROR, "out of host memory");
        return;
    }
    hipFunction_t fns[2] = {fcand[0], fother};
    const amk__run_kernel *ks[2] = {&bc->cand, &j->other};
    if (bench_case(j, bc, fns, ks, 2, in, NULL, x))
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
    run_ctx x = {r, 0};
    if (amk__run_job_decode(req, req_len, j) != AMK_OK) {
        fail(&x, AMK_STATUS_RUN_ERROR, "run worker: malformed request (%zu bytes)", req_len);
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
            *info = W.info;
        } else {
            info->ok = 0;
            info->device = j->device;
            snprintf(info->error, sizeof info->error, "%s",
                     W.info.error[0] ? W.info.error : r->reason);
        }
        free(j);
        free(r);
        *resp = info;
        *resp_len = sizeof *info;
        /* A failed runtime initialisation can stick in this process: start afresh. */
        return ok ? AMK_WORKER_CONTINUE : AMK_WORKER_RECYCLE;
    }
    r->status = AMK_STATUS_RUN_ERROR;
    run_job(j, &x);
    host_trim();
    if (r->status != AMK_STATUS_OK && !r->reason[0])
        snprintf(r->reason, sizeof r->reason, "run worker: the job failed without a reason");
    free(j);
    *resp = r;
    *resp_len = sizeof *r;
    return x.recycle ? AMK_WORKER_RECYCLE : AMK_WORKER_CONTINUE;
}
